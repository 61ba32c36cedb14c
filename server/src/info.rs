//! Who the server is and which protocol versions it speaks: what `initialize`,
//! `server/discover` and the version errors tell a client.

use mcp_protocol::mcp::ProtocolVersion;

/// Who the server says it is in the `initialize` result.
#[derive(Debug, Clone)]
pub struct ServerInfo {
    pub name: String,
    pub title: Option<String>,
    pub version: String,
    pub instructions: Option<String>,
}

impl Default for ServerInfo {
    fn default() -> Self {
        ServerInfo {
            name: env!("CARGO_PKG_NAME").to_owned(),
            title: Some("MCP Echo Server".to_owned()),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            instructions: Some(
                "Echo server for testing MCP clients: call the `echo` tool with {\"text\": \"...\"} and it returns the text unchanged."
                    .to_owned(),
            ),
        }
    }
}

/// Every version the server speaks, newest first: what `supportedVersions` and the `supported`
/// list of -32022 name.
pub(crate) fn supported_versions() -> Vec<&'static str> {
    ProtocolVersion::ALL
        .iter()
        .rev()
        .map(|v| v.as_str())
        .collect()
}
