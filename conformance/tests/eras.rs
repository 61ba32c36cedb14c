//! Protocol eras: the real `mcp-conformance` binary against the fixture server speaking the
//! legacy era (the default), the modern 2026-07-28 era only (`--era modern`) or both
//! (`--era dual`). Era detection names the right era(s) in the report (`eras`, `era.detect`, the
//! text header, a JUnit property); the `modern.*` checks pass against a correct modern or
//! dual-era server, are SKIPs against a legacy-only one, and each modern defect of the fixture
//! is caught by its check. Our own server's eras are asserted in `harness.rs`.
#![allow(clippy::unwrap_used)]

mod common;

use common::{
    assert_caught, assert_clean, assert_exit, assert_status, check, checks, find, in_parallel, run,
    status, with_status, Fixture, TempDir,
};
use serde_json::{json, Value};

/// The ids of the first target's checks in `area`.
fn area_ids<'a>(report: &'a Value, area: &str) -> Vec<&'a str> {
    checks(report, 0)
        .iter()
        .filter(|c| c["area"] == area)
        .map(|c| c["id"].as_str().unwrap())
        .collect()
}

/// The MUST and SHOULD checks of the modern area (`modern.ping-removed` and
/// `modern.requests-without-meta` are INFO).
const MODERN_REQUIREMENTS: &[&str] = &[
    "modern.discover",
    "modern.discover-server-info",
    "modern.unsupported-version",
    "modern.result-type",
    "modern.tools-list-cacheable",
    "modern.missing-meta-invalid-params",
    "modern.no-server-requests",
    "modern.tools-schemas-valid",
    "modern.tools-definition-shape",
    "modern.tools-structured-content",
    "modern.tools-structured-content-text",
    "modern.tools-errors-in-result",
];

#[test]
fn era_detection_names_each_fixture_era() {
    let cases = [
        ("legacy", json!(["legacy"]), "legacy: "),
        ("modern", json!(["modern"]), "modern: "),
        ("dual", json!(["legacy", "modern"]), "dual-era: "),
    ];
    let runs = in_parallel(
        cases
            .iter()
            .map(|(era, _, _)| (vec!["--only", "era"], Fixture::correct().era(era).command()))
            .collect(),
    );
    for ((era, eras, label), (run, report)) in cases.iter().zip(&runs) {
        assert_exit(run, 0);
        let target = &report["targets"][0];
        assert_eq!(&target["eras"], eras, "--era {era}\n{}", run.context());
        assert_eq!(area_ids(report, "era"), ["era.detect"]);
        let detect = find(report, "era.detect");
        assert_eq!(detect["status"], "INFO", "{}", run.context());
        let detail = detect["detail"].as_str().unwrap();
        assert!(detail.starts_with(label), "--era {era}: {detail}");
        assert!(detail.contains("server/discover → "), "{detail}");
        assert!(detail.contains("initialize → "), "{detail}");
        // The probes' frames are the check's transcript.
        let transcript = detect["transcript"].as_array().unwrap();
        for method in ["initialize", "server/discover"] {
            assert!(
                transcript
                    .iter()
                    .any(|e| e["direction"] == "send"
                        && e["text"].as_str().unwrap().contains(method)),
                "no {method} in the era.detect transcript\n{}",
                run.context()
            );
        }
        // A modern-only server names itself in its DiscoverResult.
        assert_eq!(
            target["serverInfo"]["name"],
            "broken-server",
            "{}",
            run.context()
        );
    }
}

/// The text header and the JUnit properties name the eras too.
#[test]
fn text_header_and_junit_show_the_eras() {
    let dir = TempDir::new("eras-junit");
    let junit = dir.path().join("report.xml");
    let mut args: Vec<String> = ["--only", "era", "--timeout", "3", "--junit"]
        .map(String::from)
        .to_vec();
    args.push(junit.display().to_string());
    args.push("--".to_owned());
    args.extend(Fixture::correct().era("dual").command());
    let r = run(&args);
    assert_exit(&r, 0);
    let header = r.stdout.lines().take(2).collect::<Vec<_>>().join("\n");
    assert!(header.contains("eras legacy+modern"), "{}", r.stdout);
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains("<property name=\"eras\" value=\"legacy+modern\"/>"),
        "{xml}"
    );
}

/// A server that answers every method with `{}` is not taken for a modern one.
#[test]
fn an_empty_result_to_discover_is_not_modern() {
    let (run, report) = check(
        &["--only", "era"],
        &Fixture::bug("unknown-method-result").command(),
    );
    assert_exit(&run, 0);
    assert_eq!(report["targets"][0]["eras"], json!(["legacy"]));
    let detail = find(&report, "era.detect")["detail"].as_str().unwrap();
    assert!(detail.contains("not a DiscoverResult"), "{detail}");
}

#[test]
fn modern_checks_skip_against_a_legacy_server() {
    let (run, report) = check(&["--only", "modern"], &Fixture::correct().command());
    assert_exit(&run, 0);
    let ids = area_ids(&report, "modern");
    // The requirements, modern.ping-removed, modern.requests-without-meta and the features'
    // modern twins.
    for id in MODERN_REQUIREMENTS
        .iter()
        .chain(&["modern.ping-removed", "modern.requests-without-meta"])
    {
        assert!(ids.contains(id), "{id} is not listed\n{}", run.context());
    }
    for c in checks(&report, 0) {
        assert_eq!(c["status"], "SKIP", "{}", run.context());
        assert_eq!(
            c["detail"],
            "the server does not speak 2026-07-28 (legacy only)",
            "{}",
            run.context()
        );
        assert_eq!(c["transcript"], json!([]), "a SKIP starts no process");
    }
}

