//! The tool-registry bridge against our echo server (in memory) and a scripted fake server:
//! remote tools join local ones under a prefix, forward calls, keep failures as data, refuse
//! name collisions all or nothing, and go through the approval gate like local tools.
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_client::bridge::BridgeError;
use mcp_client::registry::{approver, executor, ParamSpec, RegistryError};
use mcp_client::{
    register_mcp_tools, BridgeOptions, Client, ClientError, RiskTier, State, ToolOutput,
    ToolRegistry, ToolSpec,
};
use serde_json::{json, Value};

use common::{echo_in_memory, fake_server, quick_options, recording, sent_methods, within};

const ECHO_DESCRIPTION: &str =
    "Returns the given text unchanged. Use it to check that an MCP connection works end to end.";

/// A registry with two local tools: `add` (auto) and `delete_file` (approve, counting its runs).
fn local_registry(deletions: &Arc<AtomicUsize>) -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    registry
        .register(
            ToolSpec {
                name: "add".into(),
                description: "Adds two integers.".into(),
                parameters: vec![
                    ParamSpec::new("a", "integer").as_required(),
                    ParamSpec::new("b", "integer").as_required(),
                ],
                risk: RiskTier::Auto,
            },
            executor(|args: Value| async move {
                match (args["a"].as_i64(), args["b"].as_i64()) {
                    (Some(a), Some(b)) => ToolOutput::ok((a + b).to_string()),
                    _ => ToolOutput::error("add needs integers a and b"),
                }
            }),
        )
        .unwrap();
    let runs = Arc::clone(deletions);
    registry
        .register(
            ToolSpec {
                name: "delete_file".into(),
                description: "Deletes a file.".into(),
                parameters: vec![ParamSpec::new("path", "string").as_required()],
                risk: RiskTier::Approve,
            },
            executor(move |args: Value| {
                let runs = Arc::clone(&runs);
                async move {
                    runs.fetch_add(1, Ordering::SeqCst);
                    ToolOutput::ok(format!("deleted {}", args["path"].as_str().unwrap_or("?")))
                }
            }),
        )
        .unwrap();
    registry
}

/// An echo server in memory, connected (`EraChoice::Auto`: the modern era with our dual-era
/// server).
async fn connected_echo() -> Client {
    let (client, _server) = echo_in_memory(quick_options());
    within("connect", client.connect()).await.unwrap();
    client
}

fn names(registry: &ToolRegistry) -> Vec<String> {
    registry.names().into_iter().map(str::to_owned).collect()
}

#[tokio::test]
async fn remote_tools_join_local_ones() {
    let deletions = Arc::new(AtomicUsize::new(0));
    let mut registry = local_registry(&deletions);
    let client = connected_echo().await;
    let count = within(
        "register_mcp_tools",
        register_mcp_tools(&mut registry, &client, &BridgeOptions::for_server("echo")),
    )
    .await
    .unwrap();
    assert_eq!(count, 1);
    assert_eq!(names(&registry), ["add", "delete_file", "mcp__echo__echo"]);
    assert_eq!(registry.len(), 3);

    let spec = registry.spec("mcp__echo__echo").unwrap();
    assert_eq!(spec.description, ECHO_DESCRIPTION);
    assert_eq!(spec.risk, RiskTier::Auto);
    assert_eq!(spec.parameters.len(), 1, "{:?}", spec.parameters);
    let text = &spec.parameters[0];
    assert_eq!(text.name, "text");
    assert_eq!(text.type_name, "string");
    assert!(text.required);
    assert_eq!(text.description.as_deref(), Some("The text to return."));

    // Local and remote tools look the same to the model, in registration order.
    let model_tools = serde_json::to_value(registry.model_tools()).unwrap();
    let listed: Vec<&str> = model_tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(listed, ["add", "delete_file", "mcp__echo__echo"]);
    assert_eq!(
        model_tools[2],
        json!({
            "name": "mcp__echo__echo",
            "description": ECHO_DESCRIPTION,
            "input_schema": {
                "type": "object",
                "properties": {"text": {"type": "string", "description": "The text to return."}},
                "required": ["text"]
            }
        })
    );
    assert_eq!(
        model_tools[0]["input_schema"],
        json!({
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"]
        })
    );

    // The remote tool runs on the server, through the registry like any other.
    assert_eq!(
        within(
            "execute",
            registry.execute("mcp__echo__echo", json!({"text": "hello from MCP"}))
        )
        .await,
        ToolOutput {
            text: "hello from MCP".to_owned(),
            is_error: false
        }
    );
    assert_eq!(
        within("execute", registry.execute("add", json!({"a": 2, "b": 3}))).await,
        ToolOutput::ok("5")
    );
}

