//! One POST's response turned into frames, as they arrive: a JSON body is one frame, each SSE
//! event with data is one; what is neither (an HTTP error without a JSON body, event data that
//! is not one JSON message) is handed on as bytes that are not a message, as garbage on stdout
//! would be.

use std::sync::Arc;

use bytes::Bytes;
use futures::StreamExt;
use mcp_protocol::http::{SseReader, EVENT_STREAM, SESSION_ID};
use mcp_protocol::FrameError;
use parking_lot::Mutex;
use serde_json::Value;
use tokio::sync::mpsc;

use super::log::Log;
use super::reply::{cut, media_type};
use crate::transcript::Direction;
use crate::transport::RawEvent;

/// What the replies taught the connection.
#[derive(Debug, Default)]
pub(super) struct Learned {
    /// `Mcp-Session-Id` from the reply to `initialize`.
    pub session: Option<String>,
    /// The version `initialize` negotiated.
    pub version: Option<String>,
    /// Ids of `initialize` requests sent.
    pub initialize_ids: Vec<Value>,
}

/// Where one POST's replies go.
#[derive(Debug, Clone)]
pub(super) struct Delivery {
    pub tx: mpsc::Sender<RawEvent>,
    pub log: Log,
    pub learned: Arc<Mutex<Learned>>,
    pub limit: usize,
    /// The id of the request the POST carried: an answer without a message is worth saying,
    /// and an HTTP error whose JSON-RPC error has no id (as the transport allows) answers it.
    pub request_id: Option<Value>,
}

impl Delivery {
    pub async fn not_a_message(&self, text: String) {
        self.log.record(Direction::Receive, format!("<{text}>"));
        let _ = self
            .tx
            .send(RawEvent::Invalid(FrameError::NotAMessage(text)))
            .await;
    }

    /// One message's bytes: a frame if it is a JSON object or array. `status` is the HTTP
    /// status of a body (not of an SSE event).
    async fn message(&self, bytes: &[u8], what: &str, status: Option<u16>) {
        let parsed = serde_json::from_slice::<Value>(bytes);
        match parsed {
            Ok(mut v) if v.is_object() || v.is_array() => {
                self.log.record(
                    Direction::Receive,
                    String::from_utf8_lossy(bytes).into_owned(),
                );
                self.learn(&v);
                let idless = v.get("error").is_some() && v.get("id").is_none_or(Value::is_null);
                let frame = match (&self.request_id, status) {
                    (Some(id), Some(status)) if status >= 400 && idless => {
                        self.log.record(
                            Direction::Event,
                            format!(
                                "an HTTP {status} error without an id answers the request of its \
                                 POST: taken as the reply to id {id}"
                            ),
                        );
                        v["id"] = id.clone();
                        Bytes::from(serde_json::to_vec(&v).unwrap_or_default())
                    }
                    _ => Bytes::copy_from_slice(bytes),
                };
                let _ = self.tx.send(RawEvent::Frame(frame)).await;
            }
            _ => {
                let text = String::from_utf8_lossy(bytes);
                let text = format!("{what} is not one JSON-RPC message: {}", cut(&text, 200));
                match status {
                    Some(status) if status >= 400 => self.http_error(status, text).await,
                    _ => self.not_a_message(text).await,
                }
            }
        }
    }

    /// An HTTP error whose body holds no JSON-RPC message. For a request it is still the
    /// server's answer (the transport lets an error body be anything): it becomes an error
    /// reply to the POST's id whose code, 0, no JSON-RPC error has, so a check that needs a
    /// particular code says what came instead of waiting out its deadline.
    async fn http_error(&self, status: u16, text: String) {
        let Some(id) = &self.request_id else {
            return self.not_a_message(text).await;
        };
        self.log.record(Direction::Receive, format!("<{text}>"));
        self.log.record(
            Direction::Event,
            format!("taken as an error reply to id {id} (code 0: the HTTP {status} body has no JSON-RPC error)"),
        );
        let reply = serde_json::json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {"code": 0, "message": format!("HTTP {status}; {text}")},
        });
        let frame = Bytes::from(serde_json::to_vec(&reply).unwrap_or_default());
        let _ = self.tx.send(RawEvent::Frame(frame)).await;
    }

    /// The version an `initialize` reply negotiated.
    fn learn(&self, v: &Value) {
        let version = v.pointer("/result/protocolVersion").and_then(Value::as_str);
        let mut learned = self.learned.lock();
        if let (Some(version), Some(id)) = (version, v.get("id")) {
            if learned.initialize_ids.contains(id) {
                learned.version = Some(version.to_owned());
            }
        }
    }
}

/// Reads `resp` to its end, handing on each message as it comes.
pub(super) async fn deliver(resp: reqwest::Response, d: &Delivery) {
    let status = resp.status().as_u16();
    let media = media_type(resp.headers());
    let session = resp
        .headers()
        .get(SESSION_ID)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    if let Some(session) = &session {
        let mut learned = d.learned.lock();
        learned.session.get_or_insert_with(|| session.clone());
    }
    let mut line = format!("HTTP {status}");
    if let Some(m) = &media {
        line.push_str(&format!(" {m}"));
    }
    if let Some(s) = &session {
        line.push_str(&format!(" [{SESSION_ID}: {s}]"));
    }
    d.log.record(Direction::Event, line.clone());
    let mut stream = resp.bytes_stream();
    if media.as_deref() == Some(EVENT_STREAM) {
        let mut reader = SseReader::new(d.limit);
        let mut events = Vec::new();
        while let Some(chunk) = stream.next().await {
            let chunk = match chunk {
                Ok(c) => c,
                Err(e) => {
                    d.not_a_message(format!("reading the SSE stream failed: {e}"))
                        .await;
                    return;
                }
            };
            if let Err(e) = reader.feed(&chunk, &mut events) {
                d.not_a_message(format!("the SSE stream is unreadable: {e}"))
                    .await;
                return;
            }
            for event in events.drain(..) {
                if !event.data.is_empty() {
                    d.message(event.data.as_bytes(), "an SSE event's data", None)
                        .await;
                }
            }
        }
        if reader.in_event() {
            d.not_a_message("the SSE stream ended inside an event".to_owned())
                .await;
        }
        d.log.record(Direction::Event, "SSE stream closed");
        return;
    }
    let mut body = Vec::new();
    while let Some(chunk) = stream.next().await {
        match chunk {
            Ok(c) if body.len() + c.len() <= d.limit => body.extend_from_slice(&c),
            Ok(_) => {
                d.not_a_message(format!("{line}: the body exceeds {} bytes", d.limit))
                    .await;
                return;
            }
            Err(e) => {
                d.not_a_message(format!("{line}: reading the body failed: {e}"))
                    .await;
                return;
            }
        }
    }
    if body.is_empty() {
        if status >= 400 {
            d.http_error(status, format!("{line} with no body")).await;
        } else if d.request_id.is_some() {
            d.not_a_message(format!("{line} with no body, for a request"))
                .await;
        }
        return;
    }
    d.message(&body, &format!("the body of {line}"), Some(status))
        .await;
}
