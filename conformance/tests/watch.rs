//! The checks judged on every message the server sends during the run (log messages,
//! progress, server requests) and the client capabilities the harness declares, against the
//! feature fixture (`tests/fixtures/feature_server.py`): the harness binary runs the fixture as
//! a real child process over stdio. Without a bug every check passes in both eras; each
//! `--bug` fails exactly its own check.

mod common;

use common::{check, find, status};
use serde_json::Value;

/// The checks of this family, in report order.
const FAMILY: [&str; 8] = [
    "logging.message-shape",
    "logging.message-declared",
    "logging.message-level",
    "modern.logging-message-requested",
    "progress.token-known",
    "progress.increasing",
    "progress.stops-after-response",
    "capabilities.negotiated-requests",
];

/// The feature fixture's command line.
fn feature(era: &str, bug: Option<&str>) -> Vec<String> {
    common::feature_server(bug, era)
}

/// A run of the family's checks (and `extra` options) against `target`: the report. The
/// checks that call a read-only tool in each era run too (the fixture sends progress for
/// them), and era.detect shows the start-up's requests.
fn run_family(extra: &[&str], target: &[String]) -> Value {
    let mut options = Vec::new();
    let callers = [
        "tools.call-result-shape",
        "modern.no-server-requests",
        "era.detect",
    ];
    for id in FAMILY.iter().chain(&callers) {
        options.extend(["--only", id]);
    }
    options.extend(extra);
    let (run, report) = check(&options, target);
    assert!(
        !report["targets"][0]["checks"]
            .as_array()
            .is_none_or(Vec::is_empty),
        "{}",
        run.context()
    );
    report
}

fn text(report: &Value, id: &str) -> String {
    let c = find(report, id);
    format!(
        "{} {}",
        c["detail"].as_str().unwrap_or(""),
        c["actual"].as_str().unwrap_or("")
    )
}

/// The messages the harness sent in check `id`.
fn sent(report: &Value, id: &str) -> Vec<Value> {
    find(report, id)["transcript"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["direction"] == "send")
        .filter_map(|e| serde_json::from_str(e["text"].as_str().unwrap_or("")).ok())
        .collect()
}

fn statuses(report: &Value) -> Vec<(&'static str, String)> {
    FAMILY
        .iter()
        .map(|id| (*id, status(report, id).to_owned()))
        .collect()
}

/// What a correct server gets in each era: every applicable check passes (the level check is
/// INFO), and the ones of the other era are skipped. With `--client-capabilities sampling`
/// the fixture sends sampling/createMessage in legacy tool calls, so every check has evidence.
#[test]
fn a_correct_server_passes_in_both_eras() {
    for (era, skipped) in [
        ("dual", vec![]),
        ("legacy", vec!["modern.logging-message-requested"]),
        (
            "modern",
            vec!["logging.message-level", "capabilities.negotiated-requests"],
        ),
    ] {
        let report = run_family(&["--client-capabilities", "sampling"], &feature(era, None));
        for (id, got) in statuses(&report) {
            let want = if skipped.contains(&id) {
                "SKIP"
            } else if id == "logging.message-level" {
                "INFO"
            } else {
                "PASS"
            };
            assert_eq!(got, want, "{id} in era {era}: {}", text(&report, id));
        }
        // Each verdict rests on messages seen: the fixture sends progress for every tools/call
        // and log messages where they were asked for.
        assert!(
            text(&report, "progress.token-known").contains("notifications/progress in the run"),
            "{}",
            text(&report, "progress.token-known")
        );
        assert!(text(&report, "logging.message-shape").contains("notifications/message in the run"));
        if era != "modern" {
            assert!(text(&report, "capabilities.negotiated-requests")
                .contains("requests (in legacy sessions) in the run, none for a client"));
            assert!(text(&report, "logging.message-level")
                .contains("notifications/message after logging/setLevel, none below"));
        }
    }
}

