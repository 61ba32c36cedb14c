//! What the run learns of a server that stops answering after the handshake, or loses
//! replies: once waits for replies the server owed have run out in two of its processes, and a
//! check has failed on one, it keeps doing it. From then on the checks that would wait for a
//! reply are BLOCKED by that check instead of each waiting out `--timeout` (a shared session
//! would be replaced and time out again; a process of a check's own would too).

use std::collections::BTreeSet;

use parking_lot::Mutex;

use crate::check::Status;
use crate::evidence::Stall;
use crate::mismatch::{Finding, Kind};

/// One target's learning, shared by the checks that run at once.
#[derive(Debug, Default)]
pub(super) struct Stalls(Mutex<Learned>);

#[derive(Debug, Default)]
struct Learned {
    /// The processes (by start number) in which a wait for a reply the server owed ran out.
    processes: BTreeSet<usize>,
    /// The first check that FAILed with such a wait, and what its wait said: it owns the root
    /// cause (an INFO or a passing check cannot).
    owner: Option<(String, String)>,
}

impl Stalls {
    /// A check finished with `status`, having met `stalls`.
    pub(super) fn learn(&self, check: &str, status: Status, stalls: &[Stall]) {
        let Some(first) = stalls.first() else {
            return;
        };
        let mut learned = self.0.lock();
        learned.processes.extend(stalls.iter().map(|s| s.process));
        if learned.owner.is_none() && status == Status::Fail {
            learned.owner = Some((check.to_owned(), first.why.clone()));
        }
    }

    /// The check that owns the root cause, once the server has shown it: waits ran out in two
    /// processes, and a check failed on one.
    pub(super) fn owner(&self) -> Option<String> {
        let learned = self.0.lock();
        let (owner, _) = learned.owner.as_ref()?;
        (learned.processes.len() >= 2).then(|| owner.clone())
    }

    /// Why a check that would wait for a reply is not run.
    pub(super) fn blocked_text(owner: &str) -> String {
        format!(
            "not run: the server stopped answering twice, in separate processes (first in \
             {owner}), so it keeps losing replies"
        )
    }

    /// The root cause for the report, if the run learned one.
    pub(super) fn finding(&self) -> Option<Finding> {
        let owner = self.owner()?;
        let learned = self.0.lock();
        let (_, why) = learned.owner.as_ref()?;
        Some(Finding {
            kind: Kind::StopsAnswering,
            owner: owner.clone(),
            seen_in: owner,
            actual: why.clone(),
            frames: Vec::new(),
            count: learned.processes.len(),
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn stall(process: usize) -> Stall {
        Stall {
            process,
            why: format!("no response in process {process}"),
        }
    }

    #[test]
    fn two_processes_and_a_failed_check_make_a_root_cause() {
        let s = Stalls::default();
        // An INFO check's wait ran out: it cannot own it.
        s.learn("a.info", Status::Info, &[stall(3)]);
        assert_eq!(s.owner(), None);
        // A failed check in another process: two processes, an owner.
        s.learn("b.must", Status::Fail, &[stall(5)]);
        assert_eq!(s.owner().as_deref(), Some("b.must"));
        let finding = s.finding().unwrap();
        assert_eq!(finding.count, 2);
        assert_eq!(finding.actual, "no response in process 5");
        // A later failure does not take it over.
        s.learn("c.must", Status::Fail, &[stall(6)]);
        assert_eq!(s.owner().as_deref(), Some("b.must"));
    }

    #[test]
    fn one_process_is_not_enough() {
        let s = Stalls::default();
        s.learn("a.must", Status::Fail, &[stall(1)]);
        s.learn("b.must", Status::Fail, &[stall(1)]);
        assert_eq!(
            s.owner(),
            None,
            "the same process twice: one broken session"
        );
        s.learn("c.pass", Status::Pass, &[]);
        assert_eq!(s.owner(), None);
        s.learn("d.warn", Status::Warn, &[stall(2)]);
        assert_eq!(s.owner().as_deref(), Some("a.must"));
    }
}
