//! The bench report: a text table, or JSON (`mcp-conformance/bench/v1`).
//!
//! JSON shape (stable; fields are only ever added):
//!
//! ```json
//! {
//!   "schema": "mcp-conformance/bench/v1",
//!   "command": "target/release/mcp-echo-server",   // or "(floor)"
//!   "floor": false,
//!   "floorReply": null,                             // or "plain", "structured" (--floor-reply)
//!   "floorWorkNs": null,                            // the floor's: 0, or --floor-work
//!   "framing": "ndjson",                            // or "content-length"
//!   "calls": 20000,                                 // per pipelined cell
//!   "sequentialCalls": 5000,                        // per window-1 cell (capped)
//!   "eofBurst": 1000,
//!   "runs": 3,
//!   "warmup": 1,                                    // unmeasured starts before the runs
//!   "driver": "lean",                               // or "client" (the mcp-client library)
//!   "stdio": "pipes",                               // or "socket" (--stdio socket)
//!   "pin": null,              // or {"placement": "same"|"split", "driverCpu": 0, "serverCpu": 1}
//!   "results": [
//!     {"payload": 64, "window": 1,
//!      "p50Us": S, "p99Us": S, "meanUs": S, "callsPerSec": S,
//!      "serverCpuUsPerCall": S, "driverCpuUsPerCall": S},
//!     {"payload": 64, "window": 64,
//!      "callsPerSec": S, "serverCpuUsPerCall": S, "driverCpuUsPerCall": S}
//!   ],
//!   "startMs": S, "peakRssKiB": S, "cpuMsPerCall": S, "driverCpuMsPerCall": S,
//!   "eofExitMs": S, "eofAllAnswered": true, "eofAnswered": S
//! }
//! ```
//!
//! A Streamable HTTP bench (`--url`) adds `"transport": "http"` (stdio reports say `"stdio"`),
//! `"url"`, `"protocolVersion"` (what the server answered to `initialize`), `"sessionId"`
//! (whether it gave an `Mcp-Session-Id`), cells with `"concurrency"` (concurrent requests; `"window"`
//! repeats it, so readers of stdio reports read these too) and `"errors"`, the failed requests
//! summed over runs: `{"non2xx": n, "badReplies": n, "transport": n, "total": n}` (`null` for
//! stdio, where the first wrong reply stops the bench). For HTTP, `"framing"`, `"stdio"`,
//! `"eofBurst"` and the EOF fields are `null`, `"driver"` is `"http"`, and `"startMs"` (spawn
//! to the `initialize` reply) and the server's CPU and memory are `null` unless the bench
//! started the server (a command after `--`).
//!
//! With `"driver": "client"` there is no EOF burst: `eofAnswered` and `eofAllAnswered` are
//! `null`, and `eofExitMs` is how long `Client::close` waited for the exit.
//!
//! where `S` is `{"median": f, "min": f, "max": f}` over runs, or `null` when not measured
//! (`/proc` unavailable, a server that did not exit). `cpuMsPerCall` and `driverCpuMsPerCall`
//! are measured across the pipelined cells (window > 1; the sequential ones when there are
//! none); latencies are of window-1 cells only.

use serde_json::{json, Value};

use super::stats::Spread;
use super::{BenchConfig, DriverKind, ErrorCounts, RunResult, EOF_BURST};

fn spread(values: impl Iterator<Item = Option<f64>>) -> Option<Spread> {
    let v: Option<Vec<f64>> = values.collect();
    Spread::of(&v?)
}

