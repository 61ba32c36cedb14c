//! The router in process, driven request by request (hyper-util's `TowerToHyperService`,
//! no socket), with a `gate` tool whose calls run until the test opens the gate. What the
//! binary cannot show with `echo` (every call answered at once) is shown here: concurrent
//! POSTs on one session, cancellation, duplicate ids, DELETE aborting a call, and a dropped
//! 2026-07-28 response aborting its task. Waits are on semaphores (events), never on time.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, Response, StatusCode};
use axum::Router;
use futures::FutureExt;
use http_body_util::BodyExt;
use hyper::service::Service as _;
use hyper_util::service::TowerToHyperService;
use mcp_protocol::mcp::{self, CallToolResult};
use serde_json::{json, Map, Value};
use tokio::sync::Semaphore;

use super::config::HttpConfig;
use super::routes::router;
use super::state::Shared;
use crate::info::ServerInfo;
use crate::tools::{default_tools, Tool, ToolCall, ToolSet};

const BOTH: &str = "application/json, text/event-stream";

/// Counters as semaphores: a permit per call started, a permit per call dropped unfinished.
#[derive(Clone)]
struct Gate {
    started: Arc<Semaphore>,
    open: Arc<Semaphore>,
    aborted: Arc<Semaphore>,
}

impl Default for Gate {
    fn default() -> Self {
        let none = || Arc::new(Semaphore::new(0));
        Gate {
            started: none(),
            open: none(),
            aborted: none(),
        }
    }
}

struct GateTool {
    definition: mcp::Tool,
    gate: Gate,
}

/// Reports a call dropped before the gate let it through.
struct Unfinished(Option<Arc<Semaphore>>);

impl Unfinished {
    fn finished(&mut self) {
        self.0 = None;
    }
}

impl Drop for Unfinished {
    fn drop(&mut self) {
        if let Some(s) = self.0.take() {
            s.add_permits(1);
        }
    }
}

impl Tool for GateTool {
    fn definition(&self) -> &mcp::Tool {
        &self.definition
    }

    /// Answers "passed", or `size` bytes of `x` when the arguments say so.
    fn call(&self, arguments: Map<String, Value>) -> ToolCall {
        let size = arguments.get("size").and_then(Value::as_u64);
        let answer = size.map_or_else(|| "passed".to_owned(), |n| "x".repeat(n as usize));
        let gate = self.gate.clone();
        gate.started.add_permits(1);
        // Moved into the future whole: dropped with it, whether it ever ran or not.
        let unfinished = Unfinished(Some(Arc::clone(&gate.aborted)));
        ToolCall::Pending(
            async move {
                let mut unfinished = unfinished;
                gate.open.acquire().await.unwrap().forget();
                unfinished.finished();
                CallToolResult::text(answer)
            }
            .boxed(),
        )
    }
}

fn app(gate: &Gate) -> TowerToHyperService<Router> {
    app_with_sessions(gate, 8)
}

fn app_with_sessions(gate: &Gate, max_sessions: usize) -> TowerToHyperService<Router> {
    app_with(
        gate,
        HttpConfig {
            max_sessions,
            ..HttpConfig::default()
        },
    )
}

fn app_with(gate: &Gate, config: HttpConfig) -> TowerToHyperService<Router> {
    TowerToHyperService::new(router(Arc::new(Shared::new(
        config,
        crate::core::Served::new(Arc::new(gate_tools(gate)), ServerInfo::default()),
    ))))
}

/// `echo` and `gate`.
fn gate_tools(gate: &Gate) -> ToolSet {
    let mut tools = default_tools();
    tools
        .register(GateTool {
            definition: mcp::Tool {
                name: "gate".into(),
                title: None,
                description: None,
                input_schema: json!({"type": "object"}),
                output_schema: None,
                annotations: None,
            },
            gate: gate.clone(),
        })
        .unwrap();
    tools
}

async fn post(
    app: &TowerToHyperService<Router>,
    headers: &[(&str, &str)],
    body: &Value,
) -> Response<Body> {
    let mut request = Request::post("/mcp").header("content-type", "application/json");
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    app.call(request.body(Body::from(body.to_string())).unwrap())
        .await
        .unwrap()
}

async fn text(response: Response<Body>) -> String {
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    String::from_utf8(bytes.to_vec()).unwrap()
}

async fn session(app: &TowerToHyperService<Router>) -> String {
    let init = post(
        app,
        &[("accept", BOTH)],
        &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}),
    )
    .await;
    let id = init.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let done = post(
        app,
        &[("mcp-session-id", &id)],
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    assert_eq!(done.status(), StatusCode::ACCEPTED);
    id
}

fn gate_call(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "gate", "arguments": {}}})
}

