//! Selecting checks, running them against a target (each in fresh server processes, every
//! wait bounded), judging them under a profile, and applying expected failures.

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use futures::StreamExt;
use mcp_protocol::Framing;

use crate::check::{judge, CheckInfo, CheckResult, Outcome, Profile, Status, TargetReport};
use crate::checks::modern::{self, EraReport};
use crate::probe::{Collected, Got, Sink};
use crate::scenario::Scenario;
use crate::target::Target;

/// How a run is done.
#[derive(Debug, Clone)]
pub struct RunConfig {
    pub framing: Framing,
    /// The bound of each single wait (a reply, an exit).
    pub wait: Duration,
    /// The bound of the start-up `initialize` (at least `wait`); era detection's
    /// `server/discover` probe gets this too, up to 10 s.
    pub start_wait: Duration,
    pub profile: Profile,
    pub max_message_bytes: usize,
    pub only: Vec<String>,
    pub skip: Vec<String>,
    /// Checks run at once against one target.
    pub jobs: usize,
    /// A progress line on stderr.
    pub progress: bool,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            framing: Framing::Ndjson,
            wait: Duration::from_secs(5),
            start_wait: Duration::from_secs(30),
            profile: Profile::Generic,
            max_message_bytes: 64 * 1024 * 1024,
            only: Vec::new(),
            skip: Vec::new(),
            jobs: 1,
            progress: false,
        }
    }
}

/// What a check gets: the target, the settings, the era(s) the target speaks, and where its
/// processes leave their traces.
#[derive(Debug, Clone)]
pub struct Ctx {
    pub target: Arc<Target>,
    pub config: Arc<RunConfig>,
    /// What era detection found before the checks ran (`None` only while it runs).
    pub era: Option<Arc<EraReport>>,
    pub(crate) sink: Sink,
}

/// A check written in Rust.
pub type CheckFn = for<'a> fn(&'a Ctx) -> BoxFuture<'a, Outcome>;

#[derive(Clone)]
#[allow(missing_debug_implementations)] // fn pointers; Check's Debug shows the id
pub enum Body {
    Code(CheckFn),
    Scenario(Arc<Scenario>),
}

/// A check: its description and what it does.
#[derive(Clone)]
pub struct Check {
    pub info: CheckInfo,
    pub body: Body,
}

impl std::fmt::Debug for Check {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Check").field("id", &self.info.id).finish()
    }
}

/// Does `id` match `pattern`? `*` matches any run of characters; a pattern without `*`
/// matches the id itself or everything under it (`lifecycle` matches `lifecycle.ping`).
pub fn id_matches(pattern: &str, id: &str) -> bool {
    if !pattern.contains('*') {
        return id == pattern || id.starts_with(&format!("{pattern}."));
    }
    let parts: Vec<&str> = pattern.split('*').collect();
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !id.starts_with(first) || id.len() < first.len() + last.len() || !id.ends_with(last) {
        return false;
    }
    let mut rest = &id[first.len()..id.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    true
}

/// The checks a profile runs, after `--only` and `--skip`.
pub fn select<'a>(checks: &'a [Check], config: &RunConfig) -> Vec<&'a Check> {
    checks
        .iter()
        .filter(|c| !c.info.echo_only || config.profile == Profile::Echo)
        .filter(|c| config.only.is_empty() || config.only.iter().any(|p| id_matches(p, &c.info.id)))
        .filter(|c| !config.skip.iter().any(|p| id_matches(p, &c.info.id)))
        .collect()
}

/// `--expected-failures FILE`: one check id per line, optionally `TARGET:` before it, then the
/// reason; `#` starts a comment.
#[derive(Debug, Clone, Default)]
pub struct ExpectedFailures {
    entries: Vec<(Option<String>, String, String)>,
}

