//! The client over in-memory pipes: against our echo server (`mcp_echo_server::serve`), and
//! against a scripted fake server that the test drives frame by frame (delayed, failed and
//! out-of-order replies, unknown ids, timeouts, server-initiated requests, pagination).
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use futures::StreamExt;
use mcp_client::protocol::mcp::{ContentBlock, ProtocolVersion};
use mcp_client::protocol::{ErrorCode, Notification, RequestId};
use mcp_client::{
    Client, ClientError, ClientOptions, CloseCause, CloseStep, Connected, EraChoice,
    FrameDirection, State,
};
use mcp_echo_server::Exit;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use common::{
    echo_in_memory, fake_server, init_result, legacy_options, quick_options, recording, within,
};

/// Asserts `result` is `ClientError::InvalidState` in `state` for `operation`.
#[track_caller]
fn assert_refused<T: std::fmt::Debug>(
    result: Result<T, ClientError>,
    operation: &str,
    state: State,
) {
    match result {
        Err(ClientError::InvalidState {
            operation: op,
            state: s,
            ..
        }) => {
            assert_eq!(s, state, "refusal of {operation}: wrong state");
            assert_eq!(op, operation, "refusal in {state:?}: wrong operation");
        }
        other => panic!("{operation} in {state:?}: expected InvalidState, got {other:?}"),
    }
}

/// Asserts `result` is `ClientError::Closed` because the client closed the connection.
#[track_caller]
fn assert_closed_by_client<T: std::fmt::Debug>(result: Result<T, ClientError>, what: &str) {
    match result {
        Err(ClientError::Closed(reason)) => {
            assert_eq!(reason.cause, CloseCause::ClientClosed, "{what}: {reason}");
            assert_eq!(reason.status, None, "{what}: no process, no status");
        }
        other => panic!("{what} after close: expected Closed, got {other:?}"),
    }
}

