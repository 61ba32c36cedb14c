//! The checks of one shared session, one after another. A check that breaks the session (the
//! server exits or stops answering) is named, and the next check gets a new one.

use std::sync::Arc;
use std::time::Instant;

use parking_lot::Mutex;

use super::plan::Placed;
use super::{verdict, Env, Ran};
use crate::catalog::Check;
use crate::check::{CheckResult, Outcome, RunsIn};
use crate::ctx::Slot;
use crate::evidence::Trace;
use crate::probe::{Probe, ProbeError};

/// Runs `checks` in the shared session of `kind`, starting with `first` (the start-up's
/// process) if there is one.
pub(super) async fn run_group<'a>(
    env: &'a Env,
    kind: RunsIn,
    checks: Vec<Placed<'a>>,
    first: Option<Probe>,
) -> Vec<(usize, CheckResult)> {
    let session = Shared {
        env,
        kind,
        slot: Arc::new(Mutex::new(first)),
    };
    let total = checks.len();
    let mut out = Vec::new();
    for (n, (i, check)) in checks.into_iter().enumerate() {
        let result = match env.blocked_by_stalls(check) {
            Some(blocked) => blocked,
            None => session.run(check, n + 1 == total).await,
        };
        env.progress.finished(&result);
        out.push((i, result));
    }
    out
}

/// One era's shared session: its process while no check holds it.
struct Shared<'a> {
    env: &'a Env,
    kind: RunsIn,
    slot: Slot,
}

impl Shared<'_> {
    fn era(&self) -> &'static str {
        self.kind.as_str()
    }

    /// Runs `check` in the session (a new one if the last broke) and judges it; `last`: no
    /// check comes after it.
    async fn run(&self, check: &Check, last: bool) -> CheckResult {
        let trace = Trace::new(&check.info.id);
        let started = Instant::now();
        if self.slot.lock().is_none() {
            if let Err(e) = self.renew(&trace).await {
                let expected = format!("a new shared {} session", self.era());
                let mut result =
                    verdict::decided(check, self.env.config(), Outcome::fail(expected, e), None);
                self.env.finish(&mut result, &trace, started);
                return result;
            }
        }
        let ran = self.run_body(check, &trace).await;
        let mut probe = self.slot.lock().take();
        let ends = check.info.ends_session;
        let broke = still_serving(probe.as_mut(), &ran, last || ends).await;
        if let Some(p) = probe.as_mut() {
            p.flush_evidence();
        }
        let mut result = verdict::decided(check, self.env.config(), ran.into_outcome(), None);
        self.env.finish(&mut result, &trace, started);
        // A check that ends the session (SIGTERM) is expected to.
        if let Some(how) = broke.filter(|_| !ends) {
            result.broke_session = Some(format!(
                "the shared {} session broke during this check: {how}; the checks after it use \
                 a new session",
                self.era()
            ));
            probe = None;
        }
        if !probe.as_ref().is_some_and(Probe::gone) {
            *self.slot.lock() = probe;
        }
        result
    }

    /// Runs the check's body. A server that died after the last check's replies is found dead
    /// by this one: not this check's doing, so it runs again, once, in a new session.
    async fn run_body(&self, check: &Check, trace: &Trace) -> Ran {
        let ran = self
            .env
            .run_body(check, trace, Some(Arc::clone(&self.slot)))
            .await;
        let found_dead = self.slot.lock().as_ref().is_some_and(Probe::found_dead);
        if !found_dead {
            return ran;
        }
        *self.slot.lock() = None;
        match self.renew(trace).await {
            Ok(()) => {
                self.env
                    .run_body(check, trace, Some(Arc::clone(&self.slot)))
                    .await
            }
            Err(_) => ran,
        }
    }

    /// A new shared session after one broke: a fresh process, with the handshake (legacy) or
    /// the modern `_meta` set; its frames go to the check that needs it.
    async fn renew(&self, trace: &Trace) -> Result<(), ProbeError> {
        let label = format!("new shared {} session", self.era());
        let mut probe = self.env.spawner.spawn(trace, label)?;
        match self.kind {
            RunsIn::Modern => probe.go_modern(),
            _ => {
                probe.handshake(crate::LATEST).await?;
            }
        }
        *self.slot.lock() = Some(probe);
        Ok(())
    }
}

/// Before the next check, the session must still answer: a ping (`server/discover`) after the
/// check's own requests tells, so a server that dies or goes quiet because of this check is
/// named here, not in the next one. Its frames are this check's. `None`: it still serves (or
/// nothing comes after it to need it); else how it broke.
async fn still_serving(probe: Option<&mut Probe>, ran: &Ran, no_next: bool) -> Option<String> {
    let Some(p) = probe else {
        return Some("the check did not hand it back".to_owned());
    };
    p.settle().await;
    if p.gone() {
        return Some("the server exited".to_owned());
    }
    if p.timed_out() {
        return Some("the server stopped answering (a wait timed out)".to_owned());
    }
    if matches!(ran, Ran::Cut { .. }) {
        return Some("the check ran into its own time limit".to_owned());
    }
    if no_next {
        return None;
    }
    match p.until_barrier().await {
        Ok(_) => None,
        Err(e) if p.timed_out() => Some(format!("the server stopped answering after it: {e}")),
        Err(e @ (ProbeError::Blocked { .. } | ProbeError::NoJsonRpc { .. })) => Some(format!(
            "the reply to the ping after it could not be read: {e}"
        )),
        Err(e) => Some(format!("the server exited after it: {e}")),
    }
}
