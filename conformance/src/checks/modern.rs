//! The modern era (2026-07-28, stateless; `basic/versioning.mdx`): which era(s) a server
//! speaks, and what a 2026-07-28 server must do without any `initialize`: `server/discover`,
//! per-request `_meta`, `UnsupportedProtocolVersionError` (-32022), `resultType` on results,
//! cache hints on `tools/list`, and no server-to-client requests on stdout.
//!
//! Era detection runs once per target, before the checks ([`detect`], called by the runner):
//! `initialize` in one fresh process (a result: legacy) and `server/discover` carrying
//! 2026-07-28 `_meta` in another (a DiscoverResult, or a -32022 error: modern). Its result,
//! an [`EraReport`], is what `era.detect` reports, what the report's `eras` field says, and what
//! decides which checks apply ([`not_applicable`]): the `modern.*` checks need a server that
//! accepts 2026-07-28; checks that open with the legacy handshake do not apply to a server
//! that speaks only the modern era.

use std::sync::Arc;

use futures::FutureExt;
use mcp_protocol::mcp::{modern, ProtocolVersion};
use serde_json::{json, Value};

use super::step;
use super::tools::{list_pages, server_requests, tool_calls};
use crate::catalog::Check;
use crate::check::{Level, Outcome, RunsIn};
use crate::ctx::{Attempt, CallOutcome, Ctx, ToolCall, WithoutMeta, WITHOUT_META};
use crate::era::{strings, Era};
use crate::ids;
use crate::pattern::{describe, short, Mismatch};
use crate::probe::{discover_request, modern_meta};

/// The version the modern checks offer, and the one an era probe offers.
const VERSION: &str = ProtocolVersion::LATEST.as_str_const();
/// A version no server supports.
const BOGUS_VERSION: &str = "1999-01-01";

pub fn era_checks() -> Vec<Check> {
    vec![Check::code(
        ids::ERA_DETECT,
        Level::Info,
        "which protocol era(s) the server speaks: legacy (initialize gets a result), modern (server/discover with 2026-07-28 _meta gets a DiscoverResult or -32022), dual-era or neither; the two probes run at once, each in a process of its own",
        "2026-07-28 basic/versioning.mdx, Backward Compatibility with Initialization-Based Versions; basic/transports/stdio.mdx, Backward Compatibility",
        |ctx| detect_check(ctx).boxed(),
    )
    .quote("A server that wishes to support both legacy clients (which expect an initialize handshake) and modern clients (which use per-request metadata) MAY implement both behaviors.")
        .because("which era(s) a server speaks is reported, not judged")
    .runs_in(RunsIn::Startup)]
}

pub fn checks() -> Vec<Check> {
    [discovery(), results(), meta(), session()].concat()
}

/// `server/discover`, and a version the server does not support.
fn discovery() -> Vec<Check> {
    vec![
        Check::code(
            ids::MODERN_DISCOVER,
            Level::Must,
            "server/discover (no initialize) returns resultType \"complete\", supportedVersions with 2026-07-28, capabilities, ttlMs >= 0 and cacheScope",
            "2026-07-28 server/discover.mdx; server/utilities/caching.mdx, Cacheable Results; schema.ts DiscoverResult",
            |ctx| discover(ctx).boxed(),
        )
        .quote("Servers MUST implement it. / Servers MUST include caching hints on results with resultType: \"complete\" returned by ... server/discover")
        .because("schema.ts DiscoverResult requires supportedVersions and capabilities")
        .runs_in(RunsIn::Modern),
        Check::code(
            ids::MODERN_DISCOVER_SERVER_INFO,
            Level::Should,
            "the server/discover result names the server in _meta io.modelcontextprotocol/serverInfo {name, version}",
            "2026-07-28 server/discover.mdx, DiscoverResult",
            |ctx| discover_server_info(ctx).boxed(),
        )
        .quote("Servers SHOULD include this field.")
        .runs_in(RunsIn::Modern),
        Check::code(
            ids::MODERN_UNSUPPORTED_VERSION,
            Level::Must,
            "server/discover and tools/list with _meta version 1999-01-01 get -32022 with data.supported (strings) and data.requested, first in a session and again after an unknown method",
            "2026-07-28 basic/versioning.mdx, Protocol Version Negotiation; schema.ts UnsupportedProtocolVersionError",
            |ctx| unsupported_version(ctx).boxed(),
        )
        .quote("If the server does not implement the requested version (whether the version is unknown to the server, or is a known version the server has chosen not to support), it MUST respond with an UnsupportedProtocolVersionError listing the versions it does support:")
        .runs_in(RunsIn::Modern)
        .runs_first(),
    ]
}

