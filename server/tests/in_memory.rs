//! The server's scenarios over every transport it has: stdio on the async loop over an
//! in-memory duplex, OS pipes and a socketpair, stdio on the blocking loop over OS pipes, and
//! Streamable HTTP on a loopback port. The same scenario, through each driver of the one
//! protocol core, must get the same replies (`on_transports!` at the end); what only stdio has
//! (framing, EOF, signals, a closed output) runs on its four. Then the blocking
//! loop's own cases: how it stops, drains and ends.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use http_body_util::BodyExt;
use mcp_echo_server::stdio::Socket;
use mcp_echo_server::{
    default_tools, serve, serve_blocking, serve_http_on, BlockingStdio, Config, Exit, HttpConfig,
    Tool, ToolCall, ToolSet,
};
use mcp_protocol::mcp::{self, CallToolResult};
use mcp_protocol::FramingMode;
use serde_json::{json, Map, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};

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

/// How a [`Peer`] reaches the server: the transports every scenario runs over.
#[derive(Debug, Clone, Copy)]
enum Transport {
    /// `serve` over an in-memory duplex.
    Duplex,
    /// `serve` over two OS pipes, on the reactor (Python, Rust, Go hosts).
    Pipes,
    /// `serve` over one end of a socketpair as input and output, read and written with
    /// `MSG_DONTWAIT` (Node-based hosts).
    Socket,
    /// `serve_blocking` on a thread of its own over two OS pipes: what the binary runs when
    /// stdin and stdout are pipes.
    Blocking,
    /// `serve_http` on a loopback port: each message is a POST of its own, replies come in
    /// JSON bodies or on SSE streams.
    Http,
}

thread_local! {
    static TRANSPORT: std::cell::Cell<Transport> = const { std::cell::Cell::new(Transport::Duplex) };
}

/// The client side of a test: it sends messages and reads the server's, one JSON text each,
/// in the order the server sent them (over HTTP: as they arrive on the POSTs' responses).
struct Peer {
    io: Io,
    /// The gates of the `gate` tool, if [`Peer::with`] registered it.
    gates: Gates,
}

enum Io {
    Stream(Stream),
    Http(Box<Http>),
}

/// A stdio connection: lines both ways.
struct Stream {
    lines: tokio::io::Lines<BufReader<Box<dyn AsyncRead + Unpin + Send>>>,
    write: Box<dyn AsyncWrite + Unpin + Send>,
    /// How the server ended. A oneshot, not a `JoinHandle`, so a hang fails the test by
    /// timing out.
    server: oneshot::Receiver<std::io::Result<Exit>>,
    /// Sending on it (or dropping it unsent: nothing) is the test's SIGTERM.
    stop: Option<oneshot::Sender<()>>,
}

/// A Streamable HTTP client of one session: each message a POST; what the server sends back,
/// from every POST, goes to `replies`.
struct Http {
    url: String,
    client: HttpClient,
    session: Arc<std::sync::Mutex<Option<String>>>,
    replies_tx: mpsc::UnboundedSender<String>,
    replies: mpsc::UnboundedReceiver<String>,
    /// The tasks reading the POSTs' bodies.
    bodies: tokio::task::JoinSet<()>,
    server: tokio::task::JoinHandle<std::io::Result<Exit>>,
    stop: Option<oneshot::Sender<()>>,
}

type HttpClient = hyper_util::client::legacy::Client<
    hyper_util::client::legacy::connect::HttpConnector,
    http_body_util::Full<bytes::Bytes>,
>;

impl Peer {
    fn start() -> Peer {
        Peer::with(Config::default())
    }

    /// With the `gate` tool and the `roots` tool (which asks the client for its roots).
    fn with(config: Config) -> Peer {
        let gates = Gates::default();
        let mut tools = default_tools();
        tools.register(Gate::new(&gates)).unwrap();
        tools.register(Roots::new()).unwrap();
        Peer {
            gates,
            ..Peer::with_tools(config, tools)
        }
    }

