//! What calling the server's read-only tools gave, observed once per target and era and judged
//! by the checks of tool results (`tools.call-result-shape`, `tools.structured-content`, ...).
//! The checks decide what to call and how; this only holds what came of it.

use std::time::Duration;

use serde_json::Value;

use crate::probe::ProbeError;

/// The tools listed, and each call made (or not made) to the read-only ones among them.
#[derive(Debug)]
pub struct ToolCalls {
    /// The protocol version the legacy handshake negotiated (`None` in the modern era).
    pub negotiated: Option<String>,
    /// Every tool of every `tools/list` page, or why the list could not be had.
    pub listed: Result<Vec<Value>, Unlisted>,
    /// Why no tool was called at all (tool calls are off, no tool is read-only), if none was.
    pub none_called: Option<String>,
    pub calls: Vec<ToolCall>,
    /// The JSON-RPC requests the server wrote in the process, in short.
    pub server_requests: Vec<String>,
}

/// Why the tools could not be listed, in words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Unlisted(pub String);

/// One read-only tool: the arguments made for it and what calling it gave.
#[derive(Debug)]
pub struct ToolCall {
    pub tool: Value,
    pub name: String,
    pub arguments: Value,
    pub outcome: CallOutcome,
}

/// What came of one call.
#[derive(Debug)]
pub enum CallOutcome {
    /// The whole response object (a result or a JSON-RPC error).
    Reply(Value),
    /// No reply within the tool-call wait (`--tool-timeout`): not judged, no tool is bound in
    /// time by the spec.
    OutlivedWait(Duration),
    /// The probe failed otherwise (the server exited, a reply could not be read).
    Failed(ProbeError),
    /// Not called: no arguments satisfying its `inputSchema` could be made (why).
    NoArguments(String),
    /// Not called: an earlier call outlived its wait or failed, or the calls' time was up.
    NotReached(String),
}