fn text_of(result: &mcp_client::protocol::mcp::CallToolResult) -> &str {
    match result.content.as_slice() {
        [ContentBlock::Text { text }] => text,
        other => panic!("expected one text block, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Lifecycle against our echo server
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn every_state_transition_and_refusal() {
    let (client, server) = echo_in_memory(quick_options());

    // new
    assert_eq!(client.state(), State::New);
    assert_eq!(client.initialize_result(), None);
    assert_eq!(client.protocol_version(), None);
    assert_eq!(client.closed_reason(), None);
    assert_eq!(client.pid(), None);
    assert_refused(
        within("list_tools", client.list_tools()).await,
        "tools/list",
        State::New,
    );
    assert_refused(
        within("call_tool", client.call_tool("echo", json!({"text": "x"}))).await,
        "tools/call",
        State::New,
    );
    assert_refused(
        within("request", client.request("tools/list", None)).await,
        "tools/list",
        State::New,
    );
    assert_refused(
        within("notify", client.notify("notifications/whatever", None)).await,
        "notifications/whatever",
        State::New,
    );
    assert_refused(within("ping", client.ping()).await, "ping", State::New);
    assert_refused(
        within("notify_initialized", client.notify_initialized()).await,
        "send notifications/initialized",
        State::New,
    );
    assert_eq!(client.state(), State::New, "refusals change nothing");

    // new -> initialized
    let init = within("initialize", client.initialize()).await.unwrap();
    assert_eq!(client.state(), State::Initialized);
    assert_eq!(init.protocol_version, "2025-11-25");
    assert_eq!(init.server_info.name, "mcp-echo-server");
    assert_eq!(init.server_info.title.as_deref(), Some("MCP Echo Server"));
    assert_eq!(
        init.capabilities.tools.as_ref().unwrap().list_changed,
        Some(false)
    );
    assert!(init.instructions.as_deref().unwrap().contains("echo"));
    assert_eq!(client.initialize_result(), Some(init.clone()));
    assert_eq!(
        client.legacy_protocol_version(),
        Some(ProtocolVersion::V2025_11_25)
    );
    assert_eq!(client.protocol_version().as_deref(), Some("2025-11-25"));
    assert_eq!(client.era(), Some(mcp_client::Era::Legacy));
    assert_eq!(client.discover_result(), None);

    // initialized: ping yes, everything else no, initialize never again
    within("ping", client.ping()).await.unwrap();
    assert_refused(
        within("list_tools", client.list_tools()).await,
        "tools/list",
        State::Initialized,
    );
    assert_refused(
        within("call_tool", client.call_tool("echo", json!({"text": "x"}))).await,
        "tools/call",
        State::Initialized,
    );
    assert_refused(
        within("request", client.request("tools/list", None)).await,
        "tools/list",
        State::Initialized,
    );
    assert_refused(
        within("notify", client.notify("notifications/whatever", None)).await,
        "notifications/whatever",
        State::Initialized,
    );
    assert_refused(
        within("initialize", client.initialize()).await,
        "initialize",
        State::Initialized,
    );
    assert_eq!(client.state(), State::Initialized);

    // initialized -> ready
    within("notify_initialized", client.notify_initialized())
        .await
        .unwrap();
    assert_eq!(client.state(), State::Ready);
    assert_refused(
        within("notify_initialized", client.notify_initialized()).await,
        "send notifications/initialized",
        State::Ready,
    );
    assert_refused(
        within("initialize", client.initialize()).await,
        "initialize",
        State::Ready,
    );

    // ready: everything works
    let tools = within("list_tools", client.list_tools()).await.unwrap();
    assert_eq!(
        tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
        ["echo"]
    );
    let result = within("call_tool", client.call_tool("echo", json!({"text": "hi"})))
        .await
        .unwrap();
    assert_eq!(text_of(&result), "hi");
    assert_eq!(result.is_error, None);
    assert_eq!(result.structured_content, Some(json!({"text": "hi"})));
    let raw = within("request", client.request("tools/list", Some(json!({}))))
        .await
        .unwrap();
    assert_eq!(raw["tools"][0]["name"], "echo");
    within("notify", client.notify("notifications/whatever", None))
        .await
        .unwrap();
    within("ping", client.ping()).await.unwrap();
    // A JSON-RPC error from the server is ClientError::Server with its code.
    match within("request", client.request("nope/nothing", None)).await {
        Err(ClientError::Server { method, error }) => {
            assert_eq!(method, "nope/nothing");
            assert_eq!(error.code, ErrorCode::METHOD_NOT_FOUND);
        }
        other => panic!("expected a -32601 server error, got {other:?}"),
    }
    // Arguments must be an object.
    match within("call_tool", client.call_tool("echo", json!(["x"]))).await {
        Err(ClientError::InvalidArguments(message)) => assert!(message.contains("object")),
        other => panic!("expected InvalidArguments, got {other:?}"),
    }
    assert_eq!(client.state(), State::Ready);

    // ready -> closed
    let report = within("close", client.close()).await;
    assert_eq!(report.step, CloseStep::OutputClosed);
    assert_eq!(report.status, None);
    assert_eq!(client.state(), State::Closed);
    let reason = client.closed_reason().unwrap();
    assert_eq!(reason.cause, CloseCause::ClientClosed);
    assert_closed_by_client(
        within("list_tools", client.list_tools()).await,
        "list_tools",
    );
    assert_closed_by_client(
        within("call_tool", client.call_tool("echo", json!({"text": "x"}))).await,
        "call_tool",
    );
    assert_closed_by_client(
        within("request", client.request("tools/list", None)).await,
        "request",
    );
    assert_closed_by_client(
        within("notify", client.notify("notifications/x", None)).await,
        "notify",
    );
    assert_closed_by_client(within("ping", client.ping()).await, "ping");
    assert_closed_by_client(
        within("initialize", client.initialize()).await,
        "initialize",
    );
    assert_closed_by_client(
        within("notify_initialized", client.notify_initialized()).await,
        "notify_initialized",
    );
    // The initialize result is still there to read.
    assert_eq!(client.initialize_result(), Some(init));

    // close is idempotent: the same report, the same state.
    let again = within("second close", client.close()).await;
    assert_eq!(again, report);
    assert_eq!(client.state(), State::Closed);

    // The server saw its input end and answered everything it read.
    let exit = within("the server to stop", server).await.unwrap().unwrap();
    assert!(matches!(exit, Exit::InputClosed), "{exit:?}");
}

#[test]
fn default_options_follow_the_issue() {
    let options = ClientOptions::default();
    assert_eq!(options.request_timeout, Duration::from_secs(60));
    assert_eq!(options.close_grace, Duration::from_secs(2));
    assert_eq!(options.framing, mcp_client::protocol::Framing::Ndjson);
    assert_eq!(options.protocol_version, ProtocolVersion::LATEST_LEGACY);
    assert_eq!(options.era, EraChoice::Auto);
    assert_eq!(options.probe_timeout, Duration::from_secs(5));
    assert!(options.frame_hook.is_none());
}

#[tokio::test]
async fn connect_does_both_steps() {
    let (client, _server) = echo_in_memory(legacy_options());
    let connected = within("connect", client.connect()).await.unwrap();
    assert_eq!(client.state(), State::Ready);
    let Connected::Legacy(init) = connected else {
        panic!("EraChoice::Legacy connects in the legacy era: {connected:?}")
    };
    assert_eq!(client.initialize_result(), Some(init));
    let result = within(
        "call_tool",
        client.call_tool("echo", json!({"text": "你好 🦀"})),
    )
    .await
    .unwrap();
    assert_eq!(text_of(&result), "你好 🦀");
    // connect is initialize, so it cannot be repeated.
    assert_refused(
        within("second connect", client.connect()).await,
        "initialize",
        State::Ready,
    );
    within("close", client.close()).await;
    assert_closed_by_client(within("connect", client.connect()).await, "connect");
}

#[tokio::test]
async fn offered_version_is_negotiated() {
    let options = ClientOptions {
        protocol_version: ProtocolVersion::V2025_06_18,
        ..legacy_options()
    };
    let (client, _server) = echo_in_memory(options);
    let init = within("connect", client.connect()).await.unwrap();
    assert_eq!(init.protocol_version(), "2025-06-18");
    assert_eq!(
        client.legacy_protocol_version(),
        Some(ProtocolVersion::V2025_06_18)
    );
}

#[tokio::test]
async fn close_from_new_and_a_clone_sees_it() {
    let (client, server) = echo_in_memory(quick_options());
    let clone = client.clone();
    let report = within("close", client.close()).await;
    assert_eq!(report.step, CloseStep::OutputClosed);
    assert_eq!(clone.state(), State::Closed);
    assert_closed_by_client(within("initialize", clone.initialize()).await, "initialize");
    assert_eq!(within("close on the clone", clone.close()).await, report);
    let exit = within("the server to stop", server).await.unwrap().unwrap();
    assert!(matches!(exit, Exit::InputClosed), "{exit:?}");
}

// ---------------------------------------------------------------------------------------------
// Initialize: concurrency, failure and retry, unsupported version
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn second_concurrent_initialize_is_refused() {
    let (client, mut fake) = fake_server(quick_options());
    let first = tokio::spawn({
        let client = client.clone();
        async move { client.initialize().await }
    });
    // The first call is on the wire and its reply is held back.
    let init = fake.expect_request("initialize").await;
    assert_eq!(init["params"]["protocolVersion"], "2025-11-25");
    assert_eq!(init["params"]["capabilities"], json!({}));
    assert_eq!(init["params"]["clientInfo"]["name"], "mcp-client");
    match within("second initialize", client.initialize()).await {
        Err(ClientError::InitializeInProgress) => {}
        other => panic!("expected InitializeInProgress, got {other:?}"),
    }
    // While in progress the public state is still new, and new's refusals apply.
    assert_eq!(client.state(), State::New);
    assert_refused(within("ping", client.ping()).await, "ping", State::New);
    assert_refused(
        within("notify_initialized", client.notify_initialized()).await,
        "send notifications/initialized",
        State::New,
    );
    // Only one initialize went out.
    fake.expect_silence(Duration::from_millis(100)).await;

    fake.reply(&init["id"], init_result("2025-11-25")).await;
    let result = within("the first initialize", first)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(result.server_info.name, "fake-server");
    assert_eq!(result.server_info.version, "9.9.9");
    assert_eq!(client.state(), State::Initialized);
    assert_eq!(
        client.legacy_protocol_version(),
        Some(ProtocolVersion::V2025_11_25)
    );
}

#[tokio::test]
async fn failed_initialize_returns_to_new_and_can_be_retried() {
    let (client, mut fake) = fake_server(legacy_options());
    let attempt = tokio::spawn({
        let client = client.clone();
        async move { client.initialize().await }
    });
    let init = fake.expect_request("initialize").await;
    fake.reply_error(&init["id"], -32602, "bad initialize params")
        .await;
    match within("the failed initialize", attempt).await.unwrap() {
        Err(ClientError::Server { method, error }) => {
            assert_eq!(method, "initialize");
            assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
            assert_eq!(error.message, "bad initialize params");
        }
        other => panic!("expected a server error, got {other:?}"),
    }
    assert_eq!(client.state(), State::New);
    assert_eq!(client.initialize_result(), None);

    // A result of the wrong shape is InvalidResult, and also leaves the state at new.
    let attempt = tokio::spawn({
        let client = client.clone();
        async move { client.initialize().await }
    });
    let init = fake.expect_request("initialize").await;
    fake.reply(&init["id"], json!({"protocolVersion": "2025-11-25"}))
        .await;
    match within("the malformed initialize", attempt).await.unwrap() {
        Err(ClientError::InvalidResult { method, .. }) => assert_eq!(method, "initialize"),
        other => panic!("expected InvalidResult, got {other:?}"),
    }
    assert_eq!(client.state(), State::New);

    // The retry succeeds, with a fresh id.
    let retry = tokio::spawn({
        let client = client.clone();
        async move { client.connect().await }
    });
    let init2 = fake.expect_request("initialize").await;
    assert_ne!(init2["id"], init["id"], "a retry is a new request");
    fake.reply(&init2["id"], init_result("2025-06-18")).await;
    assert_eq!(
        fake.recv().await,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
    );
    let result = within("the retried connect", retry).await.unwrap().unwrap();
    assert_eq!(result.protocol_version(), "2025-06-18");
    assert_eq!(client.state(), State::Ready);
    assert_eq!(
        client.legacy_protocol_version(),
        Some(ProtocolVersion::V2025_06_18)
    );
}

#[tokio::test]
async fn initialize_timeout_is_not_cancelled_and_can_be_retried() {
    let options = ClientOptions {
        request_timeout: Duration::from_millis(300),
        ..quick_options()
    };
    let (client, mut fake) = fake_server(options);
    let attempt = tokio::spawn({
        let client = client.clone();
        async move { client.initialize().await }
    });
    let init = fake.expect_request("initialize").await;
    match within("the initialize timeout", attempt).await.unwrap() {
        Err(ClientError::Timeout { method, id, after }) => {
            assert_eq!(method, "initialize");
            assert_eq!(id.to_value(), init["id"]);
            assert_eq!(after, Duration::from_millis(300));
        }
        other => panic!("expected Timeout, got {other:?}"),
    }
    // `initialize` MUST NOT be cancelled (utilities/cancellation.mdx).
    fake.expect_silence(Duration::from_millis(200)).await;
    assert_eq!(client.state(), State::New);
    let retry = tokio::spawn({
        let client = client.clone();
        async move { client.initialize().await }
    });
    let init2 = fake.expect_request("initialize").await;
    fake.reply(&init2["id"], init_result("2025-11-25")).await;
    within("the retry", retry).await.unwrap().unwrap();
    assert_eq!(client.state(), State::Initialized);
}

#[tokio::test]
async fn unsupported_version_closes_the_connection() {
    let (client, mut fake) = fake_server(quick_options());
    let attempt = tokio::spawn({
        let client = client.clone();
        async move { client.initialize().await }
    });
    let init = fake.expect_request("initialize").await;
    fake.reply(&init["id"], init_result("1999-01-01")).await;
    // The client closes its output: the fake server sees EOF, and then closes its own.
    fake.expect_eof().await;
    fake.close_output();
    match within("initialize", attempt).await.unwrap() {
        Err(ClientError::UnsupportedVersion { offered, supported }) => {
            assert_eq!(offered, "1999-01-01");
            for v in ProtocolVersion::LEGACY {
                assert!(supported.contains(v.as_str()), "{supported}");
            }
        }
        other => panic!("expected UnsupportedVersion, got {other:?}"),
    }
    assert_eq!(client.state(), State::Closed);
    assert_eq!(client.initialize_result(), None);
    assert_eq!(client.protocol_version(), None);
    assert_eq!(client.era(), None);
    assert!(matches!(
        within("ping", client.ping()).await,
        Err(ClientError::Closed(_))
    ));
    assert!(matches!(
        within("initialize", client.initialize()).await,
        Err(ClientError::Closed(_))
    ));
}

// ---------------------------------------------------------------------------------------------
// The pending map
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn out_of_order_replies_are_paired_by_id() {
    const N: usize = 20;
    let (client, mut fake) = fake_server(quick_options());
    within("handshake", async {
        let (connected, ()) = tokio::join!(client.connect(), fake.handshake());
        connected.unwrap();
    })
    .await;

    let calls = futures::future::join_all((0..N).map(|i| {
        let client = client.clone();
        async move {
            client
                .call_tool("echo", json!({"text": format!("call {i}")}))
                .await
        }
    }));
    let server = async {
        let mut requests = Vec::new();
        for _ in 0..N {
            let request = fake.expect_request("tools/call").await;
            assert_eq!(request["params"]["name"], "echo");
            requests.push(request);
        }
        let mut ids: Vec<String> = requests.iter().map(|r| r["id"].to_string()).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), N, "every request has its own id");
        // Answer in reverse order of arrival, each with its own request's argument.
        for request in requests.iter().rev() {
            let text = request["params"]["arguments"]["text"].clone();
            fake.reply(
                &request["id"],
                json!({"content": [{"type": "text", "text": text}]}),
            )
            .await;
        }
    };
    let (results, ()) = within("the calls", async { tokio::join!(calls, server) }).await;
    for (i, result) in results.into_iter().enumerate() {
        let result = result.unwrap_or_else(|e| panic!("call {i} failed: {e}"));
        assert_eq!(text_of(&result), format!("call {i}"), "call {i}");
    }
    assert_eq!(client.state(), State::Ready);
}

#[tokio::test]
async fn replies_with_unknown_ids_are_dropped() {
    let (client, mut fake) = fake_server(quick_options());
    within("handshake", async {
        let (connected, ()) = tokio::join!(client.connect(), fake.handshake());
        connected.unwrap();
    })
    .await;
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool("echo", json!({"text": "real"})).await }
    });
    let request = fake.expect_request("tools/call").await;
    fake.reply(
        &json!(999_999),
        json!({"content": [{"type": "text", "text": "unknown number"}]}),
    )
    .await;
    fake.reply(
        &json!("nobody-asked"),
        json!({"content": [{"type": "text", "text": "unknown string"}]}),
    )
    .await;
    fake.reply_error(&json!(424_242), -32603, "an error nobody asked for")
        .await;
    // The real id as a string is a different id.
    fake.reply(
        &json!(request["id"].to_string()),
        json!({"content": [{"type": "text", "text": "wrong id type"}]}),
    )
    .await;
    fake.reply(
        &request["id"],
        json!({"content": [{"type": "text", "text": "real"}]}),
    )
    .await;
    let result = within("the call", call).await.unwrap().unwrap();
    assert_eq!(text_of(&result), "real");
    // The connection is still fine.
    assert_eq!(client.state(), State::Ready);
    let ping = tokio::spawn({
        let client = client.clone();
        async move { client.ping().await }
    });
    let request = fake.expect_request("ping").await;
    fake.reply(&request["id"], json!({})).await;
    within("ping", ping).await.unwrap().unwrap();
}