/// What every result carries: `resultType`, and cache hints on `tools/list`.
fn results() -> Vec<Check> {
    vec![
        Check::code(
            ids::MODERN_RESULT_TYPE,
            Level::Must,
            "tools/list and tools/call results carry resultType \"complete\" (calls only a read-only tool)",
            "2026-07-28 basic/index.mdx, Result Responses; schema.ts Result",
            |ctx| result_type(ctx).boxed(),
        )
        .quote("The result MUST include a resultType field to indicate the type of the result.")
        .runs_in(RunsIn::Modern)
        .tools(Era::Modern),
        Check::code(
            ids::MODERN_TOOLS_LIST_CACHEABLE,
            Level::Must,
            "tools/list results carry ttlMs (a number >= 0) and cacheScope (\"public\" or \"private\")",
            "2026-07-28 server/utilities/caching.mdx, Cacheable Results, Time-to-Live (TTL) Field",
            |ctx| tools_list_cacheable(ctx).boxed(),
        )
        .quote("Servers MUST include caching hints on results with resultType: \"complete\" returned by the following operations: ... / Servers MUST provide a ttlMs value that is >= 0.")
        .runs_in(RunsIn::Modern)
        .tools(Era::Modern),
    ]
}

/// Requests without the `_meta` a 2026-07-28 request needs.
fn meta() -> Vec<Check> {
    vec![
        Check::code(
            ids::MODERN_REQUESTS_WITHOUT_META,
            Level::Info,
            "what tools/list gets, with no initialize, without _meta and with _meta lacking clientCapabilities (each in a fresh process)",
            "2026-07-28 basic/index.mdx, _meta; basic/versioning.mdx, Backward Compatibility",
            |ctx| requests_without_meta(ctx).boxed(),
        )
        .quote("A dual-era server selects its behavior from how the client opens:")
        .because("a request with neither initialize nor modern _meta may be served as a legacy one; the MUST is modern.missing-meta-invalid-params'")
        .echo_level(Level::Must)
        .modern()
        .shares(WITHOUT_META.name),
        Check::code(
            ids::MODERN_MISSING_META_INVALID_PARAMS,
            Level::Must,
            "a 2026-07-28 request without clientCapabilities gets -32602 (from a modern-only server, a request without _meta too)",
            "2026-07-28 basic/index.mdx, _meta, per-request fields",
            |ctx| missing_meta_invalid_params(ctx).boxed(),
        )
        .quote("A request missing any required field is malformed; the server MUST reject it with JSON-RPC error code -32602 (Invalid params).")
        .because("for a dual-era server only a request whose _meta names the version: one without _meta may be a legacy one")
        .modern()
        .shares(WITHOUT_META.name),
    ]
}

/// What a 2026-07-28 session must not do, and what a removed method gets.
fn session() -> Vec<Check> {
    vec![
        Check::code(
            ids::MODERN_NO_SERVER_REQUESTS,
            Level::Must,
            "in the 2026-07-28 session (server/discover, tools/list, an unknown method and what the other modern checks sent) and in the process of the read-only tool calls the server writes no JSON-RPC request",
            "2026-07-28 basic/transports/stdio.mdx, Receiving Messages",
            |ctx| no_server_requests(ctx).boxed(),
        )
        .quote("The server MUST NOT write JSON-RPC requests to stdout.")
        .runs_in(RunsIn::Modern),
        Check::code(
            ids::MODERN_PING_REMOVED,
            Level::Info,
            "what ping with 2026-07-28 _meta gets (2026-07-28 removed ping)",
            "2026-07-28 changelog, Major changes 5",
            |ctx| ping_removed(ctx).boxed(),
        )
        .quote("Remove ping, logging/setLevel, and notifications/roots/list_changed.")
        .because("what a removed method gets is reported")
        .runs_in(RunsIn::Modern),
    ]
}

