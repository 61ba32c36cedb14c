//! What a check is, what it can conclude, and how a profile turns that into PASS/FAIL/WARN.
//! Plain data: the checks themselves are in [`crate::checks`], the running in [`crate::runner`].

use std::fmt;
use std::time::Duration;

use crate::transcript::TranscriptEntry;
use serde::{Deserialize, Serialize};

/// How binding the requirement behind a check is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Level {
    /// A MUST of the MCP spec or of JSON-RPC 2.0.
    Must,
    /// A SHOULD, or what every real host relies on.
    Should,
    /// Observed behaviour; never fails.
    Info,
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Level::Must => "MUST",
            Level::Should => "SHOULD",
            Level::Info => "INFO",
        })
    }
}

/// Which checks run and how strictly they are judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// Any stdio server: MUST failures fail the run; SHOULD failures warn.
    #[default]
    Generic,
    /// SHOULD failures fail too.
    Strict,
    /// Our `mcp-echo-server`'s exact documented behaviour: strict, plus the echo checks.
    Echo,
}

impl Profile {
    pub fn as_str(self) -> &'static str {
        match self {
            Profile::Generic => "generic",
            Profile::Strict => "strict",
            Profile::Echo => "echo",
        }
    }
}

/// Which server process a check runs in (not a protocol session: the shared sessions are two of
/// the places).
///
/// Starting a server can take seconds (`npx`, `uvx`), so a check gets a process of its own
/// only when it needs one: it tests the lifecycle, or it may leave the server in a state later
/// checks cannot trust (raw garbage, a closed stdin, a signal). Checks that only need a ready
/// session share one per era and run one after another in it, in list order, the ones that
/// end the session ([`CheckInfo::ends_session`]) last.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunsIn {
    /// Judged from the two start-up processes (`initialize`, `server/discover`) and from what
    /// the whole run saw; starts nothing of its own.
    Startup,
    /// The shared legacy session: `initialize` + `notifications/initialized` done.
    Legacy,
    /// The shared 2026-07-28 session: every request carries `_meta`.
    Modern,
    /// Fresh processes of its own (a few checks share one observation: see `Ctx::observe`).
    Own,
}

impl RunsIn {
    pub fn as_str(self) -> &'static str {
        match self {
            RunsIn::Startup => "startup",
            RunsIn::Legacy => "legacy",
            RunsIn::Modern => "modern",
            RunsIn::Own => "own",
        }
    }
}

/// A stable description of a check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckInfo {
    /// Stable id, `area.name` (e.g. `lifecycle.ping-before-initialize`).
    pub id: String,
    pub level: Level,
    /// One line: what the server must do.
    pub description: String,
    /// Where the requirement comes from (spec page and section, or JSON-RPC 2.0 section).
    pub spec: String,
    /// The words of the cited text the level rests on, verbatim (markup dropped); empty where
    /// the text is silent.
    #[serde(default)]
    pub quote: String,
    /// Why the level is what it is, where the words alone do not say (a sentence that binds
    /// the client, an example without a keyword), in a few words.
    #[serde(default)]
    pub reason: String,
    /// Only in the `echo` profile (our server's documented behaviour, not the spec's).
    #[serde(default)]
    pub echo_only: bool,
    /// The level in the `echo` profile, where it differs: what our server's docs (docs/server.md) promise
    /// beyond the spec (an INFO check of the spec can be a MUST of ours).
    #[serde(default)]
    pub echo_level: Option<Level>,
    /// The server process it runs in.
    #[serde(default = "own", rename = "session")]
    pub runs_in: RunsIn,
    /// In a shared session: after this check the session is not to be trusted (a second
    /// `initialize`, SIGTERM), so it runs last.
    #[serde(default)]
    pub ends_session: bool,
    /// It runs before the others: in a shared session, what later checks rely on (what the
    /// handshake left, several requests in one write answered); of the checks with processes
    /// of their own, the ones whose server may go silent, so their waits overlap the rest.
    #[serde(default)]
    pub runs_first: bool,
    /// With a process of its own: the observation it judges, made once (one process) for the
    /// checks that share it, which run together.
    #[serde(default)]
    pub shares: String,
    /// The transports it applies to; on another it is NOT APPLICABLE.
    #[serde(default)]
    pub transport: Transport,
    /// The server capability it exercises (`tools`, `resources`, …), declared in the era of
    /// the session it runs in; the report's coverage counts it there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capability: Option<String>,
    /// The harness version that added it: under an older `--check-set` it is skipped.
    #[serde(default)]
    pub since: crate::checkset::Version,
}

