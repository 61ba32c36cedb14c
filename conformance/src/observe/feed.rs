//! What the forwarding side hands the judging side, and how: through a bounded channel, never
//! waiting. If the judge falls behind, judging stops (the report says so) and forwarding goes
//! on untouched: the observer must never slow or drop traffic for its own sake.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use parking_lot::Mutex;

use crate::clients::timeline::{Exchange, Side, What};

/// How many items may wait for the judge (chunks of at most [`CHUNK`] bytes: a bound on the
/// memory they hold).
const QUEUE: usize = 1024;

/// The largest read of one copy (stdio).
pub(crate) const CHUNK: usize = 64 * 1024;

/// Lifecycle events kept aside once judging stopped (there are a handful per session).
const LATE_EVENTS: usize = 16;

/// One thing the judge is told.
#[derive(Debug)]
pub(crate) enum Feed {
    /// stdio: bytes one side wrote, as forwarded.
    Bytes {
        from: Side,
        at: Duration,
        chunk: Bytes,
    },
    /// Something that is not a message: stdin closed, a signal, the server's exit.
    Event { at: Duration, what: What },
    /// HTTP: a request the client made (`key` names it in later items), with its body.
    Request {
        key: u64,
        at: Duration,
        exchange: Exchange,
        body: Bytes,
    },
    /// HTTP: the response's status, content type and MCP headers (names lower-cased), as
    /// they came.
    Response {
        key: u64,
        status: u16,
        content_type: String,
        headers: Vec<(String, String)>,
    },
    /// HTTP: a piece of the response body, as forwarded.
    ResponseChunk {
        key: u64,
        at: Duration,
        chunk: Bytes,
    },
    /// HTTP: the response body ended (or the client went away).
    ResponseEnd { key: u64, at: Duration },
    /// Nothing more will come: the judge finishes.
    Done,
}

/// The forwarding side's end: clones are cheap and every call returns at once.
#[derive(Debug, Clone)]
pub(crate) struct Tap {
    tx: SyncSender<Feed>,
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    start: Instant,
    /// The judge fell behind: nothing more is offered to it.
    stopped: AtomicBool,
    /// Lifecycle events that came after judging stopped.
    late: Mutex<Vec<(Duration, What)>>,
}

/// The judging side's end.
#[derive(Debug)]
pub(crate) struct Drain {
    pub(crate) rx: Receiver<Feed>,
    shared: Arc<Shared>,
}

/// A new channel; times count from now.
pub(crate) fn channel() -> (Tap, Drain) {
    let (tx, rx) = sync_channel(QUEUE);
    let shared = Arc::new(Shared {
        start: Instant::now(),
        stopped: AtomicBool::new(false),
        late: Mutex::new(Vec::new()),
    });
    (
        Tap {
            tx,
            shared: Arc::clone(&shared),
        },
        Drain { rx, shared },
    )
}

impl Tap {
    /// Time since the session started.
    pub(crate) fn at(&self) -> Duration {
        self.shared.start.elapsed()
    }

    /// Hands `feed` to the judge if it keeps up; else judging stops for good.
    pub(crate) fn offer(&self, feed: Feed) {
        if self.shared.stopped.load(Ordering::Relaxed) {
            return;
        }
        match self.tx.try_send(feed) {
            Ok(()) => {}
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                self.shared.stopped.store(true, Ordering::Relaxed);
            }
        }
    }

    /// Records a lifecycle event now; kept aside (and added at the end) if judging stopped.
    pub(crate) fn event(&self, what: What) {
        let at = self.at();
        if !self.shared.stopped.load(Ordering::Relaxed) {
            match self.tx.try_send(Feed::Event { at, what }) {
                Ok(()) => return,
                Err(TrySendError::Full(Feed::Event { what, .. })) => {
                    self.shared.stopped.store(true, Ordering::Relaxed);
                    self.keep_late(at, what);
                }
                Err(_) => self.shared.stopped.store(true, Ordering::Relaxed),
            }
            return;
        }
        self.keep_late(at, what);
    }

    fn keep_late(&self, at: Duration, what: What) {
        let mut late = self.shared.late.lock();
        if late.len() < LATE_EVENTS {
            late.push((at, what));
        }
    }

    /// Tells the judge nothing more comes, waiting for room if need be (the forwarding is over).
    pub(crate) fn done(&self) {
        // An error means the judge is gone already: nothing to tell.
        let _ = self.tx.send(Feed::Done);
    }
}

impl Drain {
    /// Did judging stop because the judge fell behind?
    pub(crate) fn stopped(&self) -> bool {
        self.shared.stopped.load(Ordering::Relaxed)
    }

    /// The lifecycle events that came after judging stopped.
    pub(crate) fn late(&self) -> Vec<(Duration, What)> {
        std::mem::take(&mut *self.shared.late.lock())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_judge_that_falls_behind_stops_judging_and_nothing_waits() {
        let (tap, drain) = channel();
        for _ in 0..QUEUE {
            tap.offer(Feed::Done);
        }
        assert!(!drain.stopped());
        // One more: the queue is full, so judging stops; the call returned at once.
        tap.offer(Feed::Done);
        assert!(drain.stopped());
        tap.event(What::StdinClosed);
        assert_eq!(drain.late().len(), 1);
        assert_eq!(drain.rx.try_iter().count(), QUEUE);
    }
}
