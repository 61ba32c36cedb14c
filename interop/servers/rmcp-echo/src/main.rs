//! Minimal MCP echo server built on the official Rust SDK (`rmcp`), used as an
//! interop target for the conformance harness.
//!
//! One tool, `echo`, taking `{"text": string}` and returning the text as a
//! single text content block. Over stdio, stdout carries nothing but JSON-RPC messages,
//! diagnostics go to stderr, and it exits when stdin closes.
//!
//! Usage: `rmcp-echo [--transport stdio|pipes|http] [--addr HOST:PORT]`
//!   stdio  `rmcp::transport::stdio()`        (tokio Stdin/Stdout, blocking pool; default)
//!   pipes  `rmcp::transport::stdio_pipes()`  (non-blocking pipe driver when both ends are FIFOs)
//!   http   Streamable HTTP at `http://ADDR/mcp`: rmcp's `StreamableHttpService` with its
//!          defaults (stateful sessions in a `LocalSessionManager`, replies as SSE streams,
//!          loopback `Host`s only) served by axum (TCP_NODELAY on) on tokio's multi-thread
//!          runtime, as rmcp's examples serve it. `--addr` defaults to 127.0.0.1:8000 (port 0: any free port);
//!          prints `listening on http://ADDR/mcp` on stderr once bound; runs until killed.

use std::process::ExitCode;

use axum::serve::ListenerExt;
use rmcp::{
    ServerHandler, ServiceExt,
    handler::server::wrapper::Parameters,
    schemars::JsonSchema,
    tool, tool_handler, tool_router,
    transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
    },
};
use serde::Deserialize;

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct EchoArgs {
    /// The text to echo back.
    text: String,
}

#[derive(Debug, Clone, Copy)]
struct Echo;

#[tool_router]
impl Echo {
    // readOnlyHint lets harnesses that only call side-effect-free tools exercise tools/call.
    #[tool(
        description = "Echo the given text back as a text content block",
        annotations(read_only_hint = true)
    )]
    async fn echo(&self, Parameters(EchoArgs { text }): Parameters<EchoArgs>) -> String {
        text
    }
}

#[tool_handler(name = "rmcp-echo")]
impl ServerHandler for Echo {}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Transport {
    Stdio,
    Pipes,
    Http(String),
}

const USAGE: &str = "usage: rmcp-echo [--transport stdio|pipes|http] [--addr HOST:PORT]";

fn parse_args() -> Result<Transport, String> {
    let mut kind = "stdio".to_owned();
    let mut addr = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n.to_owned(), Some(v.to_owned())),
            _ => (arg.clone(), None),
        };
        let mut value = |name: &str| {
            inline
                .clone()
                .or_else(|| args.next())
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match name.as_str() {
            "-h" | "--help" => return Err(String::new()),
            "--transport" => kind = value("--transport")?,
            "--addr" => addr = Some(value("--addr")?),
            other => return Err(format!("unexpected argument {other:?}")),
        }
    }
    match (kind.as_str(), addr) {
        ("stdio", None) => Ok(Transport::Stdio),
        ("pipes", None) => Ok(Transport::Pipes),
        ("http", addr) => Ok(Transport::Http(
            addr.unwrap_or_else(|| "127.0.0.1:8000".to_owned()),
        )),
        ("stdio" | "pipes", Some(_)) => Err("--addr needs --transport http".to_owned()),
        (v, _) => Err(format!(
            "unknown transport {v:?} (expected stdio, pipes or http)"
        )),
    }
}

async fn run_stdio(transport: Transport) -> Result<(), Box<dyn std::error::Error>> {
    let service = match transport {
        Transport::Pipes => Echo.serve(rmcp::transport::stdio_pipes()).await?,
        _ => Echo.serve(rmcp::transport::stdio()).await?,
    };
    // Resolves when the peer closes stdin (or the transport fails).
    service.waiting().await?;
    Ok(())
}

async fn run_http(addr: &str) -> Result<(), Box<dyn std::error::Error>> {
    let service = StreamableHttpService::new(
        || Ok(Echo),
        LocalSessionManager::default().into(),
        StreamableHttpServerConfig::default(),
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind(addr).await?;
    eprintln!("listening on http://{}/mcp", listener.local_addr()?);
    // TCP_NODELAY, as axum documents it: an SSE reply is written in several small writes, and
    // without it Nagle's algorithm holds the last one until the client's delayed ACK (40 ms).
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, router).await?;
    Ok(())
}

fn main() -> ExitCode {
    let transport = match parse_args() {
        Ok(t) => t,
        Err(msg) if msg.is_empty() => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(msg) => {
            eprintln!("rmcp-echo: {msg}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    // Stdio on one thread, as before; HTTP on the multi-thread runtime `#[tokio::main]` gives.
    let runtime = match &transport {
        Transport::Http(_) => tokio::runtime::Builder::new_multi_thread(),
        _ => tokio::runtime::Builder::new_current_thread(),
    }
    .enable_all()
    .build();
    let result = match runtime {
        Ok(rt) => match &transport {
            Transport::Http(addr) => rt.block_on(run_http(addr)),
            _ => rt.block_on(run_stdio(transport)),
        },
        Err(e) => Err(e.into()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rmcp-echo: {e}");
            ExitCode::FAILURE
        }
    }
}
