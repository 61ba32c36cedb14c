//! `mcp-bench`: start time, sequential latency, pipelined throughput, CPU per call,
//! peak memory, EOF behaviour of a stdio MCP server, each run in a fresh process, with every
//! reply verified. See [`driver`] for the load driver, [`client`] for the same calls made through
//! the `mcp-client` library (`--driver client`), [`floor`] for the reference program, and
//! [`http`] for Streamable HTTP servers (`--url`).

pub mod client;
pub mod driver;
mod error;
pub mod floor;
pub mod http;
pub mod pin;
pub mod procfs;
pub mod report;
mod shape;
pub mod stats;
mod structured;
mod text;
mod verify;

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use mcp_protocol::Framing;

use driver::Server;
pub use error::DriveError;
use error::BENCH_VERSION;
use mcp_client::ServerCommand;
use verify::{Received, Verifier};

/// Sequential (window 1) calls per payload are capped at this many, to keep slow servers'
/// runs short; the JSON report says how many were made (`sequentialCalls`).
pub const SEQUENTIAL_CAP: usize = 5000;

/// Requests written in one burst right before stdin is closed.
pub const EOF_BURST: usize = 1000;

/// What to measure.
#[derive(Debug, Clone)]
pub struct BenchConfig {
    /// The server's command (for the floor: this binary's hidden `serve-floor`).
    pub command: ServerCommand,
    /// Shown in reports: the command line, or `(floor)`.
    pub label: String,
    pub floor: bool,
    /// The floor's echo reply; `None` when benching a server.
    pub floor_reply: Option<floor::Reply>,
    /// Busy time the floor spends per answered request, in nanoseconds (`--floor-work`);
    /// `None` when benching a server.
    pub floor_work_ns: Option<u64>,
    pub framing: Framing,
    /// How the server's stdin and stdout are connected (the lean driver only).
    pub stdio: driver::Stdio,
    /// What makes the calls: the lean driver (the default) or the client library.
    pub driver: DriverKind,
    pub calls: usize,
    pub windows: Vec<usize>,
    pub payloads: Vec<usize>,
    pub runs: usize,
    /// Unmeasured starts before the runs (spawn, `initialize`, close), so start times are
    /// not those of a binary run for the first time in a while or of a machine still busy
    /// with what ran before: the floor, the bench binary itself, is always warm.
    pub warmup: usize,
    pub wait: Duration,
    pub progress: bool,
    /// Where the server and the driver run (`--pin`); `None` leaves it to the scheduler.
    pub pin: Option<pin::Pin>,
    /// A Streamable HTTP server (`--url`) instead of a stdio one: `windows` are then the
    /// numbers of concurrent requests, and `command` is run only when the target says so.
    pub http: Option<http::Target>,
}

impl BenchConfig {
    pub fn sequential_calls(&self) -> usize {
        self.calls.min(SEQUENTIAL_CAP)
    }
}

/// What makes the calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DriverKind {
    /// [`driver`]: one thread, non-blocking pipes, replies verified by `memmem`/`memcmp`.
    Lean,
    /// [`client`]: `mcp_client::Client`, to measure the library itself.
    Client,
}

impl DriverKind {
    pub fn name(self) -> &'static str {
        match self {
            DriverKind::Lean => "lean",
            DriverKind::Client => "client",
        }
    }
}

/// One (payload, window) measurement of one run.
#[derive(Debug, Clone, Default)]
pub struct Cell {
    pub payload: usize,
    pub window: usize,
    pub p50_us: Option<f64>,
    pub p99_us: Option<f64>,
    pub mean_us: Option<f64>,
    pub calls_per_sec: f64,
    pub server_cpu_us_per_call: Option<f64>,
    pub driver_cpu_us_per_call: Option<f64>,
}

impl Cell {
    fn new(payload: usize, window: usize) -> Cell {
        Cell {
            payload,
            window,
            ..Cell::default()
        }
    }

