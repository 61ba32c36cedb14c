//! JSON-RPC 2.0 behaviour (`basic/index.mdx`, jsonrpc.org/specification §4–§6).

use std::collections::HashMap;
use std::time::Duration;

use futures::FutureExt;
use serde_json::{json, Value};

use super::{code, step};
use crate::check::{Level, Outcome};
use crate::pattern::short;
use crate::probe::{is_response, Got};
use crate::runner::{Check, Ctx};

pub fn checks() -> Vec<Check> {
    vec![
        code(
            "jsonrpc.unknown-method",
            Level::Must,
            "an unknown method gets error -32601 with the request's id",
            "JSON-RPC 2.0 §5.1; basic/index.mdx",
            |ctx| unknown_method(ctx).boxed(),
        ),
        code(
            "jsonrpc.parse-error-keeps-serving",
            Level::Must,
            "after a line that is not JSON the server keeps serving",
            "JSON-RPC 2.0 §5.1; basic/transports.mdx (stdio)",
            |ctx| parse_error_keeps_serving(ctx).boxed(),
        ),
        code(
            "jsonrpc.parse-error-reply",
            Level::Should,
            "a line that is not JSON gets error -32700 with a null (or absent) id",
            "JSON-RPC 2.0 §5 (\"If there was an error in detecting the id … it MUST be Null\"), §5.1",
            |ctx| parse_error_reply(ctx).boxed(),
        ),
        code(
            "jsonrpc.invalid-request.no-jsonrpc",
            Level::Should,
            "a request without \"jsonrpc\" gets -32600 with its id",
            "JSON-RPC 2.0 §4 (\"jsonrpc … MUST be exactly 2.0\"), §5.1",
            |ctx| invalid(ctx, r#"{"id":41,"method":"ping"}"#, Some(json!(41))).boxed(),
        ),
        code(
            "jsonrpc.invalid-request.wrong-version",
            Level::Should,
            "a request with \"jsonrpc\": \"1.0\" gets -32600 with its id",
            "JSON-RPC 2.0 §4, §5.1",
            |ctx| invalid(ctx, r#"{"jsonrpc":"1.0","id":42,"method":"ping"}"#, Some(json!(42))).boxed(),
        ),
        code(
            "jsonrpc.invalid-request.null-id",
            Level::Should,
            "a request with \"id\": null gets -32600 with a null (or absent) id",
            "basic/index.mdx (\"the ID MUST NOT be null\"); JSON-RPC 2.0 §5.1",
            |ctx| invalid(ctx, r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#, None).boxed(),
        ),
        code(
            "jsonrpc.invalid-request.numeric-method",
            Level::Should,
            "a request whose method is a number gets -32600 with its id",
            "JSON-RPC 2.0 §4 (\"method … A String\"), §5.1",
            |ctx| invalid(ctx, r#"{"jsonrpc":"2.0","id":44,"method":5}"#, Some(json!(44))).boxed(),
        ),
        code(
            "jsonrpc.invalid-request-keeps-serving",
            Level::Must,
            "after requests of the wrong shape the server keeps serving",
            "JSON-RPC 2.0 §5.1; basic/transports.mdx (stdio)",
            |ctx| invalid_keeps_serving(ctx).boxed(),
        ),
        code(
            "jsonrpc.ids-echoed",
            Level::Must,
            "string, zero, negative, large-integer (2^53-1) and unicode ids are echoed exactly",
            "JSON-RPC 2.0 §5 (\"id … MUST be the same as the value of the id member in the Request\")",
            |ctx| {
                ids_echoed(ctx, &["0", "-1", "\"\"", "\"abc\"", "9007199254740991", "\"é🦀你好\"", "\"1\""])
                    .boxed()
            },
        ),
        code(
            "jsonrpc.ids-beyond-2-53",
            Level::Should,
            "integer ids beyond 2^53 (2^53+1, 2^64-1) are echoed exactly",
            "JSON-RPC 2.0 §5; RFC 8259 §6 (integers beyond ±(2^53-1) are not interoperable with IEEE 754 readers)",
            |ctx| ids_echoed(ctx, &["9007199254740993", "18446744073709551615"]).boxed(),
        ),
        code(
            "jsonrpc.unknown-notification",
            Level::Must,
            "an unknown notification is ignored: no reply, and the server keeps serving",
            "basic/index.mdx, Notifications (\"The receiver MUST NOT send a response\")",
            |ctx| unknown_notification(ctx).boxed(),
        ),
        code(
            "jsonrpc.concurrent-requests",
            Level::Must,
            "64 requests in flight are each answered exactly once (in any order)",
            "JSON-RPC 2.0 §5; basic/index.mdx (responses pair by id)",
            |ctx| concurrent(ctx).boxed(),
        ),
        code(
            "jsonrpc.responses-well-formed",
            Level::Must,
            "every response has jsonrpc \"2.0\", an id, and exactly one of result and error {code, message}",
            "JSON-RPC 2.0 §5, §5.1; basic/index.mdx, Responses",
            |ctx| well_formed(ctx).boxed(),
        ),
        code(
            "jsonrpc.batch-2025-03-26",
            Level::Must,
            "under 2025-03-26 a JSON-RPC batch gets one array of responses",
            "2025-03-26 basic/index.mdx (\"MUST support receiving JSON-RPC batches\"); JSON-RPC 2.0 §6",
            |ctx| batch_2025_03_26(ctx).boxed(),
        ),
        code(
            "jsonrpc.batch-after-2025-03-26",
            Level::Info,
            "what a batch gets under the latest version (batches were removed in 2025-06-18)",
            "2025-06-18 changelog (\"Remove support for JSON-RPC batching\")",
            |ctx| batch_latest(ctx).boxed(),
        ),
    ]
}

fn error_code(reply: &Value) -> Option<i64> {
    reply.pointer("/error/code").and_then(Value::as_i64)
}

async fn unknown_method(ctx: &Ctx) -> Outcome {
    let mut p = step!(ctx.ready().await, "a complete handshake");
    let reply = step!(
        p.request("no/such/method", Some(json!({}))).await,
        "a reply"
    );
    match error_code(&reply) {
        Some(-32601) => Outcome::pass("-32601"),
        _ => Outcome::fail("error -32601", short(&reply)),
    }
}

async fn parse_error_keeps_serving(ctx: &Ctx) -> Outcome {
    let mut p = step!(ctx.ready().await, "a complete handshake");
    let frame = p.frame(b"{\"jsonrpc\": \"2.0\", \"id\": 7, \"method\": ");
    step!(p.send_raw(&frame).await, "to write");
    match p.still_serving().await {
        Ok(()) => Outcome::pass("a ping after it was answered"),
        Err(e) => Outcome::fail("the server still answers a ping", e),
    }
}

fn null_or_absent_id(reply: &Value) -> bool {
    matches!(reply.get("id"), None | Some(Value::Null))
}

async fn parse_error_reply(ctx: &Ctx) -> Outcome {
    let mut p = step!(ctx.ready().await, "a complete handshake");
    let frame = p.frame(b"{\"jsonrpc\": \"2.0\", \"id\": 7, \"method\": ");
    step!(p.send_raw(&frame).await, "to write");
    let wait = p.wait;
    match p.next_response(wait).await {
        Ok(Some(r)) if error_code(&r) == Some(-32700) && null_or_absent_id(&r) => {
            Outcome::pass(short(&r))
        }
        Ok(Some(r)) => Outcome::fail("error -32700 with id null", short(&r)),
        Ok(None) => Outcome::fail("error -32700 with id null", "no reply"),
        Err(e) => Outcome::fail("error -32700 with id null", e),
    }
}

async fn invalid(ctx: &Ctx, body: &str, id: Option<Value>) -> Outcome {
    let mut p = step!(ctx.ready().await, "a complete handshake");
    let frame = p.frame(body.as_bytes());
    step!(p.send_raw(&frame).await, "to write");
    let expected = match &id {
        Some(id) => format!("error -32600 with id {id}"),
        None => "error -32600 with id null".to_owned(),
    };
    let wait = p.wait;
    let reply = match &id {
        Some(id) => p.response(id).await.map(Some),
        None => p.next_response(wait).await,
    };
    match reply {
        Ok(Some(r)) => {
            let id_ok = match &id {
                Some(id) => r.get("id") == Some(id),
                None => null_or_absent_id(&r),
            };
            if error_code(&r) == Some(-32600) && id_ok {
                Outcome::pass(short(&r))
            } else {
                Outcome::fail(expected, short(&r))
            }
        }
        Ok(None) => Outcome::fail(expected, "no reply"),
        // Waiting by id passes over a reply that lost the id: say what did come back.
        Err(e) => match p
            .received
            .iter()
            .rev()
            .find(|r| is_response(r) && null_or_absent_id(r))
        {
            Some(r) => Outcome::fail(expected, format!("a reply without the id: {}", short(r))),
            None => Outcome::fail(expected, e),
        },
    }
}

async fn invalid_keeps_serving(ctx: &Ctx) -> Outcome {
    let mut p = step!(ctx.ready().await, "a complete handshake");
    for body in [
        r#"{"id":41,"method":"ping"}"#,
        r#"{"jsonrpc":"1.0","id":42,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":44,"method":5}"#,
        r#"[]"#,
        r#"42"#,
    ] {
        let frame = p.frame(body.as_bytes());
        step!(p.send_raw(&frame).await, "to write");
    }
    match p.still_serving().await {
        Ok(()) => Outcome::pass("a ping after them was answered"),
        Err(e) => Outcome::fail("the server still answers a ping", e),
    }
}

async fn ids_echoed(ctx: &Ctx, ids: &[&str]) -> Outcome {
    let mut p = step!(ctx.ready().await, "a complete handshake");
    let wait = p.wait;
    // Raw text, so the harness's own JSON handling cannot change the ids; one at a time, so
    // the next response is the one to compare.
    for &id in ids {
        let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
        let frame = p.frame(body.as_bytes());
        step!(p.send_raw(&frame).await, "to write");
        let want: Value = step!(
            serde_json::from_str(id).map_err(|e| e.to_string()),
            "a valid id"
        );
        // The next response that carries an id (stray null-id errors and noise are other
        // checks' business).
        let reply = loop {
            match p.next_response(wait).await {
                Ok(Some(r)) if matches!(r.get("id"), None | Some(Value::Null)) => continue,
                Ok(Some(r)) => break r,
                Ok(None) => return Outcome::fail(format!("a reply with id {id}"), "no reply"),
                Err(e) if e.starts_with("bytes that are not a frame") => continue,
                Err(e) => return Outcome::fail(format!("a reply with id {id}"), e),
            }
        };
        match reply.get("id") {
            Some(got) if *got == want => {}
            Some(got) if got.is_number() && want.is_number() => {
                return Outcome::fail(
                    format!("id {id} echoed exactly"),
                    format!("id {got}: the server reads ids as floating-point numbers and loses precision beyond 2^53"),
                )
            }
            Some(got) => return Outcome::fail(format!("id {id} echoed exactly"), format!("id {got}")),
            None => return Outcome::fail(format!("id {id} echoed exactly"), short(&reply)),
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
    if let Err(got) = p.silence(Duration::from_millis(500)).await {
        return Outcome::fail("no reply", got);
    }
    match p.still_serving().await {
        Ok(()) => Outcome::pass("ignored"),
        Err(e) => Outcome::fail("the server still answers a ping", e),
    }
}

async fn concurrent(ctx: &Ctx) -> Outcome {
    let mut p = step!(ctx.ready().await, "a complete handshake");
    let mut burst = Vec::new();
    for i in 0..64 {
        let body = format!(r#"{{"jsonrpc":"2.0","id":{},"method":"ping"}}"#, 1000 + i);
        burst.extend(p.frame(body.as_bytes()));
    }
    step!(p.send_raw(&burst).await, "to write");
    let mut counts: HashMap<i64, usize> = HashMap::new();
    let deadline = tokio::time::Instant::now() + p.wait;
    while counts.len() < 64 {
        match p.next_until(deadline).await {
            Got::Json(v) if is_response(&v) => {
                if let Some(id) = v.get("id").and_then(Value::as_i64) {
                    *counts.entry(id).or_default() += 1;
                }
            }
            Got::Json(_) | Got::Garbage(_) => {}
            Got::Eof | Got::Timeout => break,
        }
    }
    // Anything more within a short window would be a duplicate.
    let extra = p.silence(Duration::from_millis(200)).await;
    let missing: Vec<i64> = (1000..1064).filter(|i| !counts.contains_key(i)).collect();
    let twice: Vec<i64> = counts
        .iter()
        .filter(|(_, n)| **n > 1)
        .map(|(i, _)| *i)
        .collect();
    if !missing.is_empty() {
        return Outcome::fail(
            "64 replies",
            format!("{} answered; no reply for ids {missing:?}", counts.len()),
        );
    }
    if !twice.is_empty() {
        return Outcome::fail(
            "each request answered once",
            format!("answered twice: {twice:?}"),
        );
    }
    if let Err(got) = extra {
        return Outcome::fail(
            "each request answered once",
            format!("an extra reply: {got}"),
        );
    }
    Outcome::pass("64 of 64, once each")
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
    if !obj.contains_key("id") && !obj.contains_key("error") {
        problems.push("no \"id\"".to_owned());
    }
    match obj.get("id") {
        None | Some(Value::Null | Value::String(_)) => {}
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => {}
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
    p.exercise().await;
    let frame = p.frame(b"{not json");
    step!(p.send_raw(&frame).await, "to write");
    let _ = p.still_serving().await;
    let mut bad = Vec::new();
    for r in p
        .received
        .iter()
        .filter(|v| is_response(v) || v.get("id").is_some() && v.get("method").is_none())
    {
        let problems = response_problems(r);
        if !problems.is_empty() {
            bad.push(format!("{} ({})", short(r), problems.join(", ")));
        }
    }
    if bad.is_empty() {
        Outcome::pass(format!("{} responses checked", p.received.len()))
    } else {
        Outcome::fail("well-formed responses", bad.join("\n"))
    }
}

async fn batch_2025_03_26(ctx: &Ctx) -> Outcome {
    let mut p = step!(ctx.spawn().await, "the server starts");
    let reply = step!(p.initialize("2025-03-26").await, "a reply to initialize");
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
    let deadline = tokio::time::Instant::now() + p.wait;
    loop {
        match p.next_until(deadline).await {
            Got::Json(Value::Array(items)) => {
                let mut ids: Vec<String> = items
                    .iter()
                    .map(|r| r.get("id").map(|i| i.to_string()).unwrap_or_default())
                    .collect();
                ids.sort();
                return if ids == ["\"b1\"", "\"b2\""] {
                    Outcome::pass("one array with the two responses")
                } else {
                    Outcome::fail(
                        "an array with responses b1 and b2",
                        short(&Value::Array(items)),
                    )
                };
            }
            Got::Json(v) if is_response(&v) => {
                return Outcome::fail("one array of responses", short(&v))
            }
            Got::Json(_) | Got::Garbage(_) => {}
            Got::Eof => return Outcome::fail("one array of responses", "stdout closed"),
            Got::Timeout => return Outcome::fail("one array of responses", "no reply"),
        }
    }
}

async fn batch_latest(ctx: &Ctx) -> Outcome {
    let mut p = step!(ctx.ready().await, "a complete handshake");
    let frame = p.frame(br#"[{"jsonrpc":"2.0","id":"b1","method":"ping"}]"#);
    step!(p.send_raw(&frame).await, "to write");
    let wait = p.wait.min(Duration::from_secs(2));
    let mut seen = None;
    let deadline = tokio::time::Instant::now() + wait;
    while seen.is_none() {
        match p.next_until(deadline).await {
            Got::Json(v) if is_response(&v) || v.is_array() => seen = Some(short(&v)),
            Got::Json(_) | Got::Garbage(_) => {}
            Got::Eof | Got::Timeout => break,
        }
    }
    Outcome::Observed(seen.unwrap_or_else(|| "no reply".to_owned()))
}
