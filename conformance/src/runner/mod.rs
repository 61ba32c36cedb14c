//! Running the selected checks against a target: the start-up, then the shared sessions (one
//! per era, their checks one after another) and the checks with processes of their own, up to
//! `--jobs` at once; every wait bounded. A server that has shown it stops answering blocks the
//! checks that would wait for a reply ([`stalls`]). Then the root causes found on the way are
//! given to the checks that own them, and expected failures applied.

mod group;
mod plan;
mod stalls;
mod verdict;

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};

use crate::catalog::Check;
use crate::check::{CheckResult, Outcome, RunsIn, TargetReport};
use crate::config::{Progress, RunConfig};
use crate::ctx::{Ctx, Observations, Slot};
use crate::era::EraReport;
use crate::evidence::Trace;
use crate::probe::{Probe, Spawner};
use crate::progress::Tracker;
use crate::select::{select, ExpectedFailures};
use crate::startup::Startup;
use crate::target::Target;
use crate::transport::http::{port, server as http_server};

use plan::{Placed, Plan};
use stalls::Stalls;

/// Everything the checks of one target share.
struct Env {
    spawner: Spawner,
    era: Arc<EraReport>,
    observations: Arc<Observations>,
    progress: Tracker,
    stalls: Stalls,
}

/// What running a check's body gave: its outcome, or that it ran into its own time limit.
enum Ran {
    Done(Outcome),
    /// Still waiting on the server when the check's bound (`bound`) ran out.
    Cut {
        bound: Duration,
    },
}

impl Ran {
    fn into_outcome(self) -> Outcome {
        match self {
            Ran::Done(outcome) => outcome,
            Ran::Cut { bound } => Outcome::fail(
                format!("the check finishes within {bound:?}"),
                "it was still waiting on the server; the check was stopped",
            ),
        }
    }
}

