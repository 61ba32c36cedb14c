//! One server process under test, with the small vocabulary checks are written in: send, wait
//! for the response to an id, prove that nothing answered with a barrier, shut down.
//!
//! Every wait is bounded: a process's first reply by the start budget (`--start-timeout`),
//! every later one by `--timeout`. What arrives but cannot be matched to a request is
//! classified ([`crate::mismatch`]) and ends the wait at once instead of at its deadline.

use std::process::ExitStatus;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use mcp_client::{RawConnection, RawEvent};
use mcp_protocol::mcp::modern;
use mcp_protocol::{FrameError, Framing};
use serde_json::{json, Value};

use crate::check::Starts;
use crate::config::RunConfig;
use crate::evidence::Trace;
use crate::mismatch::{self, Finding, Findings, Kind, Spread};
use crate::pattern::short;
use crate::requests::Requests;
use crate::target::Target;

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

/// How long each start of the target took to answer, shared by its probes.
#[derive(Debug, Clone, Default)]
pub struct StartLog(Arc<Mutex<Vec<Option<Duration>>>>);

impl StartLog {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Option<Duration>>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn register(&self) -> usize {
        let mut starts = self.lock();
        starts.push(None);
        starts.len() - 1
    }

    fn answered(&self, index: usize, after: Duration) {
        if let Some(slot) = self.lock().get_mut(index) {
            slot.get_or_insert(after);
        }
    }

    /// How long the quickest earlier start took to answer, if one did.
    fn any_answered(&self) -> Option<Duration> {
        self.lock().iter().flatten().min().copied()
    }

    pub fn snapshot(&self) -> Starts {
        let starts = self.lock();
        Starts {
            count: starts.len(),
            answered: starts.iter().flatten().copied().collect(),
        }
    }
}

/// What every probe of one target shares: how to start the server, the waits, and where
/// findings and start times go.
#[derive(Debug, Clone)]
pub struct Spawner {
    pub target: Arc<Target>,
    pub config: Arc<RunConfig>,
    pub findings: Findings,
    pub starts: StartLog,
}

impl Spawner {
    pub fn new(target: Arc<Target>, config: Arc<RunConfig>) -> Spawner {
        Spawner {
            target,
            config,
            findings: Findings::default(),
            starts: StartLog::default(),
        }
    }

    /// A fresh server process whose evidence goes to `trace`; `label` says what it is for.
    /// Refused once a start has been seen to answer nothing (there is no point waiting out the
    /// start budget again): the check is then blocked by that finding.
    pub fn spawn(&self, trace: &Trace, label: impl Into<String>) -> Result<Probe, String> {
        if self.findings.has(Kind::SilentStart) {
            let why = "not started: an earlier start of this server answered nothing within the \
                       start budget, so checks that need a process of their own cannot be judged"
                .to_owned();
            trace.block(Kind::SilentStart, why.clone());
            return Err(why);
        }
        let conn = RawConnection::spawn(
            &self.target.command(),
            self.config.framing,
            self.config.max_message_bytes,
        )
        .map_err(|e| format!("could not start {}: {e}", self.target.display()))?;
        let spawned = Instant::now() - conn.elapsed();
        Ok(Probe {
            conn,
            spawned,
            label: label.into(),
            framing: self.config.framing,
            next_id: 1,
            wait: self.config.wait,
            start_wait: self.config.first_reply_wait(),
            barrier: None,
            barrier_id: None,
            first_method: None,
            answered: false,
            notifications: 0,
            notifications_sent: 0,
            disambiguation: None,
            ignored: Vec::new(),
            timed_out: false,
            closed: false,
            replies_this_lease: 0,
            blocked: None,
            pending_initialized: false,
            stash: Vec::new(),
            garbage: Vec::new(),
            garbage_total: 0,
            received: Vec::new(),
            received_total: 0,
            meta: None,
            spread: Spread::default(),
            requests: Requests::new(self.config.framing),
            trace: trace.clone(),
            mark: 0,
            stderr_mark: 0,
            findings: self.findings.clone(),
            starts: self.starts.clone(),
            start_index: self.starts.register(),
        })
    }
}