    fn with_tools(config: Config, tools: ToolSet) -> Peer {
        let tools = Arc::new(tools);
        let io = match TRANSPORT.with(std::cell::Cell::get) {
            Transport::Duplex => Io::Stream(Stream::duplex(config, tools)),
            Transport::Pipes => Io::Stream(Stream::pipes(config, tools)),
            Transport::Socket => Io::Stream(Stream::socket(config, tools)),
            Transport::Blocking => Io::Stream(Stream::blocking(config, tools)),
            Transport::Http => Io::Http(Box::new(Http::start(tools))),
        };
        Peer {
            io,
            gates: Gates::default(),
        }
    }

    /// The stdio connection (for scenarios that only stdio has).
    fn stream(&mut self) -> &mut Stream {
        match &mut self.io {
            Io::Stream(stream) => stream,
            Io::Http(_) => panic!("a stdio-only scenario ran over HTTP"),
        }
    }

    /// Sends bytes as they are: a line on stdio, a POST body over HTTP.
    async fn send_raw(&mut self, bytes: &[u8]) {
        match &mut self.io {
            Io::Stream(s) => s.write.write_all(bytes).await.unwrap(),
            Io::Http(h) => h.post(bytes.trim_ascii_end().to_vec()).await,
        }
    }

    async fn send(&mut self, message: Value) {
        let mut line = serde_json::to_vec(&message).unwrap();
        line.push(b'\n');
        self.send_raw(&line).await;
    }

    /// The next message the server sent, as sent.
    async fn line(&mut self) -> String {
        let next = match &mut self.io {
            Io::Stream(s) => tokio::time::timeout(WAIT, s.lines.next_line())
                .await
                .map(|line| line.unwrap()),
            Io::Http(h) => tokio::time::timeout(WAIT, h.replies.recv()).await,
        };
        next.expect("no reply within 10 s").expect("output closed")
    }

    async fn reply(&mut self) -> Value {
        let line = self.line().await;
        serde_json::from_str(&line).unwrap()
    }

    /// The replies to a batch with `n` replies: one array on stdio (and in a JSON body), one
    /// SSE event each on a stream (`basic/transports.mdx`, 2025-03-26).
    async fn batch_reply(&mut self, n: usize) -> Vec<Value> {
        let mut replies = Vec::new();
        while replies.len() < n {
            match self.reply().await {
                Value::Array(all) => replies.extend(all),
                one => replies.push(one),
            }
        }
        assert_eq!(replies.len(), n, "{replies:?}");
        replies
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
        self.handshake_declaring(version, json!({})).await;
    }

    /// The handshake, declaring `capabilities` for the client.
    async fn handshake_declaring(&mut self, version: &str, capabilities: Value) {
        let mut params = init_params(version);
        params["capabilities"] = capabilities;
        let reply = self.request(json!(0), "initialize", params).await;
        assert_eq!(reply["result"]["protocolVersion"], version);
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
    }

    /// Closes input (stdio), or waits for every POST to be answered and stops the server
    /// (HTTP); returns what the server still sent. The server must end cleanly: at the end of
    /// its input (stdio), or on its shutdown signal (HTTP).
    async fn finish(self) -> Vec<String> {
        match self.io {
            Io::Stream(s) => {
                let (rest, exit) = s.finish(|| {}).await;
                assert!(matches!(exit, Exit::InputClosed), "{exit:?}");
                rest
            }
            Io::Http(h) => {
                let (rest, exit) = h.finish().await;
                assert!(matches!(exit, Exit::Shutdown), "{exit:?}");
                rest
            }
        }
    }

    /// Closes stdio input, calls `then` right after (to open a gate only once the server's
    /// input has ended), and returns what the server still wrote and how it ended.
    async fn finish_then(self, then: impl FnOnce(&Gates)) -> (Vec<String>, Exit) {
        match self.io {
            Io::Stream(s) => s.finish(|| then(&self.gates)).await,
            Io::Http(_) => panic!("a stdio-only scenario ran over HTTP"),
        }
    }
}

impl Stream {
    fn duplex(config: Config, tools: Arc<ToolSet>) -> Stream {
        let (client, server) = tokio::io::duplex(1 << 16);
        let (server_read, server_write) = tokio::io::split(server);
        let (read, write) = tokio::io::split(client);
        Stream::serving(server_read, server_write, read, write, config, tools)
    }

