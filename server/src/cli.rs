//! The command line, logging to stderr, and the shutdown signal.

use std::io::IsTerminal;
use std::net::SocketAddr;

use clap::{Parser, ValueEnum};
use mcp_protocol::codec::DEFAULT_MAX_MESSAGE_BYTES;
use mcp_protocol::FramingMode;
use tracing_subscriber::EnvFilter;

/// An MCP echo server over stdio, or over Streamable HTTP with --http.
///
/// It reads JSON-RPC messages on stdin and writes replies on stdout; logs go to stderr only.
/// Launch it from an MCP client, for example: claude mcp add echo -- mcp-echo-server
///
/// With --http it serves one MCP endpoint (default http://127.0.0.1:8000/mcp) for both the
/// 2025 session era and stateless 2026-07-28 requests, and prints
/// `listening on http://ADDR/PATH` on stderr once bound.
#[derive(Debug, Parser)]
#[command(name = "mcp-echo-server", version)]
pub struct Cli {
    /// How messages are framed on stdin/stdout. `auto` detects newline-delimited JSON (the MCP
    /// standard) or `Content-Length` headers from the first bytes and answers in kind.
    #[arg(long, value_enum, default_value_t = FramingArg::Auto)]
    pub framing: FramingArg,

    /// The largest message accepted, in bytes. Larger ones get a -32600 error and are skipped
    /// (over HTTP: 413, checked before the body is read).
    #[arg(long, default_value_t = DEFAULT_MAX_MESSAGE_BYTES as u64, value_name = "BYTES",
          value_parser = clap::value_parser!(u64).range(64..=(1 << 32)))]
    pub max_message_bytes: u64,

    /// Log filter for stderr: off, error, warn, info, debug, trace, or a tracing directive
    /// such as `mcp_echo_server=debug`. Overrides RUST_LOG. Default: RUST_LOG, else `info`.
    #[arg(long, value_name = "LEVEL")]
    pub log_level: Option<String>,

    /// Serve Streamable HTTP on ADDR (IP:PORT) instead of stdio. Without ADDR: 127.0.0.1:8000
    /// (loopback only). A non-loopback ADDR such as 0.0.0.0:8000 exposes the server, which has
    /// no authentication, to the network: only when you say so. Port 0 picks a free port.
    #[arg(long, value_name = "ADDR", num_args = 0..=1,
          default_missing_value = "127.0.0.1:8000")]
    pub http: Option<SocketAddr>,

    /// The MCP endpoint's path; other paths get 404.
    #[arg(long, value_name = "PATH", default_value = "/mcp", requires = "http",
          value_parser = parse_path)]
    pub http_path: String,

    /// Also accept requests whose Origin header is ORIGIN (e.g. https://app.example.com;
    /// repeatable). Loopback origins (http(s)://localhost, 127.0.0.1, [::1], any port) and
    /// requests without Origin are always accepted; any other Origin gets 403.
    #[arg(long, value_name = "ORIGIN", requires = "http")]
    pub allow_origin: Vec<String>,

    /// The most HTTP sessions (2025-era, made by initialize) alive at once. At the cap an
    /// initialize ends an idle session to make room (never-used ones first, then the least
    /// recently used); it gets 503 only when every session has a request in flight.
    #[arg(long, value_name = "N", default_value_t = 1024, requires = "http",
          value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub max_sessions: u64,

    /// The most HTTP connections served at once; more wait until one closes.
    #[arg(long, value_name = "N", default_value_t = 1024, requires = "http",
          value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub max_connections: u64,

    /// The largest body of an HTTP POST with neither Mcp-Session-Id nor Mcp-Method header,
    /// which can only be an initialize: larger ones get 413 without being read whole.
    #[arg(long, value_name = "BYTES", default_value_t = 64 * 1024, requires = "http",
          value_parser = clap::value_parser!(u64).range(1024..=(1 << 32)))]
    pub max_initialize_bytes: u64,

    /// The most bytes all HTTP request bodies being received may take together; a body that
    /// would pass it gets 503 (retry). Never less than --max-message-bytes.
    #[arg(long, value_name = "BYTES", default_value_t = 128 << 20, requires = "http",
          value_parser = clap::value_parser!(u64).range(64..=(1 << 40)))]
    pub body_budget_bytes: u64,

    /// The most bytes of HTTP replies over 64 KiB that clients have not read yet; a reply
    /// that would pass it is refused with 503 (or, on an SSE stream, a -32000 error in its
    /// place).
    #[arg(long, value_name = "BYTES", default_value_t = 64 << 20, requires = "http",
          value_parser = clap::value_parser!(u64).range(64..=(1 << 40)))]
    pub reply_budget_bytes: u64,

    /// Seconds an HTTP client may leave its response unread (its socket full) before it is
    /// disconnected.
    #[arg(long, value_name = "SECS", default_value_t = 30.0, requires = "http",
          value_parser = parse_secs)]
    pub http_send_timeout: f64,

    /// Seconds an HTTP session may stay unused before it ends (later requests get 404).
    #[arg(long, value_name = "SECS", default_value_t = 600.0, requires = "http",
          value_parser = parse_secs)]
    pub session_idle_secs: f64,

    /// Seconds a client may take to send an HTTP request's head; slower ones are
    /// disconnected.
    #[arg(long, value_name = "SECS", default_value_t = 10.0, requires = "http",
          value_parser = parse_secs)]
    pub http_header_timeout: f64,

    /// Seconds a client may take to send an HTTP request's body; slower ones get 408.
    #[arg(long, value_name = "SECS", default_value_t = 30.0, requires = "http",
          value_parser = parse_secs)]
    pub http_body_timeout: f64,

    /// Seconds the server waits, once told to stop (SIGTERM, SIGINT; on stdio also the end
    /// of stdin), for requests already received to be answered. A reply still unsent then
    /// is given up with a warning and the exit status is 1; over HTTP a request whose body
    /// had not fully arrived is closed, losing nothing (exit 0).
    #[arg(long, value_name = "SECS", default_value_t = 2.0, value_parser = parse_secs)]
    pub shutdown_grace: f64,

    /// Also offer the diagnostic tools (diag_progress, diag_slow, diag_log, diag_sampling,
    /// diag_elicitation, diag_roots, diag_tool_list_changed, diag_error, diag_large,
    /// diag_image): ask a host to call one and it exercises that client feature. Declares the
    /// `logging` capability and `tools.listChanged`. Without it: only `echo`.
    #[arg(long)]
    pub diagnostic: bool,
}

