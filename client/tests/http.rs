//! Streamable HTTP: the same `Client` over `Client::connect_http`, against an in-process axum
//! fixture that scripts every answer (JSON and SSE replies, sessions, 202, 404, 4xx with an
//! id-less JSON-RPC error, DELETE), and against the TypeScript SDK's server-everything when it
//! is installed.
#![allow(clippy::unwrap_used)]

mod common;
mod http_fixture;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::http::Method;
use futures::StreamExt;
use mcp_client::protocol::mcp::ContentBlock;
use mcp_client::protocol::{ErrorCode, ErrorObject};
use mcp_client::{
    Client, ClientError, ClientOptions, CloseStep, Connected, Era, HttpTarget, State,
};
use serde_json::{json, Value};
use tokio::sync::Notify;

use common::{discover_result, init_result, legacy_options, modern_options, quick_options, within};
use http_fixture::{
    json_body, result, sse, status, status_json, text_result, with_session, Fixture, Seen,
};

const ACCEPT_BOTH: &str = "application/json, text/event-stream";

fn text_of(result: &mcp_client::protocol::mcp::CallToolResult) -> &str {
    match result.content.as_slice() {
        [ContentBlock::Text { text }] => text,
        other => panic!("expected one text block, got {other:?}"),
    }
}

fn tools() -> Value {
    json!({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]})
}

/// What a TypeScript SDK server answers a first request that is not `initialize`.
fn no_session_error() -> Value {
    json!({"jsonrpc": "2.0", "error": {"code": -32000, "message": "Bad Request: No valid session ID provided"}, "id": null})
}

/// The MCP headers of a request, in a fixed order, for exact comparison.
fn mcp_headers(seen: &Seen) -> Vec<(&'static str, Option<&str>)> {
    [
        "mcp-session-id",
        "mcp-protocol-version",
        "mcp-method",
        "mcp-name",
    ]
    .into_iter()
    .map(|name| (name, seen.header(name)))
    .collect()
}

fn legacy_headers<'a>(
    session: Option<&'a str>,
    version: Option<&'a str>,
) -> Vec<(&'static str, Option<&'a str>)> {
    vec![
        ("mcp-session-id", session),
        ("mcp-protocol-version", version),
        ("mcp-method", None),
        ("mcp-name", None),
    ]
}

