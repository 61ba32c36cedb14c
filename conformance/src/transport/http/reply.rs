//! Reading one HTTP response of a Streamable HTTP server: a JSON body, or a
//! `text/event-stream` whose events each carry one JSON-RPC message. Bounded: a body or an
//! event over the limit is cut, and every read has a deadline.

use std::time::Duration;

use futures::StreamExt;
use mcp_protocol::http::{SseEvent, SseReader, EVENT_STREAM, JSON};
use reqwest::header::{HeaderMap, CONTENT_TYPE};
use serde_json::Value;

/// The media type of a response, lowercased, without parameters (`application/json`).
pub fn media_type(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(CONTENT_TYPE)?.to_str().ok()?;
    Some(value.split(';').next()?.trim().to_ascii_lowercase())
}

/// What a response's body holds, as far as it was read.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    /// No bytes.
    Empty,
    /// An `application/json` body (or any other type): its bytes, up to the limit.
    Bytes(Vec<u8>),
    /// A `text/event-stream`: the events read.
    Events(Vec<SseEvent>),
}

/// One response, read within a deadline.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub status: u16,
    pub headers: HeaderMap,
    /// [`media_type`] of the response.
    pub media: Option<String>,
    pub body: Body,
    /// The body ended (an SSE stream closed) before the deadline.
    pub ended: bool,
    /// Bytes of body read.
    pub len: usize,
    /// What could not be read: an SSE error, an event cut at the end, a read error.
    pub problem: Option<String>,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    pub fn is_sse(&self) -> bool {
        self.media.as_deref() == Some(EVENT_STREAM)
    }

    pub fn is_json(&self) -> bool {
        self.media.as_deref() == Some(JSON)
    }

    /// The JSON-RPC messages the body carries: the JSON body, or each event's data that parses
    /// as JSON (events with empty data, such as a priming event, carry none).
    pub fn messages(&self) -> Vec<Value> {
        match &self.body {
            Body::Empty => Vec::new(),
            Body::Bytes(b) => serde_json::from_slice(b).into_iter().collect(),
            Body::Events(events) => events
                .iter()
                .filter(|e| !e.data.is_empty())
                .filter_map(|e| serde_json::from_str(&e.data).ok())
                .collect(),
        }
    }

    /// The body as text, for a report (cut at 300 bytes).
    pub fn text(&self) -> String {
        match &self.body {
            Body::Empty => String::new(),
            Body::Bytes(b) => String::from_utf8_lossy(&b[..b.len().min(300)]).into_owned(),
            Body::Events(events) => events
                .iter()
                .map(|e| format!("data: {}", cut(&e.data, 200)))
                .collect::<Vec<_>>()
                .join(" | "),
        }
    }

    /// `HTTP 202`, `HTTP 200 application/json`, for a report.
    pub fn status_line(&self) -> String {
        match &self.media {
            Some(m) => format!("HTTP {} {m}", self.status),
            None => format!("HTTP {}", self.status),
        }
    }
}

pub fn cut(s: &str, n: usize) -> String {
    if s.len() <= n {
        return s.to_owned();
    }
    let mut end = n;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// Does `v` answer the request `id`?
pub fn answers(v: &Value, id: &Value) -> bool {
    v.get("method").is_none() && v.get("id") == Some(id)
}

/// The status and headers of `resp`, its body left unread (a GET's stream).
pub fn head(resp: reqwest::Response) -> Reply {
    let headers = resp.headers().clone();
    Reply {
        status: resp.status().as_u16(),
        media: media_type(&headers),
        headers,
        body: Body::Empty,
        ended: false,
        len: 0,
        problem: None,
    }
}

/// Reads `resp` until it ends, `deadline` passes, or (an event stream) `linger` after the
/// event that answers `id`: how long a stream that should end after its response is given.
pub async fn read(
    resp: reqwest::Response,
    limit: usize,
    deadline: tokio::time::Instant,
    id: Option<&Value>,
    linger: Duration,
) -> Reply {
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let media = media_type(&headers);
    let sse = media.as_deref() == Some(EVENT_STREAM);
    let mut reply = Reply {
        status,
        headers,
        media,
        body: Body::Empty,
        ended: false,
        len: 0,
        problem: None,
    };
    let mut stream = resp.bytes_stream();
    let mut bytes = Vec::new();
    let mut reader = SseReader::new(limit);
    let mut events: Vec<SseEvent> = Vec::new();
    let mut deadline = deadline;
    loop {
        let next = tokio::time::timeout_at(deadline, stream.next()).await;
        let chunk = match next {
            Err(_) => break,
            Ok(None) => {
                reply.ended = true;
                if sse && reader.in_event() {
                    reply.problem =
                        Some("the stream ended inside an event (no blank line after it)".into());
                }
                break;
            }
            Ok(Some(Err(e))) => {
                reply.problem = Some(format!("reading the body failed: {e}"));
                break;
            }
            Ok(Some(Ok(chunk))) => chunk,
        };
        reply.len += chunk.len();
        if sse {
            let before = events.len();
            if let Err(e) = reader.feed(&chunk, &mut events) {
                reply.problem = Some(e.to_string());
                break;
            }
            let answered = id.is_some_and(|id| {
                events[before..]
                    .iter()
                    .any(|e| serde_json::from_str::<Value>(&e.data).is_ok_and(|v| answers(&v, id)))
            });
            if answered {
                deadline = deadline.min(tokio::time::Instant::now() + linger);
            }
        } else {
            let room = limit.saturating_sub(bytes.len());
            bytes.extend_from_slice(&chunk[..chunk.len().min(room)]);
            if chunk.len() > room {
                reply.problem = Some(format!("the body exceeds {limit} bytes"));
                break;
            }
        }
    }
    reply.body = if sse {
        Body::Events(events)
    } else if bytes.is_empty() {
        Body::Empty
    } else {
        Body::Bytes(bytes)
    };
    reply
}
