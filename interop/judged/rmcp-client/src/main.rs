//! A client on the official Rust SDK (rmcp), as `mcp-conformance client` runs it: the last
//! argument is the server (a relay executable over stdio, a URL over Streamable HTTP). It
//! connects with rmcp's default client (no capabilities), lists tools, calls add_numbers with a
//! 2 s timeout, and closes.

use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use tokio::process::Command;

#[tokio::main]
async fn main() {
    let target = std::env::args().next_back().unwrap_or_default();
    if let Err(e) = run(&target).await {
        eprintln!("judged-rmcp: {e}");
    }
}

async fn run(target: &str) -> Result<(), Box<dyn std::error::Error>> {
    let client = if target.starts_with("http") {
        ().serve(StreamableHttpClientTransport::from_uri(target.to_owned())).await?
    } else {
        ().serve(TokioChildProcess::new(Command::new(target))?).await?
    };
    client.list_tools(None).await?;
    let mut args = serde_json::Map::new();
    args.insert("a".into(), 1.into());
    args.insert("b".into(), 2.into());
    let call = client.call_tool(CallToolRequestParams::new("add_numbers").with_arguments(args));
    match tokio::time::timeout(Duration::from_secs(2), call).await {
        Ok(result) => drop(result?),
        Err(_) => {
            eprintln!("judged-rmcp: add_numbers timed out");
            // As an application would: go on for a moment before closing, so what rmcp sends
            // when the call is dropped (notifications/cancelled) is not cut off by the close.
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
    }
    client.cancel().await?;
    Ok(())
}
