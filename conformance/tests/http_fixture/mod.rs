//! A Streamable HTTP MCP server for the harness's tests, in-process (axum on a free loopback
//! port, its own runtime thread), speaking both eras: legacy with sessions and SSE replies,
//! 2026-07-28 with mirrored-header validation and JSON replies. One [`Bug`] can be injected;
//! each breaks exactly one `http.*` rule.
#![allow(clippy::unwrap_used, dead_code)]

use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use axum::Router;
use serde_json::{json, Value};

/// One defect of the fixture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bug {
    /// A notification gets 200 instead of 202.
    Notification200,
    /// A request without the session id is served (no 400).
    SessionNotRequired,
    /// The session id holds a space.
    SessionIdNotAscii,
    /// A ping's SSE reply puts a notification and the response in one event.
    SseTwoInOne,
    /// A ping's SSE reply has the response on a line without `data:`.
    SseNoData,
    /// A foreign Origin is served.
    NoOriginCheck,
    /// Mirrored headers that disagree with the body are accepted (missing ones are not).
    MirrorMismatchAccepted,
    /// DELETE answers 200 but the session stays usable.
    EndedSessionServed,
    /// Not a defect: a request whose id is an integer beyond 2^53 is answered 50 ms late, after
    /// the replies to requests POSTed with it (no order holds across POSTs).
    LateBigIds,
    /// Not a defect: a request whose id is an integer beyond 2^53 is answered only once the
    /// client has POSTed a notification after it (at most 2 s late): its reply comes after the
    /// replies to requests POSTed with it, while the client's next exchange is under way (no
    /// order holds across POSTs).
    DelayedReply,
    /// A foreign Origin is refused on POST only, served on GET and DELETE.
    OriginCheckedOnPostOnly,
    /// 2026-07-28: an unsupported version's -32022 comes with HTTP 200, not 400.
    ModernUnsupported200,
    /// 2026-07-28: an unknown method's -32601 comes with HTTP 200, not 404.
    ModernUnknownMethod200,
    /// The GET stream carries a JSON-RPC response.
    GetStreamResponse,
    /// Every SSE event id is `1`, on every stream.
    SseIdsReused,
    /// Every SSE reply after initialize has the response on a line without `data:`.
    SseNoDataAll,
    /// Every SSE reply after initialize puts a notification and the response in one event.
    SseTwoInOneAll,
    /// Every reply is wrapped in a JSON array (a batch of one), initialize's too.
    ArrayReply,
    /// The session id holds a non-ASCII character (`é`).
    SessionIdNonAscii,
    /// Every reply after initialize carries its request's id plus 1000.
    ChangedIds,
    /// An unknown method gets `500 text/plain` instead of a JSON-RPC error.
    UnknownMethodPlain500,
    /// Not a defect: a legacy-only server, whose router answers a 2026-07-28 request
    /// `404 text/plain` (as one that does not know the revision does).
    LegacyOnlyPlain404,
    /// Not a defect: a request without the session id gets `400 text/plain` (the body of that
    /// 400 is the server's to choose), as rmcp's server answers.
    NoSessionPlain400,
}

const VERSIONS: [&str; 4] = ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"];
const MODERN: &str = "2026-07-28";

#[derive(Debug)]
struct Fixture {
    bug: Option<Bug>,
    /// Only 2026-07-28: no initialize, GET and DELETE get 405.
    modern_only: bool,
    sessions: Mutex<HashSet<String>>,
    next: Mutex<u64>,
    /// The last SSE event id given, across all streams.
    event_ids: Mutex<u64>,
    /// Notifications POSTed so far, and a wake-up for each.
    notifications: std::sync::atomic::AtomicU64,
    notified: tokio::sync::Notify,
}

impl Fixture {
    fn has(&self, bug: Bug) -> bool {
        self.bug == Some(bug)
    }

    /// An SSE event carrying `data` (one line), with an id unique across all streams (or,
    /// with [`Bug::SseIdsReused`], always `1`).
    fn event(&self, data: &str) -> String {
        let id = if self.has(Bug::SseIdsReused) {
            1
        } else {
            let mut n = self.event_ids.lock().unwrap();
            *n += 1;
            *n
        };
        format!("id: {id}\nevent: message\ndata: {data}\n\n")
    }

    /// A response as the fixture sends it: wrapped in an array with [`Bug::ArrayReply`].
    fn wrap(&self, reply: Value) -> Value {
        if self.has(Bug::ArrayReply) {
            json!([reply])
        } else {
            reply
        }
    }

