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

use std::sync::{Arc, PoisonError};
use std::time::Duration;

use futures::FutureExt;
use mcp_client::TranscriptEntry;
use mcp_protocol::mcp::modern;
use serde_json::{json, Value};

use super::lifecycle::describe;
use super::tools::{call_safe, list_pages, tools_of, NO_SAFE_TOOL};
use super::{code, step};
use crate::check::{Level, Outcome};
use crate::pattern::short;
use crate::probe::{modern_meta, Collected};
use crate::runner::{Body, Check, Ctx};

/// The version the modern checks offer, and the one an era probe offers.
const VERSION: &str = modern::VERSION;
/// A version no server supports.
const BOGUS_VERSION: &str = "1999-01-01";

pub fn era_checks() -> Vec<Check> {
    vec![code(
        "era.detect",
        Level::Info,
        "which protocol era(s) the server speaks: legacy (initialize gets a result), modern (server/discover with 2026-07-28 _meta gets a DiscoverResult or -32022), dual-era or neither; each probe in a fresh process",
        "2026-07-28 basic/versioning.mdx, Backward Compatibility with Initialization-Based Versions; basic/transports/stdio.mdx, Backward Compatibility",
        |ctx| detect_check(ctx).boxed(),
    )]
}

pub fn checks() -> Vec<Check> {
    vec![
        code(
            "modern.discover",
            Level::Must,
            "server/discover (no initialize) returns resultType \"complete\", supportedVersions with 2026-07-28, capabilities, ttlMs >= 0 and cacheScope",
            "2026-07-28 server/discover.mdx (\"Servers MUST implement it\"); schema.ts DiscoverResult, CacheableResult, Result (resultType)",
            |ctx| discover(ctx).boxed(),
        ),
        code(
            "modern.discover-server-info",
            Level::Should,
            "the server/discover result names the server in _meta io.modelcontextprotocol/serverInfo {name, version}",
            "2026-07-28 server/discover.mdx, DiscoverResult (\"Servers SHOULD include this field\"); basic/index.mdx, _meta (per-response fields)",
            |ctx| discover_server_info(ctx).boxed(),
        ),
        code(
            "modern.unsupported-version",
            Level::Must,
            "server/discover and tools/list with _meta version 1999-01-01 get -32022 with data.supported (strings) and data.requested",
            "2026-07-28 basic/versioning.mdx, Protocol Version Negotiation (\"MUST respond with an UnsupportedProtocolVersionError\"); schema.ts UnsupportedProtocolVersionError",
            |ctx| unsupported_version(ctx).boxed(),
        ),
        code(
            "modern.result-type",
            Level::Must,
            "tools/list and tools/call results carry resultType \"complete\" (calls only a read-only tool)",
            "2026-07-28 schema.ts Result (\"Servers implementing this protocol version MUST include this field\"); changelog, Major changes 8",
            |ctx| result_type(ctx).boxed(),
        ),
        code(
            "modern.tools-list-cacheable",
            Level::Must,
            "tools/list results carry ttlMs (a number >= 0) and cacheScope (\"public\" or \"private\")",
            "2026-07-28 server/tools.mdx, Listing Tools; schema.ts ListToolsResult, CacheableResult; changelog, Minor changes 5",
            |ctx| tools_list_cacheable(ctx).boxed(),
        ),
        code(
            "modern.requests-without-meta",
            Level::Must,
            "without initialize, tools/list with no _meta, or with a version but no clientCapabilities, gets an error, not a result",
            "2026-07-28 schema.ts RequestMetaObject (protocolVersion and clientCapabilities: \"Required\"); basic/index.mdx, _meta",
            |ctx| requests_without_meta(ctx).boxed(),
        ),
        code(
            "modern.missing-meta-invalid-params",
            Level::Must,
            "a 2026-07-28 request without clientCapabilities gets -32602 (from a modern-only server, a request without _meta too)",
            "2026-07-28 basic/index.mdx, _meta, per-request fields (\"A request missing any required field is malformed; the server MUST reject it with JSON-RPC error code -32602\")",
            |ctx| missing_meta_invalid_params(ctx).boxed(),
        ),
        code(
            "modern.no-server-requests",
            Level::Must,
            "in a 2026-07-28 session (server/discover, tools/list, a read-only tools/call, an unknown method) the server writes no JSON-RPC request",
            "2026-07-28 basic/transports/stdio.mdx, Receiving Messages (\"The server MUST NOT write JSON-RPC requests to stdout\")",
            |ctx| no_server_requests(ctx).boxed(),
        ),
        code(
            "modern.ping-removed",
            Level::Info,
            "what ping with 2026-07-28 _meta gets (2026-07-28 removed ping)",
            "2026-07-28 changelog, Major changes 5 (\"Remove ping, logging/setLevel, and notifications/roots/list_changed\")",
            |ctx| ping_removed(ctx).boxed(),
        ),
    ]
}

