//! Replies that arrive but cannot be matched to the requests they answer, and replies that do
//! not come at all, classified so a run names the root cause once instead of timing out check
//! after check.
//!
//! Each kind of mismatch is owned by the check whose rule it breaks; that check FAILs with the
//! frames, and a check whose wait ended on it is BLOCKED by that owner. An id equal by value
//! but not by form is matched leniently, so the run goes on and judges the rest. A server that
//! stops answering is owned by the first check that failed on it (the runner learns it).

use std::sync::Arc;

use parking_lot::Mutex;
use serde::Serialize;
use serde_json::Value;

use crate::ids::{self, CheckId};
use crate::transcript::TranscriptEntry;

/// What kind of mismatch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// A reply's id equals the request's by value, not by type or form (`0.0` or `"1"` for
    /// `1`); matched leniently.
    IdForm,
    /// One JSON value spread over several lines (newline-delimited framing).
    SpreadOverLines,
    /// Replies in the other framing than the one the harness speaks.
    OtherFraming,
    /// A reply with no id to a request that had a readable one.
    NoId,
    /// Replies under ids no request had, one for each request still waiting (among them the
    /// one waited for): the server changed the ids.
    UnknownId,
    /// A server process that answered nothing within the start budget, after the first start
    /// had answered: no check that needs a process of its own can be judged.
    SilentStart,
    /// Over HTTP, a request's reply to a single request is a JSON array (a batch) where one
    /// response object was due: the response cannot be read.
    ArrayReply,
    /// Over HTTP, a request's SSE stream ended without its response (events without `data:`,
    /// data that is not one JSON-RPC message).
    SseNoResponse,
    /// After the handshake, waits for replies the server owed ran out in two of its processes:
    /// it stops answering, or loses replies. The checks that would wait for one are not run.
    StopsAnswering,
    /// A `notifications/message` without a valid level or without data.
    LogShape,
    /// A `notifications/message` from a server that does not declare `logging`.
    LogUndeclared,
    /// A `notifications/message` below the level `logging/setLevel` set (legacy).
    LogBelowLevel,
    /// In a 2026-07-28 session, a `notifications/message` while no request in progress asked
    /// for log messages (`_meta` `io.modelcontextprotocol/logLevel`).
    LogUnrequested,
    /// A `notifications/progress` for a token no request of the harness carried.
    ProgressUnknownToken,
    /// A token's `progress` that does not increase.
    ProgressNotIncreasing,
    /// A `notifications/progress` after the response to its request (stdio, where the order
    /// is the server's).
    ProgressAfterResponse,
    /// A request from the server for a client capability the harness did not declare.
    UndeclaredClientCapability,
}

impl Kind {
    /// The check whose rule it breaks; `None` for [`Kind::StopsAnswering`], which the first
    /// check that failed on it owns.
    pub fn owner(self) -> Option<CheckId> {
        match self {
            Kind::IdForm => Some(ids::JSONRPC_IDS_ECHOED),
            Kind::SpreadOverLines => Some(ids::FRAMING_NO_EMBEDDED_NEWLINES),
            Kind::OtherFraming => Some(ids::FRAMING_REPLIES_IN_KIND),
            Kind::NoId => Some(ids::JSONRPC_RESPONSES_WELL_FORMED),
            Kind::UnknownId => Some(ids::JSONRPC_IDS_ECHOED),
            Kind::SilentStart => Some(ids::LIFECYCLE_INITIALIZE_RESULT),
            Kind::ArrayReply => Some(ids::JSONRPC_RESPONSES_WELL_FORMED),
            Kind::SseNoResponse => Some(ids::HTTP_SSE_RESPONSE),
            Kind::StopsAnswering => None,
            Kind::LogShape => Some(ids::LOGGING_MESSAGE_SHAPE),
            Kind::LogUndeclared => Some(ids::LOGGING_MESSAGE_DECLARED),
            Kind::LogBelowLevel => Some(ids::LOGGING_MESSAGE_LEVEL),
            Kind::LogUnrequested => Some(ids::MODERN_LOGGING_MESSAGE_REQUESTED),
            Kind::ProgressUnknownToken => Some(ids::PROGRESS_TOKEN_KNOWN),
            Kind::ProgressNotIncreasing => Some(ids::PROGRESS_INCREASING),
            Kind::ProgressAfterResponse => Some(ids::PROGRESS_STOPS_AFTER_RESPONSE),
            Kind::UndeclaredClientCapability => Some(ids::CAPABILITIES_NEGOTIATED_REQUESTS),
        }
    }

