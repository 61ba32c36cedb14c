//! What the `http.*` checks send: single HTTP requests with exactly the headers a check wants
//! (a missing session id, a foreign `Origin`, a mirrored header that disagrees), each reply
//! read in full within `--timeout`, and every exchange in the check's transcript (user
//! headers redacted).

use std::sync::Arc;
use std::time::Duration;

use crate::transcript::Direction;
use mcp_protocol::http::{Negotiated, Posted, RequestHeaders, EVENT_STREAM, NAME, SESSION_ID};
use reqwest::header::{HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE};
use reqwest::Method;
use serde_json::{json, Value};

use crate::ctx::Ctx;
use crate::probe::{initialize_params, modern_meta};
use crate::transport::http::reply::{self, Reply};
use crate::transport::http::Log;
use crate::transport::Endpoint;

/// Why a check's HTTP exchange did not give it a reply to judge.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WireError {
    #[error("the target is not reached over HTTP")]
    NotHttp,
    #[error("no HTTP client could be made")]
    NoClient,
    #[error("no HTTP response within {0:?}")]
    NoResponse(Duration),
    #[error("the {method} failed: {reason}")]
    Failed { method: Method, reason: String },
    /// `initialize` got a reply without the JSON-RPC response it needs: the reply, in words.
    #[error("initialize got no JSON-RPC response: {0}")]
    NoResponseMessage(String),
    /// `initialize` got a JSON-RPC response without a result: the reply's text.
    #[error("initialize got no result: {0}")]
    NoResult(String),
}

/// One HTTP request of a check.
#[derive(Debug, Clone)]
pub struct Ask {
    pub method: Method,
    /// Headers beyond the user's; a `None` value leaves that header out.
    pub headers: Vec<(&'static str, Option<String>)>,
    pub body: Option<Vec<u8>>,
    /// Read only the status and headers (a GET's stream may never end).
    pub head_only: bool,
}

impl Ask {
    /// A POST of `message` as a client with nothing negotiated sends it.
    pub fn post(message: &Value) -> Ask {
        Ask::post_in(message, &Negotiated::default())
    }

    /// A POST of `message` as a client sends it in `negotiated`: the headers of
    /// `mcp_protocol::http::RequestHeaders` (both media types accepted; the session and version,
    /// or for 2026-07-28 `_meta` the mirrored headers).
    pub fn post_in(message: &Value, negotiated: &Negotiated<'_>) -> Ask {
        let headers = RequestHeaders::post(Posted::json(message), negotiated)
            .iter()
            .map(|(name, value)| (name, Some(value.to_owned())))
            .collect();
        Ask {
            method: Method::POST,
            headers,
            body: Some(serde_json::to_vec(message).unwrap_or_default()),
            head_only: false,
        }
    }

    /// A GET or DELETE with no body.
    pub fn bare(method: Method) -> Ask {
        Ask {
            method,
            headers: vec![("accept", Some(EVENT_STREAM.to_owned()))],
            body: None,
            head_only: true,
        }
    }

    /// Sets (or, with `None`, leaves out) a header.
    pub fn header(mut self, name: &'static str, value: Option<&str>) -> Ask {
        self.headers.retain(|(n, _)| *n != name);
        self.headers.push((name, value.map(str::to_owned)));
        self
    }
}

/// A check's HTTP client: the session it made, if any, and its transcript.
#[derive(Debug)]
pub struct Wire {
    endpoint: Arc<Endpoint>,
    client: reqwest::Client,
    log: Log,
    trace: crate::evidence::Trace,
    wait: Duration,
    limit: usize,
    /// `Mcp-Session-Id` from `initialize`'s reply.
    pub session: Option<String>,
    /// The version `initialize` negotiated.
    pub version: Option<String>,
    /// How long an SSE stream is read after the response it carries (it should end then):
    /// `--timeout` unless a check says otherwise.
    pub linger: Duration,
    next_id: i64,
}

impl Drop for Wire {
    fn drop(&mut self) {
        let entries = self.log.since(0);
        self.trace
            .add_process("HTTP client".to_owned(), entries, self.log.started());
    }
}

impl Wire {
    /// A client of the check's target, or why there is none (a stdio target).
    pub fn new(ctx: &Ctx) -> Result<Wire, WireError> {
        let endpoint = ctx.target().http.clone().ok_or(WireError::NotHttp)?;
        let client = ctx.http_client().ok_or(WireError::NoClient)?;
        Ok(Wire {
            endpoint,
            client,
            log: Log::new(),
            trace: ctx.trace().clone(),
            wait: ctx.config().wait,
            limit: ctx.config().max_message_bytes,
            session: None,
            version: None,
            linger: ctx.config().wait,
            next_id: 1,
        })
    }

