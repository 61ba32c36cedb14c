//! MCP protocol versions, method names, and the types an echo server needs.
//!
//! Field sets follow `schema/<version>/schema.ts` of the MCP specification. Optional fields
//! are skipped when `None`, so a server can leave out what a negotiated version does not
//! define (see [`ProtocolVersion`]'s feature predicates).

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::id::RequestId;

/// A protocol revision, of either era: up to 2025-11-25 the legacy era, whose version is
/// negotiated by the `initialize` handshake; from 2026-07-28 the stateless era, where every
/// request carries its version in `params._meta` ([`is_modern`](Self::is_modern)).
///
/// Ordered by date, so `v >= ProtocolVersion::V2025_06_18` reads as "has what 2025-06-18 added".
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ProtocolVersion {
    V2024_11_05,
    V2025_03_26,
    V2025_06_18,
    V2025_11_25,
    V2026_07_28,
}

impl ProtocolVersion {
    /// Every version this crate speaks, oldest first.
    pub const ALL: [ProtocolVersion; 5] = [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2026_07_28,
    ];

    /// The versions `initialize` negotiates, oldest first.
    pub const LEGACY: [ProtocolVersion; 4] = [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
    ];

    /// The stateless versions, oldest first.
    pub const MODERN: [ProtocolVersion; 1] = [ProtocolVersion::V2026_07_28];

    /// The newest legacy version: what `initialize` offers, and what a server answers when it
    /// does not support the client's.
    pub const LATEST_LEGACY: ProtocolVersion = ProtocolVersion::V2025_11_25;

    /// The newest version.
    pub const LATEST: ProtocolVersion = ProtocolVersion::V2026_07_28;

    /// The version named `s`, of either era.
    pub fn parse(s: &str) -> Option<ProtocolVersion> {
        ProtocolVersion::ALL.into_iter().find(|v| v.as_str() == s)
    }

    /// The version named `s`, if it is one `initialize` negotiates.
    pub fn parse_legacy(s: &str) -> Option<ProtocolVersion> {
        ProtocolVersion::parse(s).filter(|v| !v.is_modern())
    }

    /// A stateless version (2026-07-28 on): no handshake, the version in every request.
    pub fn is_modern(self) -> bool {
        self >= ProtocolVersion::V2026_07_28
    }

    pub fn as_str(self) -> &'static str {
        self.as_str_const()
    }

    /// [`as_str`](Self::as_str) for constant contexts.
    pub const fn as_str_const(self) -> &'static str {
        match self {
            ProtocolVersion::V2024_11_05 => "2024-11-05",
            ProtocolVersion::V2025_03_26 => "2025-03-26",
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
            ProtocolVersion::V2026_07_28 => "2026-07-28",
        }
    }

    /// `ToolAnnotations` were added in 2025-03-26.
    pub fn has_tool_annotations(self) -> bool {
        self >= ProtocolVersion::V2025_03_26
    }

    /// `title` (on tools and `Implementation`), `outputSchema` and `structuredContent` were
    /// added in 2025-06-18.
    pub fn has_structured_output(self) -> bool {
        self >= ProtocolVersion::V2025_06_18
    }

    /// JSON-RPC batches exist only in 2025-03-26: added there, removed in 2025-06-18
    /// (changelog item 1).
    pub fn has_batches(self) -> bool {
        self == ProtocolVersion::V2025_03_26
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The modern (stateless) era, 2026-07-28 and later (`basic/versioning.mdx`): no `initialize`;
/// every request carries its version and client capabilities in `params._meta`. Its versions
/// are [`ProtocolVersion::MODERN`](crate::mcp::ProtocolVersion::MODERN).
pub mod modern {
    /// `_meta` key: the protocol version of this request (required on modern requests).
    pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
    /// `_meta` key: the client's capabilities for this request (required).
    pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
    /// `_meta` key: the client's identity (optional; clients SHOULD send it).
    pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
    /// `_meta` key: the log level for this request (optional; deprecated).
    pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
    /// Result `_meta` key: the server's identity (servers SHOULD send it).
    pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

    /// `UnsupportedProtocolVersionError` (`schema.ts`), with `data: {supported, requested}`.
    pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
    /// `MissingRequiredClientCapabilityError`.
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;

    /// `server/discover`: versions, capabilities and identity (servers MUST implement it).
    pub const DISCOVER: &str = "server/discover";

    /// The log levels of RFC 5424 that `io.modelcontextprotocol/logLevel` accepts.
    pub const LOG_LEVELS: [&str; 8] = [
        "debug",
        "info",
        "notice",
        "warning",
        "error",
        "critical",
        "alert",
        "emergency",
    ];

    /// The `_meta` every modern request carries (2026-07-28 `schema.ts`, RequestMetaObject):
    /// its version, the client's capabilities (none), and the client's identity.
    pub fn request_meta(
        version: &str,
        client_info: &super::Implementation,
    ) -> serde_json::Map<String, serde_json::Value> {
        let mut meta = serde_json::Map::new();
        meta.insert(META_PROTOCOL_VERSION.into(), version.into());
        meta.insert(META_CLIENT_CAPABILITIES.into(), serde_json::json!({}));
        let mut info =
            serde_json::json!({"name": client_info.name, "version": client_info.version});
        if let Some(title) = &client_info.title {
            info["title"] = title.as_str().into();
        }
        meta.insert(META_CLIENT_INFO.into(), info);
        meta
    }
}

/// Method names used by the echo server (`schema.ts`, `method:` literals).
pub mod methods {
    pub const INITIALIZE: &str = "initialize";
    pub const INITIALIZED: &str = "notifications/initialized";
    pub const PING: &str = "ping";
    pub const TOOLS_LIST: &str = "tools/list";
    pub const TOOLS_CALL: &str = "tools/call";
    pub const CANCELLED: &str = "notifications/cancelled";
}

/// Name and version of a client or server (`Implementation`; `title` since 2025-06-18).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Implementation {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub version: String,
}

