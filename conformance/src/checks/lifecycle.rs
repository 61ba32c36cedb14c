//! Lifecycle (`basic/lifecycle.mdx`): initialize, version negotiation, initialized, ping.

use futures::FutureExt;
use mcp_protocol::mcp::ProtocolVersion;
use serde_json::{json, Value};

use super::{step, StepError};
use crate::catalog::Check;
use crate::check::{Level, Outcome, RunsIn};
use crate::ctx::{Ctx, VERSIONS};
use crate::ids;
use crate::pattern::{describe, short};
use crate::probe::{initialize_request, ProbeError};
use crate::LATEST;

/// A version no server supports.
const UNKNOWN_VERSION: &str = "1999-01-01";

pub fn checks() -> Vec<Check> {
    [initialize(), around_the_handshake()].concat()
}

/// `initialize`: its result, and the version negotiated for each version offered.
fn initialize() -> Vec<Check> {
    vec![
        Check::code(
            ids::LIFECYCLE_INITIALIZE_RESULT,
            Level::Must,
            "initialize returns protocolVersion, capabilities and serverInfo {name, version}; every start of the server answers its first request",
            "basic/lifecycle.mdx, Initialization; schema.ts InitializeResult",
            |ctx| initialize_result(ctx).boxed(),
        )
        .quote("The server MUST respond with its own capabilities and information:")
        .because("schema.ts InitializeResult requires protocolVersion, capabilities and serverInfo {name, version}")
        .runs_in(RunsIn::Startup),
        Check::code(
            ids::LIFECYCLE_VERSION_NEGOTIATION,
            Level::Must,
            "for each legacy version offered, the server answers that version or another it supports",
            "basic/lifecycle.mdx, Initialization, Version Negotiation",
            |ctx| version_negotiation(ctx).boxed(),
        )
        .quote("If the server supports the requested protocol version, it MUST respond with the same version. Otherwise, the server MUST respond with another protocol version it supports.")
        .shares(VERSIONS)
        .only_handshake(),
        Check::code(
            ids::LIFECYCLE_VERSION_UNKNOWN,
            Level::Must,
            "an unknown version (1999-01-01) gets a version the server supports, not an error",
            "basic/lifecycle.mdx, Initialization, Version Negotiation",
            |ctx| version_unknown(ctx).boxed(),
        )
        .quote("Otherwise, the server MUST respond with another protocol version it supports.")
        .shares(VERSIONS)
        .only_handshake(),
        Check::code(
            ids::LIFECYCLE_VERSION_UNKNOWN_LATEST,
            Level::Should,
            "an unknown version gets the latest version the server supports",
            "basic/lifecycle.mdx, Initialization, Version Negotiation",
            |ctx| version_unknown_latest(ctx).boxed(),
        )
        .quote("This SHOULD be the latest version supported by the server.")
        .shares(VERSIONS)
        .only_handshake(),
    ]
}

/// What comes before, during and after the handshake: `initialized`, requests too early, a second `initialize`, `ping`.
fn around_the_handshake() -> Vec<Check> {
    vec![
        Check::code(
            ids::LIFECYCLE_INITIALIZED_NO_REPLY,
            Level::Must,
            "notifications/initialized gets no reply",
            "basic/index.mdx, Notifications",
            |ctx| initialized_no_reply(ctx).boxed(),
        )
        .quote("The receiver MUST NOT send a response.")
        .runs_in(RunsIn::Legacy)
        .runs_first(),
        Check::code(
            ids::LIFECYCLE_PING_BEFORE_INITIALIZE,
            Level::Info,
            "what ping gets before initialize",
            "basic/lifecycle.mdx, Initialization",
            |ctx| ping_before_initialize(ctx).boxed(),
        )
        .quote("The initialization phase MUST be the first interaction between client and server.")
        .because("it binds the client: nothing binds the server before initialize")
        .echo_level(Level::Must)
        .only_handshake(),
        Check::code(
            ids::LIFECYCLE_REQUESTS_BEFORE_INITIALIZE,
            Level::Info,
            "what tools/list gets before initialize",
            "basic/lifecycle.mdx, Initialization",
            |ctx| requests_before_initialize(ctx).boxed(),
        )
        .quote("The initialization phase MUST be the first interaction between client and server.")
        .because("it binds the client: nothing binds the server before initialize")
        .only_handshake(),
        Check::code(
            ids::LIFECYCLE_REQUESTS_BEFORE_INITIALIZED,
            Level::Info,
            "what tools/list gets after initialize (offering 2024-11-05) but before notifications/initialized",
            "basic/lifecycle.mdx, Initialization",
            |ctx| requests_before_initialized(ctx).boxed(),
        )
        .quote("The server SHOULD NOT send requests other than pings and logging before receiving the initialized notification.")
        .because("about what the server sends, not how it answers"),
        Check::code(
            ids::LIFECYCLE_SECOND_INITIALIZE,
            Level::Info,
            "what a second initialize gets",
            "basic/lifecycle.mdx, Initialization",
            |ctx| second_initialize(ctx).boxed(),
        )
        .because("the spec says nothing of a second initialize")
        .runs_in(RunsIn::Legacy)
        .ends_session(),
        Check::code(
            ids::LIFECYCLE_PING,
            Level::Must,
            "ping after the handshake gets an empty result {}",
            "basic/utilities/ping.mdx, Behavior Requirements",
            |ctx| ping(ctx).boxed(),
        )
        .quote("The receiver MUST respond promptly with an empty response:")
        .runs_in(RunsIn::Legacy),
    ]
}

