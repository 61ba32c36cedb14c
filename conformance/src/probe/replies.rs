//! Which reply answers which request, for one process: the ids it was sent, replies kept for a
//! later wait, replies no check wants, the barrier, and whether anything was answered yet.

use mcp_protocol::Framing;
use serde_json::Value;

use super::inbox::KEPT;
use crate::mismatch;
use crate::requests::Requests;

/// A reply taken from the ones kept, and whether its id matched only by value.
#[derive(Debug)]
pub struct Stashed {
    pub reply: Value,
    pub loosely: bool,
}

/// The matching state of one process.
#[derive(Debug)]
pub struct Replies {
    next_id: i64,
    /// Sent once if the process has answered nothing after `--timeout`: a request it must
    /// answer (`initialize`, `server/discover`). A reply to it before the reply waited for
    /// proves that one is not coming (a server answers in order), without waiting out the
    /// start budget; no reply to either means the server is still starting.
    barrier: Option<Value>,
    /// The id the barrier was sent under.
    barrier_id: Option<Value>,
    /// The method of the first request sent: a process whose first request was a start-up one
    /// and that answers nothing did not start.
    first_method: Option<String>,
    /// Anything answered: later waits get `--timeout`.
    answered: bool,
    /// Notifications sent that a reply without an id may answer (a server that wrongly
    /// answers notifications): such a reply is not taken for a request's reply that lost its
    /// id (`jsonrpc.unknown-notification` judges it).
    notifications: usize,
    /// The ping sent to tell an ambiguous reply without an id apart.
    disambiguation: Option<Value>,
    /// Ids of requests the harness sent for itself, whose replies no check wants.
    ignored: Vec<Value>,
    /// Responses that arrived while waiting for another id.
    stash: Vec<Value>,
    /// The requests sent and which got replies: tells a reply under a changed id.
    requests: Requests,
    /// Responses read since the process was last handed to a check.
    this_lease: usize,
    /// A wait for a response of this lease ran out.
    timed_out: bool,
}

impl Replies {
    pub fn new(framing: Framing) -> Replies {
        Replies {
            next_id: 1,
            barrier: None,
            barrier_id: None,
            first_method: None,
            answered: false,
            notifications: 0,
            disambiguation: None,
            ignored: Vec::new(),
            stash: Vec::new(),
            requests: Requests::new(framing),
            this_lease: 0,
            timed_out: false,
        }
    }

    /// A fresh integer id.
    pub fn id(&mut self) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// A message sent as JSON.
    pub fn sent(&mut self, message: &Value) {
        if self.first_method.is_none() {
            let method = message.get("method").and_then(Value::as_str).unwrap_or("");
            self.first_method = Some(method.to_owned());
        }
        self.requests.sent(message);
    }

    /// Bytes sent as they are.
    pub fn sent_bytes(&mut self, bytes: &[u8]) {
        self.first_method.get_or_insert_with(String::new);
        self.requests.sent_bytes(bytes);
    }

    /// A notification sent: a reply without an id may answer it.
    pub fn notified(&mut self) {
        self.notifications += 1;
    }

    /// A JSON message received; `true` if it is the process's first response.
    pub fn received(&mut self, message: &Value) -> bool {
        self.requests.received(message);
        if !super::is_response(message) {
            return false;
        }
        self.this_lease += 1;
        !std::mem::replace(&mut self.answered, true)
    }

    /// A new check leases the process: its replies and waits are counted afresh.
    pub fn new_lease(&mut self) {
        self.stash.clear();
        self.timed_out = false;
        self.this_lease = 0;
        self.requests.new_lease();
    }

    pub fn answered(&self) -> bool {
        self.answered
    }

    pub fn answered_this_lease(&self) -> bool {
        self.this_lease > 0
    }

    pub fn timed_out(&self) -> bool {
        self.timed_out
    }

    pub fn set_timed_out(&mut self) {
        self.timed_out = true;
    }

    pub fn set_barrier(&mut self, barrier: Value) {
        self.barrier = Some(barrier);
    }

