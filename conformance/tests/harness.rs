//! The harness must be able to fail: the real `mcp-conformance` binary against a correct fixture
//! server (everything passes), against the same fixture with one injected defect each (the right
//! check catches it, the run fails), and against our own server under every profile in both
//! framings (everything passes); plus its exit codes, expected-failure baselines, scenario
//! files, host config files and report files.
//!
//! The fixture is `tests/fixtures/broken_server.py` (Python 3, standard library only); each run
//! is a child process bounded by `common::RUN_LIMIT`, with `--timeout 3` for each single wait.
//! Full-suite runs use `--jobs 4` so the whole file stays well under a minute. The fixture's
//! modern and dual-era modes, era detection and the `modern.*` checks are tested in `eras.rs`.
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::BTreeSet;
use std::time::Duration;

use common::{
    assert_caught, assert_clean, assert_exit, assert_status, check, checks, describe, echo_server,
    find, run, with_status, Fixture, Run, TempDir,
};
use serde_json::{json, Value};

/// Options of a full-suite run: every check, four at a time.
const FULL: &[&str] = &["--jobs", "4"];

// ---------------------------------------------------------------------------------------------
// The correct fixture: the checks do not fail a correct server
// ---------------------------------------------------------------------------------------------

#[test]
fn correct_fixture_passes_the_generic_profile() {
    let (run, report) = check(FULL, &Fixture::correct().command());
    assert_exit(&run, 0);
    assert_clean(&run, &report);
    let target = &report["targets"][0];
    assert_eq!(target["profile"], "generic");
    assert_eq!(target["framing"], "ndjson");
    assert_eq!(target["serverInfo"]["name"], "broken-server");
    // Named after the server once it says who it is, not after `python3`.
    assert_eq!(target["name"], "broken-server");
    assert_eq!(report["failed"], false);
    // The checks that need more than the basics did run, and passed.
    assert_status(
        &run,
        &report,
        &[
            "jsonrpc.batch-2025-03-26",
            "tools.call-result-shape",
            "tools.structured-content",
        ],
        "PASS",
    );
    // What the spec leaves open is observed, not judged.
    assert_eq!(find(&report, "framing.crlf")["status"], "INFO");
    assert_eq!(
        find(&report, "framing.crlf")["detail"],
        "answered: result {}"
    );
    assert_eq!(
        find(&report, "framing.eof-no-data-loss")["detail"],
        "100 of 100 answered"
    );
    // The echo profile's checks are not run against another server.
    assert!(checks(&report, 0).iter().all(|c| c["area"] != "echo"));
    // Starts: the two start-up processes (initialize, server/discover), four for version
    // negotiation (each kept for a later check), and one each for ping and tools/list before
    // initialize, input a client must not send, and the read-only tool calls (which may
    // outlive their wait, so never in the shared session). Everything else shares the
    // start-up's initialize process.
    assert_eq!(target["starts"]["count"], 10, "{}", run.context());
    assert_eq!(target["starts"]["answered"], 10, "{}", run.context());
    assert!(target["starts"]["firstMs"].as_f64().unwrap() > 0.0);
    let shared = checks(&report, 0)
        .iter()
        .filter(|c| {
            c["transcript"][0]["text"]
                .as_str()
                .is_some_and(|t| t.starts_with("<shared legacy session"))
        })
        .count();
    assert!(
        shared >= 20,
        "{shared} checks ran in the shared session\n{}",
        run.context()
    );
}

#[test]
fn correct_fixture_passes_the_strict_profile_with_content_length_framing() {
    let mut options = FULL.to_vec();
    options.extend(["--profile", "strict", "--framing", "content-length"]);
    let (run, report) = check(&options, &Fixture::correct().content_length().command());
    assert_exit(&run, 0);
    assert_clean(&run, &report);
    assert_eq!(report["targets"][0]["profile"], "strict");
    assert_eq!(report["targets"][0]["framing"], "content-length");
    assert_status(
        &run,
        &report,
        &[
            "framing.utf8",
            "jsonrpc.ids-echoed",
            "framing.byte-at-a-time",
        ],
        "PASS",
    );
}

// ---------------------------------------------------------------------------------------------
// One defect each: the right check catches it (a full-suite run per defect: nothing hangs)
// ---------------------------------------------------------------------------------------------

#[test]
fn bug_stdout_log_is_caught_by_stdout_only_frames() {
    let (run, report) = check(FULL, &Fixture::bug("stdout-log").command());
    assert_caught(&run, &report, &["framing.stdout-only-frames"]);
    let actual = find(&report, "framing.stdout-only-frames")["actual"]
        .as_str()
        .unwrap();
    assert!(
        actual.contains("INFO:broken_server:starting"),
        "the startup line printed before any request is reported: {actual}"
    );
}

/// Python's `logging` writes `LEVEL:name:message`; in Content-Length framing such a line in
/// front of a header block must not pass for an (ignored) header.
#[test]
fn bug_stdout_log_is_caught_with_content_length_framing() {
    let (run, report) = check(
        &[
            "--only",
            "framing.stdout-only-frames",
            "--framing",
            "content-length",
        ],
        &Fixture::bug("stdout-log").content_length().command(),
    );
    assert_caught(&run, &report, &["framing.stdout-only-frames"]);
}