/// In paused time: the timeout fires at its virtual instant, whatever the machine's load.
#[tokio::test(start_paused = true)]
async fn timeout_sends_notifications_cancelled() {
    let (client, mut fake) = fake_server(quick_options());
    within("handshake", async {
        let (connected, ()) = tokio::join!(client.connect(), fake.handshake());
        connected.unwrap();
    })
    .await;
    let started = tokio::time::Instant::now();
    let call = tokio::spawn({
        let client = client.clone();
        async move {
            client
                .call_tool_with_timeout("echo", json!({"text": "slow"}), Duration::from_millis(200))
                .await
        }
    });
    let request = fake.expect_request("tools/call").await;
    let id = request["id"].clone();
    match within("the timeout", call).await.unwrap() {
        Err(ClientError::Timeout {
            method,
            id: timed_out,
            after,
        }) => {
            assert_eq!(method, "tools/call");
            assert_eq!(timed_out.to_value(), id);
            assert_eq!(after, Duration::from_millis(200));
        }
        other => panic!("expected Timeout, got {other:?}"),
    }
    // Virtual time: the 200 ms timeout, not the 5 s default, and not a moment early.
    let elapsed = started.elapsed();
    assert!(
        elapsed >= Duration::from_millis(200) && elapsed < Duration::from_millis(250),
        "{elapsed:?}"
    );
    let cancelled = fake.recv().await;
    let reason = cancelled["params"]["reason"].clone();
    assert!(reason.is_string(), "{cancelled}");
    assert_eq!(
        cancelled,
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
               "params": {"requestId": id, "reason": reason}})
    );

    // A late reply to the cancelled request is dropped; the connection keeps working.
    fake.reply(&id, json!({"content": [{"type": "text", "text": "late"}]}))
        .await;
    let again = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool("echo", json!({"text": "next"})).await }
    });
    let request = fake.expect_request("tools/call").await;
    assert_ne!(request["id"], id);
    fake.reply(
        &request["id"],
        json!({"content": [{"type": "text", "text": "next"}]}),
    )
    .await;
    let result = within("the next call", again).await.unwrap().unwrap();
    assert_eq!(text_of(&result), "next");
}

