//! The harness over Streamable HTTP: against an in-process fixture server, correct or with one
//! injected defect (each test asserts that exactly the `http.*` check named for it fails, with
//! its verdict), and against the real `server-everything` in `streamableHttp` mode when the
//! interop suite's node_modules are installed.
#![allow(clippy::unwrap_used)]

mod common;
mod http_fixture;

use common::{check, describe, status, with_status};
use http_fixture::{start, start_modern_only, Bug};
use serde_json::Value;

/// The `http.*` checks against the fixture (`bug` injected), JSON report.
fn run_http(bug: Option<Bug>, extra: &[&str]) -> (common::Run, Value) {
    let url = start(bug);
    let mut options = vec!["--url", url.as_str(), "--only", "http"];
    options.extend_from_slice(extra);
    check(&options, &[])
}

/// The http.* checks that are neither PASS nor INFO nor the expected SKIP.
fn not_passing(report: &Value) -> Vec<String> {
    common::checks(report, 0)
        .iter()
        .filter(|c| !matches!(c["status"].as_str(), Some("PASS" | "INFO")))
        .filter(|c| c["id"] != "http.modern-get-delete-405")
        // SSE event ids are optional (MAY): a server that sends none has nothing to judge.
        .filter(|c| !(c["id"] == "http.sse-event-ids-unique" && c["status"] == "SKIP"))
        .map(|c| format!("{} {}", c["id"], c["status"]))
        .collect()
}

#[test]
fn a_correct_server_passes_every_http_check() {
    let (run, report) = run_http(None, &[]);
    assert_eq!(run.code, 0, "{}\n{}", describe(&report), run.stderr);
    assert!(not_passing(&report).is_empty(), "{}", describe(&report));
    assert_eq!(
        report["targets"][0]["eras"],
        serde_json::json!(["legacy", "modern"])
    );
    // A dual-era server: GET and DELETE keep their legacy meaning.
    assert_eq!(status(&report, "http.modern-get-delete-405"), "SKIP");
    assert_eq!(status(&report, "http.origin-forbidden"), "PASS");
    assert_eq!(status(&report, "http.session-delete"), "PASS");
    // The fixture offers a GET stream, with event ids on every stream: judged, not skipped.
    for id in [
        "http.origin-forbidden-get-delete",
        "http.get-stream-no-response",
        "http.sse-event-ids-unique",
        "http.modern-unsupported-version-400",
        "http.modern-unknown-method-404",
    ] {
        assert_eq!(status(&report, id), "PASS", "{id}: {}", describe(&report));
    }
}

#[test]
fn a_modern_only_server_passes_its_http_checks() {
    let url = start_modern_only();
    let (run, report) = check(&["--url", url.as_str(), "--only", "http"], &[]);
    assert_eq!(run.code, 0, "{}\n{}", describe(&report), run.stderr);
    assert_eq!(report["targets"][0]["eras"], serde_json::json!(["modern"]));
    for id in [
        "http.modern-get-delete-405",
        "http.modern-header-missing",
        "http.modern-header-mismatch",
        "http.modern-unsupported-version-400",
        "http.modern-unknown-method-404",
        "http.origin-forbidden",
        "http.origin-forbidden-get-delete",
    ] {
        assert_eq!(status(&report, id), "PASS", "{id}: {}", describe(&report));
    }
    // The legacy era's checks need an initialize the server does not answer.
    assert_eq!(status(&report, "http.session-delete"), "SKIP");
}

/// Each defect fails exactly its check, with the verdict its level gives (generic profile).
fn assert_only(bug: Bug, id: &str, verdict: &str) {
    assert_only_skipping(bug, id, verdict, &[]);
}

/// As [`assert_only`]; the checks in `skipped` are SKIPs (they judge what the defect hides).
fn assert_only_skipping(bug: Bug, id: &str, verdict: &str, skipped: &[&str]) {
    let (run, report) = run_http(Some(bug), &[]);
    assert_eq!(
        status(&report, id),
        verdict,
        "{bug:?}: {}",
        describe(&report)
    );
    for s in skipped {
        assert_eq!(status(&report, s), "SKIP", "{bug:?}: {}", describe(&report));
    }
    let others: Vec<String> = not_passing(&report)
        .into_iter()
        .filter(|c| !c.starts_with(&format!("\"{id}\"")))
        .filter(|c| !skipped.iter().any(|s| c.starts_with(&format!("\"{s}\""))))
        .collect();
    assert!(
        others.is_empty(),
        "{bug:?} also broke {others:?}: {}",
        describe(&report)
    );
    let code = if verdict == "FAIL" { 1 } else { 0 };
    assert_eq!(run.code, code, "{bug:?}: {}", run.stderr);
}

