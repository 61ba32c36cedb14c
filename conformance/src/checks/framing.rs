//! stdio framing and process behaviour (`basic/transports.mdx`, stdio; `lifecycle.mdx`,
//! Shutdown), plus the echo profile's round trips.

use std::time::{Duration, Instant};

use futures::FutureExt;
use mcp_protocol::Framing;
use serde_json::{json, Value};

use super::{code, step};
use crate::check::{Level, Outcome};
use crate::pattern::short;
use crate::probe::{is_response, Got};
use crate::runner::{Check, Ctx};

pub fn checks() -> Vec<Check> {
    let mut checks = vec![
        code(
            "framing.stdout-only-frames",
            Level::Must,
            "stdout holds nothing but valid JSON-RPC frames for a whole session",
            "basic/transports.mdx, stdio (\"The server MUST NOT write anything to its stdout that is not a valid MCP message\")",
            |ctx| stdout_only_frames(ctx).boxed(),
        ),
        code(
            "framing.byte-at-a-time",
            Level::Must,
            "a request written one byte at a time is answered",
            "basic/transports.mdx, stdio (a stream; reads may split a message anywhere)",
            |ctx| byte_at_a_time(ctx).boxed(),
        ),
        code(
            "framing.several-in-one-write",
            Level::Must,
            "several requests in one write are all answered",
            "basic/transports.mdx, stdio",
            |ctx| several_in_one_write(ctx).boxed(),
        ),
        code(
            "framing.crlf",
            Level::Should,
            "requests ending in \\r\\n are answered (newline-delimited framing)",
            "basic/transports.mdx, stdio; go-sdk #664 (CRLF from Windows peers)",
            |ctx| crlf(ctx).boxed(),
        ),
        code(
            "framing.utf8",
            Level::Must,
            "multi-byte UTF-8 in requests and replies keeps the stream in step",
            "basic/transports.mdx, stdio (\"Messages … MUST be UTF-8 encoded\", 2025-03-26+)",
            |ctx| utf8(ctx).boxed(),
        ),
        code(
            "framing.large-message",
            Level::Should,
            "a 1 MiB request is answered",
            "basic/transports.mdx, stdio (no size limit is set; hosts send large tool inputs)",
            |ctx| large_message(ctx).boxed(),
        ),
        code(
            "framing.eof-no-data-loss",
            Level::Must,
            "every request written before stdin closes is answered",
            "basic/lifecycle.mdx, Shutdown; JSON-RPC 2.0 §5 (a request gets a response)",
            |ctx| eof_no_data_loss(ctx).boxed(),
        ),
        code(
            "framing.eof-exit",
            Level::Should,
            "the server exits within 2 s of stdin closing",
            "basic/lifecycle.mdx, Shutdown; 2026-07-28 stdio (\"SHOULD exit promptly when their standard input is closed\")",
            |ctx| eof_exit(ctx).boxed(),
        ),
        code(
            "framing.sigterm-exit",
            Level::Should,
            "the server exits within 2 s of SIGTERM",
            "basic/lifecycle.mdx, Shutdown (the client sends SIGTERM, then SIGKILL)",
            |ctx| sigterm_exit(ctx).boxed(),
        ),
        code(
            "framing.stderr-volume",
            Level::Info,
            "how much the server writes to stderr in a short session",
            "basic/transports.mdx, stdio (stderr is for logging; hosts capture it)",
            |ctx| stderr_volume(ctx).boxed(),
        ),
    ];
    let mut echo = code(
        "echo.round-trips",
        Level::Must,
        "echo returns empty, unicode, newline-containing and 1 MiB texts verbatim",
        "README, Behaviour (the echo tool)",
        |ctx| echo_round_trips(ctx).boxed(),
    );
    echo.info.echo_only = true;
    checks.push(echo);
    checks
}

