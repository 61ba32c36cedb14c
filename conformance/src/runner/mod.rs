//! Running the selected checks against a target: the start-up, then the shared sessions (one
//! per era, their checks one after another) and the checks with processes of their own, up to
//! `--jobs` at once; every wait bounded. Then the root causes found on the way are given to
//! the checks that own them, and expected failures applied.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use parking_lot::Mutex;

use crate::catalog::Check;
use crate::check::{judge, CheckResult, Outcome, Profile, RunsIn, Status, TargetReport};
use crate::config::RunConfig;
use crate::ctx::{Ctx, Observations, Slot};
use crate::era::EraReport;
use crate::evidence::Trace;
use crate::ids;
use crate::mismatch::Finding;
use crate::probe::{Probe, ProbeError, Spawner};
use crate::progress::Tracker;
use crate::select::{not_applicable, select, ExpectedFailures};
use crate::target::Target;
use crate::transcript::Direction;
use crate::transcript::TranscriptEntry;
use crate::transport::http::server as http_server;

/// Everything the checks of one target share.
struct Env {
    spawner: Spawner,
    era: Arc<EraReport>,
    observations: Arc<Observations>,
    progress: Tracker,
}

impl Env {
    fn ctx(&self, trace: &Trace, shared: Option<Slot>) -> Ctx {
        Ctx::new(
            self.spawner.clone(),
            Arc::clone(&self.era),
            Arc::clone(&self.observations),
            trace.clone(),
            shared,
        )
    }

    fn config(&self) -> &RunConfig {
        &self.spawner.config
    }
}

/// Runs every selected check against `target`; a server given as a command for a URL is
/// started first and stopped after.
pub async fn run_target(
    target: Target,
    checks: &[Check],
    config: Arc<RunConfig>,
    expected: &ExpectedFailures,
) -> TargetReport {
    let launch = match &target.http {
        Some(endpoint) if target.launches() && target.skip.is_none() => Some(Arc::clone(endpoint)),
        _ => None,
    };
    let Some(endpoint) = launch else {
        return run_checks(target, checks, config, expected).await;
    };
    let started = Instant::now();
    match http_server::start(&target.command, &endpoint, config.first_reply_wait()).await {
        Ok(mut server) => {
            let report = run_checks(target, checks, config, expected).await;
            server.stop().await;
            report
        }
        Err(e) => {
            let mut report = run_checks(
                Target {
                    skip: Some(String::new()),
                    ..target
                },
                checks,
                config,
                expected,
            )
            .await;
            report.skipped = None;
            report.start_error = Some(e.to_string());
            report.duration = started.elapsed();
            report
        }
    }
}

