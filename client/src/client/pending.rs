//! The pending map: each request id still waiting, paired with the caller who waits for its
//! reply, whatever order the replies arrive in.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Mutex;

use mcp_protocol::{RequestId, Response};
use tokio::sync::oneshot;

use super::lock::lock;

/// Request ids, counted up from 1, and the callers waiting for their replies.
pub(super) struct Pending {
    waiters: Mutex<HashMap<RequestId, oneshot::Sender<Response>>>,
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
    pub(super) fn open(&self) -> (RequestId, oneshot::Receiver<Response>) {
        let id = RequestId::from(self.next_id.fetch_add(1, Ordering::Relaxed));
        let (tx, rx) = oneshot::channel();
        lock(&self.waiters).insert(id.clone(), tx);
        (id, rx)
    }

    /// Removes the entry for `id` when the returned guard drops.
    pub(super) fn remove_on_drop<'a>(&'a self, id: &'a RequestId) -> PendingEntry<'a> {
        PendingEntry { pending: self, id }
    }

    /// The waiter for `id`, taken out of the map; `None` for an id nobody waits for.
    pub(super) fn take(&self, id: &RequestId) -> Option<oneshot::Sender<Response>> {
        lock(&self.waiters).remove(id)
    }

    /// Drops every waiter: each waiting caller wakes to a closed channel.
    pub(super) fn clear(&self) {
        lock(&self.waiters).clear();
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
        pending.take(&second).unwrap().send(reply.clone()).unwrap();
        assert_eq!(rx2.try_recv().unwrap(), reply);
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
