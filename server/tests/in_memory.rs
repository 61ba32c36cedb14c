//! The server over an in-memory duplex (the async loop) and over OS pipes (the blocking loop
//! the binary runs): lifecycle, errors, concurrency, cancellation, batches. Each test that
//! goes through [`Peer`] runs on both loops (`on_both_loops!` at the end).
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use mcp_echo_server::{
    default_tools, serve, serve_blocking, BlockingStdio, Config, Exit, Tool, ToolCall, ToolSet,
};
use mcp_protocol::mcp::{self, CallToolResult};
use mcp_protocol::FramingMode;
use serde_json::{json, Map, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::oneshot;

const WAIT: Duration = Duration::from_secs(10);

/// A test tool whose calls run until the test lets them finish: a call with `{"gate": name}`
/// tells the test it started ([`Gates::started`]), waits until the test opens its gate
/// ([`Gates::open`]), then answers "passed <name>". A call dropped before it passed (the
/// server aborted it) is reported too ([`Gates::dropped`]). So tests wait on events, not on
/// time: "in flight" means "started and not yet released", whatever the machine's load.
struct Gate {
    definition: mcp::Tool,
    gates: Gates,
}

impl Gate {
    fn new(gates: &Gates) -> Self {
        Gate {
            definition: mcp::Tool {
                name: "gate".into(),
                title: None,
                description: None,
                input_schema: json!({"type": "object"}),
                output_schema: None,
                annotations: None,
            },
            gates: gates.clone(),
        }
    }
}

impl Tool for Gate {
    fn definition(&self) -> &mcp::Tool {
        &self.definition
    }
    fn call(&self, args: Map<String, Value>) -> ToolCall {
        let name = args
            .get("gate")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let gate = self.gates.get(&name);
        gate.started.add_permits(1);
        // Moved into the future: dropped with it, whether it ever ran or not.
        let running = Running {
            gate: Arc::clone(&gate),
            passed: false,
        };
        ToolCall::Pending(
            async move {
                let mut running = running;
                gate.open.acquire().await.unwrap().forget();
                running.passed = true;
                CallToolResult::text(format!("passed {name}"))
            }
            .boxed(),
        )
    }
}

/// The gates of one [`Peer`]'s `gate` tool, by name.
#[derive(Clone, Default)]
struct Gates(Arc<std::sync::Mutex<std::collections::HashMap<String, Arc<GateState>>>>);

/// Counters as semaphores: a permit per call that started, per call let through, per call
/// dropped before it passed.
struct GateState {
    started: tokio::sync::Semaphore,
    open: tokio::sync::Semaphore,
    dropped: tokio::sync::Semaphore,
}

/// A call of the `gate` tool in progress; reports a drop before it passed.
struct Running {
    gate: Arc<GateState>,
    passed: bool,
}

impl Drop for Running {
    fn drop(&mut self) {
        if !self.passed {
            self.gate.dropped.add_permits(1);
        }
    }
}

impl Gates {
    fn get(&self, name: &str) -> Arc<GateState> {
        let mut gates = self.0.lock().unwrap();
        Arc::clone(gates.entry(name.to_owned()).or_insert_with(|| {
            Arc::new(GateState {
                started: tokio::sync::Semaphore::new(0),
                open: tokio::sync::Semaphore::new(0),
                dropped: tokio::sync::Semaphore::new(0),
            })
        }))
    }

    /// Waits (at most [`WAIT`]) until a call through gate `name` has started: the server read
    /// the request and called the tool.
    async fn started(&self, name: &str) {
        Self::take(&self.get(name).started, name, "started").await;
    }

    /// Waits (at most [`WAIT`]) until a call through gate `name` was dropped before it
    /// passed: the server aborted it.
    async fn dropped(&self, name: &str) {
        Self::take(&self.get(name).dropped, name, "dropped").await;
    }

    /// Lets one call through gate `name` (one that waits now or the next to come).
    fn open(&self, name: &str) {
        self.get(name).open.add_permits(1);
    }

    async fn take(semaphore: &tokio::sync::Semaphore, name: &str, what: &str) {
        tokio::time::timeout(WAIT, semaphore.acquire())
            .await
            .unwrap_or_else(|_| panic!("no call through gate {name:?} was {what} within {WAIT:?}"))
            .unwrap()
            .forget();
    }
}

/// Which serve loop a [`Peer`] starts.
#[derive(Debug, Clone, Copy)]
enum Loop {
    /// `serve` over an in-memory duplex.
    Async,
    /// `serve_blocking` on a thread of its own, over two OS pipes.
    Blocking,
    /// `serve_blocking` over one end of a socketpair, as both input and output (Node-based
    /// hosts give their servers sockets).
    BlockingSocket,
}

thread_local! {
    static LOOP: std::cell::Cell<Loop> = const { std::cell::Cell::new(Loop::Async) };
}

struct Peer {
    lines: tokio::io::Lines<BufReader<Box<dyn AsyncRead + Unpin + Send>>>,
    write: Box<dyn AsyncWrite + Unpin + Send>,
    /// How the server ended. A oneshot, not a `JoinHandle`: a blocking loop that hangs then
    /// fails the test by timing out instead of hanging the runtime's shutdown, which waits for
    /// `spawn_blocking` tasks.
    server: oneshot::Receiver<std::io::Result<Exit>>,
    /// Sending on it (or dropping it unsent: nothing) is the test's SIGTERM.
    stop: Option<oneshot::Sender<()>>,
    /// The gates of the `gate` tool, if [`Peer::with`] registered it.
    gates: Gates,
}

impl Peer {
    fn start() -> Peer {
        Peer::with(Config::default())
    }

    fn with(config: Config) -> Peer {
        let gates = Gates::default();
        let mut tools = default_tools();
        tools.register(Gate::new(&gates)).unwrap();
        Peer {
            gates,
            ..Peer::with_tools(config, tools)
        }
    }

    fn with_tools(config: Config, tools: ToolSet) -> Peer {
        match LOOP.with(std::cell::Cell::get) {
            Loop::Async => Peer::on_async_loop(config, tools),
            Loop::Blocking => Peer::on_blocking(Transport::Pipes, config, tools),
            Loop::BlockingSocket => Peer::on_blocking(Transport::Socket, config, tools),
        }
    }

    /// `serve_blocking` on a thread of its own, over `transport`.
    fn on_blocking(transport: Transport, config: Config, tools: ToolSet) -> Peer {
        let Ends {
            stdio,
            input,
            output,
            socket,
            ..
        } = ends(transport);
        let (stop, stopped) = oneshot::channel::<()>();
        let stopper = stdio.stopper();
        tokio::spawn(async move {
            if stopped.await.is_ok() {
                stopper.stop(libc::SIGTERM);
            }
        });
        let server = serve_on_thread(stdio, config, tools);
        let (read, write): (
            Box<dyn AsyncRead + Unpin + Send>,
            Box<dyn AsyncWrite + Unpin + Send>,
        ) = match socket {
            Some(socket) => {
                drop((input, output)); // duplicates of `socket`
                socket.set_nonblocking(true).unwrap();
                let (read, write) = tokio::net::UnixStream::from_std(socket)
                    .unwrap()
                    .into_split();
                (Box::new(read), Box::new(write))
            }
            None => (
                Box::new(tokio::net::unix::pipe::Receiver::from_file(output).unwrap()),
                Box::new(tokio::net::unix::pipe::Sender::from_file(input).unwrap()),
            ),
        };
        Peer {
            lines: BufReader::new(read).lines(),
            write,
            server: async_exit(server),
            stop: Some(stop),
            gates: Gates::default(),
        }
    }

    fn on_async_loop(config: Config, tools: ToolSet) -> Peer {
        let (client, server) = tokio::io::duplex(1 << 16);
        let (server_read, server_write) = tokio::io::split(server);
        let (stop, stopped) = oneshot::channel::<()>();
        let (done, server) = oneshot::channel();
        tokio::spawn(async move {
            let shutdown = async move {
                let _ = stopped.await;
            };
            let exit = serve(
                server_read,
                server_write,
                &config,
                Arc::new(tools),
                shutdown,
            )
            .await;
            let _ = done.send(exit);
        });
        let (read, write) = tokio::io::split(client);
        Peer {
            lines: BufReader::new(Box::new(read) as Box<dyn AsyncRead + Unpin + Send>).lines(),
            write: Box::new(write),
            server,
            stop: Some(stop),
            gates: Gates::default(),
        }
    }

    async fn send_raw(&mut self, bytes: &[u8]) {
        self.write.write_all(bytes).await.unwrap();
    }

    async fn send(&mut self, message: Value) {
        let mut line = serde_json::to_vec(&message).unwrap();
        line.push(b'\n');
        self.send_raw(&line).await;
    }

    async fn line(&mut self) -> String {
        tokio::time::timeout(WAIT, self.lines.next_line())
            .await
            .expect("no reply within 10 s")
            .unwrap()
            .expect("output closed")
    }

    async fn reply(&mut self) -> Value {
        let line = self.line().await;
        serde_json::from_str(&line).unwrap()
    }

    async fn request(&mut self, id: Value, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        self.reply().await
    }

    async fn initialize(&mut self, version: &str) -> Value {
        self.request(json!(0), "initialize", init_params(version))
            .await
    }

    async fn handshake(&mut self, version: &str) {
        let reply = self.initialize(version).await;
        assert_eq!(reply["result"]["protocolVersion"], version);
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
    }

    /// Closes input and returns what the server still wrote, and how it ended.
    async fn finish(self) -> (Vec<String>, Exit) {
        self.finish_then(|_| {}).await
    }

    /// [`finish`](Self::finish), calling `then` right after input is closed (to open a gate
    /// only once the server's input has ended).
    async fn finish_then(mut self, then: impl FnOnce(&Gates)) -> (Vec<String>, Exit) {
        self.write.shutdown().await.unwrap();
        drop(self.write);
        then(&self.gates);
        let mut rest = Vec::new();
        while let Some(line) = tokio::time::timeout(WAIT, self.lines.next_line())
            .await
            .unwrap()
            .unwrap()
        {
            rest.push(line);
        }
        let exit = tokio::time::timeout(WAIT, self.server)
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        drop(self.stop);
        (rest, exit)
    }
}

fn init_params(version: &str) -> Value {
    json!({
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "in-memory-test", "version": "1.0"}
    })
}

