//! Tools (`server/tools.mdx`, `schema.ts` Tool, CallToolResult).

use std::collections::HashSet;

use futures::FutureExt;
use serde_json::{json, Map, Value};

use super::{step, StepError};
use crate::catalog::Check;
use crate::check::{Level, Outcome, RunsIn};
use crate::ctx::Ctx;
use crate::era::Era;
use crate::ids;
use crate::pattern::{short, Mismatch};
use crate::probe::{Probe, ProbeError};

pub fn checks() -> Vec<Check> {
    vec![
        Check::code(
            ids::TOOLS_LIST_SHAPE,
            Level::Must,
            "tools/list returns tools with string names and inputSchemas of type \"object\"; pages are followed",
            "server/tools.mdx, Listing Tools; schema.ts ListToolsResult, Tool",
            |ctx| list_shape(ctx).boxed(),
        )
        .quote("schema.ts: ListToolsResult { tools: Tool[] }; Tool { name: string; inputSchema: { type: \"object\" } }")
        .because("required fields of the schema")
        .runs_in(RunsIn::Legacy)
        .tools(Era::Legacy),
        Check::code(
            ids::TOOLS_NAMES_VALID,
            Level::Should,
            "tool names are unique, 1-128 characters of A-Z a-z 0-9 _ - .",
            "server/tools.mdx, Tool Names (2025-11-25)",
            |ctx| names_valid(ctx).boxed(),
        )
        .quote("Tool names SHOULD be between 1 and 128 characters in length (inclusive). / The following SHOULD be the only allowed characters: uppercase and lowercase ASCII letters (A-Z, a-z), digits (0-9), underscore (_), hyphen (-), and dot (.) / Tool names SHOULD be unique within a server.")
        .runs_in(RunsIn::Legacy)
        .tools(Era::Legacy),
        Check::code(
            ids::TOOLS_INVALID_CURSOR,
            Level::Should,
            "tools/list with a cursor the server never issued gets -32602",
            "server/utilities/pagination.mdx, Error Handling",
            |ctx| invalid_cursor(ctx).boxed(),
        )
        .quote("Invalid cursors SHOULD result in an error with code -32602 (Invalid params).")
        .runs_in(RunsIn::Legacy)
        .tools(Era::Legacy),
        Check::code(
            ids::TOOLS_UNKNOWN_TOOL,
            Level::Info,
            "what calling an unknown tool gets (the page files it under JSON-RPC errors, naming no code)",
            "server/tools.mdx, Error Handling",
            |ctx| unknown_tool(ctx).boxed(),
        )
        .quote("Protocol Errors: Standard JSON-RPC errors for issues like: Unknown tools")
        .because("no keyword, and -32602 is only the example's code: reported")
        .runs_in(RunsIn::Legacy)
        .tools(Era::Legacy)
        .echo_level(Level::Must),
        Check::code(
            ids::TOOLS_CALL_RESULT_SHAPE,
            Level::Must,
            "a tools/call result has a content array of typed blocks (calls only a read-only tool)",
            "server/tools.mdx, Calling Tools; schema.ts CallToolResult",
            |ctx| call_result_shape(ctx).boxed(),
        )
        .quote("schema.ts: CallToolResult { content: ContentBlock[]; isError?: boolean }")
        .because("required and typed fields of the schema")
        .runs_in(RunsIn::Legacy)
        .tools(Era::Legacy),
        Check::code(
            ids::TOOLS_STRUCTURED_CONTENT,
            Level::Must,
            "a tool with an outputSchema returns structuredContent that conforms to it",
            "server/tools.mdx, Output Schema",
            |ctx| structured_content(ctx).boxed(),
        )
        .quote("Servers MUST provide structured results that conform to this schema.")
        .runs_in(RunsIn::Legacy)
        .tools(Era::Legacy),
    ]
}

/// Every page of `tools/list`, following `nextCursor` (see [`super::pages`]): the `result`
/// objects. A loop or too many pages is an error here.
pub(crate) async fn list_pages(p: &mut Probe) -> Result<Vec<Value>, StepError> {
    let listed = super::pages::list(p, "tools/list", "tools").await?;
    match listed.stopped {
        Some(why) => Err(StepError::Answer(why)),
        None => Ok(listed.pages),
    }
}

