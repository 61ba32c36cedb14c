//! Rules judged on every message the server sends during the whole run (the probe's watch,
//! `probe/watch.rs`): log messages, progress notifications, requests for client capabilities.
//! A break is a finding its check owns and FAILs with, the frames attached. Each check's body
//! only gives the server occasion to send such messages (a short exercise); its verdict is
//! settled when the run ends ([`settle`]), saying how many messages of its kind the run saw.
//! None seen, where the rule is about what was sent, is an observation (INFO), not a PASS: the
//! check did watch the whole run, and the server may send none (progress and log messages are
//! MAY); a SKIP would say it did not run.

use futures::FutureExt;
use mcp_protocol::mcp::modern::{self, META_LOG_LEVEL};
use mcp_protocol::mcp::ProtocolVersion;
use serde_json::json;

use super::tools::tool_calls;
use crate::capability::Capability;
use crate::catalog::Check;
use crate::check::{judge, CheckResult, Level, Outcome, RunsIn, Transport};
use crate::config::RunConfig;
use crate::ctx::Ctx;
use crate::era::Era;
use crate::ids;
use crate::probe::{modern_meta, Probe, Tally};

/// What a body says: the verdict waits for the end of the run.
const PENDING: &str = "judged when the run ends, from every message the server sent";

fn pending() -> Outcome {
    Outcome::Skip(PENDING.to_owned())
}

/// A check that only watches: its evidence starts with the start-up's frames (as
/// framing.replies-in-kind's does); what breaks its rule later brings its own.
async fn watch_all(ctx: &Ctx) -> Outcome {
    ctx.trace().absorb(&ctx.era().evidence());
    pending()
}

pub fn checks() -> Vec<Check> {
    let mut checks = logging();
    checks.extend(progress());
    checks.push(
        Check::code(
            ids::CAPABILITIES_NEGOTIATED_REQUESTS,
            Level::Must,
            "in legacy sessions the server sends no request (roots/list, sampling/createMessage, elicitation/create) for a client capability the harness did not declare (--client-capabilities)",
            "basic/lifecycle.mdx, Operation (2025-11-25)",
            |ctx| exercise_tools(ctx).boxed(),
        )
        .quote("Both parties MUST: […] Only use capabilities that were successfully negotiated")
        .because("2026-07-28 stdio sessions get no server requests at all: modern.no-server-requests judges them")
        .runs_in(RunsIn::Legacy),
    );
    checks
}

fn logging() -> Vec<Check> {
    vec![
        Check::code(
            ids::LOGGING_MESSAGE_SHAPE,
            Level::Must,
            "every notifications/message of the run has a valid level (one of the 8 LoggingLevel values) and data",
            "schema.ts LoggingMessageNotificationParams (2025-11-25 and 2026-07-28)",
            |ctx| watch_all(ctx).boxed(),
        )
        .quote("schema.ts: LoggingMessageNotificationParams { level: LoggingLevel; logger?: string; data: unknown }")
        .because("required fields of the schema")
        .runs_in(RunsIn::Startup),
        Check::code(
            ids::LOGGING_MESSAGE_DECLARED,
            Level::Must,
            "no notifications/message in the run from a server that does not declare logging (in that era)",
            "server/utilities/logging.mdx, Capabilities (2025-11-25 and 2026-07-28)",
            |ctx| watch_all(ctx).boxed(),
        )
        .quote("Servers that emit log message notifications MUST declare the logging capability")
        .runs_in(RunsIn::Startup),
        Check::code(
            ids::LOGGING_MESSAGE_LEVEL,
            Level::Info,
            "after logging/setLevel, whether notifications/message below the level set still come (sets warning, makes a few requests, then sets debug)",
            "schema.ts SetLevelRequestParams; server/utilities/logging.mdx, Message Flow (2025-11-25)",
            |ctx| set_level(ctx).boxed(),
        )
        .quote("The server should send all logs at this level and higher (i.e., more severe) to the client as notifications/message.")
        .because("\"should\" in lowercase, and the page shows it only in a diagram: reported")
        .runs_in(RunsIn::Legacy)
        .needs(Capability::Logging, Era::Legacy),
        Check::code(
            ids::MODERN_LOGGING_MESSAGE_REQUESTED,
            Level::Must,
            "in 2026-07-28 sessions notifications/message come only while a request whose _meta carries io.modelcontextprotocol/logLevel is in progress",
            "2026-07-28 server/utilities/logging.mdx, Per-request log level",
            |ctx| per_request_level(ctx).boxed(),
        )
        .quote("The server MUST NOT emit notifications/message for a request that does not include this field.")
        .because("whether or not the server declares logging; a message at a level below the one requested is not judged (the page only permits at or above, with MAY)")
        .runs_in(RunsIn::Modern),
    ]
}

