//! Elicitation (`client/elicitation.mdx`): the capability is declared only when a handler is
//! set; `elicitation/create` is answered by the handler, in a task of its own, with the
//! requested schema's defaults for the fields it left out; URL mode and malformed requests
//! are -32602; without a handler, -32601. Over stdio (a scripted fake server on in-memory
//! pipes) and over Streamable HTTP (the request arrives on a POST's SSE stream, the answer is
//! a POST in the session).
#![allow(clippy::unwrap_used)]

mod common;
mod http_fixture;

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::http::Method;
use axum::response::Response;
use mcp_client::elicitation::{ElicitRequest, ElicitResponse};
use mcp_client::protocol::mcp::ContentBlock;
use mcp_client::{Client, ClientOptions, Elicitation};
use parking_lot::Mutex;
use serde_json::{json, Map, Value};
use tokio::sync::{mpsc, oneshot, Notify};

use common::{fake_server, init_result, quick_options, within, Fake};
use http_fixture::{result, status, with_session, Fixture, Seen};

fn schema() -> Value {
    json!({"type": "object", "properties": {
        "name": {"type": "string", "default": "John Doe"},
        "age": {"type": "integer", "default": 30},
        "score": {"type": "number", "default": 95.5},
        "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
        "verified": {"type": "boolean", "default": true},
        "nickname": {"type": "string"}
    }, "required": []})
}

fn elicit(id: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "elicitation/create", "params": params})
}

fn form(message: &str) -> Value {
    json!({"message": message, "requestedSchema": schema()})
}

/// The answer to [`schema`] when the user typed only a name.
fn ada_with_defaults() -> Value {
    json!({"action": "accept", "content": {
        "name": "Ada", "age": 30, "score": 95.5, "status": "active", "verified": true
    }})
}

/// A handler that accepts with `name: Ada` and reports each request it got.
fn accepting_ada(seen: mpsc::UnboundedSender<ElicitRequest>) -> Elicitation {
    Elicitation::new(move |request| {
        let _ = seen.send(request);
        async {
            let mut content = Map::new();
            content.insert("name".into(), json!("Ada"));
            ElicitResponse::accept(content)
        }
    })
}

fn with_elicitation(elicitation: Elicitation) -> ClientOptions {
    ClientOptions {
        elicitation: Some(elicitation),
        ..quick_options()
    }
}

/// Connects through the legacy handshake and returns the capabilities `initialize` declared.
async fn connect(client: &Client, fake: &mut Fake) -> Value {
    within("handshake", async {
        let server = async {
            let probe = fake.expect_request("server/discover").await;
            fake.reply_error(&probe["id"], -32601, "Method not found")
                .await;
            let init = fake.expect_request("initialize").await;
            fake.reply(&init["id"], init_result("2025-11-25")).await;
            fake.recv().await; // notifications/initialized
            init["params"]["capabilities"].clone()
        };
        let (connected, capabilities) = tokio::join!(client.connect(), server);
        connected.unwrap();
        capabilities
    })
    .await
}

#[tokio::test]
async fn a_handler_declares_elicitation_and_accepted_answers_get_the_defaults() {
    let (seen_tx, mut seen) = mpsc::unbounded_channel();
    let (client, mut fake) = fake_server(with_elicitation(accepting_ada(seen_tx)));
    let capabilities = connect(&client, &mut fake).await;
    assert_eq!(capabilities, json!({"elicitation": {"form": {}}}));
    fake.send(elicit("e-1", form("who are you?"))).await;
    assert_eq!(
        fake.recv().await,
        json!({"jsonrpc": "2.0", "id": "e-1", "result": ada_with_defaults()})
    );
    let request = seen.recv().await.unwrap();
    assert_eq!(request.message, "who are you?");
    assert_eq!(request.requested_schema, schema());
    // mode "form" is form mode too.
    let mut params = form("again");
    params["mode"] = json!("form");
    fake.send(elicit("e-2", params)).await;
    assert_eq!(fake.recv().await["result"], ada_with_defaults());
    within("close", client.close()).await;
}

#[tokio::test]
async fn url_mode_and_malformed_requests_are_invalid_params() {
    let (seen_tx, mut seen) = mpsc::unbounded_channel();
    let (client, mut fake) = fake_server(with_elicitation(accepting_ada(seen_tx)));
    connect(&client, &mut fake).await;
    let url = json!({"mode": "url", "message": "sign in", "url": "https://example.com", "elicitationId": "x"});
    for (id, params) in [
        ("u", url),
        ("m", json!({"requestedSchema": schema()})),
        ("s", json!({"message": "m", "requestedSchema": "no"})),
    ] {
        fake.send(elicit(id, params)).await;
        let reply = fake.recv().await;
        assert_eq!(reply["id"], id, "{reply}");
        assert_eq!(reply["error"]["code"], -32602, "{reply}");
    }
    within("close", client.close()).await;
    assert!(seen.try_recv().is_err(), "the handler saw none of them");
}

#[tokio::test]
async fn without_a_handler_nothing_is_declared_and_elicitation_is_method_not_found() {
    let (client, mut fake) = fake_server(quick_options());
    assert_eq!(connect(&client, &mut fake).await, json!({}));
    fake.send(elicit("e-1", form("who?"))).await;
    let reply = fake.recv().await;
    assert_eq!(reply["id"], "e-1");
    assert_eq!(reply["error"]["code"], -32601, "{reply}");
    within("close", client.close()).await;
}

