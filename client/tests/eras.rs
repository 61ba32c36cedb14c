//! Both MCP eras: the `server/discover` probe of `connect()` and what each outcome leads to
//! (`basic/transports/stdio.mdx`, "Backward Compatibility"), the explicit era choices, modern
//! requests with `_meta` and `resultType`, and the bridge in both eras. Against scripted fake
//! servers, small shell servers, and our dual-era echo server.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use mcp_client::protocol::mcp::ContentBlock;
use mcp_client::protocol::ErrorCode;
use mcp_client::{
    register_mcp_tools, BridgeOptions, Client, ClientError, ClientOptions, Connected, Era,
    FrameDirection, ServerCommand, State, ToolOutput, ToolRegistry,
};
use serde_json::{json, Value};

use common::{
    discover_result, echo_in_memory, fake_server, init_result, legacy_options, modern_options,
    quick_options, recording, sent_methods, server_bin, within, Fake,
};

/// The `_meta` this client puts on every modern request, exactly.
fn expected_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {
            "name": "mcp-client",
            "version": env!("CARGO_PKG_VERSION")
        }
    })
}

fn text_of(result: &mcp_client::protocol::mcp::CallToolResult) -> &str {
    match result.content.as_slice() {
        [ContentBlock::Text { text }] => text,
        other => panic!("expected one text block, got {other:?}"),
    }
}

fn spawn_connect(client: &Client) -> tokio::task::JoinHandle<Result<Connected, ClientError>> {
    let client = client.clone();
    tokio::spawn(async move { client.connect().await })
}

/// Connects `client` to a modern fake; returns the probe the fake saw.
async fn connect_modern(client: &Client, fake: &mut Fake) -> Value {
    within("modern connect", async {
        let (connected, probe) = tokio::join!(client.connect(), fake.discover());
        connected.unwrap();
        probe
    })
    .await
}

/// Runs `Client::request` on a task, so the test can play the server meanwhile.
fn spawn_request(
    client: &Client,
    method: &'static str,
    params: Option<Value>,
) -> tokio::task::JoinHandle<Result<Value, ClientError>> {
    let client = client.clone();
    tokio::spawn(async move { client.request(method, params).await })
}

