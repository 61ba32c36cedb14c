//! JSON-RPC 2.0 behaviour (`basic/index.mdx`, jsonrpc.org/specification §4–§6).
//!
//! What a server does with input that is not a valid message is INFO: the spec binds the
//! client ("The client MUST NOT write anything to the server's stdin that is not a valid MCP
//! message") and says nothing of the server, so the harness reports it without judging.

use std::collections::HashMap;

use futures::FutureExt;
use serde_json::{json, Value};

use super::step;
use crate::catalog::Check;
use crate::check::{Level, Outcome, RunsIn};
use crate::ctx::{Ctx, Malformed, Unjudged, MALFORMED};
use crate::ids::{self, CheckId};
use crate::pattern::short;
use crate::probe::{is_response, Got, ProbeError, Quiet};

/// What the harness writes when a check needs input that is not a valid message.
const CLIENT_MUST_NOT: &str =
    "The client MUST NOT write anything to the server's stdin that is not a valid MCP message.";
/// Why the checks that send such input are INFO.
const SERVER_UNBOUND: &str =
    "the harness sends what a client must not: nothing binds the server then";

pub fn checks() -> Vec<Check> {
    [errors(), ids(), replies(), batches()].concat()
}

/// Requests the server cannot serve: an unknown method, and input a client must not send.
fn errors() -> Vec<Check> {
    vec![
        Check::code(
            ids::JSONRPC_UNKNOWN_METHOD,
            Level::Must,
            "an unknown method gets an error response with the request's id (the code, -32601 in JSON-RPC's table, is reported)",
            "basic/index.mdx, Error Responses; JSON-RPC 2.0 §5, §5.1",
            |ctx| unknown_method(ctx).boxed(),
        )
        .quote("Error responses MUST include the same ID as the request they correspond to (except in error cases where the ID could not be read due a malformed request). / When a rpc call encounters an error, the Response Object MUST contain the error member (JSON-RPC 2.0 §5.1)")
        .because("the code (-32601 in JSON-RPC's table) is reported: no sentence requires it")
        .runs_in(RunsIn::Legacy),
        malformed(
            ids::JSONRPC_PARSE_ERROR_KEEPS_SERVING,
            "after a line that is not JSON the server keeps serving",
            "basic/transports.mdx, stdio",
            |ctx| parse_error_keeps_serving(ctx).boxed(),
        ),
        malformed(
            ids::JSONRPC_PARSE_ERROR_REPLY,
            "what a line that is not JSON gets (JSON-RPC's -32700 with a null id, or nothing)",
            "basic/transports.mdx, stdio; JSON-RPC 2.0 §5.1",
            |ctx| parse_error_reply(ctx).boxed(),
        ),
        invalid(
            ids::JSONRPC_INVALID_REQUEST_NO_JSONRPC,
            "what a request without \"jsonrpc\" gets (-32600 with its id or null)",
            "JSON-RPC 2.0 §4, §5.1",
            NO_JSONRPC,
        ),
        invalid(
            ids::JSONRPC_INVALID_REQUEST_WRONG_VERSION,
            "what a request with \"jsonrpc\": \"1.0\" gets (-32600 with its id or null)",
            "JSON-RPC 2.0 §4, §5.1",
            WRONG_VERSION,
        ),
        invalid(
            ids::JSONRPC_INVALID_REQUEST_NULL_ID,
            "what a request with \"id\": null gets (-32600 with a null or absent id)",
            "basic/index.mdx, Requests (\"the ID MUST NOT be null\" binds the sender); JSON-RPC 2.0 §5.1",
            NULL_ID,
        ),
        invalid(
            ids::JSONRPC_INVALID_REQUEST_NUMERIC_METHOD,
            "what a request whose method is a number gets (-32600 with its id or null)",
            "JSON-RPC 2.0 §4 (\"method … A String\"), §5.1",
            NUMERIC_METHOD,
        ),
        malformed(
            ids::JSONRPC_INVALID_REQUEST_KEEPS_SERVING,
            "after requests of the wrong shape (and [] and 42) the server keeps serving",
            "basic/transports.mdx, stdio",
            |ctx| invalid_keeps_serving(ctx).boxed(),
        ),
    ]
}

