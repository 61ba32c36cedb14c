//! The spawned server process: its supervisor task, signals, and captured stderr.
//!
//! The server runs in its own process group, so SIGTERM/SIGKILL reach whatever it started too
//! (an `npx` wrapper's `node`, say), as the Python SDK does. A supervisor task owns the child:
//! it publishes the exit status once, and kills and reaps the group when the last client handle
//! is dropped, so no zombie or orphan is left behind.
//!
//! Public but hidden from the docs: it is what `mcp-conformance` builds its byte-level
//! connection on, not part of this crate's stable API.

use std::collections::VecDeque;
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use nix::sys::signal::{killpg, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;
use parking_lot::Mutex;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::{ChildStdin, ChildStdout, Command};
use tokio::sync::{oneshot, watch};
use tokio_util::sync::CancellationToken;

use crate::command::{ServerCommand, StderrMode};
use crate::error::ClientError;

/// How many stderr lines a client keeps for error messages.
pub(crate) const STDERR_TAIL_LINES: usize = 20;
/// Longer stderr lines are cut (a server that writes binary junk cannot grow our memory).
const STDERR_MAX_LINE: usize = 4096;

/// A running server process, shared by the client's tasks.
#[derive(Debug)]
pub struct Process {
    pid: Option<u32>,
    exit: watch::Receiver<Option<ExitStatus>>,
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
    /// Bytes and lines read from stderr so far.
    stderr_volume: Arc<StderrVolume>,
    /// Cancelled when stderr reached its end (or is not captured).
    stderr_done: CancellationToken,
}

/// Held only by client handles: dropping the last one kills the process group.
///
/// The kill happens in `Drop` itself, with plain system calls: when a client is dropped as its
/// runtime ends (the end of `#[tokio::main]`), no task would run to do it.
#[derive(Debug)]
pub struct KillOnDrop {
    pid: Option<u32>,
    exit: watch::Receiver<Option<ExitStatus>>,
    /// Wakes the supervisor, when the runtime still runs, to reap through tokio.
    _armed: oneshot::Sender<()>,
}

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let Some(pid) = self.pid else { return };
        if self.exit.borrow().is_some() {
            return; // reaped already: the pid may belong to someone else now
        }
        let pid = Pid::from_raw(pid as i32);
        let _ = killpg(pid, Signal::SIGKILL);
        // Reap the leader here if nothing else will (a runtime that is shutting down). SIGKILL
        // takes effect at once; the wait is bounded so a drop never blocks for long.
        for _ in 0..50 {
            match waitpid(pid, Some(WaitPidFlag::WNOHANG)) {
                Ok(WaitStatus::StillAlive) => std::thread::sleep(Duration::from_millis(1)),
                _ => break, // reaped, or reaped by tokio's supervisor (ECHILD)
            }
        }
    }
}

/// A spawned server: its process, the guard that kills its group when dropped, and its pipes.
#[derive(Debug)]
pub struct Spawned {
    pub process: Arc<Process>,
    pub guard: KillOnDrop,
    pub stdin: ChildStdin,
    pub stdout: ChildStdout,
}

/// Spawns `command`, keeping the last `tail_lines` stderr lines (when captured).
pub fn spawn(command: &ServerCommand, tail_lines: usize) -> Result<Spawned, ClientError> {
    let mut cmd = Command::from(command.to_command());
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(match command.stderr {
            StderrMode::Capture => Stdio::piped(),
            StderrMode::Inherit => Stdio::inherit(),
            StderrMode::Discard => Stdio::null(),
        })
        .process_group(0)
        .kill_on_drop(true);
    let mut child = cmd.spawn().map_err(|e| ClientError::Spawn {
        program: command.display(),
        reason: match e.kind() {
            std::io::ErrorKind::NotFound => format!("{e} (is it installed and on PATH?)"),
            _ => e.to_string(),
        },
    })?;
    let (stdin, stdout) = match (child.stdin.take(), child.stdout.take()) {
        (Some(i), Some(o)) => (i, o),
        _ => {
            return Err(ClientError::Spawn {
                program: command.display(),
                reason: "stdin/stdout pipes were not created".to_owned(),
            })
        }
    };
    let stderr_tail = Arc::new(Mutex::new(VecDeque::new()));
    let stderr_done = CancellationToken::new();
    let stderr_volume = Arc::new(StderrVolume::default());
    match child.stderr.take() {
        Some(stderr) => {
            let done = stderr_done.clone();
            let tail = Arc::clone(&stderr_tail);
            let server = command.display();
            let volume = Arc::clone(&stderr_volume);
            tokio::spawn(async move {
                capture_stderr(stderr, server, tail, tail_lines, &volume).await;
                done.cancel();
            });
        }
        None => stderr_done.cancel(),
    }
    let pid = child.id();
    let (exit_tx, exit) = watch::channel(None);
    let guard_exit = exit.clone();
    let (armed, disarmed) = oneshot::channel::<()>();
    tokio::spawn(async move {
        tokio::select! {
            status = child.wait() => {
                let _ = exit_tx.send(status.ok());
            }
            _ = disarmed => {
                // Every client handle is gone and `KillOnDrop` killed the group; reap it.
                let _ = child.start_kill();
                let _ = exit_tx.send(child.wait().await.ok());
            }
        }
    });
    Ok(Spawned {
        process: Arc::new(Process {
            pid,
            exit,
            stderr_tail,
            stderr_volume,
            stderr_done,
        }),
        guard: KillOnDrop {
            pid,
            exit: guard_exit,
            _armed: armed,
        },
        stdin,
        stdout,
    })
}

