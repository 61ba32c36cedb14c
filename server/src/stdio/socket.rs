//! A Unix socket given as stdin or stdout, on the reactor without making it non-blocking.
//!
//! Node-based hosts give their servers socketpairs. A socket cannot be reopened through
//! `/proc` as a pipe can, and `O_NONBLOCK` on it would change the open file description that
//! fd 0 or 1 shares with whoever else holds it. Instead each call asks for non-blocking on its
//! own (`MSG_DONTWAIT`), and readiness comes from the reactor (`AsyncFd`, epoll), which works
//! on any socket.
//!
//! Reads wait on readability alone. Writes go straight to `send`, and wait on writability only
//! while one would block: a socket is writable again after every message its peer reads, and a
//! registration for that would wake the reactor once per reply for nothing.

use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use nix::errno::Errno;
use nix::sys::socket::{recv, send, MsgFlags};
use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, AsyncWrite, Interest, ReadBuf};

/// Bytes one read asks for.
const READ_SIZE: usize = 64 * 1024;

/// One end of a socket as a stream, polled by the reactor.
#[derive(Debug)]
pub struct Socket {
    fd: OwnedFd,
    /// Registered for readability on the first read.
    readable: Option<AsyncFd<OwnedFd>>,
    /// Registered for writability while a write would block.
    writable: Option<AsyncFd<OwnedFd>>,
    /// `recv` needs initialised memory and `ReadBuf`'s spare room may not be (no `unsafe`
    /// here): reads land here, zeroed once, and are copied on.
    scratch: Vec<u8>,
}

impl Socket {
    /// `fd`, a socket, as a stream. Its reads and writes must be polled inside the runtime.
    pub fn new(fd: OwnedFd) -> io::Result<Self> {
        Ok(Socket {
            fd,
            readable: None,
            writable: None,
            scratch: Vec::new(),
        })
    }

    /// A registration of a duplicate of the socket for `interest`.
    fn register(&self, interest: Interest) -> io::Result<AsyncFd<OwnedFd>> {
        let fd = self.fd.as_fd().try_clone_to_owned()?;
        // `AsyncFd::register`'s contract (the fd stays open and the same for the AsyncFd's
        // life) is what an `OwnedFd` is; the safe constructor is only deprecated for types
        // that cannot promise it.
        #[allow(deprecated)]
        AsyncFd::with_interest(fd, interest)
    }
}

impl AsyncRead for Socket {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.readable.is_none() {
            this.readable = Some(this.register(Interest::READABLE)?);
            this.scratch = vec![0; READ_SIZE];
        }
        let Some(readable) = &this.readable else {
            return Poll::Ready(Err(io::ErrorKind::NotConnected.into()));
        };
        loop {
            let mut guard = ready!(readable.poll_read_ready(cx))?;
            let want = buf.remaining().min(this.scratch.len());
            let scratch = &mut this.scratch[..want];
            match guard.try_io(|fd| {
                recv(fd.as_raw_fd(), scratch, MsgFlags::MSG_DONTWAIT).map_err(io::Error::from)
            }) {
                Ok(Ok(n)) => {
                    if n > 0 && n < want {
                        // A short read took all there was: wait for the next arrival (each
                        // one wakes the reactor) instead of paying a read that gets EAGAIN.
                        // tokio's own pipes and sockets do the same.
                        guard.clear_ready();
                    }
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
        let flags = MsgFlags::MSG_DONTWAIT | MsgFlags::MSG_NOSIGNAL;
        loop {
            if let Some(writable) = &this.writable {
                let mut guard = ready!(writable.poll_write_ready(cx))?;
                guard.clear_ready();
            }
            match send(this.fd.as_raw_fd(), bytes, flags) {
                Ok(n) => {
                    if n == bytes.len() {
                        // Caught up: writability no longer matters until a write blocks.
                        this.writable = None;
                    }
                    return Poll::Ready(Ok(n));
                }
                Err(Errno::EINTR) => {}
                Err(Errno::EAGAIN) => {
                    if this.writable.is_none() {
                        this.writable = Some(this.register(Interest::WRITABLE)?);
                    }
                }
                Err(e) => return Poll::Ready(Err(e.into())),
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