    fn pipes(config: Config, tools: Arc<ToolSet>) -> Stream {
        use tokio::net::unix::pipe;
        let (server_read, client_write) = os_pipe();
        let (client_read, server_write) = os_pipe();
        Stream::serving(
            pipe::Receiver::from_file(server_read).unwrap(),
            pipe::Sender::from_file(server_write).unwrap(),
            pipe::Receiver::from_file(client_read).unwrap(),
            pipe::Sender::from_file(client_write).unwrap(),
            config,
            tools,
        )
    }

    fn socket(config: Config, tools: Arc<ToolSet>) -> Stream {
        let (client, server) = std::os::unix::net::UnixStream::pair().unwrap();
        let server_read = Socket::new(server.try_clone().unwrap().into()).unwrap();
        let server_write = Socket::new(server.into()).unwrap();
        client.set_nonblocking(true).unwrap();
        let (read, write) = tokio::net::UnixStream::from_std(client)
            .unwrap()
            .into_split();
        Stream::serving(server_read, server_write, read, write, config, tools)
    }

    /// `serve_blocking` on a thread of its own over two OS pipes.
    fn blocking(config: Config, tools: Arc<ToolSet>) -> Stream {
        let Ends {
            stdio,
            input,
            output,
            ..
        } = ends();
        let (stop, stopped) = oneshot::channel::<()>();
        let stopper = stdio.stopper();
        tokio::spawn(async move {
            if stopped.await.is_ok() {
                stopper.stop(libc::SIGTERM);
            }
        });
        let (tx, served) = oneshot::channel();
        std::thread::spawn(move || {
            let exit = serve_blocking(&stdio, &config, tools);
            let _ = tx.send((exit, stdio.stopped_by()));
        });
        use tokio::net::unix::pipe;
        let read = pipe::Receiver::from_file(output).unwrap();
        Stream {
            lines: BufReader::new(Box::new(read) as Box<dyn AsyncRead + Unpin + Send>).lines(),
            write: Box::new(pipe::Sender::from_file(input).unwrap()),
            server: async_exit(served),
            stop: Some(stop),
        }
    }

