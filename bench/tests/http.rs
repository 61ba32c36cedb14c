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
    for extra in [
        &["--window", "4"][..],
        &["--floor", "--", "python3"],
        &["--stdio", "socket"],
    ] {
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

/// The HTTP floor (`--url URL --floor`): started for each run on the URL's port like a server
/// command, every reply verified, stopped after.
#[test]
fn the_http_floor_is_benched_with_every_reply_verified() {
    for (reply, label) in [
        ("plain", "(floor)"),
        ("structured", "(floor, structured reply)"),
    ] {
        let port = free_port().to_string();
        let url = format!("http://127.0.0.1:{port}/mcp");
        let run = bench(&url, &["--floor", "--floor-reply", reply]);
        let ctx = shown(&run);
        assert_eq!(run.code, 0, "{ctx}");
        let report = run.json();
        assert_eq!(report["transport"], "http", "{ctx}");
        assert_eq!(report["floor"], true, "{ctx}");
        assert_eq!(report["floorReply"], reply, "{ctx}");
        assert_eq!(report["command"], label, "{ctx}");
        assert_eq!(report["protocolVersion"], "2025-11-25", "{ctx}");
        assert_eq!(report["sessionId"], true, "{ctx}");
        assert_eq!(report["errors"]["total"], 0, "{ctx}");
        // Four cells, each reply verified (a failed one is counted above and fails the bench).
        assert_eq!(report["results"].as_array().unwrap().len(), 4, "{ctx}");
        assert!(report["startMs"]["median"].as_f64().unwrap() > 0.0, "{ctx}");
        // Stopped after the run: the port is free again.
        std::net::TcpListener::bind(format!("127.0.0.1:{port}")).unwrap();
    }
}

/// A server started on a free port (its listening line read, the rest of its stderr drained),
/// killed when dropped.
struct Listening {
    child: std::process::Child,
    addr: SocketAddr,
}

impl Listening {
    /// Starts `program` with `args` and waits for its `listening on http://ADDR/mcp` line.
    fn start(program: &std::path::Path, args: &[&str]) -> Listening {
        use std::io::BufRead;
        let mut child = std::process::Command::new(program)
            .args(args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = std::io::BufReader::new(child.stderr.take().unwrap());
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in stderr.lines().map_while(Result::ok) {
                if let Some(addr) = line
                    .strip_prefix("listening on http://")
                    .and_then(|rest| rest.strip_suffix("/mcp"))
                {
                    let _ = tx.send(addr.parse::<SocketAddr>().unwrap());
                }
            }
        });
        // Only turns a hang into a failure.
        let addr = rx
            .recv_timeout(common::RUN_LIMIT)
            .unwrap_or_else(|e| panic!("{} printed no listening line: {e}", program.display()));
        Listening { child, addr }
    }

    /// `mcp-bench serve-http-floor` on a free port.
    fn floor(reply: &str) -> Listening {
        Listening::start(
            common::bench_bin(),
            &[
                "serve-http-floor",
                "--listen",
                "127.0.0.1:0",
                "--reply",
                reply,
            ],
        )
    }

    /// One request with `headers` on a connection of its own: the status, the headers and the
    /// body.
    fn exchange(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> (u16, HeaderMap, String) {
        use std::io::{Read, Write};
        let mut stream = std::net::TcpStream::connect(self.addr).unwrap();
        // Only turns a hang into a failure.
        stream.set_read_timeout(Some(common::RUN_LIMIT)).unwrap();
        let mut request = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nConnection: close\r\n\
             Content-Length: {}\r\n",
            self.addr,
            body.len()
        );
        for (name, value) in headers {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        request.push_str("\r\n");
        request.push_str(body);
        stream.write_all(request.as_bytes()).unwrap();
        let mut raw = String::new();
        stream.read_to_string(&mut raw).unwrap();
        let (head, body) = raw.split_once("\r\n\r\n").unwrap();
        let mut lines = head.split("\r\n");
        let status = lines
            .next()
            .unwrap()
            .split(' ')
            .nth(1)
            .unwrap()
            .parse()
            .unwrap();
        let mut headers = HeaderMap::new();
        for line in lines {
            let (name, value) = line.split_once(": ").unwrap();
            headers.insert(
                axum::http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_str(value).unwrap(),
            );
        }
        (status, headers, body.to_owned())
    }

    /// `initialize`, `notifications/initialized` and one `tools/call` of `echo` with `text`, as
    /// the bench sends them: the call's status and body.
    fn echo(&self, text: &str) -> (u16, String) {
        let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
        let (_, headers, _) = self.exchange("POST", "/mcp", &[], init);
        let session = headers["mcp-session-id"].to_str().unwrap().to_owned();
        let session = [
            ("Mcp-Session-Id", session.as_str()),
            ("MCP-Protocol-Version", "2025-11-25"),
        ];
        let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        assert_eq!(self.exchange("POST", "/mcp", &session, note).0, 202);
        let call = format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"{text}"}}}}}}"#
        );
        let (status, _, body) = self.exchange("POST", "/mcp", &session, &call);
        (status, body)
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What the HTTP floor answers to each POST the bench sends, byte for byte: a wrong id, text,
/// status or header fails here.
#[test]
fn the_http_floor_answers_what_the_bench_sends() {
    let floor = Listening::floor("plain");
    let (status, headers, body) = floor.exchange(
        "POST",
        "/mcp",
        &[],
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#,
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(headers["content-type"], "application/json");
    assert_eq!(headers["mcp-session-id"], "mcp-bench-floor");
    let init: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(init["id"], 0, "{body}");
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{body}");

    let (status, headers, body) = floor.exchange(
        "POST",
        "/mcp",
        &[],
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    assert_eq!((status, body.as_str()), (202, ""));
    assert!(headers.get("mcp-session-id").is_none());

    for (id, text) in [("42", "42.xxxx"), ("7", r#"7.a\"b"#)] {
        let (status, headers, body) = floor.exchange(
            "POST",
            "/mcp",
            &[],
            &format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"{text}"}}}}}}"#
            ),
        );
        assert_eq!(status, 200, "{body}");
        assert_eq!(headers["content-type"], "application/json");
        assert_eq!(
            body,
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"{text}"}}],"isError":false}}}}"#
            )
        );
    }

    assert_eq!(floor.exchange("DELETE", "/mcp", &[], "").0, 200);
    let (status, headers, _) = floor.exchange("GET", "/mcp", &[], "");
    assert_eq!(status, 405);
    assert_eq!(headers["allow"], "POST, DELETE");
    assert_eq!(floor.exchange("POST", "/other", &[], "{}").0, 404);
}

/// The structured HTTP floor measures what our reply costs to carry only if it is our reply:
/// byte for byte the body `mcp-echo-server --http` answers to the same call, escapes included.
#[test]
fn the_structured_http_floor_sends_the_echo_servers_body_byte_for_byte() {
    let text = r#"a\"b\\c/d é"#;
    let ours = Listening::start(
        common::echo_server(),
        &["--http", "127.0.0.1:0", "--log-level", "off"],
    )
    .echo(text);
    assert_eq!(
        ours,
        (
            200,
            format!(
                r#"{{"jsonrpc":"2.0","id":7,"result":{{"content":[{{"text":"{text}","type":"text"}}],"structuredContent":{{"text":"{text}"}}}}}}"#
            )
        )
    );
    assert_eq!(Listening::floor("structured").echo(text), ours);
}
