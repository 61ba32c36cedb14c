//! stdio framing and process behaviour (`basic/transports.mdx`, stdio; `lifecycle.mdx`,
//! Shutdown), plus the echo profile's round trips.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::FutureExt;
use mcp_protocol::Framing;
use serde_json::{json, Value};

use super::step;
use crate::catalog::Check;
use crate::check::{Level, Outcome, RunsIn};
use crate::ctx::{Ctx, ShortSession, SHORT_SESSION};
use crate::ids;
use crate::pattern::{describe, short};
use crate::probe::{describe_exit, is_response, Got, ProbeError};

/// How long a server may take to exit once its stdin is closed (or on SIGTERM): the harness's
/// reading of "promptly".
const EXIT_WITHIN: Duration = Duration::from_secs(2);

pub fn checks() -> Vec<Check> {
    [stdout(), requests(), process()].concat()
}

/// What the server writes to stdout, and how it frames it.
fn stdout() -> Vec<Check> {
    vec![
        Check::code(
            ids::FRAMING_STDOUT_ONLY_FRAMES,
            Level::Must,
            "stdout holds nothing but valid JSON-RPC messages for a whole session, to its end",
            "basic/transports.mdx, stdio",
            |ctx| stdout_only_frames(ctx).boxed(),
        )
        .quote("The server MUST NOT write anything to its stdout that is not a valid MCP message.")
        .shares(SHORT_SESSION.name)
        .runs_first(),
        Check::code(
            ids::FRAMING_REPLIES_IN_KIND,
            Level::Must,
            "replies come in the framing of the requests: newline-delimited JSON (with --framing content-length, Content-Length frames)",
            "basic/transports.mdx, stdio",
            |ctx| in_kind(ctx).boxed(),
        )
        .quote("Messages are delimited by newlines, and MUST NOT contain embedded newlines. / The server MUST NOT write anything to its stdout that is not a valid MCP message.")
        .because("a Content-Length header line is not a message; with --framing content-length, neither is a bare JSON line")
        .runs_in(RunsIn::Startup),
        Check::code(
            ids::FRAMING_NO_EMBEDDED_NEWLINES,
            Level::Must,
            "each message the server writes is on one line (no pretty-printed JSON)",
            "basic/transports.mdx, stdio",
            |ctx| in_kind(ctx).boxed(),
        )
        .quote("Messages are delimited by newlines, and MUST NOT contain embedded newlines.")
        .runs_in(RunsIn::Startup),
    ]
}

/// How requests may arrive: a byte at a time, several in one write, with CRLF, multi-byte UTF-8, 1 MiB.
fn requests() -> Vec<Check> {
    vec![
        Check::code(
            ids::FRAMING_BYTE_AT_A_TIME,
            Level::Must,
            "a request written one byte at a time is answered",
            "basic/transports.mdx, stdio; JSON-RPC 2.0 §5",
            |ctx| byte_at_a_time(ctx).boxed(),
        )
        .quote("When a rpc call is made, the Server MUST reply with a Response, except for in the case of Notifications. (JSON-RPC 2.0 §5)")
        .because("the newline ends a message, not a write: a request written byte by byte is one request")
        .runs_in(RunsIn::Legacy),
        Check::code(
            ids::FRAMING_SEVERAL_IN_ONE_WRITE,
            Level::Must,
            "several requests in one write are all answered",
            "basic/transports.mdx, stdio; JSON-RPC 2.0 §5",
            |ctx| several_in_one_write(ctx).boxed(),
        )
        .quote("When a rpc call is made, the Server MUST reply with a Response, except for in the case of Notifications. (JSON-RPC 2.0 §5)")
        .because("several requests in one write are still each a request")
        .runs_in(RunsIn::Legacy)
        .runs_first(),
        Check::code(
            ids::FRAMING_CRLF,
            Level::Info,
            "what requests ending in \\r\\n get (newline-delimited framing)",
            "basic/transports.mdx, stdio; go-sdk #664 (CRLF from Windows peers)",
            |ctx| crlf(ctx).boxed(),
        )
        .quote("Messages are delimited by newlines, and MUST NOT contain embedded newlines.")
        .because("silent on a carriage return before the newline")
        .runs_in(RunsIn::Legacy)
        .echo_level(Level::Must),
        Check::code(
            ids::FRAMING_UTF8,
            Level::Must,
            "multi-byte UTF-8 in requests and replies keeps the stream in step",
            "basic/transports.mdx (introduction, 2025-03-26 on)",
            |ctx| utf8(ctx).boxed(),
        )
        .quote("JSON-RPC messages MUST be UTF-8 encoded.")
        .runs_in(RunsIn::Legacy),
        Check::code(
            ids::FRAMING_LARGE_MESSAGE,
            Level::Info,
            "what a 1 MiB request gets",
            "basic/transports.mdx, stdio (no size limit is set; hosts send large tool inputs)",
            |ctx| large_message(ctx).boxed(),
        )
        .because("no size limit is set")
        .runs_in(RunsIn::Legacy)
        .echo_level(Level::Must),
    ]
}