#[test]
fn notification_answered_200_fails_notification_202() {
    assert_only(Bug::Notification200, "http.notification-202", "FAIL");
}

#[test]
fn session_not_required_warns() {
    assert_only(Bug::SessionNotRequired, "http.session-required", "WARN");
}

#[test]
fn session_id_with_a_space_fails() {
    assert_only(
        Bug::SessionIdNotAscii,
        "http.session-id-visible-ascii",
        "FAIL",
    );
}

#[test]
fn two_messages_in_one_sse_event_warn() {
    assert_only_skipping(
        Bug::SseTwoInOne,
        "http.sse-response",
        "WARN",
        &["http.sse-ends"],
    );
}

#[test]
fn sse_event_without_data_warns() {
    assert_only_skipping(
        Bug::SseNoData,
        "http.sse-response",
        "WARN",
        &["http.sse-ends"],
    );
}

/// No Origin check at all breaks the rule for every method: both checks FAIL, nothing else.
#[test]
fn no_origin_check_fails() {
    let (run, report) = run_http(Some(Bug::NoOriginCheck), &[]);
    let both = ["http.origin-forbidden", "http.origin-forbidden-get-delete"];
    for id in both {
        assert_eq!(status(&report, id), "FAIL", "{id}: {}", describe(&report));
    }
    let others: Vec<String> = not_passing(&report)
        .into_iter()
        .filter(|c| !both.iter().any(|id| c.starts_with(&format!("\"{id}\""))))
        .collect();
    assert!(others.is_empty(), "{others:?}: {}", describe(&report));
    assert_eq!(run.code, 1);
}

#[test]
fn mirrored_header_mismatch_accepted_fails() {
    assert_only(
        Bug::MirrorMismatchAccepted,
        "http.modern-header-mismatch",
        "FAIL",
    );
}

#[test]
fn origin_checked_on_post_only_fails() {
    assert_only(
        Bug::OriginCheckedOnPostOnly,
        "http.origin-forbidden-get-delete",
        "FAIL",
    );
}

#[test]
fn modern_unsupported_version_answered_200_fails() {
    assert_only(
        Bug::ModernUnsupported200,
        "http.modern-unsupported-version-400",
        "FAIL",
    );
}

#[test]
fn modern_unknown_method_answered_200_fails() {
    assert_only(
        Bug::ModernUnknownMethod200,
        "http.modern-unknown-method-404",
        "FAIL",
    );
}

#[test]
fn a_response_on_the_get_stream_fails() {
    assert_only(
        Bug::GetStreamResponse,
        "http.get-stream-no-response",
        "FAIL",
    );
}

#[test]
fn reused_sse_event_ids_fail() {
    assert_only(Bug::SseIdsReused, "http.sse-event-ids-unique", "FAIL");
}

#[test]
fn ended_session_served_fails() {
    assert_only(Bug::EndedSessionServed, "http.session-delete", "FAIL");
}

/// Each POST is its own exchange: a reply that comes after the replies to later POSTs is the
/// check's that sent it, not the next one's (which would take it for an answer to a
/// notification). The late reply here follows its ping by 50 ms; the harness waits for every
/// POST of a check before the next begins, whatever the delay.
#[test]
fn a_late_reply_stays_in_the_check_that_sent_it() {
    let url = start(Some(Bug::LateBigIds));
    let (_, report) = check(&["--url", url.as_str(), "--only", "jsonrpc"], &[]);
    assert_eq!(
        status(&report, "jsonrpc.unknown-notification"),
        "PASS",
        "{}",
        describe(&report)
    );
    let checks = common::checks(&report, 0);
    let beyond = checks
        .iter()
        .find(|c| c["id"] == "jsonrpc.ids-beyond-2-53")
        .expect("the check ran");
    assert_eq!(beyond["status"], "INFO");
    let late = beyond["transcript"].as_array().unwrap().iter().any(|e| {
        e["direction"] == "receive"
            && e["text"]
                .as_str()
                .is_some_and(|t| t.contains("\"id\":9007199254740993"))
    });
    assert!(
        late,
        "the late reply is the evidence of the check that sent it: {beyond}"
    );
}

