//! The chapter's end-to-end chain, with a scripted mock model:
//! spawn the echo server → connect (the `server/discover` probe, then the modern era or the
//! `initialize` handshake; every frame printed) → merge its tools into a registry
//! that already has local tools → the model asks for `echo("hello from MCP")` → the call crosses
//! the pipe → the final answer prints the echoed text.
//!
//! ```sh
//! cargo run -p mcp-client --example agent_demo
//! cargo run -p mcp-client --example agent_demo -- --framing content-length
//! cargo run -p mcp-client --example agent_demo -- --era legacy
//! # over Streamable HTTP, to a server already listening (its echo tool is used):
//! cargo run -p mcp-client --example agent_demo -- --url http://127.0.0.1:3001/mcp
//! cargo run -p mcp-client --example agent_demo -- --url https://example.com/mcp --header 'Authorization: Bearer TOKEN'
//! ```

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, ValueEnum};
use mcp_client::bridge::register_mcp_tools;
use mcp_client::protocol::Framing;
use mcp_client::registry::{executor, ModelTool, ParamSpec};
use mcp_client::{
    BridgeOptions, Client, ClientOptions, EraChoice, HttpTarget, RiskTier, ServerCommand,
    ToolOutput, ToolRegistry, ToolSpec,
};
use serde_json::{json, Value};

#[derive(Debug, Parser)]
struct Args {
    /// Framing between the client and the server (the server detects it).
    #[arg(long, value_enum, default_value_t = FramingArg::Ndjson)]
    framing: FramingArg,
    /// The server binary; default: mcp-echo-server of this workspace (built if missing).
    #[arg(long)]
    server: Option<PathBuf>,
    /// Which MCP era to connect in: probe with server/discover (auto), or force one.
    #[arg(long, value_enum, default_value_t = EraArg::Auto)]
    era: EraArg,
    /// Connect to this Streamable HTTP endpoint instead of spawning a server.
    #[arg(long)]
    url: Option<String>,
    /// A header for every HTTP request, `Name: value` (repeatable; with --url).
    #[arg(long = "header", value_parser = parse_header)]
    headers: Vec<(String, String)>,
}

