//! Logging requests (`server/utilities/logging.mdx`): in the legacy era `logging/setLevel`
//! with a valid and with an unknown level; in 2026-07-28, where `logging/setLevel` is gone, an
//! unknown level in a request's `_meta` `io.modelcontextprotocol/logLevel`. The log messages
//! themselves are judged elsewhere, over the whole run.

use futures::FutureExt;
use mcp_protocol::mcp::{modern, ProtocolVersion};
use serde_json::{json, Value};

use super::step;
use crate::capability::Capability;
use crate::catalog::Check;
use crate::check::{Level, Outcome, RunsIn};
use crate::ctx::Ctx;
use crate::era::Era;
use crate::ids;
use crate::pattern::{describe, short};
use crate::probe::{modern_meta, Probe, ProbeError};

/// The level `logging.set-level` and `logging.invalid-level` set, and leave the shared legacy
/// session at: from then on the server owes no `notifications/message` below it there.
pub(crate) const SESSION_LEVEL: &str = "info";

/// A level that is not one of RFC 5424's eight (`schema.ts` LoggingLevel).
const BOGUS_LEVEL: &str = "verbose";

pub fn checks() -> Vec<Check> {
    vec![
        Check::code(
            ids::LOGGING_SET_LEVEL,
            Level::Info,
            "what logging/setLevel with level \"info\" gets (the page's message flow answers it with an empty result)",
            "2025-11-25 server/utilities/logging.mdx, Setting Log Level, Message Flow; schema.ts SetLevelRequest",
            |ctx| set_level_check(ctx).boxed(),
        )
        .quote("To configure the minimum log level, clients MAY send a logging/setLevel request / schema.ts: SetLevelRequest { method: \"logging/setLevel\"; params: { level: LoggingLevel } }, answered by EmptyResult")
        .because("the page lets clients send it and shows an empty result, but no sentence binds the server to accept it: reported")
        .runs_in(RunsIn::Legacy)
        .needs(Capability::Logging, Era::Legacy),
        Check::code(
            ids::LOGGING_INVALID_LEVEL,
            Level::Should,
            "logging/setLevel with level \"verbose\" (not a log level) gets -32602 (where level \"info\" gets a result)",
            "2025-11-25 server/utilities/logging.mdx, Error Handling",
            |ctx| invalid_level_check(ctx).boxed(),
        )
        .quote("Servers SHOULD return standard JSON-RPC errors for common failure cases: Invalid log level: -32602 (Invalid params)")
        .runs_in(RunsIn::Legacy)
        .needs(Capability::Logging, Era::Legacy),
        Check::code(
            ids::MODERN_LOGGING_INVALID_LEVEL,
            Level::Should,
            "a request whose _meta io.modelcontextprotocol/logLevel is \"verbose\" (not a log level) gets -32602 (where the same request with \"error\" gets a result)",
            "2026-07-28 server/utilities/logging.mdx, Error Handling",
            |ctx| modern_invalid_level(ctx).boxed(),
        )
        .quote("If the io.modelcontextprotocol/logLevel value carried in a request's _meta is not a recognized log level, the server SHOULD reject that request with a standard JSON-RPC error: Invalid log level: -32602 (Invalid params)")
        .runs_in(RunsIn::Modern)
        .needs(Capability::Logging, Era::Modern),
    ]
}

async fn set_level(p: &mut Probe, level: &str) -> Result<Value, ProbeError> {
    p.request("logging/setLevel", Some(json!({ "level": level })))
        .await
}

async fn set_level_check(ctx: &Ctx) -> Outcome {
    let mut p = step!(ctx.ready().await, "a complete handshake");
    let reply = step!(set_level(&mut p, SESSION_LEVEL).await, "a reply");
    match reply.get("result") {
        Some(result) if result.is_object() => {
            Outcome::pass(format!("level {SESSION_LEVEL:?}: {}", short(result)))
        }
        Some(other) => Outcome::fail("an EmptyResult (an object)", short(other)),
        None => Outcome::fail(
            format!("a result for level {SESSION_LEVEL:?}"),
            describe(&reply),
        ),
    }
}

async fn invalid_level_check(ctx: &Ctx) -> Outcome {
    let mut p = step!(ctx.ready().await, "a complete handshake");
    let reply = step!(set_level(&mut p, BOGUS_LEVEL).await, "a reply");
    // The valid level after the bogus one: the control, and it leaves the session at
    // SESSION_LEVEL whatever the bogus one did.
    let control = step!(set_level(&mut p, SESSION_LEVEL).await, "a reply");
    if control.get("result").is_none() {
        return Outcome::Skip(format!(
            "logging/setLevel {SESSION_LEVEL:?} got {}: an error for {BOGUS_LEVEL:?} would prove \
             nothing (logging.set-level judges that)",
            describe(&control)
        ));
    }
    judge(&reply, &format!("logging/setLevel {BOGUS_LEVEL:?}"))
}

/// -32602 passes; anything else (a result, another error) does not.
fn judge(reply: &Value, what: &str) -> Outcome {
    match reply.pointer("/error/code").and_then(Value::as_i64) {
        Some(-32602) => Outcome::pass(format!("{what}: -32602")),
        _ => Outcome::fail(format!("error -32602 for {what}"), describe(reply)),
    }
}

/// The cheapest request the server declares in 2026-07-28: a list of a declared feature, else
/// `server/discover`.
fn cheap_request(ctx: &Ctx) -> &'static str {
    [
        (Capability::Tools, "tools/list"),
        (Capability::Prompts, "prompts/list"),
        (Capability::Resources, "resources/list"),
    ]
    .into_iter()
    .find(|(c, _)| ctx.era().declares(*c, Era::Modern))
    .map_or(modern::DISCOVER, |(_, method)| method)
}

/// `params` whose `_meta` is the session's 2026-07-28 `_meta` plus `logLevel: level`.
fn with_log_level(level: &str) -> Value {
    let mut meta = modern_meta(ProtocolVersion::LATEST.as_str());
    if let Some(obj) = meta.as_object_mut() {
        obj.insert(modern::META_LOG_LEVEL.to_owned(), json!(level));
    }
    json!({ "_meta": meta })
}

async fn modern_invalid_level(ctx: &Ctx) -> Outcome {
    let method = cheap_request(ctx);
    let mut p = step!(ctx.modern_session().await, "the server starts");
    let control = step!(
        p.request(method, Some(with_log_level("error"))).await,
        "a reply"
    );
    if control.get("result").is_none() {
        return Outcome::Skip(format!(
            "{method} with logLevel \"error\" got {}: an error for {BOGUS_LEVEL:?} would prove \
             nothing",
            describe(&control)
        ));
    }
    let reply = step!(
        p.request(method, Some(with_log_level(BOGUS_LEVEL))).await,
        "a reply"
    );
    judge(&reply, &format!("{method} with logLevel {BOGUS_LEVEL:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_level_joins_the_modern_meta() {
        let params = with_log_level("verbose");
        assert_eq!(params["_meta"][modern::META_LOG_LEVEL], "verbose");
        assert_eq!(
            params["_meta"][modern::META_PROTOCOL_VERSION],
            ProtocolVersion::LATEST.as_str()
        );
        assert!(params["_meta"][modern::META_CLIENT_CAPABILITIES].is_object());
        assert!(!modern::LOG_LEVELS.contains(&BOGUS_LEVEL));
        assert!(modern::LOG_LEVELS.contains(&SESSION_LEVEL));
    }
}
