//! The server's dispatch invariants: `mcp_echo_server::serve` in-process over a tokio duplex
//! and over a socketpair read and written as the binary reads and writes a socket, and
//! `serve_blocking` (the loop the binary runs on pipes) over two OS pipes.
//!
//! A scenario is a server configuration (framing, small message limit, duplex
//! sizes, optionally a `slow` tool whose calls are still running when later messages arrive) and
//! a stream of frames built from the input: initialize (good and bad), initialized, tools/list,
//! tools/call echo (good and bad arguments), ping, unknown methods, modern (2026-07-28) requests,
//! cancellations, unknown notifications, responses sent to the server, batches, bad ids, raw
//! bytes, mutated messages and over-long messages. The stream is written in chunks, input is
//! closed, and everything the server wrote is read. Asserted:
//!
//! 1. `serve` ends with `Exit::InputClosed` (everything read was answered and flushed).
//! 2. The output is nothing but frames in the connection's framing, each a response or a batch
//!    of responses.
//! 3. Every frame the server read (decoded here with the same codec settings) is answered as
//!    JSON-RPC says: a request that parses gets exactly one response with its exact id; a bad
//!    frame gets one error with the id it carried (or null) and the code its error maps to,
//!    unless it was an attempted response; notifications and responses, valid or not, get none; a batch gets one array with one response per
//!    request or invalid member (or one -32600 when batches are not accepted). Without the slow
//!    tool every reply is ready at once, so the replies must also come in input order. With it,
//!    a request that a later `notifications/cancelled` names may get no reply (zero or one).
//! 4. A successful echo returns its text unchanged.
//! 5. Every transport is checked alike, and without the slow tool (replies in input order)
//!    they must write the same bytes.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use bytes::BytesMut;
use futures::FutureExt;
use mcp_echo_server::{
    default_tools, serve, serve_blocking, BlockingStdio, Config, Exit, Tool, ToolCall, ToolSet,
};
use mcp_protocol::codec::DecodedFrame;
use mcp_protocol::mcp::{self, CallToolResult, CancelledParams, ProtocolVersion};
use mcp_protocol::{
    ErrorCode, Framing, FramingMode, Incoming, Message, RequestId, Response, StdioCodec,
};
use serde_json::{json, Map, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::codec::Decoder;

use crate::input::{chunk, Input, Rng};

/// A tool whose calls are still running after a few scheduler turns: `{"yields": n}`.
struct Slow(mcp::Tool);

impl Slow {
    fn new() -> Self {
        Slow(mcp::Tool {
            name: "slow".into(),
            title: None,
            description: None,
            input_schema: json!({"type": "object"}),
            output_schema: None,
            annotations: None,
        })
    }
}

impl Tool for Slow {
    fn definition(&self) -> &mcp::Tool {
        &self.0
    }

    fn call(&self, arguments: Map<String, Value>) -> ToolCall {
        let n = arguments
            .get("yields")
            .and_then(Value::as_u64)
            .unwrap_or(0)
            .min(64);
        ToolCall::Pending(
            async move {
                for _ in 0..n {
                    tokio::task::yield_now().await;
                }
                CallToolResult::text(format!("yielded {n}"))
            }
            .boxed(),
        )
    }
}

/// One server configuration and one input stream.
#[derive(Debug, Clone)]
pub struct Scenario {
    pub framing: FramingMode,
    pub max_message: usize,
    pub max_header: usize,
    pub slow_tool: bool,
    pub duplex: usize,
    pub chunk_seed: u64,
    pub chunk_max: usize,
    pub stream: Vec<u8>,
}

const VERSIONS: &[&str] = &[
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    "2026-07-28",
    "1999-01-01",
    "",
];

/// Builds frames from the input.
struct Gen<'a, 'b> {
    input: &'b mut Input<'a>,
    next: u64,
    ids: Vec<Value>,
    max_message: usize,
    slow_tool: bool,
}

impl Gen<'_, '_> {
    fn id(&mut self) -> Value {
        let id = match self.input.byte() % 10 {
            0..=3 => {
                self.next += 1;
                json!(self.next)
            }
            4 | 5 => {
                self.next += 1;
                json!(format!("r{}", self.next))
            }
            6 => json!(self.input.below(4)),
            7 => json!(u64::MAX - self.input.below(3) as u64),
            8 => json!(-(self.input.below(1000) as i64) - 1),
            _ => json!(self.input.text(6)),
        };
        self.ids.push(id.clone());
        id
    }

    fn request(&mut self, method: &str, params: Option<Value>) -> Value {
        let mut m = json!({"jsonrpc": "2.0", "id": self.id(), "method": method});
        if let Some(p) = params {
            m["params"] = p;
        }
        m
    }

    fn notification(method: &str, params: Option<Value>) -> Value {
        let mut m = json!({"jsonrpc": "2.0", "method": method});
        if let Some(p) = params {
            m["params"] = p;
        }
        m
    }

    fn init_params(&mut self) -> Value {
        json!({
            "protocolVersion": *self.input.pick(VERSIONS),
            "capabilities": {},
            "clientInfo": {"name": "fuzz", "version": "1"}
        })
    }

    fn modern_meta(&mut self) -> Value {
        match self.input.byte() % 6 {
            0 => json!({"io.modelcontextprotocol/protocolVersion": "2025-11-25",
                        "io.modelcontextprotocol/clientCapabilities": {}}),
            1 => json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"}),
            2 => json!({"io.modelcontextprotocol/protocolVersion": 5,
                        "io.modelcontextprotocol/clientCapabilities": {}}),
            3 => json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                        "io.modelcontextprotocol/clientCapabilities": {},
                        "io.modelcontextprotocol/logLevel": "loud"}),
            _ => json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                        "io.modelcontextprotocol/clientCapabilities": {},
                        "io.modelcontextprotocol/clientInfo": {"name": "fuzz", "version": "1"}}),
        }
    }

    fn tool_call(&mut self) -> Value {
        if self.slow_tool && self.input.bool() {
            json!({"name": "slow", "arguments": {"yields": self.input.below(16)}})
        } else {
            json!({"name": "echo", "arguments": {"text": self.input.text(16)}})
        }
    }

    /// One message (as JSON) or raw bytes.
    fn message(&mut self, in_batch: bool) -> Result<Value, Vec<u8>> {
        let choice = self.input.byte() % if in_batch { 14 } else { 19 };
        Ok(match choice {
            0 => {
                let p = self.init_params();
                self.request("initialize", Some(p))
            }
            1 => Self::notification("notifications/initialized", None),
            2 => {
                let p = [
                    None,
                    Some(json!({})),
                    Some(json!({"cursor": "x"})),
                    Some(json!("s")),
                ];
                let p = self.input.pick(&p).clone();
                self.request("tools/list", p)
            }
            3 | 4 => {
                let p = self.tool_call();
                self.request("tools/call", Some(p))
            }
            5 => {
                let args = [
                    json!({"name": "echo", "arguments": {}}),
                    json!({"name": "echo", "arguments": {"text": 5}}),
                    json!({"name": "echo", "arguments": {"text": "a", "x": 1}}),
                    json!({"name": "echo", "arguments": "text"}),
                    json!({"name": "nope"}),
                    json!({"arguments": {}}),
                ];
                let p = self.input.pick(&args).clone();
                self.request("tools/call", Some(p))
            }
            6 => {
                let p = if self.input.bool() {
                    None
                } else {
                    Some(json!({}))
                };
                self.request("ping", p)
            }
            7 => {
                let method = self.input.text(12);
                self.request(&method, None)
            }
            8 => {
                let methods = ["server/discover", "tools/list", "tools/call", "ping", "x/y"];
                let method = *self.input.pick(&methods);
                let mut params = if method == "tools/call" {
                    self.tool_call()
                } else {
                    json!({})
                };
                params["_meta"] = self.modern_meta();
                self.request(method, Some(params))
            }
            9 => {
                let params = match self.input.byte() % 4 {
                    0 => json!({"requestId": self.id()}),
                    1 => json!({"requestId": null}),
                    2 => json!({"reason": "no id"}),
                    _ => {
                        let id = if self.ids.is_empty() {
                            json!(0)
                        } else {
                            let i = self.input.below(self.ids.len());
                            self.ids[i].clone()
                        };
                        json!({"requestId": id, "reason": "fuzz"})
                    }
                };
                Self::notification("notifications/cancelled", Some(params))
            }
            10 => {
                let method = self.input.text(10);
                Self::notification(&method, None)
            }
            11 => {
                let id = self.id();
                if self.input.bool() {
                    json!({"jsonrpc": "2.0", "id": id, "result": {}})
                } else {
                    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -1, "message": "m"}})
                }
            }
            12 => {
                let bad = [
                    json!(1.5),
                    json!(true),
                    Value::Null,
                    json!({}),
                    json!([]),
                    json!(1e3),
                ];
                let id = self.input.pick(&bad).clone();
                json!({"jsonrpc": "2.0", "id": id, "method": "ping"})
            }
            13 => {
                let junk = [
                    json!(5),
                    json!("x"),
                    json!({}),
                    json!([]),
                    json!({"jsonrpc": "2.0"}),
                ];
                self.input.pick(&junk).clone()
            }
            14 => return Err(self.input.bytes(48).to_vec()),
            15 => {
                // A message with a byte cut off or changed.
                let m = self
                    .message(true)
                    .unwrap_or_else(|raw| json!(String::from_utf8_lossy(&raw)));
                let mut b = serde_json::to_vec(&m).unwrap_or_default();
                if !b.is_empty() {
                    let at = self.input.below(b.len());
                    if self.input.bool() {
                        b.truncate(at);
                    } else {
                        b[at] = self.input.byte();
                    }
                }
                return Err(b);
            }
            16 => {
                // Over the limit (kept small: big limits make slow inputs).
                let len = if self.max_message <= 4096 {
                    self.max_message + self.input.below(64)
                } else {
                    self.input.below(256)
                };
                let text = "o".repeat(len);
                let p = json!({"name": "echo", "arguments": {"text": text}});
                self.request("tools/call", Some(p))
            }
            17 => {
                let p = [
                    None,
                    Some(json!([])),
                    Some(json!({"protocolVersion": "2025-03-26"})),
                ];
                let p = self.input.pick(&p).clone();
                self.request("initialize", p)
            }
            _ => {
                let n = self.input.below(7);
                let mut members = Vec::new();
                for _ in 0..n {
                    match self.message(true) {
                        Ok(v) => members.push(v),
                        Err(raw) => members.push(json!(String::from_utf8_lossy(&raw))),
                    }
                }
                Value::Array(members)
            }
        })
    }
}

