//! Error codes, error objects, and the recoverable per-frame error.
//!
//! JSON-RPC 2.0 §5.1 defines the standard codes; MCP reserves nothing else that this crate
//! needs. [`FrameError::to_error_object`] is the one place where a framing or parsing problem
//! becomes a wire error.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::id::RequestId;

/// A JSON-RPC error code. Open newtype: servers may use codes beyond the standard ones.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ErrorCode(pub i64);

impl ErrorCode {
    /// Invalid JSON was received (JSON-RPC 2.0 §5.1).
    pub const PARSE_ERROR: ErrorCode = ErrorCode(-32700);
    /// The JSON sent is not a valid Request object.
    pub const INVALID_REQUEST: ErrorCode = ErrorCode(-32600);
    /// The method does not exist or is not available.
    pub const METHOD_NOT_FOUND: ErrorCode = ErrorCode(-32601);
    /// Invalid method parameters (MCP also uses it for an unknown tool).
    pub const INVALID_PARAMS: ErrorCode = ErrorCode(-32602);
    /// Internal JSON-RPC error.
    pub const INTERNAL_ERROR: ErrorCode = ErrorCode(-32603);
}

impl fmt::Debug for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match *self {
            ErrorCode::PARSE_ERROR => "ParseError",
            ErrorCode::INVALID_REQUEST => "InvalidRequest",
            ErrorCode::METHOD_NOT_FOUND => "MethodNotFound",
            ErrorCode::INVALID_PARAMS => "InvalidParams",
            ErrorCode::INTERNAL_ERROR => "InternalError",
            _ => return write!(f, "ErrorCode({})", self.0),
        };
        write!(f, "{name}({})", self.0)
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// The `error` member of a JSON-RPC response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    pub code: ErrorCode,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ErrorObject {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ErrorObject {
            code,
            message: message.into(),
            data: None,
        }
    }

    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }
}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (code {})", self.message, self.code)
    }
}

impl std::error::Error for ErrorObject {}

/// JSON that parsed but is not a valid JSON-RPC 2.0 message (-32600).
///
/// `id` is kept whenever it could be read, so the error response pairs with the request.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{reason}")]
pub struct InvalidMessage {
    pub id: Option<RequestId>,
    pub reason: String,
    /// The message was an attempted *response*: it has no `"method"` but has `"result"` or
    /// `"error"`. JSON-RPC never answers a response, valid or not (its id names one of the
    /// receiver's own requests), so a receiver logs such a message and sends nothing.
    pub is_response: bool,
}

impl InvalidMessage {
    pub fn new(id: Option<RequestId>, reason: impl Into<String>) -> Self {
        InvalidMessage {
            id,
            reason: reason.into(),
            is_response: false,
        }
    }

    /// An invalid attempted response: see [`InvalidMessage::is_response`].
    pub fn response(id: Option<RequestId>, reason: impl Into<String>) -> Self {
        InvalidMessage {
            is_response: true,
            ..InvalidMessage::new(id, reason)
        }
    }
}

/// A problem with one frame. The frame's end is known, so decoding goes on with the next one:
/// these are decoder *items*, never decoder errors (a `FramedRead` stops after an error).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FrameError {
    /// The frame is not JSON (including invalid UTF-8, which RFC 8259 §8.1 forbids).
    #[error("not valid JSON: {0}")]
    Parse(String),
    /// The frame is JSON but not a valid JSON-RPC message.
    #[error("invalid JSON-RPC message: {0}")]
    Invalid(InvalidMessage),
    /// The frame is larger than the configured maximum; it was skipped without being buffered.
    #[error("{}", too_large_text(*.declared, *.max))]
    TooLarge {
        /// The size the frame declared (Content-Length) or was seen to have, if known.
        declared: Option<u64>,
        max: usize,
    },
    /// A batch holds more members than the receiver accepts (JSON-RPC 2.0 §6 sets no bound;
    /// a receiver must, or one frame of `[0,0,…]` asks for millions of replies). Refused as a
    /// whole, with one error and no id.
    #[error("a batch may hold at most {max} messages; this one holds more")]
    BatchTooLong { max: usize },
    /// A Content-Length header block could not be read; input was skipped to the next header.
    #[error("malformed Content-Length header: {0}")]
    Header(String),
    /// The input ended in the middle of a frame.
    #[error("input ended inside a message: {0}")]
    Truncated(String),
    /// Bytes between messages that are not a message. Stray bytes run into the next
    /// `Content-Length` header are always reported; what a lenient reader skips silently (a
    /// blank line, a byte-order mark, an unknown header line) is reported only by a strict codec.
    #[error("not a message: {0}")]
    NotAMessage(String),
}

fn too_large_text(declared: Option<u64>, max: usize) -> String {
    match declared {
        Some(n) => format!("message of {n} bytes exceeds the limit of {max} bytes; it was skipped"),
        None => format!("message exceeds the limit of {max} bytes; it was skipped"),
    }
}

impl FrameError {
    /// The id of the request this frame carried, when it could be read.
    pub fn request_id(&self) -> Option<&RequestId> {
        match self {
            FrameError::Invalid(inv) => inv.id.as_ref(),
            _ => None,
        }
    }

    /// Whether this frame was an invalid *response*, which must get no reply (JSON-RPC 2.0
    /// §5: a response is never answered); [`to_error_object`](Self::to_error_object) still
    /// says what was wrong with it, for logs.
    pub fn is_response(&self) -> bool {
        matches!(self, FrameError::Invalid(inv) if inv.is_response)
    }

    /// The wire error for this frame: the only mapping from framing and parsing problems to
    /// JSON-RPC codes. Unreadable input is a parse error; readable input of the wrong shape or
    /// size is an invalid request.
    pub fn to_error_object(&self) -> ErrorObject {
        match self {
            FrameError::Parse(msg) => {
                ErrorObject::new(ErrorCode::PARSE_ERROR, format!("Parse error: {msg}"))
            }
            FrameError::Header(msg) => ErrorObject::new(
                ErrorCode::PARSE_ERROR,
                format!("Parse error: malformed Content-Length header: {msg}"),
            ),
            FrameError::NotAMessage(msg) => ErrorObject::new(
                ErrorCode::PARSE_ERROR,
                format!("Parse error: not a message: {msg}"),
            ),
            FrameError::Truncated(msg) => ErrorObject::new(
                ErrorCode::PARSE_ERROR,
                format!("Parse error: input ended inside a message: {msg}"),
            ),
            FrameError::Invalid(inv) => ErrorObject::new(
                ErrorCode::INVALID_REQUEST,
                format!("Invalid request: {}", inv.reason),
            ),
            FrameError::BatchTooLong { max } => ErrorObject::new(
                ErrorCode::INVALID_REQUEST,
                format!(
                    "Invalid request: a batch may hold at most {max} messages; this one holds more (send them in smaller batches)"
                ),
            )
            .with_data(serde_json::json!({ "maxBatchLength": max })),
            FrameError::TooLarge { declared, max } => ErrorObject::new(
                ErrorCode::INVALID_REQUEST,
                format!("Invalid request: {}", too_large_text(*declared, *max)),
            )
            .with_data(serde_json::json!({ "maxMessageBytes": max, "declaredBytes": declared })),
        }
    }
}