#[tokio::test]
async fn default_request_timeout_applies_to_raw_requests() {
    let options = ClientOptions {
        request_timeout: Duration::from_millis(300),
        ..quick_options()
    };
    let (client, mut fake) = fake_server(options);
    within("handshake", async {
        let (connected, ()) = tokio::join!(client.connect(), fake.handshake());
        connected.unwrap();
    })
    .await;
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.request("custom/slow", Some(json!({"x": 1}))).await }
    });
    let request = fake.expect_request("custom/slow").await;
    assert_eq!(request["params"], json!({"x": 1}));
    match within("the timeout", call).await.unwrap() {
        Err(ClientError::Timeout { method, id, after }) => {
            assert_eq!(method, "custom/slow");
            assert_eq!(id.to_value(), request["id"]);
            assert_eq!(after, Duration::from_millis(300));
        }
        other => panic!("expected Timeout, got {other:?}"),
    }
    let cancelled = fake.recv().await;
    assert_eq!(cancelled["method"], "notifications/cancelled");
    assert_eq!(cancelled["params"]["requestId"], request["id"]);
}

#[tokio::test]
async fn server_closing_its_output_fails_every_pending_call() {
    // An hour: only the closed output can end the calls (else `within` fails the test).
    let (client, mut fake) = fake_server(ClientOptions {
        request_timeout: Duration::from_secs(3600),
        ..quick_options()
    });
    within("handshake", async {
        let (connected, ()) = tokio::join!(client.connect(), fake.handshake());
        connected.unwrap();
    })
    .await;
    let calls = tokio::spawn({
        let client = client.clone();
        async move {
            futures::future::join_all((0..3).map(|i| {
                let client = client.clone();
                async move {
                    client
                        .call_tool("echo", json!({"text": i.to_string()}))
                        .await
                }
            }))
            .await
        }
    });
    for _ in 0..3 {
        fake.expect_request("tools/call").await;
    }
    fake.close_output();
    let results = within("the pending calls", calls).await.unwrap();
    for result in results {
        match result {
            Err(ClientError::Closed(reason)) => {
                assert_eq!(reason.cause, CloseCause::ServerClosedOutput, "{reason}");
                assert_eq!(reason.status, None);
            }
            other => panic!("expected Closed, got {other:?}"),
        }
    }
    assert_eq!(client.state(), State::Closed);
    assert_eq!(
        client.closed_reason().unwrap().cause,
        CloseCause::ServerClosedOutput
    );
    assert!(matches!(
        within("ping", client.ping()).await,
        Err(ClientError::Closed(_))
    ));
}