impl Process {
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    pub fn exit_status(&self) -> Option<ExitStatus> {
        *self.exit.borrow()
    }

    /// Waits up to `limit` for the process to exit.
    pub async fn wait_exit(&self, limit: Duration) -> Option<ExitStatus> {
        let mut exit = self.exit.clone();
        let waited = tokio::time::timeout(limit, exit.wait_for(Option::is_some)).await;
        match waited {
            Ok(Ok(status)) => *status,
            _ => self.exit_status(),
        }
    }

    /// Completes when the process has exited.
    pub(crate) async fn exited(&self) {
        let mut exit = self.exit.clone();
        let _ = exit.wait_for(Option::is_some).await;
    }

    /// Signals the server's whole process group; a group that is already gone is fine.
    pub fn signal(&self, signal: Signal) {
        if self.exit_status().is_some() {
            return;
        }
        if let Some(pid) = self.pid {
            if let Err(e) = killpg(Pid::from_raw(pid as i32), signal) {
                tracing::debug!(pid, ?signal, "killpg: {e}");
            }
        }
    }

    /// Waits up to `limit` for stderr to reach its end, so the tail holds the last words.
    pub async fn wait_stderr(&self, limit: Duration) {
        let _ = tokio::time::timeout(limit, self.stderr_done.cancelled()).await;
    }

    /// (bytes, lines) read from stderr so far.
    pub fn stderr_volume(&self) -> (u64, u64) {
        (
            self.stderr_volume.bytes.load(Ordering::Relaxed),
            self.stderr_volume.lines.load(Ordering::Relaxed),
        )
    }

    pub fn stderr_tail(&self) -> Vec<String> {
        self.stderr_tail.lock().iter().cloned().collect()
    }
}

/// Reads stderr line by line into tracing and the tail buffer, each line bounded.
#[derive(Debug, Default)]
pub(crate) struct StderrVolume {
    bytes: AtomicU64,
    lines: AtomicU64,
}

async fn capture_stderr<R: AsyncRead + Unpin>(
    mut stderr: R,
    server: String,
    tail: Arc<Mutex<VecDeque<String>>>,
    tail_lines: usize,
    volume: &StderrVolume,
) {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    let emit = |line: &[u8]| {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let text = String::from_utf8_lossy(&line[..line.len().min(STDERR_MAX_LINE)]).into_owned();
        tracing::info!(target: "mcp::stderr", server = %server, "{text}");
        let mut tail = tail.lock();
        volume.lines.fetch_add(1, Ordering::Relaxed);
        if tail.len() >= tail_lines {
            tail.pop_front();
        }
        tail.push_back(text);
    };
    loop {
        let n = match stderr.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        volume.bytes.fetch_add(n as u64, Ordering::Relaxed);
        buf.extend_from_slice(&chunk[..n]);
        while let Some(i) = buf.iter().position(|b| *b == b'\n') {
            emit(&buf[..i]);
            buf.drain(..=i);
        }
        if buf.len() > STDERR_MAX_LINE {
            emit(&buf);
            buf.clear();
        }
    }
    if !buf.is_empty() {
        emit(&buf);
    }
}
