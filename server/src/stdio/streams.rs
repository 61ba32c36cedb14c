//! The process's stdin and stdout: for the blocking loop, or as async streams on the reactor.
//!
//! MCP hosts give their servers pipes (Python, Rust, Go hosts) or Unix sockets (Node-based
//! hosts: Claude Code, Cursor, Claude Desktop; libuv makes child stdio from socketpairs).
//! Pipes are reopened through `/proc/self/fd`, for the blocking loop ([`blocking`]) or as
//! non-blocking pipes of tokio's: the reopen makes a new open file description, so whatever
//! is set on it (O_NONBLOCK) never leaks to a peer that shares the original. A socket cannot be reopened; it is read and written with `MSG_DONTWAIT`
//! instead ([`Socket`]). Anything else (a terminal, a file, no `/proc` for a pipe) gets
//! tokio's `stdin()`/`stdout()`, which do each read and write on a blocking thread.

use std::fs::OpenOptions;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::unix::pipe;

use super::blocking::BlockingStdio;
use super::socket::Socket;

pub type Input = Box<dyn AsyncRead + Unpin + Send>;
pub type Output = Box<dyn AsyncWrite + Unpin + Send>;

/// stdin and stdout for the blocking loop, if both are pipes, reopened; `None` if not (then use
/// [`streams`]).
pub fn blocking() -> Option<io::Result<BlockingStdio>> {
    let input = reopen_pipe(0, false)?;
    let output = reopen_pipe(1, true)?;
    let blocking = |pipe: &std::fs::File| -> io::Result<()> {
        use nix::fcntl::{fcntl, FcntlArg, OFlag};
        let flags = OFlag::from_bits_truncate(fcntl(pipe, FcntlArg::F_GETFL)?);
        fcntl(pipe, FcntlArg::F_SETFL(flags - OFlag::O_NONBLOCK))?;
        Ok(())
    };
    Some(
        blocking(&input)
            .and_then(|()| blocking(&output))
            .and_then(|()| BlockingStdio::new(input, output)),
    )
}

/// stdin and stdout, on the reactor where they are pipes or sockets. Must run inside the
/// runtime.
pub fn streams() -> (Input, Output) {
    let (input, stdin): (Input, _) = match reopen_pipe(0, false).map(pipe::Receiver::from_file) {
        Some(Ok(rx)) => (Box::new(rx), "a pipe"),
        _ => match socket(io::stdin().as_fd()) {
            Some(socket) => (Box::new(socket), "a socket"),
            None => (Box::new(tokio::io::stdin()), "read on a blocking thread"),
        },
    };
    let (output, stdout): (Output, _) = match reopen_pipe(1, true).map(pipe::Sender::from_file) {
        Some(Ok(tx)) => (Box::new(tx), "a pipe"),
        _ => match socket(io::stdout().as_fd()) {
            Some(socket) => (Box::new(socket), "a socket"),
            None => (
                Box::new(tokio::io::stdout()),
                "written on a blocking thread",
            ),
        },
    };
    tracing::debug!(stdin, stdout, "stdio streams");
    (input, output)
}

/// A duplicate of `fd` on the reactor, if it is a socket.
fn socket(fd: BorrowedFd<'_>) -> Option<Socket> {
    let owned = fd.try_clone_to_owned().ok()?;
    let file = std::fs::File::from(owned);
    if !file.metadata().ok()?.file_type().is_socket() {
        return None;
    }
    Socket::new(OwnedFd::from(file)).ok()
}

fn reopen_pipe(fd: u32, write: bool) -> Option<std::fs::File> {
    let path = format!("/proc/self/fd/{fd}");
    if !std::fs::metadata(&path).ok()?.file_type().is_fifo() {
        return None;
    }
    let pipe = OpenOptions::new()
        .read(!write)
        .write(write)
        // Opening a pipe this way is opening a FIFO: without O_NONBLOCK, opening its read
        // end blocks until it has a writer (forever, if the client already closed stdin).
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(&path)
        .ok()?;
    if write {
        grow(&pipe);
    }
    Some(pipe)
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
