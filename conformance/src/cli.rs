//! The `mcp-conformance` command line: options, targets, the run, the reports, exit codes.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use crate::catalog::Check;
use crate::check::{Profile, RunsIn, TargetReport};
use crate::config::{ClientCapability, Progress, RunConfig};
use crate::entry::ReportArgs;
use crate::runner::run_target;
use crate::select::{select, ExpectedFailures};
use crate::target::{bundled_server, from_config, parse_env, Target};
use crate::transport::http::parse_header;
use crate::transport::Endpoint;
use clap::{Parser, ValueEnum};
use futures::StreamExt;
use mcp_protocol::Framing;

/// Tests an MCP server against the spec, over stdio or Streamable HTTP (--url): handshake,
/// JSON-RPC errors, tools, resources, prompts, logging, completions, framing, HTTP transport
/// rules, and the stateless 2026-07-28 era (era detection, server/discover, per-request _meta).
///
/// With no target it tests the bundled mcp-echo-server. Exit codes: 0 all checks passed,
/// 1 a check failed, 2 usage error, 3 a target could not be started (with --url: also its
/// port already in use, or nothing listening there), 130 interrupted (143 SIGTERM). Every
/// server started runs in a process group of its own, ended as a whole (SIGTERM, SIGKILL 2 s
/// later), also on Ctrl-C.
#[derive(Debug, Parser)]
#[command(
    name = "mcp-conformance",
    version,
    after_help = "Judging a client: mcp-conformance client [OPTIONS] -- CLIENT_COMMAND (see mcp-conformance client --help)\nWatching a host use a server: mcp-conformance observe [--report FILE] -- SERVER_COMMAND (see mcp-conformance observe --help)\nBenchmarks: mcp-bench [OPTIONS] [-- COMMAND...], or mcp-bench --url URL for Streamable HTTP (see mcp-bench --help)"
)]
struct Cli {
    /// The server command and its arguments (after `--`); with --url, the command that starts
    /// the HTTP server (stopped after the run).
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,

    /// Test a Streamable HTTP server at this MCP endpoint (e.g. http://127.0.0.1:3001/mcp)
    /// instead of a stdio one.
    #[arg(long, value_name = "URL", conflicts_with = "config")]
    url: Option<String>,

    /// A header sent on every HTTP request, NAME:VALUE (repeatable); values are never shown
    /// in reports or transcripts.
    #[arg(long = "header", value_name = "NAME:VALUE", value_parser = parse_header, requires = "url")]
    headers: Vec<(String, String)>,

    /// An environment variable for the server (repeatable).
    #[arg(long, value_name = "KEY=VALUE", value_parser = parse_env)]
    env: Vec<(String, String)>,

    /// The server's working directory.
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,

    /// How frames are delimited on the server's stdio.
    #[arg(long, value_enum, default_value_t = FramingArg::Ndjson)]
    framing: FramingArg,

    /// Seconds each single wait (a reply, an exit) may take.
    #[arg(long, value_name = "SECS", default_value_t = 5.0)]
    timeout: f64,

    /// Seconds each server process may take to answer its first request (at least --timeout):
    /// every start gets it, the run's first and every later one. Generous by default: a server
    /// started through npx or uvx may download first. With --url on this machine, also how
    /// long its port may take to accept connections (without a command: the server may start
    /// while the harness waits).
    #[arg(long, value_name = "SECS", default_value_t = 30.0)]
    start_timeout: f64,

    /// Seconds a tools/call may take (at least --timeout): no sentence bounds how long a tool
    /// runs, so a call that outlives this is reported as not judged, never as a failure.
    #[arg(long, value_name = "SECS", default_value_t = 30.0)]
    tool_timeout: f64,

    /// Call no tools at all (even those annotated read-only may reach the network): the
    /// checks that need a call's result are skipped and say why.
    #[arg(long)]
    no_tool_calls: bool,

    /// How many items of each kind (tools, resources, templates, prompts) are exercised
    /// (read, got, completed); lists are still followed to their end.
    #[arg(long, value_name = "N", default_value_t = 5)]
    max_items: usize,