/// The process: stdin closing, SIGTERM, stderr; and the echo profile's round trips.
fn process() -> Vec<Check> {
    vec![
        Check::code(
            ids::FRAMING_EOF_NO_DATA_LOSS,
            Level::Info,
            "how many of 100 requests written just before stdin closes are answered",
            "basic/lifecycle.mdx, Shutdown; 2026-07-28 basic/transports/stdio.mdx, Shutdown",
            |ctx| eof_no_data_loss(ctx).boxed(),
        )
        .quote("For the stdio transport, the client SHOULD initiate shutdown by: 1. First, closing the input stream to the child process (the server)")
        .because("closing stdin ends the connection: nothing says requests still pending must be answered")
        .echo_level(Level::Must)
        .shares(SHORT_SESSION.name)
        .runs_first(),
        Check::code(
            ids::FRAMING_EOF_EXIT,
            Level::Should,
            "the server exits within 2 s of stdin closing and its last reply (for a server that speaks only legacy revisions, which say nothing of it, an observation)",
            "2026-07-28 basic/transports/stdio.mdx, Shutdown",
            |ctx| eof_exit(ctx).boxed(),
        )
        .quote("Servers SHOULD exit promptly when their standard input is closed or reads return end-of-file.")
        .because("2026-07-28 only: for a server that speaks only legacy revisions, an observation")
        .echo_level(Level::Must)
        .shares(SHORT_SESSION.name)
        .runs_first(),
        Check::code(
            ids::FRAMING_SIGTERM_EXIT,
            Level::Info,
            "how soon the server exits on SIGTERM",
            "basic/lifecycle.mdx, Shutdown",
            |ctx| sigterm_exit(ctx).boxed(),
        )
        .quote("Waiting for the server to exit, or sending SIGTERM if the server does not exit within a reasonable time")
        .because("the client's steps: nothing binds the server")
        .runs_in(RunsIn::Legacy)
        .ends_session()
        .echo_level(Level::Must),
        Check::code(
            ids::FRAMING_STDERR_VOLUME,
            Level::Info,
            "how much the server writes to stderr in a short session",
            "basic/transports.mdx, stdio",
            |ctx| stderr_volume(ctx).boxed(),
        )
        .quote("The server MAY write UTF-8 strings to its standard error (stderr) for any logging purposes including informational, debug, and error messages.")
        .because("reported, not judged")
        .shares(SHORT_SESSION.name)
        .runs_first(),
        Check::code(
            ids::ECHO_ROUND_TRIPS,
            Level::Must,
            "echo returns empty, unicode, newline-containing and 1 MiB texts verbatim",
            "docs/server.md, The echo tool",
            |ctx| echo_round_trips(ctx).boxed(),
        )
        .runs_in(RunsIn::Legacy)
        .echo_only(),
    ]
}

