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
    #[error("Server not initialized: send `initialize` first, then the `notifications/initialized` notification, before `{0}` (or send it as a 2026-07-28 request, with params._meta)")]
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
    /// A modern request whose `_meta` lacks what 2026-07-28 requires, or has it ill-typed.
    #[error("Invalid _meta: {0}")]
    InvalidMeta(String),
    /// `UnsupportedProtocolVersionError` (2026-07-28 `basic/versioning.mdx`).
    #[error("{}", unsupported_text(.0))]
    UnsupportedProtocolVersion(String),
    /// A method the 2026-07-28 revision removed (`ping`, `logging/setLevel`).
    #[error("Method not found: {0} was removed in 2026-07-28 (use server/discover to check that a server is alive)")]
    RemovedInModern(String),
    /// `server/discover` sent without the modern `_meta` it needs.
    #[error("server/discover is a 2026-07-28 request: send params._meta with io.modelcontextprotocol/protocolVersion \"2026-07-28\" and io.modelcontextprotocol/clientCapabilities")]
    DiscoverWithoutMeta,
}

fn unsupported_text(requested: &str) -> String {
    let versions = crate::modern::supported_versions().join(", ");
    if mcp_protocol::mcp::ProtocolVersion::parse(requested).is_some() {
        format!(
            "Unsupported protocol version: {requested:?} is served through the initialize handshake, not per-request _meta; send 2026-07-28 in _meta, or initialize with {requested} (this server supports {versions})"
        )
    } else {
        format!("Unsupported protocol version: {requested:?} (this server supports {versions})")
    }
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
            ServerError::MethodNotFound(_) | ServerError::RemovedInModern(_) => {
                ErrorCode::METHOD_NOT_FOUND
            }
            ServerError::UnsupportedProtocolVersion(_) => {
                ErrorCode(mcp_protocol::mcp::modern::UNSUPPORTED_PROTOCOL_VERSION)
            }
            ServerError::InvalidMeta(_) | ServerError::DiscoverWithoutMeta => {
                ErrorCode::INVALID_PARAMS
            }
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
        let error = ErrorObject::new(self.code(), self.to_string());
        match self {
            ServerError::UnsupportedProtocolVersion(requested) => {
                error.with_data(serde_json::json!({
                    "supported": crate::modern::supported_versions(),
                    "requested": requested,
                }))
            }
            _ => error,
        }
    }
}