/// `initialize` request params. All three members are required by every schema version.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    pub protocol_version: String,
    pub capabilities: Map<String, Value>,
    pub client_info: Implementation,
}

/// `capabilities.tools` of a server.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolsCapability {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}

/// The capabilities a server declares. Only `tools` is typed; the rest is kept as sent, so a
/// client can show what a server offers.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerCapabilities {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ToolsCapability>,
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// `initialize` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    pub protocol_version: String,
    pub capabilities: ServerCapabilities,
    pub server_info: Implementation,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
}

/// Behaviour hints for a tool (since 2025-03-26). Hints, not guarantees.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

/// A tool definition as listed by `tools/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub input_schema: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
}

impl Tool {
    /// The definition with only the fields `version` defines.
    pub fn for_version(&self, version: ProtocolVersion) -> Tool {
        let mut tool = self.clone();
        if !version.has_structured_output() {
            tool.title = None;
            tool.output_schema = None;
        }
        if !version.has_tool_annotations() {
            tool.annotations = None;
        }
        tool
    }
}

/// `tools/list` params.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListToolsParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

/// `tools/list` result. A missing `nextCursor` means the list is complete.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListToolsResult {
    pub tools: Vec<Tool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// `tools/call` params. `arguments` must be an object when present.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallToolParams {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Map<String, Value>>,
}

/// A content block of a tool result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    Text {
        text: String,
    },
    Image {
        data: String,
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    Audio {
        data: String,
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    ResourceLink {
        uri: String,
        name: String,
    },
    Resource {
        resource: Value,
    },
    /// A block type this crate does not know (a newer revision's); its fields are not kept.
    #[serde(other)]
    Unknown,
}

impl ContentBlock {
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text { text: text.into() }
    }
}

/// `tools/call` result. A tool that ran and failed sets `isError`: that is data for the model,
/// not a JSON-RPC error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    pub content: Vec<ContentBlock>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
}

impl CallToolResult {
    pub fn text(text: impl Into<String>) -> Self {
        CallToolResult {
            content: vec![ContentBlock::text(text)],
            structured_content: None,
            is_error: None,
        }
    }

    /// A tool execution error: the model reads `message` and can retry.
    pub fn error(message: impl Into<String>) -> Self {
        CallToolResult {
            content: vec![ContentBlock::text(message)],
            structured_content: None,
            is_error: Some(true),
        }
    }

    /// The result with only the fields `version` defines.
    pub fn for_version(mut self, version: ProtocolVersion) -> Self {
        if !version.has_structured_output() {
            self.structured_content = None;
        }
        self
    }

    /// The same JSON `serde_json::to_value` gives, but text moved, not copied: an echoed
    /// 16 KiB text was copied once more for every result.
    pub fn into_value(self) -> Value {
        let content = self
            .content
            .into_iter()
            .map(|block| match block {
                ContentBlock::Text { text } => {
                    let mut m = Map::new();
                    m.insert("type".to_owned(), Value::from("text"));
                    m.insert("text".to_owned(), Value::String(text));
                    Value::Object(m)
                }
                // Not on a hot path: serialising cannot fail for these types.
                other => serde_json::to_value(other).unwrap_or(Value::Null),
            })
            .collect();
        let mut m = Map::new();
        m.insert("content".to_owned(), Value::Array(content));
        if let Some(structured) = self.structured_content {
            m.insert("structuredContent".to_owned(), structured);
        }
        if let Some(is_error) = self.is_error {
            m.insert("isError".to_owned(), Value::Bool(is_error));
        }
        Value::Object(m)
    }
}

/// `notifications/cancelled` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelledParams {
    pub request_id: RequestId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn call_tool_result_into_value_is_what_serde_writes() {
        let results = [
            CallToolResult::text("hi"),
            CallToolResult::error("bad"),
            CallToolResult {
                content: vec![
                    ContentBlock::text("a"),
                    ContentBlock::Image {
                        data: "AA==".into(),
                        mime_type: "image/png".into(),
                    },
                    ContentBlock::ResourceLink {
                        uri: "file:///x".into(),
                        name: "x".into(),
                    },
                ],
                structured_content: Some(json!({"text": "a"})),
                is_error: Some(false),
            },
        ];
        for r in results {
            assert_eq!(r.clone().into_value(), serde_json::to_value(&r).unwrap());
        }
    }
}
