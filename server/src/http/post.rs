//! POST: one JSON-RPC message (or a 2025-03-26 batch) per request. What the headers can
//! decide is decided before the body is read (an unknown session, the small cap of a POST
//! that can only be an `initialize`); the body is then read within its bounds ([`body`]),
//! parsed with the core's rules, and sent down one of three paths: a 2026-07-28 request (stateless, mirrored headers checked), an `initialize` (a new
//! legacy session), or a message of an existing legacy session.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::Response;
use mcp_protocol::http::{HEADER_MISMATCH, METHOD, SESSION_ID};
use mcp_protocol::mcp::{methods, modern};
use mcp_protocol::{ErrorCode, ErrorObject, Incoming, Message};
use serde_json::Value;

use super::body::{self, Limits};
use super::exchange::{respond, Conn};
use super::origin::{is_json, protocol_version, text, HeaderVersion};
use super::reply::{empty, ready, rpc_error, session_not_found, Accept};
use super::sessions::{HttpSession, InsertError};
use super::state::Shared;
use crate::core::Era;
use crate::error::ServerError;
use crate::params::ServerParams;

pub(crate) async fn post(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let shared = &*shared;
    let (parts, body) = request.into_parts();
    let headers = &parts.headers;
    if !is_json(headers) {
        return rpc_error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            None,
            ErrorObject::new(
                ErrorCode::INVALID_REQUEST,
                "Unsupported Media Type: a POST body must be one JSON-RPC message with Content-Type: application/json",
            ),
        );
    }
    let header_version = match protocol_version(headers) {
        Ok(v) => v,
        // §Protocol Version Header: invalid or unsupported MUST get 400.
        Err(bad) => {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                None,
                ServerError::UnsupportedProtocolVersion(bad).to_error_object(),
            )
        }
    };
    let accept = Accept::from_header(text(headers, header::ACCEPT.as_str()));
    let Some(session) = Before::decide(shared, headers) else {
        return session_not_found();
    };
    let limits = Limits {
        cap: session.cap(&shared.config),
        timeout: shared.config.body_timeout,
    };
    // `_held` keeps the body's bytes counted against the budget until they are dropped.
    let (bytes, _held) = match body::read(body, headers, limits, &shared.bodies).await {
        Ok(read) => read,
        Err(e) => return e.into_response(),
    };
    let incoming = match body::parse(&bytes, &shared.large_parses).await {
        Ok(incoming) => incoming,
        Err(e) => {
            tracing::warn!("bad POST body: {e}");
            // An invalid response is answered with no id: its id names a request of the
            // client's own.
            let id = (!e.is_response())
                .then(|| e.request_id().cloned())
                .flatten();
            return rpc_error(StatusCode::BAD_REQUEST, id, e.to_error_object());
        }
    };
    super::inflight::name(&incoming);
    route(shared, headers, header_version, accept, session, incoming).await
}

/// What the headers decide before a byte of the body is read (§Session Management): a POST
/// naming a session this server does not hold gets 404 unless it may be a 2026-07-28
/// request (which carries `Mcp-Method` and ignores `Mcp-Session-Id`, §Backward
/// Compatibility); a POST with neither header can only be an `initialize` or an error, so
/// its body gets the small cap.
enum Before {
    /// No `Mcp-Session-Id`.
    NoSession { method_header: bool },
    /// `Mcp-Session-Id` naming this session.
    Known(Arc<HttpSession>),
    /// `Mcp-Session-Id` naming no session, on a POST that may be a 2026-07-28 request.
    Unknown,
}

impl Before {
    /// `None`: the POST names a session this server does not hold, and cannot be a
    /// 2026-07-28 request (404).
    fn decide(shared: &Shared, headers: &HeaderMap) -> Option<Before> {
        let method_header = headers.contains_key(METHOD);
        if !headers.contains_key(SESSION_ID) {
            return Some(Before::NoSession { method_header });
        }
        match text(headers, SESSION_ID).and_then(|id| shared.sessions.get(id)) {
            Some(session) => Some(Before::Known(session)),
            None => method_header.then_some(Before::Unknown),
        }
    }

    /// The most bytes the body may have.
    fn cap(&self, config: &super::config::HttpConfig) -> usize {
        match self {
            Before::NoSession {
                method_header: false,
            } => config.max_initialize_bytes.min(config.max_message_bytes),
            _ => config.max_message_bytes,
        }
    }

    fn has_session(&self) -> bool {
        !matches!(self, Before::NoSession { .. })
    }
}

