//! A probe's connection over Streamable HTTP: every message sent is its own POST, and what
//! comes back (a JSON body, or each event of an SSE stream) becomes the same [`RawEvent`]
//! frames a process's stdout gives; a `202 Accepted` gives none, as a notification gets no
//! reply on stdio.
//!
//! Headers are the client library's (`mcp_protocol::http::RequestHeaders`): `Accept` listing
//! both media types, the session id once `initialize`'s reply set one, `MCP-Protocol-Version`
//! after `initialize` (legacy), and for a message carrying 2026-07-28 `_meta` the mirrored
//! `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` instead. Requests are POSTed concurrently (their replies may come in any order, as
//! JSON-RPC allows); anything else (a notification, bytes that are no request) is POSTed and
//! its reply read before `send` returns, so a barrier sent after it is answered after it.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use mcp_protocol::http::{
    InvalidHeader, Negotiated, Posted, RequestHeaders, METHOD, NAME, PROTOCOL_VERSION, SESSION_ID,
};
use parking_lot::Mutex;
use reqwest::header::HeaderMap;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::deliver::{deliver, Delivery, Learned};
use super::endpoint::Endpoint;
use super::log::Log;
use crate::transcript::Direction;
use crate::transcript::TranscriptEntry;
use crate::transport::RawEvent;

/// An HTTP client for `endpoint`: no proxy for a loopback server, connections bounded by
/// `wait`.
pub fn client_for(endpoint: &Endpoint, wait: Duration) -> Result<reqwest::Client, reqwest::Error> {
    let mut builder = reqwest::Client::builder().connect_timeout(wait);
    let loopback = endpoint
        .authority()
        .is_some_and(|(host, _)| super::port::is_loopback(&host));
    if loopback {
        builder = builder.no_proxy();
    }
    builder.build()
}

/// One logical client of the server (a session, once `initialize` made one).
#[derive(Debug)]
pub struct HttpConn {
    endpoint: Arc<Endpoint>,
    client: reqwest::Client,
    learned: Arc<Mutex<Learned>>,
    tx: mpsc::Sender<RawEvent>,
    events: mpsc::Receiver<RawEvent>,
    log: Log,
    limit: usize,
    wait: Duration,
    /// The request POSTs still in flight.
    tasks: Vec<JoinHandle<()>>,
}

impl Drop for HttpConn {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

impl HttpConn {
    /// A client of `endpoint` with no session yet; bodies and events up to `limit` bytes, each
    /// inline POST bounded by `wait`.
    pub fn new(
        endpoint: Arc<Endpoint>,
        client: reqwest::Client,
        limit: usize,
        wait: Duration,
    ) -> HttpConn {
        let (tx, events) = mpsc::channel(4096);
        HttpConn {
            endpoint,
            client,
            learned: Arc::default(),
            tx,
            events,
            log: Log::new(),
            limit,
            wait,
            tasks: Vec::new(),
        }
    }

    pub fn elapsed(&self) -> Duration {
        self.log.started().elapsed()
    }

    /// POSTs one JSON-RPC message.
    pub async fn send_json(&mut self, value: &Value) -> std::io::Result<()> {
        let body = serde_json::to_vec(value)?;
        self.post(body, Some(value.clone())).await;
        Ok(())
    }

    /// POSTs `bytes`: each line on its own when every line is JSON (several frames in one
    /// write), else all of them as one body (bytes that are not JSON).
    pub async fn send_raw(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        let trimmed = bytes.strip_suffix(b"\n").unwrap_or(bytes);
        let lines: Vec<&[u8]> = trimmed.split(|b| *b == b'\n').collect();
        let parsed: Vec<Option<Value>> = lines
            .iter()
            .map(|l| serde_json::from_slice(l).ok())
            .collect();
        if lines.len() > 1 && parsed.iter().all(Option::is_some) {
            for (line, value) in lines.into_iter().zip(parsed) {
                self.post(line.to_vec(), value).await;
            }
        } else {
            let value = serde_json::from_slice(trimmed).ok();
            self.post(trimmed.to_vec(), value).await;
        }
        Ok(())
    }

