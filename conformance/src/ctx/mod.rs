//! What a check gets to work with ([`Ctx`]): the target, the settings, the era(s) it speaks,
//! and its server processes: a fresh one ([`Ctx::spawn`]), the shared session of its era
//! ([`Ctx::ready`], [`Ctx::modern_session`]), or an observation made once in a process of its
//! own and judged by several checks ([`Ctx::observe`]).

use std::future::Future;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use parking_lot::Mutex;
use serde_json::Value;

use crate::config::RunConfig;
use crate::era::EraReport;
use crate::evidence::Trace;
use crate::probe::{Probe, ProbeError, Spawner};
use crate::target::Target;

mod observed;
mod tool_calls;

pub use observed::{
    Attempt, Initialized, Key, Malformed, Observations, Observed, ShortSession, Unjudged,
    WithoutMeta, MALFORMED, SHORT_SESSION, TOOL_CALLS_LEGACY, TOOL_CALLS_MODERN, VERSIONS,
    WITHOUT_META,
};
pub use tool_calls::{CallOutcome, ToolCall, ToolCalls, Unlisted};

/// A shared session's process while no check holds it.
pub type Slot = Arc<Mutex<Option<Probe>>>;

/// What a check gets.
#[derive(Debug, Clone)]
pub struct Ctx {
    spawner: Spawner,
    /// What era detection found before the checks ran.
    era: Arc<EraReport>,
    /// The shared session this check runs in, if it is one of a shared group.
    shared: Option<Slot>,
    observations: Arc<Observations>,
    /// Where the check's evidence goes.
    trace: Trace,
}

impl Ctx {
    /// What a check of a target gets: its processes from `spawner`, its evidence into `trace`,
    /// the shared session `shared` if it runs in one.
    pub(crate) fn new(
        spawner: Spawner,
        era: Arc<EraReport>,
        observations: Arc<Observations>,
        trace: Trace,
        shared: Option<Slot>,
    ) -> Ctx {
        Ctx {
            spawner,
            era,
            shared,
            observations,
            trace,
        }
    }

    pub fn target(&self) -> &Target {
        &self.spawner.target
    }

    pub fn config(&self) -> &RunConfig {
        &self.spawner.config
    }

    /// What era detection found before the checks ran.
    pub fn era(&self) -> &EraReport {
        &self.era
    }

    /// Where the check's evidence goes.
    pub fn trace(&self) -> &Trace {
        &self.trace
    }

    /// The HTTP client of a target reached over Streamable HTTP, if one could be made.
    pub fn http_client(&self) -> Option<reqwest::Client> {
        self.spawner.http_client.clone()
    }

    /// A fresh process, no handshake.
    pub async fn spawn(&self) -> Result<Probe, ProbeError> {
        self.spawner.spawn(&self.trace, "own process")
    }

    /// A ready legacy session: the shared one for a check of the shared group, else a fresh
    /// process after a complete handshake with the latest version.
    pub async fn ready(&self) -> Result<Lease, ProbeError> {
        if let Some(mut lease) = self.lease("shared legacy session")? {
            if lease.take_pending_initialized() {
                lease.notify("notifications/initialized", None).await?;
            }
            return Ok(lease);
        }
        let mut probe = self.spawn().await?;
        probe.handshake(crate::LATEST).await?;
        Ok(Lease::own(probe))
    }

    /// A modern (2026-07-28) session: every request sent with [`Probe::request`] carries
    /// 2026-07-28 `_meta`. The shared one for a check of the shared group, else a fresh process.
    pub async fn modern_session(&self) -> Result<Lease, ProbeError> {
        if let Some(lease) = self.lease("shared modern session")? {
            return Ok(lease);
        }
        let mut probe = self.spawn().await?;
        probe.go_modern();
        Ok(Lease::own(probe))
    }

    /// A session of `era`: [`Ctx::ready`] or [`Ctx::modern_session`]. A check written for both
    /// eras sends the same requests; the probe adds the 2026-07-28 `_meta` in a modern one.
    pub async fn session(&self, era: crate::era::Era) -> Result<Lease, ProbeError> {
        match era {
            crate::era::Era::Legacy => self.ready().await,
            crate::era::Era::Modern => self.modern_session().await,
        }
    }

