//! The default, human-readable report.
//!
//! Per target: a header line, the root causes, then what needs attention in full: FAIL, WARN
//! and BLOCKED checks by area, each followed by what was expected, what came back, the spec
//! reference, the last frames exchanged and the last stderr lines. Everything else is read at
//! a glance ([`glance`]): one line per area with its counts, one line per reason checks were
//! not applicable. `--verbose` lists every check by area instead, one line each, with the
//! observation of an INFO check and the reason of a SKIP. The report ends with a summary line
//! per target, naming its failing checks, and an overall verdict.
//!
//! Lines are wrapped to 100 columns where the text allows it (frames and stderr lines are cut
//! instead). Everything that came from the server is made printable first, so a server cannot
//! break the layout or send escape sequences to the terminal.

mod glance;

use std::fmt::Write as _;

use crate::transcript::TranscriptEntry;

use super::{
    areas, direction_name, eras_text, one_line, server_label, starts_text, tail, target_failed,
    Counts,
};
use crate::check::{CheckResult, Outcome, Status, TargetReport};

/// How the report is written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TextOptions {
    /// ANSI colours (see [`color_wanted`]).
    pub color: bool,
    /// Details for every check, not only for the ones that need attention: the observation and
    /// spec reference of passing checks, frames and stderr for all, and expected failures in
    /// full.
    pub verbose: bool,
}

/// Whether to colour the report: only on a terminal, and never when `NO_COLOR` is set to a
/// non-empty value (<https://no-color.org>).
pub fn color_wanted(is_terminal: bool) -> bool {
    let no_color = std::env::var_os("NO_COLOR").map(|v| v.to_string_lossy().into_owned());
    color_wanted_with(no_color, is_terminal)
}

/// [`color_wanted`] with the value of `NO_COLOR` passed in, so it can be tested without
/// touching the process environment.
pub fn color_wanted_with(no_color: Option<String>, is_terminal: bool) -> bool {
    let disabled = no_color.is_some_and(|v| !v.is_empty());
    is_terminal && !disabled
}

/// The report for all targets.
pub fn render(reports: &[TargetReport], opts: &TextOptions) -> String {
    let paint = Paint { color: opts.color };
    let mut out = String::new();
    for (i, report) in reports.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        target(&mut out, report, opts, paint);
    }
    summary(&mut out, reports, paint);
    out
}

/// Lines are wrapped to this many columns where the text allows.
const WIDTH: usize = 100;
/// Where details under a check line start (under the check id).
const DETAIL_INDENT: usize = 8;
/// Width of a detail label such as `expected: `.
const LABEL_WIDTH: usize = 10;
/// Frames shown per check (the last ones: what happened just before the verdict).
const FRAMES_SHOWN: usize = 20;
/// Stderr lines shown per check.
const STDERR_SHOWN: usize = 10;
/// Frame and stderr lines are cut to this many characters.
const LINE_CUT: usize = 200;
/// Expected, actual and observation texts are cut to this many characters.
const TEXT_CUT: usize = 600;

const GREEN: &str = "32";
const RED: &str = "31";
const YELLOW: &str = "33";
const CYAN: &str = "36";
const MAGENTA: &str = "35";
const BLUE: &str = "34";
const DIM: &str = "2";
const BOLD: &str = "1";
const BOLD_RED: &str = "1;31";
const BOLD_GREEN: &str = "1;32";

/// Applies ANSI styles, or nothing at all when colour is off.
#[derive(Debug, Clone, Copy)]
struct Paint {
    color: bool,
}

