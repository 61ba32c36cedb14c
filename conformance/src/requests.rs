//! The requests sent to one server process and which of them got a reply, so a wait can tell
//! when its reply has come under an id no request had (JSON-RPC 2.0 §5: a response's id "MUST
//! be the same as the value of the id member in the Request Object").
//!
//! Requests written as raw bytes (framing checks, batches) are read back with the protocol's
//! own decoder, so every id the harness sent is known, however it was written.

use std::collections::HashSet;

use bytes::BytesMut;
use mcp_protocol::{Framing, StdioCodec};
use serde_json::Value;

use crate::mismatch;

/// Ids remembered per process; past this the tracker stops judging (it could no longer tell an
/// unknown id from a forgotten one). Checks send a few hundred requests at most.
const MAX_IDS: usize = 65_536;

/// Unknown ids kept to quote; the count goes on.
const KEPT_UNKNOWN: usize = 5;

/// What was sent on one connection, and what came back, for the current check (lease).
#[derive(Debug)]
pub struct Requests {
    decoder: StdioCodec,
    written: BytesMut,
    /// Every request id sent on this process, as JSON text, and as sent.
    sent: HashSet<String>,
    sent_ids: Vec<Value>,
    /// Requests of this lease not answered yet (by an exact or loosely equal id).
    outstanding: Vec<Value>,
    /// Replies of this lease whose id no request on this process had.
    unknown: Vec<Value>,
    unknown_count: usize,
    /// The tracker lost count (too many ids, or bytes it could not read): it judges nothing.
    lost: bool,
}

impl Requests {
    pub fn new(framing: Framing) -> Requests {
        Requests {
            decoder: StdioCodec::new(framing.into()),
            written: BytesMut::new(),
            sent: HashSet::new(),
            sent_ids: Vec::new(),
            outstanding: Vec::new(),
            unknown: Vec::new(),
            unknown_count: 0,
            lost: false,
        }
    }

    /// A new check leases the process: its requests and replies are counted afresh (ids sent
    /// before stay known, so a late reply to them is not taken for an unknown one).
    pub fn new_lease(&mut self) {
        self.outstanding.clear();
        self.unknown.clear();
        self.unknown_count = 0;
    }

    /// A message sent as JSON: a request, a notification, or a batch of them.
    pub fn sent(&mut self, message: &Value) {
        match message {
            Value::Array(items) => items.iter().for_each(|m| self.sent_one(m)),
            m => self.sent_one(m),
        }
    }

    /// Bytes sent as they are: every complete frame in them so far is read back.
    pub fn sent_bytes(&mut self, bytes: &[u8]) {
        if self.lost {
            return;
        }
        self.written.extend_from_slice(bytes);
        loop {
            match self.decoder.decode_raw(&mut self.written) {
                Ok(Some(Ok(frame))) => {
                    // Garbage the harness sends on purpose is not a request.
                    if let Ok(message) = serde_json::from_slice::<Value>(&frame) {
                        self.sent(&message);
                    }
                }
                Ok(Some(Err(_))) => {}
                Ok(None) => return,
                Err(_) => {
                    self.lost = true;
                    return;
                }
            }
        }
    }

    fn sent_one(&mut self, message: &Value) {
        let Some(id) = message.get("id").filter(|id| !id.is_null()) else {
            return;
        };
        if message.get("method").is_none() {
            return;
        }
        if self.sent.len() >= MAX_IDS || self.outstanding.len() >= MAX_IDS {
            self.lost = true;
            return;
        }
        if self.sent.insert(id.to_string()) {
            self.sent_ids.push(id.clone());
        }
        self.outstanding.push(id.clone());
    }

    /// A message received: each response (alone or in a batch) answers a request, or has an
    /// id no request had.
    pub fn received(&mut self, message: &Value) {
        match message {
            Value::Array(items) => items.iter().for_each(|m| self.received_one(m)),
            m => self.received_one(m),
        }
    }