fn progress() -> Vec<Check> {
    vec![
        Check::code(
            ids::PROGRESS_TOKEN_KNOWN,
            Level::Must,
            "every notifications/progress of the run references a progressToken the harness sent (it adds one to each tools/call, resources/read, prompts/get, completion/complete: the tools checks' calls give the server occasion)",
            "basic/utilities/progress.mdx, Behavior Requirements",
            |ctx| watch_all(ctx).boxed(),
        )
        .quote("Progress notifications MUST only reference tokens that: Were provided in an active request; Are associated with an in-progress operation")
        .because("after the response the token is progress.stops-after-response's to judge")
        .runs_in(RunsIn::Startup),
        Check::code(
            ids::PROGRESS_INCREASING,
            Level::Must,
            "each token's progress strictly increases from one notifications/progress to the next",
            "basic/utilities/progress.mdx, Progress Flow",
            |ctx| watch_all(ctx).boxed(),
        )
        .quote("The progress value MUST increase with each notification, even if the total is unknown.")
        .runs_in(RunsIn::Startup),
        Check::code(
            ids::PROGRESS_STOPS_AFTER_RESPONSE,
            Level::Must,
            "no notifications/progress for a token after the response to its request (stdio, where the order is the server's)",
            "basic/utilities/progress.mdx, Implementation Notes",
            |ctx| watch_all(ctx).boxed(),
        )
        .quote("Progress notifications MUST stop after completion")
        .because("over HTTP the harness does not see one order across streams: not judged there")
        .runs_in(RunsIn::Startup)
        .transport(Transport::Stdio),
    ]
}

/// Gives the server occasion to send requests (and progress): the legacy era's read-only tool
/// calls, made once for the tools checks (`--no-tool-calls` makes none). What comes is judged
/// at the end of the run.
async fn exercise_tools(ctx: &Ctx) -> Outcome {
    if ctx.era().declares(Capability::Tools, Era::Legacy) {
        let _ = tool_calls(ctx, Era::Legacy).await;
    }
    pending()
}

/// `logging/setLevel` warning, a short session of ordinary and failing requests, then debug
/// (the widest, for the rest of the run).
async fn set_level(ctx: &Ctx) -> Outcome {
    if let Ok(mut p) = ctx.ready().await {
        let warning = json!({"level": "warning"});
        if p.request("logging/setLevel", Some(warning)).await.is_ok() {
            let _ = exercise(&mut p).await;
        }
        let _ = p
            .request("logging/setLevel", Some(json!({"level": "debug"})))
            .await;
    }
    pending()
}

/// A request that asks for log messages (`logLevel` debug), then a short session of requests
/// that do not.
async fn per_request_level(ctx: &Ctx) -> Outcome {
    if let Ok(mut p) = ctx.modern_session().await {
        let mut meta = modern_meta(ProtocolVersion::LATEST.as_str());
        meta[META_LOG_LEVEL] = json!("debug");
        let method = if ctx.era().declares(Capability::Tools, Era::Modern) {
            "tools/list"
        } else {
            modern::DISCOVER
        };
        let _ = p.request(method, Some(json!({"_meta": meta}))).await;
        let _ = exercise(&mut p).await;
    }
    pending()
}

async fn exercise(p: &mut Probe) -> Result<(), crate::probe::ProbeError> {
    p.exercise().await?;
    p.until_barrier().await.map(drop)
}

/// Does `result` wait for the end of the run for its verdict (its body ran, [`settle`] has
/// not yet)?
pub(crate) fn judged_at_end(result: &CheckResult) -> bool {
    matches!(&result.outcome, Outcome::Skip(text) if text == PENDING)
}