/// Which transports a check exists on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    /// Any: it is about messages, not how they travel.
    #[default]
    Any,
    /// Only stdio: bytes on a pipe, stdin closing, signals, exit, stderr.
    Stdio,
    /// Only Streamable HTTP: statuses, headers, sessions, SSE.
    Http,
}

impl Transport {
    /// Why a check of this transport does not apply to a target reached over HTTP (`http`
    /// true) or stdio, or `None` if it does.
    pub fn not_applicable(self, http: bool) -> Option<&'static str> {
        match (self, http) {
            (Transport::Stdio, true) => Some(
                "stdio only: over Streamable HTTP each message is its own POST, so there is no \
                 byte stream, stdin, exit or stderr to judge",
            ),
            (Transport::Http, false) => {
                Some("Streamable HTTP only: test an HTTP server with --url to run it")
            }
            _ => None,
        }
    }
}

impl CheckInfo {
    /// A check that quotes nothing yet, in a process of its own, on any transport, needing no
    /// capability: the builders of built-in and client checks start from it.
    pub(crate) fn new(id: &str, level: Level, description: &str, spec: &str) -> CheckInfo {
        CheckInfo {
            id: id.to_owned(),
            level,
            description: description.to_owned(),
            spec: spec.to_owned(),
            quote: String::new(),
            reason: String::new(),
            echo_only: false,
            echo_level: None,
            runs_in: RunsIn::Own,
            ends_session: false,
            runs_first: false,
            shares: String::new(),
            transport: Transport::Any,
            capability: None,
            since: crate::checkset::Version::FIRST,
        }
    }

    /// Where it runs in its shared session: first, anywhere (list order), or last.
    pub fn session_order(&self) -> u8 {
        match (self.runs_first, self.ends_session) {
            (true, _) => 0,
            (false, false) => 1,
            (false, true) => 2,
        }
    }
}

fn own() -> RunsIn {
    RunsIn::Own
}

impl CheckInfo {
    /// The part of the id before the first dot: lifecycle, jsonrpc, tools, framing, …
    pub fn area(&self) -> &str {
        self.id.split('.').next().unwrap_or(&self.id)
    }
}

/// What a check concluded, before the profile judges it.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The server did what is required. The text says what was observed (may be empty).
    Pass(String),
    /// It did not: what was expected and what came back.
    Fail { expected: String, actual: String },
    /// An observation for the report (used by INFO checks; never fails).
    Observed(String),
    /// The check does not apply (e.g. the server has no tools); the text says why.
    Skip(String),
    /// It could not be judged: a reply it waited for could not be read (the text says why);
    /// the check that owns the reason fails.
    Blocked(String),
    /// It does not exist on the target's transport (byte framing, stdin and exit over HTTP;
    /// the `http.*` checks over stdio); the text says why.
    NotApplicable(String),
}

impl Outcome {
    pub fn pass(text: impl Into<String>) -> Outcome {
        Outcome::Pass(text.into())
    }

    /// What was expected, and what came back (a reply, or why none came: a probe's error).
    pub fn fail(expected: impl Into<String>, actual: impl fmt::Display) -> Outcome {
        Outcome::Fail {
            expected: expected.into(),
            actual: actual.to_string(),
        }
    }

    /// Its text: what was observed, or why it was skipped, blocked or not applicable; for a
    /// failure, what came back.
    pub fn text(&self) -> &str {
        match self {
            Outcome::Fail { actual, .. } => actual,
            Outcome::Pass(text)
            | Outcome::Observed(text)
            | Outcome::Skip(text)
            | Outcome::Blocked(text)
            | Outcome::NotApplicable(text) => text,
        }
    }
}

/// The verdict in a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Status {
    Pass,
    Fail,
    /// A SHOULD not met under the generic profile.
    Warn,
    /// An INFO check's observation.
    Info,
    Skip,
    /// Could not be judged: the replies it waited for could not be read, for a reason another
    /// check owns and fails ([`CheckResult::blocked_by`]). Never a failure of its own.
    Blocked,
    /// Not applicable on the target's transport ([`CheckInfo::transport`]): shown and counted,
    /// never run.
    #[serde(rename = "N/A")]
    NotApplicable,
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Status::Pass => "PASS",
            Status::Fail => "FAIL",
            Status::Warn => "WARN",
            Status::Info => "INFO",
            Status::Skip => "SKIP",
            Status::Blocked => "BLOCKED",
            Status::NotApplicable => "N/A",
        })
    }
}

