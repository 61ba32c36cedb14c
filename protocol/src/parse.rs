//! The validating parser: one frame's bytes to a message, a batch, or the exact error.
//!
//! MCP (`basic/index.mdx`, every version) narrows JSON-RPC 2.0: request ids are strings or
//! integers and never `null`; notifications carry no id. Requests and notifications as SDKs
//! write them are read on a fast path ([`crate::scan`]); everything else is first decoded into
//! a flat record with every member optional, then validated, so each shape problem gets an
//! exact -32600 reason and the id is kept whenever it is readable.

use std::borrow::Cow;
use std::fmt;

use serde::de::{Deserializer, Error as _, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;

use crate::error::{ErrorObject, FrameError, InvalidMessage};
use crate::id::RequestId;
use crate::json::{json_type, short_json};
use crate::message::{Incoming, Message, Notification, Request, Response};
use crate::params::{Params, ParamsType};
use crate::scan::Scanner;

/// Every member optional, so shape problems are found by [`RawMessage::validate`] with exact
/// reasons instead of by serde with generic ones. `Some(Value::Null)` means "present and null".
///
/// Deserialized by hand ([`RawVisitor`]): only from a JSON object (a derived impl would also
/// read an array positionally), unknown members skipped without being parsed into values, and
/// a duplicated member recorded instead of failing the whole message, so its id is kept.
struct RawMessage<P> {
    jsonrpc: Option<Value>,
    id: Option<Value>,
    method: Option<Value>,
    params: Option<P>,
    result: Option<Value>,
    error: Option<Value>,
    /// Known members that appeared more than once (the first value is kept). A duplicated
    /// `"id"` is not here: it fails the message at once, since no id can be trusted.
    duplicates: Vec<&'static str>,
}

impl<P> Default for RawMessage<P> {
    fn default() -> Self {
        RawMessage {
            jsonrpc: None,
            id: None,
            method: None,
            params: None,
            result: None,
            error: None,
            duplicates: Vec::new(),
        }
    }
}

/// What [`RawVisitor`] expects; serde puts it in "invalid type: …, expected …" errors, which
/// [`shape_reason`] recognises.
const EXPECTING_MESSAGE: &str = "a JSON-RPC message object";

/// The members [`RawMessage`] reads; any other is skipped.
enum Member {
    Jsonrpc,
    Id,
    Method,
    Params,
    Result,
    Error,
    Other,
}

impl<'de> Deserialize<'de> for Member {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct NameVisitor;
        impl Visitor<'_> for NameVisitor {
            type Value = Member;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<Member, E> {
                Ok(match name {
                    "jsonrpc" => Member::Jsonrpc,
                    "id" => Member::Id,
                    "method" => Member::Method,
                    "params" => Member::Params,
                    "result" => Member::Result,
                    "error" => Member::Error,
                    _ => Member::Other,
                })
            }
        }
        d.deserialize_identifier(NameVisitor)
    }
}

impl<P> RawMessage<P> {
    /// The slot of a known member other than `params`, with its name.
    fn slot(&mut self, member: Member) -> Option<(&mut Option<Value>, &'static str)> {
        Some(match member {
            Member::Jsonrpc => (&mut self.jsonrpc, "jsonrpc"),
            Member::Id => (&mut self.id, "id"),
            Member::Method => (&mut self.method, "method"),
            Member::Result => (&mut self.result, "result"),
            Member::Error => (&mut self.error, "error"),
            Member::Params | Member::Other => return None,
        })
    }
}

struct RawVisitor<P>(std::marker::PhantomData<P>);

impl<'de, P: Params> Visitor<'de> for RawVisitor<P> {
    type Value = RawMessage<P>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(EXPECTING_MESSAGE)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawMessage<P>, A::Error> {
        let mut raw = RawMessage::default();
        while let Some(member) = map.next_key::<Member>()? {
            if let Member::Params = member {
                if raw.params.is_none() {
                    raw.params = Some(P::read(raw.method.as_ref(), &mut map)?);
                } else {
                    raw.duplicate("params");
                    map.next_value::<IgnoredAny>()?;
                }
                continue;
            }
            let Some((slot, name)) = raw.slot(member) else {
                // Skipped without building a value (and without a depth limit).
                map.next_value::<IgnoredAny>()?;
                continue;
            };
            if slot.is_none() {
                *slot = Some(map.next_value::<Value>()?);
                continue;
            }
            if name == "id" {
                // Raised before the value is read, so serde_json reports the position of the
                // second "id" (the same text as a derived impl).
                return Err(A::Error::duplicate_field("id"));
            }
            raw.duplicate(name);
            map.next_value::<IgnoredAny>()?;
        }
        Ok(raw)
    }
}

impl<'de, P: Params> Deserialize<'de> for RawMessage<P> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // A map only: `deserialize_struct` would also accept `["2.0", 5, "ping"]`.
        d.deserialize_map(RawVisitor(std::marker::PhantomData))
    }
}

impl<P: Params> RawMessage<P> {
    /// Records a member seen twice (once, however often it repeats).
    fn duplicate(&mut self, name: &'static str) {
        if !self.duplicates.contains(&name) {
            self.duplicates.push(name);
        }
    }