/// A `tools/call` of the test-only `gate` tool, through gate `gate`.
fn gate_call(id: Value, gate: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "gate", "arguments": {"gate": gate}}})
}

fn error_code(reply: &Value) -> i64 {
    reply["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("expected an error, got {reply}"))
}

async fn full_handshake_and_echo() {
    let mut peer = Peer::start();
    let reply = peer.initialize("2025-11-25").await;
    assert_eq!(
        reply,
        json!({"jsonrpc": "2.0", "id": 0, "result": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {"listChanged": false}},
            "serverInfo": {"name": "mcp-echo-server", "title": "MCP Echo Server", "version": env!("CARGO_PKG_VERSION")},
            "instructions": reply["result"]["instructions"].clone(),
        }})
    );
    assert!(reply["result"]["instructions"]
        .as_str()
        .unwrap()
        .contains("echo"));
    peer.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    let list = peer.request(json!(1), "tools/list", json!({})).await;
    let tools = list["result"]["tools"].as_array().unwrap();
    assert_eq!(tools[0]["name"], "echo");
    assert_eq!(
        tools[0]["inputSchema"],
        json!({"type": "object", "properties": {"text": {"type": "string", "description": "The text to return."}},
               "required": ["text"], "additionalProperties": false})
    );
    assert_eq!(
        tools[0]["annotations"],
        json!({"title": "Echo", "readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false})
    );
    assert!(list["result"].get("nextCursor").is_none());
    for text in ["hello", "你好 🦀", "", "line\nbreak \"quoted\" \\ \u{0}"] {
        let reply = peer
            .request(
                json!("call"),
                "tools/call",
                json!({"name": "echo", "arguments": {"text": text}}),
            )
            .await;
        assert_eq!(
            reply,
            json!({"jsonrpc": "2.0", "id": "call", "result": {
                "content": [{"type": "text", "text": text}],
                "structuredContent": {"text": text}
            }})
        );
    }
    let (rest, exit) = peer.finish().await;
    assert!(rest.is_empty(), "{rest:?}");
    assert!(matches!(exit, Exit::InputClosed));
}

async fn version_negotiation_and_fields_per_version() {
    for (requested, negotiated) in [
        ("2024-11-05", "2024-11-05"),
        ("2025-03-26", "2025-03-26"),
        ("2025-06-18", "2025-06-18"),
        ("2025-11-25", "2025-11-25"),
        ("1999-01-01", "2025-11-25"),
        ("2026-07-28", "2025-11-25"),
    ] {
        let mut peer = Peer::start();
        let reply = peer.initialize(requested).await;
        assert_eq!(
            reply["result"]["protocolVersion"], negotiated,
            "{requested}"
        );
        let modern = negotiated >= "2025-06-18";
        assert_eq!(
            reply["result"]["serverInfo"].get("title").is_some(),
            modern,
            "{requested}"
        );
        peer.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        let list = peer.request(json!(1), "tools/list", json!({})).await;
        let echo = &list["result"]["tools"][0];
        assert_eq!(echo.get("title").is_some(), modern, "{requested}");
        assert_eq!(echo.get("outputSchema").is_some(), modern, "{requested}");
        assert_eq!(
            echo.get("annotations").is_some(),
            negotiated != "2024-11-05",
            "{requested}"
        );
        let call = peer
            .request(
                json!(2),
                "tools/call",
                json!({"name": "echo", "arguments": {"text": "x"}}),
            )
            .await;
        assert_eq!(
            call["result"].get("structuredContent").is_some(),
            modern,
            "{requested}"
        );
        assert_eq!(
            call["result"]["content"],
            json!([{"type": "text", "text": "x"}])
        );
    }
}

async fn gating_before_ready() {
    let mut peer = Peer::start();
    let ping = peer.request(json!(1), "ping", json!({})).await;
    assert_eq!(ping, json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
    let early = peer.request(json!(2), "tools/list", json!({})).await;
    assert_eq!(error_code(&early), -32600);
    assert_eq!(early["id"], 2);
    assert!(early["error"]["message"]
        .as_str()
        .unwrap()
        .contains("send `initialize` first"));
    let early_call = peer
        .request(
            json!(3),
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "x"}}),
        )
        .await;
    assert_eq!(error_code(&early_call), -32600);

    peer.initialize("2025-06-18").await;
    let ping = peer.request(json!(4), "ping", json!(null)).await;
    assert_eq!(ping["result"], json!({}));
    let not_ready = peer.request(json!(5), "tools/list", json!({})).await;
    assert_eq!(error_code(&not_ready), -32600);
    assert!(not_ready["error"]["message"]
        .as_str()
        .unwrap()
        .contains("notifications/initialized"));
    let again = peer.initialize("2025-06-18").await;
    assert_eq!(error_code(&again), -32600);
    assert_eq!(again["id"], 0);

    peer.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    let list = peer.request(json!(6), "tools/list", json!({})).await;
    assert_eq!(list["result"]["tools"][0]["name"], "echo");
    let again = peer.initialize("2025-06-18").await;
    assert_eq!(error_code(&again), -32600);
    let ping = peer.request(json!(7), "ping", json!({})).await;
    assert_eq!(ping["result"], json!({}));
}

