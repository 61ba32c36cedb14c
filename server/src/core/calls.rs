//! What the core keeps between messages: the calls it handed to the transport and not yet
//! heard back about, the batches waiting for their members, and the requests running calls
//! sent the client.

use std::collections::HashMap;

use mcp_protocol::mcp::{methods, CancelledParams};
use mcp_protocol::{Message, Notification, Outgoing, RequestId, Response};

use mcp_protocol::mcp::ProtocolVersion;

use super::outbound::CallMeta;
use super::Action;
use crate::peer::{CallId, PeerError};

/// A running batch member's place: which batch, and which of its running members.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Slot {
    batch: u64,
    index: usize,
}

/// A call the transport runs.
#[derive(Debug)]
pub(crate) struct Running {
    /// The request it answers.
    pub(crate) id: RequestId,
    /// The version its reply is shaped for (2026-07-28 for a request of that era).
    pub(crate) version: ProtocolVersion,
    /// Its place in a batch; `None` for a request of its own, which is cancellable.
    pub(crate) batch: Option<Slot>,
    /// What its request said about itself (progress token, 2026-07-28 `_meta`).
    pub(crate) meta: CallMeta,
}

/// A batch's replies while members still run: those made at once, in member order, then
/// the running members', in member order, as they come.
#[derive(Debug, Default)]
struct Batch {
    ready: Vec<Message>,
    running: Vec<Option<Message>>,
    /// Members still running.
    waiting: usize,
    /// Every member was read: once none is running, the batch is answered.
    sealed: bool,
}

/// A request a running call sent the client, waiting for its answer.
#[derive(Debug)]
struct Asked<R> {
    call: CallId,
    answer: R,
}

#[derive(Debug)]
pub(crate) struct Calls<R> {
    next_call: u64,
    running: HashMap<CallId, Running>,
    /// Running requests of their own, by the id the client gave them: what
    /// `notifications/cancelled` names, and what a duplicate id collides with.
    by_request: HashMap<RequestId, CallId>,
    next_batch: u64,
    batches: HashMap<u64, Batch>,
    next_ask: i64,
    asked: HashMap<RequestId, Asked<R>>,
}

impl<R> Default for Calls<R> {
    fn default() -> Self {
        Calls {
            next_call: 0,
            running: HashMap::new(),
            by_request: HashMap::new(),
            next_batch: 0,
            batches: HashMap::new(),
            next_ask: 0,
            asked: HashMap::new(),
        }
    }
}

impl<R> Calls<R> {
    /// A new running call answering `id`; `Err(id)` if a request of its own with that id is
    /// still running (ids must be unique among requests in flight).
    /// `batch`: the batch it is a member of (not cancellable), if any.
    pub(crate) fn start(
        &mut self,
        id: RequestId,
        version: ProtocolVersion,
        batch: Option<u64>,
        meta: CallMeta,
    ) -> Result<CallId, RequestId> {
        if batch.is_none() && self.by_request.contains_key(&id) {
            return Err(id);
        }
        self.next_call += 1;
        let call = CallId(self.next_call);
        let slot = match batch.and_then(|b| Some((b, self.batches.get_mut(&b)?))) {
            Some((batch, b)) => {
                b.waiting += 1;
                b.running.push(None);
                Some(Slot {
                    batch,
                    index: b.running.len() - 1,
                })
            }
            None => {
                self.by_request.insert(id.clone(), call);
                None
            }
        };
        self.running.insert(
            call,
            Running {
                id,
                version,
                batch: slot,
                meta,
            },
        );
        Ok(call)
    }

    pub(crate) fn get(&self, call: CallId) -> Option<&Running> {
        self.running.get(&call)
    }

    pub(crate) fn get_mut(&mut self, call: CallId) -> Option<&mut Running> {
        self.running.get_mut(&call)
    }

