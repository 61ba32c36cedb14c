//! The JSON-RPC 2.0 message model and its validating parser.
//!
//! MCP (`basic/index.mdx`, every version) narrows JSON-RPC 2.0: request ids are strings or
//! integers and never `null`; notifications carry no id. [`parse`] first decodes into a flat
//! record with every member optional, then validates it, so each shape problem gets an exact
//! -32600 reason and the id is kept whenever it is readable.

use std::fmt;

use serde::de::{Deserializer, Error as _};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{ErrorObject, FrameError, InvalidMessage};

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
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub id: RequestId,
    pub method: String,
    /// `None` when absent (or `null`); otherwise an object or an array.
    pub params: Option<Value>,
}

/// A notification: no id, and the receiver MUST NOT reply.
#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    pub method: String,
    pub params: Option<Value>,
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
pub enum Message {
    Request(Request),
    Notification(Notification),
    Response(Response),
}

impl From<Request> for Message {
    fn from(r: Request) -> Self {
        Message::Request(r)
    }
}

impl From<Notification> for Message {
    fn from(n: Notification) -> Self {
        Message::Notification(n)
    }
}

impl From<Response> for Message {
    fn from(r: Response) -> Self {
        Message::Response(r)
    }
}

impl Serialize for Message {
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
pub enum Incoming {
    Single(Message),
    Batch(Vec<Result<Message, InvalidMessage>>),
}

/// What one frame carries on the way out.
#[derive(Debug, Clone, PartialEq)]
pub enum Outgoing {
    Single(Message),
    Batch(Vec<Message>),
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
        }
    }
}

/// Every member optional, so shape problems are found by [`RawMessage::validate`] with exact
/// reasons instead of by serde with generic ones. `Some(Value::Null)` means "present and null".
#[derive(Deserialize)]
struct RawMessage {
    #[serde(default, deserialize_with = "present")]
    jsonrpc: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    id: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    method: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    params: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    result: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    error: Option<Value>,
}

/// Tells a member that is present and `null` from one that is absent.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

impl RawMessage {
    fn validate(self) -> Result<Message, InvalidMessage> {
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
                        return Err(InvalidMessage::new(None, reason));
                    }
                }
            },
        };
        let invalid = |reason: String| InvalidMessage::new(id.clone(), reason);
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
                None | Some(Value::Null) => None,
                Some(p @ (Value::Object(_) | Value::Array(_))) => Some(p),
                Some(other) => {
                    return Err(invalid(format!(
                        "\"params\" must be an object or an array, got {}",
                        json_type(&other)
                    )))
                }
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
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if first == Some(&b'[') {
        let items: Vec<Value> = serde_json::from_slice(bytes).map_err(classify)?;
        if items.is_empty() {
            return Err(FrameError::Invalid(InvalidMessage::new(
                None,
                "empty batch: a batch must contain at least one message",
            )));
        }
        let batch = items
            .into_iter()
            .map(|item| match serde_json::from_value::<RawMessage>(item) {
                Ok(raw) => raw.validate(),
                Err(e) => Err(InvalidMessage::new(None, shape_reason(&e))),
            })
            .collect();
        return Ok(Incoming::Batch(batch));
    }
    let raw: RawMessage = serde_json::from_slice(bytes).map_err(classify)?;
    raw.validate()
        .map(Incoming::Single)
        .map_err(FrameError::Invalid)
}

/// Syntax and EOF errors mean "not JSON"; data errors mean "JSON of the wrong shape".
fn classify(e: serde_json::Error) -> FrameError {
    use serde_json::error::Category;
    match e.classify() {
        Category::Data => FrameError::Invalid(InvalidMessage::new(None, shape_reason(&e))),
        Category::Syntax | Category::Eof | Category::Io => FrameError::Parse(e.to_string()),
    }
}

fn shape_reason(e: &serde_json::Error) -> String {
    let text = e.to_string();
    if text.contains("expected struct RawMessage") {
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
            .contains("duplicate field"));
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
            let out = serde_json::to_string(&Message::Response(Response::success(
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
