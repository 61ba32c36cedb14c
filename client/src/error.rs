//! The client's error enum and why a connection closed.

use std::fmt;
use std::process::ExitStatus;
use std::time::Duration;

use mcp_protocol::{ErrorObject, RequestId};

use crate::state::State;

/// Everything a client call can fail with. JSON-RPC errors from the server are
/// [`ClientError::Server`]; everything else is the connection's or the caller's.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ClientError {
    #[error("cannot start MCP server `{program}`: {reason}")]
    Spawn { program: String, reason: String },
    /// The call is not allowed in the connection's current state (lifecycle gating).
    #[error("cannot {operation} in state {state:?}: {hint}")]
    InvalidState {
        operation: String,
        state: State,
        hint: &'static str,
    },
    /// `initialize` (or the `server/discover` probe of `connect()`) is already on the wire.
    #[error("the handshake (connect or initialize) is already in progress on this connection; await the first call")]
    InitializeInProgress,
    #[error("the server answered protocol version {offered:?}, which this client does not support (it supports {supported}); the connection was closed")]
    UnsupportedVersion { offered: String, supported: String },
    /// The server is modern (it answered the `server/discover` probe with a `DiscoverResult`
    /// or `UnsupportedProtocolVersionError`) but supports none of this client's modern
    /// versions. `connect()` does not fall back to `initialize` then (`stdio.mdx`).
    #[error("the server speaks the modern MCP era but not {requested}: it supports [{}], this client's modern versions are [{}]; not falling back to initialize (ClientOptions::era = EraChoice::Legacy forces the handshake)", supported.join(", "), ours.join(", "))]
    UnsupportedModernVersion {
        /// The version the probe asked for.
        requested: String,
        /// The versions the server listed.
        supported: Vec<String>,
        /// The modern versions this client speaks.
        ours: Vec<String>,
    },
    /// `EraChoice::Modern`, and the server did not answer the `server/discover` probe as a
    /// modern server: it is probably legacy.
    #[error("the server is not a modern (2026-07-28) MCP server: {reason}; it may be a legacy server (EraChoice::Auto or EraChoice::Legacy connects to those)")]
    NotModern { reason: String },
    /// A modern result whose `resultType` is not `"complete"`, such as `"input_required"`
    /// (multi round-trip requests), which this client does not support.
    #[error("{method} returned resultType {result_type:?}: multi round-trip results (input_required) are not supported by this client")]
    UnsupportedResultType { method: String, result_type: String },
    #[error("{method} (id {id}) got no reply within {after:?}; notifications/cancelled was sent")]
    Timeout {
        method: String,
        id: RequestId,
        after: Duration,
    },
    /// The server answered with a JSON-RPC error.
    #[error("{method} failed: {error}")]
    Server { method: String, error: ErrorObject },
    /// The server's result does not have the shape the method requires.
    #[error("{method} returned an invalid result: {reason}")]
    InvalidResult { method: String, reason: String },
    #[error("invalid arguments: {0}")]
    InvalidArguments(String),
    /// Streamable HTTP (legacy era): the server answered 404 to a request carrying the
    /// session id, so the session ended. The connection is back in state `new` with no
    /// session; [`Client::connect`](crate::Client::connect) (or `initialize`) starts a new
    /// one.
    #[error("{method}: the server ended HTTP session {session_id:?} (404); call connect() to start a new session")]
    SessionExpired { method: String, session_id: String },
    /// Streamable HTTP: the server answered this request's POST with an HTTP error status.
    /// `error` is the JSON-RPC error the body carried (with or without an id), if any; `body`
    /// is the start of the body otherwise.
    #[error("{method} got HTTP {status}{}", http_detail(error.as_ref(), body))]
    Http {
        method: String,
        status: u16,
        error: Option<ErrorObject>,
        body: String,
    },
    /// Streamable HTTP: the exchange for this request failed without an HTTP status to show
    /// (connecting, reading, a reply over the size limit, a stream that ended without the
    /// reply). The connection itself lives on.
    #[error("{method}: HTTP transport failed: {reason}")]
    Transport { method: String, reason: String },
    #[error("MCP connection closed: {0}")]
    Closed(ClosedReason),
}

fn http_detail(error: Option<&ErrorObject>, body: &str) -> String {
    match error {
        Some(e) => format!(": {e}"),
        None if body.is_empty() => String::new(),
        None => format!(": {body}"),
    }
}

/// Why a connection closed, with what the server left behind.
#[derive(Debug, Clone, PartialEq)]
pub struct ClosedReason {
    pub cause: CloseCause,
    /// The server's exit status, when it exited while the client watched.
    pub status: Option<ExitStatus>,
    /// The server's last stderr lines (when stderr is captured), oldest first.
    pub stderr_tail: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CloseCause {
    /// `close()` was called (or the initialize result forced it).
    ClientClosed,
    /// The server closed its stdout: end of input.
    ServerClosedOutput,
    /// The server process exited.
    ServerExited,
    /// Reading the server's output failed.
    ReadFailed(String),
    /// Writing to the server's input failed (it closed its stdin or exited).
    WriteFailed(String),
}

impl fmt::Display for ClosedReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.cause {
            CloseCause::ClientClosed => f.write_str("closed by the client")?,
            CloseCause::ServerClosedOutput => f.write_str("the server closed its stdout")?,
            CloseCause::ServerExited => f.write_str("the server exited")?,
            CloseCause::ReadFailed(e) => write!(f, "reading from the server failed: {e}")?,
            CloseCause::WriteFailed(e) => write!(f, "writing to the server failed: {e}")?,
        }
        if let Some(status) = self.status {
            write!(f, " ({status})")?;
        }
        if !self.stderr_tail.is_empty() {
            f.write_str("; last stderr lines:")?;
            for line in &self.stderr_tail {
                write!(f, "\n  {line}")?;
            }
        }
        Ok(())
    }
}