async fn detect_check(ctx: &Ctx) -> Outcome {
    let era = ctx.era();
    ctx.trace().absorb(&era.evidence());
    match &era.blocked {
        Some((_, why)) => Outcome::Observed(format!("{}; {why}", era.summary())),
        None => Outcome::Observed(era.summary()),
    }
}

// ---------------------------------------------------------------------------------------------
// Result fields
// ---------------------------------------------------------------------------------------------

/// `resultType` is `"complete"`; else what it is.
fn result_type_problem(result: &Value, what: &str) -> Option<String> {
    match result.get("resultType") {
        Some(Value::String(s)) if s == "complete" => None,
        Some(other) => Some(format!("{what}: resultType is {other}, not \"complete\"")),
        None => Some(format!("{what}: no resultType")),
    }
}

/// `ttlMs` (a number >= 0) and `cacheScope` (`"public"` or `"private"`): CacheableResult.
pub(crate) fn cacheable_problems(result: &Value, what: &str, problems: &mut Vec<String>) {
    match result.get("ttlMs") {
        Some(Value::Number(n)) if n.as_f64().is_some_and(|n| n >= 0.0) => {}
        Some(other) => problems.push(format!("{what}: ttlMs is {other}, not a number >= 0")),
        None => problems.push(format!("{what}: no ttlMs")),
    }
    match result.get("cacheScope").and_then(Value::as_str) {
        Some("public" | "private") => {}
        _ => problems.push(match result.get("cacheScope") {
            Some(other) => format!("{what}: cacheScope is {other}, not \"public\" or \"private\""),
            None => format!("{what}: no cacheScope"),
        }),
    }
}

fn result_of<'a>(reply: &'a Value, what: &str) -> Result<&'a Value, Outcome> {
    reply
        .get("result")
        .ok_or_else(|| Outcome::fail(format!("a result to {what}"), describe(reply)))
}

// ---------------------------------------------------------------------------------------------
// The checks
// ---------------------------------------------------------------------------------------------

async fn discover_result(ctx: &Ctx) -> Result<Value, Outcome> {
    let mut p = ctx
        .modern_session()
        .await
        .map_err(|e| Outcome::fail("the server starts", e))?;
    let reply = p
        .request(modern::DISCOVER, None)
        .await
        .map_err(|e| Outcome::fail("a reply to server/discover", e))?;
    result_of(&reply, "server/discover").cloned()
}

async fn discover(ctx: &Ctx) -> Outcome {
    let r = match discover_result(ctx).await {
        Ok(r) => r,
        Err(outcome) => return outcome,
    };
    let mut problems = Vec::new();
    problems.extend(result_type_problem(&r, "the result"));
    match strings(r.get("supportedVersions")) {
        Some(versions) if versions.iter().any(|v| v == VERSION) => {}
        Some(_) => problems.push(format!(
            "supportedVersions does not list {VERSION}, the version of the request it answered"
        )),
        None => problems.push("supportedVersions is not an array of strings".to_owned()),
    }
    if !r.get("capabilities").is_some_and(Value::is_object) {
        problems.push("capabilities is not an object".to_owned());
    }
    cacheable_problems(&r, "the result", &mut problems);
    if r.get("instructions").is_some_and(|i| !i.is_string()) {
        problems.push("instructions is not a string".to_owned());
    }
    if !problems.is_empty() {
        return Outcome::fail(
            format!(
                "resultType \"complete\", supportedVersions (strings, with {VERSION}), \
                 capabilities (object), ttlMs (number >= 0), cacheScope (\"public\"|\"private\")"
            ),
            format!("{}: {}", problems.join("; "), short(&r)),
        );
    }
    Outcome::pass(format!(
        "supportedVersions {}, ttlMs {}, cacheScope {}",
        short(&r["supportedVersions"]),
        r["ttlMs"],
        r["cacheScope"]
    ))
}

