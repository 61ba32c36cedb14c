//! The Markdown summary (`--format markdown`, `--markdown FILE`): what a CI job summary
//! (`$GITHUB_STEP_SUMMARY`) or a pull-request comment shows.
//!
//! A verdict, a table of counts per target, then each failure and warning with its id, level,
//! the spec sentence it rests on and a short expected/actual; blocked checks, expected and stale
//! failures by id. It stays under [`MAX_CHARS`] (GitHub cuts a comment at 65,536 characters):
//! past that, further checks are named only. Everything that came from the server is escaped,
//! so it cannot add markup, links, images or mentions.

use std::fmt::Write as _;

use super::{one_line, target_failed, Counts};
use crate::check::{CheckResult, Outcome, Status, TargetReport};

/// The summary stays under this many characters.
pub const MAX_CHARS: usize = 60_000;
/// Expected, actual and spec sentences are cut to this many characters.
const SHORT: usize = 300;
/// Start error lines shown.
const ERROR_LINES: usize = 12;

/// The summary of a run: `check_set` is the check set it used.
pub fn render(reports: &[TargetReport], check_set: &str) -> String {
    let mut out = String::new();
    let verdict = if super::any_failed(reports) {
        "❌ FAIL"
    } else {
        "✅ PASS"
    };
    let _ = writeln!(out, "## mcp-conformance: {verdict}\n");
    table(&mut out, reports);
    for report in reports {
        details(&mut out, report);
    }
    let _ = writeln!(
        out,
        "<sub>mcp-conformance {} · check set {} · `--verbose` or `--format json` for every \
         check</sub>",
        env!("CARGO_PKG_VERSION"),
        escape(check_set, 40)
    );
    out
}

fn table(out: &mut String, reports: &[TargetReport]) {
    out.push_str(
        "| target | verdict | passed | failed | warnings | info | skipped | not applicable | \
         time |\n|---|---|--:|--:|--:|--:|--:|--:|--:|\n",
    );
    for report in reports {
        let name = escape(&target_label(report), 120);
        let verdict = if report.start_error.is_some() {
            "⛔ not started"
        } else if report.skipped.is_some() {
            "➖ not tested"
        } else if target_failed(report) {
            "❌ FAIL"
        } else {
            "✅ PASS"
        };
        let c = Counts::of(report);
        let _ = writeln!(
            out,
            "| {name} | {verdict} | {} | {} | {} | {} | {} | {} | {:.2} s |",
            c.pass,
            c.fail,
            c.warn,
            c.info,
            c.skip,
            c.not_applicable,
            report.duration.as_secs_f64()
        );
    }
    out.push('\n');
}

/// The target's name, with the server's name and version where they add to it.
fn target_label(report: &TargetReport) -> String {
    match super::server_label(report.server_info.as_ref()) {
        // `mcp-echo-server 0.1.0`, not `mcp-echo-server (mcp-echo-server 0.1.0)`.
        Some(server) if server.starts_with(&format!("{} ", report.name)) => server,
        Some(server) if server != report.name => format!("{} ({server})", report.name),
        _ => report.name.clone(),
    }
}

/// One target's failures and warnings in full, the rest by id.
fn details(out: &mut String, report: &TargetReport) {
    let attention: Vec<&CheckResult> = report
        .results
        .iter()
        .filter(|r| matches!(r.status, Status::Fail | Status::Warn) && !r.expected_failure)
        .collect();
    let blocked = super::ids(report, |r| r.status == Status::Blocked);
    let expected = super::ids(report, |r| r.status == Status::Fail && r.expected_failure);
    let stale: Vec<&str> = report
        .stale_expected_failures
        .iter()
        .map(String::as_str)
        .collect();
    let quiet = attention.is_empty() && blocked.is_empty() && stale.is_empty();
    if report.start_error.is_none() && (quiet && expected.is_empty()) {
        return;
    }
    let _ = writeln!(out, "### {}\n", escape(&report.name, 120));
    if let Some(error) = &report.start_error {
        start_error(out, error);
    }
    let mut shown = 0;
    for r in &attention {
        if out.len() > MAX_CHARS - 4_000 {
            break;
        }
        check(out, r);
        shown += 1;
    }
    let rest: Vec<&str> = attention[shown..]
        .iter()
        .map(|r| r.info.id.as_str())
        .collect();
    ids_line(out, "Not shown, for length", &rest);
    ids_line(out, "Blocked by the failures above", &blocked);
    ids_line(out, "Expected failures, in the baseline", &expected);
    ids_line(
        out,
        "Stale expected failures, passing now: remove them",
        &stale,
    );
}

/// Why a target could not be started: the first line, then the last lines of the rest.
fn start_error(out: &mut String, error: &str) {
    let mut lines = error.lines();
    let first = lines.next().unwrap_or_default();
    let _ = writeln!(out, "**Could not be started:** {}\n", escape(first, SHORT));
    let rest: Vec<&str> = lines.collect();
    let (shown, _) = super::tail(&rest, ERROR_LINES);
    if shown.is_empty() {
        return;
    }
    let body: Vec<String> = shown.iter().map(|l| one_line(l.trim_end(), 200)).collect();
    let body = body.join("\n");
    let fence = "`".repeat(longest_run(&body, '`').max(2) + 1);
    let _ = writeln!(out, "{fence}text\n{body}\n{fence}\n");
}

