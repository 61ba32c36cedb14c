//! What one process showed, kept as evidence: its transcript and stderr, handed to the trace
//! of the check that holds it; the root causes it met (findings, with the frames that show
//! them); when it first answered.

use std::time::Instant;

use super::error::ProbeError;
use super::starts::StartLog;
use crate::evidence::Trace;
use crate::mismatch::{Finding, Findings, Kind};
use crate::transport::Conn;

/// Transcript entries a finding keeps: the last ones of the process, up to the mismatch (more
/// for a message spread over lines: all its lines, up to [`FINDING_FRAMES_MAX`]).
pub const FINDING_FRAMES: usize = 12;
pub const FINDING_FRAMES_MAX: usize = 64;

/// One process's evidence.
#[derive(Debug)]
pub struct Witness {
    trace: Trace,
    /// What the process is for, as the transcript's header says.
    label: String,
    spawned: Instant,
    /// Transcript entries and stderr lines already handed to a trace.
    mark: usize,
    stderr_mark: u64,
    findings: Findings,
    starts: StartLog,
    /// This process among the target's starts.
    start_index: usize,
    /// A wait of this process was ended by a reply that could not be read.
    blocked: Option<Kind>,
}

impl Witness {
    pub fn new(
        trace: Trace,
        label: String,
        spawned: Instant,
        findings: Findings,
        starts: StartLog,
    ) -> Witness {
        Witness {
            trace,
            label,
            spawned,
            mark: 0,
            stderr_mark: 0,
            findings,
            start_index: starts.register(),
            starts,
            blocked: None,
        }
    }

    /// Hands what the process did since the last hand-over to the current trace.
    pub fn flush(&mut self, conn: &Conn) {
        let entries = conn.transcript_since(self.mark);
        self.mark += entries.len();
        let pid = conn.pid().map(|p| format!(", pid {p}")).unwrap_or_default();
        self.trace
            .add_process(format!("{}{pid}", self.label), entries, self.spawned);
        let (_, lines) = conn.stderr_volume();
        let new = usize::try_from(lines - self.stderr_mark).unwrap_or(usize::MAX);
        let tail = conn.stderr_now();
        let new = new.min(tail.len());
        self.trace.add_stderr(tail[tail.len() - new..].to_vec());
        self.stderr_mark = lines;
    }

    /// From now on the evidence goes to `trace` (a shared session's next check); what the
    /// process did so far goes to the current one.
    pub fn rebind(&mut self, conn: &Conn, trace: &Trace, label: &str) {
        self.flush(conn);
        self.mark = conn.transcript_mark();
        self.trace = trace.clone();
        label.clone_into(&mut self.label);
    }

    /// The check the evidence goes to.
    pub fn check(&self) -> &str {
        &self.trace.check
    }

    /// The process answered for the first time.
    pub fn answered(&self) {
        self.starts
            .answered(self.start_index, self.spawned.elapsed());
    }

    /// How long the quickest earlier start of the target took to answer, if one did.
    pub fn earlier_start_answered(&self) -> Option<std::time::Duration> {
        self.starts.any_answered()
    }

    /// A wait ended on a reply that cannot be read: the check is blocked by its owner.
    pub fn block(&mut self, kind: Kind, why: String) -> ProbeError {
        self.blocked.get_or_insert(kind);
        self.trace.block(kind, why.clone());
        ProbeError::Blocked { kind, why }
    }

    pub fn blocked(&self) -> Option<Kind> {
        self.blocked
    }

    /// A wait for a reply the server owed, after it had answered, ran out: it stopped
    /// answering (or lost the reply). The run learns from it (see `runner::stalls`).
    pub fn stalled(&self, why: String) {
        self.trace.stalled(self.start_index, why);
    }

    /// Records a finding with the last `frames` transcript entries of the process.
    pub fn find(&self, conn: &Conn, frames: usize, kind: Kind, actual: String) {
        let mut entries = conn.transcript_since(self.mark);
        let keep = entries.len().saturating_sub(frames);
        entries.drain(..keep);
        self.record(kind, actual, entries);
    }

    /// Records a finding about a message just read, with about `frames` transcript entries of
    /// the process up to it, and those already received after it. Whichever check held the
    /// process when they came: a message read late (left unread by the check before) is
    /// shown all the same.
    pub fn find_read(&self, conn: &Conn, frames: usize, kind: Kind, actual: String) {
        let start = conn
            .transcript_mark()
            .saturating_sub(frames + conn.buffered());
        self.record(kind, actual, conn.transcript_since(start));
    }

    fn record(&self, kind: Kind, actual: String, entries: Vec<crate::transcript::TranscriptEntry>) {
        let seen_in = self.trace.check.to_string();
        self.findings.record(Finding {
            kind,
            owner: kind
                .owner()
                .map_or_else(|| seen_in.clone(), |id| id.as_str().to_owned()),
            seen_in,
            actual,
            frames: entries,
            count: 1,
        });
    }
}