impl Scenario {
    pub fn from_bytes(data: &[u8]) -> Scenario {
        let mut input = Input::new(data);
        let config = input.byte();
        let framing = [
            FramingMode::Ndjson,
            FramingMode::ContentLength,
            FramingMode::Auto,
            FramingMode::Ndjson,
        ][(config & 3) as usize];
        let slow_tool = config & 0x04 != 0;
        // The rest of the input is the stream itself (seeds from the test suites use this).
        let raw = (config >> 4) & 3 == 3;
        let lsp = match framing {
            FramingMode::Ndjson => false,
            FramingMode::ContentLength => true,
            FramingMode::Auto => config & 0x08 != 0,
        };
        let sizes = input.byte();
        let max_message = [512, 4096, 16384, 65536][(sizes & 3) as usize];
        let max_header = [64, 8192][((sizes >> 2) & 1) as usize];
        let duplex = [64, 1024, 65536, 1 << 20][((sizes >> 3) & 3) as usize];
        let chunk_seed = input.u64();
        let chunk_max = *input.pick(&[1, 7, 64, 4096, 1 << 20]);
        if raw {
            return Scenario {
                framing,
                max_message,
                max_header,
                slow_tool,
                duplex,
                chunk_seed,
                chunk_max,
                stream: input.rest().to_vec(),
            };
        }
        let mut gen = Gen {
            input: &mut input,
            next: 0,
            ids: Vec::new(),
            max_message,
            slow_tool,
        };
        let mut stream = Vec::new();
        for _ in 0..64 {
            if gen.input.is_empty() {
                break;
            }
            let body = match gen.message(false) {
                Ok(v) => serde_json::to_vec(&v).unwrap_or_default(),
                Err(raw) if gen.input.bool() => {
                    // Unframed bytes straight onto the wire.
                    stream.extend_from_slice(&raw);
                    continue;
                }
                Err(raw) => raw,
            };
            if lsp {
                stream.extend_from_slice(
                    format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes(),
                );
                stream.extend_from_slice(&body);
            } else {
                stream.extend_from_slice(&body);
                stream.extend_from_slice(if gen.input.byte() < 32 {
                    b"\r\n"
                } else {
                    b"\n"
                });
            }
        }
        Scenario {
            framing,
            max_message,
            max_header,
            slow_tool,
            duplex,
            chunk_seed,
            chunk_max,
            stream,
        }
    }

