//! The protocol core that every transport drives: messages in, [`Action`]s out (STYLE.md §13:
//! rustls's `read_tls`/`process_new_packets`, quinn-proto). It decides the lifecycle and the
//! era of each request, batches, duplicate ids, cancellation, and what a running call sends
//! the client (requests, 2026-07-28 input requests, notifications: `outbound`); a transport
//! only moves bytes and runs the calls it is handed, and tells the core when one finishes
//! ([`Core::finished`]). It owns no channel, task, clock or socket.

mod calls;
mod lifecycle;
mod outbound;
mod subscriptions;

use std::collections::BTreeSet;
use std::sync::Arc;

use futures::future::BoxFuture;
use mcp_protocol::codec::RawFrame;
use mcp_protocol::mcp::{methods, CallToolResult, ProtocolVersion};
use mcp_protocol::{
    FrameError, Incoming, InvalidMessage, Message, Notification, Outgoing, Response,
};
use parking_lot::Mutex;
use serde_json::Value;

use self::calls::Calls;
pub(crate) use self::lifecycle::Era;
use self::lifecycle::{Handled, Kind, Lifecycle};
#[cfg(test)]
pub(crate) use self::subscriptions::filter as listen_filter;
pub(crate) use self::subscriptions::{Listen, ListenKey, Listeners, LISTEN};
use crate::error::ServerError;
use crate::info::ServerInfo;
use crate::params::ServerParams;
use crate::peer::{CallId, Peer, PeerError, Sending, Withheld};
use crate::tools::ToolSet;

/// A tool call still running, as the core hands it to a transport: given the [`Peer`] it may
/// ask the client through, it gives the tool's result.
pub(crate) type Work = Box<dyn FnOnce(Peer) -> BoxFuture<'static, CallToolResult> + Send>;

/// Added to the instructions when the diagnostic tools are served.
const DIAGNOSTIC_INSTRUCTIONS: &str = " Diagnostic tools are enabled: each diag_* tool makes the \
client exercise one MCP feature (progress, cancellation, logging, sampling, elicitation, roots, \
tool list changes, error, large and image results); call one when the user asks to test it.";

/// What every connection's core serves: the tools and who the server is.
#[derive(Debug)]
pub(crate) struct Served {
    pub(crate) tools: Arc<ToolSet>,
    pub(crate) info: ServerInfo,
    /// `info` as 2026-07-28 result `_meta` carries it: built once, not per request.
    pub(crate) modern_info: Value,
    /// The tools toggled by 2026-07-28 requests each served on its own (Streamable HTTP): they
    /// share no connection, so what `diag_tool_list_changed` changes there is the server's
    /// list, for every such request ([`crate::peer::Peer::toggle_tool`]).
    pub(crate) stateless_toggled: Mutex<BTreeSet<String>>,
}

impl Served {
    pub(crate) fn new(tools: Arc<ToolSet>, mut info: ServerInfo) -> Arc<Served> {
        if tools.is_diagnostic() {
            if let Some(instructions) = &mut info.instructions {
                instructions.push_str(DIAGNOSTIC_INSTRUCTIONS);
            }
        }
        let modern_info = crate::modern::server_info(&info);
        Arc::new(Served {
            tools,
            info,
            modern_info,
            stateless_toggled: Mutex::new(BTreeSet::new()),
        })
    }
}

/// The most members a JSON-RPC batch may hold (batches exist only in 2025-03-26; JSON-RPC
/// 2.0 §6 sets no bound). A longer batch is refused as a whole with one -32600 error without
/// an id (`data.maxBatchLength` says the bound), and its members after the bound are not
/// even read. One rule for every transport: stdio and HTTP both parse through [`parse`].
pub(crate) const MAX_BATCH: usize = 1024;

/// One frame's or body's bytes as the server reads them: its params, its batch bound.
pub(crate) fn parse(bytes: &[u8]) -> Result<Incoming<ServerParams>, FrameError> {
    mcp_protocol::parse_bounded::<ServerParams>(bytes, MAX_BATCH)
}

/// What a transport must do. `R` is whatever the transport hands a running call's answer to
/// ([`Core::ask`]); the core only keeps it.
pub(crate) enum Action<R> {
    /// Write this message: a reply, a batch of replies, or a message to the client.
    Send(Outgoing),
    /// Run this call, then report its result with [`Core::finished`].
    Start(CallId, Work),
    /// Stop running this call and forget it: it was cancelled, no reply is sent.
    Abort(CallId),
    /// The client answered a request a running call sent it: hand the answer over.
    Answer(R, Result<Value, PeerError>),
    /// Open this accepted `subscriptions/listen` on the request's own response stream, in
    /// the transport's [`Listeners`] (only from [`Core::stateless`]).
    Listen(Listen),
}

