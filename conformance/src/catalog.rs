//! A check as the runner sees it: its description and what it does, in Rust or as a scenario.

use std::sync::Arc;

use futures::future::BoxFuture;

use crate::check::{CheckInfo, Level, Outcome, Session, Transport};
use crate::scenario::Scenario;
use crate::session::Ctx;

/// A check written in Rust.
pub type CheckFn = for<'a> fn(&'a Ctx) -> BoxFuture<'a, Outcome>;

#[derive(Clone)]
#[allow(missing_debug_implementations)] // fn pointers; Check's Debug shows the id
pub enum Body {
    Code(CheckFn),
    Scenario(Arc<Scenario>),
}

/// A check: its description and what it does.
#[derive(Clone)]
pub struct Check {
    pub info: CheckInfo,
    pub body: Body,
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

    /// Does it need a legacy session (the `initialize` handshake)? Checks of the legacy
    /// shared session do, and so do checks of their own process written against one: code
    /// outside `era` and `modern`, and scenarios that open with the handshake.
    pub fn needs_legacy(&self) -> bool {
        match (&self.body, self.info.session) {
            (_, Session::Legacy) => true,
            (_, Session::Modern | Session::Startup) => false,
            (Body::Scenario(s), Session::Own) => s.handshake,
            (Body::Code(_), Session::Own) => {
                !matches!(self.info.area(), "era" | "modern")
                    && !self.is_modern()
                    && !self.either_era()
            }
        }
    }

    /// Does it run against a server of either era (it picks the era's requests itself)?
    pub fn either_era(&self) -> bool {
        self.info.id == "http.origin-forbidden"
    }

    /// Is it about the 2026-07-28 era (`modern.*`, `http.modern-*`)?
    pub fn is_modern(&self) -> bool {
        self.info.area() == "modern" || self.info.id.starts_with("http.modern-")
    }
}

/// Builders for the built-in checks' descriptions.
impl Check {
    /// A check written in Rust, in a process of its own until told otherwise.
    pub(crate) fn code(id: &str, level: Level, description: &str, spec: &str, f: CheckFn) -> Check {
        Check {
            info: CheckInfo {
                id: id.to_owned(),
                level,
                description: description.to_owned(),
                spec: spec.to_owned(),
                quote: String::new(),
                reason: String::new(),
                echo_only: false,
                echo_level: None,
                session: Session::Own,
                ends_session: false,
                runs_first: false,
                shares: String::new(),
                transport: Transport::Any,
            },
            body: Body::Code(f),
        }
    }

    /// A check written as a scenario (always a process of its own).
    pub fn scenario(s: Scenario) -> Check {
        Check {
            info: CheckInfo {
                id: s.id.clone(),
                level: s.level,
                description: s.description.clone(),
                spec: s.spec.clone(),
                quote: s.quote.clone(),
                reason: String::new(),
                echo_only: s.echo_only,
                echo_level: None,
                session: Session::Own,
                ends_session: false,
                runs_first: false,
                shares: String::new(),
                transport: s.transport(),
            },
            body: Body::Scenario(Arc::new(s)),
        }
    }

    /// The words of the cited text that make the level what it is.
    pub(crate) fn quote(mut self, words: &str) -> Check {
        words.clone_into(&mut self.info.quote);
        self
    }

    pub(crate) fn session(mut self, session: Session) -> Check {
        self.info.session = session;
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
