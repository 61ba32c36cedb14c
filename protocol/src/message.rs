//! The JSON-RPC 2.0 message model and its validating parser.
//!
//! MCP (`basic/index.mdx`, every version) narrows JSON-RPC 2.0: request ids are strings or
//! integers and never `null`; notifications carry no id. [`parse`] first decodes into a flat
//! record with every member optional, then validates it, so each shape problem gets an exact
//! -32600 reason and the id is kept whenever it is readable.

use std::fmt;

use serde::de::{Deserializer, Error as _, IgnoredAny, MapAccess, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{ErrorObject, FrameError, InvalidMessage};
use crate::mcp::CallToolResult;
use crate::scan::Scanner;

/// A request id: a string or an integer (MCP forbids `null`; JSON-RPC discourages fractions).
///
/// Integers are kept exactly across the whole `i64` and `u64` range, so an id such as
/// `18446744073709551615` is echoed byte for byte. Integers outside that range are refused.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct RequestId(IdRepr);

#[derive(Clone, PartialEq, Eq, Hash)]
enum IdRepr {
    Int(i64),
    /// Only values above `i64::MAX`, so every integer has one representation.
    BigUint(u64),
    Str(Box<str>),
}

impl RequestId {
    /// Reads an id from JSON, or says why it is not a valid MCP request id.
    pub fn from_value(value: &Value) -> Result<RequestId, String> {
        match value {
            Value::String(s) => Ok(RequestId(IdRepr::Str(s.as_str().into()))),
            Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    Ok(RequestId(IdRepr::Int(i)))
                } else if let Some(u) = n.as_u64() {
                    Ok(RequestId(IdRepr::BigUint(u)))
                } else if n
                    .as_f64()
                    .is_some_and(|f| f.fract() == 0.0 && f.abs() >= TWO_POW_63)
                {
                    // An integer beyond 64 bits reaches here as an f64 (serde_json keeps no
                    // wider integer): do not show that float, which is not what was sent.
                    Err(ID_OUT_OF_RANGE.to_owned())
                } else {
                    Err(format!(
                        "\"id\" must be a string or an integer, got the number {n}"
                    ))
                }
            }
            Value::Null => Err("\"id\" must not be null in MCP".to_owned()),
            other => Err(format!(
                "\"id\" must be a string or an integer, got {}",
                json_type(other)
            )),
        }
    }

    /// The id as JSON.
    pub fn to_value(&self) -> Value {
        match &self.0 {
            IdRepr::Int(i) => Value::from(*i),
            IdRepr::BigUint(u) => Value::from(*u),
            IdRepr::Str(s) => Value::from(&**s),
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match &self.0 {
            IdRepr::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_i64(&self) -> Option<i64> {
        match &self.0 {
            IdRepr::Int(i) => Some(*i),
            _ => None,
        }
    }
}

/// 2^63: every integral f64 of at least this magnitude came from an integer literal outside
/// `i64`/`u64` (those are kept exactly), or from float syntax such as `1e19`.
const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;

const ID_OUT_OF_RANGE: &str = "\"id\" is an integer out of range: integer ids must be written as plain integers that fit in 64 bits (-2^63 to 2^64-1)";

impl From<i64> for RequestId {
    fn from(i: i64) -> Self {
        RequestId(IdRepr::Int(i))
    }
}

impl From<i32> for RequestId {
    fn from(i: i32) -> Self {
        RequestId(IdRepr::Int(i.into()))
    }
}

impl From<u64> for RequestId {
    fn from(u: u64) -> Self {
        match i64::try_from(u) {
            Ok(i) => RequestId(IdRepr::Int(i)),
            Err(_) => RequestId(IdRepr::BigUint(u)),
        }
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        RequestId(IdRepr::Str(s.into()))
    }
}

impl From<String> for RequestId {
    fn from(s: String) -> Self {
        RequestId(IdRepr::Str(s.into()))
    }
}

/// Strings print quoted, so `7` and `"7"` look different in logs.
impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            IdRepr::Int(i) => write!(f, "{i}"),
            IdRepr::BigUint(u) => write!(f, "{u}"),
            IdRepr::Str(s) => write!(f, "{s:?}"),
        }
    }
}

