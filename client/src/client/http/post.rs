//! One POST: a message goes out with its headers, and every JSON-RPC message of the reply (an
//! `application/json` body, or each event of a `text/event-stream` body) goes into the same
//! inbound path the stdio reader feeds. An event stream that ends before the response is
//! resumed (`sse.rs`). What fails this one request (an HTTP error status, a body too large, a
//! reply that never came) is returned for the caller waiting on it.

use std::time::Duration;

use mcp_protocol::http as names;
use mcp_protocol::mcp::methods;
use mcp_protocol::{ErrorObject, Incoming, Message, RequestId, Response};
use reqwest::header::CONTENT_TYPE;
use reqwest::StatusCode;

use super::session::{error_chain, Conn};
use super::sse::{self, Cursor, EventStream, Opened, StreamError};
use crate::client::shared::Shared;
use crate::error::ClientError;
use crate::options::FrameDirection;

/// How much of an error body is kept in [`ClientError::Http`].
const BODY_SNIPPET: usize = 512;
/// The pause before resuming a reply stream, when the server set no `retry`.
const RESUME_AFTER: Duration = Duration::from_secs(1);
/// Resuming yields no new event (or fails to connect) this many times in a row: give up.
const MAX_IDLE_RESUMES: u32 = 3;

/// Posts `message` and delivers the reply's messages. `Ok` when the message was accepted and,
/// for a request, its response was delivered.
pub(super) async fn exchange(
    conn: &Conn,
    shared: &Shared,
    message: Message,
) -> Result<(), ClientError> {
    let (label, request_id) = match &message {
        Message::Request(r) => (r.method.clone(), Some(r.id.clone())),
        Message::Notification(n) => (n.method.clone(), None),
        Message::Response(_) => ("a reply".to_owned(), None),
    };
    let transport = |reason: String| ClientError::Transport {
        method: label.clone(),
        reason,
    };
    let is_initialize = matches!(&message, Message::Request(r) if r.method == methods::INITIALIZE);
    let headers = conn.headers_for(&message, shared);
    let session_sent = headers.get(names::SESSION_ID).map(str::to_owned);
    let headers = headers.to_map().map_err(|e| transport(e.to_string()))?;
    let body = serde_json::to_vec(&message).map_err(|e| transport(e.to_string()))?;
    let post = conn
        .client
        .post(conn.url.clone())
        .headers(headers)
        .body(body);
    let mut response = post.send().await.map_err(|e| transport(error_chain(&e)))?;
    let status = response.status();
    if is_initialize && status.is_success() {
        if let Some(session) = response.headers().get(names::SESSION_ID) {
            conn.set_session(session.as_bytes());
        }
    }
    let limit = shared.options.max_message_bytes;
    if !status.is_success() {
        if let (StatusCode::NOT_FOUND, Some(session_id)) = (status, session_sent) {
            conn.expire(&session_id, shared);
            return Err(ClientError::SessionExpired {
                method: label,
                session_id,
            });
        }
        let body = read_body(&mut response, limit.min(64 * 1024))
            .await
            .unwrap_or_default();
        let error = error_in(&body);
        if let Some(error) = &error {
            let message: Message = Message::Response(Response::error(None, error.clone()));
            shared.hook(FrameDirection::Receive, &message);
        }
        return Err(ClientError::Http {
            method: label.clone(),
            status: status.as_u16(),
            error,
            body: snippet(&body),
        });
    }
    // A notification or a reply: accepted (202, no body) is all there is to it.
    let Some(id) = request_id else { return Ok(()) };
    let media_type = media_type(&response);
    let mut reply = Reply::new(id);
    match media_type.as_str() {
        names::JSON => {
            let body = read_body(&mut response, limit).await.map_err(transport)?;
            reply.deliver(shared, &body).await;
        }
        names::EVENT_STREAM => read_stream(conn, shared, response, &mut reply, &label).await?,
        other => {
            return Err(transport(format!(
                "HTTP {status} with Content-Type {other:?}, neither {} nor {}",
                names::JSON,
                names::EVENT_STREAM
            )))
        }
    }
    reply.finish(label)
}

/// What the reply to one request held so far.
struct Reply {
    id: RequestId,
    /// The response with this request's id was delivered.
    answered: bool,
    /// A JSON-RPC error without an id came back on this POST: it belongs to this request.
    unaddressed: Option<ErrorObject>,
}

impl Reply {
    fn new(id: RequestId) -> Self {
        Reply {
            id,
            answered: false,
            unaddressed: None,
        }
    }

    /// Hands each message of one JSON text to the inbound path.
    async fn deliver(&mut self, shared: &Shared, bytes: &[u8]) {
        let messages = messages_in(bytes);
        for message in messages {
            if let Message::Response(Response { id, outcome }) = &message {
                match (id, outcome) {
                    (Some(id), _) if *id == self.id => self.answered = true,
                    (None, Err(error)) => self.unaddressed = Some(error.clone()),
                    _ => {}
                }
            }
            shared.on_message(message).await;
        }
    }

    /// Delivers the stream's messages until this request's response came or the stream ended
    /// (`Ok`).
    async fn read(
        &mut self,
        shared: &Shared,
        stream: &mut EventStream,
        cursor: &mut Cursor,
    ) -> Result<(), StreamError> {
        while !self.answered {
            match stream.next(cursor).await? {
                Some(data) => self.deliver(shared, data.as_bytes()).await,
                None => break,
            }
        }
        Ok(())
    }

