//! Report writers: a human-readable text report, a JSON document with a stable schema, JUnit
//! XML for CI systems, a Markdown summary for CI job pages, and per-check transcript files
//! for debugging.
//!
//! All of them read the same [`TargetReport`]s; the helpers here keep them agreeing on counts,
//! area order and what "failed" means.

pub mod json;
pub mod junit;
pub mod markdown;
pub mod text;
pub mod transcript;

use std::time::Duration;

use crate::transcript::Direction;

use crate::check::{CheckResult, Status, TargetReport};

/// Areas in the order reports list them; any other area follows, alphabetically.
pub const AREA_ORDER: [&str; 13] = [
    "era",
    "lifecycle",
    "jsonrpc",
    "tools",
    "resources",
    "prompts",
    "logging",
    "completions",
    "capabilities",
    "framing",
    "cancellation",
    "modern",
    "echo",
];

/// Per-status counts of one target's results.
///
/// `fail` counts only unexpected failures and `expected_fail` the listed ones, so the seven
/// numbers add up to the number of results.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub pass: usize,
    pub fail: usize,
    pub warn: usize,
    pub info: usize,
    pub skip: usize,
    pub expected_fail: usize,
    pub blocked: usize,
    pub not_applicable: usize,
}

impl Counts {
    pub fn of(report: &TargetReport) -> Counts {
        Counts::of_results(&report.results)
    }

    /// The counts of some of a target's results (one area's, say).
    pub fn of_results<'a>(results: impl IntoIterator<Item = &'a CheckResult>) -> Counts {
        let mut c = Counts::default();
        for r in results {
            match r.status {
                Status::Pass => c.pass += 1,
                Status::Fail if r.expected_failure => c.expected_fail += 1,
                Status::Fail => c.fail += 1,
                Status::Warn => c.warn += 1,
                Status::Info => c.info += 1,
                Status::Skip => c.skip += 1,
                Status::Blocked => c.blocked += 1,
                Status::NotApplicable => c.not_applicable += 1,
            }
        }
        c
    }

    pub fn total(&self) -> usize {
        self.pass
            + self.fail
            + self.warn
            + self.info
            + self.skip
            + self.expected_fail
            + self.blocked
            + self.not_applicable
    }
}

/// Whether a target did not pass: an unexpected FAIL, a stale expected failure, or a server
/// that could not be started (which [`TargetReport::failed`] alone does not cover, having no
/// results). A skipped target has not failed.
pub fn target_failed(report: &TargetReport) -> bool {
    report.start_error.is_some() || report.failed()
}

/// Whether any target did not pass.
pub fn any_failed(reports: &[TargetReport]) -> bool {
    reports.iter().any(target_failed)
}

/// The ids of a target's results that `pick` chooses, in report order.
pub fn ids(report: &TargetReport, pick: impl Fn(&CheckResult) -> bool) -> Vec<&str> {
    report
        .results
        .iter()
        .filter(|r| pick(r))
        .map(|r| r.info.id.as_str())
        .collect()
}

/// The checks that made a target fail or warn, by id, one kind per line (`failed: a, b`,
/// `warnings: c`, `stale expected failures: d`); empty when there are none.
pub fn named_failures(report: &TargetReport) -> String {
    let unexpected =
        |status: Status| move |r: &CheckResult| r.status == status && !r.expected_failure;
    let stale: Vec<&str> = report
        .stale_expected_failures
        .iter()
        .map(String::as_str)
        .collect();
    let mut lines = String::new();
    for (what, ids) in [
        ("failed", ids(report, unexpected(Status::Fail))),
        ("warnings", ids(report, unexpected(Status::Warn))),
        ("stale expected failures", stale),
    ] {
        if !ids.is_empty() {
            lines.push_str(&format!("{what}: {}\n", ids.join(", ")));
        }
    }
    lines
}

