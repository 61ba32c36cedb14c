//! Streamable HTTP servers (`--url URL [-- COMMAND]`): each run a fresh session (and, with a
//! command, a fresh server process), the same (payload, concurrency) cells as stdio's
//! (payload, window) ones, measured by `measure_cells` and reported by
//! [`crate::report`]; concurrency 1 gives latencies, more gives requests per second.
//!
//! - `endpoint`: the URL and the address its port is waited on;
//! - `process`: the server the bench starts, waited on until it listens, then stopped;
//! - `session`: the handshake and each POST, the reply read as JSON or SSE;
//! - `driver`: the calls, C in flight, every reply verified.

mod driver;
mod endpoint;
mod process;
mod session;

use std::time::{Duration, Instant};

use tokio::runtime::Runtime;

pub use endpoint::Endpoint;

use crate::error::DriveError;
use crate::{procfs, BenchConfig, BenchError, RunResult};
use driver::HttpCalls;
use process::ServerProcess;
use session::Session;

/// What `--url` benches.
#[derive(Debug, Clone)]
pub struct Target {
    pub endpoint: Endpoint,
    /// Start the bench config's command for each run (and warm-up), and stop it after; else
    /// the server at the URL is already running and the command is not used.
    pub start: bool,
}

/// One runtime thread, like the stdio drivers: the driver's CPU is this thread's. Each run has
/// its own, dropped before the server is stopped: that drops the pool's connection tasks and
/// so closes their sockets, which a server shutting down gracefully may wait for.
fn runtime() -> Result<Runtime, DriveError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| DriveError::Start(format!("cannot start a tokio runtime: {e}")))
}

/// Runs the warm-up starts and every run; stops at the first run that cannot go on.
pub(crate) fn run(config: &BenchConfig, target: &Target) -> Result<Vec<RunResult>, BenchError> {
    for w in 0..config.warmup {
        if config.progress {
            eprint!(
                "\r\x1b[Kbench {}: warm-up start {}/{}",
                config.label,
                w + 1,
                config.warmup
            );
        }
        warm_up(config, target).map_err(|e| crate::failed(e, || "warm-up start".into()))?;
    }
    let mut runs = Vec::with_capacity(config.runs);
    for r in 0..config.runs {
        let result = run_once(config, target, r)
            .map_err(|e| crate::failed(e, || format!("run {} of {}", r + 1, config.runs)));
        if config.progress {
            eprint!("\r\x1b[K");
        }
        runs.push(result?);
    }
    Ok(runs)
}

/// The server (started if the target says so) and an open session on it; with the time from
/// the spawn to the `initialize` reply.
fn connect(
    config: &BenchConfig,
    target: &Target,
    rt: &Runtime,
) -> Result<(Option<ServerProcess>, Session, Option<Duration>), DriveError> {
    let spawned = Instant::now();
    let server = if target.start {
        let mut server = ServerProcess::spawn(&config.command)?;
        server.wait_listening(target.endpoint.addr, config.wait)?;
        Some(server)
    } else {
        None
    };
    let max_payload = config.payloads.iter().copied().max().unwrap_or(64);
    let (session, initialized) =
        rt.block_on(Session::open(&target.endpoint, config.wait, max_payload))?;
    let started = server
        .is_some()
        .then(|| initialized.saturating_duration_since(spawned));
    Ok((server, session, started))
}

/// A session opened and closed, the server started and stopped; nothing measured.
fn warm_up(config: &BenchConfig, target: &Target) -> Result<(), DriveError> {
    let rt = runtime()?;
    let (server, session, _) = connect(config, target, &rt)?;
    rt.block_on(session.close());
    drop(session);
    drop(rt);
    if let Some(server) = server {
        server.stop(config.wait);
    }
    Ok(())
}

fn run_once(config: &BenchConfig, target: &Target, run: usize) -> Result<RunResult, DriveError> {
    crate::progress(config, run, "starting");
    let rt = runtime()?;
    let (server, session, started) = connect(config, target, &rt)?;
    let mut result = RunResult {
        // Without a command nothing was started: no start time.
        start_ms: started.map_or(f64::NAN, |d| d.as_secs_f64() * 1e3),
        negotiated: Some((session.version().to_owned(), session.has_id())),
        ..RunResult::default()
    };
    let pid = server.as_ref().map(ServerProcess::pid);
    let mut calls = HttpCalls {
        rt: &rt,
        session: &session,
        verifier: Default::default(),
        filler: Default::default(),
        next: 0,
        errors: Default::default(),
        wait: config.wait,
    };
    crate::measure_cells(config, run, pid, &mut calls, &mut result)?;
    result.errors = Some(std::mem::take(&mut calls.errors));
    result.peak_rss_kib = pid.and_then(procfs::peak_rss_kib).map(|k| k as f64);
    crate::progress(config, run, "closing the session");
    rt.block_on(session.close());
    drop(session);
    drop(rt);
    if let Some(server) = server {
        server.stop(config.wait);
    }
    Ok(result)
}
