//! One connection's message handling, for the sans-I/O core of both serve loops: each frame
//! parsed, handed to the [`Session`], and turned into the reply to send now or a task that
//! answers later.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use futures::future::BoxFuture;
use mcp_protocol::mcp::methods;
use mcp_protocol::{FrameError, Incoming, InvalidMessage, Message, Outgoing, RequestId, Response};
use tokio::sync::mpsc;
use tokio::task::AbortHandle;

use crate::error::ServerError;
use crate::params::ServerParams;
use crate::session::{Dispatch, Session};

/// Running tool calls by request id, so `notifications/cancelled` can abort them.
pub(crate) type InFlight = Arc<Mutex<HashMap<RequestId, AbortHandle>>>;

/// Where a tool call that did not finish at once runs: the async loop's own runtime, or the
/// blocking loop's background runtime.
pub(crate) trait Spawn {
    /// Makes sure tasks can be spawned (a background runtime may have to start first).
    fn start(&mut self) -> std::io::Result<()> {
        Ok(())
    }

    /// Spawns `task`; only called after [`start`](Self::start) succeeded.
    fn spawn(&mut self, task: BoxFuture<'static, ()>) -> AbortHandle;
}

/// Spawns on the runtime the caller runs in.
#[derive(Debug)]
pub(crate) struct CurrentRuntime;

impl Spawn for CurrentRuntime {
    fn spawn(&mut self, task: BoxFuture<'static, ()>) -> AbortHandle {
        tokio::spawn(task).abort_handle()
    }
}

/// How many tool-call tasks (batches too) are running: each holds a [`Task`] until it ends or
/// is aborted.
#[derive(Debug, Default)]
pub(crate) struct Running(Arc<AtomicUsize>);

impl Running {
    pub(crate) fn any(&self) -> bool {
        self.0.load(Ordering::Acquire) > 0
    }

    fn start(&self) -> Task {
        self.0.fetch_add(1, Ordering::AcqRel);
        Task(Arc::clone(&self.0))
    }
}

/// Counts one running task. Dropped last in the task, so its reply, if any, is queued before:
/// a loop that sees the count drop finds the reply.
struct Task(Arc<AtomicUsize>);

impl Drop for Task {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The reader side's state: the session, the running tool calls, and where they run.
pub(crate) struct Connection<S> {
    pub(crate) session: Session,
    pub(crate) in_flight: InFlight,
    pub(crate) running: Running,
    /// Replies of tool calls that ran in their own task.
    pub(crate) tx: mpsc::Sender<Outgoing>,
    pub(crate) spawner: S,
}

impl<S: Spawn> Connection<S> {
    /// One frame, parsed here with the server's params ([`ServerParams`]): the reply to send
    /// now, if any.
    pub(crate) fn frame(&mut self, frame: mcp_protocol::codec::RawFrame) -> Option<Outgoing> {
        match frame.and_then(|body| mcp_protocol::parse_as::<ServerParams>(&body)) {
            Err(frame_error) => self.frame_error(&frame_error),
            Ok(Incoming::Single(message)) => self.single(message),
            Ok(Incoming::Batch(items)) => self.batch(items),
        }
    }

    fn frame_error(&self, error: &FrameError) -> Option<Outgoing> {
        if error.is_response() {
            // A response is never answered, even an invalid one: its id names one of the
            // peer's requests, which would take the error for its own answer.
            tracing::warn!("ignored an invalid response: {error}");
            return None;
        }
        tracing::warn!("bad frame: {error}");
        Some(Response::error(error.request_id().cloned(), error.to_error_object()).into())
    }

    fn single(&mut self, message: Message<ServerParams>) -> Option<Outgoing> {
        log_incoming(&message);
        let dispatch = self.session.handle(message);
        self.run(dispatch)
    }