async fn error_layering_with_exact_codes_and_ids() {
    let mut peer = Peer::start();
    let bad_init = peer
        .request(
            json!(1),
            "initialize",
            json!({"protocolVersion": "2025-06-18"}),
        )
        .await;
    assert_eq!(error_code(&bad_init), -32602);
    assert_eq!(bad_init["id"], 1);
    let bad_init = peer.request(json!(1), "initialize", json!([1])).await;
    assert_eq!(error_code(&bad_init), -32602);
    peer.handshake("2025-06-18").await;

    let cases: Vec<(Value, i64, Value)> = vec![
        (
            json!({"jsonrpc": "2.0", "id": 10, "method": "nope/nothing"}),
            -32601,
            json!(10),
        ),
        (
            json!({"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": {"name": "nope"}}),
            -32602,
            json!(11),
        ),
        (
            json!({"jsonrpc": "2.0", "id": 12, "method": "tools/call", "params": {"arguments": {}}}),
            -32602,
            json!(12),
        ),
        (
            json!({"jsonrpc": "2.0", "id": 13, "method": "tools/call", "params": {"name": "echo", "arguments": "text"}}),
            -32602,
            json!(13),
        ),
        (
            json!({"jsonrpc": "2.0", "id": 14, "method": "tools/call"}),
            -32602,
            json!(14),
        ),
        (
            json!({"jsonrpc": "2.0", "id": 15, "method": "tools/list", "params": {"cursor": "abc"}}),
            -32602,
            json!(15),
        ),
        (json!({"id": 16, "method": "ping"}), -32600, json!(16)),
        (
            json!({"jsonrpc": "1.0", "id": 17, "method": "ping"}),
            -32600,
            json!(17),
        ),
        (
            json!({"jsonrpc": "2.0", "id": null, "method": "ping"}),
            -32600,
            Value::Null,
        ),
        (
            json!({"jsonrpc": "2.0", "id": 18, "method": 5}),
            -32600,
            json!(18),
        ),
        (
            json!({"jsonrpc": "2.0", "id": 19, "method": "ping", "params": "x"}),
            -32600,
            json!(19),
        ),
        (json!({"jsonrpc": "2.0", "id": 20}), -32600, json!(20)),
        (
            json!({"jsonrpc": "2.0", "id": 21.5, "method": "ping"}),
            -32600,
            Value::Null,
        ),
        (json!(42), -32600, Value::Null),
    ];
    for (input, code, id) in cases {
        peer.send(input.clone()).await;
        let reply = peer.reply().await;
        assert_eq!(error_code(&reply), code, "{input}");
        assert_eq!(reply["id"], id, "{input}");
        assert!(reply.get("result").is_none());
    }
    let unknown = peer
        .request(json!(30), "tools/call", json!({"name": "nope"}))
        .await;
    assert_eq!(unknown["error"]["message"], "Unknown tool: nope");

    peer.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":31,\"method\":\"ping\"\n")
        .await;
    assert_eq!(
        peer.line().await,
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: EOF while parsing an object at line 1 column 40"}}"#
    );
    let ping = peer.request(json!(32), "ping", json!({})).await;
    assert_eq!(ping["result"], json!({}));
}