    /// `serve` in a task of its own over the server's ends; the client's ends to the test.
    fn serving<R, W>(
        server_read: impl AsyncRead + Unpin + Send + 'static,
        server_write: impl AsyncWrite + Unpin + Send + 'static,
        read: R,
        write: W,
        config: Config,
        tools: Arc<ToolSet>,
    ) -> Stream
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (stop, stopped) = oneshot::channel::<()>();
        let (done, server) = oneshot::channel();
        tokio::spawn(async move {
            let shutdown = async move {
                let _ = stopped.await;
            };
            let exit = serve(server_read, server_write, &config, tools, shutdown).await;
            let _ = done.send(exit);
        });
        Stream {
            lines: BufReader::new(Box::new(read) as Box<dyn AsyncRead + Unpin + Send>).lines(),
            write: Box::new(write),
            server,
            stop: Some(stop),
        }
    }

    async fn finish(mut self, then: impl FnOnce()) -> (Vec<String>, Exit) {
        self.write.shutdown().await.unwrap();
        drop(self.write);
        then();
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

impl Http {
    fn start(tools: Arc<ToolSet>) -> Http {
        let std_listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        std_listener.set_nonblocking(true).unwrap();
        let addr = std_listener.local_addr().unwrap();
        let listener = tokio::net::TcpListener::from_std(std_listener).unwrap();
        let (stop, stopped) = oneshot::channel::<()>();
        let server = tokio::spawn(async move {
            let shutdown = async move {
                let _ = stopped.await;
            };
            serve_http_on(listener, HttpConfig::default(), tools, shutdown).await
        });
        let client =
            hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
                .build_http();
        let (replies_tx, replies) = mpsc::unbounded_channel();
        Http {
            url: format!("http://{addr}/mcp"),
            client,
            session: Arc::default(),
            replies_tx,
            replies,
            bodies: tokio::task::JoinSet::new(),
            server,
            stop: Some(stop),
        }
    }

    /// POSTs `body` and waits for the response's head: by then the server has handed the
    /// message to its core, so messages are handled in the order they are sent, as on stdio.
    /// The body is read on: each JSON-RPC message in it goes to `replies`.
    async fn post(&mut self, body: Vec<u8>) {
        let mut request = hyper::Request::post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        if let Some(session) = self.session.lock().unwrap().clone() {
            request = request.header("mcp-session-id", session);
        }
        let request = request
            .body(http_body_util::Full::new(bytes::Bytes::from(body)))
            .unwrap();
        let response = tokio::time::timeout(WAIT, self.client.request(request))
            .await
            .expect("no response head within 10 s")
            .unwrap();
        if let Some(session) = response.headers().get("mcp-session-id") {
            *self.session.lock().unwrap() = Some(session.to_str().unwrap().to_owned());
        }
        let sse = response
            .headers()
            .get("content-type")
            .is_some_and(|t| t.as_bytes().starts_with(b"text/event-stream"));
        let replies = self.replies_tx.clone();
        self.bodies.spawn(async move {
            let mut body = response.into_body();
            let mut events = mcp_protocol::http::SseReader::new(1 << 20);
            let mut json = Vec::new();
            while let Some(frame) = body.frame().await {
                let Ok(data) = frame.unwrap().into_data() else {
                    continue;
                };
                if !sse {
                    json.extend_from_slice(&data);
                    continue;
                }
                let mut got = Vec::new();
                events.feed(&data, &mut got).unwrap();
                for event in got {
                    let _ = replies.send(event.data);
                }
            }
            if !json.is_empty() {
                let _ = replies.send(String::from_utf8(json).unwrap());
            }
        });
    }

    async fn finish(mut self) -> (Vec<String>, Exit) {
        tokio::time::timeout(WAIT, async {
            while let Some(done) = self.bodies.join_next().await {
                done.unwrap();
            }
        })
        .await
        .expect("a POST's response did not end within 10 s");
        let mut rest = Vec::new();
        while let Ok(line) = self.replies.try_recv() {
            rest.push(line);
        }
        let _ = self.stop.take().map(|stop| stop.send(()));
        let exit = tokio::time::timeout(WAIT, self.server)
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        (rest, exit)
    }
}

fn os_pipe() -> (std::fs::File, std::fs::File) {
    let (read, write) = nix::unistd::pipe().unwrap();
    (read.into(), write.into())
}

/// A test tool that asks the client for its roots (`roots/list`) and answers with what it
/// got, as JSON text; or with the error, as an `isError` result.
struct Roots(mcp::Tool);

impl Roots {
    fn new() -> Self {
        Roots(mcp::Tool {
            name: "roots".into(),
            title: None,
            description: None,
            input_schema: json!({"type": "object"}),
            output_schema: None,
            annotations: None,
        })
    }
}

impl Tool for Roots {
    fn definition(&self) -> &mcp::Tool {
        &self.0
    }
    fn call(&self, _: Map<String, Value>) -> ToolCall {
        ToolCall::Asking(Box::new(|peer| {
            async move {
                match peer.request("roots/list", None).await {
                    Ok(roots) => CallToolResult::text(roots.to_string()),
                    Err(e) => CallToolResult::error(e.to_string()),
                }
            }
            .boxed()
        }))
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
    let rest = peer.finish().await;
    assert!(rest.is_empty(), "{rest:?}");
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

/// Before `initialize` (stdio: over HTTP a request without a session gets 400, tested with
/// the binary).
async fn requests_before_initialize() {
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
    peer.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    peer.send(json!({"jsonrpc": "2.0", "method": "notifications/whatever", "params": {}}))
        .await;
    let ping = peer.request(json!(4), "ping", json!({})).await;
    assert_eq!(
        ping["id"], 4,
        "notifications before initialize get no reply: {ping}"
    );
    assert!(peer.finish().await.is_empty());
}

async fn gating_before_ready() {
    let mut peer = Peer::start();
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
    let parse = peer.reply().await;
    assert_eq!(error_code(&parse), -32700);
    assert_eq!(parse["id"], Value::Null, "{parse}");
    assert_eq!(
        parse["error"]["message"],
        "Parse error: EOF while parsing an object at line 1 column 40"
    );
    let ping = peer.request(json!(32), "ping", json!({})).await;
    assert_eq!(ping["result"], json!({}));
}

/// A reply about a frame that is not JSON, byte for byte (over HTTP it is the body of a 400,
/// with no id member: tested with the binary).
async fn parse_error_reply_bytes() {
    let mut peer = Peer::start();
    peer.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":31,\"method\":\"ping\"\n")
        .await;
    assert_eq!(
        peer.line().await,
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: EOF while parsing an object at line 1 column 40"}}"#
    );
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
    peer.initialize("2025-06-18").await;
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
    let rest = peer.finish().await;
    assert!(rest.is_empty(), "{rest:?}");
}

async fn ids_are_echoed_exactly() {
    let mut peer = Peer::start();
    peer.initialize("2025-06-18").await;
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
    let rest = peer.finish().await;
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
    let rest = peer.finish().await;
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
    let _ = peer.stream().stop.take().unwrap().send(());
    peer.gates.open("slow");
    let reply = peer.reply().await;
    assert_eq!(reply["id"], "slow");
    assert_eq!(reply["result"]["content"][0]["text"], "passed slow");
    let exit = tokio::time::timeout(WAIT, &mut peer.stream().server)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(matches!(exit, Exit::Shutdown), "{exit:?}");
}

async fn a_call_asks_the_client_and_gets_its_answer() {
    let mut peer = Peer::start();
    peer.handshake_declaring("2025-06-18", json!({"roots": {}}))
        .await;
    peer.send(json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                     "params": {"name": "roots", "arguments": {}}}))
        .await;
    let request = peer.reply().await;
    assert_eq!(request["method"], "roots/list", "{request}");
    assert!(
        request["id"].is_number() || request["id"].is_string(),
        "{request}"
    );
    assert!(request.get("params").is_none(), "{request}");
    peer.send(json!({"jsonrpc": "2.0", "id": request["id"],
                     "result": {"roots": [{"uri": "file:///work", "name": "work"}]}}))
        .await;
    let reply = peer.reply().await;
    assert_eq!(reply["id"], 5);
    assert_eq!(
        reply["result"]["content"][0]["text"],
        r#"{"roots":[{"name":"work","uri":"file:///work"}]}"#
    );
    let rest = peer.finish().await;
    assert!(rest.is_empty(), "{rest:?}");
}