#[tokio::test]
async fn legacy_probe_fallback_session_json_and_sse_then_delete_on_close() {
    let mut server = Fixture::serve(|seen: Seen| async move {
        match seen.method {
            Method::DELETE => return status(200),
            Method::GET => return status(405),
            _ => {}
        }
        match seen.rpc() {
            "server/discover" => status_json(400, no_session_error()),
            "initialize" => with_session(result(seen.id(), init_result("2025-11-25")), "sess-1"),
            "tools/list" => result(seen.id(), tools()),
            "tools/call" => sse(&[
                json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "working"}}),
                json!({"jsonrpc": "2.0", "id": seen.id(), "result": text_result("hi")}),
            ]),
            _ => status(202),
        }
    })
    .await;
    let client = Client::connect_http(
        HttpTarget::new(&server.url).header("Authorization", "Bearer t0ken"),
        quick_options(),
    )
    .unwrap();
    let connected = within("connect", client.connect()).await.unwrap();
    assert!(matches!(connected, Connected::Legacy(_)));
    assert_eq!(client.era(), Some(Era::Legacy));
    assert_eq!(client.protocol_version().as_deref(), Some("2025-11-25"));

    let probe = server.expect("server/discover").await;
    assert_eq!(probe.header("accept"), Some(ACCEPT_BOTH));
    assert_eq!(probe.header("content-type"), Some("application/json"));
    assert_eq!(probe.header("authorization"), Some("Bearer t0ken"));
    assert_eq!(
        mcp_headers(&probe),
        vec![
            ("mcp-session-id", None),
            ("mcp-protocol-version", Some("2026-07-28")),
            ("mcp-method", Some("server/discover")),
            ("mcp-name", None),
        ]
    );
    let init = server.expect("initialize").await;
    assert_eq!(mcp_headers(&init), legacy_headers(None, None));
    assert_eq!(init.header("accept"), Some(ACCEPT_BOTH));
    let initialized = server.expect("notifications/initialized").await;
    let after = legacy_headers(Some("sess-1"), Some("2025-11-25"));
    assert_eq!(mcp_headers(&initialized), after);
    // Then the listening stream is tried: 405, and the client carries on without it.
    let get = server.next_get().await;
    assert_eq!(mcp_headers(&get), after);
    assert_eq!(get.header("accept"), Some("text/event-stream"));

    let listed = within("tools/list", client.list_tools()).await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].name, "echo");
    assert_eq!(mcp_headers(&server.expect("tools/list").await), after);

    // An SSE reply: the notification before the response reaches the notifications stream.
    let mut notifications = Box::pin(client.notifications());
    let called = within(
        "tools/call",
        client.call_tool("echo", json!({"text": "hi"})),
    )
    .await
    .unwrap();
    assert_eq!(text_of(&called), "hi");
    let call = server.expect("tools/call").await;
    assert_eq!(mcp_headers(&call), after);
    assert_eq!(call.header("authorization"), Some("Bearer t0ken"));
    let note = within("the SSE notification", notifications.next())
        .await
        .unwrap();
    assert_eq!(note.method, "notifications/message");
    assert_eq!(
        note.params,
        Some(json!({"level": "info", "data": "working"}))
    );

    // A notification: 202 is success.
    within(
        "notify",
        client.notify("notifications/roots/list_changed", None),
    )
    .await
    .unwrap();
    let posted = server.expect("notifications/roots/list_changed").await;
    assert_eq!(posted.body.get("id"), None);

    // close() ends the session with DELETE.
    let report = within("close", client.close()).await;
    assert_eq!(report.step, CloseStep::OutputClosed);
    assert_eq!(client.state(), State::Closed);
    let delete = server.next().await;
    assert_eq!(delete.method, Method::DELETE);
    assert_eq!(delete.header("mcp-session-id"), Some("sess-1"));
    assert!(server.drain().is_empty());
    assert!(server.drain_gets().is_empty(), "a 405 is not retried");
    assert!(matches!(
        client.list_tools().await,
        Err(ClientError::Closed(_))
    ));
}

#[tokio::test]
async fn the_get_stream_delivers_notifications_and_server_requests() {
    let gets = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&gets);
    let mut server = Fixture::serve(move |seen: Seen| {
        let counter = Arc::clone(&counter);
        async move {
            if seen.method == Method::GET {
                // The first GET gets a stream; a reopened one is refused.
                if counter.fetch_add(1, Ordering::SeqCst) > 0 {
                    return status(405);
                }
                return sse(&[
                    json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}),
                    json!({"jsonrpc": "2.0", "id": "srv-1", "method": "ping"}),
                ]);
            }
            match seen.rpc() {
                "initialize" => with_session(result(seen.id(), init_result("2025-11-25")), "s-9"),
                _ => status(202),
            }
        }
    })
    .await;
    let client = Client::connect_http(server.url.as_str(), legacy_options()).unwrap();
    let mut notifications = Box::pin(client.notifications());
    within("connect", client.connect()).await.unwrap();
    server.expect("initialize").await;
    server.expect("notifications/initialized").await;
    let note = within("the GET notification", notifications.next())
        .await
        .unwrap();
    assert_eq!(note.method, "notifications/tools/list_changed");
    // The server's ping is answered with a POST of the reply, in the session.
    let pong = server.next().await;
    assert_eq!(pong.method, Method::POST);
    assert_eq!(
        pong.body,
        json!({"jsonrpc": "2.0", "id": "srv-1", "result": {}})
    );
    assert_eq!(pong.header("mcp-session-id"), Some("s-9"));
    within("close", client.close()).await;
}

