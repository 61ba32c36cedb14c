//! The 2026-07-28 (stateless) era: `server/discover`, tagged results, -32022, `_meta` rules,
//! and both eras in one process. In memory, and against the real binary in both framings.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use mcp_echo_server::{default_tools, serve, Config};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

const WAIT: Duration = Duration::from_secs(10);

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "modern-test", "version": "1"}
    })
}

fn modern(id: i64, method: &str, mut params: Value) -> Value {
    params["_meta"] = meta();
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn server_info() -> Value {
    json!({"name": "mcp-echo-server", "title": "MCP Echo Server", "version": env!("CARGO_PKG_VERSION")})
}

/// Sends every message, closes input, and returns the replies in order.
async fn exchange(messages: &[Value]) -> Vec<Value> {
    let (mut client, server) = tokio::io::duplex(1 << 20);
    let (r, w) = tokio::io::split(server);
    let task = tokio::spawn(async move {
        serve(
            r,
            w,
            &Config::default(),
            Arc::new(default_tools()),
            std::future::pending(),
        )
        .await
    });
    for m in messages {
        let mut line = serde_json::to_vec(m).unwrap();
        line.push(b'\n');
        client.write_all(&line).await.unwrap();
    }
    client.shutdown().await.unwrap();
    let mut out = String::new();
    tokio::time::timeout(WAIT, client.read_to_string(&mut out))
        .await
        .unwrap()
        .unwrap();
    tokio::time::timeout(WAIT, task)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[tokio::test]
async fn discover_without_a_handshake() {
    let replies = exchange(&[modern(1, "server/discover", json!({}))]).await;
    let result = &replies[0]["result"];
    assert_eq!(replies[0]["id"], 1);
    assert_eq!(result["resultType"], "complete");
    assert_eq!(
        result["supportedVersions"],
        json!([
            "2026-07-28",
            "2025-11-25",
            "2025-06-18",
            "2025-03-26",
            "2024-11-05"
        ])
    );
    assert_eq!(result["capabilities"], json!({"tools": {}}));
    assert_eq!(result["ttlMs"], 3_600_000);
    assert_eq!(result["cacheScope"], "public");
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"],
        server_info()
    );
    assert!(result["instructions"].as_str().unwrap().contains("echo"));
}

#[tokio::test]
async fn tools_are_served_statelessly_and_tagged() {
    let replies = exchange(&[
        modern(1, "tools/list", json!({})),
        modern(
            2,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "你好"}}),
        ),
        modern(3, "tools/call", json!({"name": "echo", "arguments": {}})),
        modern(4, "tools/call", json!({"name": "nope"})),
    ])
    .await;
    let list = &replies[0]["result"];
    assert_eq!(list["resultType"], "complete");
    assert_eq!(list["ttlMs"], 3_600_000);
    assert_eq!(list["cacheScope"], "public");
    assert_eq!(
        list["_meta"]["io.modelcontextprotocol/serverInfo"],
        server_info()
    );
    let echo = &list["tools"][0];
    assert_eq!(echo["name"], "echo");
    assert!(echo.get("outputSchema").is_some() && echo.get("annotations").is_some());
    assert_eq!(
        replies[1]["result"],
        json!({"content": [{"type": "text", "text": "你好"}], "structuredContent": {"text": "你好"},
               "resultType": "complete", "_meta": {"io.modelcontextprotocol/serverInfo": server_info()}})
    );
    assert_eq!(replies[2]["result"]["isError"], true);
    assert_eq!(replies[2]["result"]["resultType"], "complete");
    assert_eq!(replies[3]["error"]["code"], -32602);
    assert_eq!(replies[3]["error"]["message"], "Unknown tool: nope");
}