impl<R> std::fmt::Debug for Action<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Action::Send(out) => f.debug_tuple("Send").field(out).finish(),
            Action::Start(call, _) => f.debug_tuple("Start").field(call).finish(),
            Action::Abort(call) => f.debug_tuple("Abort").field(call).finish(),
            Action::Answer(_, answer) => f.debug_tuple("Answer").field(answer).finish(),
            Action::Listen(listen) => f.debug_tuple("Listen").field(listen).finish(),
        }
    }
}

/// What a running call's message to the client comes to ([`Core::ask`]).
#[derive(Debug)]
pub(crate) struct Asked<R> {
    /// The messages to write: the request or notification (a list change: one for each
    /// 2026-07-28 subscription that asked), or for a 2026-07-28 call that needs input, its
    /// `input_required` result.
    pub(crate) send: Vec<Outgoing>,
    /// The answer to give the call now (once `send` is queued); `None` while the client's
    /// response is awaited.
    pub(crate) settle: Option<(R, Result<Value, PeerError>)>,
    /// A 2026-07-28 tool list change of a request served on its own: the transport hands it
    /// to its [`Listeners`] ([`Listeners::tools_changed`]), whose outcome is the answer.
    pub(crate) tools_changed: Option<R>,
}

impl<R> Asked<R> {
    fn settled(answer: R, outcome: Result<Value, PeerError>) -> Self {
        Asked {
            send: Vec::new(),
            settle: Some((answer, outcome)),
            tools_changed: None,
        }
    }
}

/// One connection's protocol state (one legacy session, or one 2026-07-28 request).
pub(crate) struct Core<R> {
    lifecycle: Lifecycle,
    calls: Calls<R>,
}

impl<R> std::fmt::Debug for Core<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Core")
            .field("lifecycle", &self.lifecycle)
            .finish_non_exhaustive()
    }
}

impl<R> Core<R> {
    /// The core of one legacy HTTP session.
    pub(crate) fn new(served: Arc<Served>) -> Self {
        Core {
            lifecycle: Lifecycle::new(served, Kind::Session),
            calls: Calls::default(),
        }
    }

    /// The core of one 2026-07-28 request served on its own (Streamable HTTP): with
    /// diagnostic tools its `subscriptions/listen` is opened by the transport
    /// ([`Action::Listen`]) and its tool list changes are the server's.
    pub(crate) fn stateless(served: Arc<Served>) -> Self {
        Core {
            lifecycle: Lifecycle::new(served, Kind::Stateless),
            calls: Calls::default(),
        }
    }

    /// The core of a connection whose messages share one channel for its whole life (stdio),
    /// which can also carry 2026-07-28 `subscriptions/listen` streams.
    pub(crate) fn on_stream(served: Arc<Served>) -> Self {
        Core {
            lifecycle: Lifecycle::new(served, Kind::Stream),
            calls: Calls::default(),
        }
    }

    /// The negotiated version, once `initialize` was answered.
    pub(crate) fn version(&self) -> Option<ProtocolVersion> {
        self.lifecycle.version()
    }

    /// One frame from a byte stream (stdio), parsed with the server's params.
    pub(crate) fn frame(&mut self, frame: RawFrame, out: &mut Vec<Action<R>>) {
        match frame.and_then(|body| parse(&body)) {
            Ok(incoming) => self.incoming(incoming, out),
            Err(error) if error.is_response() => {
                // A response is never answered, even an invalid one: its id names one of the
                // peer's requests, which would take the error for its own answer.
                tracing::warn!("ignored an invalid response: {error}");
            }
            Err(error) => {
                tracing::warn!("bad frame: {error}");
                let id = error.request_id().cloned();
                out.push(Action::Send(
                    Response::error(id, error.to_error_object()).into(),
                ));
            }
        }
    }

    /// One parsed message or batch.
    pub(crate) fn incoming(&mut self, incoming: Incoming<ServerParams>, out: &mut Vec<Action<R>>) {
        match incoming {
            Incoming::Single(message) => {
                log_incoming(&message);
                let handled = self.lifecycle.handle(message);
                self.act(handled, None, out);
            }
            Incoming::Batch(items) => self.batch(items, out),
        }
    }

