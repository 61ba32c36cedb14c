//! The waits checks are written with: for the reply to an id (with what it says when none
//! comes), for a barrier's reply (proving silence), for replies that may come after it, for
//! the next response, and for silence.

use std::time::Duration;

use mcp_protocol::mcp::modern;
use serde_json::{json, Value};

use super::error::{Awaited, ProbeError};
use super::{is_response, Got, Probe, FINDING_FRAMES};
use crate::mismatch::{self, Kind};
use crate::pattern::short;
use crate::transport::{NoResponse, Unanswered};

impl Probe {
    /// Waits for the response whose `id` equals `id`. Responses to other ids are kept for
    /// later; notifications and server requests are passed over. The first reply of a process
    /// may take the start budget, every later one `--timeout`; with a barrier
    /// ([`Probe::set_barrier`]), a process that answered nothing within `--timeout` is sent the
    /// barrier, whose reply ends the wait.
    pub async fn response(&mut self, id: &Value) -> Result<Value, ProbeError> {
        if let Some(reply) = self.take_stashed(id) {
            return Ok(reply);
        }
        if let Some(u) = self.inbox.take_unanswered(id) {
            return Err(self.unanswered(u));
        }
        if let Some(why) = self.changed_ids(id) {
            return Err(why);
        }
        let started = tokio::time::Instant::now();
        let first = !self.replies.answered();
        let mut limit = match (first, self.replies.has_barrier()) {
            (true, false) => self.waits.start_wait,
            _ => self.waits.wait,
        };
        let garbage_before = self.inbox.garbage_total();
        let stashed_before = self.replies.stashed();
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
                        return Err(self.block(Kind::SpreadOverLines, why));
                    }
                }
                Got::OtherFraming(text) => return Err(self.block(Kind::OtherFraming, text)),
                Got::Garbage(_) => {
                    if let Some(u) = self.inbox.take_unanswered(id) {
                        return Err(self.unanswered(u));
                    }
                }
                Got::Json(_) => {}
                Got::Eof => {
                    return Err(ProbeError::Eof {
                        awaited: Awaited::Reply(id.clone()),
                        exit: self.exit_soon().await,
                        notes: self.inbox.garbage_note(garbage_before),
                    })
                }
                Got::Timeout => {
                    if let Some(barrier) = self.replies.arm_barrier().filter(|_| first) {
                        // Nothing yet: ask for something the server must answer, and wait
                        // the start budget for either.
                        self.send(&barrier).await?;
                        limit = self.waits.start_wait;
                        continue;
                    }
                    let start_budget = !self.replies.answered();
                    if start_budget {
                        self.silent_start(id, limit);
                    }
                    let error = ProbeError::Timeout {
                        id: id.clone(),
                        limit,
                        start_budget,
                        notes: self.replies.other_replies_note(stashed_before)
                            + &self.inbox.garbage_note(garbage_before),
                    };
                    self.ran_out(&error);
                    return Err(error);
                }
            }
        }
    }

    /// The HTTP response to the POST of a request ended without its JSON-RPC response: an
    /// HTTP error or a body that is no message fails the wait (said as it came); an array or
    /// an SSE stream without the response is a root cause, and the wait is blocked by it.
    fn unanswered(&mut self, u: Unanswered) -> ProbeError {
        let kind = match u.why {
            NoResponse::HttpError | NoResponse::NotAMessage => {
                return ProbeError::NoJsonRpc {
                    id: u.id,
                    seen: u.seen,
                }
            }
            NoResponse::Array => Kind::ArrayReply,
            NoResponse::SseStream => Kind::SseNoResponse,
        };
        let why = format!("the reply to id {} could not be read: {}", u.id, u.seen);
        self.find(FINDING_FRAMES, kind, why.clone());
        self.block(kind, why)
    }

    /// For a check that reads replies on its own (with [`Probe::next_until`]), after a
    /// non-frame: a request whose HTTP response ended without its JSON-RPC response, as
    /// [`Probe::response`] would have ended on it (a root cause blocks the check).
    pub fn unreadable_reply(&mut self) -> Option<ProbeError> {
        let u = self.inbox.take_any_unanswered()?;
        Some(self.unanswered(u))
    }

    /// A kept response to `id`, exact or (recorded as a finding) equal by value only.
    fn take_stashed(&mut self, id: &Value) -> Option<Value> {
        let stashed = self.replies.take_stashed(id)?;
        if stashed.loosely {
            self.id_form(id, &stashed.reply);
        }
        Some(stashed.reply)
    }

    fn id_form(&self, id: &Value, reply: &Value) {
        let got = reply.get("id").cloned().unwrap_or_default();
        self.find(
            FINDING_FRAMES,
            Kind::IdForm,
            format!("the request had id {id}, its reply id {got} (matched by value to go on)"),
        );
    }

    /// A response that came while waiting for `id`: ends the wait (`Some`) if it is the one,
    /// equal by value (recorded), the barrier's, or a reply without an id that must be ours;
    /// else it is kept for later.
    async fn on_response(&mut self, id: &Value, v: Value) -> Option<Result<Value, ProbeError>> {
        let got = v.get("id");
        if got == Some(id) || got.is_some_and(|g| mismatch::loosely_equal(g, id)) {
            if got != Some(id) {
                self.id_form(id, &v);
            }
            self.replies.stop_disambiguating();
            return Some(Ok(v));
        }
        if self.replies.is_barrier_reply(got) {
            return Some(self.after_barrier(id).await);
        }
        if self.replies.is_disambiguation(got) {
            // The ping sent after an ambiguous reply came back first: that reply was ours,
            // without its id.
            self.replies.stop_disambiguating();
            let seen = self.replies.last_stashed().map(short).unwrap_or_default();
            return Some(Err(self.no_id(
                id,
                &format!("{seen} (a ping sent after it was answered before any other)"),
            )));
        }
        if mismatch::reply_without_id(&v) {
            // It may answer a notification sent before (wrongly), or be ours without its id: a
            // ping sent now tells which, by which reply comes next.
            let Some(ping) = self.replies.disambiguate() else {
                return Some(Err(self.no_id(id, &short(&v))));
            };
            let msg = self.ping_message(ping);
            if let Err(e) = self.send(&msg).await {
                return Some(Err(e));
            }
        }
        self.replies.stash(v);
        None
    }

    /// A ping under `id`: in a modern session `server/discover` (2026-07-28 removed `ping`).
    pub(super) fn ping_message(&self, id: Value) -> Value {
        match &self.conversation.meta {
            Some(meta) => json!({"jsonrpc": "2.0", "id": id, "method": modern::DISCOVER,
                "params": {"_meta": meta}}),
            None => json!({"jsonrpc": "2.0", "id": id, "method": "ping"}),
        }
    }

    /// A reply without an id where ours was due: a finding, and the wait is blocked by it.
    fn no_id(&mut self, id: &Value, seen: &str) -> ProbeError {
        let why = format!("waiting for the reply to id {id}, a reply without an id came: {seen}");
        self.find(FINDING_FRAMES, Kind::NoId, why.clone());
        self.block(Kind::NoId, why)
    }

    /// Every request still waiting, `id` among them, got a reply under an id no request had:
    /// the server changed the ids, so the reply to `id` will not come under it. A finding, and
    /// the wait is blocked by it.
    pub fn changed_ids(&mut self, id: &Value) -> Option<ProbeError> {
        let ids = self.replies.answered_under_unknown_ids(id)?;
        let ids: Vec<String> = ids.iter().map(Value::to_string).collect();
        let why = format!(
            "waiting for the reply to id {id}, replies came under ids no request had: {}",
            ids.join(", ")
        );
        self.find(FINDING_FRAMES, Kind::UnknownId, why.clone());
        Some(self.block(Kind::UnknownId, why))
    }

    /// The barrier was answered before `id`: take what is already buffered, then conclude.
    async fn after_barrier(&mut self, id: &Value) -> Result<Value, ProbeError> {
        for got in self.buffered().await {
            match got {
                Got::Json(v) if v.get("id") == Some(id) => return Ok(v),
                Got::Json(_) => {}
                _ => break,
            }
        }
        Err(ProbeError::Overtaken {
            id: id.clone(),
            wait: self.waits.wait,
            method: self.replies.barrier_method().to_owned(),
        })
    }

    /// A process whose first request was a start-up one answered nothing within the start
    /// budget, though an earlier start of the same server answered: a finding.
    fn silent_start(&mut self, id: &Value, limit: Duration) {
        let startup = self.replies.first_was(&["initialize", modern::DISCOVER]);
        let Some(earlier) = self.witness.earlier_start_answered() else {
            return;
        };
        if !startup || self.conn.exit_status().is_some() {
            return;
        }
        let why = format!(
            "a process started for {} answered nothing (id {id}) within {limit:?} \
             (--start-timeout), though an earlier start of the same command answered in {:.2}s",
            self.witness.check(),
            earlier.as_secs_f64()
        );
        self.find(FINDING_FRAMES, Kind::SilentStart, why.clone());
        self.block(Kind::SilentStart, why);
    }

    /// The next response (requests and notifications from the server are passed over), or
    /// `None` if none came within `window`.
    pub async fn next_response(&mut self, window: Duration) -> Result<Option<Value>, ProbeError> {
        let deadline = tokio::time::Instant::now() + window;
        loop {
            match self.next_until(deadline).await {
                Got::Json(v) if is_response(&v) => return Ok(Some(v)),
                Got::Json(_) => {}
                Got::Spread(v, lines) => {
                    let why = format!("a reply spread over {lines} lines, not one: {}", short(&v));
                    return Err(self.block(Kind::SpreadOverLines, why));
                }
                Got::OtherFraming(text) => return Err(self.block(Kind::OtherFraming, text)),
                Got::Garbage(g) => return Err(ProbeError::Garbage(g)),
                Got::Eof => {
                    return Err(ProbeError::Eof {
                        awaited: Awaited::Anything,
                        exit: self.exit_soon().await,
                        notes: String::new(),
                    })
                }
                Got::Timeout => return Ok(None),
            }
        }
    }

    /// Proves that nothing answers what was just sent: sends a barrier request (`ping`; in a
    /// modern session `server/discover`) and returns the responses and non-frames that came
    /// before its reply. A server answers in order, so anything meant for earlier messages
    /// comes first; no fixed window is waited out.
    pub async fn until_barrier(&mut self) -> Result<Quiet, ProbeError> {
        let mut quiet = Quiet {
            responses: self.replies.take_all(),
            garbage: Vec::new(),
        };
        let method = if self.is_modern() {
            modern::DISCOVER
        } else {
            "ping"
        };
        let id = json!(self.id());
        let msg = self.ping_message(id.clone());
        self.send(&msg).await?;
        let deadline = tokio::time::Instant::now()
            + if self.replies.answered() {
                self.waits.wait
            } else {
                self.waits.start_wait
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
                    if !self.replies.is_ignored(&v) {
                        quiet.responses.push(v);
                    }
                    if let Some(why) = self.changed_ids(&id) {
                        return Err(why);
                    }
                }
                Got::Json(_) => {}
                Got::Garbage(g) => match self.inbox.take_unanswered(&id) {
                    Some(u) => return Err(self.unanswered(u)),
                    None => quiet.garbage.push(g),
                },
                Got::Spread(v, _) => quiet.responses.push(v),
                Got::OtherFraming(text) => return Err(self.block(Kind::OtherFraming, text)),
                Got::Eof => {
                    return Err(ProbeError::Eof {
                        awaited: Awaited::Barrier(method),
                        exit: self.exit_soon().await,
                        notes: String::new(),
                    })
                }
                Got::Timeout => {
                    let error = ProbeError::BarrierTimeout {
                        method,
                        wait: self.waits.wait,
                    };
                    self.ran_out(&error);
                    return Err(error);
                }
            }
        }
        self.replies.barrier_answered();
        // Whatever is already buffered behind the barrier's reply counts too.
        for got in self.buffered().await {
            match got {
                Got::Json(v)
                    if (is_response(&v) || v.is_array()) && !self.replies.is_ignored(&v) =>
                {
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
    /// all there, or for `--timeout` at most.
    pub async fn late_replies(&mut self, quiet: &mut Quiet, done: impl Fn(&[Value]) -> bool) {
        let deadline = tokio::time::Instant::now() + self.waits.wait;
        while !done(&quiet.responses) {
            match self.next_until(deadline).await {
                Got::Json(v)
                    if (is_response(&v) || v.is_array()) && !self.replies.is_ignored(&v) =>
                {
                    quiet.responses.push(v)
                }
                Got::Garbage(g) => quiet.garbage.push(g),
                Got::Json(_) | Got::Spread(..) => {}
                Got::OtherFraming(_) | Got::Eof | Got::Timeout => return,
            }
        }
    }

    /// Expects no response (and nothing that is not a frame) within `window`: what came
    /// instead, if anything.
    pub async fn silence(&mut self, window: Duration) -> Option<String> {
        if let Some(r) = self.replies.first_stashed() {
            return Some(format!("got {}", short(r)));
        }
        let deadline = tokio::time::Instant::now() + window;
        loop {
            match self.next_until(deadline).await {
                Got::Timeout | Got::Eof => return None,
                Got::Json(v) | Got::Spread(v, _) if is_response(&v) => {
                    return Some(format!("got {}", short(&v)))
                }
                Got::Json(_) | Got::Spread(..) => {}
                Got::Garbage(g) | Got::OtherFraming(g) => {
                    return Some(format!("got bytes that are not a frame: {g}"))
                }
            }
        }
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
