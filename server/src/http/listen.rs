//! 2026-07-28 `subscriptions/listen` over Streamable HTTP (`basic/patterns/subscriptions.mdx`,
//! `streamable-http` §Receiving Messages): the listen POST is answered with an SSE stream that
//! stays open, registered in the server-wide [`Listeners`] the core keeps (its bound, its
//! acknowledgment, what goes on it). This only moves the bytes: each stream's messages wait in
//! a small bounded queue ([`QUEUED`]); a stream whose queue is full (its client stopped
//! reading) is dropped, with a warning, rather than let memory grow. A stream leaves the
//! registry when its client closes it (the body is dropped), when it is cancelled (it ends
//! with no response), or at shutdown (it ends with the completion response).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::http::StatusCode;
use axum::response::Response;
use mcp_protocol::Outgoing;
use tokio::sync::mpsc;
use tokio::sync::mpsc::error::TrySendError;

use super::reply::{events, sse};
use crate::core::{Listen, ListenKey, Listeners};

/// Messages a listen stream may have waiting before it is dropped: list changes are rare
/// and small, so a full queue means its client has read nothing for a long while.
pub(crate) const QUEUED: usize = 32;

/// The server-wide listen streams of this transport.
pub(crate) type Streams = Listeners<Sink>;

/// Where one listen stream's messages go: its queue.
#[derive(Debug)]
pub(crate) struct Sink {
    queue: mpsc::Sender<Outgoing>,
    /// Set when a message found the queue full: the stream is then cut, not ended.
    overflowed: Arc<AtomicBool>,
    /// The subscription id, for the log.
    id: String,
}

impl Sink {
    /// Queues `out`; `false` when the stream cannot take it (full: dropped, and said so; or
    /// its client is gone).
    pub(crate) fn offer(&self, out: Outgoing) -> bool {
        match self.queue.try_send(out) {
            Ok(()) => true,
            Err(TrySendError::Full(_)) => {
                self.overflowed.store(true, Ordering::Release);
                tracing::warn!(
                    subscription = %self.id,
                    "dropped a subscriptions/listen stream: its client read none of its last {QUEUED} notifications (queue full); the connection is closed"
                );
                false
            }
            Err(TrySendError::Closed(_)) => false,
        }
    }
}

/// Leaves the registry when the response body is dropped (the client closed it, or it ended).
struct Registered {
    streams: Arc<Streams>,
    key: ListenKey,
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.streams.remove(self.key);
    }
}

/// Opens `listen` on an SSE response: its acknowledgment first, then what the registry
/// queues for it. `Err`: the registry refused it (its error response, to send as any reply).
pub(crate) fn open(streams: &Arc<Streams>, listen: Listen) -> Result<Response, Outgoing> {
    let (queue, messages) = mpsc::channel(QUEUED);
    let overflowed = Arc::new(AtomicBool::new(false));
    let sink = Sink {
        queue,
        overflowed: Arc::clone(&overflowed),
        id: crate::error::shown_id(listen.id()),
    };
    let (key, ack) = streams.open(listen, sink)?;
    let registered = Registered {
        streams: Arc::clone(streams),
        key,
    };
    let body = body(ack, messages, overflowed, registered);
    Ok(sse(StatusCode::OK, body))
}

/// Where a stream's body is: its first event still to send, then its queue.
enum Step {
    First(Outgoing),
    Queue,
    Done,
}

/// The stream's events: `first`, then each queued message, until the registry lets go of
/// the queue. Ended cleanly (cancelled, or closed at shutdown after its response), or with an
/// error that makes hyper close the connection (dropped for a full queue: an abrupt close,
/// which tells the client it did not end gracefully).
fn body(
    first: Outgoing,
    messages: mpsc::Receiver<Outgoing>,
    overflowed: Arc<AtomicBool>,
    registered: Registered,
) -> Body {
    let state = (Step::First(first), messages, overflowed, registered);
    let stream =
        futures::stream::unfold(state, |(step, mut messages, overflowed, reg)| async move {
            let item = match step {
                Step::First(out) => Ok(Bytes::from(events(&out))),
                Step::Queue => match messages.recv().await {
                    Some(out) => Ok(Bytes::from(events(&out))),
                    None if overflowed.load(Ordering::Acquire) => Err(std::io::Error::other(
                        "subscriptions/listen stream dropped: its queue was full",
                    )),
                    None => return None,
                },
                Step::Done => return None,
            };
            let next = if item.is_ok() {
                Step::Queue
            } else {
                Step::Done
            };
            Some((item, (next, messages, overflowed, reg)))
        });
    Body::from_stream(stream)
}

/// The server is shutting down: each stream gets the response that ends it gracefully
/// ("Graceful Closure"), then ends.
pub(crate) fn close_all(streams: &Streams) {
    let closed = streams.close_all();
    if !closed.is_empty() {
        tracing::info!(
            streams = closed.len(),
            "shutting down: closed the subscriptions/listen streams"
        );
    }
    for (sink, out) in closed {
        sink.offer(out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;
    use mcp_protocol::RequestId;
    use serde_json::json;

    /// A stream whose queue is full is dropped: the registry forgets it, and its body, once
    /// read, ends in an error (an abrupt close), not cleanly.
    #[tokio::test]
    async fn a_full_queue_drops_the_stream() {
        let served = crate::core::Served::new(
            Arc::new(crate::tools::diagnostic_tools()),
            crate::info::ServerInfo::default(),
        );
        let streams = Arc::new(Streams::new(&served));
        let filter = json!({"notifications": {"toolsListChanged": true}});
        let listen = crate::core::listen_filter(RequestId::from(7), Some(&filter), true).unwrap();
        let response = open(&streams, listen).expect("opened");
        let mut told = Vec::new();
        for _ in 0..=QUEUED {
            told.push(streams.tools_changed(|sink, out| sink.offer(out)).is_ok());
        }
        // The first QUEUED fit; the next finds it full: dropped, so no stream is left.
        assert_eq!(told.iter().filter(|t| **t).count(), QUEUED);
        assert!(!told[QUEUED]);
        let mut body = response.into_body();
        let mut events = 0;
        let end = loop {
            match body.frame().await {
                Some(Ok(_)) => events += 1,
                Some(Err(e)) => break Some(e),
                None => break None,
            }
        };
        // The acknowledgment and the queued notifications, then the error.
        assert_eq!(events, 1 + QUEUED);
        assert!(end.is_some(), "the body ended cleanly");
    }
}