    /// What the owner expects, as its FAIL says.
    pub fn rule(self) -> &'static str {
        match self {
            Kind::IdForm => "each reply carries its request's id exactly, of the same type",
            Kind::SpreadOverLines => "each message on one line (no embedded newlines)",
            Kind::OtherFraming => "replies in the framing the requests came in",
            Kind::NoId => "each reply to a request with a readable id carries that id",
            Kind::UnknownId => "each reply carries the id of the request it answers",
            Kind::SilentStart => "every start of the server answers its first request",
            Kind::ArrayReply => "the reply to a single request is one response object, not an array",
            Kind::SseNoResponse => {
                "a request's SSE stream carries its response, each event's data one JSON-RPC message"
            }
            Kind::StopsAnswering => "every request after the handshake gets its reply",
            Kind::LogShape => "every notifications/message has a valid level and data",
            Kind::LogUndeclared => "no notifications/message from a server that does not declare logging",
            Kind::LogBelowLevel => "no notifications/message below the level logging/setLevel set",
            Kind::LogUnrequested => {
                "notifications/message only for a request whose _meta asked for them"
            }
            Kind::ProgressUnknownToken => {
                "every notifications/progress references a token of a request the harness sent"
            }
            Kind::ProgressNotIncreasing => "each token's progress increases with each notification",
            Kind::ProgressAfterResponse => "no notifications/progress after its request's response",
            Kind::UndeclaredClientCapability => {
                "no server request for a client capability the harness did not declare"
            }
        }
    }

    /// Whether a wait that meets it ends (the reply cannot be read) rather than going on.
    pub fn blocks(self) -> bool {
        !matches!(
            self,
            Kind::IdForm
                | Kind::LogShape
                | Kind::LogUndeclared
                | Kind::LogBelowLevel
                | Kind::LogUnrequested
                | Kind::ProgressUnknownToken
                | Kind::ProgressNotIncreasing
                | Kind::ProgressAfterResponse
                | Kind::UndeclaredClientCapability
        )
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::IdForm => "id-form",
            Kind::SpreadOverLines => "spread-over-lines",
            Kind::OtherFraming => "other-framing",
            Kind::NoId => "no-id",
            Kind::UnknownId => "unknown-id",
            Kind::SilentStart => "silent-start",
            Kind::ArrayReply => "array-reply",
            Kind::SseNoResponse => "sse-no-response",
            Kind::StopsAnswering => "stops-answering",
            Kind::LogShape => "log-shape",
            Kind::LogUndeclared => "log-undeclared",
            Kind::LogBelowLevel => "log-below-level",
            Kind::LogUnrequested => "log-unrequested",
            Kind::ProgressUnknownToken => "progress-unknown-token",
            Kind::ProgressNotIncreasing => "progress-not-increasing",
            Kind::ProgressAfterResponse => "progress-after-response",
            Kind::UndeclaredClientCapability => "undeclared-client-capability",
        }
    }
}

/// One root cause, as first seen.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub kind: Kind,
    /// The check that owns it (and FAILs with it).
    pub owner: String,
    /// The check that saw it first.
    pub seen_in: String,
    /// What was seen, in words.
    pub actual: String,
    /// The frames that show it (the last ones of that process, up to the mismatch).
    pub frames: Vec<TranscriptEntry>,
    /// How many times it was seen in the run.
    pub count: usize,
}

/// The findings of one target's run, shared by every probe.
#[derive(Debug, Clone, Default)]
pub struct Findings(Arc<Mutex<Vec<Finding>>>);

impl Findings {
    /// Records a finding; one of a kind already recorded only counts.
    pub fn record(&self, finding: Finding) {
        let mut all = self.0.lock();
        match all.iter_mut().find(|f| f.kind == finding.kind) {
            Some(f) => f.count += 1,
            None => all.push(finding),
        }
    }

    pub fn has(&self, kind: Kind) -> bool {
        self.all().iter().any(|f| f.kind == kind)
    }

    pub fn all(&self) -> Vec<Finding> {
        self.0.lock().clone()
    }
}

/// Ids equal by value but not by type or form: `1.0` or `"1"` for `1`, `1` for `"1"`. Numbers
/// beyond 2^53 are not compared by value (that is precision loss, another check's business).
pub fn loosely_equal(got: &Value, want: &Value) -> bool {
    const EXACT: f64 = 9_007_199_254_740_992.0;
    let number = |v: &Value| -> Option<f64> {
        match v {
            Value::Number(n) => n.as_f64(),
            Value::String(s) => s.trim().parse::<f64>().ok().filter(|f| f.is_finite()),
            _ => None,
        }
    };
    if got == want || got.is_string() && want.is_string() {
        return false;
    }
    match (number(got), number(want)) {
        (Some(a), Some(b)) => a == b && a.abs() < EXACT,
        _ => false,
    }
}

/// A reply that lacks the id its request had: a result without an id, or an error without
/// one that is not about a request whose id could not be read (-32700, -32600).
pub fn reply_without_id(reply: &Value) -> bool {
    if !matches!(reply.get("id"), None | Some(Value::Null)) {
        return false;
    }
    match reply.get("error") {
        None => reply.get("result").is_some(),
        Some(error) => !matches!(
            error.get("code").and_then(Value::as_i64),
            Some(-32700 | -32600)
        ),
    }
}