fn parse_secs(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v <= 1e6 => Ok(v),
        _ => Err(format!(
            "{s:?} is not a number of seconds between 0 and 1000000"
        )),
    }
}

fn parse_path(s: &str) -> Result<String, String> {
    if s.starts_with('/') && !s.contains(['?', '#', ' ']) {
        Ok(s.to_owned())
    } else {
        Err(format!(
            "{s:?} is not a path (it must start with / and have no query)"
        ))
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum FramingArg {
    Auto,
    Ndjson,
    ContentLength,
}

impl From<FramingArg> for FramingMode {
    fn from(f: FramingArg) -> Self {
        match f {
            FramingArg::Auto => FramingMode::Auto,
            FramingArg::Ndjson => FramingMode::Ndjson,
            FramingArg::ContentLength => FramingMode::ContentLength,
        }
    }
}

/// Sends logs to stderr as `--log-level` (or `RUST_LOG`) says; a bad filter is a usage error
/// (exit 2), said on stderr.
pub fn start_logging(cli: &Cli) -> Result<(), std::process::ExitCode> {
    init_logging(cli.log_level.as_deref()).map_err(|message| {
        eprintln!("mcp-echo-server: {message}");
        std::process::ExitCode::from(2)
    })
}

fn init_logging(level: Option<&str>) -> Result<(), String> {
    let filter = match level {
        Some(directive) => EnvFilter::try_new(directive)
            .map_err(|e| format!("invalid --log-level {directive:?}: {e}"))?,
        None => EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
    };
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false)
        .init();
    Ok(())
}

/// Completes on SIGTERM or SIGINT: both mean "answer what was read, flush, exit 0".
///
/// The handlers are installed here, before serving starts. The signals are then awaited in a
/// task of their own, which fires a oneshot: the serve loop polls its shutdown future on every
/// turn, and polling two `Signal`s there cost about 1.1 k instructions a turn, a tenth of a
/// window-1 round trip's work (BENCHMARKS.md); a pending oneshot costs a few dozen. Must be
/// called inside the runtime.
pub fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    use tokio::signal::unix::{signal, SignalKind};
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    match (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) {
        (Ok(mut term), Ok(mut int)) => {
            tokio::spawn(async move {
                tokio::select! {
                    _ = term.recv() => tracing::info!("SIGTERM: finishing"),
                    _ = int.recv() => tracing::info!("SIGINT: finishing"),
                }
                let _ = tx.send(());
            });
        }
        (Err(e), _) | (_, Err(e)) => {
            tracing::warn!("cannot listen for signals ({e}); only stdin EOF stops the server");
        }
    }
    async move {
        if rx.await.is_err() {
            // No signal will come (none could be listened for, or the runtime is ending).
            std::future::pending::<()>().await;
        }
    }
}
