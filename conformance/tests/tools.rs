//! The tool checks against `tests/fixtures/feature_server.py`, a correct dual-era server, and
//! its one-defect variants: each defect is caught by its check alone (in both eras), a slow
//! tool is not judged instead of failed, `--no-tool-calls` sends no `tools/call`, and a
//! transcript keeps long frames whole.

#![allow(clippy::unwrap_used)]

mod common;

use common::{check, checks, describe, feature_server_with, find, status, Run, TempDir};
use serde_json::Value;

/// Every check of the tools family that judges something (not the INFO `tools.unknown-tool`).
const LEGACY: [&str; 9] = [
    "tools.list-shape",
    "tools.names-valid",
    "tools.invalid-cursor",
    "tools.schemas-valid",
    "tools.definition-shape",
    "tools.call-result-shape",
    "tools.structured-content",
    "tools.structured-content-text",
    "tools.errors-in-result",
];
const MODERN: [&str; 5] = [
    "modern.tools-schemas-valid",
    "modern.tools-definition-shape",
    "modern.tools-structured-content",
    "modern.tools-structured-content-text",
    "modern.tools-errors-in-result",
];
/// The checks that judge tool results (SKIP when no call gave one).
const RESULTS: [&str; 7] = [
    "tools.call-result-shape",
    "tools.structured-content",
    "tools.structured-content-text",
    "tools.errors-in-result",
    "modern.tools-structured-content",
    "modern.tools-structured-content-text",
    "modern.tools-errors-in-result",
];

/// The tool checks (and the modern ones) against the fixture with `server_args`.
fn run_tools(options: &[&str], server_args: &[&str]) -> (Run, Value) {
    let mut opts = vec!["--only", "tools.*", "--only", "modern.*"];
    opts.extend_from_slice(options);
    check(&opts, &feature_server_with(server_args))
}