    fn codec(&self) -> StdioCodec {
        StdioCodec::new(self.framing)
            .with_max_message_bytes(self.max_message)
            .with_max_header_bytes(self.max_header)
    }
}

impl Scenario {
    /// The server's settings for this scenario (a grace no test waits out).
    fn config(&self) -> Config {
        Config {
            framing: self.framing,
            max_message_bytes: self.max_message,
            max_header_bytes: self.max_header,
            shutdown_grace: Duration::from_secs(600),
        }
    }

    /// `echo`, and the slow tool if the scenario has it.
    fn tools(&self) -> ToolSet {
        let mut tools = default_tools();
        if self.slow_tool {
            tools.register(Slow::new()).expect("a new tool name");
        }
        tools
    }
}

/// What `serve` did with one scenario.
#[derive(Debug)]
pub struct Run {
    pub exit: std::io::Result<Exit>,
    pub output: Vec<u8>,
}

/// Runs the server on the scenario's stream over an in-memory duplex; panics if it does not
/// finish within `limit`.
pub fn run_server(s: &Scenario, limit: Duration) -> Run {
    run_on(s, limit, |s| {
        let (client, server) = tokio::io::duplex(s.duplex);
        let (server_read, server_write) = tokio::io::split(server);
        let (client_read, client_write) = tokio::io::split(client);
        (
            Box::new(server_read),
            Box::new(server_write),
            Box::new(client_read),
            Box::new(client_write),
        )
    })
}

