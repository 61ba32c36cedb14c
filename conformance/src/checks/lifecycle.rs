//! Lifecycle (`basic/lifecycle.mdx`): initialize, version negotiation, initialized, ping.

use std::time::Duration;

use futures::FutureExt;
use serde_json::{json, Value};

use super::{code, step};
use crate::check::{Level, Outcome};
use crate::pattern::short;
use crate::runner::{Check, Ctx};
use crate::{LATEST, LEGACY_VERSIONS};

pub fn checks() -> Vec<Check> {
    vec![
        code(
            "lifecycle.initialize-result",
            Level::Must,
            "initialize returns protocolVersion, capabilities and serverInfo {name, version}",
            "basic/lifecycle.mdx, Initialization; schema.ts InitializeResult",
            |ctx| initialize_result(ctx).boxed(),
        ),
        code(
            "lifecycle.version-negotiation",
            Level::Must,
            "for each legacy version offered, the server answers that version or another it supports",
            "basic/lifecycle.mdx, Version Negotiation",
            |ctx| version_negotiation(ctx).boxed(),
        ),
        code(
            "lifecycle.version-unknown",
            Level::Must,
            "an unknown version (1999-01-01) gets a version the server supports, not an error",
            "basic/lifecycle.mdx, Version Negotiation",
            |ctx| version_unknown(ctx).boxed(),
        ),
        code(
            "lifecycle.version-unknown-latest",
            Level::Should,
            "an unknown version gets the latest version the server supports",
            "basic/lifecycle.mdx, Version Negotiation (\"This SHOULD be the latest version\")",
            |ctx| version_unknown_latest(ctx).boxed(),
        ),
        code(
            "lifecycle.initialized-no-reply",
            Level::Must,
            "notifications/initialized gets no reply",
            "basic/index.mdx, Notifications (\"The receiver MUST NOT send a response\")",
            |ctx| initialized_no_reply(ctx).boxed(),
        ),
        code(
            "lifecycle.ping-before-initialize",
            Level::Should,
            "ping is answered before initialize",
            "basic/lifecycle.mdx (\"SHOULD NOT send requests other than pings before\")",
            |ctx| ping_before_initialize(ctx).boxed(),
        ),
        code(
            "lifecycle.requests-before-initialize",
            Level::Info,
            "what tools/list gets before initialize",
            "basic/lifecycle.mdx, Initialization",
            |ctx| requests_before_initialize(ctx).boxed(),
        ),
        code(
            "lifecycle.requests-before-initialized",
            Level::Info,
            "what tools/list gets after initialize but before notifications/initialized",
            "basic/lifecycle.mdx, Initialization",
            |ctx| requests_before_initialized(ctx).boxed(),
        ),
        code(
            "lifecycle.second-initialize",
            Level::Info,
            "what a second initialize gets",
            "basic/lifecycle.mdx, Initialization",
            |ctx| second_initialize(ctx).boxed(),
        ),
        code(
            "lifecycle.ping",
            Level::Must,
            "ping after the handshake gets an empty result {}",
            "basic/utilities/ping.mdx (\"MUST respond promptly with an empty response\")",
            |ctx| ping(ctx).boxed(),
        ),
    ]
}

/// `error CODE MESSAGE` or `result {…}`: a reply in a few words.
pub(crate) fn describe(reply: &Value) -> String {
    match (reply.get("result"), reply.get("error")) {
        (_, Some(e)) => format!(
            "error {} {}",
            e.get("code").map(short).unwrap_or_default(),
            e.get("message").map(short).unwrap_or_default()
        ),
        (Some(r), None) => format!("result {}", short(r)),
        _ => short(reply),
    }
}

