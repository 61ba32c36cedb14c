//! What each connection is doing, so that shutdown can tell lost work from none.
//!
//! When the shutdown grace ends, a connection still open is in one of two states. Its
//! request had not fully arrived (a body half sent): nothing was received, so nothing is
//! lost by closing it. Or its request was received (the whole body read) and its reply is
//! not complete (a call still running, a stream still open, a reply not fully written):
//! that reply is cut, which counts as on stdio, a warning naming it and exit status 1.
//!
//! Each connection's service marks its request as begun when hyper hands it over, and as
//! received when the body's last frame was read ([`Watched`]); the POST handler names it
//! ([`name`], which finds the connection through a task-local set by [`serving`]). A
//! connection leaves the registry when its task ends. On the shutdown signal hyper closes
//! idle keep-alive connections and those still sending a head, and closes the others once
//! their reply is written, so a connection left at the end of the grace is one of the two
//! states above.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::http::Request;
use hyper::body::{Body, Frame, SizeHint};
use mcp_protocol::{Incoming, Message};
use parking_lot::Mutex;
use tokio::sync::Notify;
use tokio::task::AbortHandle;

use crate::error::{shown, shown_id};
use crate::params::ServerParams;

/// Where a connection's current request stands. `IDLE` only until its first request
/// begins (a phase never goes back to it): the slow or silent connections the connection
/// cap may close for room ([`Connections::close_oldest_unused`]).
const IDLE: u8 = 0;
const RECEIVING: u8 = 1;
const RECEIVED: u8 = 2;

/// One connection: its peer, where its current request stands, and what it asked.
#[derive(Debug)]
pub(crate) struct Connection {
    peer: SocketAddr,
    phase: AtomicU8,
    /// The current request as the POST handler named it (JSON-RPC method and id); empty
    /// when unnamed. Cleared, not freed, between requests: no allocation per request.
    named: Mutex<String>,
}

impl Connection {
    fn begin(&self) {
        self.phase.store(RECEIVING, Ordering::Release);
        self.named.lock().clear();
    }

    fn received(&self) {
        self.phase.store(RECEIVED, Ordering::Release);
    }

    fn describe(&self) -> String {
        let named = self.named.lock();
        if named.is_empty() {
            "a request".to_owned()
        } else {
            named.clone()
        }
    }
}

/// What the shutdown grace left open.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Left {
    /// Requests received whose replies were cut.
    pub(crate) cut: usize,
    /// Connections whose request had not fully arrived, or that were between requests.
    pub(crate) unreceived: usize,
}

/// The live connections, each with the handle that ends it.
#[derive(Debug, Default)]
pub(crate) struct Connections {
    live: Mutex<Registry>,
    emptied: Notify,
}

#[derive(Debug, Default)]
struct Registry {
    next: u64,
    conns: HashMap<u64, (Arc<Connection>, Option<AbortHandle>)>,
}

impl Connections {
    /// Registers an accepted connection; it leaves the registry when the guard drops.
    pub(crate) fn register(self: &Arc<Self>, peer: SocketAddr) -> Registered {
        let conn = Arc::new(Connection {
            peer,
            phase: AtomicU8::new(IDLE),
            named: Mutex::new(String::new()),
        });
        let mut live = self.live.lock();
        live.next += 1;
        let id = live.next;
        live.conns.insert(id, (Arc::clone(&conn), None));
        Registered {
            connections: Arc::clone(self),
            id,
            conn,
        }
    }

    /// The handle that ends a registered connection's task.
    pub(crate) fn set_abort(&self, id: u64, abort: AbortHandle) {
        if let Some(entry) = self.live.lock().conns.get_mut(&id) {
            entry.1 = Some(abort);
        }
    }

    /// At the connection cap: closes the connection that has waited longest without sending
    /// a whole first request head (a slow or silent client, nothing received from it), so a
    /// new client need not wait for `--http-header-timeout` to free a slot. Connections that
    /// have sent a request are kept. Whether one was closed.
    pub(crate) fn close_oldest_unused(&self) -> bool {
        let oldest = {
            let live = self.live.lock();
            live.conns
                .iter()
                .filter(|(_, (conn, abort))| {
                    abort.is_some() && conn.phase.load(Ordering::Acquire) == IDLE
                })
                .min_by_key(|(id, _)| **id)
                .map(|(_, (conn, abort))| (conn.peer, abort.clone()))
        };
        // Aborted outside the lock: the task's guard takes it when it is dropped.
        let Some((peer, Some(abort))) = oldest else {
            return false;
        };
        tracing::debug!(%peer, "connection cap reached: closed the oldest connection that sent no request");
        abort.abort();
        true
    }

