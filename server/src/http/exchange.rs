//! Turning a [`Dispatch`] from the [`Session`](crate::Session) core into an HTTP response:
//! 202 for what needs no reply, the reply at once, or a tool call run in its own task and
//! answered when it ends (as JSON, or on an SSE stream opened at once).
//!
//! Cancellation differs by era. Legacy: `notifications/cancelled` aborts the request, and a
//! dropped connection does not ("Disconnection SHOULD NOT be interpreted as the client
//! cancelling its request", `basic/transports.mdx`). 2026-07-28: "Closing the SSE response
//! stream MUST be treated by the server as cancellation" (`streamable-http` §Cancellation),
//! so a dropped response aborts its task.

use std::sync::Arc;

use axum::http::StatusCode;
use axum::response::Response;
use futures::future::BoxFuture;
use futures::FutureExt;
use mcp_protocol::mcp::{methods, modern};
use mcp_protocol::{ErrorCode, FrameError, InvalidMessage, Message, Outgoing, RequestId};
use tokio::task::AbortHandle;

use super::reply::{empty, ready, rpc_error, sse_later, Accept, Format};
use super::sessions::HttpSession;
use crate::connection::{lock, log_incoming};
use crate::error::ServerError;
use crate::params::ServerParams;
use crate::session::Dispatch;

/// Acts on one message's dispatch. `session` is the legacy session it belongs to (`None`
/// for a stateless 2026-07-28 request); `accept` is `Some` for every request.
pub(crate) async fn answer(
    dispatch: Dispatch,
    accept: Option<Accept>,
    session: Option<Arc<HttpSession>>,
    modern: bool,
) -> Response {
    let accept = accept.unwrap_or(Accept::JSON);
    match dispatch {
        // §Sending Messages 4: an accepted notification or response gets 202, no body.
        Dispatch::Nothing => empty(StatusCode::ACCEPTED),
        Dispatch::Cancel(id) => {
            if let Some(session) = &session {
                cancel(session, &id);
            }
            empty(StatusCode::ACCEPTED)
        }
        Dispatch::Reply(out) => ready(status_of(&out, modern), accept.for_ready(), &out),
        Dispatch::Pending(id, work) => {
            let later = match session {
                Some(session) => match track(&session, id, work) {
                    Ok(later) => later,
                    Err(duplicate) => {
                        return ready(StatusCode::OK, accept.for_ready(), &duplicate);
                    }
                },
                None => {
                    let task = tokio::spawn(work);
                    let guard = AbortOnDrop(task.abort_handle());
                    async move {
                        let _guard = guard;
                        task.await.ok().map(Outgoing::from)
                    }
                    .boxed()
                }
            };
            deliver(later, accept.for_pending(), modern).await
        }
    }
}

/// Runs a legacy tool call in its own task, registered under its id so
/// `notifications/cancelled` and DELETE can abort it; a second request with an id in flight
/// gets the same error as on stdio.
fn track(
    session: &Arc<HttpSession>,
    id: RequestId,
    work: BoxFuture<'static, mcp_protocol::Response>,
) -> Result<BoxFuture<'static, Option<Outgoing>>, Outgoing> {
    let mut in_flight = lock(&session.in_flight);
    if in_flight.contains_key(&id) {
        let e = ServerError::DuplicateId(id.clone());
        return Err(mcp_protocol::Response::error(Some(id), e.to_error_object()).into());
    }
    let owner = Arc::clone(session);
    let key = id.clone();
    // The lock is held until the handle is stored, so the task cannot end and look for its
    // entry before it exists.
    let task = tokio::spawn(async move {
        let response = work.await;
        lock(&owner.in_flight).remove(&key);
        response
    });
    in_flight.insert(id, task.abort_handle());
    Ok(async move { task.await.ok().map(Outgoing::from) }.boxed())
}

/// Sends a reply that is still running: on an SSE stream opened now, or as JSON when it
/// comes. A cancelled request sends no JSON-RPC response: its SSE stream ends with no event,
/// and a JSON-only client gets 204 No Content (the POST must be answered somehow).
async fn deliver(
    later: BoxFuture<'static, Option<Outgoing>>,
    format: Format,
    modern: bool,
) -> Response {
    match format {
        Format::Sse => sse_later(later),
        Format::Json => match later.await {
            Some(out) => ready(status_of(&out, modern), Format::Json, &out),
            None => empty(StatusCode::NO_CONTENT),
        },
    }
}