    /// A call ended with `result`: its reply, or for the last member of a batch the batch's,
    /// goes to `out`. Nothing for a call the core no longer knows (it was cancelled).
    pub(crate) fn finished(
        &mut self,
        call: CallId,
        result: CallToolResult,
        out: &mut Vec<Action<R>>,
    ) {
        let Some(running) = self.calls.end(call, out) else {
            tracing::debug!(?call, "a cancelled call ended; no reply is sent");
            return;
        };
        let reply = self
            .lifecycle
            .tool_reply(running.id, result, running.version);
        self.answer(running.batch, reply, out);
    }

    /// A call could not be run (its transport could not give it a task): its request gets an
    /// internal error, or for a batch member the batch's reply its error.
    pub(crate) fn cannot_run(&mut self, call: CallId, why: String, out: &mut Vec<Action<R>>) {
        let Some(running) = self.calls.end(call, out) else {
            return;
        };
        let e = ServerError::CannotRun(why);
        tracing::error!("{e}");
        let reply = Response::error(Some(running.id), e.to_error_object()).into();
        self.answer(running.batch, reply, out);
    }

    /// A call's reply: sent, or for a batch member kept until the batch is complete.
    fn answer(&mut self, batch: Option<calls::Slot>, reply: Outgoing, out: &mut Vec<Action<R>>) {
        match batch {
            None => out.push(Action::Send(reply)),
            Some(slot) => {
                if let Some(batch) = self.calls.fill(slot, reply.into_messages()) {
                    out.push(Action::Send(Outgoing::Batch(batch)));
                }
            }
        }
    }

    /// A running call sends the client a request or a notification (or changes which tools
    /// this connection offers); `can_push`:
    /// whether the transport has a stream to carry it (an HTTP POST answered with JSON has
    /// not). What to write, and the answer to give the call now, if any: a request waiting on
    /// the client keeps `answer` until the client's response ([`Action::Answer`]).
    pub(crate) fn ask(
        &mut self,
        call: CallId,
        what: Sending,
        answer: R,
        can_push: bool,
    ) -> Asked<R> {
        let (method, params) = match what {
            Sending::Message { method, params } => (method, params),
            Sending::ToggleTool(name) => {
                let listed = self.lifecycle.toggle_tool(name);
                return Asked::settled(answer, Ok(Value::Bool(listed)));
            }
        };
        let Some(version) = self.calls.get(call).map(|r| r.version) else {
            return Asked::settled(answer, Err(PeerError::Closed));
        };
        let is_notification = method.starts_with("notifications/");
        if version.is_modern() && !is_notification {
            return self.modern_ask(call, method, params, answer);
        }
        // Not on the request's own stream, so whether it has one does not matter.
        if method == outbound::TOOLS_LIST_CHANGED && version.is_modern() {
            return self.list_changed_on_subscriptions(answer);
        }
        if !can_push {
            return Asked::settled(answer, Err(PeerError::NoStream));
        }
        if is_notification {
            let declared = self.lifecycle.declared();
            let level = self.lifecycle.log_level();
            let meta = self.calls.get_mut(call).map(|r| &mut r.meta);
            let decided = meta.map_or(Err(PeerError::Closed), |meta| {
                outbound::notification(&method, params, meta, declared, level)
            });
            return match decided {
                Ok(params) => Asked {
                    send: vec![Message::Notification(Notification { method, params }).into()],
                    settle: Some((answer, Ok(Value::Null))),
                    tools_changed: None,
                },
                Err(why) => Asked::settled(answer, Err(why)),
            };
        }
        if let Some(capability) = outbound::needed_capability(&method) {
            if !self.lifecycle.client_declared(capability) {
                return Asked::settled(answer, Err(PeerError::NotDeclared(capability, method)));
            }
        }
        let id = self.calls.asked(call, answer);
        tracing::debug!(id = %id, method, "request to the client");
        let request = mcp_protocol::Request { id, method, params };
        Asked {
            send: vec![Message::Request(request).into()],
            settle: None,
            tools_changed: None,
        }
    }

    /// A 2026-07-28 list change: sent on each open `subscriptions/listen` stream that asked
    /// for it (`basic/patterns/subscriptions.mdx`), never on the request's own stream.
    fn list_changed_on_subscriptions(&mut self, answer: R) -> Asked<R> {
        let Some(send) = self.lifecycle.tools_changed() else {
            return Asked {
                send: Vec::new(),
                settle: None,
                tools_changed: Some(answer),
            };
        };
        if send.is_empty() {
            return Asked::settled(answer, Err(PeerError::Withheld(Withheld::NoSubscription)));
        }
        Asked {
            send,
            settle: Some((answer, Ok(Value::Null))),
            tools_changed: None,
        }
    }