/// Judged from the whole run: a mismatch of this kind anywhere fails it (the runner gives the
/// finding, with its frames, to the check that owns it); on its own it shows the start-up.
async fn in_kind(ctx: &Ctx) -> Outcome {
    ctx.trace().absorb(&ctx.era().evidence());
    Outcome::pass("every reply of the run was read as sent")
}

async fn short_session(ctx: &Ctx) -> Arc<Result<ShortSession, ProbeError>> {
    ctx.observe(&SHORT_SESSION, |ctx| async move {
        // The process version negotiation asked 1999-01-01 in, if the server answered it: what
        // it wrote since it started counts (a banner comes before the initialize reply).
        let (mut p, _) = ctx.after_initialize("1999-01-01").await?;
        p.notify("notifications/initialized", None).await?;
        // Served: each request got a reply, and a ping after them too.
        let served = match p.exercise().await {
            Ok(()) => p.until_barrier().await.map(drop),
            Err(e) => Err(e),
        };
        // The replies are other checks' to judge; these judge stdout, stderr and the end.
        ctx.trace().clear_blocked();
        // Requests written at once, then stdin closed: enough that a server which drops what
        // is pending at EOF cannot finish them by luck.
        let mut burst = Vec::new();
        for i in EOF_FIRST..EOF_FIRST + EOF_BURST {
            let body = format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"ping"}}"#);
            burst.extend(p.frame(body.as_bytes()));
        }
        p.send_raw(&burst).await?;
        p.close_stdin();
        let mut answered = BTreeSet::new();
        let mut settled = Instant::now();
        // Its replies, and whatever else comes until stdout closes.
        let deadline = tokio::time::Instant::now() + p.wait();
        loop {
            match p.next_until(deadline).await {
                Got::Json(v) if is_response(&v) => {
                    if let Some(id) = v.get("id").and_then(Value::as_i64) {
                        answered.insert(id);
                        settled = Instant::now();
                    }
                }
                Got::Eof | Got::Timeout => break,
                _ => {}
            }
        }
        let exit = p
            .wait_exit(EXIT_WITHIN.saturating_sub(settled.elapsed()))
            .await
            .map(|status| (settled.elapsed(), describe_exit(status)));
        let stderr = p.stderr_volume().await;
        let mut not_messages: Vec<String> = p.inbox().garbage().to_vec();
        let odd = p.inbox().received().iter().filter(|v| {
            !(v.is_object() || v.is_array())
                || v.get("jsonrpc") != Some(&json!("2.0")) && !v.is_array()
        });
        let odd: Vec<String> = odd.map(short).collect();
        let total = p.inbox().garbage_total() + odd.len();
        not_messages.extend(odd);
        Ok(ShortSession {
            served,
            not_messages,
            not_messages_total: total,
            frames: p.inbox().received_total(),
            answered,
            exit,
            stderr,
        })
    })
    .await
}

async fn stdout_only_frames(ctx: &Ctx) -> Outcome {
    let observed = short_session(ctx).await;
    let s = step!(
        observed.as_ref().as_ref().map_err(Clone::clone),
        "a session"
    );
    if s.not_messages.is_empty() {
        // A server that stopped answering wrote nothing wrong, and nothing much at all: its
        // stdout says nothing of what it writes in a session.
        if let Err(e) = &s.served {
            return Outcome::fail("a session whose requests are answered, to judge stdout", e);
        }
        return Outcome::pass(format!("{} frames, all JSON-RPC", s.frames));
    }
    // A flood is summarized: the first few, and how many in all.
    const SHOWN: usize = 20;
    let mut bad: Vec<String> = s.not_messages.iter().take(SHOWN).cloned().collect();
    if s.not_messages_total > SHOWN {
        bad.push(format!("… {} in all", s.not_messages_total));
    }
    Outcome::fail("only JSON-RPC messages on stdout", bad.join("\n"))
}

