//! The prompts and logging-request checks: the real `mcp-conformance` binary against
//! `tests/fixtures/feature_server.py` (a correct dual-era server with every feature) as a child
//! process, in both eras. Without a bug every check passes (generic and strict profiles); each
//! `--bug` fails (or, for a SHOULD, warns on) exactly its check and, where the defect is in both
//! eras, its modern twin; a server that declares neither feature gets no verdict from them.
#![allow(clippy::unwrap_used)]

mod common;

use common::{assert_exit, check, checks, echo_server, feature_server, find, in_parallel, status};
use serde_json::Value;

/// The legacy checks, then the modern ones (report order).
const LEGACY: &[&str] = &[
    "prompts.list-shape",
    "prompts.invalid-cursor",
    "prompts.get-result",
    "prompts.unknown-prompt",
    "prompts.missing-argument",
    "logging.set-level",
    "logging.invalid-level",
];
const MODERN: &[&str] = &[
    "modern.prompts-list-shape",
    "modern.prompts-invalid-cursor",
    "modern.prompts-get-result",
    "modern.prompts-unknown-prompt",
    "modern.prompts-missing-argument",
    "modern.prompts-list-cacheable",
    "modern.logging-invalid-level",
];

/// `--only` options selecting exactly [`LEGACY`] and [`MODERN`] (other families share the
/// areas: the watched `logging.message-*` checks, the 2026-07-28 caching checks).
fn only() -> Vec<&'static str> {
    LEGACY
        .iter()
        .chain(MODERN)
        .flat_map(|id| ["--only", *id])
        .collect()
}

/// The id and status of every check of the run, in report order.
fn verdicts(report: &Value) -> Vec<(String, String)> {
    checks(report, 0)
        .iter()
        .map(|c| {
            let field = |k: &str| c[k].as_str().unwrap().to_owned();
            (field("id"), field("status"))
        })
        .collect()
}

/// The statuses of `ids`, all `status` (`"PASS"`: each check's verdict against a server that
/// meets it, INFO for the INFO-level `logging.set-level`).
fn all(ids: &[&str], status: &str) -> Vec<(String, String)> {
    ids.iter()
        .map(|id| {
            let status = if status == "PASS" {
                unbroken(id)
            } else {
                status
            };
            ((*id).to_owned(), status.to_owned())
        })
        .collect()
}

/// The verdict of check `id` against a server that does what it asks.
fn unbroken(id: &str) -> &'static str {
    if id == "logging.set-level" {
        "INFO"
    } else {
        "PASS"
    }
}

/// Sorted, to compare with the report whatever its order.
fn sorted(mut v: Vec<(String, String)>) -> Vec<(String, String)> {
    v.sort();
    v
}

