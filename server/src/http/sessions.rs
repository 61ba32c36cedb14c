//! Legacy-era sessions (`basic/transports.mdx` §Session Management, 2025-03-26 … 2025-11-25):
//! an `initialize` answered over HTTP creates one, named by an `Mcp-Session-Id` the client
//! sends on every later request, until it sends DELETE, the session idles out, or it is
//! evicted to make room.
//!
//! The store is bounded (`max_sessions`). At the bound an `initialize` evicts an idle session
//! rather than being refused: first the sessions nothing named since their `initialize`,
//! then the least recently used, oldest first; a session with a request in flight (a call
//! running, a response stream open) is never evicted, and only when every session has one
//! does `initialize` get 503. The spec allows this: "The server MAY terminate the session at
//! any time, after which it MUST respond to requests containing that session ID with HTTP
//! 404 Not Found", and the client then "MUST start a new session" (§Session Management 3–4).
//! So one client initializing in a loop cannot lock the others out.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::exchange::Conn;

/// One session: its connection core (the same core stdio drives) and the tasks of its calls.
/// The core is handed each POST's messages under a lock held only for that; calls run
/// outside it.
#[derive(Debug)]
pub(crate) struct HttpSession {
    pub(crate) conn: Arc<Conn>,
}

impl HttpSession {
    pub(crate) fn new(conn: Arc<Conn>) -> Self {
        HttpSession { conn }
    }
}

/// Every session has a request in flight: the `initialize` that would create one gets 503.
#[derive(Debug)]
pub(crate) struct Full;

/// Why no session could be stored.
#[derive(Debug)]
pub(crate) enum InsertError {
    Full(Full),
    /// The OS random source failed: no id can be made safely.
    Random(getrandom::Error),
}

/// Live sessions by id, bounded in count and idle time.
#[derive(Debug)]
pub(crate) struct Sessions {
    store: Mutex<Store>,
    max: usize,
    idle: Duration,
}

impl Sessions {
    pub(crate) fn new(max: usize, idle: Duration) -> Self {
        Sessions {
            store: Mutex::new(Store::default()),
            max: max.max(1),
            idle,
        }
    }

    /// The live session with this id, marked used now; `None` for an unknown, ended, evicted
    /// or idled-out id (which MUST get 404).
    pub(crate) fn get(&self, id: &str) -> Option<Arc<HttpSession>> {
        let now = Instant::now();
        let mut store = self.store.lock();
        let slot = store.map.get_mut(id)?;
        if now.duration_since(slot.last_used) >= self.idle && !slot.busy() {
            store.end(id);
            return None;
        }
        // Only the slot changes: its place in the eviction order is corrected lazily.
        slot.used = true;
        slot.last_used = now;
        Some(Arc::clone(&slot.session))
    }

    /// Stores a session under a fresh id. When full, idle sessions are swept, and if none
    /// was, one is evicted ([`Store::evict`]); `Full` when every session is busy.
    pub(crate) fn insert(&self, session: HttpSession) -> Result<String, InsertError> {
        let id = new_id().map_err(InsertError::Random)?;
        let now = Instant::now();
        let mut store = self.store.lock();
        if store.map.len() >= self.max {
            store.sweep(now, self.idle);
        }
        if store.map.len() >= self.max && !store.evict(now) {
            return Err(InsertError::Full(Full));
        }
        store.add(id.clone(), session, now);
        Ok(id)
    }

    /// Ends a session (DELETE); `false` if there was none by that id.
    pub(crate) fn remove(&self, id: &str) -> bool {
        self.store.lock().end(id)
    }

    /// Ends the sessions idle for longer than the limit.
    pub(crate) fn sweep(&self) {
        self.store.lock().sweep(Instant::now(), self.idle);
    }

    /// Ends every session: the server is done serving.
    pub(crate) fn end_all(&self) {
        let mut store = self.store.lock();
        store.order.clear();
        for (_, slot) in store.map.drain() {
            slot.session.conn.end();
        }
    }

    pub(crate) fn idle(&self) -> Duration {
        self.idle
    }
}

/// A session's place in the eviction order: never-used sessions (`used == false`) before
/// used ones, then least recently used first; `seq` breaks ties. Derived `Ord` compares the
/// fields in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Rank {
    used: bool,
    at: Instant,
    seq: u64,
}

/// A stored session and what the eviction order needs of it.
#[derive(Debug)]
struct Slot {
    session: Arc<HttpSession>,
    /// Named by a request since its `initialize`.
    used: bool,
    last_used: Instant,
    /// Its key in [`Store::order`], which may lag behind `used` and `last_used`.
    ranked: Rank,
}

impl Slot {
    /// A request in flight holds the session or its core: a POST being handled, a response
    /// stream open, or a call still running (each running call's task holds the core). The
    /// store holds one reference of each.
    fn busy(&self) -> bool {
        Arc::strong_count(&self.session) > 1 || Arc::strong_count(&self.session.conn) > 1
    }

    fn rank(&self, seq: u64) -> Rank {
        Rank {
            used: self.used,
            at: self.last_used,
            seq,
        }
    }
}

/// The sessions, and an index of them in eviction order: an eviction takes the first entry,
/// O(log n). A request only updates its slot (no index work on the hot path); an index key
/// found stale at the front is replaced then, once per use, so the cost stays amortized
/// O(log n).
#[derive(Debug, Default)]
struct Store {
    map: HashMap<String, Slot>,
    order: BTreeMap<Rank, String>,
    seq: u64,
}