async fn tool_argument_failures_are_results_with_is_error() {
    let mut peer = Peer::start();
    peer.handshake("2025-06-18").await;
    for (arguments, needle) in [
        (json!({}), "missing required property `text`"),
        (json!({"text": 5}), "`text` must be a string, got a number"),
        (
            json!({"text": "a", "extra": 1}),
            "unexpected property `extra`",
        ),
        (Value::Null, "missing required property `text`"),
    ] {
        let mut params = json!({"name": "echo"});
        if !arguments.is_null() {
            params["arguments"] = arguments.clone();
        }
        let reply = peer.request(json!(1), "tools/call", params).await;
        assert_eq!(reply["result"]["isError"], true, "{arguments}");
        let text = reply["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.contains(needle), "{text}");
        assert!(
            text.contains(r#"{"text": "#),
            "tells the model how to call it: {text}"
        );
        assert!(reply["result"].get("structuredContent").is_none());
    }
}

async fn notifications_and_responses_get_no_reply() {
    let mut peer = Peer::start();
    peer.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    peer.send(json!({"jsonrpc": "2.0", "method": "notifications/whatever", "params": {}}))
        .await;
    peer.send(json!({"jsonrpc": "2.0", "method": "tools/list"}))
        .await;
    peer.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}}),
    )
    .await;
    peer.send(json!({"jsonrpc": "2.0", "id": 5, "result": {}}))
        .await;
    peer.send(json!({"jsonrpc": "2.0", "id": null, "error": {"code": -1, "message": "x"}}))
        .await;
    let ping = peer.request(json!("after"), "ping", json!({})).await;
    assert_eq!(ping, json!({"jsonrpc": "2.0", "id": "after", "result": {}}));
    let (rest, _) = peer.finish().await;
    assert!(rest.is_empty(), "{rest:?}");
}

async fn ids_are_echoed_exactly() {
    let mut peer = Peer::start();
    for id in [
        "0",
        "-1",
        "9007199254740993",
        "18446744073709551615",
        r#""""#,
        r#""é🦀""#,
        r#""1""#,
    ] {
        peer.send_raw(
            format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}\n").as_bytes(),
        )
        .await;
        assert_eq!(
            peer.line().await,
            format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{}}}}")
        );
    }
}

async fn replies_may_overtake_slow_requests() {
    let mut peer = Peer::start();
    peer.handshake("2025-06-18").await;
    peer.send(gate_call(json!("slow"), "slow")).await;
    peer.gates.started("slow").await;
    // The slow call cannot end before its gate opens: the fast one must overtake it.
    let fast = peer
        .request(
            json!("fast"),
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "x"}}),
        )
        .await;
    assert_eq!(fast["id"], "fast");
    assert_eq!(fast["result"]["content"][0]["text"], "x");
    peer.gates.open("slow");
    let slow = peer.reply().await;
    assert_eq!(slow["id"], "slow");
    assert_eq!(slow["result"]["content"][0]["text"], "passed slow");
}

async fn many_concurrent_slow_requests_each_answered_once() {
    let mut peer = Peer::start();
    peer.handshake("2025-06-18").await;
    for i in 0..64 {
        peer.send(gate_call(json!(i), &i.to_string())).await;
    }
    // All 64 run at once: each has started while none may finish.
    for i in 0..64 {
        peer.gates.started(&i.to_string()).await;
    }
    for i in 0..64 {
        peer.gates.open(&i.to_string());
    }
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..64 {
        let reply = peer.reply().await;
        let id = reply["id"].as_i64().unwrap();
        assert_eq!(
            reply["result"]["content"][0]["text"],
            format!("passed {id}"),
            "{reply}"
        );
        assert!(seen.insert(id), "{reply}");
    }
    assert_eq!(seen, (0..64).collect());
    let (rest, _) = peer.finish().await;
    assert!(rest.is_empty(), "{rest:?}");
}

async fn cancelled_request_gets_no_reply() {
    let mut peer = Peer::start();
    peer.handshake("2025-06-18").await;
    peer.send(gate_call(json!(7), "7")).await;
    peer.gates.started("7").await;
    peer.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                     "params": {"requestId": 7, "reason": "user gave up"}}),
    )
    .await;
    // The server aborts the call: its future is dropped before it passed its gate.
    peer.gates.dropped("7").await;
    // Opening the gate now lets nothing through: the call is gone.
    peer.gates.open("7");
    let ping = peer.request(json!(8), "ping", json!({})).await;
    assert_eq!(
        ping["id"], 8,
        "no reply for the cancelled request 7: {ping}"
    );
    // The id is free again once cancelled; a new request with it is answered.
    peer.gates.open("7 again");
    let again = peer
        .request(
            json!(7),
            "tools/call",
            json!({"name": "gate", "arguments": {"gate": "7 again"}}),
        )
        .await;
    assert_eq!(again["id"], 7, "{again}");
    assert_eq!(again["result"]["content"][0]["text"], "passed 7 again");
    let (rest, _) = peer.finish().await;
    assert!(rest.is_empty(), "{rest:?}");
}

async fn duplicate_in_flight_id_is_refused() {
    let mut peer = Peer::start();
    peer.handshake("2025-06-18").await;
    let call = gate_call(json!(1), "first");
    peer.send(call.clone()).await;
    peer.gates.started("first").await;
    // The first call is held at its gate: the second comes while it is surely in flight.
    peer.send(call).await;
    let dup = peer.reply().await;
    assert_eq!(error_code(&dup), -32600);
    assert_eq!(dup["id"], 1);
    peer.gates.open("first");
    let first = peer.reply().await;
    assert_eq!(first["id"], 1);
    assert_eq!(first["result"]["content"][0]["text"], "passed first");
}

async fn eof_answers_everything_already_read() {
    let mut peer = Peer::start();
    peer.handshake("2025-06-18").await;
    peer.send(gate_call(json!("slow"), "slow")).await;
    peer.gates.started("slow").await;
    for i in 0..100 {
        peer.send(json!({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                         "params": {"name": "echo", "arguments": {"text": i.to_string()}}}))
            .await;
    }
    // The slow call is still held when input ends; only then may it finish.
    let (rest, exit) = peer.finish_then(|gates| gates.open("slow")).await;
    assert!(matches!(exit, Exit::InputClosed), "{exit:?}");
    assert_eq!(rest.len(), 101);
    let replies: Vec<Value> = rest
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for i in 0..100 {
        let r = replies.iter().find(|r| r["id"] == i).unwrap();
        assert_eq!(r["result"]["content"][0]["text"], i.to_string());
    }
    let slow = replies.iter().find(|r| r["id"] == "slow").unwrap();
    assert_eq!(slow["result"]["content"][0]["text"], "passed slow");
}