// ---------------------------------------------------------------------------------------------
// Auto against a modern server
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn auto_against_a_modern_fake_is_modern() {
    let (options, frames) = recording(quick_options());
    let (client, mut fake) = fake_server(options);
    assert_eq!(client.era(), None);
    let connect = spawn_connect(&client);
    let probe = fake.expect_request("server/discover").await;
    assert_eq!(
        probe["params"],
        json!({"_meta": expected_meta()}),
        "{probe}"
    );
    // While the probe is out, the state is new and a second handshake is refused.
    assert_eq!(client.state(), State::New);
    assert!(matches!(
        within("connect during the probe", client.connect()).await,
        Err(ClientError::InitializeInProgress)
    ));
    assert!(matches!(
        within("initialize during the probe", client.initialize()).await,
        Err(ClientError::InitializeInProgress)
    ));
    fake.reply(&probe["id"], discover_result(&["2026-07-28", "2025-11-25"]))
        .await;
    let connected = within("connect", connect).await.unwrap().unwrap();

    assert_eq!(connected.era(), Era::Modern);
    assert_eq!(connected.protocol_version(), "2026-07-28");
    assert_eq!(connected.server_info().unwrap().name, "fake-modern");
    assert_eq!(connected.instructions(), Some("a modern fake"));
    assert_eq!(
        connected
            .capabilities()
            .tools
            .as_ref()
            .unwrap()
            .list_changed,
        Some(true)
    );
    assert_eq!(connected.initialize_result(), None);
    assert_eq!(client.state(), State::Ready);
    assert_eq!(client.era(), Some(Era::Modern));
    assert_eq!(client.connected(), Some(connected.clone()));
    assert_eq!(client.protocol_version().as_deref(), Some("2026-07-28"));
    assert_eq!(client.legacy_protocol_version(), None);
    assert_eq!(client.initialize_result(), None);
    let discover = client.discover_result().unwrap();
    assert_eq!(discover.supported_versions, ["2026-07-28", "2025-11-25"]);
    assert_eq!(discover.server_info.as_ref().unwrap().version, "7.7.7");
    assert_eq!(discover.ttl_ms, Some(60000.0));
    assert_eq!(discover.cache_scope.as_deref(), Some("public"));
    assert_eq!(connected.discover_result(), Some(&discover));

    // tools/list: params created to carry _meta; ttlMs and cacheScope are fine.
    let list = tokio::spawn({
        let client = client.clone();
        async move { client.list_tools().await }
    });
    let request = fake.expect_request("tools/list").await;
    assert_eq!(request["params"], json!({"_meta": expected_meta()}));
    fake.reply(
        &request["id"],
        json!({"resultType": "complete", "ttlMs": 0, "cacheScope": "private",
               "tools": [{"name": "echo", "inputSchema": {"type": "object"}}],
               "nextCursor": "2"}),
    )
    .await;
    let request = fake.expect_request("tools/list").await;
    assert_eq!(
        request["params"],
        json!({"cursor": "2", "_meta": expected_meta()})
    );
    // Absent resultType counts as complete.
    fake.reply(
        &request["id"],
        json!({"tools": [{"name": "other", "inputSchema": {"type": "object"}}]}),
    )
    .await;
    let tools = within("list_tools", list).await.unwrap().unwrap();
    assert_eq!(
        tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
        ["echo", "other"]
    );

    // tools/call: _meta beside name and arguments.
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool("echo", json!({"text": "hi"})).await }
    });
    let request = fake.expect_request("tools/call").await;
    assert_eq!(
        request["params"],
        json!({"name": "echo", "arguments": {"text": "hi"}, "_meta": expected_meta()})
    );
    fake.reply(
        &request["id"],
        json!({"resultType": "complete", "content": [{"type": "text", "text": "hi"}]}),
    )
    .await;
    let result = within("call_tool", call).await.unwrap().unwrap();
    assert_eq!(text_of(&result), "hi");

    // A raw request keeps the caller's params and _meta keys, and returns the result as sent.
    let raw = spawn_request(
        &client,
        "custom/thing",
        Some(json!({"x": 1, "_meta": {"com.example/trace": "abc"}})),
    );
    let request = fake.expect_request("custom/thing").await;
    let mut meta = expected_meta();
    meta["com.example/trace"] = json!("abc");
    assert_eq!(request["params"], json!({"x": 1, "_meta": meta}));
    fake.reply(&request["id"], json!({"resultType": "complete", "y": 2}))
        .await;
    assert_eq!(
        within("request", raw).await.unwrap().unwrap(),
        json!({"resultType": "complete", "y": 2})
    );

    // Notifications carry no _meta.
    within("notify", client.notify("notifications/whatever", None))
        .await
        .unwrap();
    assert_eq!(
        fake.recv().await,
        json!({"jsonrpc": "2.0", "method": "notifications/whatever"})
    );

    // ping: 2026-07-28 removed it; server/discover is the liveness check.
    let ping = tokio::spawn({
        let client = client.clone();
        async move { client.ping().await }
    });
    let request = fake.expect_request("server/discover").await;
    assert_eq!(request["params"], json!({"_meta": expected_meta()}));
    fake.reply(&request["id"], discover_result(&["2026-07-28"]))
        .await;
    within("ping", ping).await.unwrap().unwrap();

    // connect() succeeds once.
    match within("second connect", client.connect()).await {
        Err(ClientError::InvalidState {
            operation, state, ..
        }) => {
            assert_eq!(operation, "connect");
            assert_eq!(state, State::Ready);
        }
        other => panic!("expected InvalidState, got {other:?}"),
    }
    fake.expect_silence(Duration::from_millis(100)).await;
    let sent = sent_methods(&frames);
    assert!(!sent.iter().any(|m| m == "initialize"), "{sent:?}");
    assert!(
        !sent.iter().any(|m| m == "notifications/initialized"),
        "{sent:?}"
    );
}

#[tokio::test]
async fn caller_meta_keys_win_and_bad_params_are_refused() {
    let (client, mut fake) = fake_server(quick_options());
    connect_modern(&client, &mut fake).await;
    // A caller may declare another version on purpose (a conformance test would).
    let raw = spawn_request(
        &client,
        "tools/list",
        Some(json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "1900-01-01"}})),
    );
    let request = fake.expect_request("tools/list").await;
    let mut meta = expected_meta();
    meta["io.modelcontextprotocol/protocolVersion"] = json!("1900-01-01");
    assert_eq!(request["params"], json!({"_meta": meta}));
    fake.send(json!({"jsonrpc": "2.0", "id": request["id"], "error": {
        "code": -32022, "message": "Unsupported protocol version",
        "data": {"supported": ["2026-07-28"], "requested": "1900-01-01"}}}))
        .await;
    match within("request", raw).await.unwrap() {
        Err(ClientError::Server { method, error }) => {
            assert_eq!(method, "tools/list");
            assert_eq!(error.code, ErrorCode(-32022));
        }
        other => panic!("expected the server's -32022, got {other:?}"),
    }
    // Params that cannot carry _meta.
    for params in [json!([1, 2]), json!("x"), json!({"_meta": 5})] {
        match within("request", client.request("custom/x", Some(params.clone()))).await {
            Err(ClientError::InvalidArguments(reason)) => {
                assert!(reason.contains("_meta"), "{reason}")
            }
            other => panic!("{params}: expected InvalidArguments, got {other:?}"),
        }
    }
    fake.expect_silence(Duration::from_millis(100)).await;
    assert_eq!(client.state(), State::Ready);
}

