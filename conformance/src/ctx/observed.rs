//! The observations several checks judge, each made once per target (in processes of its own)
//! and shared: what each holds, and a typed [`Key`] for each, so a check can only make and read
//! one with the type it has.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use serde_json::Value;
use tokio::sync::OnceCell;

use super::tool_calls::ToolCalls;
use crate::evidence::Collected;
use crate::probe::{Probe, ProbeError, Quiet};

/// An observation and the evidence that produced it (handed to every check that judges it).
#[derive(Debug)]
pub struct Observed<T> {
    pub value: Arc<T>,
    pub evidence: Collected,
}

type Cell<T> = OnceCell<Arc<Observed<T>>>;

/// One target's shared observations.
#[derive(Debug, Default)]
pub struct Observations {
    /// `initialize` offering each version, by version.
    initialize: Mutex<HashMap<String, Arc<Cell<Initialized>>>>,
    malformed: Cell<Malformed>,
    short_session: Cell<Result<ShortSession, ProbeError>>,
    without_meta: Cell<WithoutMeta>,
    tool_calls_legacy: Cell<ToolCalls>,
    tool_calls_modern: Cell<ToolCalls>,
}

impl Observations {
    pub fn initialize(&self, version: &str) -> Arc<Cell<Initialized>> {
        Arc::clone(
            self.initialize
                .lock()
                .entry(version.to_owned())
                .or_default(),
        )
    }
}

/// Names one kind of observation: what the checks that judge it share (as `--list` and
/// docs/checks.md say), and where a target's is kept.
#[derive(Debug)]
pub struct Key<T: 'static> {
    pub name: &'static str,
    cell: fn(&Observations) -> &Cell<T>,
}

impl<T> Key<T> {
    pub fn cell<'a>(&self, observations: &'a Observations) -> &'a Cell<T> {
        (self.cell)(observations)
    }
}

/// Input a client must not send, in one ready session (`jsonrpc.*`).
pub const MALFORMED: Key<Malformed> = Key {
    name: "input a client must not send",
    cell: |o| &o.malformed,
};

/// A short session, read to its end (`framing.*`).
pub const SHORT_SESSION: Key<Result<ShortSession, ProbeError>> = Key {
    name: "a short session",
    cell: |o| &o.short_session,
};

/// `tools/list` as the first request of a fresh process, without `_meta` and without client
/// capabilities (`modern.*`).
pub const WITHOUT_META: Key<WithoutMeta> = Key {
    name: "tools/list without _meta",
    cell: |o| &o.without_meta,
};

/// The read-only tool calls of the legacy era (`tools.*`).
pub const TOOL_CALLS_LEGACY: Key<ToolCalls> = Key {
    name: "read-only tool calls (legacy)",
    cell: |o| &o.tool_calls_legacy,
};

/// The read-only tool calls of the 2026-07-28 era (`modern.tools-*`, `modern.result-type`).
pub const TOOL_CALLS_MODERN: Key<ToolCalls> = Key {
    name: "read-only tool calls (2026-07-28)",
    cell: |o| &o.tool_calls_modern,
};

/// The name the checks of `initialize` offering each version share.
pub const VERSIONS: &str = "initialize offering each version";

/// The reply to `initialize` offering one version, in a process of its own, and that process
/// while no check has taken it over.
#[derive(Debug)]
pub struct Initialized {
    pub reply: Result<Value, ProbeError>,
    pub(super) process: Mutex<Option<Probe>>,
}

impl Initialized {
    pub fn new(reply: Result<Value, ProbeError>, process: Option<Probe>) -> Initialized {
        Initialized {
            reply,
            process: Mutex::new(process),
        }
    }
}

/// What each body of the malformed-input session got, or why the session did not start.
pub type Malformed = Result<Vec<Result<Quiet, Unjudged>>, ProbeError>;

/// Why a body of the malformed-input session could not be judged.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Unjudged {
    /// Its own wait failed.
    #[error(transparent)]
    Probe(#[from] ProbeError),
    /// It was not sent: the server had stopped answering after an earlier body.
    #[error("not sent: the server stopped answering after {after}: {because}")]
    NotSent {
        after: &'static str,
        because: ProbeError,
    },
}

/// A short session in a process of its own: from its start, a handshake, a few requests, then
/// 100 pings written at once and stdin closed, and stdout read to its end.
#[derive(Debug)]
pub struct ShortSession {
    /// Its requests (a ping, `tools/list`, an unknown method, an unknown tool) and a ping
    /// after them were answered; else why not.
    pub served: Result<(), ProbeError>,
    /// What was on stdout that is not a JSON-RPC message, and how many in all.
    pub not_messages: Vec<String>,
    pub not_messages_total: usize,
    pub frames: usize,
    /// The ids of the requests written just before stdin closed that were answered.
    pub answered: BTreeSet<i64>,
    /// How the process ended after stdin closed and its last reply, and how long after.
    pub exit: Option<(Duration, String)>,
    /// (bytes, lines) written to stderr.
    pub stderr: (u64, u64),
}

/// The replies to `tools/list` without `_meta` (`bare`) and with `_meta` lacking client
/// capabilities (`partial`), each sent as the first request of a fresh process. Each is kept on
/// its own: a dual-era server may refuse the bare one in a way of its own (a legacy HTTP server
/// without a session: 400, any body), which says nothing of the other.
#[derive(Debug)]
pub struct WithoutMeta {
    pub bare: Attempt,
    pub partial: Attempt,
}

/// A reply, or what was expected and why it did not come.
pub type Attempt = Result<Value, (String, ProbeError)>;
