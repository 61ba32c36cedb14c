//! The HTTP side of a connection: the endpoint, the `reqwest` client (with the caller's
//! headers), the legacy session id, what ends a session (a 404, or `DELETE` on close), and the
//! headers every message gets from what the connection learned.

use std::time::Duration;

use mcp_protocol::http::{Negotiated, Posted, RequestHeaders};
use mcp_protocol::Message;
use parking_lot::Mutex;
use reqwest::header::HeaderMap;
use reqwest::StatusCode;

use crate::client::shared::Shared;
use crate::era::Connected;
use crate::state::Phase;

/// What the connection knows when a message goes out.
#[derive(Debug, Default)]
pub(super) struct Context {
    /// The legacy session, once an `initialize` reply set one.
    pub(super) session: Option<String>,
    /// The version `initialize` negotiated (legacy).
    pub(super) legacy_version: Option<String>,
    /// The version the `server/discover` probe chose (modern).
    pub(super) modern_version: Option<String>,
}

impl Context {
    pub(super) fn negotiated(&self) -> Negotiated<'_> {
        Negotiated {
            session_id: self.session.as_deref(),
            legacy_version: self.legacy_version.as_deref(),
            modern_version: self.modern_version.as_deref(),
        }
    }

    /// The headers of a `GET` or `DELETE` in the session. A value that cannot be a header
    /// (never one this client kept: it checks both) is left out, and logged.
    pub(super) fn session_headers(&self) -> HeaderMap {
        let mut map = HeaderMap::new();
        if let Err(e) = RequestHeaders::session(&self.negotiated()).insert_into(&mut map) {
            tracing::warn!("left out of the request: {e}");
        }
        map
    }
}

/// One MCP endpoint and its session.
#[derive(Debug)]
pub(super) struct Conn {
    pub(super) client: reqwest::Client,
    pub(super) url: reqwest::Url,
    /// `Mcp-Session-Id` from the last `initialize` reply that set one (legacy).
    session: Mutex<Option<String>>,
}

impl Conn {
    pub(super) fn new(client: reqwest::Client, url: reqwest::Url) -> Self {
        Conn {
            client,
            url,
            session: Mutex::new(None),
        }
    }

    pub(super) fn session(&self) -> Option<String> {
        self.session.lock().clone()
    }

    /// Keeps the session id an `initialize` reply set, if it is one: visible ASCII
    /// (0x21–0x7E), as `transports.mdx` requires.
    pub(super) fn set_session(&self, value: &[u8]) {
        let valid = !value.is_empty() && value.iter().all(|b| (0x21..=0x7e).contains(b));
        match (valid, std::str::from_utf8(value)) {
            (true, Ok(id)) => *self.session.lock() = Some(id.to_owned()),
            _ => tracing::warn!("ignored an Mcp-Session-Id that is not visible ASCII"),
        }
    }

    /// The server answered 404 to a message that carried session `ended`: if that is still
    /// the session, forget it and put the connection back to `new`, so `connect()` starts a
    /// new one. Only the first 404 for a session does this.
    pub(super) fn expire(&self, ended: &str, shared: &Shared) {
        let mut session = self.session.lock();
        if session.as_deref() != Some(ended) {
            return;
        }
        *session = None;
        drop(session);
        tracing::warn!(session = ended, "the server ended the HTTP session (404)");
        *shared.connected.lock() = None;
        shared.set_phase_unless_closed(Phase::New);
    }

    /// The headers `message` gets now.
    pub(super) fn headers_for(&self, message: &Message, shared: &Shared) -> RequestHeaders {
        RequestHeaders::post(Posted::message(message), &self.context(shared).negotiated())
    }

    pub(super) fn context(&self, shared: &Shared) -> Context {
        let mut cx = Context {
            session: self.session(),
            ..Context::default()
        };
        match shared.connected.lock().as_ref() {
            Some(Connected::Legacy(init)) => {
                cx.legacy_version = Some(init.protocol_version.clone())
            }
            Some(Connected::Modern {
                protocol_version, ..
            }) => cx.modern_version = Some(protocol_version.as_str().to_owned()),
            None => {}
        }
        cx
    }

    /// Ends the session, if there is one, with `DELETE` (`transports.mdx`, "Session
    /// Management"); 405 means the server does not allow that, which is fine.
    pub(super) async fn end_session(&self, shared: &Shared, within: Duration) {
        let cx = self.context(shared);
        if cx.session.is_none() {
            return;
        }
        let delete = self
            .client
            .delete(self.url.clone())
            .headers(cx.session_headers());
        match tokio::time::timeout(within, delete.send()).await {
            Ok(Ok(r))
                if r.status().is_success() || r.status() == StatusCode::METHOD_NOT_ALLOWED =>
            {
                tracing::debug!(status = %r.status(), "HTTP session ended")
            }
            Ok(Ok(r)) => tracing::debug!(status = %r.status(), "DELETE of the session refused"),
            Ok(Err(e)) => tracing::debug!("DELETE of the session failed: {e}"),
            Err(_) => tracing::debug!("DELETE of the session got no answer within {within:?}"),
        }
        *self.session.lock() = None;
    }
}

/// `reqwest` puts the cause (connection refused, timed out) in the source chain.
pub(super) fn error_chain(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