/// Each bug fails its own check, with the offending frame in its transcript, and no other
/// check of the family fails.
#[test]
fn each_bug_fails_its_own_check_alone() {
    let bugs = [
        (
            "log-bad-level",
            "logging.message-shape",
            "FAIL",
            "\"level\":\"verbose\"",
        ),
        (
            "log-undeclared",
            "logging.message-declared",
            "FAIL",
            "\"data\":\"undeclared\"",
        ),
        (
            "log-below-level",
            "logging.message-level",
            "INFO",
            "\"level\":\"debug\"",
        ),
        (
            "log-unrequested",
            "modern.logging-message-requested",
            "FAIL",
            "\"method\":\"notifications/message\"",
        ),
        (
            "progress-unknown-token",
            "progress.token-known",
            "FAIL",
            "-not-sent",
        ),
        (
            "progress-not-increasing",
            "progress.increasing",
            "FAIL",
            "\"progress\":1",
        ),
        (
            "progress-after-response",
            "progress.stops-after-response",
            "FAIL",
            "\"message\":\"done\"",
        ),
        (
            "request-undeclared-sampling",
            "capabilities.negotiated-requests",
            "FAIL",
            "sampling/createMessage",
        ),
    ];
    for (bug, owner, want, frame) in bugs {
        let report = run_family(&[], &feature("dual", Some(bug)));
        let c = find(&report, owner);
        assert_eq!(
            c["status"],
            want,
            "{bug}: {owner}: {}",
            text(&report, owner)
        );
        if want == "INFO" {
            // An INFO check reports what it saw: the rule's words, and the message below it.
            assert_eq!(
                c["expected"], "no notifications/message below the level logging/setLevel set",
                "{bug}"
            );
        }
        let shown = c["transcript"].as_array().into_iter().flatten().any(|e| {
            e["direction"] == "receive" && e["text"].as_str().unwrap_or("").contains(frame)
        });
        assert!(
            shown,
            "{bug}: the frame with {frame} is in {owner}'s transcript"
        );
        for (id, got) in statuses(&report) {
            if id != owner {
                assert!(
                    matches!(got.as_str(), "PASS" | "INFO" | "SKIP"),
                    "{bug}: {id} is {got}: {}",
                    text(&report, id)
                );
            }
        }
        // Where the bug leaves the check's evidence whole, it passes.
        let passes: &[&str] = match bug {
            "log-undeclared" => &["logging.message-shape", "progress.token-known"],
            _ => &[
                "logging.message-shape",
                "progress.token-known",
                "progress.increasing",
            ],
        };
        for id in passes.iter().filter(|id| **id != owner) {
            assert_eq!(
                status(&report, id),
                "PASS",
                "{bug}: {id}: {}",
                text(&report, id)
            );
        }
    }
}

/// `--client-capabilities sampling`: declared in `initialize` and in 2026-07-28 `_meta`, and
/// the server's sampling/createMessage gets the fixed reply; a server that asks for it breaks
/// no rule.
#[test]
fn declared_client_capabilities_are_announced_and_answered() {
    let report = run_family(
        &["--client-capabilities", "sampling"],
        &feature("dual", Some("request-undeclared-sampling")),
    );
    let id = "capabilities.negotiated-requests";
    assert_eq!(status(&report, id), "PASS", "{}", text(&report, id));
    let startup = sent(&report, "era.detect");
    let declared = serde_json::json!({"sampling": {}});
    let init = startup.iter().find(|m| m["method"] == "initialize");
    let init = init.unwrap_or_else(|| panic!("no initialize sent: {startup:?}"));
    assert_eq!(init["params"]["capabilities"], declared);
    let discover = startup.iter().find(|m| m["method"] == "server/discover");
    let discover = discover.unwrap_or_else(|| panic!("no server/discover sent: {startup:?}"));
    assert_eq!(
        discover["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"],
        declared
    );
    let replies = sent(&report, id);
    let reply = replies.iter().find(|m| m["id"] == "sampling-1");
    let reply = reply.unwrap_or_else(|| panic!("no reply to sampling-1: {replies:?}"));
    assert_eq!(
        reply["result"],
        serde_json::json!({"role": "assistant", "model": "mcp-conformance",
            "content": {"type": "text", "text": "mcp-conformance"}, "stopReason": "endTurn"})
    );
    // Every tools/call carried a progress token of its own.
    let calls = sent(&report, "tools.call-result-shape");
    let tokens: Vec<&Value> = calls
        .iter()
        .filter(|m| m["method"] == "tools/call")
        .map(|m| &m["params"]["_meta"]["progressToken"])
        .collect();
    assert!(
        !tokens.is_empty() && tokens.iter().all(|t| t.is_string()),
        "{tokens:?}"
    );
}

/// Without `--client-capabilities` the harness declares none, and the server's request gets
/// -32601 (and is judged above).
#[test]
fn undeclared_requests_get_method_not_found() {
    let report = run_family(&[], &feature("legacy", Some("request-undeclared-sampling")));
    let replies = sent(&report, "capabilities.negotiated-requests");
    let reply = replies.iter().find(|m| m["id"] == "sampling-1");
    let reply = reply.unwrap_or_else(|| panic!("no reply to sampling-1: {replies:?}"));
    assert_eq!(reply["error"]["code"], -32601);
    let startup = sent(&report, "era.detect");
    let init = startup.iter().find(|m| m["method"] == "initialize");
    assert_eq!(
        init.map(|m| &m["params"]["capabilities"]),
        Some(&serde_json::json!({}))
    );
}

/// A server that sends nothing of a kind leaves its check nothing to judge: INFO saying so,
/// never a PASS.
#[test]
fn nothing_seen_is_reported_not_passed() {
    let report = run_family(&[], &feature("legacy", None));
    let id = "capabilities.negotiated-requests";
    assert_eq!(status(&report, id), "INFO", "{}", text(&report, id));
    assert!(
        text(&report, id).contains("the server sent no requests (in legacy sessions) in the run"),
        "{}",
        text(&report, id)
    );
    // Selected alone, the progress checks see no tool call, hence no progress.
    let (run, alone) = check(&["--only", "progress.increasing"], &feature("legacy", None));
    assert_eq!(
        status(&alone, "progress.increasing"),
        "INFO",
        "{}",
        run.context()
    );
}