/// The tools of all pages.
pub(crate) fn tools_of(pages: &[Value]) -> Vec<Value> {
    pages
        .iter()
        .filter_map(|page| page.get("tools").and_then(Value::as_array))
        .flatten()
        .cloned()
        .collect()
}

/// All tools, following pages (at most 100).
async fn list_all(p: &mut Probe) -> Result<Vec<Value>, StepError> {
    Ok(tools_of(&list_pages(p).await?))
}

async fn list_shape(ctx: &Ctx) -> Outcome {
    let mut p = step!(ctx.ready().await, "a complete handshake");
    let tools = step!(list_all(&mut p).await, "a tools/list result");
    let mut problems = Vec::new();
    for t in &tools {
        let Some(name) = t.get("name").and_then(Value::as_str) else {
            problems.push(format!("a tool without a string name: {}", short(t)));
            continue;
        };
        match t.get("inputSchema") {
            Some(s) if s.get("type") == Some(&json!("object")) => {}
            Some(s) => problems.push(format!(
                "{name}: inputSchema.type is not \"object\": {}",
                short(s)
            )),
            None => problems.push(format!("{name}: no inputSchema")),
        }
    }
    if problems.is_empty() {
        Outcome::pass(format!("{} tool(s)", tools.len()))
    } else {
        Outcome::fail("valid tool definitions", problems.join("\n"))
    }
}

