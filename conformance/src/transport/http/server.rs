//! A server given as a command after `--url URL --`: refused if something already accepts
//! connections on the URL's loopback port (it would be tested instead), started in a process
//! group of its own, ready once the port accepts connections (bounded by `--start-timeout`),
//! and ended after the checks as a whole group (SIGTERM, then SIGKILL after
//! [`groups::GRACE`]): what it started (`npx`'s `node`) ends with it.

use std::collections::VecDeque;
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;

use mcp_client::ServerCommand;
use parking_lot::Mutex;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::watch;

use super::endpoint::Endpoint;
use super::port::{self, Closed};
use crate::groups::{self, Group};

/// Stderr lines kept for a start error.
const TAIL: usize = 20;

/// The running server: its process group, and its exit once it has one.
#[derive(Debug)]
pub struct ServerProcess {
    group: Option<Group>,
    exit: watch::Receiver<Option<ExitStatus>>,
    stderr: Arc<Mutex<VecDeque<String>>>,
}

/// Why the server given as a command could not be tested: the run's start error.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error("{0} is not an http(s) URL with a host")]
    NoHost(String),
    #[error(
        "{host}:{port} already accepts connections, before the server was started: another \
         process listens there (perhaps a server left running by an earlier run), and the \
         checks would test it instead. Stop that process (`lsof -i :{port}` or `ss -ltnp` \
         names it), or give the server and --url a free port"
    )]
    PortInUse { host: String, port: u16 },
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
         the server (the last attempt: {error}){stderr}"
    )]
    NoConnection {
        host: String,
        port: u16,
        budget: Duration,
        error: String,
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
    if port::is_loopback(&host) && port::connect(&host, port).await.is_ok() {
        return Err(LaunchError::PortInUse { host, port });
    }
    let mut server = spawn(command)?;
    let exit = server.exit.clone();
    let opened =
        port::wait_until_open(&host, port, budget, || exit.borrow().is_some(), |_| {}).await;
    let error = match opened {
        Ok(()) => return Ok(server),
        Err(Closed::Refused(error)) => error,
        Err(Closed::Ended(error)) => error,
    };
    // What the leader left behind ends too.
    let stderr = server.stderr_note();
    server.stop().await;
    let status = *server.exit.borrow();
    Err(match status {
        Some(status) => LaunchError::Exited {
            status,
            host,
            port,
            stderr,
        },
        None => LaunchError::NoConnection {
            host,
            port,
            budget,
            error,
            stderr,
        },
    })
}

/// Starts `command` in a process group of its own, its stderr kept, its exit watched.
fn spawn(command: &ServerCommand) -> Result<ServerProcess, LaunchError> {
    let mut cmd = tokio::process::Command::from(command.to_command());
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = cmd.spawn().map_err(|source| LaunchError::Spawn {
        command: command.display(),
        source,
    })?;
    let group = child.id().and_then(Group::led_by);
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
    let (tx, exit) = watch::channel(None);
    // Reaps the leader as soon as it exits, so it is never a zombie its group waits on.
    tokio::spawn(async move {
        if let Ok(status) = child.wait().await {
            let _ = tx.send(Some(status));
        }
    });
    Ok(ServerProcess {
        group,
        exit,
        stderr,
    })
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

    /// Ends the server's whole process group: SIGTERM, then SIGKILL after the grace period.
    pub async fn stop(&mut self) {
        if let Some(group) = self.group.take() {
            group.end(groups::GRACE).await;
        }
    }
}
