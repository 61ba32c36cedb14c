//! One MCP session over Streamable HTTP (legacy era): the `initialize` handshake, which gives
//! the session id and the negotiated version that every later request carries, each POST
//! with its headers, and the reply read as JSON or as an SSE stream, bounded.
//!
//! The client is hyper-util's pooled HTTP/1.1 client over plain TCP: one keep-alive connection
//! per request in flight, `TCP_NODELAY`, nothing between the driver and hyper.

use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::{HeaderValue, ACCEPT, CONTENT_TYPE};
use http::{Method, Request, StatusCode};
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use mcp_protocol::http::{self as mcp_http, SseReader};

use super::endpoint::Endpoint;
use crate::error::{shown, verify, DriveError, BENCH_VERSION};

/// What every POST accepts: the client MUST list both.
const ACCEPT_BOTH: &str = "application/json, text/event-stream";

/// Why a request got no usable reply.
#[derive(Debug)]
pub enum Failure {
    /// A status other than 2xx, with the start of its body.
    Status(StatusCode, String),
    /// A 2xx answer whose body is not a reply (wrong type, empty, cut, too large).
    BadReply(String),
    /// The connection failed or closed before an answer.
    Transport(String),
    /// No answer within the timeout.
    Timeout,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Status(status, body) => write!(f, "HTTP {status}: {body}"),
            Failure::BadReply(m) | Failure::Transport(m) => f.write_str(m),
            Failure::Timeout => f.write_str("no answer within the timeout"),
        }
    }
}

/// A session: the pooled client, the endpoint and the headers the server asked for.
#[derive(Debug)]
pub struct Session {
    client: Client<HttpConnector, Full<Bytes>>,
    endpoint: Endpoint,
    /// `Mcp-Session-Id` from the `initialize` reply, if the server set one.
    id: Option<HeaderValue>,
    /// The version the server answered, sent as `MCP-Protocol-Version`.
    version: HeaderValue,
    wait: Duration,
    /// The largest body read, in bytes.
    limit: usize,
}

