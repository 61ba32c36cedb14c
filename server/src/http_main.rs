//! `mcp-echo-server-http`: `mcp-echo-server --http`, as an executable of its own. The stdio
//! binary execs it for `--http`, with the same arguments; run directly it takes the same ones,
//! and serves HTTP with or without `--http`.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use mcp_echo_server::{default_tools, serve_http, Exit, HttpConfig, DEFAULT_HTTP_ADDR};

#[path = "cli.rs"]
mod cli;

use cli::{shutdown_signal, start_logging, Cli};

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Err(code) = start_logging(&cli) {
        return code;
    }
    serve_over_http(&cli)
}

/// `--http`: the only path that starts a multi-connection runtime and the HTTP stack.
fn serve_over_http(cli: &Cli) -> ExitCode {
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
        ..HttpConfig::default()
    };
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
    // The signal handlers are installed before the socket is bound, so a SIGTERM sent as soon
    // as the "listening" line appears is already handled.
    let result = runtime.block_on(async {
        let shutdown = shutdown_signal();
        serve_http(config, Arc::new(default_tools()), shutdown).await
    });
    match result {
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