/// Ids echoed as they were sent.
fn ids() -> Vec<Check> {
    vec![
        Check::code(
            ids::JSONRPC_IDS_ECHOED,
            Level::Must,
            "string and integer ids (0, -1, \"\", \"abc\", 2^53-1, non-ASCII, \"1\") are echoed exactly",
            "basic/index.mdx, Result Responses; JSON-RPC 2.0 §5",
            |ctx| {
                ids_echoed(ctx, &["0", "-1", "\"\"", "\"abc\"", "9007199254740991", "\"é🦀你好\"", "\"1\""], true)
                    .boxed()
            },
        )
        .quote("Result responses MUST include the same ID as the request they correspond to.")
        .runs_in(RunsIn::Legacy),
        Check::code(
            ids::JSONRPC_IDS_BEYOND_2_53,
            Level::Info,
            "what integer ids beyond 2^53 (2^53+1, 2^64-1) come back as",
            "RFC 8259 §6; basic/index.mdx, Requests",
            |ctx| ids_echoed(ctx, &["9007199254740993", "18446744073709551615"], false).boxed(),
        )
        .quote("This specification allows implementations to set limits on the range and precision of numbers accepted. (RFC 8259 §6)")
        .because("beyond 2^53 a JSON number is not interoperable: what comes back is reported")
        .runs_in(RunsIn::Legacy)
        .echo_level(Level::Must),
    ]
}

/// Which messages get replies, how many, and their shape.
fn replies() -> Vec<Check> {
    vec![
        Check::code(
            ids::JSONRPC_UNKNOWN_NOTIFICATION,
            Level::Must,
            "an unknown notification gets no reply, and a ping after it is answered",
            "basic/index.mdx, Notifications; basic/utilities/ping.mdx",
            |ctx| unknown_notification(ctx).boxed(),
        )
        .quote("The receiver MUST NOT send a response. / The receiver MUST respond promptly with an empty response:")
        .because("both: no reply, and the ping after it answered")
        .runs_in(RunsIn::Legacy),
        Check::code(
            ids::JSONRPC_CONCURRENT_REQUESTS,
            Level::Must,
            "64 requests in flight are each answered exactly once (in any order)",
            "JSON-RPC 2.0 §5; basic/index.mdx, Result Responses",
            |ctx| concurrent(ctx).boxed(),
        )
        .quote("When a rpc call is made, the Server MUST reply with a Response, except for in the case of Notifications. (JSON-RPC 2.0 §5) / Result responses MUST include the same ID as the request they correspond to.")
        .runs_in(RunsIn::Legacy),
        Check::code(
            ids::JSONRPC_RESPONSES_WELL_FORMED,
            Level::Must,
            "every response of the shared session has jsonrpc \"2.0\", the request's id, and exactly one of result and error {code, message}; over HTTP, a reply to a single request wrapped in an array fails it wherever it is met",
            "basic/index.mdx, Responses; JSON-RPC 2.0 §5, §5.1",
            |ctx| well_formed(ctx).boxed(),
        )
        .quote("Result responses MUST include the same ID as the request they correspond to. / Result responses MUST include a result field. / Error responses MUST include an error field with a code and message. / Error codes MUST be integers. / When a rpc call is made, the Server MUST reply with a Response, except for in the case of Notifications. The Response is expressed as a single JSON Object (JSON-RPC 2.0 §5)")
        .runs_in(RunsIn::Legacy),
    ]
}