    /// The grace is over: logs what each open connection loses, then closes them all.
    pub(crate) fn close_all(&self) -> Left {
        let mut left = Left::default();
        // Not under the lock: aborting a task may drop it here, and its guard takes the lock.
        let open: Vec<_> = self.live.lock().conns.values().cloned().collect();
        for (conn, abort) in open {
            if conn.phase.load(Ordering::Acquire) == RECEIVED {
                left.cut += 1;
                tracing::warn!(
                    peer = %conn.peer,
                    "shutdown grace over: the reply to {} is cut (the connection is closed without it)",
                    conn.describe()
                );
            } else {
                left.unreceived += 1;
                tracing::info!(
                    peer = %conn.peer,
                    "shutdown grace over: closed a connection whose request had not fully arrived (nothing received is lost)"
                );
            }
            if let Some(abort) = abort {
                abort.abort();
            }
        }
        left
    }

    /// Waits until every registered connection's task has ended.
    pub(crate) async fn closed(&self) {
        loop {
            let emptied = self.emptied.notified();
            if self.live.lock().conns.is_empty() {
                return;
            }
            emptied.await;
        }
    }
}

/// A registered connection; dropping it (its task ended) removes it.
#[derive(Debug)]
pub(crate) struct Registered {
    connections: Arc<Connections>,
    pub(crate) id: u64,
    pub(crate) conn: Arc<Connection>,
}

impl Drop for Registered {
    fn drop(&mut self) {
        let mut live = self.connections.live.lock();
        live.conns.remove(&self.id);
        if live.conns.is_empty() {
            self.connections.emptied.notify_waiters();
        }
    }
}

/// A connection's service: marks each request begun and watches its body for its end.
#[derive(Debug, Clone)]
pub(crate) struct Track<S> {
    inner: S,
    conn: Arc<Connection>,
}

impl<S> Track<S> {
    pub(crate) fn new(inner: S, conn: Arc<Connection>) -> Self {
        Track { inner, conn }
    }
}

impl<S, B> hyper::service::Service<Request<B>> for Track<S>
where
    S: hyper::service::Service<Request<Watched<B>>>,
    B: Body + Unpin,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn call(&self, request: Request<B>) -> Self::Future {
        self.conn.begin();
        let conn = Arc::clone(&self.conn);
        self.inner
            .call(request.map(|body| Watched::new(body, conn)))
    }
}

/// A request body that marks its request received once its last frame was read.
#[derive(Debug)]
pub(crate) struct Watched<B> {
    inner: B,
    conn: Arc<Connection>,
}

impl<B: Body> Watched<B> {
    fn new(inner: B, conn: Arc<Connection>) -> Self {
        // A request without a body (GET, DELETE) is received with its head.
        if inner.is_end_stream() {
            conn.received();
        }
        Watched { inner, conn }
    }
}

impl<B: Body + Unpin> Body for Watched<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if let Poll::Ready(None) = polled {
            self.conn.received();
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

tokio::task_local! {
    /// The connection whose task is running: a task-local rather than a request extension,
    /// which would cost an allocation per request.
    static CURRENT: Arc<Connection>;
}

/// Runs a connection's future with [`name`] able to find the connection.
pub(crate) async fn serving<F: std::future::Future>(conn: Arc<Connection>, future: F) -> F::Output {
    CURRENT.scope(conn, future).await
}

/// Names the request its connection is serving, for the warning if shutdown cuts its reply.
pub(crate) fn name(incoming: &Incoming<ServerParams>) {
    let _ = CURRENT.try_with(|conn| {
        let mut named = conn.named.lock();
        named.clear();
        let _ = match incoming {
            Incoming::Single(Message::Request(r)) => {
                write!(named, "{} (id {})", shown(&r.method), shown_id(&r.id))
            }
            Incoming::Single(Message::Notification(n)) => write!(named, "{}", shown(&n.method)),
            Incoming::Single(Message::Response(_)) => write!(named, "a response"),
            Incoming::Batch(items) => write!(named, "a batch of {} messages", items.len()),
        };
    });
}
