//! The stdio proxy: the host's stdin to the server's stdin, the server's stdout to the host's
//! stdout, the server's stderr to ours, each copied byte for byte by a thread of its own
//! (a blocking read, a copy offered to the judge, the same bytes written at once), so
//! nothing is reordered, merged, held back or parsed on the way.
//!
//! The server runs in a process group of its own ([`crate::groups`]). A SIGTERM, SIGINT or
//! SIGHUP the observer gets is what the host meant for the server: it is recorded and
//! forwarded to the server's group, which gets [`EXIT_WAIT`] to exit before SIGKILL.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{ChildStderr, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::time::Duration;

use bytes::Bytes;
use nix::sys::signal::{killpg, Signal as NixSignal};
use nix::unistd::Pid;
use tokio::sync::oneshot;

use super::cli::Options;
use super::feed::{Feed, Tap, CHUNK};
use super::{stdio_subject, Observer, START, USAGE};
use crate::clients::timeline::{Side, What};
use crate::groups::{Group, GRACE};
use crate::stops::Stops;

/// How long the server has to exit after a forwarded signal before it is killed.
const EXIT_WAIT: Duration = Duration::from_secs(5);
/// How long the server's stdout may stay open after it exited (a child of it holding the
/// pipe) before the observer stops copying it.
const DRAIN_WAIT: Duration = Duration::from_secs(2);

/// Runs the session; the exit code is the server's.
pub(super) async fn run(opts: &Options) -> u8 {
    let mut signals = match Stops::install() {
        Ok(signals) => signals,
        Err(e) => {
            eprintln!("mcp-conformance observe: cannot catch SIGTERM/SIGINT/SIGHUP: {e}");
            return 1;
        }
    };
    let observer = match Observer::start(opts, stdio_subject(&opts.command)) {
        Ok(observer) => observer,
        Err(e) => {
            let path = opts
                .transcript
                .as_deref()
                .unwrap_or(std::path::Path::new(""));
            eprintln!(
                "mcp-conformance observe: cannot open the transcript file {}: {e}",
                path.display()
            );
            return USAGE;
        }
    };
    let (program, args) = match opts.command.split_first() {
        Some(split) => split,
        None => return USAGE,
    };
    let spawned = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn();
    let mut child = match spawned {
        Ok(child) => child,
        Err(e) => {
            let message = format!("cannot start {program:?}: {e}");
            eprintln!("mcp-conformance observe: {message}");
            observer.finish(Some(message));
            return START;
        }
    };
    let group = Group::led_by(child.id());
    let pid = i32::try_from(child.id()).unwrap_or(0);
    let tap = observer.tap.clone();
    let (stdin, stdout, stderr) = (child.stdin.take(), child.stdout.take(), child.stderr.take());
    if let Some(stdin) = stdin {
        let tap = tap.clone();
        std::thread::spawn(move || host_to_server(stdin, &tap));
    }
    let (drained_tx, drained) = oneshot::channel();
    if let Some(stdout) = stdout {
        let tap = tap.clone();
        std::thread::spawn(move || {
            server_to_host(stdout, &tap);
            let _ = drained_tx.send(());
        });
    }
    if let Some(stderr) = stderr {
        std::thread::spawn(move || copy_stderr(stderr));
    }
    let (status_tx, status) = oneshot::channel();
    std::thread::spawn(move || {
        let _ = status_tx.send(child.wait());
    });
    let status = supervise(status, pid, &tap, &mut signals).await;
    // What the server wrote before it exited is forwarded (and judged) before its exit.
    let _ = tokio::time::timeout(DRAIN_WAIT, drained).await;
    tap.event(What::ServerExited {
        code: status.as_ref().and_then(ExitStatus::code),
    });
    if let Some(group) = &group {
        // Whatever the server left in its group.
        group.end(GRACE).await;
    }
    drop(group);
    observer.finish(None);
    exit_code(status.as_ref())
}