async fn discover_server_info(ctx: &Ctx) -> Outcome {
    let r = match discover_result(ctx).await {
        Ok(r) => r,
        Err(outcome) => return outcome,
    };
    let key = modern::META_SERVER_INFO;
    let expected = format!("result _meta[\"{key}\"] with string name and version");
    let Some(info) = r.pointer("/_meta").and_then(|m| m.get(key)) else {
        return Outcome::fail(expected, format!("none in {}", short(&r)));
    };
    let name = info.get("name").and_then(Value::as_str);
    let version = info.get("version").and_then(Value::as_str);
    match (name, version) {
        (Some(name), Some(version)) => Outcome::pass(format!("{name} {version}")),
        _ => Outcome::fail(expected, short(info)),
    }
}

async fn unsupported_version(ctx: &Ctx) -> Outcome {
    let mut p = step!(ctx.modern_session().await, "the server starts");
    let expected = format!(
        "error -32022 with data.supported (strings, with {VERSION}) and data.requested \
         \"{BOGUS_VERSION}\""
    );
    // First in the session, then after a request it answers with an error: the version is
    // judged on every request, whatever came before (a server that let an error change it
    // would answer an unsupported version depending on what its clients sent earlier).
    for after in [None, Some("no/such/method")] {
        if let Some(method) = after {
            let _ = step!(
                p.request(method, None).await,
                format!("a reply to {method}")
            );
        }
        for method in [modern::DISCOVER, "tools/list"] {
            let reply = step!(
                p.send_request(method, Some(json!({"_meta": modern_meta(BOGUS_VERSION)})))
                    .await,
                format!("a reply to {method}")
            );
            if let Err(problem) = unsupported_problem(&reply) {
                let when = after.map_or(String::new(), |m| {
                    format!("after a request for the unknown method {m}: ")
                });
                return Outcome::fail(expected, format!("{when}{method}: {problem}"));
            }
        }
    }
    Outcome::pass(format!(
        "-32022 for {} and tools/list, first and after an unknown method",
        modern::DISCOVER
    ))
}

/// What is wrong with `reply` as an UnsupportedProtocolVersionError for [`BOGUS_VERSION`].
fn unsupported_problem(reply: &Value) -> Result<(), Mismatch> {
    let Some(error) = reply.get("error") else {
        return Err(Mismatch(describe(reply)));
    };
    let mut problems = Vec::new();
    let code = error.get("code").and_then(Value::as_i64);
    if code != Some(modern::UNSUPPORTED_PROTOCOL_VERSION) {
        problems.push(format!(
            "code {}",
            error
                .get("code")
                .map(short)
                .unwrap_or_else(|| "missing".to_owned())
        ));
    }
    match strings(error.pointer("/data/supported")) {
        Some(v) if v.iter().any(|v| v == VERSION) => {}
        Some(v) => problems.push(format!(
            "data.supported {v:?} does not list {VERSION}, which the server accepts"
        )),
        None => problems.push("data.supported is not an array of strings".to_owned()),
    }
    if error.pointer("/data/requested") != Some(&json!(BOGUS_VERSION)) {
        problems.push(format!(
            "data.requested is {}",
            error
                .pointer("/data/requested")
                .map(short)
                .unwrap_or_else(|| "missing".to_owned())
        ));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(Mismatch(format!(
            "{}: {}",
            problems.join("; "),
            short(error)
        )))
    }
}

