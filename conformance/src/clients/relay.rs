//! The relay: the "server" a stdio client spawns in `client` mode. The client is given the
//! path of a tiny script that `exec`s `mcp-conformance __relay SOCKET`, so the process the
//! client talks to (and signals) is this one. It moves bytes between its stdin/stdout and the
//! harness's Unix socket, and tells the harness what only the server process can see: stdin
//! closing and the signals it gets. It behaves like a good server: on stdin EOF it exits 0,
//! on SIGTERM/SIGINT/SIGHUP it exits 128 + the signal's number.
//!
//! Relay → harness: JSON lines, [`Report`]. Harness → relay: the raw bytes for stdout.

use std::path::Path;
use std::time::Duration;

use base64::Engine;
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::unix::OwnedWriteHalf;
use tokio::net::UnixStream;
use tokio::sync::mpsc;

use super::timeline::Signal;
use crate::stops::Stops;

/// Bytes read from stdin per report.
const CHUNK: usize = 64 * 1024;

/// One line the relay sends the harness.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Report {
    /// Bytes the client wrote to the relay's stdin, base64.
    Stdin(String),
    /// The client closed the relay's stdin.
    Eof(bool),
    /// The relay got this signal (`SIGTERM`, `SIGINT`, `SIGHUP`).
    Signal(String),
    /// This many more bytes from the harness were written to stdout (the client can read them
    /// from now on).
    Out(usize),
    /// The relay exits with this code now.
    Exit(i32),
}

/// A report with the wall-clock time (microseconds since the epoch) the relay saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Line {
    #[serde(flatten)]
    pub(crate) report: Report,
    pub(crate) t: u64,
}

impl Report {
    pub(crate) fn stdin_bytes(&self) -> Option<Vec<u8>> {
        match self {
            Report::Stdin(b64) => base64::engine::general_purpose::STANDARD.decode(b64).ok(),
            _ => None,
        }
    }
}

/// The signal named in a report.
pub(crate) fn signal_named(name: &str) -> Option<Signal> {
    [Signal::Term, Signal::Int, Signal::Hup]
        .into_iter()
        .find(|s| s.name() == name)
}

/// `mcp-conformance __relay SOCKET`: runs until stdin ends, a signal comes, or the harness
/// goes; returns the exit code.
pub fn main(socket: &Path) -> u8 {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("mcp-conformance relay: cannot start the async runtime: {e}");
            return 1;
        }
    };
    let code = runtime.block_on(relay(socket));
    // The stdin reader may be parked in a blocking read: do not wait for it.
    runtime.shutdown_background();
    code
}

async fn relay(socket: &Path) -> u8 {
    let stream = match UnixStream::connect(socket).await {
        Ok(s) => s,
        Err(e) => {
            eprintln!(
                "mcp-conformance relay: cannot reach the harness at {}: {e}",
                socket.display()
            );
            return 1;
        }
    };
    let mut signals = match Stops::install() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("mcp-conformance relay: cannot catch signals: {e}");
            return 1;
        }
    };
    let (mut from_harness, mut to_harness) = stream.into_split();
    let mut stdin = read_stdin();
    let mut stdout = tokio::io::stdout();
    let mut buf = vec![0u8; CHUNK];
    loop {
        tokio::select! {
            chunk = stdin.recv() => {
                let Some((chunk, t)) = chunk else {
                    let _ = send(&mut to_harness, &Report::Eof(true), None).await;
                    return exit_after_eof(&mut signals, &mut to_harness).await;
                };
                let b64 = base64::engine::general_purpose::STANDARD.encode(&chunk);
                if send(&mut to_harness, &Report::Stdin(b64), Some(t)).await.is_err() {
                    return 0;
                }
            }
            n = from_harness.read(&mut buf) => match n {
                Ok(0) | Err(_) => return 0,
                Ok(n) => {
                    // Stamped before the write: the client cannot read the bytes any earlier.
                    let t = now();
                    if stdout.write_all(&buf[..n]).await.is_err() || stdout.flush().await.is_err() {
                        return 0;
                    }
                    if send(&mut to_harness, &Report::Out(n), Some(t)).await.is_err() {
                        return 0;
                    }
                }
            },
            got = signals.next() => {
                let code = i32::from(got.exit_code());
                // What the client wrote before it signalled is its conduct too: pass it on first.
                drain(&mut stdin, &mut to_harness).await;
                let _ = send(&mut to_harness, &Report::Signal(got.name().to_owned()), None).await;
                let _ = send(&mut to_harness, &Report::Exit(code), None).await;
                return u8::try_from(code).unwrap_or(1);
            }
        }
    }
}