    fn lease(&self, label: &str) -> Result<Option<Lease>, ProbeError> {
        let Some(slot) = &self.shared else {
            return Ok(None);
        };
        let probe = slot.lock().take();
        let mut probe = probe.ok_or(ProbeError::NoSession)?;
        probe.rebind(&self.trace, label);
        Ok(Some(Lease {
            probe: Some(probe),
            home: Some(Arc::clone(slot)),
        }))
    }

    /// An observation several checks judge, made once per target by `make` (in processes of
    /// its own, as `make`'s `Ctx` starts them) and shared: each check that asks gets the same
    /// value, and the frames and stderr that produced it as its own evidence.
    pub async fn observe<T, F, Fut>(&self, key: &Key<T>, make: F) -> Arc<T>
    where
        F: FnOnce(Ctx) -> Fut,
        Fut: Future<Output = T>,
    {
        self.observe_in(key.cell(&self.observations), make).await
    }

    async fn observe_in<T, F, Fut>(
        &self,
        cell: &tokio::sync::OnceCell<Arc<Observed<T>>>,
        make: F,
    ) -> Arc<T>
    where
        F: FnOnce(Ctx) -> Fut,
        Fut: Future<Output = T>,
    {
        let observed = cell
            .get_or_init(|| async {
                let ctx = Ctx {
                    trace: Trace::new(&self.trace.check),
                    shared: None,
                    ..self.clone()
                };
                let trace = ctx.trace.clone();
                let value = make(ctx).await;
                Arc::new(Observed {
                    value: Arc::new(value),
                    evidence: trace.take(),
                })
            })
            .await;
        self.trace.absorb(&observed.evidence);
        Arc::clone(&observed.value)
    }
}

impl Ctx {
    /// The reply to `initialize` offering `version`, asked once per target in a process of
    /// its own (version negotiation asks each version; the process is kept for
    /// [`Ctx::after_initialize`]).
    pub async fn initialized(&self, version: &str) -> Arc<Initialized> {
        let offered = version.to_owned();
        let cell = self.observations.initialize(version);
        self.observe_in(&cell, |ctx| async move {
            let mut probe = match ctx.spawn().await {
                Ok(probe) => probe,
                Err(e) => return Initialized::new(Err(e), None),
            };
            let reply = probe.initialize(&offered).await;
            probe.flush_evidence();
            let keep = reply.as_ref().is_ok_and(|r| r.get("result").is_some());
            Initialized::new(reply, keep.then_some(probe))
        })
        .await
    }

    /// A process whose `initialize` offering `version` got a result, and nothing else was sent
    /// to it: the one [`Ctx::initialized`] left, if no other check took it, else a fresh one.
    /// Starting a server can take seconds; this saves one start per version.
    pub async fn after_initialize(&self, version: &str) -> Result<(Probe, Value), ProbeError> {
        let init = self.initialized(version).await;
        let left = init.process.lock().take();
        if let (Some(mut probe), Ok(reply)) = (left, &init.reply) {
            probe.rebind(
                &self.trace,
                &format!("own process, the one initialize {version} was asked in"),
            );
            return Ok((probe, reply.clone()));
        }
        let mut probe = self.spawn().await?;
        let reply = probe.initialize(version).await?;
        Ok((probe, reply))
    }
}

/// A process a check holds: its own (killed when the lease ends), or the shared session's
/// (handed back when the lease ends).
#[derive(Debug)]
pub struct Lease {
    probe: Option<Probe>,
    home: Option<Slot>,
}

impl Lease {
    fn own(probe: Probe) -> Lease {
        Lease {
            probe: Some(probe),
            home: None,
        }
    }
}

impl Deref for Lease {
    type Target = Probe;

    fn deref(&self) -> &Probe {
        self.probe.as_ref().unwrap_or_else(|| unreachable!())
    }
}

impl DerefMut for Lease {
    fn deref_mut(&mut self) -> &mut Probe {
        self.probe.as_mut().unwrap_or_else(|| unreachable!())
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        let (Some(mut probe), Some(home)) = (self.probe.take(), self.home.take()) else {
            return;
        };
        probe.flush_evidence();
        *home.lock() = Some(probe);
    }
}
