//! The legacy era's GET stream (`transports.mdx`, "Listening for Messages from the Server"):
//! once the session is ready the client opens it, and every message the server sends on it
//! (notifications; requests such as `ping`, answered by the inbound path) goes to the same
//! inbound path as replies to POSTs. A server without one answers 405, and that is the end of
//! it. A stream that ends is reopened while the session lasts, after the server's `retry` (else
//! a second) and with `Last-Event-ID` when its events had ids, giving up after a few failures
//! in a row.

use std::sync::Arc;
use std::time::Duration;

use super::post::messages_in;
use super::session::Conn;
use super::sse::{self, Cursor, Opened};
use crate::client::shared::Shared;

/// Opening the stream fails (or it ends at once) this many times in a row: stop trying.
const MAX_FAILURES: u32 = 3;
/// The pause before reopening a stream that ended, when the server set no `retry`.
const REOPEN_AFTER: Duration = Duration::from_secs(1);

pub(super) async fn run(conn: Arc<Conn>, shared: Arc<Shared>) {
    let Some(session) = conn.session() else {
        return;
    };
    let mut failures = 0;
    let mut cursor = Cursor::default();
    while failures < MAX_FAILURES && conn.session().as_deref() == Some(session.as_str()) {
        match listen_once(&conn, &shared, &mut cursor).await {
            Ended::NotOffered => return,
            Ended::Opened => failures = 0,
            Ended::Failed => failures += 1,
        }
        tokio::time::sleep(cursor.delay(REOPEN_AFTER)).await;
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

async fn listen_once(conn: &Conn, shared: &Shared, cursor: &mut Cursor) -> Ended {
    let last_event_id = cursor.last_event_id.clone();
    let mut stream = match sse::open(conn, shared, last_event_id.as_deref()).await {
        Opened::Stream(stream) => stream,
        Opened::NotOffered(status) => {
            tracing::debug!(%status, "the server offers no GET stream");
            return Ended::NotOffered;
        }
        Opened::Refused(status) => {
            tracing::debug!(%status, "the GET stream was refused");
            return Ended::Failed;
        }
        // The next request meets the same 404, and renews the session for its caller.
        Opened::SessionGone(session) => {
            tracing::debug!(session, "the GET stream's session is gone (404)");
            return Ended::Failed;
        }
        Opened::Failed(reason) => {
            tracing::debug!("opening the GET stream failed: {reason}");
            return Ended::Failed;
        }
    };
    loop {
        match stream.next(cursor).await {
            Ok(Some(data)) => {
                for message in messages_in(data.as_bytes()) {
                    shared.on_message(message).await;
                }
            }
            Ok(None) => break,
            Err(e) => {
                tracing::debug!("the GET stream failed: {e}");
                break;
            }
        }
    }
    Ended::Opened
}