    /// A sequential cell's figures from its round-trip times (µs) and its wall time.
    fn set_latencies(&mut self, mut samples: Vec<f64>, elapsed: Duration) {
        samples.sort_by(f64::total_cmp);
        self.p50_us = Some(stats::percentile(&samples, 50.0));
        self.p99_us = Some(stats::percentile(&samples, 99.0));
        self.mean_us = Some(samples.iter().sum::<f64>() / samples.len().max(1) as f64);
        self.calls_per_sec = samples.len() as f64 / elapsed.as_secs_f64().max(1e-9);
    }
}

/// One run (one server process).
#[derive(Debug, Clone, Default)]
pub struct RunResult {
    pub start_ms: f64,
    pub cells: Vec<Cell>,
    pub peak_rss_kib: Option<f64>,
    pub cpu_ms_per_call: Option<f64>,
    pub driver_cpu_ms_per_call: Option<f64>,
    pub eof_exit_ms: Option<f64>,
    /// Replies to the EOF burst; `None` when the driver makes none (`--driver client`).
    pub eof_answered: Option<usize>,
    /// What went wrong at EOF (unanswered requests, no exit): fails the bench, after the report.
    pub eof_problem: Option<String>,
    /// Requests that failed without stopping the run (HTTP: non-2xx answers, bad or missing
    /// replies); `None` for stdio, where the first wrong reply stops the bench. Any fails the
    /// bench, after the report.
    pub errors: Option<ErrorCounts>,
    /// HTTP: the protocol version the server answered, and whether it gave a session id.
    pub negotiated: Option<(String, bool)>,
}

/// Failed requests of one run, by kind, with the first few messages.
#[derive(Debug, Clone, Default)]
pub struct ErrorCounts {
    /// Answered with a status other than 2xx.
    pub non_2xx: u64,
    /// Answered 2xx, but without the JSON-RPC response, or with a wrong one.
    pub bad_replies: u64,
    /// No answer: the connection failed or closed.
    pub transport: u64,
    /// The first [`ErrorCounts::KEPT`] messages, for the failure report.
    pub first: Vec<String>,
}

impl ErrorCounts {
    /// How many messages are kept.
    pub const KEPT: usize = 3;

    pub fn total(&self) -> u64 {
        self.non_2xx + self.bad_replies + self.transport
    }

    /// Keeps `message` if fewer than [`ErrorCounts::KEPT`] are kept.
    pub fn note(&mut self, message: impl FnOnce() -> String) {
        if self.first.len() < Self::KEPT {
            self.first.push(message());
        }
    }
}

/// Why a bench failed before it could report.
#[derive(Debug)]
pub enum BenchError {
    Start(String),
    Verify(String),
}

impl std::fmt::Display for BenchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BenchError::Start(m) | BenchError::Verify(m) => f.write_str(m),
        }
    }
}

/// Runs every run; stops at the first verification failure.
pub fn run(config: &BenchConfig) -> Result<Vec<RunResult>, BenchError> {
    if let Some(target) = &config.http {
        return http::run(config, target);
    }
    let _pinned = pin::Pinned::driver(config.pin).map_err(BenchError::Start)?;
    for w in 0..config.warmup {
        if config.progress {
            eprint!(
                "\r\x1b[Kbench {}: warm-up start {}/{}",
                config.label,
                w + 1,
                config.warmup
            );
        }
        let warmed = match config.driver {
            DriverKind::Lean => warm_up(config),
            DriverKind::Client => client::warm_up(config),
        };
        warmed.map_err(|e| failed(e, || "warm-up start".to_owned()))?;
    }
    let mut runs = Vec::with_capacity(config.runs);
    for r in 0..config.runs {
        let result = match config.driver {
            DriverKind::Lean => run_once(config, r),
            DriverKind::Client => client::run_once(config, r),
        }
        .map_err(|e| failed(e, || format!("run {} of {}", r + 1, config.runs)));
        if config.progress {
            eprint!("\r\x1b[K");
        }
        runs.push(result?);
    }
    Ok(runs)
}