    /// Acts on a dispatch; returns the reply to send now, if any.
    fn run(&mut self, dispatch: Dispatch) -> Option<Outgoing> {
        match dispatch {
            Dispatch::Nothing => None,
            Dispatch::Reply(r) => Some(r),
            Dispatch::Cancel(id) => {
                match lock(&self.in_flight).remove(&id) {
                    Some(handle) => {
                        handle.abort();
                        tracing::debug!(id = %crate::error::shown_id(&id), "request cancelled; no reply will be sent");
                    }
                    None => tracing::debug!(
                        id = %crate::error::shown_id(&id),
                        "cancellation for no running request ignored"
                    ),
                }
                None
            }
            Dispatch::Pending(id, work) => {
                if let Err(e) = self.spawner.start() {
                    return Some(cannot_run(id, &e).into());
                }
                let mut running = lock(&self.in_flight);
                if running.contains_key(&id) {
                    let e = ServerError::DuplicateId(id.clone());
                    return Some(Response::error(Some(id), e.to_error_object()).into());
                }
                let in_flight = Arc::clone(&self.in_flight);
                let tx = self.tx.clone();
                let key = id.clone();
                let counted = self.running.start();
                // The lock is held until the handle is stored, so the task cannot finish and
                // look for its entry before it exists.
                let task = self.spawner.spawn(Box::pin(async move {
                    let _counted = counted;
                    let response = work.await;
                    // Absent means cancelled: then no reply is sent.
                    if lock(&in_flight).remove(&key).is_some() {
                        let _ = tx.send(response.into()).await;
                    }
                }));
                running.insert(id, task);
                None
            }
        }
    }

    /// A JSON-RPC batch (§6): only in 2025-03-26; one array of replies, none if all members
    /// were notifications.
    fn batch(
        &mut self,
        items: Vec<Result<Message<ServerParams>, InvalidMessage>>,
    ) -> Option<Outgoing> {
        let version = self.session.version();
        if !version.is_some_and(|v| v.has_batches()) {
            let e = ServerError::BatchNotSupported(version);
            tracing::warn!("{e}");
            return Some(Response::error(None, e.to_error_object()).into());
        }
        let mut ready = Vec::new();
        let mut pending = Vec::new();
        for item in items {
            let dispatch = match item {
                Err(invalid) if invalid.is_response => {
                    tracing::warn!("ignored an invalid response in a batch: {invalid}");
                    continue;
                }
                Err(invalid) => {
                    let error = FrameError::Invalid(invalid);
                    ready.push(
                        Response::error(error.request_id().cloned(), error.to_error_object())
                            .into(),
                    );
                    continue;
                }
                Ok(Message::Request(r)) if r.method == methods::INITIALIZE => {
                    let e = ServerError::InitializeInBatch;
                    ready.push(Response::error(Some(r.id), e.to_error_object()).into());
                    continue;
                }
                Ok(message) => {
                    log_incoming(&message);
                    self.session.handle(message)
                }
            };
            match dispatch {
                // Batch members run together and are answered together; not cancellable.
                Dispatch::Pending(id, work) => pending.push((id, work)),
                other => ready.extend(
                    self.run(other)
                        .into_iter()
                        .flat_map(Outgoing::into_messages),
                ),
            }
        }
        if pending.is_empty() {
            return (!ready.is_empty()).then_some(Outgoing::Batch(ready));
        }
        if let Err(e) = self.spawner.start() {
            ready.extend(
                pending
                    .into_iter()
                    .map(|(id, _)| Message::Response(cannot_run(id, &e))),
            );
            return Some(Outgoing::Batch(ready));
        }
        let tx = self.tx.clone();
        let counted = self.running.start();
        self.spawner.spawn(Box::pin(async move {
            let _counted = counted;
            let done = futures::future::join_all(pending.into_iter().map(|(_, work)| work)).await;
            ready.extend(done.into_iter().map(Message::Response));
            let _ = tx.send(Outgoing::Batch(ready)).await;
        }));
        None
    }
}

/// The reply to a tool call that could not be given a task.
fn cannot_run(id: RequestId, cause: &std::io::Error) -> Response {
    let e = ServerError::CannotRun(cause.to_string());
    tracing::error!("{e}");
    Response::error(Some(id), e.to_error_object())
}

pub(crate) fn log_incoming<P>(message: &Message<P>) {
    match message {
        // Cut: a peer's 100 KiB method name must not become a 100 KiB log line.
        Message::Request(r) => tracing::debug!(
            id = %crate::error::shown_id(&r.id),
            method = %crate::error::shown(&r.method),
            "request"
        ),
        Message::Notification(n) => {
            tracing::debug!(method = %crate::error::shown(&n.method), "notification")
        }
        Message::Response(_) => {}
    }
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
