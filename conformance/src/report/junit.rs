//! JUnit XML (`--junit FILE`) for CI systems.
//!
//! One `<testsuite>` per target and one `<testcase>` per check, classed `<target>.<area>` so CI
//! views group them like the text report. An unexpected FAIL is a `<failure>` (expected,
//! actual, spec reference, the last frames and stderr lines); a WARN passes with its warning in
//! `<system-out>`, as does an INFO observation; a SKIP or an expected failure is `<skipped>`.
//! A stale expected failure is a failing testcase of its own (`<target>.expected-failures`), a
//! server that could not be started a single failing testcase `start`, and a target that was
//! not tested a single skipped one. Suite properties: `command`, `framing`, `profile`, `eras`
//! (`legacy`, `modern`, `legacy+modern` or `none`; for a tested target) and `serverInfo`.

use std::fmt::Write as _;
use std::time::Duration;

use super::{direction_name, eras_text, one_line, server_label, starts_text, tail, Counts};
use crate::check::{CheckResult, Outcome, Status, TargetReport};

/// Frames included in a failure (the last ones).
const FRAMES_SHOWN: usize = 20;
/// Stderr lines included in a failure.
const STDERR_SHOWN: usize = 10;
/// A `message` attribute is cut to this many characters: CI systems show it on one line.
const MESSAGE_CUT: usize = 300;
/// A frame or stderr line in a failure body is cut to this many characters.
const LINE_CUT: usize = 1000;

/// The JUnit XML document for all targets.
pub fn render(reports: &[TargetReport]) -> String {
    let suites: Vec<Suite> = reports.iter().map(suite).collect();
    let tests: usize = suites.iter().map(|s| s.tests).sum();
    let failures: usize = suites.iter().map(|s| s.failures).sum();
    let skipped: usize = suites.iter().map(|s| s.skipped).sum();
    let time: Duration = reports.iter().map(|r| r.duration).sum();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"mcp-conformance\" tests=\"{tests}\" failures=\"{failures}\" \
         errors=\"0\" skipped=\"{skipped}\" time=\"{}\">",
        seconds(time)
    );
    for s in suites {
        out.push_str(&s.xml);
    }
    out.push_str("</testsuites>\n");
    out
}

/// One target's `<testsuite>` and its counts for the totals.
struct Suite {
    tests: usize,
    failures: usize,
    skipped: usize,
    xml: String,
}

fn suite(report: &TargetReport) -> Suite {
    let name = &report.name;
    let mut cases = String::new();
    let (mut tests, mut failures, mut skipped) = (0, 0, 0);
    if let Some(error) = &report.start_error {
        tests += 1;
        failures += 1;
        let message = format!("the server could not be started: {error}");
        let _ = writeln!(
            cases,
            "    <testcase classname=\"{}\" name=\"start\" time=\"{}\">\n      \
             <failure message=\"{}\" type=\"start\">{}</failure>\n    </testcase>",
            attr(name),
            seconds(report.duration),
            attr(&one_line(&message, MESSAGE_CUT)),
            text(&format!(
                "{message}\ncommand: {}\nNo checks ran.",
                report.command
            ))
        );
    }
    if let Some(reason) = &report.skipped {
        tests += 1;
        skipped += 1;
        let _ = writeln!(
            cases,
            "    <testcase classname=\"{}\" name=\"start\" time=\"{}\">\n      \
             <skipped message=\"{}\"/>\n    </testcase>",
            attr(name),
            seconds(report.duration),
            attr(&one_line(&format!("not tested: {reason}"), MESSAGE_CUT))
        );
    }
    let counts = Counts::of(report);
    tests += counts.total();
    failures += counts.fail;
    skipped += counts.skip + counts.expected_fail + counts.blocked;
    for r in &report.results {
        case(&mut cases, name, r);
    }
    for id in &report.stale_expected_failures {
        tests += 1;
        failures += 1;
        let _ = writeln!(
            cases,
            "    <testcase classname=\"{}.expected-failures\" name=\"{}\" time=\"0.000\">\n      \
             <failure message=\"stale expected failure: it no longer fails; remove it from the \
             expected-failures file\" type=\"stale\"/>\n    </testcase>",
            attr(name),
            attr(id)
        );
    }

    let mut xml = String::new();
    let _ = writeln!(
        xml,
        "  <testsuite name=\"{}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\" \
         skipped=\"{skipped}\" time=\"{}\">",
        attr(name),
        seconds(report.duration)
    );
    xml.push_str(&properties(report, counts.blocked));
    xml.push_str(&cases);
    xml.push_str("  </testsuite>\n");
    Suite {
        tests,
        failures,
        skipped,
        xml,
    }
}