#[tokio::test]
async fn an_incomplete_result_type_is_a_typed_error() {
    let (client, mut fake) = fake_server(quick_options());
    connect_modern(&client, &mut fake).await;
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool("login", json!({})).await }
    });
    let request = fake.expect_request("tools/call").await;
    fake.reply(
        &request["id"],
        json!({"resultType": "input_required",
               "inputRequests": {"github_login": {"method": "elicitation/create", "params": {}}},
               "requestState": "abc"}),
    )
    .await;
    let e = within("call_tool", call).await.unwrap().unwrap_err();
    assert!(e.to_string().contains("not supported"), "{e}");
    match e {
        ClientError::UnsupportedResultType {
            method,
            result_type,
        } => {
            assert_eq!(method, "tools/call");
            assert_eq!(result_type, "input_required");
        }
        other => panic!("expected UnsupportedResultType, got {other:?}"),
    }
    // The raw request path checks it too; the connection is unharmed.
    let raw = spawn_request(&client, "custom/x", None);
    let request = fake.expect_request("custom/x").await;
    fake.reply(&request["id"], json!({"resultType": "something_new"}))
        .await;
    assert!(matches!(
        within("request", raw).await.unwrap(),
        Err(ClientError::UnsupportedResultType { .. })
    ));
    assert_eq!(client.state(), State::Ready);
}

