//! JSON-RPC 2.0 and MCP message types, validation, error codes and the stdio framing codec.
//!
//! This crate is pure: it spawns no processes and sets up no logging. It is shared by the
//! `mcp-echo-server` binary, the client library and the conformance harness.
//!
//! * [`message`]: the JSON-RPC 2.0 model ([`Message`], [`RequestId`]) and [`parse`], which tells
//!   apart "not JSON" (-32700), "JSON of the wrong shape" (-32600) and batches.
//! * [`error`]: [`ErrorCode`], [`ErrorObject`] and the per-frame [`FrameError`], mapped to wire
//!   codes in exactly one place ([`FrameError::to_error_object`]).
//! * [`mcp`]: protocol versions, method names and the MCP types an echo server needs.
//! * [`scan`]: [`parse`]'s fast path for requests and notifications, and the [`Scanner`]
//!   that [`Params`] types read their params with on it.
//! * [`codec`]: one tokio-util [`StdioCodec`] for newline-delimited JSON (the spec's stdio
//!   framing), LSP-style `Content-Length` framing, and auto-detection of the two.

pub mod codec;
pub mod error;
mod escape;
pub mod mcp;
pub mod message;
pub mod scan;

pub use crate::codec::{Framing, FramingMode, StdioCodec};
pub use crate::error::{ErrorCode, ErrorObject, FrameError, InvalidMessage};
pub use crate::message::{
    parse, parse_as, parse_with_serde, Incoming, Message, Notification, Outgoing, Params,
    ParamsType, Request, RequestId, Response,
};
pub use crate::scan::Scanner;
