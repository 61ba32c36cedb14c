//! The client process of one scenario: started with the extra last argument and the scenario's
//! environment, in a process group of its own (ended as a whole, also on Ctrl-C), stdin null,
//! the last lines of its stdout and stderr kept.

use std::collections::VecDeque;
use std::io;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::{Child, Command};

use super::scenario::ScenarioId;
use super::script::{LEGACY_VERSION, MODERN_VERSION};
use crate::groups::{Group, GRACE};

/// Lines of the client's stdout and of its stderr kept.
pub(crate) const KEPT_LINES: usize = 50;
/// A longer line is cut to this many bytes.
const LINE_CUT: usize = 2000;

/// The command under test, as given after `--`.
#[derive(Debug, Clone)]
pub(crate) struct ClientCommand {
    pub(crate) program: String,
    pub(crate) args: Vec<String>,
    pub(crate) env: Vec<(String, String)>,
    pub(crate) cwd: Option<PathBuf>,
}

impl ClientCommand {
    /// The command line, for reports.
    pub(crate) fn shown(&self) -> String {
        std::iter::once(&self.program)
            .chain(&self.args)
            .map(|a| {
                if a.is_empty() || a.contains([' ', '"', '\'']) {
                    format!("{a:?}")
                } else {
                    a.clone()
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// The last lines a client wrote.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Output {
    pub(crate) stdout: Vec<String>,
    pub(crate) stderr: Vec<String>,
}

type Tail = Arc<Mutex<VecDeque<String>>>;

/// A started client.
#[derive(Debug)]
pub(crate) struct Running {
    child: Child,
    group: Option<Group>,
    stdout: Tail,
    stderr: Tail,
    readers: Vec<tokio::task::JoinHandle<()>>,
}

/// How the wait for a client ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ended {
    /// It exited (the code, or `None` when a signal ended it).
    Exited(Option<i32>),
    /// The bound passed first.
    Bound,
}

/// Starts the client with `last` as its extra last argument.
pub(crate) fn spawn(cmd: &ClientCommand, last: &str, scenario: ScenarioId) -> io::Result<Running> {
    let version = if scenario == ScenarioId::Modern {
        MODERN_VERSION
    } else {
        LEGACY_VERSION
    };
    let mut command = Command::new(&cmd.program);
    command
        .args(&cmd.args)
        .arg(last)
        .envs(cmd.env.iter().map(|(k, v)| (k, v)))
        .env("MCP_CONFORMANCE_SCENARIO", scenario.name())
        .env("MCP_CONFORMANCE_PROTOCOL_VERSION", version)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    if let Some(dir) = &cmd.cwd {
        command.current_dir(dir);
    }
    let mut child = command.spawn()?;
    let group = child.id().and_then(Group::led_by);
    let (stdout, stderr) = (Tail::default(), Tail::default());
    let mut readers = Vec::new();
    if let Some(out) = child.stdout.take() {
        readers.push(tokio::spawn(keep_tail(out, Arc::clone(&stdout))));
    }
    if let Some(err) = child.stderr.take() {
        readers.push(tokio::spawn(keep_tail(err, Arc::clone(&stderr))));
    }
    Ok(Running {
        child,
        group,
        stdout,
        stderr,
        readers,
    })
}

impl Running {
    /// Waits for the client to exit, at most `bound`.
    pub(crate) async fn wait(&mut self, bound: Duration) -> Ended {
        match tokio::time::timeout(bound, self.child.wait()).await {
            Ok(Ok(status)) => Ended::Exited(status.code()),
            // A failed wait: nothing more can be learnt of it; end it like an overdue one.
            Ok(Err(_)) | Err(_) => Ended::Bound,
        }
    }

    /// Ends whatever is left of its process group (SIGTERM, SIGKILL after the grace period)
    /// and returns the last lines it wrote.
    pub(crate) async fn stop(mut self) -> Output {
        if let Some(group) = self.group.take() {
            group.end(GRACE).await;
        }
        let _ = tokio::time::timeout(GRACE, self.child.wait()).await;
        for reader in self.readers.drain(..) {
            // The pipes may be held open by something that left the group: do not wait long.
            let _ = tokio::time::timeout(Duration::from_millis(200), reader).await;
        }
        Output {
            stdout: self.stdout.lock().iter().cloned().collect(),
            stderr: self.stderr.lock().iter().cloned().collect(),
        }
    }
}

/// Reads a pipe to its end, keeping its last [`KEPT_LINES`] lines (each cut to
/// [`LINE_CUT`] bytes).
async fn keep_tail(mut from: impl AsyncRead + Unpin, tail: Tail) {
    let mut buf = vec![0u8; 8192];
    let mut line: Vec<u8> = Vec::new();
    let keep = |line: &mut Vec<u8>| {
        let text = String::from_utf8_lossy(line)
            .trim_end_matches('\r')
            .to_owned();
        let mut tail = tail.lock();
        if tail.len() == KEPT_LINES {
            tail.pop_front();
        }
        tail.push_back(text);
        line.clear();
    };
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        for &b in &buf[..n] {
            if b == b'\n' {
                keep(&mut line);
            } else if line.len() < LINE_CUT {
                line.push(b);
            }
        }
    }
    if !line.is_empty() {
        keep(&mut line);
    }
}
