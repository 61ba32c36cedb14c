//! Writing HTTP responses: one JSON body, an SSE stream, 202, and JSON-RPC errors with an
//! HTTP status (`basic/transports.mdx` §Sending Messages to the Server).

use std::sync::Arc;

use axum::body::Body;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::Response;
use mcp_protocol::http::{accepts, write_event, EVENT_STREAM, JSON};
use mcp_protocol::{ErrorCode, ErrorObject, Outgoing, RequestId};

use super::budget::{Budget, Pieces};

/// How a request's reply travels, chosen from its `Accept` header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// `application/json`: one body.
    Json,
    /// `text/event-stream`: one `data:` event per JSON-RPC message; the stream ends after
    /// the response.
    Sse,
}

/// How a POST's replies travel: when they are ready at once, and when calls still run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Formats {
    pub(crate) ready: Format,
    pub(crate) pending: Format,
}

/// What `Accept` allows. Clients MUST list both media types; one that lists both gets JSON
/// for a reply ready at once (one body, no framing) and SSE for one that is still running
/// (see [`Format::for_pending`]). One that lists only one gets that one. A request with no
/// `Accept` at all accepts anything (RFC 9110 §12.5.1) and gets JSON; one whose `Accept`
/// lists neither gets 406.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Accept {
    json: bool,
    sse: bool,
}

impl Accept {
    /// What a request with no `Accept` header gets.
    pub(crate) const JSON: Accept = Accept {
        json: true,
        sse: false,
    };

    pub(crate) fn from_header(value: Option<&str>) -> Option<Accept> {
        let Some(value) = value else {
            return Some(Accept::JSON);
        };
        let accept = Accept {
            json: accepts(value, JSON),
            sse: accepts(value, EVENT_STREAM),
        };
        (accept.json || accept.sse).then_some(accept)
    }

    /// How replies travel: ready at once, or while calls still run.
    pub(crate) fn formats(self) -> Formats {
        Formats {
            ready: self.for_ready(),
            pending: self.for_pending(),
        }
    }

    /// For a reply ready now.
    fn for_ready(self) -> Format {
        if self.json {
            Format::Json
        } else {
            Format::Sse
        }
    }

    /// For a reply still being computed: SSE when allowed, so the headers go out at once and
    /// closing the stream is the client's way to give up on it.
    fn for_pending(self) -> Format {
        if self.sse {
            Format::Sse
        } else {
            Format::Json
        }
    }
}

/// A reply that is ready.
pub(crate) fn ready(status: StatusCode, format: Format, out: &Outgoing) -> Response {
    match format {
        Format::Json => json(status, out),
        Format::Sse => sse(status, Body::from(events(out))),
    }
}

/// Replies up to this size are not counted against the reply budget: counting them would
/// cost every small exchange an atomic operation, and what clients can hold with them is
/// bounded by the connection cap (1 024 × 64 KiB = 64 MiB by default).
const UNCOUNTED: usize = 64 * 1024;

/// A large reply was refused: replies clients have not read yet take the whole budget.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RepliesBusy {
    budget: usize,
}

impl RepliesBusy {
    /// The JSON-RPC error said instead of the reply.
    pub(crate) fn to_error_object(self) -> ErrorObject {
        ErrorObject::new(
            ErrorCode(-32000),
            format!(
                "Server busy: replies not yet read by their clients take its budget of {} bytes, so this reply was dropped; retry shortly",
                self.budget
            ),
        )
        .with_data(serde_json::json!({ "replyBudgetBytes": self.budget }))
    }

    /// 503 with that error, for a reply whose status is not sent yet.
    pub(crate) fn into_response(self, id: Option<RequestId>) -> Response {
        let mut response = rpc_error(StatusCode::SERVICE_UNAVAILABLE, id, self.to_error_object());
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        response
    }
}

/// A reply's bytes as body frames: a large one held against the reply budget until its
/// client read it, or refused when the budget is spent.
pub(crate) fn counted(bytes: Vec<u8>, replies: &Arc<Budget>) -> Result<Pieces, RepliesBusy> {
    if bytes.len() <= UNCOUNTED {
        return Ok(Pieces::new(bytes.into(), None));
    }
    match replies.take(bytes.len()) {
        Some(held) => Ok(Pieces::new(bytes.into(), Some(held))),
        None => Err(RepliesBusy {
            budget: replies.max(),
        }),
    }
}