/// The reply to `jsonrpc.ids-beyond-2-53`'s request is held until the client POSTs a
/// notification (`jsonrpc.unknown-notification`'s, in the next check), or 2 s: it stays the
/// evidence of the check that sent it, and no later check takes it for its own (no false FAIL
/// of `jsonrpc.unknown-notification`, nor anywhere else). `MCP_RACE_RUNS` repeats it.
#[test]
fn a_delayed_reply_fails_no_check() {
    let runs: usize = std::env::var("MCP_RACE_RUNS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1);
    let mut false_fails = Vec::new();
    for run in 0..runs {
        let url = start(Some(Bug::DelayedReply));
        let (_, report) = check(&["--url", url.as_str()], &[]);
        assert_eq!(status(&report, "jsonrpc.ids-beyond-2-53"), "INFO");
        let failed: Vec<&str> = with_status(&report, "FAIL")
            .into_iter()
            .chain(with_status(&report, "WARN"))
            .filter(|id| !baseline().iter().any(|b| b == id))
            .collect();
        if !failed.is_empty() {
            false_fails.push(format!("run {run}: {failed:?}"));
        }
    }
    eprintln!("{} false FAIL(s) in {runs} run(s)", false_fails.len());
    assert!(false_fails.is_empty(), "{false_fails:#?}");
}

#[test]
fn stdio_only_checks_are_not_applicable_over_http_and_http_checks_over_stdio() {
    let url = start(None);
    let (run, report) = check(&["--url", url.as_str(), "--only", "framing"], &[]);
    assert_eq!(run.code, 0, "{}", describe(&report));
    let na = with_status(&report, "N/A");
    assert!(na.contains(&"framing.byte-at-a-time"), "{na:?}");
    assert_eq!(status(&report, "framing.utf8"), "PASS");
    assert!(report["targets"][0]["summary"]["notApplicable"].as_u64() > Some(5));
    let dir = common::TempDir::new("http-na");
    let junit = dir.path().join("junit.xml");
    let (_, report) = check(
        &[
            "--only",
            "http.origin-forbidden",
            "--junit",
            junit.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(status(&report, "http.origin-forbidden"), "N/A");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains("NOT APPLICABLE: Streamable HTTP only"),
        "{xml}"
    );
}

/// `server-everything`'s entry point: under the interop suite's node_modules (this checkout's,
/// or `MCP_INTEROP_NODE_MODULES`), if installed, and node on PATH.
fn server_everything() -> Option<std::path::PathBuf> {
    let modules = std::env::var_os("MCP_INTEROP_NODE_MODULES")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            common::workspace_root()
                .join("interop")
                .join("node_modules")
        });
    let js = modules.join("@modelcontextprotocol/server-everything/dist/index.js");
    let node = std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    (js.is_file() && node).then_some(js)
}

/// The real TypeScript SDK server over Streamable HTTP, started by the harness (`--url URL --
/// node …`): the transport-independent checks run unchanged, and the verdicts recorded in
/// docs/interop.md hold (it checks no Origin, and a session it ended gets 400, not 404).
#[test]
fn server_everything_over_streamable_http() {
    let Some(js) = server_everything() else {
        eprintln!("skipped: server-everything (interop/node_modules) or node not installed");
        return;
    };
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let env = format!("PORT={port}");
    let target = vec![
        "node".to_owned(),
        js.display().to_string(),
        "streamableHttp".to_owned(),
    ];
    let (run, report) = check(&["--url", &url, "--env", &env], &target);
    assert_eq!(
        report["targets"][0]["startError"],
        Value::Null,
        "{}",
        run.stderr
    );
    assert_eq!(report["targets"][0]["eras"], serde_json::json!(["legacy"]));
    for id in [
        "lifecycle.initialize-result",
        "lifecycle.ping",
        "jsonrpc.unknown-method",
        "jsonrpc.ids-echoed",
        "jsonrpc.concurrent-requests",
        "tools.list-shape",
        "http.notification-202",
        "http.request-content-type",
        "http.sse-response",
        "http.get-stream",
        "http.protocol-version-invalid",
    ] {
        assert_eq!(status(&report, id), "PASS", "{id}: {}", describe(&report));
    }
    assert_eq!(status(&report, "http.origin-forbidden"), "FAIL");
    assert_eq!(status(&report, "http.session-delete"), "FAIL");
    assert_eq!(status(&report, "framing.byte-at-a-time"), "N/A");
    assert_eq!(run.code, 1);
}

