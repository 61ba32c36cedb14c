//! Streamable HTTP (`--http`), against the real binary on a free loopback port: both eras
//! on one endpoint, exact statuses, session handling, SSE bodies, mirrored headers, the
//! security bounds (Origin, bodies, heads, slow clients, session cap) and SIGTERM drain.
//!
//! Every server binds `127.0.0.1:0` and its port is read from the documented stderr line
//! `listening on http://127.0.0.1:PORT/mcp`. Waits are for events (a log line, a reply, a
//! closed connection); the timeouts only turn a hang into a failure.
#![allow(clippy::unwrap_used)]

use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use mcp_protocol::http::SseReader;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

mod support;

use support::{Server, BIN};

/// Only a hang guard: no test expects anything to take this long.
const HANG: Duration = Duration::from_secs(30);
const BOTH: &str = "application/json, text/event-stream";

impl Server {
    async fn client(&self) -> Client {
        Client::connect(self.addr).await
    }
}

struct Reply {
    status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
}

impl Reply {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", String::from_utf8_lossy(&self.body)))
    }

    fn content_type(&self) -> &str {
        self.headers
            .get("content-type")
            .map_or("", |v| v.to_str().unwrap())
    }

    /// The `data:` of every SSE event, each parsed as JSON.
    fn events(&self) -> Vec<Value> {
        assert_eq!(self.content_type(), "text/event-stream");
        let mut reader = SseReader::new(1 << 20);
        let mut events = Vec::new();
        reader.feed(&self.body, &mut events).unwrap();
        assert!(!reader.in_event(), "the stream ended inside an event");
        events
            .iter()
            .map(|e| serde_json::from_str(&e.data).unwrap())
            .collect()
    }

    fn session(&self) -> String {
        self.headers
            .get("mcp-session-id")
            .expect("an Mcp-Session-Id header")
            .to_str()
            .unwrap()
            .to_owned()
    }
}

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

    async fn send(&mut self, method: Method, headers: &[(&str, &str)], body: &[u8]) -> Reply {
        let mut request = Request::builder()
            .method(method)
            .uri("/mcp")
            .header("host", "127.0.0.1");
        for (k, v) in headers {
            request = request.header(*k, *v);
        }
        let request = request
            .body(Full::new(Bytes::copy_from_slice(body)))
            .unwrap();
        let response = tokio::time::timeout(HANG, self.sender.send_request(request))
            .await
            .expect("no reply")
            .unwrap();
        let (parts, body) = response.into_parts();
        let body = body.collect().await.unwrap().to_bytes();
        Reply {
            status: parts.status,
            headers: parts.headers,
            body,
        }
    }

    /// POSTs a JSON message with `Content-Type: application/json`, `Accept` listing both, and
    /// the extra headers.
    async fn post(&mut self, headers: &[(&str, &str)], message: &Value) -> Reply {
        let mut all = vec![("content-type", "application/json"), ("accept", BOTH)];
        for h in headers {
            all.retain(|(k, _)| !k.eq_ignore_ascii_case(h.0));
            all.push(*h);
        }
        self.send(Method::POST, &all, message.to_string().as_bytes())
            .await
    }

    /// `initialize` (at `version`) and `notifications/initialized`: the session id.
    async fn handshake(&mut self, version: &str) -> String {
        let reply = self.post(&[], &initialize(1, version)).await;
        assert_eq!(reply.status, StatusCode::OK);
        let session = reply.session();
        let done = self
            .post(
                &[("mcp-session-id", &session)],
                &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            )
            .await;
        assert_eq!(done.status, StatusCode::ACCEPTED);
        session
    }
}

fn initialize(id: i64, version: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {},
        "clientInfo": {"name": "http-test", "version": "1"}}})
}

fn echo(id: i64, text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "echo", "arguments": {"text": text}}})
}

fn modern(id: i64, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "http-test", "version": "1"}
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn error_code(reply: &Reply) -> i64 {
    reply.json()["error"]["code"]
        .as_i64()
        .expect("a JSON-RPC error")
}

