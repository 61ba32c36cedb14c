//! The harness against servers that fail below the protocol: one that never answers, one that
//! floods stdout with garbage (lines, or bytes with no newline at all), one that announces a
//! 2 GiB `Content-Length`, and one killed by SIGKILL mid-scenario. For each, the real
//! `mcp-conformance` binary must end (every wait at its deadline: no check runs into its own
//! time limit), exit with the right code, name the cause in the report, and keep its own memory
//! bounded (peak RSS from `/usr/bin/time`, or sampled from `/proc/<pid>/status` without it).
//! A server that answers neither start-up request ends the run at once with exit code 3 and
//! what it wrote: no check runs.
//!
//! The fixture is `tests/fixtures/faulty_server.py` (`--mode sleep|flood-lines|flood-bytes|
//! huge-length|sigkill`). Every run uses `--timeout 1 --start-timeout 2`; full-suite runs use
//! `--jobs 4`. Each run is killed (and the test fails) after `RUN_LIMIT`.
#![allow(clippy::unwrap_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{find, harness, run_command, Run};
use serde_json::Value;

/// `--timeout`: each single wait of a check, in seconds.
const TIMEOUT: f64 = 1.0;
/// `--start-timeout`: the start-up initialize and the era probe, in seconds.
const START_TIMEOUT: f64 = 2.0;
/// The harness's peak resident memory must stay under this, whatever the server does.
const MEMORY_LIMIT_KIB: u64 = 200 * 1024;

/// `python3 -S tests/fixtures/faulty_server.py ARGS`.
fn faulty(args: &[&str]) -> Vec<String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("fixtures")
        .join("faulty_server.py");
    assert!(script.is_file(), "missing fixture {}", script.display());
    let mut cmd = vec![
        "python3".to_owned(),
        "-S".to_owned(),
        script.display().to_string(),
    ];
    cmd.extend(args.iter().map(|a| (*a).to_owned()));
    cmd
}

/// A finished run and the harness's peak resident memory.
struct Measured {
    run: Run,
    report: Value,
    max_rss_kib: u64,
    /// How `max_rss_kib` was measured.
    how: &'static str,
}

impl Measured {
    fn context(&self) -> String {
        format!(
            "{}\npeak RSS {} KiB ({})",
            self.run.context(),
            self.max_rss_kib,
            self.how
        )
    }

    /// The checks that ran (not skipped).
    fn ran(&self) -> Vec<&Value> {
        common::checks(&self.report, 0)
            .iter()
            .filter(|c| c["status"] != "SKIP")
            .collect()
    }

    fn actual(&self, id: &str) -> String {
        let check = find(&self.report, id);
        check["actual"]
            .as_str()
            .unwrap_or_else(|| panic!("{id} has no `actual`\n{}", self.context()))
            .to_owned()
    }
}