impl fmt::Debug for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RequestId({self})")
    }
}

impl Serialize for RequestId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            IdRepr::Int(i) => s.serialize_i64(*i),
            IdRepr::BigUint(u) => s.serialize_u64(*u),
            IdRepr::Str(v) => s.serialize_str(v),
        }
    }
}

impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        RequestId::from_value(&v).map_err(D::Error::custom)
    }
}

/// A request: it has an id and expects exactly one response.
///
/// `P` is how the params are kept: a `Value` tree unless a parser was asked for another form
/// ([`parse_as`], [`Params`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Request<P = Value> {
    pub id: RequestId,
    pub method: String,
    /// `None` when absent (or `null`); otherwise an object or an array.
    pub params: Option<P>,
}

/// A notification: no id, and the receiver MUST NOT reply.
#[derive(Debug, Clone, PartialEq)]
pub struct Notification<P = Value> {
    pub method: String,
    pub params: Option<P>,
}

/// A response: `result` xor `error`, made unrepresentable otherwise by the `Result`.
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    /// `None` only for an error about a message whose id could not be read; it is written as
    /// `"id": null`, as JSON-RPC 2.0 §5 asks.
    pub id: Option<RequestId>,
    pub outcome: Result<Value, ErrorObject>,
}

impl Response {
    pub fn success(id: RequestId, result: Value) -> Self {
        Response {
            id: Some(id),
            outcome: Ok(result),
        }
    }

    pub fn error(id: Option<RequestId>, error: ErrorObject) -> Self {
        Response {
            id,
            outcome: Err(error),
        }
    }
}

/// One JSON-RPC message.
#[derive(Debug, Clone, PartialEq)]
pub enum Message<P = Value> {
    Request(Request<P>),
    Notification(Notification<P>),
    Response(Response),
}

impl<P> From<Request<P>> for Message<P> {
    fn from(r: Request<P>) -> Self {
        Message::Request(r)
    }
}

impl<P> From<Notification<P>> for Message<P> {
    fn from(n: Notification<P>) -> Self {
        Message::Notification(n)
    }
}

impl<P> From<Response> for Message<P> {
    fn from(r: Response) -> Self {
        Message::Response(r)
    }
}

impl<P: Serialize> Serialize for Message<P> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("jsonrpc", "2.0")?;
        match self {
            Message::Request(r) => {
                map.serialize_entry("id", &r.id)?;
                map.serialize_entry("method", &r.method)?;
                if let Some(p) = &r.params {
                    map.serialize_entry("params", p)?;
                }
            }
            Message::Notification(n) => {
                map.serialize_entry("method", &n.method)?;
                if let Some(p) = &n.params {
                    map.serialize_entry("params", p)?;
                }
            }
            Message::Response(r) => {
                map.serialize_entry("id", &r.id)?;
                match &r.outcome {
                    Ok(result) => map.serialize_entry("result", result)?,
                    Err(error) => map.serialize_entry("error", error)?,
                }
            }
        }
        map.end()
    }
}

/// What one frame held: a message, or a batch (a JSON array, JSON-RPC 2.0 §6).
///
/// Batch members are validated one by one, so a bad member gets its own -32600.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming<P = Value> {
    Single(Message<P>),
    Batch(Vec<Result<Message<P>, InvalidMessage>>),
}

/// What one frame carries on the way out.
#[derive(Debug, Clone, PartialEq)]
pub enum Outgoing {
    Single(Message),
    Batch(Vec<Message>),
    /// A successful `tools/call` reply in its typed form. It is written as exactly the bytes
    /// of `Response::success(id, result.into_value())`, without building and dropping that
    /// `Value` tree: about ten allocations fewer on a server's commonest reply (BENCHMARKS.md).
    ToolResult(RequestId, CallToolResult),
}

impl Outgoing {
    /// The messages this frame carries; a typed tool result becomes its [`Response`].
    pub fn into_messages(self) -> Vec<Message> {
        match self {
            Outgoing::Single(m) => vec![m],
            Outgoing::Batch(ms) => ms,
            Outgoing::ToolResult(id, result) => {
                vec![Message::Response(Response::success(
                    id,
                    result.into_value(),
                ))]
            }
        }
    }
}