#[tokio::test]
async fn remote_tool_failures_are_data() {
    let mut registry = ToolRegistry::new();
    let client = connected_echo().await;
    within(
        "register_mcp_tools",
        register_mcp_tools(&mut registry, &client, &BridgeOptions::for_server("echo")),
    )
    .await
    .unwrap();

    let wrong_type = within(
        "execute",
        registry.execute("mcp__echo__echo", json!({"text": 5})),
    )
    .await;
    assert!(wrong_type.is_error, "{wrong_type:?}");
    assert!(
        wrong_type
            .text
            .starts_with("Invalid arguments for tool echo: `text` must be a string, got a number"),
        "{wrong_type:?}"
    );
    let missing = within("execute", registry.execute("mcp__echo__echo", json!({}))).await;
    assert!(missing.is_error, "{missing:?}");
    assert!(
        missing.text.contains("missing required property `text`"),
        "{missing:?}"
    );
    // Arguments that are not an object never reach the server, and are still just data.
    let not_object = within(
        "execute",
        registry.execute("mcp__echo__echo", json!("hello")),
    )
    .await;
    assert!(not_object.is_error, "{not_object:?}");
    assert!(not_object.text.contains("echo"), "{not_object:?}");

    // A connection that is gone is data too, naming the remote tool.
    within("close", client.close()).await;
    let closed = within(
        "execute",
        registry.execute("mcp__echo__echo", json!({"text": "x"})),
    )
    .await;
    assert!(closed.is_error, "{closed:?}");
    assert!(
        closed.text.starts_with("MCP tool echo failed:"),
        "{closed:?}"
    );
}

#[tokio::test]
async fn registering_the_same_server_twice_is_an_error_and_adds_nothing() {
    let deletions = Arc::new(AtomicUsize::new(0));
    let mut registry = local_registry(&deletions);
    let client = connected_echo().await;
    let options = BridgeOptions::for_server("echo");
    within(
        "register_mcp_tools",
        register_mcp_tools(&mut registry, &client, &options),
    )
    .await
    .unwrap();
    let before = names(&registry);
    match within(
        "register_mcp_tools again",
        register_mcp_tools(&mut registry, &client, &options),
    )
    .await
    {
        Err(BridgeError::Registry(RegistryError::Duplicate(name))) => {
            assert_eq!(name, "mcp__echo__echo")
        }
        other => panic!("expected a duplicate-name error, got {other:?}"),
    }
    assert_eq!(names(&registry), before);
    // Another prefix is fine.
    let count = within(
        "register_mcp_tools with another prefix",
        register_mcp_tools(&mut registry, &client, &BridgeOptions::for_server("echo2")),
    )
    .await
    .unwrap();
    assert_eq!(count, 1);
    assert_eq!(
        names(&registry),
        ["add", "delete_file", "mcp__echo__echo", "mcp__echo2__echo"]
    );
}

#[tokio::test]
async fn a_local_tool_with_the_prefixed_name_blocks_the_server() {
    let mut registry = ToolRegistry::new();
    registry
        .register(
            ToolSpec {
                name: "mcp__echo__echo".into(),
                description: "A local impostor.".into(),
                parameters: vec![],
                risk: RiskTier::Auto,
            },
            executor(|_| async { ToolOutput::ok("local") }),
        )
        .unwrap();
    let client = connected_echo().await;
    match within(
        "register_mcp_tools",
        register_mcp_tools(&mut registry, &client, &BridgeOptions::for_server("echo")),
    )
    .await
    {
        Err(BridgeError::Registry(RegistryError::Duplicate(name))) => {
            assert_eq!(name, "mcp__echo__echo")
        }
        other => panic!("expected a duplicate-name error, got {other:?}"),
    }
    assert_eq!(names(&registry), ["mcp__echo__echo"]);
    // The local tool was not replaced.
    assert_eq!(
        within(
            "execute",
            registry.execute("mcp__echo__echo", json!({"text": "x"}))
        )
        .await,
        ToolOutput::ok("local")
    );
}