    /// A call ended: forgotten, with the requests it left unanswered cancelled. `None` if it
    /// was not running (cancelled before it ended).
    pub(crate) fn end(&mut self, call: CallId, out: &mut Vec<Action<R>>) -> Option<Running> {
        let running = self.running.remove(&call)?;
        match running.batch {
            None => {
                self.by_request.remove(&running.id);
            }
            Some(slot) => {
                if let Some(b) = self.batches.get_mut(&slot.batch) {
                    b.waiting -= 1;
                }
            }
        }
        self.forget_asks(call, out);
        Some(running)
    }

    /// `notifications/cancelled` for `id`: its call is aborted, and no reply is sent.
    pub(crate) fn cancel(&mut self, id: &RequestId, out: &mut Vec<Action<R>>) {
        let shown = crate::error::shown_id(id);
        let Some(call) = self.by_request.remove(id) else {
            tracing::debug!(id = %shown, "cancellation for no running request ignored");
            return;
        };
        self.running.remove(&call);
        self.forget_asks(call, out);
        out.push(Action::Abort(call));
        tracing::debug!(id = %shown, "request cancelled; no reply will be sent");
    }

    /// A new batch.
    pub(crate) fn open_batch(&mut self) -> u64 {
        self.next_batch += 1;
        self.batches.insert(self.next_batch, Batch::default());
        self.next_batch
    }

    /// A member's reply, made at once.
    pub(crate) fn ready(&mut self, batch: u64, messages: Vec<Message>) {
        if let Some(b) = self.batches.get_mut(&batch) {
            b.ready.extend(messages);
        }
    }

    /// A running member's reply; the batch's replies once it is complete.
    pub(crate) fn fill(&mut self, slot: Slot, messages: Vec<Message>) -> Option<Vec<Message>> {
        let batch = self.batches.get_mut(&slot.batch)?;
        if let Some(place) = batch.running.get_mut(slot.index) {
            *place = messages.into_iter().next();
        }
        self.complete(slot.batch)
    }

    /// Every member was read; the batch's replies if none is still running.
    pub(crate) fn seal(&mut self, batch: u64) -> Option<Vec<Message>> {
        self.batches.get_mut(&batch)?.sealed = true;
        self.complete(batch)
    }

    fn complete(&mut self, batch: u64) -> Option<Vec<Message>> {
        let b = self.batches.get(&batch)?;
        if !b.sealed || b.waiting > 0 {
            return None;
        }
        let b = self.batches.remove(&batch)?;
        let mut replies = b.ready;
        replies.extend(b.running.into_iter().flatten());
        Some(replies)
    }

    /// Records a request `call` sends the client; its id.
    pub(crate) fn asked(&mut self, call: CallId, answer: R) -> RequestId {
        self.next_ask += 1;
        let id = RequestId::from(self.next_ask);
        self.asked.insert(id.clone(), Asked { call, answer });
        id
    }

    /// The client's response: to the call that asked, if one still waits.
    pub(crate) fn answered(&mut self, response: Response, out: &mut Vec<Action<R>>) {
        let Some(id) = &response.id else {
            tracing::warn!("ignored a response with no id");
            return;
        };
        match self.asked.remove(id) {
            Some(asked) => out.push(Action::Answer(
                asked.answer,
                response.outcome.map_err(PeerError::Error),
            )),
            None => tracing::warn!(
                id = %crate::error::shown_id(id),
                "ignored a response to no request this server is waiting on"
            ),
        }
    }

    /// The requests `call` left unanswered: the client is told they are cancelled
    /// (`utilities/cancellation.mdx`), and a late answer is ignored.
    fn forget_asks(&mut self, call: CallId, out: &mut Vec<Action<R>>) {
        let ids: Vec<RequestId> = self
            .asked
            .iter()
            .filter(|(_, a)| a.call == call)
            .map(|(id, _)| id.clone())
            .collect();
        for id in ids {
            self.asked.remove(&id);
            let params = CancelledParams {
                request_id: id,
                reason: Some("the tool call that sent it ended".to_owned()),
            };
            let notification = Notification {
                method: methods::CANCELLED.to_owned(),
                params: serde_json::to_value(params).ok(),
            };
            out.push(Action::Send(Outgoing::from(Message::Notification(
                notification,
            ))));
        }
    }
}
