//! One server process under test, with the small vocabulary checks are written in: send, wait
//! for the response to an id, prove that nothing answered with a barrier, shut down.
//!
//! Every wait is bounded: a process's first reply by the start budget (`--start-timeout`),
//! every later one by `--timeout`. What arrives but cannot be matched to a request is
//! classified ([`crate::mismatch`]) and ends the wait at once instead of at its deadline.

use std::time::{Duration, Instant};

use crate::transport::RawEvent;
use mcp_protocol::{FrameError, Framing};
use serde_json::Value;

use crate::evidence::Trace;
use crate::mismatch::{self, Finding, Findings, Kind, Spread};
use crate::pattern::short;
use crate::requests::Requests;
use crate::transport::Conn;

mod error;
mod exit;
mod messages;
mod spawner;
mod starts;
mod wait;

pub use error::ProbeError;
pub use exit::describe_exit;
pub use messages::{discover_request, initialize_params, initialize_request, modern_meta};
pub use spawner::Spawner;
pub use starts::StartLog;
pub use wait::Quiet;

/// At most this many frames (and, separately, non-frames) are kept in [`Probe::received`] and
/// [`Probe::garbage`]: a server flooding stdout must not grow the harness's memory. Checks send
/// a few hundred messages at most; the totals are still counted.
pub const KEPT: usize = 1000;

/// Transcript entries a finding keeps: the last ones of the process, up to the mismatch (more
/// for a message spread over lines: all its lines, up to [`FINDING_FRAMES_MAX`]).
const FINDING_FRAMES: usize = 12;
const FINDING_FRAMES_MAX: usize = 64;

/// One thing read from stdout.
#[derive(Debug, Clone, PartialEq)]
pub enum Got {
    Json(Value),
    /// Bytes that are not a JSON frame: a spec violation on stdout.
    Garbage(String),
    /// The last of several lines that together are one JSON value, and how many lines.
    Spread(Value, usize),
    /// Bytes in the other framing (a `Content-Length` header, or a JSON line where a header
    /// belongs); says which.
    OtherFraming(String),
    Eof,
    Timeout,
}

/// Is this a JSON-RPC response (not a request or notification)?
pub fn is_response(v: &Value) -> bool {
    v.get("method").is_none() && (v.get("result").is_some() || v.get("error").is_some())
}

/// A spawned server with helpers for checks.
#[derive(Debug)]
pub struct Probe {
    conn: Conn,
    spawned: Instant,
    /// What the process is for, as the transcript's header says.
    label: String,
    framing: Framing,
    next_id: i64,
    /// The bound of each wait once the process has answered something.
    pub wait: Duration,
    /// The bound of the wait for the process's first reply.
    start_wait: Duration,
    /// Sent once if the process has answered nothing after `wait`: a request it must answer
    /// (`initialize`, `server/discover`). A reply to it before the reply waited for proves
    /// that one is not coming (a server answers in order), without waiting out the start
    /// budget; no reply to either means the server is still starting.
    pub barrier: Option<Value>,
    barrier_id: Option<Value>,
    /// The method of the first request sent: a process whose first request was a start-up one
    /// and that answers nothing did not start.
    first_method: Option<String>,
    /// Anything answered: later waits get `wait`.
    answered: bool,
    /// Notifications sent that a reply without an id may answer (a server that wrongly
    /// answers notifications): such a reply is not taken for a request's reply that lost its
    /// id (`jsonrpc.unknown-notification` judges it).
    notifications: usize,
    /// Notifications sent in all.
    pub notifications_sent: usize,
    /// The ping sent to tell an ambiguous reply without an id apart (see [`Probe::response`]).
    disambiguation: Option<Value>,
    /// Ids of requests the harness sent for itself, whose replies no check wants.
    ignored: Vec<Value>,
    /// A wait for a response ran out: the process stopped answering.
    pub timed_out: bool,
    /// Its stdout ended.
    closed: bool,
    /// Responses read since the process was last handed to a check ([`Probe::rebind`]).
    replies_this_lease: usize,
    /// A wait of this process was ended by a reply that could not be read.
    pub blocked: Option<Kind>,
    /// `initialize` was answered but `notifications/initialized` is not sent yet: the first
    /// check that leases the shared legacy session sends it, so it is in that check's frames.
    pub(crate) pending_initialized: bool,
    /// Responses that arrived while waiting for another id.
    stash: Vec<Value>,
    /// Everything on stdout that was not a JSON frame (the first [`KEPT`]).
    pub garbage: Vec<String>,
    /// How many things on stdout were not JSON frames, all told.
    pub garbage_total: usize,
    /// Every JSON frame received (the first [`KEPT`]).
    pub received: Vec<Value>,
    /// How many JSON frames were received, all told.
    pub received_total: usize,
    /// Added as `params._meta` to every request [`Probe::request`] sends (a modern session);
    /// `None` for legacy sessions.
    pub meta: Option<Value>,
    spread: Spread,
    /// The requests sent and which got replies: tells a reply under a changed id.
    requests: Requests,
    trace: Trace,
    /// Transcript entries and stderr lines already handed to a trace.
    mark: usize,
    stderr_mark: u64,
    findings: Findings,
    starts: StartLog,
    start_index: usize,
}