async fn shutdown_signal_answers_what_was_read_then_exits() {
    let mut peer = Peer::start();
    peer.handshake("2025-06-18").await;
    peer.send(gate_call(json!("slow"), "slow")).await;
    // Once the server has read it: "SIGTERM" with input still open, and the call still held.
    peer.gates.started("slow").await;
    let _ = peer.stop.take().unwrap().send(());
    peer.gates.open("slow");
    let reply = peer.reply().await;
    assert_eq!(reply["id"], "slow");
    assert_eq!(reply["result"]["content"][0]["text"], "passed slow");
    let exit = tokio::time::timeout(WAIT, &mut peer.server)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(matches!(exit, Exit::Shutdown), "{exit:?}");
}

#[tokio::test]
async fn shutdown_is_bounded_when_nobody_reads() {
    let config = Config {
        shutdown_grace: Duration::from_millis(200),
        outgoing_queue: 1,
        ..Config::default()
    };
    let (client, server) = tokio::io::duplex(64);
    let (server_read, server_write) = tokio::io::split(server);
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        serve(
            server_read,
            server_write,
            &config,
            Arc::new(default_tools()),
            async move {
                let _ = stopped.await;
            },
        )
        .await
    });
    let (_read, mut write) = tokio::io::split(client);
    for i in 0..50 {
        let line = format!("{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"ping\"}}\n");
        if tokio::time::timeout(Duration::from_millis(100), write.write_all(line.as_bytes()))
            .await
            .is_err()
        {
            break; // back-pressure: the server stopped reading
        }
    }
    let _ = stop.send(());
    let exit = tokio::time::timeout(WAIT, task)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(
        matches!(exit, Exit::DrainTimedOut | Exit::Shutdown),
        "{exit:?}"
    );
}

#[tokio::test]
async fn closed_output_ends_quietly() {
    // Separate pipes for input and output, so the output can be closed on its own.
    let (mut input, server_read) = tokio::io::duplex(1 << 16);
    let (server_write, output) = tokio::io::duplex(1 << 16);
    drop(output);
    let task = tokio::spawn(async move {
        serve(
            server_read,
            server_write,
            &Config::default(),
            Arc::new(default_tools()),
            std::future::pending(),
        )
        .await
    });
    for i in 0..10 {
        let line = format!("{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"ping\"}}\n");
        if input.write_all(line.as_bytes()).await.is_err() {
            break;
        }
    }
    let exit = tokio::time::timeout(WAIT, task)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(matches!(exit, Exit::OutputClosed), "{exit:?}");
}

/// How the blocking loop's client is connected: the two ways MCP hosts connect servers.
#[derive(Debug, Clone, Copy)]
enum Transport {
    /// Two OS pipes (Python, Rust, Go hosts).
    Pipes,
    /// One end of a socketpair as both input and output (Node-based hosts).
    Socket,
}

/// A blocking loop's files and the client's ends of them.
struct Ends {
    stdio: BlockingStdio,
    /// The client's end of the server's input.
    input: std::fs::File,
    /// The client's end of the server's output.
    output: std::fs::File,
    /// The client's socket, for [`Transport::Socket`].
    socket: Option<std::os::unix::net::UnixStream>,
    /// Tells when the server's output is full.
    probe: OutputProbe,
}

/// Tells whether the server's output can take one more byte, by trying to write one there
/// without blocking, on a file of its own. A byte that fits is added to the output: only for
/// tests that never read what the server writes.
enum OutputProbe {
    /// The server's output pipe, opened anew (through `/proc/self/fd`) with `O_NONBLOCK` on
    /// an open file description of the probe's own.
    Pipe(std::fs::File),
    /// A duplicate of the server's socket; `MSG_DONTWAIT` makes the one send non-blocking.
    Socket(std::fs::File),
}

impl OutputProbe {
    fn of_pipe(write_end: &std::fs::File) -> OutputProbe {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::OpenOptionsExt;
        let file = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(format!("/proc/self/fd/{}", write_end.as_raw_fd()))
            .unwrap();
        OutputProbe::Pipe(file)
    }

    /// True once a write to the output would block: nobody reads it and it holds all it can.
    fn full(&self) -> bool {
        use std::io::Write;
        use std::os::fd::AsRawFd;
        let result = match self {
            OutputProbe::Pipe(file) => (&*file).write(b"\n").map_err(|e| e.kind()),
            OutputProbe::Socket(file) => nix::sys::socket::send(
                file.as_raw_fd(),
                b"\n",
                nix::sys::socket::MsgFlags::MSG_DONTWAIT,
            )
            .map_err(|e| std::io::Error::from(e).kind()),
        };
        match result {
            Ok(_) => false,
            Err(std::io::ErrorKind::WouldBlock) => true,
            Err(e) => panic!("probing the server's output: {e:?}"),
        }
    }