#[tokio::test]
async fn names_that_collide_after_sanitizing_add_nothing() {
    let (client, mut fake) = fake_server(quick_options());
    within("handshake", async {
        let (connected, ()) = tokio::join!(client.connect(), fake.handshake());
        connected.unwrap();
    })
    .await;
    let mut registry = ToolRegistry::new();
    let options = BridgeOptions::for_server("fs");
    let register = async {
        let result = register_mcp_tools(&mut registry, &client, &options).await;
        (result, registry)
    };
    let server = async {
        let list = fake.expect_request("tools/list").await;
        fake.reply(
            &list["id"],
            json!({"tools": [
                {"name": "ok_tool", "inputSchema": {"type": "object"}},
                {"name": "read.file", "inputSchema": {"type": "object"}},
                {"name": "read_file", "inputSchema": {"type": "object"}}
            ]}),
        )
        .await;
    };
    let ((result, registry), ()) = within("register_mcp_tools", async {
        tokio::join!(register, server)
    })
    .await;
    match result {
        Err(BridgeError::Registry(RegistryError::DuplicateInBatch(name))) => {
            assert_eq!(name, "mcp__fs__read_file")
        }
        other => panic!("expected DuplicateInBatch, got {other:?}"),
    }
    assert!(registry.is_empty(), "{registry:?}");
}

#[tokio::test]
async fn registering_needs_a_ready_client() {
    let (client, _server) = echo_in_memory(quick_options());
    let mut registry = ToolRegistry::new();
    match within(
        "register_mcp_tools",
        register_mcp_tools(&mut registry, &client, &BridgeOptions::for_server("echo")),
    )
    .await
    {
        Err(BridgeError::Client(ClientError::InvalidState { state, .. })) => {
            assert_eq!(state, State::New)
        }
        other => panic!("expected InvalidState, got {other:?}"),
    }
    assert!(registry.is_empty());
}

#[tokio::test]
async fn approval_gate_denies_and_allows_local_tools() {
    let deletions = Arc::new(AtomicUsize::new(0));
    let mut registry = local_registry(&deletions);

    // No approver: never runs.
    let output = within(
        "execute",
        registry.execute("delete_file", json!({"path": "/tmp/x"})),
    )
    .await;
    assert!(output.is_error, "{output:?}");
    assert_eq!(deletions.load(Ordering::SeqCst), 0);

    let asked = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&asked);
    registry.set_approver(approver(move |_, _| {
        counter.fetch_add(1, Ordering::SeqCst);
        async { false }
    }));
    let denied = within(
        "execute",
        registry.execute("delete_file", json!({"path": "/tmp/x"})),
    )
    .await;
    assert!(denied.is_error, "{denied:?}");
    assert!(denied.text.contains("denied"), "{denied:?}");
    assert_eq!(deletions.load(Ordering::SeqCst), 0);
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    // Auto tools are not asked about.
    assert_eq!(
        within("execute", registry.execute("add", json!({"a": 1, "b": 1}))).await,
        ToolOutput::ok("2")
    );
    assert_eq!(asked.load(Ordering::SeqCst), 1);

    registry.set_approver(approver(|_, _| async { true }));
    assert_eq!(
        within(
            "execute",
            registry.execute("delete_file", json!({"path": "/tmp/x"}))
        )
        .await,
        ToolOutput::ok("deleted /tmp/x")
    );
    assert_eq!(deletions.load(Ordering::SeqCst), 1);
}