// ---------------------------------------------------------------------------------------------
// Server-initiated messages
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn server_requests_are_answered_and_notifications_streamed() {
    let (client, mut fake) = fake_server(quick_options());
    within("handshake", async {
        let (connected, ()) = tokio::join!(client.connect(), fake.handshake());
        connected.unwrap();
    })
    .await;
    let mut notifications = Box::pin(client.notifications());

    fake.send_raw(r#"{"jsonrpc":"2.0","id":"s1","method":"ping"}"#)
        .await;
    assert_eq!(
        fake.recv().await,
        json!({"jsonrpc": "2.0", "id": "s1", "result": {}})
    );
    fake.send_raw(r#"{"jsonrpc":"2.0","id":"s2","method":"sampling/createMessage","params":{}}"#)
        .await;
    let refused = fake.recv().await;
    assert_eq!(refused["jsonrpc"], "2.0");
    assert_eq!(refused["id"], "s2");
    assert_eq!(refused["error"]["code"], -32601, "{refused}");
    assert!(refused["error"]["message"].is_string(), "{refused}");
    assert!(refused.get("result").is_none(), "{refused}");
    // Integer ids are echoed as integers.
    fake.send_raw(r#"{"jsonrpc":"2.0","id":77,"method":"ping"}"#)
        .await;
    assert_eq!(
        fake.recv().await,
        json!({"jsonrpc": "2.0", "id": 77, "result": {}})
    );

    fake.send_raw(r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#)
        .await;
    fake.send_raw(
        r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hi"}}"#,
    )
    .await;
    let first = within("a notification", notifications.next()).await;
    assert_eq!(
        first,
        Some(Notification {
            method: "notifications/tools/list_changed".to_owned(),
            params: None,
        })
    );
    let second = within("a notification", notifications.next()).await;
    assert_eq!(
        second,
        Some(Notification {
            method: "notifications/message".to_owned(),
            params: Some(json!({"level": "info", "data": "hi"})),
        })
    );
    // None of that disturbed the client.
    assert_eq!(client.state(), State::Ready);
    // The stream ends when the connection closes.
    fake.close_output();
    assert_eq!(
        within("the end of the notification stream", notifications.next()).await,
        None
    );
}

#[tokio::test]
async fn server_ping_is_answered_before_initialize() {
    let (client, mut fake) = fake_server(quick_options());
    fake.send_raw(r#"{"jsonrpc":"2.0","id":"early","method":"ping"}"#)
        .await;
    assert_eq!(
        fake.recv().await,
        json!({"jsonrpc": "2.0", "id": "early", "result": {}})
    );
    assert_eq!(client.state(), State::New);
}

// ---------------------------------------------------------------------------------------------
// tools/list pagination
// ---------------------------------------------------------------------------------------------

fn tool(name: &str) -> Value {
    json!({"name": name, "inputSchema": {"type": "object"}})
}

#[tokio::test]
async fn list_tools_follows_next_cursor() {
    let (client, mut fake) = fake_server(quick_options());
    within("handshake", async {
        let (connected, ()) = tokio::join!(client.connect(), fake.handshake());
        connected.unwrap();
    })
    .await;
    let list = tokio::spawn({
        let client = client.clone();
        async move { client.list_tools().await }
    });
    let page1 = fake.expect_request("tools/list").await;
    assert!(
        page1.get("params").is_none() || page1["params"].get("cursor").is_none(),
        "the first page has no cursor: {page1}"
    );
    fake.reply(
        &page1["id"],
        json!({"tools": [tool("a"), tool("b")], "nextCursor": "page-2"}),
    )
    .await;
    let page2 = fake.expect_request("tools/list").await;
    assert_eq!(page2["params"], json!({"cursor": "page-2"}));
    fake.reply(
        &page2["id"],
        json!({"tools": [tool("c")], "nextCursor": "page-3"}),
    )
    .await;
    let page3 = fake.expect_request("tools/list").await;
    assert_eq!(page3["params"], json!({"cursor": "page-3"}));
    fake.reply(&page3["id"], json!({"tools": [tool("d"), tool("e")]}))
        .await;
    let tools = within("list_tools", list).await.unwrap().unwrap();
    assert_eq!(
        tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
        ["a", "b", "c", "d", "e"]
    );
}

#[tokio::test]
async fn list_tools_refuses_a_repeated_cursor() {
    let (client, mut fake) = fake_server(quick_options());
    within("handshake", async {
        let (connected, ()) = tokio::join!(client.connect(), fake.handshake());
        connected.unwrap();
    })
    .await;
    let list = tokio::spawn({
        let client = client.clone();
        async move { client.list_tools().await }
    });
    let page1 = fake.expect_request("tools/list").await;
    fake.reply(
        &page1["id"],
        json!({"tools": [tool("a")], "nextCursor": "x"}),
    )
    .await;
    let page2 = fake.expect_request("tools/list").await;
    assert_eq!(page2["params"], json!({"cursor": "x"}));
    fake.reply(
        &page2["id"],
        json!({"tools": [tool("b")], "nextCursor": "y"}),
    )
    .await;
    let page3 = fake.expect_request("tools/list").await;
    assert_eq!(page3["params"], json!({"cursor": "y"}));
    fake.reply(
        &page3["id"],
        json!({"tools": [tool("c")], "nextCursor": "x"}),
    )
    .await;
    match within("list_tools", list).await.unwrap() {
        Err(ClientError::InvalidResult { method, reason }) => {
            assert_eq!(method, "tools/list");
            assert!(reason.contains("\"x\""), "{reason}");
        }
        other => panic!("expected InvalidResult, got {other:?}"),
    }
    // No fourth page was asked for.
    fake.expect_silence(Duration::from_millis(100)).await;
    assert_eq!(client.state(), State::Ready);
}

#[tokio::test]
async fn list_tools_refuses_a_malformed_page() {
    let (client, mut fake) = fake_server(quick_options());
    within("handshake", async {
        let (connected, ()) = tokio::join!(client.connect(), fake.handshake());
        connected.unwrap();
    })
    .await;
    let list = tokio::spawn({
        let client = client.clone();
        async move { client.list_tools().await }
    });
    let page = fake.expect_request("tools/list").await;
    fake.reply(&page["id"], json!({"tools": "not a list"}))
        .await;
    match within("list_tools", list).await.unwrap() {
        Err(ClientError::InvalidResult { method, .. }) => assert_eq!(method, "tools/list"),
        other => panic!("expected InvalidResult, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Frame tracing
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn frame_hook_sees_each_frame_in_order() {
    let (options, frames) = recording(legacy_options());
    let (client, _server) = echo_in_memory(options);
    within("connect", client.connect()).await.unwrap();
    within("ping", client.ping()).await.unwrap();
    let frames = frames.lock().unwrap().clone();
    let summary: Vec<(FrameDirection, Value, Value)> = frames
        .iter()
        .map(|(d, v)| (*d, v["id"].clone(), v["method"].clone()))
        .collect();
    assert_eq!(
        summary,
        [
            (FrameDirection::Send, json!(1), json!("initialize")),
            (FrameDirection::Receive, json!(1), Value::Null),
            (
                FrameDirection::Send,
                Value::Null,
                json!("notifications/initialized")
            ),
            (FrameDirection::Send, json!(2), json!("ping")),
            (FrameDirection::Receive, json!(2), Value::Null),
        ],
        "{frames:#?}"
    );
    let (_, init) = &frames[0];
    assert_eq!(init["jsonrpc"], "2.0");
    assert_eq!(init["params"]["protocolVersion"], "2025-11-25");
    let (_, reply) = &frames[1];
    assert_eq!(reply["result"]["serverInfo"]["name"], "mcp-echo-server");
    let (_, pong) = &frames[4];
    assert_eq!(pong, &json!({"jsonrpc": "2.0", "id": 2, "result": {}}));
    assert_eq!(FrameDirection::Send.to_string(), "[mcp:send]");
    assert_eq!(FrameDirection::Receive.to_string(), "[mcp:receive]");
}

#[tokio::test]
async fn request_ids_are_distinct_integers() {
    let (options, frames) = recording(legacy_options());
    let (client, _server) = echo_in_memory(options);
    within("connect", client.connect()).await.unwrap();
    for _ in 0..3 {
        within("ping", client.ping()).await.unwrap();
    }
    let ids: Vec<RequestId> = frames
        .lock()
        .unwrap()
        .iter()
        .filter(|(d, v)| *d == FrameDirection::Send && v.get("id").is_some())
        .map(|(_, v)| serde_json::from_value(v["id"].clone()).unwrap())
        .collect();
    assert_eq!(
        ids,
        [1i64, 2, 3, 4].map(RequestId::from),
        "initialize, then three pings"
    );
}

/// `close()` on a `connect_io` connection returns only once what was queued is written and the
/// output closed: dropping the client right after it loses nothing. Found by the
/// `client_replies` fuzz target (it returned as soon as the server's output ended).
/// In paused time, so "queue up" means "until the client can do nothing more", not 200 ms.
#[tokio::test(start_paused = true)]
async fn close_writes_everything_queued_before_it_returns() {
    let (client_read, mut server_write) = tokio::io::duplex(1 << 20);
    let (mut server_read, client_write) = tokio::io::duplex(64);
    let client = Client::connect_io(client_read, client_write, ClientOptions::default());
    let pings: String = (1..=200)
        .map(|id| format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}\n"))
        .collect();
    server_write.write_all(pings.as_bytes()).await.unwrap();
    // The replies queue up behind a 64-byte pipe nobody reads yet: in paused time this sleep
    // ends only once every task is blocked, so the client has read all it can.
    tokio::time::sleep(Duration::from_millis(200)).await;
    drop(server_write);
    let reader = tokio::spawn(async move {
        let mut got = Vec::new();
        let mut chunk = [0u8; 64];
        loop {
            let n = server_read.read(&mut chunk).await.unwrap();
            if n == 0 {
                break got;
            }
            got.extend_from_slice(&chunk[..n]);
            tokio::time::sleep(Duration::from_micros(200)).await;
        }
    });
    client.close().await;
    drop(client);
    let got = tokio::time::timeout(Duration::from_secs(10), reader)
        .await
        .expect("the client's output ends")
        .unwrap();
    let text = String::from_utf8(got).unwrap();
    let expected: String = (1..=200)
        .map(|id| format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{}}}}\n"))
        .collect();
    assert_eq!(text, expected);
}
