//! A check as the runner sees it: its description and what it does, in Rust or as a scenario.

use std::sync::Arc;

use futures::future::BoxFuture;

use crate::capability::Capability;
use crate::check::{CheckInfo, Level, Outcome, RunsIn, Transport};
use crate::ctx::Ctx;
use crate::era::Era;
use crate::ids::CheckId;
use crate::scenario::Scenario;

/// A check written in Rust.
pub type CheckFn = for<'a> fn(&'a Ctx) -> BoxFuture<'a, Outcome>;

#[derive(Clone)]
#[allow(missing_debug_implementations)] // fn pointers; Check's Debug shows the id
pub enum Body {
    Code(CheckFn),
    Scenario(Arc<Scenario>),
}

/// A check: its description, what it does, and what it needs of the server.
#[derive(Clone)]
pub struct Check {
    pub info: CheckInfo,
    pub body: Body,
    pub needs: Needs,
}

/// What a check needs of the server to be judged, besides its transport: said where the check
/// is declared (built-in) or read from its scenario, never worked out from its id at run time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Needs {
    /// A legacy session (the `initialize` handshake): a modern-only server cannot have one.
    pub legacy: bool,
    /// A server that accepts 2026-07-28.
    pub modern: bool,
    /// A capability the server must declare in this era's start-up result.
    pub capability: Option<(Capability, Era)>,
    /// Replies after the handshake: once the server has shown that it stops answering, the
    /// check is blocked instead of waiting out its timeouts.
    pub replies: bool,
}

impl std::fmt::Debug for Check {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Check").field("id", &self.info.id).finish()
    }
}

impl Check {
    /// Runs the check's body.
    pub async fn run(&self, ctx: &Ctx) -> Outcome {
        match &self.body {
            Body::Code(f) => f(ctx).await,
            Body::Scenario(s) => crate::scenario::run(s, ctx).await,
        }
    }
}

/// Builders for the built-in checks' descriptions.
impl Check {
    /// A check written in Rust, in a process of its own until told otherwise, against a legacy
    /// session, waiting for replies after the handshake.
    pub(crate) fn code(
        id: CheckId,
        level: Level,
        description: &str,
        spec: &str,
        f: CheckFn,
    ) -> Check {
        Check {
            info: CheckInfo::new(id.as_str(), level, description, spec),
            body: Body::Code(f),
            needs: Needs {
                legacy: true,
                modern: false,
                capability: None,
                replies: true,
            },
        }
    }

    /// A check written as a scenario (always a process of its own): it needs a legacy session
    /// if it opens with the handshake, and replies after it if it then reads any.
    pub fn scenario(s: Scenario) -> Check {
        let area = s.id.split('.').next().unwrap_or_default();
        let needs = Needs {
            legacy: s.handshake,
            modern: area == "modern" || s.id.starts_with("http.modern-"),
            capability: (area == "tools").then_some((Capability::Tools, Era::Legacy)),
            replies: s.handshake && s.reads_replies(),
        };
        Check {
            info: CheckInfo {
                quote: s.quote.clone(),
                echo_only: s.echo_only,
                transport: s.transport(),
                capability: (area == "tools").then(|| "tools".to_owned()),
                ..CheckInfo::new(&s.id, s.level, &s.description, &s.spec)
            },
            body: Body::Scenario(Arc::new(s)),
            needs,
        }
    }

    /// The words of the cited text that make the level what it is.
    pub(crate) fn quote(mut self, words: &str) -> Check {
        words.clone_into(&mut self.info.quote);
        self
    }

    /// Where it runs: a shared session is of one era; the start-up needs neither, and waits
    /// for nothing after it.
    pub(crate) fn runs_in(mut self, runs_in: RunsIn) -> Check {
        self.info.runs_in = runs_in;
        match runs_in {
            RunsIn::Legacy => self.needs.legacy = true,
            RunsIn::Modern => {
                self.needs.legacy = false;
                self.needs.modern = true;
            }
            RunsIn::Startup => {
                self.needs.legacy = false;
                self.needs.replies = false;
            }
            RunsIn::Own => {}
        }
        self
    }

    /// It is about the 2026-07-28 era: it needs a server that accepts it, and no handshake.
    pub(crate) fn modern(mut self) -> Check {
        self.needs.legacy = false;
        self.needs.modern = true;
        self
    }

    /// It runs against a server of either era (it picks the era's requests itself).
    pub(crate) fn any_era(mut self) -> Check {
        self.needs.legacy = false;
        self
    }

    /// It calls tools: the server must declare the capability in `era`.
    pub(crate) fn tools(self, era: Era) -> Check {
        self.needs(Capability::Tools, era)
    }

    /// It exercises a feature: the server must declare `capability` in `era`.
    pub(crate) fn needs(mut self, capability: Capability, era: Era) -> Check {
        self.needs.capability = Some((capability, era));
        self.info.capability = Some(capability.as_str().to_owned());
        self
    }

    /// It is judged from the handshake's replies (and what comes before it) alone: a server
    /// that stops answering after the handshake does not block it.
    pub(crate) fn only_handshake(mut self) -> Check {
        self.needs.replies = false;
        self
    }

    /// After it the shared session is not to be trusted: it runs last there.
    pub(crate) fn ends_session(mut self) -> Check {
        self.info.ends_session = true;
        self
    }

    /// Why the level is what it is, where the words alone do not say.
    pub(crate) fn because(mut self, reason: &str) -> Check {
        reason.clone_into(&mut self.info.reason);
        self
    }

    /// Before the others in its shared session.
    pub(crate) fn runs_first(mut self) -> Check {
        self.info.runs_first = true;
        self
    }

    /// With a process of its own: the observation it shares with other checks.
    pub(crate) fn shares(mut self, observation: &str) -> Check {
        observation.clone_into(&mut self.info.shares);
        self
    }

    /// Its level in the `echo` profile (what our server's docs (docs/server.md) promise).
    pub(crate) fn echo_level(mut self, level: Level) -> Check {
        self.info.echo_level = Some(level);
        self
    }

    /// Only on this transport.
    pub(crate) fn transport(mut self, transport: Transport) -> Check {
        self.info.transport = transport;
        self
    }

    /// Only in the `echo` profile.
    pub(crate) fn echo_only(mut self) -> Check {
        self.info.echo_only = true;
        self
    }
}