    pub fn id(&mut self) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// A request with a fresh id.
    pub fn request(&mut self, method: &str, params: Option<Value>) -> Value {
        let mut v = json!({"jsonrpc": "2.0", "id": self.id(), "method": method});
        if let Some(p) = params {
            v["params"] = p;
        }
        v
    }

    /// A request carrying 2026-07-28 `_meta`, with a fresh id.
    pub fn modern_request(&mut self, method: &str, params: Option<Value>) -> Value {
        let meta = modern_meta(mcp_protocol::mcp::ProtocolVersion::LATEST.as_str());
        let mut params = params.unwrap_or_else(|| json!({}));
        params["_meta"] = meta;
        self.request(method, Some(params))
    }

    /// A POST of `message` with the session id and version this client has.
    pub fn post(&self, message: &Value) -> Ask {
        let negotiated = Negotiated {
            session_id: self.session.as_deref(),
            legacy_version: self.version.as_deref(),
            modern_version: None,
        };
        Ask::post_in(message, &negotiated)
    }

    /// A GET or DELETE (no body) with the session id and version this client has.
    pub fn bare(&self, method: Method) -> Ask {
        let mut ask = Ask::bare(method);
        if let Some(s) = &self.session {
            ask = ask.header(SESSION_ID, Some(s));
        }
        if let Some(v) = &self.version {
            ask = ask.header(mcp_protocol::http::PROTOCOL_VERSION, Some(v));
        }
        ask
    }

    /// Sends `ask` and reads the reply within `--timeout` (an SSE stream until it ends, or
    /// briefly after the response to `message`'s id).
    pub async fn send(&mut self, ask: Ask) -> Result<Reply, WireError> {
        let (resp, id, deadline) = self.start(&ask).await?;
        let reply = if ask.head_only {
            reply::head(resp)
        } else {
            reply::read(resp, self.limit, deadline, id.as_ref(), self.linger).await
        };
        self.record(&reply);
        Ok(reply)
    }

    /// Sends `ask` and returns its response once its head came, the body unread (a GET's
    /// stream, read while other requests are sent), with the deadline for reading it.
    pub async fn open_stream(
        &mut self,
        ask: &Ask,
    ) -> Result<(reqwest::Response, tokio::time::Instant), WireError> {
        let (resp, _, deadline) = self.start(ask).await?;
        Ok((resp, deadline))
    }

    /// Reads the rest of a response [`Wire::open_stream`] opened, until it ends or `deadline`,
    /// into the transcript.
    pub async fn read_stream(
        &mut self,
        resp: reqwest::Response,
        deadline: tokio::time::Instant,
    ) -> Reply {
        let reply = reply::read(resp, self.limit, deadline, None, self.linger).await;
        self.record(&reply);
        reply
    }