fn parse_header(text: &str) -> Result<(String, String), String> {
    let (name, value) = text
        .split_once(':')
        .ok_or_else(|| format!("expected `Name: value`, got {text:?}"))?;
    Ok((name.trim().to_owned(), value.trim().to_owned()))
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum EraArg {
    Auto,
    Legacy,
    Modern,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum FramingArg {
    Ndjson,
    ContentLength,
}

/// What the mock model does next.
enum Turn {
    ToolUse { name: String, input: Value },
    Answer(String),
}

/// A scripted stand-in for an LLM: first it asks for the echo tool (putting its text in the
/// tool's first required string argument: `text` for ours, `message` for server-everything),
/// then it answers with what the tool returned.
struct ScriptedModel;

impl ScriptedModel {
    fn next(&self, tools: &[ModelTool], last_tool_output: Option<&ToolOutput>) -> Turn {
        match last_tool_output {
            None => {
                let echo = tools.iter().find(|t| t.name.ends_with("__echo"));
                let name = echo.map_or_else(|| "mcp__echo__echo".to_owned(), |t| t.name.clone());
                let argument = echo
                    .and_then(|t| t.input_schema["required"].as_array())
                    .and_then(|required| required.first())
                    .and_then(Value::as_str)
                    .unwrap_or("text")
                    .to_owned();
                Turn::ToolUse {
                    name,
                    input: json!({ argument: "hello from MCP" }),
                }
            }
            Some(out) if out.is_error => Turn::Answer(format!("The tool failed: {}", out.text)),
            Some(out) => Turn::Answer(format!("The MCP echo server replied: {}", out.text)),
        }
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .init();
    match run(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("agent_demo: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    let framing = match args.framing {
        FramingArg::Ndjson => Framing::Ndjson,
        FramingArg::ContentLength => Framing::ContentLength,
    };

    // 1. A registry that already has local tools.
    let mut registry = ToolRegistry::new();
    registry.register(
        ToolSpec {
            name: "add".into(),
            description: "Adds two numbers.".into(),
            parameters: vec![
                ParamSpec::new("a", "number").as_required(),
                ParamSpec::new("b", "number").as_required(),
            ],
            risk: RiskTier::Auto,
        },
        executor(|args: Value| async move {
            match (args["a"].as_f64(), args["b"].as_f64()) {
                (Some(a), Some(b)) => ToolOutput::ok((a + b).to_string()),
                _ => ToolOutput::error("add needs numbers `a` and `b`"),
            }
        }),
    )?;
    registry.register(
        ToolSpec {
            name: "delete_file".into(),
            description: "Deletes a file (needs the user's approval).".into(),
            parameters: vec![ParamSpec::new("path", "string").as_required()],
            risk: RiskTier::Approve,
        },
        executor(|_args: Value| async move { ToolOutput::error("not in a demo") }),
    )?;
    println!("local tools: {:?}", registry.names());

    // 2. Spawn the server (or reach it over HTTP) and connect, printing every frame.
    let era = match args.era {
        EraArg::Auto => EraChoice::Auto,
        EraArg::Legacy => EraChoice::Legacy,
        EraArg::Modern => EraChoice::Modern,
    };
    let options = ClientOptions {
        framing,
        era,
        ..ClientOptions::default()
    }
    .print_frames();
    let client = match &args.url {
        Some(url) => {
            println!("connecting to {url} (Streamable HTTP)");
            let mut target = HttpTarget::new(url);
            for (name, value) in &args.headers {
                target = target.header(name, value);
            }
            Client::connect_http(target, options)?
        }
        None => {
            let server = match &args.server {
                Some(path) => path.clone(),
                None => echo_server_path()?,
            };
            println!("spawning {} ({framing:?})", server.display());
            Client::spawn(ServerCommand::new(&server), options)?
        }
    };
    let connected = client.connect().await?;
    let server_name = connected
        .server_info()
        .map(|info| format!("{} {}", info.name, info.version))
        .unwrap_or_else(|| "the server".to_owned());
    println!(
        "connected ({} era): {server_name} speaks {}",
        connected.era(),
        connected.protocol_version()
    );

    // 3. Merge the remote tools.
    let added =
        register_mcp_tools(&mut registry, &client, &BridgeOptions::for_server("echo")).await?;
    let tools = registry.model_tools();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    println!("registered {added} MCP tool(s); the model sees: {names:?}");

    // 4. The agent loop with the scripted model.
    let model = ScriptedModel;
    println!("user: please say hello through the MCP server");
    let mut last = None;
    let answer = loop {
        match model.next(&tools, last.as_ref()) {
            Turn::ToolUse { name, input } => {
                println!("model: call {name}({input})");
                let output = registry.execute(&name, input).await;
                println!("tool: {output:?}");
                last = Some(output);
            }
            Turn::Answer(text) => break text,
        }
    };
    println!("final answer: {answer}");

    // 5. Close: stdin EOF first and the server exits by itself (over HTTP: DELETE of the
    // session, if the server started one).
    let report = client.close().await;
    let status = report
        .status
        .map_or("no status".to_owned(), |s| s.to_string());
    println!(
        "closed: {:?} ({status}) in {:?}",
        report.step, report.elapsed
    );
    Ok(())
}

/// The workspace's mcp-echo-server: beside this example's directory, or built on demand.
fn echo_server_path() -> Result<PathBuf, Box<dyn std::error::Error>> {
    let exe = std::env::current_exe()?;
    // target/<profile>/examples/agent_demo → target/<profile>/mcp-echo-server
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .ok_or("cannot locate the target directory")?;
    let candidate = profile_dir.join("mcp-echo-server");
    if candidate.exists() {
        return Ok(candidate);
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut build = std::process::Command::new(cargo);
    build.args(["build", "-p", "mcp-echo-server"]);
    if profile_dir.file_name().is_some_and(|n| n == "release") {
        build.arg("--release");
    }
    eprintln!("building mcp-echo-server ...");
    let status = build.status()?;
    if !status.success() || !candidate.exists() {
        return Err(format!(
            "mcp-echo-server not found at {}; build it with `cargo build -p mcp-echo-server` or pass --server",
            candidate.display()
        )
        .into());
    }
    Ok(candidate)
}