/// A `Content-Length: N` header line, read where newline-delimited JSON was expected.
pub fn is_content_length_line(line: &[u8]) -> bool {
    let line = line.trim_ascii();
    let Some(colon) = line.iter().position(|b| *b == b':') else {
        return false;
    };
    let value = line[colon + 1..].trim_ascii();
    line[..colon]
        .trim_ascii()
        .eq_ignore_ascii_case(b"content-length")
        && !value.is_empty()
        && value.iter().all(u8::is_ascii_digit)
}

/// The strict Content-Length decoder's description of a line that is not a header, when that
/// line is JSON: newline-delimited replies where Content-Length frames were expected.
pub fn is_json_line_report(not_a_message: &str) -> bool {
    not_a_message
        .strip_prefix("a line that is not a frame header: \"")
        .is_some_and(|rest| rest.starts_with('{') || rest.starts_with('['))
}

/// Bytes of non-JSON lines kept while looking for one value spread over several lines.
const SPREAD_MAX_BYTES: usize = 4 << 20;

/// Reassembles lines that are not JSON on their own into the one JSON value they may form
/// together (a pretty-printed reply).
#[derive(Debug, Default)]
pub struct Spread {
    text: Vec<u8>,
    lines: usize,
}

impl Spread {
    /// A line that is not a JSON message by itself: the value and its line count if this line
    /// completes one spread over several lines.
    pub fn push(&mut self, line: &[u8]) -> Option<(Value, usize)> {
        let trimmed = line.trim_ascii();
        if self.lines == 0 {
            if trimmed.starts_with(b"{") || trimmed.starts_with(b"[") {
                self.text.extend_from_slice(line);
                self.lines = 1;
            }
            return None;
        }
        if self.text.len() + line.len() > SPREAD_MAX_BYTES {
            self.reset();
            return None;
        }
        self.text.push(b'\n');
        self.text.extend_from_slice(line);
        self.lines += 1;
        if !(trimmed.starts_with(b"}") || trimmed.starts_with(b"]")) {
            return None;
        }
        let value: Value = serde_json::from_slice(&self.text).ok()?;
        let lines = self.lines;
        self.reset();
        Some((value, lines))
    }

    /// A whole message arrived on one line: whatever was being gathered was not one value.
    pub fn reset(&mut self) {
        self.text.clear();
        self.lines = 0;
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn ids_equal_by_value_only() {
        assert!(loosely_equal(&json!(0.0), &json!(0)));
        assert!(loosely_equal(&json!("1"), &json!(1)));
        assert!(loosely_equal(&json!(1), &json!("1")));
        assert!(!loosely_equal(&json!(1), &json!(1)));
        assert!(!loosely_equal(&json!("1"), &json!("1.0")));
        assert!(!loosely_equal(&json!(2), &json!(1)));
        assert!(!loosely_equal(&json!(null), &json!(1)));
        // Beyond 2^53 equal floats are precision loss, not a form.
        assert!(!loosely_equal(
            &json!(9_007_199_254_740_992.0),
            &json!(9_007_199_254_740_993u64)
        ));
    }

    #[test]
    fn replies_without_ids() {
        assert!(reply_without_id(&json!({"jsonrpc": "2.0", "result": {}})));
        assert!(reply_without_id(
            &json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32601, "message": "x"}})
        ));
        assert!(!reply_without_id(
            &json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "x"}})
        ));
        assert!(!reply_without_id(
            &json!({"jsonrpc": "2.0", "error": {"code": -32600, "message": "x"}})
        ));
        assert!(!reply_without_id(
            &json!({"jsonrpc": "2.0", "id": 1, "result": {}})
        ));
    }

    #[test]
    fn other_framing_lines() {
        assert!(is_content_length_line(b"Content-Length: 52"));
        assert!(is_content_length_line(b"content-length:7\r"));
        assert!(!is_content_length_line(b"Content-Length: x"));
        assert!(!is_content_length_line(b"{\"a\": 1}"));
        assert!(is_json_line_report(
            "a line that is not a frame header: \"{\\\"jsonrpc\\\"..."
        ));
        assert!(!is_json_line_report(
            "a line that is not a frame header: \"INFO: hi\""
        ));
    }

    #[test]
    fn a_pretty_printed_reply_is_reassembled() {
        let text = serde_json::to_string_pretty(&json!({"jsonrpc": "2.0", "id": 1,
            "result": {"tools": [{"name": "a"}]}}))
        .unwrap();
        let mut spread = Spread::default();
        let lines: Vec<&str> = text.lines().collect();
        for line in &lines[..lines.len() - 1] {
            assert_eq!(spread.push(line.as_bytes()), None);
        }
        let (value, count) = spread.push(lines[lines.len() - 1].as_bytes()).unwrap();
        assert_eq!(value["id"], 1);
        assert_eq!(count, lines.len());
        // Lines that open nothing are not gathered.
        assert_eq!(spread.push(b"INFO starting"), None);
        assert_eq!(spread.push(b"}"), None);
    }
}