impl Paint {
    fn style(self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    /// A status token, left-aligned in `width` columns (padding outside the colour).
    fn status(self, token: &str, code: &str, width: usize) -> String {
        let pad = width.saturating_sub(token.chars().count());
        format!("{}{}", self.style(code, token), " ".repeat(pad))
    }
}

fn status_token(r: &CheckResult) -> (&'static str, &'static str) {
    match r.status {
        Status::Pass => ("PASS", GREEN),
        Status::Fail if r.expected_failure => ("FAIL (expected)", MAGENTA),
        Status::Fail => ("FAIL", RED),
        Status::Warn => ("WARN", YELLOW),
        Status::Info => ("INFO", CYAN),
        Status::Skip => ("SKIP", DIM),
        Status::Blocked => ("BLOCKED", BLUE),
        Status::NotApplicable => ("N/A", DIM),
    }
}

fn target(out: &mut String, report: &TargetReport, opts: &TextOptions, paint: Paint) {
    header(out, report, paint);
    if let Some(starts) = starts_text(report) {
        let _ = writeln!(out, "   {}", one_line(&starts, LINE_CUT));
    }
    if let Some(error) = &report.start_error {
        start_error(out, error, report.framing == "http", paint);
    }
    root_causes(out, report, paint);
    if let Some(reason) = &report.skipped {
        let text = format!(
            "Not tested: {}.",
            one_line(reason.trim_end_matches('.'), TEXT_CUT)
        );
        push_wrapped(
            out,
            &format!("  {}", paint.status("SKIP", DIM, 6)),
            8,
            8,
            &text,
        );
    }
    if opts.verbose {
        for area in areas(report) {
            let _ = writeln!(out, "\n{}", paint.style(BOLD, &one_line(area, LINE_CUT)));
            for r in report.results.iter().filter(|r| r.info.area() == area) {
                check(out, r, opts, paint);
            }
        }
    } else {
        glance::attention(out, report, opts, paint);
        glance::counts(out, report, paint);
    }
    coverage(out, report, paint);
    if !report.stale_expected_failures.is_empty() {
        let _ = writeln!(out, "\n{}", paint.style(BOLD, "expected failures"));
        for id in &report.stale_expected_failures {
            let id = one_line(id, LINE_CUT);
            let prefix = format!("  {}{id}  ", paint.status("FAIL", RED, 6));
            let width = DETAIL_INDENT + id.chars().count() + 2;
            let text = "stale expected failure: it no longer fails; remove it from the \
                        expected-failures file";
            push_wrapped(out, &prefix, width, DETAIL_INDENT, text);
        }
    }
}

/// Per era and capability: declared or not, and what its checks did, so a PASS never hides
/// "not tested"; the capabilities an era does not declare on one line.
fn coverage(out: &mut String, report: &TargetReport, paint: Paint) {
    if report.coverage.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n{}", paint.style(BOLD, "coverage"));
    for era in ["legacy", "modern"] {
        let of_era: Vec<_> = report.coverage.iter().filter(|c| c.era == era).collect();
        for c in of_era.iter().filter(|c| c.declared) {
            let head = format!("  {:<7}{:<20}", c.era, c.capability);
            push_wrapped(out, &head, 29, 29, &declared_text(c));
        }
        let missing: Vec<&str> = of_era
            .iter()
            .filter(|c| !c.declared)
            .map(|c| c.capability.as_str())
            .collect();
        if !missing.is_empty() {
            let head = format!("  {:<7}{:<20}", era, "not declared");
            let text = format!(
                "{}: their checks do not apply (capabilities.undeclared reports what their \
                 methods get)",
                missing.join(", ")
            );
            push_wrapped(out, &head, 29, 29, &text);
        }
    }
}

/// How a declared capability's checks went.
fn declared_text(c: &crate::check::Coverage) -> String {
    let verdicts: Vec<String> = [
        (c.passed, "passed"),
        (c.failed, "failed or warned"),
        (c.info, "info"),
    ]
    .iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| format!("{n} {what}"))
    .collect();
    let mut text = match c.ran {
        0 => "no check of it ran".to_owned(),
        n => format!(
            "{n} check{} ran: {}",
            plural(n, "", "s"),
            verdicts.join(", ")
        ),
    };
    if c.not_run > 0 {
        let reasons: Vec<String> = c.reasons.iter().map(|r| one_line(r, TEXT_CUT)).collect();
        text.push_str(&format!("; {} not run: {}", c.not_run, reasons.join("; ")));
    }
    text
}

/// Start error lines kept: its first line (what happened), then the last of the rest (the
/// server's stderr, whose last line is often the one that says why).
const START_ERROR_LINES: usize = 16;

