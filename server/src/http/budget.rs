//! Global byte budgets: what all clients together may make the server hold, beside the
//! per-message cap (`--max-message-bytes`) and the connection cap. Without them memory is
//! bounded only by connections × message size (16 GiB by default), which any client can
//! reach by holding back the last byte of large bodies or by not reading large replies.
//!
//! A [`Budget`] is one atomic counter; taking from it is one compare-and-swap, so the hot
//! path pays no lock. What was taken is a [`Held`], returned to the budget when dropped.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::{Bytes, HttpBody};
use futures::Stream;
use hyper::body::{Frame, SizeHint};

/// Bytes shared by every client, up to `max`.
#[derive(Debug)]
pub(crate) struct Budget {
    max: usize,
    used: AtomicUsize,
}

impl Budget {
    pub(crate) fn new(max: usize) -> Arc<Budget> {
        Arc::new(Budget {
            max,
            used: AtomicUsize::new(0),
        })
    }

    /// The whole budget, for messages.
    pub(crate) fn max(&self) -> usize {
        self.max
    }

    /// Takes `n` bytes, or nothing if that would pass the budget.
    pub(crate) fn take(self: &Arc<Self>, n: usize) -> Option<Held> {
        let mut held = Held {
            budget: Arc::clone(self),
            n: 0,
        };
        held.grow(n).then_some(held)
    }

    fn try_add(&self, n: usize) -> bool {
        self.used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                used.checked_add(n).filter(|&total| total <= self.max)
            })
            .is_ok()
    }
}

/// Bytes taken from a [`Budget`]; given back when dropped.
#[derive(Debug)]
pub(crate) struct Held {
    budget: Arc<Budget>,
    n: usize,
}

impl Held {
    /// Takes `n` more bytes; `false` (and nothing taken) if that would pass the budget.
    pub(crate) fn grow(&mut self, n: usize) -> bool {
        let ok = n == 0 || self.budget.try_add(n);
        if ok {
            self.n += n;
        }
        ok
    }

    /// The bytes held.
    pub(crate) fn bytes(&self) -> usize {
        self.n
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.budget.used.fetch_sub(self.n, Ordering::AcqRel);
    }
}

/// The largest piece a held reply is handed to hyper in. hyper takes the next piece only
/// once it could write out what it had, so a client that stops reading leaves the rest of
/// its reply here, counted, rather than in hyper's buffer.
const PIECE: usize = 64 * 1024;

/// A reply's bytes as body frames of at most [`PIECE`] bytes, holding (for a large reply)
/// its place in the reply budget until the last frame was taken, or the body dropped (the
/// client went away, or the connection was cut).
pub(crate) struct Pieces {
    rest: Bytes,
    _held: Option<Held>,
}

impl Pieces {
    pub(crate) fn new(bytes: Bytes, held: Option<Held>) -> Pieces {
        Pieces {
            rest: bytes,
            _held: held,
        }
    }
}

impl Pieces {
    fn next_piece(&mut self) -> Option<Bytes> {
        if self.rest.is_empty() {
            return None;
        }
        let n = self.rest.len().min(PIECE);
        Some(self.rest.split_to(n))
    }
}

/// As an SSE stream's events.
impl Stream for Pieces {
    type Item = Result<Bytes, Infallible>;

    fn poll_next(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        Poll::Ready(self.next_piece().map(Ok))
    }
}

/// As a whole body, of known length (so it goes out with `Content-Length`).
impl HttpBody for Pieces {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(self.next_piece().map(|piece| Ok(Frame::data(piece))))
    }

    fn is_end_stream(&self) -> bool {
        self.rest.is_empty()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.rest.len() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn takes_up_to_the_budget_and_gives_back_on_drop() {
        let budget = Budget::new(100);
        let a = budget.take(60).expect("fits");
        assert!(budget.take(41).is_none());
        let mut b = budget.take(40).expect("fits exactly");
        assert!(!b.grow(1));
        assert_eq!((a.bytes(), b.bytes()), (60, 40));
        drop(a);
        assert!(b.grow(60));
        assert!(budget.take(1).is_none());
        drop(b);
        assert_eq!(budget.take(100).map(|h| h.bytes()), Some(100));
        // An overflowing request is refused, not wrapped.
        assert!(budget.take(usize::MAX).is_none());
    }
}
