//! What a check leaves for the report: the frames of the processes it used, their stderr,
//! whether a wait of it was ended by a reply that could not be read (then it is blocked), and
//! the processes that stopped answering it (what the run learns a silent server from).
//!
//! A check may use several processes (a fresh one, the shared session, an observation made
//! once for several checks); each one's part is headed by an event entry naming it, and every
//! timestamp counts from the check's start, so the parts read as one timeline.

use std::sync::Arc;
use std::time::Instant;

use parking_lot::Mutex;

use crate::mismatch::Kind;
use crate::transcript::Direction;
use crate::transcript::TranscriptEntry;

/// Of each process's part of a check's transcript, the report keeps entries from the start up
/// to this many bytes of text, and from the end up to [`TRANSCRIPT_TAIL_BYTES`]; a note says how
/// many were left out between them. A flood of 20 000 garbage lines is not worth megabytes.
pub const TRANSCRIPT_HEAD_BYTES: usize = 16 * 1024;
pub const TRANSCRIPT_TAIL_BYTES: usize = 8 * 1024;

/// What a check's processes left behind.
#[derive(Debug, Clone, Default)]
pub struct Collected {
    pub transcript: Vec<TranscriptEntry>,
    /// The same parts with every entry the connection kept (not cut to the report's head and
    /// tail): what `--transcript` files hold.
    pub whole: Vec<TranscriptEntry>,
    pub stderr: Vec<String>,
    /// The first mismatch that ended one of the check's waits, and what the check was waiting
    /// for: the check is blocked by the mismatch's owner.
    pub blocked: Option<(Kind, String)>,
    /// Processes whose wait for a reply they owed ran out: each process (its number among
    /// the target's starts) once, with what the wait said.
    pub stalls: Vec<Stall>,
}

/// A process that stopped answering (or lost a reply) during a check.
#[derive(Debug, Clone, PartialEq)]
pub struct Stall {
    /// Its number among the target's starts.
    pub process: usize,
    /// What the wait that ran out said.
    pub why: String,
}

/// One check's collector, shared by every probe the check uses.
#[derive(Debug, Clone)]
pub struct Trace {
    /// The check the evidence belongs to.
    pub check: Arc<str>,
    started: Instant,
    collected: Arc<Mutex<Collected>>,
}

impl Trace {
    pub fn new(check: &str) -> Trace {
        Trace {
            check: check.into(),
            started: Instant::now(),
            collected: Arc::default(),
        }
    }

    /// Adds one process's part: `header` (what the process is), then its entries (timed since
    /// the process was spawned at `spawned`), re-timed to the check's clock and bounded.
    pub fn add_process(&self, header: String, entries: Vec<TranscriptEntry>, spawned: Instant) {
        if entries.is_empty() {
            return;
        }
        // Signed: a shared session was spawned before the check started.
        let offset_ms = if spawned >= self.started {
            (spawned - self.started).as_secs_f64() * 1000.0
        } else {
            -((self.started - spawned).as_secs_f64() * 1000.0)
        };
        let part: Vec<TranscriptEntry> = entries
            .into_iter()
            .map(|mut e| {
                e.at_ms = (e.at_ms + offset_ms).max(0.0);
                e
            })
            .collect();
        let header = TranscriptEntry {
            at_ms: part.first().map_or(0.0, |e| e.at_ms),
            direction: Direction::Event,
            text: format!("<{header}>"),
        };
        let mut c = self.collected.lock();
        c.whole.push(header.clone());
        c.whole.extend(part.iter().cloned());
        c.transcript.push(header);
        c.transcript.extend(bounded_transcript(part));
    }

    pub fn add_stderr(&self, lines: Vec<String>) {
        self.collected.lock().stderr.extend(lines);
    }

    /// A wait ended on a mismatch: the check is blocked (the first reason is kept).
    pub fn block(&self, kind: Kind, why: String) {
        let mut c = self.collected.lock();
        if c.blocked.is_none() {
            c.blocked = Some((kind, why));
        }
    }

    /// A wait of process `process` for a reply it owed ran out (the first one per process is
    /// kept).
    pub fn stalled(&self, process: usize, why: String) {
        let mut c = self.collected.lock();
        if !c.stalls.iter().any(|s| s.process == process) {
            c.stalls.push(Stall { process, why });
        }
    }

    /// Forgets a mismatch met so far: for an observation whose judges do not read the replies
    /// it waited for (what stdout held, how the process ended).
    pub fn clear_blocked(&self) {
        self.collected.lock().blocked = None;
    }

    /// Takes over what another collector holds (an observation several checks share).
    pub fn absorb(&self, other: &Collected) {
        let mut c = self.collected.lock();
        c.transcript.extend(other.transcript.iter().cloned());
        c.whole.extend(other.whole.iter().cloned());
        c.stderr.extend(other.stderr.iter().cloned());
        if c.blocked.is_none() {
            c.blocked.clone_from(&other.blocked);
        }
        for stall in &other.stalls {
            if !c.stalls.iter().any(|s| s.process == stall.process) {
                c.stalls.push(stall.clone());
            }
        }
    }