/// A driver error as the bench reports it; a failed check names where it happened.
fn failed(e: DriveError, during: impl FnOnce() -> String) -> BenchError {
    match e {
        DriveError::Start(m) => BenchError::Start(m),
        DriveError::Verify(m) => BenchError::Verify(format!("{}: {m}", during())),
    }
}

fn progress(config: &BenchConfig, run: usize, what: &str) {
    if config.progress {
        eprint!(
            "\r\x1b[Kbench {}: run {}/{}: {what}",
            config.label,
            run + 1,
            config.runs
        );
    }
}

/// Tracks which ids were sent and answered.
struct Ledger {
    sent: u64,
    answered: Vec<bool>,
    done: usize,
}

impl Ledger {
    fn record(&mut self, id: u64) -> Result<(), DriveError> {
        if id == 0 || id > self.sent {
            return Err(DriveError::Verify(format!(
                "a reply to id {id}, which was never sent (ids 1..={} were)",
                self.sent
            )));
        }
        let slot = &mut self.answered[id as usize];
        if *slot {
            return Err(DriveError::Verify(format!("a second reply to id {id}")));
        }
        *slot = true;
        self.done += 1;
        Ok(())
    }
    fn next(&mut self) -> u64 {
        self.sent += 1;
        if self.answered.len() <= self.sent as usize {
            self.answered.resize(self.sent as usize * 2 + 1, false);
        }
        self.sent
    }
}

/// Reads every complete frame; returns how many replies were verified.
fn drain(
    server: &mut Server,
    verifier: &mut Verifier,
    ledger: &mut Ledger,
    payload: usize,
) -> Result<usize, DriveError> {
    let mut n = 0;
    while let Some(range) = server.next_frame()? {
        if let Received::Reply(id) = verifier.check(server.frame(range), payload)? {
            ledger.record(id)?;
            n += 1;
        }
    }
    Ok(n)
}

/// CPU time (server, driver) and calls over a run's load cells: the pipelined ones, or the
/// sequential ones when there are none.
#[derive(Default)]
struct Load {
    server: Duration,
    driver: Duration,
    calls: usize,
    unknown: bool,
}

type Span = (Option<Duration>, Option<Duration>);

impl Load {
    /// Sets `cell`'s CPU per call from the (before, after) readings and counts them if `cell`
    /// is a load cell.
    fn add(
        &mut self,
        config: &BenchConfig,
        cell: &mut Cell,
        calls: usize,
        server: Span,
        driver: Span,
    ) {
        let spent = |(a, b): Span| Some(b?.saturating_sub(a?));
        let per_call = |d: Option<Duration>| d.map(|d| micros(d) / calls.max(1) as f64);
        let (server, driver) = (spent(server), spent(driver));
        cell.server_cpu_us_per_call = per_call(server);
        cell.driver_cpu_us_per_call = per_call(driver);
        if cell.window > 1 || config.windows.iter().all(|&w| w <= 1) {
            match (server, driver) {
                (Some(s), Some(d)) => {
                    self.server += s;
                    self.driver += d;
                    self.calls += calls;
                }
                _ => self.unknown = true,
            }
        }
    }