/// `--header` and a config file's `headers` are sent but never shown: not in the text or
/// JSON report, the JUnit file or the transcripts.
#[test]
fn header_values_never_appear_in_reports() {
    const SECRET: &str = "s3cret-token-value";
    let url = start(None);
    let dir = common::TempDir::new("http-headers");
    let junit = dir.path().join("junit.xml");
    let transcripts = dir.path().join("transcripts");
    let header = format!("Authorization: Bearer {SECRET}");
    let (run, report) = check(
        &[
            "--url",
            &url,
            "--header",
            &header,
            "--only",
            "http.notification-202",
            "--only",
            "lifecycle.ping",
            "--junit",
            junit.to_str().unwrap(),
            "--transcript",
            transcripts.to_str().unwrap(),
            "--verbose",
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}", describe(&report));
    assert!(!run.stdout.contains(SECRET) && !run.stderr.contains(SECRET));
    assert!(
        run.stdout.contains("authorization: <redacted>")
            || run.stdout.contains("Authorization: <redacted>")
    );
    assert!(!std::fs::read_to_string(&junit).unwrap().contains(SECRET));
    for target in std::fs::read_dir(&transcripts).unwrap() {
        for file in std::fs::read_dir(target.unwrap().path()).unwrap() {
            let text = std::fs::read_to_string(file.unwrap().path()).unwrap();
            assert!(!text.contains(SECRET), "{text}");
        }
    }

    let config = serde_json::json!({"mcpServers": {
        "remote": {"type": "http", "url": url, "headers": {"Authorization": format!("Bearer {SECRET}")}}
    }});
    let path = dir.write("mcp.json", &config.to_string());
    let (run, report) = check(
        &[
            "--config",
            path.to_str().unwrap(),
            "--only",
            "http.notification-202",
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}", describe(&report));
    assert_eq!(report["targets"][0]["name"], "remote");
    assert_eq!(report["targets"][0]["framing"], "http");
    assert_eq!(status(&report, "http.notification-202"), "PASS");
    assert!(!run.stdout.contains(SECRET));
}

/// The whole suite over HTTP against the fixture: the transport-independent checks run through
/// the HTTP probe with nothing blocked, and the stdio-only ones are N/A.
#[test]
fn the_whole_suite_runs_over_http() {
    let url = start(None);
    let (run, report) = check(&["--url", url.as_str()], &[]);
    assert_eq!(
        report["targets"][0]["startError"],
        Value::Null,
        "{}",
        run.stderr
    );
    assert!(
        with_status(&report, "BLOCKED").is_empty(),
        "{}",
        describe(&report)
    );
    for id in [
        "lifecycle.initialize-result",
        "lifecycle.initialized-no-reply",
        "lifecycle.ping",
        "jsonrpc.unknown-method",
        "jsonrpc.ids-echoed",
        "jsonrpc.unknown-notification",
        "jsonrpc.concurrent-requests",
        "tools.list-shape",
        "tools.call-result-shape",
        "cancellation.unknown-request",
        "modern.result-type",
    ] {
        assert_eq!(status(&report, id), "PASS", "{id}: {}", describe(&report));
    }
    assert_eq!(status(&report, "framing.sigterm-exit"), "N/A");
    eprintln!("{}", describe(&report));
}

/// The interop suite's Python (with the `mcp` 2.x SDK), if installed: this checkout's
/// `interop/.venv`, or `MCP_INTEROP_PYTHON`.
fn interop_python() -> Option<std::path::PathBuf> {
    let python = std::env::var_os("MCP_INTEROP_PYTHON")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| common::workspace_root().join("interop/.venv/bin/python"));
    let sdk2 = std::process::Command::new(&python)
        .args(["-c", "import mcp.server.mcpserver"])
        .output()
        .is_ok_and(|o| o.status.success());
    sdk2.then_some(python)
}

/// The URL `tests/fixtures/py_http_server.py` will listen at on a free loopback port, and the
/// command that starts it with `python`.
fn python_http_fixture(python: &std::path::Path) -> (String, Vec<String>) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/py_http_server.py");
    let target = vec![
        python.display().to_string(),
        script.display().to_string(),
        port.to_string(),
    ];
    (format!("http://127.0.0.1:{port}/mcp"), target)
}

