//! `mcp-bench --url`: the HTTP driver against an in-test axum echo fixture on 127.0.0.1:0
//! (loopback only), answering in JSON or as SSE streams, and with one defect at a time (a
//! wrong text, a reply dropped, a session id not honoured), each of which must fail the bench
//! (exit 1, with a message naming it). The bench runs as a child process, bounded by
//! `common::RUN_LIMIT`; nothing here sleeps or judges speed.
#![allow(clippy::unwrap_used)]

mod common;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use serde_json::{json, Value};

use common::{run, Run};

const SESSION: &str = "fixture-session-7f3a";

/// How the fixture answers `tools/call`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// `application/json`, the echo.
    Json,
    /// `text/event-stream`: a priming event, a notification, then the echo.
    Sse,
    /// The echo of request 5 carries another text.
    WrongText,
    /// Request 5 gets an SSE stream with a notification and no response.
    DropReply,
    /// Request 5 gets 500.
    ServerError,
}

struct Fixture {
    mode: Mode,
    /// The version the fixture answers to `initialize` and then requires.
    version: &'static str,
    /// Whether it gives a session id (and then requires it); without, it requires none.
    sessions: bool,
    /// `tools/call` requests that carried the session id and version headers.
    in_session: AtomicU64,
    calls: AtomicU64,
}

fn rpc_reply(id: &Value, result: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "result": result})).unwrap()
}

fn sse(events: &[&[u8]]) -> Response {
    let mut body = b"id: 0\nretry: 1000\ndata: \n\n".to_vec();
    for e in events {
        mcp_protocol::http::write_event(&mut body, None, e);
    }
    ([("content-type", "text/event-stream")], body).into_response()
}

async fn mcp(State(fx): State<Arc<Fixture>>, headers: HeaderMap, body: Bytes) -> Response {
    let msg: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(_) => return StatusCode::BAD_REQUEST.into_response(),
    };
    let method = msg["method"].as_str().unwrap_or("");
    if method == "initialize" {
        let result = json!({
            "protocolVersion": fx.version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "fixture", "version": "0"},
        });
        let mut r = (
            [("content-type", "application/json")],
            rpc_reply(&msg["id"], result),
        )
            .into_response();
        if fx.sessions {
            r.headers_mut()
                .insert("mcp-session-id", HeaderValue::from_static(SESSION));
        }
        return r;
    }
    let accept = headers
        .get("accept")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let session = headers.get("mcp-session-id").map(|v| v.as_bytes());
    let in_session = session == fx.sessions.then_some(SESSION.as_bytes())
        && headers.get("mcp-protocol-version").map(|v| v.as_bytes()) == Some(fx.version.as_bytes());
    if !in_session || !accept.contains("application/json") || !accept.contains("text/event-stream")
    {
        return (StatusCode::BAD_REQUEST, "missing or wrong session headers").into_response();
    }
    if msg.get("id").is_none() {
        return StatusCode::ACCEPTED.into_response();
    }
    fx.calls.fetch_add(1, Ordering::Relaxed);
    fx.in_session.fetch_add(1, Ordering::Relaxed);
    let id = &msg["id"];
    let mut text = msg["params"]["arguments"]["text"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    let fifth = id.as_u64() == Some(5);
    let note = br#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}"#;
    match fx.mode {
        Mode::WrongText if fifth => text.push('!'),
        Mode::DropReply if fifth => return sse(&[note]),
        Mode::ServerError if fifth => {
            return (StatusCode::INTERNAL_SERVER_ERROR, "boom").into_response()
        }
        _ => {}
    }
    let reply = rpc_reply(
        id,
        json!({"content": [{"type": "text", "text": text}], "structuredContent": {"text": text}}),
    );
    if fx.mode == Mode::Sse {
        sse(&[note, &reply])
    } else {
        ([("content-type", "application/json")], reply).into_response()
    }
}

