//! One MCP session over Streamable HTTP (legacy era): the `initialize` handshake, which gives
//! the session id and the negotiated version that every later request carries, each POST
//! with its headers (`mcp_protocol::http::RequestHeaders`, built once per session for the
//! calls), and the reply read as JSON or as an SSE stream, bounded.
//!
//! The client is hyper-util's pooled HTTP/1.1 client over plain TCP: one keep-alive connection
//! per request in flight, `TCP_NODELAY`, nothing between the driver and hyper.

use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::{HeaderMap, HeaderValue, CONTENT_TYPE};
use http::{Method, Request, StatusCode};
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use mcp_protocol::http::{self as mcp_http, Negotiated, Posted, RequestHeaders, SseReader};
use mcp_protocol::mcp::methods;

use super::endpoint::Endpoint;
use crate::error::{shown, verify, DriveError, BENCH_VERSION};

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
    id: Option<String>,
    /// The version the server answered, sent as `MCP-Protocol-Version`.
    version: String,
    /// The headers of every `tools/call`.
    call_headers: HeaderMap,
    wait: Duration,
    /// The largest body read, in bytes.
    limit: usize,
}

/// The headers of a POST of `method` (a request, or a notification) in `negotiated`.
fn post_headers(
    method: &str,
    request: bool,
    negotiated: &Negotiated<'_>,
) -> Result<HeaderMap, DriveError> {
    let posted = Posted {
        method: Some(method),
        params: None,
        request,
    };
    RequestHeaders::post(posted, negotiated)
        .to_map()
        .map_err(|e| verify(format!("initialize: {e}")))
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
            version: BENCH_VERSION.to_owned(),
            call_headers: HeaderMap::new(),
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
        let init_headers = post_headers(methods::INITIALIZE, true, &Negotiated::default())?;
        let (id, messages) = session
            .exchange(Bytes::from(init), &init_headers)
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
        session.version = version.to_owned();
        session.id = match id {
            None => None,
            Some(id) => Some(id.to_str().map(str::to_owned).map_err(|_| {
                verify(format!(
                    "initialize: the {} header is not visible ASCII: {id:?}",
                    mcp_http::SESSION_ID
                ))
            })?),
        };
        let negotiated = session.negotiated();
        let note_headers = post_headers(methods::INITIALIZED, false, &negotiated)?;
        session.call_headers = post_headers(methods::TOOLS_CALL, true, &negotiated)?;
        let (_, _) = session
            .exchange(
                Bytes::from_static(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
                &note_headers,
            )
            .await
            .map_err(|e| verify(format!("notifications/initialized: {e}")))?;
        Ok((session, initialized))
    }

    fn negotiated(&self) -> Negotiated<'_> {
        Negotiated {
            session_id: self.id.as_deref(),
            legacy_version: Some(&self.version),
            modern_version: None,
        }
    }

    /// The version the server answered.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// Whether the server gave a session id.
    pub fn has_id(&self) -> bool {
        self.id.is_some()
    }

    /// POSTs one `tools/call`; returns the messages of its reply (one for JSON, every event's
    /// data for SSE), bounded by the timeout.
    pub async fn post(&self, body: Bytes) -> Result<Vec<Bytes>, Failure> {
        self.exchange(body, &self.call_headers)
            .await
            .map(|(_, messages)| messages)
    }

    /// Ends the session (`DELETE`); a server may refuse (405), which is fine.
    pub async fn close(&self) {
        if self.id.is_none() {
            return;
        }
        // Both values were checked when the session was opened.
        let Ok(headers) = RequestHeaders::session(&self.negotiated()).to_map() else {
            return;
        };
        let mut request = Request::new(Full::new(Bytes::new()));
        *request.method_mut() = Method::DELETE;
        *request.uri_mut() = self.endpoint.uri.clone();
        *request.headers_mut() = headers;
        let _ = tokio::time::timeout(self.wait, self.client.request(request)).await;
    }

    /// One POST with `headers`. Returns the session id the answer set and the reply's
    /// messages (none for 202).
    async fn exchange(
        &self,
        body: Bytes,
        headers: &HeaderMap,
    ) -> Result<(Option<HeaderValue>, Vec<Bytes>), Failure> {
        match tokio::time::timeout(self.wait, self.exchange_unbounded(body, headers)).await {
            Ok(result) => result,
            Err(_) => Err(Failure::Timeout),
        }
    }

    async fn exchange_unbounded(
        &self,
        body: Bytes,
        headers: &HeaderMap,
    ) -> Result<(Option<HeaderValue>, Vec<Bytes>), Failure> {
        let mut request = Request::new(Full::new(body));
        *request.method_mut() = Method::POST;
        *request.uri_mut() = self.endpoint.uri.clone();
        *request.headers_mut() = headers.clone();
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