    /// Sends `ask` (in the transcript) and waits, within `--timeout`, for its response's
    /// head: the response, the id of the message it carried, and the deadline.
    async fn start(
        &mut self,
        ask: &Ask,
    ) -> Result<(reqwest::Response, Option<Value>, tokio::time::Instant), WireError> {
        let mut headers = self.endpoint.header_map();
        let mut shown = Vec::new();
        for (name, value) in &ask.headers {
            let name = HeaderName::from_static(name);
            headers.remove(&name);
            if let Some(v) = value {
                // Bytes, not `from_str`: a session id the server gave outside visible ASCII
                // still goes back as it came.
                if let Ok(value) = HeaderValue::from_bytes(v.as_bytes()) {
                    if name != ACCEPT && name != CONTENT_TYPE {
                        shown.push(format!("{name}: {v}"));
                    }
                    headers.insert(name, value);
                }
            }
        }
        shown.extend(self.endpoint.redacted_headers());
        let body = ask.body.clone().unwrap_or_default();
        let id = serde_json::from_slice::<Value>(&body)
            .ok()
            .and_then(|v| v.get("id").cloned());
        let sent = format!(
            "{} [{}] {}",
            ask.method,
            shown.join("; "),
            String::from_utf8_lossy(&body)
        );
        self.log.record(Direction::Send, sent);
        let mut request = self
            .client
            .request(ask.method.clone(), &self.endpoint.url)
            .headers(headers);
        if ask.body.is_some() {
            request = request.body(body);
        }
        let deadline = tokio::time::Instant::now() + self.wait;
        let error = match tokio::time::timeout_at(deadline, request.send()).await {
            Ok(Ok(resp)) => return Ok((resp, id, deadline)),
            Err(_) => WireError::NoResponse(self.wait),
            Ok(Err(e)) => WireError::Failed {
                method: ask.method.clone(),
                reason: e.to_string(),
            },
        };
        self.log.record(Direction::Event, error.to_string());
        Err(error)
    }

    fn record(&self, reply: &Reply) {
        let mut line = reply.status_line();
        if let Some(s) = reply.header(SESSION_ID) {
            line.push_str(&format!(" [{SESSION_ID}: {s}]"));
        }
        if reply.is_sse() && !reply.ended {
            line.push_str(" (the stream was still open when reading stopped)");
        }
        if let Some(p) = &reply.problem {
            line.push_str(&format!(" ({p})"));
        }
        self.log.record(Direction::Event, line);
        let text = reply.text();
        if !text.is_empty() {
            self.log.record(Direction::Receive, text);
        }
    }

    /// `initialize` and then `notifications/initialized` (see [`Wire::open`]).
    pub async fn initialize(&mut self) -> Result<Reply, WireError> {
        let reply = self.open().await?;
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let ask = self.post(&note);
        self.send(ask).await?;
        Ok(reply)
    }

    /// `initialize` offering the latest version: the session id and version are kept for
    /// later requests. The reply is returned.
    pub async fn open(&mut self) -> Result<Reply, WireError> {
        let init = self.request("initialize", Some(initialize_params(crate::LATEST)));
        let ask = Ask::post(&init);
        let reply = self.send(ask).await?;
        let answer = reply
            .messages()
            .into_iter()
            .find(|m| reply::answers(m, &init["id"]))
            .ok_or_else(|| {
                WireError::NoResponseMessage(format!("{} {}", reply.status_line(), reply.text()))
            })?;
        let version = answer
            .pointer("/result/protocolVersion")
            .and_then(Value::as_str)
            .ok_or_else(|| WireError::NoResult(reply.text()))?;
        self.version = Some(version.to_owned());
        self.session = reply
            .headers
            .get(SESSION_ID)
            .and_then(|v| String::from_utf8(v.as_bytes().to_vec()).ok());
        Ok(reply)
    }
}

/// `HTTP 400 application/json: {…}`, for a report.
pub fn seen(reply: &Reply) -> String {
    let text = reply.text();
    if text.is_empty() {
        format!("{} (no body)", reply.status_line())
    } else {
        format!("{}: {text}", reply.status_line())
    }
}

/// A POST of `message`, which carries 2026-07-28 `_meta`, with all its mirrored headers
/// right; with `name`, `Mcp-Name` says that instead.
pub fn modern_post(message: &Value, name: Option<&str>) -> Ask {
    let ask = Ask::post(message);
    match name {
        Some(n) => ask.header(NAME, Some(n)),
        None => ask,
    }
}
