//! Client checks and how they become a report: each check judges a [`Timeline`] (what the
//! client and the server did), with nothing but the timeline and the scenario it came from, so
//! `client` mode and `observe` judge by the same rules.

use std::time::Duration;

use crate::check::{judge, CheckInfo, CheckResult, Level, Outcome, Profile, Transport};
use crate::ids::CheckId;
use crate::transcript::{Direction, TranscriptEntry};

use super::scenario::ScenarioId;
use super::timeline::{Event, Side, Timeline, What, Wire};

/// What a check judges: one session, and the scenario the harness played in it (`None` when
/// `observe` watched a real server).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Session<'a> {
    pub(crate) timeline: &'a Timeline,
    pub(crate) scenario: Option<ScenarioId>,
}

pub(crate) type JudgeFn = fn(&Session<'_>) -> Outcome;

/// A client check: its description, and how it judges a session.
#[derive(Clone)]
#[allow(missing_debug_implementations)] // a fn pointer; the id says which
pub(crate) struct ClientCheck {
    pub(crate) info: CheckInfo,
    pub(crate) judge: JudgeFn,
    /// The scenarios of `client` mode whose sessions it judges (all if empty).
    pub(crate) scenarios: &'static [ScenarioId],
    /// It is judged by `observe` too (false: it needs what only a scenario sets up).
    pub(crate) observed: bool,
}

impl ClientCheck {
    pub(crate) fn new(
        id: CheckId,
        level: Level,
        description: &str,
        spec: &str,
        judge: JudgeFn,
    ) -> ClientCheck {
        ClientCheck {
            info: CheckInfo::new(id.as_str(), level, description, spec),
            judge,
            scenarios: &[],
            observed: true,
        }
    }

    pub(crate) fn quote(mut self, words: &str) -> ClientCheck {
        self.info.quote = words.to_owned();
        self
    }

    pub(crate) fn because(mut self, reason: &str) -> ClientCheck {
        self.info.reason = reason.to_owned();
        self
    }

    pub(crate) fn transport(mut self, transport: Transport) -> ClientCheck {
        self.info.transport = transport;
        self
    }

    /// Judged only on these scenarios' sessions, and not by `observe`.
    pub(crate) fn only_in(mut self, scenarios: &'static [ScenarioId]) -> ClientCheck {
        self.scenarios = scenarios;
        self.observed = false;
        self
    }

    /// Judged only on these scenarios' sessions in `client` mode, and by `observe` too.
    pub(crate) fn scenarios(mut self, scenarios: &'static [ScenarioId]) -> ClientCheck {
        self.scenarios = scenarios;
        self
    }

    /// Whether it judges a session of this scenario (`None`: observed) on this wire.
    pub(crate) fn applies(&self, scenario: Option<ScenarioId>, wire: Wire) -> bool {
        let http = wire == Wire::Http;
        if self.info.transport.not_applicable(http).is_some() {
            return false;
        }
        match scenario {
            None => self.observed,
            Some(s) => self.scenarios.is_empty() || self.scenarios.contains(&s),
        }
    }
}

/// Severity order for merging one check's outcomes over several sessions: the session that
/// shows a failure decides; else one that shows a pass; else an observation; else a skip.
fn rank(outcome: &Outcome) -> u8 {
    match outcome {
        Outcome::Fail { .. } => 4,
        Outcome::Pass(_) => 3,
        Outcome::Observed(_) => 2,
        Outcome::Blocked(_) => 1,
        Outcome::Skip(_) | Outcome::NotApplicable(_) => 0,
    }
}

/// Judges one check over the sessions it applies to; the deciding session's transcript goes with
/// the result. A check no session applies to is N/A (its transport) or SKIP (its scenarios did
/// not run).
pub(crate) fn result(
    check: &ClientCheck,
    sessions: &[Session<'_>],
    wire: Wire,
    profile: Profile,
) -> CheckResult {
    let mut best: Option<(Outcome, &Session<'_>)> = None;
    for session in sessions.iter().filter(|s| check.applies(s.scenario, wire)) {
        let outcome = labelled((check.judge)(session), session.scenario);
        if best.as_ref().is_none_or(|(b, _)| rank(&outcome) > rank(b)) {
            best = Some((outcome, session));
        }
    }
    let (outcome, transcript) = match best {
        Some((outcome, session)) => (outcome, transcript(session.timeline)),
        None => (not_run(check, wire), Vec::new()),
    };
    CheckResult {
        status: judge(check.info.level, &outcome, profile),
        info: check.info.clone(),
        outcome,
        expected_failure: false,
        blocked_by: None,
        broke_session: None,
        duration: Duration::ZERO,
        transcript,
        whole_transcript: Vec::new(),
        stderr: Vec::new(),
    }
}

fn not_run(check: &ClientCheck, wire: Wire) -> Outcome {
    // The transport's own words speak of testing a server; here a client's sessions are
    // judged (in `client` mode or observed).
    match (check.info.transport, wire) {
        (Transport::Http, Wire::Stdio) => {
            return Outcome::NotApplicable(
                "Streamable HTTP only: the sessions ran over stdio".to_owned(),
            )
        }
        (Transport::Stdio, Wire::Http) => {
            return Outcome::NotApplicable(
                "stdio only: the sessions ran over Streamable HTTP, with no stdin, exit or signal"
                    .to_owned(),
            )
        }
        _ => {}
    }
    let names: Vec<&str> = check.scenarios.iter().map(|s| s.name()).collect();
    Outcome::Skip(format!(
        "judged in scenario(s) {}, which did not run",
        names.join(", ")
    ))
}

/// The outcome's text prefixed with the scenario it was seen in.
fn labelled(outcome: Outcome, scenario: Option<ScenarioId>) -> Outcome {
    let Some(s) = scenario else { return outcome };
    let label = |t: String| format!("[{}] {t}", s.name());
    match outcome {
        Outcome::Pass(t) => Outcome::Pass(label(t)),
        Outcome::Fail { expected, actual } => Outcome::Fail {
            expected,
            actual: label(actual),
        },
        Outcome::Observed(t) => Outcome::Observed(label(t)),
        Outcome::Skip(t) => Outcome::Skip(label(t)),
        Outcome::Blocked(t) => Outcome::Blocked(label(t)),
        Outcome::NotApplicable(t) => Outcome::NotApplicable(t),
    }
}

/// A timeline as transcript entries: what the server sent is `send`, what the client sent
/// `receive` (the harness's seat is the server's), the rest `event`.
pub(crate) fn transcript(timeline: &Timeline) -> Vec<TranscriptEntry> {
    timeline.events.iter().map(entry).collect()
}

/// One event as a transcript entry (see [`transcript`]).
pub(crate) fn entry(e: &Event) -> TranscriptEntry {
    let ms = e.at.as_secs_f64() * 1000.0;
    let (direction, text) = match &e.what {
        What::Message(m) => (
            match m.from {
                Side::Server => Direction::Send,
                Side::Client => Direction::Receive,
            },
            String::from_utf8_lossy(&m.raw).into_owned(),
        ),
        What::Garbage { from, raw } => (
            match from {
                Side::Server => Direction::Send,
                Side::Client => Direction::Receive,
            },
            format!("(not a JSON message) {}", String::from_utf8_lossy(raw)),
        ),
        other => (Direction::Event, event_text(other)),
    };
    TranscriptEntry {
        at_ms: ms,
        direction,
        text,
    }
}

fn event_text(what: &What) -> String {
    match what {
        What::Http(x) => format!("{} {} -> {}", x.method, x.path, x.status),
        What::StdinClosed => "client closed the server's stdin".to_owned(),
        What::Signal(s) => format!("client sent {}", s.name()),
        What::ServerExited { code } => format!("server exited ({code:?})"),
        What::ClientExited { code } => format!("client exited ({code:?})"),
        What::Bound => "the scenario's time bound passed".to_owned(),
        What::Message(_) | What::Garbage { .. } => String::new(),
    }
}
