//! `mcp-echo-server`: an MCP server over stdio (or Streamable HTTP with `--http`) with one
//! tool, `echo`, and with `--diagnostic` the tools that exercise each client feature.

use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use mcp_echo_server::{
    default_tools, diagnostic_tools, serve, serve_blocking, serve_http, BlockingStdio, Config,
    Exit, HttpConfig, DEFAULT_HTTP_ADDR,
};

mod cli;
mod malloc;

use cli::{shutdown_signal, start_logging, Cli};

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Err(code) = start_logging(&cli) {
        return code;
    }
    if cli.http.is_some() {
        malloc::fix_threshold();
    }
    if cli.http.is_none() {
        match mcp_echo_server::stdio::blocking() {
            Some(Ok(pipes)) => {
                return exit_code(serve_on_this_thread(&pipes, &stdio_config(&cli), &cli))
            }
            Some(Err(e)) => {
                tracing::debug!("serving on the async loop: cannot set up the blocking one ({e})")
            }
            None => {}
        }
    }
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            tracing::error!("cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let code = if cli.http.is_some() {
        runtime.block_on(serve_over_http(&cli))
    } else {
        runtime.block_on(serve_over_stdio(&cli))
    };
    // tokio's stdin (a terminal, a file) reads on a blocking thread that may still be parked
    // in read(2) after a signal; do not wait for it.
    runtime.shutdown_background();
    code
}

/// The stdio settings from the command line; says what is served.
fn stdio_config(cli: &Cli) -> Config {
    if std::io::stdin().is_terminal() {
        eprintln!(
            "mcp-echo-server speaks MCP (JSON-RPC) over stdin/stdout and is meant to be launched by an MCP client, \
             e.g. `claude mcp add echo -- mcp-echo-server`. Type JSON-RPC messages one per line, or press Ctrl-D to exit."
        );
    }
    let config = Config {
        framing: cli.framing.into(),
        max_message_bytes: usize::try_from(cli.max_message_bytes).unwrap_or(usize::MAX),
        shutdown_grace: Duration::from_secs_f64(cli.shutdown_grace),
        ..Config::default()
    };
    tracing::info!(
        version = env!("CARGO_PKG_VERSION"),
        framing = ?config.framing,
        max_message_bytes = config.max_message_bytes,
        "serving MCP on stdio"
    );
    config
}

/// `echo`, and with `--diagnostic` the diagnostic tools.
fn tools(cli: &Cli) -> Arc<mcp_echo_server::ToolSet> {
    if cli.diagnostic {
        tracing::info!("diagnostic tools enabled");
        Arc::new(diagnostic_tools())
    } else {
        Arc::new(default_tools())
    }
}

/// How a stdio loop's end maps to the exit status.
fn exit_code(served: std::io::Result<Exit>) -> ExitCode {
    match served {
        Ok(Exit::InputClosed | Exit::Shutdown | Exit::OutputClosed) => {
            tracing::info!("exiting");
            ExitCode::SUCCESS
        }
        Ok(Exit::DrainTimedOut | Exit::ReadFailed(_)) => ExitCode::FAILURE,
        Err(e) => {
            tracing::error!("writing to stdout failed: {e}");
            ExitCode::FAILURE
        }
    }
}

/// stdin and stdout are pipes: the blocking loop, with SIGTERM and SIGINT waited for on a
/// thread of their own, which stops it.
fn serve_on_this_thread(
    pipes: &BlockingStdio,
    config: &Config,
    cli: &Cli,
) -> std::io::Result<Exit> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    tracing::debug!("serving on the blocking loop");
    match signal_hook::iterator::Signals::new([SIGTERM, SIGINT]) {
        Ok(mut signals) => {
            let stopper = pipes.stopper();
            let spawned = std::thread::Builder::new()
                .name("signals".to_owned())
                .spawn(move || {
                    if let Some(signal) = signals.forever().next() {
                        let name = if signal == SIGINT {
                            "SIGINT"
                        } else {
                            "SIGTERM"
                        };
                        tracing::info!("{name}: finishing");
                        stopper.stop(signal);
                    }
                });
            if let Err(e) = spawned {
                tracing::warn!("cannot wait for signals ({e}); only stdin EOF stops the server");
            }
        }
        Err(e) => {
            tracing::warn!("cannot listen for signals ({e}); only stdin EOF stops the server");
        }
    }
    serve_blocking(pipes, config, tools(cli))
}

/// stdin or stdout is not a pipe (a socket, a terminal, a file): the async loop.
async fn serve_over_stdio(cli: &Cli) -> ExitCode {
    let config = stdio_config(cli);
    tracing::debug!("serving on the async loop");
    // The signal handlers are installed before the first read.
    let shutdown = shutdown_signal();
    let (input, output) = mcp_echo_server::stdio::streams();
    exit_code(serve(input, output, &config, tools(cli), shutdown).await)
}

/// `--http`: one Streamable HTTP endpoint.
async fn serve_over_http(cli: &Cli) -> ExitCode {
    let addr = cli.http.unwrap_or(DEFAULT_HTTP_ADDR);
    let config = HttpConfig {
        addr,
        path: cli.http_path.clone(),
        allowed_origins: cli.allow_origin.clone(),
        max_message_bytes: usize::try_from(cli.max_message_bytes).unwrap_or(usize::MAX),
        max_sessions: usize::try_from(cli.max_sessions).unwrap_or(usize::MAX),
        max_connections: usize::try_from(cli.max_connections).unwrap_or(usize::MAX),
        session_idle: Duration::from_secs_f64(cli.session_idle_secs),
        header_timeout: Duration::from_secs_f64(cli.http_header_timeout),
        body_timeout: Duration::from_secs_f64(cli.http_body_timeout),
        max_initialize_bytes: usize::try_from(cli.max_initialize_bytes).unwrap_or(usize::MAX),
        body_budget_bytes: usize::try_from(cli.body_budget_bytes).unwrap_or(usize::MAX),
        reply_budget_bytes: usize::try_from(cli.reply_budget_bytes).unwrap_or(usize::MAX),
        send_timeout: Duration::from_secs_f64(cli.http_send_timeout),
        shutdown_grace: Duration::from_secs_f64(cli.shutdown_grace),
        ..HttpConfig::default()
    };
    // The signal handlers are installed before the socket is bound, so a SIGTERM sent as soon
    // as the "listening" line appears is already handled.
    let shutdown = shutdown_signal();
    match serve_http(config, tools(cli), shutdown).await {
        Ok(Exit::DrainTimedOut) => ExitCode::FAILURE,
        Ok(_) => {
            tracing::info!("exiting");
            ExitCode::SUCCESS
        }
        Err(e) => {
            tracing::error!("cannot listen on {addr}: {e}");
            ExitCode::FAILURE
        }
    }
}
