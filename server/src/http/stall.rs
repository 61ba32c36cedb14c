//! A bound on how long a connection may refuse to take the bytes of a response: a client
//! that stops reading (its socket buffers full) is disconnected after `send_timeout`, so
//! that what its response held (a large reply, a place in the reply budget) is freed in
//! bounded time. hyper has no write timeout of its own.
//!
//! The timer is armed only while a write waits, so a client that reads never pays for it.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

/// `T` whose writes fail with [`io::ErrorKind::TimedOut`] once one has waited `timeout`.
pub(crate) struct SendTimeout<T> {
    inner: T,
    timeout: Duration,
    /// Made at the first write that waits, then reset for each later one (no allocation
    /// per wait).
    deadline: Option<Pin<Box<Sleep>>>,
    /// A write is waiting, and `deadline` is its deadline.
    armed: bool,
}

impl<T> SendTimeout<T> {
    pub(crate) fn new(inner: T, timeout: Duration) -> Self {
        SendTimeout {
            inner,
            timeout,
            deadline: None,
            armed: false,
        }
    }

    /// What a write's outcome means here: done (the timer is disarmed), or still waiting
    /// (the timer is armed if it was not, and an error once it fired).
    fn waited<R>(
        &mut self,
        cx: &mut Context<'_>,
        polled: Poll<io::Result<R>>,
    ) -> Poll<io::Result<R>> {
        if polled.is_ready() {
            self.armed = false;
            return polled;
        }
        let timeout = self.timeout;
        if !self.armed {
            self.armed = true;
            let at = Instant::now() + timeout;
            match &mut self.deadline {
                Some(deadline) => deadline.as_mut().reset(at),
                None => self.deadline = Some(Box::pin(tokio::time::sleep_until(at))),
            }
        }
        let deadline = self
            .deadline
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(Instant::now() + timeout)));
        match deadline.as_mut().poll(cx) {
            Poll::Ready(()) => {
                let why = format!(
                    "the client read nothing for {} s; connection closed",
                    timeout.as_secs_f64()
                );
                tracing::debug!("{why}");
                Poll::Ready(Err(io::Error::new(io::ErrorKind::TimedOut, why)))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for SendTimeout<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for SendTimeout<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.waited(cx, polled)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.waited(cx, polled)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let polled = Pin::new(&mut self.inner).poll_flush(cx);
        self.waited(cx, polled)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
