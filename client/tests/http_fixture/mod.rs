//! An in-process Streamable HTTP server for the client's tests: axum on 127.0.0.1, a free
//! port, one endpoint (`/mcp`) whose every answer a test scripts. Every request it receives is
//! recorded, in order, on a channel the test reads (no sleeps: waits are bounded events).
#![allow(clippy::unwrap_used, dead_code)]

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::Response;
use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::common::within;

/// One HTTP request the fixture received.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: Method,
    pub headers: HeaderMap,
    /// The JSON body (`Null` when there was none).
    pub body: Value,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(|v| v.to_str().unwrap())
    }
    /// The JSON-RPC method of the body.
    pub fn rpc(&self) -> &str {
        self.body["method"].as_str().unwrap_or("")
    }
    pub fn id(&self) -> Value {
        self.body["id"].clone()
    }
}

type Answer = Pin<Box<dyn Future<Output = Response> + Send>>;
type Script = Arc<dyn Fn(Seen) -> Answer + Send + Sync>;

pub struct Fixture {
    pub url: String,
    /// POSTs and DELETEs, in order.
    seen: mpsc::UnboundedReceiver<Seen>,
    /// GETs (the legacy listening stream), apart: they come whenever the client opens one.
    gets: mpsc::UnboundedReceiver<Seen>,
    _server: tokio::task::JoinHandle<()>,
}

impl Fixture {
    /// Serves `script` (called with each request, after it is recorded).
    pub async fn serve<F, Fut>(script: F) -> Fixture
    where
        F: Fn(Seen) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Response> + Send + 'static,
    {
        let script: Script = Arc::new(move |seen| Box::pin(script(seen)));
        let (tx, seen) = mpsc::unbounded_channel();
        let (get_tx, gets) = mpsc::unbounded_channel();
        let app = axum::Router::new().route(
            "/mcp",
            axum::routing::any(move |method: Method, headers: HeaderMap, body: Bytes| {
                let script = Arc::clone(&script);
                let tx = if method == Method::GET {
                    get_tx.clone()
                } else {
                    tx.clone()
                };
                async move {
                    let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
                    let seen = Seen {
                        method,
                        headers,
                        body,
                    };
                    let _ = tx.send(seen.clone());
                    script(seen).await
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let server = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Fixture {
            url,
            seen,
            gets,
            _server: server,
        }
    }

    /// The next request the fixture received (bounded wait).
    pub async fn next(&mut self) -> Seen {
        within("a request at the fixture", self.seen.recv())
            .await
            .expect("the fixture stopped")
    }

    /// The next request, which must be a POST of JSON-RPC `method`.
    pub async fn expect(&mut self, method: &str) -> Seen {
        let seen = self.next().await;
        assert_eq!(
            (&seen.method, seen.rpc()),
            (&Method::POST, method),
            "unexpected request: {seen:?}"
        );
        seen
    }

    /// The next GET the fixture received (bounded wait).
    pub async fn next_get(&mut self) -> Seen {
        within("a GET at the fixture", self.gets.recv())
            .await
            .expect("the fixture stopped")
    }

    /// GETs received so far and not yet read.
    pub fn drain_gets(&mut self) -> Vec<Seen> {
        std::iter::from_fn(|| self.gets.try_recv().ok()).collect()
    }

    /// Requests received so far and not yet read.
    pub fn drain(&mut self) -> Vec<Seen> {
        std::iter::from_fn(|| self.seen.try_recv().ok()).collect()
    }
}

fn with_type(status: StatusCode, content_type: &str, body: impl Into<Body>) -> Response {
    Response::builder()
        .status(status)
        .header("content-type", content_type)
        .body(body.into())
        .unwrap()
}

/// 200 with one JSON message.
pub fn json_body(message: Value) -> Response {
    with_type(StatusCode::OK, "application/json", message.to_string())
}

/// 200 with a JSON-RPC success for `id`.
pub fn result(id: Value, result: Value) -> Response {
    json_body(json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

/// 200, `text/event-stream`, one event per message.
pub fn sse(messages: &[Value]) -> Response {
    let mut body = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        let id = i.to_string();
        mcp_client::protocol::http::write_event(&mut body, Some(&id), m.to_string().as_bytes());
    }
    with_type(StatusCode::OK, "text/event-stream", body)
}

/// `status` with a JSON body.
pub fn status_json(status: u16, body: Value) -> Response {
    with_type(
        StatusCode::from_u16(status).unwrap(),
        "application/json",
        body.to_string(),
    )
}

/// `status` with no body.
pub fn status(status: u16) -> Response {
    Response::builder()
        .status(StatusCode::from_u16(status).unwrap())
        .body(Body::empty())
        .unwrap()
}

/// Adds `Mcp-Session-Id: session`.
pub fn with_session(mut response: Response, session: &str) -> Response {
    response
        .headers_mut()
        .insert("mcp-session-id", session.parse().unwrap());
    response
}

/// A tools/call result with one text block.
pub fn text_result(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}]})
}

/// 200, `text/event-stream`, `body` as written (fields, blank lines and all); the stream ends
/// with the body.
pub fn sse_raw(body: &str) -> Response {
    with_type(StatusCode::OK, "text/event-stream", body.to_owned())
}