/// Why the server could not be started: the first line wrapped, the stderr lines under it as
/// they are (each cut to one line, the last ones kept). Over HTTP the error says what to do
/// itself: there may be no command to check.
fn start_error(out: &mut String, error: &str, http: bool, paint: Paint) {
    let mut lines = error.lines();
    let first = lines.next().unwrap_or_default();
    // Over HTTP the harness may have started nothing (`--url` alone).
    let what = if http {
        "started or reached"
    } else {
        "started"
    };
    let text = format!(
        "The server could not be {what}: {}.",
        one_line(first.trim_end_matches(['.', ':', ' ']), TEXT_CUT)
    );
    push_wrapped(
        out,
        &format!("  {}", paint.status("ERROR", BOLD_RED, 7)),
        9,
        9,
        &text,
    );
    let rest: Vec<&str> = lines.collect();
    let (shown, left_out) = tail(&rest, START_ERROR_LINES);
    if left_out > 0 {
        let _ = writeln!(out, "           … {left_out} earlier lines");
    }
    for line in shown {
        let _ = writeln!(out, "           {}", one_line(line.trim_start(), LINE_CUT));
    }
    let closing = if http {
        "No checks ran."
    } else {
        "No checks ran; check the command, its arguments, its environment and its working \
         directory."
    };
    push_wrapped(out, "         ", 9, 9, closing);
}

/// The root causes found on the way, first: what could not be read, the check that owns it,
/// and how many checks it blocked.
fn root_causes(out: &mut String, report: &TargetReport, paint: Paint) {
    if report.findings.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n{}", paint.style(BOLD, "root cause"));
    for f in &report.findings {
        let owner = f.owner.as_str();
        let blocked = report
            .results
            .iter()
            .filter(|r| r.blocked_by.as_deref() == Some(owner))
            .count();
        let status = report
            .results
            .iter()
            .find(|r| r.info.id == owner)
            .map(status_token)
            .unwrap_or(("FAIL", RED));
        let mut text = format!("{}: {}", f.kind.rule(), one_line(&f.actual, TEXT_CUT));
        if blocked > 0 {
            let _ = write!(
                text,
                " ({blocked} {} blocked by it)",
                plural(blocked, "check", "checks")
            );
        }
        let prefix = format!("  {}  {owner}  ", paint.status(status.0, status.1, 4));
        let width = 2 + status.0.chars().count().max(4) + 2 + owner.chars().count() + 2;
        push_wrapped(out, &prefix, width, DETAIL_INDENT, &text);
    }
}

/// `== name: command  [framing …, profile …, era(s) …, server name version]`, the facts on a
/// line of their own when it would not fit.
fn header(out: &mut String, report: &TargetReport, paint: Paint) {
    let name = one_line(&report.name, LINE_CUT);
    let command = one_line(&report.command, 1000);
    let mut title = format!("== {name}");
    if command != name {
        let _ = write!(title, ": {command}");
    }
    let mut facts = format!(
        "framing {}, profile {}",
        one_line(&report.framing, LINE_CUT),
        report.profile.as_str()
    );
    if let Some(eras) = eras_text(report) {
        let word = if report.eras.len() == 1 {
            "era"
        } else {
            "eras"
        };
        let _ = write!(facts, ", {word} {eras}");
    }
    if let Some(server) = server_label(report.server_info.as_ref()) {
        let _ = write!(facts, ", server {server}");
    }
    let facts = format!("[{facts}]");
    if title.chars().count() + 2 + facts.chars().count() <= WIDTH {
        let _ = writeln!(out, "{}  {facts}", paint.style(BOLD, &title));
    } else {
        // A long command keeps its own line; the facts go under it.
        let _ = writeln!(out, "{}\n   {facts}", paint.style(BOLD, &title));
    }
}

fn check(out: &mut String, r: &CheckResult, opts: &TextOptions, paint: Paint) {
    let (token, code) = status_token(r);
    let id = one_line(&r.info.id, LINE_CUT);
    let plain = format!("  {token:<4}  {id}  ({})  ", r.info.level);
    let prefix = format!(
        "  {}  {id}  ({})  ",
        paint.status(token, code, 4),
        r.info.level
    );
    let description = one_line(&r.info.description, 1000);
    push_wrapped(
        out,
        &prefix,
        plain.chars().count(),
        DETAIL_INDENT,
        &description,
    );

    // A blocked check's evidence is its root cause's, shown there.
    let failed = matches!(r.status, Status::Fail | Status::Warn) && !r.expected_failure;
    let full = opts.verbose || failed;
    match r.status {
        Status::Fail | Status::Warn if full => outcome(out, &r.outcome),
        Status::Info | Status::Skip | Status::NotApplicable => outcome(out, &r.outcome),
        Status::Blocked => {
            if let Some(owner) = &r.blocked_by {
                label(out, "by:", owner);
            }
            outcome(out, &r.outcome);
        }
        Status::Pass if full => outcome(out, &r.outcome),
        _ => {}
    }
    if let Some(note) = &r.broke_session {
        label(out, "session:", note);
    }
    if !full {
        return;
    }
    label(out, "spec:", &r.info.spec);
    frames(out, &r.transcript);
    stderr(out, &r.stderr);
}