/// Runs the server on the scenario's stream over one end of a socketpair as both its input
/// and output, read and written as the binary does a socket it is given (Node-based hosts);
/// panics if it does not finish within `limit`.
pub fn run_server_on_socket(s: &Scenario, limit: Duration) -> Run {
    run_on(s, limit, |_| {
        let (client, server) = std::os::unix::net::UnixStream::pair().expect("a socketpair");
        let read = server.try_clone().expect("a second descriptor");
        let server_read = mcp_echo_server::stdio::Socket::new(read.into()).expect("on the reactor");
        let server_write =
            mcp_echo_server::stdio::Socket::new(server.into()).expect("on the reactor");
        client.set_nonblocking(true).expect("non-blocking");
        let client = tokio::net::UnixStream::from_std(client).expect("on the reactor");
        let (client_read, client_write) = client.into_split();
        (
            Box::new(server_read),
            Box::new(server_write),
            Box::new(client_read),
            Box::new(client_write),
        )
    })
}

type Read = Box<dyn tokio::io::AsyncRead + Unpin + Send>;
type Write = Box<dyn tokio::io::AsyncWrite + Unpin + Send>;

/// The server's input and output, and the client's ends of them.
type Ends = (Read, Write, Read, Write);

fn run_on(s: &Scenario, limit: Duration, ends: impl FnOnce(&Scenario) -> Ends) -> Run {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    rt.block_on(async {
        let (server_read, server_write, mut client_read, mut client_write) = ends(s);
        let (config, tools) = (s.config(), s.tools());
        let server = tokio::spawn(async move {
            let exit = serve(
                server_read,
                server_write,
                &config,
                Arc::new(tools),
                std::future::pending::<()>(),
            )
            .await;
            // The server's ends are closed here (dropped with the future's state), so the
            // reader below sees the output end.
            exit
        });
        let stream = s.stream.clone();
        let (seed, max) = (s.chunk_seed, s.chunk_max);
        let writer = tokio::spawn(async move {
            let mut rng = Rng::new(seed);
            for c in chunk(&stream, &mut rng, max) {
                client_write.write_all(c).await?;
            }
            client_write.shutdown().await
        });
        let reader = tokio::spawn(async move {
            let mut out = Vec::new();
            client_read.read_to_end(&mut out).await.map(|_| out)
        });
        let all = async {
            let exit = server.await.expect("serve panicked");
            writer
                .await
                .expect("writer task")
                .expect("writing the server's input failed");
            let output = reader
                .await
                .expect("reader task")
                .expect("reading the server's output failed");
            Run { exit, output }
        };
        match tokio::time::timeout(limit, all).await {
            Ok(run) => run,
            Err(_) => panic!("the server did not finish within {limit:?} (hang)"),
        }
    })
}