/// In paused time, so the final "a moment for a stray frame" runs until every task is idle.
#[tokio::test(start_paused = true)]
async fn approval_gate_covers_remote_tools() {
    let (options, frames) = recording(quick_options());
    let (client, _server) = echo_in_memory(options);
    within("connect", client.connect()).await.unwrap();
    let mut registry = ToolRegistry::new();
    let count = within(
        "register_mcp_tools",
        register_mcp_tools(
            &mut registry,
            &client,
            &BridgeOptions::for_server("echo").with_risk(RiskTier::Approve),
        ),
    )
    .await
    .unwrap();
    assert_eq!(count, 1);
    assert_eq!(
        registry.spec("mcp__echo__echo").unwrap().risk,
        RiskTier::Approve
    );
    let tools_calls = || {
        sent_methods(&frames)
            .iter()
            .filter(|m| *m == "tools/call")
            .count()
    };

    let seen: Arc<Mutex<Vec<(String, Value)>>> = Arc::default();
    let log = Arc::clone(&seen);
    registry.set_approver(approver(move |spec: ToolSpec, args: Value| {
        log.lock().unwrap().push((spec.name, args));
        async { false }
    }));
    let denied = within(
        "execute",
        registry.execute("mcp__echo__echo", json!({"text": "secret"})),
    )
    .await;
    assert!(denied.is_error, "{denied:?}");
    assert!(denied.text.contains("denied"), "{denied:?}");
    assert_eq!(tools_calls(), 0, "a denied call never reaches the server");
    assert_eq!(
        *seen.lock().unwrap(),
        [("mcp__echo__echo".to_owned(), json!({"text": "secret"}))]
    );

    registry.set_approver(approver(|_, _| async { true }));
    assert_eq!(
        within(
            "execute",
            registry.execute("mcp__echo__echo", json!({"text": "approved"}))
        )
        .await,
        ToolOutput::ok("approved")
    );
    assert_eq!(tools_calls(), 1);
    // Give a stray frame a moment to show up (paused time: until all tasks are idle): still
    // exactly one call.
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(tools_calls(), 1);
}

#[tokio::test]
async fn bridge_follows_pages_and_keeps_schemas() {
    let (client, mut fake) = fake_server(quick_options());
    within("handshake", async {
        let (connected, ()) = tokio::join!(client.connect(), fake.handshake());
        connected.unwrap();
    })
    .await;
    let mut registry = ToolRegistry::new();
    let options = BridgeOptions::for_server("remote").with_risk(RiskTier::Suggest);
    let register = async {
        let result = register_mcp_tools(&mut registry, &client, &options).await;
        (result, registry)
    };
    let server = async {
        let page1 = fake.expect_request("tools/list").await;
        fake.reply(
            &page1["id"],
            json!({"tools": [{
                "name": "search",
                "description": "Searches.",
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "query": {"type": "string", "description": "What to find."},
                        "limit": {"type": "integer"}
                    },
                    "required": ["query"]
                }
            }], "nextCursor": "2"}),
        )
        .await;
        let page2 = fake.expect_request("tools/list").await;
        assert_eq!(page2["params"], json!({"cursor": "2"}));
        fake.reply(
            &page2["id"],
            json!({"tools": [{"name": "titled", "title": "A Title", "inputSchema": {"type": "object"}}]}),
        )
        .await;
    };
    let ((result, registry), ()) = within("register_mcp_tools", async {
        tokio::join!(register, server)
    })
    .await;
    assert_eq!(result.unwrap(), 2);
    assert_eq!(
        registry.names(),
        ["mcp__remote__search", "mcp__remote__titled"]
    );
    let search = registry.spec("mcp__remote__search").unwrap();
    assert_eq!(search.risk, RiskTier::Suggest);
    assert_eq!(search.description, "Searches.");
    let mut params: Vec<(&str, &str, bool)> = search
        .parameters
        .iter()
        .map(|p| (p.name.as_str(), p.type_name.as_str(), p.required))
        .collect();
    params.sort();
    assert_eq!(
        params,
        [("limit", "integer", false), ("query", "string", true)]
    );
    // Without a description the title stands in.
    assert_eq!(
        registry.spec("mcp__remote__titled").unwrap().description,
        "A Title"
    );
}
