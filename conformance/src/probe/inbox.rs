//! What a process's stdout (or an HTTP connection's replies) held, read into what checks judge:
//! JSON frames, things that are not frames (garbage), one message spread over several lines,
//! the other framing. Kept bounded ([`KEPT`]); the totals are still counted.

use mcp_protocol::{FrameError, Framing};
use serde_json::Value;

use super::Got;
use crate::mismatch::{self, Spread};
use crate::transport::{RawEvent, Unanswered};

/// At most this many frames (and, separately, non-frames) are kept: a server flooding stdout
/// must not grow the harness's memory. Checks send a few hundred messages at most.
pub const KEPT: usize = 1000;

/// Everything read from one process.
#[derive(Debug)]
pub struct Inbox {
    framing: Framing,
    /// Its stdout ended.
    closed: bool,
    spread: Spread,
    /// Everything on stdout that was not a JSON frame (the first [`KEPT`]).
    garbage: Vec<String>,
    /// How many things on stdout were not JSON frames, all told.
    garbage_total: usize,
    /// Every JSON frame received (the first [`KEPT`]).
    received: Vec<Value>,
    /// How many JSON frames were received, all told.
    received_total: usize,
    /// Requests whose HTTP response ended without their JSON-RPC response, not yet claimed by
    /// a wait (the first [`KEPT`]).
    unanswered: Vec<Unanswered>,
}

impl Inbox {
    pub(super) fn new(framing: Framing) -> Inbox {
        Inbox {
            framing,
            closed: false,
            spread: Spread::default(),
            garbage: Vec::new(),
            garbage_total: 0,
            received: Vec::new(),
            received_total: 0,
            unanswered: Vec::new(),
        }
    }

    /// Reads one event from the connection (`None`: nothing came in time).
    pub(super) fn read(&mut self, event: Option<RawEvent>) -> Got {
        match event {
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
            Some(RawEvent::Invalid(e)) => self.not_a_frame(e.to_string()),
            Some(RawEvent::Unanswered(u)) => {
                let seen = format!("no response to id {} came in its reply: {}", u.id, u.seen);
                if self.unanswered.len() < KEPT {
                    self.unanswered.push(u);
                }
                self.not_a_frame(seen)
            }
            Some(RawEvent::Frame(bytes)) => self.frame(&bytes),
        }
    }

    /// The first request whose HTTP response ended without its JSON-RPC response.
    pub(super) fn take_any_unanswered(&mut self) -> Option<Unanswered> {
        (!self.unanswered.is_empty()).then(|| self.unanswered.remove(0))
    }

    /// The request `id`'s HTTP response ended without its JSON-RPC response: what came.
    pub(super) fn take_unanswered(&mut self, id: &Value) -> Option<Unanswered> {
        let i = self.unanswered.iter().position(|u| u.id == *id)?;
        Some(self.unanswered.remove(i))
    }

    fn frame(&mut self, bytes: &[u8]) -> Got {
        let parsed = serde_json::from_slice::<Value>(bytes);
        if let Ok(v) = &parsed {
            if v.is_object() || v.is_array() {
                self.spread.reset();
                return self.json(parsed.unwrap_or_default());
            }
        }
        if self.framing == Framing::Ndjson && mismatch::is_content_length_line(bytes) {
            return self.other_framing(String::from_utf8_lossy(bytes).into_owned());
        }
        let text = || String::from_utf8_lossy(&bytes[..bytes.len().min(120)]).into_owned();
        if let Some((value, lines)) = self.spread.push(bytes) {
            self.not_a_frame(format!("a line that is not JSON by itself: {}", text()));
            self.received_total += 1;
            return Got::Spread(value, lines);
        }
        match parsed {
            Ok(scalar) => self.json(scalar),
            Err(e) => self.not_a_frame(format!("not JSON ({e}): {}", text())),
        }
    }

    fn json(&mut self, v: Value) -> Got {
        self.received_total += 1;
        if self.received.len() < KEPT {
            self.received.push(v.clone());
        }
        Got::Json(v)
    }

    fn not_a_frame(&mut self, text: String) -> Got {
        self.garbage_total += 1;
        if self.garbage.len() < KEPT {
            self.garbage.push(text.clone());
        }
        Got::Garbage(text)
    }

    /// Bytes in the other framing: garbage, and what it says of the server.
    fn other_framing(&mut self, seen: String) -> Got {
        self.not_a_frame(format!("in the other framing: {seen}"));
        Got::OtherFraming(match self.framing {
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
        })
    }

    /// Has stdout ended?
    pub fn closed(&self) -> bool {
        self.closed
    }

    /// Every JSON frame received (the first [`KEPT`]).
    pub fn received(&self) -> &[Value] {
        &self.received
    }

    pub fn received_total(&self) -> usize {
        self.received_total
    }

    /// Everything that was not a JSON frame (the first [`KEPT`]).
    pub fn garbage(&self) -> &[String] {
        &self.garbage
    }

    pub fn garbage_total(&self) -> usize {
        self.garbage_total
    }

    /// What came instead of a reply since `garbage_before` non-frames had been seen, if
    /// anything: for a message that says why no reply was found.
    pub fn garbage_note(&self, garbage_before: usize) -> String {
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
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;
    use crate::transport::NoResponse;

    /// A request's HTTP reply without its response is garbage to every reader, and kept for the
    /// wait on its id, once.
    #[test]
    fn an_unanswered_request_is_kept_for_its_wait() {
        let mut inbox = Inbox::new(Framing::Ndjson);
        let seen = "the body of HTTP 500 text/plain is not one JSON-RPC message: oops".to_owned();
        let event = RawEvent::Unanswered(Unanswered {
            id: json!(7),
            why: NoResponse::HttpError,
            seen: seen.clone(),
        });
        let Got::Garbage(text) = inbox.read(Some(event)) else {
            panic!("not garbage");
        };
        assert_eq!(
            text,
            format!("no response to id 7 came in its reply: {seen}")
        );
        assert_eq!(inbox.garbage_total(), 1);
        assert!(inbox.take_unanswered(&json!(8)).is_none());
        let kept = inbox.take_unanswered(&json!(7)).unwrap();
        assert_eq!((kept.why, kept.seen), (NoResponse::HttpError, seen));
        assert!(inbox.take_unanswered(&json!(7)).is_none());
        assert!(inbox.take_any_unanswered().is_none());
    }
}
