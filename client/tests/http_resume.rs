//! Streamable HTTP streams that end early (`transports.mdx`, "Resumability and Redelivery"):
//! a reply stream that ends before its response is resumed with `GET` and `Last-Event-ID`
//! after the server's `retry`, and so is the GET stream; what cannot be resumed fails its
//! request with the reason. Against the in-process axum fixture.
#![allow(clippy::unwrap_used)]

mod common;
mod http_fixture;

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::http::Method;
use axum::response::Response;
use futures::StreamExt;
use mcp_client::protocol::mcp::modern;
use mcp_client::protocol::mcp::ContentBlock;
use mcp_client::{Client, ClientError, ClientOptions, State};
use parking_lot::Mutex;
use serde_json::{json, Value};

use common::{discover_result, init_result, legacy_options, modern_options, within};
use http_fixture::{result, sse_raw, status, text_result, with_session, Fixture, Seen};

const SESSION: &str = "s-1";

/// A priming event: an id, a `retry`, empty data (what the TypeScript SDK sends first).
fn priming(id: &str, retry_ms: u64) -> String {
    format!("id: {id}\nretry: {retry_ms}\ndata: \n\n")
}

fn event(id: &str, message: &Value) -> String {
    format!("id: {id}\nevent: message\ndata: {message}\n\n")
}

fn response(id: &Value, text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": text_result(text)})
}

/// What the fixture remembers between requests: the id of the `tools/call` whose stream it
/// cut, when it answered that POST, and when the last resuming GET came.
#[derive(Default)]
struct Cut {
    call_id: Option<Value>,
    answered_at: Option<Instant>,
    resumed_at: Option<Instant>,
    /// Resuming GETs so far.
    resumes: usize,
}

impl Cut {
    /// From the cut POST's answer to the last resuming GET.
    fn gap(&self) -> Duration {
        self.resumed_at.unwrap() - self.answered_at.unwrap()
    }
}

/// A legacy server in session [`SESSION`]: `tools/call` answers with `post_body` (an event
/// stream that ends there) and a GET with `Last-Event-ID` with `on_resume`; a GET without one
/// (the listening stream) is 405.
async fn cutting_server(
    post_body: String,
    on_resume: impl Fn(&Seen, Option<Value>) -> Response + Send + Sync + 'static,
) -> (Fixture, Arc<Mutex<Cut>>) {
    let cut = Arc::new(Mutex::new(Cut::default()));
    let state = Arc::clone(&cut);
    let on_resume = Arc::new(on_resume);
    let server = Fixture::serve(move |seen: Seen| {
        let state = Arc::clone(&state);
        let post_body = post_body.clone();
        let on_resume = Arc::clone(&on_resume);
        async move {
            if seen.method == Method::GET {
                if seen.header("last-event-id").is_none() {
                    return status(405);
                }
                let call_id = {
                    let mut cut = state.lock();
                    cut.resumed_at = Some(Instant::now());
                    cut.resumes += 1;
                    cut.call_id.clone()
                };
                return on_resume(&seen, call_id);
            }
            match seen.rpc() {
                "initialize" => with_session(result(seen.id(), init_result("2025-11-25")), SESSION),
                "tools/call" => {
                    let mut cut = state.lock();
                    cut.call_id = Some(seen.id());
                    cut.answered_at = Some(Instant::now());
                    sse_raw(&post_body)
                }
                _ => status(202),
            }
        }
    })
    .await;
    (server, cut)
}

fn text_of(result: &mcp_client::protocol::mcp::CallToolResult) -> &str {
    match result.content.as_slice() {
        [ContentBlock::Text { text }] => text,
        other => panic!("expected one text block, got {other:?}"),
    }
}

/// The next GET that carries `Last-Event-ID` (the listening stream's GETs are skipped).
async fn next_resume(server: &mut Fixture) -> Seen {
    loop {
        let get = server.next_get().await;
        if get.header("last-event-id").is_some() {
            return get;
        }
    }
}

#[tokio::test]
async fn a_reply_stream_cut_before_its_response_is_resumed_after_retry_with_last_event_id() {
    let (mut server, cut) = cutting_server(priming("p-1", 300), |_, id| {
        sse_raw(&(priming("p-2", 300) + &event("p-3", &response(&id.unwrap(), "resumed"))))
    })
    .await;
    let client = Client::connect_http(server.url.as_str(), legacy_options()).unwrap();
    within("connect", client.connect()).await.unwrap();
    let call = client.call_tool("slow", json!({}));
    let (result, get) = within("the call and its resumption", async {
        tokio::join!(call, next_resume(&mut server))
    })
    .await;
    assert_eq!(text_of(&result.unwrap()), "resumed");
    assert_eq!(get.header("last-event-id"), Some("p-1"));
    assert_eq!(get.header("mcp-session-id"), Some(SESSION));
    assert_eq!(get.header("mcp-protocol-version"), Some("2025-11-25"));
    assert!(get.header("accept").unwrap().contains("text/event-stream"));
    // The stream ended after the POST was answered: the GET came at least `retry` after.
    let gap = cut.lock().gap();
    assert!(
        gap >= Duration::from_millis(300),
        "resumed {gap:?} after the cut"
    );
    assert_eq!(client.state(), State::Ready);
    within("close", client.close()).await;
}

