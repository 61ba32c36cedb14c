//! Turning outcomes into results: a check decided without running (not applicable, skipped
//! for the server's eras, blocked), a check's evidence and blocking, the root causes given to
//! the checks that own them, and expected failures.

use std::time::{Duration, Instant};

use crate::catalog::Check;
use crate::check::{judge, CheckInfo, CheckResult, Outcome, Profile, Status, TargetReport};
use crate::config::RunConfig;
use crate::era::EraReport;
use crate::evidence::{Collected, Trace};
use crate::ids;
use crate::mismatch::{Finding, Findings};
use crate::select::{not_applicable, ExpectedFailures};
use crate::target::Target;
use crate::transcript::{Direction, TranscriptEntry};

/// A result decided without running the check (it does not apply, or is blocked).
pub(super) fn decided(
    check: &Check,
    config: &RunConfig,
    outcome: Outcome,
    blocked_by: Option<&str>,
) -> CheckResult {
    let info = effective_info(check, config.profile);
    CheckResult {
        status: judge(info.level, &outcome, config.profile),
        info,
        outcome,
        expected_failure: false,
        blocked_by: blocked_by.map(str::to_owned),
        broke_session: None,
        duration: Duration::ZERO,
        transcript: Vec::new(),
        whole_transcript: Vec::new(),
        stderr: Vec::new(),
    }
}

/// The check's description with the level it has under `profile`.
fn effective_info(check: &Check, profile: Profile) -> CheckInfo {
    let mut info = check.info.clone();
    if let (Profile::Echo, Some(level)) = (profile, info.echo_level) {
        info.level = level;
    }
    info
}

/// The result of a check that is not run: it is newer than the pinned check set, it does not
/// exist on the target's transport, it does not apply to the server's eras, or the start-up's
/// replies could not be read (every check but the ones that judge the start-up is then
/// blocked, none skipped: the eras are unknown).
pub(super) fn before_running(
    check: &Check,
    config: &RunConfig,
    http: bool,
    era: &EraReport,
    findings: &Findings,
) -> Option<CheckResult> {
    if let Some(why) = crate::checkset::left_out(check.info.since, config.check_set) {
        return Some(decided(check, config, Outcome::Skip(why), None));
    }
    if let Some(why) = check.info.transport.not_applicable(http) {
        let outcome = Outcome::NotApplicable(why.to_owned());
        return Some(decided(check, config, outcome, None));
    }
    let Some((kind, why)) = &era.blocked else {
        return not_applicable(check, era)
            .map(|reason| decided(check, config, Outcome::Skip(reason), None));
    };
    if ids::ERA_DETECT == check.info.id {
        return None;
    }
    let owner = kind.owner()?;
    if owner == check.info.id {
        // Failed by what the start-up found (the finding's frames are added at the end).
        let all = findings.all();
        let seen = all.iter().find(|f| f.kind == *kind);
        let actual = seen.map_or_else(|| why.clone(), |f| f.actual.clone());
        return Some(decided(
            check,
            config,
            Outcome::fail(kind.rule(), actual),
            None,
        ));
    }
    let blocked = Outcome::Blocked(why.clone());
    Some(decided(check, config, blocked, Some(owner.as_str())))
}

/// Completes a result with its evidence; a check whose wait met a mismatch it does not own,
/// and that did not pass anyway, is blocked by the mismatch's owner. The evidence is returned
/// for what the run learns from it.
pub(super) fn finish(
    result: &mut CheckResult,
    trace: &Trace,
    started: Instant,
    keep_whole: bool,
) -> Collected {
    let mut collected = trace.take();
    if let Some((kind, why)) = collected.blocked.take() {
        let judged = matches!(result.outcome, Outcome::Pass(_) | Outcome::Skip(_));
        match kind.owner() {
            Some(owner) if owner != result.info.id && !judged => {
                result.outcome = Outcome::Blocked(why);
                result.status = Status::Blocked;
                result.blocked_by = Some(owner.as_str().to_owned());
            }
            _ => {}
        }
    }
    result.transcript = std::mem::take(&mut collected.transcript);
    if keep_whole {
        result.whole_transcript = std::mem::take(&mut collected.whole);
    }
    result.stderr = std::mem::take(&mut collected.stderr);
    result.duration = started.elapsed();
    collected
}