async fn stdout_only_frames(ctx: &Ctx) -> Outcome {
    let mut p = step!(ctx.spawn().await, "the server starts");
    // Anything printed before the first request (a banner) is already a violation.
    let _ = p.silence(Duration::from_millis(300)).await;
    step!(p.handshake(crate::LATEST).await, "a complete handshake");
    p.exercise().await;
    let _ = p.silence(Duration::from_millis(200)).await;
    p.close_stdin();
    // Whatever comes until stdout closes counts too.
    let deadline = Instant::now() + Duration::from_secs(2);
    while Instant::now() < deadline {
        if matches!(p.next(Duration::from_millis(200)).await, Got::Eof) {
            break;
        }
    }
    let not_messages: Vec<String> = p
        .received
        .iter()
        .filter(|v| {
            !(v.is_object() || v.is_array())
                || v.get("jsonrpc") != Some(&json!("2.0")) && !v.is_array()
        })
        .map(short)
        .collect();
    let total = p.garbage_total + not_messages.len();
    let mut bad = p.garbage.clone();
    bad.extend(not_messages);
    if bad.is_empty() {
        Outcome::pass(format!("{} frames, all JSON-RPC", p.received_total))
    } else {
        // A flood is summarized: the first few, and how many in all.
        const SHOWN: usize = 20;
        if total > SHOWN {
            bad.truncate(SHOWN);
            bad.push(format!("… {total} in all"));
        }
        Outcome::fail("only JSON-RPC frames on stdout", bad.join("\n"))
    }
}

