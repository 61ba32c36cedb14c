//! The pending map: each request id still waiting, paired with the caller who waits for its
//! reply, whatever order the replies arrive in.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};

use mcp_protocol::{RequestId, Response};
use parking_lot::Mutex;
use tokio::sync::oneshot;

use crate::error::ClientError;

/// What a waiting caller receives: the server's reply, or why the transport could not get one
/// for this request alone (an HTTP error status, say) while the connection lives on.
pub(super) type Reply = Result<Response, ClientError>;

/// Request ids, counted up from 1, and the callers waiting for their replies.
pub(super) struct Pending {
    waiters: Mutex<HashMap<RequestId, oneshot::Sender<Reply>>>,
    next_id: AtomicI64,
}

impl Pending {
    pub(super) fn new() -> Self {
        Pending {
            waiters: Mutex::new(HashMap::new()),
            next_id: AtomicI64::new(1),
        }
    }

    /// A fresh request id and the receiver its reply will arrive on.
    pub(super) fn open(&self) -> (RequestId, oneshot::Receiver<Reply>) {
        let id = RequestId::from(self.next_id.fetch_add(1, Ordering::Relaxed));
        let (tx, rx) = oneshot::channel();
        self.waiters.lock().insert(id.clone(), tx);
        (id, rx)
    }

    /// Removes the entry for `id` when the returned guard drops.
    pub(super) fn remove_on_drop<'a>(&'a self, id: &'a RequestId) -> PendingEntry<'a> {
        PendingEntry { pending: self, id }
    }

    /// The waiter for `id`, taken out of the map; `None` for an id nobody waits for.
    pub(super) fn take(&self, id: &RequestId) -> Option<oneshot::Sender<Reply>> {
        self.waiters.lock().remove(id)
    }

    /// Fails the caller waiting for `id`, if one still is; false if none was.
    pub(super) fn fail(&self, id: &RequestId, error: ClientError) -> bool {
        match self.take(id) {
            Some(tx) => tx.send(Err(error)).is_ok(),
            None => false,
        }
    }

    /// Drops every waiter: each waiting caller wakes to a closed channel.
    pub(super) fn clear(&self) {
        self.waiters.lock().clear();
    }
}

/// Removes a pending entry when its call ends for any reason.
pub(super) struct PendingEntry<'a> {
    pending: &'a Pending,
    id: &'a RequestId,
}

impl Drop for PendingEntry<'_> {
    fn drop(&mut self) {
        self.pending.take(self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_count_up_from_one_and_replies_reach_their_waiter() {
        let pending = Pending::new();
        let (first, _rx1) = pending.open();
        let (second, mut rx2) = pending.open();
        assert_eq!(
            (first, second.clone()),
            (RequestId::from(1), RequestId::from(2))
        );
        let reply = Response::success(second.clone(), serde_json::json!({}));
        pending
            .take(&second)
            .unwrap()
            .send(Ok(reply.clone()))
            .unwrap();
        assert_eq!(rx2.try_recv().unwrap().ok(), Some(reply));
        assert!(pending.take(&second).is_none());
    }

    #[test]
    fn the_guard_removes_the_entry_and_clear_wakes_every_waiter() {
        let pending = Pending::new();
        let (id, _rx) = pending.open();
        drop(pending.remove_on_drop(&id));
        assert!(pending.take(&id).is_none());
        let (_, mut rx) = pending.open();
        pending.clear();
        assert!(matches!(
            rx.try_recv(),
            Err(oneshot::error::TryRecvError::Closed)
        ));
    }
}
