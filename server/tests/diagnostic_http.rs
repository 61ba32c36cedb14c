//! `mcp-echo-server --http --diagnostic`, the real binary on a free loopback port: what the
//! diagnostic tools send travels on the POST's SSE stream (progress, a server request whose
//! answer comes on another POST, a list change), and a 2026-07-28 call asks through an
//! `input_required` result even when the client accepts only JSON.
#![allow(clippy::unwrap_used)]

use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use mcp_protocol::http::SseReader;
use serde_json::{json, Value};
use tokio::net::TcpStream;

mod support;

use support::Server;

/// Only a hang guard: every wait is for a message the server sends at once.
const HANG: Duration = Duration::from_secs(30);
const BOTH: &str = "application/json, text/event-stream";

/// One keep-alive HTTP/1.1 connection.
struct Client {
    sender: SendRequest<Full<Bytes>>,
}

impl Client {
    async fn connect(addr: SocketAddr) -> Client {
        let stream = TcpStream::connect(addr).await.unwrap();
        let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .unwrap();
        tokio::spawn(connection);
        Client { sender }
    }

    /// POSTs `message`; the response with its body still to read.
    async fn post(
        &mut self,
        headers: &[(&str, &str)],
        message: &Value,
    ) -> http::Response<Incoming> {
        let mut request = Request::builder()
            .method(Method::POST)
            .uri("/mcp")
            .header("host", "127.0.0.1")
            .header("content-type", "application/json");
        if !headers.iter().any(|(k, _)| *k == "accept") {
            request = request.header("accept", BOTH);
        }
        for (k, v) in headers {
            request = request.header(*k, *v);
        }
        let request = request
            .body(Full::new(Bytes::from(message.to_string())))
            .unwrap();
        tokio::time::timeout(HANG, self.sender.send_request(request))
            .await
            .expect("no reply")
            .unwrap()
    }

    /// A legacy session declaring `capabilities`: its id.
    async fn handshake(&mut self, capabilities: Value) -> String {
        let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
            "protocolVersion":"2025-11-25","capabilities":capabilities,
            "clientInfo":{"name":"diagnostic-http-test","version":"1"}}});
        let reply = self.post(&[], &init).await;
        assert_eq!(reply.status(), StatusCode::OK);
        let session = reply.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_owned();
        let result = json_body(reply).await;
        assert_eq!(
            result["result"]["capabilities"],
            json!({"logging": {}, "tools": {"listChanged": true}})
        );
        let done = self
            .post(
                &[("mcp-session-id", &session)],
                &json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
            )
            .await;
        assert_eq!(done.status(), StatusCode::ACCEPTED);
        session
    }
}

async fn json_body(response: http::Response<Incoming>) -> Value {
    let body = response.into_body().collect().await.unwrap().to_bytes();
    serde_json::from_slice(&body).unwrap()
}

/// An SSE response body read event by event.
struct Events {
    body: Incoming,
    reader: SseReader,
    ready: std::collections::VecDeque<Value>,
}

impl Events {
    fn of(response: http::Response<Incoming>) -> Events {
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(response.headers()["content-type"], "text/event-stream");
        Events {
            body: response.into_body(),
            reader: SseReader::new(1 << 20),
            ready: Default::default(),
        }
    }

    /// The next event's data as JSON; `None` once the stream ended.
    async fn next(&mut self) -> Option<Value> {
        loop {
            if let Some(event) = self.ready.pop_front() {
                return Some(event);
            }
            let frame = tokio::time::timeout(HANG, self.body.frame())
                .await
                .expect("no event");
            let Some(frame) = frame else {
                assert!(!self.reader.in_event(), "the stream ended inside an event");
                return None;
            };
            if let Ok(data) = frame.unwrap().into_data() {
                let mut events = Vec::new();
                self.reader.feed(&data, &mut events).unwrap();
                for e in events {
                    self.ready.push_back(serde_json::from_str(&e.data).unwrap());
                }
            }
        }
    }