/// The JSON report.
pub fn json(config: &BenchConfig, runs: &[RunResult]) -> Value {
    let mut results = Vec::new();
    let cells = runs.first().map(|r| r.cells.len()).unwrap_or(0);
    for i in 0..cells {
        let first = &runs[0].cells[i];
        let metric = |f: &dyn Fn(&super::Cell) -> Option<f64>| {
            serde_json::to_value(spread(runs.iter().map(|r| r.cells.get(i).and_then(f))))
                .unwrap_or(Value::Null)
        };
        let mut cell = json!({
            "payload": first.payload,
            "window": first.window,
            "callsPerSec": metric(&|c| Some(c.calls_per_sec)),
            "serverCpuUsPerCall": metric(&|c| c.server_cpu_us_per_call),
            "driverCpuUsPerCall": metric(&|c| c.driver_cpu_us_per_call),
        });
        if config.http.is_some() {
            cell["concurrency"] = json!(first.window);
        }
        if first.window <= 1 {
            cell["p50Us"] = metric(&|c| c.p50_us);
            cell["p99Us"] = metric(&|c| c.p99_us);
            cell["meanUs"] = metric(&|c| c.mean_us);
        }
        results.push(cell);
    }
    let top = |f: &dyn Fn(&RunResult) -> Option<f64>| {
        serde_json::to_value(spread(runs.iter().map(f))).unwrap_or(Value::Null)
    };
    let http = config.http.is_some();
    let negotiated = runs.first().and_then(|r| r.negotiated.as_ref());
    json!({
        "schema": "mcp-conformance/bench/v1",
        "transport": if http { "http" } else { "stdio" },
        "url": config.http.as_ref().map(|t| &t.endpoint.url),
        "protocolVersion": negotiated.map(|(v, _)| v),
        "sessionId": negotiated.map(|(_, id)| id),
        "command": config.label,
        "floor": config.floor,
        "floorReply": config.floor_reply.map(|r| r.name()),
        "floorWorkNs": config.floor_work_ns,
        "framing": (!http).then(|| config.framing.as_str()),
        "calls": config.calls,
        "sequentialCalls": config.sequential_calls(),
        "eofBurst": (!http).then_some(EOF_BURST),
        "runs": runs.len(),
        "warmup": config.warmup,
        "driver": if http { "http" } else { config.driver.name() },
        "stdio": (!http).then(|| config.stdio.name()),
        "pin": config.pin.map(|p| json!({
            "placement": p.placement.name(),
            "driverCpu": p.driver,
            "serverCpu": p.server,
        })),
        "results": results,
        "startMs": top(&|r| Some(r.start_ms)),
        "peakRssKiB": top(&|r| r.peak_rss_kib),
        "cpuMsPerCall": top(&|r| r.cpu_ms_per_call),
        "driverCpuMsPerCall": top(&|r| r.driver_cpu_ms_per_call),
        "eofExitMs": top(&|r| r.eof_exit_ms),
        "eofAnswered": top(&|r| r.eof_answered.map(|n| n as f64)),
        "eofAllAnswered": eof_all_answered(runs),
        "errors": errors(runs).map(|e| json!({
            "non2xx": e.non_2xx,
            "badReplies": e.bad_replies,
            "transport": e.transport,
            "total": e.total(),
        })),
    })
}

/// The failed requests of every run, summed; `None` when no run counts them (stdio).
fn errors(runs: &[RunResult]) -> Option<ErrorCounts> {
    let mut sum: Option<ErrorCounts> = None;
    for e in runs.iter().filter_map(|r| r.errors.as_ref()) {
        let s = sum.get_or_insert_with(ErrorCounts::default);
        s.non_2xx += e.non_2xx;
        s.bad_replies += e.bad_replies;
        s.transport += e.transport;
    }
    sum
}

/// Whether every run's EOF burst was answered whole; `None` when no run made one.
fn eof_all_answered(runs: &[RunResult]) -> Option<bool> {
    let counts: Option<Vec<usize>> = runs.iter().map(|r| r.eof_answered).collect();
    counts.map(|c| c.iter().all(|&n| n == EOF_BURST))
}

fn fmt(s: Option<Spread>, decimals: usize) -> String {
    match s {
        None => "-".to_owned(),
        Some(s) if s.min == s.max => format!("{:.*}", decimals, s.median),
        Some(s) => format!(
            "{:.*} ({:.*}–{:.*})",
            decimals, s.median, decimals, s.min, decimals, s.max
        ),
    }
}

