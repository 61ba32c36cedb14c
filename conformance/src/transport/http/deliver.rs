//! One POST's response turned into frames, as they arrive: a JSON body is one frame, each SSE
//! event with data is one. A request's POST whose response ends without a JSON-RPC response in
//! it (an HTTP error whose body is no JSON-RPC message, a JSON array where one response was
//! due, an SSE stream without it) is handed on as [`RawEvent::Unanswered`], saying what came:
//! never turned into a reply the server did not send. Anything else that is no message is
//! handed on as bytes that are not a message, as garbage on stdout would be.

use std::sync::Arc;

use bytes::Bytes;
use futures::StreamExt;
use mcp_protocol::http::{SseReader, EVENT_STREAM, SESSION_ID};
use mcp_protocol::FrameError;
use parking_lot::Mutex;
use reqwest::header::HeaderValue;
use serde_json::Value;
use tokio::sync::mpsc;

use super::log::Log;
use super::reply::{cut, media_type};
use crate::transcript::Direction;
use crate::transport::{NoResponse, RawEvent, Unanswered};

/// How much of a body a report quotes.
const SNIPPET: usize = 200;

/// What one message of a reply carried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Carried {
    /// A JSON-RPC response.
    Response,
    /// Anything else handed on (a request, a notification, bytes that are no message).
    Other,
    /// No response, and the wait for the request was told so ([`RawEvent::Unanswered`]).
    Unanswered,
}

/// What the replies taught the connection.
#[derive(Debug, Default)]
pub(super) struct Learned {
    /// `Mcp-Session-Id` from the reply to `initialize`, as its bytes: sent back as they came,
    /// even where they are not visible ASCII (`http.session-id-visible-ascii` judges that).
    pub session: Option<HeaderValue>,
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

    /// The POST's request got a response without its JSON-RPC response: said so, for the
    /// wait on its id. Without a request, the bytes are only not a message.
    async fn unanswered(&self, why: NoResponse, seen: String) {
        let Some(id) = &self.request_id else {
            return self.not_a_message(seen).await;
        };
        self.log.record(Direction::Receive, format!("<{seen}>"));
        self.log.record(
            Direction::Event,
            format!("no JSON-RPC response to id {id} in the reply to its POST"),
        );
        let event = Unanswered {
            id: id.clone(),
            why,
            seen,
        };
        let _ = self.tx.send(RawEvent::Unanswered(event)).await;
    }

    /// One message's bytes: a frame if it is a JSON object (or, for a POST that carried no
    /// single request, an array); what it carried. `status` is the HTTP status of a body (not
    /// of an SSE event).
    async fn message(&self, bytes: &[u8], what: &str, status: Option<u16>) -> Carried {
        let parsed = serde_json::from_slice::<Value>(bytes);
        match parsed {
            Ok(v) if v.is_array() && self.request_id.is_some() => {
                let n = v.as_array().map_or(0, Vec::len);
                let text = String::from_utf8_lossy(bytes);
                let seen = format!(
                    "{what} is a JSON array of {n} (a batch) where one response object was due: {}",
                    cut(&text, SNIPPET)
                );
                self.unanswered(NoResponse::Array, seen).await;
                Carried::Unanswered
            }
            Ok(v) if v.is_object() || v.is_array() => {
                self.log.record(
                    Direction::Receive,
                    String::from_utf8_lossy(bytes).into_owned(),
                );
                self.learn(&v);
                let carried = if crate::transport::is_response(&v) {
                    Carried::Response
                } else {
                    Carried::Other
                };
                let frame = self.with_post_id(v, bytes, status);
                let _ = self.tx.send(RawEvent::Frame(frame)).await;
                carried
            }
            _ => {
                let text = String::from_utf8_lossy(bytes);
                let seen = format!(
                    "{what} is not one JSON-RPC message: {}",
                    cut(&text, SNIPPET)
                );
                match status {
                    Some(s) if s >= 400 => self.unanswered(NoResponse::HttpError, seen).await,
                    Some(_) => self.unanswered(NoResponse::NotAMessage, seen).await,
                    None => {
                        self.not_a_message(seen).await;
                        return Carried::Other;
                    }
                }
                Carried::Unanswered
            }
        }
    }