/// The suite's `<properties>`: how the target was run and what the run found of it.
fn properties(report: &TargetReport, blocked: usize) -> String {
    let mut properties = vec![
        ("command", report.command.clone()),
        ("framing", report.framing.clone()),
        ("profile", report.profile.as_str().to_owned()),
    ];
    if let Some(eras) = eras_text(report) {
        properties.push(("eras", eras));
    }
    if let Some(server) = server_label(report.server_info.as_ref()) {
        properties.push(("serverInfo", server));
    }
    if blocked > 0 {
        properties.push(("blocked", blocked.to_string()));
    }
    if let Some(starts) = starts_text(report) {
        properties.push(("starts", starts));
    }
    let mut xml = String::from("    <properties>\n");
    for (key, value) in properties {
        let _ = writeln!(
            xml,
            "      <property name=\"{key}\" value=\"{}\"/>",
            attr(&value)
        );
    }
    xml.push_str("    </properties>\n");
    xml
}

fn case(out: &mut String, target: &str, r: &CheckResult) {
    let open = format!(
        "    <testcase classname=\"{}.{}\" name=\"{}\" time=\"{}\"",
        attr(target),
        attr(r.info.area()),
        attr(&r.info.id),
        seconds(r.duration)
    );
    let inner = match r.status {
        Status::Pass => None,
        Status::Fail if r.expected_failure => Some(format!(
            "<skipped message=\"{}\"/>",
            attr(&one_line(
                &format!(
                    "expected failure (listed in the expected-failures file): {}",
                    summary(&r.outcome)
                ),
                MESSAGE_CUT
            ))
        )),
        Status::Fail => Some(format!(
            "<failure message=\"{}\" type=\"{}\">{}</failure>",
            attr(&one_line(&summary(&r.outcome), MESSAGE_CUT)),
            r.info.level,
            text(&details(r))
        )),
        Status::Warn => Some(format!(
            "<system-out>{}</system-out>",
            text(&format!(
                "WARN: a SHOULD requirement is not met (a failure under --profile strict)\n{}",
                details(r)
            ))
        )),
        Status::Info => Some(format!(
            "<system-out>{}</system-out>",
            text(&format!("INFO: {}", summary(&r.outcome)))
        )),
        Status::Skip => Some(format!(
            "<skipped message=\"{}\"/>",
            attr(&one_line(&summary(&r.outcome), MESSAGE_CUT))
        )),
        Status::NotApplicable => Some(format!(
            "<skipped message=\"{}\"/>",
            attr(&one_line(
                &format!("NOT APPLICABLE: {}", summary(&r.outcome)),
                MESSAGE_CUT
            ))
        )),
        Status::Blocked => Some(format!(
            "<skipped message=\"{}\"/>",
            attr(&one_line(
                &format!(
                    "BLOCKED by {}: {}",
                    r.blocked_by.as_deref().unwrap_or("?"),
                    summary(&r.outcome)
                ),
                MESSAGE_CUT
            ))
        )),
    };
    match inner {
        None => {
            let _ = writeln!(out, "{open}/>");
        }
        Some(inner) => {
            let _ = writeln!(out, "{open}>\n      {inner}\n    </testcase>");
        }
    }
}

/// What a check concluded, in one phrase.
fn summary(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Fail { expected, actual } => format!("expected: {expected}; actual: {actual}"),
        Outcome::Pass(text)
        | Outcome::Observed(text)
        | Outcome::Skip(text)
        | Outcome::Blocked(text)
        | Outcome::NotApplicable(text) => text.clone(),
    }
}