/// Runs the blocking loop (what the binary runs on pipes) on the scenario's stream, over two
/// OS pipes; panics if it does not finish within `limit`.
pub fn run_server_blocking(s: &Scenario, limit: Duration) -> Run {
    use std::io::{Read, Write};
    let pipe = || {
        let (read, write) = std::io::pipe().expect("a pipe");
        let file = |fd: std::os::fd::OwnedFd| std::fs::File::from(fd);
        (file(read.into()), file(write.into()))
    };
    let (server_read, mut client_write) = pipe();
    let (mut client_read, server_write) = pipe();
    let (config, tools) = (s.config(), s.tools());
    let stdio = BlockingStdio::new(server_read, server_write).expect("the blocking loop's pipes");
    let (done, exit) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let exit = serve_blocking(&stdio, &config, Arc::new(tools));
        // Closes the server's ends, so the reader below sees the output end.
        drop(stdio);
        let _ = done.send(exit);
    });
    let stream = s.stream.clone();
    let (seed, max) = (s.chunk_seed, s.chunk_max);
    let writer = std::thread::spawn(move || {
        let mut rng = Rng::new(seed);
        for c in chunk(&stream, &mut rng, max) {
            client_write.write_all(c)?;
        }
        Ok::<(), std::io::Error>(())
    });
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        client_read.read_to_end(&mut out).map(|_| out)
    });
    let exit = exit
        .recv_timeout(limit)
        .unwrap_or_else(|_| panic!("the blocking loop did not finish within {limit:?} (hang)"));
    writer
        .join()
        .expect("writer thread")
        .expect("writing the server's input failed");
    let output = reader
        .join()
        .expect("reader thread")
        .expect("reading the server's output failed");
    Run { exit, output }
}

/// Runs and checks the scenario built from `data` on every stdio transport: the async loop
/// over a duplex and over a socket, and the blocking loop over pipes. Without the slow tool
/// (replies in input order) they must write the same bytes.
pub fn run(data: &[u8]) {
    let s = Scenario::from_bytes(data);
    let duplex = run_server(&s, Duration::from_secs(60));
    check(&s, &duplex);
    let socket = run_server_on_socket(&s, Duration::from_secs(60));
    check(&s, &socket);
    let blocking = run_server_blocking(&s, Duration::from_secs(60));
    check(&s, &blocking);
    if !s.slow_tool {
        for (name, other) in [("socket", &socket), ("blocking", &blocking)] {
            assert!(
                duplex.output == other.output,
                "the transports wrote different bytes:\n duplex: {:?}\n {name}: {:?}",
                String::from_utf8_lossy(&duplex.output),
                String::from_utf8_lossy(&other.output)
            );
        }
    }
}

/// One reply the server wrote.
#[derive(Debug)]
enum Out {
    Single(Response),
    Batch(Vec<Response>),
}

fn key(id: Option<&RequestId>) -> String {
    match id {
        Some(id) => serde_json::to_string(id).unwrap_or_default(),
        None => "null".to_owned(),
    }
}

/// The id keys one frame's members must be answered with, in order; `None` for no reply.
fn member_keys(items: &[Result<Message, mcp_protocol::InvalidMessage>]) -> Vec<String> {
    items
        .iter()
        .filter_map(|item| match item {
            // An invalid response is never answered (JSON-RPC 2.0 §5).
            Err(inv) if inv.is_response => None,
            Err(inv) => Some(key(inv.id.as_ref())),
            Ok(Message::Request(r)) => Some(key(Some(&r.id))),
            Ok(_) => None,
        })
        .collect()
}

fn cancelled_id(m: &Message) -> Option<String> {
    match m {
        Message::Notification(n) if n.method == "notifications/cancelled" => n
            .params
            .clone()
            .and_then(|p| serde_json::from_value::<CancelledParams>(p).ok())
            .map(|p| key(Some(&p.request_id))),
        _ => None,
    }
}