#[tokio::test]
async fn concurrent_posts_on_one_session_then_cancel() {
    let gate = Gate::default();
    let app = app(&gate);
    let sid = session(&app).await;
    let h = [("mcp-session-id", sid.as_str()), ("accept", BOTH)];

    // Still running: an SSE stream opens at once.
    let slow = post(&app, &h, &gate_call(10)).await;
    assert_eq!(slow.status(), StatusCode::OK);
    assert_eq!(slow.headers()["content-type"], "text/event-stream");
    gate.started.acquire().await.unwrap().forget();

    // The same session answers other requests meanwhile.
    let echo = json!({"jsonrpc": "2.0", "id": 11, "method": "tools/call",
                      "params": {"name": "echo", "arguments": {"text": "meanwhile"}}});
    let quick = text(post(&app, &h, &echo).await).await;
    assert!(quick.contains("meanwhile"), "{quick}");

    let duplicate = text(post(&app, &h, &gate_call(10)).await).await;
    assert!(duplicate.contains("already in use"), "{duplicate}");

    let cancel = post(
        &app,
        &h,
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 10}}),
    )
    .await;
    assert_eq!(cancel.status(), StatusCode::ACCEPTED);
    gate.aborted.acquire().await.unwrap().forget();
    // No response is sent for a cancelled request: the stream ends with no event.
    assert_eq!(text(slow).await, "");
}

#[tokio::test]
async fn a_running_call_answers_on_its_stream() {
    let gate = Gate::default();
    let app = app(&gate);
    let sid = session(&app).await;
    let slow = post(
        &app,
        &[("mcp-session-id", &sid), ("accept", BOTH)],
        &gate_call(20),
    )
    .await;
    gate.started.acquire().await.unwrap().forget();
    gate.open.add_permits(1);
    let body = text(slow).await;
    let data: Vec<&str> = body
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .collect();
    assert_eq!(data.len(), 1, "{body}");
    let reply: Value = serde_json::from_str(data[0]).unwrap();
    assert_eq!(reply["id"], 20);
    assert_eq!(reply["result"]["content"][0]["text"], "passed");
}

/// Past the reply budget (here none: every reply over 64 KiB is past it), a reply due on an
/// SSE stream whose head went out is replaced by a -32000 error for the same request, and a
/// reply ready at once gets 503.
#[tokio::test]
async fn a_reply_past_the_reply_budget_is_an_error_in_its_place() {
    let gate = Gate::default();
    let config = HttpConfig {
        reply_budget_bytes: 0,
        ..HttpConfig::default()
    };
    let app = app_with(&gate, config);
    let sid = session(&app).await;
    let h = [("mcp-session-id", sid.as_str()), ("accept", BOTH)];
    let large = json!({"jsonrpc": "2.0", "id": 30, "method": "tools/call",
                       "params": {"name": "gate", "arguments": {"size": 100_000}}});
    let slow = post(&app, &h, &large).await;
    assert_eq!(slow.status(), StatusCode::OK);
    gate.started.acquire().await.unwrap().forget();
    gate.open.add_permits(1);
    let body = text(slow).await;
    let data: Vec<Value> = body
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    assert_eq!(data.len(), 1, "{body}");
    assert_eq!(data[0]["id"], 30);
    assert_eq!(data[0]["error"]["code"], -32000);
    assert_eq!(data[0]["error"]["data"], json!({"replyBudgetBytes": 0}));

    let echo = json!({"jsonrpc": "2.0", "id": 31, "method": "tools/call",
                      "params": {"name": "echo", "arguments": {"text": "y".repeat(100_000)}}});
    let refused = post(&app, &h, &echo).await;
    assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(refused.headers()["retry-after"], "1");
    let reply: Value = serde_json::from_str(&text(refused).await).unwrap();
    assert_eq!(reply["id"], 31);
    assert_eq!(reply["error"]["data"], json!({"replyBudgetBytes": 0}));
}

#[tokio::test]
async fn a_cancelled_call_of_a_json_only_client_gets_204() {
    let gate = Gate::default();
    let app = app(&gate);
    let sid = session(&app).await;
    let waiting = {
        let (app, sid) = (app.clone(), sid.clone());
        tokio::spawn(async move {
            post(
                &app,
                &[("mcp-session-id", &sid), ("accept", "application/json")],
                &gate_call(30),
            )
            .await
        })
    };
    gate.started.acquire().await.unwrap().forget();
    let cancel = post(
        &app,
        &[("mcp-session-id", &sid)],
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 30}}),
    )
    .await;
    assert_eq!(cancel.status(), StatusCode::ACCEPTED);
    let response = waiting.await.unwrap();
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
}

#[tokio::test]
async fn delete_aborts_the_sessions_calls() {
    let gate = Gate::default();
    let app = app(&gate);
    let sid = session(&app).await;
    let slow = post(
        &app,
        &[("mcp-session-id", &sid), ("accept", BOTH)],
        &gate_call(40),
    )
    .await;
    gate.started.acquire().await.unwrap().forget();
    let delete = app
        .call(
            Request::delete("/mcp")
                .header("mcp-session-id", &sid)
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(delete.status(), StatusCode::NO_CONTENT);
    gate.aborted.acquire().await.unwrap().forget();
    assert_eq!(text(slow).await, "");
}

/// 2026-07-28 §Cancellation: closing the response stream cancels the request.
#[tokio::test]
async fn a_dropped_modern_response_aborts_its_call() {
    let gate = Gate::default();
    let app = app(&gate);
    let mut call = gate_call(50);
    call["params"]["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let stream = post(
        &app,
        &[
            ("accept", BOTH),
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "gate"),
        ],
        &call,
    )
    .await;
    assert_eq!(stream.headers()["content-type"], "text/event-stream");
    gate.started.acquire().await.unwrap().forget();
    drop(stream);
    gate.aborted.acquire().await.unwrap().forget();
}