    /// Client capabilities the harness declares (comma-separated: roots, sampling,
    /// elicitation) and answers with fixed replies: roots/list one root file:///tmp,
    /// sampling/createMessage an assistant text from model "mcp-conformance",
    /// elicitation/create "decline". By default it declares none; a server request for an
    /// undeclared one gets -32601 (and fails capabilities.negotiated-requests).
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_enum)]
    client_capabilities: Vec<ClientCapabilityArg>,

    /// Test the stdio servers of a Claude Desktop / Claude Code (.mcp.json) / Cursor config.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,

    /// With --config: test only this server.
    #[arg(long, value_name = "NAME", requires = "config")]
    server: Option<String>,

    /// With --config: how many servers are tested at once.
    #[arg(long, value_name = "N", default_value_t = 2)]
    concurrency: usize,

    /// How many checks run at once against one server (the checks of a shared session count
    /// as one: they run one after another in it). Verdicts are the same for any N; more
    /// overlap the server starts and the waits that prove an absence.
    #[arg(long, value_name = "N", default_value_t = 4)]
    jobs: usize,

    /// Print every check (id, level, the server process it runs in, description, spec
    /// reference) and exit.
    #[arg(long)]
    list: bool,

    /// No progress on stderr (by default one line per finished check when stderr is not a
    /// terminal, a line rewritten in place when it is).
    #[arg(long, short)]
    quiet: bool,

    /// Run only checks whose id matches (`lifecycle`, `jsonrpc.*-id`); repeatable.
    #[arg(long, value_name = "PATTERN")]
    only: Vec<String>,

    /// Skip checks whose id matches; repeatable.
    #[arg(long, value_name = "PATTERN")]
    skip: Vec<String>,

    /// generic: MUST failures fail; strict: SHOULD too; echo: strict plus the echo server's
    /// documented behaviour. Default: echo for the bundled server, generic otherwise.
    #[arg(long, value_enum)]
    profile: Option<ProfileArg>,

    #[command(flatten)]
    report: ReportArgs,

    /// Extra scenarios (JSON) to run, or sessions `mcp-conformance observe --transcript`
    /// recorded (`.jsonl`: replayed, each request must get the kind of answer it got then);
    /// repeatable.
    #[arg(long, value_name = "FILE")]
    scenario_file: Vec<PathBuf>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum FramingArg {
    Ndjson,
    ContentLength,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum ProfileArg {
    Generic,
    Strict,
    Echo,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
enum ClientCapabilityArg {
    Roots,
    Sampling,
    Elicitation,
}

const USAGE: u8 = 2;
const START: u8 = 3;

/// Runs `mcp-conformance` with the process's arguments; the exit code says how it went.
pub fn main() -> ExitCode {
    if std::env::args_os().nth(1).is_some_and(|a| a == "observe") {
        return crate::observe::main();
    }
    if std::env::args_os().nth(1).is_some_and(|a| a == "bench") {
        // The bench became a binary of its own.
        return ExitCode::from(usage(
            "the benchmark is now `mcp-bench` (same options): cargo install --locked --path bench",
        ));
    }
    match std::env::args_os().nth(1) {
        Some(a) if a == "client" => {
            let mut args: Vec<std::ffi::OsString> = std::env::args_os().skip(2).collect();
            args.insert(0, "mcp-conformance client".into());
            return crate::clients::cli::main(args);
        }
        // The relay a stdio client spawns in `client` mode (not in --help: run by the harness).
        Some(a) if a == "__relay" => {
            let Some(socket) = std::env::args_os().nth(2) else {
                return ExitCode::from(usage("__relay needs the harness's socket path"));
            };
            return ExitCode::from(crate::clients::relay::main(std::path::Path::new(&socket)));
        }
        _ => {}
    }
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "error".into()),
        )
        .init();
    crate::entry::run_to_exit(run(cli))
}

fn usage(message: impl std::fmt::Display) -> u8 {
    eprintln!("mcp-conformance: {message}");
    USAGE
}

/// What is wrong with the command line or its files (exit code 2), in words.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Usage(String);

impl Usage {
    fn new(message: impl std::fmt::Display) -> Usage {
        Usage(message.to_string())
    }
}

