//! A server given as a command after `--url URL --`: started before the checks, ready once
//! the URL's port accepts connections (bounded by `--start-timeout`), stopped after them
//! (SIGTERM, then SIGKILL), as stdio probes stop their processes.

use std::collections::VecDeque;
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_client::ServerCommand;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use parking_lot::Mutex;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Child;

use super::endpoint::Endpoint;

/// Stderr lines kept for a start error.
const TAIL: usize = 20;

/// The running server.
#[derive(Debug)]
pub struct ServerProcess {
    child: Child,
    stderr: Arc<Mutex<VecDeque<String>>>,
}

/// Why the server given as a command could not be tested: the run's start error.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error("{0} is not an http(s) URL with a host")]
    NoHost(String),
    #[error("could not start {command}: {source}")]
    Spawn {
        command: String,
        source: std::io::Error,
    },
    /// It exited before its port opened; `stderr` is its last lines, as a note.
    #[error("the server exited ({status}) before {host}:{port} accepted a connection{stderr}")]
    Exited {
        status: ExitStatus,
        host: String,
        port: u16,
        stderr: String,
    },
    #[error(
        "{host}:{port} accepted no connection within {budget:?} (--start-timeout) of starting \
         the server{stderr}"
    )]
    NoConnection {
        host: String,
        port: u16,
        budget: Duration,
        stderr: String,
    },
}

/// Starts `command` and waits until `endpoint`'s port accepts a connection.
pub async fn start(
    command: &ServerCommand,
    endpoint: &Endpoint,
    budget: Duration,
) -> Result<ServerProcess, LaunchError> {
    let (host, port) = endpoint
        .authority()
        .ok_or_else(|| LaunchError::NoHost(endpoint.url.clone()))?;
    let mut cmd = tokio::process::Command::from(command.to_command());
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = cmd.spawn().map_err(|source| LaunchError::Spawn {
        command: command.display(),
        source,
    })?;
    let stderr: Arc<Mutex<VecDeque<String>>> = Arc::default();
    if let Some(pipe) = child.stderr.take() {
        let tail = Arc::clone(&stderr);
        tokio::spawn(async move {
            let mut lines = BufReader::new(pipe).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let mut tail = tail.lock();
                if tail.len() == TAIL {
                    tail.pop_front();
                }
                tail.push_back(line);
            }
        });
    }
    let mut server = ServerProcess { child, stderr };
    let started = Instant::now();
    loop {
        if tokio::net::TcpStream::connect((host.as_str(), port))
            .await
            .is_ok()
        {
            return Ok(server);
        }
        if let Ok(Some(status)) = server.child.try_wait() {
            return Err(LaunchError::Exited {
                status,
                host,
                port,
                stderr: server.stderr_note(),
            });
        }
        if started.elapsed() >= budget {
            let stderr = server.stderr_note();
            server.stop().await;
            return Err(LaunchError::NoConnection {
                host,
                port,
                budget,
                stderr,
            });
        }
        // Polling a port that is not open yet: nothing to wait on but time.
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

impl ServerProcess {
    fn stderr_note(&self) -> String {
        let tail = self.stderr.lock();
        if tail.is_empty() {
            return String::new();
        }
        let lines: Vec<&str> = tail.iter().map(String::as_str).collect();
        format!("; its last stderr lines:\n  {}", lines.join("\n  "))
    }

    /// SIGTERM, then SIGKILL if it has not exited within two seconds.
    pub async fn stop(&mut self) {
        if let Some(pid) = self.child.id().and_then(|p| i32::try_from(p).ok()) {
            let _ = kill(Pid::from_raw(pid), Signal::SIGTERM);
            let exited = tokio::time::timeout(Duration::from_secs(2), self.child.wait()).await;
            if exited.is_ok() {
                return;
            }
        }
        let _ = self.child.kill().await;
    }
}
