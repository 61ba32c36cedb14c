//! Replies that arrive but cannot be matched to their requests, and servers that are slow or
//! odd to start: the real `mcp-conformance` binary against the fixture with one such defect
//! each. The check that owns the broken rule fails, once, with the frames; the checks that
//! could not be judged because of it are BLOCKED by it (never a FAIL of their own, never a
//! silent SKIP); a lenient match (an id equal by value) lets the run go on. The number of
//! server processes each run starts is asserted too: it is what makes a run against a server
//! started through `npx` or `uvx` take seconds, not minutes.
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::BTreeMap;

use common::{assert_clean, assert_exit, check, checks, find, with_status, Fixture, TempDir};
use serde_json::Value;

/// Every check's status, by id.
fn statuses(report: &Value) -> BTreeMap<String, String> {
    checks(report, 0)
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_owned(),
                c["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn starts(report: &Value) -> u64 {
    report["targets"][0]["starts"]["count"].as_u64().unwrap()
}

/// The run failed because of `owner` alone: exit 1, `owner` the only FAIL, and every other
/// check but `era.detect` BLOCKED by it.
fn assert_root_cause(run: &common::Run, report: &Value, owner: &str) {
    assert_exit(run, 1);
    assert_eq!(with_status(report, "FAIL"), [owner], "{}", run.context());
    assert_all_blocked_by(report, owner, &run.context());
}

/// Every check but `owner` and `era.detect` is BLOCKED by `owner`, and says why.
fn assert_all_blocked_by(report: &Value, owner: &str, context: &str) {
    for c in checks(report, 0) {
        let id = c["id"].as_str().unwrap();
        if id == owner || id == "era.detect" || c["status"] == "N/A" {
            continue;
        }
        assert_eq!(c["status"], "BLOCKED", "{id}\n{context}");
        assert_eq!(c["blockedBy"], owner, "{id}\n{context}");
        assert!(c["detail"].as_str().unwrap().contains(owner), "{id}: {c}");
    }
}

#[test]
fn ids_written_back_as_floats_are_matched_by_value_and_fail_only_ids_echoed() {
    let (run, report) = check(&["--jobs", "4"], &Fixture::bug("float-ids").command());
    assert_exit(&run, 1);
    assert_eq!(
        with_status(&report, "FAIL"),
        ["jsonrpc.ids-echoed"],
        "{}",
        run.context()
    );
    assert!(
        with_status(&report, "BLOCKED").is_empty(),
        "{}",
        run.context()
    );
    let findings = &report["targets"][0]["findings"];
    assert_eq!(findings.as_array().unwrap().len(), 1, "{findings}");
    assert_eq!(findings[0]["kind"], "id-form");
    assert_eq!(findings[0]["owner"], "jsonrpc.ids-echoed");
    assert!(findings[0]["count"].as_u64().unwrap() > 1, "{findings}");
    assert_eq!(
        find(&report, "jsonrpc.ids-echoed")["actual"],
        "id 0.0: the server reads ids as floating-point numbers"
    );
    // Everything else was judged as for the correct server, in as many processes.
    assert_eq!(starts(&report), 10, "{}", run.context());
    assert_eq!(find(&report, "lifecycle.ping")["status"], "PASS");
    assert_eq!(
        find(&report, "jsonrpc.concurrent-requests")["status"],
        "PASS"
    );
}

/// String ids answered under other ids ("abc" -> a CRC-32): each check whose request had a
/// string id is BLOCKED by `jsonrpc.ids-echoed` as soon as its reply came under an unknown id,
/// without waiting out `--timeout`, and the shared session goes on (it still answers).
#[test]
fn replies_under_ids_no_request_had_block_the_checks_that_sent_them() {
    let (run, report) = check(&[], &Fixture::bug("string-ids-to-numbers").command());
    let owner = "jsonrpc.ids-echoed";
    assert_exit(&run, 1);
    assert_eq!(with_status(&report, "FAIL"), [owner], "{}", run.context());
    let blocked = [
        "framing.byte-at-a-time",
        "framing.several-in-one-write",
        "jsonrpc.batch-2025-03-26",
    ];
    for id in blocked {
        let c = find(&report, id);
        assert_eq!(c["status"], "BLOCKED", "{id}\n{}", run.context());
        assert_eq!(c["blockedBy"], owner, "{id}\n{}", run.context());
        assert!(
            c["detail"]
                .as_str()
                .unwrap()
                .contains("replies came under ids no request had"),
            "{id}: {c}"
        );
        assert_eq!(c["brokeSession"], Value::Null, "{id}: {c}");
    }
    let findings = report["targets"][0]["findings"].as_array().unwrap();
    assert!(
        findings
            .iter()
            .any(|f| f["kind"] == "unknown-id" && f["owner"] == owner),
        "{findings:?}"
    );
    // The integer-id checks are judged as for the correct server, in as many processes.
    for id in [
        "lifecycle.ping",
        "jsonrpc.concurrent-requests",
        "tools.list-shape",
    ] {
        assert_eq!(
            find(&report, id)["status"],
            "PASS",
            "{id}\n{}",
            run.context()
        );
    }
    assert_eq!(starts(&report), 10, "{}", run.context());
}

#[test]
fn replies_spread_over_lines_block_every_check_but_their_owner() {
    let (run, report) = check(&[], &Fixture::bug("pretty-print").command());
    let owner = "framing.no-embedded-newlines";
    assert_root_cause(&run, &report, owner);
    // Every check but the owner and era.detect, and the http.* ones (N/A over stdio).
    let summary = &report["targets"][0]["summary"];
    assert_eq!(
        summary["blocked"].as_u64().unwrap() + summary["notApplicable"].as_u64().unwrap(),
        checks(&report, 0).len() as u64 - 2
    );
    let fail = find(&report, owner);
    assert_eq!(
        fail["expected"],
        "each message on one line (no embedded newlines)"
    );
    // The frames that show it: the reply's lines, one by one.
    let lines: Vec<&str> = fail["transcript"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["direction"] == "receive")
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert!(lines.contains(&"{") && lines.contains(&"}"), "{lines:?}");
    // Nothing was started beyond the two start-up processes.
    assert_eq!(starts(&report), 2, "{}", run.context());
    assert_eq!(
        report["targets"][0]["findings"][0]["kind"],
        "spread-over-lines"
    );
}

#[test]
fn newline_delimited_replies_to_content_length_requests_are_named() {
    let (run, report) = check(
        &["--framing", "content-length"],
        &Fixture::bug("ndjson-replies").content_length().command(),
    );
    let owner = "framing.replies-in-kind";
    assert_root_cause(&run, &report, owner);
    let actual = find(&report, owner)["actual"].as_str().unwrap();
    assert!(
        actual.contains("the server writes newline-delimited JSON, not Content-Length frames")
            && actual.contains("run without --framing content-length"),
        "{actual}"
    );
    assert_eq!(starts(&report), 2, "{}", run.context());
}

#[test]
fn content_length_replies_to_newline_delimited_requests_are_named() {
    let (run, report) = check(&[], &Fixture::bug("content-length-replies").command());
    let owner = "framing.replies-in-kind";
    assert_root_cause(&run, &report, owner);
    let actual = find(&report, owner)["actual"].as_str().unwrap();
    assert!(
        actual.contains("run with --framing content-length"),
        "{actual}"
    );
}

#[test]
fn replies_without_ids_block_every_check_but_their_owner() {
    let (run, report) = check(&[], &Fixture::bug("no-id").command());
    let owner = "jsonrpc.responses-well-formed";
    assert_root_cause(&run, &report, owner);
    assert!(find(&report, owner)["actual"]
        .as_str()
        .unwrap()
        .starts_with("waiting for the reply to id 1, a reply without an id came"));
    assert_eq!(starts(&report), 2, "{}", run.context());
}

/// A server that answers only the first of several messages it reads at once: the shared
/// session times out, is replaced, times out again, and the checks left that would wait for a
/// reply (in the session or in processes of their own) are blocked by the first check that
/// failed on a timeout instead of each waiting out its timeout. Several requests in one write,
/// which runs early in the session, names the defect.
#[test]
fn a_server_that_loses_requests_written_together_is_named_without_waiting_out_every_check() {
    let (run, report) = check(&["--timeout", "1"], &Fixture::bug("lose-burst").command());
    assert_exit(&run, 1);
    assert_eq!(
        find(&report, "framing.several-in-one-write")["status"],
        "FAIL",
        "{}",
        run.context()
    );
    let blocked = with_status(&report, "BLOCKED");
    assert!(!blocked.is_empty(), "{}", run.context());
    // Blocked by the first check that broke the session (in run order, which is not the
    // report's): one that broke it, and the same for all.
    let broke: Vec<&Value> = checks(&report, 0)
        .iter()
        .filter(|c| c["brokeSession"].is_string())
        .map(|c| &c["id"])
        .collect();
    let first = &find(&report, blocked[0])["blockedBy"];
    assert!(
        broke.contains(&first),
        "{first} in {broke:?}\n{}",
        run.context()
    );
    for id in blocked {
        let c = find(&report, id);
        assert_eq!(&c["blockedBy"], first, "{id}\n{}", run.context());
        let detail = c["detail"].as_str().unwrap();
        assert!(
            detail.contains("stopped answering twice")
                && detail.contains(&format!("first in {}", first.as_str().unwrap())),
            "{detail}"
        );
    }
}

/// Three seconds before it reads anything, in every process: every start gets the start
/// budget, so nothing fails, with one check at a time or four.
#[test]
fn a_server_that_takes_three_seconds_to_start_passes_with_any_jobs() {
    let slow = Fixture::correct().arg("--start-delay").arg("3").command();
    let (one, one_report) = check(&["--jobs", "1", "--timeout", "1"], &slow);
    let (four, four_report) = check(&["--jobs", "4", "--timeout", "1"], &slow);
    for (run, report) in [(&one, &one_report), (&four, &four_report)] {
        assert_exit(run, 0);
        assert_clean(run, report);
        let starts = &report["targets"][0]["starts"];
        assert_eq!(starts["answered"], starts["count"], "{}", run.context());
        assert!(starts["firstMs"].as_f64().unwrap() >= 3000.0, "{starts}");
    }
    assert_eq!(statuses(&one_report), statuses(&four_report));
}

/// Processes started after the first one answered initialize answer nothing: the first such
/// start waits out the start budget, then the checks that need a process of their own are
/// BLOCKED by lifecycle.initialize-result (which fails: every start MUST answer) without
/// starting more; the shared session's checks are judged.
#[test]
fn a_server_that_answers_only_its_first_process_blocks_the_checks_that_need_another() {
    let dir = TempDir::new("first-process-only");
    let marker = dir.path().join("answered");
    let (run, report) = check(
        // One check at a time: the third start is the first that finds the silence.
        &["--start-timeout", "2", "--timeout", "1", "--jobs", "1"],
        &Fixture::correct()
            .arg("--first-process-only")
            .arg(marker.to_str().unwrap())
            .command(),
    );
    assert_exit(&run, 1);
    let owner = "lifecycle.initialize-result";
    assert_eq!(with_status(&report, "FAIL"), [owner], "{}", run.context());
    assert!(find(&report, owner)["actual"]
        .as_str()
        .unwrap()
        .contains("answered nothing (id 1) within 2s (--start-timeout), though an earlier start"));
    for id in [
        "lifecycle.version-negotiation",
        "jsonrpc.parse-error-keeps-serving",
        "framing.stdout-only-frames",
    ] {
        assert_eq!(
            find(&report, id)["status"],
            "BLOCKED",
            "{id}\n{}",
            run.context()
        );
        assert_eq!(find(&report, id)["blockedBy"], owner);
    }
    for id in ["lifecycle.ping", "tools.list-shape", "framing.utf8"] {
        assert_eq!(
            find(&report, id)["status"],
            "PASS",
            "{id}\n{}",
            run.context()
        );
    }
    // The two start-up processes and the one that never answered.
    assert_eq!(starts(&report), 3, "{}", run.context());
    assert_eq!(report["targets"][0]["starts"]["answered"], 2);
}

/// JSON-RPC asks for no order: a batch answered after the ping sent behind it still passes
/// (the check waits for it; nothing is concluded from the ping's reply alone).
#[test]
fn a_batch_answered_after_a_later_request_passes() {
    let (run, report) = check(
        &["--only", "jsonrpc.batch-2025-03-26"],
        &Fixture::correct().arg("--late-batch-replies").command(),
    );
    assert_exit(&run, 0);
    assert_eq!(
        find(&report, "jsonrpc.batch-2025-03-26")["detail"],
        "one array with the two responses"
    );
}

/// The same verdict for every check with one check at a time and with four.
#[test]
fn jobs_do_not_change_verdicts() {
    for fixture in [
        Fixture::correct(),
        Fixture::correct().era("dual"),
        Fixture::bug("crash-after-n"),
    ] {
        let (one, one_report) = check(&["--jobs", "1"], &fixture.command());
        let (four, four_report) = check(&["--jobs", "4"], &fixture.command());
        assert_eq!(
            statuses(&one_report),
            statuses(&four_report),
            "{}\n{}",
            one.context(),
            four.context()
        );
    }
}