/// The text report: medians with min–max over runs.
pub fn text(config: &BenchConfig, runs: &[RunResult]) -> String {
    let mut out = String::new();
    if let Some(target) = &config.http {
        out.push_str(&format!(
            "bench {} (Streamable HTTP at {}{}), {} run(s): {} calls per concurrent cell / {} \
             sequential; median (min–max)\n\n",
            config.label,
            target.endpoint.url,
            match runs.first().and_then(|r| r.negotiated.as_ref()) {
                Some((v, true)) => format!(", {v}, in a session"),
                Some((v, false)) => format!(", {v}, no session id"),
                None => String::new(),
            },
            runs.len(),
            config.calls,
            config.sequential_calls()
        ));
    } else {
        out.push_str(&stdio_heading(config, runs));
    }
    out.push_str(&format!(
        "{:>8} {:>6}  {:<26} {:<22} {:<22} {:<18} {:<18}\n",
        "payload",
        if config.http.is_some() {
            "conc."
        } else {
            "window"
        },
        "calls/s",
        "p50 µs",
        "p99 µs",
        "server CPU µs/call",
        "driver CPU µs/call"
    ));
    out.push_str(&cells_text(runs));
    let top = |f: &dyn Fn(&RunResult) -> Option<f64>| spread(runs.iter().map(f));
    if config.http.is_some() {
        let e = errors(runs).unwrap_or_default();
        out.push_str(&format!(
            "\nstart to initialize reply: {} ms\npeak RSS: {} KiB\nserver CPU per call under load: {} µs (driver: {} µs)\n\
             failed requests: {} ({} non-2xx, {} bad or missing replies, {} without an answer)\n",
            fmt(top(&|r| Some(r.start_ms)), 2),
            fmt(top(&|r| r.peak_rss_kib), 0),
            fmt(top(&|r| r.cpu_ms_per_call.map(|x| x * 1e3)), 2),
            fmt(top(&|r| r.driver_cpu_ms_per_call.map(|x| x * 1e3)), 2),
            e.total(),
            e.non_2xx,
            e.bad_replies,
            e.transport,
        ));
        return out;
    }
    out.push_str(&stdio_tail(config, runs));
    out
}

/// The text report's first line for a stdio server.
fn stdio_heading(config: &BenchConfig, runs: &[RunResult]) -> String {
    format!(
        "bench {} ({}{}{}{}), {} run(s): {} pipelined / {} sequential calls per cell; median (min–max)\n\n",
        config.label,
        config.framing.as_str(),
        match config.stdio {
            super::driver::Stdio::Pipes => "",
            super::driver::Stdio::Socket => ", stdin and stdout on a socket",
        },
        match config.driver {
            DriverKind::Lean => "",
            DriverKind::Client => ", calls made through the mcp-client library",
        },
        match config.pin {
            None => String::new(),
            Some(p) if p.driver == p.server => format!(", server and driver pinned to CPU {}", p.driver),
            Some(p) => format!(", driver pinned to CPU {}, server to CPU {}", p.driver, p.server),
        },
        runs.len(),
        config.calls,
        config.sequential_calls()
    )
}

/// One line per cell: medians (min–max) over runs.
fn cells_text(runs: &[RunResult]) -> String {
    let mut out = String::new();
    let cells = runs.first().map(|r| r.cells.len()).unwrap_or(0);
    for i in 0..cells {
        let first = &runs[0].cells[i];
        let m = |f: &dyn Fn(&super::Cell) -> Option<f64>| {
            spread(runs.iter().map(|r| r.cells.get(i).and_then(f)))
        };
        out.push_str(&format!(
            "{:>8} {:>6}  {:<26} {:<22} {:<22} {:<18} {:<18}\n",
            first.payload,
            first.window,
            fmt(m(&|c| Some(c.calls_per_sec)), 0),
            fmt(m(&|c| c.p50_us), 1),
            fmt(m(&|c| c.p99_us), 1),
            fmt(m(&|c| c.server_cpu_us_per_call), 2),
            fmt(m(&|c| c.driver_cpu_us_per_call), 2),
        ));
    }
    out
}

/// The text report's per-process lines for a stdio server.
fn stdio_tail(config: &BenchConfig, runs: &[RunResult]) -> String {
    let mut out = String::new();
    let top = |f: &dyn Fn(&RunResult) -> Option<f64>| spread(runs.iter().map(f));
    let answered = match eof_all_answered(runs) {
        None => "not measured (the client library makes no EOF burst)".to_owned(),
        Some(all) => format!(
            "{} ({} of {EOF_BURST})",
            if all { "all" } else { "NOT ALL" },
            fmt(top(&|r| r.eof_answered.map(|n| n as f64)), 0)
        ),
    };
    out.push_str(&format!(
        "\nstart to initialize reply: {} ms\npeak RSS: {} KiB\nserver CPU per call under load: {} µs ({}: {} µs)\n\
         stdin closed to exit: {} ms\nrequests written before EOF answered: {answered}\n",
        fmt(top(&|r| Some(r.start_ms)), 2),
        fmt(top(&|r| r.peak_rss_kib), 0),
        fmt(top(&|r| r.cpu_ms_per_call.map(|x| x * 1e3)), 2),
        match config.driver {
            DriverKind::Lean => "driver",
            DriverKind::Client => "client",
        },
        fmt(top(&|r| r.driver_cpu_ms_per_call.map(|x| x * 1e3)), 2),
        fmt(top(&|r| r.eof_exit_ms), 2),
    ));
    out
}