// ---------------------------------------------------------------------------------------------
// Era detection
// ---------------------------------------------------------------------------------------------

/// What the era probes found about one server.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EraReport {
    /// `initialize` got a result.
    pub legacy: bool,
    /// `server/discover` with 2026-07-28 `_meta` got a DiscoverResult or a -32022 error.
    pub modern: bool,
    /// It got a DiscoverResult: the server accepts 2026-07-28 requests.
    pub accepts_latest: bool,
    /// The versions the server named (`supportedVersions`, or `data.supported` of a -32022).
    pub supported: Vec<String>,
    /// `_meta["io.modelcontextprotocol/serverInfo"]` of the DiscoverResult, if any.
    pub server_info: Option<Value>,
    /// What each probe got, in a few words.
    pub discover: String,
    pub initialize: String,
    /// The probes' frames and the server's stderr, for the `era.detect` result.
    pub transcript: Vec<TranscriptEntry>,
    pub stderr: Vec<String>,
}

impl EraReport {
    /// `legacy`, `modern`, `dual-era` or `neither`.
    pub fn label(&self) -> &'static str {
        match (self.legacy, self.modern) {
            (true, true) => "dual-era",
            (true, false) => "legacy",
            (false, true) => "modern",
            (false, false) => "neither",
        }
    }

    /// The eras for the report: `["legacy"]`, `["modern"]`, `["legacy", "modern"]` or `[]`.
    pub fn eras(&self) -> Vec<String> {
        let mut eras = Vec::new();
        if self.legacy {
            eras.push("legacy".to_owned());
        }
        if self.modern {
            eras.push("modern".to_owned());
        }
        eras
    }

    /// One line for `era.detect`: the label, then what each probe got.
    pub fn summary(&self) -> String {
        format!(
            "{}: server/discover → {}; initialize → {}",
            self.label(),
            self.discover,
            self.initialize
        )
    }
}

/// Is `result` a DiscoverResult (as opposed to, say, `{}` from a server that answers every
/// method)? It names `supportedVersions` or carries a `resultType`.
fn is_modern_result(result: &Value) -> bool {
    result.get("supportedVersions").is_some() || result.get("resultType").is_some()
}

fn strings(v: Option<&Value>) -> Option<Vec<String>> {
    v?.as_array()?
        .iter()
        .map(|s| s.as_str().map(str::to_owned))
        .collect()
}

/// Judges the two probes' replies (`Err`: no reply, and why).
pub fn conclude(discover: Result<Value, String>, initialize: Result<Value, String>) -> EraReport {
    let mut era = EraReport::default();
    match &discover {
        Ok(reply) => match (reply.get("result"), reply.get("error")) {
            (Some(result), _) if is_modern_result(result) => {
                era.modern = true;
                era.accepts_latest = true;
                era.supported = strings(result.get("supportedVersions")).unwrap_or_default();
                era.server_info = result
                    .pointer("/_meta")
                    .and_then(|m| m.get(modern::META_SERVER_INFO))
                    .cloned();
                era.discover = match result.get("supportedVersions") {
                    Some(v) => format!("a DiscoverResult (supportedVersions {})", short(v)),
                    None => "a result with a resultType but no supportedVersions".to_owned(),
                };
            }
            (Some(result), _) => {
                era.discover = format!("a result that is not a DiscoverResult: {}", short(result));
            }
            (None, Some(error))
                if error.get("code").and_then(Value::as_i64)
                    == Some(modern::UNSUPPORTED_PROTOCOL_VERSION) =>
            {
                era.modern = true;
                era.supported = strings(error.pointer("/data/supported")).unwrap_or_default();
                era.discover = format!(
                    "-32022 UnsupportedProtocolVersionError (supported {})",
                    error
                        .pointer("/data/supported")
                        .map(short)
                        .unwrap_or_else(|| "not given".to_owned())
                );
            }
            _ => era.discover = describe(reply),
        },
        Err(e) => era.discover = format!("no answer ({e})"),
    }
    match &initialize {
        Ok(reply) => match reply.get("result") {
            Some(result) => {
                era.legacy = true;
                era.initialize = match result.get("protocolVersion") {
                    Some(v) => format!("a result (protocolVersion {})", short(v)),
                    None => format!("a result {}", short(result)),
                };
            }
            None => era.initialize = describe(reply),
        },
        Err(e) => era.initialize = format!("no answer ({e})"),
    }
    era
}