async fn initialize_result(ctx: &Ctx) -> Outcome {
    let mut p = step!(ctx.spawn().await, "the server starts");
    let reply = step!(p.initialize(LATEST).await, "a reply to initialize");
    let Some(r) = reply.get("result") else {
        return Outcome::fail("a result", describe(&reply));
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

async fn negotiated(ctx: &Ctx, offered: &str) -> Result<String, String> {
    let mut p = ctx.spawn().await?;
    let reply = p.initialize(offered).await?;
    match reply.pointer("/result/protocolVersion") {
        Some(Value::String(v)) => Ok(v.clone()),
        _ => Err(describe(&reply)),
    }
}

async fn version_negotiation(ctx: &Ctx) -> Outcome {
    let mut answers = Vec::new();
    for offered in LEGACY_VERSIONS {
        let answer = step!(
            negotiated(ctx, offered).await,
            format!("a protocolVersion for {offered}")
        );
        if answer.is_empty() {
            return Outcome::fail(format!("a version for {offered}"), "an empty string");
        }
        answers.push((offered.to_owned(), answer));
    }
    if let Ok(answer) = negotiated(ctx, "1999-01-01").await {
        answers.push(("1999-01-01".to_owned(), answer));
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
        .map(|(o, a)| {
            if o == a {
                format!("{o} ✓")
            } else {
                format!("{o} → {a}")
            }
        })
        .collect();
    Outcome::pass(seen.join(", "))
}

async fn version_unknown(ctx: &Ctx) -> Outcome {
    match negotiated(ctx, "1999-01-01").await {
        Ok(v) if v == "1999-01-01" => Outcome::fail(
            "a version the server supports",
            "it echoed 1999-01-01, a version that does not exist",
        ),
        Ok(v) => Outcome::pass(format!("answered {v}")),
        Err(e) => Outcome::fail("a result naming a supported version", e),
    }
}

async fn version_unknown_latest(ctx: &Ctx) -> Outcome {
    let latest_supported = {
        let mut best = None;
        for v in LEGACY_VERSIONS {
            if let Ok(answer) = negotiated(ctx, v).await {
                if answer == *v {
                    best = Some(answer);
                }
            }
        }
        best
    };
    match (negotiated(ctx, "1999-01-01").await, latest_supported) {
        (Ok(v), Some(best)) if v >= best => Outcome::pass(format!("answered {v}")),
        (Ok(v), Some(best)) => Outcome::fail(format!("{best} (its latest)"), v),
        (Ok(v), None) => Outcome::pass(format!("answered {v}")),
        (Err(e), _) => Outcome::fail("a result naming a supported version", e),
    }
}

async fn initialized_no_reply(ctx: &Ctx) -> Outcome {
    let mut p = step!(ctx.spawn().await, "the server starts");
    let reply = step!(p.initialize(LATEST).await, "a reply to initialize");
    if reply.get("result").is_none() {
        return Outcome::fail("initialize succeeds", describe(&reply));
    }
    step!(
        p.notify("notifications/initialized", None).await,
        "to write"
    );
    match p.silence(Duration::from_millis(500)).await {
        Ok(()) => Outcome::pass("no reply"),
        Err(got) => Outcome::fail("no reply to a notification", got),
    }
}

async fn ping_before_initialize(ctx: &Ctx) -> Outcome {
    let mut p = step!(ctx.spawn().await, "the server starts");
    match p.request("ping", None).await {
        Ok(r) if r.get("result") == Some(&json!({})) => Outcome::pass("{}"),
        Ok(r) => Outcome::fail("result {}", describe(&r)),
        Err(e) => Outcome::fail("result {}", e),
    }
}

async fn requests_before_initialize(ctx: &Ctx) -> Outcome {
    let mut p = step!(ctx.spawn().await, "the server starts");
    match p.request("tools/list", None).await {
        Ok(r) => Outcome::Observed(describe(&r)),
        Err(e) => Outcome::Observed(format!("no answer: {e}")),
    }
}

async fn requests_before_initialized(ctx: &Ctx) -> Outcome {
    let mut p = step!(ctx.spawn().await, "the server starts");
    step!(p.initialize(LATEST).await, "a reply to initialize");
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