#[tokio::test]
async fn a_404_on_the_session_is_session_expired_and_connect_starts_a_new_one() {
    let sessions = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&sessions);
    let mut server = Fixture::serve(move |seen: Seen| {
        let counter = Arc::clone(&counter);
        async move {
            match seen.rpc() {
                "initialize" => {
                    let n = counter.fetch_add(1, Ordering::SeqCst) + 1;
                    let reply = result(seen.id(), init_result("2025-11-25"));
                    with_session(reply, &format!("sess-{n}"))
                }
                "tools/list" if seen.header("mcp-session-id") == Some("sess-1") => status(404),
                "tools/list" => result(seen.id(), tools()),
                _ => status(202),
            }
        }
    })
    .await;
    let client = Client::connect_http(server.url.as_str(), legacy_options()).unwrap();
    within("connect", client.connect()).await.unwrap();
    let expired = within("tools/list", client.list_tools()).await;
    match expired {
        Err(ClientError::SessionExpired { method, session_id }) => {
            assert_eq!(
                (method.as_str(), session_id.as_str()),
                ("tools/list", "sess-1")
            );
        }
        other => panic!("expected SessionExpired, got {other:?}"),
    }
    assert_eq!(client.state(), State::New);
    assert_eq!(client.era(), None);
    // Re-initialize on request: a new session, without the old id.
    within("reconnect", client.connect()).await.unwrap();
    assert_eq!(client.state(), State::Ready);
    let tools = within("tools/list", client.list_tools()).await.unwrap();
    assert_eq!(tools.len(), 1);
    let methods: Vec<(String, Option<String>)> = server
        .drain()
        .iter()
        .map(|s| {
            (
                s.rpc().to_owned(),
                s.header("mcp-session-id").map(str::to_owned),
            )
        })
        .collect();
    let s = |v: &str| Some(v.to_owned());
    assert_eq!(
        methods,
        vec![
            ("initialize".into(), None),
            ("notifications/initialized".into(), s("sess-1")),
            ("tools/list".into(), s("sess-1")),
            ("initialize".into(), None),
            ("notifications/initialized".into(), s("sess-2")),
            ("tools/list".into(), s("sess-2")),
        ]
    );
    within("close", client.close()).await;
}

#[tokio::test]
async fn modern_requests_mirror_their_headers_and_carry_no_session() {
    let mut server = Fixture::serve(|seen: Seen| async move {
        match seen.rpc() {
            // A session id on a modern reply is not a session: it must not come back.
            "server/discover" => with_session(
                result(seen.id(), discover_result(&["2026-07-28"])),
                "not-a-session",
            ),
            "tools/list" => result(seen.id(), json!({"resultType": "complete", "tools": []})),
            "tools/call" => {
                let name = seen.body["params"]["name"].as_str().unwrap().to_owned();
                result(seen.id(), text_result(&name))
            }
            _ => status(405),
        }
    })
    .await;
    let client = Client::connect_http(server.url.as_str(), modern_options()).unwrap();
    let connected = within("connect", client.connect()).await.unwrap();
    assert_eq!(connected.era(), Era::Modern);
    server.expect("server/discover").await;

    let echoed = within("tools/call", client.call_tool("echo", json!({})))
        .await
        .unwrap();
    assert_eq!(text_of(&echoed), "echo");
    let call = server.expect("tools/call").await;
    let modern = |method, name| {
        vec![
            ("mcp-session-id", None),
            ("mcp-protocol-version", Some("2026-07-28")),
            ("mcp-method", Some(method)),
            ("mcp-name", name),
        ]
    };
    assert_eq!(mcp_headers(&call), modern("tools/call", Some("echo")));
    assert_eq!(
        call.body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );

    // A name that is not plain ASCII goes Base64 ("Value Encoding").
    within("tools/call", client.call_tool("héllo wörld", json!({})))
        .await
        .unwrap();
    let call = server.expect("tools/call").await;
    assert_eq!(
        mcp_headers(&call),
        modern("tools/call", Some("=?base64?aMOpbGxvIHfDtnJsZA==?="))
    );

    within("tools/list", client.list_tools()).await.unwrap();
    assert_eq!(
        mcp_headers(&server.expect("tools/list").await),
        modern("tools/list", None)
    );

    // No session: close() sends no DELETE.
    within("close", client.close()).await;
    assert!(server.drain().is_empty());
}

