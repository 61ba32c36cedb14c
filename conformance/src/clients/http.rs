//! `client` mode over Streamable HTTP, the harness's side: a server on a free loopback port that
//! records every request of the client, feeds the JSON-RPC messages of each POST to the script
//! and answers as the transport says (2025-11-25 `basic/transports.mdx`, Streamable HTTP):
//! 202 for notifications and responses; for requests a JSON response, or an SSE stream when
//! server messages go first; 404 once the script expires the session; 405 for GET (no
//! server-initiated stream is offered, which the spec allows); 200 for DELETE.

use std::collections::HashSet;
use std::convert::Infallible;
use std::hash::{BuildHasher, Hasher};
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::body::{to_bytes, Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Router;
use futures::StreamExt;
use parking_lot::Mutex;
use serde_json::{json, Value};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::live::Live;
use super::timeline::{Exchange, Side, What};

/// The largest request body read.
const MAX_BODY: usize = 4 * 1024 * 1024;
/// The longest a POST the script leaves unanswered is held open.
const MAX_HOLD: Duration = Duration::from_secs(120);

const JSON: &str = "application/json";
const SSE: &str = "text/event-stream";

/// The listener of one scenario.
#[derive(Debug)]
pub(crate) struct HttpServer {
    url: String,
    end: CancellationToken,
    task: JoinHandle<()>,
}

#[derive(Clone)]
struct Shared {
    live: Arc<Live>,
    /// The session id minted by the last `initialize` result, until it expires or is deleted.
    session: Arc<Mutex<Option<String>>>,
    /// Whether any session id was ever minted (before that, a header is not judged stale).
    minted: Arc<Mutex<bool>>,
    /// Request ids the client cancelled (`notifications/cancelled`), as JSON text.
    cancelled: Arc<watch::Sender<HashSet<String>>>,
    end: CancellationToken,
    next_event: Arc<AtomicU64>,
}

impl HttpServer {
    /// Listens on a free loopback port.
    pub(crate) async fn start(live: Arc<Live>) -> io::Result<HttpServer> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let port = listener.local_addr()?.port();
        let end = CancellationToken::new();
        let shared = Shared {
            live,
            session: Arc::default(),
            minted: Arc::default(),
            cancelled: Arc::new(watch::channel(HashSet::new()).0),
            end: end.clone(),
            next_event: Arc::default(),
        };
        let router = Router::new().fallback(handle).with_state(shared);
        let stop = end.clone();
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, router)
                .with_graceful_shutdown(stop.cancelled_owned())
                .await;
        });
        Ok(HttpServer {
            url: format!("http://127.0.0.1:{port}/mcp"),
            end,
            task,
        })
    }

    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// Ends held streams and stops listening.
    pub(crate) async fn stop(self) {
        self.end.cancel();
        let mut task = self.task;
        if tokio::time::timeout(Duration::from_secs(1), &mut task)
            .await
            .is_err()
        {
            task.abort();
        }
    }
}

async fn handle(State(s): State<Shared>, request: Request) -> Response {
    let method = request.method().as_str().to_owned();
    let path = request.uri().path().to_owned();
    let headers = recorded_headers(request.headers());
    let exchange = |status: StatusCode, content_type: &str| Exchange {
        method: method.clone(),
        path: path.clone(),
        headers: headers.clone(),
        status: status.as_u16(),
        content_type: content_type.to_owned(),
        response_headers: Vec::new(),
    };
    if path != "/mcp" && path != "/" {
        s.live.push(What::Http(exchange(StatusCode::NOT_FOUND, "")));
        return StatusCode::NOT_FOUND.into_response();
    }
    match method.as_str() {
        "POST" => {
            let accept = request
                .headers()
                .get("accept")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            let sse = accept.to_ascii_lowercase().contains(SSE);
            let session = header(request.headers(), "mcp-session-id");
            match to_bytes(request.into_body(), MAX_BODY).await {
                Ok(body) => post(&s, exchange, &body, sse, session).await,
                Err(_) => {
                    s.live
                        .push(What::Http(exchange(StatusCode::PAYLOAD_TOO_LARGE, "")));
                    StatusCode::PAYLOAD_TOO_LARGE.into_response()
                }
            }
        }
        "DELETE" => {
            *s.session.lock() = None;
            s.live.push(What::Http(exchange(StatusCode::OK, "")));
            StatusCode::OK.into_response()
        }
        _ => {
            s.live
                .push(What::Http(exchange(StatusCode::METHOD_NOT_ALLOWED, "")));
            let mut r = StatusCode::METHOD_NOT_ALLOWED.into_response();
            r.headers_mut()
                .insert("allow", HeaderValue::from_static("POST, DELETE"));
            r
        }
    }
}

