//! A Unix socket given as stdin or stdout, on the reactor without making it non-blocking.
//!
//! Node-based hosts give their servers socketpairs. A socket cannot be reopened through
//! `/proc` as a pipe can, and `O_NONBLOCK` on it would change the open file description that
//! fd 0 or 1 shares with whoever else holds it. Instead each call asks for non-blocking on its
//! own (`MSG_DONTWAIT`), and readiness comes from the reactor (`AsyncFd`, epoll), which works
//! on any socket.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use nix::sys::socket::{recv, send, MsgFlags};
use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Bytes one read asks for.
const READ_SIZE: usize = 64 * 1024;

/// One direction of a socket, polled by the reactor.
#[derive(Debug)]
pub struct Socket {
    fd: AsyncFd<OwnedFd>,
    /// `recv` needs initialised memory and `ReadBuf`'s spare room may not be (no `unsafe`
    /// here): reads land here, zeroed once, and are copied on.
    scratch: Vec<u8>,
}

impl Socket {
    /// `fd` on the reactor. Must run inside the runtime.
    pub fn new(fd: OwnedFd) -> io::Result<Self> {
        // `AsyncFd::register`'s contract (the fd stays open and the same for the AsyncFd's
        // life) is what an `OwnedFd` is; the safe constructor is only deprecated for types
        // that cannot promise it.
        #[allow(deprecated)]
        let fd = AsyncFd::new(fd)?;
        Ok(Socket {
            fd,
            scratch: Vec::new(),
        })
    }
}

impl AsyncRead for Socket {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            let mut guard = ready!(this.fd.poll_read_ready(cx))?;
            if this.scratch.is_empty() {
                this.scratch = vec![0; READ_SIZE];
            }
            let want = buf.remaining().min(this.scratch.len());
            let scratch = &mut this.scratch[..want];
            match guard.try_io(|fd| {
                recv(fd.as_raw_fd(), scratch, MsgFlags::MSG_DONTWAIT).map_err(io::Error::from)
            }) {
                Ok(Ok(n)) => {
                    buf.put_slice(&this.scratch[..n]);
                    return Poll::Ready(Ok(()));
                }
                Ok(Err(e)) if e.kind() == io::ErrorKind::Interrupted => {}
                Ok(Err(e)) => return Poll::Ready(Err(e)),
                Err(_would_block) => {}
            }
        }
    }
}

impl AsyncWrite for Socket {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bytes: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        loop {
            let mut guard = ready!(this.fd.poll_write_ready(cx))?;
            let flags = MsgFlags::MSG_DONTWAIT | MsgFlags::MSG_NOSIGNAL;
            match guard.try_io(|fd| send(fd.as_raw_fd(), bytes, flags).map_err(io::Error::from)) {
                Ok(Err(e)) if e.kind() == io::ErrorKind::Interrupted => {}
                Ok(result) => return Poll::Ready(result),
                Err(_would_block) => {}
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}