/// What the check concluded, as labelled detail lines.
fn outcome(out: &mut String, outcome: &Outcome) {
    match outcome {
        Outcome::Fail { expected, actual } => {
            label(out, "expected:", expected);
            label(out, "actual:", actual);
        }
        Outcome::Pass(text) | Outcome::Observed(text) => {
            if !text.is_empty() {
                label(out, "observed:", text);
            }
        }
        Outcome::Skip(text) => label(out, "skipped:", text),
        Outcome::Blocked(text) => label(out, "why:", text),
        Outcome::NotApplicable(text) => label(out, "n/a:", text),
    }
}

/// `        label:    text`, wrapped under the text.
fn label(out: &mut String, label: &str, text: &str) {
    let prefix = format!(
        "{}{label:<LABEL_WIDTH$}",
        " ".repeat(DETAIL_INDENT),
        label = label
    );
    let indent = DETAIL_INDENT + LABEL_WIDTH;
    push_wrapped(out, &prefix, indent, indent, &one_line(text, TEXT_CUT));
}

fn frames(out: &mut String, transcript: &[TranscriptEntry]) {
    if transcript.is_empty() {
        return;
    }
    let (shown, left_out) = tail(transcript, FRAMES_SHOWN);
    let pad = " ".repeat(DETAIL_INDENT);
    if left_out > 0 {
        let _ = writeln!(
            out,
            "{pad}frames (last {} of {}):",
            shown.len(),
            transcript.len()
        );
    } else {
        let _ = writeln!(out, "{pad}frames:");
    }
    for e in shown {
        let direction = direction_name(e.direction);
        let _ = writeln!(
            out,
            "{pad}  {:>9}  {direction:<7}  {}",
            format!("{:.1}ms", e.at_ms),
            one_line(&e.text, LINE_CUT)
        );
    }
}

fn stderr(out: &mut String, lines: &[String]) {
    if lines.is_empty() {
        return;
    }
    let (shown, left_out) = tail(lines, STDERR_SHOWN);
    let pad = " ".repeat(DETAIL_INDENT);
    if left_out > 0 {
        let _ = writeln!(
            out,
            "{pad}stderr (last {} of {} lines):",
            shown.len(),
            lines.len()
        );
    } else {
        let _ = writeln!(out, "{pad}stderr:");
    }
    for line in shown {
        let _ = writeln!(out, "{pad}  {}", one_line(line, LINE_CUT));
    }
}

fn summary(out: &mut String, reports: &[TargetReport], paint: Paint) {
    let _ = writeln!(out, "\n{}", paint.style(BOLD, "Summary"));
    let (mut passed, mut failed, mut not_started, mut skipped) = (0, 0, 0, 0);
    for report in reports {
        let name = one_line(&report.name, LINE_CUT);
        let (status, text) = if report.start_error.is_some() {
            not_started += 1;
            (
                paint.status("ERROR", BOLD_RED, 7),
                format!(
                    "{name}: could not be {}",
                    if report.framing == "http" {
                        "started or reached"
                    } else {
                        "started"
                    }
                ),
            )
        } else if report.skipped.is_some() {
            skipped += 1;
            (paint.status("SKIP", DIM, 7), format!("{name}: not tested"))
        } else {
            let verdict = if target_failed(report) {
                failed += 1;
                paint.status("FAIL", RED, 7)
            } else {
                passed += 1;
                paint.status("PASS", GREEN, 7)
            };
            (
                verdict,
                format!(
                    "{name} ({:.2}s): {}",
                    report.duration.as_secs_f64(),
                    counts_text(report)
                ),
            )
        };
        // Counts are joined with no-break spaces so that "1 expected failure" stays on one line.
        let mut lines = String::new();
        push_wrapped(&mut lines, &format!("  {status}"), 9, 9, &text);
        out.push_str(&lines.replace(NBSP, " "));
        for line in super::named_failures(report).lines() {
            push_wrapped(out, "         ", 9, 11, &one_line(line, TEXT_CUT));
        }
    }
    let verdict = if super::any_failed(reports) {
        paint.style(BOLD_RED, "FAIL")
    } else {
        paint.style(BOLD_GREEN, "PASS")
    };
    let mut text = format!(
        "{} {}: {passed} passed, {failed} failed",
        reports.len(),
        plural(reports.len(), "target", "targets")
    );
    if not_started > 0 {
        let _ = write!(text, ", {not_started} not started");
    }
    if skipped > 0 {
        let _ = write!(text, ", {skipped} skipped");
    }
    let _ = writeln!(out, "Overall: {verdict} ({text})");
}