fn cancel(session: &HttpSession, id: &RequestId) {
    match lock(&session.in_flight).remove(id) {
        Some(task) => {
            task.abort();
            tracing::debug!(id = %crate::error::shown_id(id), "request cancelled; no reply will be sent");
        }
        None => {
            tracing::debug!(id = %crate::error::shown_id(id), "cancellation for no running request ignored")
        }
    }
}

/// The HTTP status of a reply. A legacy JSON-RPC error is an ordinary JSON-RPC exchange
/// (200). 2026-07-28 gives some errors their own status (`streamable-http` §Protocol
/// Version Header): an unknown method MUST get 404, an unsupported version or a missing
/// client capability 400.
fn status_of(out: &Outgoing, modern: bool) -> StatusCode {
    let Outgoing::Single(Message::Response(mcp_protocol::Response {
        outcome: Err(e), ..
    })) = out
    else {
        return StatusCode::OK;
    };
    match e.code {
        _ if !modern => StatusCode::OK,
        ErrorCode::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        ErrorCode(modern::UNSUPPORTED_PROTOCOL_VERSION)
        | ErrorCode(modern::MISSING_REQUIRED_CLIENT_CAPABILITY) => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    }
}

/// A JSON-RPC batch (§6), only in 2025-03-26 sessions, as on stdio: one array of replies
/// (or one SSE event each), 202 if every member was a notification or response. Members are
/// answered together and are not cancellable.
pub(crate) async fn batch(
    session: Arc<HttpSession>,
    accept: Option<Accept>,
    items: Vec<Result<Message<ServerParams>, InvalidMessage>>,
) -> Response {
    let version = lock(&session.session).version();
    if !version.is_some_and(|v| v.has_batches()) {
        let e = ServerError::BatchNotSupported(version);
        return rpc_error(StatusCode::BAD_REQUEST, None, e.to_error_object());
    }
    let wants_reply = items.iter().any(|item| match item {
        Ok(m) => matches!(m, Message::Request(_)),
        Err(invalid) => !invalid.is_response,
    });
    let accept = match (wants_reply, accept) {
        (true, None) => {
            return rpc_error(
                StatusCode::NOT_ACCEPTABLE,
                None,
                mcp_protocol::ErrorObject::new(
                    ErrorCode::INVALID_REQUEST,
                    "Not Acceptable: Accept must list application/json and text/event-stream",
                ),
            )
        }
        (_, accept) => accept.unwrap_or(Accept::JSON),
    };
    let mut replies = Vec::new();
    let mut pending = Vec::new();
    {
        let mut core = lock(&session.session);
        for item in items {
            match item {
                Err(invalid) if invalid.is_response => {
                    tracing::warn!("ignored an invalid response in a batch: {invalid}");
                }
                Err(invalid) => {
                    let error = FrameError::Invalid(invalid);
                    replies.push(Message::Response(mcp_protocol::Response::error(
                        error.request_id().cloned(),
                        error.to_error_object(),
                    )));
                }
                Ok(Message::Request(r)) if r.method == methods::INITIALIZE => {
                    let e = ServerError::InitializeInBatch;
                    replies.push(Message::Response(mcp_protocol::Response::error(
                        Some(r.id),
                        e.to_error_object(),
                    )));
                }
                Ok(message) => {
                    log_incoming(&message);
                    match core.handle(message) {
                        Dispatch::Nothing => {}
                        Dispatch::Reply(out) => replies.extend(out.into_messages()),
                        Dispatch::Cancel(id) => cancel(&session, &id),
                        Dispatch::Pending(_, work) => pending.push(work),
                    }
                }
            }
        }
    }
    if pending.is_empty() {
        if replies.is_empty() {
            return empty(StatusCode::ACCEPTED);
        }
        return ready(
            StatusCode::OK,
            accept.for_ready(),
            &Outgoing::Batch(replies),
        );
    }
    let later = async move {
        let done = futures::future::join_all(pending).await;
        replies.extend(done.into_iter().map(Message::Response));
        Some(Outgoing::Batch(replies))
    }
    .boxed();
    deliver(later, accept.for_pending(), false).await
}

/// Aborts a stateless request's task when its response (or SSE stream) is dropped: the
/// client closed the connection.
struct AbortOnDrop(AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