/// RFC 8259 §8.1: a JSON text sent over a network MUST NOT start with a byte order mark, and
/// JSON.parse-based clients (the TypeScript SDK) drop the first message when it does.
#[test]
fn bug_stdout_bom_is_caught_by_stdout_only_frames() {
    let (run, report) = check(
        &["--only", "framing.stdout-only-frames"],
        &Fixture::bug("stdout-bom").command(),
    );
    assert_caught(&run, &report, &["framing.stdout-only-frames"]);
}

#[test]
fn bug_answer_notifications_is_caught() {
    let (run, report) = check(FULL, &Fixture::bug("answer-notifications").command());
    assert_caught(
        &run,
        &report,
        &[
            "lifecycle.initialized-no-reply",
            "jsonrpc.unknown-notification",
            "cancellation.unknown-request",
        ],
    );
}

#[test]
fn bug_content_length_in_characters_is_caught_by_utf8() {
    let mut options = FULL.to_vec();
    options.extend(["--framing", "content-length"]);
    let (run, report) = check(
        &options,
        &Fixture::bug("content-length-chars")
            .content_length()
            .command(),
    );
    assert_caught(&run, &report, &["framing.utf8"]);
    assert_eq!(report["targets"][0]["framing"], "content-length");
    // ASCII-only traffic is framed right by the same server: the defect is specific.
    assert_status(
        &run,
        &report,
        &["lifecycle.ping", "jsonrpc.concurrent-requests"],
        "PASS",
    );
    // The non-ASCII id's reply is cut short too: its FAIL shows the cut frame, not just a
    // silence.
    let ids = find(&report, "jsonrpc.ids-echoed");
    assert_eq!(ids["status"], "FAIL", "{}", run.context());
    let actual = ids["actual"].as_str().unwrap_or("");
    assert!(
        actual.contains("not a JSON frame (garbage), the first: not JSON (EOF while parsing"),
        "{actual}\n{}",
        run.context()
    );
}

#[test]
fn bug_string_ids_to_numbers_is_caught_by_ids_echoed() {
    let (run, report) = check(FULL, &Fixture::bug("string-ids-to-numbers").command());
    assert_caught(&run, &report, &["jsonrpc.ids-echoed"]);
}

#[test]
fn bug_unknown_method_result_is_caught_by_unknown_method() {
    let (run, report) = check(FULL, &Fixture::bug("unknown-method-result").command());
    assert_caught(&run, &report, &["jsonrpc.unknown-method"]);
    let actual = find(&report, "jsonrpc.unknown-method")["actual"]
        .as_str()
        .unwrap();
    assert!(actual.contains("\"result\""), "{actual}");
}

/// Exiting on EOF is a SHOULD of 2026-07-28 (stdio, Shutdown): a warning under the generic
/// profile for a server that speaks it (the run passes), a failure under strict; for a server
/// that speaks only legacy revisions, which say nothing of it, an observation. No fixture
/// process outlives the run.
#[test]
fn bug_hang_on_eof_warns_under_generic() {
    let mark = format!("MCP_CONFORMANCE_TEST_MARK={}-hang", std::process::id());
    let mut options = FULL.to_vec();
    options.extend(["--env", &mark]);
    let (run, report) = check(&options, &Fixture::bug("hang-on-eof").era("dual").command());
    assert_status(&run, &report, &["framing.eof-exit"], "WARN");
    assert!(
        with_status(&report, "FAIL").is_empty(),
        "only the SHOULD is broken\n{}",
        run.context()
    );
    assert_exit(&run, 0);
    assert_no_process_with(&mark);

    let (run, report) = check(
        &["--only", "framing.eof-exit"],
        &Fixture::bug("hang-on-eof").command(),
    );
    assert_status(&run, &report, &["framing.eof-exit"], "INFO");
    let detail = find(&report, "framing.eof-exit")["detail"]
        .as_str()
        .unwrap();
    assert!(detail.starts_with("still running after 2s"), "{detail}");
    assert_exit(&run, 0);
}

#[test]
fn bug_hang_on_eof_fails_under_strict() {
    let (run, report) = check(
        &["--only", "framing.eof-exit", "--profile", "strict"],
        &Fixture::bug("hang-on-eof").era("dual").command(),
    );
    assert_caught(&run, &report, &["framing.eof-exit"]);
}

/// It exits after answering its fifth request: the shared session breaks, the check it broke in
/// says so, and the checks after it get a new session instead of waiting on a dead one.
#[test]
fn bug_crash_after_n_requests_fails_the_run_without_hanging() {
    let (run, report) = check(FULL, &Fixture::bug("crash-after-n").command());
    assert_exit(&run, 1);
    assert_status(&run, &report, &["lifecycle.initialize-result"], "PASS");
    assert_caught(&run, &report, &["jsonrpc.concurrent-requests"]);
    let all = checks(&report, 0);
    let broke: Vec<&Value> = all
        .iter()
        .filter(|c| c["brokeSession"].is_string())
        .collect();
    assert!(!broke.is_empty(), "{}", run.context());
    for c in &broke {
        assert!(
            c["brokeSession"].as_str().unwrap().starts_with(
                "the shared legacy session broke during this check: the server exited"
            ),
            "{c}"
        );
    }
    // A new session serves the checks after a break: some of them pass.
    assert!(
        all.iter().any(|c| c["status"] == "PASS"
            && c["transcript"][0]["text"]
                .as_str()
                .is_some_and(|t| t.starts_with("<shared legacy session"))),
        "{}",
        run.context()
    );
    assert!(
        !run.stdout.contains("the check was stopped"),
        "every wait ended at its deadline"
    );
}

