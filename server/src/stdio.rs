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
}
