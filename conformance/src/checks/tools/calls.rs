//! Calling the server's read-only tools, once per target and era, for the checks that judge
//! tool results. Only tools annotated `readOnlyHint: true` and not destructive are called, with
//! arguments that satisfy their `inputSchema` ([`super::args`]); tools with an `outputSchema`
//! first, at most `--max-items` of them. Each call waits `--tool-timeout`; one that outlives
//! it, or fails, ends the calls (the server may still be busy with it), and so does the
//! tool-call time being spent. `--no-tool-calls` calls nothing.

use std::sync::Arc;

use serde_json::{json, Value};

use super::args::arguments_for;
use super::{list_pages, tools_of};
use crate::check::Outcome;
use crate::ctx::{
    CallOutcome, Ctx, ToolCall, ToolCalls, Unlisted, TOOL_CALLS_LEGACY, TOOL_CALLS_MODERN,
};
use crate::era::Era;
use crate::pattern::short;
use crate::probe::{Probe, ProbeError};

pub(crate) const NO_SAFE_TOOL: &str =
    "no tool is annotated readOnlyHint: true; the harness does not call tools that may have effects";
pub(crate) const CALLS_OFF: &str = "tool calls are off (--no-tool-calls)";

/// The era's tool calls, made once per target in a process of their own.
pub(crate) async fn observed(ctx: &Ctx, era: Era) -> Arc<ToolCalls> {
    let key = match era {
        Era::Legacy => &TOOL_CALLS_LEGACY,
        Era::Modern => &TOOL_CALLS_MODERN,
    };
    ctx.observe(key, |ctx| async move { make(&ctx, era).await })
        .await
}

async fn make(ctx: &Ctx, era: Era) -> ToolCalls {
    let mut calls = ToolCalls {
        negotiated: None,
        listed: Err(Unlisted(String::new())),
        none_called: None,
        calls: Vec::new(),
        server_requests: Vec::new(),
    };
    let mut p = match session(ctx, era).await {
        Ok((p, negotiated)) => {
            calls.negotiated = negotiated;
            p
        }
        Err(e) => {
            calls.listed = Err(Unlisted(format!("the server did not start a session: {e}")));
            return calls;
        }
    };
    calls.listed = list_pages(&mut p)
        .await
        .map(|pages| tools_of(&pages))
        .map_err(|e| Unlisted(format!("tools/list: {e}")));
    if let Ok(tools) = &calls.listed {
        let tools = tools.clone();
        plan(ctx, &tools, &mut calls);
        call_all(ctx, &mut p, &mut calls).await;
    }
    calls.server_requests = server_requests(&p);
    calls
}

/// A process of its own in `era`, and the version a legacy handshake negotiated.
async fn session(ctx: &Ctx, era: Era) -> Result<(Probe, Option<String>), ProbeError> {
    let mut p = ctx.spawn().await?;
    if era == Era::Modern {
        p.go_modern();
        return Ok((p, None));
    }
    let result = p.handshake(crate::LATEST).await?;
    let version = result.get("protocolVersion").and_then(Value::as_str);
    Ok((p, version.map(str::to_owned)))
}

/// Which tools to call (at most `--max-items`, those with an `outputSchema` first) with which
/// arguments; nothing is sent yet.
fn plan(ctx: &Ctx, tools: &[Value], calls: &mut ToolCalls) {
    if !ctx.config().tool_calls {
        calls.none_called = Some(CALLS_OFF.to_owned());
        return;
    }
    let mut safe: Vec<&Value> = tools.iter().filter(|t| is_safe(t)).collect();
    if safe.is_empty() {
        calls.none_called = Some(NO_SAFE_TOOL.to_owned());
        return;
    }
    safe.sort_by_key(|t| t.get("outputSchema").is_none());
    for tool in safe.into_iter().take(ctx.config().max_items.max(1)) {
        let name = tool.get("name").and_then(Value::as_str).unwrap_or("?");
        let (arguments, outcome) =
            match arguments_for(tool.get("inputSchema").unwrap_or(&json!({}))) {
                Ok(args) => (args, CallOutcome::NotReached("not called yet".to_owned())),
                Err(why) => (
                    Value::Null,
                    CallOutcome::NoArguments(format!(
                        "no arguments satisfying its inputSchema could be made: {why}"
                    )),
                ),
            };
        calls.calls.push(ToolCall {
            tool: tool.clone(),
            name: name.to_owned(),
            arguments,
            outcome,
        });
    }
}