    pub fn take(&self) -> Collected {
        std::mem::take(&mut *self.collected.lock())
    }

    /// Milliseconds since the check started.
    pub fn elapsed_ms(&self) -> f64 {
        self.started.elapsed().as_secs_f64() * 1000.0
    }
}

/// A process's transcript cut to a bounded size: the entries from the start up to
/// [`TRANSCRIPT_HEAD_BYTES`] of text, a note of how many were left out, and the entries at
/// the end up to [`TRANSCRIPT_TAIL_BYTES`].
pub fn bounded_transcript(mut entries: Vec<TranscriptEntry>) -> Vec<TranscriptEntry> {
    let fits = |budget: usize, it: &mut dyn Iterator<Item = &TranscriptEntry>| {
        let mut used = 0;
        it.take_while(|e| {
            used += e.text.len();
            used <= budget
        })
        .count()
    };
    let head = fits(TRANSCRIPT_HEAD_BYTES, &mut entries.iter()).max(1);
    if head >= entries.len() {
        return entries;
    }
    let tail = fits(TRANSCRIPT_TAIL_BYTES, &mut entries[head..].iter().rev());
    let left_out = entries.len() - head - tail;
    if left_out == 0 {
        return entries;
    }
    let at_ms = entries[head].at_ms;
    let rest = entries.split_off(head + left_out);
    entries.truncate(head);
    entries.push(TranscriptEntry {
        at_ms,
        direction: Direction::Event,
        text: format!("<{left_out} transcript entries left out>"),
    });
    entries.extend(rest);
    entries
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(i: usize, len: usize) -> TranscriptEntry {
        TranscriptEntry {
            at_ms: i as f64,
            direction: Direction::Receive,
            text: format!("{i:0>len$}", len = len.min(64)) + &"x".repeat(len.saturating_sub(64)),
        }
    }

    #[test]
    fn a_short_transcript_is_kept_whole() {
        let entries: Vec<TranscriptEntry> = (0..100).map(|i| entry(i, 100)).collect();
        assert_eq!(bounded_transcript(entries.clone()), entries);
    }

    #[test]
    fn a_flood_keeps_its_head_and_tail_and_says_what_was_left_out() {
        let entries: Vec<TranscriptEntry> = (0..20_000).map(|i| entry(i, 100)).collect();
        let kept = bounded_transcript(entries);
        let head = TRANSCRIPT_HEAD_BYTES / 100;
        let tail = TRANSCRIPT_TAIL_BYTES / 100;
        assert_eq!(kept.len(), head + 1 + tail);
        assert_eq!(kept[0].text, entry(0, 100).text);
        assert_eq!(kept[head - 1].text, entry(head - 1, 100).text);
        assert_eq!(kept[head].direction, Direction::Event);
        assert_eq!(
            kept[head].text,
            format!("<{} transcript entries left out>", 20_000 - head - tail)
        );
        assert_eq!(kept[head + 1].text, entry(20_000 - tail, 100).text);
        assert_eq!(kept.last().unwrap().text, entry(19_999, 100).text);
        let bytes: usize = kept.iter().map(|e| e.text.len()).sum();
        assert!(bytes < TRANSCRIPT_HEAD_BYTES + TRANSCRIPT_TAIL_BYTES + 100);
    }

    #[test]
    fn one_huge_entry_is_still_shown() {
        let entries = vec![entry(0, 100_000), entry(1, 10)];
        let kept = bounded_transcript(entries.clone());
        assert_eq!(kept, entries);
    }

    #[test]
    fn the_whole_part_keeps_what_the_report_leaves_out() {
        let trace = Trace::new("x.y");
        let entries: Vec<TranscriptEntry> = (0..1000).map(|i| entry(i, 5000)).collect();
        trace.add_process("own process 1".to_owned(), entries.clone(), trace.started);
        let c = trace.take();
        assert!(
            c.transcript.len() < 10,
            "{} entries in the report",
            c.transcript.len()
        );
        assert_eq!(c.whole.len(), 1001);
        assert_eq!(c.whole[0].text, "<own process 1>");
        assert_eq!(c.whole[1..], entries[..]);
    }

    #[test]
    fn two_processes_read_as_one_timeline_each_under_its_header() {
        let trace = Trace::new("x.y");
        let spawned_before = trace.started - std::time::Duration::from_millis(1000);
        trace.add_process(
            "shared legacy session".to_owned(),
            vec![entry(1005, 10)],
            spawned_before,
        );
        let spawned_after = trace.started + std::time::Duration::from_millis(20);
        trace.add_process(
            "own process 2".to_owned(),
            vec![entry(1, 10)],
            spawned_after,
        );
        let c = trace.take();
        let shown: Vec<(String, i64)> = c
            .transcript
            .iter()
            .map(|e| (e.text.clone(), e.at_ms.round() as i64))
            .collect();
        assert_eq!(
            shown,
            [
                ("<shared legacy session>".to_owned(), 5),
                (entry(1005, 10).text, 5),
                ("<own process 2>".to_owned(), 21),
                (entry(1, 10).text, 21),
            ]
        );
    }
}