#[tokio::test]
async fn modern_timeouts_still_send_cancelled_and_server_requests_are_answered() {
    let (client, mut fake) = fake_server(quick_options());
    connect_modern(&client, &mut fake).await;
    let call = tokio::spawn({
        let client = client.clone();
        async move {
            client
                .request_with_timeout("custom/slow", None, Duration::from_millis(200))
                .await
        }
    });
    let request = fake.expect_request("custom/slow").await;
    assert!(matches!(
        within("the timeout", call).await.unwrap(),
        Err(ClientError::Timeout { .. })
    ));
    let cancelled = fake.recv().await;
    assert_eq!(cancelled["method"], "notifications/cancelled");
    assert_eq!(cancelled["params"]["requestId"], request["id"]);
    assert!(cancelled["params"].get("_meta").is_none(), "{cancelled}");
    // A modern stdio server MUST NOT send requests; if one does, the answers are as before.
    fake.send_raw(r#"{"jsonrpc":"2.0","id":"s1","method":"ping"}"#)
        .await;
    assert_eq!(
        fake.recv().await,
        json!({"jsonrpc": "2.0", "id": "s1", "result": {}})
    );
    fake.send_raw(r#"{"jsonrpc":"2.0","id":"s2","method":"elicitation/create","params":{}}"#)
        .await;
    assert_eq!(fake.recv().await["error"]["code"], -32601);
    assert_eq!(client.state(), State::Ready);
}

// ---------------------------------------------------------------------------------------------
// Auto against a legacy server: any other error, or no reply
// ---------------------------------------------------------------------------------------------

/// Auto against a fake that refuses the probe with `error`: the legacy handshake follows.
async fn falls_back_after(error: Value) {
    let (options, frames) = recording(quick_options());
    let (client, mut fake) = fake_server(options);
    let connect = spawn_connect(&client);
    let probe = fake.expect_request("server/discover").await;
    fake.send(json!({"jsonrpc": "2.0", "id": probe["id"], "error": error}))
        .await;
    let init = fake.expect_request("initialize").await;
    assert_eq!(init["params"]["protocolVersion"], "2025-11-25", "{init}");
    assert!(init["params"].get("_meta").is_none(), "{init}");
    assert_ne!(init["id"], probe["id"]);
    fake.reply(&init["id"], init_result("2025-11-25")).await;
    assert_eq!(
        fake.recv().await,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
    );
    let connected = within("connect", connect)
        .await
        .unwrap()
        .unwrap_or_else(|e| panic!("after {error}: {e}"));
    assert_eq!(connected.era(), Era::Legacy, "after {error}");
    assert_eq!(connected.server_info().unwrap().name, "fake-server");
    assert_eq!(client.era(), Some(Era::Legacy));
    assert_eq!(client.state(), State::Ready);
    assert_eq!(client.discover_result(), None);
    assert_eq!(
        client.initialize_result().as_ref(),
        connected.initialize_result()
    );
    // Legacy requests carry no _meta.
    let list = tokio::spawn({
        let client = client.clone();
        async move { client.list_tools().await }
    });
    let request = fake.expect_request("tools/list").await;
    assert!(request.get("params").is_none(), "{request}");
    fake.reply(&request["id"], json!({"tools": []})).await;
    within("list_tools", list).await.unwrap().unwrap();
    assert_eq!(
        sent_methods(&frames),
        [
            "server/discover",
            "initialize",
            "notifications/initialized",
            "tools/list"
        ]
    );
}

#[tokio::test]
async fn auto_falls_back_on_method_not_found() {
    falls_back_after(json!({"code": -32601, "message": "Method not found"})).await;
}

#[tokio::test]
async fn auto_falls_back_on_invalid_params() {
    falls_back_after(json!({"code": -32602, "message": "Invalid params"})).await;
}

#[tokio::test]
async fn auto_falls_back_on_any_other_error() {
    for error in [
        json!({"code": -32600, "message": "Invalid request"}),
        json!({"code": -32603, "message": "Internal error"}),
        json!({"code": -32000, "message": "Server not initialized"}),
        json!({"code": -32002, "message": "Not initialized"}),
        json!({"code": 1, "message": "odd"}),
        // A modern code without the data a modern server sends with it is not recognized.
        json!({"code": -32022, "message": "something else"}),
        json!({"code": -32022, "message": "x", "data": {"supported": "2026-07-28"}}),
        json!({"code": -32021, "message": "x"}),
    ] {
        falls_back_after(error).await;
    }
}

/// In paused time: the probe timeout fires at its virtual instant, whatever the load.
#[tokio::test(start_paused = true)]
async fn auto_falls_back_when_the_probe_is_not_answered() {
    let options = ClientOptions {
        probe_timeout: Duration::from_millis(300),
        ..quick_options()
    };
    let (client, mut fake) = fake_server(options);
    let started = tokio::time::Instant::now();
    let connect = spawn_connect(&client);
    let probe = fake.expect_request("server/discover").await;
    // Silence: the next frame is initialize, after the probe timeout, with no cancellation.
    let init = fake.recv().await;
    let waited = started.elapsed();
    assert_eq!(init["method"], "initialize", "{init}");
    // Virtual time: the 300 ms probe timeout, not a longer one, and not a moment early.
    assert!(
        waited >= Duration::from_millis(300) && waited < Duration::from_millis(350),
        "{waited:?}"
    );
    // The late reply to the probe (even a DiscoverResult) is dropped as an unknown id.
    fake.reply(&probe["id"], discover_result(&["2026-07-28"]))
        .await;
    fake.reply(&init["id"], init_result("2025-06-18")).await;
    assert_eq!(fake.recv().await["method"], "notifications/initialized");
    let connected = within("connect", connect).await.unwrap().unwrap();
    assert_eq!(connected.era(), Era::Legacy);
    assert_eq!(connected.protocol_version(), "2025-06-18");
    assert_eq!(client.era(), Some(Era::Legacy));
    // The connection works.
    let ping = tokio::spawn({
        let client = client.clone();
        async move { client.ping().await }
    });
    let request = fake.expect_request("ping").await;
    fake.reply(&request["id"], json!({})).await;
    within("ping", ping).await.unwrap().unwrap();
    assert_eq!(client.state(), State::Ready);
}

#[tokio::test]
async fn a_connection_lost_during_the_probe_is_not_a_fallback() {
    let (client, mut fake) = fake_server(quick_options());
    let connect = spawn_connect(&client);
    fake.expect_request("server/discover").await;
    fake.close_output();
    assert!(matches!(
        within("connect", connect).await.unwrap(),
        Err(ClientError::Closed(_))
    ));
    assert_eq!(client.state(), State::Closed);
    assert_eq!(client.era(), None);
}

// ---------------------------------------------------------------------------------------------
// Modern servers this client cannot use: no fallback
// ---------------------------------------------------------------------------------------------

/// Auto against a fake that answers the probe with `-32022` listing `supported`.
async fn unsupported_version(supported: &[&str]) {
    let (client, mut fake) = fake_server(quick_options());
    let connect = spawn_connect(&client);
    let probe = fake.expect_request("server/discover").await;
    fake.send(json!({"jsonrpc": "2.0", "id": probe["id"], "error": {
        "code": -32022, "message": "Unsupported protocol version",
        "data": {"supported": supported, "requested": "2026-07-28"}}}))
        .await;
    let e = within("connect", connect).await.unwrap().unwrap_err();
    let message = e.to_string();
    match e {
        ClientError::UnsupportedModernVersion {
            requested,
            supported: listed,
            ours,
        } => {
            assert_eq!(requested, "2026-07-28");
            assert_eq!(listed, supported);
            assert_eq!(ours, ["2026-07-28"]);
            assert!(message.contains("not falling back"), "{message}");
            for v in supported {
                assert!(message.contains(v), "{message}");
            }
        }
        other => panic!("expected UnsupportedModernVersion, got {other:?}"),
    }
    // No initialize: a modern server gets no fallback.
    fake.expect_silence(Duration::from_millis(200)).await;
    assert_eq!(client.state(), State::New);
    assert_eq!(client.era(), None);
}

#[tokio::test]
async fn unsupported_version_with_only_unknown_modern_versions_is_a_typed_error() {
    unsupported_version(&["2099-01-01"]).await;
}

#[tokio::test]
async fn unsupported_version_listing_only_legacy_versions_is_a_typed_error() {
    unsupported_version(&["2099-01-01", "2025-11-25"]).await;
}

#[tokio::test]
async fn a_discover_result_without_a_common_version_is_a_typed_error() {
    let (client, mut fake) = fake_server(quick_options());
    let connect = spawn_connect(&client);
    let probe = fake.expect_request("server/discover").await;
    fake.reply(&probe["id"], discover_result(&["2099-01-01"]))
        .await;
    match within("connect", connect).await.unwrap() {
        Err(ClientError::UnsupportedModernVersion { supported, .. }) => {
            assert_eq!(supported, ["2099-01-01"])
        }
        other => panic!("expected UnsupportedModernVersion, got {other:?}"),
    }
    fake.expect_silence(Duration::from_millis(200)).await;
    assert_eq!(client.state(), State::New);
}

#[tokio::test]
async fn missing_client_capability_is_modern_and_not_a_fallback() {
    let (client, mut fake) = fake_server(quick_options());
    let connect = spawn_connect(&client);
    let probe = fake.expect_request("server/discover").await;
    fake.send(json!({"jsonrpc": "2.0", "id": probe["id"], "error": {
        "code": -32021, "message": "Missing required client capability",
        "data": {"requiredCapabilities": {"elicitation": {}}}}}))
        .await;
    match within("connect", connect).await.unwrap() {
        Err(ClientError::Server { method, error }) => {
            assert_eq!(method, "server/discover");
            assert_eq!(error.code, ErrorCode(-32021));
        }
        other => panic!("expected the server's -32021, got {other:?}"),
    }
    fake.expect_silence(Duration::from_millis(200)).await;
}

/// A legacy server may answer a method it does not know with any result: the official suite's
/// `initialize` scenario answers `{}`. Only a `DiscoverResult` means modern, so anything else
/// falls back to `initialize`.
#[tokio::test]
async fn a_result_that_is_not_a_discover_result_falls_back_to_initialize() {
    for not_discover in [
        json!({}),
        json!({"resultType": "complete", "capabilities": {}}),
        json!({"supportedVersions": "2026-07-28", "capabilities": {}}),
    ] {
        let (client, mut fake) = fake_server(quick_options());
        let connect = spawn_connect(&client);
        let probe = fake.expect_request("server/discover").await;
        fake.reply(&probe["id"], not_discover.clone()).await;
        let init = fake.expect_request("initialize").await;
        fake.reply(&init["id"], init_result("2025-11-25")).await;
        assert_eq!(fake.recv().await["method"], "notifications/initialized");
        let connected = within("connect", connect).await.unwrap().unwrap();
        assert_eq!(connected.era(), Era::Legacy, "{not_discover}");
    }
}

#[tokio::test]
async fn a_result_that_is_not_a_discover_result_is_not_modern_when_modern_is_required() {
    let (client, mut fake) = fake_server(modern_options());
    let connect = spawn_connect(&client);
    let probe = fake.expect_request("server/discover").await;
    fake.reply(&probe["id"], json!({})).await;
    match within("connect", connect).await.unwrap() {
        Err(ClientError::NotModern { reason }) => {
            assert!(reason.contains("not a DiscoverResult"), "{reason}");
            assert!(reason.contains("supportedVersions"), "{reason}");
        }
        other => panic!("expected NotModern, got {other:?}"),
    }
    fake.expect_silence(Duration::from_millis(200)).await;
}

// ---------------------------------------------------------------------------------------------
// Explicit era choices
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn legacy_choice_sends_initialize_first() {
    let (options, frames) = recording(legacy_options());
    let (client, mut fake) = fake_server(options);
    let connect = spawn_connect(&client);
    let first = fake.expect_request("initialize").await;
    fake.reply(&first["id"], init_result("2025-11-25")).await;
    assert_eq!(fake.recv().await["method"], "notifications/initialized");
    let connected = within("connect", connect).await.unwrap().unwrap();
    assert!(
        matches!(&connected, Connected::Legacy(init) if init.server_info.name == "fake-server"),
        "{connected:?}"
    );
    assert_eq!(client.era(), Some(Era::Legacy));
    assert_eq!(
        sent_methods(&frames),
        ["initialize", "notifications/initialized"]
    );
}

#[tokio::test]
async fn modern_choice_against_a_legacy_fake_is_a_clear_error() {
    let (client, mut fake) = fake_server(modern_options());
    let connect = spawn_connect(&client);
    let probe = fake.expect_request("server/discover").await;
    fake.reply_error(&probe["id"], -32601, "Method not found")
        .await;
    let e = within("connect", connect).await.unwrap().unwrap_err();
    assert!(matches!(e, ClientError::NotModern { .. }), "{e:?}");
    let message = e.to_string();
    assert!(message.contains("not a modern"), "{message}");
    assert!(message.contains("-32601"), "{message}");
    fake.expect_silence(Duration::from_millis(200)).await;
    assert_eq!(client.state(), State::New);
    assert_eq!(client.era(), None);

    // No reply at all is the same error, after the probe timeout.
    let options = ClientOptions {
        probe_timeout: Duration::from_millis(200),
        ..modern_options()
    };
    let (client, mut fake) = fake_server(options);
    let connect = spawn_connect(&client);
    fake.expect_request("server/discover").await;
    match within("connect", connect).await.unwrap() {
        Err(ClientError::NotModern { reason }) => assert!(reason.contains("no reply"), "{reason}"),
        other => panic!("expected NotModern, got {other:?}"),
    }
    fake.expect_silence(Duration::from_millis(200)).await;
}

#[tokio::test]
async fn modern_choice_against_a_modern_fake() {
    let (client, mut fake) = fake_server(modern_options());
    let probe = connect_modern(&client, &mut fake).await;
    assert_eq!(probe["params"], json!({"_meta": expected_meta()}));
    assert_eq!(client.era(), Some(Era::Modern));
}

// ---------------------------------------------------------------------------------------------
// The bridge in the modern era
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn bridge_works_against_a_modern_fake() {
    let (client, mut fake) = fake_server(quick_options());
    connect_modern(&client, &mut fake).await;
    let mut registry = ToolRegistry::new();
    let register = async {
        let count = register_mcp_tools(&mut registry, &client, &BridgeOptions::for_server("m"))
            .await
            .unwrap();
        (count, registry)
    };
    let server = async {
        let list = fake.expect_request("tools/list").await;
        assert_eq!(list["params"], json!({"_meta": expected_meta()}));
        fake.reply(
            &list["id"],
            json!({"resultType": "complete", "ttlMs": 300000, "cacheScope": "public",
                   "tools": [{"name": "shout", "description": "Upper-cases text.",
                              "inputSchema": {"type": "object",
                                              "properties": {"text": {"type": "string"}},
                                              "required": ["text"]}}]}),
        )
        .await;
    };
    let ((count, registry), ()) = within("register_mcp_tools", async {
        tokio::join!(register, server)
    })
    .await;
    assert_eq!(count, 1);
    assert_eq!(registry.names(), ["mcp__m__shout"]);

    let run = registry.execute("mcp__m__shout", json!({"text": "hi"}));
    let server = async {
        let call = fake.expect_request("tools/call").await;
        assert_eq!(
            call["params"],
            json!({"name": "shout", "arguments": {"text": "hi"}, "_meta": expected_meta()})
        );
        fake.reply(
            &call["id"],
            json!({"resultType": "complete", "content": [{"type": "text", "text": "HI"}]}),
        )
        .await;
    };
    let (output, ()) = within("execute", async { tokio::join!(run, server) }).await;
    assert_eq!(output, ToolOutput::ok("HI"));

    // An input_required result reaches the model as an error it can read.
    let run = registry.execute("mcp__m__shout", json!({"text": "again"}));
    let server = async {
        let call = fake.expect_request("tools/call").await;
        fake.reply(
            &call["id"],
            json!({"resultType": "input_required", "inputRequests": {}}),
        )
        .await;
    };
    let (output, ()) = within("execute", async { tokio::join!(run, server) }).await;
    assert!(output.is_error, "{output:?}");
    assert!(output.text.contains("input_required"), "{output:?}");
}

// ---------------------------------------------------------------------------------------------
// Real processes: shell servers that are legacy only
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn auto_against_a_legacy_process_that_refuses_the_probe() {
    // Refuses the first request (whatever it is) with -32601, then does the handshake.
    let script = r#"
reply_id() { printf '%s' "$1" | sed -n 's/.*"id":\([0-9]*\).*/\1/p'; }
IFS= read -r probe
printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}\n' "$(reply_id "$probe")"
IFS= read -r init
printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"legacy-sh","version":"1"}}}\n' "$(reply_id "$init")"
IFS= read -r initialized
IFS= read -r ping
printf '{"jsonrpc":"2.0","id":%s,"result":{}}\n' "$(reply_id "$ping")"
IFS= read -r rest
"#;
    let (options, frames) = recording(quick_options());
    let client = Client::spawn(ServerCommand::new("sh").args(["-c", script]), options).unwrap();
    let connected = within("connect", client.connect()).await.unwrap();
    assert_eq!(connected.era(), Era::Legacy);
    assert_eq!(connected.server_info().unwrap().name, "legacy-sh");
    within("ping", client.ping()).await.unwrap();
    assert_eq!(
        sent_methods(&frames),
        [
            "server/discover",
            "initialize",
            "notifications/initialized",
            "ping"
        ]
    );
    within("close", client.close()).await;
}