async fn run(cli: Cli) -> u8 {
    let checks = match load_checks(&cli.scenario_file) {
        Ok(checks) => checks,
        Err(e) => return usage(e),
    };
    if cli.list {
        list(&checks);
        return 0;
    }
    let prepared = check_waits(&cli).and_then(|()| {
        let targets = targets(&cli)?;
        let expected = match &cli.report.expected_failures {
            Some(path) => ExpectedFailures::load(path, &checks).map_err(Usage::new)?,
            None => ExpectedFailures::default(),
        };
        Ok((targets, expected))
    });
    let (targets, expected) = match prepared {
        Ok(prepared) => prepared,
        Err(e) => return usage(e),
    };
    let base = base_config(&cli, &targets);
    let first = RunConfig {
        profile: profile_for(cli.profile, targets.first()),
        ..base.clone()
    };
    if select(&checks, &first).is_empty() {
        return usage("no check matches --only/--skip (see --list)");
    }
    let checks = Arc::new(checks);
    let reports: Vec<TargetReport> = futures::stream::iter(targets)
        .map(|target| {
            let config = Arc::new(RunConfig {
                profile: profile_for(cli.profile, Some(&target)),
                ..base.clone()
            });
            let checks = Arc::clone(&checks);
            let expected = expected.clone();
            async move { run_target(target, &checks, config, &expected).await }
        })
        .buffered(cli.concurrency.max(1))
        .collect()
        .await;
    if let Err(code) = crate::entry::write_reports(&cli.report, &reports) {
        return code;
    }
    exit_code(&reports)
}

/// The built-in checks and those of `--scenario-file`s, whose ids must be new.
fn load_checks(files: &[PathBuf]) -> Result<Vec<Check>, Usage> {
    let mut checks: Vec<Check> = crate::checks::builtin().map_err(Usage::new)?;
    for file in files {
        let text = std::fs::read_to_string(file)
            .map_err(|e| Usage(format!("cannot read {}: {e}", file.display())))?;
        let extra = if file.extension().is_some_and(|e| e == "jsonl") {
            let name = file.file_stem().unwrap_or_default().to_string_lossy();
            let replay = crate::replay::scenario(&text, &name).map_err(|e| {
                Usage(format!(
                    "{} is not a transcript `mcp-conformance observe --transcript` wrote: {e}",
                    file.display()
                ))
            })?;
            vec![Check::scenario(replay)]
        } else {
            crate::checks::from_scenarios(&text).map_err(|e| {
                Usage(format!(
                    "{} is not a valid scenario file: {e}",
                    file.display()
                ))
            })?
        };
        if let Some(taken) = extra
            .iter()
            .find(|c| checks.iter().any(|k| k.info.id == c.info.id))
        {
            return Err(Usage(format!(
                "{}: check id {:?} is already taken",
                file.display(),
                taken.info.id
            )));
        }
        checks.extend(extra);
    }
    Ok(checks)
}

/// `--list`: every check, where it runs, and its spec reference.
fn list(checks: &[Check]) {
    for c in checks {
        let mut notes = vec![match c.info.runs_in {
            RunsIn::Startup => "judged from the start-up".to_owned(),
            RunsIn::Legacy => "shared legacy session".to_owned(),
            RunsIn::Modern => "shared modern session".to_owned(),
            RunsIn::Own => "own process".to_owned(),
        }];
        match c.info.transport {
            crate::check::Transport::Any => {}
            crate::check::Transport::Stdio => notes.push("stdio only".to_owned()),
            crate::check::Transport::Http => {
                notes = vec!["HTTP requests of its own; Streamable HTTP only".to_owned()]
            }
        }
        if c.info.ends_session {
            notes.push("ends the session: runs last in it".to_owned());
        }
        if c.info.echo_only {
            notes.push("echo profile".to_owned());
        } else if let Some(level) = c.info.echo_level {
            notes.push(format!("{level} in the echo profile"));
        }
        println!(
            "{:<44} {:<6} {} [{}]\n{:<51} spec: {}",
            c.info.id,
            c.info.level.to_string(),
            c.info.description,
            notes.join("; "),
            "",
            c.info.spec
        );
    }
}