async fn result_type(ctx: &Ctx) -> Outcome {
    let mut p = step!(ctx.modern_session().await, "the server starts");
    let pages = step!(list_pages(&mut p).await, "a tools/list result");
    let mut problems: Vec<String> = pages
        .iter()
        .enumerate()
        .filter_map(|(i, page)| result_type_problem(page, &format!("tools/list page {}", i + 1)))
        .collect();
    drop(p);
    let calls = tool_calls(ctx, Era::Modern).await;
    let called = match calls
        .calls
        .iter()
        .find(|c| matches!(c.outcome, CallOutcome::Reply(_)))
    {
        Some(ToolCall {
            name,
            outcome: CallOutcome::Reply(reply),
            ..
        }) if reply.get("error").is_some() => {
            format!("tools/call {name} not checked: it got {}", describe(reply))
        }
        Some(ToolCall {
            name,
            outcome: CallOutcome::Reply(reply),
            ..
        }) => {
            let result = match result_of(reply, &format!("tools/call {name}")) {
                Ok(r) => r,
                Err(outcome) => return outcome,
            };
            // A multi round-trip interim result is the other resultType a tools/call may have.
            if result.get("resultType") != Some(&json!("input_required")) {
                problems.extend(result_type_problem(result, &format!("tools/call {name}")));
            }
            format!("tools/call {name}: {}", result["resultType"])
        }
        _ => format!(
            "tools/call not checked: {}",
            super::tools::not_judged(&calls)
        ),
    };
    if problems.is_empty() {
        Outcome::pass(format!(
            "{} tools/list page(s): \"complete\"; {called}",
            pages.len()
        ))
    } else {
        Outcome::fail(
            "resultType \"complete\" on every result",
            problems.join("\n"),
        )
    }
}

async fn tools_list_cacheable(ctx: &Ctx) -> Outcome {
    let mut p = step!(ctx.modern_session().await, "the server starts");
    let pages = step!(list_pages(&mut p).await, "a tools/list result");
    let mut problems = Vec::new();
    for (i, page) in pages.iter().enumerate() {
        cacheable_problems(page, &format!("page {}", i + 1), &mut problems);
    }
    if problems.is_empty() {
        Outcome::pass(format!(
            "ttlMs {}, cacheScope {}",
            pages[0]["ttlMs"], pages[0]["cacheScope"]
        ))
    } else {
        Outcome::fail(
            "ttlMs (a number >= 0) and cacheScope (\"public\" or \"private\") on every page",
            problems.join("\n"),
        )
    }
}

/// `_meta` with the version and identity but no `clientCapabilities`.
fn meta_without_capabilities() -> Value {
    let mut meta = modern_meta(VERSION);
    if let Some(m) = meta.as_object_mut() {
        m.remove(modern::META_CLIENT_CAPABILITIES);
    }
    json!({"_meta": meta})
}

/// The replies to `tools/list` without `_meta`, and with `_meta` but no `clientCapabilities`,
/// each the first request of a fresh process (a dual-era server MAY bind a process to the era
/// of its first request), observed once for the checks that judge them. A server may leave
/// the first unanswered (a legacy one, before `initialize`): `server/discover` follows as a
/// barrier after `--timeout`.
async fn without_meta_replies(ctx: &Ctx) -> Arc<WithoutMeta> {
    ctx.observe(&WITHOUT_META, |ctx| async move {
        WithoutMeta {
            bare: first_list(&ctx, None, "a reply to tools/list without _meta").await,
            partial: first_list(
                &ctx,
                Some(meta_without_capabilities()),
                "a reply to tools/list whose _meta has no clientCapabilities",
            )
            .await,
        }
    })
    .await
}

/// `tools/list` with these params as the first request of a fresh process.
async fn first_list(ctx: &Ctx, params: Option<Value>, what: &str) -> Attempt {
    let mut p = ctx
        .spawn()
        .await
        .map_err(|e| ("the server starts".to_owned(), e))?;
    p.set_barrier(discover_request());
    p.send_request("tools/list", params)
        .await
        .map_err(|e| (what.to_owned(), e))
}

/// A reply, or the FAIL saying what was expected and why it did not come.
fn replied(attempt: &Attempt) -> Result<&Value, Outcome> {
    attempt
        .as_ref()
        .map_err(|(expected, actual)| Outcome::fail(expected.clone(), actual))
}

