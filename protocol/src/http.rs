//! Streamable HTTP vocabulary shared by the server, the client, the harness and the bench:
//! header names, media types, the headers a 2026-07-28 request mirrors from its body, the
//! headers of each request a client sends ([`RequestHeaders`]), and a bounded reader and a
//! writer for `text/event-stream` bodies.
//!
//! Sources: `basic/transports.mdx` §Streamable HTTP (2025-03-26 … 2025-11-25) and
//! `basic/transports/streamable-http` (2026-07-28); SSE framing is the WHATWG HTML
//! "Server-sent events" event-stream format.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde_json::Value;

use crate::mcp::methods;

mod request;

pub use request::{InvalidHeader, Negotiated, Posted, RequestHeaders};

/// `Mcp-Session-Id`: the legacy era's session, set by the server on the `initialize` reply.
pub const SESSION_ID: &str = "mcp-session-id";
/// `MCP-Protocol-Version`: the negotiated version, on every request after `initialize`
/// (2025-06-18 on), and on every request in 2026-07-28.
pub const PROTOCOL_VERSION: &str = "mcp-protocol-version";
/// `Mcp-Method` (2026-07-28): mirrors the body's `method`.
pub const METHOD: &str = "mcp-method";
/// `Mcp-Name` (2026-07-28): mirrors `params.name` or `params.uri` (see [`mirrored_name`]).
pub const NAME: &str = "mcp-name";
/// `Last-Event-ID`: resuming an SSE stream (optional for servers).
pub const LAST_EVENT_ID: &str = "last-event-id";

/// One JSON-RPC message (or batch) as a body.
pub const JSON: &str = "application/json";
/// Messages as server-sent events.
pub const EVENT_STREAM: &str = "text/event-stream";

/// `HeaderMismatchError` (2026-07-28): a mirrored header is missing or disagrees with the body.
pub const HEADER_MISMATCH: i64 = -32020;

/// The value a 2026-07-28 request's `Mcp-Name` header mirrors: `params.name` of `tools/call`
/// and `prompts/get`, `params.uri` of `resources/read`; `None` for other methods (they send
/// no `Mcp-Name`). `Some(None)` means the method needs one but the body has no such string.
pub fn mirrored_name<'a>(method: &str, params: Option<&'a Value>) -> Option<Option<&'a str>> {
    let key = mirrored_key(method)?;
    Some(params.and_then(|p| p.get(key)).and_then(Value::as_str))
}

/// The params member a 2026-07-28 request's `Mcp-Name` header mirrors: `name` for
/// `tools/call` and `prompts/get`, `uri` for `resources/read`; `None` for other methods.
pub fn mirrored_key(method: &str) -> Option<&'static str> {
    match method {
        methods::TOOLS_CALL | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        _ => None,
    }
}

/// What a mirrored header (2026-07-28 §Value Encoding) carries for `value`: the value itself
/// when it is printable ASCII (spaces inside allowed), else `=?base64?…?=` of its UTF-8, for
/// non-ASCII, control characters, leading or trailing spaces, or a value that looks like the
/// sentinel itself.
pub fn encode_header_value(value: &str) -> String {
    let printable = value.bytes().all(|b| (0x20..=0x7e).contains(&b));
    let padded = value.starts_with(' ') || value.ends_with(' ');
    let looks_encoded = value.starts_with(SENTINEL_START) && value.ends_with(SENTINEL_END);
    if printable && !padded && !looks_encoded {
        value.to_owned()
    } else {
        format!("{SENTINEL_START}{}{SENTINEL_END}", STANDARD.encode(value))
    }
}

/// A mirrored header's value as sent, decoded: plain, or `=?base64?…?=` of UTF-8. `None` when
/// the sentinel holds no valid Base64 of UTF-8.
pub fn decode_header_value(value: &str) -> Option<String> {
    match value
        .strip_prefix(SENTINEL_START)
        .and_then(|v| v.strip_suffix(SENTINEL_END))
    {
        None => Some(value.to_owned()),
        Some(encoded) => String::from_utf8(STANDARD.decode(encoded).ok()?).ok(),
    }
}

const SENTINEL_START: &str = "=?base64?";
const SENTINEL_END: &str = "?=";

/// Does an `Accept` header value list this media type (or a wildcard that covers it)?
/// Parameters (`;q=…`) are ignored; `q=0` is not treated as a refusal.
pub fn accepts(accept: &str, media_type: &str) -> bool {
    let (kind, _) = media_type.split_once('/').unwrap_or((media_type, ""));
    accept.split(',').any(|item| {
        let range = item.split(';').next().unwrap_or("").trim();
        range.eq_ignore_ascii_case(media_type)
            || range == "*/*"
            || range
                .strip_suffix("/*")
                .is_some_and(|k| k.eq_ignore_ascii_case(kind))
    })
}

/// Writes one SSE event carrying `data` (a JSON text: it has no newlines, so one `data:` line
/// holds it), with an optional `id:` line.
pub fn write_event(dst: &mut Vec<u8>, id: Option<&str>, data: &[u8]) {
    if let Some(id) = id {
        dst.extend_from_slice(b"id: ");
        dst.extend_from_slice(id.as_bytes());
        dst.push(b'\n');
    }
    dst.extend_from_slice(b"event: message\ndata: ");
    dst.extend_from_slice(data);
    dst.extend_from_slice(b"\n\n");
}

/// One dispatched server-sent event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    /// The `event:` field; `None` means the default type, `message`.
    pub event: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
    /// The `id:` field of this event, if it had one.
    pub id: Option<String>,
    /// `retry:` in milliseconds, if the event set it.
    pub retry: Option<u64>,
}

