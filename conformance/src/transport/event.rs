//! What a connection hands a probe, whatever the transport: a frame, bytes that are not one,
//! an answer that carries no reply, or the end.

use bytes::Bytes;
use mcp_protocol::FrameError;
use serde_json::Value;

/// What the server's stdout (or an HTTP reply) produced.
#[derive(Debug, Clone, PartialEq)]
pub enum RawEvent {
    /// One frame's body, exactly as sent (without framing).
    Frame(Bytes),
    /// Bytes that are not a valid frame in the chosen framing (or over the size limit).
    Invalid(FrameError),
    /// The HTTP response to a request's POST ended without a JSON-RPC response in it (HTTP
    /// only: on stdio a reply is a frame or nothing).
    Unanswered(Unanswered),
    /// stdout ended.
    Eof,
    /// Reading stdout failed.
    ReadError(String),
}

/// The HTTP response to the POST of request `id` ended, and no JSON-RPC response came in it.
#[derive(Debug, Clone, PartialEq)]
pub struct Unanswered {
    /// The id of the request the POST carried.
    pub id: Value,
    pub why: NoResponse,
    /// What came instead, in words: status, media type, a snippet of the body.
    pub seen: String,
}

/// Why the response to a POSTed request carried no JSON-RPC response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoResponse {
    /// An HTTP error status whose body is no JSON-RPC message (`500 text/plain`).
    HttpError,
    /// The reply is a JSON array (a batch) where one response object was due.
    Array,
    /// An SSE stream that ended without the response: events without `data:`, or data that is
    /// not one JSON-RPC message.
    SseStream,
    /// A body that is neither a JSON-RPC message nor an SSE stream (for a success status).
    NotAMessage,
}

/// Is this a JSON-RPC response (not a request or notification)?
pub fn is_response(v: &Value) -> bool {
    v.get("method").is_none() && (v.get("result").is_some() || v.get("error").is_some())
}