/// The distinct areas of a target's results, in report order.
pub fn areas(report: &TargetReport) -> Vec<&str> {
    let mut areas: Vec<&str> = Vec::new();
    for r in &report.results {
        let area = r.info.area();
        if !areas.contains(&area) {
            areas.push(area);
        }
    }
    areas.sort_by_key(|a| area_rank(a));
    areas
}

/// Sort key: the position in [`AREA_ORDER`], then the name for the others.
fn area_rank(area: &str) -> (usize, &str) {
    match AREA_ORDER.iter().position(|a| *a == area) {
        Some(i) => (i, ""),
        None => (AREA_ORDER.len(), area),
    }
}

/// `name version` from an `initialize` result's `serverInfo`, as far as it is known.
///
/// The values come from the server, so they are made printable and cut short.
pub fn server_label(server_info: Option<&serde_json::Value>) -> Option<String> {
    let info = server_info?;
    let name = info.get("name").and_then(|v| v.as_str());
    let version = info.get("version").and_then(|v| v.as_str());
    let label = match (name, version) {
        (Some(n), Some(v)) => format!("{n} {v}"),
        (Some(n), None) => n.to_owned(),
        (None, Some(v)) => format!("(unnamed) {v}"),
        (None, None) => return None,
    };
    Some(one_line(&label, 80))
}

/// The eras a tested target speaks, for one line: `legacy`, `modern`, `legacy+modern`, or
/// `none` when it spoke neither; `None` for a target that was not started or not tested.
pub fn eras_text(report: &TargetReport) -> Option<String> {
    if report.start_error.is_some() || report.skipped.is_some() {
        return None;
    }
    Some(if report.eras.is_empty() {
        "none".to_owned()
    } else {
        one_line(&report.eras.join("+"), 80)
    })
}

/// `17 server starts: the first answered in 0.91s, median 0.88s, slowest 1.20s`, or `None`
/// for a target that started nothing.
pub fn starts_text(report: &TargetReport) -> Option<String> {
    let starts = &report.starts;
    if starts.count == 0 {
        return None;
    }
    // Over HTTP a probe is a client of the one server, not a process of its own.
    let (one, many) = if report.framing == "http" {
        ("HTTP client", "HTTP clients")
    } else {
        ("server start", "server starts")
    };
    let mut text = format!(
        "{} {}",
        starts.count,
        if starts.count == 1 { one } else { many }
    );
    match starts.first_median_slowest() {
        Some((first, median, slowest)) => text.push_str(&format!(
            ": the first answered in {:.2}s, median {:.2}s, slowest {:.2}s",
            first.as_secs_f64(),
            median.as_secs_f64(),
            slowest.as_secs_f64()
        )),
        None => text.push_str(": none answered"),
    }
    let silent = starts.count - starts.answered.len();
    if silent > 0 && !starts.answered.is_empty() {
        text.push_str(&format!("; {silent} answered nothing"));
    }
    Some(text)
}

/// Milliseconds, rounded to microseconds so JSON does not carry float noise.
pub fn millis(d: Duration) -> f64 {
    d.as_micros() as f64 / 1000.0
}

/// Rounds a millisecond value to three decimals (microseconds).
pub fn round_ms(ms: f64) -> f64 {
    (ms * 1000.0).round() / 1000.0
}

/// Text made safe for one terminal line: control characters are escaped (`\n`, `\r`, `\t`,
/// `\u{1b}`) so a server's output can neither break the layout nor send escape sequences,
/// and anything past `max` characters is cut and marked with `…`.
pub fn one_line(text: &str, max: usize) -> String {
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let piece = match c {
            '\n' => "\\n".to_owned(),
            '\r' => "\\r".to_owned(),
            '\t' => "\\t".to_owned(),
            c if c.is_control() => format!("\\u{{{:x}}}", c as u32),
            c => c.to_string(),
        };
        let len = piece.chars().count();
        if used + len > max {
            out.push('…');
            return out;
        }
        used += len;
        out.push_str(&piece);
    }
    out
}