/// Checks what the server wrote against what it read.
pub fn check(s: &Scenario, run: &Run) {
    let ctx = || {
        format!(
            "scenario: framing {:?} slow_tool {} max_message {} duplex {} chunk_max {}\ninput ({} bytes): \"{}\"\noutput: \"{}\"",
            s.framing,
            s.slow_tool,
            s.max_message,
            s.duplex,
            s.chunk_max,
            s.stream.len(),
            s.stream[..s.stream.len().min(2000)].escape_ascii(),
            run.output[..run.output.len().min(2000)].escape_ascii()
        )
    };
    match &run.exit {
        Ok(Exit::InputClosed) => {}
        other => panic!(
            "serve ended with {other:?}, expected InputClosed\n{}",
            ctx()
        ),
    }

    // What the server read.
    let mut codec = s.codec();
    let mut buf = BytesMut::from(&s.stream[..]);
    let mut frames: Vec<DecodedFrame> = Vec::new();
    while let Some(f) = codec.decode(&mut buf).expect("in-memory decode") {
        frames.push(f);
    }
    while let Some(f) = codec.decode_eof(&mut buf).expect("in-memory decode") {
        frames.push(f);
    }
    let out_framing = codec.framing().unwrap_or(Framing::Ndjson);

    // 2. What it wrote: frames of responses only.
    let out_mode = match out_framing {
        Framing::Ndjson => FramingMode::Ndjson,
        Framing::ContentLength => FramingMode::ContentLength,
    };
    let mut out_codec = StdioCodec::new(out_mode)
        .with_max_message_bytes(64 << 20)
        .strict();
    let mut out_buf = BytesMut::from(&run.output[..]);
    let mut outputs = Vec::new();
    while let Some(item) = codec_next(&mut out_codec, &mut out_buf) {
        let reply = match item {
            Ok(Incoming::Single(Message::Response(r))) => Out::Single(r),
            Ok(Incoming::Batch(items)) => Out::Batch(
                items
                    .into_iter()
                    .map(|i| match i {
                        Ok(Message::Response(r)) => r,
                        other => panic!(
                            "a batch reply member is not a response: {other:?}\n{}",
                            ctx()
                        ),
                    })
                    .collect(),
            ),
            other => panic!(
                "the server wrote something that is not a response frame: {other:?}\n{}",
                ctx()
            ),
        };
        outputs.push(reply);
    }

    // 4. Echo integrity, for ids used once.
    let mut uses: HashMap<String, usize> = HashMap::new();
    let mut echo: HashMap<String, String> = HashMap::new();
    for f in &frames {
        let members: Vec<Result<&Message, Option<&RequestId>>> = match f {
            Ok(Incoming::Single(m)) => vec![Ok(m)],
            Ok(Incoming::Batch(items)) => items
                .iter()
                .map(|i| i.as_ref().map_err(|inv| inv.id.as_ref()))
                .collect(),
            Err(e) => vec![Err(e.request_id())],
        };
        for m in members {
            match m {
                Ok(Message::Request(r)) => {
                    let k = key(Some(&r.id));
                    *uses.entry(k.clone()).or_default() += 1;
                    if let Some(text) = echo_text(r.method.as_str(), r.params.as_ref()) {
                        echo.insert(k, text);
                    }
                }
                Err(Some(id)) => *uses.entry(key(Some(id))).or_default() += 1,
                _ => {}
            }
        }
    }
    let check_echo = |r: &Response| {
        let k = key(r.id.as_ref());
        let (Some(text), Ok(result)) = (echo.get(&k), &r.outcome) else {
            return;
        };
        if uses.get(&k) != Some(&1) || result.get("isError").is_some() {
            return;
        }
        assert_eq!(
            result["content"][0]["text"].as_str(),
            Some(text.as_str()),
            "echo did not return its text for id {k}: {result}\n{}",
            ctx()
        );
    };
    for o in &outputs {
        match o {
            Out::Single(r) => check_echo(r),
            Out::Batch(rs) => rs.iter().for_each(check_echo),
        }
    }

    // 3. One reply per request, with its id.
    if s.slow_tool {
        check_unordered(&frames, &outputs, &ctx);
    } else {
        check_in_order(&frames, &outputs, &ctx);
    }
}

fn codec_next(codec: &mut StdioCodec, buf: &mut BytesMut) -> Option<DecodedFrame> {
    match codec.decode(buf).expect("in-memory decode") {
        Some(item) => Some(item),
        None => codec.decode_eof(buf).expect("in-memory decode"),
    }
}

fn echo_text(method: &str, params: Option<&Value>) -> Option<String> {
    let p = params?;
    if method != "tools/call" || p.get("name")? != "echo" {
        return None;
    }
    let args = p.get("arguments")?.as_object()?;
    if args.len() != 1 {
        return None;
    }
    args.get("text")?.as_str().map(str::to_owned)
}

