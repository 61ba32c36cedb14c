//! The resources and completions checks, both eras, against the real harness binary and
//! tests/fixtures/feature_server.py as a child process: the correct server passes every one;
//! each `--bug` is caught by exactly its check (FAIL, or WARN for a SHOULD) and no other.
#![allow(clippy::unwrap_used)]

mod common;

use common::{assert_exit, check, feature_server, status, Run};
use serde_json::Value;

/// Every check of the two families, legacy then 2026-07-28.
const LEGACY: &[&str] = &[
    "resources.list-shape",
    "resources.templates-list-shape",
    "resources.invalid-cursor",
    "resources.uris-rfc3986",
    "resources.read-shape",
    "resources.unknown-uri",
    "resources.templates-rfc6570",
    "resources.subscribe",
    "completions.complete-shape",
    "completions.values-max",
];
const MODERN: &[&str] = &[
    "modern.resources-list-shape",
    "modern.resources-templates-list-shape",
    "modern.resources-invalid-cursor",
    "modern.resources-uris-rfc3986",
    "modern.resources-read-shape",
    "modern.resources-unknown-uri",
    "modern.resources-templates-rfc6570",
    "modern.resources-subscriptions-listen",
    "modern.completions-complete-shape",
    "modern.completions-values-max",
];

/// The one INFO check of the families: it reports, never passes.
const INFO: &str = "completions.values-max";

fn fixture(era: &str, bug: Option<&str>) -> Vec<String> {
    feature_server(bug, era)
}

/// A run of only these families against the fixture.
fn harness_run(era: &str, bug: Option<&str>, profile: &str) -> (Run, Value) {
    let options = [
        "--profile",
        profile,
        "--only",
        "resources.*",
        "--only",
        "modern.resources-*",
        "--only",
        "completions.*",
        "--only",
        "modern.completions-*",
    ];
    check(&options, &fixture(era, bug))
}

/// What each check of the families should be: `odd` lists the checks that are not PASS (nor
/// INFO for [`INFO`]).
fn assert_statuses(run: &Run, report: &Value, ids: &[&str], odd: &[(&str, &str)]) {
    let ran: Vec<&str> = common::checks(report, 0)
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    for id in ids {
        assert!(ran.contains(id), "{id} did not run\n{}", run.context());
        let want = odd
            .iter()
            .find(|(odd_id, _)| odd_id == id)
            .map(|(_, s)| *s)
            .unwrap_or(if *id == INFO { "INFO" } else { "PASS" });
        assert_eq!(status(report, id), want, "{id}\n{}", run.context());
    }
}

#[test]
fn the_correct_server_passes_every_check_in_both_eras_and_profiles() {
    let all: Vec<&str> = LEGACY.iter().chain(MODERN).copied().collect();
    for profile in ["generic", "strict"] {
        let (run, report) = harness_run("dual", None, profile);
        assert_statuses(&run, &report, &all, &[]);
        assert_exit(&run, 0);
        for id in ["resources.read-shape", "modern.resources-read-shape"] {
            assert_eq!(
                common::find(&report, id)["detail"],
                "5 read(s) of 4 listed resource(s) and 1 URI(s) from templates, contents well formed",
            );
        }
    }
    let (run, report) = harness_run("legacy", None, "strict");
    assert_statuses(&run, &report, LEGACY, &[]);
    assert_exit(&run, 0);
    let (run, report) = harness_run("modern", None, "strict");
    assert_statuses(&run, &report, MODERN, &[]);
    assert_exit(&run, 0);
}