    /// The id a reply carries: changed with [`Bug::ChangedIds`].
    fn reply_id(&self, id: &Value) -> Value {
        match id.as_i64() {
            Some(n) if self.has(Bug::ChangedIds) => json!(n + 1000),
            _ => id.clone(),
        }
    }
}

/// Starts the fixture (both eras); returns its MCP endpoint URL.
pub fn start(bug: Option<Bug>) -> String {
    start_with(bug, false)
}

/// Starts a fixture that speaks only 2026-07-28.
pub fn start_modern_only() -> String {
    start_with(None, true)
}

fn start_with(bug: Option<Bug>, modern_only: bool) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    let state = Arc::new(Fixture {
        bug,
        modern_only,
        sessions: Mutex::default(),
        next: Mutex::new(1),
        event_ids: Mutex::new(0),
        notifications: Default::default(),
        notified: tokio::sync::Notify::new(),
    });
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            let app = Router::new().route("/mcp", any(handle)).with_state(state);
            axum::serve(listener, app).await.unwrap();
        });
    });
    format!("http://{addr}/mcp")
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

fn error(status: StatusCode, id: Option<&Value>, code: i64, message: &str) -> Response {
    let mut body = json!({"jsonrpc": "2.0", "error": {"code": code, "message": message}});
    if let Some(id) = id {
        body["id"] = id.clone();
    }
    (
        status,
        [("content-type", "application/json")],
        body.to_string(),
    )
        .into_response()
}

fn json_reply(v: &Value) -> Response {
    (
        StatusCode::OK,
        [("content-type", "application/json")],
        v.to_string(),
    )
        .into_response()
}

fn sse_reply(events: String, session: Option<&str>) -> Response {
    let mut resp = (
        StatusCode::OK,
        [("content-type", "text/event-stream")],
        events,
    )
        .into_response();
    if let Some(s) = session {
        resp.headers_mut().insert(
            "mcp-session-id",
            HeaderValue::from_bytes(s.as_bytes()).unwrap(),
        );
    }
    resp
}

fn tool() -> Value {
    json!({"name": "echo", "description": "echoes text",
           "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
           "annotations": {"readOnlyHint": true, "destructiveHint": false}})
}

/// The result of `method`, or a JSON-RPC error (code, message).
fn answer(method: &str, params: &Value, modern: bool) -> Result<Value, (i64, &'static str)> {
    let done = |mut v: Value| {
        if modern {
            v["resultType"] = json!("complete");
        }
        v
    };
    match method {
        "ping" if !modern => Ok(json!({})),
        "server/discover" if modern => Ok(done(json!({
            "supportedVersions": VERSIONS,
            "capabilities": {"tools": {}},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "http-fixture", "version": "1"}}
        }))),
        "tools/list" => {
            if params.get("cursor").is_some() {
                return Err((-32602, "invalid cursor"));
            }
            let mut v = done(json!({"tools": [tool()]}));
            if modern {
                v["ttlMs"] = json!(0);
            }
            Ok(v)
        }
        "tools/call" => match params.get("name").and_then(Value::as_str) {
            Some("echo") => {
                let text = params
                    .pointer("/arguments/text")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                Ok(done(json!({"content": [{"type": "text", "text": text}]})))
            }
            _ => Err((-32602, "unknown tool")),
        },
        _ => Err((-32601, "method not found")),
    }
}

fn response(id: &Value, result: Result<Value, (i64, &str)>) -> Value {
    match result {
        Ok(r) => json!({"jsonrpc": "2.0", "id": id, "result": r}),
        Err((code, message)) => {
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
        }
    }
}