/// The Python SDK's Streamable HTTP server (both eras): every http.* check passes.
#[test]
fn python_sdk_over_streamable_http() {
    let Some(python) = interop_python() else {
        eprintln!("skipped: the interop venv with the mcp 2.x SDK is not installed");
        return;
    };
    let (url, target) = python_http_fixture(&python);
    let (run, report) = check(&["--url", &url, "--only", "http"], &target);
    assert_eq!(
        report["targets"][0]["startError"],
        Value::Null,
        "{}",
        run.stderr
    );
    assert_eq!(
        report["targets"][0]["eras"],
        serde_json::json!(["legacy", "modern"])
    );
    assert!(not_passing(&report).is_empty(), "{}", describe(&report));
    assert_eq!(run.code, 0, "{}", describe(&report));
}

/// The feature checks run over Streamable HTTP as over stdio, in both eras: against the Python
/// SDK's server (a tool, a resource, a template, a prompt) resources and prompts are exercised
/// in each era, and nothing FAILs (its WARNs are the SDK's: an ignored cursor, other codes).
#[test]
fn python_sdk_features_over_streamable_http() {
    let Some(python) = interop_python() else {
        eprintln!("skipped: the interop venv with the mcp 2.x SDK is not installed");
        return;
    };
    let (url, target) = python_http_fixture(&python);
    let only = [
        "--url",
        &url,
        "--only",
        "resources",
        "--only",
        "prompts",
        "--only",
        "modern.resources-*",
        "--only",
        "modern.prompts-*",
    ];
    let (run, report) = check(&only, &target);
    assert_eq!(run.code, 0, "{}", describe(&report));
    for era in ["legacy", "modern"] {
        for capability in ["resources", "prompts"] {
            let c = report["targets"][0]["coverage"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["capability"] == capability && c["era"] == era)
                .unwrap();
            assert_eq!(c["declared"], true, "{capability} {era}: {c}");
            assert!(
                c["passed"].as_u64().unwrap() >= 2,
                "{capability} {era}: {c}"
            );
        }
    }
    assert!(
        common::with_status(&report, "FAIL").is_empty(),
        "{}",
        describe(&report)
    );
}

/// The checks that FAIL or WARN against the correct fixture, whole suite (its 2026-07-28 side
/// is not complete: these are not what a defect caused). Run once.
fn baseline() -> &'static Vec<String> {
    static BASELINE: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    BASELINE.get_or_init(|| {
        let url = start(None);
        let (_, report) = check(&["--url", url.as_str()], &[]);
        common::checks(&report, 0)
            .iter()
            .filter(|c| matches!(c["status"].as_str(), Some("FAIL" | "WARN")))
            .filter_map(|c| c["id"].as_str().map(str::to_owned))
            .collect()
    })
}

/// The checks, other than `owner`, that FAILed or WARNed though they do not against the
/// correct fixture: what a root cause must not cause.
fn collateral(report: &Value, owner: &str) -> Vec<String> {
    let baseline = baseline();
    common::checks(report, 0)
        .iter()
        .filter(|c| c["id"] != owner)
        .filter(|c| {
            !c["id"]
                .as_str()
                .is_some_and(|id| baseline.iter().any(|b| b == id))
        })
        .filter(|c| matches!(c["status"].as_str(), Some("FAIL" | "WARN")))
        .map(|c| format!("{} {}: {}", c["id"], c["status"], c["actual"]))
        .collect()
}

/// The whole suite against the fixture with `bug`: `owner` has `verdict` (the FAIL its level
/// gives), no other check FAILs or WARNs, and the checks the defect hides are BLOCKED by
/// `owner`. Returns the report.
fn assert_root_cause(bug: Bug, owner: &str, verdict: &str) -> Value {
    let url = start(Some(bug));
    let (run, report) = check(&["--url", url.as_str()], &[]);
    assert_eq!(
        status(&report, owner),
        verdict,
        "{bug:?}: {}",
        describe(&report)
    );
    let others = collateral(&report, owner);
    assert!(others.is_empty(), "{bug:?} also broke {others:#?}");
    for c in common::checks(&report, 0) {
        if c["status"] == "BLOCKED" {
            assert_eq!(c["blockedBy"], owner, "{bug:?}: {c}");
        }
    }
    if verdict == "FAIL" {
        assert_eq!(run.code, 1, "{bug:?}: {}", run.stderr);
    }
    report
}

/// How many checks `report` has with `status`.
fn count(report: &Value, status: &str) -> usize {
    with_status(report, status).len()
}