/// A no-break space: [`wrap`] breaks only at plain spaces.
const NBSP: char = '\u{a0}';

/// `N passed, N failed, N warnings, N info, N skipped`, then expected and stale failures if any;
/// each count with its words joined by [`NBSP`].
fn counts_text(report: &TargetReport) -> String {
    let c = Counts::of(report);
    let stale = report.stale_expected_failures.len();
    let mut items = vec![
        format!("{} passed", c.pass),
        format!("{} failed", c.fail),
        format!("{} {}", c.warn, plural(c.warn, "warning", "warnings")),
        format!("{} info", c.info),
        format!("{} skipped", c.skip),
    ];
    if c.blocked > 0 {
        items.push(format!("{} blocked", c.blocked));
    }
    if c.not_applicable > 0 {
        items.push(format!("{} not applicable", c.not_applicable));
    }
    if c.expected_fail > 0 {
        items.push(format!(
            "{} {}",
            c.expected_fail,
            plural(c.expected_fail, "expected failure", "expected failures")
        ));
    }
    if stale > 0 {
        items.push(format!(
            "{stale} {}",
            plural(stale, "stale expected failure", "stale expected failures")
        ));
    }
    items
        .iter()
        .map(|item| item.replace(' ', &NBSP.to_string()))
        .collect::<Vec<_>>()
        .join(", ")
}

fn plural<'a>(n: usize, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 {
        one
    } else {
        many
    }
}

/// Writes `prefix` (which may hold colour codes; `prefix_width` is its visible width) and
/// `text` word-wrapped to [`WIDTH`], continuation lines indented by `indent`.
fn push_wrapped(out: &mut String, prefix: &str, prefix_width: usize, indent: usize, text: &str) {
    let lines = wrap(
        text,
        WIDTH.saturating_sub(prefix_width),
        WIDTH.saturating_sub(indent),
    );
    for (i, line) in lines.iter().enumerate() {
        if i == 0 {
            out.push_str(prefix);
        } else {
            out.push_str(&" ".repeat(indent));
        }
        out.push_str(line);
        out.push('\n');
    }
}

/// Narrowest a wrapped line is made, however deep the indent (a long id must not turn the
/// description into a column of single words).
const MIN_WIDTH: usize = 30;