/// Sends a parsed body down its path: a 2026-07-28 request, an `initialize`, a session-less
/// 2026-07-28 notification, or a message of a legacy session.
async fn route(
    shared: &Shared,
    headers: &HeaderMap,
    header_version: HeaderVersion,
    accept: Option<Accept>,
    session: Before,
    incoming: Incoming<ServerParams>,
) -> Response {
    let has_session = session.has_session();
    match incoming {
        Incoming::Single(Message::Request(r))
            if Era::of(&r.method, r.params.as_ref()) == Era::Modern =>
        {
            // 2026-07-28 §Backward Compatibility: an Mcp-Session-Id on such a request is
            // ignored.
            modern_request(shared, headers, accept, r).await
        }
        Incoming::Single(Message::Request(r))
            if r.method == methods::INITIALIZE && !has_session =>
        {
            initialize(shared, accept, r)
        }
        Incoming::Single(Message::Notification(n))
            if !has_session && header_version == HeaderVersion::Modern =>
        {
            // A session-less 2026-07-28 notification: closing a response stream, not
            // notifications/cancelled, cancels over HTTP in that revision; this one may still
            // name a listen stream, which then ends with no response.
            drop(shared.listeners.notified(n));
            empty(StatusCode::ACCEPTED)
        }
        Incoming::Single(Message::Response(_))
            if !has_session && header_version == HeaderVersion::Modern =>
        {
            tracing::debug!("a 2026-07-28 response: accepted, nothing to do");
            empty(StatusCode::ACCEPTED)
        }
        other => legacy(shared, session, header_version, accept, other).await,
    }
}

/// 400 for a legacy message without `Mcp-Session-Id` (§Session Management 2).
fn session_required(id: Option<mcp_protocol::RequestId>) -> Response {
    rpc_error(
        StatusCode::BAD_REQUEST,
        id,
        ErrorObject::new(
            ErrorCode::INVALID_REQUEST,
            "Bad Request: Mcp-Session-Id header is required; send initialize first (or make this a 2026-07-28 request, with params._meta and the mirrored headers)",
        ),
    )
}

/// 406 for a request whose `Accept` lists neither media type the reply could take.
fn not_acceptable(id: mcp_protocol::RequestId) -> Response {
    rpc_error(
        StatusCode::NOT_ACCEPTABLE,
        Some(id),
        ErrorObject::new(ErrorCode::INVALID_REQUEST, NOT_ACCEPTABLE),
    )
}

const NOT_ACCEPTABLE: &str =
    "Not Acceptable: Accept must list application/json or text/event-stream (clients should list both)";

/// A 2026-07-28 request: mirrored headers checked against the body, then served by a core of
/// its own (no handshake; with diagnostic tools the server's listen streams and tool list
/// are shared, [`Conn::stateless`]), as stdio serves such requests.
async fn modern_request(
    shared: &Shared,
    headers: &HeaderMap,
    accept: Option<Accept>,
    request: mcp_protocol::Request<ServerParams>,
) -> Response {
    let Some(accept) = accept else {
        return not_acceptable(request.id);
    };
    let params = request.params.as_ref();
    let meta_version = params
        .and_then(ServerParams::meta)
        .and_then(|m| m.get(modern::META_PROTOCOL_VERSION))
        .and_then(Value::as_str)
        .unwrap_or_default();
    if let Err(why) = super::mirror::check(headers, &request.method, params, meta_version) {
        tracing::warn!("header mismatch: {why}");
        return rpc_error(
            StatusCode::BAD_REQUEST,
            Some(request.id),
            ErrorObject::new(
                ErrorCode(HEADER_MISMATCH),
                format!("Header mismatch: {why}"),
            ),
        );
    }
    let conn = Conn::stateless(Arc::clone(&shared.served), Arc::clone(&shared.listeners));
    let fed = conn.feed(Incoming::Single(Message::Request(request)));
    respond(conn, fed, accept.formats(), true, &shared.replies).await
}