/// The shell's convention: the server's exit code, or 128 + the signal that ended it.
fn exit_code(status: Option<&ExitStatus>) -> u8 {
    match status {
        Some(s) => match (s.code(), s.signal()) {
            (Some(code), _) => (code & 0xff) as u8,
            (None, Some(sig)) => 128u8.wrapping_add(sig as u8),
            (None, None) => 1,
        },
        None => 1,
    }
}

/// Waits for the server's exit; a signal meanwhile is recorded and forwarded to its group,
/// and the wait is then bounded (SIGKILL after [`EXIT_WAIT`], at once on a second signal).
async fn supervise(
    mut status: oneshot::Receiver<std::io::Result<ExitStatus>>,
    pid: i32,
    tap: &Tap,
    signals: &mut Stops,
) -> Option<ExitStatus> {
    let first = tokio::select! {
        s = &mut status => return s.ok().and_then(Result::ok),
        sig = signals.next() => sig,
    };
    tap.event(What::Signal(first));
    send(pid, first.nix());
    tokio::select! {
        s = &mut status => return s.ok().and_then(Result::ok),
        _ = tokio::time::sleep(EXIT_WAIT) => {
            eprintln!("mcp-conformance observe: the server did not exit within {}s of {}: killing it", EXIT_WAIT.as_secs(), first.name());
        }
        again = signals.next() => {
            eprintln!("mcp-conformance observe: {} again: killing the server", again.name());
        }
    }
    send(pid, NixSignal::SIGKILL);
    tokio::time::timeout(GRACE, status)
        .await
        .ok()
        .and_then(Result::ok)
        .and_then(Result::ok)
}

fn send(pid: i32, signal: NixSignal) {
    if pid > 1 {
        if let Err(e) = killpg(Pid::from_raw(pid), signal) {
            if e != nix::errno::Errno::ESRCH {
                eprintln!("mcp-conformance observe: cannot send {signal} to the server: {e}");
            }
        }
    }
}

/// One of our standard streams as an unbuffered file (std's stdout is line-buffered: a
/// partial line would wait).
fn raw(fd: std::os::fd::BorrowedFd<'_>) -> Option<File> {
    fd.try_clone_to_owned().ok().map(File::from)
}

/// A copy of a chunk for the judge, handed over just before the chunk is written on: once it
/// is written the other side may react, and its reaction must not reach the judge first (the
/// timeline is the order things happened in). A copy and a queue push, which never wait.
fn offer(tap: &Tap, from: Side, chunk: &[u8]) {
    tap.offer(Feed::Bytes {
        from,
        at: tap.at(),
        chunk: Bytes::copy_from_slice(chunk),
    });
}

/// The host's stdin to the server's; at the host's EOF the server's stdin is closed.
fn host_to_server(mut to: ChildStdin, tap: &Tap) {
    let Some(mut from) = raw(std::io::stdin().as_fd()) else {
        return;
    };
    let mut buf = vec![0u8; CHUNK];
    loop {
        match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                offer(tap, Side::Client, &buf[..n]);
                if to.write_all(&buf[..n]).is_err() {
                    // The server closed its stdin (or exited): nothing more can reach it.
                    return;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    // Recorded before it happens, as chunks are: the server's answer to it comes after.
    tap.event(What::StdinClosed);
    drop(to);
}

/// The server's stdout to the host's; read to its end even if the host stopped reading.
fn server_to_host(mut from: ChildStdout, tap: &Tap) {
    let mut to = raw(std::io::stdout().as_fd());
    let mut buf = vec![0u8; CHUNK];
    loop {
        match from.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => {
                offer(tap, Side::Server, &buf[..n]);
                if let Some(out) = &mut to {
                    if out.write_all(&buf[..n]).is_err() {
                        to = None;
                    }
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}

/// The server's stderr to ours, unchanged (not judged).
fn copy_stderr(mut from: ChildStderr) {
    let Some(mut to) = raw(std::io::stderr().as_fd()) else {
        return;
    };
    let mut buf = vec![0u8; CHUNK];
    while let Ok(n) = from.read(&mut buf) {
        if n == 0 || to.write_all(&buf[..n]).is_err() {
            return;
        }
    }
}
