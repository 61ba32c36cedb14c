//! The process's stdin and stdout: for the blocking loop, or as async streams.
//!
//! MCP hosts give their servers pipes (Python, Rust, Go hosts) or Unix sockets (Node-based
//! hosts: Claude Code, Cursor, Claude Desktop; libuv makes child stdio from socketpairs).
//! Both go to [`serve_blocking`](crate::serve_blocking) ([`blocking`]). A pipe is reopened
//! through `/proc/self/fd`: the reopen makes a new open file description, so the O_NONBLOCK
//! the loop sets when it stops never leaks to a peer that shares the original. A socket is
//! duplicated (it cannot be reopened) and is stopped with timeouts instead.
//! Anything else (a terminal, a file, no `/proc` for a pipe) is served by the async loop:
//! tokio's `stdin()`/`stdout()` do every read and write on a blocking thread, and [`streams`]
//! gives them, or non-blocking pipes on the reactor where it can.

use std::fs::OpenOptions;
use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::unix::pipe;

use crate::blocking::BlockingStdio;

pub type Input = Box<dyn AsyncRead + Unpin + Send>;
pub type Output = Box<dyn AsyncWrite + Unpin + Send>;

/// stdin and stdout for the blocking loop, if each is a pipe (reopened) or a socket (a
/// duplicate: a socket cannot be reopened); `None` if not (then use [`streams`]).
pub fn blocking() -> Option<io::Result<BlockingStdio>> {
    let input = reopen_pipe(0, false, false).or_else(|| dup_socket(io::stdin().as_fd()))?;
    let output = reopen_pipe(1, true, false).or_else(|| dup_socket(io::stdout().as_fd()))?;
    Some(BlockingStdio::new(input, output))
}

fn dup_socket(fd: BorrowedFd<'_>) -> Option<std::fs::File> {
    let file = std::fs::File::from(fd.try_clone_to_owned().ok()?);
    file.metadata()
        .ok()
        .filter(|m| m.file_type().is_socket())
        .map(|_| file)
}

/// stdin and stdout, as pipes on the reactor where possible. Must run inside the runtime.
pub fn streams() -> (Input, Output) {
    let input: Input = match reopen_pipe(0, false, true) {
        Some(file) => match pipe::Receiver::from_file(file) {
            Ok(rx) => Box::new(rx),
            Err(_) => Box::new(tokio::io::stdin()),
        },
        None => Box::new(tokio::io::stdin()),
    };
    let output: Output = match reopen_pipe(1, true, true) {
        Some(file) => match pipe::Sender::from_file(file) {
            Ok(tx) => Box::new(tx),
            Err(_) => Box::new(tokio::io::stdout()),
        },
        None => Box::new(tokio::io::stdout()),
    };
    (input, output)
}

fn reopen_pipe(fd: u32, write: bool, nonblocking: bool) -> Option<std::fs::File> {
    let path = format!("/proc/self/fd/{fd}");
    if !std::fs::metadata(&path).ok()?.file_type().is_fifo() {
        return None;
    }
    OpenOptions::new()
        .read(!write)
        .write(write)
        // Opening a pipe this way is opening a FIFO: without O_NONBLOCK, opening its read
        // end blocks until it has a writer (forever, if the client already closed stdin).
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(&path)
        .ok()
        .filter(|pipe| nonblocking || set_blocking(pipe).is_ok())
        .inspect(|pipe| {
            if write {
                grow(pipe);
            }
        })
}

fn set_blocking(pipe: &std::fs::File) -> nix::Result<()> {
    use nix::fcntl::{fcntl, FcntlArg, OFlag};
    let flags = OFlag::from_bits_truncate(fcntl(pipe, FcntlArg::F_GETFL)?);
    fcntl(pipe, FcntlArg::F_SETFL(flags - OFlag::O_NONBLOCK))?;
    Ok(())
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