/// A problem in an event stream; the reader stops at the first.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SseError {
    #[error("an SSE event exceeds {limit} bytes")]
    TooLarge { limit: usize },
    #[error("an SSE line is not UTF-8")]
    NotUtf8,
}

/// An incremental, bounded `text/event-stream` reader: feed it bytes as they arrive, take
/// the events it completes. Lines end at LF, CR or CRLF; comments (`:`…) are skipped; an
/// event is dispatched at a blank line, and one with no `data:` lines is not dispatched.
#[derive(Debug)]
pub struct SseReader {
    limit: usize,
    line: Vec<u8>,
    /// The previous byte was a CR: an LF right after it ends nothing.
    after_cr: bool,
    event: SseEvent,
    has_data: bool,
    /// Bytes of the event being read (its lines so far), against `limit`.
    size: usize,
}

impl SseReader {
    /// A reader that refuses an event larger than `limit` bytes.
    pub fn new(limit: usize) -> Self {
        SseReader {
            limit,
            line: Vec::new(),
            after_cr: false,
            event: SseEvent::default(),
            has_data: false,
            size: 0,
        }
    }

    /// Reads `bytes`, appending every event they complete to `out`.
    pub fn feed(&mut self, bytes: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        for &b in bytes {
            if std::mem::take(&mut self.after_cr) && b == b'\n' {
                continue;
            }
            match b {
                b'\n' | b'\r' => {
                    self.after_cr = b == b'\r';
                    self.end_line(out)?;
                }
                _ => {
                    self.size += 1;
                    if self.size > self.limit {
                        return Err(SseError::TooLarge { limit: self.limit });
                    }
                    self.line.push(b);
                }
            }
        }
        Ok(())
    }

    /// Is an event partly read (the stream ended inside it)?
    pub fn in_event(&self) -> bool {
        !self.line.is_empty() || self.size > 0
    }

    fn end_line(&mut self, out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        let line = std::mem::take(&mut self.line);
        if line.is_empty() {
            let event = std::mem::take(&mut self.event);
            if std::mem::take(&mut self.has_data) {
                out.push(event);
            }
            self.size = 0;
            return Ok(());
        }
        let line = String::from_utf8(line).map_err(|_| SseError::NotUtf8)?;
        if line.starts_with(':') {
            return Ok(());
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line.as_str(), ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.event.data.push('\n');
                }
                self.event.data.push_str(value);
                self.has_data = true;
            }
            "event" => self.event.event = Some(value.to_owned()),
            "id" if !value.contains('\0') => self.event.id = Some(value.to_owned()),
            "retry" => self.event.retry = value.parse().ok(),
            _ => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read_split(bytes: &[u8], at: usize) -> Vec<SseEvent> {
        let mut reader = SseReader::new(1024);
        let mut out = Vec::new();
        reader.feed(&bytes[..at], &mut out).unwrap();
        reader.feed(&bytes[at..], &mut out).unwrap();
        out
    }

    #[test]
    fn events_split_at_every_offset() {
        let stream = b": comment\r\nevent: message\r\nid: 7\r\ndata: {\"a\":1}\r\n\r\nretry: 10\ndata: x\ndata: y\n\nid: 8\n\n";
        let want = vec![
            SseEvent {
                event: Some("message".into()),
                data: "{\"a\":1}".into(),
                id: Some("7".into()),
                retry: None,
            },
            SseEvent {
                event: None,
                data: "x\ny".into(),
                id: None,
                retry: Some(10),
            },
        ];
        for at in 0..=stream.len() {
            assert_eq!(read_split(stream, at), want, "split at {at}");
        }
    }

    #[test]
    fn written_events_read_back() {
        let mut body = Vec::new();
        write_event(
            &mut body,
            Some("1"),
            br#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
        );
        write_event(&mut body, None, b"{}");
        let got = read_split(&body, body.len() / 2);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].data, r#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
        assert_eq!(got[0].id.as_deref(), Some("1"));
        assert_eq!(got[1].event.as_deref(), Some("message"));
    }

    #[test]
    fn an_event_over_the_limit_is_an_error() {
        let mut reader = SseReader::new(8);
        let mut out = Vec::new();
        assert_eq!(
            reader.feed(b"data: 0123456789\n\n", &mut out),
            Err(SseError::TooLarge { limit: 8 })
        );
        assert!(out.is_empty());
    }

    #[test]
    fn accept_lists() {
        assert!(accepts("application/json, text/event-stream", EVENT_STREAM));
        assert!(accepts("application/json;q=0.9", JSON));
        assert!(accepts("text/*", EVENT_STREAM));
        assert!(accepts("*/*", JSON));
        assert!(!accepts("application/json", EVENT_STREAM));
        assert!(!accepts("", JSON));
    }

    #[test]
    fn header_values_encode_as_the_spec_examples_and_read_back() {
        for (value, sent) in [
            ("us-west1", "us-west1"),
            ("a b", "a b"),
            ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
            (" padded ", "=?base64?IHBhZGRlZCA=?="),
            ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
            ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
        ] {
            assert_eq!(encode_header_value(value), sent, "{value:?}");
            assert_eq!(
                decode_header_value(sent).as_deref(),
                Some(value),
                "{sent:?}"
            );
        }
        assert_eq!(decode_header_value("=?base64?!!?="), None);
        assert_eq!(decode_header_value("=?base64?/w==?="), None, "not UTF-8");
    }

    #[test]
    fn names_mirrored_by_method() {
        let p = json!({"name": "echo", "uri": "file:///x"});
        assert_eq!(mirrored_name("tools/call", Some(&p)), Some(Some("echo")));
        assert_eq!(
            mirrored_name("resources/read", Some(&p)),
            Some(Some("file:///x"))
        );
        assert_eq!(mirrored_name("tools/call", None), Some(None));
        assert_eq!(mirrored_name("tools/list", Some(&p)), None);
    }
}