impl ExpectedFailures {
    pub fn load(path: &Path, known: &[Check]) -> Result<ExpectedFailures, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        Self::parse(&text, known).map_err(|e| format!("{}: {e}", path.display()))
    }

    pub fn parse(text: &str, known: &[Check]) -> Result<ExpectedFailures, String> {
        let mut entries = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let (key, reason) = line
                .split_once(char::is_whitespace)
                .map(|(k, r)| (k, r.trim()))
                .unwrap_or((line, ""));
            let (target, id) = match key.split_once(':') {
                Some((t, id)) => (Some(t.to_owned()), id),
                None => (None, key),
            };
            if !known.iter().any(|c| c.info.id == id) {
                return Err(format!(
                    "line {}: unknown check id {id:?} (see mcp-conformance --list)",
                    n + 1
                ));
            }
            entries.push((target, id.to_owned(), reason.to_owned()));
        }
        Ok(ExpectedFailures { entries })
    }

    fn listed(&self, target: &str, id: &str) -> bool {
        self.entries
            .iter()
            .any(|(t, i, _)| i == id && t.as_deref().is_none_or(|t| t == target))
    }
}

/// Runs every selected check against `target`.
pub async fn run_target(
    target: Target,
    checks: &[Check],
    config: Arc<RunConfig>,
    expected: &ExpectedFailures,
) -> TargetReport {
    let started = Instant::now();
    let mut report = TargetReport {
        name: target.name.clone(),
        command: target.display(),
        framing: match config.framing {
            Framing::Ndjson => "ndjson".to_owned(),
            Framing::ContentLength => "content-length".to_owned(),
        },
        profile: config.profile,
        server_info: None,
        eras: Vec::new(),
        start_error: None,
        skipped: target.skip.clone(),
        results: Vec::new(),
        stale_expected_failures: Vec::new(),
        duration: Duration::ZERO,
    };
    if report.skipped.is_some() {
        return report;
    }
    let target = Arc::new(target);
    let probe_ctx = Ctx {
        target: Arc::clone(&target),
        config: Arc::clone(&config),
        era: None,
        sink: Sink::default(),
    };
    let initialize = match start(&probe_ctx).await {
        Ok(reply) => reply,
        Err(e) => {
            report.start_error = Some(e);
            report.duration = started.elapsed();
            return report;
        }
    };
    report.server_info = initialize
        .as_ref()
        .ok()
        .and_then(|reply| reply.pointer("/result/serverInfo"))
        .cloned();
    // Once per target, before the checks: the start-up initialize and a server/discover probe
    // decide the eras, which decide which checks apply.
    let era = modern::detect(&probe_ctx, initialize).await;
    report.eras = era.eras();
    if report.server_info.is_none() {
        report.server_info = era.server_info.clone();
    }
    let era = Arc::new(era);
    let selected = select(checks, &config);
    let total = selected.len();
    let done = Arc::new(Mutex::new(0usize));
    let progress = config.progress && std::io::stderr().is_terminal();
    let results: Vec<CheckResult> = futures::stream::iter(selected)
        .map(|check| {
            let ctx = Ctx {
                target: Arc::clone(&target),
                config: Arc::clone(&config),
                era: Some(Arc::clone(&era)),
                sink: Sink::default(),
            };
            let done = Arc::clone(&done);
            let name = target.name.clone();
            async move {
                let result = run_check(check, ctx).await;
                if progress {
                    let mut n = done.lock().unwrap_or_else(PoisonError::into_inner);
                    *n += 1;
                    let mut err = std::io::stderr();
                    let _ = write!(err, "\r\x1b[2K[{}/{total}] {name}: {}", *n, check.info.id);
                    let _ = err.flush();
                }
                result
            }
        })
        .buffered(config.jobs.max(1))
        .collect()
        .await;
    if progress {
        eprint!("\r\x1b[2K");
    }
    for mut result in results {
        if expected.listed(&report.name, &result.info.id) {
            match result.status {
                Status::Fail => result.expected_failure = true,
                Status::Pass => report.stale_expected_failures.push(result.info.id.clone()),
                _ => {}
            }
        }
        report.results.push(result);
    }
    report.duration = started.elapsed();
    report
}

