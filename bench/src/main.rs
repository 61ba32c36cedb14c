//! `mcp-bench`: benchmarks a stdio MCP server, or the floor program it carries.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand, ValueEnum};
use mcp_bench::{driver, floor, http, pin, report, BenchConfig, BenchError, DriverKind};
use mcp_client::ServerCommand;
use mcp_protocol::Framing;

/// Benchmarks a stdio MCP server: time to the initialize reply, sequential round trips (p50,
/// p99, mean), pipelined throughput with W requests in flight, the server's CPU time per call
/// and peak memory, time from closing stdin to exit, and whether every request written before
/// EOF was answered. Each run is a fresh process; every reply's id and echoed text is verified.
///
/// With no command it benches the bundled mcp-echo-server; with --floor, a built-in trivial
/// program that answers each request with a canned reply (what the pipes and this driver cost).
/// With --url, a Streamable HTTP server: the command after `--` is started for each run (and
/// stopped after), or, without one, the server already running at the URL is benched; with
/// --floor too, a built-in trivial HTTP server started on the URL's address.
/// Exit codes: 0 done, 1 a reply was missing or wrong, 2 usage error, 3 the server could not be
/// started.
#[derive(Debug, Parser)]
#[command(name = "mcp-bench", version, args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    floor_server: Option<Hidden>,

    #[command(flatten)]
    bench: BenchArgs,
}

/// What the bench starts itself as: never typed by a user.
#[derive(Debug, Subcommand)]
enum Hidden {
    /// Serves as the floor on stdin/stdout until stdin closes.
    #[command(hide = true)]
    ServeFloor {
        #[arg(long, value_enum, default_value_t = FramingArg::Ndjson)]
        framing: FramingArg,
        #[arg(long, value_enum, default_value_t = FloorReplyArg::Plain)]
        reply: FloorReplyArg,
        #[arg(long, value_name = "NS", default_value_t = 0)]
        work_ns: u64,
    },
    /// Serves as the HTTP floor on ADDR (port 0: a free one, named by the listening line on
    /// stderr) until killed.
    #[command(hide = true)]
    ServeHttpFloor {
        #[arg(long, value_name = "ADDR")]
        listen: SocketAddr,
        #[arg(long, default_value = "/mcp")]
        path: String,
        #[arg(long, value_enum, default_value_t = FloorReplyArg::Plain)]
        reply: FloorReplyArg,
        #[arg(long, value_name = "NS", default_value_t = 0)]
        work_ns: u64,
    },
}

#[derive(Debug, clap::Args)]
struct BenchArgs {
    /// The server command and its arguments (after `--`); the server must have an `echo` tool.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,

    /// How frames are delimited on the server's stdio.
    #[arg(long, value_enum, default_value_t = FramingArg::Ndjson)]
    framing: FramingArg,

    /// Calls per pipelined measurement (sequential ones are capped at 5000).
    #[arg(long, value_name = "N", default_value_t = 20000)]
    calls: usize,

    /// Requests in flight: 1 measures sequential latency, more pipelined throughput.
    #[arg(long, value_name = "W[,W...]", value_delimiter = ',', default_values_t = [1usize, 64])]
    window: Vec<usize>,

    /// Bench the Streamable HTTP server at this URL (http://HOST:PORT/PATH): the command after
    /// `--`, started for each run and stopped after, listening there; with --floor, the
    /// built-in HTTP floor, started likewise; or, with neither, the server already running
    /// there.
    #[arg(long, value_name = "URL", conflicts_with_all = ["window", "stdio", "driver", "pin", "framing"])]
    url: Option<String>,

    /// With --url: concurrent HTTP requests (one connection each); 1 measures latency, more
    /// requests per second.
    #[arg(long, value_name = "C[,C...]", value_delimiter = ',', requires = "url", default_values_t = [1usize, 64])]
    concurrency: Vec<usize>,

    /// Echoed text sizes in bytes.
    #[arg(long, value_name = "BYTES[,...]", value_delimiter = ',', default_values_t = [64usize])]
    payload: Vec<usize>,

