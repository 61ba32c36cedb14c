//! 2026-07-28 Streamable HTTP: no GET or DELETE, and the mirrored headers validated against
//! the body (HeaderMismatch, -32020).

use mcp_protocol::http::{HEADER_MISMATCH, METHOD};
use mcp_protocol::mcp::modern::{DISCOVER, UNSUPPORTED_PROTOCOL_VERSION};
use mcp_protocol::ErrorCode;
use reqwest::Method;
use serde_json::{json, Value};

use super::wire::{modern_post, seen, Ask, Wire};
use crate::check::Outcome;
use crate::checks::step;
use crate::ctx::Ctx;
use crate::pattern::Mismatch;
use crate::transport::http::reply::Reply;

/// A protocol version no server implements.
const UNSUPPORTED: &str = "1999-01-01";
/// A method no server implements.
const UNKNOWN_METHOD: &str = "mcp-conformance/no-such-method";

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

/// Is `reply` `status` with a JSON-RPC error `code`? Else what came instead.
fn status_with_code(reply: &Reply, status: u16, code: i64) -> Result<(), Mismatch> {
    let codes: Vec<i64> = reply
        .messages()
        .iter()
        .filter_map(|m| m.pointer("/error/code").and_then(Value::as_i64))
        .collect();
    if reply.status == status && codes.contains(&code) {
        Ok(())
    } else {
        Err(Mismatch(seen(reply)))
    }
}

pub async fn unsupported_version_400(ctx: &Ctx) -> Outcome {
    let mut w = step!(Wire::new(ctx), "an HTTP client");
    let meta = crate::probe::modern_meta(UNSUPPORTED);
    let req = w.request(DISCOVER, Some(json!({"_meta": meta})));
    let reply = step!(w.send(modern_post(&req, None)).await, "an HTTP response");
    match status_with_code(&reply, 400, UNSUPPORTED_PROTOCOL_VERSION) {
        Ok(()) => Outcome::pass("400 with -32022"),
        Err(actual) => Outcome::fail(
            format!(
                "400 Bad Request with JSON-RPC error -32022 for protocol version {UNSUPPORTED}"
            ),
            actual,
        ),
    }
}

pub async fn unknown_method_404(ctx: &Ctx) -> Outcome {
    let mut w = step!(Wire::new(ctx), "an HTTP client");
    let req = w.modern_request(UNKNOWN_METHOD, None);
    let reply = step!(w.send(modern_post(&req, None)).await, "an HTTP response");
    match status_with_code(&reply, 404, ErrorCode::METHOD_NOT_FOUND.0) {
        Ok(()) => Outcome::pass("404 with -32601"),
        Err(actual) => Outcome::fail(
            format!("404 Not Found with JSON-RPC error -32601 for method {UNKNOWN_METHOD}"),
            actual,
        ),
    }
}
