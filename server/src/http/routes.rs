//! The router: one MCP endpoint (`--http-path`) for POST, GET and DELETE, 404 elsewhere,
//! `Origin` checked on every request first (§Security Warning), each request logged at
//! debug level with its status.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::post;
use axum::Router;
use mcp_protocol::http::SESSION_ID;
use mcp_protocol::{ErrorCode, ErrorObject};

use super::origin::{origin_allowed, text};
use super::reply::{empty, method_not_allowed, rpc_error, session_not_found};
use super::state::Shared;

pub(crate) fn router(shared: Arc<Shared>) -> Router {
    let path = shared.config.path.clone();
    let endpoint = post(super::post::post)
        .get(get)
        .delete(delete)
        .fallback(|| async { method_not_allowed("GET, POST, DELETE") })
        .layer(middleware::from_fn_with_state(Arc::clone(&shared), guard));
    Router::new()
        .route(&path, endpoint)
        .fallback(elsewhere)
        .with_state(shared)
}

/// Every request to the endpoint, whatever its method: `Origin` first, and a debug line for
/// the request and its status.
async fn guard(State(shared): State<Arc<Shared>>, request: Request, next: Next) -> Response {
    let method = request.method().clone();
    let path = crate::error::shown(request.uri().path()).into_owned();
    tracing::debug!(%method, path, "http request");
    let response = if origin_allowed(request.headers(), &shared.config.allowed_origins) {
        next.run(request).await
    } else {
        forbidden(&request)
    };
    tracing::debug!(%method, path, status = response.status().as_u16(), "http response");
    response
}

async fn elsewhere(request: Request) -> Response {
    let path = crate::error::shown(request.uri().path()).into_owned();
    tracing::debug!(method = %request.method(), path, status = 404, "http request outside the MCP endpoint");
    empty(StatusCode::NOT_FOUND)
}

fn forbidden(request: &Request) -> Response {
    tracing::warn!(
        origin = ?request.headers().get(axum::http::header::ORIGIN),
        "refused a request from an origin not allowed (add it with --allow-origin)"
    );
    rpc_error(
        StatusCode::FORBIDDEN,
        None,
        ErrorObject::new(
            ErrorCode::INVALID_REQUEST,
            "Forbidden: this Origin is not allowed (the server accepts loopback origins and those given with --allow-origin)",
        ),
    )
}

/// GET: this server never sends server-initiated messages, so it offers no standalone SSE
/// stream and answers 405, which `basic/transports.mdx` §Listening for Messages allows ("or
/// else return HTTP 405"): a stream that could only ever carry keep-alives would hold a
/// connection and a task per client for nothing, and delay shutdown. 2026-07-28 has no GET
/// at all (405). A GET naming an unknown or ended session still gets 404, as every request
/// with such an id MUST (§Session Management 3), so a client learns to re-initialize.
async fn get(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    match request.headers().get(SESSION_ID) {
        Some(_) if session(&shared, &request).is_none() => session_not_found(),
        _ => method_not_allowed("POST, DELETE"),
    }
}

/// DELETE with `Mcp-Session-Id` ends that session (204; its requests in flight are
/// aborted); an unknown one gets 404. Without the header there is nothing to delete: 405,
/// as 2026-07-28 §Backward Compatibility asks of session-less traffic.
async fn delete(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    match text(request.headers(), SESSION_ID) {
        None if request.headers().get(SESSION_ID).is_none() => method_not_allowed("POST"),
        Some(id) if shared.sessions.remove(id) => {
            tracing::info!(session = %crate::error::shown(id), "session ended by DELETE");
            empty(StatusCode::NO_CONTENT)
        }
        _ => session_not_found(),
    }
}

fn session(shared: &Shared, request: &Request) -> Option<Arc<super::sessions::HttpSession>> {
    text(request.headers(), SESSION_ID).and_then(|id| shared.sessions.get(id))
}
