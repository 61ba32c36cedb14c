//! Legacy-era sessions (`basic/transports.mdx` §Session Management, 2025-03-26 … 2025-11-25):
//! an `initialize` answered over HTTP creates one, named by an `Mcp-Session-Id` the client
//! sends on every later request, until it sends DELETE or the session idles out.
//!
//! The store is bounded (`max_sessions`) and swept of idle sessions, so a client that
//! initializes in a loop gets 503s, not unbounded memory.

use std::collections::HashMap;
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
    last_used: Mutex<Instant>,
}

impl HttpSession {
    pub(crate) fn new(conn: Arc<Conn>) -> Self {
        HttpSession {
            conn,
            last_used: Mutex::new(Instant::now()),
        }
    }

    /// Aborts its running calls.
    fn end(&self) {
        self.conn.end();
    }
}

/// The store is full: the `initialize` that would create a session gets 503.
#[derive(Debug)]
pub(crate) struct Full;

/// Live sessions by id, bounded in count and idle time.
#[derive(Debug)]
pub(crate) struct Sessions {
    map: Mutex<HashMap<String, Arc<HttpSession>>>,
    max: usize,
    idle: Duration,
}

impl Sessions {
    pub(crate) fn new(max: usize, idle: Duration) -> Self {
        Sessions {
            map: Mutex::new(HashMap::new()),
            max,
            idle,
        }
    }

    /// The live session with this id, marked used now; `None` for an unknown, ended or idled
    /// out id (which MUST get 404).
    pub(crate) fn get(&self, id: &str) -> Option<Arc<HttpSession>> {
        let mut map = self.map.lock();
        let session = map.get(id)?;
        let now = Instant::now();
        let mut last = session.last_used.lock();
        if now.duration_since(*last) >= self.idle {
            drop(last);
            if let Some(s) = map.remove(id) {
                s.end();
            }
            return None;
        }
        *last = now;
        drop(last);
        Some(Arc::clone(session))
    }

    /// Stores a session under a fresh id; when full, idle sessions are swept first.
    pub(crate) fn insert(&self, session: HttpSession) -> Result<String, InsertError> {
        let id = new_id().map_err(InsertError::Random)?;
        let mut map = self.map.lock();
        if map.len() >= self.max {
            sweep(&mut map, self.idle);
            if map.len() >= self.max {
                return Err(InsertError::Full(Full));
            }
        }
        map.insert(id.clone(), Arc::new(session));
        Ok(id)
    }

    /// Ends a session (DELETE); `false` if there was none by that id.
    pub(crate) fn remove(&self, id: &str) -> bool {
        let removed = self.map.lock().remove(id);
        match removed {
            Some(s) => {
                s.end();
                true
            }
            None => false,
        }
    }

    /// Ends the sessions idle for longer than the limit.
    pub(crate) fn sweep(&self) {
        sweep(&mut self.map.lock(), self.idle);
    }

    pub(crate) fn idle(&self) -> Duration {
        self.idle
    }
}

fn sweep(map: &mut HashMap<String, Arc<HttpSession>>, idle: Duration) {
    let now = Instant::now();
    map.retain(|_, s| {
        let live = now.duration_since(*s.last_used.lock()) < idle;
        if !live {
            s.end();
        }
        live
    });
}

/// Why no session could be stored.
#[derive(Debug)]
pub(crate) enum InsertError {
    Full(Full),
    /// The OS random source failed: no id can be made safely.
    Random(getrandom::Error),
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

    #[test]
    fn ids_are_128_bit_hex_and_distinct() {
        let a = new_id().unwrap();
        let b = new_id().unwrap();
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }

    #[test]
    fn the_store_is_bounded_and_removal_frees_room() {
        let store = Sessions::new(2, Duration::from_secs(60));
        let a = store.insert(session()).unwrap();
        store.insert(session()).unwrap();
        assert!(matches!(
            store.insert(session()),
            Err(InsertError::Full(Full))
        ));
        assert!(store.remove(&a));
        assert!(!store.remove(&a));
        assert!(store.get(&a).is_none());
        store.insert(session()).unwrap();
    }

    #[test]
    fn idle_sessions_are_swept_to_make_room() {
        let store = Sessions::new(1, Duration::ZERO);
        // Idle for zero time means expired at once.
        let a = store.insert(session()).unwrap();
        let b = store.insert(session()).unwrap();
        assert!(store.get(&a).is_none());
        assert_ne!(a, b);
    }
}