    /// The headers of a POST carrying `message`: the user's, then the MCP ones. A learned
    /// session id or version that cannot be a header value is left out, and returned.
    fn headers(&self, message: Option<&Value>) -> (HeaderMap, Option<InvalidHeader>) {
        let mut h = self.endpoint.header_map();
        let learned = self.learned.lock();
        let session = learned.session.as_ref();
        let negotiated = Negotiated {
            session_id: session.and_then(|s| s.to_str().ok()),
            legacy_version: learned.version.as_deref(),
            modern_version: None,
        };
        let posted = message.map(Posted::json).unwrap_or_default();
        let left_out = RequestHeaders::post(posted, &negotiated)
            .insert_into(&mut h)
            .err();
        // A session id that is not visible ASCII still names the session: it goes back as the
        // server sent it (`http.session-id-visible-ascii` judges it, once).
        if let Some(raw) = session.filter(|s| s.to_str().is_err()) {
            h.insert(SESSION_ID, raw.clone());
        }
        (h, left_out)
    }

    /// What a transcript shows of a POST: its MCP headers, the user's redacted, and the body.
    fn describe(&self, headers: &HeaderMap, body: &[u8]) -> String {
        let mut shown: Vec<String> = [SESSION_ID, PROTOCOL_VERSION, METHOD, NAME]
            .iter()
            .filter_map(|n| {
                let value = String::from_utf8_lossy(headers.get(*n)?.as_bytes()).into_owned();
                Some(format!("{n}: {value}"))
            })
            .collect();
        shown.extend(self.endpoint.redacted_headers());
        let body = String::from_utf8_lossy(body);
        if shown.is_empty() {
            format!("POST {body}")
        } else {
            format!("POST [{}] {body}", shown.join("; "))
        }
    }

    async fn post(&mut self, body: Vec<u8>, message: Option<Value>) {
        let (headers, left_out) = self.headers(message.as_ref());
        if let Some(e) = left_out {
            self.log
                .record(Direction::Event, format!("left out of the POST: {e}"));
        }
        self.log
            .record(Direction::Send, self.describe(&headers, &body));
        let request_id = message
            .as_ref()
            .filter(|m| m.get("method").is_some())
            .and_then(|m| m.get("id"))
            .filter(|id| !id.is_null())
            .cloned();
        let is_request = request_id.is_some();
        if message.as_ref().and_then(|m| m.get("method")) == Some(&Value::from("initialize")) {
            if let Some(id) = message.as_ref().and_then(|m| m.get("id")) {
                self.learned.lock().initialize_ids.push(id.clone());
            }
        }
        let request = self
            .client
            .post(&self.endpoint.url)
            .headers(headers)
            .body(Bytes::from(body));
        let delivery = Delivery {
            tx: self.tx.clone(),
            log: self.log.clone(),
            learned: Arc::clone(&self.learned),
            limit: self.limit,
            request_id,
        };
        let work = async move {
            match request.send().await {
                Ok(resp) => deliver(resp, &delivery).await,
                Err(e) => {
                    delivery
                        .not_a_message(format!("the POST failed: {e}"))
                        .await
                }
            }
        };
        if is_request {
            self.tasks.retain(|t| !t.is_finished());
            self.tasks.push(tokio::spawn(work));
        } else if tokio::time::timeout(self.wait, work).await.is_err() {
            self.log.record(
                Direction::Event,
                format!("no complete reply to the POST within {:?}", self.wait),
            );
        }
    }

    /// Waits, at most `limit`, until every request POST sent so far has its response: each
    /// POST is a request of its own, and no order holds across them, so a reply can still be
    /// on its way after a later one came.
    pub async fn settle(&mut self, limit: Duration) {
        let pending = futures::future::join_all(self.tasks.iter_mut());
        let _ = tokio::time::timeout(limit, pending).await;
        self.tasks.retain(|t| !t.is_finished());
    }

    /// The next frame, or `None` if nothing came within `limit`.
    pub async fn recv(&mut self, limit: Duration) -> Option<RawEvent> {
        tokio::time::timeout(limit, self.events.recv())
            .await
            .ok()
            .flatten()
    }

    /// How many frames [`HttpConn::recv`] can return without waiting.
    pub fn buffered(&self) -> usize {
        self.events.len()
    }

    pub fn transcript_mark(&self) -> usize {
        self.log.mark()
    }

    pub fn transcript_since(&self, mark: usize) -> Vec<TranscriptEntry> {
        self.log.since(mark)
    }
}