/// JSON-RPC batches, in the revision that has them and after.
fn batches() -> Vec<Check> {
    vec![
        Check::code(
            ids::JSONRPC_BATCH_2025_03_26,
            Level::Must,
            "under 2025-03-26 the requests of a JSON-RPC batch are answered (one array of responses, as JSON-RPC 2.0 §6 says a server should)",
            "2025-03-26 basic/index.mdx, Batching; JSON-RPC 2.0 §6",
            |ctx| batch_2025_03_26(ctx).boxed(),
        )
        .quote("MCP implementations MAY support sending JSON-RPC batches, but MUST support receiving JSON-RPC batches.")
        .because("one array of responses is JSON-RPC's lower-case should: separate replies pass")
        // Most servers never answer a batch: its wait should overlap the rest of the run.
        .runs_first(),
        Check::code(
            ids::JSONRPC_BATCH_AFTER_2025_03_26,
            Level::Info,
            "what a batch gets under 2025-06-18, which removed batches",
            "2025-06-18 changelog, Major changes",
            |ctx| batch_latest(ctx).boxed(),
        )
        .quote("Remove support for JSON-RPC batching")
        .because("what a server does with a batch it no longer supports is reported"),
    ]
}

const NO_JSONRPC: &str = r#"{"id":41,"method":"ping"}"#;
const WRONG_VERSION: &str = r#"{"jsonrpc":"1.0","id":42,"method":"ping"}"#;
const NULL_ID: &str = r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#;
const NUMERIC_METHOD: &str = r#"{"jsonrpc":"2.0","id":44,"method":5}"#;
/// Everything the invalid-request checks send, in order, in one process.
const INVALID: [&str; 6] = [
    NO_JSONRPC,
    WRONG_VERSION,
    NULL_ID,
    NUMERIC_METHOD,
    "[]",
    "42",
];

fn invalid(id: CheckId, description: &str, spec: &str, body: &'static str) -> Check {
    let f: crate::catalog::CheckFn = match body {
        NO_JSONRPC => |ctx| judge_invalid(ctx, NO_JSONRPC, Some(json!(41))).boxed(),
        WRONG_VERSION => |ctx| judge_invalid(ctx, WRONG_VERSION, Some(json!(42))).boxed(),
        NULL_ID => |ctx| judge_invalid(ctx, NULL_ID, None).boxed(),
        _ => |ctx| judge_invalid(ctx, NUMERIC_METHOD, Some(json!(44))).boxed(),
    };
    malformed(id, description, spec, f)
}

/// A check of what the server does with input a client must not send: INFO (nothing binds the
/// server), a MUST of our own in the echo profile, and one observation for all of them, started
/// first (a server may go silent after such input).
fn malformed(id: CheckId, description: &str, spec: &str, f: crate::catalog::CheckFn) -> Check {
    Check::code(id, Level::Info, description, spec, f)
        .quote(CLIENT_MUST_NOT)
        .because(SERVER_UNBOUND)
        .echo_level(Level::Must)
        .shares(MALFORMED.name)
        .runs_first()
}

fn error_code(reply: &Value) -> Option<i64> {
    reply.pointer("/error/code").and_then(Value::as_i64)
}

fn null_or_absent_id(reply: &Value) -> bool {
    matches!(reply.get("id"), None | Some(Value::Null))
}

async fn unknown_method(ctx: &Ctx) -> Outcome {
    let mut p = step!(ctx.ready().await, "a complete handshake");
    let reply = step!(
        p.request("no/such/method", Some(json!({}))).await,
        "a reply"
    );
    match error_code(&reply) {
        Some(code) if reply.pointer("/error/message").is_some() => {
            Outcome::pass(format!("error {code}"))
        }
        _ => Outcome::fail("an error response", short(&reply)),
    }
}

/// A line that is not JSON (`{"jsonrpc": "2.0", "id": 7, "method": ` cut short), sent first.
const NOT_JSON: &str = r#"{"jsonrpc": "2.0", "id": 7, "method": "#;

