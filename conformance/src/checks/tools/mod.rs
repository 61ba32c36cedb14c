//! Tools (`server/tools.mdx`, `schema.ts` Tool, CallToolResult).
//!
//! Here: `tools/list` itself (shape, names, pages, an invalid cursor) and an unknown tool, in
//! the shared legacy session. The rest is judged from one observation per era ([`calls`]):
//! the tools listed, with their definitions ([`definitions`]: schemas by the `jsonschema`
//! crate, [`schema`]; display fields), and what calling the read-only ones with arguments made
//! to satisfy their schemas ([`args`], [`pattern_gen`]) returned ([`results`]). [`registry`]
//! declares those checks and their 2026-07-28 twins.

use std::collections::HashSet;

use futures::FutureExt;
use serde_json::{json, Value};

use super::{step, StepError};

mod args;
mod calls;
mod definitions;
mod pattern_gen;
mod registry;
mod results;
mod schema;

use crate::catalog::Check;
use crate::check::{Level, Outcome, RunsIn};
use crate::ctx::Ctx;
use crate::era::Era;
use crate::ids;
use crate::pattern::short;
use crate::probe::Probe;
pub(crate) use calls::{not_judged, observed as tool_calls, server_requests};

pub fn checks() -> Vec<Check> {
    let mut checks = vec![
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
    ];
    checks.extend(registry::definitions());
    checks.extend(registry::results());
    checks.extend(registry::modern());
    checks
}

/// Every page of `tools/list`, following `nextCursor` (see [`super::pages`]): the `result`
/// objects, as far as they were followed (a loop is `tools.list-shape`'s to report).
pub(crate) async fn list_pages(p: &mut Probe) -> Result<Vec<Value>, StepError> {
    Ok(super::pages::list(p, "tools/list", "tools").await?.pages)
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
    let listed = step!(
        super::pages::list(&mut p, "tools/list", "tools").await,
        "a tools/list result"
    );
    let mut problems = Vec::new();
    for t in &listed.items {
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
    listed.verdict("tool", "valid tool definitions", problems)
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
    super::pages::invalid_cursor(ctx, Era::Legacy, "tools/list").await
}

async fn unknown_tool(ctx: &Ctx) -> Outcome {
    if !ctx.config().tool_calls {
        return Outcome::Skip(calls::CALLS_OFF.to_owned());
    }
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