/// Each defect, and the checks it makes other than PASS (all others pass).
const BUGS: &[(&str, &[(&str, &str)])] = &[
    (
        "resources-bad-list",
        &[
            ("resources.list-shape", "FAIL"),
            ("modern.resources-list-shape", "FAIL"),
        ],
    ),
    (
        "resources-cursor-loop",
        // Reported, not failed: no sentence requires pages to end.
        &[
            ("resources.list-shape", "INFO"),
            ("modern.resources-list-shape", "INFO"),
        ],
    ),
    (
        "resources-cursor-accepted",
        &[
            ("resources.invalid-cursor", "WARN"),
            ("modern.resources-invalid-cursor", "WARN"),
        ],
    ),
    (
        "resources-bad-uri",
        &[
            ("resources.uris-rfc3986", "FAIL"),
            ("modern.resources-uris-rfc3986", "FAIL"),
        ],
    ),
    (
        "resources-bad-blob",
        &[
            ("resources.read-shape", "FAIL"),
            ("modern.resources-read-shape", "FAIL"),
        ],
    ),
    (
        "resources-unknown-wrong-code",
        &[
            ("resources.unknown-uri", "WARN"),
            ("modern.resources-unknown-uri", "FAIL"),
        ],
    ),
    (
        "resources-unknown-empty-contents",
        &[
            ("resources.unknown-uri", "WARN"),
            ("modern.resources-unknown-uri", "FAIL"),
        ],
    ),
    (
        "resources-unknown-old-code",
        &[("modern.resources-unknown-uri", "FAIL")],
    ),
    (
        "templates-bad-list",
        &[
            ("resources.templates-list-shape", "FAIL"),
            ("modern.resources-templates-list-shape", "FAIL"),
        ],
    ),
    (
        "templates-bad-read",
        &[
            ("resources.read-shape", "FAIL"),
            ("modern.resources-read-shape", "FAIL"),
        ],
    ),
    (
        "templates-bad-rfc6570",
        &[
            ("resources.templates-rfc6570", "FAIL"),
            ("modern.resources-templates-rfc6570", "FAIL"),
        ],
    ),
    (
        "resources-subscribe-bad-result",
        &[("resources.subscribe", "FAIL")],
    ),
    (
        "subscriptions-update-before-ack",
        &[("modern.resources-subscriptions-listen", "FAIL")],
    ),
    (
        "completion-bad-shape",
        &[
            ("completions.complete-shape", "FAIL"),
            ("modern.completions-complete-shape", "FAIL"),
        ],
    ),
    (
        "completion-too-many-values",
        &[
            ("completions.values-max", "INFO"),
            ("modern.completions-values-max", "FAIL"),
        ],
    ),
];

#[test]
fn each_defect_is_caught_by_its_check_alone() {
    let all: Vec<&str> = LEGACY.iter().chain(MODERN).copied().collect();
    for (bug, odd) in BUGS {
        let (run, report) = harness_run("dual", Some(bug), "generic");
        assert_statuses(&run, &report, &all, odd);
        let failed = odd.iter().any(|(_, s)| *s == "FAIL");
        assert_exit(&run, if failed { 1 } else { 0 });
        for (id, want) in odd.iter().filter(|(_, s)| *s != "INFO") {
            let c = common::find(&report, id);
            assert!(
                c["expected"].is_string() && c["actual"].is_string(),
                "{bug}: {id} {want} says what was expected and what came back\n{}",
                run.context()
            );
        }
    }
}

#[test]
fn what_the_failures_say() {
    let (run, report) = harness_run("dual", Some("resources-cursor-loop"), "generic");
    assert_eq!(
        common::find(&report, "resources.list-shape")["detail"],
        "4 resource(s) on 2 page(s), each well formed; resources/list: nextCursor \"page-2\" was \
         issued before: the pages loop (not followed again)",
        "{}",
        run.context()
    );
    let (run, report) = harness_run("dual", Some("resources-unknown-empty-contents"), "generic");
    let c = common::find(&report, "modern.resources-unknown-uri");
    assert_eq!(
        c["expected"],
        "error -32602, never an empty contents array for a non-existent resource",
        "{}",
        run.context()
    );
    // The template's variable is set to the first value completion offers.
    let (run, report) = harness_run("dual", Some("templates-bad-read"), "generic");
    assert_eq!(
        common::find(&report, "resources.read-shape")["actual"],
        "fixture://notes/alice: a contents item with neither text nor blob: \
         {\"mimeType\":\"text/plain\",\"uri\":\"fixture://notes/alice\"}",
        "{}",
        run.context()
    );
    let (run, report) = harness_run("dual", Some("completion-too-many-values"), "generic");
    let c = common::find(&report, "modern.completions-values-max");
    assert_eq!(
        c["actual"],
        "\"ref/prompt\" \"greet\" argument \"name\": 101 values\n\"ref/resource\" \"fixture://notes/{name}\" argument \"name\": 101 values",
        "{}",
        run.context()
    );
}

/// A server that declares completions but offers nothing to complete: skipped, with why.
#[test]
fn nothing_to_complete_is_a_skip_that_says_why() {
    let (run, report) = harness_run("dual", Some("completion-nothing-to-complete"), "generic");
    for id in [
        "completions.complete-shape",
        "modern.completions-complete-shape",
    ] {
        assert_eq!(status(&report, id), "SKIP", "{}", run.context());
        assert_eq!(
            common::find(&report, id)["detail"],
            "nothing to complete: no listed prompt has arguments; no listed resource template has a variable",
            "{}",
            run.context()
        );
    }
}