/// The fixture, served on 127.0.0.1:0 by a runtime that lives as long as the value.
struct Served {
    fx: Arc<Fixture>,
    url: String,
    _rt: tokio::runtime::Runtime,
}

fn serve(mode: Mode, version: &'static str) -> Served {
    serve_with(mode, version, true)
}

fn serve_with(mode: Mode, version: &'static str, sessions: bool) -> Served {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let fx = Arc::new(Fixture {
        mode,
        version,
        sessions,
        in_session: AtomicU64::new(0),
        calls: AtomicU64::new(0),
    });
    let app = Router::new()
        .route("/mcp", post(mcp).delete(|| async { StatusCode::OK }))
        .with_state(fx.clone());
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    rt.spawn(async move { axum::serve(listener, app).await });
    Served {
        fx,
        url: format!("http://{addr}/mcp"),
        _rt: rt,
    }
}

fn bench(url: &str, extra: &[&str]) -> Run {
    let mut args = vec![
        "--url",
        url,
        "--calls",
        "200",
        "--runs",
        "1",
        "--concurrency",
        "1,8",
        "--payload",
        "64,3000",
        "--timeout",
        "10",
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    run(&args)
}

fn shown(run: &Run) -> String {
    format!(
        "`mcp-bench {}` exited {}\nstdout:\n{}\nstderr:\n{}",
        run.args.join(" "),
        run.code,
        run.stdout,
        run.stderr
    )
}

fn assert_clean(served: &Served, run: &Run, version: &str) {
    assert_clean_with(served, run, version, true);
}

fn assert_clean_with(served: &Served, run: &Run, version: &str, sessions: bool) {
    let ctx = shown(run);
    assert_eq!(run.code, 0, "{ctx}");
    let report = run.json();
    assert_eq!(report["schema"], "mcp-conformance/bench/v1", "{ctx}");
    assert_eq!(report["transport"], "http", "{ctx}");
    assert_eq!(report["url"], served.url.as_str(), "{ctx}");
    assert_eq!(report["protocolVersion"], version, "{ctx}");
    assert_eq!(report["sessionId"], sessions, "{ctx}");
    assert_eq!(report["errors"]["total"], 0, "{ctx}");
    // No command: nothing started, so no start time or server memory.
    assert_eq!(report["startMs"], Value::Null, "{ctx}");
    let cells: Vec<(u64, u64)> = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            assert!(c["callsPerSec"]["median"].as_f64().unwrap() > 0.0, "{ctx}");
            assert_eq!(c["concurrency"], c["window"], "{ctx}");
            (
                c["payload"].as_u64().unwrap(),
                c["concurrency"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(cells, [(64, 1), (64, 8), (3000, 1), (3000, 8)], "{ctx}");
    assert!(
        report["results"][0]["p50Us"]["median"].as_f64().unwrap() > 0.0,
        "{ctx}"
    );
    // Every call carried the session id and version back (the fixture answers 400 otherwise,
    // which would have failed the bench): 4 cells of 200 calls.
    assert_eq!(served.fx.calls.load(Ordering::Relaxed), 800, "{ctx}");
    assert_eq!(served.fx.in_session.load(Ordering::Relaxed), 800, "{ctx}");
}

#[test]
fn json_replies_in_a_session_are_verified() {
    let served = serve(Mode::Json, "2025-11-25");
    let run = bench(&served.url, &[]);
    assert_clean(&served, &run, "2025-11-25");
}

#[test]
fn sse_replies_are_read_past_priming_events_and_notifications() {
    let served = serve(Mode::Sse, "2025-11-25");
    let run = bench(&served.url, &[]);
    assert_clean(&served, &run, "2025-11-25");
}

#[test]
fn the_version_the_server_answers_is_the_one_sent_back() {
    let served = serve(Mode::Json, "2025-06-18");
    let run = bench(&served.url, &[]);
    assert_clean(&served, &run, "2025-06-18");
}

#[test]
fn a_server_without_sessions_gets_no_session_header() {
    let served = serve_with(Mode::Sse, "2025-11-25", false);
    let run = bench(&served.url, &[]);
    assert_clean_with(&served, &run, "2025-11-25", false);
}

fn assert_fails(mode: Mode, words: &[&str], errors: (u64, u64)) {
    let served = serve(mode, "2025-11-25");
    let run = bench(&served.url, &[]);
    let ctx = shown(&run);
    assert_eq!(run.code, 1, "{ctx}");
    for w in words {
        assert!(run.stderr.contains(w), "stderr lacks {w:?}: {ctx}");
    }
    // The report is still written, with the failures counted.
    let report = run.json();
    assert_eq!(report["errors"]["non2xx"], errors.0, "{ctx}");
    assert_eq!(report["errors"]["badReplies"], errors.1, "{ctx}");
    assert_eq!(report["errors"]["total"], errors.0 + errors.1, "{ctx}");
}

#[test]
fn a_wrong_text_fails_the_bench() {
    assert_fails(
        Mode::WrongText,
        &["FAILED", "request 5", "echo mismatch"],
        (0, 1),
    );
}

#[test]
fn a_dropped_reply_fails_the_bench() {
    assert_fails(
        Mode::DropReply,
        &["FAILED", "request 5", "no JSON-RPC response"],
        (0, 1),
    );
}

#[test]
fn a_non_2xx_answer_fails_the_bench() {
    assert_fails(Mode::ServerError, &["FAILED", "request 5", "500"], (1, 0));
}

#[test]
fn nothing_listening_is_a_start_failure() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    drop(listener);
    let run = bench(&url, &[]);
    assert_eq!(run.code, 3, "{}", shown(&run));
    assert!(run.stderr.contains("cannot reach"), "{}", shown(&run));
}

#[test]
fn url_conflicts_with_stdio_options() {
    for extra in [&["--window", "4"][..], &["--floor"], &["--stdio", "socket"]] {
        let run = bench("http://127.0.0.1:9/mcp", extra);
        assert_eq!(run.code, 2, "{}", shown(&run));
    }
    let run = run(&["--concurrency", "4"]);
    assert_eq!(run.code, 2, "{}", shown(&run));
}

/// A free loopback port (bound, read and released: another process could take it between,
/// which fails the test loudly, never wrongly).
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

fn python_fixture() -> String {
    common::workspace_root()
        .join("bench/tests/fixtures/http_echo_server.py")
        .display()
        .to_string()
}

#[test]
fn a_server_command_is_started_waited_on_and_stopped() {
    let port = free_port().to_string();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let script = python_fixture();
    let run = bench(&url, &["--", "python3", "-S", &script, &port]);
    let ctx = shown(&run);
    assert_eq!(run.code, 0, "{ctx}");
    let report = run.json();
    assert_eq!(report["errors"]["total"], 0, "{ctx}");
    assert!(
        report["command"].as_str().unwrap().contains("python3"),
        "{ctx}"
    );
    // Started by the bench: a start time, and the server's memory and CPU.
    assert!(report["startMs"]["median"].as_f64().unwrap() > 0.0, "{ctx}");
    assert!(
        report["peakRssKiB"]["median"].as_f64().unwrap() > 0.0,
        "{ctx}"
    );
    // Stopped after the run: the port is free again.
    std::net::TcpListener::bind(format!("127.0.0.1:{port}")).unwrap();
}

#[test]
fn a_server_that_exits_before_listening_is_a_start_failure() {
    let url = format!("http://127.0.0.1:{}/mcp", free_port());
    let run = bench(&url, &["--", "python3", "-S", "-c", "raise SystemExit(4)"]);
    let ctx = shown(&run);
    assert_eq!(run.code, 3, "{ctx}");
    assert!(run.stderr.contains("before accepting connections"), "{ctx}");
}
