//! The process's stdin and stdout as async streams.
//!
//! tokio's `stdin()`/`stdout()` do every read and write on a blocking thread: a hop between
//! threads per read. When stdin and stdout are pipes (as every MCP host makes them), they are
//! reopened through `/proc/self/fd` as non-blocking pipes driven by the reactor instead. The
//! reopen makes new open file descriptions, so the O_NONBLOCK flag never leaks to a peer that
//! shares the originals. Anything else (a terminal, a file, no `/proc`) keeps tokio's streams.

use std::fs::OpenOptions;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::unix::pipe;

pub type Input = Box<dyn AsyncRead + Unpin + Send>;
pub type Output = Box<dyn AsyncWrite + Unpin + Send>;

/// stdin and stdout, as pipes on the reactor where possible. Must run inside the runtime.
pub fn streams() -> (Input, Output) {
    let input: Input = match reopen_pipe(0, false) {
        Some(file) => match pipe::Receiver::from_file(file) {
            Ok(rx) => Box::new(rx),
            Err(_) => Box::new(tokio::io::stdin()),
        },
        None => Box::new(tokio::io::stdin()),
    };
    let output: Output = match reopen_pipe(1, true) {
        Some(file) => match pipe::Sender::from_file(file) {
            Ok(tx) => Box::new(tx),
            Err(_) => Box::new(tokio::io::stdout()),
        },
        None => Box::new(tokio::io::stdout()),
    };
    (input, output)
}

fn reopen_pipe(fd: u32, write: bool) -> Option<std::fs::File> {
    let path = format!("/proc/self/fd/{fd}");
    if !std::fs::metadata(&path).ok()?.file_type().is_fifo() {
        return None;
    }
    OpenOptions::new()
        .read(!write)
        .write(write)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(&path)
        .ok()
        .inspect(|pipe| {
            if write {
                grow(pipe);
            }
        })
}

/// What the output pipe is grown to: 4x Linux's default 64 KiB (16 pages per pipe).
///
/// A reply bigger than the pipe is written in pieces, each waiting for the client to read
/// the last one: with 16 KiB echoes (33 KiB replies) the default pipe took two `write`s and
/// two wake-ups per reply, and growing it doubled throughput (BENCHMARKS.md). A grown pipe
/// counts against the user's pipe pages (`/proc/sys/fs/pipe-user-pages-soft`, 16 384 pages by
/// default) while it is open, so it is grown modestly and only in the direction that carries
/// the large payloads twice (content and `structuredContent`).
pub const OUTPUT_PIPE_BYTES: i32 = 256 * 1024;

/// Only ever grows: a pipe the host made bigger already is left as it is (`F_SETPIPE_SZ`
/// would shrink it). Best effort: an unprivileged process past its pipe-page limit gets
/// `EPERM`, a kernel without `F_SETPIPE_SZ` `EINVAL`; either way the pipe stays as it was.
fn grow(pipe: &std::fs::File) {
    use nix::fcntl::{fcntl, FcntlArg};
    if let Ok(bytes) = fcntl(pipe, FcntlArg::F_GETPIPE_SZ) {
        if bytes >= OUTPUT_PIPE_BYTES {
            tracing::debug!(bytes, "stdout pipe already large enough");
            return;
        }
    }
    match fcntl(pipe, FcntlArg::F_SETPIPE_SZ(OUTPUT_PIPE_BYTES)) {
        Ok(bytes) => tracing::debug!(bytes, "stdout pipe grown"),
        Err(e) => tracing::debug!("stdout pipe left at its size: F_SETPIPE_SZ failed ({e})"),
    }
}
