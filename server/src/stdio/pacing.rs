//! When to write replies in the middle of a burst of requests.
//!
//! A client on another CPU reads and answers the first replies while the server makes the
//! rest, so replies go out every [`WRITE_AT`] bytes. A client on the server's own CPU cannot:
//! each such write wakes it, it preempts the server, and the two take turns every dozen
//! replies, paying two context switches each time. The kernel counts those preemptions
//! (`ru_nivcsw`); while a write keeps being followed by one, replies are held until the
//! burst ends or [`HOLD_AT`] bytes are waiting. 64 B echoes at window 64, client and server
//! pinned to one CPU: 1.3 M calls/s writing every 2 KiB, 1.9 M holding (BENCHMARKS.md).

use std::ffi::c_long;

/// Output gathered before a write in the middle of a burst while the client runs elsewhere.
///
/// Small, so both sides work at once; a write still carries about a dozen small replies.
/// 64 B echoes at window 64 on 2 cores: 0.44-0.49 M calls/s writing once per burst,
/// 0.98-1.04 M with 2 KiB, at the same CPU time per call; 8, 4 and 1 KiB were measured too.
pub(crate) const WRITE_AT: usize = 2 * 1024;

/// Output gathered before a write in the middle of a burst while the client shares the CPU:
/// a window of 64 small replies goes out in one write, and a 16 KiB echo's reply still fits
/// on top within the output buffer's 64 KiB.
pub(crate) const HOLD_AT: usize = 24 * 1024;

/// Whether the last write was followed by a preemption, judged after each write of at least
/// [`WRITE_AT`] bytes.
#[derive(Debug)]
pub(crate) struct Pacing {
    held: bool,
    switches: Option<c_long>,
}

impl Pacing {
    pub(crate) fn new() -> Self {
        Pacing {
            held: false,
            switches: involuntary_switches(),
        }
    }

    /// Pacing for a client known to share the CPU.
    #[cfg(test)]
    pub(crate) fn held() -> Self {
        Pacing {
            held: true,
            switches: None,
        }
    }

    /// Bytes of replies at which a burst stops to write them.
    pub(crate) fn threshold(&self) -> usize {
        if self.held {
            HOLD_AT
        } else {
            WRITE_AT
        }
    }

    /// After a write of `bytes`: hold while this thread keeps being preempted. A preemption by
    /// some other process holds one burst's replies back a little; the next write sets it
    /// right. Smaller writes are not judged: a burst that small never stops to write, and a
    /// sequential client's round trip does not pay for a `getrusage` (0.1 µs each side).
    pub(crate) fn wrote(&mut self, bytes: usize) {
        if bytes >= WRITE_AT {
            self.count(involuntary_switches());
        }
    }

    fn count(&mut self, now: Option<c_long>) {
        let held = matches!((self.switches, now), (Some(before), Some(now)) if now > before);
        match (self.held, held) {
            (false, true) => {
                tracing::trace!("preempted after a write: replies held to a burst's end")
            }
            (true, false) => {
                tracing::trace!(
                    "not preempted after a write: replies written every {WRITE_AT} bytes"
                )
            }
            _ => {}
        }
        self.held = held;
        self.switches = now;
    }
}

/// This thread's involuntary context switches so far; `None` where the OS does not say.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn involuntary_switches() -> Option<c_long> {
    use nix::sys::resource::{getrusage, UsageWho};
    getrusage(UsageWho::RUSAGE_THREAD)
        .ok()
        .map(|usage| usage.involuntary_context_switches())
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn involuntary_switches() -> Option<c_long> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(switches: Option<c_long>) -> Pacing {
        Pacing {
            held: false,
            switches,
        }
    }

    #[test]
    fn holds_only_after_a_write_that_was_followed_by_a_preemption() {
        let mut pacing = at(Some(5));
        assert_eq!(pacing.threshold(), WRITE_AT);
        pacing.count(Some(6));
        assert_eq!(pacing.threshold(), HOLD_AT);
        pacing.count(Some(9));
        assert_eq!(pacing.threshold(), HOLD_AT);
        pacing.count(Some(9));
        assert_eq!(pacing.threshold(), WRITE_AT);
    }

    #[test]
    fn only_writes_of_write_at_or_more_are_judged() {
        // Any real count is above -1: a judged write holds.
        let mut pacing = at(Some(-1));
        pacing.wrote(WRITE_AT - 1);
        assert_eq!(pacing.threshold(), WRITE_AT);
        pacing.wrote(WRITE_AT);
        let judged = if cfg!(target_os = "linux") {
            HOLD_AT
        } else {
            WRITE_AT
        };
        assert_eq!(pacing.threshold(), judged);
    }

    #[test]
    fn never_holds_without_a_count() {
        let mut pacing = at(None);
        pacing.count(Some(3));
        assert_eq!(pacing.threshold(), WRITE_AT);
        pacing.count(None);
        assert_eq!(pacing.threshold(), WRITE_AT);
        pacing.count(Some(4));
        assert_eq!(pacing.threshold(), WRITE_AT);
    }

    #[test]
    fn this_thread_has_a_count_on_linux() {
        let first = involuntary_switches();
        assert_eq!(first.is_some(), cfg!(target_os = "linux"));
        assert!(involuntary_switches() >= first);
    }
}
