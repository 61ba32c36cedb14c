//! JSON-RPC 2.0 and MCP message types, validation, error codes and the stdio framing codec.
//!
//! This crate is pure: it spawns no processes and sets up no logging. It is shared by the
//! `mcp-echo-server` binary, the client library and the conformance harness.
//!
//! * The JSON-RPC 2.0 model ([`Message`], [`RequestId`], [`Incoming`]) and
//!   [`parse`], which tells apart "not JSON" (-32700), "JSON of the wrong shape" (-32600) and
//!   batches; [`parse_as`] reads params into a [`Params`] form of the caller's own, on a fast
//!   path ([`Scanner`]) for requests as SDKs write them.
//! * [`error`]: [`ErrorCode`], [`ErrorObject`] and the per-frame [`FrameError`], mapped to wire
//!   codes in exactly one place ([`FrameError::to_error_object`]).
//! * [`mcp`]: protocol versions, method names and the MCP types an echo server needs.
//! * [`codec`]: one tokio-util [`StdioCodec`] for newline-delimited JSON (the spec's stdio
//!   framing), LSP-style `Content-Length` framing, and auto-detection of the two; it writes
//!   an [`Outgoing`] frame, which may carry a typed MCP tool result.
//! * [`http`]: Streamable HTTP's header names, media types, mirrored headers, the headers of
//!   each request a client sends, and a bounded `text/event-stream` reader and writer, shared
//!   by the HTTP server, client, harness and bench.
//!
//! Layers flow one way: the JSON-RPC model knows nothing of MCP, [`mcp`] builds on it, and the
//! codec builds on both.

pub mod codec;
pub mod error;
mod escape;
pub mod http;
mod id;
mod json;
pub mod mcp;
mod message;
mod params;
mod parse;
mod scan;

pub use crate::codec::{Framing, FramingMode, Outgoing, StdioCodec};
pub use crate::error::{ErrorCode, ErrorObject, FrameError, InvalidMessage};
pub use crate::id::RequestId;
pub use crate::json::char_prefix;
pub use crate::message::{Incoming, Message, Notification, Request, Response};
pub use crate::params::{Params, ParamsType};
pub use crate::parse::{parse, parse_as, parse_bounded, parse_with_serde};
pub use crate::scan::Scanner;