    fn received_one(&mut self, message: &Value) {
        if message.get("method").is_some() {
            return;
        }
        // Without an id it is another kind of mismatch (or a reply to unreadable input).
        let Some(id) = message.get("id").filter(|id| !id.is_null()) else {
            return;
        };
        let answered = self.outstanding.iter().position(|o| o == id).or_else(|| {
            self.outstanding
                .iter()
                .position(|o| mismatch::loosely_equal(id, o))
        });
        if let Some(i) = answered {
            self.outstanding.swap_remove(i);
            return;
        }
        let known = self.sent.contains(&id.to_string())
            || self.sent_ids.iter().any(|s| mismatch::loosely_equal(id, s));
        if !known {
            self.unknown_count += 1;
            if self.unknown.len() < KEPT_UNKNOWN {
                self.unknown.push(id.clone());
            }
        }
    }

    /// While waiting for `id`: if every request of this lease still unanswered, `id` among
    /// them, is matched by a reply whose id no request had (each request gets one reply), the
    /// reply to `id` came under another id. Then the ids that came.
    pub fn answered_under_unknown_ids(&self, id: &Value) -> Option<&[Value]> {
        let waiting = self.outstanding.iter().any(|o| o == id);
        let covered = self.unknown_count >= self.outstanding.len();
        (!self.lost && waiting && self.unknown_count > 0 && covered).then_some(&self.unknown[..])
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;

    fn reply(id: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "result": {}})
    }

    fn request(id: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "method": "ping"})
    }

    #[test]
    fn a_reply_under_an_id_no_request_had_accounts_for_the_one_waited_for() {
        let mut r = Requests::new(Framing::Ndjson);
        r.sent(&request(json!("slow")));
        assert_eq!(r.answered_under_unknown_ids(&json!("slow")), None);
        r.received(&reply(json!(889_680_349)));
        assert_eq!(
            r.answered_under_unknown_ids(&json!("slow")),
            Some(&[json!(889_680_349)][..])
        );
    }

    #[test]
    fn with_several_outstanding_every_one_must_be_accounted_for() {
        let mut r = Requests::new(Framing::Ndjson);
        for id in ["w1", "w2", "w3"] {
            r.sent(&request(json!(id)));
        }
        r.received(&reply(json!(11)));
        r.received(&reply(json!(12)));
        assert_eq!(r.answered_under_unknown_ids(&json!("w1")), None);
        r.received(&reply(json!(13)));
        assert!(r.answered_under_unknown_ids(&json!("w1")).is_some());
    }

    #[test]
    fn right_ids_duplicates_and_ids_equal_by_value_are_not_unknown() {
        let mut r = Requests::new(Framing::Ndjson);
        r.sent(&request(json!(1)));
        r.sent(&request(json!(2)));
        r.sent(&request(json!("x")));
        r.received(&reply(json!(1)));
        r.received(&reply(json!(1)));
        r.received(&reply(json!(2.0)));
        r.received(
            &json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "p"}}),
        );
        r.received(&json!({"jsonrpc": "2.0", "method": "notifications/message"}));
        assert_eq!(r.answered_under_unknown_ids(&json!("x")), None);
    }

    #[test]
    fn requests_written_as_bytes_are_read_back_in_either_framing() {
        let mut r = Requests::new(Framing::Ndjson);
        let line = b"{\"jsonrpc\":\"2.0\",\"id\":\"slow\",\"method\":\"ping\"}\r\n";
        for byte in line {
            r.sent_bytes(&[*byte]);
        }
        r.sent_bytes(b"not json\n[{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}]\n");
        r.received(&reply(json!(7)));
        r.received(&reply(json!("slow")));
        r.received(&reply(json!(99)));
        assert_eq!(r.answered_under_unknown_ids(&json!("slow")), None);

        let mut r = Requests::new(Framing::ContentLength);
        let body = br#"{"jsonrpc":"2.0","id":"cl","method":"ping"}"#;
        let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
        frame.extend_from_slice(body);
        r.sent_bytes(&frame);
        r.received(&reply(json!(5)));
        assert!(r.answered_under_unknown_ids(&json!("cl")).is_some());
    }

    #[test]
    fn a_new_lease_forgets_what_was_outstanding_but_not_what_was_sent() {
        let mut r = Requests::new(Framing::Ndjson);
        r.sent(&request(json!("old")));
        r.new_lease();
        r.sent(&request(json!("new")));
        r.received(&reply(json!("old")));
        assert_eq!(r.answered_under_unknown_ids(&json!("new")), None);
        r.received(&reply(json!(3)));
        assert!(r.answered_under_unknown_ids(&json!("new")).is_some());
    }
}
