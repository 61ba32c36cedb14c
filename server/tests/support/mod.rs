//! The real `mcp-echo-server --http` as a child process, shared by the HTTP test files: started
//! on a free loopback port, its stderr kept for `wait_log`, its memory read from `/proc`.
#![allow(dead_code)] // each test file uses its own part

use std::net::SocketAddr;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;

pub const BIN: &str = env!("CARGO_BIN_EXE_mcp-echo-server");
/// Only a hang guard for starting, a log line and the exit: nothing is expected to take it.
const HANG: Duration = Duration::from_secs(60);

pub struct Server {
    pub child: Child,
    pub addr: SocketAddr,
    log: mpsc::UnboundedReceiver<String>,
}

impl Server {
    /// `--http 127.0.0.1:0` and `args`; returns once it printed its `listening on` line.
    pub async fn start(args: &[&str]) -> Server {
        let mut child = Command::new(BIN)
            .args(["--http", "127.0.0.1:0"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let (tx, mut log) = mpsc::unbounded_channel();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        // Drained so the server never blocks on stderr.
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let line = tokio::time::timeout(HANG, async {
            loop {
                let line = log
                    .recv()
                    .await
                    .expect("the server exited before listening");
                if line.starts_with("listening on http://") {
                    return line;
                }
            }
        })
        .await
        .expect("no `listening on` line");
        let rest = line.strip_prefix("listening on http://").unwrap();
        let addr = rest.strip_suffix("/mcp").expect("the default path is /mcp");
        Server {
            child,
            addr: addr.parse().unwrap(),
            log,
        }
    }

    /// Waits for a stderr line containing `needle`.
    pub async fn wait_log(&mut self, needle: &str) {
        tokio::time::timeout(HANG, async {
            loop {
                let line = self.log.recv().await.expect("stderr ended");
                if line.contains(needle) {
                    return;
                }
            }
        })
        .await
        .unwrap_or_else(|_| panic!("no log line with {needle:?}"));
    }

    pub fn signal(&self, signal: nix::sys::signal::Signal) {
        let pid = nix::unistd::Pid::from_raw(self.child.id().unwrap() as i32);
        nix::sys::signal::kill(pid, signal).unwrap();
    }

    pub async fn exit(mut self) -> ExitStatus {
        tokio::time::timeout(HANG, self.child.wait())
            .await
            .expect("the server did not exit")
            .unwrap()
    }

    /// `VmHWM` (peak) or `VmRSS` (now) of the server, in MiB.
    pub fn memory(&self, key: &str) -> usize {
        let pid = self.child.id().unwrap();
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
        let line = status
            .lines()
            .find(|l| l.starts_with(key))
            .unwrap_or_else(|| panic!("no {key} in /proc/{pid}/status"));
        let kib: usize = line.split_whitespace().nth(1).unwrap().parse().unwrap();
        kib / 1024
    }
}
