//! The `echo` tool: returns its `text` argument verbatim.

use mcp_protocol::mcp::{self, CallToolResult, ToolAnnotations};
use serde_json::{json, Map, Value};

use super::{Tool, ToolCall};

/// Echoes `{"text": string}` back as one text content block and, for versions with
/// structured output, as `structuredContent: {"text": ...}` matching its `outputSchema`.
#[derive(Debug)]
pub struct Echo {
    definition: mcp::Tool,
}

impl Default for Echo {
    fn default() -> Self {
        Echo::new()
    }
}

impl Echo {
    pub fn new() -> Self {
        let text_schema = |description: &str| {
            json!({
                "type": "object",
                "properties": { "text": { "type": "string", "description": description } },
                "required": ["text"],
                "additionalProperties": false
            })
        };
        Echo {
            definition: mcp::Tool {
                name: "echo".to_owned(),
                title: Some("Echo".to_owned()),
                description: Some(
                    "Returns the given text unchanged. Use it to check that an MCP connection works end to end."
                        .to_owned(),
                ),
                input_schema: text_schema("The text to return."),
                output_schema: Some(text_schema("The text that was sent, unchanged.")),
                annotations: Some(ToolAnnotations {
                    title: Some("Echo".to_owned()),
                    read_only_hint: Some(true),
                    destructive_hint: Some(false),
                    idempotent_hint: Some(true),
                    open_world_hint: Some(false),
                }),
            },
        }
    }
}

impl Tool for Echo {
    fn definition(&self) -> &mcp::Tool {
        &self.definition
    }

    fn call(&self, arguments: Map<String, Value>) -> ToolCall {
        const USAGE: &str = r#"Call echo with {"text": "<the text to echo>"}."#;
        let extra: Vec<String> = arguments
            .keys()
            .filter(|k| *k != "text")
            .map(|k| format!("`{k}`"))
            .collect();
        let result = if !extra.is_empty() {
            CallToolResult::error(format!(
                "Invalid arguments for tool echo: unexpected propert{} {}; echo accepts only `text`. {USAGE}",
                if extra.len() == 1 { "y" } else { "ies" },
                extra.join(", ")
            ))
        } else {
            match arguments.get("text") {
                Some(Value::String(text)) => CallToolResult {
                    content: vec![mcp::ContentBlock::text(text.clone())],
                    // `{"text": s}` is already the structured content: reused, not rebuilt.
                    structured_content: Some(Value::Object(arguments)),
                    is_error: None,
                },
                None => CallToolResult::error(format!(
                    "Invalid arguments for tool echo: missing required property `text` (a string). {USAGE}"
                )),
                Some(other) => CallToolResult::error(format!(
                    "Invalid arguments for tool echo: `text` must be a string, got {}. {USAGE}",
                    match other {
                        Value::Null => "null",
                        Value::Bool(_) => "a boolean",
                        Value::Number(_) => "a number",
                        Value::Array(_) => "an array",
                        Value::Object(_) => "an object",
                        Value::String(_) => "a string",
                    }
                )),
            }
        };
        ToolCall::Ready(result)
    }
}