    /// A 2026-07-28 call's request to the client (`basic/patterns/mrtr.mdx`): answered from
    /// the retry's `inputResponses`, or the call ends with an `input_required` result that
    /// asks for it.
    fn modern_ask(
        &mut self,
        call: CallId,
        method: String,
        params: Option<Value>,
        answer: R,
    ) -> Asked<R> {
        let decided = match self.calls.get(call).and_then(|r| r.meta.modern.as_ref()) {
            Some(meta) => outbound::modern_ask(&method, params, meta),
            None => Err(PeerError::Stateless),
        };
        match decided {
            Ok(outbound::ModernAsk::Answered(value)) => Asked::settled(answer, Ok(value)),
            Ok(outbound::ModernAsk::InputRequired(result)) => {
                let mut unused = Vec::new();
                let Some(running) = self.calls.end(call, &mut unused) else {
                    return Asked::settled(answer, Err(PeerError::Closed));
                };
                tracing::debug!(method, "input_required: the client retries with the answer");
                let value = crate::modern::input_required(result, self.lifecycle.modern_info());
                Asked {
                    send: vec![Response::success(running.id, value).into()],
                    settle: Some((answer, Err(PeerError::InputRequired))),
                    tools_changed: None,
                }
            }
            Err(why) => Asked::settled(answer, Err(why)),
        }
    }

    /// Acts on what the lifecycle made of a message; `batch` is the batch it is a member of.
    fn act(&mut self, handled: Handled, batch: Option<u64>, out: &mut Vec<Action<R>>) {
        match handled {
            Handled::Nothing => {}
            Handled::Reply(reply) => match batch {
                None => out.push(Action::Send(reply)),
                Some(batch) => self.calls.ready(batch, reply.into_messages()),
            },
            Handled::Run(id, work, version, meta) => {
                match self.calls.start(id, version, batch, meta) {
                    Ok(call) => out.push(Action::Start(call, work)),
                    Err(id) => {
                        let e = ServerError::DuplicateId(id.clone());
                        let reply = Response::error(Some(id), e.to_error_object()).into();
                        self.act(Handled::Reply(reply), batch, out);
                    }
                }
            }
            Handled::Cancel(id) => self.calls.cancel(&id, out),
            // A request served on its own is never in a batch.
            Handled::Listen(listen) => out.push(Action::Listen(listen)),
            Handled::Answer(response) => self.calls.answered(response, out),
        }
    }

    /// A JSON-RPC batch (§6): only in 2025-03-26; one array of replies, none if all members
    /// were notifications. Members run together and are answered together; they are not
    /// cancellable.
    fn batch(
        &mut self,
        items: Vec<Result<Message<ServerParams>, InvalidMessage>>,
        out: &mut Vec<Action<R>>,
    ) {
        let version = self.lifecycle.version();
        if !version.is_some_and(|v| v.has_batches()) {
            let e = ServerError::BatchNotSupported(version);
            tracing::warn!("{e}");
            out.push(Action::Send(
                Response::error(None, e.to_error_object()).into(),
            ));
            return;
        }
        let batch = self.calls.open_batch();
        for item in items {
            let handled = match item {
                Err(invalid) if invalid.is_response => {
                    tracing::warn!("ignored an invalid response in a batch: {invalid}");
                    Handled::Nothing
                }
                Err(invalid) => {
                    let error = FrameError::Invalid(invalid);
                    let id = error.request_id().cloned();
                    Handled::Reply(Response::error(id, error.to_error_object()).into())
                }
                Ok(Message::Request(r)) if r.method == methods::INITIALIZE => {
                    let e = ServerError::InitializeInBatch;
                    Handled::Reply(Response::error(Some(r.id), e.to_error_object()).into())
                }
                Ok(message) => {
                    log_incoming(&message);
                    self.lifecycle.handle(message)
                }
            };
            self.act(handled, Some(batch), out);
        }
        if let Some(replies) = self.calls.seal(batch) {
            if !replies.is_empty() {
                out.push(Action::Send(Outgoing::Batch(replies)));
            }
        }
    }
}

fn log_incoming<P>(message: &Message<P>) {
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
        Message::Response(r) => tracing::debug!(
            id = ?r.id.as_ref().map(crate::error::shown_id),
            "response"
        ),
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;

#[cfg(test)]
#[path = "diag_tests.rs"]
mod diag_tests;