/// The body of a failure or warning: expected, actual, spec, frames, stderr.
fn details(r: &CheckResult) -> String {
    let mut s = match &r.outcome {
        Outcome::Fail { expected, actual } => format!("expected: {expected}\nactual: {actual}\n"),
        other => format!("{}\n", summary(other)),
    };
    let _ = writeln!(s, "spec: {}", r.info.spec);
    if !r.transcript.is_empty() {
        let (shown, left_out) = tail(&r.transcript, FRAMES_SHOWN);
        if left_out > 0 {
            let _ = writeln!(
                s,
                "frames (last {} of {}):",
                shown.len(),
                r.transcript.len()
            );
        } else {
            s.push_str("frames:\n");
        }
        for e in shown {
            let direction = direction_name(e.direction);
            let _ = writeln!(
                s,
                "  {:>9}  {direction:<7}  {}",
                format!("{:.1}ms", e.at_ms),
                one_line(&e.text, LINE_CUT)
            );
        }
    }
    if !r.stderr.is_empty() {
        let (shown, left_out) = tail(&r.stderr, STDERR_SHOWN);
        if left_out > 0 {
            let _ = writeln!(
                s,
                "stderr (last {} of {} lines):",
                shown.len(),
                r.stderr.len()
            );
        } else {
            s.push_str("stderr:\n");
        }
        for line in shown {
            let _ = writeln!(s, "  {}", one_line(line, LINE_CUT));
        }
    }
    s.truncate(s.trim_end().len());
    s
}

/// Seconds with millisecond precision, as JUnit's `time` wants.
fn seconds(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64())
}

/// Whether XML 1.0 allows the character at all (even escaped, the others are not allowed).
fn xml_char(c: char) -> bool {
    matches!(c,
        '\t' | '\n' | '\r'
        | '\u{20}'..='\u{D7FF}'
        | '\u{E000}'..='\u{FFFD}'
        | '\u{10000}'..='\u{10FFFF}')
}

/// Escapes element text (`&`, `<`, `>`; quotes need no escape there and JSON frames stay
/// readable); characters XML 1.0 does not allow are dropped. `\r` is written as a reference so
/// parsers do not turn it into `\n`.
fn text(s: &str) -> String {
    escape(s, false)
}

/// Escapes an attribute value (`&`, `<`, `>`, `"`, `'`); tab, newline and CR are written as
/// references so parsers keep them instead of normalizing them to spaces.
fn attr(s: &str) -> String {
    escape(s, true)
}