/// `initialize` without a session: answered by a new connection core, which is kept under a new
/// `Mcp-Session-Id` when the handshake succeeded (§Session Management 1).
fn initialize(
    shared: &Shared,
    accept: Option<Accept>,
    request: mcp_protocol::Request<ServerParams>,
) -> Response {
    let Some(accept) = accept else {
        return not_acceptable(request.id);
    };
    let id = request.id.clone();
    let conn = Conn::new(Arc::clone(&shared.served));
    let fed = conn.feed(Incoming::Single(Message::Request(request)));
    let format = accept.formats().ready;
    // `initialize` is always answered at once.
    let Some(out) = fed.replies.into_iter().next() else {
        return rpc_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            Some(id),
            ErrorObject::new(
                ErrorCode::INTERNAL_ERROR,
                "Internal error: initialize did not complete",
            ),
        );
    };
    if conn.version().is_none() {
        // Invalid params: the error is the reply, and no session is kept.
        return ready(StatusCode::OK, format, &out);
    }
    match shared.sessions.insert(HttpSession::new(conn)) {
        Ok(sid) => {
            tracing::info!(session = %sid, "session created");
            let mut response = ready(StatusCode::OK, format, &out);
            if let Ok(value) = HeaderValue::from_str(&sid) {
                response.headers_mut().insert(SESSION_ID, value);
            }
            response
        }
        Err(InsertError::Full(_)) => {
            tracing::warn!(
                max = shared.config.max_sessions,
                "session limit reached and every session has a request in flight: initialize refused"
            );
            let mut response = rpc_error(
                StatusCode::SERVICE_UNAVAILABLE,
                Some(id),
                ErrorObject::new(
                    ErrorCode(-32000),
                    format!(
                        "Server busy: it holds its maximum of {} sessions and each has a request in flight; retry once one ends",
                        shared.config.max_sessions
                    ),
                ),
            );
            // A session becomes evictable as soon as its request ends: soon, not after the
            // idle expiry.
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            response
        }
        Err(InsertError::Random(e)) => {
            tracing::error!("cannot make a session id: {e}");
            rpc_error(
                StatusCode::INTERNAL_SERVER_ERROR,
                Some(id),
                ErrorObject::new(
                    ErrorCode::INTERNAL_ERROR,
                    "Internal error: cannot make a session id",
                ),
            )
        }
    }
}

/// A message of a legacy session: `Mcp-Session-Id` required (400 without, §Session
/// Management 2) and known (404 otherwise). An `MCP-Protocol-Version` that names no version
/// this server speaks was already refused (400); one that names another legacy version than
/// the negotiated one is accepted, as the official conformance suite and the SDKs expect
/// (the session's negotiated version decides); 2026-07-28 on a message that is not a
/// 2026-07-28 request (no `_meta`) is 400.
async fn legacy(
    shared: &Shared,
    session: Before,
    header_version: HeaderVersion,
    accept: Option<Accept>,
    incoming: Incoming<ServerParams>,
) -> Response {
    let request_id = match &incoming {
        Incoming::Single(Message::Request(r)) => Some(r.id.clone()),
        _ => None,
    };
    let session = match session {
        Before::Known(session) => session,
        Before::Unknown => return session_not_found(),
        Before::NoSession { .. } => return session_required(request_id),
    };
    let negotiated = session.conn.version();
    match header_version {
        HeaderVersion::Legacy(v) if Some(v) != negotiated => {
            // Supported, so not a 400; the session's negotiated version still decides.
            tracing::debug!(header = %v, negotiated = ?negotiated.map(|n| n.as_str()), "MCP-Protocol-Version differs from the session's negotiated version");
        }
        HeaderVersion::Modern => {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                request_id,
                ErrorObject::new(
                    ErrorCode::INVALID_REQUEST,
                    format!(
                        "Bad Request: MCP-Protocol-Version 2026-07-28 on a message without params._meta in a session negotiated at {} (a 2026-07-28 request carries its version in params._meta)",
                        negotiated.map_or("(none)", |v| v.as_str())
                    ),
                ),
            );
        }
        _ => {}
    }
    let accept = match (accept, &incoming) {
        (Some(accept), _) => accept,
        (None, Incoming::Single(Message::Request(r))) => return not_acceptable(r.id.clone()),
        (None, Incoming::Batch(items)) if wants_reply(items) => {
            return rpc_error(
                StatusCode::NOT_ACCEPTABLE,
                None,
                ErrorObject::new(ErrorCode::INVALID_REQUEST, NOT_ACCEPTABLE),
            )
        }
        (None, _) => Accept::JSON,
    };
    let conn = Arc::clone(&session.conn);
    let fed = conn.feed(incoming);
    respond(conn, fed, accept.formats(), false, &shared.replies).await
}

/// Whether a batch holds a request or an invalid member: something to reply to.
fn wants_reply(items: &[Result<Message<ServerParams>, mcp_protocol::InvalidMessage>]) -> bool {
    items.iter().any(|item| match item {
        Ok(m) => matches!(m, Message::Request(_)),
        Err(invalid) => !invalid.is_response,
    })
}
