//! `mcp-echo-server`: an MCP server over stdio (or Streamable HTTP with `--http`) with one
//! tool, `echo`.
//!
//! `--http` runs `mcp-echo-server-http`, installed beside this binary, in this process (exec):
//! the HTTP stack lives in that executable alone, so this one, which hosts start for every
//! stdio session, keeps the size, start time and memory it had without HTTP.

use std::ffi::OsString;
use std::io::IsTerminal;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use mcp_echo_server::{default_tools, serve, serve_blocking, BlockingStdio, Config, Exit};

#[path = "cli.rs"]
mod cli;

use cli::{shutdown_signal, start_logging, Cli};

/// The executable that serves `--http`, beside this one.
const HTTP_BINARY: &str = "mcp-echo-server-http";

fn main() -> ExitCode {
    let cli = Cli::parse();
    if cli.http.is_some() {
        return run_http_binary();
    }
    if let Err(code) = start_logging(&cli) {
        return code;
    }
    if std::io::stdin().is_terminal() {
        eprintln!(
            "mcp-echo-server speaks MCP (JSON-RPC) over stdin/stdout and is meant to be launched by an MCP client, \
             e.g. `claude mcp add echo -- mcp-echo-server`. Type JSON-RPC messages one per line, or press Ctrl-D to exit."
        );
    }
    let config = Config {
        framing: cli.framing.into(),
        max_message_bytes: usize::try_from(cli.max_message_bytes).unwrap_or(usize::MAX),
        ..Config::default()
    };
    tracing::info!(
        version = env!("CARGO_PKG_VERSION"),
        framing = ?config.framing,
        max_message_bytes = config.max_message_bytes,
        "serving MCP on stdio"
    );
    let result = match mcp_echo_server::stdio::blocking() {
        Some(Ok(stdio)) => serve_on_this_thread(&stdio, &config),
        Some(Err(e)) => {
            tracing::debug!("serving on the async loop: cannot set up the blocking one ({e})");
            serve_async(&config)
        }
        None => serve_async(&config),
    };
    match result {
        Ok(Exit::InputClosed | Exit::Shutdown | Exit::OutputClosed) => {
            tracing::info!("exiting");
            ExitCode::SUCCESS
        }
        Ok(Exit::DrainTimedOut) => ExitCode::FAILURE,
        Ok(Exit::ReadFailed(_)) => ExitCode::FAILURE,
        Err(e) => {
            tracing::error!("writing to stdout failed: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Replaces this process with `mcp-echo-server-http` and the same arguments (same pid, so
/// signals and exit status are the HTTP server's); returns only if that cannot be done.
fn run_http_binary() -> ExitCode {
    let beside = std::env::current_exe().map(|exe| exe.with_file_name(HTTP_BINARY));
    let path: PathBuf = match beside {
        Ok(path) => path,
        Err(e) => {
            eprintln!("mcp-echo-server: --http: cannot find this executable's directory ({e})");
            return ExitCode::FAILURE;
        }
    };
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let e = std::process::Command::new(&path)
        .arg0("mcp-echo-server")
        .args(args)
        .exec();
    eprintln!(
        "mcp-echo-server: --http runs {}, which could not be started ({e}); \
         `cargo install --path server` installs both binaries",
        path.display()
    );
    ExitCode::FAILURE
}

/// stdin and stdout are pipes or sockets: the blocking loop, with SIGTERM and SIGINT waited
/// for on a thread of their own, which stops it.
fn serve_on_this_thread(stdio: &BlockingStdio, config: &Config) -> std::io::Result<Exit> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    tracing::debug!("serving on the blocking loop");
    match signal_hook::iterator::Signals::new([SIGTERM, SIGINT]) {
        Ok(mut signals) => {
            let stopper = stdio.stopper();
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
    serve_blocking(stdio, config, Arc::new(default_tools()))
}

/// stdin or stdout is neither a pipe nor a socket (a terminal, a file): the async loop.
fn serve_async(config: &Config) -> std::io::Result<Exit> {
    tracing::debug!("serving on the async loop");
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            tracing::error!("cannot start the async runtime: {e}");
            return Ok(Exit::ReadFailed(e));
        }
    };
    let result = runtime.block_on(async {
        let (input, output) = mcp_echo_server::stdio::streams();
        serve(
            input,
            output,
            config,
            Arc::new(default_tools()),
            shutdown_signal(),
        )
        .await
    });
    // tokio's stdin reads on a blocking thread that may still be parked in read(2) (after a
    // signal); do not wait for it.
    runtime.shutdown_background();
    result
}
