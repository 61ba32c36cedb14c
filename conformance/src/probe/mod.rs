//! One server process under test, with the small vocabulary checks are written in: send, wait
//! for the response to an id, prove that nothing answered with a barrier, shut down.
//!
//! A [`Probe`] is made of parts with one job each: the connection ([`Conn`]: bytes in and out),
//! what came back ([`inbox`]), which reply answers which request ([`replies`]), and the
//! evidence the process leaves for the check that holds it ([`witness`]). Checks ask it for
//! things through methods; they never reach into those parts.
//!
//! Every wait is bounded: a process's first reply by the start budget (`--start-timeout`),
//! every later one by `--timeout`. What arrives but cannot be matched to a request is
//! classified ([`crate::mismatch`]) and ends the wait at once instead of at its deadline.

use std::process::ExitStatus;
use std::time::{Duration, Instant};

use mcp_protocol::mcp::ProtocolVersion;
use serde_json::Value;

use crate::evidence::Trace;
use crate::mismatch::{Findings, Kind};
use crate::pattern::short;
use crate::transcript::Direction;
pub use crate::transport::is_response;
use crate::transport::Conn;

mod answers;
mod error;
mod exit;
mod inbox;
mod messages;
mod replies;
mod spawner;
mod starts;
mod tool_call;
mod vocab;
mod wait;
mod watch;
mod witness;

pub use error::ProbeError;
pub use exit::describe_exit;
pub use inbox::Inbox;
pub use messages::{discover_request, initialize_params, initialize_request, modern_meta};
pub use spawner::Spawner;
pub use starts::StartLog;
pub use wait::Quiet;
pub use watch::{Tally, Watch};

use replies::Replies;
use watch::{Seen, Watcher};
use witness::{Witness, FINDING_FRAMES, FINDING_FRAMES_MAX};

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

/// A spawned server with helpers for checks.
#[derive(Debug)]
pub struct Probe {
    conn: Conn,
    inbox: Inbox,
    replies: Replies,
    witness: Witness,
    /// Judges every message the server sends, and answers its requests.
    watcher: Watcher,
    conversation: Conversation,
    waits: Waits,
    /// A deadline that has passed, and how many of the events that were already there when
    /// it did are left to read (see [`Probe::next_until`]).
    overdue: Option<(tokio::time::Instant, usize)>,
}

/// What every process of a target shares with the others: where findings, start times and
/// what the watch saw go, and the client capabilities the harness declares.
#[derive(Debug, Clone)]
pub(crate) struct Run {
    pub findings: Findings,
    pub starts: StartLog,
    pub watch: Watch,
    pub client: Vec<crate::config::ClientCapability>,
    /// Whether a `tools/call` may be sent at all (`--no-tool-calls` says no).
    pub tool_calls: bool,
}

/// The bounds of a process's waits.
#[derive(Debug, Clone, Copy)]
pub struct Waits {
    /// Each wait once the process has answered something (`--timeout`).
    pub wait: Duration,
    /// The process's first reply (the start budget).
    pub start_wait: Duration,
}

/// What the harness has established with the server in this process.
#[derive(Debug, Default)]
struct Conversation {
    /// `--no-tool-calls`: not even a call of a tool no server has is sent.
    no_tool_calls: bool,
    /// Added as `params._meta` to every request [`Probe::request`] sends (a modern session);
    /// `None` for legacy sessions.
    meta: Option<Value>,
    /// `initialize` was answered but `notifications/initialized` is not sent yet: the first
    /// check that leases the shared legacy session sends it, so it is in that check's frames.
    pending_initialized: bool,
    /// The server owes a reply to every request from now on: the handshake is complete
    /// (`notifications/initialized` sent) or the session is modern.
    operational: bool,
    /// Notifications sent in all.
    notifications_sent: usize,
    /// A `tools/call` is awaited: its wait running out is no stall (see [`Probe::call_tool`]).
    tool_call: bool,
}

impl Drop for Probe {
    fn drop(&mut self) {
        self.flush_evidence();
    }
}

impl Probe {
    /// A probe of a fresh connection; its evidence goes to `trace` under `label`.
    pub(crate) fn new(conn: Conn, waits: Waits, trace: Trace, label: String, run: Run) -> Probe {
        let spawned = Instant::now() - conn.elapsed();
        let framing = conn.framing();
        Probe {
            inbox: Inbox::new(framing),
            replies: Replies::new(framing),
            witness: Witness::new(trace, label, spawned, run.findings, run.starts),
            watcher: Watcher::new(run.watch, run.client),
            conversation: Conversation {
                no_tool_calls: !run.tool_calls,
                ..Conversation::default()
            },
            waits,
            overdue: None,
            conn,
        }
    }