    /// Waits (at most [`WAIT`]) until the server's output is full.
    async fn until_full(&self, what: &str) {
        tokio::time::timeout(WAIT, async {
            while !self.full() {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await
        .unwrap_or_else(|_| panic!("{what}: the server's output was not full within {WAIT:?}"));
    }
}

impl Ends {
    /// The client stops reading for good: the server's next write gets EPIPE.
    fn close_output(&mut self) {
        match &self.socket {
            Some(socket) => socket.shutdown(std::net::Shutdown::Read).unwrap(),
            None => drop(std::mem::replace(&mut self.output, os_pipe().0)),
        }
    }
}

/// How `serve_blocking` ended, and the signal its [`Stopper`](mcp_echo_server::Stopper) was
/// given, if any.
type Served = (std::io::Result<Exit>, Option<i32>);

/// Runs `serve_blocking` on a thread of its own; how it ended comes back on the receiver (see
/// [`Peer::server`] for why not `spawn_blocking`).
fn serve_on_thread(
    stdio: BlockingStdio,
    config: Config,
    tools: ToolSet,
) -> oneshot::Receiver<Served> {
    serve_on_thread_with_tid(stdio, config, tools).0
}

/// [`serve_on_thread`], and the serving thread's id, for [`pthread_kill`] and
/// [`until_asleep`].
///
/// [`pthread_kill`]: nix::sys::pthread::pthread_kill
fn serve_on_thread_with_tid(
    stdio: BlockingStdio,
    config: Config,
    tools: ToolSet,
) -> (oneshot::Receiver<Served>, ServingThread) {
    let (tx, rx) = oneshot::channel();
    let (thread_tx, thread_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = thread_tx.send(ServingThread {
            pthread: nix::sys::pthread::pthread_self(),
            tid: nix::unistd::gettid(),
        });
        let exit = serve_blocking(&stdio, &config, Arc::new(tools));
        let _ = tx.send((exit, stdio.stopped_by()));
    });
    (rx, thread_rx.recv().unwrap())
}

/// The thread a blocking loop runs on.
#[derive(Debug, Clone, Copy)]
struct ServingThread {
    pthread: nix::sys::pthread::Pthread,
    tid: nix::unistd::Pid,
}

impl ServingThread {
    /// Whether the thread sleeps in the kernel (`S` in `/proc/self/task/<tid>/stat`): blocked
    /// in a read, a write or a poll, not running or runnable.
    fn asleep(self) -> bool {
        let stat = std::fs::read_to_string(format!("/proc/self/task/{}/stat", self.tid))
            .unwrap_or_else(|e| panic!("the serving thread {self:?} is gone: {e}"));
        stat[stat.rfind(')').unwrap() + 1..]
            .split_whitespace()
            .next()
            == Some("S")
    }

    /// Waits (at most [`WAIT`]) until the thread sleeps in the kernel.
    async fn until_asleep(self, what: &str) {
        tokio::time::timeout(WAIT, async {
            while !self.asleep() {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        })
        .await
        .unwrap_or_else(|_| panic!("{what}: the serving thread did not block within {WAIT:?}"));
    }
}

/// How a loop on a thread of its own ended, waited for at most [`WAIT`].
async fn ended<T>(server: oneshot::Receiver<T>, transport: Transport) -> T {
    tokio::time::timeout(WAIT, server)
        .await
        .unwrap_or_else(|_| panic!("{transport:?}: the blocking loop did not end within {WAIT:?}"))
        .unwrap_or_else(|_| panic!("{transport:?}: the serving thread dropped its result"))
}

/// Just the exit, as [`Peer::server`] has it.
fn async_exit(served: oneshot::Receiver<Served>) -> oneshot::Receiver<std::io::Result<Exit>> {
    let (tx, rx) = oneshot::channel();
    tokio::spawn(async move {
        if let Ok((exit, _)) = served.await {
            let _ = tx.send(exit);
        }
    });
    rx
}

/// A duplicate of a socket's descriptor, as the server is given it.
fn socket_file(socket: &std::os::unix::net::UnixStream) -> std::fs::File {
    use std::os::fd::AsFd;
    socket.as_fd().try_clone_to_owned().unwrap().into()
}

/// An OS pipe: (read end, write end).
fn os_pipe() -> (std::fs::File, std::fs::File) {
    let (read, write) = nix::unistd::pipe().unwrap();
    (read.into(), write.into())
}

fn ends(transport: Transport) -> Ends {
    match transport {
        Transport::Pipes => {
            let (server_read, input) = os_pipe();
            let (output, server_write) = os_pipe();
            let probe = OutputProbe::of_pipe(&server_write);
            Ends {
                stdio: BlockingStdio::new(server_read, server_write).unwrap(),
                input,
                output,
                socket: None,
                probe,
            }
        }
        Transport::Socket => {
            let (client, server) = std::os::unix::net::UnixStream::pair().unwrap();
            Ends {
                stdio: BlockingStdio::new(socket_file(&server), socket_file(&server)).unwrap(),
                input: socket_file(&client),
                output: socket_file(&client),
                socket: Some(client),
                probe: OutputProbe::Socket(socket_file(&server)),
            }
        }
    }
}

const TRANSPORTS: [Transport; 2] = [Transport::Pipes, Transport::Socket];

/// A stop while the blocking loop sits in `read(2)` with nothing in flight (no poll, no task
/// to wake it) ends it: the stop interrupts the read.
#[tokio::test]
async fn blocking_loop_stops_while_blocked_in_read() {
    for transport in TRANSPORTS {
        stops_while_blocked_in_read(transport).await;
    }
}

async fn stops_while_blocked_in_read(transport: Transport) {
    use std::io::{BufRead, Write};
    let Ends {
        stdio,
        mut input,
        output,
        socket,
        ..
    } = ends(transport);
    let stopper = stdio.stopper();
    let (server, thread) = serve_on_thread_with_tid(stdio, Config::default(), default_tools());
    input
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n")
        .unwrap();
    // The reply proves the loop is up; then it blocks in read(2) again.
    let mut line = String::new();
    std::io::BufReader::new(output)
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n");
    // The reply was written and read: the next place the loop blocks is the read.
    thread.until_asleep("back in read(2)").await;
    stopper.stop(libc::SIGTERM);
    let (exit, stopped_by) = ended(server, transport).await;
    assert!(matches!(exit.unwrap(), Exit::Shutdown), "{transport:?}");
    assert_eq!(stopped_by, Some(libc::SIGTERM));
    // Input stays open to the end: only the stop could have ended the loop.
    drop((input, socket));
}

/// A stop that comes before the loop starts is not lost.
#[tokio::test]
async fn blocking_loop_stopped_before_it_starts() {
    for transport in TRANSPORTS {
        let Ends {
            stdio,
            input,
            socket,
            ..
        } = ends(transport);
        stdio.stopper().stop(libc::SIGINT);
        let server = serve_on_thread(stdio, Config::default(), default_tools());
        let (exit, _) = ended(server, transport).await;
        assert!(matches!(exit.unwrap(), Exit::Shutdown), "{transport:?}");
        drop((input, socket));
    }
}

/// Signals that land while the loop waits, after EOF, for a tool call still running do not cut
/// the grace short: the call is answered. (A stop's `SIGURG`, or any signal, interrupts that
/// wait; here `SIGURG` is sent to the serving thread 20 times while it waits, then the stop
/// comes, all while the call is held at its gate.) The grace is an hour: only the call's
/// reply can end the drain, so a wait cut short by a signal shows as `DrainTimedOut`.
#[tokio::test]
async fn blocking_loop_interrupted_during_its_eof_drain_still_answers() {
    use std::io::{Read, Write};
    for transport in TRANSPORTS {
        let Ends {
            stdio,
            mut input,
            mut output,
            socket,
            ..
        } = ends(transport);
        let stopper = stdio.stopper();
        let gates = Gates::default();
        let mut tools = default_tools();
        tools.register(Gate::new(&gates)).unwrap();
        let config = Config {
            shutdown_grace: Duration::from_secs(3600),
            ..Config::default()
        };
        let (server, thread) = serve_on_thread_with_tid(stdio, config, tools);
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                          "params": init_params("2025-06-18")});
        writeln!(input, "{init}").unwrap();
        writeln!(
            input,
            "{}",
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
        )
        .unwrap();
        writeln!(input, "{}", gate_call(json!("slow"), "slow")).unwrap();
        match &socket {
            Some(socket) => socket.shutdown(std::net::Shutdown::Write).unwrap(),
            None => drop(input),
        }
        // The loop read the call (the tool started); EOF is already there to read, so the
        // next place it blocks is the drain's wait for the held call.
        gates.started("slow").await;
        thread.until_asleep("in the EOF drain").await;
        for i in 0..20 {
            nix::sys::pthread::pthread_kill(thread.pthread, nix::sys::signal::Signal::SIGURG)
                .unwrap();
            // Interrupted, it must go back to waiting (not end the drain).
            thread.until_asleep(&format!("after SIGURG {i}")).await;
        }
        stopper.stop(libc::SIGTERM);
        gates.open("slow");
        let (exit, stopped_by) = ended(server, transport).await;
        assert!(
            matches!(exit.as_ref().unwrap(), Exit::InputClosed),
            "{transport:?}: {exit:?}"
        );
        assert_eq!(stopped_by, Some(libc::SIGTERM));
        let mut rest = String::new();
        output.read_to_string(&mut rest).unwrap();
        let replies: Vec<Value> = rest
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(replies.len(), 2, "{transport:?}: {rest}");
        assert_eq!(replies[1]["id"], "slow", "{transport:?}: {rest}");
        assert_eq!(replies[1]["result"]["content"][0]["text"], "passed slow");
    }
}

/// A client that stops reading blocks the loop in `write(2)`; a stop still ends it, after the
/// grace, as [`Exit::DrainTimedOut`].
#[tokio::test]
async fn blocking_loop_stops_while_blocked_in_write() {
    for transport in TRANSPORTS {
        stops_while_blocked_in_write(transport).await;
    }
}

async fn stops_while_blocked_in_write(transport: Transport) {
    use std::io::Write;
    let Ends {
        stdio,
        mut input,
        output,
        socket,
        probe,
    } = ends(transport);
    let config = Config {
        shutdown_grace: Duration::from_millis(200),
        ..Config::default()
    };
    let stopper = stdio.stopper();
    let mut server = serve_on_thread(stdio, config, default_tools());
    let writer = std::thread::spawn(move || {
        let init = serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                                      "params": init_params("2025-06-18")});
        let _ = writeln!(input, "{init}");
        let _ = writeln!(
            input,
            "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}}"
        );
        // 64 echoes of 16 KiB: 2 MiB of replies against a pipe or socket buffer (64 KiB, a few
        // hundred) nobody reads. Blocks once the server stops reading; ends with an error
        // once the server is gone.
        let text = "x".repeat(16 * 1024);
        for id in 1..=64 {
            let call = serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                                          "params": {"name": "echo", "arguments": {"text": text}}});
            if writeln!(input, "{call}").is_err() {
                break;
            }
        }
    });
    // Full output: the loop's next write cannot go through (it has far more to write).
    probe.until_full(&format!("{transport:?}")).await;
    assert!(
        matches!(server.try_recv(), Err(oneshot::error::TryRecvError::Empty)),
        "{transport:?}: the loop should be stuck writing"
    );
    stopper.stop(libc::SIGTERM);
    let exit = ended(server, transport).await;
    let exit = exit.0.unwrap();
    assert!(
        matches!(exit, Exit::DrainTimedOut),
        "{transport:?}: the loop ended with {exit:?}, not a timed-out drain"
    );
    // The probe holds the server's end open too: the writer only ends once it is gone.
    drop((output, socket, probe));
    writer.join().unwrap();
}