impl Drop for Probe {
    fn drop(&mut self) {
        self.flush_evidence();
    }
}

impl Probe {
    pub fn conn(&self) -> &Conn {
        &self.conn
    }

    /// The bound of the wait for the process's first reply.
    pub fn start_wait(&self) -> Duration {
        self.start_wait
    }

    /// Has the process answered anything yet?
    pub fn answered(&self) -> bool {
        self.answered
    }

    /// Was the [`Probe::barrier`] sent (so the process got more than its first request)?
    pub fn barrier_sent(&self) -> bool {
        self.barrier_id.is_some()
    }

    /// Hands what the process did since the last hand-over to the current trace.
    pub(crate) fn flush_evidence(&mut self) {
        let entries = self.conn.transcript_since(self.mark);
        self.mark += entries.len();
        let pid = self
            .conn
            .pid()
            .map(|p| format!(", pid {p}"))
            .unwrap_or_default();
        self.trace
            .add_process(format!("{}{pid}", self.label), entries, self.spawned);
        let (_, lines) = self.conn.stderr_volume();
        let new = usize::try_from(lines - self.stderr_mark).unwrap_or(usize::MAX);
        let tail = self.conn.stderr_now();
        let new = new.min(tail.len());
        self.trace.add_stderr(tail[tail.len() - new..].to_vec());
        self.stderr_mark = lines;
    }

    /// From now on the process's evidence goes to `trace` (a shared session's next check);
    /// what it did so far goes to the current one.
    pub(crate) fn rebind(&mut self, trace: &Trace, label: &str) {
        self.flush_evidence();
        self.mark = self.conn.transcript_mark();
        self.trace = trace.clone();
        label.clone_into(&mut self.label);
        self.stash.clear();
        self.timed_out = false;
        self.replies_this_lease = 0;
        self.requests.new_lease();
    }

    /// Did the process end (or close its stdout) before answering anything since it was last
    /// handed to a check? Then that check met a server something earlier broke.
    pub fn found_dead(&self) -> bool {
        self.gone() && self.replies_this_lease == 0
    }

    /// A fresh integer id.
    pub fn id(&mut self) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    pub async fn send(&mut self, v: &Value) -> Result<(), ProbeError> {
        if self.first_method.is_none() {
            self.first_method = Some(
                v.get("method")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned(),
            );
        }
        self.requests.sent(v);
        match self.conn.send_json(v).await {
            Ok(()) => Ok(()),
            Err(e) => Err(self.write_failed(&e).await),
        }
    }

    pub async fn send_raw(&mut self, bytes: &[u8]) -> Result<(), ProbeError> {
        self.first_method.get_or_insert_with(String::new);
        self.requests.sent_bytes(bytes);
        match self.conn.send_raw(bytes).await {
            Ok(()) => Ok(()),
            Err(e) => Err(self.write_failed(&e).await),
        }
    }

    /// Why a write failed: usually because the server is gone, so say how it ended.
    async fn write_failed(&self, e: &std::io::Error) -> ProbeError {
        ProbeError::WriteFailed {
            reason: e.to_string(),
            exit: self.exit_soon().await,
        }
    }

    /// One frame holding `body` in the connection's framing.
    pub fn frame(&self, body: &[u8]) -> Vec<u8> {
        self.conn.frame(body)
    }

    /// The next thing on stdout, bounded by `limit`.
    pub async fn next(&mut self, limit: Duration) -> Got {
        match self.conn.recv(limit).await {
            None => Got::Timeout,
            Some(RawEvent::Eof) | Some(RawEvent::ReadError(_)) => {
                self.closed = true;
                Got::Eof
            }
            Some(RawEvent::Invalid(FrameError::NotAMessage(text)))
                if self.framing == Framing::ContentLength
                    && mismatch::is_json_line_report(&text) =>
            {
                self.other_framing(text)
            }
            Some(RawEvent::Invalid(e)) => self.garbage(e.to_string()),
            Some(RawEvent::Frame(bytes)) => {
                let parsed = serde_json::from_slice::<Value>(&bytes);
                if let Ok(v) = &parsed {
                    if v.is_object() || v.is_array() {
                        self.spread.reset();
                        return self.json(parsed.unwrap_or_default());
                    }
                }
                if self.framing == Framing::Ndjson && mismatch::is_content_length_line(&bytes) {
                    return self.other_framing(String::from_utf8_lossy(&bytes).into_owned());
                }
                let text = || String::from_utf8_lossy(&bytes[..bytes.len().min(120)]).into_owned();
                if let Some((value, lines)) = self.spread.push(&bytes) {
                    self.garbage(format!("a line that is not JSON by itself: {}", text()));
                    return self.spread_value(value, lines);
                }
                match parsed {
                    Ok(scalar) => self.json(scalar),
                    Err(e) => self.garbage(format!("not JSON ({e}): {}", text())),
                }
            }
        }
    }

