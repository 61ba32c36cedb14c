//! The client on the other end, as a running tool call sees it: a [`Peer`] sends it requests
//! (`roots/list`, `sampling/createMessage`, `elicitation/create`, `ping`) and waits for the
//! answers (`basic/index.mdx`: either side may send requests).
//!
//! A peer is only a handle: its requests travel to the transport that runs the call (an
//! [`Ask`] on the [`Link`]), which asks the [`Core`](crate::core::Core) for an id and writes
//! the request; the core routes the client's response back. So which requests may be sent,
//! with which ids, and where answers go is decided once, in the core.

use std::fmt;
use std::sync::Arc;

use mcp_protocol::ErrorObject;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

/// One call the core asked a transport to run (a tool call still running, or a batch member).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CallId(pub(crate) u64);

/// Where a transport receives its calls' requests to the client.
#[derive(Clone)]
pub(crate) struct Link {
    asks: mpsc::Sender<Ask>,
    /// Called once a request is queued, for a transport that does not wait on the queue
    /// itself (the blocking stdio loop's wake-up).
    notify: Option<Arc<dyn Fn() + Send + Sync>>,
}

impl Link {
    pub(crate) fn new(
        asks: mpsc::Sender<Ask>,
        notify: Option<Arc<dyn Fn() + Send + Sync>>,
    ) -> Self {
        Link { asks, notify }
    }
}

/// The answer a [`Peer::request`] waits for.
pub(crate) type Answer = oneshot::Sender<Result<Value, PeerError>>;

/// A running call's request to the client, on its way to the transport.
#[derive(Debug)]
pub(crate) struct Ask {
    pub(crate) call: CallId,
    pub(crate) what: Sending,
    pub(crate) answer: Answer,
}

/// What a running call asks the core for.
#[derive(Debug)]
pub(crate) enum Sending {
    /// Send this request or notification to the client.
    Message {
        method: String,
        params: Option<Value>,
    },
    /// Offer the tool of this name on this connection if it was not, or stop offering it
    /// ([`crate::Tool::listed`] says which it starts as); answered with whether it is now.
    ToggleTool(String),
}

/// Why a request to the client got no result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PeerError {
    /// The client did not declare the capability the method needs (`initialize`'s
    /// `capabilities`): the server MUST NOT send it (`basic/lifecycle.mdx`, Capability
    /// Negotiation).
    #[error("the client did not declare the `{0}` capability that {1} needs")]
    NotDeclared(&'static str, String),
    /// A 2026-07-28 request is answered on its own: that revision has no server requests, and
    /// only `roots/list`, `sampling/createMessage` and `elicitation/create` can be asked as
    /// input requests (`basic/patterns/mrtr.mdx`).
    #[error("a 2026-07-28 request cannot send this request to the client (only roots, sampling and elicitation travel as input requests)")]
    Stateless,
    /// Over Streamable HTTP, the POST being answered asked for a JSON body, which cannot carry
    /// a request before the response.
    #[error("the client accepts only a JSON response to this request, which cannot carry a request to it")]
    NoStream,
    /// The client answered with a JSON-RPC error.
    #[error("the client answered with an error: {} ({})", .0.message, .0.code.0)]
    Error(ErrorObject),
    /// The connection or the call ended before an answer came.
    #[error("the connection ended before the client answered")]
    Closed,
    /// A 2026-07-28 call asked the client: the core answered its request with an
    /// `input_required` result (`basic/patterns/mrtr.mdx`); the client retries the call with
    /// the answer, and this run of it is over.
    #[error("the request was sent as an input_required result; the client retries the call with its answer")]
    InputRequired,
    /// A notification the core did not send, and why.
    #[error("not sent: {0}")]
    Withheld(Withheld),
}

/// Why a running call's notification was not sent.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Withheld {
    /// The client set a log level above the message's (`logging/setLevel`, or the request's
    /// `io.modelcontextprotocol/logLevel`).
    #[error("below the client's log level `{0}`")]
    BelowLevel(&'static str),
    /// 2026-07-28: "If absent, the server MUST NOT send any notifications/message".
    #[error("the request's _meta has no io.modelcontextprotocol/logLevel")]
    NoLogLevel,
    /// The server did not declare the capability the notification belongs to.
    #[error("the server did not declare the `{0}` capability")]
    NotDeclared(&'static str),
    /// The request carried no `_meta.progressToken` (`utilities/progress.mdx`).
    #[error("the request's _meta has no progressToken")]
    NoProgressToken,
    /// A progress notification whose `progress` is missing or not greater than the last one's
    /// ("The progress value MUST increase with each notification").
    #[error("its progress is not a number greater than the last one sent")]
    NotIncreasing,
    /// 2026-07-28 sends list changes only on `subscriptions/listen` streams
    /// (`basic/patterns/subscriptions.mdx`), and none that asked for them is open (on this
    /// stdio connection, or over HTTP on the whole server).
    #[error("2026-07-28 sends list changes only on subscriptions/listen streams, and none is open with toolsListChanged (on stdio: on this connection; over HTTP: on this server)")]
    NoSubscription,
}

/// The client, for a running call ([`crate::ToolCall::Asking`]).
#[derive(Clone)]
pub struct Peer {
    call: CallId,
    link: Link,
}

impl fmt::Debug for Peer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Peer").field("call", &self.call).finish()
    }
}

impl Peer {
    pub(crate) fn new(call: CallId, link: Link) -> Self {
        Peer { call, link }
    }

    /// Sends `method` to the client and waits for its result. In the 2026-07-28 era the core
    /// answers with the retry's `inputResponses` if it carries one, and otherwise ends the
    /// call with an `input_required` result ([`PeerError::InputRequired`]).
    pub async fn request(&self, method: &str, params: Option<Value>) -> Result<Value, PeerError> {
        let method = method.to_owned();
        self.ask(Sending::Message { method, params }).await
    }

    /// Offers the tool `name` on this connection (this session, or this stdio client; for
    /// 2026-07-28 requests over HTTP, each served on its own: the server) if it was not
    /// offered, or stops offering it; whether it is offered now. The caller tells the client
    /// (`notifications/tools/list_changed`).
    pub async fn toggle_tool(&self, name: &str) -> Result<bool, PeerError> {
        let listed = self.ask(Sending::ToggleTool(name.to_owned())).await?;
        Ok(listed.as_bool().unwrap_or(false))
    }

    async fn ask(&self, what: Sending) -> Result<Value, PeerError> {
        let (answer, answered) = oneshot::channel();
        let ask = Ask {
            call: self.call,
            what,
            answer,
        };
        self.link
            .asks
            .send(ask)
            .await
            .map_err(|_| PeerError::Closed)?;
        if let Some(notify) = &self.link.notify {
            notify();
        }
        answered.await.unwrap_or(Err(PeerError::Closed))
    }

    /// Sends the notification `method` (progress, a log message, a list change) to the client,
    /// once the core allows it; returns when it is queued for writing, before the call's
    /// result, or why it was not sent.
    pub async fn notify(&self, method: &str, params: Option<Value>) -> Result<(), PeerError> {
        self.request(method, params).await.map(drop)
    }
}