/// A failure or warning: heading, description, spec sentence and reference, expected/actual.
fn check(out: &mut String, r: &CheckResult) {
    let mark = if r.status == Status::Fail {
        "❌"
    } else {
        "⚠️"
    };
    let _ = writeln!(
        out,
        "#### {mark} {} ({})\n\n{}\n",
        code(&r.info.id),
        r.info.level,
        escape(&r.info.description, SHORT)
    );
    let spec = escape(&r.info.spec, SHORT);
    if r.info.quote.is_empty() {
        let _ = writeln!(out, "Spec: *{spec}*\n");
    } else {
        let _ = writeln!(out, "> {} — *{spec}*\n", escape(&r.info.quote, SHORT));
    }
    if let Outcome::Fail { expected, actual } = &r.outcome {
        let _ = writeln!(
            out,
            "- expected: {}\n- actual: {}\n",
            escape(expected, SHORT),
            escape(actual, SHORT)
        );
    }
}

/// `**Title:** `a`, `b``, if there are ids; the line itself is cut to stay short.
fn ids_line(out: &mut String, title: &str, ids: &[&str]) {
    if ids.is_empty() {
        return;
    }
    let mut line = format!("**{title} ({}):** ", ids.len());
    for (i, id) in ids.iter().enumerate() {
        if line.len() > 2_000 {
            let _ = write!(line, " … {} more", ids.len() - i);
            break;
        }
        if i > 0 {
            line.push_str(", ");
        }
        line.push_str(&code(id));
    }
    let _ = writeln!(out, "{line}\n");
}

/// Text made inert in Markdown and one line: control characters escaped, markup and HTML
/// characters backslash-escaped or made entities, `@` kept from mentioning anyone.
pub fn escape(text: &str, max: usize) -> String {
    let mut out = String::new();
    for c in one_line(text, max).chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '@' => out.push_str("@\u{200b}"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '#' | '~' | '!' | '$' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// A code span that holds `text` whatever backticks it has (CommonMark: a longer fence,
/// padded with spaces); `|` is escaped, as a table cell would otherwise end there.
fn code(text: &str) -> String {
    let text = one_line(text, 200).replace('|', "\\|");
    let fence = "`".repeat(longest_run(&text, '`') + 1);
    if fence.len() > 1 {
        format!("{fence} {text} {fence}")
    } else {
        format!("{fence}{text}{fence}")
    }
}

/// The longest run of `c` in `text`.
fn longest_run(text: &str, c: char) -> usize {
    let (mut longest, mut run) = (0, 0);
    for ch in text.chars() {
        run = if ch == c { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    longest
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::Level;
    use crate::report::tests::{result, sample, skipped, start_error};

    /// The golden file is the summary of the shared sample reports; `UPDATE_GOLDEN=1` rewrites
    /// it (then read the diff).
    #[test]
    fn matches_the_golden_file() {
        let mut report = sample();
        report.results[1].info.quote = "the receiver MUST reply with an error".to_owned();
        let mut blocked = result(
            "lifecycle.ping",
            Level::Must,
            Status::Blocked,
            Outcome::Blocked("the reply came spread over 5 lines".to_owned()),
        );
        blocked.blocked_by = Some("jsonrpc.unknown-method".to_owned());
        report.results.push(blocked);
        let mut failing_start = start_error();
        failing_start.start_error = Some(
            "the server exited before answering initialize (status 1); its last stderr lines:\n  \
             Traceback (most recent call last):\n  ModuleNotFoundError: No module named 'mcp'"
                .to_owned(),
        );
        let version = concat!("mcp-conformance ", env!("CARGO_PKG_VERSION"), " ");
        let text = render(&[report, failing_start, skipped()], "9.9.9")
            .replace(version, "mcp-conformance VERSION ");
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/report.md");
        if std::env::var_os("UPDATE_GOLDEN").is_some() {
            std::fs::write(path, &text).expect("write the golden file");
        }
        let golden = std::fs::read_to_string(path).expect("read tests/golden/report.md");
        assert_eq!(text, golden, "got:\n{text}");
    }

    #[test]
    fn a_passing_run_is_the_table_alone() {
        let mut report = sample();
        report.results.retain(|r| r.status == Status::Pass);
        report.stale_expected_failures.clear();
        let text = render(&[report], "0.1.0");
        assert!(text.starts_with("## mcp-conformance: ✅ PASS\n\n| target |"));
        assert!(!text.contains("###"), "{text}");
    }

    #[test]
    fn server_text_cannot_add_markup() {
        assert_eq!(
            escape("<img src=x> **b** [l](u) @team |x| `c`\n#", 200),
            "&lt;img src=x&gt; \\*\\*b\\*\\* \\[l\\](u) @\u{200b}team \\|x\\| \\`c\\`\\\\n\\#"
        );
        assert_eq!(code("a`b"), "`` a`b ``");
        assert_eq!(code("tools.x"), "`tools.x`");
    }

    #[test]
    fn many_failures_stay_under_the_limit() {
        let mut report = sample();
        let long = "x".repeat(5_000);
        report.results = (0..2_000)
            .map(|i| {
                result(
                    &format!("area.check-{i}"),
                    Level::Must,
                    Status::Fail,
                    Outcome::fail(&long, &long),
                )
            })
            .collect();
        let text = render(&[report], "0.1.0");
        assert!(text.chars().count() < MAX_CHARS + 4_000, "{}", text.len());
        assert!(text.contains("**Not shown, for length ("), "{text}");
    }
}