/// A root cause fails the check that owns it (added to the report if it did not run), with the
/// frames that show it.
pub(super) fn give_to_owner(
    finding: &Finding,
    results: &mut Vec<CheckResult>,
    all: &[Check],
    config: &RunConfig,
) {
    let times = if finding.count > 1 {
        format!(", {} times in all", finding.count)
    } else {
        String::new()
    };
    let outcome = Outcome::fail(
        finding.kind.rule(),
        format!(
            "{} (first seen in {}{times})",
            finding.actual, finding.seen_in
        ),
    );
    let mut frames = Vec::new();
    if !finding.frames.is_empty() {
        frames.push(TranscriptEntry {
            at_ms: finding.frames.first().map_or(0.0, |e| e.at_ms),
            direction: Direction::Event,
            text: format!("<the frames that show it, from {}>", finding.seen_in),
        });
        frames.extend(finding.frames.iter().cloned());
    }
    let index = results.iter().position(|r| r.info.id == finding.owner);
    let result = match index {
        Some(i) => &mut results[i],
        None => {
            // The owner is a built-in check (the id table's test holds them to the catalogue)
            // or one that ran; one that did not run is added.
            let check = all.iter().find(|c| c.info.id == finding.owner);
            let Some(check) = check else {
                return;
            };
            results.push(decided(check, config, outcome.clone(), None));
            let last = results.len() - 1;
            &mut results[last]
        }
    };
    if result.status == Status::Fail {
        result.transcript.extend(frames);
        return;
    }
    result.status = judge(result.info.level, &outcome, config.profile);
    result.outcome = outcome;
    result.blocked_by = None;
    result.transcript.extend(frames);
}

/// Marks the listed failures as expected, and lists the listed checks that no longer fail as
/// stale. A baseline may name the target as reported, as the command line was labelled, or
/// (as earlier versions named it) by its program.
pub(super) fn apply_expected(
    report: &mut TargetReport,
    results: &mut [CheckResult],
    target: &Target,
    expected: &ExpectedFailures,
) {
    let program = target.command.get_program().to_string_lossy();
    let program = program.rsplit('/').next().unwrap_or(&program);
    let names = [report.name.as_str(), target.name.as_str(), program];
    for result in results {
        if !expected.listed(&names, &result.info.id) {
            continue;
        }
        match result.status {
            Status::Fail => result.expected_failure = true,
            // An INFO check cannot fail: listing it expects nothing.
            Status::Pass | Status::Info => {
                report.stale_expected_failures.push(result.info.id.clone())
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::Status;
    use crate::checkset::Version;

    /// Under a pin, a check added later is skipped and says why; without one, or pinned at
    /// its version, it is not.
    #[test]
    fn a_check_newer_than_the_pinned_set_is_skipped() {
        let mut check = crate::checks::builtin()
            .expect("the built-in checks")
            .into_iter()
            .find(|c| c.info.id == crate::ids::LIFECYCLE_PING)
            .expect("lifecycle.ping");
        check.info.since = "0.2.0".parse().expect("a version");
        let era = EraReport::default();
        let findings = Findings::default();
        let decide = |pin: Option<&str>| {
            let config = RunConfig {
                check_set: pin.map(|p| p.parse::<Version>().expect("a version")),
                ..RunConfig::default()
            };
            before_running(&check, &config, false, &era, &findings)
        };
        let skipped = decide(Some("0.1.0")).expect("skipped under 0.1.0");
        assert_eq!(skipped.status, Status::Skip);
        assert_eq!(
            skipped.outcome,
            Outcome::Skip(
                "added in 0.2.0, after the pinned check set 0.1.0: move --check-set to 0.2.0 or \
                 later to run it"
                    .to_owned()
            )
        );
        for pin in [None, Some("0.2.0")] {
            let ran = decide(pin);
            assert!(
                ran.as_ref().is_none_or(
                    |r| r.status != Status::Skip || !r.outcome.text().contains("pinned")
                ),
                "{pin:?}: {ran:?}"
            );
        }
    }
}
