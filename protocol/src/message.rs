//! The JSON-RPC 2.0 message model: requests, notifications, responses, and what one frame
//! held. It knows nothing of MCP's methods; [`crate::parse`] builds these from bytes.

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use serde_json::Value;

use crate::error::{ErrorObject, InvalidMessage};
use crate::id::RequestId;

/// A request: it has an id and expects exactly one response.
///
/// `P` is how the params are kept: a `Value` tree unless a parser was asked for another form
/// ([`crate::parse_as`], [`crate::Params`]).
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