#[tokio::test]
async fn a_400_with_a_modern_error_is_modern_with_no_fallback() {
    let mut server = Fixture::serve(|seen: Seen| async move {
        let error = json!({"code": -32022, "message": "Unsupported protocol version", "data": {"supported": ["2027-01-01"]}});
        match seen.rpc() {
            "server/discover" => status_json(
                400,
                json!({"jsonrpc": "2.0", "id": seen.id(), "error": error}),
            ),
            _ => status(500),
        }
    })
    .await;
    let client = Client::connect_http(server.url.as_str(), quick_options()).unwrap();
    match within("connect", client.connect()).await {
        Err(ClientError::UnsupportedModernVersion {
            requested,
            supported,
            ..
        }) => {
            assert_eq!(requested, "2026-07-28");
            assert_eq!(supported, vec!["2027-01-01".to_owned()]);
        }
        other => panic!("expected UnsupportedModernVersion, got {other:?}"),
    }
    server.expect("server/discover").await;
    // No initialize followed.
    assert!(server.drain().is_empty());
    assert_eq!(client.state(), State::New);
    within("close", client.close()).await;
}

#[tokio::test]
async fn a_timeout_posts_notifications_cancelled_for_that_request() {
    let mut server = Fixture::serve(|seen: Seen| async move {
        match seen.rpc() {
            "initialize" => result(seen.id(), init_result("2025-11-25")),
            // Never answers.
            "tools/call" => std::future::pending().await,
            "tools/list" => result(seen.id(), tools()),
            _ => status(202),
        }
    })
    .await;
    let client = Client::connect_http(server.url.as_str(), legacy_options()).unwrap();
    within("connect", client.connect()).await.unwrap();
    server.expect("initialize").await;
    server.expect("notifications/initialized").await;

    let timeout = Duration::from_millis(200);
    let outcome = within(
        "the timeout",
        client.call_tool_with_timeout("slow", json!({}), timeout),
    )
    .await;
    let call = server.expect("tools/call").await;
    match outcome {
        Err(ClientError::Timeout { method, id, after }) => {
            assert_eq!((method.as_str(), after), ("tools/call", timeout));
            assert_eq!(serde_json::to_value(&id).unwrap(), call.id());
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
    let cancelled = server.expect("notifications/cancelled").await;
    assert_eq!(cancelled.body["params"]["requestId"], call.id());
    assert_eq!(
        cancelled.body["params"]["reason"],
        format!("timed out after {timeout:?}")
    );
    // The connection lives on.
    within("tools/list", client.list_tools()).await.unwrap();
    server.expect("tools/list").await;
    within("close", client.close()).await;
}

/// Signals when dropped: the server stopped serving a request (its connection closed).
struct OnDrop(Arc<Notify>);

impl Drop for OnDrop {
    fn drop(&mut self) {
        self.0.notify_one();
    }
}

#[tokio::test]
async fn a_modern_timeout_closes_the_post_and_posts_no_cancellation() {
    let closed = Arc::new(Notify::new());
    let signal = Arc::clone(&closed);
    let mut server = Fixture::serve(move |seen: Seen| {
        let signal = Arc::clone(&signal);
        async move {
            match seen.rpc() {
                "server/discover" => result(seen.id(), discover_result(&["2026-07-28"])),
                "tools/call" => {
                    let _guard = OnDrop(signal);
                    std::future::pending().await
                }
                "tools/list" => result(seen.id(), json!({"tools": []})),
                _ => status(400),
            }
        }
    })
    .await;
    let client = Client::connect_http(server.url.as_str(), modern_options()).unwrap();
    within("connect", client.connect()).await.unwrap();
    server.expect("server/discover").await;
    let timeout = Duration::from_millis(200);
    let outcome = within(
        "the timeout",
        client.call_tool_with_timeout("slow", json!({}), timeout),
    )
    .await;
    assert!(
        matches!(outcome, Err(ClientError::Timeout { .. })),
        "{outcome:?}"
    );
    server.expect("tools/call").await;
    // 2026-07-28: closing the request's stream is the cancellation.
    within("the server to see the POST closed", closed.notified()).await;
    within("tools/list", client.list_tools()).await.unwrap();
    // The next thing the server saw is tools/list: no notifications/cancelled was posted.
    server.expect("tools/list").await;
    within("close", client.close()).await;
    assert!(server.drain().is_empty());
}

#[tokio::test]
async fn concurrent_requests_are_matched_by_id_whatever_order_replies_come_in() {
    let second_answered = Arc::new(Notify::new());
    let gate = Arc::clone(&second_answered);
    let server = Fixture::serve(move |seen: Seen| {
        let gate = Arc::clone(&gate);
        async move {
            match seen.rpc() {
                "initialize" => result(seen.id(), init_result("2025-11-25")),
                "tools/call" => match seen.body["params"]["name"].as_str().unwrap() {
                    // Waits until the other call has its reply.
                    "first" => {
                        gate.notified().await;
                        sse(&[json!({"jsonrpc": "2.0", "id": seen.id(), "result": text_result("first")})])
                    }
                    _ => {
                        gate.notify_one();
                        result(seen.id(), text_result("second"))
                    }
                },
                _ => status(202),
            }
        }
    })
    .await;
    let client = Client::connect_http(server.url.as_str(), legacy_options()).unwrap();
    within("connect", client.connect()).await.unwrap();
    let (first, second) = within("both calls", async {
        tokio::join!(
            client.call_tool("first", json!({})),
            client.call_tool("second", json!({}))
        )
    })
    .await;
    assert_eq!(text_of(&first.unwrap()), "first");
    assert_eq!(text_of(&second.unwrap()), "second");
    within("close", client.close()).await;
}

#[tokio::test]
async fn at_most_64_requests_are_on_the_wire_at_once() {
    const CALLS: usize = 70;
    // (requests being served now, most ever at once)
    let load = Arc::new(std::sync::Mutex::new((0usize, 0usize)));
    let (arrived_tx, mut arrived) = tokio::sync::mpsc::unbounded_channel::<()>();
    let (release, released) = tokio::sync::watch::channel(false);
    let server_load = Arc::clone(&load);
    let mut server = Fixture::serve(move |seen: Seen| {
        let load = Arc::clone(&server_load);
        let arrived = arrived_tx.clone();
        let mut released = released.clone();
        async move {
            match seen.rpc() {
                "initialize" => return result(seen.id(), init_result("2025-11-25")),
                "tools/call" => {}
                _ => return status(202),
            }
            {
                let mut load = load.lock().unwrap();
                load.0 += 1;
                load.1 = load.1.max(load.0);
            }
            let _ = arrived.send(());
            // Nothing is answered until the test says so.
            released.wait_for(|r| *r).await.unwrap();
            load.lock().unwrap().0 -= 1;
            let name = seen.body["params"]["name"].as_str().unwrap().to_owned();
            result(seen.id(), text_result(&name))
        }
    })
    .await;
    let client = Client::connect_http(server.url.as_str(), legacy_options()).unwrap();
    within("connect", client.connect()).await.unwrap();
    let caller = client.clone();
    let calls = tokio::spawn(async move {
        let names: Vec<String> = (0..CALLS).map(|i| format!("t{i}")).collect();
        let calls = names.iter().map(|name| caller.call_tool(name, json!({})));
        futures::future::join_all(calls).await
    });
    for _ in 0..64 {
        within("64 requests at the server", arrived.recv()).await;
    }
    // A notification queued after all 70 requests is posted once the client has taken them
    // all from its queue: without a bound, the other 6 would be on the wire by now.
    within("notify", client.notify("notifications/marker", None))
        .await
        .unwrap();
    while server.next().await.rpc() != "notifications/marker" {}
    assert_eq!(
        *load.lock().unwrap(),
        (64, 64),
        "(being served, most at once)"
    );
    release.send_replace(true);
    let replies = within("70 calls", calls).await.unwrap();
    for (i, reply) in replies.into_iter().enumerate() {
        assert_eq!(text_of(&reply.unwrap()), format!("t{i}"));
    }
    assert_eq!(
        load.lock().unwrap().1,
        64,
        "the most requests served at once"
    );
    within("close", client.close()).await;
}

#[tokio::test]
async fn an_http_error_fails_the_request_that_caused_it_even_without_an_id() {
    let server = Fixture::serve(|seen: Seen| async move {
        match seen.rpc() {
            "initialize" => result(seen.id(), init_result("2025-11-25")),
            "tools/call" => match seen.body["params"]["name"].as_str().unwrap() {
                "bad" => status_json(
                    400,
                    json!({"jsonrpc": "2.0", "error": {"code": -32602, "message": "no such tool"}}),
                ),
                "boom" => http_fixture::status(500),
                "no-reply" => json_body(
                    json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {}}),
                ),
                _ => result(seen.id(), text_result("good")),
            },
            _ => status(202),
        }
    })
    .await;
    let client = Client::connect_http(server.url.as_str(), legacy_options()).unwrap();
    within("connect", client.connect()).await.unwrap();
    let (bad, good) = within("both calls", async {
        tokio::join!(
            client.call_tool("bad", json!({})),
            client.call_tool("good", json!({}))
        )
    })
    .await;
    match bad {
        Err(ClientError::Http {
            method,
            status,
            error,
            ..
        }) => {
            assert_eq!((method.as_str(), status), ("tools/call", 400));
            assert_eq!(
                error,
                Some(ErrorObject::new(ErrorCode(-32602), "no such tool"))
            );
        }
        other => panic!("expected HTTP 400, got {other:?}"),
    }
    assert_eq!(text_of(&good.unwrap()), "good");
    match within("boom", client.call_tool("boom", json!({}))).await {
        Err(ClientError::Http {
            status: 500,
            error: None,
            ..
        }) => {}
        other => panic!("expected HTTP 500, got {other:?}"),
    }
    match within("no reply", client.call_tool("no-reply", json!({}))).await {
        Err(ClientError::Transport { method, reason }) => {
            assert_eq!(method, "tools/call");
            assert!(reason.contains("without a response"), "{reason}");
        }
        other => panic!("expected a transport error, got {other:?}"),
    }
    assert_eq!(client.state(), State::Ready);
    within("close", client.close()).await;
}