    /// Runs, each in a fresh server process; reports give the median and min–max.
    #[arg(long, value_name = "R", default_value_t = 3)]
    runs: usize,

    /// Unmeasured starts (spawn, initialize, close) before the runs, so start times are warm.
    #[arg(long, value_name = "N", default_value_t = 1)]
    warmup: usize,

    /// Report format on stdout (json: schema mcp-conformance/bench/v1).
    #[arg(long, value_enum, default_value_t = FormatArg::Text)]
    format: FormatArg,

    /// Bench the built-in trivial echo program (the floor) instead of a server; with --url,
    /// the built-in trivial HTTP server.
    #[arg(long)]
    floor: bool,

    /// How the server's stdin and stdout are connected: two pipes (Python, Rust, Go hosts) or
    /// one end of a Unix socketpair (Node-based hosts: Claude Code, Cursor, Claude Desktop).
    #[arg(long, value_enum, value_name = "KIND", default_value_t = StdioArg::Pipes)]
    stdio: StdioArg,

    /// The floor's echo reply: the text once (plain), or also in `structuredContent`
    /// (structured), as a tool with an `outputSchema` must answer and mcp-echo-server does.
    #[arg(long, value_enum, value_name = "REPLY", requires = "floor")]
    floor_reply: Option<FloorReplyArg>,

    /// Busy CPU time, in nanoseconds, the floor spends on each request it answers: a floor
    /// that costs what a server costs per call, to tell what the scheduler's placement alone
    /// does to throughput (BENCHMARKS.md, "Placement follows CPU per call").
    #[arg(long, value_name = "NS", requires = "floor")]
    floor_work: Option<u64>,

    /// What makes the calls: the lean load driver, or the mcp-client library (to measure what
    /// the library itself can drive; no EOF burst).
    #[arg(long, value_enum, default_value_t = DriverArg::Lean)]
    driver: DriverArg,

    /// Pin the server and the bench's driver thread: both to the first CPU this process may use
    /// (same), or the server to the second (split). Unpinned, the scheduler picks, and on a
    /// small machine a server can run several times faster in one placement than the other.
    #[arg(long, value_enum, value_name = "PLACEMENT")]
    pin: Option<PinArg>,

    /// Seconds each single wait (a reply, progress, an exit) may take.
    #[arg(long, value_name = "SECS", default_value_t = 5.0)]
    timeout: f64,

    /// An environment variable for the server (repeatable).
    #[arg(long, value_name = "KEY=VALUE", value_parser = parse_env)]
    env: Vec<(String, String)>,

