//! The checks judged on every message the server sends during the run (log messages,
//! progress, server requests) and the client capabilities the harness declares, against the
//! feature fixture (`tests/fixtures/feature_server.py`): the harness binary runs the fixture as
//! a real child process over stdio. Without a bug every check passes in both eras; each
//! `--bug` fails exactly its own check.

mod common;

use std::path::Path;

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
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/feature_server.py");
    let mut cmd = vec![
        "python3".to_owned(),
        "-S".to_owned(),
        script.display().to_string(),
        "--era".to_owned(),
        era.to_owned(),
    ];
    if let Some(bug) = bug {
        cmd.extend(["--bug".to_owned(), bug.to_owned()]);
    }
    cmd
}

/// A run of the family's checks (and `extra` options) against `target`: the report.
fn run_family(extra: &[&str], target: &[String]) -> Value {
    let mut options = Vec::new();
    for id in FAMILY {
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

fn statuses(report: &Value) -> Vec<(&'static str, String)> {
    FAMILY
        .iter()
        .map(|id| (*id, status(report, id).to_owned()))
        .collect()
}

/// What a correct server gets in each era: every applicable check passes (the level check is
/// INFO), and the ones of the other era are skipped.
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
        let report = run_family(&[], &feature(era, None));
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
                "capabilities.negotiated-requests",
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

/// `--client-capabilities sampling`: declared in `initialize`, and the server's
/// sampling/createMessage gets the fixed reply; a server that asks for it breaks no rule.
#[test]
fn declared_client_capabilities_are_announced_and_answered() {
    let report = run_family(
        &["--client-capabilities", "sampling"],
        &feature("legacy", Some("request-undeclared-sampling")),
    );
    assert_eq!(
        status(&report, "capabilities.negotiated-requests"),
        "PASS",
        "{}",
        text(&report, "capabilities.negotiated-requests")
    );
    // The check with a process of its own shows its handshake and the reply to the request.
    let c = find(&report, "progress.token-known");
    let sent: Vec<Value> = c["transcript"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["direction"] == "send")
        .filter_map(|e| serde_json::from_str(e["text"].as_str().unwrap_or("")).ok())
        .collect();
    let init = sent
        .iter()
        .find(|m| m["method"] == "initialize")
        .unwrap_or_else(|| panic!("no initialize sent: {sent:?}"));
    assert_eq!(
        init["params"]["capabilities"],
        serde_json::json!({"sampling": {}})
    );
    let reply = sent
        .iter()
        .find(|m| m["id"] == "sampling-1")
        .unwrap_or_else(|| panic!("no reply to sampling-1: {sent:?}"));
    assert_eq!(reply["result"]["model"], "mcp-conformance");
    assert_eq!(reply["result"]["role"], "assistant");
    assert_eq!(reply["result"]["content"]["type"], "text");
    // Every tools/call carried a progress token of its own.
    let tokens: Vec<&Value> = sent
        .iter()
        .filter(|m| m["method"] == "tools/call")
        .map(|m| &m["params"]["_meta"]["progressToken"])
        .collect();
    assert!(
        !tokens.is_empty() && tokens.iter().all(|t| t.is_string()),
        "{tokens:?}"
    );
}

/// Without `--client-capabilities` the server's request gets -32601 (and is judged above).
#[test]
fn undeclared_requests_get_method_not_found() {
    let report = run_family(&[], &feature("legacy", Some("request-undeclared-sampling")));
    let c = find(&report, "progress.token-known");
    let reply = c["transcript"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["direction"] == "send")
        .filter_map(|e| serde_json::from_str::<Value>(e["text"].as_str().unwrap_or("")).ok())
        .find(|m| m["id"] == "sampling-1")
        .expect("a reply to sampling-1");
    assert_eq!(reply["error"]["code"], -32601);
    let init_caps = c["transcript"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| serde_json::from_str::<Value>(e["text"].as_str().unwrap_or("")).ok())
        .find(|m| m["method"] == "initialize")
        .map(|m| m["params"]["capabilities"].clone());
    assert_eq!(init_caps, Some(serde_json::json!({})));
}