#[tokio::test]
async fn unsupported_versions_get_32022_with_supported_and_requested() {
    let mut unknown = modern(1, "tools/list", json!({}));
    unknown["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("1999-01-01");
    let mut legacy = modern(2, "server/discover", json!({}));
    legacy["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2025-11-25");
    let replies = exchange(&[unknown, legacy]).await;
    for (reply, requested) in replies.iter().zip(["1999-01-01", "2025-11-25"]) {
        assert_eq!(reply["error"]["code"], -32022, "{reply}");
        assert_eq!(reply["error"]["data"]["requested"], requested);
        assert_eq!(reply["error"]["data"]["supported"][0], "2026-07-28");
    }
    assert!(replies[1]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("initialize"));
}

#[tokio::test]
async fn meta_rules() {
    let mut no_caps = modern(1, "tools/list", json!({}));
    no_caps["params"]["_meta"]
        .as_object_mut()
        .unwrap()
        .remove("io.modelcontextprotocol/clientCapabilities");
    let mut bad_level = modern(2, "tools/list", json!({}));
    bad_level["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = json!("loud");
    let mut good_level = modern(3, "tools/list", json!({}));
    good_level["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = json!("debug");
    let replies = exchange(&[
        no_caps,
        bad_level,
        good_level,
        // No _meta and no handshake: rejected, and told what to send.
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 5, "method": "server/discover"}),
        modern(6, "ping", json!({})),
        modern(7, "logging/setLevel", json!({"level": "info"})),
    ])
    .await;
    assert_eq!(
        replies.len(),
        7,
        "a log level never adds notifications: {replies:?}"
    );
    assert_eq!(replies[0]["error"]["code"], -32602);
    assert!(replies[0]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("clientCapabilities"));
    assert_eq!(replies[1]["error"]["code"], -32602);
    assert_eq!(replies[2]["result"]["resultType"], "complete");
    assert_eq!(replies[3]["error"]["code"], -32600);
    assert!(replies[3]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("_meta"));
    assert_eq!(replies[4]["error"]["code"], -32602);
    assert_eq!(replies[5]["error"]["code"], -32601);
    assert_eq!(replies[6]["error"]["code"], -32601);
}

#[tokio::test]
async fn both_eras_in_one_process() {
    let replies = exchange(&[
        // Modern before any handshake...
        modern(1, "tools/call", json!({"name": "echo", "arguments": {"text": "m1"}})),
        // ...then a legacy session in the same process...
        json!({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {
            "protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "l", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "l1"}}}),
        // ...and modern requests keep the latest revision's fields.
        modern(4, "tools/call", json!({"name": "echo", "arguments": {"text": "m2"}})),
        json!({"jsonrpc": "2.0", "id": 5, "method": "ping"}),
    ])
    .await;
    assert_eq!(replies[0]["result"]["structuredContent"]["text"], "m1");
    assert_eq!(replies[1]["result"]["protocolVersion"], "2024-11-05");
    // Legacy 2024-11-05: no structuredContent, no resultType.
    assert_eq!(
        replies[2]["result"],
        json!({"content": [{"type": "text", "text": "l1"}]})
    );
    assert_eq!(replies[3]["result"]["structuredContent"]["text"], "m2");
    assert_eq!(replies[3]["result"]["resultType"], "complete");
    assert_eq!(replies[4]["result"], json!({}));
}

#[tokio::test]
async fn real_binary_serves_discover_in_both_framings() {
    let bin = env!("CARGO_BIN_EXE_mcp-echo-server");
    let body = serde_json::to_string(&modern(7, "server/discover", json!({}))).unwrap();
    for (input, framed) in [
        (format!("{body}\n"), false),
        (
            format!("Content-Length: {}\r\n\r\n{body}", body.len()),
            true,
        ),
    ] {
        let mut child = tokio::process::Command::new(bin)
            .arg("--log-level")
            .arg("off")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(input.as_bytes()).await.unwrap();
        drop(stdin);
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut first = String::new();
        tokio::time::timeout(WAIT, out.read_line(&mut first))
            .await
            .unwrap()
            .unwrap();
        let json = if framed {
            assert!(first.starts_with("Content-Length: "), "{first}");
            let mut rest = String::new();
            tokio::time::timeout(WAIT, out.read_to_string(&mut rest))
                .await
                .unwrap()
                .unwrap();
            rest.trim_start().to_owned()
        } else {
            first
        };
        let reply: Value = serde_json::from_str(json.trim()).unwrap();
        assert_eq!(reply["id"], 7);
        assert_eq!(reply["result"]["supportedVersions"][0], "2026-07-28");
        let status = tokio::time::timeout(WAIT, child.wait())
            .await
            .unwrap()
            .unwrap();
        assert!(status.success());
    }
}
