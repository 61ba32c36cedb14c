//! The vocabulary checks are written in: requests and notifications, and the waits for the
//! reply to an id (with what it says when none comes), for a barrier's reply (proving
//! silence), and for replies that may come after it.

use std::process::ExitStatus;
use std::time::Duration;

use mcp_protocol::mcp::modern;
use serde_json::{json, Value};

use super::error::{Awaited, ProbeError};
use super::messages::{initialize_params, modern_meta, with_meta};
use super::{is_response, Got, Probe, KEPT};
use crate::mismatch::{self, Kind};
use crate::pattern::short;

impl Probe {
    /// Waits for the response whose `id` equals `id`. Responses to other ids are kept for
    /// later; notifications and server requests are passed over. The first reply of a process
    /// may take the start budget, every later one `wait`; with a [`Probe::barrier`], a process
    /// that answered nothing within `wait` is sent the barrier, whose reply ends the wait.
    pub async fn response(&mut self, id: &Value) -> Result<Value, ProbeError> {
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
                        return Err(self.block(Kind::SpreadOverLines, why));
                    }
                }
                Got::OtherFraming(text) => return Err(self.block(Kind::OtherFraming, text)),
                Got::Json(_) | Got::Garbage(_) => {}
                Got::Eof => {
                    return Err(ProbeError::Eof {
                        awaited: Awaited::Reply(id.clone()),
                        exit: self.exit_soon().await,
                        notes: self.garbage_note(garbage_before),
                    })
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
                    let start_budget = !self.answered;
                    if start_budget {
                        self.silent_start(id, limit);
                    }
                    return Err(ProbeError::Timeout {
                        id: id.clone(),
                        limit,
                        start_budget,
                        notes: self.other_replies_note(stashed_before)
                            + &self.garbage_note(garbage_before),
                    });
                }
            }
        }
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
    fn no_id(&mut self, id: &Value, seen: &str) -> ProbeError {
        let why = format!("waiting for the reply to id {id}, a reply without an id came: {seen}");
        self.find(Kind::NoId, why.clone());
        self.block(Kind::NoId, why)
    }

    /// Every request still waiting, `id` among them, got a reply under an id no request had:
    /// the server changed the ids, so the reply to `id` will not come under it. A finding, and
    /// the wait is blocked by it.
    pub fn changed_ids(&mut self, id: &Value) -> Option<ProbeError> {
        let ids = self.requests.answered_under_unknown_ids(id)?;
        let ids: Vec<String> = ids.iter().map(Value::to_string).collect();
        let why = format!(
            "waiting for the reply to id {id}, replies came under ids no request had: {}",
            ids.join(", ")
        );
        self.find(Kind::UnknownId, why.clone());
        Some(self.block(Kind::UnknownId, why))
    }

    /// The barrier was answered before `id`: take what is already buffered, then conclude.
    async fn after_barrier(&mut self, id: &Value) -> Result<Value, ProbeError> {
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
        Err(ProbeError::Overtaken {
            id: id.clone(),
            wait: self.wait,
            method: method.to_owned(),
        })
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
                Got::OtherFraming(text) => return Err(self.block(Kind::OtherFraming, text)),
                Got::Eof => {
                    return Err(ProbeError::Eof {
                        awaited: Awaited::Barrier(method),
                        exit: self.exit_soon().await,
                        notes: String::new(),
                    })
                }
                Got::Timeout => {
                    self.timed_out = true;
                    return Err(ProbeError::BarrierTimeout {
                        method,
                        wait: self.wait,
                    });
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
    pub async fn request(
        &mut self,
        method: &str,
        params: Option<Value>,
    ) -> Result<Value, ProbeError> {
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
    ) -> Result<Value, ProbeError> {
        let params = with_meta(params, &modern_meta(modern::VERSION));
        self.send_request(method, Some(params)).await
    }

    /// Sends a request exactly as given (no `_meta` added) and returns its response object.
    pub async fn send_request(
        &mut self,
        method: &str,
        params: Option<Value>,
    ) -> Result<Value, ProbeError> {
        let id = json!(self.id());
        let mut msg = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if let Some(p) = params {
            msg["params"] = p;
        }
        self.send(&msg).await?;
        self.response(&id).await
    }

    pub async fn notify(&mut self, method: &str, params: Option<Value>) -> Result<(), ProbeError> {
        self.notifications += 1;
        self.notifications_sent += 1;
        let mut msg = json!({"jsonrpc": "2.0", "method": method});
        if let Some(p) = params {
            msg["params"] = p;
        }
        self.send(&msg).await
    }

    /// `initialize` with `version`; returns the response object (result or error).
    pub async fn initialize(&mut self, version: &str) -> Result<Value, ProbeError> {
        self.request("initialize", Some(initialize_params(version)))
            .await
    }

    /// `initialize` + `notifications/initialized`; returns the initialize result.
    pub async fn handshake(&mut self, version: &str) -> Result<Value, ProbeError> {
        let reply = self.initialize(version).await?;
        match reply.get("result") {
            Some(result) => {
                let result = result.clone();
                self.notify("notifications/initialized", None).await?;
                Ok(result)
            }
            None => Err(ProbeError::Refused(short(&reply))),
        }
    }

    /// Expects no response (and nothing that is not a frame) within `window`: what came
    /// instead, if anything.
    pub async fn silence(&mut self, window: Duration) -> Option<String> {
        if let Some(r) = self.stash.first() {
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

    /// Checks the server still answers: a ping (in a modern session `server/discover`), or
    /// any response to it.
    pub async fn still_serving(&mut self) -> Result<(), ProbeError> {
        let method = if self.meta.is_some() {
            modern::DISCOVER
        } else {
            "ping"
        };
        self.request(method, None)
            .await
            .map(drop)
            .map_err(|e| ProbeError::StoppedServing(Box::new(e)))
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

    /// How the server ended, if it did within a moment.
    pub async fn exit_soon(&self) -> Option<ExitStatus> {
        self.conn.wait_exit(Duration::from_millis(300)).await
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