/// The SSE events of `out` for a stream whose status went out already: counted; when the
/// budget is spent, a -32000 error for the same request in their place.
pub(crate) fn counted_events(out: &Outgoing, replies: &Arc<Budget>) -> Pieces {
    counted(events(out), replies).unwrap_or_else(|busy| {
        tracing::warn!("reply budget spent: a reply on an SSE stream is replaced by an error");
        let error = mcp_protocol::Response::error(reply_id(out), busy.to_error_object());
        Pieces::new(events(&error.into()).into(), None)
    })
}

/// A reply that is ready, counted against the reply budget (503 when it is spent).
pub(crate) fn ready_counted(
    status: StatusCode,
    format: Format,
    out: &Outgoing,
    replies: &Arc<Budget>,
) -> Response {
    let bytes = match format {
        Format::Json => to_json(out),
        Format::Sse => events(out),
    };
    let body = if bytes.len() <= UNCOUNTED {
        Body::from(bytes)
    } else {
        match counted(bytes, replies) {
            Ok(pieces) => Body::new(pieces),
            Err(busy) => return busy.into_response(reply_id(out)),
        }
    };
    match format {
        Format::Json => {
            let mut r = Response::new(body);
            *r.status_mut() = status;
            r.headers_mut()
                .insert(header::CONTENT_TYPE, HeaderValue::from_static(JSON));
            r
        }
        Format::Sse => sse(status, body),
    }
}

/// The id of the request `out` answers, if it answers one.
pub(crate) fn reply_id(out: &Outgoing) -> Option<RequestId> {
    match out {
        Outgoing::Single(mcp_protocol::Message::Response(r)) => r.id.clone(),
        Outgoing::ToolResult(id, _) => Some(id.clone()),
        _ => None,
    }
}

/// The SSE events of `out`: one `data:` event per JSON-RPC message.
pub(crate) fn events(out: &Outgoing) -> Vec<u8> {
    let mut body = Vec::new();
    match out {
        Outgoing::Batch(messages) => {
            for m in messages {
                write_event(&mut body, None, &to_json(m));
            }
        }
        single => write_event(&mut body, None, &to_json(single)),
    }
    body
}

/// An SSE response whose events `body` carries.
pub(crate) fn sse(status: StatusCode, body: Body) -> Response {
    let mut r = Response::new(body);
    *r.status_mut() = status;
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(EVENT_STREAM));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    // 2026-07-28 §Receiving Messages: SHOULD, so proxies do not buffer events.
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
    r
}

/// A JSON body with this status.
pub(crate) fn json<T: serde::Serialize>(status: StatusCode, value: &T) -> Response {
    let mut r = Response::new(Body::from(to_json(value)));
    *r.status_mut() = status;
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(JSON));
    r
}

/// A JSON-RPC error response as the body of an HTTP error. Without an id (an error about no
/// request in particular) the body "has no id" at all (§Sending Messages to the Server:
/// "MAY comprise a JSON-RPC error response that has no id"): not `"id": null`, which the
/// TypeScript SDK's clients refuse.
pub(crate) fn rpc_error(status: StatusCode, id: Option<RequestId>, error: ErrorObject) -> Response {
    match id {
        Some(id) => json(
            status,
            &Outgoing::from(mcp_protocol::Response::error(Some(id), error)),
        ),
        None => json(
            status,
            &serde_json::json!({"jsonrpc": "2.0", "error": error}),
        ),
    }
}

/// No body: 202 for an accepted notification or response, 204 for a DELETE.
pub(crate) fn empty(status: StatusCode) -> Response {
    let mut r = Response::new(Body::empty());
    *r.status_mut() = status;
    r
}

/// 405 with the `Allow` header RFC 9110 §15.5.6 requires.
pub(crate) fn method_not_allowed(allow: &'static str) -> Response {
    let mut r = empty(StatusCode::METHOD_NOT_ALLOWED);
    r.headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static(allow));
    r
}

fn to_json<T: serde::Serialize + ?Sized>(value: &T) -> Vec<u8> {
    // Messages have string keys and no fallible serializers: this cannot fail.
    serde_json::to_vec(value).unwrap_or_default()
}

/// 404 for an unknown, ended or idled-out session (§Session Management 3: MUST), with a
/// JSON-RPC error saying what to do.
pub(crate) fn session_not_found() -> Response {
    rpc_error(
        StatusCode::NOT_FOUND,
        None,
        ErrorObject::new(
            ErrorCode::INVALID_REQUEST,
            "Session not found: it ended or never existed; send initialize without Mcp-Session-Id to start a new one",
        ),
    )
}