/// A correct modern-only server passes: every modern check, and the checks that need a legacy
/// session are SKIPs saying why.
#[test]
fn correct_modern_fixture_passes() {
    let (run, report) = check(
        &["--jobs", "4"],
        &Fixture::correct().era("modern").command(),
    );
    assert_exit(&run, 0);
    assert_clean(&run, &report);
    assert_eq!(report["targets"][0]["eras"], json!(["modern"]));
    assert_status(&run, &report, MODERN_REQUIREMENTS, "PASS");
    assert_status(
        &run,
        &report,
        &[
            "modern.ping-removed",
            "era.detect",
            "modern.requests-without-meta",
        ],
        "INFO",
    );
    // The two start-up processes (the discover one goes on as the shared modern session), the
    // two that get a request without proper _meta first, and the read-only tool calls' own:
    // nothing else is started.
    assert_eq!(
        report["targets"][0]["starts"]["count"],
        5,
        "{}",
        run.context()
    );
    for id in with_status(&report, "SKIP") {
        let c = find(&report, id);
        if c["detail"]
            .as_str()
            .unwrap()
            .contains("does not declare the")
        {
            continue; // a feature the fixture does not have (it declares tools only)
        }
        assert!(
            !id.starts_with("modern.") && !id.starts_with("era."),
            "{id}\n{}",
            run.context()
        );
        assert!(
            c["detail"]
                .as_str()
                .unwrap()
                .contains("only the modern era"),
            "{id}: {}",
            c["detail"]
        );
    }
    assert!(area_ids(&report, "lifecycle")
        .iter()
        .all(|id| status(&report, id) == "SKIP"));
}

/// A correct dual-era server passes everything under the strict profile, in both framings,
/// with nothing skipped but the newline-only CRLF check.
#[test]
fn correct_dual_fixture_passes_strict_in_both_framings() {
    let runs = in_parallel(vec![
        (
            vec!["--jobs", "4", "--profile", "strict"],
            Fixture::correct().era("dual").command(),
        ),
        (
            vec![
                "--jobs",
                "4",
                "--profile",
                "strict",
                "--framing",
                "content-length",
            ],
            Fixture::correct().era("dual").content_length().command(),
        ),
    ]);
    for (run, report) in &runs {
        assert_exit(run, 0);
        assert_clean(run, report);
        assert_eq!(report["targets"][0]["eras"], json!(["legacy", "modern"]));
        assert_status(run, report, MODERN_REQUIREMENTS, "PASS");
        assert_status(
            run,
            report,
            &["lifecycle.initialize-result", "tools.call-result-shape"],
            "PASS",
        );
        // Besides CRLF, only checks of a feature the fixture does not declare are skipped.
        for id in with_status(report, "SKIP") {
            let detail = find(report, id)["detail"].as_str().unwrap_or("");
            assert!(
                id == "framing.crlf" || detail.contains("does not declare the"),
                "{id}: {detail}\n{}",
                run.context()
            );
        }
    }
}

/// A dual-era server may serve a request that carries neither initialize nor 2026-07-28
/// `_meta` under legacy semantics (2026-07-28 basic/versioning.mdx: a dual-era server "selects
/// its behavior from how the client opens"): observed, not failed. A request whose `_meta`
/// names the version but lacks clientCapabilities is modern and still MUST get -32602.
#[test]
fn a_dual_era_server_may_serve_requests_without_meta_as_legacy_ones() {
    let (run, report) = check(
        &["--only", "modern"],
        &Fixture::correct()
            .era("dual")
            .arg("--serve-before-initialize")
            .command(),
    );
    assert_exit(&run, 0);
    assert_status(
        &run,
        &report,
        &["modern.missing-meta-invalid-params"],
        "PASS",
    );
    assert_status(&run, &report, &["modern.requests-without-meta"], "INFO");
    let c = find(&report, "modern.requests-without-meta");
    assert!(
        c["actual"]
            .as_str()
            .unwrap()
            .contains("without _meta: result"),
        "{c}"
    );
}

/// Each modern defect fails its check and no other modern check; in the modern-only and in the
/// dual-era fixture.
#[test]
fn each_modern_bug_is_caught_by_its_check() {
    let bugs = [
        ("modern-no-result-type", "modern.result-type", "modern"),
        ("modern-no-ttl", "modern.tools-list-cacheable", "dual"),
        (
            "modern-wrong-unsupported-code",
            "modern.unsupported-version",
            "modern",
        ),
        ("modern-server-request", "modern.no-server-requests", "dual"),
    ];
    let runs = in_parallel(
        bugs.iter()
            .map(|(bug, _, era)| {
                (
                    vec!["--jobs", "4", "--only", "modern"],
                    Fixture::bug(bug).era(era).command(),
                )
            })
            .collect(),
    );
    for ((bug, id, _), (run, report)) in bugs.iter().zip(&runs) {
        assert_caught(run, report, &[*id]);
        assert_eq!(
            with_status(report, "FAIL"),
            [*id],
            "--bug {bug} fails only {id}\n{}",
            run.context()
        );
    }
    let actual = |i: usize, id: &str| find(&runs[i].1, id)["actual"].as_str().unwrap().to_owned();
    assert!(actual(0, "modern.result-type").contains("no resultType"));
    assert!(actual(1, "modern.tools-list-cacheable").contains("no ttlMs"));
    assert!(actual(2, "modern.unsupported-version").contains("code -32602"));
    assert!(actual(3, "modern.no-server-requests").contains("roots/list"));
}