#[tokio::test]
async fn a_legacy_session_from_initialize_to_delete() {
    let server = Server::start(&[]).await;
    let mut c = server.client().await;

    let init = c.post(&[], &initialize(1, "2025-11-25")).await;
    assert_eq!(init.status, StatusCode::OK);
    assert_eq!(init.content_type(), "application/json");
    assert_eq!(init.json()["result"]["protocolVersion"], "2025-11-25");
    let session = init.session();
    assert_eq!(session.len(), 32, "128 bits as hex");
    assert!(session.bytes().all(|b| b.is_ascii_hexdigit()));

    // Tools wait for notifications/initialized, as on stdio.
    let early = c.post(&[("mcp-session-id", &session)], &echo(2, "x")).await;
    assert_eq!(early.status, StatusCode::OK);
    assert!(early.json()["error"]["message"]
        .as_str()
        .unwrap()
        .contains("notifications/initialized"));

    let sid = [("mcp-session-id", session.as_str())];
    let note = c
        .post(
            &sid,
            &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        )
        .await;
    assert_eq!(note.status, StatusCode::ACCEPTED);
    assert!(note.body.is_empty());

    let with_version = [
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let reply = c.post(&with_version, &echo(3, "hello")).await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(reply.content_type(), "application/json");
    assert_eq!(reply.json()["id"], 3);
    assert_eq!(reply.json()["result"]["structuredContent"]["text"], "hello");

    // Only SSE accepted: one event, the response, and the stream ends.
    let sse = c
        .post(
            &[
                ("mcp-session-id", &session),
                ("accept", "text/event-stream"),
            ],
            &echo(4, "streamed"),
        )
        .await;
    assert_eq!(sse.status, StatusCode::OK);
    let events = sse.events();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["id"], 4);
    assert_eq!(events[0]["result"]["content"][0]["text"], "streamed");

    // A response sent to the server is accepted and ignored.
    let response = c
        .post(&sid, &json!({"jsonrpc": "2.0", "id": "s1", "result": {}}))
        .await;
    assert_eq!(response.status, StatusCode::ACCEPTED);
    let cancel = c
        .post(
            &sid,
            &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}}),
        )
        .await;
    assert_eq!(cancel.status, StatusCode::ACCEPTED);

    let deleted = c.send(Method::DELETE, &sid, b"").await;
    assert_eq!(deleted.status, StatusCode::NO_CONTENT);
    let after = c.post(&sid, &echo(5, "x")).await;
    assert_eq!(after.status, StatusCode::NOT_FOUND);
    let again = c.send(Method::DELETE, &sid, b"").await;
    assert_eq!(again.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn session_and_version_headers_are_checked() {
    let server = Server::start(&[]).await;
    let mut c = server.client().await;
    let session = c.handshake("2025-06-18").await;

    let missing = c.post(&[], &echo(1, "x")).await;
    assert_eq!(missing.status, StatusCode::BAD_REQUEST);
    assert_eq!(missing.json()["id"], 1);
    let unknown = c
        .post(
            &[("mcp-session-id", "00000000000000000000000000000000")],
            &echo(2, "x"),
        )
        .await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);

    // Another supported version is accepted (the official conformance suite sends
    // 2025-03-26 on a 2025-11-25 session); the negotiated version still decides.
    let other_version = c
        .post(
            &[
                ("mcp-session-id", &session),
                ("mcp-protocol-version", "2025-11-25"),
            ],
            &echo(3, "x"),
        )
        .await;
    assert_eq!(other_version.status, StatusCode::OK);
    assert!(other_version.json()["result"]["structuredContent"].is_object());
    let modern_header = c
        .post(
            &[
                ("mcp-session-id", &session),
                ("mcp-protocol-version", "2026-07-28"),
            ],
            &echo(31, "x"),
        )
        .await;
    assert_eq!(modern_header.status, StatusCode::BAD_REQUEST);
    let invalid_version = c
        .post(
            &[
                ("mcp-session-id", &session),
                ("mcp-protocol-version", "1999-01-01"),
            ],
            &echo(4, "x"),
        )
        .await;
    assert_eq!(invalid_version.status, StatusCode::BAD_REQUEST);
    let negotiated = c
        .post(
            &[
                ("mcp-session-id", &session),
                ("mcp-protocol-version", "2025-06-18"),
            ],
            &echo(5, "x"),
        )
        .await;
    assert_eq!(negotiated.status, StatusCode::OK);
    assert_eq!(negotiated.json()["result"]["content"][0]["text"], "x");

    // A second initialize on the session is the session's error, as on stdio.
    let twice = c
        .post(
            &[("mcp-session-id", &session)],
            &initialize(6, "2025-06-18"),
        )
        .await;
    assert_eq!(twice.status, StatusCode::OK);
    assert!(twice.json()["error"].is_object());
}