    async fn all(mut self) -> Vec<Value> {
        let mut all = Vec::new();
        while let Some(event) = self.next().await {
            all.push(event);
        }
        all
    }
}

fn call(id: i64, tool: &str, arguments: Value, meta: Value) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
        "params":{"name":tool,"arguments":arguments,"_meta":meta}})
}

#[tokio::test]
async fn diag_progress_streams_its_notifications_before_the_result() {
    let server = Server::start(&["--diagnostic"]).await;
    let mut c = Client::connect(server.addr).await;
    let session = c.handshake(json!({})).await;
    let sid = [("mcp-session-id", session.as_str())];
    let args = json!({"steps": 2, "delay_ms": 0});
    let events = Events::of(
        c.post(
            &sid,
            &call(1, "diag_progress", args, json!({"progressToken": "h"})),
        )
        .await,
    )
    .all()
    .await;
    assert_eq!(events.len(), 3, "{events:#?}");
    for (i, event) in events[..2].iter().enumerate() {
        assert_eq!(event["method"], "notifications/progress");
        assert_eq!(event["params"]["progressToken"], "h");
        assert_eq!(event["params"]["progress"], i + 1);
        assert_eq!(event["params"]["total"], 2);
    }
    assert_eq!(events[2]["id"], 1);
    assert!(events[2]["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .starts_with("Sent 2 progress notifications"));
}

#[tokio::test]
async fn diag_sampling_sends_its_request_on_the_post_stream_and_gets_the_answer() {
    let server = Server::start(&["--diagnostic"]).await;
    let mut c = Client::connect(server.addr).await;
    let session = c.handshake(json!({"sampling": {}})).await;
    let sid = [("mcp-session-id", session.as_str())];
    let mut events = Events::of(
        c.post(&sid, &call(1, "diag_sampling", json!({}), json!({})))
            .await,
    );
    let request = events.next().await.unwrap();
    assert_eq!(request["method"], "sampling/createMessage");
    assert_eq!(request["params"]["maxTokens"], 100);

    // The answer goes on another connection while the stream waits.
    let mut other = Client::connect(server.addr).await;
    let answer = json!({"role":"assistant","content":{"type":"text","text":"hello"},"model":"m"});
    let posted = other
        .post(
            &sid,
            &json!({"jsonrpc":"2.0","id":request["id"],"result":answer}),
        )
        .await;
    assert_eq!(posted.status(), StatusCode::ACCEPTED);

    let result = events.next().await.unwrap();
    assert_eq!(result["id"], 1);
    assert_eq!(
        result["result"]["content"][0]["text"],
        format!("The client answered sampling/createMessage with: {answer}")
    );
    assert_eq!(events.next().await, None);
}

#[tokio::test]
async fn diag_tool_list_changed_notifies_on_the_post_stream() {
    let server = Server::start(&["--diagnostic"]).await;
    let mut c = Client::connect(server.addr).await;
    let session = c.handshake(json!({})).await;
    let sid = [("mcp-session-id", session.as_str())];
    let events = Events::of(
        c.post(
            &sid,
            &call(1, "diag_tool_list_changed", json!({}), json!({})),
        )
        .await,
    )
    .all()
    .await;
    assert_eq!(
        events[0],
        json!({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})
    );
    assert_eq!(events[1]["id"], 1);
    assert_eq!(events.len(), 2);

    // The change is this session's: another session does not offer diag_extra.
    let list = json!({"jsonrpc":"2.0","id":2,"method":"tools/list"});
    let names = |list: Value| -> Vec<String> {
        list["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let mine = names(json_body(c.post(&sid, &list).await).await);
    assert!(mine.contains(&"diag_extra".to_owned()), "{mine:?}");
    let mut b = Client::connect(server.addr).await;
    let other = b.handshake(json!({})).await;
    let theirs = names(json_body(b.post(&[("mcp-session-id", &other)], &list).await).await);
    assert!(!theirs.contains(&"diag_extra".to_owned()), "{theirs:?}");
}

#[tokio::test]
async fn a_modern_call_asks_through_input_required_even_with_json_only() {
    let server = Server::start(&["--diagnostic"]).await;
    let mut c = Client::connect(server.addr).await;
    let meta = json!({"io.modelcontextprotocol/protocolVersion":"2026-07-28",
        "io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},
        "io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}});
    let headers = [
        ("accept", "application/json"),
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "diag_elicitation"),
    ];
    let first = c
        .post(
            &headers,
            &call(1, "diag_elicitation", json!({}), meta.clone()),
        )
        .await;
    assert_eq!(first.status(), StatusCode::OK);
    let first = json_body(first).await;
    assert_eq!(first["result"]["resultType"], "input_required");
    let request = &first["result"]["inputRequests"]["elicitation/create"];
    assert_eq!(request["method"], "elicitation/create");

    // With SSE accepted too: one event, the same result, and the stream ends.
    let mut both = headers;
    both[0] = ("accept", BOTH);
    let streamed = Events::of(
        c.post(&both, &call(3, "diag_elicitation", json!({}), meta.clone()))
            .await,
    )
    .all()
    .await;
    assert_eq!(streamed.len(), 1, "{streamed:#?}");
    assert_eq!(streamed[0]["id"], 3);
    assert_eq!(
        streamed[0]["result"]["inputRequests"],
        first["result"]["inputRequests"]
    );

    let answer = json!({"action":"accept","content":{"name":"octocat"}});
    let mut retry = call(2, "diag_elicitation", json!({}), meta);
    retry["params"]["inputResponses"] = json!({"elicitation/create": answer});
    let done = json_body(c.post(&headers, &retry).await).await;
    assert_eq!(done["id"], 2);
    assert_eq!(done["result"]["resultType"], "complete");
    assert_eq!(
        done["result"]["content"][0]["text"],
        format!("The client answered elicitation/create with: {answer}")
    );
}

#[tokio::test]
async fn a_json_only_post_cannot_carry_progress_and_the_result_says_so() {
    let server = Server::start(&["--diagnostic"]).await;
    let mut c = Client::connect(server.addr).await;
    let session = c.handshake(json!({})).await;
    let headers = [
        ("mcp-session-id", session.as_str()),
        ("accept", "application/json"),
    ];
    let args = json!({"steps": 2, "delay_ms": 0});
    let reply = c
        .post(
            &headers,
            &call(1, "diag_progress", args, json!({"progressToken": "j"})),
        )
        .await;
    assert_eq!(reply.headers()["content-type"], "application/json");
    let reply = json_body(reply).await;
    assert_eq!(reply["id"], 1);
    assert_eq!(reply["result"]["isError"], true);
    let text = reply["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("Progress notification 1 of 2 could not be sent: the client accepts only a JSON response"),
        "{text}"
    );
}

// 2026-07-28 `subscriptions/listen` over Streamable HTTP (`basic/patterns/subscriptions.mdx`).

fn modern_meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion":"2026-07-28",
        "io.modelcontextprotocol/clientCapabilities":{},
        "io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}})
}

fn listen(id: i64, filter: Value) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"subscriptions/listen",
        "params":{"notifications":filter,"_meta":modern_meta()}})
}

/// The mirrored headers of a 2026-07-28 POST of `method` (and `name`, for a tool call).
fn modern_headers<'a>(method: &'a str, name: Option<&'a str>) -> Vec<(&'a str, &'a str)> {
    let mut headers = vec![
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", method),
    ];
    if let Some(name) = name {
        headers.push(("mcp-name", name));
    }
    headers
}