async fn a_call_cannot_ask_what_the_client_did_not_declare() {
    let mut peer = Peer::start();
    peer.handshake("2025-06-18").await;
    let reply = peer
        .request(
            json!(6),
            "tools/call",
            json!({"name": "roots", "arguments": {}}),
        )
        .await;
    assert_eq!(reply["id"], 6);
    assert_eq!(reply["result"]["isError"], true, "{reply}");
    assert_eq!(
        reply["result"]["content"][0]["text"],
        "the client did not declare the `roots` capability that roots/list needs"
    );
}

#[tokio::test]
async fn shutdown_is_bounded_when_nobody_reads() {
    let config = Config {
        shutdown_grace: Duration::from_millis(200),
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
/// A batch before `initialize` (stdio: over HTTP a message without a session gets 400).
async fn batch_before_initialize() {
    let mut peer = Peer::start();
    peer.send_raw(format!("{BATCH}\n").as_bytes()).await;
    let reply = peer.reply().await;
    assert_eq!(error_code(&reply), -32600);
    assert_eq!(reply["id"], Value::Null);
}

const BATCH: &str = r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"b"}}},{"jsonrpc":"2.0","id":3,"method":"nope"},{"jsonrpc":"2.0","id":4,"method":"initialize","params":{}},{"id":5},7]"#;