/// A spawned server with helpers for checks.
#[derive(Debug)]
pub struct Probe {
    conn: RawConnection,
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
    pub fn conn(&self) -> &RawConnection {
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

    pub async fn send(&mut self, v: &Value) -> Result<(), String> {
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

    pub async fn send_raw(&mut self, bytes: &[u8]) -> Result<(), String> {
        self.first_method.get_or_insert_with(String::new);
        self.requests.sent_bytes(bytes);
        match self.conn.send_raw(bytes).await {
            Ok(()) => Ok(()),
            Err(e) => Err(self.write_failed(&e).await),
        }
    }

    /// Why a write failed: usually because the server is gone, so say how it ended.
    async fn write_failed(&self, e: &std::io::Error) -> String {
        format!(
            "writing to the server's stdin failed: {e}{}",
            self.exit_note().await
        )
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
    fn block(&mut self, kind: Kind, why: String) {
        self.blocked.get_or_insert(kind);
        self.trace.block(kind, why);
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

    /// Waits for the response whose `id` equals `id`. Responses to other ids are kept for
    /// later; notifications and server requests are passed over. The first reply of a process
    /// may take the start budget, every later one `wait`; with a [`Probe::barrier`], a process
    /// that answered nothing within `wait` is sent the barrier, whose reply ends the wait.
    pub async fn response(&mut self, id: &Value) -> Result<Value, String> {
        if let Some(reply) = self.take_stashed(id) {
            return Ok(reply);
        }
        if let Some(why) = self.changed_ids(id) {
            return Err(why);
        }
        let started = tokio::time::Instant::now();
        let first = !self.answered;
        let mut limit = match (first, &self.barrier) {
            (true, Some(_)) => self.wait,
            (true, None) => self.start_wait,
            (false, _) => self.wait,
        };
        let garbage_before = self.garbage_total;
        let stashed_before = self.stash.len();
        loop {
            match self.next_until(started + limit).await {
                Got::Json(v) if is_response(&v) => {
                    if let Some(done) = self.on_response(id, v).await {
                        return done;
                    }
                    if let Some(why) = self.changed_ids(id) {
                        return Err(why);
                    }
                }
                Got::Spread(v, lines) => {
                    let ours = v
                        .get("id")
                        .is_some_and(|got| got == id || mismatch::loosely_equal(got, id));
                    if ours {
                        let why = format!(
                            "the reply to id {id} came spread over {lines} lines, not as one \
                             line: {}",
                            short(&v)
                        );
                        self.block(Kind::SpreadOverLines, why.clone());
                        return Err(why);
                    }
                }
                Got::OtherFraming(text) => {
                    self.block(Kind::OtherFraming, text.clone());
                    return Err(text);
                }
                Got::Json(_) | Got::Garbage(_) => {}
                Got::Eof => {
                    return Err(format!(
                        "the server closed its stdout before answering id {id}{}{}",
                        self.exit_note().await,
                        self.garbage_note(garbage_before)
                    ))
                }
                Got::Timeout => {
                    if let (true, Some(barrier), None) =
                        (first, self.barrier.clone(), &self.barrier_id)
                    {
                        // Nothing yet: ask for something the server must answer, and wait
                        // the start budget for either.
                        let mut barrier = barrier;
                        let bid = json!(self.id());
                        barrier["id"] = bid.clone();
                        self.barrier_id = Some(bid);
                        self.send(&barrier).await?;
                        limit = self.start_wait;
                        continue;
                    }
                    self.timed_out = true;
                    let others = self.other_replies_note(stashed_before);
                    let budget = if self.answered {
                        String::new()
                    } else {
                        self.silent_start(id, limit);
                        " (the start budget, --start-timeout: the process had answered nothing)"
                            .to_owned()
                    };
                    return Err(format!(
                        "no response to id {id} within {limit:?}{budget}{others}{}",
                        self.garbage_note(garbage_before)
                    ));
                }
            }
        }
    }

    /// A response that came while waiting for `id`: ends the wait (`Some`) if it is the one,
    /// equal by value (recorded), the barrier's, or a reply without an id that must be ours;
    /// else it is kept for later.
    async fn on_response(&mut self, id: &Value, v: Value) -> Option<Result<Value, String>> {
        let got = v.get("id");
        if got == Some(id) || got.is_some_and(|g| mismatch::loosely_equal(g, id)) {
            if got != Some(id) {
                self.id_form(id, &v);
            }
            self.disambiguation = None;
            return Some(Ok(v));
        }
        if self.barrier_id.is_some() && got == self.barrier_id.as_ref() {
            return Some(self.after_barrier(id).await);
        }
        let checking = self.disambiguation.is_some();
        if checking && got == self.disambiguation.as_ref() {
            // The ping sent after an ambiguous reply came back first: that reply was ours,
            // without its id.
            self.disambiguation = None;
            let seen = self.stash.last().map(short).unwrap_or_default();
            return Some(Err(self.no_id(
                id,
                &format!("{seen} (a ping sent after it was answered before any other)"),
            )));
        }
        if mismatch::reply_without_id(&v) {
            if self.notifications == 0 || checking {
                return Some(Err(self.no_id(id, &short(&v))));
            }
            // It may answer a notification sent before (wrongly), or be ours without its id: a
            // ping sent now tells which, by which reply comes next.
            self.notifications -= 1;
            let ping = json!(self.id());
            let mut msg = json!({"jsonrpc": "2.0", "id": ping, "method": "ping"});
            if let Some(meta) = &self.meta {
                msg["method"] = json!(modern::DISCOVER);
                msg["params"] = json!({"_meta": meta});
            }
            self.ignored.push(ping.clone());
            self.disambiguation = Some(ping);
            if let Err(e) = self.send(&msg).await {
                return Some(Err(e));
            }
        }
        let ignored = got.is_some_and(|g| self.ignored.contains(g));
        if self.stash.len() < KEPT && !ignored {
            self.stash.push(v);
        }
        None
    }

    /// A reply without an id where ours was due: a finding, and the wait is blocked by it.
    fn no_id(&mut self, id: &Value, seen: &str) -> String {
        let why = format!("waiting for the reply to id {id}, a reply without an id came: {seen}");
        self.find(Kind::NoId, why.clone());
        self.block(Kind::NoId, why.clone());
        why
    }

    /// Every request still waiting, `id` among them, got a reply under an id no request had:
    /// the server changed the ids, so the reply to `id` will not come under it. A finding, and
    /// the wait is blocked by it.
    pub fn changed_ids(&mut self, id: &Value) -> Option<String> {
        let ids = self.requests.answered_under_unknown_ids(id)?;
        let ids: Vec<String> = ids.iter().map(Value::to_string).collect();
        let why = format!(
            "waiting for the reply to id {id}, replies came under ids no request had: {}",
            ids.join(", ")
        );
        self.find(Kind::UnknownId, why.clone());
        self.block(Kind::UnknownId, why.clone());
        Some(why)
    }

    /// The barrier was answered before `id`: take what is already buffered, then conclude.
    async fn after_barrier(&mut self, id: &Value) -> Result<Value, String> {
        while let Got::Json(v) = self.next(Duration::ZERO).await {
            if v.get("id") == Some(id) {
                return Ok(v);
            }
        }
        let method = self
            .barrier
            .as_ref()
            .and_then(|b| b.get("method"))
            .and_then(Value::as_str)
            .unwrap_or("request");
        Err(format!(
            "no response to id {id}: nothing came within {:?}, then {method}, sent after it, \
             was answered first",
            self.wait
        ))
    }

    /// A process whose first request was a start-up one answered nothing within the start
    /// budget, though an earlier start of the same server answered: a finding.
    fn silent_start(&mut self, id: &Value, limit: Duration) {
        let startup = matches!(
            self.first_method.as_deref(),
            Some("initialize") | Some(modern::DISCOVER)
        );
        let Some(earlier) = self.starts.any_answered() else {
            return;
        };
        if !startup || self.conn.exit_status().is_some() {
            return;
        }
        let why = format!(
            "a process started for {} answered nothing (id {id}) within {limit:?} \
             (--start-timeout), though an earlier start of the same command answered in {:.2}s",
            self.trace.check,
            earlier.as_secs_f64()
        );
        self.find(Kind::SilentStart, why.clone());
        self.block(Kind::SilentStart, why);
    }

    /// The next response (requests and notifications from the server are passed over), or
    /// `None` if none came within `window`.
    pub async fn next_response(&mut self, window: Duration) -> Result<Option<Value>, String> {
        let deadline = tokio::time::Instant::now() + window;
        loop {
            match self.next_until(deadline).await {
                Got::Json(v) if is_response(&v) => return Ok(Some(v)),
                Got::Json(_) => {}
                Got::Spread(v, lines) => {
                    let why = format!("a reply spread over {lines} lines, not one: {}", short(&v));
                    self.block(Kind::SpreadOverLines, why.clone());
                    return Err(why);
                }
                Got::OtherFraming(text) => {
                    self.block(Kind::OtherFraming, text.clone());
                    return Err(text);
                }
                Got::Garbage(g) => return Err(format!("bytes that are not a frame: {g}")),
                Got::Eof => {
                    return Err(format!(
                        "the server closed its stdout{}",
                        self.exit_note().await
                    ))
                }
                Got::Timeout => return Ok(None),
            }
        }
    }

    /// Proves that nothing answers what was just sent: sends a barrier request (`ping`; in a
    /// modern session `server/discover`) and returns the responses and non-frames that came
    /// before its reply. A server answers in order, so anything meant for earlier messages
    /// comes first; no fixed window is waited out.
    pub async fn until_barrier(&mut self) -> Result<Quiet, String> {
        let mut quiet = Quiet {
            responses: std::mem::take(&mut self.stash),
            garbage: Vec::new(),
        };
        let method = if self.meta.is_some() {
            modern::DISCOVER
        } else {
            "ping"
        };
        let id = json!(self.id());
        let mut msg = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if let Some(meta) = &self.meta {
            msg["params"] = json!({"_meta": meta});
        }
        self.send(&msg).await?;
        let deadline = tokio::time::Instant::now()
            + if self.answered {
                self.wait
            } else {
                self.start_wait
            };
        let is_barrier = |v: &Value| {
            v.get("id")
                .is_some_and(|got| *got == id || mismatch::loosely_equal(got, &id))
        };
        loop {
            match self.next_until(deadline).await {
                Got::Json(v) if is_response(&v) && is_barrier(&v) => {
                    if v.get("id") != Some(&id) {
                        self.id_form(&id, &v);
                    }
                    break;
                }
                Got::Json(v) if is_response(&v) || v.is_array() => {
                    if !self.is_ignored(&v) {
                        quiet.responses.push(v);
                    }
                }
                Got::Json(_) => {}
                Got::Garbage(g) => quiet.garbage.push(g),
                Got::Spread(v, _) => quiet.responses.push(v),
                Got::OtherFraming(text) => {
                    self.block(Kind::OtherFraming, text.clone());
                    return Err(text);
                }
                Got::Eof => {
                    return Err(format!(
                        "the server closed its stdout before answering the {method} sent as a \
                         barrier{}",
                        self.exit_note().await
                    ))
                }
                Got::Timeout => {
                    self.timed_out = true;
                    return Err(format!(
                        "no response within {:?} to the {method} sent after it as a barrier: \
                         the server stopped answering",
                        self.wait
                    ));
                }
            }
        }
        // Whatever came before the barrier's reply was for what was sent before it.
        self.notifications = 0;
        // Whatever is already buffered behind the barrier's reply counts too.
        loop {
            match self.next(Duration::ZERO).await {
                Got::Json(v) if (is_response(&v) || v.is_array()) && !self.is_ignored(&v) => {
                    quiet.responses.push(v)
                }
                Got::Garbage(g) => quiet.garbage.push(g),
                Got::Json(_) => {}
                _ => break,
            }
        }
        Ok(quiet)
    }

    /// After [`Probe::until_barrier`], for a check that expects replies: a server may answer
    /// requests in any order (JSON-RPC asks for none), so what did not come before the
    /// barrier's reply may still come. Reads responses into `quiet` until `done` says they are
    /// all there, or for `wait` at most.
    pub async fn late_replies(&mut self, quiet: &mut Quiet, done: impl Fn(&[Value]) -> bool) {
        let deadline = tokio::time::Instant::now() + self.wait;
        while !done(&quiet.responses) {
            match self.next_until(deadline).await {
                Got::Json(v) if (is_response(&v) || v.is_array()) && !self.is_ignored(&v) => {
                    quiet.responses.push(v)
                }
                Got::Garbage(g) => quiet.garbage.push(g),
                Got::Json(_) | Got::Spread(..) => {}
                Got::OtherFraming(_) | Got::Eof | Got::Timeout => return,
            }
        }
    }

    /// A reply to a request the harness sent for itself.
    fn is_ignored(&self, reply: &Value) -> bool {
        reply.get("id").is_some_and(|id| self.ignored.contains(id))
    }

    /// A short session of ordinary and failing requests (answers are the caller's to judge
    /// through [`Probe::received`]).
    pub async fn exercise(&mut self) {
        if self.meta.is_none() {
            let _ = self.request("ping", None).await;
        }
        let _ = self.request("tools/list", None).await;
        let _ = self.request("no/such/method", None).await;
        let _ = self
            .request(
                "tools/call",
                Some(json!({"name": "mcp-conformance-no-such-tool", "arguments": {}})),
            )
            .await;
    }

    /// Sends a request with a fresh id and returns its whole response object. In a modern
    /// session the request carries [`Probe::meta`] as `params._meta` (unless it has its own).
    pub async fn request(&mut self, method: &str, params: Option<Value>) -> Result<Value, String> {
        let params = match &self.meta {
            Some(meta) => Some(with_meta(params, meta)),
            None => params,
        };
        self.send_request(method, params).await
    }

    /// A 2026-07-28 request: `params._meta` carries the version, empty client capabilities and
    /// the harness's identity ([`modern_meta`]), whatever kind of session this is.
    pub async fn modern_request(
        &mut self,
        method: &str,
        params: Option<Value>,
    ) -> Result<Value, String> {
        let params = with_meta(params, &modern_meta(modern::VERSION));
        self.send_request(method, Some(params)).await
    }

    /// Sends a request exactly as given (no `_meta` added) and returns its response object.
    pub async fn send_request(
        &mut self,
        method: &str,
        params: Option<Value>,
    ) -> Result<Value, String> {
        let id = json!(self.id());
        let mut msg = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if let Some(p) = params {
            msg["params"] = p;
        }
        self.send(&msg).await?;
        self.response(&id).await
    }

    pub async fn notify(&mut self, method: &str, params: Option<Value>) -> Result<(), String> {
        self.notifications += 1;
        self.notifications_sent += 1;
        let mut msg = json!({"jsonrpc": "2.0", "method": method});
        if let Some(p) = params {
            msg["params"] = p;
        }
        self.send(&msg).await
    }

    /// `initialize` with `version`; returns the response object (result or error).
    pub async fn initialize(&mut self, version: &str) -> Result<Value, String> {
        self.request("initialize", Some(initialize_params(version)))
            .await
    }

    /// `initialize` + `notifications/initialized`; returns the initialize result.
    pub async fn handshake(&mut self, version: &str) -> Result<Value, String> {
        let reply = self.initialize(version).await?;
        match reply.get("result") {
            Some(result) => {
                let result = result.clone();
                self.notify("notifications/initialized", None).await?;
                Ok(result)
            }
            None => Err(format!("initialize failed: {}", short(&reply))),
        }
    }

    /// Expects no response (and nothing that is not a frame) within `window`.
    pub async fn silence(&mut self, window: Duration) -> Result<(), String> {
        if let Some(r) = self.stash.first() {
            return Err(format!("got {}", short(r)));
        }
        let deadline = tokio::time::Instant::now() + window;
        loop {
            match self.next_until(deadline).await {
                Got::Timeout | Got::Eof => return Ok(()),
                Got::Json(v) | Got::Spread(v, _) if is_response(&v) => {
                    return Err(format!("got {}", short(&v)))
                }
                Got::Json(_) | Got::Spread(..) => {}
                Got::Garbage(g) | Got::OtherFraming(g) => {
                    return Err(format!("got bytes that are not a frame: {g}"))
                }
            }
        }
    }

    /// Checks the server still answers: a ping (in a modern session `server/discover`), or
    /// any response to it.
    pub async fn still_serving(&mut self) -> Result<(), String> {
        let method = if self.meta.is_some() {
            modern::DISCOVER
        } else {
            "ping"
        };
        self.request(method, None)
            .await
            .map(drop)
            .map_err(|e| format!("the server stopped serving: {e}"))
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

    /// Has the process ended, or closed its stdout?
    pub fn gone(&self) -> bool {
        self.closed || self.conn.exit_status().is_some()
    }

    /// How the server ended, if it did within a moment: ` (the server was killed by signal 9
    /// (SIGKILL))`, or nothing.
    pub async fn exit_note(&self) -> String {
        match self.conn.wait_exit(Duration::from_millis(300)).await {
            Some(status) => format!(" (the server {})", describe_exit(status)),
            None => String::new(),
        }
    }

    /// The last lines of the process's stderr, waiting a moment for them to arrive.
    pub async fn stderr_tail(&self, n: usize) -> Vec<String> {
        let lines = self.conn.stderr(Duration::from_millis(300)).await;
        lines[lines.len().saturating_sub(n)..].to_vec()
    }
}

/// What came before a barrier's reply.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Quiet {
    /// Responses (to anything but the barrier), including ones that had arrived unclaimed.
    pub responses: Vec<Value>,
    /// Things on stdout that were not JSON frames.
    pub garbage: Vec<String>,
}

impl Quiet {
    /// The responses that came, for a FAIL of a check that expects none; `None` if none came.
    /// (Non-frames are `framing.stdout-only-frames`'s to judge.)
    pub fn describe(&self) -> Option<String> {
        let seen: Vec<String> = self.responses.iter().map(short).collect();
        (!seen.is_empty()).then(|| seen.join("; "))
    }
}

/// `exited with status 1`, `was killed by signal 9 (SIGKILL)`.
pub fn describe_exit(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    if let Some(code) = status.code() {
        return format!("exited with status {code}");
    }
    match status.signal() {
        Some(n) => match nix::sys::signal::Signal::try_from(n) {
            Ok(signal) => format!("was killed by signal {n} ({signal})"),
            Err(_) => format!("was killed by signal {n}"),
        },
        None => format!("ended ({status})"),
    }
}

/// The `_meta` of a modern request (2026-07-28 `schema.ts` RequestMetaObject): `version`, no
/// optional client capabilities, and the harness's identity.
pub fn modern_meta(version: &str) -> Value {
    json!({
        (modern::META_PROTOCOL_VERSION): version,
        (modern::META_CLIENT_CAPABILITIES): {},
        (modern::META_CLIENT_INFO): {"name": "mcp-conformance", "version": env!("CARGO_PKG_VERSION")},
    })
}

/// `params` with `_meta` set to `meta`; a `_meta` already there is kept. Params that are not
/// an object (a check sending something odd on purpose) are left alone.
pub fn with_meta(params: Option<Value>, meta: &Value) -> Value {
    let mut params = params.unwrap_or_else(|| json!({}));
    if let Some(obj) = params.as_object_mut() {
        obj.entry("_meta").or_insert_with(|| meta.clone());
    }
    params
}

/// `initialize` params as a spec-following client sends them.
pub fn initialize_params(version: &str) -> Value {
    json!({
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "mcp-conformance", "version": env!("CARGO_PKG_VERSION")}
    })
}

/// A whole `initialize` request (its id set when it is sent).
pub fn initialize_request(version: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": null, "method": "initialize",
        "params": initialize_params(version)})
}

/// A whole `server/discover` request with 2026-07-28 `_meta` (its id set when it is sent).
pub fn discover_request() -> Value {
    json!({"jsonrpc": "2.0", "id": null, "method": modern::DISCOVER,
        "params": {"_meta": modern_meta(modern::VERSION)}})
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    #[test]
    fn exits_are_described_with_their_signal() {
        assert_eq!(
            describe_exit(ExitStatus::from_raw(9)),
            "was killed by signal 9 (SIGKILL)"
        );
        assert_eq!(
            describe_exit(ExitStatus::from_raw(1 << 8)),
            "exited with status 1"
        );
    }

    #[test]
    fn start_times_are_kept_per_start() {
        let log = StartLog::default();
        let a = log.register();
        let b = log.register();
        assert_eq!(log.any_answered(), None);
        log.answered(b, Duration::from_millis(30));
        log.answered(b, Duration::from_millis(90));
        log.answered(a, Duration::from_millis(50));
        let s = log.snapshot();
        assert_eq!(s.count, 2);
        assert_eq!(
            s.answered,
            [Duration::from_millis(50), Duration::from_millis(30)]
        );
        assert_eq!(log.any_answered(), Some(Duration::from_millis(30)));
    }
}