async fn requests_without_meta(ctx: &Ctx) -> Outcome {
    let observed = without_meta_replies(ctx).await;
    let (bare, partial) = match (replied(&observed.bare), replied(&observed.partial)) {
        (Ok(bare), Ok(partial)) => (bare, partial),
        (Err(outcome), _) | (_, Err(outcome)) => return outcome,
    };
    let mut problems = Vec::new();
    for (what, reply) in [
        ("without _meta", bare),
        ("with _meta but no clientCapabilities", partial),
    ] {
        if reply.get("error").is_none() {
            problems.push(format!("tools/list {what}: {}", describe(reply)));
        }
    }
    if problems.is_empty() {
        Outcome::pass(format!(
            "no _meta: {}; no clientCapabilities: {}",
            describe(bare),
            describe(partial)
        ))
    } else {
        Outcome::fail("an error response to each", problems.join("\n"))
    }
}

async fn missing_meta_invalid_params(ctx: &Ctx) -> Outcome {
    let observed = without_meta_replies(ctx).await;
    let partial = match replied(&observed.partial) {
        Ok(reply) => reply,
        Err(outcome) => return outcome,
    };
    let code = |r: &Value| r.pointer("/error/code").and_then(Value::as_i64);
    let mut problems = Vec::new();
    if code(partial) != Some(-32602) {
        problems.push(format!(
            "tools/list with _meta but no clientCapabilities: {}",
            describe(partial)
        ));
    }
    // A dual-era server may take a request without _meta for a legacy one before initialize
    // (whose error, or HTTP status, the legacy revisions leave to the server); a modern-only
    // server may not.
    let modern_only = !ctx.era().legacy;
    if modern_only {
        match replied(&observed.bare) {
            Ok(bare) if code(bare) == Some(-32602) => {}
            Ok(bare) => problems.push(format!("tools/list without _meta: {}", describe(bare))),
            Err(outcome) => return outcome,
        }
    }
    if problems.is_empty() {
        let bare_note = if modern_only {
            "without _meta too"
        } else {
            "a request without _meta may be a legacy one here"
        };
        Outcome::pass(format!("-32602 ({bare_note})"))
    } else {
        Outcome::fail("error -32602 (Invalid params)", problems.join("\n"))
    }
}

async fn no_server_requests(ctx: &Ctx) -> Outcome {
    let mut p = step!(ctx.modern_session().await, "the server starts");
    let _ = p.request(modern::DISCOVER, None).await;
    let _ = list_pages(&mut p).await;
    let _ = p.request("mcp-conformance/no-such-method", None).await;
    // Whatever the server writes just after counts too; without the barrier's reply nothing
    // shows that the server went through the session.
    if let Err(e) = p.until_barrier().await {
        return Outcome::fail(
            "no JSON-RPC request from the server, and the server/discover sent after the \
             session answered",
            e,
        );
    }
    let calls = tool_calls(ctx, Era::Modern).await;
    let mut requests = server_requests(&p);
    requests.extend(calls.server_requests.iter().cloned());
    if requests.is_empty() {
        Outcome::pass(format!(
            "{} frame(s), none a request",
            p.inbox().received().len()
        ))
    } else {
        Outcome::fail(
            "no JSON-RPC request (an object with method and id) from the server",
            requests.join("\n"),
        )
    }
}

async fn ping_removed(ctx: &Ctx) -> Outcome {
    let mut p = step!(ctx.modern_session().await, "the server starts");
    match p.request("ping", None).await {
        Ok(r) => Outcome::Observed(describe(&r)),
        Err(e) => Outcome::Observed(format!("no answer: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_fields() {
        assert_eq!(
            result_type_problem(&json!({"resultType": "complete"}), "r"),
            None
        );
        assert!(result_type_problem(&json!({}), "r").is_some());
        let mut problems = Vec::new();
        cacheable_problems(
            &json!({"ttlMs": 0, "cacheScope": "private"}),
            "r",
            &mut problems,
        );
        assert!(problems.is_empty());
        cacheable_problems(
            &json!({"ttlMs": -1, "cacheScope": "shared"}),
            "r",
            &mut problems,
        );
        assert_eq!(problems.len(), 2, "{problems:?}");
        cacheable_problems(&json!({}), "r", &mut problems);
        assert_eq!(problems.len(), 4, "{problems:?}");
    }
}