#[test]
fn the_correct_server_passes_every_check_in_both_eras_and_profiles() {
    let with = |extra: &[&'static str]| -> Vec<&'static str> {
        only().into_iter().chain(extra.iter().copied()).collect()
    };
    let runs = in_parallel(vec![
        (with(&[]), feature_server(None, "dual")),
        (with(&["--profile", "strict"]), feature_server(None, "dual")),
        (with(&[]), feature_server(None, "legacy")),
        (with(&[]), feature_server(None, "modern")),
    ]);
    let both = sorted([all(LEGACY, "PASS"), all(MODERN, "PASS")].concat());
    for (run, report) in &runs[..2] {
        assert_exit(run, 0);
        assert_eq!(sorted(verdicts(report)), both, "{}", run.context());
    }
    let (run, report) = &runs[2];
    assert_exit(run, 0);
    assert_eq!(
        sorted(verdicts(report)),
        sorted([all(LEGACY, "PASS"), all(MODERN, "SKIP")].concat()),
        "{}",
        run.context()
    );
    let (run, report) = &runs[3];
    assert_exit(run, 0);
    assert_eq!(
        sorted(verdicts(report)),
        sorted([all(LEGACY, "SKIP"), all(MODERN, "PASS")].concat()),
        "{}",
        run.context()
    );
    // What passed says what it saw: every listed prompt got (greet with the name completion
    // offered: it refuses the harness's sample), and its messages counted.
    let detail = |id: &str| find(&runs[0].1, id)["detail"].as_str().unwrap().to_owned();
    for id in ["prompts.get-result", "modern.prompts-get-result"] {
        assert_eq!(
            detail(id),
            "greet (1 message(s)), plain (1 message(s)), media (6 message(s))"
        );
    }
    assert_eq!(detail("prompts.list-shape"), "3 prompt(s) on 1 page(s)");
    // greet takes only a name completion/complete offers: got with it, and judged.
    for id in [
        "prompts.missing-argument",
        "modern.prompts-missing-argument",
    ] {
        assert_eq!(detail(id), "greet without \"name\": -32602");
    }
    assert_eq!(
        detail("modern.logging-invalid-level"),
        "tools/list with logLevel \"verbose\": -32602"
    );
}

/// Checks and the verdicts they must have.
type Verdicts = &'static [(&'static str, &'static str)];

/// Each bug, the checks it must change and their verdicts (FAIL for a MUST, WARN for a SHOULD
/// under the generic profile); every other check passes.
const BUGS: &[(&str, Verdicts, &str)] = &[
    (
        "prompts-arguments-not-array",
        &[
            ("prompts.list-shape", "FAIL"),
            ("modern.prompts-list-shape", "FAIL"),
        ],
        "prompts[1].arguments: is not an array: \"none\"",
    ),
    (
        "prompts-cursor-loop",
        // Reported, not failed: no sentence requires pages to end.
        &[
            ("prompts.list-shape", "INFO"),
            ("modern.prompts-list-shape", "INFO"),
        ],
        "nextCursor \"page-0\" was issued before: the pages loop",
    ),
    (
        "prompts-invalid-cursor-ok",
        &[
            ("prompts.invalid-cursor", "WARN"),
            ("modern.prompts-invalid-cursor", "WARN"),
        ],
        "result {\"",
    ),
    (
        "prompts-bad-image-base64",
        &[
            ("prompts.get-result", "FAIL"),
            ("modern.prompts-get-result", "FAIL"),
        ],
        "media.messages[1].content.data: is not base64 (RFC 4648, padded): \"not base64!\"",
    ),
    (
        "prompts-bad-role",
        &[
            ("prompts.get-result", "FAIL"),
            ("modern.prompts-get-result", "FAIL"),
        ],
        "media.messages[1].role: is not \"user\" or \"assistant\": \"system\"",
    ),
    (
        "prompts-resource-no-content",
        &[
            ("prompts.get-result", "FAIL"),
            ("modern.prompts-get-result", "FAIL"),
        ],
        "media.messages[4].content.resource: has neither text nor blob",
    ),
    (
        "prompts-unknown-result",
        &[
            ("prompts.unknown-prompt", "WARN"),
            ("modern.prompts-unknown-prompt", "WARN"),
        ],
        "A prompt by any name.",
    ),
    (
        "prompts-missing-arg-ok",
        &[
            ("prompts.missing-argument", "WARN"),
            ("modern.prompts-missing-argument", "WARN"),
        ],
        "Greet alice.",
    ),
    (
        "logging-set-level-missing",
        // Where "info" is refused, an error for "verbose" proves nothing: not judged.
        &[
            ("logging.set-level", "INFO"),
            ("logging.invalid-level", "SKIP"),
        ],
        "error -32601",
    ),
    (
        "logging-bad-level-ok",
        &[("logging.invalid-level", "WARN")],
        "result {}",
    ),
    (
        "logging-bad-meta-level-ok",
        &[("modern.logging-invalid-level", "WARN")],
        "result {\"",
    ),
];

#[test]
fn each_bug_is_caught_by_its_check_alone_in_each_era() {
    let runs = in_parallel(
        BUGS.iter()
            .map(|(bug, _, _)| (only(), feature_server(Some(bug), "dual")))
            .collect(),
    );
    for ((bug, changed, actual), (run, report)) in BUGS.iter().zip(&runs) {
        let mut want: Vec<(String, String)> = [LEGACY, MODERN]
            .concat()
            .iter()
            .map(|id| {
                let status = changed
                    .iter()
                    .find(|(c, _)| c == id)
                    .map_or(unbroken(id), |(_, s)| *s);
                ((*id).to_owned(), status.to_owned())
            })
            .collect();
        want.sort();
        assert_eq!(
            sorted(verdicts(report)),
            want,
            "--bug {bug}\n{}",
            run.context()
        );
        let (first, verdict) = changed[0];
        let c = find(report, first);
        let said = c["actual"]
            .as_str()
            .or(c["detail"].as_str())
            .unwrap_or_default();
        assert!(
            said.contains(actual),
            "--bug {bug}: {first} says {said:?}\n{}",
            run.context()
        );
        assert!(
            c["expected"].is_string() || verdict == "INFO",
            "{}",
            run.context()
        );
        // A MUST's FAIL fails the run; a SHOULD's WARN does not under the generic profile.
        assert_exit(run, i32::from(verdict == "FAIL"));
    }
    let skipped = find(&runs[8].1, "logging.invalid-level")["detail"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(skipped.contains("would prove nothing"), "{skipped}");
}

/// Under the strict profile a SHOULD not met is a FAIL.
#[test]
fn strict_fails_a_should() {
    let mut options = only();
    options.extend(["--profile", "strict"]);
    let (run, report) = check(
        &options,
        &feature_server(Some("prompts-unknown-result"), "modern"),
    );
    assert_exit(&run, 1);
    assert_eq!(
        status(&report, "modern.prompts-unknown-prompt"),
        "FAIL",
        "{}",
        run.context()
    );
    assert_eq!(
        status(&report, "prompts.unknown-prompt"),
        "SKIP",
        "{}",
        run.context()
    );
}

/// A server that declares neither prompts nor logging (the bundled one: tools only) gets no
/// verdict from these checks: each is skipped, saying which capability is not declared, and
/// starts no process.
#[test]
fn undeclared_capabilities_are_not_judged() {
    let (run, report) = check(&only(), &[echo_server().display().to_string()]);
    assert_exit(&run, 0);
    for c in checks(&report, 0) {
        let id = c["id"].as_str().unwrap();
        assert_eq!(c["status"], "SKIP", "{id}\n{}", run.context());
        let capability = if id.contains("logging") {
            "logging"
        } else {
            "prompts"
        };
        let detail = c["detail"].as_str().unwrap();
        assert!(
            detail.contains(&format!("does not declare the {capability} capability")),
            "{id}: {detail}"
        );
        assert_eq!(
            c["transcript"],
            serde_json::json!([]),
            "{id}: a SKIP sends nothing"
        );
    }
    assert_eq!(checks(&report, 0).len(), LEGACY.len() + MODERN.len());
}