/// The checks judged from the handshake's replies, from what comes before it, or from how the
/// server ends: the only ones that may pass against a server that stops right after
/// `initialize`.
const NEED_NO_REPLY_AFTER_THE_HANDSHAKE: &[&str] = &[
    // The start-up's initialize (and what the whole run read).
    "era.detect",
    "lifecycle.initialize-result",
    "framing.replies-in-kind",
    "framing.no-embedded-newlines",
    // initialize offering each version, each in a fresh process.
    "lifecycle.version-negotiation",
    "lifecycle.version-unknown",
    "lifecycle.version-unknown-latest",
    // Before initialize, or initialize alone.
    "lifecycle.ping-before-initialize",
    "lifecycle.requests-before-initialize",
    "echo.gating-before-initialize",
    "echo.initialize-params-required",
    // How it ends once stdin closes, and what it wrote to stderr.
    "framing.eof-exit",
    "framing.stderr-volume",
    "echo.eof-exit-code",
];

/// Every built-in check (the echo profile runs them all; the `http.*` ones are N/A over stdio)
/// against a server that answers `initialize` and then nothing, and against one that exits
/// right after answering it: no check that needs a reply after the handshake passes. Against
/// the silent one, the first check that failed on it owns the root cause and the checks that
/// would have waited are blocked by it; so that each of those meets the silence itself, each
/// then runs alone (`--only`), where nothing blocks it.
#[test]
fn no_check_that_needs_a_reply_after_the_handshake_passes_against_a_server_that_stops() {
    let builtin: BTreeSet<String> = mcp_conformance::builtin()
        .unwrap()
        .into_iter()
        .map(|c| c.info.id)
        .collect();
    let stops = Fixture::bug("silent-after-initialize");
    let exits = Fixture::bug("crash-after-n").arg("--crash-after").arg("1");
    for (what, fixture) in [("stops answering", stops), ("exits", exits)] {
        let options = ["--profile", "echo", "--timeout", "1", "--jobs", "4"];
        let (run, report) = check(&options, &fixture.command());
        assert_exit(&run, 1);
        let ran: BTreeSet<String> = checks(&report, 0)
            .iter()
            .map(|c| c["id"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(
            ran,
            builtin,
            "every built-in check is reported\n{}",
            run.context()
        );
        let passed: Vec<&str> = with_status(&report, "PASS")
            .into_iter()
            .filter(|id| !NEED_NO_REPLY_AFTER_THE_HANDSHAKE.contains(id))
            .collect();
        assert!(
            passed.is_empty(),
            "against a server that {what} right after initialize these passed: {passed:?}\n{}",
            run.context()
        );
        // What it did answer was judged.
        assert_status(&run, &report, &["lifecycle.initialize-result"], "PASS");
    }
    let (run, report) = check(
        &["--profile", "echo", "--timeout", "1"],
        &Fixture::bug("silent-after-initialize").command(),
    );
    let findings = report["targets"][0]["findings"].as_array().unwrap();
    let stop = findings
        .iter()
        .find(|f| f["kind"] == "stops-answering")
        .unwrap_or_else(|| panic!("no stops-answering root cause\n{}", run.context()));
    let owner = stop["owner"].as_str().unwrap();
    assert_eq!(find(&report, owner)["status"], "FAIL", "{}", run.context());
    let blocked = with_status(&report, "BLOCKED");
    assert!(blocked.len() > 20, "{blocked:?}\n{}", run.context());
    for id in &blocked {
        let c = find(&report, id);
        assert_eq!(c["blockedBy"], owner, "{id}\n{}", run.context());
        assert!(
            c["detail"]
                .as_str()
                .unwrap()
                .starts_with("not run: the server stopped answering twice"),
            "{c}"
        );
    }
    // Each blocked check alone, four runs at a time.
    let silent = Fixture::bug("silent-after-initialize").command();
    for batch in blocked.chunks(4) {
        std::thread::scope(|scope| {
            let runs: Vec<_> = batch
                .iter()
                .map(|id| {
                    let silent = &silent;
                    let options = ["--profile", "echo", "--timeout", "1", "--only", id];
                    scope.spawn(move || (*id, check(&options, silent)))
                })
                .collect();
            for handle in runs {
                let (id, (run, report)) = handle.join().unwrap();
                let status = &find(&report, id)["status"];
                assert_ne!(status, "PASS", "{id} alone\n{}", run.context());
            }
        });
    }
}

/// Requests pending when stdin closes are lost: nothing the spec forbids (an observation under
/// the generic profile), but our own README promises otherwise (a MUST under echo).
#[test]
fn bug_drop_pending_at_eof_is_observed_and_fails_the_echo_profile() {
    let (run, report) = check(FULL, &Fixture::bug("drop-pending-at-eof").command());
    assert_exit(&run, 0);
    assert_status(&run, &report, &["framing.eof-no-data-loss"], "INFO");
    let actual = find(&report, "framing.eof-no-data-loss")["actual"]
        .as_str()
        .unwrap();
    assert!(actual.contains("lost ids"), "{actual}");
    // While stdin is open it answers everything, and it does exit on EOF.
    assert_status(
        &run,
        &report,
        &[
            "jsonrpc.concurrent-requests",
            "framing.several-in-one-write",
        ],
        "PASS",
    );

    let (run, report) = check(
        &["--profile", "echo", "--only", "framing.eof-no-data-loss"],
        &Fixture::bug("drop-pending-at-eof").command(),
    );
    assert_eq!(find(&report, "framing.eof-no-data-loss")["level"], "MUST");
    assert_caught(&run, &report, &["framing.eof-no-data-loss"]);
}

#[test]
fn bug_no_ping_is_caught_by_ping() {
    let (run, report) = check(
        &[
            "--only",
            "lifecycle.ping",
            "--only",
            "lifecycle.ping-before-initialize",
        ],
        &Fixture::bug("no-ping").command(),
    );
    // Before initialize nothing binds the server: what it does is reported.
    assert_status(&run, &report, &["lifecycle.ping-before-initialize"], "INFO");
    assert_caught(&run, &report, &["lifecycle.ping"]);
}

/// Errors to requests whose id was readable carry `"id": null`: the replies cannot be matched,
/// so the checks waiting for them are blocked (at once, not after a timeout) by the check that
/// owns the rule, which fails with the frames, and is reported though `--only` left it out.
#[test]
fn bug_null_id_errors_are_caught() {
    let (run, report) = check(
        &[
            "--jobs",
            "3",
            "--only",
            "jsonrpc.unknown-method",
            "--only",
            "tools.invalid-cursor",
            "--only",
            "jsonrpc.invalid-request.no-jsonrpc",
        ],
        &Fixture::bug("null-id-reply").command(),
    );
    assert_caught(&run, &report, &["jsonrpc.responses-well-formed"]);
    for id in ["jsonrpc.unknown-method", "tools.invalid-cursor"] {
        assert_eq!(find(&report, id)["status"], "BLOCKED", "{}", run.context());
        assert_eq!(
            find(&report, id)["blockedBy"],
            "jsonrpc.responses-well-formed"
        );
        assert!(find(&report, id)["detail"]
            .as_str()
            .unwrap()
            .contains("a reply without an id came"));
    }
    assert_eq!(report["targets"][0]["summary"]["blocked"], 2);
    let owner = find(&report, "jsonrpc.responses-well-formed");
    assert!(owner["actual"]
        .as_str()
        .unwrap()
        .contains("(first seen in "));
    assert!(owner["transcript"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["text"].as_str().unwrap().contains("\"id\":null")));
    let findings = &report["targets"][0]["findings"];
    assert_eq!(findings[0]["kind"], "no-id", "{findings}");
    // A malformed request may get its error without an id: observed, not blocked.
    assert_status(
        &run,
        &report,
        &["jsonrpc.invalid-request.no-jsonrpc"],
        "INFO",
    );
}

#[test]
fn bug_echo_any_version_is_caught_by_version_unknown() {
    let (run, report) = check(
        &[
            "--only",
            "lifecycle.version-unknown",
            "--only",
            "lifecycle.version-unknown-latest",
        ],
        &Fixture::bug("echo-any-version").command(),
    );
    assert_status(&run, &report, &["lifecycle.version-unknown-latest"], "WARN");
    assert_caught(&run, &report, &["lifecycle.version-unknown"]);
}

/// Offered 2025-11-25 the fixture answers 2025-06-18, yet it answers 2025-11-25 to an unknown
/// version, so it supports 2025-11-25: offered a version it supports, a server MUST answer
/// that version (basic/lifecycle.mdx, Version Negotiation).
#[test]
fn bug_inconsistent_versions_is_caught_by_version_checks() {
    let (run, report) = check(
        &["--only", "lifecycle.version*"],
        &Fixture::bug("inconsistent-versions").command(),
    );
    let failed = with_status(&report, "FAIL");
    assert!(
        failed.iter().any(|id| id.starts_with("lifecycle.version")),
        "no lifecycle.version* check fails a server that will not accept the version it \
         answers with\n{}",
        run.context()
    );
    assert_exit(&run, 1);
}

#[test]
fn bug_bad_structured_content_is_caught() {
    let (run, report) = check(
        &["--only", "tools.structured-content"],
        &Fixture::bug("bad-structured-content").command(),
    );
    assert_caught(&run, &report, &["tools.structured-content"]);
}

/// No process whose environment holds `mark` (set with `--env`) is left running.
fn assert_no_process_with(mark: &str) {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return; // not Linux: nothing to inspect
    };
    let pids: Vec<String> = dir
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.chars().all(|c| c.is_ascii_digit()))
        .collect();
    // A bound against a leak only (a killed process may take a moment to go on a loaded
    // machine); a correct run passes at the first look or soon after.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let alive: Vec<&String> = pids
            .iter()
            .filter(|pid| {
                std::fs::read(format!("/proc/{pid}/environ"))
                    .is_ok_and(|env| env.split(|b| *b == 0).any(|var| var == mark.as_bytes()))
            })
            .collect();
        if alive.is_empty() {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "fixture processes outlived the harness: {alive:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

// ---------------------------------------------------------------------------------------------
// Our own server: every profile, both framings
// ---------------------------------------------------------------------------------------------

#[test]
fn our_server_passes_every_profile_in_both_framings() {
    echo_server();
    // The echo tool's plain text beside structuredContent is a documented deviation from a
    // SHOULD (docs/server.md, The echo tool): WARN in the generic profile, an expected FAIL in
    // the strict one, INFO in the echo profile.
    let dir = TempDir::new("our-server-profiles");
    let baseline = dir.write("expected-failures.txt", &DEVIATIONS.join("\n"));
    let combos: Vec<(&str, &str)> = ["generic", "strict", "echo"]
        .into_iter()
        .flat_map(|p| ["ndjson", "content-length"].map(|f| (p, f)))
        .collect();
    let runs: Vec<(Run, Value)> = std::thread::scope(|s| {
        let handles: Vec<_> = combos
            .iter()
            .map(|(profile, framing)| {
                let baseline = baseline.display().to_string();
                s.spawn(move || {
                    let mut options = vec!["--profile", *profile, "--framing", *framing];
                    if *profile == "strict" {
                        options.extend(["--expected-failures", baseline.as_str()]);
                    }
                    check(&options, &[])
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for ((profile, framing), (run, report)) in combos.iter().zip(&runs) {
        assert_exit(run, 0);
        let deviations: Vec<&str> = checks(report, 0)
            .iter()
            .filter(|c| DEVIATIONS.contains(&c["id"].as_str().unwrap()))
            .map(|c| c["status"].as_str().unwrap())
            .collect();
        let want = match *profile {
            "generic" => "WARN",
            "strict" => "FAIL",
            _ => "INFO",
        };
        assert_eq!(deviations, [want, want], "{}", run.context());
        assert_clean_but(run, report, &DEVIATIONS);
        let target = &report["targets"][0];
        assert_eq!(target["profile"], *profile, "{}", run.context());
        assert_eq!(target["framing"], *framing, "{}", run.context());
        assert_eq!(target["serverInfo"]["name"], "mcp-echo-server");
        // Dual-era: both eras pass (no SKIP below, so every modern.* check ran).
        assert_eq!(
            target["eras"],
            json!(["legacy", "modern"]),
            "{}",
            run.context()
        );
        let passed = with_status(report, "PASS");
        assert!(passed.len() >= 30, "{}", run.context());
        for id in [
            "modern.discover",
            "modern.unsupported-version",
            "modern.result-type",
        ] {
            assert!(passed.contains(&id), "{id}\n{}", run.context());
        }
        if *profile == "echo" {
            assert!(passed.contains(&"echo.round-trips"), "{}", run.context());
        }
        // Only the newline-delimited CRLF check, and the checks of features our server does not
        // declare, may not apply.
        for skipped in with_status(report, "SKIP") {
            let detail = find(report, skipped)["detail"].as_str().unwrap_or("");
            assert!(
                skipped == "framing.crlf" && *framing == "content-length"
                    || detail.contains("does not declare the"),
                "{skipped} skipped\n{}",
                run.context()
            );
        }
    }
}

/// What our server does on purpose against a SHOULD (docs/server.md, The echo tool).
const DEVIATIONS: [&str; 2] = [
    "tools.structured-content-text",
    "modern.tools-structured-content-text",
];

/// No check FAILed or WARNed, but those of `except`.
fn assert_clean_but(run: &Run, report: &Value, except: &[&str]) {
    for c in checks(report, 0) {
        if except.contains(&c["id"].as_str().unwrap()) {
            continue;
        }
        assert!(
            c["status"] != "FAIL" && c["status"] != "WARN",
            "{} {}\n{}",
            c["status"],
            c["id"],
            run.context()
        );
    }
}

/// A full run against our server (the echo profile by default) with `--junit` and
/// `--transcript`: `--list` names exactly the checks that ran, the JUnit file has one testcase
/// per check and the transcript directory one `.jsonl` file per check.
#[test]
fn list_junit_and_transcripts_cover_every_check() {
    echo_server();
    let dir = TempDir::new("reports");
    let junit = dir.path().join("report.xml");
    let transcripts = dir.path().join("transcripts");
    let (run, report) = check(
        &[
            "--junit",
            junit.to_str().unwrap(),
            "--transcript",
            transcripts.to_str().unwrap(),
        ],
        &[],
    );
    assert_exit(&run, 0);
    assert_clean(&run, &report);
    assert_eq!(
        report["targets"][0]["profile"], "echo",
        "the bundled server's default"
    );
    let ran: Vec<&str> = checks(&report, 0)
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();

    let list = run_ok(&["--list"]);
    let listed: Vec<&str> = list
        .stdout
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with(char::is_whitespace))
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(
        listed.iter().collect::<BTreeSet<_>>(),
        ran.iter().collect::<BTreeSet<_>>(),
        "--list and a full echo-profile run disagree"
    );
    assert_eq!(listed.len(), ran.len(), "a check is listed twice");
    for level in ["MUST", "SHOULD", "INFO"] {
        assert!(list.stdout.contains(level), "--list shows levels");
    }
    assert!(
        list.stdout.contains("spec:"),
        "--list shows spec references"
    );

    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.starts_with("<?xml"), "{xml}");
    assert_eq!(xml.matches("<testcase ").count(), ran.len(), "{xml}");
    assert!(xml.contains(&format!("tests=\"{}\"", ran.len())), "{xml}");
    assert!(xml.contains("failures=\"0\""), "{xml}");
    for id in &ran {
        assert!(xml.contains(&format!("name=\"{id}\"")), "no testcase {id}");
    }

    let target_dir = transcripts.join("mcp-echo-server");
    let files: BTreeSet<String> = std::fs::read_dir(&target_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    // The http.* checks are N/A over stdio: nothing exchanged, no transcript.
    let wanted: BTreeSet<String> = ran
        .iter()
        .filter(|id| !id.starts_with("http."))
        .map(|id| format!("{id}.jsonl"))
        .collect();
    assert_eq!(files, wanted);
    // A check of a feature our server does not declare is skipped without a frame.
    let skipped = with_status(&report, "SKIP");
    for file in &files {
        let text = std::fs::read_to_string(target_dir.join(file)).unwrap();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        if skipped.contains(&file.trim_end_matches(".jsonl")) {
            continue;
        }
        assert!(
            lines.iter().any(|l| l["direction"] == "send"),
            "{file} has no frame sent"
        );
        assert!(
            lines.iter().any(|l| l["direction"] == "receive"),
            "{file} has no frame received"
        );
        for l in &lines {
            assert!(
                ["send", "receive", "event", "stderr"].contains(&l["direction"].as_str().unwrap()),
                "{file}: {l}"
            );
            assert!(l["text"].is_string(), "{file}: {l}");
        }
    }
}

fn run_ok(args: &[&str]) -> Run {
    let r = run(args);
    assert_exit(&r, 0);
    r
}

// ---------------------------------------------------------------------------------------------
// Exit codes
// ---------------------------------------------------------------------------------------------

#[test]
fn usage_errors_exit_2() {
    let dir = TempDir::new("usage");
    // The fixture, started through a shell that first leaves a mark: a usage error must be
    // reported before any server is started (not after running checks, or timeouts, on it).
    let started = dir.path().join("fixture-started");
    let mut fixture = vec![
        "sh".to_owned(),
        "-c".to_owned(),
        format!("echo started >> '{}'; exec \"$@\"", started.display()),
        "sh".to_owned(),
    ];
    fixture.extend(Fixture::correct().command());
    let missing = dir.path().join("missing.json");
    let incomplete = dir.write("incomplete.json", r#"{"scenarios": [{"id": "custom.x"}]}"#);
    let unknown_step = dir.write(
        "unknown-step.json",
        r#"{"scenarios": [{"id": "custom.x", "level": "MUST", "description": "d", "spec": "s",
            "steps": [{"teleport": true}]}]}"#,
    );
    let taken = dir.write(
        "taken.json",
        r#"[{"id": "lifecycle.ping", "level": "MUST", "description": "d", "spec": "s",
            "steps": []}]"#,
    );
    let expected = dir.write(
        "expected-failures.txt",
        "# baseline\njsonrpc.unknown-method  known\nno-such-check-xyz  typo\n",
    );
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["--only".into(), "no-such-check-xyz".into()],
            "no check matches",
        ),
        (
            vec!["bench".into(), "--floor".into()],
            "the benchmark is now `mcp-bench` (same options)",
        ),
        (
            vec!["--scenario-file".into(), missing.display().to_string()],
            "cannot read",
        ),
        (
            vec!["--scenario-file".into(), incomplete.display().to_string()],
            "not a valid scenario file",
        ),
        (
            vec!["--scenario-file".into(), unknown_step.display().to_string()],
            "not a valid scenario file",
        ),
        (
            vec!["--scenario-file".into(), taken.display().to_string()],
            "already taken",
        ),
        (
            vec!["--expected-failures".into(), expected.display().to_string()],
            "no-such-check-xyz",
        ),
        (vec!["--timeout".into(), "0".into()], "--timeout"),
        (
            vec!["--framing".into(), "smoke-signals".into()],
            "smoke-signals",
        ),
    ];
    for (options, message) in cases {
        let mut args = options.clone();
        args.push("--".into());
        args.extend(fixture.iter().cloned());
        let r = run(&args);
        assert_exit(&r, 2);
        assert!(
            r.stderr.contains(message),
            "{options:?}: stderr should say {message:?}\n{}",
            r.context()
        );
        assert!(
            !started.exists(),
            "{options:?}: the server was started despite a usage error\n{}",
            r.context()
        );
    }
    // A config file that does not exist, and one that is not a host config.
    let not_config = dir.write("not-config.json", r#"{"servers": {}}"#);
    for config in [missing, not_config] {
        let r = run(&["--config".into(), config.display().to_string()]);
        assert_exit(&r, 2);
    }
}

#[test]
fn a_target_that_cannot_start_exits_3() {
    let (r, report) = check(&[], &["/nonexistent/mcp-server-xyz".to_owned()]);
    assert_exit(&r, 3);
    let target = &report["targets"][0];
    assert!(target["startError"].is_string(), "{}", r.context());
    assert_eq!(target["checks"], json!([]));
    assert_eq!(target["failed"], true);
    assert_eq!(report["failed"], true);

    // One that starts but exits before answering initialize.
    let (r, report) = check(
        &[],
        &[
            "python3".to_owned(),
            "-S".to_owned(),
            "-c".to_owned(),
            "import sys; sys.stderr.write('no config\\n'); sys.exit(4)".to_owned(),
        ],
    );
    assert_exit(&r, 3);
    let error = report["targets"][0]["startError"].as_str().unwrap();
    assert!(error.contains("exited"), "{error}");
    assert!(
        error.contains("no config"),
        "the last stderr lines are shown: {error}"
    );

    // The text report too.
    let r = run(&["--", "/nonexistent/mcp-server-xyz"]);
    assert_exit(&r, 3);
}

// ---------------------------------------------------------------------------------------------
// --expected-failures
// ---------------------------------------------------------------------------------------------

#[test]
fn listed_failures_do_not_fail_the_run() {
    let dir = TempDir::new("expected");
    let file = dir.write(
        "expected-failures.txt",
        "# known problems\njsonrpc.unknown-method   answers unknown methods with {}\n",
    );
    let (run, report) = check(
        &[
            "--only",
            "jsonrpc.unknown-method",
            "--expected-failures",
            file.to_str().unwrap(),
        ],
        &Fixture::bug("unknown-method-result").command(),
    );
    assert_exit(&run, 0);
    let c = find(&report, "jsonrpc.unknown-method");
    assert_eq!(c["status"], "FAIL", "{}", run.context());
    assert_eq!(c["expectedFailure"], true, "{}", run.context());
    let target = &report["targets"][0];
    assert_eq!(target["summary"]["expectedFail"], 1);
    assert_eq!(target["summary"]["fail"], 0);
    assert_eq!(target["failed"], false);
    assert_eq!(target["staleExpectedFailures"], json!([]));
    assert_eq!(report["failed"], false);
}

#[test]
fn a_listed_check_that_passes_is_stale_and_fails_the_run() {
    let dir = TempDir::new("stale");
    let file = dir.write(
        "expected-failures.txt",
        "jsonrpc.unknown-method\nlifecycle.ping  fixed since\n",
    );
    let (run, report) = check(
        &[
            "--only",
            "jsonrpc.unknown-method",
            "--only",
            "lifecycle.ping",
            "--expected-failures",
            file.to_str().unwrap(),
        ],
        &Fixture::bug("unknown-method-result").command(),
    );
    assert_exit(&run, 1);
    assert_status(&run, &report, &["lifecycle.ping"], "PASS");
    assert_eq!(
        find(&report, "jsonrpc.unknown-method")["expectedFailure"],
        true
    );
    let target = &report["targets"][0];
    assert_eq!(target["staleExpectedFailures"], json!(["lifecycle.ping"]));
    assert_eq!(target["summary"]["fail"], 0);
    assert_eq!(target["failed"], true);
    assert_eq!(report["failed"], true);
}

/// An INFO check cannot fail: a baseline that lists one (say, after the check's level was
/// lowered to what its text supports) is stale too, so the entry is removed.
#[test]
fn a_listed_info_check_is_stale() {
    let dir = TempDir::new("stale-info");
    let file = dir.write(
        "expected-failures.txt",
        "framing.eof-no-data-loss  drops pending\n",
    );
    let (run, report) = check(
        &[
            "--only",
            "framing.eof-no-data-loss",
            "--expected-failures",
            file.to_str().unwrap(),
        ],
        &Fixture::bug("drop-pending-at-eof").command(),
    );
    assert_exit(&run, 1);
    assert_status(&run, &report, &["framing.eof-no-data-loss"], "INFO");
    assert_eq!(
        report["targets"][0]["staleExpectedFailures"],
        json!(["framing.eof-no-data-loss"])
    );
}

/// `NAME:check-id` applies to the target of that name only (a command line's name is its
/// program, its package or script, or the name the server gives itself).
#[test]
fn expected_failures_per_target() {
    let dir = TempDir::new("per-target");
    let other = dir.write("other.txt", "some-other-server:jsonrpc.unknown-method\n");
    let this = dir.write("this.txt", "python3:jsonrpc.unknown-method\n");
    for (file, code, expected) in [(other, 1, false), (this, 0, true)] {
        let (run, report) = check(
            &[
                "--only",
                "jsonrpc.unknown-method",
                "--expected-failures",
                file.to_str().unwrap(),
            ],
            &Fixture::bug("unknown-method-result").command(),
        );
        assert_exit(&run, code);
        assert_eq!(
            find(&report, "jsonrpc.unknown-method")["expectedFailure"],
            expected,
            "{}",
            run.context()
        );
    }
}

// ---------------------------------------------------------------------------------------------
// --scenario-file
// ---------------------------------------------------------------------------------------------

const USER_SCENARIOS: &str = r#"{"scenarios": [
  {
    "id": "custom.unknown-method",
    "level": "MUST",
    "description": "an unknown method gets -32601",
    "spec": "JSON-RPC 2.0 §5.1",
    "steps": [
      {"send": {"jsonrpc": "2.0", "id": 1, "method": "no/such/method"}},
      {"expect": {"id": 1, "error": {"code": -32601, "message": "$string"}, "result": "$absent"}},
      {"still_serving": true}
    ]
  },
  {
    "id": "custom.wrong-code",
    "level": "MUST",
    "description": "an unknown method gets -32000 (wrong on purpose)",
    "spec": "nowhere",
    "steps": [
      {"send": {"jsonrpc": "2.0", "id": 7, "method": "no/such/method"}},
      {"expect": {"id": 7, "error": {"code": -32000}}}
    ]
  }
]}"#;

