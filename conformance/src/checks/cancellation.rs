//! Cancellation (`basic/utilities/cancellation.mdx`): a `notifications/cancelled` for a request
//! the server never saw.

use futures::FutureExt;
use serde_json::json;

use super::step;
use crate::catalog::Check;
use crate::check::{Level, Outcome, RunsIn};
use crate::ctx::{Ctx, Lease};
use crate::ids;
use crate::probe::ProbeError;

pub fn checks() -> Vec<Check> {
    vec![
        Check::code(
            ids::CANCELLATION_UNKNOWN_REQUEST,
            Level::Must,
            "notifications/cancelled for an unknown request gets no reply",
            "basic/index.mdx, Notifications; basic/utilities/cancellation.mdx",
            |ctx| no_reply(ctx).boxed(),
        )
        .quote("The receiver MUST NOT send a response.")
        .runs_in(RunsIn::Legacy),
        Check::code(
            ids::CANCELLATION_UNKNOWN_REQUEST_IGNORED,
            Level::Should,
            "after notifications/cancelled for an unknown request the server keeps serving",
            "basic/utilities/cancellation.mdx, Error Handling",
            |ctx| ignored(ctx).boxed(),
        )
        .quote("Invalid cancellation notifications SHOULD be ignored: … Unknown request IDs")
        .runs_in(RunsIn::Legacy),
    ]
}

async fn cancel_unknown(ctx: &Ctx) -> Result<Lease, ProbeError> {
    let mut p = ctx.ready().await?;
    p.notify(
        "notifications/cancelled",
        Some(json!({"requestId": "mcp-conformance-unknown", "reason": "test"})),
    )
    .await?;
    Ok(p)
}

async fn no_reply(ctx: &Ctx) -> Outcome {
    let mut p = step!(cancel_unknown(ctx).await, "a complete handshake");
    match p.until_barrier().await {
        Ok(quiet) => match quiet.describe() {
            None => Outcome::pass("no reply (a ping sent after it was answered first)"),
            Some(got) => Outcome::fail("no reply", got),
        },
        // Without the ping's reply nothing shows that no reply is coming.
        Err(e) => Outcome::fail("no reply, and the ping sent after it answered", e),
    }
}

async fn ignored(ctx: &Ctx) -> Outcome {
    let mut p = step!(cancel_unknown(ctx).await, "a complete handshake");
    match p.still_serving().await {
        Ok(()) => Outcome::pass("a ping after it was answered"),
        Err(e) => Outcome::fail("the server still answers a ping", e),
    }
}