    fn finish(self, result: &mut RunResult) {
        if !self.unknown && self.calls > 0 {
            result.cpu_ms_per_call = Some(self.server.as_secs_f64() * 1e3 / self.calls as f64);
            result.driver_cpu_ms_per_call =
                Some(self.driver.as_secs_f64() * 1e3 / self.calls as f64);
        }
    }
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// How a driver makes the calls of a cell; [`measure_cells`] does the rest.
pub(crate) trait Calls {
    /// One call of `payload` bytes, made and verified, nothing else in flight.
    fn one(&mut self, payload: usize) -> Result<(), DriveError>;
    /// `calls` calls of `payload` bytes, `window` in flight, every reply verified.
    fn many(&mut self, calls: usize, window: usize, payload: usize) -> Result<(), DriveError>;
    /// The CPU time the driver has used so far.
    fn own_cpu(&self) -> Option<Duration>;
}

/// Every (payload, window) cell of a run against server `pid` (`None`: a server the bench did
/// not start, whose CPU it does not read), into `result`: latencies of window-1 cells,
/// throughput of the others, CPU per call of both sides.
pub(crate) fn measure_cells(
    config: &BenchConfig,
    run: usize,
    pid: Option<u32>,
    driver: &mut impl Calls,
    result: &mut RunResult,
) -> Result<(), DriveError> {
    let mut load = Load::default();
    for &payload in &config.payloads {
        for &window in &config.windows {
            progress(
                config,
                run,
                &format!("payload {payload} B, window {window}"),
            );
            let mut cell = Cell::new(payload, window);
            let (cpu0, own0) = (pid.and_then(procfs::cpu_time), driver.own_cpu());
            let began = Instant::now();
            let calls;
            if window <= 1 {
                calls = config.sequential_calls();
                let mut samples = Vec::with_capacity(calls);
                for _ in 0..calls {
                    let t = Instant::now();
                    driver.one(payload)?;
                    samples.push(micros(t.elapsed()));
                }
                cell.set_latencies(samples, began.elapsed());
            } else {
                calls = config.calls;
                driver.many(calls, window, payload)?;
                cell.calls_per_sec = calls as f64 / began.elapsed().as_secs_f64().max(1e-9);
            }
            let (cpu1, own1) = (pid.and_then(procfs::cpu_time), driver.own_cpu());
            load.add(config, &mut cell, calls, (cpu0, cpu1), (own0, own1));
            result.cells.push(cell);
        }
    }
    load.finish(result);
    Ok(())
}

/// The lean driver's calls: requests queued on the non-blocking pipes, replies verified by
/// [`Verifier`] and counted by the [`Ledger`].
struct LeanCalls<'a> {
    server: &'a mut Server,
    verifier: &'a mut Verifier,
    ledger: &'a mut Ledger,
}

impl Calls for LeanCalls<'_> {
    fn one(&mut self, payload: usize) -> Result<(), DriveError> {
        let id = self.ledger.next();
        self.server.queue_call(id, payload);
        self.server.expect_reply();
        loop {
            self.server.pump()?;
            if drain(self.server, self.verifier, self.ledger, payload)? > 0
                && self.ledger.done as u64 == self.ledger.sent
            {
                return Ok(());
            }
        }
    }

    fn many(&mut self, calls: usize, window: usize, payload: usize) -> Result<(), DriveError> {
        let base = self.ledger.done;
        let mut queued = 0usize;
        while queued < calls.min(window) {
            let id = self.ledger.next();
            self.server.queue_call(id, payload);
            queued += 1;
        }
        while self.ledger.done - base < calls {
            self.server.pump()?;
            drain(self.server, self.verifier, self.ledger, payload)?;
            let in_flight = queued - (self.ledger.done - base);
            let room = window - in_flight.min(window);
            for _ in 0..room.min(calls - queued) {
                let id = self.ledger.next();
                self.server.queue_call(id, payload);
                queued += 1;
            }
        }
        Ok(())
    }

    fn own_cpu(&self) -> Option<Duration> {
        procfs::own_cpu_time()
    }
}

/// Starts the server, waits for its `initialize` reply, closes its stdin and gives it the
/// run's timeout to exit before it is killed; nothing is measured. Exiting at EOF is judged
/// by the runs, not here.
fn warm_up(config: &BenchConfig) -> Result<(), DriveError> {
    let (mut server, _) = start(config)?;
    server.close_stdin();
    server.wait_exit(config.wait);
    Ok(())
}

fn run_once(config: &BenchConfig, run: usize) -> Result<RunResult, DriveError> {
    progress(config, run, "starting");
    let (server, start_ms) = start(config)?;
    run_started(config, run, server, start_ms)
}