/// Request headers as recorded: names lower-cased, credentials redacted.
fn recorded_headers(headers: &HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(name, value)| {
            let name = name.as_str().to_ascii_lowercase();
            let value = if name == "authorization" || name == "cookie" {
                "<redacted>".to_owned()
            } else {
                String::from_utf8_lossy(value.as_bytes()).into_owned()
            };
            (name, value)
        })
        .collect()
}

fn header(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
}

/// What one POST gets.
#[derive(Debug)]
struct Reply {
    status: StatusCode,
    content_type: &'static str,
    messages: Vec<Value>,
    /// A request in it is left unanswered: its id, as JSON text.
    held: Option<String>,
    new_session: Option<String>,
}

async fn post(
    s: &Shared,
    exchange: impl Fn(StatusCode, &str) -> Exchange,
    body: &Bytes,
    sse: bool,
    session: Option<String>,
) -> Response {
    let json: Option<Value> = serde_json::from_slice(body).ok();
    if let Some(json) = &json {
        note_cancellations(s, json);
    }
    let reply = s.live.with(|i| {
        let reply = decide(s, i, json.as_ref(), sse, session);
        let mut x = exchange(reply.status, reply.content_type);
        if let Some(token) = &reply.new_session {
            x.response_headers
                .push(("mcp-session-id".to_owned(), token.clone()));
        }
        let at = i.push(What::Http(x));
        i.message(Side::Client, body.to_vec(), at);
        for m in &reply.messages {
            let raw = serde_json::to_vec(m).unwrap_or_default();
            i.message(Side::Server, raw, at);
        }
        reply
    });
    if reply.content_type.is_empty() {
        if let Some(id) = reply.held.clone() {
            held(s, id).await;
        }
    }
    respond(s, reply)
}

/// The script's answer to a POST's messages, and how it goes back.
fn decide(
    s: &Shared,
    i: &mut super::live::Inner,
    json: Option<&Value>,
    sse: bool,
    session: Option<String>,
) -> Reply {
    let mut reply = Reply {
        status: StatusCode::ACCEPTED,
        content_type: "",
        messages: Vec::new(),
        held: None,
        new_session: None,
    };
    let Some(json) = json else {
        reply.status = StatusCode::BAD_REQUEST;
        reply.content_type = JSON;
        reply.messages.push(json!({"jsonrpc": "2.0", "id": null,
            "error": {"code": -32700, "message": "Parse error: the body is not JSON"}}));
        return reply;
    };
    let requests = requests_in(json);
    let stale = session.is_some() && *s.minted.lock() && *s.session.lock() != session;
    let steps = if stale {
        Vec::new()
    } else {
        i.steps(json, !requests.is_empty() && sse, session.is_some())
    };
    if stale || steps.iter().any(|st| st.expire) {
        *s.session.lock() = None;
        reply.status = StatusCode::NOT_FOUND;
        return reply;
    }
    if requests.is_empty() {
        return reply;
    }
    let answered = steps.iter().filter(|st| st.answered).count();
    reply.messages = steps.into_iter().flat_map(|st| st.messages).collect();
    if answered < requests.len() {
        reply.held = requests
            .iter()
            .find(|id| !reply.messages.iter().any(|m| m.get("id") == Some(*id)))
            .map(|id| id.to_string());
    }
    if reply.messages.iter().any(is_initialize_result) {
        let token = fresh_token();
        *s.session.lock() = Some(token.clone());
        *s.minted.lock() = true;
        reply.new_session = Some(token);
    }
    reply.status = StatusCode::OK;
    reply.content_type = if sse && (reply.messages.len() > 1 || reply.held.is_some()) {
        SSE
    } else if reply.held.is_some() {
        // The client cannot take an SSE stream: the POST is held, then ends with no body.
        reply.status = StatusCode::NO_CONTENT;
        ""
    } else {
        JSON
    };
    reply
}

