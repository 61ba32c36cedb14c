//! One POST's messages through a connection's [`Core`], and the POST's response.
//!
//! The core decides; this only carries out its actions: calls run in tasks of their own,
//! cancellations abort them, the client's answers reach the calls that asked. The POST is
//! answered with 202 (nothing to reply), the reply at once, or, while calls run, an SSE stream
//! that carries their requests to the client and then their replies (or a JSON body once they
//! end, for a client that accepts only JSON).
//!
//! What a closed response means differs by era. Legacy: nothing ("Disconnection SHOULD NOT be
//! interpreted as the client cancelling its request", `basic/transports.mdx`): the calls run
//! on, and `notifications/cancelled` aborts them. 2026-07-28: "Closing the SSE response
//! stream MUST be treated by the server as cancellation" (`streamable-http` §Cancellation).

use std::collections::HashMap;
use std::sync::Arc;

use axum::body::Body;
use axum::http::StatusCode;
use axum::response::Response;
use futures::future::AbortHandle;
use futures::StreamExt;
use mcp_protocol::mcp::{modern, ProtocolVersion};
use mcp_protocol::{ErrorCode, Incoming, Message, Outgoing};
use parking_lot::Mutex;
use tokio::sync::mpsc;

use super::budget::Budget;
use super::listen::Streams;
use super::reply::{counted_events, empty, ready_counted, rpc_error, sse, Format, Formats};
use crate::core::{Action, Core, Listen, Served, Work};
use crate::params::ServerParams;
use crate::peer::{Answer, Ask, CallId, Link, Peer, PeerError, Withheld};

/// Messages a POST's running calls may queue before its response stream takes them.
const QUEUED: usize = 64;

/// One connection's core (a legacy session, or one 2026-07-28 request) and the tasks running
/// its calls.
#[derive(Debug)]
pub(crate) struct Conn {
    state: Mutex<State>,
    /// The server's `subscriptions/listen` streams, for a 2026-07-28 request's core.
    listeners: Option<Arc<Streams>>,
}

#[derive(Debug)]
struct State {
    core: Core<Answer>,
    tasks: HashMap<CallId, AbortHandle>,
}

/// What a POST got back from the core.
#[derive(Debug, Default)]
pub(crate) struct Fed {
    /// Messages to send now.
    pub(crate) replies: Vec<Outgoing>,
    /// Calls it started, still running.
    running: Option<Running>,
    /// A `subscriptions/listen` the core accepted, to open on the POST's response.
    listen: Option<Listen>,
}

/// The calls a POST started: their messages, their requests to the client, and (for a
/// 2026-07-28 request) what aborts them when the response is dropped.
#[derive(Debug)]
struct Running {
    messages: mpsc::Receiver<Outgoing>,
    asks: mpsc::Receiver<Ask>,
    tasks: Vec<AbortHandle>,
}

impl Conn {
    /// A legacy session's.
    pub(crate) fn new(served: Arc<Served>) -> Arc<Conn> {
        Arc::new(Conn {
            state: Mutex::new(State {
                core: Core::new(served),
                tasks: HashMap::new(),
            }),
            listeners: None,
        })
    }

    /// One 2026-07-28 request's, which may open a listen stream in `listeners` or tell
    /// theirs of a list change.
    pub(crate) fn stateless(served: Arc<Served>, listeners: Arc<Streams>) -> Arc<Conn> {
        Arc::new(Conn {
            state: Mutex::new(State {
                core: Core::stateless(served),
                tasks: HashMap::new(),
            }),
            listeners: Some(listeners),
        })
    }

    /// The negotiated version, once `initialize` was answered.
    pub(crate) fn version(&self) -> Option<ProtocolVersion> {
        self.state.lock().core.version()
    }

    /// Aborts every running call: the session ended.
    pub(crate) fn end(&self) {
        for (_, task) in self.state.lock().tasks.drain() {
            task.abort();
        }
    }

    /// Hands one POST's messages to the core and carries out its actions.
    pub(crate) fn feed(self: &Arc<Self>, incoming: Incoming<ServerParams>) -> Fed {
        let mut actions = Vec::new();
        let mut fed = Fed::default();
        let mut state = self.state.lock();
        state.core.incoming(incoming, &mut actions);
        let mut links = None;
        for action in actions {
            match action {
                Action::Send(out) => fed.replies.push(out),
                Action::Start(call, work) => {
                    let (messages, asks) = links.get_or_insert_with(|| {
                        let (messages_tx, messages) = mpsc::channel(QUEUED);
                        let (asks_tx, asks) = mpsc::channel(QUEUED);
                        fed.running = Some(Running {
                            messages,
                            asks,
                            tasks: Vec::new(),
                        });
                        (messages_tx, asks_tx)
                    });
                    let peer = Peer::new(call, Link::new(asks.clone(), None));
                    let task = self.spawn(call, work, peer, messages.clone());
                    state.tasks.insert(call, task.clone());
                    if let Some(running) = &mut fed.running {
                        running.tasks.push(task);
                    }
                }
                Action::Abort(call) => {
                    if let Some(task) = state.tasks.remove(&call) {
                        task.abort();
                    }
                }
                Action::Answer(answer, outcome) => {
                    let _ = answer.send(outcome);
                }
                Action::Listen(listen) => fed.listen = Some(listen),
            }
        }
        fed
    }