/// Makes the planned calls, one after another, each waiting `--tool-timeout`.
async fn call_all(ctx: &Ctx, p: &mut Probe, calls: &mut ToolCalls) {
    let limit = ctx.config().tool_wait;
    let started = tokio::time::Instant::now();
    let mut stop: Option<String> = None;
    for call in &mut calls.calls {
        if !matches!(call.outcome, CallOutcome::NotReached(_)) {
            continue;
        }
        if let Some(why) = &stop {
            call.outcome = CallOutcome::NotReached(why.clone());
            continue;
        }
        if started.elapsed() >= limit {
            stop = Some(format!(
                "not called: the calls before it took {limit:?} (--tool-timeout)"
            ));
            call.outcome = CallOutcome::NotReached(stop.clone().unwrap_or_default());
            continue;
        }
        let params = json!({"name": call.name, "arguments": call.arguments});
        call.outcome = match p.call_tool(params, limit).await {
            Ok(reply) => CallOutcome::Reply(reply),
            Err(ProbeError::Timeout { limit, .. }) => {
                stop = Some(format!("not called: {} outlived its wait", call.name));
                CallOutcome::OutlivedWait(limit)
            }
            Err(e) => {
                stop = Some(format!("not called: {} failed: {e}", call.name));
                CallOutcome::Failed(e)
            }
        };
    }
}

/// A tool the harness may call: annotated read-only and not destructive.
pub(crate) fn is_safe(tool: &Value) -> bool {
    tool.pointer("/annotations/readOnlyHint") == Some(&json!(true))
        && tool.pointer("/annotations/destructiveHint") != Some(&json!(true))
}

/// The JSON-RPC requests (objects with a method and an id) the server wrote, in short.
pub(crate) fn server_requests(p: &Probe) -> Vec<String> {
    p.inbox()
        .received()
        .iter()
        .flat_map(|v| match v {
            Value::Array(items) => items.clone(),
            other => vec![other.clone()],
        })
        .filter(|v| v.get("method").is_some() && v.get("id").is_some())
        .map(|v| short(&v))
        .collect()
}

/// The replies to judge: each call that got a response object (tool and reply), or the Skip
/// saying why there is none.
pub(crate) fn replies(calls: &ToolCalls) -> Result<Vec<(&ToolCall, &Value)>, Outcome> {
    if let Err(why) = &calls.listed {
        return Err(Outcome::fail("a tools/list result", why));
    }
    if let Some(why) = &calls.none_called {
        return Err(Outcome::Skip(why.clone()));
    }
    let got: Vec<(&ToolCall, &Value)> = calls
        .calls
        .iter()
        .filter_map(|c| match &c.outcome {
            CallOutcome::Reply(reply) => Some((c, reply)),
            _ => None,
        })
        .collect();
    if got.is_empty() {
        return Err(Outcome::Skip(not_judged(calls)));
    }
    Ok(got)
}

/// Why no call of these gave anything to judge, call by call.
pub(crate) fn not_judged(calls: &ToolCalls) -> String {
    let each: Vec<String> = calls
        .calls
        .iter()
        .map(|c| format!("{}: {}", c.name, unjudged(c)))
        .collect();
    format!("no tool result to judge: {}", each.join("; "))
}

/// In words, why a call gave nothing to judge.
pub(crate) fn unjudged(call: &ToolCall) -> String {
    match &call.outcome {
        CallOutcome::Reply(reply) => match reply.get("error") {
            Some(error) => format!(
                "tools/call with arguments made from its schema got a JSON-RPC error ({}): no \
                 result to check",
                short(error)
            ),
            None => "a result".to_owned(),
        },
        CallOutcome::OutlivedWait(limit) => format!(
            "not judged: no reply within {limit:?} (--tool-timeout; no sentence bounds how long \
             a tool may run)"
        ),
        CallOutcome::Failed(e) => format!("the call failed: {e}"),
        CallOutcome::NoArguments(why) => format!("not called: {why}"),
        CallOutcome::NotReached(why) => why.clone(),
    }
}
