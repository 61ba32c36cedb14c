//! `mcp-conformance client [OPTIONS] -- CLIENT_COMMAND [ARGS…]`: the harness plays a scripted
//! server per scenario and judges the client that connects to it; one report, as for servers.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{Parser, ValueEnum};

use super::checks;
use super::judge::{self, ClientCheck, Session};
use super::process::ClientCommand;
use super::run::{run_all, RunError, ScenarioRun, Settings};
use super::scenario::ScenarioId;
use super::timeline::Wire;
use crate::check::{Outcome, Profile, Starts, Status, TargetReport};
use crate::entry::{Format, ReportArgs};
use crate::select::id_matches;
use crate::target::parse_env;

/// Judges an MCP client: the harness plays a scripted server per scenario and checks what the
/// client does (handshake, ids, ping, server requests, cancellation, stdio shutdown, HTTP
/// headers and sessions, the 2026-07-28 era).
///
/// The client command is run once per scenario with one extra last argument: over stdio the
/// path of an executable to spawn as its server (a relay back to the harness), over
/// --transport http the server's URL. MCP_CONFORMANCE_SCENARIO names the scenario. Exit codes:
/// 0 all checks passed, 1 a check failed, 2 usage error, 3 the client command could not be
/// started, 130 interrupted (143 SIGTERM).
#[derive(Debug, Parser)]
#[command(name = "mcp-conformance client", version)]
struct ClientCli {
    /// The client command and its arguments (after `--`).
    #[arg(last = true, value_name = "CLIENT_COMMAND")]
    command: Vec<String>,

    /// How the client reaches the harness's server.
    #[arg(long, value_enum, default_value_t = TransportArg::Stdio)]
    transport: TransportArg,

    /// Run only this scenario (repeatable); default: every scenario of the transport.
    #[arg(long = "scenario", value_name = "NAME")]
    scenarios: Vec<String>,

    /// Print the client checks and the scenarios, and exit.
    #[arg(long)]
    list: bool,

    /// Judge only checks whose id matches (`client.http-*`); repeatable.
    #[arg(long, value_name = "PATTERN")]
    only: Vec<String>,

    /// Leave out checks whose id matches; repeatable.
    #[arg(long, value_name = "PATTERN")]
    skip: Vec<String>,

    /// generic: MUST failures fail; strict: SHOULD too.
    #[arg(long, value_enum, default_value_t = ProfileArg::Generic)]
    profile: ProfileArg,

    #[command(flatten)]
    report: ReportArgs,

    /// Seconds one scenario may take; a client still running then is stopped.
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    timeout: f64,

    /// How many scenarios run at once.
    #[arg(long, value_name = "N", default_value_t = 4)]
    jobs: usize,

    /// No progress on stderr.
    #[arg(long, short)]
    quiet: bool,

    /// An environment variable for the client (repeatable).
    #[arg(long, value_name = "KEY=VALUE", value_parser = parse_env)]
    env: Vec<(String, String)>,