    fn finish(self, method: String) -> Result<(), ClientError> {
        match (self.answered, self.unaddressed) {
            (true, _) => Ok(()),
            (false, Some(error)) => Err(ClientError::Server { method, error }),
            (false, None) => Err(ClientError::Transport {
                method,
                reason: format!("the HTTP reply ended without a response to id {}", self.id),
            }),
        }
    }
}

/// Reads a reply's event stream until the response to its request; one that ends (or breaks)
/// before it is resumed when it can be, within the request timeout. Once the response is in,
/// the rest of the stream is not waited for: dropping it closes it.
async fn read_stream(
    conn: &Conn,
    shared: &Shared,
    response: reqwest::Response,
    reply: &mut Reply,
    label: &str,
) -> Result<(), ClientError> {
    let transport = |reason: String| ClientError::Transport {
        method: label.to_owned(),
        reason,
    };
    let mut cursor = Cursor::default();
    let mut stream = EventStream::new(response, shared.options.max_message_bytes);
    let ended = reply.read(shared, &mut stream, &mut cursor).await;
    drop(stream);
    if reply.answered {
        return Ok(());
    }
    // 2026-07-28: "Resumable SSE streams via `Last-Event-ID` are not supported."
    let resumable = cursor.last_event_id.is_some() && conn.context(shared).modern_version.is_none();
    match ended {
        Err(StreamError::Unreadable(reason)) => return Err(transport(reason)),
        Err(StreamError::Broken(reason)) if !resumable => return Err(transport(reason)),
        _ if !resumable => return Ok(()), // `finish` tells the caller it ended
        _ => {}
    }
    let within = shared.options.request_timeout;
    match tokio::time::timeout(within, resume(conn, shared, reply, cursor, label)).await {
        Ok(outcome) => outcome,
        Err(_) => Err(transport(format!(
            "the SSE reply stream was resumed but no response came within {within:?}"
        ))),
    }
}

/// The reply stream of a request ended before its response: resume it as `transports.mdx`
/// says ("Resumability and Redelivery"): wait the server's `retry` ("The client MUST respect
/// the `retry` field"), then `GET` with `Last-Event-ID`, and read on until the response comes.
/// Gives up after [`MAX_IDLE_RESUMES`] attempts in a row that bring no new event.
async fn resume(
    conn: &Conn,
    shared: &Shared,
    reply: &mut Reply,
    mut cursor: Cursor,
    label: &str,
) -> Result<(), ClientError> {
    let transport = |reason: String| ClientError::Transport {
        method: label.to_owned(),
        reason,
    };
    let mut idle = 0;
    while !reply.answered {
        let Some(last) = cursor.last_event_id.clone() else {
            break;
        };
        let delay = cursor.delay(RESUME_AFTER);
        if delay > shared.options.request_timeout {
            return Err(transport(format!(
                "the SSE reply stream ended before the response, and the server asks to wait \
                 {delay:?} before resuming it, longer than the request timeout"
            )));
        }
        tokio::time::sleep(delay).await;
        let before = cursor.clone();
        match sse::open(conn, shared, Some(&last)).await {
            Opened::Stream(mut stream) => {
                if let Err(StreamError::Unreadable(reason)) =
                    reply.read(shared, &mut stream, &mut cursor).await
                {
                    return Err(transport(reason));
                }
            }
            Opened::SessionGone(session_id) => {
                conn.expire(&session_id, shared);
                return Err(ClientError::SessionExpired {
                    method: label.to_owned(),
                    session_id,
                });
            }
            Opened::NotOffered(status) | Opened::Refused(status) => {
                return Err(transport(format!(
                    "the SSE reply stream ended before the response, and resuming it \
                     (GET with Last-Event-ID {last:?}) was answered {status}"
                )))
            }
            Opened::Failed(reason) => tracing::debug!("resuming the SSE reply failed: {reason}"),
        }
        idle = if cursor == before { idle + 1 } else { 0 };
        if idle >= MAX_IDLE_RESUMES && !reply.answered {
            return Err(transport(format!(
                "the SSE reply stream was resumed {idle} times in a row without a new event"
            )));
        }
    }
    Ok(())
}

/// The messages of one JSON text (a message or a batch); what is not one is logged and
/// dropped, as the stdio reader does.
pub(super) fn messages_in(bytes: &[u8]) -> Vec<Message> {
    match mcp_protocol::parse(bytes) {
        Ok(Incoming::Single(m)) => vec![m],
        Ok(Incoming::Batch(items)) => items
            .into_iter()
            .filter_map(|item| {
                item.map_err(|e| tracing::warn!("server sent an invalid batch member: {e}"))
                    .ok()
            })
            .collect(),
        Err(e) => {
            tracing::warn!("server sent a bad message over HTTP: {e}");
            Vec::new()
        }
    }
}

/// The media type of a response (`Content-Type` without parameters, lower case; empty when
/// absent).
fn media_type(response: &reqwest::Response) -> String {
    response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|v| v.trim().to_ascii_lowercase())
        .unwrap_or_default()
}

/// Reads a whole body, refusing one over `limit` bytes before it is all in memory.
async fn read_body(response: &mut reqwest::Response, limit: usize) -> Result<Vec<u8>, String> {
    let too_large = || format!("the HTTP reply exceeds {limit} bytes");
    if response.content_length().is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| error_chain(&e))? {
        if body.len() + chunk.len() > limit {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The JSON-RPC error an error body carries, with or without an id.
fn error_in(body: &[u8]) -> Option<ErrorObject> {
    match mcp_protocol::parse(body).ok()? {
        Incoming::Single(Message::Response(Response {
            outcome: Err(error),
            ..
        })) => Some(error),
        _ => None,
    }
}

fn snippet(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(&body[..body.len().min(BODY_SNIPPET)]);
    text.trim().to_owned()
}
