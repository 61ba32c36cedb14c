//! The I/O loop: one reader, one writer, and tasks only for tool calls that are still running.
//!
//! Messages are handled in arrival order on the reader; a reply that is ready at once is
//! queued immediately, so the common case spawns nothing. One writer task owns the output: it
//! takes every reply already queued, encodes them into one buffer, and flushes before it waits
//! again (one `write` for a burst). The queue is bounded, so a client that stops reading
//! replies stops the server reading requests instead of growing its memory.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::sync::{Arc, Mutex, PoisonError};

use futures::{FutureExt, SinkExt, StreamExt};
use mcp_protocol::mcp::methods;
use mcp_protocol::{
    FrameError, Incoming, InvalidMessage, Message, Outgoing, RequestId, Response, StdioCodec,
};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;
use tokio::task::AbortHandle;
use tokio_util::codec::{FramedRead, FramedWrite};

use crate::config::Config;
use crate::error::ServerError;
use crate::session::{Dispatch, ServerInfo, Session};
use crate::tools::ToolRegistry;

/// Why [`serve`] returned.
#[derive(Debug)]
pub enum Exit {
    /// Input ended; everything read was answered and flushed.
    InputClosed,
    /// The shutdown future fired (SIGTERM/SIGINT); everything read was answered and flushed.
    Shutdown,
    /// The output was closed by the peer (EPIPE): nobody is listening any more.
    OutputClosed,
    /// Answering what was read did not finish within `Config::shutdown_grace`.
    DrainTimedOut,
    /// Reading input failed.
    ReadFailed(io::Error),
}

type InFlight = Arc<Mutex<HashMap<RequestId, AbortHandle>>>;

/// Replies handed to the writer together (those of one burst of input, or one tool call's).
type Replies = Vec<Outgoing>;

/// At most this many replies wait in one batch before they go to the writer.
const REPLY_BATCH: usize = 64;

/// Serves one MCP connection over `input`/`output` until input ends, `shutdown` completes, or
/// the output is closed. Returns `Err` only if writing fails for a reason other than a closed
/// pipe.
pub async fn serve<R, W, S>(
    input: R,
    output: W,
    config: &Config,
    tools: Arc<ToolRegistry>,
    shutdown: S,
) -> io::Result<Exit>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
    S: Future<Output = ()>,
{
    let codec = StdioCodec::new(config.framing)
        .with_max_message_bytes(config.max_message_bytes)
        .with_max_header_bytes(config.max_header_bytes);
    let mut reader = FramedRead::with_capacity(input, codec.clone(), 64 * 1024);
    let mut sink = FramedWrite::new(output, codec);
    sink.set_backpressure_boundary(256 * 1024);
    // The queue holds batches of up to REPLY_BATCH replies: size it so that at most
    // `outgoing_queue` replies wait, whatever the batch sizes.
    let (tx, rx) = mpsc::channel::<Replies>((config.outgoing_queue / REPLY_BATCH).max(1));
    let writer = tokio::spawn(write_loop(sink, rx));

    let mut conn = Connection {
        session: Session::new(tools, ServerInfo::default()),
        in_flight: InFlight::default(),
        tx,
    };
    // Created once, not per message: the writer is gone (the peer closed our output), so stop
    // now rather than at the next read.
    tokio::pin!(shutdown);
    let watcher = conn.tx.clone();
    let exit = {
        let output_closed = watcher.closed();
        tokio::pin!(output_closed);
        loop {
            let mut item = tokio::select! {
                biased;
                () = &mut shutdown => break Exit::Shutdown,
                () = &mut output_closed => break Exit::OutputClosed,
                item = reader.next() => item,
            };
            // Handle every frame that is already readable before waiting again, and hand their
            // replies to the writer as one batch: one wake-up and one write for a burst.
            let mut replies = Vec::new();
            let end = loop {
                match item {
                    None => break Some(Exit::InputClosed),
                    Some(Err(e)) => break Some(Exit::ReadFailed(e)),
                    Some(Ok(frame)) => replies.extend(conn.frame(frame)),
                }
                if replies.len() >= REPLY_BATCH {
                    break None;
                }
                match reader.next().now_or_never() {
                    Some(next) => item = next,
                    None => break None,
                }
            };
            if !replies.is_empty() {
                let sent = tokio::select! {
                    biased;
                    () = &mut shutdown => break Exit::Shutdown,
                    sent = conn.tx.send(replies) => sent,
                };
                if sent.is_err() {
                    break Exit::OutputClosed;
                }
            }
            if let Some(exit) = end {
                break exit;
            }
        }
    };
    drop(watcher);
    match &exit {
        Exit::ReadFailed(e) => tracing::error!("reading input failed: {e}"),
        other => tracing::debug!(?other, "input loop ended"),
    }

    // The writer ends once every sender is gone: ours now, and each running tool's when it
    // finishes. Waiting for it is waiting for "everything read is answered and flushed".
    let Connection { in_flight, tx, .. } = conn;
    drop(tx);
    let drained = tokio::time::timeout(config.shutdown_grace, writer).await;
    let written = match drained {
        Err(_elapsed) => {
            let running = lock(&in_flight).drain().map(|(_, h)| h.abort()).count();
            tracing::warn!(
                running,
                grace = ?config.shutdown_grace,
                "gave up waiting for replies to be answered and flushed"
            );
            return Ok(Exit::DrainTimedOut);
        }
        Ok(Err(join_error)) => return Err(io::Error::other(join_error)),
        Ok(Ok(written)) => written,
    };
    match written {
        Ok(()) => Ok(exit),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
            tracing::debug!("output closed by the peer; exiting");
            Ok(Exit::OutputClosed)
        }
        Err(e) => Err(e),
    }
}