/// In one fresh, ready session, observed once for the checks that judge it: the line that is
/// not JSON, then each invalid body, each followed by a ping. For each, the replies that came
/// before the ping's, or why it could not be judged (the server stopped answering after an
/// earlier one: it is not sent then).
async fn after_malformed(ctx: &Ctx) -> std::sync::Arc<Malformed> {
    ctx.observe(&MALFORMED, |ctx| async move {
        let mut p = ctx.ready().await?;
        let mut seen = Vec::new();
        let mut broken: Option<(&'static str, ProbeError)> = None;
        for body in std::iter::once(NOT_JSON).chain(INVALID) {
            if let Some((after, because)) = &broken {
                seen.push(Err(Unjudged::NotSent {
                    after,
                    because: because.clone(),
                }));
                continue;
            }
            let frame = p.frame(body.as_bytes());
            let quiet = match p.send_raw(&frame).await {
                Ok(()) => p.until_barrier().await,
                Err(e) => Err(e),
            };
            if let Err(e) = &quiet {
                broken = Some((body, e.clone()));
            }
            seen.push(quiet.map_err(Unjudged::from));
        }
        Ok(seen)
    })
    .await
}

/// What came after `body` in [`after_malformed`]'s session.
fn after<T>(
    observed: &Malformed,
    body: &str,
    judge: impl FnOnce(&Result<Quiet, Unjudged>) -> T,
) -> Result<T, Outcome> {
    let seen = observed
        .as_ref()
        .map_err(|e| Outcome::fail("a complete handshake", e))?;
    let index = std::iter::once(NOT_JSON)
        .chain(INVALID)
        .position(|b| b == body)
        .unwrap_or(0);
    seen.get(index)
        .map(judge)
        .ok_or_else(|| Outcome::fail("a reply", "not sent"))
}

async fn parse_error_keeps_serving(ctx: &Ctx) -> Outcome {
    let observed = after_malformed(ctx).await;
    let judged = after(&observed, NOT_JSON, |quiet| match quiet {
        Ok(_) => Outcome::pass("a ping after it was answered"),
        Err(e) => Outcome::fail("the server still answers a ping", e),
    });
    judged.unwrap_or_else(|outcome| outcome)
}

async fn parse_error_reply(ctx: &Ctx) -> Outcome {
    let expected = "error -32700 with id null";
    let observed = after_malformed(ctx).await;
    let judged = after(&observed, NOT_JSON, |quiet| match quiet {
        Ok(quiet) => match quiet.responses.first() {
            Some(r) if error_code(r) == Some(-32700) && null_or_absent_id(r) => {
                Outcome::pass(short(r))
            }
            Some(r) => Outcome::fail(expected, short(r)),
            None => Outcome::fail(
                expected,
                "no reply (a ping sent after it was answered first)",
            ),
        },
        Err(e) => Outcome::fail(expected, e),
    });
    judged.unwrap_or_else(|outcome| outcome)
}

async fn judge_invalid(ctx: &Ctx, body: &str, id: Option<Value>) -> Outcome {
    let expected = match &id {
        Some(id) => format!("error -32600 with id {id} (or null)"),
        None => "error -32600 with id null".to_owned(),
    };
    let observed = after_malformed(ctx).await;
    let judged = after(&observed, body, |quiet| {
        let quiet = match quiet {
            Ok(quiet) => quiet,
            Err(e) => return Outcome::fail(expected.clone(), e),
        };
        let reply = quiet
            .responses
            .iter()
            .find(|r| id.as_ref().is_some_and(|id| r.get("id") == Some(id)))
            .or_else(|| quiet.responses.iter().find(|r| null_or_absent_id(r)));
        match reply {
            Some(r) if error_code(r) == Some(-32600) => Outcome::pass(short(r)),
            Some(r) => Outcome::fail(expected.clone(), short(r)),
            None => Outcome::fail(
                expected.clone(),
                "no reply (a ping sent after it was answered first)",
            ),
        }
    });
    judged.unwrap_or_else(|outcome| outcome)
}

async fn invalid_keeps_serving(ctx: &Ctx) -> Outcome {
    let observed = after_malformed(ctx).await;
    match observed.as_ref() {
        Ok(seen) => match seen[1..].iter().find_map(|s| s.as_ref().err()) {
            None => Outcome::pass(format!(
                "a ping after each of {} was answered",
                INVALID.len()
            )),
            Some(e) => Outcome::fail("the server still answers a ping", e),
        },
        Err(e) => Outcome::fail("a complete handshake", e),
    }
}

/// `required`: a MUST, so a reply that comes after the ping's is waited for (up to --timeout);
/// else what came before the ping's reply is what is reported.
async fn ids_echoed(ctx: &Ctx, ids: &[&str], required: bool) -> Outcome {
    let mut p = step!(ctx.ready().await, "a complete handshake");
    // Raw text, so the harness's own JSON handling cannot change the ids; each followed by a
    // ping, so the reply to compare is the one that comes before the ping's.
    for &id in ids {
        let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
        let frame = p.frame(body.as_bytes());
        step!(p.send_raw(&frame).await, "to write");
        let want: Value = step!(
            serde_json::from_str(id).map_err(|e| e.to_string()),
            "a valid id"
        );
        let garbage_before = p.inbox().garbage_total();
        let mut quiet = step!(p.until_barrier().await, format!("a reply with id {id}"));
        // Stray null-id errors are other checks' business.
        let replied = |responses: &[Value]| responses.iter().any(|r| !null_or_absent_id(r));
        if required {
            p.late_replies(&mut quiet, replied).await;
        }
        let reply = quiet.responses.iter().find(|r| !null_or_absent_id(r));
        let Some(reply) = reply else {
            return Outcome::fail(
                format!("a reply with id {id}"),
                if required {
                    format!("no reply within {:?}", p.wait())
                } else {
                    "no reply (a ping sent after it was answered first)".to_owned()
                } + &p.inbox().garbage_note(garbage_before),
            );
        };
        match reply.get("id") {
            Some(got) if *got == want => {}
            Some(got) if got.is_number() && want.is_number() => {
                return Outcome::fail(
                    format!("id {id} echoed exactly"),
                    format!("id {got}: the server reads ids as floating-point numbers"),
                )
            }
            Some(got) => {
                return Outcome::fail(format!("id {id} echoed exactly"), format!("id {got}"))
            }
            None => return Outcome::fail(format!("id {id} echoed exactly"), short(reply)),
        }
    }
    Outcome::pass(ids.join(", "))
}

async fn unknown_notification(ctx: &Ctx) -> Outcome {
    let mut p = step!(ctx.ready().await, "a complete handshake");
    step!(
        p.notify("notifications/no-such-notification", Some(json!({"x": 1})))
            .await,
        "to write"
    );
    match p.until_barrier().await {
        Ok(quiet) => match quiet.describe() {
            None => Outcome::pass("ignored (a ping sent after it was answered, nothing else)"),
            Some(got) => Outcome::fail("no reply", got),
        },
        Err(e) => Outcome::fail("the server still answers a ping", e),
    }
}

/// Ids of the concurrent requests: far from the ids the harness counts up from.
const CONCURRENT_FIRST: i64 = 100_000;
const CONCURRENT: i64 = 64;

async fn concurrent(ctx: &Ctx) -> Outcome {
    let mut p = step!(ctx.ready().await, "a complete handshake");
    let ids = CONCURRENT_FIRST..CONCURRENT_FIRST + CONCURRENT;
    let mut burst = Vec::new();
    for i in ids.clone() {
        let body = format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"ping"}}"#);
        burst.extend(p.frame(body.as_bytes()));
    }
    step!(p.send_raw(&burst).await, "to write");
    let mut counts: HashMap<i64, usize> = HashMap::new();
    let deadline = tokio::time::Instant::now() + p.wait();
    // Ids equal by value (100000.0) count: their form is jsonrpc.ids-echoed's to judge.
    let count = |counts: &mut HashMap<i64, usize>, v: &Value| {
        let id = v.get("id").and_then(|id| {
            id.as_i64()
                .or_else(|| id.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64))
        });
        if let Some(id) = id {
            *counts.entry(id).or_default() += 1;
        }
    };
    while counts.len() < CONCURRENT as usize {
        match p.next_until(deadline).await {
            Got::Json(v) if is_response(&v) => count(&mut counts, &v),
            Got::Garbage(_) => {
                if let Some(e) = p.unreadable_reply() {
                    return Outcome::fail(format!("{CONCURRENT} replies"), e);
                }
            }
            Got::Json(_) | Got::Spread(..) => {}
            Got::OtherFraming(_) | Got::Eof | Got::Timeout => break,
        }
    }
    if counts.len() < CONCURRENT as usize {
        let missing: Vec<i64> = ids.filter(|i| !counts.contains_key(i)).collect();
        let actual = format!("{} answered; no reply for ids {missing:?}", counts.len());
        p.record_timeout(actual.clone());
        return Outcome::fail(format!("{CONCURRENT} replies"), actual);
    }
    // A duplicate would come before the reply to a ping sent now.
    match p.until_barrier().await {
        Ok(quiet) => {
            for r in &quiet.responses {
                count(&mut counts, r);
            }
        }
        Err(e) => return Outcome::fail("the server still answers a ping", e),
    }
    let mut twice: Vec<i64> = counts
        .iter()
        .filter(|(_, n)| **n > 1)
        .map(|(i, _)| *i)
        .collect();
    twice.sort_unstable();
    if !twice.is_empty() {
        return Outcome::fail(
            "each request answered once",
            format!("answered twice: {twice:?}"),
        );
    }
    Outcome::pass(format!("{CONCURRENT} of {CONCURRENT}, once each"))
}