    /// Hands what the process did since the last hand-over to the current trace.
    pub(crate) fn flush_evidence(&mut self) {
        self.witness.flush(&self.conn);
    }

    /// From now on the process's evidence goes to `trace` (a shared session's next check);
    /// what it did so far goes to the current one.
    pub(crate) fn rebind(&mut self, trace: &Trace, label: &str) {
        self.witness.rebind(&self.conn, trace, label);
        self.replies.new_lease();
    }

    /// The bound of each wait once the process has answered something.
    pub fn wait(&self) -> Duration {
        self.waits.wait
    }

    /// The bound of the wait for the process's first reply.
    pub fn start_wait(&self) -> Duration {
        self.waits.start_wait
    }

    /// Has the process answered anything yet?
    pub fn answered(&self) -> bool {
        self.replies.answered()
    }

    /// Sets the request sent once if the process answers nothing within `--timeout` (see
    /// [`Probe::response`]): `initialize` or `server/discover`, its id set when it is sent.
    pub fn set_barrier(&mut self, barrier: Value) {
        self.replies.set_barrier(barrier);
    }

    /// Was the barrier sent (so the process got more than its first request)?
    pub fn barrier_sent(&self) -> bool {
        self.replies.barrier_sent()
    }

    /// Did a wait of this lease run out (the process stopped answering)?
    pub fn timed_out(&self) -> bool {
        self.replies.timed_out()
    }

    /// The root cause a wait of this process was ended by, if one was.
    pub fn blocked(&self) -> Option<Kind> {
        self.witness.blocked()
    }

    /// From now on every request carries 2026-07-28 `_meta` ([`modern_meta`]).
    pub fn go_modern(&mut self) {
        self.conversation.meta = Some(modern_meta(ProtocolVersion::LATEST.as_str()));
        self.conversation.operational = true;
    }

    /// Is this a modern (2026-07-28) session?
    pub fn is_modern(&self) -> bool {
        self.conversation.meta.is_some()
    }

    /// `initialize` was answered; `notifications/initialized` is left to the first check that
    /// leases the process.
    pub(crate) fn defer_initialized(&mut self) {
        self.conversation.pending_initialized = true;
    }

    /// Is `notifications/initialized` still to be sent? (Asking takes the duty.)
    pub(crate) fn take_pending_initialized(&mut self) -> bool {
        std::mem::take(&mut self.conversation.pending_initialized)
    }

    /// Notifications sent in all.
    pub fn notifications_sent(&self) -> usize {
        self.conversation.notifications_sent
    }

    /// What the process wrote (frames, and what was not one), read-only.
    pub fn inbox(&self) -> &Inbox {
        &self.inbox
    }

    /// Did the process end (or close its stdout) before answering anything since it was last
    /// handed to a check? Then that check met a server something earlier broke.
    pub fn found_dead(&self) -> bool {
        self.gone() && !self.replies.answered_this_lease()
    }

    /// Has the process ended, or closed its stdout?
    pub fn gone(&self) -> bool {
        self.inbox.closed() || self.conn.exit_status().is_some()
    }

    /// A fresh integer id.
    pub fn id(&mut self) -> i64 {
        self.replies.id()
    }

    pub async fn send(&mut self, v: &Value) -> Result<(), ProbeError> {
        let changed = self.watcher.outgoing(v);
        let v = changed.as_ref().unwrap_or(v);
        self.replies.sent(v);
        match self.conn.send_json(v).await {
            Ok(()) => Ok(()),
            Err(e) => Err(self.write_failed(&e).await),
        }
    }