/// Calls `slow` and returns its transport error's reason.
async fn transport_failure(client: &Client) -> String {
    match within("the call", client.call_tool("slow", json!({}))).await {
        Err(ClientError::Transport { method, reason }) => {
            assert_eq!(method, "tools/call");
            reason
        }
        other => panic!("expected a transport error, got {other:?}"),
    }
}

async fn connected(server: &Fixture, options: ClientOptions) -> Client {
    let client = Client::connect_http(server.url.as_str(), options).unwrap();
    within("connect", client.connect()).await.unwrap();
    client
}

#[tokio::test]
async fn a_stream_whose_events_had_no_id_is_not_resumed() {
    let note = json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {}});
    let (server, cut) =
        cutting_server(format!("retry: 0\ndata: {note}\n\n"), |_, _| status(500)).await;
    let client = connected(&server, legacy_options()).await;
    let reason = transport_failure(&client).await;
    assert!(reason.contains("without a response"), "{reason}");
    assert_eq!(cut.lock().resumes, 0);
    assert_eq!(client.state(), State::Ready);
    within("close", client.close()).await;
}

#[tokio::test]
async fn a_refused_resumption_fails_the_request_with_its_status() {
    let (server, cut) = cutting_server(priming("p-1", 0), |_, _| status(405)).await;
    let client = connected(&server, legacy_options()).await;
    let reason = transport_failure(&client).await;
    assert!(
        reason.contains("\"p-1\"") && reason.contains("405"),
        "{reason}"
    );
    assert_eq!(cut.lock().resumes, 1);
    within("close", client.close()).await;
}

#[tokio::test]
async fn a_404_to_the_resumption_is_session_expired() {
    let (server, _cut) = cutting_server(priming("p-1", 0), |_, _| status(404)).await;
    let client = connected(&server, legacy_options()).await;
    match within("the call", client.call_tool("slow", json!({}))).await {
        Err(ClientError::SessionExpired { method, session_id }) => {
            assert_eq!(
                (method.as_str(), session_id.as_str()),
                ("tools/call", SESSION)
            );
        }
        other => panic!("expected SessionExpired, got {other:?}"),
    }
    assert_eq!(client.state(), State::New);
    within("close", client.close()).await;
}

#[tokio::test]
async fn resumptions_that_bring_no_new_event_give_up_after_three() {
    let (server, cut) = cutting_server(priming("p-1", 0), |_, _| sse_raw("")).await;
    let client = connected(&server, legacy_options()).await;
    let reason = transport_failure(&client).await;
    assert!(reason.contains("3 times in a row"), "{reason}");
    assert_eq!(cut.lock().resumes, 3);
    within("close", client.close()).await;
}

#[tokio::test]
async fn a_retry_longer_than_the_request_timeout_is_an_error_at_once() {
    let (server, cut) = cutting_server(priming("p-1", 3_600_000), |_, _| status(500)).await;
    let client = connected(&server, legacy_options()).await;
    let reason = transport_failure(&client).await;
    assert!(
        reason.contains("longer than the request timeout"),
        "{reason}"
    );
    assert_eq!(cut.lock().resumes, 0);
    within("close", client.close()).await;
}

#[tokio::test]
async fn a_modern_stream_is_not_resumed() {
    let mut server = Fixture::serve(|seen: Seen| async move {
        match seen.rpc() {
            modern::DISCOVER => result(seen.id(), discover_result(&["2026-07-28"])),
            "tools/call" => sse_raw(&priming("m-1", 0)),
            _ => status(405),
        }
    })
    .await;
    let client = connected(&server, modern_options()).await;
    let reason = transport_failure(&client).await;
    assert!(reason.contains("without a response"), "{reason}");
    assert!(server.drain_gets().is_empty(), "2026-07-28 has no GET");
    within("close", client.close()).await;
}

#[tokio::test]
async fn the_get_stream_is_reopened_after_retry_with_last_event_id() {
    let opened = Arc::new(Mutex::new(None::<Instant>));
    let first = Arc::clone(&opened);
    let mut server = Fixture::serve(move |seen: Seen| {
        let first = Arc::clone(&first);
        async move {
            if seen.method == Method::GET {
                if seen.header("last-event-id").is_some() {
                    return status(405);
                }
                *first.lock() = Some(Instant::now());
                let note = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
                return sse_raw(&(priming("g-1", 250) + &event("g-2", &note)));
            }
            match seen.rpc() {
                "initialize" => with_session(result(seen.id(), init_result("2025-11-25")), SESSION),
                _ => status(202),
            }
        }
    })
    .await;
    let client = Client::connect_http(server.url.as_str(), legacy_options()).unwrap();
    let mut notifications = Box::pin(client.notifications());
    within("connect", client.connect()).await.unwrap();
    let note = within("the GET notification", notifications.next()).await;
    assert_eq!(note.unwrap().method, "notifications/tools/list_changed");
    let listen = server.next_get().await;
    assert_eq!(listen.header("last-event-id"), None);
    let reopened = server.next_get().await;
    let gap = opened.lock().unwrap().elapsed();
    assert_eq!(reopened.header("last-event-id"), Some("g-2"));
    assert_eq!(reopened.header("mcp-session-id"), Some(SESSION));
    assert!(
        gap >= Duration::from_millis(250),
        "reopened {gap:?} after the first"
    );
    within("close", client.close()).await;
}