    /// Runs a call in a task of its own; when it ends, the core makes its reply, which goes
    /// to the POST that started it. The caller holds the state's lock until the task is
    /// registered, so the task cannot end and look for its entry before it exists.
    fn spawn(
        self: &Arc<Self>,
        call: CallId,
        work: Work,
        peer: Peer,
        messages: mpsc::Sender<Outgoing>,
    ) -> AbortHandle {
        let conn = Arc::clone(self);
        let (running, handle) = futures::future::abortable(work(peer));
        tokio::spawn(async move {
            let Ok(result) = running.await else {
                return;
            };
            let mut actions = Vec::new();
            {
                let mut state = conn.state.lock();
                state.tasks.remove(&call);
                state.core.finished(call, result, &mut actions);
            }
            for action in actions {
                if let Action::Send(out) = action {
                    // The client may have gone: then the reply has nowhere to go.
                    let _ = messages.send(out).await;
                }
            }
        });
        handle
    }

    /// A running call's message to the client: what to put on the stream, if the core lets
    /// it be sent (the call is answered at once otherwise). `can_push`: the POST is answered
    /// with an SSE stream, which can carry messages before the response.
    fn ask(&self, ask: Ask, can_push: bool) -> Option<Outgoing> {
        let asked = self
            .state
            .lock()
            .core
            .ask(ask.call, ask.what, ask.answer, can_push);
        if let Some((answer, outcome)) = asked.settle {
            let _ = answer.send(outcome);
        }
        if let Some(answer) = asked.tools_changed {
            let outcome = match &self.listeners {
                Some(listeners) => listeners.tools_changed(|sink, out| sink.offer(out)),
                None => Err(PeerError::Withheld(Withheld::NoSubscription)),
            };
            let _ = answer.send(outcome);
        }
        // One message at most: only a request, a notification or an `input_required` reply.
        // Several come only from list changes on stdio's 2026-07-28 subscriptions; an HTTP
        // core hands its list changes to the server's listen streams (`tools_changed`).
        debug_assert!(asked.send.len() <= 1, "{:?}", asked.send);
        asked.send.into_iter().next()
    }
}

/// The POST's response: 202 when nothing is to be said, the replies at once, or the running
/// calls' messages as they come. `modern`: a 2026-07-28 request (error statuses of their own,
/// and a dropped response cancels).
///
/// Replies over 64 KiB are counted against the reply budget (`replies`) until their client
/// read them: past it, a reply not yet begun gets 503, and one due on an SSE stream is
/// replaced by a -32000 error for its request.
pub(crate) async fn respond(
    conn: Arc<Conn>,
    fed: Fed,
    format: Formats,
    modern: bool,
    replies: &Arc<Budget>,
) -> Response {
    if let Some(listen) = fed.listen {
        return listen_stream(&conn, listen, format, replies);
    }
    let Some(running) = fed.running else {
        return match fed.replies.into_iter().next() {
            None => empty(StatusCode::ACCEPTED),
            Some(out) => reply(&out, format.ready, modern, replies),
        };
    };
    match format.pending {
        Format::Sse => {
            let replies = Arc::clone(replies);
            sse(
                StatusCode::OK,
                stream(conn, running, fed.replies, modern, replies),
            )
        }
        Format::Json => {
            let out = collect(conn, running, fed.replies, modern).await;
            match out {
                Some(out) => reply(&out, Format::Json, modern, replies),
                // Cancelled: no JSON-RPC response, but the POST must be answered.
                None => empty(StatusCode::NO_CONTENT),
            }
        }
    }
}

/// A `subscriptions/listen` the core accepted: its stream, or the registry's refusal.
fn listen_stream(conn: &Conn, listen: Listen, format: Formats, replies: &Arc<Budget>) -> Response {
    let Some(listeners) = &conn.listeners else {
        // Only a request's core (`Conn::stateless`) accepts one.
        let e = crate::error::ServerError::MethodNotFound(crate::core::LISTEN.to_owned());
        return rpc_error(
            StatusCode::NOT_FOUND,
            Some(listen.id().clone()),
            e.to_error_object(),
        );
    };
    if format.pending != Format::Sse {
        return rpc_error(
            StatusCode::NOT_ACCEPTABLE,
            Some(listen.id().clone()),
            mcp_protocol::ErrorObject::new(
                ErrorCode::INVALID_REQUEST,
                "Not Acceptable: subscriptions/listen is answered with an SSE stream; Accept must list text/event-stream",
            ),
        );
    }
    match super::listen::open(listeners, listen) {
        Ok(stream) => stream,
        Err(refused) => reply(&refused, format.ready, true, replies),
    }
}