    /// The client's working directory.
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
enum TransportArg {
    Stdio,
    Http,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum ProfileArg {
    Generic,
    Strict,
}

const USAGE: u8 = 2;
const START: u8 = 3;

/// Runs `mcp-conformance client …`; `args` starts with the program name.
pub(crate) fn main(args: Vec<OsString>) -> ExitCode {
    let cli = ClientCli::parse_from(args);
    crate::entry::run_to_exit(run(cli))
}

/// What is wrong with the command line or its files (exit code 2), in words.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Usage(String);

fn usage(message: impl std::fmt::Display) -> u8 {
    eprintln!("mcp-conformance client: {message}");
    USAGE
}

/// The parsed run: what to run and judge.
struct Plan {
    wire: Wire,
    scenarios: Vec<ScenarioId>,
    checks: Vec<ClientCheck>,
    expected: Vec<String>,
    command: ClientCommand,
}

async fn run(cli: ClientCli) -> u8 {
    let all = checks::all();
    if cli.list {
        list(&all);
        return 0;
    }
    let plan = match plan(&cli, all) {
        Ok(plan) => plan,
        Err(e) => return usage(e),
    };
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => {
            eprintln!(
                "mcp-conformance client: cannot find this program's own path for the relay: {e}"
            );
            return START;
        }
    };
    let settings = Settings {
        wire: plan.wire,
        bound: Duration::from_secs_f64(cli.timeout),
        command: plan.command.clone(),
        exe,
        jobs: cli.jobs.max(1),
        progress: !cli.quiet,
    };
    let started = Instant::now();
    let runs = match run_all(&plan.scenarios, &settings).await {
        Ok(runs) => runs,
        Err(e) => {
            let why = start_failure(&e, &plan.command);
            return not_started(&cli, &plan, why, started.elapsed());
        }
    };
    if let Some(why) = never_started(&runs, &plan.command) {
        return not_started(&cli, &plan, why, started.elapsed());
    }
    let report = report(&cli, &plan, &runs, started.elapsed());
    if let Err(code) = crate::entry::write_reports(&cli.report, std::slice::from_ref(&report)) {
        return code;
    }
    u8::from(report.failed())
}

fn plan(cli: &ClientCli, all: Vec<ClientCheck>) -> Result<Plan, Usage> {
    let Some((program, args)) = cli.command.split_first() else {
        return Err(Usage(
            "give the client command after --, e.g. mcp-conformance client -- python3 my_client.py"
                .to_owned(),
        ));
    };
    if !(cli.timeout > 0.0 && cli.timeout.is_finite()) {
        return Err(Usage(
            "--timeout must be a positive number of seconds".to_owned(),
        ));
    }
    let wire = match cli.transport {
        TransportArg::Stdio => Wire::Stdio,
        TransportArg::Http => Wire::Http,
    };
    let scenarios = scenarios(&cli.scenarios, wire)?;
    let checks: Vec<ClientCheck> = all
        .into_iter()
        .filter(|c| cli.only.is_empty() || cli.only.iter().any(|p| id_matches(p, &c.info.id)))
        .filter(|c| !cli.skip.iter().any(|p| id_matches(p, &c.info.id)))
        .collect();
    if checks.is_empty() {
        return Err(Usage(
            "no client check matches --only/--skip (see mcp-conformance client --list)".to_owned(),
        ));
    }
    let expected = match &cli.report.expected_failures {
        Some(path) => expected_failures(path)?,
        None => Vec::new(),
    };
    Ok(Plan {
        wire,
        scenarios,
        checks,
        expected,
        command: ClientCommand {
            program: program.clone(),
            args: args.to_vec(),
            env: cli.env.clone(),
            cwd: cli.cwd.clone(),
        },
    })
}

/// `--scenario` names, checked against the transport; all of its scenarios by default.
fn scenarios(names: &[String], wire: Wire) -> Result<Vec<ScenarioId>, Usage> {
    let on_wire: Vec<ScenarioId> = ScenarioId::ALL
        .into_iter()
        .filter(|s| s.runs_on(wire))
        .collect();
    if names.is_empty() {
        return Ok(on_wire);
    }
    let known = || {
        on_wire
            .iter()
            .map(|s| s.name())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut chosen = Vec::new();
    for name in names {
        match ScenarioId::from_name(name) {
            Some(s) if s.runs_on(wire) => chosen.push(s),
            Some(_) => {
                return Err(Usage(format!(
                    "scenario {name:?} does not run on this transport (it needs --transport http); \
                     these do: {}",
                    known()
                )))
            }
            None => {
                return Err(Usage(format!(
                    "unknown scenario {name:?}; the scenarios are: {}",
                    known()
                )))
            }
        }
    }
    chosen.sort();
    chosen.dedup();
    Ok(chosen)
}

/// `--expected-failures FILE`: one client check id per line (then, optionally, a reason);
/// `#` starts a comment.
fn expected_failures(path: &Path) -> Result<Vec<String>, Usage> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Usage(format!("cannot read {}: {e}", path.display())))?;
    let known: Vec<String> = checks::all().into_iter().map(|c| c.info.id).collect();
    let mut ids = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        let Some(id) = line.split_whitespace().next() else {
            continue;
        };
        if !known.iter().any(|k| k == id) {
            return Err(Usage(format!(
                "{}: line {}: unknown client check id {id:?} (see mcp-conformance client --list)",
                path.display(),
                n + 1
            )));
        }
        ids.push(id.to_owned());
    }
    Ok(ids)
}

/// `--list`: the client checks, then the scenarios.
fn list(checks: &[ClientCheck]) {
    for c in checks {
        let transports = match c.info.transport {
            crate::check::Transport::Any => "stdio, http",
            crate::check::Transport::Stdio => "stdio",
            crate::check::Transport::Http => "http",
        };
        let scenarios = if c.scenarios.is_empty() {
            "all".to_owned()
        } else {
            c.scenarios
                .iter()
                .map(|s| s.name())
                .collect::<Vec<_>>()
                .join(", ")
        };
        println!(
            "{:<44} {:<6} {} [{transports}; scenarios: {scenarios}]\n{:<51} spec: {}",
            c.info.id,
            c.info.level.to_string(),
            c.info.description,
            "",
            c.info.spec
        );
    }
    println!("\nScenarios (MCP_CONFORMANCE_SCENARIO):");
    for s in ScenarioId::ALL {
        let only = if s.runs_on(Wire::Stdio) {
            ""
        } else {
            " [http only]"
        };
        println!("  {:<24} {}{only}", s.name(), s.description());
    }
}

