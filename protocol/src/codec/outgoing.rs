//! What a server or client writes: one message, a batch, or a typed tool result that the
//! codec writes without building a `Value` tree.

use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::id::RequestId;
use crate::mcp::CallToolResult;
use crate::message::{Message, Response};

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