/// EPIPE on the blocking loop's output ends it quietly.
#[tokio::test]
async fn blocking_loop_ends_when_its_output_is_closed() {
    use std::io::Write;
    for transport in TRANSPORTS {
        let mut ends = ends(transport);
        ends.close_output();
        let Ends {
            stdio,
            mut input,
            output,
            socket,
            ..
        } = ends;
        let server = serve_on_thread(stdio, Config::default(), default_tools());
        for i in 0..10 {
            if writeln!(
                input,
                "{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"ping\"}}"
            )
            .is_err()
            {
                break;
            }
        }
        let exit = ended(server, transport).await;
        assert!(
            matches!(exit.0.unwrap(), Exit::OutputClosed),
            "{transport:?}"
        );
        drop((input, output, socket));
    }
}

async fn batches_only_in_2025_03_26() {
    let batch = r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"b"}}},{"jsonrpc":"2.0","id":3,"method":"nope"},{"jsonrpc":"2.0","id":4,"method":"initialize","params":{}},{"id":5},7]"#;
    // Before initialize there is no negotiated version: refused as a whole.
    let mut peer = Peer::start();
    peer.send_raw(format!("{batch}\n").as_bytes()).await;
    let reply = peer.reply().await;
    assert_eq!(error_code(&reply), -32600);
    assert_eq!(reply["id"], Value::Null);

    for version in ["2024-11-05", "2025-06-18", "2025-11-25"] {
        let mut peer = Peer::start();
        peer.handshake(version).await;
        peer.send_raw(format!("{batch}\n").as_bytes()).await;
        let reply = peer.reply().await;
        assert_eq!(error_code(&reply), -32600, "{version}");
        assert!(reply["error"]["message"]
            .as_str()
            .unwrap()
            .contains(version));
    }

    let mut peer = Peer::start();
    peer.handshake("2025-03-26").await;
    peer.send_raw(format!("{batch}\n").as_bytes()).await;
    let reply = peer.reply().await;
    let replies = reply.as_array().unwrap();
    assert_eq!(replies.len(), 6, "{reply}");
    assert_eq!(replies[0], json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
    assert_eq!(replies[1]["result"]["content"][0]["text"], "b");
    assert_eq!(error_code(&replies[2]), -32601);
    assert_eq!(replies[3]["id"], 4);
    assert_eq!(error_code(&replies[3]), -32600);
    assert_eq!(replies[4]["id"], 5);
    assert_eq!(error_code(&replies[4]), -32600);
    assert_eq!(replies[5]["id"], Value::Null);

    // Only notifications: nothing at all is sent back.
    peer.send_raw(
        b"[{\"jsonrpc\":\"2.0\",\"method\":\"a\"},{\"jsonrpc\":\"2.0\",\"method\":\"b\"}]\n",
    )
    .await;
    // An empty batch is one invalid request.
    peer.send_raw(b"[]\n").await;
    let empty = peer.reply().await;
    assert_eq!(error_code(&empty), -32600);
    assert_eq!(empty["id"], Value::Null);
    // A batch with a running tool is answered as one array once all finish.
    peer.send_raw(br#"[{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"gate","arguments":{"gate":"s"}}},{"jsonrpc":"2.0","id":"p","method":"ping"}]
"#)
        .await;
    peer.gates.started("s").await;
    peer.gates.open("s");
    let both = peer.reply().await;
    let ids: Vec<&Value> = both.as_array().unwrap().iter().map(|r| &r["id"]).collect();
    assert_eq!(ids, [&json!("p"), &json!("s")]);
    assert_eq!(both[1]["result"]["content"][0]["text"], "passed s");
}

async fn content_length_framing_over_duplex() {
    for mode in [FramingMode::Auto, FramingMode::ContentLength] {
        let mut peer = Peer::with(Config {
            framing: mode,
            ..Config::default()
        });
        let body = r#"{"jsonrpc":"2.0","id":"你好","method":"ping"}"#;
        peer.send_raw(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes())
            .await;
        let expected = r#"{"jsonrpc":"2.0","id":"你好","result":{}}"#;
        peer.write.shutdown().await.unwrap();
        // A pipe ends when its write end closes.
        drop(peer.write);
        let mut raw = Vec::new();
        let mut reader = peer.lines.into_inner();
        tokio::time::timeout(WAIT, reader.read_to_end(&mut raw))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            String::from_utf8(raw).unwrap(),
            format!("Content-Length: {}\r\n\r\n{expected}", expected.len()),
            "{mode:?}"
        );
    }
}