async fn batches_only_in_2025_03_26() {
    let batch = BATCH;
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
    let both = peer.batch_reply(2).await;
    let ids: Vec<&Value> = both.iter().map(|r| &r["id"]).collect();
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
        let Io::Stream(stream) = peer.io else {
            panic!("stdio only");
        };
        let mut write = stream.write;
        write.shutdown().await.unwrap();
        // A pipe ends when its write end closes.
        drop(write);
        let mut raw = Vec::new();
        let mut reader = stream.lines.into_inner();
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
    let rest = peer.finish().await;
    assert!(
        rest.is_empty(),
        "the cancelled modern request must get no reply: {rest:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// The blocking loop (what the binary runs on pipes): how it stops, drains and ends.
// ---------------------------------------------------------------------------------------------

/// A blocking loop's pipes and the client's ends of them.
struct Ends {
    stdio: BlockingStdio,
    /// The client's end of the server's input.
    input: std::fs::File,
    /// The client's end of the server's output.
    output: std::fs::File,
    /// Tells when the server's output is full.
    probe: OutputProbe,
}

/// Tells whether the server's output can take one more byte, by trying to write one there
/// without blocking: the server's output pipe, opened anew (through `/proc/self/fd`) with
/// `O_NONBLOCK` on an open file description of the probe's own. A byte that fits is added to
/// the output: only for tests that never read what the server writes.
struct OutputProbe(std::fs::File);

impl OutputProbe {
    fn of_pipe(write_end: &std::fs::File) -> OutputProbe {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::OpenOptionsExt;
        let file = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(format!("/proc/self/fd/{}", write_end.as_raw_fd()))
            .unwrap();
        OutputProbe(file)
    }

    /// True once a write to the output would block: nobody reads it and it holds all it can.
    fn full(&self) -> bool {
        use std::io::Write;
        match (&self.0).write(b"\n").map_err(|e| e.kind()) {
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
        drop(std::mem::replace(&mut self.output, os_pipe().0));
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
async fn ended<T>(server: oneshot::Receiver<T>) -> T {
    tokio::time::timeout(WAIT, server)
        .await
        .unwrap_or_else(|_| panic!("the blocking loop did not end within {WAIT:?}"))
        .unwrap_or_else(|_| panic!("the serving thread dropped its result"))
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

fn ends() -> Ends {
    let (server_read, input) = os_pipe();
    let (output, server_write) = os_pipe();
    let probe = OutputProbe::of_pipe(&server_write);
    Ends {
        stdio: BlockingStdio::new(server_read, server_write).unwrap(),
        input,
        output,
        probe,
    }
}

/// A stop while the blocking loop sits in `read(2)` with nothing in flight (no poll, no task
/// to wake it) ends it: the stop interrupts the read.
#[tokio::test]
async fn blocking_loop_stops_while_blocked_in_read() {
    use std::io::{BufRead, Write};
    let Ends {
        stdio,
        mut input,
        output,
        ..
    } = ends();
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
    let (exit, stopped_by) = ended(server).await;
    assert!(matches!(exit.unwrap(), Exit::Shutdown));
    assert_eq!(stopped_by, Some(libc::SIGTERM));
    // Input stays open to the end: only the stop could have ended the loop.
    drop(input);
}

/// A stop that comes before the loop starts is not lost.
#[tokio::test]
async fn blocking_loop_stopped_before_it_starts() {
    let Ends { stdio, input, .. } = ends();
    stdio.stopper().stop(libc::SIGINT);
    let server = serve_on_thread(stdio, Config::default(), default_tools());
    let (exit, _) = ended(server).await;
    assert!(matches!(exit.unwrap(), Exit::Shutdown));
    drop(input);
}

/// Signals that land while the loop waits, after EOF, for a tool call still running do not cut
/// the grace short: the call is answered. (A stop's `SIGURG`, or any signal, interrupts that
/// wait; here `SIGURG` is sent to the serving thread 20 times while it waits, then the stop
/// comes, all while the call is held at its gate.) The grace is an hour: only the call's
/// reply can end the drain, so a wait cut short by a signal shows as `DrainTimedOut`.
#[tokio::test]
async fn blocking_loop_interrupted_during_its_eof_drain_still_answers() {
    use std::io::{Read, Write};
    let Ends {
        stdio,
        mut input,
        mut output,
        ..
    } = ends();
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
    drop(input);
    // The loop read the call (the tool started); EOF is already there to read, so the next
    // place it blocks is the drain's wait for the held call.
    gates.started("slow").await;
    thread.until_asleep("in the EOF drain").await;
    for i in 0..20 {
        nix::sys::pthread::pthread_kill(thread.pthread, nix::sys::signal::Signal::SIGURG).unwrap();
        // Interrupted, it must go back to waiting (not end the drain).
        thread.until_asleep(&format!("after SIGURG {i}")).await;
    }
    stopper.stop(libc::SIGTERM);
    gates.open("slow");
    let (exit, stopped_by) = ended(server).await;
    assert!(
        matches!(exit.as_ref().unwrap(), Exit::InputClosed),
        "{exit:?}"
    );
    assert_eq!(stopped_by, Some(libc::SIGTERM));
    let mut rest = String::new();
    output.read_to_string(&mut rest).unwrap();
    let replies: Vec<Value> = rest
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(replies.len(), 2, "{rest}");
    assert_eq!(replies[1]["id"], "slow", "{rest}");
    assert_eq!(replies[1]["result"]["content"][0]["text"], "passed slow");
}

/// A client that stops reading blocks the loop in `write(2)`; a stop still ends it, after the
/// grace, as [`Exit::DrainTimedOut`].
#[tokio::test]
async fn blocking_loop_stops_while_blocked_in_write() {
    use std::io::Write;
    let Ends {
        stdio,
        mut input,
        output,
        probe,
    } = ends();
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
        // 64 echoes of 16 KiB: 2 MiB of replies against a pipe buffer nobody reads. Blocks
        // once the server stops reading; ends with an error once the server is gone.
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
    probe.until_full("the output pipe").await;
    assert!(
        matches!(server.try_recv(), Err(oneshot::error::TryRecvError::Empty)),
        "the loop should be stuck writing"
    );
    stopper.stop(libc::SIGTERM);
    let exit = ended(server).await.0.unwrap();
    assert!(
        matches!(exit, Exit::DrainTimedOut),
        "the loop ended with {exit:?}, not a timed-out drain"
    );
    // The probe holds the server's end open too: the writer only ends once it is gone.
    drop((output, probe));
    writer.join().unwrap();
}

/// EPIPE on the blocking loop's output ends it quietly.
#[tokio::test]
async fn blocking_loop_ends_when_its_output_is_closed() {
    use std::io::Write;
    let mut ends = ends();
    ends.close_output();
    let Ends {
        stdio,
        mut input,
        output,
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
    let exit = ended(server).await;
    assert!(matches!(exit.0.unwrap(), Exit::OutputClosed));
    drop((input, output));
}

/// A module per scenario named, with a test per transport listed: `<name>::<transport>`.
macro_rules! on_transports {
    ($transports:tt; $($name:ident),* $(,)?) => {$(
        scenario_tests!($name $transports);
    )*};
}

macro_rules! scenario_tests {
    ($name:ident [$($test:ident: $transport:ident),*]) => {
        mod $name {
            $(
                #[tokio::test]
                async fn $test() {
                    super::TRANSPORT.with(|t| t.set(super::Transport::$transport));
                    super::$name().await;
                }
            )*
        }
    };
}

// Every transport.
on_transports!(
    [duplex: Duplex, pipes: Pipes, socket: Socket, blocking: Blocking, http: Http];
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
    batches_only_in_2025_03_26,
    a_call_asks_the_client_and_gets_its_answer,
    a_call_cannot_ask_what_the_client_did_not_declare,
);

// What only stdio has.
on_transports!(
    [duplex: Duplex, pipes: Pipes, socket: Socket, blocking: Blocking];
    requests_before_initialize,
    parse_error_reply_bytes,
    batch_before_initialize,
    eof_answers_everything_already_read,
    shutdown_signal_answers_what_was_read_then_exits,
    content_length_framing_over_duplex,
    oversize_message_is_refused_and_the_next_one_served,
    modern_requests_are_cancellable_and_need_no_handshake,
);
