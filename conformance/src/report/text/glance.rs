//! The report at a glance (the default): what needs attention in full, the rest counted.
//!
//! An unexpected FAIL, a WARN and a BLOCKED check are written in full under their area; every
//! other result is counted on one line per area, and the checks that do not apply to the
//! transport on one line per reason, so a passing run fits on one screen.

use std::fmt::Write as _;

use super::{check, one_line, plural, push_wrapped, Paint, TextOptions, BOLD, LINE_CUT, TEXT_CUT};
use crate::check::{CheckResult, Outcome, Status, TargetReport};
use crate::report::{areas, Counts};

/// Shown in full without `--verbose`.
pub(super) fn needs_attention(r: &CheckResult) -> bool {
    match r.status {
        Status::Fail | Status::Warn => !r.expected_failure,
        Status::Blocked => true,
        _ => false,
    }
}

/// The checks that need attention, in full: failures and warnings under their areas, then
/// the blocked checks (after what blocked them).
pub(super) fn attention(out: &mut String, report: &TargetReport, opts: &TextOptions, paint: Paint) {
    let failed = |r: &&CheckResult| needs_attention(r) && r.status != Status::Blocked;
    for area in areas(report) {
        let shown: Vec<&CheckResult> = report
            .results
            .iter()
            .filter(|r| r.info.area() == area)
            .filter(failed)
            .collect();
        section(out, area, &shown, opts, paint);
    }
    let blocked: Vec<&CheckResult> = report
        .results
        .iter()
        .filter(|r| r.status == Status::Blocked)
        .collect();
    section(out, "blocked", &blocked, opts, paint);
}

/// A heading and its checks, if there are any.
fn section(
    out: &mut String,
    title: &str,
    checks: &[&CheckResult],
    opts: &TextOptions,
    paint: Paint,
) {
    if checks.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n{}", paint.style(BOLD, &one_line(title, LINE_CUT)));
    for r in checks {
        check(out, r, opts, paint);
    }
}

/// Width of the area column of the count lines.
const AREA_WIDTH: usize = 16;

/// One line per area with its counts (N/A left out), then one line per reason checks were not
/// applicable.
pub(super) fn counts(out: &mut String, report: &TargetReport, paint: Paint) {
    let rows: Vec<(&str, String)> = areas(report)
        .into_iter()
        .filter_map(|area| {
            let of_area: Vec<&CheckResult> = report
                .results
                .iter()
                .filter(|r| r.info.area() == area && r.status != Status::NotApplicable)
                .collect();
            (!of_area.is_empty()).then(|| (area, area_counts(&of_area)))
        })
        .collect();
    let not_applicable = not_applicable(report);
    if rows.is_empty() && not_applicable.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\n{}",
        paint.style(BOLD, "checks by area (--verbose lists each)")
    );
    for (area, text) in rows {
        let head = format!(
            "  {:<width$}",
            one_line(area, LINE_CUT),
            width = AREA_WIDTH - 2
        );
        let width = head.chars().count().max(AREA_WIDTH);
        push_wrapped(out, &head, width, AREA_WIDTH, &text);
    }
    for (n, why) in not_applicable {
        let text = format!(
            "{n} {} not applicable: {}",
            plural(n, "check", "checks"),
            one_line(&why, TEXT_CUT)
        );
        push_wrapped(out, "  ", 2, AREA_WIDTH, &text);
    }
}

/// `9 passed, 1 failed, 1 info, 1 expected failure (tools.list-shape)`: the counts of one
/// area, in a fixed order, the expected failures named.
fn area_counts(results: &[&CheckResult]) -> String {
    let c = Counts::of_results(results.iter().copied());
    let mut items: Vec<String> = [
        (c.pass, "passed"),
        (c.fail, "failed"),
        (c.warn, plural(c.warn, "warning", "warnings")),
        (c.blocked, "blocked"),
        (c.info, "info"),
        (c.skip, "skipped"),
    ]
    .iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| format!("{n} {what}"))
    .collect();
    if c.expected_fail > 0 {
        let expected: Vec<&str> = results
            .iter()
            .filter(|r| r.status == Status::Fail && r.expected_failure)
            .map(|r| r.info.id.as_str())
            .collect();
        items.push(format!(
            "{} {} ({})",
            c.expected_fail,
            plural(c.expected_fail, "expected failure", "expected failures"),
            one_line(&expected.join(", "), TEXT_CUT)
        ));
    }
    items.join(", ")
}

/// How many checks were not applicable, per reason, in the order first met.
fn not_applicable(report: &TargetReport) -> Vec<(usize, String)> {
    let mut reasons: Vec<(usize, String)> = Vec::new();
    for r in &report.results {
        let Outcome::NotApplicable(why) = &r.outcome else {
            continue;
        };
        match reasons.iter_mut().find(|(_, w)| w == why) {
            Some((n, _)) => *n += 1,
            None => reasons.push((1, why.clone())),
        }
    }
    reasons
}