fn check_waits(cli: &Cli) -> Result<(), Usage> {
    if !(cli.timeout > 0.0 && cli.timeout.is_finite()) {
        return Err(Usage::new("--timeout must be a positive number of seconds"));
    }
    if !(cli.tool_timeout > 0.0 && cli.tool_timeout.is_finite()) {
        return Err(Usage::new(
            "--tool-timeout must be a positive number of seconds",
        ));
    }
    if !(cli.start_timeout > 0.0 && cli.start_timeout.is_finite()) {
        return Err(Usage::new(
            "--start-timeout must be a positive number of seconds",
        ));
    }
    Ok(())
}

/// What to test: a URL, the servers of a config file, a command, or the bundled server.
fn targets(cli: &Cli) -> Result<Vec<Target>, Usage> {
    let targets = if let Some(url) = &cli.url {
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(Usage(format!(
                "--url {url:?} is not an http:// or https:// URL"
            )));
        }
        if matches!(cli.framing, FramingArg::ContentLength) {
            return Err(Usage::new(
                "--framing is for stdio servers; over --url each message is a POST",
            ));
        }
        let endpoint = Endpoint {
            url: url.clone(),
            headers: cli.headers.clone(),
        };
        let command = cli.command.split_first().map(|(p, a)| (p.as_str(), a));
        vec![Target::from_url(endpoint, command).with(&cli.env, cli.cwd.as_deref())]
    } else if let Some(config) = &cli.config {
        if !cli.command.is_empty() {
            return Err(Usage::new(
                "give either --config or a command after --, not both",
            ));
        }
        from_config(config, cli.server.as_deref()).map_err(Usage::new)?
    } else if let Some((program, args)) = cli.command.split_first() {
        vec![Target::from_command(program, args).with(&cli.env, cli.cwd.as_deref())]
    } else {
        vec![bundled_server()
            .map_err(Usage::new)?
            .with(&cli.env, cli.cwd.as_deref())]
    };
    if cli.config.is_some() && (!cli.env.is_empty() || cli.cwd.is_some()) {
        return Err(Usage::new(
            "--env and --cwd apply to a command after --; a config file sets its own env",
        ));
    }
    Ok(targets)
}

/// How every target is run (its profile is set per target).
fn base_config(cli: &Cli, targets: &[Target]) -> RunConfig {
    let several = targets.iter().filter(|t| t.skip.is_none()).count() > 1;
    RunConfig {
        framing: match cli.framing {
            FramingArg::Ndjson => Framing::Ndjson,
            FramingArg::ContentLength => Framing::ContentLength,
        },
        wait: Duration::from_secs_f64(cli.timeout),
        start_wait: Duration::from_secs_f64(cli.start_timeout),
        tool_wait: Duration::from_secs_f64(cli.tool_timeout.max(cli.timeout)),
        tool_calls: !cli.no_tool_calls,
        max_items: cli.max_items.max(1),
        client_capabilities: cli
            .client_capabilities
            .iter()
            .map(|c| match c {
                ClientCapabilityArg::Roots => ClientCapability::Roots,
                ClientCapabilityArg::Sampling => ClientCapability::Sampling,
                ClientCapabilityArg::Elicitation => ClientCapability::Elicitation,
            })
            .collect(),
        only: cli.only.clone(),
        skip: cli.skip.clone(),
        check_set: cli.report.check_set,
        jobs: cli.jobs.max(1),
        progress: if cli.quiet {
            Progress::Off
        } else if std::io::stderr().is_terminal() && !several {
            Progress::Terminal
        } else {
            Progress::Lines
        },
        name_in_progress: several,
        whole_transcripts: cli.report.transcript.is_some(),
        ..RunConfig::default()
    }
}

/// 3 if a target could not be started, 1 if a check failed, else 0.
fn exit_code(reports: &[TargetReport]) -> u8 {
    if reports.iter().any(|r| r.start_error.is_some()) {
        START
    } else if reports.iter().any(TargetReport::failed) {
        1
    } else {
        0
    }
}

fn profile_for(arg: Option<ProfileArg>, target: Option<&Target>) -> Profile {
    match arg {
        Some(ProfileArg::Generic) => Profile::Generic,
        Some(ProfileArg::Strict) => Profile::Strict,
        Some(ProfileArg::Echo) => Profile::Echo,
        None if target.is_some_and(|t| t.bundled) => Profile::Echo,
        None => Profile::Generic,
    }
}