/// The client could not be started: which command, what error, what to do.
fn start_failure(e: &RunError, command: &ClientCommand) -> String {
    match e {
        RunError::Spawn { .. } => format!(
            "{e}.\nCheck that `{}` exists and is executable (a bare name is looked up in PATH), \
             and --cwd.",
            command.program
        ),
        RunError::Setup { .. } => e.to_string(),
    }
}

/// Every run's client exited at once with a failure and said nothing to the server: it did not
/// really start (a missing script, a bad option). Why, with the last lines it wrote.
fn never_started(runs: &[ScenarioRun], command: &ClientCommand) -> Option<String> {
    use super::process::Ended;
    let dead = |r: &ScenarioRun| {
        !r.connected() && matches!(r.ended, Ended::Exited(code) if code != Some(0))
    };
    if runs.is_empty() || !runs.iter().all(dead) {
        return None;
    }
    let first = &runs[0];
    let code = match first.ended {
        Ended::Exited(Some(code)) => format!("exit code {code}"),
        _ => "a signal".to_owned(),
    };
    let mut why = format!(
        "the client command `{}` ended at once ({code}) in every scenario without sending a \
         message: it could not be started.\nCheck the command, its arguments, --env and --cwd. \
         Its last output:",
        command.shown()
    );
    for line in first.output.stderr.iter().chain(&first.output.stdout) {
        why.push_str(&format!("\n  | {line}"));
    }
    Some(why)
}

/// Exit code 3: the message on stderr; the JSON and JUnit reports, if asked for, carry it as
/// the start error (the text report would speak of a server).
fn not_started(cli: &ClientCli, plan: &Plan, why: String, took: Duration) -> u8 {
    eprintln!("mcp-conformance client: {why}");
    let mut report = report(cli, plan, &[], took);
    report.results.clear();
    report.eras.clear();
    report.start_error = Some(why);
    if cli.report.format != Format::Text {
        crate::entry::print_report(&cli.report, std::slice::from_ref(&report));
    }
    // A file that cannot be written is reported on stderr; the exit code stays 3.
    let _ = crate::entry::write_files(&cli.report, std::slice::from_ref(&report));
    START
}

/// One report over the sessions of every scenario run.
fn report(cli: &ClientCli, plan: &Plan, runs: &[ScenarioRun], took: Duration) -> TargetReport {
    let profile = match cli.profile {
        ProfileArg::Generic => Profile::Generic,
        ProfileArg::Strict => Profile::Strict,
    };
    let sessions: Vec<Session<'_>> = runs
        .iter()
        .map(|r| Session {
            timeline: &r.timeline,
            scenario: Some(r.scenario),
        })
        .collect();
    let mut stale = Vec::new();
    let results = plan
        .checks
        .iter()
        .map(|check| {
            let mut r = judge::result(check, &sessions, plan.wire, profile);
            if let Some(why) = crate::checkset::left_out(r.info.since, cli.report.check_set) {
                r.status = Status::Skip;
                r.outcome = Outcome::Skip(why);
                r.transcript.clear();
            }
            if cli.report.transcript.is_some() {
                r.whole_transcript = r.transcript.clone();
            }
            if let Some(run) = deciding(runs, r.outcome.text()) {
                r.stderr = run.output.stderr.clone();
            }
            if plan.expected.contains(&r.info.id) {
                match r.status {
                    Status::Fail => r.expected_failure = true,
                    Status::Pass | Status::Info => stale.push(r.info.id.clone()),
                    _ => {}
                }
            }
            r
        })
        .collect();
    let mut eras = Vec::new();
    if plan.scenarios.iter().any(|s| *s != ScenarioId::Modern) {
        eras.push("legacy".to_owned());
    }
    if plan.scenarios.contains(&ScenarioId::Modern) {
        eras.push("modern".to_owned());
    }
    TargetReport {
        name: crate::target::command_label(&plan.command.program, &plan.command.args),
        command: plan.command.shown(),
        framing: match plan.wire {
            Wire::Stdio => "stdio".to_owned(),
            Wire::Http => "http".to_owned(),
        },
        profile,
        server_info: None,
        eras,
        start_error: None,
        skipped: None,
        results,
        stale_expected_failures: stale,
        findings: Vec::new(),
        coverage: Vec::new(),
        starts: Starts::default(),
        duration: took,
    }
}

/// The run whose session decided a result: its outcome text starts with `[scenario]`.
fn deciding<'a>(runs: &'a [ScenarioRun], text: &str) -> Option<&'a ScenarioRun> {
    let name = text.strip_prefix('[')?.split(']').next()?;
    runs.iter().find(|r| r.scenario.name() == name)
}