/// Problems with one response, per JSON-RPC 2.0 §5.
pub fn response_problems(r: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let Some(obj) = r.as_object() else {
        return vec![format!("not an object: {}", short(r))];
    };
    if obj.get("jsonrpc") != Some(&json!("2.0")) {
        problems.push("\"jsonrpc\" is not \"2.0\"".to_owned());
    }
    if crate::mismatch::reply_without_id(r) {
        problems.push("no id, though the request had one".to_owned());
    }
    // A number in another form (1.0 for 1) is jsonrpc.ids-echoed's to judge.
    match obj.get("id") {
        None | Some(Value::Null | Value::String(_) | Value::Number(_)) => {}
        Some(other) => problems.push(format!("\"id\" is {other}, not a string or integer")),
    }
    match (obj.get("result"), obj.get("error")) {
        (Some(_), Some(_)) => problems.push("both \"result\" and \"error\"".to_owned()),
        (None, None) => problems.push("neither \"result\" nor \"error\"".to_owned()),
        (None, Some(e)) => {
            if !e.get("code").is_some_and(|c| c.is_i64()) {
                problems.push("error.code is not an integer".to_owned());
            }
            if !e.get("message").is_some_and(Value::is_string) {
                problems.push("error.message is not a string".to_owned());
            }
        }
        (Some(_), None) => {}
    }
    problems
}