    /// The barrier to send now, under a fresh id, if it has one and it has not been sent.
    pub fn arm_barrier(&mut self) -> Option<Value> {
        if self.barrier_id.is_some() {
            return None;
        }
        let mut barrier = self.barrier.clone()?;
        let id = serde_json::json!(self.id());
        barrier["id"] = id.clone();
        self.barrier_id = Some(id);
        Some(barrier)
    }

    pub fn has_barrier(&self) -> bool {
        self.barrier.is_some()
    }

    pub fn barrier_sent(&self) -> bool {
        self.barrier_id.is_some()
    }

    pub fn is_barrier_reply(&self, id: Option<&Value>) -> bool {
        self.barrier_id.is_some() && id == self.barrier_id.as_ref()
    }

    /// The barrier's method, for a message that says it was answered first.
    pub fn barrier_method(&self) -> &str {
        self.barrier
            .as_ref()
            .and_then(|b| b.get("method"))
            .and_then(Value::as_str)
            .unwrap_or("request")
    }

    /// Was the first request a start-up one (`initialize`, `server/discover`)?
    pub fn first_was(&self, methods: &[&str]) -> bool {
        self.first_method
            .as_deref()
            .is_some_and(|m| methods.contains(&m))
    }

    /// A kept response to `id`: the exact one, else one equal by value only.
    pub fn take_stashed(&mut self, id: &Value) -> Option<Stashed> {
        if let Some(i) = self.stash.iter().position(|r| r.get("id") == Some(id)) {
            return Some(Stashed {
                reply: self.stash.remove(i),
                loosely: false,
            });
        }
        let i = self.stash.iter().position(|r| {
            r.get("id")
                .is_some_and(|got| mismatch::loosely_equal(got, id))
        })?;
        Some(Stashed {
            reply: self.stash.remove(i),
            loosely: true,
        })
    }

    /// Keeps a response for a later wait, unless no check wants it.
    pub fn stash(&mut self, reply: Value) {
        if self.stash.len() < KEPT && !self.is_ignored(&reply) {
            self.stash.push(reply);
        }
    }

    pub fn stashed(&self) -> usize {
        self.stash.len()
    }

    pub fn first_stashed(&self) -> Option<&Value> {
        self.stash.first()
    }

    pub fn last_stashed(&self) -> Option<&Value> {
        self.stash.last()
    }

    /// Takes every kept response.
    pub fn take_all(&mut self) -> Vec<Value> {
        std::mem::take(&mut self.stash)
    }

    /// Replies to other ids that arrived during a wait that found none to its own: a server
    /// that rewrites ids shows here.
    pub fn other_replies_note(&self, stashed_before: usize) -> String {
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

    /// A reply to a request the harness sent for itself.
    pub fn is_ignored(&self, reply: &Value) -> bool {
        reply.get("id").is_some_and(|id| self.ignored.contains(id))
    }

    /// Whatever came before a barrier's reply was for what was sent before it.
    pub fn barrier_answered(&mut self) {
        self.notifications = 0;
    }

    /// The ids of every request still waiting, `id` among them, if each got a reply under an
    /// id no request had: the server changed the ids.
    pub fn answered_under_unknown_ids(&self, id: &Value) -> Option<&[Value]> {
        self.requests.answered_under_unknown_ids(id)
    }

    /// Is a ping sent to tell an ambiguous reply apart waiting for its reply?
    pub fn disambiguating(&self) -> bool {
        self.disambiguation.is_some()
    }

    pub fn is_disambiguation(&self, id: Option<&Value>) -> bool {
        self.disambiguation.is_some() && id == self.disambiguation.as_ref()
    }

    pub fn stop_disambiguating(&mut self) {
        self.disambiguation = None;
    }

    /// A reply without an id came while notifications were outstanding: it may answer one of
    /// them (wrongly) or be the awaited reply without its id. `Some(ping id)`: send a ping
    /// under that id, whose reply tells which; `None`: no notification could explain it.
    pub fn disambiguate(&mut self) -> Option<Value> {
        if self.notifications == 0 || self.disambiguating() {
            return None;
        }
        self.notifications -= 1;
        let ping = serde_json::json!(self.id());
        self.ignored.push(ping.clone());
        self.disambiguation = Some(ping.clone());
        Some(ping)
    }
}
