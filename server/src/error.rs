//! Protocol-level failures of a request, mapped to JSON-RPC codes in one place.
//!
//! A tool that runs and fails is not here: that is a `CallToolResult` with `isError: true`
//! (`server/tools.mdx`, "Error Handling").
//!
//! Every value a peer sent (a method or tool name, a cursor, a serde reason quoting input) is
//! cut before it goes into a message ([`shown`], [`quoted`]), so a huge input cannot make a
//! huge reply: every message stays under 1 KiB.

use std::borrow::Cow;

use mcp_protocol::mcp::ProtocolVersion;
use mcp_protocol::{char_prefix, ErrorCode, ErrorObject, RequestId};

/// The most bytes of a peer's name or value shown in a message.
const MAX_SHOWN: usize = 256;
/// The most bytes of a longer explanation (a serde reason, which may quote input) shown.
const MAX_REASON: usize = 384;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ServerError {
    #[error("Method not found: {}", shown(.0))]
    MethodNotFound(String),
    #[error("Invalid params for {}: {}", shown(.method), cut(.reason, MAX_REASON))]
    InvalidParams { method: String, reason: String },
    /// The wording is the spec's example (`server/tools.mdx`, "Error Handling").
    #[error("Unknown tool: {}", shown(.0))]
    UnknownTool(String),
    /// This server lists every tool on one page, so no cursor it did not issue is valid
    /// (`utilities/pagination.mdx`: invalid cursors SHOULD get -32602).
    #[error("Invalid cursor: {} was not issued by this server (tools/list has one page; omit the cursor)", quoted(.0))]
    InvalidCursor(String),
    #[error("Server not initialized: send `initialize` first, then the `notifications/initialized` notification, before `{}` (or send it as a 2026-07-28 request, with params._meta)", shown(.0))]
    NotInitialized(String),
    #[error("Initialization not complete: send the `notifications/initialized` notification before `{}`", shown(.0))]
    NotReady(String),
    #[error("Already initialized: `initialize` may be sent only once per connection (protocol version {0} was negotiated)")]
    AlreadyInitialized(ProtocolVersion),
    #[error("{}", batch_text(*.0))]
    BatchNotSupported(Option<ProtocolVersion>),
    /// 2025-03-26 `lifecycle.mdx`: "The initialize request MUST NOT be part of a JSON-RPC batch".
    #[error("`initialize` must not be part of a JSON-RPC batch")]
    InitializeInBatch,
    #[error("Request id {} is already in use by a request in flight; ids must be unique", shown_id(.0))]
    DuplicateId(RequestId),
    /// A modern request whose `_meta` lacks what 2026-07-28 requires, or has it ill-typed.
    #[error("Invalid _meta: {}", cut(.0, MAX_REASON))]
    InvalidMeta(String),
    /// `UnsupportedProtocolVersionError` (2026-07-28 `basic/versioning.mdx`).
    #[error("{}", unsupported_text(.0))]
    UnsupportedProtocolVersion(String),
    /// A method the 2026-07-28 revision removed (`ping`, `logging/setLevel`).
    #[error("Method not found: {} was removed in 2026-07-28 (use server/discover to check that a server is alive)", shown(.0))]
    RemovedInModern(String),
    /// `server/discover` sent without the modern `_meta` it needs.
    #[error("server/discover is a 2026-07-28 request: send params._meta with io.modelcontextprotocol/protocolVersion \"2026-07-28\" and io.modelcontextprotocol/clientCapabilities")]
    DiscoverWithoutMeta,
    /// A tool call that needs a task could not get one (the background runtime would not
    /// start: the process is out of threads or memory).
    #[error("Internal error: cannot run the tool call: {0}")]
    CannotRun(String),
}

fn unsupported_text(requested: &str) -> String {
    let versions = crate::info::supported_versions().join(", ");
    if mcp_protocol::mcp::ProtocolVersion::parse_legacy(requested).is_some() {
        format!(
            "Unsupported protocol version: {requested:?} is served through the initialize handshake, not per-request _meta; send 2026-07-28 in _meta, or initialize with {requested} (this server supports {versions})"
        )
    } else {
        format!(
            "Unsupported protocol version: {} (this server supports {versions})",
            quoted(requested)
        )
    }
}

/// A peer's name or value for a message: whole when short, else cut (see [`cut`]).
pub(crate) fn shown(s: &str) -> Cow<'_, str> {
    cut(s, MAX_SHOWN)
}

/// Whole when at most `max` bytes; otherwise cut at a char boundary, with `…` and the full
/// length, so a huge input cannot make a huge reply.
fn cut(s: &str, max: usize) -> Cow<'_, str> {
    if s.len() <= max {
        return Cow::Borrowed(s);
    }
    Cow::Owned(format!(
        "{}… ({} bytes in all)",
        char_prefix(s, max),
        s.len()
    ))
}