    /// The frame of `v`: an HTTP error's JSON-RPC error without an id answers the request of
    /// its POST (the transport lets that body leave the id out), so it gets that id.
    fn with_post_id(&self, mut v: Value, bytes: &[u8], status: Option<u16>) -> Bytes {
        let idless = v.get("error").is_some() && v.get("id").is_none_or(Value::is_null);
        match (&self.request_id, status) {
            (Some(id), Some(status)) if status >= 400 && idless => {
                self.log.record(
                    Direction::Event,
                    format!(
                        "an HTTP {status} error without an id answers the request of its POST: \
                         taken as the reply to id {id}"
                    ),
                );
                v["id"] = id.clone();
                Bytes::from(serde_json::to_vec(&v).unwrap_or_default())
            }
            _ => Bytes::copy_from_slice(bytes),
        }
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
    let session = resp.headers().get(SESSION_ID).cloned();
    if let Some(session) = &session {
        d.learned
            .lock()
            .session
            .get_or_insert_with(|| session.clone());
    }
    let mut line = format!("HTTP {status}");
    if let Some(m) = &media {
        line.push_str(&format!(" {m}"));
    }
    if let Some(s) = &session {
        let shown = String::from_utf8_lossy(s.as_bytes());
        line.push_str(&format!(" [{SESSION_ID}: {shown}]"));
    }
    d.log.record(Direction::Event, line.clone());
    if media.as_deref() == Some(EVENT_STREAM) {
        sse(resp, d, &line).await;
    } else {
        body(resp, d, &line, status).await;
    }
}

/// An SSE stream: each event's data is a message; a request's stream that ends without a
/// response is said to.
async fn sse(resp: reqwest::Response, d: &Delivery, line: &str) {
    let mut stream = resp.bytes_stream();
    let mut reader = SseReader::new(d.limit);
    let mut events = Vec::new();
    let mut seen = SseSeen::default();
    while let Some(chunk) = stream.next().await {
        let fed = match chunk {
            Ok(c) => {
                let room = SNIPPET.saturating_sub(seen.head.len());
                seen.head.extend_from_slice(&c[..c.len().min(room)]);
                reader.feed(&c, &mut events).map_err(|e| e.to_string())
            }
            Err(e) => Err(format!("reading it failed: {e}")),
        };
        for event in events.drain(..) {
            seen.events += 1;
            if event.data.is_empty() {
                seen.without_data += usize::from(event.id.is_none());
                continue;
            }
            let what = "an SSE event's data";
            match d.message(event.data.as_bytes(), what, None).await {
                Carried::Response => seen.responses += 1,
                Carried::Unanswered => seen.told = true,
                Carried::Other => {}
            }
        }
        if let Err(e) = fed {
            seen.problem = Some(e);
            break;
        }
    }
    if seen.problem.is_none() && reader.in_event() {
        seen.problem = Some("it ended inside an event".to_owned());
    }
    d.log.record(Direction::Event, "SSE stream closed");
    if seen.responses > 0 || seen.told {
        return;
    }
    match (&d.request_id, &seen.problem) {
        (Some(_), _) => {
            d.unanswered(NoResponse::SseStream, seen.describe(line))
                .await
        }
        (None, Some(p)) => d.not_a_message(format!("{line}: {p}")).await,
        (None, None) => {}
    }
}

/// What one SSE stream held.
#[derive(Debug, Default)]
struct SseSeen {
    events: usize,
    /// Events with no data and no id (a priming event has an id).
    without_data: usize,
    /// Events whose data is a JSON-RPC response.
    responses: usize,
    /// The wait for the request was already told there is no response (an array).
    told: bool,
    /// Why reading it stopped early, if it did.
    problem: Option<String>,
    /// Its first bytes, for the report.
    head: Vec<u8>,
}

impl SseSeen {
    fn describe(&self, line: &str) -> String {
        let mut text = format!(
            "{line}: the SSE stream ended after {} event(s) with no JSON-RPC response",
            self.events
        );
        if self.without_data > 0 {
            text.push_str(&format!(
                "; {} event(s) without data (a line without `data:` is not part of the data)",
                self.without_data
            ));
        }
        if let Some(p) = &self.problem {
            text.push_str(&format!("; {p}"));
        }
        if !self.head.is_empty() {
            let head = String::from_utf8_lossy(&self.head);
            text.push_str(&format!("; it began: {head:?}"));
        }
        text
    }
}

/// A body that is not an SSE stream: one message, or what it is instead.
async fn body(resp: reqwest::Response, d: &Delivery, line: &str, status: u16) {
    let mut stream = resp.bytes_stream();
    let mut body = Vec::new();
    while let Some(chunk) = stream.next().await {
        match chunk {
            Ok(c) if body.len() + c.len() <= d.limit => body.extend_from_slice(&c),
            Ok(_) => {
                let seen = format!("{line}: the body exceeds {} bytes", d.limit);
                return d.unanswered(NoResponse::NotAMessage, seen).await;
            }
            Err(e) => {
                let seen = format!("{line}: reading the body failed: {e}");
                return d.unanswered(NoResponse::NotAMessage, seen).await;
            }
        }
    }
    if body.is_empty() {
        let seen = format!("{line} with no body");
        match status {
            400.. => d.unanswered(NoResponse::HttpError, seen).await,
            _ if d.request_id.is_some() => d.unanswered(NoResponse::NotAMessage, seen).await,
            _ => {}
        }
        return;
    }
    d.message(&body, &format!("the body of {line}"), Some(status))
        .await;
}