fn escape(s: &str, attribute: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' if attribute => out.push_str("&quot;"),
            '\'' if attribute => out.push_str("&apos;"),
            '\r' => out.push_str("&#13;"),
            '\n' if attribute => out.push_str("&#10;"),
            '\t' if attribute => out.push_str("&#9;"),
            c if xml_char(c) => out.push(c),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::transcript::Direction;

    use super::*;
    use crate::check::{Level, Outcome, Status};
    use crate::report::tests::{entry, result, sample, skipped, start_error};

    /// A small XML checker: balanced and properly nested tags, one root, quoted attributes,
    /// only known entities and character references, no raw `<`/`&` in text or attributes, and
    /// no character XML 1.0 forbids.
    fn well_formed(xml: &str) -> Result<(), String> {
        if let Some(c) = xml.chars().find(|c| !xml_char(*c)) {
            return Err(format!("forbidden character {c:?}"));
        }
        let body = xml
            .strip_prefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
            .ok_or("no XML declaration")?;
        let mut stack: Vec<String> = Vec::new();
        let mut roots = 0;
        let mut rest = body;
        while let Some(lt) = rest.find('<') {
            check_text(&rest[..lt])?;
            if stack.is_empty() && !rest[..lt].trim().is_empty() {
                return Err("text outside the root".into());
            }
            let gt = rest[lt..].find('>').ok_or("unclosed tag")? + lt;
            let tag = &rest[lt + 1..gt];
            rest = &rest[gt + 1..];
            if let Some(name) = tag.strip_prefix('/') {
                let open = stack.pop().ok_or(format!("stray </{name}>"))?;
                if open != name {
                    return Err(format!("<{open}> closed by </{name}>"));
                }
                continue;
            }
            let self_closing = tag.ends_with('/');
            let tag = tag.trim_end_matches('/');
            let name_end = tag.find(char::is_whitespace).unwrap_or(tag.len());
            let name = &tag[..name_end];
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
                return Err(format!("bad tag name {name:?}"));
            }
            check_attributes(&tag[name_end..])?;
            if stack.is_empty() {
                roots += 1;
            }
            if !self_closing {
                stack.push(name.to_owned());
            }
        }
        check_text(rest)?;
        if !rest.trim().is_empty() {
            return Err("text after the root".into());
        }
        if !stack.is_empty() {
            return Err(format!("unclosed {stack:?}"));
        }
        if roots != 1 {
            return Err(format!("{roots} root elements"));
        }
        Ok(())
    }

    fn check_text(s: &str) -> Result<(), String> {
        if s.contains('>') {
            return Err(format!("raw > in {s:?}"));
        }
        check_entities(s)
    }

    fn check_entities(s: &str) -> Result<(), String> {
        let mut rest = s;
        while let Some(amp) = rest.find('&') {
            let after = &rest[amp + 1..];
            let semi = after.find(';').ok_or(format!("bare & in {s:?}"))?;
            let entity = &after[..semi];
            let ok = matches!(entity, "amp" | "lt" | "gt" | "quot" | "apos")
                || entity
                    .strip_prefix('#')
                    .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
            if !ok {
                return Err(format!("bad entity &{entity};"));
            }
            rest = &after[semi + 1..];
        }
        Ok(())
    }

    fn check_attributes(s: &str) -> Result<(), String> {
        let mut rest = s.trim_start();
        while !rest.is_empty() {
            let eq = rest.find("=\"").ok_or(format!("bad attribute in {s:?}"))?;
            let name = &rest[..eq];
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric()) {
                return Err(format!("bad attribute name {name:?}"));
            }
            let value_start = eq + 2;
            let end = rest[value_start..]
                .find('"')
                .ok_or("unterminated attribute")?
                + value_start;
            let value = &rest[value_start..end];
            if value.contains('<') {
                return Err(format!("raw < in attribute {value:?}"));
            }
            check_entities(value)?;
            rest = rest[end + 1..].trim_start();
        }
        Ok(())
    }

    #[test]
    fn checker_rejects_bad_xml() {
        let decl = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
        assert!(well_formed(&format!("{decl}<a><b></a></b>")).is_err());
        assert!(well_formed(&format!("{decl}<a>x & y</a>")).is_err());
        assert!(well_formed(&format!("{decl}<a b=\"<\"/>")).is_err());
        assert!(well_formed(&format!("{decl}<a>\u{1}</a>")).is_err());
        assert!(well_formed(&format!("{decl}<a/><b/>")).is_err());
        assert!(well_formed(&format!("{decl}<a>&lt;&#10;</a>")).is_ok());
    }

    #[test]
    fn small_report_exact() {
        let xml = render(&[sample()]);
        let expected = r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="mcp-conformance" tests="8" failures="2" errors="0" skipped="2" time="1.500">
  <testsuite name="demo" tests="8" failures="2" errors="0" skipped="2" time="1.500">
    <properties>
      <property name="command" value="demo-server --stdio"/>
      <property name="framing" value="ndjson"/>
      <property name="profile" value="generic"/>
      <property name="eras" value="legacy"/>
      <property name="serverInfo" value="demo 1.2.3"/>
    </properties>
    <testcase classname="demo.zeta" name="zeta.custom" time="0.005"/>
    <testcase classname="demo.jsonrpc" name="jsonrpc.unknown-method" time="0.005">
      <failure message="expected: error -32601; actual: a result" type="MUST">expected: error -32601
actual: a result
spec: Spec of jsonrpc.unknown-method
frames:
      1.2ms  send     {"jsonrpc":"2.0","id":1,"method":"nope"}
      3.5ms  receive  {"jsonrpc":"2.0","id":1,"result":{}}
stderr:
  starting</failure>
    </testcase>
    <testcase classname="demo.lifecycle" name="lifecycle.ping-before-initialize" time="0.005"/>
    <testcase classname="demo.framing" name="framing.stdin-eof-exit" time="0.005">
      <system-out>WARN: a SHOULD requirement is not met (a failure under --profile strict)
expected: exit within 2 s
actual: still running after 2 s
spec: Spec of framing.stdin-eof-exit</system-out>
    </testcase>
    <testcase classname="demo.framing" name="framing.stderr-volume" time="0.005">
      <system-out>INFO: 12 lines, 345 bytes</system-out>
    </testcase>
    <testcase classname="demo.tools" name="tools.list-shape" time="0.005">
      <skipped message="expected failure (listed in the expected-failures file): expected: an object schema; actual: a string"/>
    </testcase>
    <testcase classname="demo.tools" name="tools.call-shape" time="0.005">
      <skipped message="the server has no tools"/>
    </testcase>
    <testcase classname="demo.expected-failures" name="lifecycle.second-initialize" time="0.000">
      <failure message="stale expected failure: it no longer fails; remove it from the expected-failures file" type="stale"/>
    </testcase>
  </testsuite>
</testsuites>
"#;
        assert_eq!(xml, expected, "got:\n{xml}");
        well_formed(&xml).unwrap();
    }

    #[test]
    fn start_error_is_one_failing_case_and_skip_one_skipped() {
        let xml = render(&[start_error(), skipped()]);
        well_formed(&xml).unwrap();
        assert!(xml.contains(
            "<testsuites name=\"mcp-conformance\" tests=\"2\" failures=\"1\" errors=\"0\" \
             skipped=\"1\""
        ));
        assert!(xml.contains(
            "<testsuite name=\"broken\" tests=\"1\" failures=\"1\" errors=\"0\" skipped=\"0\""
        ));
        assert!(xml.contains(
            "    <testcase classname=\"broken\" name=\"start\" time=\"0.000\">\n      \
             <failure message=\"the server could not be started: No such file or directory \
             (os error 2)\" type=\"start\">the server could not be started: No such file or \
             directory (os error 2)\ncommand: no-such-server\nNo checks ran.</failure>\n"
        ));
        assert!(xml.contains(
            "<testsuite name=\"remote\" tests=\"1\" failures=\"0\" errors=\"0\" skipped=\"1\""
        ));
        assert!(xml.contains(
            "<skipped message=\"not tested: an HTTP server; only stdio servers are tested\"/>"
        ));
    }

    #[test]
    fn escapes_markup_and_strips_forbidden_characters() {
        let nasty = "<a href='x'>\"&\"</a>\u{0}\u{1b}[31m\u{7}\u{fffe}\ttab\r\nnext";
        let mut r = result(
            "tools.<bad>&'\"",
            Level::Must,
            Status::Fail,
            Outcome::fail(nasty, nasty),
        );
        r.info.spec = nasty.to_owned();
        r.transcript = vec![entry(1.0, Direction::Receive, nasty)];
        r.stderr = vec![nasty.to_owned()];
        let mut report = sample();
        report.name = format!("name {nasty}");
        report.command = nasty.to_owned();
        report.server_info = Some(serde_json::json!({"name": nasty, "version": "1"}));
        report.results = vec![r];
        report.stale_expected_failures = vec![nasty.to_owned()];
        let xml = render(&[report, start_error()]);
        well_formed(&xml).unwrap();
        assert!(xml.contains("&lt;a href=&apos;x&apos;&gt;&quot;&amp;&quot;&lt;/a&gt;"));
        assert!(xml.contains("name=\"tools.&lt;bad&gt;&amp;&apos;&quot;\""));
        // Forbidden characters are gone; tab, CR and newline survive as references in
        // attributes, and CR as a reference in text.
        assert!(!xml.contains('\u{0}') && !xml.contains('\u{1b}') && !xml.contains('\u{7}'));
        assert!(!xml.contains('\u{fffe}'));
        assert!(xml.contains("&lt;/a&gt;[31m&#9;tab&#13;&#10;next\""));
        assert!(xml.contains("spec: &lt;a href='x'&gt;\"&amp;\"&lt;/a&gt;[31m\ttab&#13;\nnext"));
    }

    #[test]
    fn frames_in_a_failure_are_the_last_twenty() {
        let mut r = result(
            "framing.flood",
            Level::Must,
            Status::Fail,
            Outcome::fail("quiet", "loud"),
        );
        r.transcript = (0..25)
            .map(|i| entry(f64::from(i), Direction::Send, &format!("frame {i}")))
            .collect();
        r.stderr = (0..12).map(|i| format!("log {i}")).collect();
        let mut report = sample();
        report.results = vec![r];
        let xml = render(&[report]);
        well_formed(&xml).unwrap();
        assert!(xml.contains("frames (last 20 of 25):\n"));
        assert!(!xml.contains("frame 4\n"));
        assert!(xml.contains("frame 5\n"));
        assert!(xml.contains("stderr (last 10 of 12 lines):\n  log 2\n"));
        assert!(!xml.contains("log 1\n"));
    }

    #[test]
    fn empty_run() {
        let xml = render(&[]);
        well_formed(&xml).unwrap();
        assert_eq!(
            xml,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"mcp-conformance\" \
             tests=\"0\" failures=\"0\" errors=\"0\" skipped=\"0\" time=\"0.000\">\n\
             </testsuites>\n"
        );
    }
}