/// Greedy word wrap at single spaces: `first` columns for the first line, `next` for the
/// others. Runs of spaces are kept; a word longer than a line is split.
fn wrap(text: &str, first: usize, next: usize) -> Vec<String> {
    let next = next.max(MIN_WIDTH);
    let mut width = first.max(MIN_WIDTH);
    let mut lines = Vec::new();
    let mut line = String::new();
    let mut len = 0;
    for (i, word) in text.split(' ').enumerate() {
        let word_len = word.chars().count();
        if i > 0 {
            if len + 1 + word_len <= width {
                line.push(' ');
                line.push_str(word);
                len += 1 + word_len;
                continue;
            }
            lines.push(std::mem::take(&mut line));
            width = next;
        }
        let mut rest = word;
        while rest.chars().count() > width {
            let cut = rest
                .char_indices()
                .nth(width)
                .map_or(rest.len(), |(at, _)| at);
            lines.push(rest[..cut].to_owned());
            rest = &rest[cut..];
            width = next;
        }
        line.push_str(rest);
        len = rest.chars().count();
    }
    lines.push(line);
    lines
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::transcript::Direction;

    use super::*;
    use crate::check::{Level, Outcome, Status};
    use crate::report::tests::{entry, result, sample, skipped, start_error};

    fn plain() -> TextOptions {
        TextOptions {
            color: false,
            verbose: false,
        }
    }

    #[test]
    fn small_report_exact() {
        let text = render(&[sample()], &plain());
        let expected = "\
== demo: demo-server --stdio  [framing ndjson, profile generic, era legacy, server demo 1.2.3]

jsonrpc
  FAIL  jsonrpc.unknown-method  (MUST)  Description of jsonrpc.unknown-method
        expected: error -32601
        actual:   a result
        spec:     Spec of jsonrpc.unknown-method
        frames:
              1.2ms  send     {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"nope\"}
              3.5ms  receive  {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}
        stderr:
          starting

framing
  WARN  framing.stdin-eof-exit  (SHOULD)  Description of framing.stdin-eof-exit
        expected: exit within 2 s
        actual:   still running after 2 s
        spec:     Spec of framing.stdin-eof-exit

checks by area (--verbose lists each)
  lifecycle     1 passed
  jsonrpc       1 failed
  tools         1 skipped, 1 expected failure (tools.list-shape)
  framing       1 warning, 1 info
  zeta          1 passed

expected failures
  FAIL  lifecycle.second-initialize  stale expected failure: it no longer fails; remove it from the
        expected-failures file

Summary
  FAIL   demo (1.50s): 2 passed, 1 failed, 1 warning, 1 info, 1 skipped, 1 expected failure,
         1 stale expected failure
         failed: jsonrpc.unknown-method
         warnings: framing.stdin-eof-exit
         stale expected failures: lifecycle.second-initialize
Overall: FAIL (1 target: 0 passed, 1 failed)
";
        assert_eq!(text, expected, "got:\n{text}");
    }

    #[test]
    fn start_error_and_skipped_targets() {
        let text = render(&[start_error(), skipped()], &plain());
        let expected = "\
== broken: no-such-server  [framing ndjson, profile generic]
  ERROR  The server could not be started: No such file or directory (os error 2).
         No checks ran; check the command, its arguments, its environment and its working directory.

== remote: https://example.invalid/mcp  [framing ndjson, profile generic]
  SKIP  Not tested: an HTTP server; only stdio servers are tested.

Summary
  ERROR  broken: could not be started
  SKIP   remote: not tested
Overall: FAIL (2 targets: 0 passed, 0 failed, 1 not started, 1 skipped)
";
        assert_eq!(text, expected, "got:\n{text}");
    }

    #[test]
    fn passing_target_and_name_equal_to_command() {
        let mut report = sample();
        report.name = report.command.clone();
        report.server_info = None;
        report.results.retain(|r| r.status == Status::Pass);
        report.stale_expected_failures.clear();
        let text = render(&[report], &plain());
        let expected = "\
== demo-server --stdio  [framing ndjson, profile generic, era legacy]

checks by area (--verbose lists each)
  lifecycle     1 passed
  zeta          1 passed

Summary
  PASS   demo-server --stdio (1.50s): 2 passed, 0 failed, 0 warnings, 0 info, 0 skipped
Overall: PASS (1 target: 1 passed, 0 failed)
";
        assert_eq!(text, expected, "got:\n{text}");
    }

    #[test]
    fn long_command_puts_facts_on_their_own_line() {
        let mut report = skipped();
        report.command = format!("server {}", "--flag ".repeat(12).trim_end());
        let text = render(&[report.clone()], &plain());
        let expected = format!(
            "== remote: {}\n   [framing ndjson, profile generic]\n",
            report.command
        );
        assert!(text.starts_with(&expected), "got:\n{text}");
    }

    #[test]
    fn verbose_shows_passes_and_expected_failures() {
        let text = render(
            &[sample()],
            &TextOptions {
                color: false,
                verbose: true,
            },
        );
        assert!(text.contains(
            "  PASS  zeta.custom  (MUST)  Description of zeta.custom\n        \
             observed: fine\n        spec:     Spec of zeta.custom\n"
        ));
        assert!(text.contains(
            "  FAIL (expected)  tools.list-shape  (MUST)  Description of tools.list-shape\n        \
             expected: an object schema\n        actual:   a string\n"
        ));
        // An empty observation prints no line.
        assert!(text.contains(
            "(MUST)  Description of lifecycle.ping-before-initialize\n        spec:     Spec of"
        ));
    }

    #[test]
    fn no_ansi_without_color() {
        let text = render(&[sample(), start_error(), skipped()], &plain());
        assert!(!text.contains('\x1b'));
    }

    #[test]
    fn colors_when_enabled() {
        let opts = TextOptions {
            color: true,
            verbose: true,
        };
        let text = render(&[sample(), start_error(), skipped()], &opts);
        assert!(text.contains("  \x1b[32mPASS\x1b[0m  lifecycle.ping-before-initialize  (MUST)"));
        assert!(text.contains("  \x1b[31mFAIL\x1b[0m  jsonrpc.unknown-method"));
        assert!(text.contains("  \x1b[33mWARN\x1b[0m  framing.stdin-eof-exit"));
        assert!(text.contains("  \x1b[36mINFO\x1b[0m  framing.stderr-volume"));
        assert!(text.contains("  \x1b[2mSKIP\x1b[0m  tools.call-shape"));
        assert!(text.contains("  \x1b[35mFAIL (expected)\x1b[0m  tools.list-shape"));
        assert!(text.contains("  \x1b[1;31mERROR\x1b[0m  The server could not be started"));
        assert!(text.contains("Overall: \x1b[1;31mFAIL\x1b[0m (3 targets"));
        // The layout is the same as without colour once the codes are removed.
        let stripped = text
            .replace("\x1b[0m", "")
            .replace("\x1b[1;31m", "")
            .replace("\x1b[1;32m", "")
            .replace("\x1b[1m", "")
            .replace("\x1b[2m", "")
            .replace("\x1b[31m", "")
            .replace("\x1b[32m", "")
            .replace("\x1b[33m", "")
            .replace("\x1b[35m", "")
            .replace("\x1b[36m", "");
        let plain_verbose = TextOptions {
            verbose: true,
            ..plain()
        };
        assert_eq!(
            stripped,
            render(&[sample(), start_error(), skipped()], &plain_verbose)
        );
    }

    #[test]
    fn no_color_env_value() {
        assert!(color_wanted_with(None, true));
        assert!(!color_wanted_with(None, false));
        assert!(!color_wanted_with(Some("1".to_owned()), true));
        assert!(!color_wanted_with(Some("anything".to_owned()), false));
        // An empty NO_COLOR does not disable colour (no-color.org).
        assert!(color_wanted_with(Some(String::new()), true));
    }

    #[test]
    fn frames_and_stderr_are_cut() {
        let mut r = result(
            "framing.flood",
            Level::Must,
            Status::Fail,
            Outcome::fail("quiet", "loud"),
        );
        r.transcript = (0..25)
            .map(|i| entry(f64::from(i), Direction::Receive, &format!("frame {i}")))
            .collect();
        r.transcript.push(entry(
            99.0,
            Direction::Event,
            &format!("{}\n\u{1b}[2J", "x".repeat(300)),
        ));
        r.stderr = (0..15).map(|i| format!("log {i}")).collect();
        let mut report = sample();
        report.results = vec![r];
        report.stale_expected_failures.clear();
        let text = render(&[report], &plain());
        assert!(text.contains("        frames (last 20 of 26):\n"));
        assert!(!text.contains("frame 5\n"));
        assert!(text.contains("\n              6.0ms  receive  frame 6\n"));
        assert!(text.contains(&format!(
            "\n             99.0ms  event    {}…\n",
            "x".repeat(200)
        )));
        assert!(!text.contains('\x1b'));
        assert!(text.contains("        stderr (last 10 of 15 lines):\n          log 5\n"));
        assert!(!text.contains("log 4\n"));
        assert!(text.contains("          log 14\n"));
    }

    #[test]
    fn long_texts_wrap_at_100_columns() {
        let words = "word ".repeat(60);
        let mut r = result(
            "tools.long",
            Level::Should,
            Status::Warn,
            Outcome::fail(words.trim_end(), "x".repeat(250)),
        );
        r.info.description = words.trim_end().to_owned();
        r.duration = Duration::from_millis(1);
        let mut report = sample();
        report.results = vec![r];
        let text = render(&[report], &plain());
        for line in text.lines() {
            assert!(line.chars().count() <= 100, "too long: {line:?}");
        }
        // The 250-character actual is split across lines without losing a character.
        let actual: String = text
            .lines()
            .skip_while(|l| !l.starts_with("        actual:"))
            .take_while(|l| !l.starts_with("        spec:"))
            .map(|l| l[18..].to_owned())
            .collect();
        assert_eq!(actual, "x".repeat(250));
    }

    #[test]
    fn root_causes_come_first_and_blocked_checks_name_their_owner() {
        use crate::mismatch::{Finding, Kind};
        let mut report = sample();
        report.stale_expected_failures.clear();
        report.results = vec![
            result(
                "framing.no-embedded-newlines",
                Level::Must,
                Status::Fail,
                Outcome::fail("each message on one line", "spread over 5 lines"),
            ),
            {
                let mut r = result(
                    "lifecycle.ping",
                    Level::Must,
                    Status::Blocked,
                    Outcome::Blocked("the reply came spread over 5 lines".to_owned()),
                );
                r.blocked_by = Some("framing.no-embedded-newlines".to_owned());
                r
            },
        ];
        report.findings = vec![Finding {
            kind: Kind::SpreadOverLines,
            owner: "framing.no-embedded-newlines".to_owned(),
            seen_in: "era.detect".to_owned(),
            actual: "one JSON message spread over 5 lines".to_owned(),
            frames: Vec::new(),
            count: 3,
        }];
        report.starts = crate::check::Starts {
            count: 3,
            answered: vec![
                Duration::from_millis(900),
                Duration::from_millis(1200),
                Duration::from_millis(1000),
            ],
        };
        let text = render(&[report], &plain());
        let expected = "\
== demo: demo-server --stdio  [framing ndjson, profile generic, era legacy, server demo 1.2.3]
   3 server starts: the first answered in 0.90s, median 1.00s, slowest 1.20s

root cause
  FAIL  framing.no-embedded-newlines  each message on one line (no embedded newlines): one JSON
        message spread over 5 lines (1 check blocked by it)

framing
  FAIL  framing.no-embedded-newlines  (MUST)  Description of framing.no-embedded-newlines
        expected: each message on one line
        actual:   spread over 5 lines
        spec:     Spec of framing.no-embedded-newlines

blocked
  BLOCKED  lifecycle.ping  (MUST)  Description of lifecycle.ping
        by:       framing.no-embedded-newlines
        why:      the reply came spread over 5 lines

checks by area (--verbose lists each)
  lifecycle     1 blocked
  framing       1 failed

Summary
  FAIL   demo (1.50s): 0 passed, 1 failed, 0 warnings, 0 info, 0 skipped, 1 blocked
         failed: framing.no-embedded-newlines
Overall: FAIL (1 target: 0 passed, 1 failed)
";
        assert_eq!(text, expected, "got:\n{text}");
    }

    #[test]
    fn a_start_error_keeps_its_last_stderr_lines_whole() {
        let mut report = start_error();
        let mut error = "the server exited before answering initialize (it exited with status 1); \
                         its last stderr lines:"
            .to_owned();
        for i in 0..20 {
            error.push_str(&format!("\n  line {i}"));
        }
        error.push_str("\n  ModuleNotFoundError: No module named 'mcp'");
        report.start_error = Some(error);
        let text = render(&[report], &plain());
        assert!(
            text.contains("           ModuleNotFoundError: No module named 'mcp'\n"),
            "{text}"
        );
        assert!(text.contains("           … 5 earlier lines\n"), "{text}");
        assert!(
            !text.contains("line 4\n") && text.contains("line 5\n"),
            "{text}"
        );
    }

    #[test]
    fn wrap_keeps_text() {
        assert_eq!(wrap("", 40, 40), vec![String::new()]);
        let text = "alpha beta  gamma delta epsilon zeta eta theta iota kappa lambda";
        let lines = wrap(text, 30, 35);
        assert_eq!(
            lines,
            vec![
                "alpha beta  gamma delta",
                "epsilon zeta eta theta iota kappa",
                "lambda"
            ]
        );
        assert_eq!(lines.join(" "), text);
    }
}
