//! Minimal MCP echo server built on the official Rust SDK (`rmcp`), used as an
//! interop target for the conformance harness.
//!
//! One tool, `echo`, taking `{"text": string}` and returning the text as a
//! single text content block. Stdio transport only; stdout carries nothing but
//! JSON-RPC messages, diagnostics go to stderr. Exits when stdin closes.
//!
//! Usage: `rmcp-echo [--transport stdio|pipes]`
//!   stdio  `rmcp::transport::stdio()`        (tokio Stdin/Stdout, blocking pool; default)
//!   pipes  `rmcp::transport::stdio_pipes()`  (non-blocking pipe driver when both ends are FIFOs)

use std::process::ExitCode;

use rmcp::{
    ServerHandler, ServiceExt,
    handler::server::wrapper::Parameters,
    schemars::JsonSchema,
    tool, tool_handler, tool_router,
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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Transport {
    Stdio,
    Pipes,
}

const USAGE: &str = "usage: rmcp-echo [--transport stdio|pipes]";

fn parse_args() -> Result<Transport, String> {
    let mut transport = Transport::Stdio;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = match arg.as_str() {
            "-h" | "--help" => return Err(String::new()),
            "--transport" => args
                .next()
                .ok_or_else(|| "--transport needs a value".to_owned())?,
            other => match other.strip_prefix("--transport=") {
                Some(v) => v.to_owned(),
                None => return Err(format!("unexpected argument {other:?}")),
            },
        };
        transport = match value.as_str() {
            "stdio" => Transport::Stdio,
            "pipes" => Transport::Pipes,
            v => return Err(format!("unknown transport {v:?} (expected stdio or pipes)")),
        };
    }
    Ok(transport)
}

async fn run(transport: Transport) -> Result<(), Box<dyn std::error::Error>> {
    let service = match transport {
        Transport::Stdio => Echo.serve(rmcp::transport::stdio()).await?,
        Transport::Pipes => Echo.serve(rmcp::transport::stdio_pipes()).await?,
    };
    // Resolves when the peer closes stdin (or the transport fails).
    service.waiting().await?;
    Ok(())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
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
    match run(transport).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rmcp-echo: {e}");
            ExitCode::FAILURE
        }
    }
}
