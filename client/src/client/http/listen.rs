//! The legacy era's GET stream (`transports.mdx`, "Listening for Messages from the Server"):
//! once the session is ready the client opens it, and every message the server sends on it
//! (notifications; requests such as `ping`, answered by the inbound path) goes to the same
//! inbound path as replies to POSTs. A server without one answers 405, and that is the end of
//! it. A stream that ends is reopened while the session lasts, giving up after a few failures
//! in a row.

use std::sync::Arc;
use std::time::Duration;

use mcp_protocol::http::{self as names, SseReader};
use reqwest::header::ACCEPT;
use reqwest::StatusCode;

use super::post::{carries_message, error_chain, messages_in};
use super::session::Conn;
use crate::client::shared::Shared;

/// Opening the stream fails (or it ends at once) this many times in a row: stop trying.
const MAX_FAILURES: u32 = 3;
/// The pause before reopening a stream that ended.
const REOPEN_AFTER: Duration = Duration::from_secs(1);

pub(super) async fn run(conn: Arc<Conn>, shared: Arc<Shared>) {
    let Some(session) = conn.session() else {
        return;
    };
    let mut failures = 0;
    while failures < MAX_FAILURES && conn.session().as_deref() == Some(session.as_str()) {
        match listen_once(&conn, &shared).await {
            Ended::NotOffered => return,
            Ended::Opened => failures = 0,
            Ended::Failed => failures += 1,
        }
        tokio::time::sleep(REOPEN_AFTER).await;
    }
}

enum Ended {
    /// 405, or no event stream: the server offers none.
    NotOffered,
    /// The stream was open, then ended (the server closed it, or it was idle past the read
    /// timeout).
    Opened,
    /// It could not be opened.
    Failed,
}

async fn listen_once(conn: &Conn, shared: &Shared) -> Ended {
    let get = conn
        .client
        .get(conn.url.clone())
        .header(ACCEPT, names::EVENT_STREAM)
        .headers(conn.context(shared).session_headers());
    let mut response = match get.send().await {
        Ok(r) => r,
        Err(e) => {
            tracing::debug!("opening the GET stream failed: {}", error_chain(&e));
            return Ended::Failed;
        }
    };
    let status = response.status();
    let is_stream = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.trim_start()
                .to_ascii_lowercase()
                .starts_with(names::EVENT_STREAM)
        });
    if status == StatusCode::METHOD_NOT_ALLOWED || (status.is_success() && !is_stream) {
        tracing::debug!(%status, "the server offers no GET stream");
        return Ended::NotOffered;
    }
    if !status.is_success() {
        tracing::debug!(%status, "the GET stream was refused");
        return Ended::Failed;
    }
    let mut reader = SseReader::new(shared.options.max_message_bytes);
    let mut events = Vec::new();
    loop {
        let chunk = match response.chunk().await {
            Ok(Some(chunk)) => chunk,
            Ok(None) => break,
            Err(e) => {
                tracing::debug!("the GET stream failed: {}", error_chain(&e));
                break;
            }
        };
        if let Err(e) = reader.feed(&chunk, &mut events) {
            tracing::warn!("the GET stream is unreadable: {e}");
            break;
        }
        for event in events.drain(..).filter(carries_message) {
            for message in messages_in(event.data.as_bytes()) {
                shared.on_message(message).await;
            }
        }
    }
    Ended::Opened
}
