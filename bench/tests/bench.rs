//! `mcp-bench`: against the bundled server and the built-in floor in both framings
//! (every reply verified, every request before EOF answered, sane numbers), and against broken
//! servers (a wrong id, a wrong text, requests dropped at EOF), which must fail the run.
#![allow(clippy::unwrap_used)]

mod common;

use common::{broken_server, echo_server, run, Run};
use serde_json::Value;

const SMALL: &[&str] = &[
    "--calls",
    "500",
    "--runs",
    "1",
    "--window",
    "1,8",
    "--payload",
    "64,1024",
    "--timeout",
    "5",
    "--format",
    "json",
];

fn shown(run: &Run) -> String {
    format!(
        "`mcp-bench {}` exited {}\nstdout:\n{}\nstderr:\n{}",
        run.args.join(" "),
        run.code,
        run.stdout,
        run.stderr
    )
}

fn bench(extra: &[&str]) -> (Run, Value) {
    let mut args: Vec<String> = SMALL.iter().map(|s| s.to_string()).collect();
    args.extend(extra.iter().map(|s| s.to_string()));
    let run = run(&args);
    assert_eq!(run.code, 0, "{}", shown(&run));
    let report = run.json();
    (run, report)
}

fn median(v: &Value) -> f64 {
    v["median"].as_f64().unwrap()
}

fn assert_sane(run: &Run, report: &Value, framing: &str, floor: bool) {
    assert_sane_with(run, report, framing, floor, "lean");
}

