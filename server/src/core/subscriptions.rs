//! 2026-07-28 `subscriptions/listen` streams on a connection whose messages share one channel
//! (stdio, `basic/patterns/subscriptions.mdx`): the server acknowledges each, then sends
//! `notifications/tools/list_changed` on those that asked for it, each tagged with its
//! subscription id, until the client cancels it. Over Streamable HTTP every 2026-07-28 request
//! is served on its own, so no subscription outlives its request there and none is offered.

use mcp_protocol::{Message, Notification, Outgoing, RequestId};
use serde_json::{json, Value};

use crate::error::ServerError;

/// `subscriptions/listen`.
pub(crate) const LISTEN: &str = "subscriptions/listen";
/// The first message of every subscription.
const ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";
/// `_meta` key: which subscription a notification belongs to (the listen request's id).
const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
/// Subscriptions one connection may hold open at once: each costs the server a few bytes,
/// and a client needs one or two.
pub(crate) const MAX_OPEN: usize = 64;

/// The open subscriptions of one connection: the listen request's id, and whether it asked
/// for tool list changes.
#[derive(Debug, Default)]
pub(crate) struct Subscriptions {
    open: Vec<(RequestId, bool)>,
}

impl Subscriptions {
    /// Opens the subscription `id` with the filter in `params`; its acknowledgment, which
    /// lists what this server honours (`tools`: it sends tool list changes).
    pub(crate) fn listen(
        &mut self,
        id: RequestId,
        params: Option<&Value>,
        tools: bool,
    ) -> Result<Outgoing, ServerError> {
        let filter = params.and_then(|p| p.get("notifications"));
        let Some(filter) = filter.filter(|f| f.is_object()) else {
            return Err(ServerError::InvalidParams {
                method: LISTEN.to_owned(),
                reason: "params.notifications (the filter of notification types) must be an object"
                    .to_owned(),
            });
        };
        if self.open.iter().any(|(open, _)| *open == id) {
            return Err(ServerError::DuplicateId(id));
        }
        if self.open.len() >= MAX_OPEN {
            return Err(ServerError::InvalidParams {
                method: LISTEN.to_owned(),
                reason: format!(
                    "at most {MAX_OPEN} subscriptions may be open on one connection; cancel one first"
                ),
            });
        }
        let wants_tools = tools && filter.get("toolsListChanged") == Some(&Value::Bool(true));
        let honoured = if wants_tools {
            json!({"toolsListChanged": true})
        } else {
            json!({})
        };
        let ack = tagged(
            ACKNOWLEDGED,
            &id,
            Some(json!({ "notifications": honoured })),
        );
        self.open.push((id, wants_tools));
        Ok(ack)
    }

    /// `notifications/cancelled` for `id`: whether it named an open subscription (now closed;
    /// no response is sent for it).
    pub(crate) fn cancel(&mut self, id: &RequestId) -> bool {
        let before = self.open.len();
        self.open.retain(|(open, _)| open != id);
        self.open.len() != before
    }

    /// `notifications/tools/list_changed` for every subscription that asked for it.
    pub(crate) fn tools_changed(&self) -> Vec<Outgoing> {
        self.open
            .iter()
            .filter(|(_, tools)| *tools)
            .map(|(id, _)| tagged(crate::core::outbound::TOOLS_LIST_CHANGED, id, None))
            .collect()
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