#[tokio::test]
async fn auto_against_a_legacy_process_that_ignores_the_probe() {
    // Reads the probe and says nothing; answers the next line as initialize.
    let script = r#"
reply_id() { printf '%s' "$1" | sed -n 's/.*"id":\([0-9]*\).*/\1/p'; }
IFS= read -r probe
IFS= read -r init
printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"silent-sh","version":"1"}}}\n' "$(reply_id "$init")"
IFS= read -r initialized
IFS= read -r rest
"#;
    let options = ClientOptions {
        probe_timeout: Duration::from_millis(300),
        ..quick_options()
    };
    let client = Client::spawn(ServerCommand::new("sh").args(["-c", script]), options).unwrap();
    let connected = within("connect", client.connect()).await.unwrap();
    assert_eq!(connected.era(), Era::Legacy);
    assert_eq!(connected.server_info().unwrap().name, "silent-sh");
    within("close", client.close()).await;
}

// ---------------------------------------------------------------------------------------------
// Our dual-era echo server
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn real_server_auto_is_modern() {
    let (options, frames) = recording(quick_options());
    let (client, _server) = echo_in_memory(options);
    let connected = within("connect", client.connect()).await.unwrap();
    assert_eq!(connected.era(), Era::Modern, "{connected:?}");
    assert_eq!(connected.protocol_version(), "2026-07-28");
    assert_eq!(connected.server_info().unwrap().name, "mcp-echo-server");
    assert!(connected.instructions().unwrap().contains("echo"));
    assert!(connected.capabilities().tools.is_some());
    let discover = client.discover_result().unwrap();
    assert!(
        discover
            .supported_versions
            .iter()
            .any(|v| v == "2026-07-28"),
        "{discover:?}"
    );
    assert_eq!(client.state(), State::Ready);

    let tools = within("list_tools", client.list_tools()).await.unwrap();
    assert_eq!(
        tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
        ["echo"]
    );
    let result = within(
        "call_tool",
        client.call_tool("echo", json!({"text": "héllo 🦀"})),
    )
    .await
    .unwrap();
    assert_eq!(text_of(&result), "héllo 🦀");
    assert_eq!(result.is_error, None);
    within("ping", client.ping()).await.unwrap();
    // Modern results are tagged, and carry the server's identity.
    let raw = within("request", client.request("tools/list", None))
        .await
        .unwrap();
    assert_eq!(raw["resultType"], "complete", "{raw}");
    // An unknown tool is still an error the caller sees.
    assert!(within("call_tool", client.call_tool("nope", json!({})))
        .await
        .map_or(true, |r| r.is_error == Some(true)));

    // The bridge, unchanged.
    let mut registry = ToolRegistry::new();
    let count = within(
        "register_mcp_tools",
        register_mcp_tools(&mut registry, &client, &BridgeOptions::for_server("echo")),
    )
    .await
    .unwrap();
    assert_eq!(count, 1);
    assert_eq!(
        within(
            "execute",
            registry.execute("mcp__echo__echo", json!({"text": "through the bridge"}))
        )
        .await,
        ToolOutput::ok("through the bridge")
    );

    // Every request carried the modern _meta; no handshake was sent.
    let sent: Vec<Value> = frames
        .lock()
        .unwrap()
        .iter()
        .filter(|(d, v)| *d == FrameDirection::Send && v.get("id").is_some())
        .map(|(_, v)| v.clone())
        .collect();
    assert!(!sent.is_empty());
    for request in &sent {
        assert_ne!(request["method"], "initialize", "{request}");
        assert_eq!(
            request["params"]["_meta"],
            expected_meta(),
            "every modern request carries the _meta: {request}"
        );
    }
    assert_eq!(sent[0]["method"], "server/discover");
}