fn all(ids: &[&'static str]) -> Vec<&'static str> {
    ids.to_vec()
}

#[test]
fn the_correct_server_passes_every_tool_check_in_each_era() {
    for (era, passing, absent) in [
        ("dual", [&LEGACY[..], &MODERN[..]].concat(), vec![]),
        ("legacy", all(&LEGACY), all(&MODERN)),
        ("modern", all(&MODERN), all(&LEGACY)),
    ] {
        let (run, report) = run_tools(&[], &["--era", era]);
        for id in &passing {
            assert_eq!(
                status(&report, id),
                "PASS",
                "{id} in era {era}\n{}",
                run.context()
            );
        }
        for id in &absent {
            assert_ne!(status(&report, id), "PASS", "{id} cannot pass in era {era}");
            assert_ne!(
                status(&report, id),
                "FAIL",
                "{id} in era {era}\n{}",
                run.context()
            );
        }
        assert_eq!(report["failed"], false, "{}", run.context());
    }
}

#[test]
fn the_correct_server_passes_the_strict_profile() {
    let (run, report) = run_tools(&["--profile", "strict"], &[]);
    for id in LEGACY.iter().chain(&MODERN) {
        assert_eq!(status(&report, id), "PASS", "{id}\n{}", run.context());
    }
    assert_eq!(report["failed"], false, "{}", run.context());
}

#[test]
fn arguments_satisfy_a_strict_schema_so_the_strict_tool_is_judged() {
    let (run, report) = run_tools(&[], &[]);
    // lookup answers -32602 unless its uri, date-time, pattern, enum and bounds are all met.
    for id in ["tools.call-result-shape", "tools.structured-content"] {
        let detail = find(&report, id)["detail"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(
            detail.contains("lookup"),
            "{id}: {detail}\n{}",
            run.context()
        );
    }
    let errors = find(&report, "tools.errors-in-result")["detail"].to_string();
    assert!(errors.contains("lookup: result"), "{errors}");
}

/// Each defect and the checks (legacy and modern twin) that catch it, with their status.
const BUGS: [(&str, &str, [&str; 2]); 6] = [
    (
        "tools-invalid-input-schema",
        "FAIL",
        ["tools.schemas-valid", "modern.tools-schemas-valid"],
    ),
    (
        "tools-bad-output-schema",
        "FAIL",
        ["tools.schemas-valid", "modern.tools-schemas-valid"],
    ),
    (
        "tools-structured-mismatch",
        "FAIL",
        [
            "tools.structured-content",
            "modern.tools-structured-content",
        ],
    ),
    (
        "tools-no-serialized-json",
        "WARN",
        [
            "tools.structured-content-text",
            "modern.tools-structured-content-text",
        ],
    ),
    (
        "tools-bad-annotations",
        "FAIL",
        ["tools.definition-shape", "modern.tools-definition-shape"],
    ),
    (
        "tools-error-as-jsonrpc",
        "WARN",
        ["tools.errors-in-result", "modern.tools-errors-in-result"],
    ),
];

#[test]
fn each_defect_is_caught_by_its_check_alone() {
    for (bug, want, caught_by) in BUGS {
        let (run, report) = run_tools(&[], &["--bug", bug]);
        for id in LEGACY.iter().chain(&MODERN) {
            let want = if caught_by.contains(id) { want } else { "PASS" };
            assert_eq!(
                status(&report, id),
                want,
                "{id} with --bug {bug}\n{}",
                run.context()
            );
        }
        let failed = want == "FAIL";
        assert_eq!(report["failed"], failed, "--bug {bug}\n{}", run.context());
    }
}

#[test]
fn a_tool_that_outlives_the_tool_timeout_is_not_judged_and_breaks_nothing() {
    // echo answers after 3 s; the tool-call wait is 1 s.
    let (run, report) = run_tools(
        &["--timeout", "1", "--tool-timeout", "1"],
        &["--bug", "tools-slow"],
    );
    for id in RESULTS {
        let c = find(&report, id);
        assert_eq!(c["status"], "SKIP", "{id}\n{}", run.context());
        let detail = c["detail"].as_str().unwrap_or_default();
        assert!(
            detail.contains("echo: not judged: no reply within 1s (--tool-timeout"),
            "{id}: {detail}"
        );
    }
    for c in checks(&report, 0) {
        assert!(
            c["status"] != "FAIL" && c["status"] != "BLOCKED" && c["brokeSession"].is_null(),
            "{} {}\n{}",
            c["id"],
            c["status"],
            describe(&report)
        );
    }
    let findings = report["targets"][0]["findings"].to_string();
    assert!(!findings.contains("stops-answering"), "{findings}");
}

#[test]
fn no_tool_calls_sends_no_tools_call_and_says_why_checks_skip() {
    let dir = TempDir::new("tools-no-calls");
    let out = dir.path().display().to_string();
    let (run, report) = run_tools(&["--no-tool-calls", "--transcript", &out], &[]);
    for id in RESULTS.iter().chain(&["tools.unknown-tool"]) {
        let c = find(&report, id);
        assert_eq!(c["status"], "SKIP", "{id}\n{}", run.context());
        assert_eq!(c["detail"], "tool calls are off (--no-tool-calls)", "{id}");
    }
    for id in [
        "tools.schemas-valid",
        "modern.tools-schemas-valid",
        "modern.result-type",
    ] {
        assert_eq!(status(&report, id), "PASS", "{id}\n{}", run.context());
    }
    let sent = transcripts(dir.path());
    assert!(!sent.is_empty(), "no transcript written");
    assert!(
        sent.iter().any(|t| t.contains("tools/list")),
        "the transcripts hold the frames"
    );
    assert!(
        !sent.iter().any(|t| t.contains("tools/call")),
        "a tools/call was sent"
    );
}

#[test]
fn a_transcript_keeps_frames_longer_than_4_kib_whole() {
    let dir = TempDir::new("tools-long-frames");
    let out = dir.path().display().to_string();
    let (run, report) = run_tools(&["--transcript", &out, "--only", "tools.list-shape"], &[]);
    assert_eq!(
        status(&report, "tools.list-shape"),
        "PASS",
        "{}",
        run.context()
    );
    let lists: Vec<Value> = transcripts(dir.path())
        .iter()
        .flat_map(|file| file.lines().map(str::to_owned).collect::<Vec<_>>())
        .map(|line| serde_json::from_str::<Value>(&line).unwrap())
        .filter(|line| line["direction"] == "receive")
        .filter_map(|line| serde_json::from_str::<Value>(line["text"].as_str()?).ok())
        .filter(|frame| frame.pointer("/result/tools").is_some())
        .collect();
    assert!(
        !lists.is_empty(),
        "no whole tools/list reply in the transcripts"
    );
    for frame in lists {
        let text = frame.to_string();
        assert!(text.len() > 6000, "{} bytes", text.len());
        let lookup = &frame["result"]["tools"][1]["description"];
        assert!(
            lookup.as_str().unwrap().ends_with(" It never writes."),
            "{lookup}"
        );
    }
}

/// The text of every transcript file under `dir`.
fn transcripts(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(std::fs::read_to_string(&path).unwrap());
            }
        }
    }
    out
}