    pub async fn send_raw(&mut self, bytes: &[u8]) -> Result<(), ProbeError> {
        self.watcher.sent_raw(bytes);
        self.replies.sent_bytes(bytes);
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

    /// At the end of a check, over HTTP: lets the replies to its POSTs still in flight arrive
    /// (within the wait) and reads them, so they are its evidence and not taken for the next
    /// check's. Over stdio the barrier after a check does this (replies come in order).
    pub(crate) async fn settle(&mut self) {
        if !self.conn.settle(self.waits.wait).await {
            return;
        }
        for _ in 0..self.conn.buffered() {
            if matches!(self.next(Duration::ZERO).await, Got::Timeout | Got::Eof) {
                break;
            }
        }
    }

    /// The next thing on stdout, bounded by `limit`.
    pub async fn next(&mut self, limit: Duration) -> Got {
        let event = self.conn.recv(limit).await;
        let got = self.inbox.read(event);
        if let Got::Json(v) | Got::Spread(v, _) = &got {
            self.watch(v).await;
        }
        match &got {
            Got::Json(v) => {
                if self.replies.received(v) {
                    self.witness.answered();
                }
            }
            Got::OtherFraming(text) => self.find(FINDING_FRAMES, Kind::OtherFraming, text.clone()),
            Got::Spread(value, lines) => self.find(
                (lines + FINDING_FRAMES).min(FINDING_FRAMES_MAX),
                Kind::SpreadOverLines,
                format!(
                    "one JSON message spread over {lines} lines: {}",
                    short(value)
                ),
            ),
            Got::Garbage(_) | Got::Eof | Got::Timeout => {}
        }
        got
    }

    /// Shows the watch a message from the server: its findings are recorded, and a request
    /// of the server's is answered (a write that fails is the next wait's to find).
    async fn watch(&mut self, v: &Value) {
        let seen = Seen {
            modern: self.is_modern(),
            ordered: matches!(self.conn, Conn::Stdio(_)),
        };
        let judged = self.watcher.incoming(v, seen);
        for (kind, actual) in judged.findings {
            self.witness
                .find_read(&self.conn, FINDING_FRAMES, kind, actual);
        }
        for reply in judged.replies {
            let _ = self.send(&reply).await;
        }
    }

    /// The next thing on stdout, or `Timeout` once `deadline` has passed. Unlike a loop over
    /// [`Probe::next`] with the time left, this ends at the deadline even while the server
    /// keeps writing: past it, only what was already there when it passed is returned.
    pub async fn next_until(&mut self, deadline: tokio::time::Instant) -> Got {
        let now = tokio::time::Instant::now();
        if now < deadline {
            self.overdue = None;
            return self.next(deadline - now).await;
        }
        let left = match self.overdue {
            Some((passed, left)) if passed == deadline => left,
            _ => self.conn.buffered(),
        };
        self.overdue = Some((deadline, left.saturating_sub(1)));
        if left == 0 {
            return Got::Timeout;
        }
        self.next(Duration::ZERO).await
    }

    /// What is already there, read without waiting: at most as many things as were buffered
    /// when asked (a server that keeps writing cannot hold the reader).
    async fn buffered(&mut self) -> Vec<Got> {
        let mut got = Vec::new();
        for _ in 0..self.conn.buffered() {
            match self.next(Duration::ZERO).await {
                Got::Timeout => break,
                other => got.push(other),
            }
        }
        got
    }

    /// Records a finding with the last `frames` transcript entries of the process.
    fn find(&self, frames: usize, kind: Kind, actual: String) {
        self.witness.find(&self.conn, frames, kind, actual);
    }

    /// A wait ended on a reply that cannot be read: the check is blocked by its owner.
    fn block(&mut self, kind: Kind, why: String) -> ProbeError {
        self.witness.block(kind, why)
    }

    /// A wait for a reply the server owed ran out: this lease timed out, and if the server had
    /// answered and owes replies (the handshake is done), it stopped answering or lost it.
    fn ran_out(&mut self, error: &ProbeError) {
        self.record_timeout(error.to_string());
    }

    /// For a check that waits on its own (with [`Probe::next_until`]): what it waited for did
    /// not all come in time (`why`). As a wait of the probe's own that runs out.
    pub fn record_timeout(&mut self, why: String) {
        self.replies.set_timed_out();
        if self.replies.answered() && self.conversation.operational && !self.conversation.tool_call
        {
            self.witness.stalled(why);
        }
    }

    /// The stdout lines the process wrote first (at most `n`), as received.
    pub fn first_lines(&self, n: usize) -> Vec<String> {
        self.conn
            .transcript()
            .iter()
            .filter(|e| e.direction == Direction::Receive)
            .take(n)
            .map(|e| e.text.clone())
            .collect()
    }

    pub fn close_stdin(&mut self) {
        self.conn.close_stdin();
    }

    pub fn terminate(&self) {
        self.conn.terminate();
    }

    pub async fn wait_exit(&self, limit: Duration) -> Option<ExitStatus> {
        self.conn.wait_exit(limit).await
    }

    /// How the process ended, if it has.
    pub fn exit_status(&self) -> Option<ExitStatus> {
        self.conn.exit_status()
    }

    /// How the server ended, if it did within a moment.
    pub async fn exit_soon(&self) -> Option<ExitStatus> {
        self.conn.wait_exit(Duration::from_millis(300)).await
    }

    /// The last lines of the process's stderr, waiting a moment for them to arrive.
    pub async fn stderr_tail(&self, n: usize) -> Vec<String> {
        let lines = self.conn.stderr(Duration::from_millis(300)).await;
        lines[lines.len().saturating_sub(n)..].to_vec()
    }

    /// (bytes, lines) the server wrote to stderr, once stderr has ended (waiting a moment).
    pub async fn stderr_volume(&self) -> (u64, u64) {
        let _ = self.conn.stderr(Duration::from_millis(300)).await;
        self.conn.stderr_volume()
    }
}