#[tokio::test]
async fn get_and_other_methods() {
    let server = Server::start(&[]).await;
    let mut c = server.client().await;
    let session = c.handshake("2025-11-25").await;

    let get = c
        .send(Method::GET, &[("accept", "text/event-stream")], b"")
        .await;
    assert_eq!(get.status, StatusCode::METHOD_NOT_ALLOWED);
    assert!(get.headers.contains_key("allow"));
    let get_session = c
        .send(
            Method::GET,
            &[
                ("accept", "text/event-stream"),
                ("mcp-session-id", &session),
            ],
            b"",
        )
        .await;
    assert_eq!(get_session.status, StatusCode::METHOD_NOT_ALLOWED);
    let get_unknown = c
        .send(
            Method::GET,
            &[("accept", "text/event-stream"), ("mcp-session-id", "nope")],
            b"",
        )
        .await;
    assert_eq!(get_unknown.status, StatusCode::NOT_FOUND);
    let delete_without = c.send(Method::DELETE, &[], b"").await;
    assert_eq!(delete_without.status, StatusCode::METHOD_NOT_ALLOWED);
    let put = c.send(Method::PUT, &[], b"").await;
    assert_eq!(put.status, StatusCode::METHOD_NOT_ALLOWED);

    let mut elsewhere = Request::builder()
        .method(Method::POST)
        .uri("/other")
        .header("host", "127.0.0.1")
        .header("content-type", "application/json");
    elsewhere = elsewhere.header("accept", BOTH);
    let response = c
        .sender
        .send_request(
            elsewhere
                .body(Full::new(Bytes::from_static(b"{}")))
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn modern_requests_are_stateless_with_mirrored_headers() {
    let server = Server::start(&[]).await;
    let mut c = server.client().await;
    let v = ("mcp-protocol-version", "2026-07-28");

    let discover = c
        .post(
            &[v, ("mcp-method", "server/discover")],
            &modern(1, "server/discover", json!({})),
        )
        .await;
    assert_eq!(discover.status, StatusCode::OK);
    assert!(!discover.headers.contains_key("mcp-session-id"));
    assert_eq!(
        discover.json()["result"]["supportedVersions"][0],
        "2026-07-28"
    );

    let call = modern(
        2,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "hi"}}),
    );
    let ok = c
        .post(
            &[v, ("mcp-method", "tools/call"), ("mcp-name", "echo")],
            &call,
        )
        .await;
    assert_eq!(ok.status, StatusCode::OK);
    assert_eq!(ok.json()["result"]["resultType"], "complete");
    assert_eq!(ok.json()["result"]["content"][0]["text"], "hi");

    // Base64 sentinel form of the name (`streamable-http` §Value Encoding).
    let encoded = c
        .post(
            &[
                v,
                ("mcp-method", "tools/call"),
                ("mcp-name", "=?base64?ZWNobw==?="),
            ],
            &call,
        )
        .await;
    assert_eq!(encoded.status, StatusCode::OK);

    let sse = c
        .post(
            &[
                v,
                ("mcp-method", "tools/call"),
                ("mcp-name", "echo"),
                ("accept", "text/event-stream"),
            ],
            &call,
        )
        .await;
    let events = sse.events();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["id"], 2);

    for (headers, what) in [
        (vec![v, ("mcp-method", "tools/call")], "missing Mcp-Name"),
        (
            vec![v, ("mcp-method", "tools/call"), ("mcp-name", "other")],
            "wrong Mcp-Name",
        ),
        (vec![v, ("mcp-name", "echo")], "missing Mcp-Method"),
        (
            vec![v, ("mcp-method", "tools/list"), ("mcp-name", "echo")],
            "wrong Mcp-Method",
        ),
        (
            vec![("mcp-method", "tools/call"), ("mcp-name", "echo")],
            "missing MCP-Protocol-Version",
        ),
        (
            vec![
                ("mcp-protocol-version", "2025-11-25"),
                ("mcp-method", "tools/call"),
                ("mcp-name", "echo"),
            ],
            "legacy MCP-Protocol-Version",
        ),
    ] {
        let reply = c.post(&headers, &call).await;
        assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{what}");
        assert_eq!(error_code(&reply), -32020, "{what}");
        assert_eq!(reply.json()["id"], 2, "{what}");
    }

    let unknown = c
        .post(
            &[v, ("mcp-method", "nope/nope")],
            &modern(3, "nope/nope", json!({})),
        )
        .await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    assert_eq!(error_code(&unknown), -32601);

    // A session header on a modern request is ignored (2026-07-28 §Backward Compatibility).
    let ignored = c
        .post(
            &[
                v,
                ("mcp-method", "tools/call"),
                ("mcp-name", "echo"),
                ("mcp-session-id", "whatever"),
            ],
            &call,
        )
        .await;
    assert_eq!(ignored.status, StatusCode::OK);

    let get = c.send(Method::GET, &[v], b"").await;
    assert_eq!(get.status, StatusCode::METHOD_NOT_ALLOWED);
    let delete = c.send(Method::DELETE, &[v], b"").await;
    assert_eq!(delete.status, StatusCode::METHOD_NOT_ALLOWED);
}