/// The `server/discover` probe: a fresh process, nothing else sent first.
pub async fn probe_discover(ctx: &Ctx) -> Result<Value, String> {
    let mut p = ctx.spawn().await?;
    // A start-up probe in a cold process: as generous as the start-up initialize's wait, so a
    // slow-starting server (or a loaded machine) is not taken for a silent legacy one.
    p.wait = p.wait.max(
        ctx.config
            .start_wait
            .min(std::time::Duration::from_secs(10)),
    );
    p.modern_request(modern::DISCOVER, None).await
}

/// The `initialize` probe (the runner uses the reply of its start-up `initialize` instead).
pub async fn probe_initialize(ctx: &Ctx) -> Result<Value, String> {
    let mut p = ctx.spawn().await?;
    p.initialize(crate::LATEST).await
}

/// Finishes era detection given the reply to `initialize` in a fresh process: probes
/// `server/discover` in another, and keeps the frames both left in `ctx`'s sink.
pub async fn detect(ctx: &Ctx, initialize: Result<Value, String>) -> EraReport {
    let discover = probe_discover(ctx).await;
    let mut era = conclude(discover, initialize);
    let collected = std::mem::take(&mut *ctx.sink.lock().unwrap_or_else(PoisonError::into_inner));
    let Collected { transcript, stderr } = collected;
    era.transcript = transcript;
    era.stderr = stderr;
    era
}

/// Why a check does not apply to a server of these eras, or `None` if it does.
pub fn not_applicable(check: &Check, era: &EraReport) -> Option<String> {
    match check.info.area() {
        "era" => None,
        "modern" if era.accepts_latest => None,
        "modern" => Some(match era.label() {
            "legacy" => format!("the server does not speak {VERSION} (legacy only)"),
            "neither" => {
                format!("the server does not speak {VERSION} (era.detect found neither era)")
            }
            _ => format!(
                "the server does not speak {VERSION} (it is modern but supports {})",
                if era.supported.is_empty() {
                    "no version it names".to_owned()
                } else {
                    era.supported.join(", ")
                }
            ),
        }),
        _ if era.modern && !era.legacy && opens_with_handshake(check) => Some(
            "the server speaks only the modern era (no initialize); this check needs a legacy \
             session"
                .to_owned(),
        ),
        _ => None,
    }
}

/// Does the check need the legacy era? Code checks outside `era` and `modern` are written
/// against legacy sessions; a scenario says so with `handshake`.
fn opens_with_handshake(check: &Check) -> bool {
    match &check.body {
        Body::Code(_) => true,
        Body::Scenario(s) => s.handshake,
    }
}