fn describe(o: Option<&Out>) -> String {
    match o {
        None => "nothing".to_owned(),
        Some(Out::Single(r)) => format!("a response with id {}", key(r.id.as_ref())),
        Some(Out::Batch(rs)) => format!(
            "a batch reply with ids {:?}",
            rs.iter().map(|r| key(r.id.as_ref())).collect::<Vec<_>>()
        ),
    }
}

/// Without running tools every reply is ready at once: replies come in input order.
fn check_in_order(frames: &[DecodedFrame], outputs: &[Out], ctx: &dyn Fn() -> String) {
    let mut next = outputs.iter();
    let mut version: Option<ProtocolVersion> = None;
    for (i, frame) in frames.iter().enumerate() {
        let want = |what: String, got: Option<&Out>| {
            panic!(
                "frame {i} ({frame:?}) should get {what}, but the next reply is {}\n{}",
                describe(got),
                ctx()
            )
        };
        match frame {
            Err(e) if e.is_response() => {}
            Err(e) => {
                let k = key(e.request_id());
                let code = e.to_error_object().code;
                match next.next() {
                    Some(Out::Single(r))
                        if key(r.id.as_ref()) == k
                            && r.outcome.as_ref().err().map(|e| e.code) == Some(code) => {}
                    other => want(format!("one error {code:?} with id {k}"), other),
                }
            }
            Ok(Incoming::Single(Message::Request(req))) => {
                let k = key(Some(&req.id));
                match next.next() {
                    Some(Out::Single(r)) if key(r.id.as_ref()) == k => {
                        if req.method == "initialize" {
                            if let Ok(result) = &r.outcome {
                                let v = result["protocolVersion"].as_str().unwrap_or_default();
                                let v = ProtocolVersion::parse_legacy(v).unwrap_or_else(|| {
                                    panic!("initialize negotiated {v:?}\n{}", ctx())
                                });
                                assert!(
                                    version.is_none(),
                                    "a second initialize succeeded\n{}",
                                    ctx()
                                );
                                version = Some(v);
                            }
                        }
                    }
                    other => want(format!("one response with id {k}"), other),
                }
            }
            Ok(Incoming::Single(_)) => {}
            Ok(Incoming::Batch(items)) => {
                let keys = member_keys(items);
                if version.is_some_and(|v| v.has_batches()) {
                    if keys.is_empty() {
                        continue;
                    }
                    match next.next() {
                        Some(Out::Batch(rs))
                            if rs.iter().map(|r| key(r.id.as_ref())).collect::<Vec<_>>()
                                == keys => {}
                        other => want(format!("a batch reply with ids {keys:?}"), other),
                    }
                } else {
                    match next.next() {
                        Some(Out::Single(r))
                            if r.id.is_none()
                                && r.outcome.as_ref().err().map(|e| e.code)
                                    == Some(ErrorCode::INVALID_REQUEST) => {}
                        other => want(
                            "one -32600 with id null (batches not accepted)".to_owned(),
                            other,
                        ),
                    }
                }
            }
        }
    }
    if let Some(extra) = next.next() {
        panic!(
            "the server wrote {} that answers no frame\n{}",
            describe(Some(extra)),
            ctx()
        );
    }
}