    /// Whether this is an attempted response: no `"method"`, and a `"result"` or an `"error"`.
    /// An invalid one is marked ([`InvalidMessage::is_response`]) so that it is not answered.
    fn is_response(&self) -> bool {
        self.method.is_none() && (self.result.is_some() || self.error.is_some())
    }

    fn validate(self) -> Result<Message<P>, InvalidMessage> {
        let is_response = self.is_response();
        let refuse = |id: Option<RequestId>, reason: String| InvalidMessage {
            is_response,
            ..InvalidMessage::new(id, reason)
        };
        // Read the id first so every later error can pair with the request.
        let id = match &self.id {
            None => None,
            Some(v) => match RequestId::from_value(v) {
                Ok(id) => Some(id),
                Err(reason) => {
                    // A response to an unreadable request legitimately carries `"id": null`.
                    if v.is_null() && self.method.is_none() && self.error.is_some() {
                        None
                    } else {
                        return Err(refuse(None, reason));
                    }
                }
            },
        };
        let invalid = |reason: String| refuse(id.clone(), reason);
        if !self.duplicates.is_empty() {
            let names: Vec<String> = self.duplicates.iter().map(|n| format!("\"{n}\"")).collect();
            let plural = if names.len() > 1 { "s" } else { "" };
            return Err(invalid(format!(
                "duplicate member{plural} {}",
                names.join(", ")
            )));
        }
        match &self.jsonrpc {
            Some(Value::String(v)) if v == "2.0" => {}
            None => return Err(invalid("missing \"jsonrpc\": \"2.0\"".to_owned())),
            Some(other) => {
                return Err(invalid(format!(
                    "\"jsonrpc\" must be \"2.0\", got {}",
                    short_json(other)
                )))
            }
        }
        if let Some(method) = self.method {
            let method = match method {
                Value::String(m) => m,
                other => {
                    return Err(invalid(format!(
                        "\"method\" must be a string, got {}",
                        json_type(&other)
                    )))
                }
            };
            if self.result.is_some() || self.error.is_some() {
                return Err(invalid(
                    "a message with \"method\" must not carry \"result\" or \"error\"".to_owned(),
                ));
            }
            let params = match self.params {
                None => None,
                Some(p) => match p.json_type() {
                    ParamsType::Null => None,
                    ParamsType::Object | ParamsType::Array => Some(p),
                    ParamsType::Other(kind) => {
                        return Err(invalid(format!(
                            "\"params\" must be an object or an array, got {kind}"
                        )))
                    }
                },
            };
            return Ok(match id {
                Some(id) => Message::Request(Request { id, method, params }),
                None => Message::Notification(Notification { method, params }),
            });
        }
        let outcome = match (self.result, self.error) {
            (Some(result), None) => Ok(result),
            (None, Some(error)) => Err(serde_json::from_value::<ErrorObject>(error)
                .map_err(|e| invalid(format!("\"error\" is not a valid error object: {e}")))?),
            (Some(_), Some(_)) => {
                return Err(invalid(
                    "a response must carry exactly one of \"result\" and \"error\", not both"
                        .to_owned(),
                ))
            }
            (None, None) => {
                return Err(invalid(
                    "missing \"method\" (a request or notification) or \"result\"/\"error\" (a response)"
                        .to_owned(),
                ))
            }
        };
        if id.is_none() && outcome.is_ok() {
            return Err(invalid(
                "a response with \"result\" must carry an \"id\"".to_owned(),
            ));
        }
        Ok(Message::Response(Response { id, outcome }))
    }
}

/// Parses one frame's bytes into a message or a batch.
///
/// Not JSON (including invalid UTF-8 and trailing garbage) → [`FrameError::Parse`] (-32700);
/// JSON of the wrong shape → [`FrameError::Invalid`] (-32600), with the id when readable.
pub fn parse(bytes: &[u8]) -> Result<Incoming, FrameError> {
    parse_as(bytes)
}

/// [`parse`], with the params kept as `P` ([`Params`]): the same checks, errors and results.
///
/// Requests and notifications as SDKs write them are read on a fast path ([`crate::Scanner`]);
/// anything it does not read is left to serde_json ([`parse_with_serde`]), with the same
/// result.
pub fn parse_as<P: Params>(bytes: &[u8]) -> Result<Incoming<P>, FrameError> {
    parse_text(bytes, true, usize::MAX)
}

/// [`parse_as`] for a receiver that bounds batches: a batch of more than `max_batch` members
/// is refused as a whole ([`FrameError::BatchTooLong`]) as soon as member `max_batch + 1` is
/// seen, so the members after it are neither read into values nor answered. JSON-RPC 2.0 §6
/// sets no bound; without one, a frame of `[0,0,…]` becomes millions of values and replies.
pub fn parse_bounded<P: Params>(bytes: &[u8], max_batch: usize) -> Result<Incoming<P>, FrameError> {
    parse_text(bytes, true, max_batch)
}

/// [`parse_as`] without its fast path: every frame read by serde_json. The reference that
/// tests and the fuzzer hold the fast path to.
pub fn parse_with_serde<P: Params>(bytes: &[u8]) -> Result<Incoming<P>, FrameError> {
    parse_text(bytes, false, usize::MAX)
}