async fn handle(
    State(f): State<Arc<Fixture>>,
    method: Method,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if let Some(origin) = header(&headers, "origin") {
        let local =
            origin.starts_with("http://127.0.0.1") || origin.starts_with("http://localhost");
        let checked = method == Method::POST || !f.has(Bug::OriginCheckedOnPostOnly);
        if !local && checked && !f.has(Bug::NoOriginCheck) {
            return error(StatusCode::FORBIDDEN, None, -32000, "forbidden origin");
        }
    }
    // The raw bytes (a non-ASCII session id is not a `str` header value to `to_str`).
    let session = headers
        .get("mcp-session-id")
        .and_then(|v| String::from_utf8(v.as_bytes().to_vec()).ok());
    if f.modern_only && method != Method::POST {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    }
    match method {
        Method::GET => return get_stream(&f, session.as_deref()),
        Method::DELETE => {
            let Some(s) = session else {
                return error(StatusCode::BAD_REQUEST, None, -32000, "no session");
            };
            let known = if f.bug == Some(Bug::EndedSessionServed) {
                f.sessions.lock().unwrap().contains(&s)
            } else {
                f.sessions.lock().unwrap().remove(&s)
            };
            return if known {
                StatusCode::OK.into_response()
            } else {
                StatusCode::NOT_FOUND.into_response()
            };
        }
        Method::POST => {}
        _ => return StatusCode::METHOD_NOT_ALLOWED.into_response(),
    }
    let Ok(msg) = serde_json::from_slice::<Value>(&body) else {
        return error(StatusCode::BAD_REQUEST, None, -32700, "parse error");
    };
    let id = msg.get("id").cloned();
    let name = msg
        .get("method")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let params = msg.get("params").cloned().unwrap_or(json!({}));
    let meta_version = params
        .pointer("/_meta/io.modelcontextprotocol~1protocolVersion")
        .and_then(Value::as_str);
    if let (Some(version), Some(id)) = (meta_version, &id) {
        if f.has(Bug::LegacyOnlyPlain404) {
            let plain = [("content-type", "text/plain")];
            return (StatusCode::NOT_FOUND, plain, "Not Found").into_response();
        }
        return modern(&f, &headers, id, &name, &params, version);
    }
    if f.modern_only {
        return error(
            StatusCode::BAD_REQUEST,
            id.as_ref(),
            -32601,
            "only 2026-07-28 is spoken",
        );
    }
    if let Some(v) = header(&headers, "mcp-protocol-version") {
        if !VERSIONS.contains(&v) {
            return error(
                StatusCode::BAD_REQUEST,
                id.as_ref(),
                -32000,
                "unsupported version",
            );
        }
    }
    if name == "initialize" {
        let n = {
            let mut next = f.next.lock().unwrap();
            *next += 1;
            *next
        };
        let sid = if f.bug == Some(Bug::SessionIdNotAscii) {
            format!("fixture session {n}")
        } else if f.has(Bug::SessionIdNonAscii) {
            format!("fixture-sessi\u{e9}n-{n}")
        } else {
            format!("fixture-session-{n}")
        };
        f.sessions.lock().unwrap().insert(sid.clone());
        let offered = params
            .get("protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or("");
        let version = if VERSIONS[1..].contains(&offered) {
            offered
        } else {
            VERSIONS[1]
        };
        let result = json!({"protocolVersion": version, "capabilities": {"tools": {}},
                            "serverInfo": {"name": "http-fixture", "version": "1"}});
        let reply = f.wrap(response(id.as_ref().unwrap_or(&Value::Null), Ok(result)));
        return sse_reply(f.event(&reply.to_string()), Some(&sid));
    }
    match &session {
        None if f.bug == Some(Bug::NoSessionPlain400) => {
            let plain = [("content-type", "text/plain")];
            return (
                StatusCode::BAD_REQUEST,
                plain,
                "Bad Request: Session ID is required",
            )
                .into_response();
        }
        None if f.bug != Some(Bug::SessionNotRequired) => {
            return error(StatusCode::BAD_REQUEST, None, -32000, "session id required");
        }
        Some(s) if !f.sessions.lock().unwrap().contains(s) => {
            return error(StatusCode::NOT_FOUND, None, -32001, "session not found");
        }
        _ => {}
    }
    if let Some(items) = msg.as_array() {
        return batch(&f, items);
    }
    let Some(id) = id else {
        f.notifications.fetch_add(1, Ordering::SeqCst);
        f.notified.notify_waiters();
        return if f.bug == Some(Bug::Notification200) {
            StatusCode::OK.into_response()
        } else {
            StatusCode::ACCEPTED.into_response()
        };
    };
    let big = id.as_u64().is_some_and(|n| n > 1 << 53);
    if big && f.has(Bug::LateBigIds) {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    if big && f.has(Bug::DelayedReply) {
        until_next_notification(&f).await;
    }
    let answered = answer(&name, &params, false);
    if f.has(Bug::UnknownMethodPlain500) && matches!(answered, Err((-32601, _))) {
        return (
            StatusCode::INTERNAL_SERVER_ERROR,
            [("content-type", "text/plain")],
            "Internal Server Error",
        )
            .into_response();
    }
    let reply = f.wrap(response(&f.reply_id(&id), answered));
    let note = json!({"jsonrpc": "2.0", "method": "notifications/message",
                      "params": {"level": "info", "data": "x"}});
    let events = match (f.bug, name.as_str()) {
        (Some(Bug::SseTwoInOne), "ping") | (Some(Bug::SseTwoInOneAll), _) => {
            format!("data: {note}\ndata: {reply}\n\n")
        }
        (Some(Bug::SseNoData), "ping") | (Some(Bug::SseNoDataAll), _) => {
            format!("event: message\n{reply}\n\n")
        }
        _ => f.event(&reply.to_string()),
    };
    sse_reply(events, None)
}

/// Waits until the client POSTs a notification after now, or 2 s.
async fn until_next_notification(f: &Fixture) {
    let seen = f.notifications.load(Ordering::SeqCst);
    let wait = async {
        loop {
            let woken = f.notified.notified();
            if f.notifications.load(Ordering::SeqCst) > seen {
                return;
            }
            woken.await;
        }
    };
    let _ = tokio::time::timeout(std::time::Duration::from_secs(2), wait).await;
}

/// A JSON-RPC batch (2025-03-26): one JSON array of the requests' responses, or 202 if it
/// held none.
fn batch(f: &Fixture, items: &[Value]) -> Response {
    let replies: Vec<Value> = items
        .iter()
        .filter_map(|m| {
            let id = m.get("id")?;
            let method = m.get("method").and_then(Value::as_str)?;
            let params = m.get("params").cloned().unwrap_or(json!({}));
            Some(response(&f.reply_id(id), answer(method, &params, false)))
        })
        .collect();
    if replies.is_empty() {
        return StatusCode::ACCEPTED.into_response();
    }
    json_reply(&Value::Array(replies))
}

/// The legacy GET stream of a known session: a priming event (an id, empty data) and a
/// notification, then the stream ends ([`Bug::GetStreamResponse`]: a response among them).
fn get_stream(f: &Fixture, session: Option<&str>) -> Response {
    let Some(s) = session else {
        return error(StatusCode::BAD_REQUEST, None, -32000, "session id required");
    };
    if !f.sessions.lock().unwrap().contains(s) {
        return error(StatusCode::NOT_FOUND, None, -32001, "session not found");
    }
    let mut events = f.event("");
    let note = json!({"jsonrpc": "2.0", "method": "notifications/message",
                      "params": {"level": "info", "data": "from the GET stream"}});
    events.push_str(&f.event(&note.to_string()));
    if f.has(Bug::GetStreamResponse) {
        let stray = json!({"jsonrpc": "2.0", "id": 1, "result": {}});
        events.push_str(&f.event(&stray.to_string()));
    }
    sse_reply(events, None)
}

/// A 2026-07-28 request: its mirrored headers are validated, then it is answered in JSON.
fn modern(
    f: &Fixture,
    headers: &HeaderMap,
    id: &Value,
    method: &str,
    params: &Value,
    version: &str,
) -> Response {
    let mismatch = |what: &str| error(StatusCode::BAD_REQUEST, Some(id), -32020, what);
    let lenient = f.bug == Some(Bug::MirrorMismatchAccepted);
    match header(headers, "mcp-protocol-version") {
        None => return mismatch("MCP-Protocol-Version missing"),
        Some(v) if v != version && !lenient => return mismatch("MCP-Protocol-Version differs"),
        _ => {}
    }
    match header(headers, "mcp-method") {
        None => return mismatch("Mcp-Method missing"),
        Some(m) if m != method && !lenient => return mismatch("Mcp-Method differs"),
        _ => {}
    }
    let key = match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        _ => None,
    };
    if let Some(key) = key {
        let body = params.get(key).and_then(Value::as_str);
        match header(headers, "mcp-name") {
            None => return mismatch("Mcp-Name missing"),
            Some(n) if Some(n) != body && !lenient => return mismatch("Mcp-Name differs"),
            _ => {}
        }
    }
    if !VERSIONS.contains(&version) {
        let status = if f.has(Bug::ModernUnsupported200) {
            StatusCode::OK
        } else {
            StatusCode::BAD_REQUEST
        };
        return error(status, Some(id), -32022, "unsupported version");
    }
    let _ = MODERN;
    let answered = answer(method, params, true);
    if matches!(answered, Err((-32601, _))) && !f.has(Bug::ModernUnknownMethod200) {
        return error(StatusCode::NOT_FOUND, Some(id), -32601, "method not found");
    }
    json_reply(&f.wrap(response(&f.reply_id(id), answered)))
}