/// Runs every selected check against `target`. A server given as a command for a URL is
/// started first and stopped after; one given without a command (on this machine) is waited
/// for until its port accepts connections.
pub async fn run_target(
    target: Target,
    checks: &[Check],
    config: Arc<RunConfig>,
    expected: &ExpectedFailures,
) -> TargetReport {
    let started = Instant::now();
    let endpoint = match &target.http {
        Some(endpoint) if target.skip.is_none() => Arc::clone(endpoint),
        _ => return run_checks(target, checks, config, expected).await,
    };
    let reached = if target.launches() {
        http_server::start(&target.command, &endpoint, config.start_wait)
            .await
            .map(Some)
            .map_err(|e| e.to_string())
    } else {
        let announce = config.progress != Progress::Off;
        port::await_server(&endpoint, config.start_wait, announce)
            .await
            .map(|()| None)
            .map_err(|e| e.to_string())
    };
    match reached {
        Ok(server) => {
            let report = run_checks(target, checks, config, expected).await;
            if let Some(mut server) = server {
                server.stop().await;
            }
            report
        }
        Err(why) => {
            let unstarted = Target {
                skip: Some(String::new()),
                ..target
            };
            let mut report = run_checks(unstarted, checks, config, expected).await;
            report.skipped = None;
            report.start_error = Some(why);
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
    let mut report = empty_report(&target, &config);
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
    name_the_server(&mut report, &startup, auto_name);
    spawner.watch.declared(
        startup.era.capabilities(crate::era::Era::Legacy),
        startup.era.capabilities(crate::era::Era::Modern),
    );
    let selected = select(checks, &config);
    let env = Env {
        spawner,
        era: Arc::new(startup.era),
        observations: Arc::default(),
        progress: Tracker::new(
            config.progress,
            config.name_in_progress.then_some(report.name.as_str()),
            selected.len(),
        ),
        stalls: Stalls::default(),
    };
    let mut to_run = Vec::new();
    let mut results = Vec::new();
    for (i, check) in selected.into_iter().enumerate() {
        match env.before_running(check) {
            Some(result) => {
                env.progress.finished(&result);
                results.push((i, result));
            }
            None => to_run.push((i, check)),
        }
    }
    let plan = Plan::new(to_run);
    results.extend(env.run(plan, startup.legacy, startup.modern).await);
    results.sort_by_key(|(i, _)| *i);
    let results = results.into_iter().map(|(_, r)| r).collect();
    env.conclude(&mut report, results, checks, expected);
    env.progress.settled(&report.results);
    env.progress.done();
    report.duration = started.elapsed();
    report
}

/// A report of `target` with nothing in it yet.
fn empty_report(target: &Target, config: &RunConfig) -> TargetReport {
    TargetReport {
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
        coverage: Vec::new(),
        starts: Default::default(),
        duration: Duration::ZERO,
    }
}

/// What the start-up learned of the server: its `serverInfo`, its eras, and (for a target
/// named after its command line) its own name.
fn name_the_server(report: &mut TargetReport, startup: &Startup, auto_name: bool) {
    let era = &startup.era;
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

    /// The result of a check decided without running it, if it is.
    fn before_running(&self, check: &Check) -> Option<CheckResult> {
        let http = self.spawner.target.http.is_some();
        let findings = &self.spawner.findings;
        verdict::before_running(check, self.config(), http, &self.era, findings)
    }

    /// Runs the plan, up to `--jobs` units at once: the shared sessions first (what they find,
    /// a server that stops answering, decides once for the checks with processes of their
    /// own), then the checks of their own whose server may go silent, then the rest.
    async fn run(
        &self,
        plan: Plan<'_>,
        legacy: Option<Probe>,
        modern: Option<Probe>,
    ) -> Vec<(usize, CheckResult)> {
        let mut units: Vec<BoxFuture<'_, Vec<(usize, CheckResult)>>> = Vec::new();
        if !plan.legacy.is_empty() {
            units.push(group::run_group(self, RunsIn::Legacy, plan.legacy, legacy).boxed());
        }
        if !plan.modern.is_empty() {
            units.push(group::run_group(self, RunsIn::Modern, plan.modern, modern).boxed());
        }
        let own = plan.own_first.into_iter().chain(plan.own_rest);
        units.extend(own.map(|unit| self.run_own(unit).boxed()));
        let ran: Vec<Vec<(usize, CheckResult)>> = futures::stream::iter(units)
            .buffer_unordered(self.config().jobs.max(1))
            .collect()
            .await;
        ran.into_iter().flatten().collect()
    }

    /// Checks with processes of their own, one after another (they share an observation).
    async fn run_own<'a>(&'a self, unit: Vec<Placed<'a>>) -> Vec<(usize, CheckResult)> {
        let mut out = Vec::new();
        for (i, check) in unit {
            let result = match self.blocked_by_stalls(check) {
                Some(blocked) => blocked,
                None => self.run_check(check).await,
            };
            self.progress.finished(&result);
            out.push((i, result));
        }
        out
    }

    /// Runs one check in processes of its own, and judges it.
    async fn run_check(&self, check: &Check) -> CheckResult {
        let trace = Trace::new(&check.info.id);
        let started = Instant::now();
        let outcome = self.run_body(check, &trace, None).await.into_outcome();
        let mut result = verdict::decided(check, self.config(), outcome, None);
        self.finish(&mut result, &trace, started);
        result
    }

    /// Runs one check's body, bounded: a check makes several bounded waits (the first reply of
    /// a process may take the start budget); it must still end however the server behaves.
    async fn run_body(&self, check: &Check, trace: &Trace, shared: Option<Slot>) -> Ran {
        let ctx = self.ctx(trace, shared);
        let config = self.config();
        // Tool calls wait `--tool-timeout` each, and stop being made once it has passed: at most
        // about two of those in a check.
        let bound = config.first_reply_wait()
            + (config.wait * 12).max(Duration::from_secs(30))
            + config.tool_wait * 2;
        match tokio::time::timeout(bound, check.run(&ctx)).await {
            Ok(outcome) => Ran::Done(outcome),
            Err(_) => Ran::Cut { bound },
        }
    }

    /// Completes a result with its evidence, and learns from the waits that ran out in it.
    fn finish(&self, result: &mut CheckResult, trace: &Trace, started: Instant) {
        let collected = verdict::finish(result, trace, started, self.config().whole_transcripts);
        self.stalls
            .learn(&result.info.id, result.status, &collected.stalls);
    }

    /// A check that would wait for a reply from a server that has shown it stops answering is
    /// blocked by the check that owns that root cause, instead of waiting out `--timeout`.
    fn blocked_by_stalls(&self, check: &Check) -> Option<CheckResult> {
        if !check.needs.replies {
            return None;
        }
        let owner = self.stalls.owner()?;
        let outcome = Outcome::Blocked(Stalls::blocked_text(&owner));
        Some(verdict::decided(
            check,
            self.config(),
            outcome,
            Some(&owner),
        ))
    }

    /// The report's last part: root causes given to the checks that own them, expected
    /// failures, start times.
    fn conclude(
        &self,
        report: &mut TargetReport,
        mut results: Vec<CheckResult>,
        all: &[Check],
        expected: &ExpectedFailures,
    ) {
        let tally = self.spawner.watch.tally();
        for result in &mut results {
            crate::checks::settle_watched(result, &tally, self.config());
        }
        let mut findings = self.spawner.findings.all();
        findings.extend(self.stalls.finding());
        for finding in &findings {
            verdict::give_to_owner(finding, &mut results, all, self.config());
        }
        report.findings = findings;
        verdict::apply_expected(report, &mut results, &self.spawner.target, expected);
        report.coverage = crate::coverage::of(&self.era, &results);
        report.results = results;
        report.starts = self.spawner.starts.snapshot();
    }
}