/// The verdict of a watched check whose body ran (its outcome is [`PENDING`]), from what the
/// whole run saw; a finding its check owns turns it into a FAIL afterwards.
pub(crate) fn settle(result: &mut CheckResult, tally: &Tally, config: &RunConfig) {
    if !judged_at_end(result) {
        return;
    }
    let Some(outcome) = verdict(&result.info.id, tally) else {
        return;
    };
    result.status = judge(result.info.level, &outcome, config.profile);
    result.outcome = outcome;
}

/// What the run's tally says for check `id`, when nothing broke its rule.
fn verdict(id: &str, t: &Tally) -> Option<Outcome> {
    let seen = |n: usize, what: &str, judged: String| match n {
        0 => Outcome::Observed(format!(
            "the server sent no {what} in the run (it may send none): nothing to judge"
        )),
        _ => Outcome::pass(format!("{n} {what} in the run, {judged}")),
    };
    Some(if ids::LOGGING_MESSAGE_SHAPE == *id {
        seen(
            t.log_messages,
            "notifications/message",
            "each with a valid level and data".to_owned(),
        )
    } else if ids::LOGGING_MESSAGE_DECLARED == *id {
        seen(
            t.log_messages,
            "notifications/message",
            "none where the server does not declare logging".to_owned(),
        )
    } else if ids::LOGGING_MESSAGE_LEVEL == *id {
        match t.log_after_set_level {
            0 => Outcome::Observed(
                "no notifications/message came after a logging/setLevel was answered: nothing \
                 to judge"
                    .to_owned(),
            ),
            n => Outcome::Observed(format!(
                "{n} notifications/message after logging/setLevel, none below the level set"
            )),
        }
    } else if ids::MODERN_LOGGING_MESSAGE_REQUESTED == *id {
        match t.modern_unlogged_requests {
            0 => Outcome::Observed(
                "no 2026-07-28 request without io.modelcontextprotocol/logLevel was answered: \
                 nothing to judge"
                    .to_owned(),
            ),
            n => Outcome::pass(format!(
                "{n} 2026-07-28 request(s) without io.modelcontextprotocol/logLevel answered, no \
                 notifications/message while only such requests were in progress"
            )),
        }
    } else if ids::PROGRESS_TOKEN_KNOWN == *id {
        seen(
            t.progress,
            "notifications/progress",
            format!(
                "each for a token of the {} request(s) that carried one",
                t.progress_tokens
            ),
        )
    } else if ids::PROGRESS_INCREASING == *id {
        seen(
            t.progress,
            "notifications/progress",
            "each token's progress increasing".to_owned(),
        )
    } else if ids::PROGRESS_STOPS_AFTER_RESPONSE == *id {
        seen(
            t.progress_ordered,
            "notifications/progress (stdio)",
            "none after its request's response".to_owned(),
        )
    } else if ids::CAPABILITIES_NEGOTIATED_REQUESTS == *id {
        seen(
            t.server_requests,
            "requests (in legacy sessions)",
            "none for a client capability the harness did not declare".to_owned(),
        )
    } else {
        return None;
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_seen_is_observed_not_passed() {
        let none = Tally::default();
        let observed =
            |id: ids::CheckId| matches!(verdict(id.as_str(), &none), Some(Outcome::Observed(_)));
        assert!(observed(ids::LOGGING_MESSAGE_SHAPE));
        assert!(observed(ids::LOGGING_MESSAGE_LEVEL));
        assert!(observed(ids::MODERN_LOGGING_MESSAGE_REQUESTED));
        assert!(observed(ids::PROGRESS_TOKEN_KNOWN));
        assert!(observed(ids::PROGRESS_INCREASING));
        assert!(observed(ids::PROGRESS_STOPS_AFTER_RESPONSE));
        assert!(observed(ids::LOGGING_MESSAGE_DECLARED));
        assert!(observed(ids::CAPABILITIES_NEGOTIATED_REQUESTS));
        let some = Tally {
            progress: 3,
            progress_tokens: 2,
            log_after_set_level: 1,
            ..none
        };
        let known = verdict(ids::PROGRESS_TOKEN_KNOWN.as_str(), &some);
        assert_eq!(
            known,
            Some(Outcome::pass(
                "3 notifications/progress in the run, each for a token of the 2 request(s) that \
                 carried one"
            ))
        );
        let level = verdict(ids::LOGGING_MESSAGE_LEVEL.as_str(), &some);
        assert!(matches!(level, Some(Outcome::Observed(_))));
        assert_eq!(verdict("tools.list-shape", &some), None);
    }
}
