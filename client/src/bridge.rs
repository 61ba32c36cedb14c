//! The tool-registry bridge (the chapter's `registerMcpTools`): a server's tools become local
//! tools, indistinguishable from the others to whoever uses the registry.

use mcp_protocol::mcp::{CallToolResult, ContentBlock};
use serde_json::Value;

use crate::client::Client;
use crate::error::ClientError;
use crate::registry::{
    executor, ParamSpec, RegistryError, RiskTier, ToolOutput, ToolRegistry, ToolSpec,
};

/// How remote tools are registered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BridgeOptions {
    /// Put before each remote name, so remote tools cannot collide with local ones.
    pub prefix: String,
    /// The risk tier every remote tool gets.
    pub risk: RiskTier,
}

impl BridgeOptions {
    /// The prefix Claude Code uses: `mcp__<server>__`, so `echo` becomes `mcp__echo__echo`.
    pub fn for_server(server: &str) -> Self {
        BridgeOptions {
            prefix: format!("mcp__{server}__"),
            risk: RiskTier::default(),
        }
    }

    pub fn with_risk(mut self, risk: RiskTier) -> Self {
        self.risk = risk;
        self
    }
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum BridgeError {
    #[error("listing the server's tools failed: {0}")]
    Client(#[from] ClientError),
    #[error("registering the server's tools failed: {0}")]
    Registry(#[from] RegistryError),
}

/// Lists the server's tools (all pages) and registers each as `prefix + name`, with its JSON
/// Schema as parameter specs and an executor that forwards to `tools/call`. All or nothing: a
/// name already taken fails before anything is registered. Returns how many were registered.
pub async fn register_mcp_tools(
    registry: &mut ToolRegistry,
    client: &Client,
    options: &BridgeOptions,
) -> Result<usize, BridgeError> {
    let tools = client.list_tools().await?;
    let names: Vec<String> = tools
        .iter()
        .map(|t| local_name(&options.prefix, &t.name))
        .collect();
    registry.check_free(names.iter().map(String::as_str))?;
    let mut specs = Vec::with_capacity(tools.len());
    for (tool, name) in tools.into_iter().zip(names) {
        let parameters = ParamSpec::from_json_schema(&tool.input_schema).map_err(|e| match e {
            RegistryError::InvalidSchema { reason, .. } => RegistryError::InvalidSchema {
                name: name.clone(),
                reason,
            },
            other => other,
        })?;
        let description = tool
            .description
            .or(tool.title)
            .unwrap_or_else(|| format!("Tool {} of an MCP server", tool.name));
        specs.push((
            ToolSpec {
                name,
                description,
                parameters,
                risk: options.risk,
            },
            tool.name,
        ));
    }
    let count = specs.len();
    for (spec, remote) in specs {
        let client = client.clone();
        let run = executor(move |args: Value| {
            let client = client.clone();
            let remote = remote.clone();
            async move {
                match client.call_tool(&remote, args).await {
                    Ok(result) => to_output(&result),
                    Err(e) => ToolOutput::error(format!("MCP tool {remote} failed: {e}")),
                }
            }
        });
        registry.register(spec, run)?;
    }
    Ok(count)
}

/// `prefix + name`, with every character a model API refuses in tool names (MCP allows `.`,
/// model APIs allow only `[A-Za-z0-9_-]`) replaced by `_`. Two names that become equal are
/// caught by `check_free` before anything is registered.
pub fn local_name(prefix: &str, remote: &str) -> String {
    format!("{prefix}{remote}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// A tool result as text for a model. `isError` results stay text (failures are data) and are
/// marked as errors.
pub fn to_output(result: &CallToolResult) -> ToolOutput {
    let mut parts: Vec<String> = result
        .content
        .iter()
        .map(|block| match block {
            ContentBlock::Text { text } => text.clone(),
            ContentBlock::Image { mime_type, data } => {
                format!("[image {mime_type}, {} bytes of base64]", data.len())
            }
            ContentBlock::Audio { mime_type, data } => {
                format!("[audio {mime_type}, {} bytes of base64]", data.len())
            }
            ContentBlock::ResourceLink { uri, name } => format!("[resource link {name}: {uri}]"),
            ContentBlock::Resource { resource } => match resource.get("text") {
                Some(Value::String(text)) => text.clone(),
                _ => format!(
                    "[resource {}]",
                    resource.get("uri").and_then(Value::as_str).unwrap_or("?")
                ),
            },
            ContentBlock::Unknown => "[content of an unsupported type]".to_owned(),
        })
        .collect();
    if parts.is_empty() {
        if let Some(structured) = &result.structured_content {
            parts.push(structured.to_string());
        }
    }
    let text = parts.join("\n");
    if result.is_error == Some(true) {
        ToolOutput::error(text)
    } else {
        ToolOutput::ok(text)
    }
}