/// A listen stream on a connection of its own, past its acknowledgment (checked).
async fn open_listen(addr: SocketAddr, id: i64) -> (Client, Events) {
    let mut c = Client::connect(addr).await;
    let headers = modern_headers("subscriptions/listen", None);
    let filter = json!({"toolsListChanged": true, "promptsListChanged": true});
    let mut events = Events::of(c.post(&headers, &listen(id, filter)).await);
    assert_eq!(
        events.next().await,
        Some(
            json!({"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged",
            "params":{"notifications":{"toolsListChanged":true},
                      "_meta":{"io.modelcontextprotocol/subscriptionId":id}}})
        )
    );
    (c, events)
}

/// A 2026-07-28 `diag_tool_list_changed` call (JSON only): its result's text.
async fn modern_toggle(c: &mut Client, id: i64) -> String {
    let mut headers = modern_headers("tools/call", Some("diag_tool_list_changed"));
    headers.push(("accept", "application/json"));
    let reply = c
        .post(
            &headers,
            &call(id, "diag_tool_list_changed", json!({}), modern_meta()),
        )
        .await;
    assert_eq!(reply.status(), StatusCode::OK);
    let reply = json_body(reply).await;
    assert_eq!(reply["id"], id);
    reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// The tool names a 2026-07-28 `tools/list` gets.
async fn modern_tools(c: &mut Client, id: i64) -> Vec<String> {
    let list =
        json!({"jsonrpc":"2.0","id":id,"method":"tools/list","params":{"_meta":modern_meta()}});
    let reply = json_body(c.post(&modern_headers("tools/list", None), &list).await).await;
    reply["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

/// `notifications/cancelled` for `id`, POSTed on its own: 202.
async fn cancel(c: &mut Client, id: i64) {
    let cancel =
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":id}});
    let posted = c
        .post(&modern_headers("notifications/cancelled", None), &cancel)
        .await;
    assert_eq!(posted.status(), StatusCode::ACCEPTED);
}

#[tokio::test]
async fn a_modern_list_change_reaches_every_listen_stream_that_asked() {
    let server = Server::start(&["--diagnostic"]).await;
    let (_a, mut tools_stream) = open_listen(server.addr, 7).await;
    // Another client's stream with the same id, and one that did not ask for tools.
    let (_b, mut same_id) = open_listen(server.addr, 7).await;
    let mut c = Client::connect(server.addr).await;
    let mut quiet = Events::of(
        c.post(
            &modern_headers("subscriptions/listen", None),
            &listen(8, json!({})),
        )
        .await,
    );
    assert_eq!(
        quiet.next().await.unwrap()["params"]["notifications"],
        json!({})
    );

    let mut d = Client::connect(server.addr).await;
    assert!(!modern_tools(&mut d, 1).await.contains(&"diag_extra".into()));
    let text = modern_toggle(&mut d, 2).await;
    assert!(
        text.starts_with("diag_tool_list_changed added the tool diag_extra and sent"),
        "{text}"
    );
    let changed = json!({"jsonrpc":"2.0","method":"notifications/tools/list_changed",
        "params":{"_meta":{"io.modelcontextprotocol/subscriptionId":7}}});
    assert_eq!(tools_stream.next().await, Some(changed.clone()));
    assert_eq!(same_id.next().await, Some(changed.clone()));
    // Server-wide: another client's request lists it too.
    let mut e = Client::connect(server.addr).await;
    assert!(modern_tools(&mut e, 3).await.contains(&"diag_extra".into()));

    let text = modern_toggle(&mut e, 4).await;
    assert!(text.starts_with("diag_tool_list_changed removed the tool diag_extra and sent"));
    assert_eq!(tools_stream.next().await, Some(changed.clone()));
    assert_eq!(same_id.next().await, Some(changed));
    assert!(!modern_tools(&mut d, 5).await.contains(&"diag_extra".into()));

    // A legacy session's list is still its own.
    let mut f = Client::connect(server.addr).await;
    let session = f.handshake(json!({})).await;
    let legacy = json!({"jsonrpc":"2.0","id":6,"method":"tools/list"});
    let listed = json_body(f.post(&[("mcp-session-id", &session)], &legacy).await).await;
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"diag_tool_list_changed") && !names.contains(&"diag_extra"));

    // Cancelled: the stream that did not ask ends with no response.
    cancel(&mut d, 8).await;
    assert_eq!(quiet.next().await, None);
}

#[tokio::test]
async fn a_cancelled_listen_stream_ends_with_no_response() {
    let server = Server::start(&["--diagnostic"]).await;
    let (_a, mut stream) = open_listen(server.addr, 1).await;
    let mut c = Client::connect(server.addr).await;
    cancel(&mut c, 1).await;
    assert_eq!(stream.next().await, None);
    // Nothing is left to tell.
    let text = modern_toggle(&mut c, 2).await;
    assert!(
        text.contains("notifications/tools/list_changed was not sent: 2026-07-28 sends list changes only on subscriptions/listen streams"),
        "{text}"
    );
}

#[tokio::test]
async fn listen_streams_are_bounded_server_wide() {
    let mut server = Server::start(&["--diagnostic", "--log-level", "mcp_echo_server=debug"]).await;
    let mut open = Vec::new();
    for id in 0..64 {
        open.push(open_listen(server.addr, id).await);
    }
    let mut c = Client::connect(server.addr).await;
    let headers = modern_headers("subscriptions/listen", None);
    let refused = json_body(c.post(&headers, &listen(64, json!({}))).await).await;
    assert_eq!(refused["id"], 64);
    assert_eq!(refused["error"]["code"], -32602);
    assert!(refused["error"]["message"]
        .as_str()
        .unwrap()
        .contains("at most 64 subscriptions may be open on this server"));

    // A cancelled stream ends and frees its place at once.
    cancel(&mut c, 0).await;
    let (_c0, mut cancelled) = open.swap_remove(0);
    assert_eq!(cancelled.next().await, None);
    open.push(open_listen(server.addr, 65).await);
    // So does one whose client goes away, once the server sees it go.
    drop(open.swap_remove(1));
    server.wait_log("subscription closed by its client").await;
    open.push(open_listen(server.addr, 66).await);
    let again = json_body(c.post(&headers, &listen(67, json!({}))).await).await;
    assert_eq!(again["error"]["code"], -32602);
}

#[tokio::test]
async fn shutdown_ends_listen_streams_with_their_completion_response() {
    let server = Server::start(&["--diagnostic"]).await;
    let (_a, mut stream) = open_listen(server.addr, 9).await;
    server.signal(nix::sys::signal::Signal::SIGTERM);
    let end = stream.next().await.unwrap();
    assert_eq!(end["id"], 9);
    assert_eq!(end["result"]["resultType"], "complete");
    assert_eq!(
        end["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        9
    );
    assert_eq!(stream.next().await, None);
    assert!(server.exit().await.success());
}

#[tokio::test]
async fn a_listen_that_cannot_take_a_stream_is_refused_and_discover_offers_list_changes() {
    let server = Server::start(&["--diagnostic"]).await;
    let mut c = Client::connect(server.addr).await;
    let mut headers = modern_headers("subscriptions/listen", None);
    headers.push(("accept", "application/json"));
    let reply = c
        .post(&headers, &listen(1, json!({"toolsListChanged": true})))
        .await;
    assert_eq!(reply.status(), StatusCode::NOT_ACCEPTABLE);
    let reply = json_body(reply).await;
    assert_eq!(reply["id"], 1);
    assert_eq!(reply["error"]["code"], -32600);

    let discover = json!({"jsonrpc":"2.0","id":2,"method":"server/discover",
        "params":{"_meta":modern_meta()}});
    let found = json_body(
        c.post(&modern_headers("server/discover", None), &discover)
            .await,
    )
    .await;
    assert_eq!(
        found["result"]["capabilities"]["tools"],
        json!({"listChanged": true})
    );
}

#[tokio::test]
async fn without_diagnostic_listen_is_method_not_found() {
    let server = Server::start(&[]).await;
    let mut c = Client::connect(server.addr).await;
    let reply = c
        .post(
            &modern_headers("subscriptions/listen", None),
            &listen(1, json!({"toolsListChanged": true})),
        )
        .await;
    assert_eq!(reply.status(), StatusCode::NOT_FOUND);
    let reply = json_body(reply).await;
    assert_eq!(reply["id"], 1);
    assert_eq!(reply["error"]["code"], -32601);
}
