//! 2026-07-28 Streamable HTTP: no GET or DELETE, and the mirrored headers validated against
//! the body (HeaderMismatch, -32020).

use mcp_protocol::http::{HEADER_MISMATCH, METHOD};
use mcp_protocol::mcp::modern::DISCOVER;
use reqwest::Method;
use serde_json::{json, Value};

use super::wire::{modern_post, seen, Ask, Wire};
use crate::check::Outcome;
use crate::checks::step;
use crate::ctx::Ctx;
use crate::transport::http::reply::Reply;

/// Is `reply` the rejection the text asks for: 400 with a -32020 JSON-RPC error?
fn rejected(reply: &Reply) -> bool {
    reply.status == 400
        && reply
            .messages()
            .iter()
            .any(|m| m.pointer("/error/code").and_then(Value::as_i64) == Some(HEADER_MISMATCH))
}

pub async fn get_delete_405(ctx: &Ctx) -> Outcome {
    let legacy = ctx.era().legacy;
    if legacy {
        return Outcome::Skip(
            "the server also speaks the legacy era, where GET and DELETE have a meaning".into(),
        );
    }
    let mut w = step!(Wire::new(ctx), "an HTTP client");
    let mut seen_all = Vec::new();
    for method in [Method::GET, Method::DELETE] {
        let reply = step!(w.send(Ask::bare(method.clone())).await, "an HTTP response");
        if reply.status != 405 {
            return Outcome::fail(
                format!("405 Method Not Allowed for {method}"),
                reply.status_line(),
            );
        }
        seen_all.push(format!("{method}: 405"));
    }
    Outcome::pass(seen_all.join("; "))
}

pub async fn header_missing(ctx: &Ctx) -> Outcome {
    let mut w = step!(Wire::new(ctx), "an HTTP client");
    let req = w.modern_request(DISCOVER, None);
    let ask = modern_post(&req, None).header(METHOD, None);
    let reply = step!(w.send(ask).await, "an HTTP response");
    if rejected(&reply) {
        Outcome::pass("400 with -32020")
    } else {
        Outcome::fail(
            "400 Bad Request with JSON-RPC error -32020 for a request without Mcp-Method",
            seen(&reply),
        )
    }
}

pub async fn header_mismatch(ctx: &Ctx) -> Outcome {
    let mut w = step!(Wire::new(ctx), "an HTTP client");
    let discover = w.modern_request(DISCOVER, None);
    let call = w.modern_request(
        "tools/call",
        Some(json!({"name": "mcp-conformance-body-name", "arguments": {}})),
    );
    let cases = [
        (
            "Mcp-Method tools/list for a server/discover body",
            modern_post(&discover, None).header(METHOD, Some("tools/list")),
        ),
        (
            "Mcp-Name mcp-conformance-header-name for a tools/call of mcp-conformance-body-name",
            modern_post(&call, Some("mcp-conformance-header-name")),
        ),
    ];
    let mut passed = Vec::new();
    for (what, ask) in cases {
        let reply = step!(w.send(ask).await, "an HTTP response");
        if !rejected(&reply) {
            return Outcome::fail(
                format!("400 Bad Request with JSON-RPC error -32020 for {what}"),
                seen(&reply),
            );
        }
        passed.push(what);
    }
    Outcome::pass(format!("400 with -32020 for each: {}", passed.join("; ")))
}