async fn initialize_result(ctx: &Ctx) -> Outcome {
    let era = ctx.era();
    ctx.trace().absorb(&era.evidence());
    if era.modern && !era.legacy {
        return Outcome::Skip(
            "the server speaks only the modern era (no initialize); see era.detect".to_owned(),
        );
    }
    let reply = match &era.initialize_reply {
        Some(Ok(reply)) => reply,
        Some(Err(e)) => return Outcome::fail("a reply to initialize", e.clone()),
        None => return Outcome::fail("a reply to initialize", "none was asked for"),
    };
    let Some(r) = reply.get("result") else {
        return Outcome::fail("a result", describe(reply));
    };
    let mut problems = Vec::new();
    if !r.get("protocolVersion").is_some_and(Value::is_string) {
        problems.push("protocolVersion is not a string");
    }
    if !r.get("capabilities").is_some_and(Value::is_object) {
        problems.push("capabilities is not an object");
    }
    match r.get("serverInfo") {
        Some(info) if info.is_object() => {
            if !info.get("name").is_some_and(Value::is_string) {
                problems.push("serverInfo.name is not a string");
            }
            if !info.get("version").is_some_and(Value::is_string) {
                problems.push("serverInfo.version is not a string");
            }
        }
        _ => problems.push("serverInfo is not an object"),
    }
    if let Some(i) = r.get("instructions") {
        if !i.is_string() {
            problems.push("instructions is not a string");
        }
    }
    if problems.is_empty() {
        Outcome::pass(format!(
            "{} {} speaks {}",
            r.pointer("/serverInfo/name").map(short).unwrap_or_default(),
            r.pointer("/serverInfo/version")
                .map(short)
                .unwrap_or_default(),
            r["protocolVersion"]
        ))
    } else {
        Outcome::fail(
            "protocolVersion (string), capabilities (object), serverInfo {name, version}",
            format!("{}: {}", problems.join("; "), short(r)),
        )
    }
}

/// The version the server answers to `initialize` offering `offered`, each asked once per
/// target in a fresh process (the latest from the start-up's `initialize`).
async fn negotiated(ctx: &Ctx, offered: &str) -> Result<String, StepError> {
    let from = |reply: &Value| match reply.pointer("/result/protocolVersion") {
        Some(Value::String(v)) => Ok(v.clone()),
        _ => Err(StepError::Answer(describe(reply))),
    };
    if offered == LATEST {
        if let Some(Ok(reply)) = &ctx.era().initialize_reply {
            return from(reply);
        }
    }
    match &ctx.initialized(offered).await.reply {
        Ok(reply) => from(reply),
        Err(e) => Err(e.clone().into()),
    }
}

async fn version_negotiation(ctx: &Ctx) -> Outcome {
    let mut answers = Vec::new();
    for offered in ProtocolVersion::LEGACY.map(ProtocolVersion::as_str) {
        let answer = step!(
            negotiated(ctx, offered).await,
            format!("a protocolVersion for {offered}")
        );
        if answer.is_empty() {
            return Outcome::fail(format!("a version for {offered}"), "an empty string");
        }
        answers.push((offered.to_owned(), answer));
    }
    if let Ok(answer) = negotiated(ctx, UNKNOWN_VERSION).await {
        answers.push((UNKNOWN_VERSION.to_owned(), answer));
    }
    // Answering V means supporting V; a version the server supports MUST be echoed when it is
    // the one offered.
    for (offered, answer) in &answers {
        if let Some((_, own)) = answers.iter().find(|(o, _)| o == answer) {
            if own != answer {
                return Outcome::fail(
                    format!("{answer} answered with {answer}: the server named it for {offered}, so it supports it"),
                    format!("offered {answer}, it answered {own}"),
                );
            }
        }
    }
    let seen: Vec<String> = answers
        .iter()
        .map(|(o, a)| match (o == a, o == UNKNOWN_VERSION) {
            (true, true) => format!("{o} echoed (see lifecycle.version-unknown)"),
            (true, false) => format!("{o} ✓"),
            (false, _) => format!("{o} → {a}"),
        })
        .collect();
    Outcome::pass(seen.join(", "))
}