async fn eof_exit(ctx: &Ctx) -> Outcome {
    let observed = short_session(ctx).await;
    let s = step!(
        observed.as_ref().as_ref().map_err(Clone::clone),
        "a session"
    );
    let outcome = match &s.exit {
        Some((after, how)) => Outcome::pass(format!(
            "{how} {after:.1?} after stdin closed and its last reply"
        )),
        None => Outcome::fail(
            format!("exit within {EXIT_WITHIN:?} of EOF (and of its last reply)"),
            format!("still running after {EXIT_WITHIN:?}"),
        ),
    };
    // The legacy revisions ask nothing of a server here: for one that speaks only those, what
    // it did is an observation, whichever way it went.
    let legacy_only = !ctx.era().modern;
    match outcome {
        Outcome::Fail { actual, .. } | Outcome::Pass(actual) if legacy_only => Outcome::Observed(
            format!("{actual} (the legacy revisions it speaks ask nothing of it here)"),
        ),
        outcome => outcome,
    }
}

async fn stderr_volume(ctx: &Ctx) -> Outcome {
    let observed = short_session(ctx).await;
    let s = step!(
        observed.as_ref().as_ref().map_err(Clone::clone),
        "a session"
    );
    let (bytes, lines) = s.stderr;
    Outcome::Observed(format!(
        "{bytes} bytes in {lines} lines for a handshake, ping, tools/list, an unknown method, \
         an unknown tool, {EOF_BURST} pings and stdin closed"
    ))
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
        Ok(_) => Outcome::pass(format!("{} one-byte writes", frame.len())),
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
    if ctx.config().framing != Framing::Ndjson {
        return Outcome::Skip("only for newline-delimited framing".to_owned());
    }
    let mut p = step!(ctx.ready().await, "a complete handshake");
    step!(
        p.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":\"crlf\",\"method\":\"ping\"}\r\n")
            .await,
        "to write"
    );
    match p.response(&json!("crlf")).await {
        Ok(r) => Outcome::pass(format!("answered: {}", describe(&r))),
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
        Ok(r) => Outcome::pass(format!("answered: {}", describe(&r))),
        Err(e) => Outcome::fail("a reply", e),
    }
}

/// Requests written at once before stdin is closed.
const EOF_BURST: i64 = 100;
/// Their ids: far from the ids the harness counts up from.
const EOF_FIRST: i64 = 500;

async fn eof_no_data_loss(ctx: &Ctx) -> Outcome {
    let observed = short_session(ctx).await;
    let s = step!(
        observed.as_ref().as_ref().map_err(Clone::clone),
        "a session"
    );
    let lost: Vec<i64> = (EOF_FIRST..EOF_FIRST + EOF_BURST)
        .filter(|i| !s.answered.contains(i))
        .collect();
    if lost.is_empty() {
        return Outcome::pass(format!("{EOF_BURST} of {EOF_BURST} answered"));
    }
    let ended = match &s.exit {
        Some((_, how)) => format!(" (the server {how})"),
        None => String::new(),
    };
    Outcome::fail(
        format!("all {EOF_BURST} requests written before EOF answered"),
        format!("{} answered; lost ids {lost:?}{ended}", s.answered.len()),
    )
}

async fn sigterm_exit(ctx: &Ctx) -> Outcome {
    let mut p = step!(ctx.ready().await, "a complete handshake");
    step!(p.still_serving().await, "a live session to signal");
    let started = Instant::now();
    p.terminate();
    match p.wait_exit(EXIT_WITHIN).await {
        Some(status) => Outcome::pass(format!("exited in {:?} ({status})", started.elapsed())),
        None => Outcome::fail(
            format!("exit within {EXIT_WITHIN:?} of SIGTERM"),
            format!("still running after {EXIT_WITHIN:?}"),
        ),
    }
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