fn assert_sane_with(run: &Run, report: &Value, framing: &str, floor: bool, driver: &str) {
    let ctx = shown(run);
    assert_eq!(report["schema"], "mcp-conformance/bench/v1", "{ctx}");
    assert_eq!(report["framing"], framing, "{ctx}");
    assert_eq!(report["floor"], floor, "{ctx}");
    assert_eq!(report["calls"], 500, "{ctx}");
    assert_eq!(report["runs"], 1, "{ctx}");
    assert_eq!(report["driver"], driver, "{ctx}");
    if driver == "client" {
        // The client library makes no EOF burst: not measured, not "all answered".
        assert_eq!(report["eofAllAnswered"], Value::Null, "{ctx}");
        assert_eq!(report["eofAnswered"], Value::Null, "{ctx}");
    } else {
        assert_eq!(report["eofAllAnswered"], true, "{ctx}");
        assert_eq!(median(&report["eofAnswered"]), 1000.0, "{ctx}");
    }
    let results = report["results"].as_array().unwrap();
    let cells: Vec<(u64, u64)> = results
        .iter()
        .map(|r| {
            (
                r["payload"].as_u64().unwrap(),
                r["window"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(cells, [(64, 1), (64, 8), (1024, 1), (1024, 8)], "{ctx}");
    for r in results {
        let rate = median(&r["callsPerSec"]);
        assert!(rate > 50.0 && rate < 1e8, "calls/s {rate}: {ctx}");
        if r["window"] == 1 {
            let (p50, p99) = (median(&r["p50Us"]), median(&r["p99Us"]));
            assert!(p50 > 0.0 && p50 <= p99 && p99 < 1e6, "{ctx}");
            assert!(median(&r["meanUs"]) > 0.0, "{ctx}");
        } else {
            assert!(r.get("p50Us").is_none(), "{ctx}");
        }
    }
    let start = median(&report["startMs"]);
    assert!(start > 0.0 && start < 5000.0, "{ctx}");
    let rss = median(&report["peakRssKiB"]);
    assert!(rss > 100.0 && rss < 4.0e6, "{ctx}");
    let cpu = median(&report["cpuMsPerCall"]);
    assert!((0.0..10.0).contains(&cpu), "{ctx}");
    assert!(median(&report["driverCpuMsPerCall"]) > 0.0, "{ctx}");
    let exit = median(&report["eofExitMs"]);
    assert!((0.0..5000.0).contains(&exit), "{ctx}");
}

#[test]
fn benches_the_bundled_server_in_both_framings() {
    echo_server();
    let (run, report) = bench(&[]);
    assert_sane(&run, &report, "ndjson", false);
    assert!(
        report["command"]
            .as_str()
            .unwrap()
            .contains("mcp-echo-server"),
        "{}",
        shown(&run)
    );
    let (run, report) = bench(&["--framing", "content-length"]);
    assert_sane(&run, &report, "content-length", false);
}

#[test]
fn benches_the_floor_in_both_framings() {
    let (run, report) = bench(&["--floor"]);
    assert_sane(&run, &report, "ndjson", true);
    assert_eq!(report["command"], "(floor)");
    assert_eq!(report["floorReply"], "plain", "{}", shown(&run));
    let (run, report) = bench(&["--floor", "--framing", "content-length"]);
    assert_sane(&run, &report, "content-length", true);
}

/// `--floor-reply structured`: every reply carries the text twice, and the driver checks both.
#[test]
fn benches_the_structured_floor_in_both_framings() {
    for framing in ["ndjson", "content-length"] {
        let (done, report) = bench(&[
            "--floor",
            "--floor-reply",
            "structured",
            "--framing",
            framing,
        ]);
        assert_sane(&done, &report, framing, true);
        assert_eq!(
            report["command"],
            "(floor, structured reply)",
            "{}",
            shown(&done)
        );
        assert_eq!(report["floorReply"], "structured", "{}", shown(&done));
    }
    echo_server();
    let (done, report) = bench(&[]);
    assert_eq!(report["floorReply"], Value::Null, "{}", shown(&done));
    assert_eq!(report["floorWorkNs"], Value::Null, "{}", shown(&done));
    let alone = run(&["--floor-reply", "structured"]);
    assert_eq!(alone.code, 2, "{}", shown(&alone));
    assert!(alone.stderr.contains("--floor"), "{}", shown(&alone));
}

/// `--floor-work NS`: the floor spins NS nanoseconds before each answer, so no round trip can
/// be shorter; the report says how much work was asked for. Without `--floor` it is a usage
/// error, and the floor mode refuses a work that is not a number.
#[test]
fn the_floor_spends_the_work_it_is_given_on_each_call() {
    let done = run(&[
        "--floor",
        "--floor-work",
        "200000",
        "--calls",
        "50",
        "--runs",
        "1",
        "--window",
        "1",
        "--payload",
        "64",
        "--format",
        "json",
    ]);
    assert_eq!(done.code, 0, "{}", shown(&done));
    let report = done.json();
    assert_eq!(report["floorWorkNs"], 200_000, "{}", shown(&done));
    assert_eq!(
        report["command"],
        "(floor, 200000 ns of work per call)",
        "{}",
        shown(&done)
    );
    let p50 = median(&report["results"][0]["p50Us"]);
    assert!(
        p50 >= 200.0,
        "p50 {p50} µs < 200 µs of work\n{}",
        shown(&done)
    );
    let (done, report) = bench(&["--floor"]);
    assert_eq!(report["floorWorkNs"], 0, "{}", shown(&done));
    let alone = run(&["--floor-work", "100"]);
    assert_eq!(alone.code, 2, "{}", shown(&alone));
    assert!(alone.stderr.contains("--floor"), "{}", shown(&alone));
    let bad = run(&["serve-floor", "--work-ns", "soon"]);
    assert_eq!(bad.code, 2, "{}", shown(&bad));
    assert!(bad.stderr.contains("'soon'"), "{}", shown(&bad));
}

/// Runs `program args` with `input` on stdin and returns its stdout, killing it after 10 s.
fn answers(program: &std::path::Path, args: &[&str], input: &[u8]) -> Vec<u8> {
    use std::io::{Read, Write};
    use std::process::{Command, Stdio};
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        stdout.read_to_end(&mut out).unwrap();
        out
    });
    child.stdin.take().unwrap().write_all(input).unwrap();
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > std::time::Duration::from_secs(10) {
            child.kill().unwrap();
            panic!("{} {args:?} did not exit 10 s after EOF", program.display());
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    reader.join().unwrap()
}

/// The structured floor measures what our reply costs to carry only if it is our reply: byte
/// for byte what mcp-echo-server sends for the same call, escapes included.
#[test]
fn the_structured_floor_sends_the_echo_servers_reply_byte_for_byte() {
    let input = concat!(
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a\"b\\c/d é"}}}"#,
        "\n",
    );
    let last_line = |out: Vec<u8>| {
        let text = String::from_utf8(out).unwrap();
        text.lines().last().unwrap().to_owned()
    };
    let ours = last_line(answers(
        echo_server(),
        &["--log-level", "off"],
        input.as_bytes(),
    ));
    let floor = last_line(answers(
        common::bench_bin(),
        &[
            "serve-floor",
            "--framing",
            "ndjson",
            "--reply",
            "structured",
        ],
        input.as_bytes(),
    ));
    assert_eq!(
        ours,
        r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"text":"a\"b\\c/d é","type":"text"}],"structuredContent":{"text":"a\"b\\c/d é"}}}"#
    );
    assert_eq!(floor, ours);
    let unknown = answers(
        common::bench_bin(),
        &["serve-floor", "--reply", "fancy"],
        b"",
    );
    assert!(unknown.is_empty());
}