fn name_ok(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

async fn names_valid(ctx: &Ctx) -> Outcome {
    let mut p = step!(ctx.ready().await, "a complete handshake");
    let tools = step!(list_all(&mut p).await, "a tools/list result");
    let names: Vec<&str> = tools
        .iter()
        .filter_map(|t| t.get("name").and_then(Value::as_str))
        .collect();
    let mut bad: Vec<String> = names
        .iter()
        .filter(|n| !name_ok(n))
        .map(|n| format!("{n:?}"))
        .collect();
    let mut seen = HashSet::new();
    for name in &names {
        if !seen.insert(name) {
            bad.push(format!("{name:?} is listed twice"));
        }
    }
    if bad.is_empty() {
        Outcome::pass(format!("{} name(s)", tools.len()))
    } else {
        Outcome::fail("unique names of [A-Za-z0-9_.-]{1,128}", bad.join(", "))
    }
}

async fn invalid_cursor(ctx: &Ctx) -> Outcome {
    let mut p = step!(ctx.ready().await, "a complete handshake");
    let reply = step!(
        p.request(
            "tools/list",
            Some(json!({"cursor": "mcp-conformance-no-such-cursor"}))
        )
        .await,
        "a reply"
    );
    match reply.pointer("/error/code").and_then(Value::as_i64) {
        Some(-32602) => Outcome::pass("-32602"),
        _ => Outcome::fail("error -32602", short(&reply)),
    }
}

async fn unknown_tool(ctx: &Ctx) -> Outcome {
    let mut p = step!(ctx.ready().await, "a complete handshake");
    let reply = step!(
        p.request(
            "tools/call",
            Some(json!({"name": "mcp-conformance-no-such-tool", "arguments": {}}))
        )
        .await,
        "a reply"
    );
    match (reply.get("error"), reply.get("result")) {
        (Some(error), _) => Outcome::pass(format!(
            "JSON-RPC error {}",
            error.get("code").map(short).unwrap_or_default()
        )),
        (_, Some(r)) if r.get("isError") == Some(&json!(true)) => Outcome::fail(
            "a JSON-RPC error (the page lists unknown tools under protocol errors)",
            "a result with isError: true (the page's tool execution errors)",
        ),
        _ => Outcome::fail("a JSON-RPC error", short(&reply)),
    }
}

/// A tool the harness may call: annotated read-only and not destructive.
fn safe_tool(tools: &[Value]) -> Option<&Value> {
    tools.iter().find(|t| {
        t.pointer("/annotations/readOnlyHint") == Some(&json!(true))
            && t.pointer("/annotations/destructiveHint") != Some(&json!(true))
    })
}

/// Minimal arguments that satisfy the required properties of a schema.
fn arguments_for(schema: &Value) -> Value {
    let mut args = Map::new();
    let required = schema.get("required").and_then(Value::as_array);
    for name in required.into_iter().flatten().filter_map(Value::as_str) {
        let prop = schema
            .pointer(&format!("/properties/{name}"))
            .unwrap_or(&Value::Null);
        args.insert(name.to_owned(), sample(prop));
    }
    Value::Object(args)
}

fn sample(schema: &Value) -> Value {
    if let Some(first) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    let kind = match schema.get("type") {
        Some(Value::Array(kinds)) => kinds.first().and_then(Value::as_str),
        Some(Value::String(kind)) => Some(kind.as_str()),
        _ => None,
    };
    match kind {
        Some("integer" | "number") => json!(1),
        Some("boolean") => json!(false),
        Some("array") => json!([]),
        Some("object") => arguments_for(schema),
        Some("null") => Value::Null,
        _ => json!("mcp-conformance"),
    }
}

/// Calls the first safe tool of `tools` (see [`safe_tool`]) with arguments made from its
/// schema: the tool and the whole reply, or `None` if no tool is safe to call.
pub(crate) async fn call_safe(
    p: &mut Probe,
    tools: &[Value],
) -> Result<Option<(Value, Value)>, ProbeError> {
    let Some(tool) = safe_tool(tools).cloned() else {
        return Ok(None);
    };
    let name = tool.get("name").cloned().unwrap_or(Value::Null);
    let args = arguments_for(tool.get("inputSchema").unwrap_or(&Value::Null));
    let reply = p
        .request("tools/call", Some(json!({"name": name, "arguments": args})))
        .await?;
    Ok(Some((tool, reply)))
}

async fn call_safe_tool(p: &mut Probe) -> Result<Option<(Value, Value)>, StepError> {
    let tools = list_all(p).await?;
    Ok(call_safe(p, &tools).await?)
}

/// A call answered with a JSON-RPC error has no result to judge: the arguments made from the
/// schema may not suit the tool, and the spec does not say where a tool's own failure goes
/// (server/tools.mdx, Error Handling, names no keyword).
pub(crate) fn errored(name: &str, reply: &Value) -> Option<Outcome> {
    let error = reply.get("error")?;
    Some(Outcome::Skip(format!(
        "tools/call {name} with arguments made from its schema got a JSON-RPC error ({}): no \
         result to check",
        crate::pattern::describe(&json!({"error": error}))
    )))
}

pub(crate) const NO_SAFE_TOOL: &str =
    "no tool is annotated readOnlyHint: true; the harness does not call tools that may have effects";

async fn call_result_shape(ctx: &Ctx) -> Outcome {
    let mut p = step!(ctx.ready().await, "a complete handshake");
    let Some((tool, reply)) = step!(call_safe_tool(&mut p).await, "a tools/call reply") else {
        return Outcome::Skip(NO_SAFE_TOOL.to_owned());
    };
    let name = tool["name"].as_str().unwrap_or("?").to_owned();
    if let Some(skip) = errored(&name, &reply) {
        return skip;
    }
    let Some(result) = reply.get("result") else {
        return Outcome::fail(format!("a result from {name}"), short(&reply));
    };
    let Some(content) = result.get("content").and_then(Value::as_array) else {
        return Outcome::fail("result.content is an array", short(result));
    };
    let untyped: Vec<String> = content
        .iter()
        .filter(|b| !b.get("type").is_some_and(Value::is_string))
        .map(short)
        .collect();
    if !untyped.is_empty() {
        return Outcome::fail("content blocks with a string \"type\"", untyped.join(", "));
    }
    if let Some(flag) = result.get("isError") {
        if !flag.is_boolean() {
            return Outcome::fail("isError is a boolean", short(flag));
        }
    }
    Outcome::pass(format!("{name}: {} block(s)", content.len()))
}

async fn structured_content(ctx: &Ctx) -> Outcome {
    let mut p = step!(ctx.ready().await, "a complete handshake");
    let Some((tool, reply)) = step!(call_safe_tool(&mut p).await, "a tools/call reply") else {
        return Outcome::Skip(NO_SAFE_TOOL.to_owned());
    };
    let Some(schema) = tool.get("outputSchema") else {
        return Outcome::Skip("the tool it can call declares no outputSchema".to_owned());
    };
    if let Some(skip) = errored(tool["name"].as_str().unwrap_or("?"), &reply) {
        return skip;
    }
    let Some(result) = reply.get("result") else {
        return Outcome::fail("a result", short(&reply));
    };
    if result.get("isError") == Some(&json!(true)) {
        return Outcome::Skip("the call returned isError; nothing structured to check".to_owned());
    }
    let Some(structured) = result.get("structuredContent") else {
        return Outcome::fail("structuredContent", format!("none in {}", short(result)));
    };
    match conforms(schema, structured, "structuredContent") {
        Ok(()) => Outcome::pass("conforms"),
        Err(e) => Outcome::fail(
            format!("structuredContent conforming to {}", short(schema)),
            e,
        ),
    }
}

/// A small JSON Schema check: `type`, `required`, `properties`, `additionalProperties: false`,
/// `enum`, `items`. Enough for tool output schemas; unknown keywords are not checked.
pub fn conforms(schema: &Value, v: &Value, path: &str) -> Result<(), Mismatch> {
    if let Some(kind) = schema.get("type") {
        let kinds: Vec<&str> = match kind {
            Value::String(k) => vec![k.as_str()],
            Value::Array(ks) => ks.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        let ok = kinds.is_empty()
            || kinds.iter().any(|k| match *k {
                "object" => v.is_object(),
                "array" => v.is_array(),
                "string" => v.is_string(),
                "integer" => v.is_i64() || v.is_u64(),
                "number" => v.is_number(),
                "boolean" => v.is_boolean(),
                "null" => v.is_null(),
                _ => true,
            });
        if !ok {
            return Err(Mismatch(format!(
                "{path} is {}, not {}",
                short(v),
                kinds.join("|")
            )));
        }
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array) {
        if !options.contains(v) {
            return Err(Mismatch(format!(
                "{path} = {} is not one of {}",
                short(v),
                short(&json!(options))
            )));
        }
    }
    if let Some(obj) = v.as_object() {
        for name in schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(name) = name.as_str() {
                if !obj.contains_key(name) {
                    return Err(Mismatch(format!("{path}.{name} is required but missing")));
                }
            }
        }
        let props = schema.get("properties").and_then(Value::as_object);
        for (key, value) in obj {
            match props.and_then(|p| p.get(key)) {
                Some(sub) => conforms(sub, value, &format!("{path}.{key}"))?,
                None if schema.get("additionalProperties") == Some(&json!(false)) => {
                    return Err(Mismatch(format!(
                        "{path}.{key} is not allowed (additionalProperties: false)"
                    )))
                }
                None => {}
            }
        }
    }
    if let (Some(items), Some(arr)) = (schema.get("items"), v.as_array()) {
        for (i, item) in arr.iter().enumerate() {
            conforms(items, item, &format!("{path}[{i}]"))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_conformance() {
        let schema = json!({"type": "object", "properties": {"text": {"type": "string"}},
                            "required": ["text"], "additionalProperties": false});
        assert!(conforms(&schema, &json!({"text": "x"}), "$").is_ok());
        assert!(conforms(&schema, &json!({}), "$")
            .unwrap_err()
            .to_string()
            .contains("required"));
        assert!(conforms(&schema, &json!({"text": 1}), "$").is_err());
        assert!(conforms(&schema, &json!({"text": "x", "y": 1}), "$").is_err());
    }

    #[test]
    fn sample_arguments() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "string"},
            "n": {"type": "integer"}, "e": {"enum": ["x", "y"]}, "o": {"type": "number"}},
            "required": ["a", "n", "e"]});
        assert_eq!(
            arguments_for(&schema),
            json!({"a": "mcp-conformance", "n": 1, "e": "x"})
        );
    }
}