    /// The server's working directory.
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum FramingArg {
    Ndjson,
    ContentLength,
}

impl From<FramingArg> for Framing {
    fn from(arg: FramingArg) -> Framing {
        match arg {
            FramingArg::Ndjson => Framing::Ndjson,
            FramingArg::ContentLength => Framing::ContentLength,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum FloorReplyArg {
    Plain,
    Structured,
}

impl From<FloorReplyArg> for floor::Reply {
    fn from(arg: FloorReplyArg) -> floor::Reply {
        match arg {
            FloorReplyArg::Plain => floor::Reply::Plain,
            FloorReplyArg::Structured => floor::Reply::Structured,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum DriverArg {
    Lean,
    Client,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum StdioArg {
    Pipes,
    Socket,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum PinArg {
    Same,
    Split,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum FormatArg {
    Text,
    Json,
}

const USAGE: u8 = 2;
const START: u8 = 3;

fn main() -> ExitCode {
    let cli = Cli::parse();
    ExitCode::from(match cli.floor_server {
        Some(Hidden::ServeFloor {
            framing,
            reply,
            work_ns,
        }) => floor::serve(
            framing == FramingArg::ContentLength,
            reply.into(),
            Duration::from_nanos(work_ns),
        ),
        Some(Hidden::ServeHttpFloor {
            listen,
            path,
            reply,
            work_ns,
        }) => floor::over_http::serve(listen, path, reply.into(), Duration::from_nanos(work_ns)),
        None => run(cli.bench),
    })
}

fn usage(message: impl std::fmt::Display) -> u8 {
    eprintln!("mcp-bench: {message}");
    USAGE
}

fn parse_env(kv: &str) -> Result<(String, String), String> {
    match kv.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_owned(), v.to_owned())),
        _ => Err(format!("--env expects KEY=VALUE, got {kv:?}")),
    }
}

/// The `mcp-echo-server` installed or built beside this executable.
fn bundled_server() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot locate this executable: {e}"))?;
    let dir = exe.parent().unwrap_or(Path::new("."));
    [
        dir.join("mcp-echo-server"),
        dir.join("..").join("mcp-echo-server"),
    ]
    .into_iter()
    .find(|p| p.is_file())
    .ok_or_else(|| {
        format!(
            "no command given and the bundled mcp-echo-server is not beside {}; build it with \
                 `cargo build -p mcp-echo-server` (or `cargo install --locked --path server`), or \
                 name a server: mcp-bench -- <command> [args...]",
            exe.display()
        )
    })
}

/// The floor: this binary's hidden `serve-floor`, or for `--url` its `serve-http-floor` on the
/// URL's address and path; and its label in reports.
fn floor_command(
    framing: FramingArg,
    reply: FloorReplyArg,
    work_ns: u64,
    http: Option<&http::Endpoint>,
) -> Result<(ServerCommand, String), String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot locate this executable: {e}"))?;
    let mut args = match http {
        None => vec![
            "serve-floor".to_owned(),
            format!("--framing={}", value_name(framing)),
        ],
        Some(endpoint) => vec![
            "serve-http-floor".to_owned(),
            format!("--listen={}", endpoint.addr),
            format!("--path={}", endpoint.uri.path()),
        ],
    };
    args.push(format!("--reply={}", value_name(reply)));
    args.push(format!("--work-ns={work_ns}"));
    let command = ServerCommand::new(exe).args(args);
    let mut label = match reply {
        FloorReplyArg::Plain => "(floor".to_owned(),
        FloorReplyArg::Structured => "(floor, structured reply".to_owned(),
    };
    if work_ns > 0 {
        label.push_str(&format!(", {work_ns} ns of work per call"));
    }
    label.push(')');
    Ok((command, label))
}

/// What is benched, and its label in reports: the floor, the command after `--`, the server
/// already at the URL, or the bundled server. A usage error is said, and its exit code
/// returned.
fn benched(cli: &BenchArgs, http: Option<&http::Target>) -> Result<(ServerCommand, String), u8> {
    let endpoint = http.map(|t| &t.endpoint);
    let chosen = match (cli.floor, cli.command.split_first()) {
        (true, Some(_)) => Err("give either --floor or a command after --, not both".to_owned()),
        (true, None) => floor_command(
            cli.framing,
            cli.floor_reply.unwrap_or(FloorReplyArg::Plain),
            cli.floor_work.unwrap_or(0),
            endpoint,
        ),
        (false, Some((program, args))) => {
            let command = ServerCommand::new(program).args(args);
            let label = command.display();
            Ok((command, label))
        }
        // The server at the URL is not started: the command is never run, the URL names it.
        (false, None) => match endpoint {
            Some(endpoint) => Ok((ServerCommand::new(&endpoint.url), endpoint.url.clone())),
            None => bundled_server().map(|path| {
                let command = ServerCommand::new(path);
                let label = command.display();
                (command, label)
            }),
        },
    };
    chosen.map_err(usage)
}

fn value_name(arg: impl ValueEnum) -> String {
    arg.to_possible_value()
        .map(|v| v.get_name().to_owned())
        .unwrap_or_default()
}

fn run(cli: BenchArgs) -> u8 {
    if !(cli.timeout > 0.0 && cli.timeout.is_finite()) {
        return usage("--timeout must be a positive number of seconds");
    }
    if cli.calls == 0 || cli.runs == 0 || cli.window.is_empty() || cli.window.contains(&0) {
        return usage("--calls, --runs and every --window must be at least 1");
    }
    if cli.payload.is_empty() {
        return usage("--payload needs at least one size");
    }
    if cli.url.is_some() && (cli.concurrency.is_empty() || cli.concurrency.contains(&0)) {
        return usage("every --concurrency must be at least 1");
    }
    let http = match &cli.url {
        None => None,
        Some(url) => match http::Endpoint::parse(url) {
            Ok(endpoint) => Some(http::Target {
                endpoint,
                start: !cli.command.is_empty() || cli.floor,
            }),
            Err(e) => return usage(e),
        },
    };
    let stdio = match cli.stdio {
        StdioArg::Pipes => driver::Stdio::Pipes,
        StdioArg::Socket => driver::Stdio::Socket,
    };
    if stdio == driver::Stdio::Socket && cli.driver == DriverArg::Client {
        return usage(
            "--stdio socket needs the lean driver: the mcp-client library spawns servers on pipes",
        );
    }
    let floor_reply = cli
        .floor
        .then(|| cli.floor_reply.unwrap_or(FloorReplyArg::Plain));
    let floor_work_ns = cli.floor.then(|| cli.floor_work.unwrap_or(0));
    let (mut command, label) = match benched(&cli, http.as_ref()) {
        Ok(benched) => benched,
        Err(code) => return code,
    };
    for (k, v) in &cli.env {
        command = command.env(k, v);
    }
    if let Some(dir) = &cli.cwd {
        command = command.current_dir(dir);
    }
    let pin = match cli.pin {
        None => None,
        Some(arg) => {
            let placement = match arg {
                PinArg::Same => pin::Placement::Same,
                PinArg::Split => pin::Placement::Split,
            };
            match pin::allowed().and_then(|cpus| pin::Pin::choose(placement, &cpus)) {
                Ok(pin) => Some(pin),
                Err(e) => return usage(e),
            }
        }
    };
    let config = BenchConfig {
        command,
        label,
        floor: cli.floor,
        floor_reply: floor_reply.map(floor::Reply::from),
        floor_work_ns,
        framing: cli.framing.into(),
        stdio,
        driver: match cli.driver {
            DriverArg::Lean => DriverKind::Lean,
            DriverArg::Client => DriverKind::Client,
        },
        calls: cli.calls,
        windows: if http.is_some() {
            cli.concurrency.clone()
        } else {
            cli.window.clone()
        },
        payloads: cli.payload.clone(),
        runs: cli.runs,
        warmup: cli.warmup,
        wait: Duration::from_secs_f64(cli.timeout),
        progress: mcp_bench::progress_wanted(),
        pin,
        http,
    };
    let runs = match mcp_bench::run(&config) {
        Ok(r) => r,
        Err(BenchError::Start(m)) => {
            eprintln!("mcp-bench: {m}");
            return START;
        }
        Err(BenchError::Verify(m)) => {
            eprintln!("mcp-bench: FAILED: {m}");
            return 1;
        }
    };
    match cli.format {
        FormatArg::Text => print!("{}", report::text(&config, &runs)),
        FormatArg::Json => match serde_json::to_string_pretty(&report::json(&config, &runs)) {
            Ok(s) => println!("{s}"),
            Err(e) => eprintln!("mcp-bench: cannot write the JSON report: {e}"),
        },
    }
    let mut failed = false;
    for (i, r) in runs.iter().enumerate() {
        if let Some(errors) = r.errors.as_ref().filter(|e| e.total() > 0) {
            eprintln!(
                "mcp-bench: FAILED: run {} of {}: {} request(s) failed ({} non-2xx, {} bad or \
                 missing replies, {} without an answer); first: {}",
                i + 1,
                runs.len(),
                errors.total(),
                errors.non_2xx,
                errors.bad_replies,
                errors.transport,
                errors.first.join("; ")
            );
            failed = true;
        }
        if let Some(problem) = &r.eof_problem {
            eprintln!(
                "mcp-bench: FAILED: run {} of {}: {problem}",
                i + 1,
                runs.len()
            );
            failed = true;
        }
    }
    u8::from(failed)
}