/// `--driver client`: the same cells, every reply checked, through the mcp-client library.
/// `--stdio socket`: the server's stdin and stdout are one end of a socketpair, as Node-based
/// hosts connect servers. Every cell, check and EOF figure as over pipes; stdin's end is a
/// shutdown of the socket's write side, so a server that exits on EOF must see it.
#[test]
fn benches_over_a_socket_as_node_hosts_connect() {
    echo_server();
    for framing in ["ndjson", "content-length"] {
        let (done, report) = bench(&["--stdio", "socket", "--framing", framing]);
        assert_sane(&done, &report, framing, false);
        assert_eq!(report["stdio"], "socket", "{}", shown(&done));
    }
    let (done, report) = bench(&["--floor", "--stdio", "socket"]);
    assert_sane(&done, &report, "ndjson", true);
    assert_eq!(report["stdio"], "socket", "{}", shown(&done));
    let (done, report) = bench(&["--floor"]);
    assert_eq!(report["stdio"], "pipes", "{}", shown(&done));

    let text = run(&[
        "--stdio", "socket", "--runs", "1", "--calls", "50", "--floor",
    ]);
    assert_eq!(text.code, 0, "{}", shown(&text));
    assert!(
        text.stdout
            .contains("(ndjson, stdin and stdout on a socket)"),
        "{}",
        shown(&text)
    );
    let client = run(&["--stdio", "socket", "--driver", "client"]);
    assert_eq!(client.code, 2, "{}", shown(&client));
    assert!(
        client
            .stderr
            .contains("--stdio socket needs the lean driver"),
        "{}",
        shown(&client)
    );
}

#[test]
fn a_wrong_text_over_a_socket_fails_the_run() {
    bench_fails(
        &lying_server("i", "t[:-1] if i == 7 else t"),
        &["--stdio", "socket"],
        "echo mismatch: the reply to id 7",
    );
}

#[test]
fn the_client_library_drives_the_bundled_server_and_the_floor_in_both_framings() {
    echo_server();
    for framing in ["ndjson", "content-length"] {
        let (run, report) = bench(&["--driver", "client", "--framing", framing]);
        assert_sane_with(&run, &report, framing, false, "client");
        let (run, report) = bench(&["--driver", "client", "--framing", framing, "--floor"]);
        assert_sane_with(&run, &report, framing, true, "client");
    }
    let server = echo_server().display().to_string();
    let args = [
        "--driver", "client", "--calls", "100", "--runs", "1", "--", &server,
    ];
    let run = run(&args);
    assert_eq!(run.code, 0, "{}", shown(&run));
    for needle in [
        "calls made through the mcp-client library",
        "(client: ",
        "requests written before EOF answered: not measured",
    ] {
        assert!(run.stdout.contains(needle), "{needle}: {}", shown(&run));
    }
}

#[test]
fn the_client_library_driver_fails_on_a_wrong_text() {
    bench_fails(
        &lying_server("i", "t[:-1] if i == 7 else t"),
        &["--driver", "client"],
        "the result is not the echo of the 64-byte text it sent",
    );
}

#[test]
fn text_report_and_explicit_command() {
    let server = echo_server().display().to_string();
    let run = run(&[
        "--calls", "200", "--runs", "2", "--window", "1,4", "--", &server,
    ]);
    assert_eq!(run.code, 0, "{}", shown(&run));
    for needle in [
        "calls/s",
        "p50 µs",
        "start to initialize reply",
        "peak RSS",
        "requests written before EOF answered: all",
    ] {
        assert!(run.stdout.contains(needle), "{needle}: {}", shown(&run));
    }
}

/// A server answering every call with `"text"` changed by `python` (a lambda of id and text)
/// and the id changed by `id_expr`.
fn lying_server(id_expr: &str, text_expr: &str) -> Vec<String> {
    scripted_server(&format!(
        r#"{{"jsonrpc": "2.0", "id": {id_expr}, "result": {{"content": [{{"type": "text", "text": {text_expr}}}]}}}}"#
    ))
}

