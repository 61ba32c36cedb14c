//! The process groups of the servers the harness starts. Each server runs in a group of its
//! own, so what it starts in turn (an `npx` wrapper's `node`, a shell's background jobs) is
//! ended with it: SIGTERM to the whole group, then SIGKILL to whatever of it is left after
//! [`GRACE`]. A group is registered while the harness holds it, so an interrupted harness
//! (SIGINT, SIGTERM, SIGHUP) ends them all before it exits: in groups of their own, servers no
//! longer get the terminal's Ctrl-C.
//!
//! A process that leaves its group (`setsid`, a daemon) is beyond reach, as it is for a shell.

use std::collections::BTreeSet;
use std::time::Duration;

use nix::errno::Errno;
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use parking_lot::Mutex;

/// How long a group has after SIGTERM before SIGKILL.
pub const GRACE: Duration = Duration::from_secs(2);

/// How often a group that was sent SIGTERM is looked at: other processes' ends cannot be
/// waited on, only seen.
const LOOK_EVERY: Duration = Duration::from_millis(20);

/// The groups the harness holds now (their ids, which are their leaders' pids).
static LIVE: Mutex<BTreeSet<i32>> = parking_lot::const_mutex(BTreeSet::new());

/// A server's process group, registered while it is held. Dropped without [`Group::end`], it
/// is killed (SIGKILL) at once: a drop cannot wait out a grace period.
#[derive(Debug)]
pub struct Group {
    id: i32,
}

/// How a group ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// Nothing of it was left to signal.
    Gone,
    /// It ended within the grace period after SIGTERM.
    Terminated,
    /// Something of it was still there after the grace period: it was sent SIGKILL.
    Killed,
}

impl Group {
    /// The group led by `pid`, a process just spawned with `process_group(0)`.
    pub fn led_by(pid: u32) -> Option<Group> {
        let id = i32::try_from(pid).ok().filter(|id| *id > 1)?;
        LIVE.lock().insert(id);
        Some(Group { id })
    }

    /// SIGTERM to the whole group, then SIGKILL if any of it is left after `grace`.
    pub async fn end(&self, grace: Duration) -> Ending {
        end(self.id, grace).await
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if running(self.id) {
            signal(self.id, Signal::SIGKILL);
        }
        LIVE.lock().remove(&self.id);
    }
}

/// Ends every group the harness holds, all at once (SIGTERM, then SIGKILL after `grace`);
/// how many there were.
pub async fn end_all(grace: Duration) -> usize {
    let ids: Vec<i32> = LIVE.lock().iter().copied().collect();
    futures::future::join_all(ids.iter().map(|id| end(*id, grace))).await;
    ids.len()
}

/// SIGKILL to every group the harness holds, now (a second interruption).
pub fn kill_all() {
    for id in LIVE.lock().iter() {
        signal(*id, Signal::SIGKILL);
    }
}

async fn end(id: i32, grace: Duration) -> Ending {
    if !running(id) {
        return Ending::Gone;
    }
    signal(id, Signal::SIGTERM);
    let deadline = tokio::time::Instant::now() + grace;
    while tokio::time::Instant::now() < deadline {
        tokio::time::sleep(LOOK_EVERY).await;
        if !running(id) {
            return Ending::Terminated;
        }
    }
    signal(id, Signal::SIGKILL);
    Ending::Killed
}

fn signal(id: i32, signal: Signal) {
    if let Err(e) = killpg(Pid::from_raw(id), signal) {
        if e != Errno::ESRCH {
            eprintln!("mcp-conformance: cannot send {signal} to process group {id}: {e}");
        }
    }
}

/// Is any process of group `id` still running? A process that has ended but is not reaped
/// yet (a zombie: its parent, or an init that does not reap, has not collected it) is not.
fn running(id: i32) -> bool {
    match killpg(Pid::from_raw(id), None) {
        Err(Errno::ESRCH) => false,
        _ => any_member_alive(id),
    }
}

/// Linux: a member of group `id` in `/proc` that is not a zombie. Elsewhere the group's
/// existence has to do.
#[cfg(target_os = "linux")]
fn any_member_alive(id: i32) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return true;
    };
    entries.flatten().any(|entry| {
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        // `pid (comm) state ppid pgrp …`: comm may hold anything, so read after its `)`.
        let mut fields = stat
            .rsplit_once(')')
            .map_or("", |(_, f)| f)
            .split_whitespace();
        let state = fields.next();
        let pgrp = fields.nth(1).and_then(|p| p.parse::<i32>().ok());
        pgrp == Some(id) && !matches!(state, Some("Z" | "X"))
    })
}

#[cfg(not(target_os = "linux"))]
fn any_member_alive(_id: i32) -> bool {
    true
}