/// The reader side's state: the session and the running tool calls.
struct Connection {
    session: Session,
    in_flight: InFlight,
    tx: mpsc::Sender<Replies>,
}

impl Connection {
    /// One decoded frame: the reply to send now, if any.
    fn frame(&mut self, frame: mcp_protocol::codec::DecodedFrame) -> Option<Outgoing> {
        match frame {
            Err(frame_error) => Some(self.frame_error(&frame_error)),
            Ok(Incoming::Single(message)) => self.single(message),
            Ok(Incoming::Batch(items)) => self.batch(items),
        }
    }

    fn frame_error(&self, error: &FrameError) -> Outgoing {
        tracing::warn!("bad frame: {error}");
        Response::error(error.request_id().cloned(), error.to_error_object()).into()
    }

    fn single(&mut self, message: Message) -> Option<Outgoing> {
        log_incoming(&message);
        let dispatch = self.session.handle(message);
        self.run(dispatch).map(Outgoing::from)
    }

    /// Acts on a dispatch; returns the reply to send now, if any.
    fn run(&mut self, dispatch: Dispatch) -> Option<Response> {
        match dispatch {
            Dispatch::Nothing => None,
            Dispatch::Reply(r) => Some(r),
            Dispatch::Cancel(id) => {
                match lock(&self.in_flight).remove(&id) {
                    Some(handle) => {
                        handle.abort();
                        tracing::debug!(%id, "request cancelled; no reply will be sent");
                    }
                    None => tracing::debug!(%id, "cancellation for no running request ignored"),
                }
                None
            }
            Dispatch::Pending(id, work) => {
                let mut running = lock(&self.in_flight);
                if running.contains_key(&id) {
                    let e = ServerError::DuplicateId(id.clone());
                    return Some(Response::error(Some(id), e.to_error_object()));
                }
                let in_flight = Arc::clone(&self.in_flight);
                let tx = self.tx.clone();
                let key = id.clone();
                // The lock is held until the handle is stored, so the task cannot finish and
                // look for its entry before it exists.
                let task = tokio::spawn(async move {
                    let response = work.await;
                    // Absent means cancelled: then no reply is sent.
                    if lock(&in_flight).remove(&key).is_some() {
                        let _ = tx.send(vec![response.into()]).await;
                    }
                });
                running.insert(id, task.abort_handle());
                None
            }
        }
    }

    /// A JSON-RPC batch (§6): only in 2025-03-26; one array of replies, none if all members
    /// were notifications.
    fn batch(&mut self, items: Vec<Result<Message, InvalidMessage>>) -> Option<Outgoing> {
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
                Err(invalid) => {
                    let error = FrameError::Invalid(invalid);
                    ready.push(Response::error(
                        error.request_id().cloned(),
                        error.to_error_object(),
                    ));
                    continue;
                }
                Ok(Message::Request(r)) if r.method == methods::INITIALIZE => {
                    let e = ServerError::InitializeInBatch;
                    ready.push(Response::error(Some(r.id), e.to_error_object()));
                    continue;
                }
                Ok(message) => {
                    log_incoming(&message);
                    self.session.handle(message)
                }
            };
            match dispatch {
                // Batch members run together and are answered together; not cancellable.
                Dispatch::Pending(_, work) => pending.push(work),
                other => ready.extend(self.run(other)),
            }
        }
        if pending.is_empty() {
            return (!ready.is_empty()).then(|| batch_reply(ready));
        }
        let tx = self.tx.clone();
        tokio::spawn(async move {
            ready.extend(futures::future::join_all(pending).await);
            let _ = tx.send(vec![batch_reply(ready)]).await;
        });
        None
    }
}

fn batch_reply(responses: Vec<Response>) -> Outgoing {
    Outgoing::Batch(responses.into_iter().map(Message::Response).collect())
}

fn log_incoming(message: &Message) {
    match message {
        Message::Request(r) => tracing::debug!(id = %r.id, method = %r.method, "request"),
        Message::Notification(n) => tracing::debug!(method = %n.method, "notification"),
        Message::Response(_) => {}
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Owns the output: encodes every queued reply into one buffer and flushes once per burst.
async fn write_loop<W: AsyncWrite + Unpin>(
    mut sink: FramedWrite<W, StdioCodec>,
    mut rx: mpsc::Receiver<Replies>,
) -> io::Result<()> {
    while let Some(first) = rx.recv().await {
        for reply in first {
            sink.feed(reply).await?;
        }
        while let Ok(next) = rx.try_recv() {
            for reply in next {
                sink.feed(reply).await?;
            }
        }
        sink.flush().await?;
        tracing::trace!("flushed replies");
    }
    Ok(())
}
