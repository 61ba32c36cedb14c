//! 2026-07-28 `subscriptions/listen` streams (`basic/patterns/subscriptions.mdx`): the server
//! acknowledges each, then sends `notifications/tools/list_changed` on those that asked for
//! it, each tagged with its subscription id, until the client cancels it.
//!
//! Two holders share these rules. A connection whose messages share one channel (stdio) holds
//! its own ([`Subscriptions<()>`], ids unique on it). Over Streamable HTTP every 2026-07-28
//! request is served on its own, so the streams are server-wide ([`Listeners`]): each is the
//! SSE response of its listen POST, held as the transport's sink `S`; clients share no id
//! space there, so ids may repeat.

use mcp_protocol::{Message, Notification, Outgoing, RequestId, Response};
use parking_lot::Mutex;
use serde_json::{json, Value};

use crate::error::ServerError;
use crate::params::ServerParams;

/// `subscriptions/listen`.
pub(crate) const LISTEN: &str = "subscriptions/listen";
/// The first message of every subscription.
const ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";
/// `_meta` key: which subscription a notification belongs to (the listen request's id).
const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
/// Subscriptions one holder may keep open at once (a stdio connection, or the whole HTTP
/// server): each costs the server a few bytes (over HTTP a connection and a small queue), and
/// a client needs one or two.
pub(crate) const MAX_OPEN: usize = 64;

/// A `subscriptions/listen` request the core accepted, not yet opened: what it asked for.
/// Only the core makes one ([`Subscriptions::filter`]).
#[derive(Debug)]
pub(crate) struct Listen {
    id: RequestId,
    tools: bool,
}

impl Listen {
    /// The listen request's id (the subscription id).
    pub(crate) fn id(&self) -> &RequestId {
        &self.id
    }
}

/// Names one open subscription for its holder, whatever its request id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ListenKey(u64);

#[derive(Debug)]
struct Open<S> {
    key: ListenKey,
    id: RequestId,
    /// It asked for tool list changes, and the server honours them.
    tools: bool,
    sink: S,
}

/// Open subscriptions, each with where its messages go (`S`: nothing on stdio, whose one
/// channel carries them all; the response stream over HTTP).
#[derive(Debug)]
pub(crate) struct Subscriptions<S = ()> {
    open: Vec<Open<S>>,
    /// Ids come from one client, which must not reuse one in flight (stdio); otherwise from
    /// many (HTTP), whose ids may be equal.
    unique_ids: bool,
    next: u64,
}

impl Default for Subscriptions<()> {
    fn default() -> Self {
        Subscriptions::new(true)
    }
}

/// Checks a listen request's filter (`params.notifications`, an object); `tools`: the
/// server sends tool list changes.
pub(crate) fn filter(
    id: RequestId,
    params: Option<&Value>,
    tools: bool,
) -> Result<Listen, ServerError> {
    let filter = params.and_then(|p| p.get("notifications"));
    let Some(filter) = filter.filter(|f| f.is_object()) else {
        return Err(ServerError::InvalidParams {
            method: LISTEN.to_owned(),
            reason: "params.notifications (the filter of notification types) must be an object"
                .to_owned(),
        });
    };
    let tools = tools && filter.get("toolsListChanged") == Some(&Value::Bool(true));
    Ok(Listen { id, tools })
}

impl<S> Subscriptions<S> {
    fn new(unique_ids: bool) -> Self {
        Subscriptions {
            open: Vec::new(),
            unique_ids,
            next: 0,
        }
    }

    /// Opens the subscription with `sink`: its acknowledgment, which lists what this server
    /// honours; refused on a repeated id (where ids are unique) or past [`MAX_OPEN`].
    pub(crate) fn open(
        &mut self,
        listen: Listen,
        sink: S,
    ) -> Result<(ListenKey, Outgoing), ServerError> {
        let Listen { id, tools } = listen;
        if self.unique_ids && self.open.iter().any(|open| open.id == id) {
            return Err(ServerError::DuplicateId(id));
        }
        if self.open.len() >= MAX_OPEN {
            let scope = if self.unique_ids {
                "on one connection"
            } else {
                "on this server, all clients together"
            };
            return Err(ServerError::InvalidParams {
                method: LISTEN.to_owned(),
                reason: format!(
                    "at most {MAX_OPEN} subscriptions may be open {scope}; cancel one first"
                ),
            });
        }
        let honoured = if tools {
            json!({"toolsListChanged": true})
        } else {
            json!({})
        };
        let ack = tagged(
            ACKNOWLEDGED,
            &id,
            Some(json!({ "notifications": honoured })),
        );
        self.next += 1;
        let key = ListenKey(self.next);
        self.open.push(Open {
            key,
            id,
            tools,
            sink,
        });
        Ok((key, ack))
    }

    /// `notifications/cancelled` for `id`: closes every subscription opened with it (no
    /// response is sent for them); their sinks.
    pub(crate) fn cancel(&mut self, id: &RequestId) -> Vec<S> {
        let (closed, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut self.open)
            .into_iter()
            .partition(|open| open.id == *id);
        self.open = kept;
        closed.into_iter().map(|open| open.sink).collect()
    }