#[test]
fn sse_events_without_data_are_one_root_cause() {
    let report = assert_root_cause(Bug::SseNoDataAll, "http.sse-response", "WARN");
    let actual = common::find(&report, "http.sse-response")["actual"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(actual.contains("event: message\\n{"), "{actual}");
    assert!(count(&report, "BLOCKED") > 5, "{}", describe(&report));
}

#[test]
fn two_messages_in_one_sse_event_are_one_root_cause() {
    let report = assert_root_cause(Bug::SseTwoInOneAll, "http.sse-response", "WARN");
    assert!(count(&report, "BLOCKED") > 5, "{}", describe(&report));
}

#[test]
fn a_reply_wrapped_in_an_array_is_one_root_cause() {
    let report = assert_root_cause(Bug::ArrayReply, "jsonrpc.responses-well-formed", "FAIL");
    let actual = common::find(&report, "jsonrpc.responses-well-formed")["actual"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(actual.contains("JSON array of 1"), "{actual}");
    // The start-up met it: every check that needs the server is blocked, none skipped.
    assert!(count(&report, "BLOCKED") > 50, "{}", describe(&report));
    assert_eq!(count(&report, "SKIP"), 0, "{}", describe(&report));
}

#[test]
fn a_non_ascii_session_id_fails_only_its_check() {
    assert_root_cause(
        Bug::SessionIdNonAscii,
        "http.session-id-visible-ascii",
        "FAIL",
    );
}

#[test]
fn changed_reply_ids_are_one_root_cause() {
    assert_root_cause(Bug::ChangedIds, "jsonrpc.ids-echoed", "FAIL");
}

/// An unknown method answered `500 text/plain` is no JSON-RPC error: the check FAILs saying
/// what came, never PASSes on an error the server did not send.
#[test]
fn an_unknown_method_answered_500_text_plain_fails() {
    let url = start(Some(Bug::UnknownMethodPlain500));
    let (_, report) = check(
        &["--url", url.as_str(), "--only", "jsonrpc.unknown-method"],
        &[],
    );
    let check = common::find(&report, "jsonrpc.unknown-method");
    assert_eq!(check["status"], "FAIL", "{}", describe(&report));
    let actual = check["actual"].as_str().unwrap();
    for part in ["HTTP 500", "text/plain", "Internal Server Error"] {
        assert!(actual.contains(part), "{part}: {actual}");
    }
}

/// A dual-era server that answers a request without `_meta` and without a session
/// `400 text/plain`, as a legacy server may: the 2026-07-28 request without
/// clientCapabilities is still judged on its own (the fixture serves it: a FAIL of its own), and
/// the plain 400 is reported, not failed.
#[test]
fn a_plain_400_without_a_session_is_judged_apart() {
    let url = start(Some(Bug::NoSessionPlain400));
    let (_, report) = check(&["--url", url.as_str(), "--only", "modern"], &[]);
    assert_eq!(
        report["targets"][0]["eras"],
        serde_json::json!(["legacy", "modern"])
    );
    let judged = common::find(&report, "modern.missing-meta-invalid-params")["actual"].to_string();
    assert!(
        judged.starts_with("\"tools/list with _meta but no clientCapabilities: result"),
        "{judged}"
    );
    let detail = common::find(&report, "modern.requests-without-meta")["actual"].to_string();
    assert!(detail.contains("HTTP 400"), "{detail}");
}

/// A legacy-only server whose router answers `server/discover` `404 text/plain`: that is no
/// 2026-07-28 answer, so the run goes on in the legacy era (the probe falls back as the
/// versioning page describes), and the reply is never taken for a JSON-RPC error.
#[test]
fn a_plain_404_to_discover_reads_as_legacy_only() {
    let url = start(Some(Bug::LegacyOnlyPlain404));
    let (run, report) = check(&["--url", url.as_str()], &[]);
    assert_eq!(report["targets"][0]["eras"], serde_json::json!(["legacy"]));
    for id in [
        "lifecycle.initialize-result",
        "jsonrpc.unknown-method",
        "http.origin-forbidden-get-delete",
    ] {
        assert_eq!(status(&report, id), "PASS", "{id}: {}", describe(&report));
    }
    assert!(
        with_status(&report, "BLOCKED").is_empty(),
        "{}",
        describe(&report)
    );
    let detail = common::find(&report, "era.detect").to_string();
    assert!(detail.contains("HTTP 404 text/plain"), "{detail}");
    assert_eq!(run.code, 0, "{}", describe(&report));
}
