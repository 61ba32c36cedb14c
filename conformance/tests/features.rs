//! The feature checks' shared parts against real servers: the report's coverage, what an
//! undeclared capability's methods get (`capabilities.undeclared`), and the 2026-07-28 list
//! results' caching hints. The fixture is `tests/fixtures/feature_server.py` (every server
//! feature, both eras; `--bug NAME` breaks one check); the bundled `mcp-echo-server` declares
//! tools only.
#![allow(clippy::unwrap_used)]

mod common;

use common::{assert_caught, assert_clean, assert_exit, check, echo_server, feature_server, find};
use serde_json::{json, Value};

/// The coverage entry of `capability` in `era`.
fn coverage<'a>(report: &'a Value, capability: &str, era: &str) -> &'a Value {
    report["targets"][0]["coverage"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["capability"] == capability && c["era"] == era)
        .unwrap_or_else(|| panic!("no coverage of {capability} in {era}"))
}

#[test]
fn the_correct_feature_server_passes_everything_in_both_eras() {
    let (run, report) = check(&["--jobs", "4"], &feature_server(None, "dual"));
    assert_clean(&run, &report);
    assert_exit(&run, 0);
    for era in ["legacy", "modern"] {
        for capability in ["tools", "resources", "prompts", "completions"] {
            let c = coverage(&report, capability, era);
            assert_eq!(
                c["declared"],
                true,
                "{capability} in {era}\n{}",
                run.context()
            );
            assert!(
                c["ran"].as_u64().unwrap() > 0,
                "{capability} in {era}: no check ran\n{}",
                run.context()
            );
        }
    }
    assert_eq!(find(&report, "capabilities.undeclared")["status"], "SKIP");
}

#[test]
fn undeclared_capabilities_are_reported_not_judged() {
    let (run, report) = check(
        &[
            "--only",
            "capabilities.*",
            "--only",
            "modern.capabilities-*",
        ],
        &[echo_server().display().to_string()],
    );
    assert_exit(&run, 0);
    let legacy = find(&report, "capabilities.undeclared");
    assert_eq!(legacy["status"], "INFO", "{}", run.context());
    let detail = legacy["detail"].as_str().unwrap();
    for seen in [
        "resources (not declared): resources/list got error -32601",
        "prompts (not declared): prompts/list got error -32601",
        "logging (not declared): logging/setLevel got error -32601",
        "completions (not declared): completion/complete got error -32601",
    ] {
        assert!(detail.contains(seen), "{seen:?} not in {detail:?}");
    }
    assert!(
        !detail.contains("tools/list"),
        "tools is declared: {detail}"
    );
    let modern = find(&report, "modern.capabilities-undeclared");
    assert_eq!(modern["status"], "INFO", "{}", run.context());
    assert!(!modern["detail"]
        .as_str()
        .unwrap()
        .contains("logging/setLevel"));
    let tools = coverage(&report, "tools", "legacy");
    assert_eq!(tools["declared"], true);
    let resources = coverage(&report, "resources", "legacy");
    assert_eq!(
        (&resources["declared"], &resources["ran"]),
        (&json!(false), &json!(0))
    );
}

#[test]
fn each_list_without_caching_hints_fails_its_own_check() {
    let cases = [
        (
            "modern-prompts-list-no-ttl",
            "modern.prompts-list-cacheable",
        ),
        (
            "modern-resources-list-no-ttl",
            "modern.resources-list-cacheable",
        ),
        (
            "modern-templates-list-no-ttl",
            "modern.resource-templates-list-cacheable",
        ),
        ("modern-read-no-ttl", "modern.resources-read-cacheable"),
    ];
    for (bug, id) in cases {
        let (run, report) = check(
            &["--only", "modern.*cacheable"],
            &feature_server(Some(bug), "modern"),
        );
        assert_caught(&run, &report, &[id]);
        let failed: Vec<&str> = report["targets"][0]["checks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["status"] == "FAIL")
            .map(|c| c["id"].as_str().unwrap())
            .collect();
        assert_eq!(failed, [id], "{bug}: only {id} fails\n{}", run.context());
        let actual = find(&report, id)["actual"].as_str().unwrap();
        assert!(
            actual.contains("page 1: no ttlMs") || actual.ends_with(".txt: no ttlMs"),
            "{actual}"
        );
    }
}

/// The version is judged on every request, whatever came before: a server that serves an
/// unsupported version once a request got -32601 (as TypeScript SDK 2.x servers do) fails
/// `modern.unsupported-version`, saying after what.
#[test]
fn an_unsupported_version_served_after_an_error_fails() {
    let only = ["--only", "modern.unsupported-version"];
    let (run, report) = check(&only, &feature_server(None, "modern"));
    assert_exit(&run, 0);
    assert_eq!(
        find(&report, "modern.unsupported-version")["status"],
        "PASS"
    );
    let (run, report) = check(
        &only,
        &feature_server(Some("modern-version-after-error"), "modern"),
    );
    assert_caught(&run, &report, &["modern.unsupported-version"]);
    let actual = find(&report, "modern.unsupported-version")["actual"]
        .as_str()
        .unwrap();
    assert!(
        actual.starts_with(
            "after a request for the unknown method no/such/method: server/discover: result"
        ),
        "{actual}"
    );
}