impl Store {
    fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    fn add(&mut self, id: String, session: HttpSession, now: Instant) {
        let mut slot = Slot {
            session: Arc::new(session),
            used: false,
            last_used: now,
            ranked: Rank {
                used: false,
                at: now,
                seq: 0,
            },
        };
        slot.ranked = slot.rank(self.next_seq());
        self.order.insert(slot.ranked, id.clone());
        self.map.insert(id, slot);
    }

    /// Removes a session and aborts its running calls; `false` if there was none.
    fn end(&mut self, id: &str) -> bool {
        let Some(slot) = self.map.remove(id) else {
            return false;
        };
        self.order.remove(&slot.ranked);
        slot.session.conn.end();
        true
    }

    /// Ends the least valuable idle session: the first of the order whose key is current and
    /// which is not busy. A stale key is re-ranked; a busy session counts as used now and
    /// goes to the back. `false` when every session is busy.
    fn evict(&mut self, now: Instant) -> bool {
        let mut busy = 0;
        while busy < self.map.len() {
            let Some((rank, id)) = self.order.pop_first() else {
                return false;
            };
            let seq = self.next_seq();
            let Some(slot) = self.map.get_mut(&id) else {
                continue;
            };
            let is_busy = slot.busy();
            if is_busy {
                busy += 1;
                slot.used = true;
                slot.last_used = now;
            } else if rank == slot.rank(rank.seq) {
                let never_used = !slot.used;
                let idle = now.duration_since(slot.last_used);
                if let Some(evicted) = self.map.remove(&id) {
                    evicted.session.conn.end();
                }
                tracing::info!(
                    session = %id,
                    never_used,
                    idle_secs = idle.as_secs_f64(),
                    "session evicted to make room for a new one (the session cap was reached)"
                );
                return true;
            }
            slot.ranked = slot.rank(seq);
            self.order.insert(slot.ranked, id);
        }
        false
    }

    /// Ends the sessions unused for `idle` or longer, unless a request is in flight.
    fn sweep(&mut self, now: Instant, idle: Duration) {
        let order = &mut self.order;
        self.map.retain(|_, slot| {
            let live = now.duration_since(slot.last_used) < idle || slot.busy();
            if !live {
                order.remove(&slot.ranked);
                slot.session.conn.end();
            }
            live
        });
    }
}

/// 128 random bits from the OS, as 32 lowercase hex digits: "globally unique and
/// cryptographically secure", and visible ASCII (§Session Management).
fn new_id() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::Served;
    use crate::{default_tools, ServerInfo};

    fn session() -> HttpSession {
        let served = Served::new(Arc::new(default_tools()), ServerInfo::default());
        HttpSession::new(Conn::new(served))
    }

    fn store(max: usize) -> Sessions {
        Sessions::new(max, Duration::from_secs(600))
    }

    #[test]
    fn ids_are_128_bit_hex_and_distinct() {
        let a = new_id().unwrap();
        let b = new_id().unwrap();
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }

    #[test]
    fn at_the_cap_the_oldest_never_used_session_is_evicted() {
        let store = store(3);
        let a = store.insert(session()).unwrap();
        let b = store.insert(session()).unwrap();
        let c = store.insert(session()).unwrap();
        store.get(&a).unwrap();
        let d = store.insert(session()).unwrap();
        // b: never used and the oldest of those.
        assert!(store.get(&b).is_none());
        for live in [&a, &c, &d] {
            assert!(store.get(live).is_some());
        }
        assert!(!store.remove(&b));
    }

    #[test]
    fn a_used_session_survives_a_flood_of_never_used_ones() {
        let store = store(4);
        let active = store.insert(session()).unwrap();
        store.get(&active).unwrap();
        let flood: Vec<String> = (0..1000)
            .map(|_| store.insert(session()).unwrap())
            .collect();
        assert!(store.get(&active).is_some());
        // The last three of the flood are left; the rest were evicted oldest first.
        assert_eq!(store.store.lock().map.len(), 4);
        assert!(store.get(&flood[999]).is_some());
        assert!(store.get(&flood[996]).is_none());
    }

    #[test]
    fn among_used_sessions_the_least_recently_used_goes() {
        let store = store(2);
        let a = store.insert(session()).unwrap();
        let b = store.insert(session()).unwrap();
        store.get(&a).unwrap();
        store.get(&b).unwrap();
        // a, used again later than b: b is now the least recently used.
        store.get(&a).unwrap();
        store.insert(session()).unwrap();
        assert!(store.get(&b).is_none());
        assert!(store.get(&a).is_some());
    }

    #[test]
    fn busy_sessions_are_not_evicted_and_all_busy_is_full() {
        let store = store(2);
        let a = store.insert(session()).unwrap();
        let b = store.insert(session()).unwrap();
        // A request in flight holds the session (a POST) or its core (a running call).
        let in_flight = store.get(&a).unwrap();
        let running = Arc::clone(&store.get(&b).unwrap().conn);
        assert!(matches!(
            store.insert(session()),
            Err(InsertError::Full(Full))
        ));
        drop(in_flight);
        let c = store.insert(session()).unwrap();
        assert!(store.get(&a).is_none());
        assert!(store.get(&b).is_some());
        assert!(store.get(&c).is_some());
        drop(running);
        assert!(store.remove(&b));
        assert!(!store.remove(&b));
    }

    #[test]
    fn idle_sessions_are_swept_to_make_room() {
        let store = Sessions::new(1, Duration::ZERO);
        // Idle for zero time means expired at once.
        let a = store.insert(session()).unwrap();
        let b = store.insert(session()).unwrap();
        assert!(store.get(&a).is_none());
        assert_ne!(a, b);
        store.sweep();
        assert!(store.store.lock().map.is_empty());
        assert!(store.store.lock().order.is_empty());
    }
}