fn parse_text<P: Params>(
    bytes: &[u8],
    fast: bool,
    max_batch: usize,
) -> Result<Incoming<P>, FrameError> {
    // RFC 8259 §8.1: JSON text is UTF-8. Checked for the whole frame, because serde_json does
    // not look inside the members it skips; then it need not check each string again.
    // simdutf8 checks 32 or 64 bytes a step (std: 16 at best); std says where it went wrong.
    let text = match simdutf8::basic::from_utf8(bytes).or_else(|_| std::str::from_utf8(bytes)) {
        Ok(text) => text,
        Err(utf8) => {
            // serde_json's own words and position, where it finds the problem.
            return Err(match serde_json::from_slice::<Value>(bytes) {
                Err(e) => FrameError::Parse(syntax_reason(&e)),
                Ok(_) => FrameError::Parse(format!(
                    "invalid UTF-8 at byte {} (JSON text must be UTF-8)",
                    utf8.valid_up_to()
                )),
            });
        }
    };
    let first = text.bytes().find(|b| !b.is_ascii_whitespace());
    if fast && first == Some(b'{') {
        if let Some(message) = scanned(text) {
            return Ok(Incoming::Single(message));
        }
    }
    if first == Some(b'[') {
        let items = batch_members(text, max_batch)?;
        if items.is_empty() {
            return Err(FrameError::Invalid(InvalidMessage::new(
                None,
                "empty batch: a batch must contain at least one message",
            )));
        }
        let batch = items
            .into_iter()
            .map(|item| match serde_json::from_value::<RawMessage<P>>(item) {
                Ok(raw) => raw.validate(),
                Err(e) => Err(InvalidMessage::new(None, shape_reason(&e))),
            })
            .collect();
        return Ok(Incoming::Batch(batch));
    }
    let raw: RawMessage<P> = match serde_json::from_str(text) {
        Ok(raw) => raw,
        Err(e) => return Err(mark_response(classify(e, text), bytes)),
    };
    raw.validate()
        .map(Incoming::Single)
        .map_err(FrameError::Invalid)
}

/// A batch's members as values, at most `max` of them: [`FrameError::BatchTooLong`] as soon
/// as one more is seen (it is skipped unread, and nothing after it is read).
fn batch_members(text: &str, max: usize) -> Result<Vec<Value>, FrameError> {
    let over = std::cell::Cell::new(false);
    let bounded = BoundedSeq { max, over: &over };
    let mut reader = serde_json::Deserializer::from_str(text);
    let items = serde::de::DeserializeSeed::deserialize(bounded, &mut reader)
        .and_then(|items| reader.end().map(|()| items));
    match items {
        Ok(items) => Ok(items),
        Err(_) if over.get() => Err(FrameError::BatchTooLong { max }),
        Err(e) => Err(classify(e, text)),
    }
}

/// Reads a JSON array into at most `max` values; sets `over` and fails on one more.
struct BoundedSeq<'a> {
    max: usize,
    over: &'a std::cell::Cell<bool>,
}

impl<'de> serde::de::DeserializeSeed<'de> for BoundedSeq<'_> {
    type Value = Vec<Value>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Vec<Value>, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for BoundedSeq<'_> {
    type Value = Vec<Value>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-RPC batch (an array)")
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<Value>, A::Error> {
        let mut items = Vec::new();
        while items.len() < self.max {
            match seq.next_element::<Value>()? {
                Some(item) => items.push(item),
                None => return Ok(items),
            }
        }
        if seq.next_element::<IgnoredAny>()?.is_some() {
            self.over.set(true);
            return Err(A::Error::custom("batch too long"));
        }
        Ok(items)
    }
}

/// A message refused before it was read whole (a duplicated `"id"`) may still be a response,
/// which must not be answered: look again, leniently (a JSON object keeps the last duplicate).
fn mark_response(mut error: FrameError, bytes: &[u8]) -> FrameError {
    if let FrameError::Invalid(inv) = &mut error {
        if let Ok(Value::Object(members)) = serde_json::from_slice::<Value>(bytes) {
            inv.is_response = !members.contains_key("method")
                && (members.contains_key("result") || members.contains_key("error"));
        }
    }
    error
}

/// Syntax and EOF errors mean "not JSON"; data errors mean "JSON of the wrong shape".
fn classify(e: serde_json::Error, text: &str) -> FrameError {
    use serde_json::error::Category;
    match e.classify() {
        // A shape error can come before the reader reaches a syntax error later in the text
        // (`"s"}`, `5 x`): that text is not JSON at all, which JSON-RPC answers with -32700.
        Category::Data => match serde_json::from_str::<serde::de::IgnoredAny>(text) {
            Err(syntax) => FrameError::Parse(syntax_reason(&syntax)),
            Ok(_) => FrameError::Invalid(InvalidMessage::new(None, shape_reason(&e))),
        },
        Category::Syntax | Category::Eof | Category::Io => FrameError::Parse(syntax_reason(&e)),
    }
}