/// A server that answers `initialize`, and every other request with `reply`: a Python
/// expression of the request's id `i` and its echo text `t`.
fn scripted_server(reply: &str) -> Vec<String> {
    let script = format!(
        r#"
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    i = m["id"]
    if m["method"] == "initialize":
        r = {{"jsonrpc": "2.0", "id": i, "result": {{"protocolVersion": "2025-11-25", "capabilities": {{"tools": {{}}}}, "serverInfo": {{"name": "liar", "version": "0"}}}}}}
    else:
        t = m["params"]["arguments"]["text"]
        r = {reply}
    sys.stdout.write(json.dumps(r) + "\n")
    sys.stdout.flush()
"#
    );
    vec!["python3".into(), "-S".into(), "-c".into(), script]
}

fn bench_fails(target: &[String], extra: &[&str], needle: &str) {
    let run = run(&bench_args(target, extra));
    assert_eq!(run.code, 1, "{}", shown(&run));
    assert!(
        run.stderr.contains("FAILED") && run.stderr.contains(needle),
        "expected {needle:?} in stderr: {}",
        shown(&run)
    );
}

/// A short bench of `target`: one run, windows 1 and 4.
fn bench_args(target: &[String], extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = [
        "--calls",
        "50",
        "--runs",
        "1",
        "--window",
        "1,4",
        "--timeout",
        "3",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(extra.iter().map(|s| s.to_string()));
    args.push("--".into());
    args.extend(target.iter().cloned());
    args
}

/// Benches the bundled server behind a Python wrapper that appends `line` (a Python expression)
/// to a log for each start, then runs the server; returns the run (which must exit 0) and the
/// logged lines.
fn logged_starts(name: &str, line: &str, extra: &[&str]) -> (Run, Vec<String>) {
    let log = std::env::temp_dir().join(format!("mcp-bench-{name}-{}", std::process::id()));
    let _ = std::fs::remove_file(&log);
    let script = format!(
        "import os, sys; open(sys.argv[1], 'a').write({line} + '\\n'); os.execv(sys.argv[2], [sys.argv[2]])"
    );
    let args: Vec<String> = ["--calls", "50", "--timeout", "5", "--format", "json"]
        .iter()
        .chain(extra)
        .map(|s| s.to_string())
        .chain([
            "--".into(),
            "python3".into(),
            "-S".into(),
            "-c".into(),
            script,
            log.display().to_string(),
            echo_server().display().to_string(),
        ])
        .collect();
    let run = run(&args);
    assert_eq!(run.code, 0, "{}", shown(&run));
    let lines = std::fs::read_to_string(&log).unwrap();
    let _ = std::fs::remove_file(&log);
    (run, lines.lines().map(str::to_owned).collect())
}

/// `--warmup N` starts the server N times, unmeasured, before the runs: counted by a wrapper
/// that notes each start in a file and then runs the bundled server.
#[test]
fn warmup_starts_come_before_the_runs_and_are_counted_exactly() {
    for (warmup, runs) in [(0usize, 1usize), (2, 1), (1, 2)] {
        let (w, r) = (warmup.to_string(), runs.to_string());
        let (run, starts) = logged_starts(
            &format!("starts-{warmup}-{runs}"),
            "'start'",
            &["--window", "4", "--warmup", &w, "--runs", &r],
        );
        assert_eq!(starts.len(), warmup + runs, "{}", shown(&run));
        let report = run.json();
        assert_eq!(report["warmup"], warmup, "{}", shown(&run));
        assert_eq!(report["runs"], runs, "{}", shown(&run));
    }
}

/// `--pin` starts every server process (warm-up and runs) on the CPU it reports, as a wrapper
/// that notes its own affinity before running the bundled server sees: the driver's CPU for
/// `same`, the next allowed one for `split` (where the machine has two).
#[test]
fn pin_starts_each_server_on_the_cpu_the_report_names() {
    let allowed = mcp_bench::pin::allowed().unwrap();
    let placements: &[&str] = if allowed.len() >= 2 {
        &["same", "split"]
    } else {
        &["same"]
    };
    for placement in placements {
        let (run, starts) = logged_starts(
            &format!("pin-{placement}"),
            "' '.join(map(str, sorted(os.sched_getaffinity(0))))",
            &[
                "--window", "1,4", "--warmup", "1", "--runs", "2", "--pin", placement,
            ],
        );
        let report = run.json();
        let pin = &report["pin"];
        assert_eq!(pin["placement"], *placement, "{}", shown(&run));
        let expected = if *placement == "same" {
            allowed[0]
        } else {
            allowed[1]
        };
        assert_eq!(pin["driverCpu"], allowed[0], "{}", shown(&run));
        assert_eq!(pin["serverCpu"], expected, "{}", shown(&run));
        assert_eq!(starts, vec![expected.to_string(); 3], "{}", shown(&run));
    }
    let (run, report) = bench(&[]);
    assert_eq!(report["pin"], Value::Null, "{}", shown(&run));
}

/// `--pin split` where this process may use one CPU is a usage error that says so.
#[test]
fn pin_split_on_one_cpu_is_a_usage_error() {
    let mut cmd = std::process::Command::new("python3");
    cmd.args([
        "-S",
        "-c",
        "import os, sys; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}); os.execv(sys.argv[1], sys.argv[1:])",
    ])
    .arg(common::bench_bin())
    .args(["--pin", "split", "--calls", "10"]);
    let run = common::run_command(cmd, vec!["--pin split (one CPU)".into()]);
    assert_eq!(run.code, 2, "{}", shown(&run));
    assert!(
        run.stderr.contains("--pin split needs two CPUs"),
        "{}",
        shown(&run)
    );
}

#[test]
fn a_wrong_id_fails_the_run() {
    bench_fails(
        &lying_server("i + 1 if i > 3 else i", "t"),
        &[],
        "id mismatch: the reply with id 5 carries the text sent with id 4",
    );
}

#[test]
fn a_wrong_text_fails_the_run() {
    bench_fails(
        &lying_server("i", "t[:-1] if i == 7 else t"),
        &[],
        "echo mismatch: the reply to id 7",
    );
}

/// What the bench needs of a server is said when the server's `echo` is another tool: a
/// tool error, a JSON-RPC error, or no text (as with servers that were not written for it).
#[test]
fn a_server_without_the_benchs_echo_is_told_what_the_bench_needs() {
    let needs = "; the bench calls a tool named `echo` with arguments {\"text\": string} and \
                 expects that text back, unchanged, in result.content[0].text";
    for (reply, said) in [
        (
            r#"{"jsonrpc": "2.0", "id": i, "result": {"content": [{"type": "text", "text": "Tool echo not found"}], "isError": True}}"#,
            "the reply to id 1 is a tool error (isError: true), not the echo: ",
        ),
        (
            // The right text, but as a tool error: not an echo either.
            r#"{"jsonrpc": "2.0", "id": i, "result": {"content": [{"type": "text", "text": t}], "isError": True}}"#,
            "the reply to id 1 is a tool error (isError: true), not the echo: ",
        ),
        (
            r#"{"jsonrpc": "2.0", "id": i, "error": {"code": -32602, "message": "Unknown tool: echo"}}"#,
            "request 1 got an error reply: ",
        ),
        (
            r#"{"jsonrpc": "2.0", "id": i, "result": {"content": []}}"#,
            "the reply to id 1 has no result.content[0].text: ",
        ),
    ] {
        bench_fails(&scripted_server(reply), &[], said);
        bench_fails(&scripted_server(reply), &[], needs);
    }
    // A wrong text without a tool error is an echo mismatch, without that advice.
    let run = run(&bench_args(
        &lying_server("i", "t[:-1] if i == 7 else t"),
        &[],
    ));
    assert_eq!(run.code, 1, "{}", shown(&run));
    assert!(
        run.stderr.contains("echo mismatch: the reply to id 7") && !run.stderr.contains(needs),
        "{}",
        shown(&run)
    );
}

#[test]
fn requests_dropped_at_eof_fail_the_run() {
    let fixture = broken_server("drop-pending-at-eof");
    let mut all: Vec<String> = [
        "--calls",
        "20",
        "--runs",
        "1",
        "--window",
        "1",
        "--timeout",
        "3",
        "--format",
        "json",
        "--",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    all.extend(fixture);
    let run = run(&all);
    assert_eq!(run.code, 1, "{}", shown(&run));
    assert!(
        run.stderr
            .contains("requests written right before stdin closed were not answered"),
        "{}",
        shown(&run)
    );
    assert_eq!(run.json()["eofAllAnswered"], false, "{}", shown(&run));
}

#[test]
fn the_floor_and_a_command_at_once_is_a_usage_error() {
    let both = run(&["--floor", "--", "true"]);
    assert_eq!(both.code, 2, "{}", shown(&both));
    assert!(
        both.stderr
            .contains("give either --floor or a command after --, not both"),
        "{}",
        shown(&both)
    );
}