/// The ids of the requests in a message or batch.
fn requests_in(json: &Value) -> Vec<&Value> {
    let one = |m: &'_ Value| -> bool { m.get("method").is_some() };
    match json {
        Value::Array(batch) => batch
            .iter()
            .filter(|m| one(m))
            .filter_map(|m| m.get("id"))
            .collect(),
        m if one(m) => m.get("id").into_iter().collect(),
        _ => Vec::new(),
    }
}

fn is_initialize_result(m: &Value) -> bool {
    m.get("result")
        .and_then(|r| r.get("protocolVersion"))
        .is_some()
        && m.get("result").and_then(|r| r.get("serverInfo")).is_some()
}

/// `notifications/cancelled` for a held request releases it.
fn note_cancellations(s: &Shared, json: &Value) {
    let each: Vec<&Value> = match json {
        Value::Array(batch) => batch.iter().collect(),
        one => vec![one],
    };
    for m in each {
        if m.get("method").and_then(Value::as_str) == Some("notifications/cancelled") {
            if let Some(id) = m.get("params").and_then(|p| p.get("requestId")) {
                let id = id.to_string();
                s.cancelled.send_modify(|set| {
                    set.insert(id);
                });
            }
        }
    }
}

fn fresh_token() -> String {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    format!("mcp-conformance-{:016x}", h.finish())
}

fn respond(s: &Shared, reply: Reply) -> Response {
    let hold = reply
        .held
        .clone()
        .filter(|_| reply.content_type == SSE)
        .map(|id| held(s, id));
    let mut response = match reply.content_type {
        SSE => {
            let events: Vec<Result<Bytes, Infallible>> = reply
                .messages
                .iter()
                .map(|m| {
                    let n = s.next_event.fetch_add(1, Ordering::Relaxed);
                    Ok(Bytes::from(format!("id: {n}\ndata: {m}\n\n")))
                })
                .collect();
            let tail = futures::stream::once(async move {
                if let Some(hold) = hold {
                    hold.await;
                }
            })
            .filter_map(|()| futures::future::ready(None));
            let mut r = Response::new(Body::from_stream(futures::stream::iter(events).chain(tail)));
            r.headers_mut()
                .insert("cache-control", HeaderValue::from_static("no-cache"));
            r
        }
        JSON => {
            let body = match reply.messages.as_slice() {
                [one] => one.to_string(),
                many => Value::Array(many.to_vec()).to_string(),
            };
            Response::new(Body::from(body))
        }
        _ => Response::new(Body::empty()),
    };
    *response.status_mut() = reply.status;
    if !reply.content_type.is_empty() {
        response
            .headers_mut()
            .insert("content-type", HeaderValue::from_static(reply.content_type));
    }
    if let Some(token) = reply
        .new_session
        .and_then(|t| HeaderValue::from_str(&t).ok())
    {
        response.headers_mut().insert("mcp-session-id", token);
    }
    response
}

/// Resolves when the client cancels request `id`, the scenario ends, or [`MAX_HOLD`] passes.
fn held(s: &Shared, id: String) -> impl std::future::Future<Output = ()> + Send + 'static {
    let mut cancelled = s.cancelled.subscribe();
    let end = s.end.clone();
    async move {
        tokio::select! {
            _ = cancelled.wait_for(|set| set.contains(&id)) => {}
            () = end.cancelled() => {}
            () = tokio::time::sleep(MAX_HOLD) => {}
        }
    }
}