async fn run_checks(
    target: Target,
    checks: &[Check],
    config: Arc<RunConfig>,
    expected: &ExpectedFailures,
) -> TargetReport {
    let started = Instant::now();
    let mut report = TargetReport {
        name: target.name.clone(),
        command: target.display(),
        framing: if target.http.is_some() {
            "http".to_owned()
        } else {
            config.framing.as_str().to_owned()
        },
        profile: config.profile,
        server_info: None,
        eras: Vec::new(),
        start_error: None,
        skipped: target.skip.clone(),
        results: Vec::new(),
        stale_expected_failures: Vec::new(),
        findings: Vec::new(),
        starts: Default::default(),
        duration: Duration::ZERO,
    };
    if report.skipped.is_some() {
        return report;
    }
    let auto_name = target.auto_name;
    let spawner = Spawner::new(Arc::new(target), Arc::clone(&config));
    let startup = match crate::startup::start(&spawner).await {
        Ok(startup) => startup,
        Err(e) => {
            report.start_error = Some(e.to_string());
            report.starts = spawner.starts.snapshot();
            report.duration = started.elapsed();
            return report;
        }
    };
    let era = startup.era;
    report.server_info = era
        .initialize_reply
        .as_ref()
        .and_then(|r| r.as_ref().ok())
        .and_then(|reply| reply.pointer("/result/serverInfo"))
        .cloned()
        .or_else(|| era.server_info.clone());
    let server_name = report
        .server_info
        .as_ref()
        .and_then(|i| i.get("name"))
        .and_then(|n| n.as_str())
        .filter(|n| !n.trim().is_empty());
    if let (true, Some(name)) = (auto_name, server_name) {
        report.name = name.to_owned();
    }
    report.eras = era.eras();

    let selected = select(checks, &config);
    let env = Arc::new(Env {
        spawner,
        era: Arc::new(era),
        observations: Arc::default(),
        progress: Tracker::new(
            config.progress,
            config.name_in_progress.then_some(report.name.as_str()),
            selected.len(),
        ),
    });

    let mut results: Vec<(usize, CheckResult)> = Vec::new();
    let (mut legacy, mut modern_group, mut own) = (Vec::new(), Vec::new(), Vec::new());
    for (i, check) in selected.iter().copied().enumerate() {
        let decided = decided_before_running(&env, &config, check);
        if let Some(result) = decided {
            env.progress.finished(&result);
            results.push((i, result));
            continue;
        }
        match check.info.runs_in {
            RunsIn::Legacy => legacy.push((i, check)),
            RunsIn::Modern => modern_group.push((i, check)),
            RunsIn::Own | RunsIn::Startup => own.push((i, check)),
        }
    }
    // In a shared session: the checks others rely on first, the ones that end it last.
    legacy.sort_by_key(|(_, c)| c.info.session_order());
    modern_group.sort_by_key(|(_, c)| c.info.session_order());

    // Checks that share an observation run together, one after another: the first makes it,
    // the others judge it at once. The ones whose server may go silent start first, so their
    // bounded waits overlap the rest of the run.
    let mut own_units: Vec<Vec<(usize, &Check)>> = Vec::new();
    for (i, check) in own {
        let shares = &check.info.shares;
        match own_units
            .iter_mut()
            .find(|u| !shares.is_empty() && u[0].1.info.shares == *shares)
        {
            Some(unit) => unit.push((i, check)),
            None => own_units.push(vec![(i, check)]),
        }
    }
    let (first, rest): (Vec<_>, Vec<_>) = own_units
        .into_iter()
        .partition(|unit| unit.iter().any(|(_, c)| c.info.runs_first));
    let mut units: Vec<BoxFuture<'_, Vec<(usize, CheckResult)>>> = Vec::new();
    units.extend(first.into_iter().map(|unit| run_own(&env, unit).boxed()));
    if !legacy.is_empty() {
        units.push(run_group(&env, RunsIn::Legacy, legacy, startup.legacy).boxed());
    }
    if !modern_group.is_empty() {
        units.push(run_group(&env, RunsIn::Modern, modern_group, startup.modern).boxed());
    }
    units.extend(rest.into_iter().map(|unit| run_own(&env, unit).boxed()));
    let ran: Vec<Vec<(usize, CheckResult)>> = futures::stream::iter(units)
        .buffer_unordered(config.jobs.max(1))
        .collect()
        .await;
    env.progress.done();
    results.extend(ran.into_iter().flatten());
    results.sort_by_key(|(i, _)| *i);
    let mut results: Vec<CheckResult> = results.into_iter().map(|(_, r)| r).collect();

    let findings = env.spawner.findings.all();
    for finding in &findings {
        give_to_owner(finding, &mut results, checks, &config);
    }
    report.findings = findings;

    // A baseline may name the target as reported, as the command line was labelled, or (as
    // earlier versions named it) by its program.
    let target = &env.spawner.target;
    let program = target.command.get_program().to_string_lossy();
    let program = program.rsplit('/').next().unwrap_or(&program);
    let names = [report.name.as_str(), target.name.as_str(), program];
    for result in &mut results {
        if expected.listed(&names, &result.info.id) {
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
    report.results = results;
    report.starts = env.spawner.starts.snapshot();
    report.duration = started.elapsed();
    report
}

/// The result of a check that is not run: it does not apply to the server's eras, or the
/// start-up's replies could not be read (every check but the ones that judge the start-up is
/// then blocked, none skipped: the eras are unknown).
fn decided_before_running(env: &Env, config: &RunConfig, check: &Check) -> Option<CheckResult> {
    let http = env.spawner.target.http.is_some();
    if let Some(why) = check.info.transport.not_applicable(http) {
        let outcome = Outcome::NotApplicable(why.to_owned());
        return Some(decided(check, config, outcome, None));
    }
    let Some((kind, why)) = &env.era.blocked else {
        return not_applicable(check, &env.era)
            .map(|reason| decided(check, config, Outcome::Skip(reason), None));
    };
    if ids::ERA_DETECT == check.info.id {
        return None;
    }
    if check.info.id == kind.owner() {
        // Failed by what the start-up found (the finding's frames are added at the end).
        let findings = env.spawner.findings.all();
        let seen = findings.iter().find(|f| f.kind == *kind);
        let actual = seen.map_or_else(|| why.clone(), |f| f.actual.clone());
        return Some(decided(
            check,
            config,
            Outcome::fail(kind.rule(), actual),
            None,
        ));
    }
    let blocked = Outcome::Blocked(why.clone());
    Some(decided(check, config, blocked, Some(kind.owner().as_str())))
}

/// Checks with processes of their own, one after another (they share an observation).
async fn run_own<'a>(env: &'a Env, unit: Vec<(usize, &'a Check)>) -> Vec<(usize, CheckResult)> {
    let mut out = Vec::new();
    for (i, check) in unit {
        let result = run_check(env, check, &Trace::new(&check.info.id)).await;
        env.progress.finished(&result);
        out.push((i, result));
    }
    out
}

/// A result decided without running the check (it does not apply, or is blocked).
fn decided(
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
        stderr: Vec::new(),
    }
}

/// The check's description with the level it has under `profile`.
fn effective_info(check: &Check, profile: Profile) -> crate::check::CheckInfo {
    let mut info = check.info.clone();
    if let (Profile::Echo, Some(level)) = (profile, info.echo_level) {
        info.level = level;
    }
    info
}

/// The checks of one shared session, one after another. A check that breaks the session (the
/// server exits or stops answering) is named, and the next check gets a new one.
async fn run_group<'a>(
    env: &'a Env,
    kind: RunsIn,
    checks: Vec<(usize, &'a Check)>,
    first: Option<Probe>,
) -> Vec<(usize, CheckResult)> {
    let slot: Slot = Arc::new(Mutex::new(first));
    let mut out = Vec::new();
    // The check whose wait timed out first, and whether a new session timed out again: then
    // the server keeps losing replies, and the checks left are blocked by that first one
    // instead of each waiting out its timeout.
    let mut first_timeout: Option<String> = None;
    let mut gave_up = false;
    let total = checks.len();
    for (i, check) in checks {
        if gave_up {
            let owner = first_timeout.as_deref().unwrap_or_default();
            let result = decided(
                check,
                env.config(),
                Outcome::Blocked(format!(
                    "not run: the shared {} session stopped answering twice (first in {owner}), \
                     so the server keeps losing replies",
                    kind.as_str()
                )),
                Some(owner),
            );
            env.progress.finished(&result);
            out.push((i, result));
            continue;
        }
        let trace = Trace::new(&check.info.id);
        let empty = slot.lock().is_none();
        if empty {
            match new_session(env, kind, &trace).await {
                Ok(probe) => *slot.lock() = Some(probe),
                Err(e) => {
                    let started = Instant::now();
                    let mut result = decided(
                        check,
                        env.config(),
                        Outcome::fail(format!("a new shared {} session", kind.as_str()), e),
                        None,
                    );
                    finish(&mut result, &trace, started);
                    env.progress.finished(&result);
                    out.push((i, result));
                    continue;
                }
            }
        }
        let started = Instant::now();
        let mut outcome = run_body(env, check, &trace, Some(Arc::clone(&slot))).await;
        // A server that died after the last check's replies is found dead by this one: not
        // this check's doing, so it runs again, once, in a new session.
        let found_dead = slot.lock().as_ref().is_some_and(Probe::found_dead);
        if found_dead {
            *slot.lock() = None;
            if let Ok(probe) = new_session(env, kind, &trace).await {
                *slot.lock() = Some(probe);
                outcome = run_body(env, check, &trace, Some(Arc::clone(&slot))).await;
            }
        }
        let cut = outcome_was_cut(&outcome);
        let last = out.len() + 1 == total;
        let mut probe = slot.lock().take();
        // Before the next check, the session must still answer: a ping (server/discover)
        // after the check's own requests tells, so a server that dies or goes quiet because
        // of this check is named here, not in the next one. Its frames are this check's.
        let broke = match probe.as_mut() {
            None => Some("the check did not hand it back".to_owned()),
            Some(p) if p.gone() => Some("the server exited".to_owned()),
            Some(p) if p.timed_out() => {
                Some("the server stopped answering (a wait timed out)".to_owned())
            }
            Some(_) if cut => Some("the check ran into its own time limit".to_owned()),
            Some(_) if last || check.info.ends_session => None,
            Some(p) => match p.until_barrier().await {
                Ok(_) => None,
                Err(e) if p.timed_out() => {
                    Some(format!("the server stopped answering after it: {e}"))
                }
                Err(e) => Some(format!("the server exited after it: {e}")),
            },
        };
        if let Some(p) = probe.as_mut() {
            p.flush_evidence();
        }
        let mut result = decided(check, env.config(), outcome, None);
        finish(&mut result, &trace, started);
        let timed_out = probe.as_ref().is_some_and(|p| p.timed_out() && !p.gone());
        if timed_out && matches!(result.status, Status::Fail | Status::Pass) {
            match &first_timeout {
                None => first_timeout = Some(check.info.id.clone()),
                Some(_) => gave_up = true,
            }
        }
        // A check that ends the session (SIGTERM) is expected to.
        if let Some(how) = broke.filter(|_| !check.info.ends_session) {
            result.broke_session = Some(format!(
                "the shared {} session broke during this check: {how}; the checks after it use \
                 a new session",
                kind.as_str()
            ));
            probe = None;
        }
        if !probe.as_ref().is_some_and(Probe::gone) {
            *slot.lock() = probe;
        }
        env.progress.finished(&result);
        out.push((i, result));
    }
    out
}

/// A new shared session after one broke: a fresh process, with the handshake (legacy) or the
/// modern `_meta` set; its frames go to the check that needs it.
async fn new_session(env: &Env, kind: RunsIn, trace: &Trace) -> Result<Probe, ProbeError> {
    let label = format!("new shared {} session", kind.as_str());
    let mut probe = env.spawner.spawn(trace, label)?;
    match kind {
        RunsIn::Modern => probe.go_modern(),
        _ => {
            probe.handshake(crate::LATEST).await?;
        }
    }
    Ok(probe)
}

/// The text of a check stopped by its own time limit.
const CUT: &str = "it was still waiting on the server; the check was stopped";

fn outcome_was_cut(outcome: &Outcome) -> bool {
    matches!(outcome, Outcome::Fail { actual, .. } if actual == CUT)
}

/// Runs one check's body, bounded.
async fn run_body(env: &Env, check: &Check, trace: &Trace, shared: Option<Slot>) -> Outcome {
    let ctx = env.ctx(trace, shared);
    // A check makes several bounded waits (the first reply of a process may take the start
    // budget); it must still end however the server behaves.
    let config = env.config();
    let bound = config.first_reply_wait() + (config.wait * 12).max(Duration::from_secs(30));
    match tokio::time::timeout(bound, check.run(&ctx)).await {
        Ok(outcome) => outcome,
        Err(_) => Outcome::fail(format!("the check finishes within {bound:?}"), CUT),
    }
}

/// Runs one check in processes of its own, and judges it.
async fn run_check(env: &Env, check: &Check, trace: &Trace) -> CheckResult {
    let started = Instant::now();
    let outcome = run_body(env, check, trace, None).await;
    let mut result = decided(check, env.config(), outcome, None);
    finish(&mut result, trace, started);
    result
}

/// Completes a result with its evidence; a check whose wait met a mismatch it does not own,
/// and that did not pass anyway, is blocked by the mismatch's owner.
fn finish(result: &mut CheckResult, trace: &Trace, started: Instant) {
    let collected = trace.take();
    if let Some((kind, why)) = collected.blocked {
        let owner = kind.owner();
        let judged = matches!(result.outcome, Outcome::Pass(_) | Outcome::Skip(_));
        if owner != result.info.id && !judged {
            result.outcome = Outcome::Blocked(why);
            result.status = Status::Blocked;
            result.blocked_by = Some(owner.as_str().to_owned());
        }
    }
    result.transcript = collected.transcript;
    result.stderr = collected.stderr;
    result.duration = started.elapsed();
}

/// A root cause fails the check that owns it (added to the report if it did not run), with the
/// frames that show it.
fn give_to_owner(
    finding: &Finding,
    results: &mut Vec<CheckResult>,
    all: &[Check],
    config: &RunConfig,
) {
    let owner = finding.kind.owner();
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
    let mut frames = vec![TranscriptEntry {
        at_ms: finding.frames.first().map_or(0.0, |e| e.at_ms),
        direction: Direction::Event,
        text: format!("<the frames that show it, from {}>", finding.seen_in),
    }];
    frames.extend(finding.frames.iter().cloned());
    let index = results.iter().position(|r| r.info.id == owner);
    let result = match index {
        Some(i) => &mut results[i],
        None => {
            let Some(check) = all.iter().find(|c| c.info.id == owner) else {
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
