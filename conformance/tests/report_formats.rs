//! The report formats as users meet them, from the real binary: the default text report read at
//! a glance, `--verbose`, `--format markdown` and `--markdown FILE`, and `--check-set`.

mod common;

use common::*;

/// Lines a passing run against the bundled server may take: one screen.
const ONE_SCREEN: usize = 40;

/// A passing bundled run: at most one screen, no per-check line, the N/A checks on one line
/// that counts them, the summary naming no failure.
#[test]
fn a_passing_bundled_run_fits_on_one_screen() {
    let (_, report) = check(&[], &[]);
    let not_applicable = with_status(&report, "N/A").len();
    assert!(not_applicable > 0, "{}", describe(&report));
    let run = run(&["--timeout", TIMEOUT, "-q"]);
    assert_exit(&run, 0);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert!(
        lines.len() <= ONE_SCREEN,
        "{} lines:\n{}",
        lines.len(),
        run.stdout
    );
    for c in checks(&report, 0) {
        let line = format!("  {}  (", c["id"].as_str().unwrap());
        assert!(
            !run.stdout.contains(&line),
            "{line:?} listed:\n{}",
            run.stdout
        );
    }
    let line = format!(
        "  {not_applicable} checks not applicable: Streamable HTTP only: test an HTTP server with \
         --url to run it"
    );
    assert!(lines.contains(&line.as_str()), "{}", run.stdout);
    assert!(!run.stdout.contains("failed: "), "{}", run.stdout);
    assert_eq!(
        lines.last().copied(),
        Some("Overall: PASS (1 target: 1 passed, 0 failed)")
    );
}

/// `--verbose` lists every check on a line of its own, as the default once did.
#[test]
fn verbose_lists_every_check() {
    let (_, report) = check(&[], &[]);
    let run = run(&["--timeout", TIMEOUT, "-q", "--verbose"]);
    assert_exit(&run, 0);
    for c in checks(&report, 0) {
        let id = c["id"].as_str().unwrap();
        let status = c["status"].as_str().unwrap();
        let line = format!("  {status:<4}  {id}  (");
        assert!(
            run.stdout.contains(&line),
            "no line {line:?}:\n{}",
            run.stdout
        );
    }
}

/// A failing server: the text report shows each failure in full and the summary names it; the
/// Markdown summary has each with its level and expected/actual.
#[test]
fn failures_are_named_in_text_and_markdown() {
    let target = Fixture::bug("answer-notifications").command();
    let (_, report) = check(&["--only", "jsonrpc"], &target);
    let failed = with_status(&report, "FAIL");
    assert!(!failed.is_empty(), "{}", describe(&report));
    let mut args = vec!["--timeout", TIMEOUT, "-q", "--only", "jsonrpc", "--"];
    args.extend(target.iter().map(String::as_str));
    let text = run(&args);
    assert_exit(&text, 1);
    let named = format!("         failed: {}", failed.join(", "));
    assert!(
        text.stdout.contains(&named),
        "no {named:?}:\n{}",
        text.stdout
    );
    for id in &failed {
        assert!(
            text.stdout.contains(&format!("  FAIL  {id}  (MUST)")),
            "{}",
            text.stdout
        );
    }

    args.splice(0..0, ["--format", "markdown"]);
    let md = run(&args);
    assert_exit(&md, 1);
    assert!(
        md.stdout.starts_with("## mcp-conformance: ❌ FAIL\n"),
        "{}",
        md.stdout
    );
    for id in &failed {
        let heading = format!("#### ❌ `{id}` (MUST)");
        assert!(
            md.stdout.contains(&heading),
            "no {heading:?}:\n{}",
            md.stdout
        );
    }
    assert_eq!(
        md.stdout.matches("\n- expected: ").count(),
        failed.len() + with_status(&report, "WARN").len(),
        "{}",
        md.stdout
    );
}

/// `--markdown FILE` appends, as `$GITHUB_STEP_SUMMARY` wants, whatever the stdout format.
#[test]
fn markdown_file_is_appended_to() {
    let dir = TempDir::new("markdown-file");
    let file = dir.write("summary.md", "earlier step\n");
    let file_arg = file.to_str().unwrap();
    let run = run(&[
        "--timeout",
        TIMEOUT,
        "-q",
        "--format",
        "json",
        "--markdown",
        file_arg,
    ]);
    assert_exit(&run, 0);
    assert_eq!(run.json()["failed"], false);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.starts_with("earlier step\n## mcp-conformance: ✅ PASS\n\n| target |"),
        "{text}"
    );
    assert!(
        text.contains("| mcp-echo-server 0.1.0 | ✅ PASS |"),
        "{text}"
    );
}

/// The check set a run used is in the JSON report; a pin this harness does not know is a usage
/// error that says what to do.
#[test]
fn check_set_is_reported_and_checked() {
    let version = env!("CARGO_PKG_VERSION");
    let (run_default, report) = check(&["--only", "lifecycle.ping"], &[]);
    assert_exit(&run_default, 0);
    assert_eq!(report["checkSet"], version);
    assert_eq!(find(&report, "lifecycle.ping")["since"], "0.1.0");
    let (pinned, report) = check(&["--only", "lifecycle.ping", "--check-set", "0.1"], &[]);
    assert_exit(&pinned, 0);
    assert_eq!(report["checkSet"], "0.1.0");
    assert_eq!(status(&report, "lifecycle.ping"), "PASS");

    let newer = run(&["--check-set", "99.0.0"]);
    assert_exit(&newer, 2);
    let want = format!(
        "this harness is {version}; it does not know check set 99.0.0 (upgrade the harness, or \
         pin {version} or older)"
    );
    assert!(newer.stderr.contains(&want), "{}", newer.stderr);
    assert!(newer.stdout.is_empty(), "{}", newer.stdout);
}