/// Spawns the server and sends `initialize`; returns it with the milliseconds from the spawn
/// to the reply.
fn start(config: &BenchConfig) -> Result<(Server, f64), DriveError> {
    let spawned = Instant::now();
    let mut server = pin::on_server_cpu(config.pin, || {
        Server::spawn(&config.command, config.framing, config.stdio, config.wait)
    })
    .map_err(DriveError::Start)??;
    let init = format!(
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{BENCH_VERSION}","capabilities":{{}},"clientInfo":{{"name":"mcp-conformance-bench","version":"{}"}}}}}}"#,
        env!("CARGO_PKG_VERSION")
    );
    server.queue_json(init.as_bytes());
    let start_ms = 'init: loop {
        server.pump().map_err(|e| match e {
            DriveError::Verify(m) => {
                DriveError::Verify(format!("waiting for the initialize reply: {m}"))
            }
            other => other,
        })?;
        while let Some(range) = server.next_frame()? {
            let frame = server.frame(range);
            let value: serde_json::Value = serde_json::from_slice(frame).map_err(|e| {
                DriveError::Verify(format!(
                    "the initialize reply is not JSON ({e}): {}",
                    String::from_utf8_lossy(&frame[..frame.len().min(300)])
                ))
            })?;
            if value.get("method").is_some() {
                continue;
            }
            if value.get("id") != Some(&serde_json::json!(0)) || value.get("result").is_none() {
                return Err(DriveError::Verify(format!(
                    "expected the initialize reply (id 0, a result), got: {value}"
                )));
            }
            break 'init spawned.elapsed().as_secs_f64() * 1e3;
        }
    };
    Ok((server, start_ms))
}

/// The measurements of one run, on a server that answered `initialize`.
fn run_started(
    config: &BenchConfig,
    run: usize,
    mut server: Server,
    start_ms: f64,
) -> Result<RunResult, DriveError> {
    server.queue_json(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);

    let mut verifier = Verifier::default();
    let mut ledger = Ledger {
        sent: 0,
        answered: vec![false; 1024],
        done: 0,
    };
    let mut result = RunResult {
        start_ms,
        ..RunResult::default()
    };
    let pid = server.pid();
    let mut lean = LeanCalls {
        server: &mut server,
        verifier: &mut verifier,
        ledger: &mut ledger,
    };
    measure_cells(config, run, Some(pid), &mut lean, &mut result)?;
    result.peak_rss_kib = procfs::peak_rss_kib(pid).map(|k| k as f64);

    // EOF: a burst, stdin closed right after it is written, then count the replies.
    progress(config, run, "EOF burst");
    let payload = config.payloads.first().copied().unwrap_or(64);
    let base_done = ledger.done;
    let first_burst_id = ledger.sent + 1;
    for _ in 0..EOF_BURST {
        let id = ledger.next();
        server.queue_call(id, payload);
    }
    while server.writing() {
        server.pump()?;
        drain(&mut server, &mut verifier, &mut ledger, payload)?;
    }
    server.close_stdin();
    let closed = Instant::now();
    let mut stalled = None;
    while !server.stdout_closed() && ledger.done - base_done < EOF_BURST {
        if let Err(e) = server.pump() {
            stalled = Some(e);
            break;
        }
        drain(&mut server, &mut verifier, &mut ledger, payload)?;
    }
    drain(&mut server, &mut verifier, &mut ledger, payload)?;
    let answered = ledger.done - base_done;
    result.eof_answered = Some(answered);
    let exited = server.wait_exit(config.wait);
    result.eof_exit_ms = exited.map(|at| at.saturating_duration_since(closed).as_secs_f64() * 1e3);
    if answered < EOF_BURST {
        let missing: Vec<u64> = (first_burst_id..=ledger.sent)
            .filter(|&id| !ledger.answered[id as usize])
            .take(5)
            .collect();
        result.eof_problem = Some(format!(
            "{} of the {EOF_BURST} requests written right before stdin closed were not answered \
             (first missing ids: {missing:?}){}",
            EOF_BURST - answered,
            stalled.map(|e| format!("; {e}")).unwrap_or_default()
        ));
    } else if exited.is_none() {
        result.eof_problem = Some(format!(
            "the server did not exit within {:.1} s of its stdin closing",
            config.wait.as_secs_f64()
        ));
    }
    Ok(result)
}

/// Whether a progress line is wanted (stderr is a terminal).
pub fn progress_wanted() -> bool {
    std::io::stderr().is_terminal()
}