/// With running tools, replies may come in any order and a cancelled request may get none.
fn check_unordered(frames: &[DecodedFrame], outputs: &[Out], ctx: &dyn Fn() -> String) {
    // Which ids a later cancellation names, per frame index.
    let mut cancels: Vec<(usize, String)> = Vec::new();
    for (i, f) in frames.iter().enumerate() {
        match f {
            Ok(Incoming::Single(m)) => cancels.extend(cancelled_id(m).map(|k| (i, k))),
            Ok(Incoming::Batch(items)) => cancels.extend(
                items
                    .iter()
                    .filter_map(|m| m.as_ref().ok().and_then(cancelled_id))
                    .map(|k| (i, k)),
            ),
            Err(_) => {}
        }
    }
    let cancelled_after = |i: usize, k: &str| cancels.iter().any(|(j, c)| *j > i && c == k);

    // When (if ever) initialize succeeded: batches are judged by the version it negotiated.
    let mut init_success: Vec<(String, ProtocolVersion)> = Vec::new();
    for o in outputs {
        if let Out::Single(r) = o {
            if let Ok(result) = &r.outcome {
                if let Some(v) = result.get("protocolVersion").and_then(Value::as_str) {
                    let v = ProtocolVersion::parse_legacy(v)
                        .unwrap_or_else(|| panic!("initialize negotiated {v:?}\n{}", ctx()));
                    init_success.push((key(r.id.as_ref()), v));
                }
            }
        }
    }
    assert!(
        init_success.len() <= 1,
        "initialize succeeded twice\n{}",
        ctx()
    );
    // Some((frame index, version)) when known; None when no initialize succeeded.
    let init: Result<Option<(usize, ProtocolVersion)>, ()> = match init_success.first() {
        None => Ok(None),
        Some((k, v)) => {
            let candidates: Vec<usize> = frames
                .iter()
                .enumerate()
                .filter(|(_, f)| {
                    matches!(f, Ok(Incoming::Single(Message::Request(r)))
                        if r.method == "initialize" && key(Some(&r.id)) == *k)
                })
                .map(|(i, _)| i)
                .collect();
            match candidates.as_slice() {
                [one] => Ok(Some((*one, *v))),
                [] => panic!(
                    "an initialize result answers no initialize request\n{}",
                    ctx()
                ),
                _ => Err(()),
            }
        }
    };

    let mut singles: HashMap<String, (usize, usize)> = HashMap::new();
    let mut arrays: Vec<(Vec<String>, bool)> = Vec::new();
    for (i, f) in frames.iter().enumerate() {
        match f {
            Err(e) if e.is_response() => {}
            Err(e) => {
                let r = singles.entry(key(e.request_id())).or_default();
                r.0 += 1;
                r.1 += 1;
            }
            Ok(Incoming::Single(Message::Request(req))) => {
                let k = key(Some(&req.id));
                let optional = cancelled_after(i, &k);
                let r = singles.entry(k).or_default();
                r.0 += usize::from(!optional);
                r.1 += 1;
            }
            Ok(Incoming::Single(_)) => {}
            Ok(Incoming::Batch(items)) => {
                let mut keys = member_keys(items);
                keys.sort();
                let supported = match init {
                    Ok(None) => Some(false),
                    Ok(Some((at, v))) => Some(i > at && v.has_batches()),
                    Err(()) => None,
                };
                let null = singles.entry("null".to_owned()).or_default();
                match supported {
                    Some(true) => {
                        if !keys.is_empty() {
                            arrays.push((keys, true));
                        }
                    }
                    Some(false) => {
                        null.0 += 1;
                        null.1 += 1;
                    }
                    None => {
                        null.1 += 1;
                        if !keys.is_empty() {
                            arrays.push((keys, false));
                        }
                    }
                }
            }
        }
    }

    let mut got: HashMap<String, usize> = HashMap::new();
    for o in outputs {
        match o {
            Out::Single(r) => *got.entry(key(r.id.as_ref())).or_default() += 1,
            Out::Batch(rs) => {
                let mut keys: Vec<String> = rs.iter().map(|r| key(r.id.as_ref())).collect();
                keys.sort();
                // Prefer a required slot, then an optional one.
                let slot = arrays
                    .iter()
                    .position(|(k, required)| *required && *k == keys)
                    .or_else(|| arrays.iter().position(|(k, _)| *k == keys));
                match slot {
                    Some(at) => {
                        arrays.swap_remove(at);
                    }
                    None => panic!(
                        "a batch reply with ids {keys:?} answers no batch that was read\n{}",
                        ctx()
                    ),
                }
            }
        }
    }
    if let Some((keys, _)) = arrays.iter().find(|(_, required)| *required) {
        panic!("a batch with request ids {keys:?} got no reply\n{}", ctx());
    }
    for (k, n) in &got {
        let (min, max) = singles.get(k).copied().unwrap_or((0, 0));
        assert!(
            (min..=max).contains(n),
            "id {k}: {n} responses, expected {min}..={max}\n{}",
            ctx()
        );
    }
    for (k, (min, _)) in &singles {
        assert!(
            got.get(k).copied().unwrap_or(0) >= *min,
            "id {k}: {} responses, expected at least {min}\n{}",
            got.get(k).copied().unwrap_or(0),
            ctx()
        );
    }
}