async fn byte_at_a_time(ctx: &Ctx) -> Outcome {
    let mut p = step!(ctx.ready().await, "a complete handshake");
    let frame = p.frame(br#"{"jsonrpc":"2.0","id":"slow","method":"ping"}"#);
    for (i, byte) in frame.iter().enumerate() {
        step!(p.send_raw(&[*byte]).await, "to write");
        if i % 8 == 7 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }
    match p.response(&json!("slow")).await {
        Ok(r) if r.get("result").is_some() => {
            Outcome::pass(format!("{} one-byte writes", frame.len()))
        }
        Ok(r) => Outcome::fail("a result", short(&r)),
        Err(e) => Outcome::fail("a reply", e),
    }
}

async fn several_in_one_write(ctx: &Ctx) -> Outcome {
    let mut p = step!(ctx.ready().await, "a complete handshake");
    let mut bytes = Vec::new();
    for id in ["w1", "w2", "w3"] {
        bytes.extend(
            p.frame(format!(r#"{{"jsonrpc":"2.0","id":"{id}","method":"ping"}}"#).as_bytes()),
        );
    }
    step!(p.send_raw(&bytes).await, "to write");
    for id in ["w1", "w2", "w3"] {
        if let Err(e) = p.response(&json!(id)).await {
            return Outcome::fail(format!("a reply to {id}"), e);
        }
    }
    Outcome::pass("3 of 3")
}

async fn crlf(ctx: &Ctx) -> Outcome {
    if ctx.config.framing != Framing::Ndjson {
        return Outcome::Skip("only for newline-delimited framing".to_owned());
    }
    let mut p = step!(ctx.ready().await, "a complete handshake");
    step!(
        p.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":\"crlf\",\"method\":\"ping\"}\r\n")
            .await,
        "to write"
    );
    match p.response(&json!("crlf")).await {
        Ok(r) if r.get("result").is_some() => Outcome::pass("answered"),
        Ok(r) => Outcome::fail("a result", short(&r)),
        Err(e) => Outcome::fail("a reply", e),
    }
}

async fn utf8(ctx: &Ctx) -> Outcome {
    let mut p = step!(ctx.ready().await, "a complete handshake");
    // The method name comes back in many servers' -32601 message: their reply must be framed
    // by bytes too.
    let body =
        r#"{"jsonrpc":"2.0","id":"é🦀","method":"no/such/方法👋","params":{"note":"你好 👋 ü"}}"#;
    let frame = p.frame(body.as_bytes());
    step!(p.send_raw(&frame).await, "to write");
    let reply = step!(p.response(&json!("é🦀")).await, "a reply with id \"é🦀\"");
    if reply.get("error").is_none() && reply.get("result").is_none() {
        return Outcome::fail("a response", short(&reply));
    }
    match p.still_serving().await {
        Ok(()) => Outcome::pass("in step"),
        Err(e) => Outcome::fail("the stream stays in step (a ping is answered)", e),
    }
}

async fn large_message(ctx: &Ctx) -> Outcome {
    let mut p = step!(ctx.ready().await, "a complete handshake");
    let pad = "x".repeat(1 << 20);
    let msg =
        json!({"jsonrpc": "2.0", "id": "big", "method": "ping", "params": {"_meta": {"pad": pad}}});
    step!(p.send(&msg).await, "to write");
    match p.response(&json!("big")).await {
        Ok(r) if r.get("result").is_some() => Outcome::pass("answered"),
        Ok(r) => Outcome::fail("a result", short(&r)),
        Err(e) => Outcome::fail("a reply", e),
    }
}

/// Requests written at once before stdin is closed.
const EOF_BURST: i64 = 100;

async fn eof_no_data_loss(ctx: &Ctx) -> Outcome {
    let mut p = step!(ctx.ready().await, "a complete handshake");
    let mut bytes = Vec::new();
    // Enough that a server which drops what is pending at EOF cannot finish them by luck.
    for i in 0..EOF_BURST {
        bytes.extend(
            p.frame(format!(r#"{{"jsonrpc":"2.0","id":{},"method":"ping"}}"#, 500 + i).as_bytes()),
        );
    }
    step!(p.send_raw(&bytes).await, "to write");
    p.close_stdin();
    let mut answered = std::collections::BTreeSet::new();
    let deadline = tokio::time::Instant::now() + p.wait;
    loop {
        match p.next_until(deadline).await {
            Got::Json(v) if is_response(&v) => {
                if let Some(id) = v.get("id").and_then(Value::as_i64) {
                    answered.insert(id);
                }
                if answered.len() == EOF_BURST as usize {
                    break;
                }
            }
            Got::Json(_) | Got::Garbage(_) => {}
            Got::Eof | Got::Timeout => break,
        }
    }
    let lost: Vec<i64> = (500..500 + EOF_BURST)
        .filter(|i| !answered.contains(i))
        .collect();
    if lost.is_empty() {
        Outcome::pass(format!("{EOF_BURST} of {EOF_BURST} answered"))
    } else {
        Outcome::fail(
            format!("all {EOF_BURST} requests written before EOF answered"),
            format!("{} answered; lost ids {lost:?}", answered.len()),
        )
    }
}

async fn eof_exit(ctx: &Ctx) -> Outcome {
    let mut p = step!(ctx.ready().await, "a complete handshake");
    let started = Instant::now();
    p.close_stdin();
    match p.wait_exit(Duration::from_secs(2)).await {
        Some(status) => Outcome::pass(format!("exited in {:?} ({status})", started.elapsed())),
        None => Outcome::fail("exit within 2 s of EOF", "still running after 2 s"),
    }
}

async fn sigterm_exit(ctx: &Ctx) -> Outcome {
    let p = step!(ctx.ready().await, "a complete handshake");
    let started = Instant::now();
    p.terminate();
    match p.wait_exit(Duration::from_secs(2)).await {
        Some(status) => Outcome::pass(format!("exited in {:?} ({status})", started.elapsed())),
        None => Outcome::fail("exit within 2 s of SIGTERM", "still running after 2 s"),
    }
}

async fn stderr_volume(ctx: &Ctx) -> Outcome {
    let mut p = step!(ctx.ready().await, "a complete handshake");
    for _ in 0..10 {
        let _ = p.request("ping", None).await;
    }
    let _ = p.request("tools/list", None).await;
    p.close_stdin();
    let _ = p.wait_exit(Duration::from_secs(2)).await;
    let _ = p.conn().stderr(Duration::from_millis(300)).await;
    let (bytes, lines) = p.conn().stderr_volume();
    Outcome::Observed(format!(
        "{bytes} bytes in {lines} lines for a handshake, 10 pings and tools/list"
    ))
}

async fn echo_round_trips(ctx: &Ctx) -> Outcome {
    let mut p = step!(ctx.ready().await, "a complete handshake");
    let big = "ü".repeat(1 << 19); // 1 MiB of UTF-8
    for text in [
        "",
        "你好 🦀 ü",
        "line one\nline two\r\n\ttab \"quoted\" \\",
        big.as_str(),
    ] {
        let reply = step!(
            p.request(
                "tools/call",
                Some(json!({"name": "echo", "arguments": {"text": text}}))
            )
            .await,
            "a reply"
        );
        let want = json!({"content": [{"type": "text", "text": text}], "structuredContent": {"text": text}});
        if reply.get("result") != Some(&want) {
            return Outcome::fail(format!("result {}", short(&want)), short(&reply));
        }
    }
    Outcome::pass("4 of 4 verbatim")
}
