//! A client for conformance suites' client mode, on this library: the official MCP
//! conformance suite (`conformance client --command conformance_client --scenario NAME`) runs
//! it with the server's URL as its last argument and the scenario's name in
//! `MCP_CONFORMANCE_SCENARIO`; `mcp-conformance client` runs it the same way, or over stdio
//! with the path of a server to spawn as its last argument.
//!
//! ```sh
//! MCP_CONFORMANCE_SCENARIO=tools_call cargo run -p mcp-client --example conformance_client -- http://127.0.0.1:3001/mcp
//! MCP_CONFORMANCE_SCENARIO=initialize cargo run -p mcp-client --example conformance_client -- --stdio path/to/server
//! ```
//!
//! Per scenario: `initialize` (and any scenario it does not know) connects, lists the tools and
//! closes (over HTTP, a request that finds the session expired starts a new one and is sent
//! again); `tools_call` also calls `add_numbers {a, b}`; `sse-retry` calls
//! `test_reconnection`, whose reply comes after the server closed the stream and the client
//! resumed it; `elicitation-sep1034-client-defaults` calls
//! `test_client_elicitation_defaults` while answering elicitation by accepting with the
//! schema's defaults. The exit status is 0 when every step worked, 1 otherwise (with the
//! error on stderr), 2 for bad arguments.

use std::future::Future;
use std::process::ExitCode;

use mcp_client::elicitation::ElicitResponse;
use mcp_client::{Client, ClientError, ClientOptions, Elicitation, HttpTarget, ServerCommand};
use serde_json::{json, Map};

const USAGE: &str = "usage: conformance_client [--stdio] <server URL | server executable>
  MCP_CONFORMANCE_SCENARIO names the scenario (initialize, tools_call, sse-retry,
  elicitation-sep1034-client-defaults; and mcp-conformance client's timeout, where the call
  gives up after 1 s; any other is run as initialize).
  A URL (http:// or https://) is reached over Streamable HTTP; anything else, or any target
  with --stdio, is spawned as a stdio server.";

/// What the client does, by scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scenario {
    Initialize,
    ToolsCall,
    /// `mcp-conformance client`'s `timeout`: add_numbers is never answered; the call gives up
    /// after 1 s and cancels it (`notifications/cancelled`).
    Timeout,
    SseRetry,
    ElicitationDefaults,
}

impl Scenario {
    fn from_name(name: &str) -> Scenario {
        match name {
            "tools_call" | "tools-call" => Scenario::ToolsCall,
            "timeout" => Scenario::Timeout,
            "sse-retry" => Scenario::SseRetry,
            "elicitation-sep1034-client-defaults" | "elicitation-defaults" => {
                Scenario::ElicitationDefaults
            }
            _ => Scenario::Initialize,
        }
    }
}

/// Where the server is.
#[derive(Debug)]
enum Target {
    Http(String),
    Stdio(String),
}

fn parse_args(args: &[String]) -> Option<Target> {
    let (last, rest) = args.split_last()?;
    let mut stdio = false;
    for arg in rest {
        match arg.as_str() {
            "--stdio" => stdio = true,
            _ => return None,
        }
    }
    let is_url = last.starts_with("http://") || last.starts_with("https://");
    Some(if is_url && !stdio {
        Target::Http(last.clone())
    } else {
        Target::Stdio(last.clone())
    })
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(target) = parse_args(&args) else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let name = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let scenario = Scenario::from_name(&name);
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("conformance_client: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(scenario, &target)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!(
                "conformance_client: scenario {name:?} ({scenario:?}) against {target:?}: {e}"
            );
            ExitCode::FAILURE
        }
    }
}

/// Elicitation is declared only where the scenario asks for it: a client declares what it
/// does, and nothing more.
fn options(scenario: Scenario) -> ClientOptions {
    let elicitation = (scenario == Scenario::ElicitationDefaults).then(|| {
        // The user submits the form as shown: every field keeps its pre-filled default
        // (the library adds the defaults of the fields left out).
        Elicitation::new(|request| async move {
            eprintln!("elicitation: {}", request.message);
            ElicitResponse::accept(Map::new())
        })
    });
    let mut options = ClientOptions {
        elicitation,
        ..ClientOptions::default()
    };
    if scenario == Scenario::Timeout {
        options.request_timeout = std::time::Duration::from_secs(1);
    }
    options
}

/// Why a scenario failed.
#[derive(Debug, thiserror::Error)]
enum Failed {
    #[error(transparent)]
    Client(#[from] ClientError),
    #[error("{tool} returned an error result: {text}")]
    ToolError { tool: &'static str, text: String },
}

async fn run(scenario: Scenario, target: &Target) -> Result<(), Failed> {
    let options = options(scenario);
    let client = match target {
        Target::Http(url) => Client::connect_http(HttpTarget::new(url), options)?,
        Target::Stdio(path) => Client::spawn(ServerCommand::new(path), options)?,
    };
    let outcome = steps(scenario, &client).await;
    let report = client.close().await;
    tracing::info!(?report, "closed");
    outcome
}

/// Runs `request`; if the server ended the HTTP session (404), starts a new one and runs it
/// once more ("it MUST start a new session by sending a new InitializeRequest").
async fn renewing<T, F, Fut>(client: &Client, request: F) -> Result<T, ClientError>
where
    F: Fn() -> Fut,
    Fut: Future<Output = Result<T, ClientError>>,
{
    match request().await {
        Err(ClientError::SessionExpired { session_id, .. }) => {
            eprintln!("session {session_id} expired: starting a new one");
            client.connect().await?;
            request().await
        }
        other => other,
    }
}

async fn steps(scenario: Scenario, client: &Client) -> Result<(), Failed> {
    let connected = client.connect().await?;
    eprintln!(
        "connected ({} era, {})",
        connected.era(),
        connected.protocol_version()
    );
    let tools = renewing(client, || client.list_tools()).await?;
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    eprintln!("tools: {names:?}");
    let (tool, arguments) = match scenario {
        Scenario::Initialize => return Ok(()),
        Scenario::ToolsCall => ("add_numbers", json!({"a": 5, "b": 3})),
        Scenario::Timeout => {
            return match client
                .call_tool("add_numbers", json!({"a": 1, "b": 2}))
                .await
            {
                Err(ClientError::Timeout { .. }) => {
                    eprintln!("add_numbers timed out, as the scenario means it to");
                    Ok(())
                }
                other => other.map(drop).map_err(Failed::from),
            }
        }
        Scenario::SseRetry => ("test_reconnection", json!({})),
        Scenario::ElicitationDefaults => ("test_client_elicitation_defaults", json!({})),
    };
    let result = renewing(client, || client.call_tool(tool, arguments.clone())).await?;
    let text = serde_json::to_string(&result).unwrap_or_default();
    eprintln!("{tool} returned {text}");
    if result.is_error == Some(true) {
        return Err(Failed::ToolError { tool, text });
    }
    Ok(())
}