async fn well_formed(ctx: &Ctx) -> Outcome {
    let mut p = step!(ctx.ready().await, "a complete handshake");
    step!(
        p.exercise().await,
        "a reply to each request of a short exercise (responses to judge)"
    );
    let mut bad = Vec::new();
    // As many replies without an id as notifications were sent may be answers to those:
    // wrong, but the notification checks' to judge.
    let mut excused = p.notifications_sent();
    for r in p
        .inbox()
        .received()
        .iter()
        .filter(|v| is_response(v) || v.get("id").is_some() && v.get("method").is_none())
    {
        if excused > 0 && crate::mismatch::reply_without_id(r) {
            excused -= 1;
            continue;
        }
        let problems = response_problems(r);
        if !problems.is_empty() {
            bad.push(format!("{} ({})", short(r), problems.join(", ")));
        }
    }
    if bad.is_empty() {
        Outcome::pass(format!(
            "{} responses of the shared session checked",
            p.inbox().received().len()
        ))
    } else {
        Outcome::fail("well-formed responses", bad.join("\n"))
    }
}

async fn batch_2025_03_26(ctx: &Ctx) -> Outcome {
    let (mut p, reply) = step!(
        ctx.after_initialize("2025-03-26").await,
        "a result to initialize"
    );
    match reply
        .pointer("/result/protocolVersion")
        .and_then(Value::as_str)
    {
        Some("2025-03-26") => {}
        Some(other) => {
            return Outcome::Skip(format!(
                "the server does not speak 2025-03-26 (answered {other})"
            ))
        }
        None => return Outcome::fail("initialize succeeds", short(&reply)),
    }
    step!(
        p.notify("notifications/initialized", None).await,
        "to write"
    );
    let batch = br#"[{"jsonrpc":"2.0","id":"b1","method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"},{"jsonrpc":"2.0","id":"b2","method":"ping"}]"#;
    let frame = p.frame(batch);
    step!(p.send_raw(&frame).await, "to write");
    let expected = "responses to b1 and b2 (one array)";
    let mut quiet = match p.until_barrier().await {
        Ok(quiet) => quiet,
        Err(e) => return Outcome::fail(expected, e),
    };
    let id_of = |r: &Value| r.get("id").and_then(Value::as_str).map(str::to_owned);
    // A server may answer the ping sent after the batch first: wait for the batch's replies.
    // (An array, both replies, or a refusal without an id: an error for the batch as a whole.)
    let answered = |responses: &[Value]| {
        responses
            .iter()
            .any(|r| r.is_array() || r.get("error").is_some() && null_or_absent_id(r))
            || ["b1", "b2"]
                .iter()
                .all(|b| responses.iter().any(|r| id_of(r).as_deref() == Some(*b)))
    };
    p.late_replies(&mut quiet, answered).await;
    // Replies under ids the batch did not have: the server changes ids, which
    // jsonrpc.ids-echoed judges (this check is then blocked by it).
    let _ = p.changed_ids(&json!("b1"));
    let mut separate: Vec<String> = Vec::new();
    for reply in &quiet.responses {
        if let Value::Array(items) = reply {
            let mut ids: Vec<String> = items.iter().filter_map(id_of).collect();
            ids.sort();
            return if ids == ["b1", "b2"] {
                Outcome::pass("one array with the two responses")
            } else {
                Outcome::fail(expected, short(reply))
            };
        }
        separate.extend(id_of(reply).filter(|id| id == "b1" || id == "b2"));
    }
    separate.sort();
    separate.dedup();
    match (separate.len(), quiet.describe()) {
        (2, _) => Outcome::pass(
            "b1 and b2 answered, as separate messages (JSON-RPC 2.0 §6: a server should answer a batch with one array)",
        ),
        (_, Some(got)) => Outcome::fail(expected, got),
        (_, None) => Outcome::fail(expected, format!("no reply within {:?}", p.wait())),
    }
}

async fn batch_latest(ctx: &Ctx) -> Outcome {
    let (mut p, _) = step!(
        ctx.after_initialize("2025-06-18").await,
        "a result to initialize"
    );
    step!(
        p.notify("notifications/initialized", None).await,
        "to write"
    );
    let frame = p.frame(br#"[{"jsonrpc":"2.0","id":"b1","method":"ping"}]"#);
    step!(p.send_raw(&frame).await, "to write");
    match p.until_barrier().await {
        Ok(quiet) => Outcome::Observed(
            quiet
                .describe()
                .unwrap_or_else(|| "no reply (a ping sent after it was answered first)".to_owned()),
        ),
        Err(e) => Outcome::Observed(format!("the server stopped answering: {e}")),
    }
}