#[tokio::test]
async fn replies_over_the_size_limit_are_refused() {
    let big = "x".repeat(4096);
    let server = Fixture::serve(move |seen: Seen| {
        let big = big.clone();
        async move {
            match seen.rpc() {
                "initialize" => result(seen.id(), init_result("2025-11-25")),
                "tools/call" if seen.body["params"]["name"] == "sse" => {
                    sse(&[json!({"jsonrpc": "2.0", "id": seen.id(), "result": text_result(&big)})])
                }
                "tools/call" => result(seen.id(), text_result(&big)),
                _ => status(202),
            }
        }
    })
    .await;
    let options = ClientOptions {
        max_message_bytes: 1024,
        ..legacy_options()
    };
    let client = Client::connect_http(server.url.as_str(), options).unwrap();
    within("connect", client.connect()).await.unwrap();
    for name in ["json", "sse"] {
        match within(name, client.call_tool(name, json!({}))).await {
            Err(ClientError::Transport { reason, .. }) => {
                assert!(reason.contains("1024"), "{name}: {reason}")
            }
            other => panic!("{name}: expected a transport error, got {other:?}"),
        }
    }
    within("close", client.close()).await;
}

#[tokio::test]
async fn bad_targets_are_invalid_arguments() {
    for target in [
        HttpTarget::new("not a url"),
        HttpTarget::new("ftp://127.0.0.1/mcp"),
        HttpTarget::new("http://127.0.0.1/mcp").header("bad header", "x"),
        HttpTarget::new("http://127.0.0.1/mcp").header("x-ok", "line\nbreak"),
    ] {
        let shown = format!("{target:?}");
        assert!(
            matches!(
                Client::connect_http(target, ClientOptions::default()),
                Err(ClientError::InvalidArguments(_))
            ),
            "{shown}"
        );
    }
    let secret = HttpTarget::new("http://h/mcp").header("Authorization", "Bearer s3cret");
    assert!(!format!("{secret:?}").contains("s3cret"));
}