#[test]
fn a_user_scenario_passes_against_our_server() {
    echo_server();
    let dir = TempDir::new("scenario-pass");
    let file = dir.write("scenarios.json", USER_SCENARIOS);
    let file = file.to_str().unwrap();
    let list = run_ok(&["--list", "--scenario-file", file]);
    assert!(list.stdout.contains("custom.unknown-method"));
    assert!(list.stdout.contains("custom.wrong-code"));

    let (run, report) = check(
        &["--scenario-file", file, "--only", "custom.unknown-method"],
        &[],
    );
    assert_exit(&run, 0);
    assert_eq!(checks(&report, 0).len(), 1, "{}", run.context());
    assert_status(&run, &report, &["custom.unknown-method"], "PASS");
    assert_eq!(find(&report, "custom.unknown-method")["area"], "custom");
}

#[test]
fn a_user_scenario_with_a_wrong_expectation_fails() {
    echo_server();
    let dir = TempDir::new("scenario-fail");
    let file = dir.write("scenarios.json", USER_SCENARIOS);
    let (run, report) = check(
        &[
            "--scenario-file",
            file.to_str().unwrap(),
            "--only",
            "custom.wrong-code",
        ],
        &[],
    );
    assert_caught(&run, &report, &["custom.wrong-code"]);
    let c = find(&report, "custom.wrong-code");
    let expected = c["expected"].as_str().unwrap();
    let actual = c["actual"].as_str().unwrap();
    assert!(expected.contains("step 2"), "{expected}");
    assert!(expected.contains("-32000"), "{expected}");
    assert!(actual.contains("-32601"), "{actual}");
    assert!(
        actual.contains("$.error.code"),
        "names the mismatch: {actual}"
    );
}