impl From<Message> for Outgoing {
    fn from(m: Message) -> Self {
        Outgoing::Single(m)
    }
}

impl From<Response> for Outgoing {
    fn from(r: Response) -> Self {
        Outgoing::Single(Message::Response(r))
    }
}

impl Serialize for Outgoing {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Outgoing::Single(m) => m.serialize(s),
            Outgoing::Batch(ms) => ms.serialize(s),
            // Off the hot path (the codec writes it directly): the `Value` form's bytes.
            Outgoing::ToolResult(id, result) => Message::<Value>::Response(Response::success(
                id.clone(),
                result.clone().into_value(),
            ))
            .serialize(s),
        }
    }
}

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

/// How a parser keeps a message's params ([`parse_as`]).
///
/// `Value` (a tree) is the default. A server can read the params of a method it serves often
/// straight into a form of its own in the same pass, chosen by the method when `"method"`
/// comes before `"params"`, as every SDK writes them (`Value` otherwise).
pub trait Params: Sized {
    /// Reads the `params` member's value; `method` is the message's `"method"` if it came
    /// first. Must accept every JSON value that a `Value` accepts: a wrong shape is reported
    /// from [`Params::json_type`] by the parser, or by whoever handles the method.
    fn read<'de, A: MapAccess<'de>>(method: Option<&Value>, map: &mut A) -> Result<Self, A::Error>;

    /// Reads an object or array params value on [`parse_as`]'s fast path ([`crate::scan`]),
    /// with the same result as [`Params::read`]; `None` leaves the frame to the serde path.
    /// The default always does.
    fn scan(method: Option<&str>, scanner: &mut Scanner<'_>) -> Option<Self> {
        let _ = (method, scanner);
        None
    }

    /// The JSON type read: params must be an object, an array or null.
    fn json_type(&self) -> ParamsType;
}

/// The JSON type of a params member, as the parser's shape checks need it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamsType {
    Null,
    Object,
    Array,
    /// Any other, named for an error message ("a string", …).
    Other(&'static str),
}

impl Params for Value {
    fn read<'de, A: MapAccess<'de>>(
        _method: Option<&Value>,
        map: &mut A,
    ) -> Result<Self, A::Error> {
        map.next_value()
    }

    fn scan(_method: Option<&str>, scanner: &mut Scanner<'_>) -> Option<Self> {
        scanner.value()
    }

    fn json_type(&self) -> ParamsType {
        match self {
            Value::Null => ParamsType::Null,
            Value::Object(_) => ParamsType::Object,
            Value::Array(_) => ParamsType::Array,
            other => ParamsType::Other(json_type(other)),
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
/// Requests and notifications as SDKs write them are read on a fast path ([`crate::scan`]);
/// anything it does not read is left to serde_json ([`parse_with_serde`]), with the same
/// result.
pub fn parse_as<P: Params>(bytes: &[u8]) -> Result<Incoming<P>, FrameError> {
    parse_text(bytes, true)
}

/// [`parse_as`] without its fast path: every frame read by serde_json. The reference that
/// tests and the fuzzer hold the fast path to.
pub fn parse_with_serde<P: Params>(bytes: &[u8]) -> Result<Incoming<P>, FrameError> {
    parse_text(bytes, false)
}

fn parse_text<P: Params>(bytes: &[u8], fast: bool) -> Result<Incoming<P>, FrameError> {
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
        if let Some(message) = crate::scan::message(text) {
            return Ok(Incoming::Single(message));
        }
    }
    if first == Some(b'[') {
        let items: Vec<Value> = serde_json::from_str(text).map_err(|e| classify(e, text))?;
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

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A value for an error message, cut short so a huge input cannot make a huge reply.
fn short_json(v: &Value) -> String {
    let mut s = v.to_string();
    if s.len() > 64 {
        let mut cut = 61;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push_str("...");
    }
    s
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
            assert_eq!(inv.reason, ID_OUT_OF_RANGE, "{id}");
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