/// Judges an outcome at a level under a profile.
pub fn judge(level: Level, outcome: &Outcome, profile: Profile) -> Status {
    match (outcome, level) {
        (Outcome::Skip(_), _) => Status::Skip,
        (Outcome::Blocked(_), _) => Status::Blocked,
        (Outcome::NotApplicable(_), _) => Status::NotApplicable,
        (_, Level::Info) | (Outcome::Observed(_), _) => Status::Info,
        (Outcome::Pass(_), _) => Status::Pass,
        (Outcome::Fail { .. }, Level::Must) => Status::Fail,
        (Outcome::Fail { .. }, Level::Should) => match profile {
            Profile::Generic => Status::Warn,
            Profile::Strict | Profile::Echo => Status::Fail,
        },
    }
}

/// One check's result against one target.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckResult {
    pub info: CheckInfo,
    pub status: Status,
    pub outcome: Outcome,
    /// Listed in `--expected-failures`: a FAIL that does not fail the run.
    pub expected_failure: bool,
    /// For a [`Status::Blocked`] check: the check that owns (and fails) the reason.
    pub blocked_by: Option<String>,
    /// The shared session broke during this check (the server exited or stopped answering):
    /// how; the checks after it got a new one.
    pub broke_session: Option<String>,
    pub duration: Duration,
    /// Frames exchanged by the check's server processes, in milliseconds since the check
    /// started; an event entry names each process before its frames.
    pub transcript: Vec<TranscriptEntry>,
    /// The same, every entry kept (not cut to a head and a tail), for `--transcript` files;
    /// empty unless they were asked for.
    pub whole_transcript: Vec<TranscriptEntry>,
    /// The server's stderr during the check (last lines).
    pub stderr: Vec<String>,
}

/// How long the target's server processes took to answer their first request, and how many
/// were started.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Starts {
    /// Processes started for this target.
    pub count: usize,
    /// Time from spawn to the first reply of each start that answered, in start order.
    pub answered: Vec<Duration>,
}

impl Starts {
    /// The first, median and slowest start that answered.
    pub fn first_median_slowest(&self) -> Option<(Duration, Duration, Duration)> {
        let first = *self.answered.first()?;
        let mut sorted = self.answered.clone();
        sorted.sort();
        Some((first, sorted[sorted.len() / 2], sorted[sorted.len() - 1]))
    }
}

/// What the run says about one target.
#[derive(Debug, Clone, PartialEq)]
pub struct TargetReport {
    /// The name from a config file, or the command line.
    pub name: String,
    pub command: String,
    pub framing: String,
    pub profile: Profile,
    /// `serverInfo` from a successful `initialize`; for a server that answers no `initialize`,
    /// `_meta["io.modelcontextprotocol/serverInfo"]` of its `server/discover` result, if any.
    pub server_info: Option<serde_json::Value>,
    /// The protocol eras the server speaks, as era detection found them before the checks:
    /// `"legacy"` (`initialize` gets a result) and/or `"modern"` (`server/discover` with
    /// 2026-07-28 `_meta` gets a DiscoverResult or -32022), in that order; empty if neither,
    /// or if the target was not started or not tested.
    pub eras: Vec<String>,
    /// Set when the server could not be started at all (exit code 3).
    pub start_error: Option<String>,
    /// Set when the entry was not tested (an HTTP server in a config file).
    pub skipped: Option<String>,
    pub results: Vec<CheckResult>,
    /// Listed expected failures that now pass: they fail the run so baselines shrink.
    pub stale_expected_failures: Vec<String>,
    /// Root causes: replies that arrived but could not be matched to requests, each owned
    /// (and failed) by one check, which the checks it blocked name.
    pub findings: Vec<crate::mismatch::Finding>,
    /// Per capability and era the server speaks: declared or not, and what its checks did.
    pub coverage: Vec<Coverage>,
    pub starts: Starts,
    pub duration: Duration,
}

impl TargetReport {
    /// FAILs that are not expected, plus stale expectations.
    pub fn failed(&self) -> bool {
        self.results
            .iter()
            .any(|r| r.status == Status::Fail && !r.expected_failure)
            || !self.stale_expected_failures.is_empty()
    }
}

/// One capability in one era.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Coverage {
    /// `tools`, `resources`, `resources.subscribe`, `prompts`, `logging`, `completions`.
    pub capability: String,
    /// `legacy` (declared in `initialize`) or `modern` (in `server/discover`).
    pub era: String,
    pub declared: bool,
    /// Checks of it that ran to a verdict (PASS, FAIL, WARN, INFO).
    pub ran: usize,
    pub passed: usize,
    /// FAILs (expected ones included) and WARNs.
    pub failed: usize,
    pub info: usize,
    /// Checks of it that did not run to a verdict: skipped, blocked, not applicable.
    pub not_run: usize,
    /// Why they did not, each reason once.
    pub reasons: Vec<String>,
}
