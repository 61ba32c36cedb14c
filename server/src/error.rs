//! Protocol-level failures of a request, mapped to JSON-RPC codes in one place.
//!
//! A tool that runs and fails is not here: that is a `CallToolResult` with `isError: true`
//! (`server/tools.mdx`, "Error Handling").

use mcp_protocol::mcp::ProtocolVersion;
use mcp_protocol::{ErrorCode, ErrorObject, RequestId};

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ServerError {
    #[error("Method not found: {0}")]
    MethodNotFound(String),
    #[error("Invalid params for {method}: {reason}")]
    InvalidParams { method: String, reason: String },
    /// The wording is the spec's example (`server/tools.mdx`, "Error Handling").
    #[error("Unknown tool: {0}")]
    UnknownTool(String),
    /// This server lists every tool on one page, so no cursor it did not issue is valid
    /// (`utilities/pagination.mdx`: invalid cursors SHOULD get -32602).
    #[error("Invalid cursor: {0:?} was not issued by this server (tools/list has one page; omit the cursor)")]
    InvalidCursor(String),
    #[error("Server not initialized: send `initialize` first, then the `notifications/initialized` notification, before `{0}`")]
    NotInitialized(String),
    #[error("Initialization not complete: send the `notifications/initialized` notification before `{0}`")]
    NotReady(String),
    #[error("Already initialized: `initialize` may be sent only once per connection (protocol version {0} was negotiated)")]
    AlreadyInitialized(ProtocolVersion),
    #[error("{}", batch_text(*.0))]
    BatchNotSupported(Option<ProtocolVersion>),
    /// 2025-03-26 `lifecycle.mdx`: "The initialize request MUST NOT be part of a JSON-RPC batch".
    #[error("`initialize` must not be part of a JSON-RPC batch")]
    InitializeInBatch,
    #[error("Request id {0} is already in use by a request in flight; ids must be unique")]
    DuplicateId(RequestId),
}

fn batch_text(version: Option<ProtocolVersion>) -> String {
    match version {
        None => "JSON-RPC batches are not accepted before initialization".to_owned(),
        Some(v) => format!(
            "JSON-RPC batches are not supported in protocol version {v} (only 2025-03-26 has them); send messages one per line"
        ),
    }
}

impl ServerError {
    pub fn code(&self) -> ErrorCode {
        match self {
            ServerError::MethodNotFound(_) => ErrorCode::METHOD_NOT_FOUND,
            ServerError::InvalidParams { .. }
            | ServerError::UnknownTool(_)
            | ServerError::InvalidCursor(_) => ErrorCode::INVALID_PARAMS,
            ServerError::NotInitialized(_)
            | ServerError::NotReady(_)
            | ServerError::AlreadyInitialized(_)
            | ServerError::BatchNotSupported(_)
            | ServerError::InitializeInBatch
            | ServerError::DuplicateId(_) => ErrorCode::INVALID_REQUEST,
        }
    }

    pub fn to_error_object(&self) -> ErrorObject {
        ErrorObject::new(self.code(), self.to_string())
    }
}