/// Runs the harness (`--format json --timeout 1 --start-timeout 2`, then `options`) against
/// `target`, measuring its peak RSS; kills its process group after [`RUN_LIMIT`].
fn run_measured(options: &[&str], target: &[String]) -> Measured {
    let mut args: Vec<String> = [
        "--format",
        "json",
        "--timeout",
        &TIMEOUT.to_string(),
        "--start-timeout",
        &START_TIMEOUT.to_string(),
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    args.extend(options.iter().map(|s| (*s).to_owned()));
    args.push("--".to_owned());
    args.extend(target.iter().cloned());

    let gnu_time = Path::new("/usr/bin/time");
    let rss_file = std::env::temp_dir().join(format!(
        "mcp-conformance-faults-{}-{}.rss",
        std::process::id(),
        unique()
    ));
    let mut cmd = if gnu_time.is_file() {
        let mut c = Command::new(gnu_time);
        c.arg("-f")
            .arg("%M")
            .arg("-o")
            .arg(&rss_file)
            .arg(harness());
        c
    } else {
        Command::new(harness())
    };
    cmd.args(&args);
    // Without /usr/bin/time: VmHWM only grows, so the last sample before the exit is (within
    // one sampling period) the peak.
    let mut sampled_hwm = 0;
    let run = run_command(cmd, args, |pid| {
        if !gnu_time.is_file() {
            if let Some(kib) = proc_status_kib(pid, "VmHWM") {
                sampled_hwm = sampled_hwm.max(kib);
            }
        }
    });
    let (max_rss_kib, how) = if gnu_time.is_file() {
        let text = std::fs::read_to_string(&rss_file).unwrap();
        let _ = std::fs::remove_file(&rss_file);
        // GNU time puts "Command exited with non-zero status N" before the figure.
        let kib = text
            .lines()
            .rev()
            .find_map(|l| l.trim().parse::<u64>().ok())
            .unwrap_or_else(|| panic!("no maxrss in /usr/bin/time's output {text:?}"));
        (kib, "maximum resident set size, /usr/bin/time")
    } else {
        (
            sampled_hwm,
            "VmHWM sampled every 2 ms from /proc/<pid>/status",
        )
    };
    let report = run.json();
    eprintln!(
        "faults: `{}` exited {} after {:.1?}, peak RSS {:.1} MiB ({how}), report {} bytes",
        run.args.join(" "),
        run.code,
        run.elapsed,
        max_rss_kib as f64 / 1024.0,
        run.stdout.len()
    );
    Measured {
        run,
        report,
        max_rss_kib,
        how,
    }
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

/// A `kB` field of `/proc/<pid>/status`.
fn proc_status_kib(pid: u32, field: &str) -> Option<u64> {
    let path = PathBuf::from(format!("/proc/{pid}/status"));
    let text = std::fs::read_to_string(path).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Every wait ended at its deadline (no check hit the per-check bound, which would mean one
/// did not); memory stayed bounded.
fn assert_bounded(m: &Measured) {
    for c in m.ran() {
        assert!(
            !c["actual"]
                .as_str()
                .unwrap_or("")
                .contains("the check was stopped"),
            "{} ran into the per-check bound: a wait did not end at its deadline\n{}",
            c["id"],
            m.context()
        );
    }
    assert!(
        m.max_rss_kib < MEMORY_LIMIT_KIB,
        "the harness used {} KiB at its peak, more than {MEMORY_LIMIT_KIB} KiB\n{}",
        m.max_rss_kib,
        m.context()
    );
}

/// Exit 1 (checks failed), the target started, and nothing passed that needs a reply.
fn assert_failed_run(m: &Measured) {
    assert_eq!(m.run.code, 1, "wrong exit code\n{}", m.context());
    assert_eq!(m.report["failed"], true, "{}", m.context());
    assert_eq!(
        m.report["targets"][0]["startError"],
        Value::Null,
        "{}",
        m.context()
    );
}

/// Exit 3: the target answered neither start-up request, no check ran, and the start error
/// says so; its text is returned.
fn assert_nothing_to_test(m: &Measured) -> String {
    assert_eq!(m.run.code, 3, "wrong exit code\n{}", m.context());
    let target = &m.report["targets"][0];
    assert_eq!(target["checks"], serde_json::json!([]), "{}", m.context());
    // The two start-up processes, nothing more.
    assert_eq!(target["starts"]["count"], 2, "{}", m.context());
    assert_eq!(target["starts"]["answered"], 0, "{}", m.context());
    target["startError"]
        .as_str()
        .unwrap_or_else(|| panic!("no startError\n{}", m.context()))
        .to_owned()
}

// ---------------------------------------------------------------------------------------------
// A server that never answers
// ---------------------------------------------------------------------------------------------

#[test]
fn a_server_that_sleeps_forever_is_not_started_and_nothing_runs() {
    let m = run_measured(&["--jobs", "4"], &faulty(&["--mode", "sleep"]));
    let error = assert_nothing_to_test(&m);
    assert_bounded(&m);
    assert_eq!(
        error,
        "the server answered neither initialize nor server/discover within 2s \
         (--start-timeout). stdout: nothing; its last stderr lines:\n  faulty_server: mode sleep",
        "{}",
        m.context()
    );
}

// ---------------------------------------------------------------------------------------------
// Garbage on stdout, forever
// ---------------------------------------------------------------------------------------------

#[test]
fn a_server_flooding_garbage_lines_is_reported_with_a_sample_in_bounded_memory() {
    let m = run_measured(&["--jobs", "4"], &faulty(&["--mode", "flood-lines"]));
    let error = assert_nothing_to_test(&m);
    assert_bounded(&m);
    assert!(
        error.starts_with(
            "the server answered neither initialize nor server/discover within 2s \
             (--start-timeout). stdout: "
        ) && error.contains("line(s), none a JSON-RPC reply; the first: \"")
            && error.contains("just garbage on stdout"),
        "the message says how much garbage and quotes it: {error}\n{}",
        m.context()
    );
    assert!(
        m.run.stdout.len() < 64 << 10,
        "the JSON report is {} bytes",
        m.run.stdout.len()
    );
}

/// Long garbage lines (4000 bytes each): the same bound. The stdio connection (`StdioConn`) keeps a
/// transcript bounded by bytes (its start and its end); before that it kept up to 20 000
/// entries of 4 KiB each per server process and peaked at 265 MiB here.
#[test]
fn a_server_flooding_long_garbage_lines_stays_in_bounded_memory() {
    let m = run_measured(
        &["--jobs", "1"],
        &faulty(&["--mode", "flood-lines", "--line-bytes", "4000"]),
    );
    assert_nothing_to_test(&m);
    assert_bounded(&m);
}

/// No newline ever: the harness's decoder buffers one frame's worth (its 64 MiB limit) per
/// server process, then reports the frame as too large and discards the rest. Both start-up
/// processes flood at once, so that is twice the limit at most.
#[test]
fn a_server_flooding_bytes_without_newlines_hits_the_frame_limit() {
    let m = run_measured(&["--jobs", "1"], &faulty(&["--mode", "flood-bytes"]));
    let error = assert_nothing_to_test(&m);
    assert_bounded(&m);
    assert!(
        error.contains("exceeds the limit of 67108864 bytes"),
        "{error}\n{}",
        m.context()
    );
}

// ---------------------------------------------------------------------------------------------
// Content-Length: 2147483648
// ---------------------------------------------------------------------------------------------

#[test]
fn a_two_gib_content_length_is_reported_and_never_allocated() {
    let m = run_measured(
        &["--jobs", "4", "--framing", "content-length"],
        &faulty(&["--mode", "huge-length"]),
    );
    let error = assert_nothing_to_test(&m);
    assert_bounded(&m);
    assert!(
        error.contains("message of 2147483648 bytes exceeds the limit of 67108864 bytes"),
        "{error}\n{}",
        m.context()
    );
}

/// The header, then nothing more: the body never comes, the start still ends at its budget.
#[test]
fn a_two_gib_content_length_then_silence_times_out() {
    let m = run_measured(
        &["--framing", "content-length"],
        &faulty(&["--mode", "huge-length", "--then", "stop"]),
    );
    let error = assert_nothing_to_test(&m);
    assert_bounded(&m);
    assert!(
        error.contains("within 2s") && error.contains("2147483648 bytes exceeds"),
        "{error}\n{}",
        m.context()
    );
}

// ---------------------------------------------------------------------------------------------
// SIGKILL mid-scenario
// ---------------------------------------------------------------------------------------------

/// It answers initialize, then dies by SIGKILL on the next message: the checks fail and say the
/// server was killed by signal 9.
#[test]
fn a_server_killed_by_sigkill_mid_scenario_is_reported_with_its_signal() {
    let m = run_measured(&["--jobs", "4"], &faulty(&["--mode", "sigkill"]));
    assert_failed_run(&m);
    assert_eq!(
        m.report["targets"][0]["serverInfo"]["name"],
        "faulty-server",
        "it started: initialize was answered\n{}",
        m.context()
    );
    assert_bounded(&m);
    let actual = m.actual("lifecycle.ping");
    assert!(
        actual.contains("(the server was killed by signal 9 (SIGKILL))"),
        "{actual}\n{}",
        m.context()
    );
    let killed = m
        .ran()
        .iter()
        .filter(|c| {
            c["actual"]
                .as_str()
                .is_some_and(|a| a.contains("killed by signal 9 (SIGKILL)"))
        })
        .count();
    assert!(
        killed >= 10,
        "{killed} checks name the signal\n{}",
        m.context()
    );
}

/// The same in Content-Length framing, dying after the handshake (initialize, initialized),
/// when the check's own request arrives.
#[test]
fn a_server_killed_after_the_handshake_is_reported_with_its_signal() {
    let m = run_measured(
        &["--framing", "content-length", "--only", "lifecycle.ping"],
        &faulty(&[
            "--mode",
            "sigkill",
            "--framing",
            "content-length",
            "--after",
            "2",
        ]),
    );
    assert_failed_run(&m);
    assert_bounded(&m);
    let ping = find(&m.report, "lifecycle.ping");
    assert_eq!(ping["status"], "FAIL", "{}", m.context());
    // The handshake completed: the check got as far as expecting ping's result.
    assert_eq!(ping["expected"], "result {}", "{}", m.context());
    let actual = m.actual("lifecycle.ping");
    assert!(
        actual.contains("id 2") && actual.contains("killed by signal 9 (SIGKILL)"),
        "{actual}\n{}",
        m.context()
    );
}

/// Killed by the first message: the target could not be started (exit 3), and the start error
/// says how it died and shows its last stderr lines.
#[test]
fn a_server_killed_before_answering_initialize_could_not_start() {
    let m = run_measured(&[], &faulty(&["--mode", "sigkill", "--after", "0"]));
    assert_eq!(m.run.code, 3, "wrong exit code\n{}", m.context());
    let error = m.report["targets"][0]["startError"]
        .as_str()
        .unwrap_or_else(|| panic!("no startError\n{}", m.context()))
        .to_owned();
    assert!(
        error.contains("before answering initialize")
            && error.contains("killed by signal 9 (SIGKILL)")
            && error.contains("killing myself with SIGKILL"),
        "{error}"
    );
    assert_bounded(&m);
}