/// serde_json's text for a syntax error, except where it misleads: a lone UTF-16 surrogate
/// escape. serde_json says "unexpected end of hex escape" for a high surrogate that no `\u`
/// follows (`"\ud800"`: the escape is complete), and "lone leading surrogate in hex escape"
/// also for a lone *low* (trailing) surrogate (`"\udfff"`). Both texts come only from its
/// surrogate checks (a short escape such as `\u12` is "invalid escape").
fn syntax_reason(e: &serde_json::Error) -> String {
    let text = e.to_string();
    if text.starts_with("unexpected end of hex escape")
        || text.starts_with("lone leading surrogate in hex escape")
    {
        format!(
            "lone UTF-16 surrogate in a \\u escape at line {} column {} (JSON text must be valid Unicode)",
            e.line(),
            e.column()
        )
    } else {
        text
    }
}

fn shape_reason(e: &serde_json::Error) -> String {
    let text = e.to_string();
    if text.contains(&format!("expected {EXPECTING_MESSAGE}")) {
        "a message must be a JSON object".to_owned()
    } else {
        text
    }
}

/// A request or notification read on the fast path, or `None` to leave the frame to serde.
fn scanned<P: Params>(text: &str) -> Option<Message<P>> {
    let mut s = Scanner::new(text);
    let mut jsonrpc = false;
    let mut id: Option<RequestId> = None;
    let mut method: Option<String> = None;
    let mut params: Option<Option<P>> = None;
    s.object(|name, s| {
        match &*name {
            // Any other version is the serde path's -32600.
            "jsonrpc" if !jsonrpc && s.string()? == "2.0" => jsonrpc = true,
            "id" if id.is_none() => {
                id = Some(match s.peek()? {
                    b'"' => match s.string()? {
                        Cow::Borrowed(id) => RequestId::from(id),
                        Cow::Owned(id) => RequestId::from(id),
                    },
                    _ => RequestId::from(s.integer()?),
                })
            }
            "method" if method.is_none() => method = Some(s.string()?.into_owned()),
            // As on the serde path, params are read under the method only if it came first.
            "params" if params.is_none() => {
                params = Some(match s.peek()? {
                    b'n' => s.word("null").map(|()| None)?,
                    b'{' | b'[' => Some(P::scan(method.as_deref(), s)?),
                    _ => return None,
                })
            }
            _ => return None,
        }
        Some(())
    })?;
    if s.peek().is_some() || !jsonrpc {
        return None;
    }
    let method = method?;
    let params = params.flatten();
    Some(match id {
        Some(id) => Message::Request(Request { id, method, params }),
        None => Message::Notification(Notification { method, params }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    /// A `Params` that notes the method it was read under, to check what `parse_as` hands it.
    #[derive(Debug, Clone, PartialEq)]
    struct Noted {
        method: Option<String>,
        value: Value,
    }

    impl Params for Noted {
        fn read<'de, A: MapAccess<'de>>(
            method: Option<&Value>,
            map: &mut A,
        ) -> Result<Self, A::Error> {
            Ok(Noted {
                method: method.and_then(Value::as_str).map(str::to_owned),
                value: map.next_value()?,
            })
        }

        fn json_type(&self) -> ParamsType {
            self.value.json_type()
        }
    }

    #[test]
    fn bounded_batches_stop_at_the_first_member_too_many() {
        let batch = |n: usize, tail: &str| format!("[{}{tail}]", vec!["0"; n].join(","));
        // At the bound: every member is read (and each refused on its own).
        let Ok(Incoming::Batch(items)) = parse_bounded::<Value>(batch(3, "").as_bytes(), 3) else {
            panic!()
        };
        assert_eq!(items.len(), 3);
        // One more: one error for the whole batch, whatever follows is not read (not even
        // its syntax), and the wire error says the bound.
        for tail in ["", ",0", ",[[[", ",{\"x\":"] {
            let text = batch(4, tail);
            let e = parse_bounded::<Value>(text.as_bytes(), 3).unwrap_err();
            assert_eq!(e, FrameError::BatchTooLong { max: 3 }, "{text}");
            let wire = e.to_error_object();
            assert_eq!(wire.code, ErrorCode::INVALID_REQUEST);
            assert_eq!(
                wire.message,
                "Invalid request: a batch may hold at most 3 messages; this one holds more (send them in smaller batches)"
            );
            assert_eq!(wire.data, Some(serde_json::json!({"maxBatchLength": 3})));
        }
        // Errors before the bound are what they always were.
        assert!(matches!(
            parse_bounded::<Value>(b"[0,", 3),
            Err(FrameError::Parse(_))
        ));
        assert!(matches!(
            parse_bounded::<Value>(b"[0] x", 3),
            Err(FrameError::Parse(_))
        ));
        // Unbounded `parse_as` reads them all.
        let Ok(Incoming::Batch(items)) = parse_as::<Value>(batch(4, "").as_bytes()) else {
            panic!()
        };
        assert_eq!(items.len(), 4);
    }

    #[test]
    fn parse_as_reads_params_under_the_method_that_came_first() {
        let request = |text: &str| match parse_as::<Noted>(text.as_bytes()) {
            Ok(Incoming::Single(Message::Request(r))) => r,
            other => panic!("{text}: {other:?}"),
        };
        let r = request(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"a":1}}"#);
        assert_eq!(
            r.params.as_ref().and_then(|p| p.method.as_deref()),
            Some("tools/call")
        );
        assert_eq!(r.params.map(|p| p.value), Some(serde_json::json!({"a": 1})));
        // Params before the method: read with no method.
        let r = request(r#"{"params":[1],"jsonrpc":"2.0","id":1,"method":"tools/call"}"#);
        assert_eq!(r.params.and_then(|p| p.method), None);
        // null params are none; batch members get the same treatment.
        let r = request(r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":null}"#);
        assert_eq!(r.params, None);
        match parse_as::<Noted>(br#"[{"jsonrpc":"2.0","id":1,"method":"m","params":{}}]"#) {
            Ok(Incoming::Batch(items)) => match &items[..] {
                [Ok(Message::Request(r))] => {
                    assert_eq!(
                        r.params.as_ref().and_then(|p| p.method.as_deref()),
                        Some("m")
                    )
                }
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        }
        // The same errors, word for word, as the `Value` parser.
        for text in [
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":"x"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{},"params":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":5,"result":1}"#,
            r#"[{"jsonrpc":"2.0","id":1,"method":"m","params":true}]"#,
        ] {
            let noted = parse_as::<Noted>(text.as_bytes()).map(|_| ());
            let plain = parse(text.as_bytes()).map(|_| ());
            assert_eq!(format!("{noted:?}"), format!("{plain:?}"), "{text}");
        }
        let e = invalid(r#"{"jsonrpc":"2.0","id":1,"method":"m","params":"x"}"#);
        assert_eq!(
            e.reason,
            "\"params\" must be an object or an array, got a string"
        );
    }

    fn invalid(input: &str) -> InvalidMessage {
        match parse(input.as_bytes()) {
            Err(FrameError::Invalid(inv)) => inv,
            other => panic!("expected -32600 for {input}, got {other:?}"),
        }
    }

    #[test]
    fn request_notification_response() {
        let m = parse(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).unwrap();
        assert_eq!(
            m,
            Incoming::Single(Message::Request(Request {
                id: 1.into(),
                method: "ping".into(),
                params: None
            }))
        );
        let m = parse(br#"{"jsonrpc":"2.0","method":"n","params":{"a":1}}"#).unwrap();
        assert!(matches!(m, Incoming::Single(Message::Notification(n)) if n.method == "n"));
        let m = parse(br#"{"jsonrpc":"2.0","id":"x","result":{}}"#).unwrap();
        assert!(
            matches!(m, Incoming::Single(Message::Response(r)) if r.id == Some("x".into()) && r.outcome.is_ok())
        );
        let m =
            parse(br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#).unwrap();
        assert!(matches!(m, Incoming::Single(Message::Response(r)) if r.id.is_none()));
    }

    #[test]
    fn not_json_is_parse_error() {
        for input in [
            "{",
            "nope",
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"} x"#,
            "{\"a\":\"\u{0}\"",
        ] {
            assert!(
                matches!(parse(input.as_bytes()), Err(FrameError::Parse(_))),
                "{input}"
            );
        }
        // Invalid UTF-8 and a lone surrogate escape are not JSON text either.
        assert!(matches!(
            parse(b"{\"jsonrpc\":\"2.0\",\"method\":\"\xff\"}"),
            Err(FrameError::Parse(_))
        ));
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","method":"\ud800"}"#),
            Err(FrameError::Parse(_))
        ));
    }

    #[test]
    fn shape_errors_keep_readable_ids() {
        assert_eq!(invalid(r#"{"id":7,"method":"ping"}"#).id, Some(7.into()));
        let inv = invalid(r#"{"jsonrpc":"1.0","id":"a","method":"ping"}"#);
        assert_eq!(inv.id, Some("a".into()));
        assert!(inv.reason.contains("\"1.0\""), "{}", inv.reason);
        assert_eq!(
            invalid(r#"{"jsonrpc":"2.0","id":3,"method":5}"#).id,
            Some(3.into())
        );
        assert_eq!(
            invalid(r#"{"jsonrpc":"2.0","id":null,"method":"x"}"#).id,
            None
        );
        assert_eq!(
            invalid(r#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#).id,
            None
        );
        assert_eq!(
            invalid(r#"{"jsonrpc":"2.0","id":true,"method":"x"}"#).id,
            None
        );
        assert_eq!(
            invalid(r#"{"jsonrpc":"2.0","id":4,"result":{},"error":{"code":1,"message":"m"}}"#).id,
            Some(4.into())
        );
        assert_eq!(invalid(r#"{"jsonrpc":"2.0","id":5}"#).id, Some(5.into()));
        assert_eq!(
            invalid(r#"{"jsonrpc":"2.0","id":6,"method":"x","params":"s"}"#).id,
            Some(6.into())
        );
        assert_eq!(invalid("5").id, None);
        assert_eq!(
            invalid(r#""str""#).reason,
            "a message must be a JSON object"
        );
        assert!(invalid(r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"x"}"#)
            .reason
            .contains("duplicate field `id`"));
    }

    #[test]
    fn ids_round_trip_exactly() {
        for raw in [
            "0",
            "-1",
            "9007199254740993",
            "9223372036854775807",
            "18446744073709551615",
            r#""""#,
            r#""é🦀""#,
        ] {
            let input = format!(r#"{{"jsonrpc":"2.0","id":{raw},"method":"ping"}}"#);
            let Ok(Incoming::Single(Message::Request(r))) = parse(input.as_bytes()) else {
                panic!("{input}");
            };
            let out = serde_json::to_string(&Message::<Value>::Response(Response::success(
                r.id,
                serde_json::json!({}),
            )))
            .unwrap();
            let expected = format!(r#"{{"jsonrpc":"2.0","id":{raw},"result":{{}}}}"#);
            assert_eq!(out, expected);
        }
        // Beyond u64 an integer id cannot be echoed exactly, so it is refused.
        assert_eq!(
            invalid(r#"{"jsonrpc":"2.0","id":18446744073709551616,"method":"x"}"#).id,
            None
        );
    }

    #[test]
    fn batches() {
        let Ok(Incoming::Batch(items)) =
            parse(br#"[{"jsonrpc":"2.0","id":1,"method":"a"}, 5, {"jsonrpc":"2.0","method":"n"}]"#)
        else {
            panic!()
        };
        assert_eq!(items.len(), 3);
        assert!(matches!(items[0], Ok(Message::Request(_))));
        assert!(matches!(&items[1], Err(inv) if inv.id.is_none()));
        assert!(matches!(items[2], Ok(Message::Notification(_))));
        let empty = parse(b" [ ] ").unwrap_err();
        assert_eq!(empty.to_error_object().code, ErrorCode::INVALID_REQUEST);
    }

    fn parse_error_text(input: &[u8]) -> String {
        match parse(input) {
            Err(FrameError::Parse(text)) => text,
            other => panic!(
                "expected -32700 for {}, got {other:?}",
                input.escape_ascii()
            ),
        }
    }

    #[test]
    fn invalid_responses_are_marked_so_they_get_no_reply() {
        for input in [
            r#"{"jsonrpc":"2.0","id":5,"error":"x"}"#,
            r#"{"jsonrpc":"2.0","id":5,"result":{},"error":{"code":1,"message":"m"}}"#,
            r#"{"jsonrpc":"2.0","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":null,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"result":{}}"#,
            r#"{"jsonrpc":"1.0","id":5,"result":{}}"#,
            r#"{"id":5,"error":{"code":1,"message":"m"}}"#,
            r#"{"jsonrpc":"2.0","id":5,"result":{},"result":{}}"#,
            // Refused before it is read whole; still recognised as a response.
            r#"{"jsonrpc":"2.0","id":5,"id":6,"result":{}}"#,
        ] {
            let Err(e) = parse(input.as_bytes()) else {
                panic!("{input} parsed")
            };
            assert!(e.is_response(), "{input}: {e:?}");
            // What it was is still said, for logs.
            assert_eq!(e.to_error_object().code, ErrorCode::INVALID_REQUEST);
        }
        // Kept: the id, for logs.
        assert_eq!(
            invalid(r#"{"jsonrpc":"2.0","id":5,"error":"x"}"#).id,
            Some(5.into())
        );
        // Requests and notifications, however broken, are answered.
        for input in [
            r#"{"jsonrpc":"2.0","id":5,"method":"x","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":5,"method":5,"error":{}}"#,
            r#"{"jsonrpc":"2.0","id":5}"#,
            r#"{"jsonrpc":"2.0","id":5,"id":6,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":5,"method":"x","method":"y"}"#,
            "5",
        ] {
            let Err(e) = parse(input.as_bytes()) else {
                panic!("{input} parsed")
            };
            assert!(!e.is_response(), "{input}: {e:?}");
        }
        // In a batch too.
        let Ok(Incoming::Batch(items)) =
            parse(br#"[{"jsonrpc":"2.0","id":5,"error":"x"},{"jsonrpc":"2.0","id":6}]"#)
        else {
            panic!()
        };
        assert!(matches!(&items[0], Err(inv) if inv.is_response));
        assert!(matches!(&items[1], Err(inv) if !inv.is_response));
    }

    #[test]
    fn duplicate_members_keep_the_id() {
        let inv = invalid(r#"{"jsonrpc":"2.0","id":5,"method":"ping","method":"nope"}"#);
        assert_eq!(inv.id, Some(5.into()));
        assert_eq!(inv.reason, r#"duplicate member "method""#);
        let inv = invalid(
            r#"{"jsonrpc":"2.0","params":{},"id":"a","method":"x","params":[],"jsonrpc":"2.0","params":1}"#,
        );
        assert_eq!(inv.id, Some("a".into()));
        assert_eq!(inv.reason, r#"duplicate members "params", "jsonrpc""#);
        // A duplicated "id" leaves no id to trust; serde's text and position are kept.
        let inv = invalid(r#"{"jsonrpc":"2.0","id":5,"id":6,"method":"ping"}"#);
        assert_eq!(inv.id, None);
        assert_eq!(inv.reason, "duplicate field `id` at line 1 column 28");
        // Duplicated unknown members are ignored; so are unknown members of any depth.
        let deep = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
        let input = format!(r#"{{"x":1,"x":{deep},"jsonrpc":"2.0","id":1,"method":"ping"}}"#);
        assert!(matches!(
            parse(input.as_bytes()),
            Ok(Incoming::Single(Message::Request(_)))
        ));
        // An escaped member name is still that member.
        let inv = invalid(r#"{"jsonrpc":"2.0","id":7,"method":"a","meth\u006fd":"b"}"#);
        assert_eq!(
            (inv.id, inv.reason.as_str()),
            (Some(7.into()), r#"duplicate member "method""#)
        );
    }

    #[test]
    fn only_objects_are_messages() {
        let not_object = "a message must be a JSON object";
        for input in ["5", r#""str""#, "true", "null"] {
            assert_eq!(invalid(input).reason, not_object, "{input}");
        }
        // A batch member that is an array is not read positionally.
        let Ok(Incoming::Batch(items)) =
            parse(br#"[["2.0",5,"ping"],5,{"jsonrpc":"2.0","method":"n"}]"#)
        else {
            panic!()
        };
        assert_eq!(items.len(), 3);
        for item in &items[..2] {
            assert!(
                matches!(item, Err(inv) if inv.id.is_none() && inv.reason == not_object),
                "{item:?}"
            );
        }
        assert!(matches!(items[2], Ok(Message::Notification(_))));
    }

    #[test]
    fn ids_beyond_64_bits_are_out_of_range_not_floats() {
        for id in [
            "18446744073709551616",
            "-9223372036854775809",
            "123456789012345678901234567890",
            "-123456789012345678901234567890",
        ] {
            let inv = invalid(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"x"}}"#));
            assert_eq!(inv.id, None);
            assert_eq!(inv.reason, crate::id::ID_OUT_OF_RANGE, "{id}");
            assert!(!inv.reason.contains("e+"), "{}", inv.reason);
        }
        // The edges of the range are kept exactly.
        for id in ["-9223372036854775808", "18446744073709551615"] {
            let input = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"x"}}"#);
            let Ok(Incoming::Single(Message::Request(r))) = parse(input.as_bytes()) else {
                panic!("{id}")
            };
            assert_eq!(r.id.to_string(), id);
        }
        // Fractions are still "got the number".
        for (id, shown) in [("1.5", "1.5"), ("5.0", "5.0"), ("-0.5", "-0.5")] {
            let inv = invalid(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"x"}}"#));
            assert_eq!(
                inv.reason,
                format!("\"id\" must be a string or an integer, got the number {shown}")
            );
        }
    }

    #[test]
    fn lone_surrogates_are_named() {
        // A lone high surrogate, at the end of a string or before another escape.
        for input in [
            &br#"{"jsonrpc":"2.0","id":5,"method":"\ud800"}"#[..],
            br#"{"jsonrpc":"2.0","id":5,"method":"\ud800\n"}"#,
            br#"{"jsonrpc":"2.0","id":5,"method":"\ud800\u0041"}"#,
            br#"{"jsonrpc":"2.0","id":5,"method":"\udfff"}"#,
            br#"{"jsonrpc":"2.0","id":5,"method":"x","params":{"a":"\uDC00x"}}"#,
        ] {
            let text = parse_error_text(input);
            assert!(
                text.starts_with("lone UTF-16 surrogate in a \\u escape at line 1 column "),
                "{}: {text}",
                input.escape_ascii()
            );
            assert!(!text.contains("leading"), "{text}");
        }
        // The position is serde_json's.
        assert_eq!(
            parse_error_text(br#"{"jsonrpc":"2.0","id":5,"method":"\ud800"}"#),
            "lone UTF-16 surrogate in a \\u escape at line 1 column 41 (JSON text must be valid Unicode)"
        );
        // Other escape errors keep serde_json's wording.
        for input in [
            &br#"{"method":"\u12"}"#[..],
            br#"{"method":"\uZZZZ"}"#,
            br#"{"method":"\q"}"#,
        ] {
            let text = parse_error_text(input);
            assert!(
                !text.contains("surrogate"),
                "{}: {text}",
                input.escape_ascii()
            );
        }
        // A valid pair is fine.
        assert!(parse(br#"{"jsonrpc":"2.0","id":5,"method":"\ud83d\ude00"}"#).is_ok());
    }

    #[test]
    fn null_params_mean_absent() {
        let Ok(Incoming::Single(Message::Request(r))) =
            parse(br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":null}"#)
        else {
            panic!()
        };
        assert_eq!(r.params, None);
    }
}

#[cfg(test)]
mod fast_path_tests {
    use super::*;
    use crate::scan::MAX_DEPTH;

    fn fast(text: &str) -> Option<Message> {
        scanned::<Value>(text)
    }

    /// What the fast path reads is what serde_json's path reads.
    fn reads(text: &str) -> Message {
        let ours = fast(text).unwrap_or_else(|| panic!("the fast path gave up on {text}"));
        match parse_with_serde::<Value>(text.as_bytes()) {
            Ok(Incoming::Single(theirs)) => assert_eq!(ours, theirs, "{text}"),
            other => panic!("{text}: serde_json's path gave {other:?}"),
        }
        ours
    }

    #[test]
    fn reads_requests_and_notifications_as_sdks_write_them() {
        let m = reads(
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}"#,
        );
        let Message::Request(r) = m else {
            panic!("{m:?}")
        };
        assert_eq!(r.id, RequestId::from(7));
        assert_eq!(r.method, "tools/call");
        assert_eq!(
            r.params,
            Some(serde_json::json!({"name": "echo", "arguments": {"text": "hi"}}))
        );
        // Any member order, whitespace between tokens, string ids, no params, null params.
        reads("\r\n {\t\"method\" : \"ping\" ,\n\"id\":\"a-1\", \"jsonrpc\":\"2.0\"} \n");
        reads(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        reads(r#"{"jsonrpc":"2.0","method":"m","params":null}"#);
        reads(r#"{"params":[1,-2,true,false,null,[],{}],"jsonrpc":"2.0","method":"m"}"#);
        reads(r#"{"jsonrpc":"2.0","id":-999999999999999999,"method":"m"}"#);
        reads(r#"{"jsonrpc":"2.0","id":0,"method":"m","params":{"a":{"b":[{"c":"d"}]}}}"#);
        // A repeated member inside params keeps the last value, as in a `Value`.
        reads(r#"{"jsonrpc":"2.0","method":"m","params":{"a":1,"a":2}}"#);
    }

    #[test]
    fn unescapes_every_escape_as_serde_json_does() {
        let m = reads(
            r#"{"jsonrpc":"2.0","id":"\"\\\/\b\f\n\r\t\u00e9\u00E9\u0000\uD83E\uDD80","method":"m\u0031"}"#,
        );
        let Message::Request(r) = m else {
            panic!("{m:?}")
        };
        assert_eq!(r.id.as_str(), Some("\"\\/\u{8}\u{c}\n\r\té\u{e9}\0🦀"));
        assert_eq!(r.method, "m1");
        // Escaped member names and values are read too.
        reads(r#"{"\u006asonrpc":"2\u002e0","method":"m","params":{"\"k\"":"\u2028"}}"#);
        // Long strings: across the reader's 8- and 32-byte steps, with escapes anywhere.
        for at in [0, 7, 8, 9, 31, 32, 33, 40, 63, 64, 65, 100] {
            let mut text = "x".repeat(120);
            text.insert_str(at, r"\n");
            reads(&format!(
                r#"{{"jsonrpc":"2.0","method":"m","params":{{"t":"{text}","u":"é{text}"}}}}"#
            ));
        }
    }

    #[test]
    fn leaves_everything_else_to_serde_json() {
        let cases = [
            // Not what it reads: numbers it cannot keep exactly, and ids serde_json refuses.
            r#"{"jsonrpc":"2.0","id":1.0,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1e3,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1E3,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":-0,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1234567890123456789,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","method":"m","params":{"x":0.5}}"#,
            // Not a request or notification, or not a valid one.
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1}"#,
            r#"{"jsonrpc":"1.0","method":"m"}"#,
            r#"{"method":"m"}"#,
            r#"{"jsonrpc":"2.0","method":5}"#,
            r#"{"jsonrpc":"2.0","method":"m","params":"p"}"#,
            r#"{"jsonrpc":"2.0","method":"m","x":1}"#,
            // Repeated members.
            r#"{"jsonrpc":"2.0","method":"m","method":"n"}"#,
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","jsonrpc":"2.0","method":"m"}"#,
            r#"{"jsonrpc":"2.0","method":"m","params":{},"params":{}}"#,
            // Not JSON.
            r#"{"jsonrpc":"2.0","method":"m"} x"#,
            r#"{"jsonrpc":"2.0","method":"m",}"#,
            r#"{"jsonrpc":"2.0","method":"m""#,
            "{\"jsonrpc\":\"2.0\",\"method\":\"a\tb\"}",
            "\u{c}{\"jsonrpc\":\"2.0\",\"method\":\"m\"}",
            r#"{"jsonrpc":"2.0","method":"\ud800"}"#,
            r#"{"jsonrpc":"2.0","method":"\udc00"}"#,
            r#"{"jsonrpc":"2.0","method":"\ud800\u0041"}"#,
            r#"{"jsonrpc":"2.0","method":"\u12"}"#,
            r#"{"jsonrpc":"2.0","method":"\x"}"#,
            r#"{"jsonrpc":"2.0","method":"m","params":[007]}"#,
            r#"{"jsonrpc":"2.0","method":"m","params":[nul]}"#,
            r#"{"jsonrpc":"2.0","method":"m","params":[1,]}"#,
        ];
        for text in cases {
            assert_eq!(fast(text), None, "{text}");
        }
        // Nesting: 64 levels are read; deeper is serde_json's (its own limit is 128).
        let nested = |depth: usize| {
            format!(
                r#"{{"jsonrpc":"2.0","method":"m","params":{}{}}}"#,
                "[".repeat(depth - 1),
                "]".repeat(depth - 1)
            )
        };
        reads(&nested(MAX_DEPTH as usize));
        assert_eq!(fast(&nested(MAX_DEPTH as usize + 1)), None);
    }
}