async fn oversize_message_is_refused_and_the_next_one_served() {
    let mut peer = Peer::with(Config {
        max_message_bytes: 256,
        ..Config::default()
    });
    let big = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{{\"x\":\"{}\"}}}}\n",
        "a".repeat(1000)
    );
    peer.send_raw(big.as_bytes()).await;
    let reply = peer.reply().await;
    assert_eq!(error_code(&reply), -32600);
    assert_eq!(reply["error"]["data"]["maxMessageBytes"], 256);
    let ping = peer.request(json!(2), "ping", json!({})).await;
    assert_eq!(ping["result"], json!({}));
}

async fn modern_requests_are_cancellable_and_need_no_handshake() {
    let mut peer = Peer::start();
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let mut slow = gate_call(json!("m-slow"), "m-slow");
    slow["params"]["_meta"] = meta.clone();
    peer.send(slow).await;
    peer.gates.started("m-slow").await;
    peer.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                     "params": {"requestId": "m-slow", "_meta": meta.clone()}}),
    )
    .await;
    // Aborted: the call's future is dropped before it passed its gate.
    peer.gates.dropped("m-slow").await;
    peer.gates.open("m-slow");
    let mut fast = gate_call(json!("m-fast"), "m-fast");
    fast["params"]["_meta"] = meta;
    peer.gates.open("m-fast");
    peer.send(fast).await;
    let reply = peer.reply().await;
    assert_eq!(reply["id"], "m-fast", "{reply}");
    assert_eq!(reply["result"]["resultType"], "complete");
    assert_eq!(reply["result"]["content"][0]["text"], "passed m-fast");
    let (rest, _) = peer.finish().await;
    assert!(
        rest.is_empty(),
        "the cancelled modern request must get no reply: {rest:?}"
    );
}

/// Runs each named test on both serve loops: `<name>::async_loop`, `<name>::blocking_loop`
/// (pipes) and `<name>::blocking_loop_on_a_socket`.
macro_rules! on_both_loops {
    ($($name:ident),* $(,)?) => {$(
        mod $name {
            #[tokio::test]
            async fn async_loop() {
                super::LOOP.with(|l| l.set(super::Loop::Async));
                super::$name().await;
            }

            #[tokio::test]
            async fn blocking_loop() {
                super::LOOP.with(|l| l.set(super::Loop::Blocking));
                super::$name().await;
            }

            #[tokio::test]
            async fn blocking_loop_on_a_socket() {
                super::LOOP.with(|l| l.set(super::Loop::BlockingSocket));
                super::$name().await;
            }
        }
    )*};
}

on_both_loops!(
    full_handshake_and_echo,
    version_negotiation_and_fields_per_version,
    gating_before_ready,
    error_layering_with_exact_codes_and_ids,
    tool_argument_failures_are_results_with_is_error,
    notifications_and_responses_get_no_reply,
    ids_are_echoed_exactly,
    replies_may_overtake_slow_requests,
    many_concurrent_slow_requests_each_answered_once,
    cancelled_request_gets_no_reply,
    duplicate_in_flight_id_is_refused,
    eof_answers_everything_already_read,
    shutdown_signal_answers_what_was_read_then_exits,
    batches_only_in_2025_03_26,
    content_length_framing_over_duplex,
    oversize_message_is_refused_and_the_next_one_served,
    modern_requests_are_cancellable_and_need_no_handshake,
);