    /// The subscription `key` ended (its client went away); whether it was open.
    pub(crate) fn remove(&mut self, key: ListenKey) -> bool {
        let before = self.open.len();
        self.open.retain(|open| open.key != key);
        self.open.len() != before
    }

    /// `notifications/tools/list_changed`, tagged, handed to `deliver` for every subscription
    /// that asked for it; one whose sink refuses it (`false`: it cannot take more) is closed.
    /// How many took it.
    pub(crate) fn tools_changed(&mut self, mut deliver: impl FnMut(&S, Outgoing) -> bool) -> usize {
        let mut told = 0;
        self.open.retain(|open| {
            if !open.tools {
                return true;
            }
            let note = tagged(crate::core::outbound::TOOLS_LIST_CHANGED, &open.id, None);
            let taken = deliver(&open.sink, note);
            told += usize::from(taken);
            taken
        });
        told
    }

    /// The server ends every subscription: each sink with the completion result that ends
    /// it gracefully ("Graceful Closure": a successful `subscriptions/listen` response).
    pub(crate) fn close_all(&mut self, server_info: &Value) -> Vec<(S, Outgoing)> {
        self.open
            .drain(..)
            .map(|open| {
                let result = json!({ "_meta": { META_SUBSCRIPTION_ID: open.id } });
                let result = crate::modern::complete(result, server_info, None);
                (open.sink, Response::success(open.id, result).into())
            })
            .collect()
    }
}

/// The server-wide subscriptions of a transport that serves each 2026-07-28 request on its own
/// (Streamable HTTP): what every request's core and the transport share.
#[derive(Debug)]
pub(crate) struct Listeners<S> {
    open: Mutex<Subscriptions<S>>,
    server_info: Value,
}

impl<S> Listeners<S> {
    pub(crate) fn new(served: &crate::core::Served) -> Self {
        Listeners {
            open: Mutex::new(Subscriptions::new(false)),
            server_info: served.modern_info.clone(),
        }
    }

    /// Opens an accepted listen request on `sink`: its key and acknowledgment, or the error
    /// response (the bound reached).
    pub(crate) fn open(&self, listen: Listen, sink: S) -> Result<(ListenKey, Outgoing), Outgoing> {
        let id = listen.id.clone();
        let opened = self.open.lock().open(listen, sink);
        match opened {
            Ok(opened) => {
                tracing::debug!(id = %crate::error::shown_id(&id), "subscription opened");
                Ok(opened)
            }
            Err(e) => {
                tracing::warn!("subscriptions/listen refused: {e}");
                Err(Response::error(Some(id), e.to_error_object()).into())
            }
        }
    }

    /// The stream `key` ended (its client closed it, or it was dropped).
    pub(crate) fn remove(&self, key: ListenKey) {
        if self.open.lock().remove(key) {
            tracing::debug!("subscription closed by its client");
        }
    }

    /// A tool list change for every stream that asked: what the calling tool is told.
    pub(crate) fn tools_changed(
        &self,
        deliver: impl FnMut(&S, Outgoing) -> bool,
    ) -> Result<Value, crate::peer::PeerError> {
        match self.open.lock().tools_changed(deliver) {
            0 => Err(crate::peer::PeerError::Withheld(
                crate::peer::Withheld::NoSubscription,
            )),
            _ => Ok(Value::Null),
        }
    }

    /// A 2026-07-28 notification POSTed on its own: `notifications/cancelled` naming a listen
    /// request's id closes every stream opened with that id (clients share no id space here,
    /// so it cannot tell whose; closing the stream is the HTTP way to cancel). Other
    /// notifications are ignored. The sinks closed.
    pub(crate) fn notified(&self, n: Notification<ServerParams>) -> Vec<S> {
        if n.method != mcp_protocol::mcp::methods::CANCELLED {
            return Vec::new();
        }
        let params = n.params.map(ServerParams::into_value);
        let parsed = params.map(serde_json::from_value::<mcp_protocol::mcp::CancelledParams>);
        let Some(Ok(cancelled)) = parsed else {
            // "Invalid cancellation notifications SHOULD be ignored."
            tracing::debug!("invalid notifications/cancelled ignored");
            return Vec::new();
        };
        let closed = self.open.lock().cancel(&cancelled.request_id);
        if !closed.is_empty() {
            tracing::debug!(id = %crate::error::shown_id(&cancelled.request_id), n = closed.len(), "subscription cancelled");
        }
        closed
    }

    /// The server is shutting down: every stream, with the response that ends it.
    pub(crate) fn close_all(&self) -> Vec<(S, Outgoing)> {
        self.open.lock().close_all(&self.server_info)
    }
}

/// A notification on the subscription `id`: its `params` (an object) with the id in `_meta`.
fn tagged(method: &str, id: &RequestId, params: Option<Value>) -> Outgoing {
    let mut params = params.unwrap_or_else(|| json!({}));
    params["_meta"] = json!({ META_SUBSCRIPTION_ID: id });
    Message::Notification(Notification {
        method: method.to_owned(),
        params: Some(params),
    })
    .into()
}