#[tokio::test]
async fn real_server_rejects_a_version_the_caller_forces() {
    let (client, _server) = echo_in_memory(quick_options());
    within("connect", client.connect()).await.unwrap();
    let params = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "1900-01-01"}});
    match within("request", client.request("tools/list", Some(params))).await {
        Err(ClientError::Server { error, .. }) => {
            assert_eq!(error.code, ErrorCode(-32022), "{error:?}");
            let supported = error.data.as_ref().unwrap()["supported"].clone();
            assert!(
                supported
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|v| v == "2026-07-28"),
                "{supported}"
            );
        }
        other => panic!("expected -32022, got {other:?}"),
    }
    // The connection keeps working.
    within("list_tools", client.list_tools()).await.unwrap();
}

#[tokio::test]
async fn real_server_legacy_choice_is_legacy() {
    let (options, frames) = recording(legacy_options());
    let (client, _server) = echo_in_memory(options);
    let connected = within("connect", client.connect()).await.unwrap();
    assert_eq!(connected.era(), Era::Legacy);
    assert_eq!(connected.protocol_version(), "2025-11-25");
    assert_eq!(connected.server_info().unwrap().name, "mcp-echo-server");
    assert_eq!(client.era(), Some(Era::Legacy));
    let tools = within("list_tools", client.list_tools()).await.unwrap();
    assert_eq!(tools[0].name, "echo");
    let result = within(
        "call_tool",
        client.call_tool("echo", json!({"text": "old"})),
    )
    .await
    .unwrap();
    assert_eq!(text_of(&result), "old");
    within("ping", client.ping()).await.unwrap();
    let mut registry = ToolRegistry::new();
    within(
        "register_mcp_tools",
        register_mcp_tools(&mut registry, &client, &BridgeOptions::for_server("echo")),
    )
    .await
    .unwrap();
    assert_eq!(
        within(
            "execute",
            registry.execute("mcp__echo__echo", json!({"text": "legacy bridge"}))
        )
        .await,
        ToolOutput::ok("legacy bridge")
    );
    let sent = sent_methods(&frames);
    assert_eq!(sent[..2], ["initialize", "notifications/initialized"]);
    assert!(!sent.iter().any(|m| m == "server/discover"), "{sent:?}");
    // Legacy requests carry no protocol _meta.
    for (d, v) in frames.lock().unwrap().iter() {
        if *d == FrameDirection::Send {
            assert!(v["params"].get("_meta").is_none(), "{v}");
        }
    }
}

#[tokio::test]
async fn real_server_modern_choice_is_modern() {
    let (client, _server) = echo_in_memory(modern_options());
    let connected = within("connect", client.connect()).await.unwrap();
    assert_eq!(connected.era(), Era::Modern);
    let result = within(
        "call_tool",
        client.call_tool("echo", json!({"text": "new"})),
    )
    .await
    .unwrap();
    assert_eq!(text_of(&result), "new");
}

#[tokio::test]
async fn real_server_process_auto_is_modern() {
    let client = Client::spawn(ServerCommand::new(server_bin()), quick_options()).unwrap();
    let connected = within("connect", client.connect()).await.unwrap();
    assert_eq!(connected.era(), Era::Modern);
    let result = within(
        "call_tool",
        client.call_tool("echo", json!({"text": "pipe"})),
    )
    .await
    .unwrap();
    assert_eq!(text_of(&result), "pipe");
    let report = within("close", client.close()).await;
    assert_eq!(
        report.step,
        mcp_client::CloseStep::StdinClosed,
        "{report:?}"
    );
}