/// How long the relay takes to exit once its stdin has closed, as a server finishing its work
/// would: a client that waits for the exit (lifecycle.mdx, Shutdown) sends no signal in that
/// time; one that signals or kills at once is seen doing so, whatever the scheduling.
const EXIT_AFTER_EOF: Duration = Duration::from_millis(250);

/// After stdin closed: exits 0 once [`EXIT_AFTER_EOF`] has passed, or at a signal that comes
/// first (reported, exit 128 + its number).
async fn exit_after_eof(signals: &mut Stops, to_harness: &mut OwnedWriteHalf) -> u8 {
    let code = match tokio::time::timeout(EXIT_AFTER_EOF, signals.next()).await {
        Ok(got) => {
            let _ = send(to_harness, &Report::Signal(got.name().to_owned()), None).await;
            i32::from(got.exit_code())
        }
        Err(_) => 0,
    };
    let _ = send(to_harness, &Report::Exit(code), None).await;
    u8::try_from(code).unwrap_or(1)
}

/// How long, after a signal, stdin is still read: what the client wrote before signalling is
/// in the pipe already.
const DRAIN_WAIT: Duration = Duration::from_millis(20);
/// The longest the drain goes on (a client that keeps writing).
const DRAIN_MAX: Duration = Duration::from_millis(200);

/// Passes on what stdin holds, until nothing comes for [`DRAIN_WAIT`].
async fn drain(stdin: &mut mpsc::Receiver<(Vec<u8>, u64)>, to: &mut OwnedWriteHalf) {
    let until = tokio::time::Instant::now() + DRAIN_MAX;
    while tokio::time::Instant::now() < until {
        let Ok(Some((chunk, t))) = tokio::time::timeout(DRAIN_WAIT, stdin.recv()).await else {
            return;
        };
        let b64 = base64::engine::general_purpose::STANDARD.encode(&chunk);
        if send(to, &Report::Stdin(b64), Some(t)).await.is_err() {
            return;
        }
    }
}

/// Stdin in chunks, each with the time it was read, read on a task of its own (a blocking read
/// cannot be cancelled); the channel closes at EOF or on a read error.
fn read_stdin() -> mpsc::Receiver<(Vec<u8>, u64)> {
    let (tx, rx) = mpsc::channel(16);
    tokio::spawn(async move {
        let mut stdin = tokio::io::stdin();
        let mut buf = vec![0u8; CHUNK];
        loop {
            match stdin.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => {
                    if tx.send((buf[..n].to_vec(), now())).await.is_err() {
                        return;
                    }
                }
            }
        }
    });
    rx
}

/// The wall clock in microseconds since the epoch: the harness's clock too.
fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
}

/// One report, stamped `t` (when what it reports happened), or now.
async fn send(to: &mut OwnedWriteHalf, report: &Report, t: Option<u64>) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(&Line {
        report: report.clone(),
        t: t.unwrap_or_else(now),
    })?;
    line.push(b'\n');
    to.write_all(&line).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_are_json_lines_the_harness_reads_back() {
        let text = serde_json::to_string(&Report::Stdin("aGk=".into())).unwrap();
        assert_eq!(text, r#"{"stdin":"aGk="}"#);
        assert_eq!(
            serde_json::to_string(&Report::Eof(true)).unwrap(),
            r#"{"eof":true}"#
        );
        assert_eq!(
            serde_json::to_string(&Report::Signal("SIGTERM".into())).unwrap(),
            r#"{"signal":"SIGTERM"}"#
        );
        let back: Line = serde_json::from_str(r#"{"stdin":"aGk=","t":7}"#).unwrap();
        assert_eq!(back.report.stdin_bytes(), Some(b"hi".to_vec()));
        assert_eq!(back.t, 7);
        assert_eq!(signal_named("SIGHUP"), Some(Signal::Hup));
        assert_eq!(signal_named("SIGKILL"), None);
    }
}