impl Session {
    /// Connects and makes the handshake: `initialize` (offering [`BENCH_VERSION`]), then
    /// `notifications/initialized` with the session id and the version the server answered.
    /// `max_payload` sizes the body limit. Returns the session and when the `initialize`
    /// reply was in.
    pub async fn open(
        endpoint: &Endpoint,
        wait: Duration,
        max_payload: usize,
    ) -> Result<(Session, Instant), DriveError> {
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        let client = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(None)
            .build(connector);
        let mut session = Session {
            client,
            endpoint: endpoint.clone(),
            id: None,
            version: HeaderValue::from_static(BENCH_VERSION),
            wait,
            // The reply carries the text at most a few times, escaped: room for that and more.
            limit: max_payload.saturating_mul(16).max(1 << 20),
        };
        let init = format!(
            r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{BENCH_VERSION}","capabilities":{{}},"clientInfo":{{"name":"mcp-conformance-bench","version":"{}"}}}}}}"#,
            env!("CARGO_PKG_VERSION")
        );
        let handshake = |e: Failure| match e {
            Failure::Transport(m) => {
                DriveError::Start(format!("cannot reach {}: initialize: {m}", endpoint.url))
            }
            other => verify(format!("initialize: {other}")),
        };
        let (id, messages) = session
            .exchange(Bytes::from(init), false)
            .await
            .map_err(handshake)?;
        let initialized = Instant::now();
        let reply = messages
            .iter()
            .filter_map(|m| serde_json::from_slice::<serde_json::Value>(m).ok())
            .find(|v| v.get("method").is_none())
            .ok_or_else(|| {
                verify(format!(
                    "initialize: no JSON-RPC response in the reply ({} message(s))",
                    messages.len()
                ))
            })?;
        let version = reply
            .pointer("/result/protocolVersion")
            .and_then(|v| v.as_str())
            .filter(|_| reply.get("id") == Some(&serde_json::json!(0)))
            .ok_or_else(|| {
                verify(format!(
                    "expected the initialize reply (id 0, a result with a protocolVersion), got: {}",
                    shown(reply.to_string().as_bytes())
                ))
            })?;
        session.version = HeaderValue::from_str(version)
            .map_err(|_| verify(format!("initialize: unusable protocolVersion {version:?}")))?;
        session.id = id;
        let (_, _) = session
            .exchange(
                Bytes::from_static(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
                true,
            )
            .await
            .map_err(|e| verify(format!("notifications/initialized: {e}")))?;
        Ok((session, initialized))
    }

    /// The version the server answered.
    pub fn version(&self) -> &str {
        self.version.to_str().unwrap_or("?")
    }

    /// Whether the server gave a session id.
    pub fn has_id(&self) -> bool {
        self.id.is_some()
    }

    /// POSTs one request; returns the messages of its reply (one for JSON, every event's data
    /// for SSE), bounded by the timeout.
    pub async fn post(&self, body: Bytes) -> Result<Vec<Bytes>, Failure> {
        self.exchange(body, true)
            .await
            .map(|(_, messages)| messages)
    }

    /// Ends the session (`DELETE`); a server may refuse (405), which is fine.
    pub async fn close(&self) {
        if let Some(id) = &self.id {
            let request = Request::builder()
                .method(Method::DELETE)
                .uri(self.endpoint.uri.clone())
                .header(mcp_http::SESSION_ID, id)
                .header(mcp_http::PROTOCOL_VERSION, &self.version)
                .body(Full::new(Bytes::new()));
            if let Ok(request) = request {
                let _ = tokio::time::timeout(self.wait, self.client.request(request)).await;
            }
        }
    }

    /// One POST: with `session`, the session id and version headers. Returns the session id
    /// the answer set and the reply's messages (none for 202).
    async fn exchange(
        &self,
        body: Bytes,
        session: bool,
    ) -> Result<(Option<HeaderValue>, Vec<Bytes>), Failure> {
        match tokio::time::timeout(self.wait, self.exchange_unbounded(body, session)).await {
            Ok(result) => result,
            Err(_) => Err(Failure::Timeout),
        }
    }

    async fn exchange_unbounded(
        &self,
        body: Bytes,
        session: bool,
    ) -> Result<(Option<HeaderValue>, Vec<Bytes>), Failure> {
        let mut request = Request::builder()
            .method(Method::POST)
            .uri(self.endpoint.uri.clone())
            .header(CONTENT_TYPE, mcp_http::JSON)
            .header(ACCEPT, ACCEPT_BOTH);
        if session {
            if let Some(id) = &self.id {
                request = request.header(mcp_http::SESSION_ID, id);
            }
            request = request.header(mcp_http::PROTOCOL_VERSION, &self.version);
        }
        let request = request
            .body(Full::new(body))
            .map_err(|e| Failure::Transport(format!("cannot build the request: {e}")))?;
        let response = self
            .client
            .request(request)
            .await
            .map_err(|e| Failure::Transport(format!("{e} ({})", source_chain(&e))))?;
        let status = response.status();
        let id = response.headers().get(mcp_http::SESSION_ID).cloned();
        let media = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(|v| {
                v.split(';')
                    .next()
                    .unwrap_or("")
                    .trim()
                    .to_ascii_lowercase()
            });
        let bytes = Limited::new(response.into_body(), self.limit)
            .collect()
            .await
            .map_err(|e| {
                Failure::BadReply(format!(
                    "HTTP {status}: the body could not be read whole: {e}"
                ))
            })?
            .to_bytes();
        if !status.is_success() {
            return Err(Failure::Status(status, shown(&bytes)));
        }
        let messages = match media.as_deref() {
            _ if status == StatusCode::ACCEPTED && bytes.is_empty() => Vec::new(),
            Some(mcp_http::JSON) => vec![bytes],
            Some(mcp_http::EVENT_STREAM) => events(&bytes, self.limit)?,
            other => {
                return Err(Failure::BadReply(format!(
                    "HTTP {status} with Content-Type {}: a reply must be {} or {}: {}",
                    other.unwrap_or("(none)"),
                    mcp_http::JSON,
                    mcp_http::EVENT_STREAM,
                    shown(&bytes)
                )))
            }
        };
        Ok((id, messages))
    }
}

/// The data of every event in an SSE body that carries any (priming events carry none).
fn events(body: &[u8], limit: usize) -> Result<Vec<Bytes>, Failure> {
    let mut reader = SseReader::new(limit);
    let mut out = Vec::new();
    reader
        .feed(body, &mut out)
        .map_err(|e| Failure::BadReply(format!("a bad event stream ({e}): {}", shown(body))))?;
    if reader.in_event() {
        return Err(Failure::BadReply(format!(
            "the event stream ended inside an event: {}",
            shown(body)
        )));
    }
    Ok(out
        .into_iter()
        .filter(|e| !e.data.is_empty())
        .map(|e| Bytes::from(e.data))
        .collect())
}

/// An error's sources, for messages ("connection refused" hides below "client error").
fn source_chain(e: &dyn std::error::Error) -> String {
    let mut parts = Vec::new();
    let mut source = e.source();
    while let Some(s) = source {
        parts.push(s.to_string());
        source = s.source();
    }
    if parts.is_empty() {
        "no more detail".to_owned()
    } else {
        parts.join(": ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sse_bodies_give_their_data_events() {
        let body = b"id: 0\nretry: 3000\ndata: \n\nevent: message\ndata: {\"id\":1}\n\n";
        let got = events(body, 1024).map_err(|e| e.to_string());
        assert_eq!(got, Ok(vec![Bytes::from_static(b"{\"id\":1}")]));
        assert!(events(b"data: {\"id\":1}\n", 1024).is_err(), "cut short");
        assert!(events(b"data: 0123456789\n\n", 4).is_err(), "too large");
    }
}