/// A transcript direction as reports write it: `send`, `receive` or `event`.
pub fn direction_name(direction: Direction) -> &'static str {
    match direction {
        Direction::Send => "send",
        Direction::Receive => "receive",
        Direction::Event => "event",
    }
}

/// The last `n` items of a slice, and how many were left out before them.
pub fn tail<T>(items: &[T], n: usize) -> (&[T], usize) {
    let skipped = items.len().saturating_sub(n);
    (&items[skipped..], skipped)
}

#[cfg(test)]
pub(crate) mod tests {
    //! Shared fixtures for the writers' tests.

    use std::time::Duration;

    use crate::transcript::Direction;
    use crate::transcript::TranscriptEntry;
    use serde_json::json;

    use super::*;
    use crate::check::{CheckInfo, CheckResult, Level, Outcome, Profile};

    pub fn entry(at_ms: f64, direction: Direction, text: &str) -> TranscriptEntry {
        TranscriptEntry {
            at_ms,
            direction,
            text: text.to_owned(),
        }
    }

    pub fn result(id: &str, level: Level, status: Status, outcome: Outcome) -> CheckResult {
        CheckResult {
            info: CheckInfo::new(
                id,
                level,
                &format!("Description of {id}"),
                &format!("Spec of {id}"),
            ),
            status,
            outcome,
            expected_failure: false,
            blocked_by: None,
            broke_session: None,
            duration: Duration::from_millis(5),
            transcript: Vec::new(),
            whole_transcript: Vec::new(),
            stderr: Vec::new(),
        }
    }

    /// One target with one check of every kind, across areas out of report order.
    pub fn sample() -> TargetReport {
        let mut fail = result(
            "jsonrpc.unknown-method",
            Level::Must,
            Status::Fail,
            Outcome::fail("error -32601", "a result"),
        );
        fail.transcript = vec![
            entry(
                1.2,
                Direction::Send,
                r#"{"jsonrpc":"2.0","id":1,"method":"nope"}"#,
            ),
            entry(
                3.5,
                Direction::Receive,
                r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            ),
        ];
        fail.stderr = vec!["starting".to_owned()];
        let mut expected = result(
            "tools.list-shape",
            Level::Must,
            Status::Fail,
            Outcome::fail("an object schema", "a string"),
        );
        expected.expected_failure = true;
        TargetReport {
            name: "demo".to_owned(),
            command: "demo-server --stdio".to_owned(),
            framing: "ndjson".to_owned(),
            profile: Profile::Generic,
            server_info: Some(json!({"name": "demo", "version": "1.2.3"})),
            eras: vec!["legacy".to_owned()],
            start_error: None,
            skipped: None,
            results: vec![
                result(
                    "zeta.custom",
                    Level::Must,
                    Status::Pass,
                    Outcome::pass("fine"),
                ),
                fail,
                result(
                    "lifecycle.ping-before-initialize",
                    Level::Must,
                    Status::Pass,
                    Outcome::pass(""),
                ),
                result(
                    "framing.stdin-eof-exit",
                    Level::Should,
                    Status::Warn,
                    Outcome::fail("exit within 2 s", "still running after 2 s"),
                ),
                result(
                    "framing.stderr-volume",
                    Level::Info,
                    Status::Info,
                    Outcome::Observed("12 lines, 345 bytes".to_owned()),
                ),
                expected,
                result(
                    "tools.call-shape",
                    Level::Must,
                    Status::Skip,
                    Outcome::Skip("the server has no tools".to_owned()),
                ),
            ],
            stale_expected_failures: vec!["lifecycle.second-initialize".to_owned()],
            findings: Vec::new(),
            coverage: Vec::new(),
            starts: crate::check::Starts::default(),
            duration: Duration::from_millis(1500),
        }
    }

