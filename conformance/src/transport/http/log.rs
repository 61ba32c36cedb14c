//! An HTTP connection's transcript: what was POSTed and what came back, in the same entries
//! a process's transcript has. Bounded: past [`KEEP`] entries only the count grows.

use std::sync::Arc;
use std::time::Instant;

use parking_lot::Mutex;

use crate::transcript::Direction;
use crate::transcript::TranscriptEntry;

/// Entries kept, and bytes of their text; later ones are counted, not stored.
const KEEP: usize = 10_000;
const KEEP_BYTES: usize = 8 << 20;
/// Texts are kept whole up to this size; only longer ones are cut, with their size.
const MAX_TEXT: usize = 64 << 10;

#[derive(Debug, Clone)]
pub struct Log {
    inner: Arc<Mutex<Inner>>,
    started: Instant,
}

#[derive(Debug, Default)]
struct Inner {
    entries: Vec<TranscriptEntry>,
    bytes: usize,
    dropped: usize,
}

impl Log {
    pub fn new() -> Log {
        Log {
            inner: Arc::default(),
            started: Instant::now(),
        }
    }

    pub fn started(&self) -> Instant {
        self.started
    }

    pub fn record(&self, direction: Direction, text: impl Into<String>) {
        let mut text: String = text.into();
        if text.len() > MAX_TEXT {
            let mut end = MAX_TEXT;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            let total = text.len();
            text.truncate(end);
            text.push_str(&format!("… ({total} bytes)"));
        }
        let mut inner = self.inner.lock();
        if inner.entries.len() >= KEEP || inner.bytes + text.len() > KEEP_BYTES {
            inner.dropped += 1;
            return;
        }
        inner.bytes += text.len();
        inner.entries.push(TranscriptEntry {
            at_ms: self.started.elapsed().as_secs_f64() * 1000.0,
            direction,
            text,
        });
    }

    pub fn mark(&self) -> usize {
        self.inner.lock().entries.len()
    }

    pub fn since(&self, mark: usize) -> Vec<TranscriptEntry> {
        let inner = self.inner.lock();
        inner
            .entries
            .get(mark..)
            .map(<[_]>::to_vec)
            .unwrap_or_default()
    }
}
