//! The HTTP transport's task, in place of the stdio writer and reader: it takes each
//! [`Outgoing`] from the same queue and POSTs it. Requests go concurrently, one POST each (at
//! most [`MAX_IN_FLIGHT`]; the rest wait their turn); a reply's messages reach the waiting
//! caller through the shared inbound path; whatever fails one request fails that caller alone.
//! Notifications and replies to the server are posted one at a time, as they come. Once a
//! legacy session is ready it opens the GET stream (`listen.rs`). On `close()` it posts what
//! was queued, ends the session (`DELETE`) and ends the connection.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use mcp_protocol::mcp::methods;
use mcp_protocol::{Message, Notification, Outgoing, Request, RequestId};
use tokio::sync::mpsc;
use tokio::task::{AbortHandle, JoinSet};
use tokio_util::sync::CancellationToken;

use super::session::Conn;
use super::{listen, post};
use crate::client::shared::Shared;
use crate::era::Connected;
use crate::error::CloseCause;
use crate::options::FrameDirection;

/// At most this many requests are on the wire at once; more wait in the queue.
pub(super) const MAX_IN_FLIGHT: usize = 64;

struct Driver {
    conn: Arc<Conn>,
    shared: Arc<Shared>,
    in_flight: JoinSet<()>,
    /// The POST of each request in flight, to close when the request is cancelled.
    by_id: HashMap<RequestId, AbortHandle>,
    /// Requests taken from the queue while [`MAX_IN_FLIGHT`] were on the wire, oldest first:
    /// taking them keeps cancellations and notifications moving meanwhile.
    waiting: VecDeque<Request>,
    /// The legacy GET stream, once the session is ready.
    listen: Option<AbortHandle>,
}

pub(super) async fn run(
    conn: Arc<Conn>,
    mut rx: mpsc::Receiver<Outgoing>,
    shared: Arc<Shared>,
    stop: CancellationToken,
) {
    let mut driver = Driver {
        conn,
        shared,
        in_flight: JoinSet::new(),
        by_id: HashMap::new(),
        waiting: VecDeque::new(),
        listen: None,
    };
    loop {
        while driver.in_flight.len() < MAX_IN_FLIGHT {
            let Some(request) = driver.waiting.pop_front() else {
                break;
            };
            driver.start(request);
        }
        // Past this many waiting requests, the queue (and so every caller) waits.
        let room = driver.waiting.len() < MAX_IN_FLIGHT;
        let frame = tokio::select! {
            biased;
            // The last handle dropped: dropping the JoinSet aborts every POST.
            () = stop.cancelled() => {
                driver.stop_listening();
                return;
            }
            () = driver.shared.stop_writer.cancelled() => break,
            Some(_) = driver.in_flight.join_next(), if !driver.in_flight.is_empty() => continue,
            frame = rx.recv(), if room => frame,
        };
        let Some(frame) = frame else { break };
        for message in frame.into_messages() {
            driver.dispatch(message).await;
        }
    }
    driver.close(&mut rx).await;
}

impl Driver {
    fn within(&self) -> Duration {
        self.shared.options.request_timeout
    }

    async fn dispatch(&mut self, message: Message) {
        self.shared.hook(FrameDirection::Send, &message);
        match message {
            // Started at the top of the loop, when there is room.
            Message::Request(request) => self.waiting.push_back(request),
            Message::Notification(n) if n.method == methods::CANCELLED => {
                self.cancel(n, self.within()).await
            }
            other => {
                let initialized =
                    matches!(&other, Message::Notification(n) if n.method == methods::INITIALIZED);
                if self.post_in_order(other, self.within()).await && initialized {
                    self.start_listening();
                }
            }
        }
    }

    /// Puts a request on the wire, in a POST of its own.
    fn start(&mut self, request: Request) {
        let id = request.id.clone();
        let conn = Arc::clone(&self.conn);
        let shared = Arc::clone(&self.shared);
        let waiter = id.clone();
        let handle = self.in_flight.spawn(async move {
            let outcome = post::exchange(&conn, &shared, Message::Request(request)).await;
            if let Err(e) = outcome {
                if !shared.pending.fail(&waiter, e) {
                    tracing::debug!(id = %waiter, "HTTP request failed after its caller gave up");
                }
            }
        });
        self.by_id.retain(|_, h| !h.is_finished());
        self.by_id.insert(id, handle);
    }

    /// Opens the GET stream for what the server sends outside replies, once the legacy
    /// session is ready (`listen.rs`).
    fn start_listening(&mut self) {
        self.stop_listening();
        if self.conn.session().is_none() {
            return;
        }
        let task = tokio::spawn(listen::run(
            Arc::clone(&self.conn),
            Arc::clone(&self.shared),
        ));
        self.listen = Some(task.abort_handle());
    }

    fn stop_listening(&mut self) {
        if let Some(task) = self.listen.take() {
            task.abort();
        }
    }

    /// Closes the cancelled request's POST (2026-07-28: that is the cancellation, and no
    /// `notifications/cancelled` is sent over HTTP); legacy servers also get the notification.
    async fn cancel(&mut self, n: Notification, within: Duration) {
        let target = n
            .params
            .as_ref()
            .and_then(|p| p.get("requestId"))
            .and_then(|v| serde_json::from_value::<RequestId>(v.clone()).ok());
        let mut never_sent = false;
        if let Some(id) = target {
            if let Some(post) = self.by_id.remove(&id) {
                post.abort();
            }
            // A request that never left is dropped, and the server hears nothing of it.
            let waiting = self.waiting.len();
            self.waiting.retain(|r| r.id != id);
            never_sent = self.waiting.len() < waiting;
        }
        let modern = matches!(
            self.shared.connected.lock().as_ref(),
            Some(Connected::Modern { .. })
        );
        if !modern && !never_sent {
            self.post_in_order(Message::Notification(n), within).await;
        }
    }

    /// Posts a notification or a reply before anything queued after it; bounded by `within`.
    /// True if the server accepted it.
    async fn post_in_order(&self, message: Message, within: Duration) -> bool {
        let label = match &message {
            Message::Notification(n) => n.method.clone(),
            _ => "a reply".to_owned(),
        };
        match tokio::time::timeout(within, post::exchange(&self.conn, &self.shared, message)).await
        {
            Ok(Ok(())) => return true,
            Ok(Err(e)) => tracing::warn!("posting {label} failed: {e}"),
            Err(_) => tracing::warn!("posting {label} got no answer within {within:?}"),
        }
        false
    }

    /// `close()`: what was queued before it (a cancellation, a reply) is posted, requests in
    /// flight are dropped, the session is ended, and every waiting caller hears why.
    async fn close(mut self, rx: &mut mpsc::Receiver<Outgoing>) {
        let grace = self.shared.options.close_grace;
        while let Ok(frame) = rx.try_recv() {
            for message in frame.into_messages() {
                if matches!(message, Message::Request(_)) {
                    continue; // its caller is failed below
                }
                self.shared.hook(FrameDirection::Send, &message);
                match message {
                    Message::Notification(n) if n.method == methods::CANCELLED => {
                        self.cancel(n, grace).await
                    }
                    other => {
                        self.post_in_order(other, grace).await;
                    }
                }
            }
        }
        self.in_flight.abort_all();
        self.stop_listening();
        self.conn.end_session(&self.shared, grace).await;
        self.shared.writer_done.cancel();
        self.shared.finish(CloseCause::ClientClosed).await;
    }
}