// ---------------------------------------------------------------------------------------------
// --config
// ---------------------------------------------------------------------------------------------

#[test]
fn a_host_config_tests_every_stdio_server_and_skips_http_sse_ones() {
    let dir = TempDir::new("config");
    let fixture = Fixture::correct().command();
    let config = json!({"mcpServers": {
        "echo": {"command": echo_server().display().to_string(), "args": []},
        "fixture": {"type": "stdio", "command": fixture[0], "args": fixture[1..],
                    "env": {"FIXTURE_SETTING": "1"}},
        "remote": {"type": "sse", "url": "https://example.invalid/sse"}
    }});
    let path = dir.write("claude_desktop_config.json", &config.to_string());
    let path = path.to_str().unwrap();
    let (run, report) = check(&["--config", path, "--only", "lifecycle"], &[]);
    assert_exit(&run, 0);
    let targets = report["targets"].as_array().unwrap();
    let names: BTreeSet<&str> = targets
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        BTreeSet::from(["echo", "fixture", "remote"]),
        "{}",
        run.context()
    );
    for t in targets {
        if t["name"] == "remote" {
            assert!(t["skipped"].is_string(), "{}", run.context());
            assert_eq!(t["checks"], json!([]));
            assert_eq!(t["failed"], false);
        } else {
            assert_eq!(t["skipped"], Value::Null, "{}", run.context());
            assert_eq!(t["startError"], Value::Null, "{}", run.context());
            assert_eq!(t["failed"], false, "{}", run.context());
            let ids: Vec<&str> = t["checks"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["id"].as_str().unwrap())
                .collect();
            assert!(ids.contains(&"lifecycle.ping"), "{}", run.context());
        }
    }
    assert_clean(&run, &report);
    assert_eq!(report["failed"], false);

    // --server picks one.
    let (run, report) = check(
        &[
            "--config",
            path,
            "--server",
            "fixture",
            "--only",
            "lifecycle.ping",
        ],
        &[],
    );
    assert_exit(&run, 0);
    assert_eq!(report["targets"].as_array().unwrap().len(), 1);
    assert_eq!(report["targets"][0]["name"], "fixture");
    assert_eq!(
        report["targets"][0]["serverInfo"]["name"],
        "broken-server",
        "{}",
        describe(&report)
    );
}