#[tokio::test]
async fn a_handler_waiting_for_the_user_holds_up_nothing_else() {
    let release = Arc::new(Notify::new());
    let gate = Arc::clone(&release);
    let elicitation = Elicitation::new(move |_| {
        let gate = Arc::clone(&gate);
        async move {
            gate.notified().await;
            ElicitResponse::decline()
        }
    });
    let (client, mut fake) = fake_server(with_elicitation(elicitation));
    connect(&client, &mut fake).await;
    fake.send(elicit("e-1", form("take your time"))).await;
    // Meanwhile a ping is answered and a call completes.
    fake.send(json!({"jsonrpc": "2.0", "id": "p", "method": "ping"}))
        .await;
    assert_eq!(
        fake.recv().await,
        json!({"jsonrpc": "2.0", "id": "p", "result": {}})
    );
    let call = client.call_tool("echo", json!({}));
    let server = async {
        let request = fake.expect_request("tools/call").await;
        fake.reply(&request["id"], json!({"content": []})).await;
    };
    let (called, ()) = within("a call", async { tokio::join!(call, server) }).await;
    assert_eq!(called.unwrap().content, Vec::<ContentBlock>::new());
    release.notify_one();
    assert_eq!(
        fake.recv().await,
        json!({"jsonrpc": "2.0", "id": "e-1", "result": {"action": "decline"}})
    );
    within("close", client.close()).await;
}

/// Tells its channel when dropped.
struct DropSignal(Option<oneshot::Sender<()>>);

impl Drop for DropSignal {
    fn drop(&mut self) {
        if let Some(tx) = self.0.take() {
            let _ = tx.send(());
        }
    }
}

#[tokio::test]
async fn a_handler_still_waiting_when_the_connection_closes_is_dropped() {
    let (dropped_tx, dropped) = oneshot::channel();
    let (started_tx, started) = oneshot::channel();
    let signals = Arc::new(Mutex::new(Some((dropped_tx, started_tx))));
    let elicitation = Elicitation::new(move |_| {
        let (dropped_tx, started_tx) = signals.lock().take().unwrap();
        async move {
            let _signal = DropSignal(Some(dropped_tx));
            let _ = started_tx.send(());
            std::future::pending::<ElicitResponse>().await
        }
    });
    let (client, mut fake) = fake_server(with_elicitation(elicitation));
    connect(&client, &mut fake).await;
    fake.send(elicit("e-1", form("never answered"))).await;
    within("the handler to start", started).await.unwrap();
    fake.close_output();
    within("close", client.close()).await;
    within("the handler to be dropped", dropped).await.unwrap();
}

/// An SSE body the test writes event by event.
fn streamed(rx: mpsc::UnboundedReceiver<Value>) -> Response {
    let events = futures::stream::unfold(rx, |mut rx| async move {
        let message = rx.recv().await?;
        let event = format!("event: message\ndata: {message}\n\n");
        Some((Ok::<_, std::convert::Infallible>(Bytes::from(event)), rx))
    });
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(Body::from_stream(events))
        .unwrap()
}

/// The id of the call whose stream is open, and the sender that writes to it.
type OpenCall = (Value, mpsc::UnboundedSender<Value>);

#[tokio::test]
async fn over_http_the_request_comes_on_the_call_stream_and_the_answer_is_posted() {
    // The call's stream stays open until the client's answer to e-1 is posted.
    let stream: Arc<Mutex<Option<OpenCall>>> = Arc::default();
    let state = Arc::clone(&stream);
    let mut server = Fixture::serve(move |seen: Seen| {
        let state = Arc::clone(&state);
        async move {
            if seen.method == Method::GET {
                return status(405);
            }
            match seen.rpc() {
                "initialize" => with_session(result(seen.id(), init_result("2025-11-25")), "s-7"),
                "tools/call" => {
                    let (tx, rx) = mpsc::unbounded_channel();
                    tx.send(elicit("e-1", form("over HTTP"))).unwrap();
                    *state.lock() = Some((seen.id(), tx));
                    streamed(rx)
                }
                "" if seen.id() == "e-1" => {
                    let (call_id, tx) = state.lock().take().unwrap();
                    let text = json!({"type": "text", "text": "thanks"});
                    let done =
                        json!({"jsonrpc": "2.0", "id": call_id, "result": {"content": [text]}});
                    tx.send(done).unwrap();
                    status(202)
                }
                _ => status(202),
            }
        }
    })
    .await;
    let (seen_tx, _seen) = mpsc::unbounded_channel();
    let options = ClientOptions {
        era: mcp_client::EraChoice::Legacy,
        ..with_elicitation(accepting_ada(seen_tx))
    };
    let client = Client::connect_http(server.url.as_str(), options).unwrap();
    within("connect", client.connect()).await.unwrap();
    let init = server.expect("initialize").await;
    assert_eq!(
        init.body["params"]["capabilities"],
        json!({"elicitation": {"form": {}}})
    );
    server.expect("notifications/initialized").await;
    let called = within("the call", client.call_tool("ask", json!({}))).await;
    assert_eq!(
        called.unwrap().content,
        vec![ContentBlock::Text {
            text: "thanks".into()
        }]
    );
    server.expect("tools/call").await;
    let answer = server.next().await;
    assert_eq!(answer.method, Method::POST);
    assert_eq!(
        answer.body,
        json!({"jsonrpc": "2.0", "id": "e-1", "result": ada_with_defaults()})
    );
    assert_eq!(answer.header("mcp-session-id"), Some("s-7"));
    within("close", client.close()).await;
}