    pub fn start_error() -> TargetReport {
        TargetReport {
            name: "broken".to_owned(),
            command: "no-such-server".to_owned(),
            framing: "ndjson".to_owned(),
            profile: Profile::Generic,
            server_info: None,
            eras: Vec::new(),
            start_error: Some("No such file or directory (os error 2)".to_owned()),
            skipped: None,
            results: Vec::new(),
            stale_expected_failures: Vec::new(),
            findings: Vec::new(),
            coverage: Vec::new(),
            starts: crate::check::Starts::default(),
            duration: Duration::ZERO,
        }
    }

    pub fn skipped() -> TargetReport {
        TargetReport {
            name: "remote".to_owned(),
            command: "https://example.invalid/mcp".to_owned(),
            framing: "ndjson".to_owned(),
            profile: Profile::Generic,
            server_info: None,
            eras: Vec::new(),
            start_error: None,
            skipped: Some("an HTTP server; only stdio servers are tested".to_owned()),
            results: Vec::new(),
            stale_expected_failures: Vec::new(),
            findings: Vec::new(),
            coverage: Vec::new(),
            starts: crate::check::Starts::default(),
            duration: Duration::ZERO,
        }
    }

    #[test]
    fn counts_split_expected_failures() {
        let c = Counts::of(&sample());
        assert_eq!(
            c,
            Counts {
                pass: 2,
                fail: 1,
                warn: 1,
                info: 1,
                skip: 1,
                expected_fail: 1,
                blocked: 0,
                not_applicable: 0,
            }
        );
        assert_eq!(c.total(), 7);
    }

    #[test]
    fn areas_in_report_order() {
        assert_eq!(
            areas(&sample()),
            vec!["lifecycle", "jsonrpc", "tools", "framing", "zeta"]
        );
    }

    #[test]
    fn start_error_fails_skip_does_not() {
        assert!(target_failed(&start_error()));
        assert!(!target_failed(&skipped()));
        assert!(target_failed(&sample()));
        assert!(any_failed(&[skipped(), start_error()]));
        assert!(!any_failed(&[skipped()]));
    }

    #[test]
    fn one_line_escapes_and_cuts() {
        assert_eq!(
            one_line("a\nb\r\tc\u{1b}[31m", 100),
            "a\\nb\\r\\tc\\u{1b}[31m"
        );
        assert_eq!(one_line("héllo wörld", 5), "héllo…");
        assert_eq!(one_line("abcde", 5), "abcde");
        // An escape is never cut in half.
        assert_eq!(one_line("abcd\n", 5), "abcd…");
    }

    #[test]
    fn server_label_parts() {
        assert_eq!(
            server_label(Some(&json!({"name": "s", "version": "1"}))),
            Some("s 1".to_owned())
        );
        assert_eq!(
            server_label(Some(&json!({"name": "s\u{1b}"}))),
            Some("s\\u{1b}".to_owned())
        );
        assert_eq!(server_label(Some(&json!({}))), None);
        assert_eq!(server_label(None), None);
    }

    #[test]
    fn eras_label_per_target() {
        let mut report = sample();
        assert_eq!(eras_text(&report).as_deref(), Some("legacy"));
        report.eras = vec!["legacy".to_owned(), "modern".to_owned()];
        assert_eq!(eras_text(&report).as_deref(), Some("legacy+modern"));
        report.eras.clear();
        assert_eq!(eras_text(&report).as_deref(), Some("none"));
        assert_eq!(eras_text(&start_error()), None);
        assert_eq!(eras_text(&skipped()), None);
    }

    #[test]
    fn tail_counts_left_out() {
        assert_eq!(tail(&[1, 2, 3], 2), (&[2, 3][..], 1));
        assert_eq!(tail(&[1], 2), (&[1][..], 0));
    }

    #[test]
    fn millis_rounds() {
        assert_eq!(millis(Duration::from_micros(1234)), 1.234);
        assert_eq!(round_ms(1.000_000_4), 1.0);
    }
}
