//! The start of a run against one target: two processes at once, one sent `initialize` (the
//! legacy era's handshake) and one `server/discover` with 2026-07-28 `_meta` (the modern
//! era's probe, 2026-07-28 `basic/transports/stdio.mdx`, Backward Compatibility). Their replies
//! decide the era(s), and the processes go on as the shared sessions.
//!
//! A target that answers neither ends the run here (exit code 3) with what it did say on
//! stdout and stderr: no further check could be judged.

use std::time::Duration;

use serde_json::{json, Value};

use crate::era::{conclude, EraReport};
use crate::evidence::Trace;
use crate::ids::{self, CheckId};
use crate::mismatch::Kind;
use crate::probe::{
    describe_exit, discover_request, initialize_params, Probe, ProbeError, Spawner,
};

/// What the start-up leaves.
#[derive(Debug)]
pub struct Startup {
    pub era: EraReport,
    /// The `initialize` process after its result: the shared legacy session.
    pub legacy: Option<Probe>,
    /// The `server/discover` process after its DiscoverResult, if nothing else was sent to
    /// it: the shared modern session.
    pub modern: Option<Probe>,
}

/// Stderr lines a start error shows.
const STDERR_SHOWN: usize = 12;
/// Non-frames from stdout a start error quotes.
const STDOUT_SHOWN: usize = 3;

/// Why there is nothing to test.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// A start-up process could not be started.
    #[error(transparent)]
    Spawn(#[from] ProbeError),
    /// The server answered neither start-up request: how it ended, or what it wrote.
    #[error("{0}")]
    NothingAnswered(String),
}

/// Starts the two probes and judges their replies; `Err` is a start error.
pub async fn start(spawner: &Spawner) -> Result<Startup, StartError> {
    let trace = Trace::new(ids::ERA_DETECT.as_str());
    let mut legacy = spawner.spawn(&trace, "start-up process: initialize")?;
    let mut modern = spawner.spawn(&trace, "start-up process: server/discover")?;
    // A legacy server may ignore an unknown request before initialize ("or not at all",
    // stdio.mdx): once nothing has come for --timeout, initialize follows as a barrier, and a
    // reply to it first means server/discover got none.
    modern.set_barrier(json!({"jsonrpc": "2.0", "method": "initialize",
        "params": initialize_params(crate::LATEST)}));
    let (initialize, discover) = tokio::join!(
        request(
            &mut legacy,
            json!({"jsonrpc": "2.0", "method": "initialize",
            "params": initialize_params(crate::LATEST)})
        ),
        request(&mut modern, discover_request()),
    );
    let blocked = legacy
        .blocked()
        .or(modern.blocked())
        .filter(|_| initialize.is_err() && discover.is_err());
    if initialize.is_err() && discover.is_err() && blocked.is_none() {
        let why = nothing_to_test(&legacy, &modern, &initialize, &discover).await;
        return Err(StartError::NothingAnswered(why));
    }
    let legacy_ok = initialize
        .as_ref()
        .is_ok_and(|reply| reply.get("result").is_some());
    let mut era = conclude(discover, initialize);
    if let Some(kind) = blocked {
        era.blocked = Some((kind, blocked_reason(&legacy, &modern, kind)));
    }
    let keep_modern = era.accepts_latest && !modern.barrier_sent();
    legacy.flush_evidence();
    modern.flush_evidence();
    let evidence = trace.take();
    era.transcript = evidence.transcript;
    era.stderr = evidence.stderr;
    if legacy_ok {
        legacy.defer_initialized();
    }
    modern.go_modern();
    Ok(Startup {
        era,
        legacy: legacy_ok.then_some(legacy),
        modern: keep_modern.then_some(modern),
    })
}

/// Sends `msg` with a fresh id and waits for its reply (the start budget applies).
async fn request(probe: &mut Probe, mut msg: Value) -> Result<Value, ProbeError> {
    let id = json!(probe.id());
    msg["id"] = id.clone();
    probe.send(&msg).await?;
    probe.response(&id).await
}

/// Why a blocked start-up could not be read, from the probe that met it.
fn blocked_reason(legacy: &Probe, modern: &Probe, kind: Kind) -> String {
    let which = if legacy.blocked() == Some(kind) {
        "initialize"
    } else if modern.blocked() == Some(kind) {
        "server/discover"
    } else {
        "the start-up requests"
    };
    format!(
        "the reply to {which} could not be read ({}): every check is blocked by {}",
        kind.rule(),
        kind.owner().map_or("its owner", CheckId::as_str)
    )
}

/// The start error: the server answered neither probe. Says how it ended, or what it wrote.
async fn nothing_to_test(
    legacy: &Probe,
    modern: &Probe,
    initialize: &Result<Value, ProbeError>,
    discover: &Result<Value, ProbeError>,
) -> String {
    let status = legacy
        .wait_exit(Duration::from_millis(300))
        .await
        .or(modern.exit_status());
    let mut text = match status {
        Some(status) => format!(
            "the server exited before answering initialize (it {})",
            describe_exit(status)
        ),
        None => format!(
            "the server answered neither initialize nor server/discover within {:?} \
             (--start-timeout)",
            legacy.start_wait()
        ),
    };
    // Anything but running out of time or a process that ended is worth saying.
    for (what, result) in [("initialize", initialize), ("server/discover", discover)] {
        if let (Err(e), None) = (result, status) {
            if !matches!(e, ProbeError::Timeout { .. } | ProbeError::Overtaken { .. }) {
                text.push_str(&format!("; {what}: {e}"));
            }
        }
    }
    // What it wrote on stdout, whether it is still running or not: a server that prints a
    // banner or a log line instead of answering says so there.
    {
        let lines = legacy.inbox().garbage_total() + legacy.inbox().received_total();
        if lines == 0 {
            text.push_str(". stdout: nothing");
        } else {
            let sample: Vec<String> = legacy
                .first_lines(STDOUT_SHOWN.min(lines))
                .iter()
                .map(|line| format!("{line:?}"))
                .collect();
            text.push_str(&format!(
                ". stdout: {lines} line(s), none a JSON-RPC reply; the first: {}",
                sample.join(", ")
            ));
        }
    }
    let mut stderr = legacy.stderr_tail(STDERR_SHOWN).await;
    if stderr.is_empty() {
        stderr = modern.stderr_tail(STDERR_SHOWN).await;
    }
    if stderr.is_empty() {
        text.push_str(". stderr: nothing");
    } else {
        text.push_str("; its last stderr lines:\n  ");
        text.push_str(&stderr.join("\n  "));
    }
    text
}