async fn detect_check(ctx: &Ctx) -> Outcome {
    let era = match &ctx.era {
        Some(era) => {
            // The runner's probes: their frames become this check's.
            let mut sink = ctx.sink.lock().unwrap_or_else(PoisonError::into_inner);
            sink.transcript.extend(era.transcript.iter().cloned());
            sink.stderr.extend(era.stderr.iter().cloned());
            Arc::clone(era)
        }
        None => {
            let initialize = probe_initialize(ctx).await;
            let discover = probe_discover(ctx).await;
            Arc::new(conclude(discover, initialize))
        }
    };
    Outcome::Observed(era.summary())
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
fn cacheable_problems(result: &Value, what: &str, problems: &mut Vec<String>) {
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
        .spawn()
        .await
        .map_err(|e| Outcome::fail("the server starts", e))?;
    let reply = p
        .modern_request(modern::DISCOVER, None)
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
    let mut p = step!(ctx.spawn().await, "the server starts");
    let meta = modern_meta(BOGUS_VERSION);
    let expected = format!(
        "error -32022 with data.supported (strings, with {VERSION}) and data.requested \
         \"{BOGUS_VERSION}\""
    );
    let mut seen = Vec::new();
    for method in [modern::DISCOVER, "tools/list"] {
        let reply = step!(
            p.send_request(method, Some(json!({"_meta": meta}))).await,
            format!("a reply to {method}")
        );
        let Some(error) = reply.get("error") else {
            return Outcome::fail(expected, format!("{method}: {}", describe(&reply)));
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
        if !problems.is_empty() {
            return Outcome::fail(
                expected,
                format!("{method}: {}: {}", problems.join("; "), short(error)),
            );
        }
        seen.push(method);
    }
    Outcome::pass(format!("-32022 for {}", seen.join(" and ")))
}

async fn result_type(ctx: &Ctx) -> Outcome {
    let mut p = step!(ctx.modern_session().await, "the server starts");
    let pages = step!(list_pages(&mut p).await, "a tools/list result");
    let mut problems: Vec<String> = pages
        .iter()
        .enumerate()
        .filter_map(|(i, page)| result_type_problem(page, &format!("tools/list page {}", i + 1)))
        .collect();
    let tools = tools_of(&pages);
    let call = step!(call_safe(&mut p, &tools).await, "a tools/call reply");
    let called = match &call {
        Some((tool, reply)) => {
            let name = tool["name"].as_str().unwrap_or("?");
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
        None => format!("tools/call not checked: {NO_SAFE_TOOL}"),
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

/// The replies to `tools/list` with no `_meta`, then with `_meta` lacking capabilities, in one
/// fresh process with no `initialize`.
/// The replies to `tools/list` without `_meta`, and with `_meta` but no `clientCapabilities`,
/// each in a fresh process: a dual-era server MAY bind a process to the era of its first
/// request, so the second request must not inherit what the first one chose.
async fn without_meta_replies(ctx: &Ctx) -> Result<(Value, Value), Outcome> {
    let mut replies = Vec::new();
    for (params, what) in [
        (None, "an error to tools/list without _meta"),
        (
            Some(meta_without_capabilities()),
            "an error to tools/list whose _meta has no clientCapabilities",
        ),
    ] {
        let mut p = ctx
            .spawn()
            .await
            .map_err(|e| Outcome::fail("the server starts", e))?;
        let reply = p
            .send_request("tools/list", params)
            .await
            .map_err(|e| Outcome::fail(what, e))?;
        replies.push(reply);
    }
    let partial = replies.pop().unwrap_or_default();
    let bare = replies.pop().unwrap_or_default();
    Ok((bare, partial))
}

async fn requests_without_meta(ctx: &Ctx) -> Outcome {
    let (bare, partial) = match without_meta_replies(ctx).await {
        Ok(replies) => replies,
        Err(outcome) => return outcome,
    };
    let mut problems = Vec::new();
    for (what, reply) in [
        ("without _meta", &bare),
        ("with _meta but no clientCapabilities", &partial),
    ] {
        if reply.get("error").is_none() {
            problems.push(format!("tools/list {what}: {}", describe(reply)));
        }
    }
    if problems.is_empty() {
        Outcome::pass(format!(
            "no _meta: {}; no clientCapabilities: {}",
            describe(&bare),
            describe(&partial)
        ))
    } else {
        Outcome::fail("an error response to each", problems.join("\n"))
    }
}

async fn missing_meta_invalid_params(ctx: &Ctx) -> Outcome {
    let (bare, partial) = match without_meta_replies(ctx).await {
        Ok(replies) => replies,
        Err(outcome) => return outcome,
    };
    let code = |r: &Value| r.pointer("/error/code").and_then(Value::as_i64);
    let mut problems = Vec::new();
    if code(&partial) != Some(-32602) {
        problems.push(format!(
            "tools/list with _meta but no clientCapabilities: {}",
            describe(&partial)
        ));
    }
    // A dual-era server may take a request without _meta for a legacy one before initialize
    // (whose error the legacy revisions leave to the server); a modern-only server may not.
    let modern_only = ctx.era.as_ref().is_some_and(|e| !e.legacy);
    if modern_only && code(&bare) != Some(-32602) {
        problems.push(format!("tools/list without _meta: {}", describe(&bare)));
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
    if let Ok(pages) = list_pages(&mut p).await {
        let _ = call_safe(&mut p, &tools_of(&pages)).await;
    }
    let _ = p.request("mcp-conformance/no-such-method", None).await;
    // Whatever the server writes just after counts too.
    let _ = p.silence(Duration::from_millis(200)).await;
    let requests: Vec<String> = p
        .received
        .iter()
        .flat_map(|v| match v {
            Value::Array(items) => items.clone(),
            other => vec![other.clone()],
        })
        .filter(|v| v.get("method").is_some() && v.get("id").is_some())
        .map(|v| short(&v))
        .collect();
    if requests.is_empty() {
        Outcome::pass(format!("{} frame(s), none a request", p.received.len()))
    } else {
        Outcome::fail(
            "no JSON-RPC request (an object with method and id) from the server",
            requests.join("\n"),
        )
    }
}

async fn ping_removed(ctx: &Ctx) -> Outcome {
    let mut p = step!(ctx.spawn().await, "the server starts");
    match p.modern_request("ping", None).await {
        Ok(r) => Outcome::Observed(describe(&r)),
        Err(e) => Outcome::Observed(format!("no answer: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn discover_ok() -> Value {
        json!({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete",
            "supportedVersions": ["2026-07-28"], "capabilities": {}, "ttlMs": 0,
            "cacheScope": "public",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}}})
    }

    fn initialize_ok() -> Value {
        json!({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-11-25"}})
    }

    fn error(code: i64) -> Value {
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": code, "message": "no"}})
    }

    #[test]
    fn eras_from_probes() {
        let dual = conclude(Ok(discover_ok()), Ok(initialize_ok()));
        assert_eq!(
            (dual.label(), dual.eras()),
            ("dual-era", vec!["legacy".to_owned(), "modern".to_owned()])
        );
        assert!(dual.accepts_latest);
        assert_eq!(dual.server_info, Some(json!({"name": "s", "version": "1"})));
        assert!(dual
            .summary()
            .starts_with("dual-era: server/discover → a DiscoverResult"));

        let legacy = conclude(Ok(error(-32601)), Ok(initialize_ok()));
        assert_eq!(
            (legacy.label(), legacy.eras()),
            ("legacy", vec!["legacy".to_owned()])
        );
        assert!(
            legacy.summary().contains("error -32601"),
            "{}",
            legacy.summary()
        );

        let modern = conclude(Ok(discover_ok()), Ok(error(-32601)));
        assert_eq!(
            (modern.label(), modern.eras()),
            ("modern", vec!["modern".to_owned()])
        );

        // -32022 is modern, but the server does not accept 2026-07-28.
        let other = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32022, "message": "x",
            "data": {"supported": ["2027-01-01"], "requested": "2026-07-28"}}});
        let future = conclude(Ok(other), Err("timeout".to_owned()));
        assert_eq!(future.label(), "modern");
        assert!(!future.accepts_latest);
        assert_eq!(future.supported, vec!["2027-01-01".to_owned()]);

        // A server that answers every method with {} is not modern.
        let empty = json!({"jsonrpc": "2.0", "id": 1, "result": {}});
        let neither = conclude(Ok(empty), Err("no response".to_owned()));
        assert_eq!(
            (neither.label(), neither.eras()),
            ("neither", Vec::<String>::new())
        );
    }

    #[test]
    fn modern_checks_apply_by_era() {
        let all: Vec<Check> = checks().into_iter().chain(era_checks()).collect();
        let modern_check = all.iter().find(|c| c.info.id == "modern.discover").unwrap();
        let era_check = all.iter().find(|c| c.info.id == "era.detect").unwrap();
        let legacy_check = &super::super::lifecycle::checks()[0];
        let legacy = conclude(Ok(error(-32601)), Ok(initialize_ok()));
        assert_eq!(
            not_applicable(modern_check, &legacy).as_deref(),
            Some("the server does not speak 2026-07-28 (legacy only)")
        );
        assert_eq!(not_applicable(legacy_check, &legacy), None);
        assert_eq!(not_applicable(era_check, &legacy), None);
        let modern = conclude(Ok(discover_ok()), Ok(error(-32601)));
        assert_eq!(not_applicable(modern_check, &modern), None);
        assert!(not_applicable(legacy_check, &modern).is_some());
        let dual = conclude(Ok(discover_ok()), Ok(initialize_ok()));
        assert_eq!(not_applicable(modern_check, &dual), None);
        assert_eq!(not_applicable(legacy_check, &dual), None);
    }

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