/// Aborts a 2026-07-28 request's calls when its response is dropped: the client closed it.
struct AbortOnDrop(Vec<AbortHandle>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        for task in &self.0 {
            task.abort();
        }
    }
}

/// The running calls' messages as SSE events: the replies made so far, then each request to
/// the client and each reply as it comes. The stream ends when the last call ends (with no
/// event for a cancelled one: after `notifications/cancelled` no response is sent).
fn stream(
    conn: Arc<Conn>,
    running: Running,
    first: Vec<Outgoing>,
    modern: bool,
    replies: Arc<Budget>,
) -> Body {
    let Running {
        messages,
        asks,
        tasks,
    } = running;
    let guard = modern.then(|| AbortOnDrop(tasks));
    let later = futures::stream::unfold(
        (conn, messages, asks),
        |(conn, mut messages, mut asks)| async move {
            let out = next_message(&conn, &mut messages, &mut asks).await?;
            Some((out, (conn, messages, asks)))
        },
    );
    let body = futures::stream::iter(first)
        .chain(later)
        .flat_map(move |out| {
            let _abort_when_dropped = &guard;
            counted_events(&out, &replies)
        });
    Body::from_stream(body)
}

/// The next message of a POST's running calls: a request to the client one of them makes, or
/// a reply; `None` once every call ended.
async fn next_message(
    conn: &Conn,
    messages: &mut mpsc::Receiver<Outgoing>,
    asks: &mut mpsc::Receiver<Ask>,
) -> Option<Outgoing> {
    loop {
        tokio::select! {
            biased;
            Some(ask) = asks.recv() => {
                if let Some(request) = conn.ask(ask, true) {
                    return Some(request);
                }
            }
            out = messages.recv() => return out,
        }
    }
}

/// For a client that accepts only JSON: waits for the calls' reply; the core refuses their
/// requests to the client (a JSON body cannot carry them), except a 2026-07-28 call's, which
/// end it with an `input_required` reply. `None` if the calls were cancelled.
async fn collect(
    conn: Arc<Conn>,
    running: Running,
    first: Vec<Outgoing>,
    modern: bool,
) -> Option<Outgoing> {
    let Running {
        mut messages,
        mut asks,
        tasks,
    } = running;
    let _abort_when_dropped = modern.then(|| AbortOnDrop(tasks));
    let mut reply = first.into_iter().find(is_reply);
    loop {
        tokio::select! {
            biased;
            Some(ask) = asks.recv() => {
                if let Some(out) = conn.ask(ask, false).filter(is_reply) {
                    reply = Some(out);
                }
            }
            out = messages.recv() => match out {
                Some(out) if is_reply(&out) => reply = Some(out),
                Some(_) => {}
                None => return reply,
            },
        }
    }
}

/// A response (or a batch of them), not a message to the client.
fn is_reply(out: &Outgoing) -> bool {
    !matches!(
        out,
        Outgoing::Single(Message::Request(_) | Message::Notification(_))
    )
}

/// A reply ready to go. An error about no request in particular (a batch this version does
/// not accept) means the POST's input was not accepted: an HTTP error status, with a body
/// whose JSON-RPC error has no id (`basic/transports.mdx` §Sending Messages to the Server).
fn reply(out: &Outgoing, format: Format, modern: bool, replies: &Arc<Budget>) -> Response {
    if let Outgoing::Single(Message::Response(mcp_protocol::Response {
        id: None,
        outcome: Err(e),
    })) = out
    {
        return rpc_error(StatusCode::BAD_REQUEST, None, e.clone());
    }
    ready_counted(status_of(out, modern), format, out, replies)
}

/// The HTTP status of a reply. A legacy JSON-RPC error is an ordinary JSON-RPC exchange
/// (200). 2026-07-28 gives some errors their own status (`streamable-http` §Protocol
/// Version Header): an unknown method MUST get 404, an unsupported version or a missing
/// client capability 400.
fn status_of(out: &Outgoing, modern: bool) -> StatusCode {
    let Outgoing::Single(Message::Response(mcp_protocol::Response {
        outcome: Err(e), ..
    })) = out
    else {
        return StatusCode::OK;
    };
    match e.code {
        _ if !modern => StatusCode::OK,
        ErrorCode::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        ErrorCode(modern::UNSUPPORTED_PROTOCOL_VERSION)
        | ErrorCode(modern::MISSING_REQUIRED_CLIENT_CAPABILITY) => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    }
}