#[tokio::test]
async fn bad_bodies_and_media_types() {
    let server = Server::start(&["--max-message-bytes", "1024"]).await;
    let mut c = server.client().await;

    let parse = c
        .send(
            Method::POST,
            &[("content-type", "application/json"), ("accept", BOTH)],
            b"{not json",
        )
        .await;
    assert_eq!(parse.status, StatusCode::BAD_REQUEST);
    assert_eq!(error_code(&parse), -32700);
    // The error body "has no id": no `id` member at all, not `"id": null`.
    assert!(parse.json().get("id").is_none(), "{:?}", parse.json());

    let invalid = c.post(&[], &json!({"jsonrpc": "2.0", "id": 7})).await;
    assert_eq!(invalid.status, StatusCode::BAD_REQUEST);
    assert_eq!(error_code(&invalid), -32600);
    assert_eq!(invalid.json()["id"], 7);

    let text = c
        .send(
            Method::POST,
            &[("content-type", "text/plain"), ("accept", BOTH)],
            b"{}",
        )
        .await;
    assert_eq!(text.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let no_type = c.send(Method::POST, &[("accept", BOTH)], b"{}").await;
    assert_eq!(no_type.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);

    let html = c
        .post(&[("accept", "text/html")], &initialize(1, "2025-11-25"))
        .await;
    assert_eq!(html.status, StatusCode::NOT_ACCEPTABLE);
    // No Accept at all accepts anything (RFC 9110): JSON.
    let none = c
        .send(
            Method::POST,
            &[("content-type", "application/json")],
            initialize(2, "2025-11-25").to_string().as_bytes(),
        )
        .await;
    assert_eq!(none.status, StatusCode::OK);
    assert_eq!(none.content_type(), "application/json");

    let big = echo(3, &"x".repeat(2000));
    let declared = c.post(&[], &big).await;
    assert_eq!(declared.status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(error_code(&declared), -32600);
}

/// A chunked body (no Content-Length) is cut off when it grows past the limit.
#[tokio::test]
async fn a_chunked_body_over_the_limit_gets_413() {
    let server = Server::start(&["--max-message-bytes", "1024"]).await;
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    let head = "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAccept: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
    stream.write_all(head.as_bytes()).await.unwrap();
    let chunk = "y".repeat(600);
    for _ in 0..4 {
        let framed = format!("{:x}\r\n{chunk}\r\n", chunk.len());
        if stream.write_all(framed.as_bytes()).await.is_err() {
            break;
        }
    }
    let mut reply = Vec::new();
    let _ = tokio::time::timeout(HANG, stream.read_to_end(&mut reply))
        .await
        .expect("the server neither answered nor closed");
    let reply = String::from_utf8_lossy(&reply);
    assert!(reply.starts_with("HTTP/1.1 413"), "{reply}");
}

#[tokio::test]
async fn origins_are_checked() {
    let server = Server::start(&["--allow-origin", "https://app.example"]).await;
    let mut c = server.client().await;
    for (origin, status) in [
        ("http://evil.example", StatusCode::FORBIDDEN),
        ("http://localhost.evil.example", StatusCode::FORBIDDEN),
        ("null", StatusCode::FORBIDDEN),
        ("http://localhost:5173", StatusCode::OK),
        ("http://127.0.0.1", StatusCode::OK),
        ("http://[::1]:8080", StatusCode::OK),
        ("https://app.example", StatusCode::OK),
    ] {
        let reply = c
            .post(&[("origin", origin)], &initialize(1, "2025-11-25"))
            .await;
        assert_eq!(reply.status, status, "{origin}");
    }
    // Checked on every method, before anything else.
    let get = c
        .send(Method::GET, &[("origin", "http://evil.example")], b"")
        .await;
    assert_eq!(get.status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn batches_only_in_2025_03_26_sessions() {
    let server = Server::start(&[]).await;
    let mut c = server.client().await;
    let old = c.handshake("2025-03-26").await;
    let batch = json!([
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        {"jsonrpc": "2.0", "method": "notifications/whatever"},
        echo(2, "b"),
    ]);
    let reply = c.post(&[("mcp-session-id", &old)], &batch).await;
    assert_eq!(reply.status, StatusCode::OK);
    let replies = reply.json();
    assert_eq!(replies.as_array().unwrap().len(), 2);
    let only_notes = c
        .post(
            &[("mcp-session-id", &old)],
            &json!([{"jsonrpc": "2.0", "method": "notifications/whatever"}]),
        )
        .await;
    assert_eq!(only_notes.status, StatusCode::ACCEPTED);

    let new = c.handshake("2025-11-25").await;
    let refused = c.post(&[("mcp-session-id", &new)], &batch).await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    assert_eq!(error_code(&refused), -32600);
}

/// No lockout: 2000 initializes by one client against a cap of 100 all succeed, each one
/// past the cap evicting the oldest session nothing used since its `initialize`; a session in
/// active use survives the flood, an evicted id gets 404 (so its client re-initializes), and a
/// new client's session works.
#[tokio::test]
async fn thousands_of_initializes_evict_idle_sessions_instead_of_locking_out() {
    let mut server = Server::start(&["--max-sessions", "100"]).await;
    let mut active = server.client().await;
    let kept = active.handshake("2025-11-25").await;
    let mut flooder = server.client().await;
    let mut flood = Vec::new();
    for id in 0..2000 {
        let reply = flooder.post(&[], &initialize(id, "2025-11-25")).await;
        assert_eq!(reply.status, StatusCode::OK, "initialize {id}");
        flood.push(reply.session());
        if id % 500 == 0 {
            // In use now and then during the flood: never the eviction's choice.
            let used = active
                .post(&[("mcp-session-id", &kept)], &echo(id, "still here"))
                .await;
            assert_eq!(used.json()["result"]["content"][0]["text"], "still here");
        }
    }
    server.wait_log("session evicted").await;
    let distinct: std::collections::HashSet<_> = flood.iter().collect();
    assert_eq!(distinct.len(), 2000);

    let used = active
        .post(&[("mcp-session-id", &kept)], &echo(1, "survived"))
        .await;
    assert_eq!(used.status, StatusCode::OK);
    assert_eq!(used.json()["result"]["content"][0]["text"], "survived");
    let evicted = flooder
        .post(&[("mcp-session-id", &flood[0])], &echo(2, "x"))
        .await;
    assert_eq!(evicted.status, StatusCode::NOT_FOUND);
    assert_eq!(error_code(&evicted), -32600);
    // The newest of the flood are still live: 99 of them besides the active session.
    let newest = flooder
        .post(
            &[("mcp-session-id", &flood[1999])],
            &json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}),
        )
        .await;
    assert_eq!(newest.status, StatusCode::OK);

    let mut newcomer = server.client().await;
    let session = newcomer.handshake("2025-06-18").await;
    let works = newcomer
        .post(&[("mcp-session-id", &session)], &echo(4, "welcome"))
        .await;
    assert_eq!(works.json()["result"]["content"][0]["text"], "welcome");

    // Memory stays bounded: a few MiB of sessions, not growth per request.
    let pid = server.child.id().unwrap();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let rss_kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    assert!(rss_kib < 100 * 1024, "VmRSS {rss_kib} KiB");
}

#[tokio::test]
async fn idle_sessions_expire() {
    let mut server = Server::start(&["--session-idle-secs", "0.001", "--log-level", "debug"]).await;
    let mut c = server.client().await;
    let init = c.post(&[], &initialize(1, "2025-11-25")).await;
    let session = init.session();
    server.wait_log("session created").await;
    // Not waiting for an event: letting more than the 1 ms idle limit pass, which the
    // monotonic clock guarantees.
    tokio::time::sleep(Duration::from_millis(20)).await;
    let expired = c.post(&[("mcp-session-id", &session)], &echo(3, "x")).await;
    assert_eq!(expired.status, StatusCode::NOT_FOUND);
}

/// A request head larger than the bound gets 431 (or the connection closed), and the server
/// goes on serving.
#[tokio::test]
async fn a_header_flood_is_refused() {
    let server = Server::start(&[]).await;
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    let mut head = String::from("POST /mcp HTTP/1.1\r\nHost: x\r\n");
    for i in 0..4000 {
        head.push_str(&format!("X-Flood-{i}: {}\r\n", "a".repeat(32)));
    }
    head.push_str("\r\n");
    let _ = stream.write_all(head.as_bytes()).await;
    let mut reply = Vec::new();
    let _ = tokio::time::timeout(HANG, stream.read_to_end(&mut reply))
        .await
        .expect("the connection stayed open");
    let reply = String::from_utf8_lossy(&reply);
    assert!(
        reply.is_empty() || reply.starts_with("HTTP/1.1 431"),
        "{reply}"
    );

    let mut c = server.client().await;
    let ok = c.post(&[], &initialize(1, "2025-11-25")).await;
    assert_eq!(ok.status, StatusCode::OK);
}

/// A client that sends its head a byte at a time is disconnected once the head timeout
/// passes, however steadily it trickles.
#[tokio::test]
async fn a_slowloris_client_is_disconnected() {
    let server = Server::start(&["--http-header-timeout", "0.5"]).await;
    let stream = TcpStream::connect(server.addr).await.unwrap();
    let (mut read, mut write) = stream.into_split();
    let trickle = async move {
        let head = b"POST /mcp HTTP/1.1\r\nHost: x\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
        let mut tick = tokio::time::interval(Duration::from_millis(50));
        for byte in head.iter().cycle() {
            tick.tick().await;
            if write.write_all(&[*byte]).await.is_err() {
                break;
            }
        }
        std::future::pending::<()>().await;
    };
    let closed = async {
        let mut buf = Vec::new();
        let _ = read.read_to_end(&mut buf).await;
        buf
    };
    let reply = tokio::time::timeout(HANG, async {
        tokio::select! {
            buf = closed => buf,
            () = trickle => unreachable!(),
        }
    })
    .await
    .expect("a slow client was never disconnected");
    let reply = String::from_utf8_lossy(&reply);
    assert!(
        reply.is_empty() || reply.starts_with("HTTP/1.1 408"),
        "{reply}"
    );
}

/// Slowloris at the connection cap: connections that sent only part of a head hold every
/// slot; a new client is still served (the oldest silent connection is closed for it, and
/// finds its end), while a connection that sent a request keeps its slot.
#[tokio::test]
async fn slow_heads_do_not_lock_out_new_clients() {
    let server = Server::start(&["--max-connections", "3", "--http-header-timeout", "600"]).await;
    let mut served = server.client().await;
    let ok = served.post(&[], &initialize(1, "2025-11-25")).await;
    assert_eq!(ok.status, StatusCode::OK);
    let mut slow = Vec::new();
    for _ in 0..2 {
        let mut stream = TcpStream::connect(server.addr).await.unwrap();
        stream
            .write_all(b"POST /mcp HTTP/1.1\r\nHost: x\r\n")
            .await
            .unwrap();
        slow.push(stream);
    }
    let mut newcomer = Client::connect(server.addr).await;
    let status = tokio::time::timeout(HANG, newcomer.post(&[], &initialize(2, "2025-11-25")))
        .await
        .expect("a new client waited behind slow heads")
        .status;
    assert_eq!(status, StatusCode::OK);
    // The oldest slow connection was the one closed: it reads its end, with nothing sent.
    let mut buf = Vec::new();
    let n = tokio::time::timeout(HANG, slow[0].read_to_end(&mut buf))
        .await
        .expect("the oldest slow connection was not closed");
    assert!(
        n.is_err() || buf.is_empty(),
        "{:?}",
        String::from_utf8_lossy(&buf)
    );
    // The connection that sent a request is still served.
    let again = served.post(&[], &initialize(3, "2025-11-25")).await;
    assert_eq!(again.status, StatusCode::OK);
}

/// SIGTERM while a request is in flight (its body half sent): the listener closes, the
/// request still gets its reply, and the server exits 0.
#[tokio::test]
async fn sigterm_drains_a_request_in_flight() {
    let mut server = Server::start(&["--log-level", "debug"]).await;
    let body = modern(
        1,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "drained"}}),
    )
    .to_string();
    let (first, rest) = body.split_at(body.len() / 2);
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAccept: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: echo\r\nContent-Length: {}\r\n\r\n{first}",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    server.wait_log("http request").await;
    server.signal(nix::sys::signal::Signal::SIGTERM);
    server.wait_log("no longer accepting").await;
    // New connections are refused once the listener is closed.
    assert!(TcpStream::connect(server.addr).await.is_err());

    stream.write_all(rest.as_bytes()).await.unwrap();
    let mut reply = Vec::new();
    tokio::time::timeout(HANG, stream.read_to_end(&mut reply))
        .await
        .expect("no reply after SIGTERM")
        .unwrap();
    let reply = String::from_utf8_lossy(&reply);
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    assert!(reply.contains(r#""text":"drained""#), "{reply}");
    let status = server.exit().await;
    assert_eq!(status.code(), Some(0));
}

/// The head of a POST and half its body, on a new connection.
async fn half_sent_post(addr: SocketAddr, body: &str) -> TcpStream {
    let (first, _) = body.split_at(body.len() / 2);
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: {}\r\n\r\n{first}",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream
}

/// Everything the server sends until it closes the connection (a reset counts as closed).
async fn until_closed(stream: &mut TcpStream) -> Vec<u8> {
    let mut got = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    tokio::time::timeout(HANG, async {
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await
    .expect("the connection stayed open");
    got
}

/// A request whose body had not fully arrived when the grace ended is no lost work: its
/// connection is closed with no response, and the server exits 0. A keep-alive connection
/// with the next request's head half sent is closed too.
#[tokio::test]
async fn sigterm_closes_a_half_sent_body_and_exits_0() {
    let mut server = Server::start(&["--shutdown-grace", "0.3", "--log-level", "debug"]).await;
    let mut kept = TcpStream::connect(server.addr).await.unwrap();
    let body = initialize(1, "2025-11-25").to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    kept.write_all(request.as_bytes()).await.unwrap();
    server.wait_log("session created").await;
    server.wait_log("http response").await;
    kept.write_all(b"POST /mcp HTTP/1.1\r\nHost:")
        .await
        .unwrap();

    let mut half = half_sent_post(server.addr, &echo(7, "never finished").to_string()).await;
    server.wait_log("http request").await;
    server.signal(nix::sys::signal::Signal::SIGTERM);
    server.wait_log("no longer accepting").await;
    assert!(until_closed(&mut half).await.is_empty());
    let first = String::from_utf8(until_closed(&mut kept).await).unwrap();
    assert!(first.starts_with("HTTP/1.1 200"), "{first}");
    assert_eq!(first.matches("HTTP/1.1").count(), 1, "{first}");
    server.wait_log("had not fully arrived").await;
    assert_eq!(server.exit().await.code(), Some(0));
}

/// A received request whose reply is not fully written when the grace ends (a 16 MiB reply to
/// a client that reads nothing) is cut: a warning naming it, the connection closed mid-reply,
/// exit status 1, as on stdio.
#[tokio::test]
async fn sigterm_cutting_a_reply_warns_and_exits_1() {
    let mut server = Server::start(&["--shutdown-grace", "0.3", "--log-level", "debug"]).await;
    let mut c = server.client().await;
    let session = c.handshake("2025-11-25").await;
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    // A small receive window, so the reply cannot all sit in kernel buffers.
    socket.set_recv_buffer_size(4096).unwrap();
    let mut stream = socket.connect(server.addr).await.unwrap();
    let text = "x".repeat(8 << 20);
    let body = echo(42, &text).to_string();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAccept: application/json\r\nMcp-Session-Id: {session}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body.as_bytes()).await.unwrap();
    server.wait_log("request id=42 method=tools/call").await;
    server.wait_log("status=200").await;
    server.signal(nix::sys::signal::Signal::SIGTERM);
    server
        .wait_log("the reply to tools/call (id 42) is cut")
        .await;
    assert_eq!(server.exit().await.code(), Some(1));
    let got = until_closed(&mut stream).await;
    assert!(got.starts_with(b"HTTP/1.1 200"));
    assert!(got.len() < 2 * text.len(), "the whole reply arrived");
}

#[tokio::test]
async fn sigint_with_idle_keep_alive_connections_exits_0() {
    let server = Server::start(&[]).await;
    let mut c = server.client().await;
    let ok = c.post(&[], &initialize(1, "2025-11-25")).await;
    assert_eq!(ok.status, StatusCode::OK);
    server.signal(nix::sys::signal::Signal::SIGINT);
    assert_eq!(server.exit().await.code(), Some(0));
}

#[test]
fn help_mentions_http() {
    let out = std::process::Command::new(BIN)
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    for flag in [
        "--http",
        "--http-path",
        "--allow-origin",
        "--max-sessions",
        "--max-connections",
        "--session-idle-secs",
        "--http-header-timeout",
        "--http-body-timeout",
        "--shutdown-grace",
    ] {
        assert!(help.contains(flag), "{flag} missing from --help");
    }
}

/// With `--max-connections 1` a second connection is served only once the first closes.
#[tokio::test]
async fn connections_beyond_the_cap_wait_for_a_free_slot() {
    let server = Server::start(&["--max-connections", "1"]).await;
    let mut first = server.client().await;
    let ok = first.post(&[], &initialize(1, "2025-11-25")).await;
    assert_eq!(ok.status, StatusCode::OK);

    let addr = server.addr;
    let second = tokio::spawn(async move {
        let mut c = Client::connect(addr).await;
        c.post(&[], &initialize(2, "2025-11-25")).await.status
    });
    // The first connection is still served while the second waits.
    let again = first.post(&[], &initialize(3, "2025-11-25")).await;
    assert_eq!(again.status, StatusCode::OK);
    assert!(!second.is_finished(), "served beyond the connection cap");
    drop(first);
    let status = tokio::time::timeout(HANG, second)
        .await
        .expect("the waiting connection was never served")
        .unwrap();
    assert_eq!(status, StatusCode::OK);
}