async fn version_unknown(ctx: &Ctx) -> Outcome {
    match negotiated(ctx, UNKNOWN_VERSION).await {
        Ok(v) if v == UNKNOWN_VERSION => Outcome::fail(
            "a version the server supports",
            format!("it echoed {UNKNOWN_VERSION}, a version that does not exist"),
        ),
        Ok(v) => Outcome::pass(format!("answered {v}")),
        Err(e) => Outcome::fail("a result naming a supported version", e),
    }
}

async fn version_unknown_latest(ctx: &Ctx) -> Outcome {
    let mut latest_supported = None;
    for v in ProtocolVersion::LEGACY.map(ProtocolVersion::as_str) {
        if negotiated(ctx, v).await.is_ok_and(|answer| answer == v) {
            latest_supported = Some(v);
        }
    }
    match (negotiated(ctx, UNKNOWN_VERSION).await, latest_supported) {
        (Ok(v), Some(best)) if v.as_str() >= best => Outcome::pass(format!("answered {v}")),
        (Ok(v), Some(best)) => Outcome::fail(format!("{best} (its latest)"), v),
        (Ok(v), None) => Outcome::pass(format!("answered {v}")),
        (Err(e), _) => Outcome::fail("a result naming a supported version", e),
    }
}

async fn initialized_no_reply(ctx: &Ctx) -> Outcome {
    let mut p = step!(ctx.ready().await, "a complete handshake");
    match p.until_barrier().await {
        Ok(quiet) => match quiet.describe() {
            None => Outcome::pass("no reply (a ping sent after it was answered first)"),
            Some(got) => Outcome::fail("no reply to a notification", got),
        },
        Err(e) => Outcome::fail("no reply, and the ping sent after it answered", e),
    }
}

/// A fresh process whose first request may go unanswered: after `--timeout` without a
/// reply, `initialize` follows as a barrier.
async fn before_initialize(ctx: &Ctx, method: &str) -> Result<Value, ProbeError> {
    let mut p = ctx.spawn().await?;
    p.set_barrier(initialize_request(LATEST));
    p.request(method, None).await
}

async fn ping_before_initialize(ctx: &Ctx) -> Outcome {
    match before_initialize(ctx, "ping").await {
        Ok(r) if r.get("result") == Some(&json!({})) => Outcome::pass("{}"),
        Ok(r) => Outcome::fail("result {}", describe(&r)),
        Err(e) => Outcome::fail("result {}", e),
    }
}

async fn requests_before_initialize(ctx: &Ctx) -> Outcome {
    match before_initialize(ctx, "tools/list").await {
        Ok(r) => Outcome::Observed(describe(&r)),
        Err(e) => Outcome::Observed(format!("no answer: {e}")),
    }
}

async fn requests_before_initialized(ctx: &Ctx) -> Outcome {
    let (mut p, _) = step!(
        ctx.after_initialize("2024-11-05").await,
        "a result to initialize"
    );
    match p.request("tools/list", None).await {
        Ok(r) => Outcome::Observed(describe(&r)),
        Err(e) => Outcome::Observed(format!("no answer: {e}")),
    }
}

async fn second_initialize(ctx: &Ctx) -> Outcome {
    let mut p = step!(ctx.ready().await, "a complete handshake");
    match p.initialize(LATEST).await {
        Ok(r) => Outcome::Observed(describe(&r)),
        Err(e) => Outcome::Observed(format!("no answer: {e}")),
    }
}

async fn ping(ctx: &Ctx) -> Outcome {
    let mut p = step!(ctx.ready().await, "a complete handshake");
    match p.request("ping", None).await {
        Ok(r) if r.get("result") == Some(&json!({})) => Outcome::pass("{}"),
        Ok(r) => Outcome::fail("result {}", describe(&r)),
        Err(e) => Outcome::fail("result {}", e),
    }
}