/// At the session cap a session with a call running is not evicted: with nothing else to
/// evict, `initialize` gets 503; once the call ended, the session is idle and gives way.
#[tokio::test]
async fn a_session_with_a_running_call_is_not_evicted() {
    let gate = Gate::default();
    let app = app_with_sessions(&gate, 1);
    let sid = session(&app).await;
    let slow = post(
        &app,
        &[("mcp-session-id", &sid), ("accept", BOTH)],
        &gate_call(60),
    )
    .await;
    gate.started.acquire().await.unwrap().forget();
    let init = json!({"jsonrpc": "2.0", "id": 61, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}});
    let refused = post(&app, &[("accept", BOTH)], &init).await;
    assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(refused.headers()["retry-after"], "1");
    let body: Value = serde_json::from_str(&text(refused).await).unwrap();
    assert_eq!(body["id"], 61);
    assert_eq!(body["error"]["code"], -32000);

    gate.open.add_permits(1);
    assert!(text(slow).await.contains("passed"));
    let admitted = post(&app, &[("accept", BOTH)], &init).await;
    assert_eq!(admitted.status(), StatusCode::OK);
    let gone = post(
        &app,
        &[("mcp-session-id", &sid), ("accept", BOTH)],
        &json!({"jsonrpc": "2.0", "id": 62, "method": "ping"}),
    )
    .await;
    assert_eq!(gone.status(), StatusCode::NOT_FOUND);
}

/// One request on a connection of its own (`Connection: close`): the whole response.
async fn exchange(addr: std::net::SocketAddr, headers: &str, body: &Value) -> String {
    use tokio::io::AsyncWriteExt;
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let body = body.to_string();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\n{headers}Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    read_all(&mut stream).await
}

/// What the server sends until it closes the connection; a hang is a failure.
async fn read_all(stream: &mut tokio::net::TcpStream) -> String {
    use tokio::io::AsyncReadExt;
    let mut got = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(30), stream.read_to_end(&mut got));
    let _ = read.await.expect("the connection stayed open");
    String::from_utf8(got).unwrap()
}

/// A call still running when the shutdown grace ends: its reply is cut, so serving ends with
/// `DrainTimedOut` (exit status 1). An SSE client has the stream's head and no response event
/// before the connection closes; a JSON-only client gets no response at all.
#[tokio::test]
async fn a_call_running_at_the_end_of_the_grace_is_cut() {
    use tokio::io::AsyncWriteExt;
    let gate = Gate::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let config = HttpConfig {
        shutdown_grace: Duration::from_millis(200),
        ..HttpConfig::default()
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(super::serve_http_on(
        listener,
        config,
        Arc::new(gate_tools(&gate)),
        async move {
            let _ = stopped.await;
        },
    ));
    let init = exchange(
        addr,
        "Accept: application/json\r\n",
        &json!({"jsonrpc": "2.0", "id": 0,
        "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}}),
    )
    .await;
    let sid = init
        .lines()
        .find_map(|l| l.strip_prefix("mcp-session-id: "))
        .unwrap()
        .to_owned();
    let session = format!("Mcp-Session-Id: {sid}\r\n");
    let done = exchange(
        addr,
        &session,
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    assert!(done.starts_with("HTTP/1.1 202"), "{done}");

    let mut streams = Vec::new();
    for (id, accept) in [(70, BOTH), (71, "application/json")] {
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        let body = gate_call(id).to_string();
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAccept: {accept}\r\n{session}Content-Length: {}\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(head.as_bytes()).await.unwrap();
        let started = tokio::time::timeout(Duration::from_secs(30), gate.started.acquire());
        started
            .await
            .expect("the call never started")
            .unwrap()
            .forget();
        streams.push(stream);
    }
    stop.send(()).unwrap();
    let exit = tokio::time::timeout(Duration::from_secs(30), serving)
        .await
        .expect("serving did not end after the grace")
        .unwrap()
        .unwrap();
    assert!(matches!(exit, crate::Exit::DrainTimedOut), "{exit:?}");

    let sse = read_all(&mut streams[0]).await;
    assert!(sse.starts_with("HTTP/1.1 200"), "{sse}");
    assert!(sse.contains("text/event-stream"), "{sse}");
    assert!(!sse.contains("data:"), "{sse}");
    let json_only = read_all(&mut streams[1]).await;
    assert_eq!(json_only, "");
    // Both calls were dropped unfinished.
    let aborted = tokio::time::timeout(Duration::from_secs(30), gate.aborted.acquire_many(2));
    aborted
        .await
        .expect("calls outlived the server")
        .unwrap()
        .forget();
}
