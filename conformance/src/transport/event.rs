//! What a connection hands a probe, whatever the transport: a frame, bytes that are not one,
//! or the end.

use bytes::Bytes;
use mcp_protocol::FrameError;

/// What the server's stdout (or an HTTP reply) produced.
#[derive(Debug, Clone, PartialEq)]
pub enum RawEvent {
    /// One frame's body, exactly as sent (without framing).
    Frame(Bytes),
    /// Bytes that are not a valid frame in the chosen framing (or over the size limit).
    Invalid(FrameError),
    /// stdout ended.
    Eof,
    /// Reading stdout failed.
    ReadError(String),
}