    fn json(&mut self, v: Value) -> Got {
        self.received_total += 1;
        if self.received.len() < KEPT {
            self.received.push(v.clone());
        }
        self.requests.received(&v);
        if is_response(&v) {
            self.replies_this_lease += 1;
        }
        if !self.answered && is_response(&v) {
            self.answered = true;
            self.starts
                .answered(self.start_index, self.spawned.elapsed());
        }
        Got::Json(v)
    }

    fn garbage(&mut self, text: String) -> Got {
        self.garbage_total += 1;
        if self.garbage.len() < KEPT {
            self.garbage.push(text.clone());
        }
        Got::Garbage(text)
    }

    fn other_framing(&mut self, seen: String) -> Got {
        self.garbage(format!("in the other framing: {seen}"));
        let text = match self.framing {
            Framing::ContentLength => format!(
                "the server writes newline-delimited JSON, not Content-Length frames: it does not \
                 speak --framing content-length (newline-delimited JSON is the spec's stdio \
                 framing: run without --framing content-length); seen: {seen}"
            ),
            Framing::Ndjson => format!(
                "the server writes Content-Length frames, not newline-delimited JSON (the spec's \
                 stdio framing); to test the rest, run with --framing content-length; seen: \
                 {seen:?}"
            ),
        };
        self.find(Kind::OtherFraming, text.clone());
        Got::OtherFraming(text)
    }

    fn spread_value(&mut self, value: Value, lines: usize) -> Got {
        self.received_total += 1;
        self.find_with(
            (lines + FINDING_FRAMES).min(FINDING_FRAMES_MAX),
            Kind::SpreadOverLines,
            format!(
                "one JSON message spread over {lines} lines: {}",
                short(&value)
            ),
        );
        Got::Spread(value, lines)
    }

    /// A wait ended on a reply that cannot be read: the check is blocked by its owner.
    fn block(&mut self, kind: Kind, why: String) -> ProbeError {
        self.blocked.get_or_insert(kind);
        self.trace.block(kind, why.clone());
        ProbeError::Blocked { kind, why }
    }

    /// Records a finding with the frames that show it.
    fn find(&self, kind: Kind, actual: String) {
        self.find_with(FINDING_FRAMES, kind, actual);
    }

    /// Records a finding with the last `frames` transcript entries of the process.
    fn find_with(&self, frames: usize, kind: Kind, actual: String) {
        let keep_last = frames;
        let mut frames = self.conn.transcript_since(self.mark);
        let keep = frames.len().saturating_sub(keep_last);
        frames.drain(..keep);
        self.findings.record(Finding {
            kind,
            seen_in: self.trace.check.to_string(),
            actual,
            frames,
            count: 1,
        });
    }

    /// The next thing on stdout, or `Timeout` once `deadline` has passed. Unlike a loop over
    /// [`Probe::next`] with the time left, this ends at the deadline even while the server
    /// keeps writing (a zero limit still returns whatever is already there).
    pub async fn next_until(&mut self, deadline: tokio::time::Instant) -> Got {
        let now = tokio::time::Instant::now();
        if now >= deadline {
            return match self.conn.recv(Duration::ZERO).await {
                None => Got::Timeout,
                Some(_) => self.next(Duration::ZERO).await,
            };
        }
        self.next(deadline - now).await
    }

    /// What came instead of a reply since `garbage_before` non-frames had been seen, if
    /// anything: for a message that says why no reply was found.
    pub(crate) fn garbage_note(&self, garbage_before: usize) -> String {
        let n = self.garbage_total - garbage_before;
        if n == 0 {
            return String::new();
        }
        let first = self
            .garbage
            .get(garbage_before)
            .or(self.garbage.last())
            .map(String::as_str)
            .unwrap_or("");
        format!(
            "; meanwhile {n} thing{} read from stdout {} not a JSON frame (garbage), the first: \
             {first}",
            if n == 1 { "" } else { "s" },
            if n == 1 { "was" } else { "were" },
        )
    }

    /// Replies to other ids that arrived during a wait that found none to its own: a server
    /// that rewrites ids shows here.
    fn other_replies_note(&self, stashed_before: usize) -> String {
        let ids: Vec<String> = self.stash[stashed_before.min(self.stash.len())..]
            .iter()
            .filter_map(|r| r.get("id"))
            .take(5)
            .map(Value::to_string)
            .collect();
        if ids.is_empty() {
            return String::new();
        }
        format!("; meanwhile replies to other ids came: {}", ids.join(", "))
    }

    /// A stashed response to `id`, exact or (recorded as a finding) equal by value only.
    fn take_stashed(&mut self, id: &Value) -> Option<Value> {
        if let Some(i) = self.stash.iter().position(|r| r.get("id") == Some(id)) {
            return Some(self.stash.remove(i));
        }
        let i = self.stash.iter().position(|r| {
            r.get("id")
                .is_some_and(|got| mismatch::loosely_equal(got, id))
        })?;
        let reply = self.stash.remove(i);
        self.id_form(id, &reply);
        Some(reply)
    }

    fn id_form(&self, id: &Value, reply: &Value) {
        let got = reply.get("id").cloned().unwrap_or_default();
        self.find(
            Kind::IdForm,
            format!("the request had id {id}, its reply id {got} (matched by value to go on)"),
        );
    }
}