/// A peer's string in `Debug` quotes, cut first: escaping can make one byte six (`\u{1f}`).
pub(crate) fn quoted(s: &str) -> String {
    let limit = MAX_SHOWN / 2;
    if s.len() <= limit {
        return format!("{s:?}");
    }
    format!("{:?}… ({} bytes in all)", char_prefix(s, limit), s.len())
}

/// A request id as in logs (strings quoted), cut like any other peer value.
pub(crate) fn shown_id(id: &RequestId) -> String {
    match id.as_str() {
        Some(s) => quoted(s),
        None => id.to_string(),
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
            ServerError::CannotRun(_) => ErrorCode::INTERNAL_ERROR,
        }
    }

    pub fn to_error_object(&self) -> ErrorObject {
        let error = ErrorObject::new(self.code(), self.to_string());
        match self {
            ServerError::UnsupportedProtocolVersion(requested) => {
                error.with_data(serde_json::json!({
                    "supported": crate::info::supported_versions(),
                    "requested": shown(requested),
                }))
            }
            _ => error,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_with(input: &str) -> Vec<ServerError> {
        vec![
            ServerError::MethodNotFound(input.to_owned()),
            ServerError::InvalidParams {
                method: input.to_owned(),
                reason: format!("invalid type: string {input:?}, expected a map"),
            },
            ServerError::UnknownTool(input.to_owned()),
            ServerError::InvalidCursor(input.to_owned()),
            ServerError::NotInitialized(input.to_owned()),
            ServerError::NotReady(input.to_owned()),
            ServerError::DuplicateId(RequestId::from(input)),
            ServerError::InvalidMeta(format!("x must be a string, got {input:?}")),
            ServerError::UnsupportedProtocolVersion(input.to_owned()),
            ServerError::RemovedInModern(input.to_owned()),
        ]
    }

    #[test]
    fn huge_inputs_make_bounded_messages() {
        for input in [
            "a".repeat(100 * 1024),
            "é".repeat(50 * 1024),
            "🦀".repeat(25 * 1024),
            "\u{1}".repeat(100 * 1024),
            "\"".repeat(100 * 1024),
        ] {
            for e in all_with(&input) {
                let object = e.to_error_object();
                assert!(
                    object.message.len() <= 1024,
                    "{} bytes: {}",
                    object.message.len(),
                    object.message
                );
                assert!(
                    object.message.contains(" bytes in all)"),
                    "{}",
                    object.message
                );
                let whole = serde_json::to_string(&object).unwrap();
                assert!(whole.len() <= 4096, "{} bytes: {whole}", whole.len());
            }
        }
    }

    #[test]
    fn the_cut_keeps_the_start_of_the_name() {
        let message = ServerError::MethodNotFound("a".repeat(102_400)).to_string();
        assert!(message.starts_with(&format!("Method not found: {}… ", "a".repeat(256))));
        assert!(message.ends_with("(102400 bytes in all)"), "{message}");
        let message = ServerError::UnknownTool("b".repeat(300)).to_string();
        assert!(message.starts_with("Unknown tool: bbbb"), "{message}");
        // Cut on a char boundary: 'é' is two bytes, 256 is a boundary, 255 is not.
        let message = ServerError::UnknownTool(format!("x{}", "é".repeat(200))).to_string();
        assert!(
            message.contains(&format!("x{}… (401 bytes", "é".repeat(127))),
            "{message}"
        );
    }

    #[test]
    fn short_inputs_are_shown_whole() {
        assert_eq!(
            ServerError::MethodNotFound("nope".into()).to_string(),
            "Method not found: nope"
        );
        assert_eq!(
            ServerError::UnknownTool("x".into()).to_string(),
            "Unknown tool: x"
        );
        assert_eq!(
            ServerError::InvalidCursor("c\n".into()).to_string(),
            "Invalid cursor: \"c\\n\" was not issued by this server (tools/list has one page; omit the cursor)"
        );
        assert_eq!(
            ServerError::DuplicateId("7".into()).to_string(),
            "Request id \"7\" is already in use by a request in flight; ids must be unique"
        );
        assert_eq!(
            ServerError::DuplicateId(7.into()).to_string(),
            "Request id 7 is already in use by a request in flight; ids must be unique"
        );
        // Exactly at the limit: whole.
        let name = "m".repeat(MAX_SHOWN);
        assert_eq!(
            ServerError::MethodNotFound(name.clone()).to_string(),
            format!("Method not found: {name}")
        );
    }

    #[test]
    fn unsupported_version_data_is_cut_too() {
        let e = ServerError::UnsupportedProtocolVersion("v".repeat(100_000)).to_error_object();
        let requested = e.data.as_ref().unwrap()["requested"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(requested.len() < 300, "{requested}");
        assert!(requested.starts_with("vvv"));
        let e = ServerError::UnsupportedProtocolVersion("1999-01-01".into()).to_error_object();
        assert_eq!(e.data.unwrap()["requested"], "1999-01-01");
    }
}