/// Starts the server once with `initialize` (the legacy era probe too): a server that cannot be
/// spawned, or exits before answering `initialize`, could not be started (exit code 3).
/// Otherwise the reply to `initialize` (an error from a modern-only server), or why none came.
async fn start(ctx: &Ctx) -> Result<Result<serde_json::Value, String>, String> {
    let target = &ctx.target;
    let mut probe = ctx
        .spawn()
        .await
        .map_err(|e| format!("could not start {}: {e}", target.display()))?;
    let id = serde_json::json!(probe.id());
    let msg = serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "initialize",
        "params": crate::probe::initialize_params(crate::LATEST)});
    if probe.send(&msg).await.is_err()
        && probe.wait_exit(Duration::from_millis(500)).await.is_some()
    {
        return Err(exited(&probe, "before reading anything").await);
    }
    // Generous by default: an npx-launched server may need to download or compile first.
    probe.wait = ctx.config.wait.max(ctx.config.start_wait);
    match probe.response(&id).await {
        Ok(reply) => Ok(Ok(reply)),
        Err(_) if probe.wait_exit(Duration::from_millis(200)).await.is_some() => {
            Err(exited(&probe, "before answering initialize").await)
        }
        Err(e) => match probe.next(Duration::ZERO).await {
            Got::Eof => Err(exited(&probe, "closed stdout before answering initialize").await),
            _ => Ok(Err(e)), // it runs but does not answer: the checks will say so
        },
    }
}

async fn exited(probe: &crate::probe::Probe, when: &str) -> String {
    let status = probe
        .conn()
        .exit_status()
        .map(|s| format!(" (it {})", crate::probe::describe_exit(s)))
        .unwrap_or_default();
    let stderr = probe.conn().stderr(Duration::from_millis(300)).await;
    let tail: Vec<&str> = stderr
        .iter()
        .rev()
        .take(10)
        .rev()
        .map(String::as_str)
        .collect();
    let mut text = format!("the server exited {when}{status}");
    if !tail.is_empty() {
        text.push_str("; its last stderr lines:\n  ");
        text.push_str(&tail.join("\n  "));
    }
    text
}

async fn run_check(check: &Check, ctx: Ctx) -> CheckResult {
    let started = Instant::now();
    let sink = Arc::clone(&ctx.sink);
    let not_applicable = ctx
        .era
        .as_deref()
        .and_then(|era| modern::not_applicable(check, era));
    // A check makes several bounded waits; it must still end however the server behaves.
    let bound = (ctx.config.wait * 12).max(Duration::from_secs(30));
    let outcome = {
        let body = async {
            match &check.body {
                Body::Code(f) => f(&ctx).await,
                Body::Scenario(s) => crate::scenario::run(s, &ctx).await,
            }
        };
        match not_applicable {
            Some(reason) => Outcome::Skip(reason),
            None => match tokio::time::timeout(bound, body).await {
                Ok(outcome) => outcome,
                Err(_) => Outcome::fail(
                    format!("the check finishes within {bound:?}"),
                    "it was still waiting on the server; the check was stopped".to_owned(),
                ),
            },
        }
    };
    let status = judge(check.info.level, &outcome, ctx.config.profile);
    let collected = std::mem::take(&mut *sink.lock().unwrap_or_else(PoisonError::into_inner));
    let Collected { transcript, stderr } = collected;
    CheckResult {
        info: check.info.clone(),
        status,
        outcome,
        expected_failure: false,
        duration: started.elapsed(),
        transcript,
        stderr,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns() {
        assert!(id_matches("lifecycle", "lifecycle.ping"));
        assert!(!id_matches("life", "lifecycle.ping"));
        assert!(id_matches("lifecycle.ping", "lifecycle.ping"));
        assert!(id_matches("*.ping*", "lifecycle.ping-before-initialize"));
        assert!(id_matches("jsonrpc.*-id", "jsonrpc.null-id"));
        assert!(!id_matches("jsonrpc.*-id", "jsonrpc.null-ids"));
    }
}