/// Where the TypeScript SDK's server-everything is installed: `MCP_INTEROP_NODE_MODULES`, or
/// the workspace's `interop/node_modules`.
fn server_everything() -> Option<std::path::PathBuf> {
    let modules = std::env::var_os("MCP_INTEROP_NODE_MODULES")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| common::workspace_root().join("interop/node_modules"));
    let script = modules.join("@modelcontextprotocol/server-everything/dist/index.js");
    let node = std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    (node && script.exists()).then_some(script)
}

/// Against a real third-party server: the TypeScript SDK's server-everything
/// (`streamableHttp`, a legacy-era server with sessions). Skipped when node or the package is
/// absent.
#[tokio::test]
async fn server_everything_over_streamable_http() {
    let Some(script) = server_everything() else {
        eprintln!("skipped: node or @modelcontextprotocol/server-everything is not installed");
        return;
    };
    // A free port: bind, read it, release it for the server.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = tokio::process::Command::new("node")
        .arg(&script)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(stderr));
    common::within_for(
        Duration::from_secs(30),
        "server-everything to listen",
        async {
            while let Some(line) = lines.next_line().await.unwrap() {
                if line.contains("listening on port") {
                    return;
                }
            }
            panic!("server-everything exited before listening");
        },
    )
    .await;
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });

    let url = format!("http://127.0.0.1:{port}/mcp");
    let client = Client::connect_http(url.as_str(), quick_options()).unwrap();
    let connected = within("connect", client.connect()).await.unwrap();
    assert_eq!(connected.era(), Era::Legacy);
    assert!(client
        .initialize_result()
        .unwrap()
        .server_info
        .name
        .contains("everything"));
    let tools = within("tools/list", client.list_tools()).await.unwrap();
    assert!(tools.iter().any(|t| t.name == "echo"), "{tools:?}");
    let echoed = within(
        "tools/call",
        client.call_tool("echo", json!({"message": "hi"})),
    )
    .await
    .unwrap();
    assert_eq!(text_of(&echoed), "Echo: hi");
    // Several at once, each on its own POST.
    let calls = (0..8).map(|i| client.call_tool("echo", json!({"message": format!("m{i}")})));
    let replies = within("8 calls", futures::future::join_all(calls)).await;
    for (i, reply) in replies.into_iter().enumerate() {
        assert_eq!(text_of(&reply.unwrap()), format!("Echo: m{i}"));
    }
    within("close", client.close()).await;
    child.kill().await.unwrap();
}