// ---------------------------------------------------------------------------------------------
// Progress off a terminal
// ---------------------------------------------------------------------------------------------

/// With stderr not a terminal (a CI log), one line per finished check, `[n/total] id STATUS
/// secs`, every check once; `--quiet` silences it.
#[test]
fn progress_is_one_line_per_check_off_a_terminal() {
    echo_server();
    let loud = run(&["--format", "json"]);
    assert_exit(&loud, 0);
    let report = loud.json();
    let total = checks(&report, 0).len();
    let lines: Vec<&str> = loud.stderr.lines().collect();
    assert_eq!(lines.len(), total, "{}", loud.stderr);
    let mut seen = BTreeSet::new();
    for (n, line) in lines.iter().enumerate() {
        let (counter, rest) = line.split_once(' ').unwrap();
        assert_eq!(counter, format!("[{}/{total}]", n + 1), "{line}");
        let parts: Vec<&str> = rest.split(' ').collect();
        assert_eq!(parts.len(), 3, "{line}");
        let status = find(&report, parts[0])["status"].as_str().unwrap();
        assert_eq!(parts[1], status, "{line}");
        assert!(parts[2].ends_with('s') && parts[2][..parts[2].len() - 1].parse::<f64>().is_ok());
        assert!(seen.insert(parts[0].to_owned()), "{line} twice");
    }
    let quiet = run(&["--format", "json", "--quiet"]);
    assert_exit(&quiet, 0);
    assert_eq!(quiet.stderr, "");
}
