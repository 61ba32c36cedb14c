//! An SSE stream from the server read event by event, and what resuming it takes
//! (`transports.mdx`, "Resumability and Redelivery"): the last event id seen and the last
//! `retry` the server set ([`Cursor`]), and the `GET` that opens a stream, resumed with
//! `Last-Event-ID` when there is one ([`open`]). Both a POST's reply stream that ended before
//! its response and the GET stream come back this way.

use std::collections::VecDeque;
use std::time::Duration;

use mcp_protocol::http::{self as names, SseEvent, SseReader};
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use reqwest::StatusCode;

use super::session::{error_chain, Conn};
use crate::client::shared::Shared;

/// Where a stream was, for resuming it: the SSE standard's "last event ID" and "reconnection
/// time", which every event may set, data or not.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct Cursor {
    pub(super) last_event_id: Option<String>,
    /// The server's `retry`: how long to wait before reconnecting ("The client MUST respect
    /// the `retry` field").
    pub(super) retry: Option<Duration>,
}

impl Cursor {
    fn observe(&mut self, event: &SseEvent) {
        if let Some(id) = &event.id {
            self.last_event_id = Some(id.clone());
        }
        if let Some(ms) = event.retry {
            self.retry = Some(Duration::from_millis(ms));
        }
    }

    /// How long to wait before reconnecting: the server's `retry`, else `default`.
    pub(super) fn delay(&self, default: Duration) -> Duration {
        self.retry.unwrap_or(default)
    }
}

/// A `text/event-stream` body, read event by event.
pub(super) struct EventStream {
    response: reqwest::Response,
    reader: SseReader,
    ready: VecDeque<SseEvent>,
}

impl EventStream {
    /// Reads `response`, refusing an event over `limit` bytes.
    pub(super) fn new(response: reqwest::Response, limit: usize) -> Self {
        EventStream {
            response,
            reader: SseReader::new(limit),
            ready: VecDeque::new(),
        }
    }

    /// The data of the next event that carries a JSON-RPC message, after updating `cursor`
    /// with every event up to it; `Ok(None)` when the stream ended.
    pub(super) async fn next(
        &mut self,
        cursor: &mut Cursor,
    ) -> Result<Option<String>, StreamError> {
        loop {
            while let Some(event) = self.ready.pop_front() {
                cursor.observe(&event);
                if carries_message(&event) {
                    return Ok(Some(event.data));
                }
            }
            let chunk = self.response.chunk().await;
            let Some(chunk) = chunk.map_err(|e| StreamError::Broken(error_chain(&e)))? else {
                return Ok(None);
            };
            let mut events = Vec::new();
            self.reader
                .feed(&chunk, &mut events)
                .map_err(|e| StreamError::Unreadable(e.to_string()))?;
            self.ready.extend(events);
        }
    }
}

/// Why reading a stream stopped before its end.
#[derive(Debug, thiserror::Error)]
pub(super) enum StreamError {
    /// The connection broke (or was idle past the read timeout): the stream may be resumed.
    #[error("{0}")]
    Broken(String),
    /// An event over the size limit, or not UTF-8: resuming would meet it again.
    #[error("{0}")]
    Unreadable(String),
}

/// Is this SSE event a JSON-RPC message? Events of the default type (`message`) with data;
/// an event with empty data primes a stream for resumption and carries none.
pub(super) fn carries_message(event: &SseEvent) -> bool {
    event.event.as_deref().is_none_or(|e| e == "message") && !event.data.is_empty()
}

/// How a `GET` for a stream went.
pub(super) enum Opened {
    Stream(Box<EventStream>),
    /// 405, or a success that is not an event stream: the server offers no stream here.
    NotOffered(StatusCode),
    /// 404 to a GET that carried this session: the server ended it.
    SessionGone(String),
    /// Another error status.
    Refused(StatusCode),
    /// No answer (connection refused, timed out).
    Failed(String),
}

/// `GET` on the endpoint for an SSE stream, in the session, resumed after `last_event_id`
/// when given (`transports.mdx`: "Resumption is always via HTTP GET with `Last-Event-ID`").
pub(super) async fn open(conn: &Conn, shared: &Shared, last_event_id: Option<&str>) -> Opened {
    let cx = conn.context(shared);
    let mut get = conn
        .client
        .get(conn.url.clone())
        .header(ACCEPT, names::EVENT_STREAM)
        .headers(cx.session_headers());
    if let Some(id) = last_event_id {
        get = get.header(names::LAST_EVENT_ID, id);
    }
    let response = match get.send().await {
        Ok(r) => r,
        Err(e) => return Opened::Failed(error_chain(&e)),
    };
    let status = response.status();
    let is_stream = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.trim_start()
                .to_ascii_lowercase()
                .starts_with(names::EVENT_STREAM)
        });
    match (status, cx.session) {
        (StatusCode::NOT_FOUND, Some(session)) => Opened::SessionGone(session),
        (StatusCode::METHOD_NOT_ALLOWED, _) => Opened::NotOffered(status),
        (s, _) if s.is_success() && !is_stream => Opened::NotOffered(status),
        (s, _) if s.is_success() => Opened::Stream(Box::new(EventStream::new(
            response,
            shared.options.max_message_bytes,
        ))),
        _ => Opened::Refused(status),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(id: Option<&str>, retry: Option<u64>, data: &str) -> SseEvent {
        SseEvent {
            event: None,
            data: data.to_owned(),
            id: id.map(str::to_owned),
            retry,
        }
    }

    #[test]
    fn the_cursor_keeps_the_last_id_and_retry_any_event_set() {
        let mut cursor = Cursor::default();
        assert_eq!(cursor.delay(Duration::from_secs(1)), Duration::from_secs(1));
        cursor.observe(&event(Some("e-1"), Some(500), ""));
        cursor.observe(&event(None, None, "{}"));
        assert_eq!(cursor.last_event_id.as_deref(), Some("e-1"));
        assert_eq!(
            cursor.delay(Duration::from_secs(1)),
            Duration::from_millis(500)
        );
        cursor.observe(&event(Some("e-2"), None, "{}"));
        assert_eq!(
            cursor,
            Cursor {
                last_event_id: Some("e-2".into()),
                retry: Some(Duration::from_millis(500)),
            }
        );
    }

    #[test]
    fn priming_events_carry_no_message() {
        assert!(!carries_message(&event(Some("e-1"), Some(500), "")));
        assert!(carries_message(&event(None, None, "{}")));
        let mut other = event(None, None, "{}");
        other.event = Some("ping".into());
        assert!(!carries_message(&other));
    }
}
