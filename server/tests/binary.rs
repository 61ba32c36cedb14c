//! End-to-end tests of the real `mcp-echo-server` binary: a child process over real pipes.
//!
//! Every wait is bounded by [`TIMEOUT`], so a server that hangs fails the test instead of
//! hanging it. Replies are compared byte for byte where the wire format is specified (envelope
//! key order, compact JSON, sorted result keys, framing) and as JSON values otherwise.
#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::future::Future;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::task::JoinHandle;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-echo-server");
const VERSION: &str = env!("CARGO_PKG_VERSION");
const TIMEOUT: Duration = Duration::from_secs(10);
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// Awaits `fut`, failing the test if it takes longer than [`TIMEOUT`].
async fn within<F: Future>(what: &str, fut: F) -> F::Output {
    tokio::time::timeout(TIMEOUT, fut)
        .await
        .unwrap_or_else(|_| panic!("timed out after {TIMEOUT:?} waiting for {what}"))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    Ndjson,
    ContentLength,
}

impl Framing {
    const BOTH: [Framing; 2] = [Framing::Ndjson, Framing::ContentLength];

    /// One client frame; Content-Length counts UTF-8 bytes.
    fn encode(self, body: &str) -> Vec<u8> {
        match self {
            Framing::Ndjson => format!("{body}\n").into_bytes(),
            Framing::ContentLength => {
                format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
            }
        }
    }
}

fn command(args: &[&str]) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.args(args)
        .env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    cmd
}

/// Reads a pipe to its end in the background, so a chatty stderr can never block the server.
fn collect<R: AsyncRead + Unpin + Send + 'static>(mut pipe: R) -> JoinHandle<String> {
    tokio::spawn(async move {
        let mut buf = Vec::new();
        let _ = pipe.read_to_end(&mut buf).await;
        String::from_utf8_lossy(&buf).into_owned()
    })
}

/// The server with one end of a socketpair as both stdin and stdout, as Node-based hosts
/// connect theirs (libuv makes child stdio from socketpairs): the child, our end, its stderr.
fn spawn_on_socket(args: &[&str]) -> (Child, std::os::unix::net::UnixStream, JoinHandle<String>) {
    let (ours, theirs) = std::os::unix::net::UnixStream::pair().unwrap();
    let theirs_out = theirs.try_clone().unwrap();
    let mut cmd = command(args);
    cmd.stdin(Stdio::from(std::os::fd::OwnedFd::from(theirs)))
        .stdout(Stdio::from(std::os::fd::OwnedFd::from(theirs_out)));
    let mut child = cmd.spawn().unwrap();
    // The command holds our copies of the child's ends: with them open, no EOF would come.
    drop(cmd);
    let stderr = collect(child.stderr.take().unwrap());
    (child, ours, stderr)
}

/// A running server and its pipes; `framing` is how the test talks to it.
struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    stderr: JoinHandle<String>,
    framing: Framing,
}

/// What was left when the server exited.
struct Finished {
    status: ExitStatus,
    /// stdout after the last reply the test read.
    rest: Vec<u8>,
    stderr: String,
}

fn spawn(framing: Framing, args: &[&str]) -> Server {
    let mut child = command(args).spawn().unwrap();
    let stdin = child.stdin.take();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let stderr = collect(child.stderr.take().unwrap());
    Server {
        child,
        stdin,
        stdout,
        stderr,
        framing,
    }
}

impl Server {
    async fn write(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin already closed");
        within("writing to stdin", async {
            stdin.write_all(bytes).await.unwrap();
            stdin.flush().await.unwrap();
        })
        .await;
    }

    /// Sends one message in this server's framing.
    async fn send(&mut self, body: &str) {
        let bytes = self.framing.encode(body);
        self.write(&bytes).await;
    }

    /// Reads one reply in this server's framing and returns its JSON text.
    async fn recv(&mut self) -> String {
        match self.framing {
            Framing::Ndjson => read_line(&mut self.stdout).await,
            Framing::ContentLength => read_frame(&mut self.stdout).await.1,
        }
    }

    async fn call(&mut self, body: &str) -> String {
        self.send(body).await;
        self.recv().await
    }

    /// `ping` must get exactly `{"jsonrpc":"2.0","id":<id>,"result":{}}`.
    async fn ping_ok(&mut self, id: i64) {
        let raw = self.call(&request(&json!(id), "ping", None)).await;
        assert_eq!(
            raw,
            format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#)
        );
    }

    /// `initialize` (id 1) and `notifications/initialized`; returns the raw initialize reply.
    async fn handshake(&mut self, version: &str) -> String {
        let raw = self.call(&initialize(1, version)).await;
        let v: Value = serde_json::from_str(&raw).unwrap();
        assert_eq!(v["id"], json!(1), "{raw}");
        assert!(v["result"].is_object(), "initialize failed: {raw}");
        self.send(INITIALIZED).await;
        raw
    }

    /// Closes stdin, reads stdout to its end and waits for the exit.
    async fn finish(mut self) -> Finished {
        drop(self.stdin.take());
        let mut rest = Vec::new();
        within("stdout to end", self.stdout.read_to_end(&mut rest))
            .await
            .unwrap();
        let status = within("the server to exit", self.child.wait())
            .await
            .unwrap();
        let stderr = within("stderr to end", self.stderr).await.unwrap();
        Finished {
            status,
            rest,
            stderr,
        }
    }
}

/// One newline-delimited reply, without its `\n`.
async fn read_line<R: AsyncRead + Unpin>(reader: &mut BufReader<R>) -> String {
    let mut buf = Vec::new();
    let n = within(
        "a newline-delimited reply",
        reader.read_until(b'\n', &mut buf),
    )
    .await
    .unwrap();
    assert!(n > 0, "stdout ended while a reply was expected");
    assert_eq!(
        buf.pop(),
        Some(b'\n'),
        "reply not terminated by \\n: {:?}",
        String::from_utf8_lossy(&buf)
    );
    let line = String::from_utf8(buf).unwrap();
    assert!(!line.contains('\r'), "reply contains \\r: {line:?}");
    line
}

/// One `Content-Length: N\r\n\r\n<N bytes>` reply: returns N and the body. The body must be
/// exactly one complete JSON value, so an N that is not its UTF-8 byte length fails here (too
/// short: truncated JSON) or on the next read (too long or a trailing newline: the next header
/// does not start where it should).
async fn read_frame<R: AsyncRead + Unpin>(reader: &mut BufReader<R>) -> (usize, String) {
    within("a Content-Length reply", async {
        let mut header = Vec::new();
        while !header.ends_with(b"\r\n\r\n") {
            match reader.read_u8().await {
                Ok(b) => header.push(b),
                Err(e) => panic!(
                    "stdout ended inside a header {:?}: {e}",
                    String::from_utf8_lossy(&header)
                ),
            }
            assert!(
                header.len() <= 40,
                "not a Content-Length header: {:?}",
                String::from_utf8_lossy(&header)
            );
        }
        let header = String::from_utf8(header).unwrap();
        let n: usize = header
            .strip_prefix("Content-Length: ")
            .and_then(|h| h.strip_suffix("\r\n\r\n"))
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("unexpected header {header:?}"));
        let mut body = vec![0; n];
        reader.read_exact(&mut body).await.unwrap();
        let body = String::from_utf8(body).unwrap();
        if let Err(e) = serde_json::from_str::<Value>(&body) {
            panic!("{n} bytes after {header:?} are not one JSON value ({e}): {body:?}");
        }
        (n, body)
    })
    .await
}

/// Splits a whole stdout capture into frames, strictly: nothing else may be in it.
fn frames(framing: Framing, bytes: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        match framing {
            Framing::Ndjson => {
                let end = rest
                    .iter()
                    .position(|b| *b == b'\n')
                    .unwrap_or_else(|| panic!("unterminated line {:?}", rest.escape_ascii()));
                let line = std::str::from_utf8(&rest[..end]).unwrap();
                assert!(!line.contains('\r'), "{line:?}");
                out.push(line.to_owned());
                rest = &rest[end + 1..];
            }
            Framing::ContentLength => {
                let text = std::str::from_utf8(rest).unwrap();
                let after = text
                    .strip_prefix("Content-Length: ")
                    .unwrap_or_else(|| panic!("expected a header at {text:?}"));
                let (n, after) = after
                    .split_once("\r\n\r\n")
                    .unwrap_or_else(|| panic!("unterminated header at {text:?}"));
                let n: usize = n.parse().unwrap();
                assert!(after.len() >= n, "truncated body {after:?}");
                out.push(after[..n].to_owned());
                rest = &after.as_bytes()[n..];
            }
        }
    }
    out
}

/// Serializes like the server does: compact, object keys sorted.
fn canonical(v: &Value) -> String {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let members: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", Value::from(k.as_str()), canonical(&map[k])))
                .collect();
            format!("{{{}}}", members.join(","))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(canonical).collect();
            format!("[{}]", items.join(","))
        }
        other => other.to_string(),
    }
}

fn request(id: &Value, method: &str, params: Option<Value>) -> String {
    let mut req = json!({ "jsonrpc": "2.0", "id": id, "method": method });
    if let Some(params) = params {
        req["params"] = params;
    }
    req.to_string()
}

fn initialize(id: i64, version: &str) -> String {
    request(
        &json!(id),
        "initialize",
        Some(json!({
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": { "name": "binary-test", "version": "1.0.0" }
        })),
    )
}

fn echo(id: &Value, text: &str) -> String {
    request(
        id,
        "tools/call",
        Some(json!({ "name": "echo", "arguments": { "text": text } })),
    )
}

fn echo_result(text: &str, structured: bool) -> Value {
    let mut result = json!({ "content": [{ "type": "text", "text": text }] });
    if structured {
        result["structuredContent"] = json!({ "text": text });
    }
    result
}

/// The reply must be exactly `{"jsonrpc":"2.0","id":<id>,"result":<result>}`, compact, with
/// sorted keys inside `result`.
fn assert_result(raw: &str, id: &Value, result: &Value) {
    let expected = format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{}}}"#,
        canonical(id),
        canonical(result)
    );
    assert_eq!(raw, expected);
}

/// The reply must be `{"jsonrpc":"2.0","id":<id>,"error":{...}}` with this code and a
/// non-empty message; returns the message.
fn assert_error(raw: &str, id: &Value, code: i64) -> String {
    let prefix = format!(r#"{{"jsonrpc":"2.0","id":{},"error":{{"#, canonical(id));
    assert!(
        raw.starts_with(&prefix),
        "expected an error reply starting with {prefix}, got {raw}"
    );
    let v: Value = serde_json::from_str(raw).unwrap();
    assert_eq!(v.as_object().unwrap().len(), 3, "{raw}");
    assert_eq!(v["error"]["code"], json!(code), "{raw}");
    let message = v["error"]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("error without a message: {raw}"));
    assert!(!message.is_empty(), "{raw}");
    message.to_owned()
}

/// A `tools/call` result with `isError: true` (a tool failure, not a protocol error).
fn assert_tool_error(raw: &str, id: &Value) {
    let prefix = format!(r#"{{"jsonrpc":"2.0","id":{},"result":{{"#, canonical(id));
    assert!(raw.starts_with(&prefix), "expected a result, got {raw}");
    let v: Value = serde_json::from_str(raw).unwrap();
    assert_eq!(v.as_object().unwrap().len(), 3, "{raw}");
    let result = &v["result"];
    assert_eq!(result["isError"], json!(true), "{raw}");
    let content = result["content"].as_array().unwrap();
    assert_eq!(content.len(), 1, "{raw}");
    assert_eq!(content[0]["type"], json!("text"), "{raw}");
    assert!(!content[0]["text"].as_str().unwrap().is_empty(), "{raw}");
}

/// The exact `initialize` result (the instructions text is taken from the reply, but must be a
/// non-empty string).
fn assert_initialize(raw: &str, id: &Value, negotiated: &str, title: bool) {
    let v: Value = serde_json::from_str(raw).unwrap();
    let instructions = v["result"]["instructions"]
        .as_str()
        .unwrap_or_else(|| panic!("no instructions string: {raw}"));
    assert!(!instructions.is_empty());
    let mut server_info = json!({ "name": "mcp-echo-server", "version": VERSION });
    if title {
        server_info["title"] = json!("MCP Echo Server");
    }
    let expected = json!({
        "protocolVersion": negotiated,
        "capabilities": { "tools": { "listChanged": false } },
        "serverInfo": server_info,
        "instructions": instructions
    });
    assert_result(raw, id, &expected);
}

/// `tools/list` lists exactly one tool, `echo`, taking `{"text": string}`.
fn assert_tools_list(raw: &str, id: &Value) {
    let prefix = format!(r#"{{"jsonrpc":"2.0","id":{},"result":{{"#, canonical(id));
    assert!(raw.starts_with(&prefix), "{raw}");
    let v: Value = serde_json::from_str(raw).unwrap();
    let result = v["result"].as_object().unwrap();
    assert_eq!(result.keys().collect::<Vec<_>>(), ["tools"], "{raw}");
    let tools = result["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 1, "{raw}");
    assert_eq!(tools[0]["name"], json!("echo"));
    let schema = &tools[0]["inputSchema"];
    assert_eq!(schema["type"], json!("object"), "{raw}");
    assert_eq!(
        schema["properties"]["text"]["type"],
        json!("string"),
        "{raw}"
    );
    assert_eq!(schema["required"], json!(["text"]), "{raw}");
    // The reply is compact JSON with sorted keys, like every result.
    assert_result(raw, id, &v["result"]);
}

// ---------------------------------------------------------------------------------------------
// 1 and 2: the full handshake in each framing
// ---------------------------------------------------------------------------------------------

/// ping, initialize, initialized, tools/list, echo (ASCII and multibyte), then EOF.
async fn full_session(framing: Framing, args: &[&str]) {
    let mut s = spawn(framing, args);
    let raw = s.call(&request(&json!(0), "ping", None)).await;
    assert_eq!(raw, r#"{"jsonrpc":"2.0","id":0,"result":{}}"#);

    let raw = s.call(&initialize(1, "2025-06-18")).await;
    assert_initialize(&raw, &json!(1), "2025-06-18", true);
    s.send(INITIALIZED).await;

    let raw = s.call(&request(&json!(2), "tools/list", None)).await;
    assert_tools_list(&raw, &json!(2));

    let raw = s.call(&echo(&json!(3), "hello, world")).await;
    assert_result(&raw, &json!(3), &echo_result("hello, world", true));

    let id = json!("é🦀");
    s.send(&echo(&id, "你好 🦀")).await;
    let body = match framing {
        Framing::Ndjson => s.recv().await,
        Framing::ContentLength => {
            let (n, body) = read_frame(&mut s.stdout).await;
            // N is the UTF-8 byte length, not the number of characters.
            assert_eq!(n, body.len());
            assert!(n > body.chars().count(), "the body should be multibyte");
            body
        }
    };
    assert_result(&body, &id, &echo_result("你好 🦀", true));

    let done = s.finish().await;
    assert!(
        done.rest.is_empty(),
        "bytes after the last reply: {:?}",
        done.rest.escape_ascii().to_string()
    );
    assert_eq!(done.status.code(), Some(0), "stderr: {}", done.stderr);
}

#[tokio::test]
async fn ndjson_full_handshake() {
    full_session(Framing::Ndjson, &[]).await;
    full_session(Framing::Ndjson, &["--framing", "auto"]).await;
    full_session(Framing::Ndjson, &["--framing", "ndjson"]).await;
}

#[tokio::test]
async fn content_length_full_handshake() {
    full_session(Framing::ContentLength, &["--framing", "auto"]).await;
    full_session(Framing::ContentLength, &["--framing", "content-length"]).await;
}

// ---------------------------------------------------------------------------------------------
// 3: error table, both framings
// ---------------------------------------------------------------------------------------------

enum Expect {
    /// A JSON-RPC error with this code and id, and this exact message if given.
    Error(i64, Value, Option<&'static str>),
    /// A `tools/call` result with `isError: true`, for this id.
    ToolError(Value),
}

fn error_table() -> Vec<(String, Expect)> {
    use Expect::{Error, ToolError};
    let call = |id: i64, params: Value| request(&json!(id), "tools/call", Some(params));
    vec![
        // Unknown methods.
        (
            r#"{"jsonrpc":"2.0","id":10,"method":"no/such/method"}"#.to_owned(),
            Error(-32601, json!(10), None),
        ),
        (
            r#"{"jsonrpc":"2.0","id":"é🦀","method":"resources/list"}"#.to_owned(),
            Error(-32601, json!("é🦀"), None),
        ),
        // Not JSON.
        ("{not json".to_owned(), Error(-32700, Value::Null, None)),
        (
            r#"{"jsonrpc":"2.0","id":11,"method":"ping""#.to_owned(),
            Error(-32700, Value::Null, None),
        ),
        // Wrong shapes: the id is kept when it is readable.
        (
            r#"{"id":12,"method":"ping"}"#.to_owned(),
            Error(-32600, json!(12), None),
        ),
        (
            r#"{"jsonrpc":"1.0","id":"a","method":"ping"}"#.to_owned(),
            Error(-32600, json!("a"), None),
        ),
        (
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#.to_owned(),
            Error(-32600, Value::Null, None),
        ),
        (
            r#"{"jsonrpc":"2.0","id":13,"method":5}"#.to_owned(),
            Error(-32600, json!(13), None),
        ),
        // tools/call protocol errors.
        (
            call(14, json!({ "name": "nope", "arguments": {} })),
            Error(-32602, json!(14), Some("Unknown tool: nope")),
        ),
        (
            call(15, json!({ "arguments": { "text": "x" } })),
            Error(-32602, json!(15), None),
        ),
        (
            call(16, json!({ "name": "echo", "arguments": "x" })),
            Error(-32602, json!(16), None),
        ),
        (
            call(17, json!({ "name": "echo", "arguments": ["x"] })),
            Error(-32602, json!(17), None),
        ),
        // Bad echo arguments: tool errors, not protocol errors.
        (
            call(18, json!({ "name": "echo", "arguments": {} })),
            ToolError(json!(18)),
        ),
        (
            call(19, json!({ "name": "echo", "arguments": { "text": 5 } })),
            ToolError(json!(19)),
        ),
        (
            call(
                20,
                json!({ "name": "echo", "arguments": { "text": "a", "extra": 1 } }),
            ),
            ToolError(json!(20)),
        ),
        (call(21, json!({ "name": "echo" })), ToolError(json!(21))),
        // A second initialize.
        (initialize(22, "2025-06-18"), Error(-32600, json!(22), None)),
    ]
}

#[tokio::test]
async fn error_table_in_both_framings() {
    for framing in Framing::BOTH {
        let mut s = spawn(framing, &[]);
        // Before initialize (this also locks the framing in auto mode).
        let raw = s.call(&request(&json!(100), "tools/list", None)).await;
        assert_error(&raw, &json!(100), -32600);
        s.ping_ok(101).await;

        s.handshake("2025-06-18").await;
        for (i, (input, expect)) in error_table().into_iter().enumerate() {
            let raw = s.call(&input).await;
            match expect {
                Expect::Error(code, id, message) => {
                    let got = assert_error(&raw, &id, code);
                    if let Some(message) = message {
                        assert_eq!(got, message, "{framing:?}: {input}");
                    }
                }
                Expect::ToolError(id) => assert_tool_error(&raw, &id),
            }
            // The server keeps serving after every bad input.
            s.ping_ok(1000 + i as i64).await;
        }
        // And the session is still usable.
        let raw = s.call(&echo(&json!(200), "still here")).await;
        assert_result(&raw, &json!(200), &echo_result("still here", true));

        let done = s.finish().await;
        assert!(done.rest.is_empty(), "{:?}", done.rest.escape_ascii());
        assert_eq!(done.status.code(), Some(0), "stderr: {}", done.stderr);
    }
}

// ---------------------------------------------------------------------------------------------
// 4: lifecycle gating
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn tools_are_gated_until_initialized() {
    let mut s = spawn(Framing::Ndjson, &[]);
    let list = |id: i64| request(&json!(id), "tools/list", None);

    // Before initialize.
    let raw = s.call(&list(1)).await;
    assert_error(&raw, &json!(1), -32600);
    let raw = s.call(&echo(&json!(2), "x")).await;
    assert_error(&raw, &json!(2), -32600);
    s.ping_ok(3).await;

    // After initialize, before notifications/initialized.
    let raw = s.call(&initialize(4, "2025-06-18")).await;
    assert_initialize(&raw, &json!(4), "2025-06-18", true);
    let raw = s.call(&list(5)).await;
    assert_error(&raw, &json!(5), -32600);
    let raw = s.call(&echo(&json!(6), "x")).await;
    assert_error(&raw, &json!(6), -32600);
    s.ping_ok(7).await;

    // Ready.
    s.send(INITIALIZED).await;
    let raw = s.call(&list(8)).await;
    assert_tools_list(&raw, &json!(8));
    let raw = s.call(&echo(&json!(9), "x")).await;
    assert_result(&raw, &json!(9), &echo_result("x", true));
    s.ping_ok(10).await;

    let done = s.finish().await;
    assert!(done.rest.is_empty(), "{:?}", done.rest.escape_ascii());
    assert_eq!(done.status.code(), Some(0), "stderr: {}", done.stderr);
}

#[tokio::test]
async fn initialize_params_are_required() {
    let client_info = json!({ "name": "t", "version": "1" });
    let cases = [
        None,
        Some(json!({ "capabilities": {}, "clientInfo": client_info })),
        Some(json!({ "protocolVersion": "2025-06-18", "clientInfo": client_info })),
        Some(json!({ "protocolVersion": "2025-06-18", "capabilities": {} })),
        Some(json!({
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "t" }
        })),
    ];
    let mut s = spawn(Framing::Ndjson, &[]);
    for (i, params) in cases.into_iter().enumerate() {
        let id = json!(i);
        let raw = s.call(&request(&id, "initialize", params.clone())).await;
        assert_error(&raw, &id, -32602);
        s.ping_ok(100 + i as i64).await;
    }
    let done = s.finish().await;
    assert!(done.rest.is_empty(), "{:?}", done.rest.escape_ascii());
    assert_eq!(done.status.code(), Some(0), "stderr: {}", done.stderr);
}

// ---------------------------------------------------------------------------------------------
// 5: notifications and responses are never answered
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn notifications_and_responses_produce_no_output() {
    for framing in Framing::BOTH {
        let mut s = spawn(framing, &[]);
        for message in [
            initialize(1, "2025-06-18").as_str(),
            INITIALIZED,
            r#"{"jsonrpc":"2.0","method":"notifications/no-such-thing","params":{"a":1}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":77}}"#,
            r#"{"jsonrpc":"2.0","method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":99,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":98,"error":{"code":-32601,"message":"no"}}"#,
            INITIALIZED,
        ] {
            s.send(message).await;
        }
        let done = s.finish().await;
        assert_eq!(done.status.code(), Some(0), "stderr: {}", done.stderr);
        let replies = frames(framing, &done.rest);
        assert_eq!(replies.len(), 1, "{framing:?}: {replies:#?}");
        assert_initialize(&replies[0], &json!(1), "2025-06-18", true);
    }
}

// ---------------------------------------------------------------------------------------------
// 6: stdout holds nothing but frames, even at debug level
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn debug_logging_keeps_stdout_clean() {
    let mut s = spawn(Framing::Ndjson, &["--log-level", "debug"]);
    let requests = [
        initialize(1, "2025-06-18"),
        INITIALIZED.to_owned(),
        request(&json!(2), "tools/list", None),
        echo(&json!(3), "hello\nworld"),
        request(&json!(4), "no/such/method", None),
        "this is not json".to_owned(),
        request(&json!(5), "ping", None),
    ];
    let mut burst = Vec::new();
    for r in &requests {
        burst.extend(Framing::Ndjson.encode(r));
    }
    s.write(&burst).await;
    let done = s.finish().await;
    assert_eq!(done.status.code(), Some(0), "stderr: {}", done.stderr);

    let stdout = String::from_utf8(done.rest).unwrap();
    let lines = frames(Framing::Ndjson, stdout.as_bytes());
    assert_eq!(lines.len(), 6, "one reply per request:\n{stdout}");
    let mut ids = Vec::new();
    for line in &lines {
        let v: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line:?}"));
        let obj = v.as_object().unwrap();
        assert_eq!(obj.len(), 3, "{line}");
        assert_eq!(obj["jsonrpc"], json!("2.0"), "{line}");
        assert!(obj.contains_key("id"), "{line}");
        assert!(
            obj.contains_key("result") ^ obj.contains_key("error"),
            "{line}"
        );
        ids.push(v["id"].clone());
    }
    assert_eq!(
        ids,
        [
            json!(1),
            json!(2),
            json!(3),
            json!(4),
            Value::Null,
            json!(5)
        ]
    );

    assert!(done.stderr.contains("DEBUG"), "stderr: {}", done.stderr);
    for method in [
        "initialize",
        "tools/list",
        "tools/call",
        "no/such/method",
        "ping",
    ] {
        assert!(
            done.stderr
                .lines()
                .any(|l| l.contains("DEBUG") && l.contains(method)),
            "no DEBUG line for {method} on stderr:\n{}",
            done.stderr
        );
    }
}

// ---------------------------------------------------------------------------------------------
// 7: EOF answers everything, flushes, exits 0
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn eof_answers_everything_and_exits_zero() {
    let mut s = spawn(Framing::Ndjson, &[]);
    s.handshake("2025-06-18").await;

    let mut expected: HashMap<String, (Value, String)> = HashMap::new();
    let mut burst = Vec::new();
    for i in 0..500 {
        let id = if i % 2 == 0 {
            json!(10_000 + i)
        } else {
            json!(format!("req-{i}-é"))
        };
        let text = format!("echo #{i} ✓ {}", "x".repeat(i % 37));
        burst.extend(Framing::Ndjson.encode(&echo(&id, &text)));
        assert!(expected.insert(canonical(&id), (id, text)).is_none());
    }

    // One write, then close stdin at once; read concurrently so no pipe can fill up.
    let mut stdin = s.stdin.take().unwrap();
    let writer = tokio::spawn(async move {
        stdin.write_all(&burst).await.unwrap();
        drop(stdin);
    });
    let mut out = Vec::new();
    within("stdout to end", s.stdout.read_to_end(&mut out))
        .await
        .unwrap();
    within("the writer", writer).await.unwrap();
    let done = s.finish().await;
    assert_eq!(done.status.code(), Some(0), "stderr: {}", done.stderr);
    assert!(done.rest.is_empty());

    let lines = frames(Framing::Ndjson, &out);
    assert_eq!(lines.len(), 500);
    for line in &lines {
        let v: Value = serde_json::from_str(line).unwrap();
        let (id, text) = expected
            .remove(&canonical(&v["id"]))
            .unwrap_or_else(|| panic!("unexpected or duplicate reply {line}"));
        assert_result(line, &id, &echo_result(&text, true));
    }
    assert!(
        expected.is_empty(),
        "{} requests unanswered",
        expected.len()
    );
}

// ---------------------------------------------------------------------------------------------
// 8: many requests in flight at once
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn concurrent_requests_are_each_answered_once() {
    let mut s = spawn(Framing::Ndjson, &[]);
    s.handshake("2025-06-18").await;

    // Everything is written before anything is read.
    let mut expected: HashMap<String, (Value, u32)> = HashMap::new();
    for i in 0..64u32 {
        let id = if i % 2 == 0 {
            json!(i)
        } else {
            json!(format!("c{i}"))
        };
        let message = match i % 3 {
            0 => request(&id, "ping", None),
            1 => request(&id, "tools/list", None),
            _ => echo(&id, &format!("concurrent {i}")),
        };
        s.send(&message).await;
        assert!(expected.insert(canonical(&id), (id, i)).is_none());
    }
    for _ in 0..64 {
        let raw = s.recv().await;
        let v: Value = serde_json::from_str(&raw).unwrap();
        let (id, i) = expected
            .remove(&canonical(&v["id"]))
            .unwrap_or_else(|| panic!("unexpected or duplicate reply {raw}"));
        match i % 3 {
            0 => assert_result(&raw, &id, &json!({})),
            1 => assert_tools_list(&raw, &id),
            _ => assert_result(&raw, &id, &echo_result(&format!("concurrent {i}"), true)),
        }
    }
    assert!(expected.is_empty());
    // Nothing more is queued: the next reply is the next request's.
    s.ping_ok(9999).await;

    let done = s.finish().await;
    assert!(done.rest.is_empty(), "{:?}", done.rest.escape_ascii());
    assert_eq!(done.status.code(), Some(0), "stderr: {}", done.stderr);
}

// ---------------------------------------------------------------------------------------------
// 9: SIGTERM and SIGINT with stdin still open
// ---------------------------------------------------------------------------------------------

/// Sends `signal` (as `kill` spells it: `-TERM`, `-INT`) to the server.
fn kill(child: &Child, signal: &str) {
    let pid = child.id().unwrap();
    let status = std::process::Command::new("kill")
        .arg(signal)
        .arg(pid.to_string())
        .status()
        .unwrap();
    assert!(status.success(), "kill {signal} {pid} failed");
}

#[tokio::test]
async fn sigterm_and_sigint_exit_zero() {
    for signal in ["-TERM", "-INT"] {
        let mut s = spawn(Framing::Ndjson, &[]);
        s.handshake("2025-06-18").await;
        s.ping_ok(2).await;

        kill(&s.child, signal);

        // stdin stays open: only the signal can end the server.
        let status = tokio::time::timeout(Duration::from_secs(5), s.child.wait())
            .await
            .unwrap_or_else(|_| panic!("still running 5 s after kill {signal}"))
            .unwrap();
        let mut rest = Vec::new();
        within("stdout to end", s.stdout.read_to_end(&mut rest))
            .await
            .unwrap();
        let stderr = within("stderr to end", s.stderr).await.unwrap();
        assert_eq!(
            status.code(),
            Some(0),
            "{signal}: status {status:?}, stderr: {stderr}"
        );
        assert!(rest.is_empty(), "{signal}: {:?}", rest.escape_ascii());
        drop(s.stdin);
    }
}

/// The same over a socket, as Node-based hosts connect: SIGTERM ends a server blocked reading
/// its socket, with exit code 0.
#[tokio::test]
async fn sigterm_on_a_socket_exits_zero() {
    let (mut child, ours, stderr) = spawn_on_socket(&[]);
    let ours = tokio::task::spawn_blocking(move || {
        use std::io::{BufRead, Write};
        let mut ours = ours;
        ours.write_all(format!("{}\n", request(&json!(7), "ping", None)).as_bytes())
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(&ours).read_line(&mut line).unwrap();
        assert_eq!(line, "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n");
        ours
    });
    // Kept open: only the signal can end the server.
    let ours = within("the ping over the socket", ours).await.unwrap();
    kill(&child, "-TERM");
    let status = tokio::time::timeout(Duration::from_secs(5), child.wait())
        .await
        .unwrap_or_else(|_| panic!("still running 5 s after SIGTERM on a socket"))
        .unwrap();
    let stderr = within("stderr to end", stderr).await.unwrap();
    assert_eq!(status.code(), Some(0), "stderr: {stderr}");
    drop(ours);
}

/// SIGTERM while the server is stuck writing to a client that stopped reading: the signal still
/// ends it (the loop waits on the write and the shutdown signal together), after the shutdown
/// grace (2 s) for the replies it could not deliver, with exit code 1 and a warning saying so.
#[tokio::test]
async fn sigterm_ends_a_write_the_client_never_drains() {
    let mut s = spawn(Framing::Ndjson, &[]);
    s.handshake("2025-06-18").await;
    let mut stdin = s.stdin.take().unwrap();
    // 64 echoes of 16 KiB: 2 MiB of replies against a 256 KiB stdout pipe nobody reads. The
    // writer keeps stdin open (it blocks once the server stops reading), so EOF cannot end it.
    let writer = tokio::spawn(async move {
        for id in 10..74 {
            let line = format!("{}\n", echo(&json!(id), &"x".repeat(16 * 1024)));
            if stdin.write_all(line.as_bytes()).await.is_err() {
                break;
            }
        }
        stdin
    });
    // Wait until its stdout pipe is full: its next write cannot go through (it has 1 MiB of
    // replies to write), so the signal lands on a server that is stuck writing.
    stdout_full(&s.child).await;
    kill(&s.child, "-TERM");
    let status = tokio::time::timeout(Duration::from_secs(10), s.child.wait())
        .await
        .unwrap_or_else(|_| panic!("still running 10 s after SIGTERM with its stdout stalled"))
        .unwrap();
    let stderr = within("stderr to end", s.stderr).await.unwrap();
    assert_eq!(
        status.code(),
        Some(1),
        "status {status:?}, stderr: {stderr}"
    );
    assert!(
        stderr.contains("gave up waiting for replies"),
        "stderr: {stderr}"
    );
    writer.abort();
}

/// Waits (at most [`TIMEOUT`]) until `child`'s stdout pipe is full, that is until a write of one byte
/// to it would block. The probe opens the pipe anew (`/proc/<pid>/fd/1`) with `O_NONBLOCK` on
/// an open file description of its own, so the server's is untouched; a byte that fits is
/// added to the server's output (only for tests that never read it again).
async fn stdout_full(child: &Child) {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let pid = child.id().unwrap();
    let probe = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(format!("/proc/{pid}/fd/1"))
        .unwrap();
    within("the server's stdout to fill", async {
        loop {
            match (&probe).write(b"\n") {
                Ok(_) => tokio::time::sleep(Duration::from_millis(5)).await,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) => panic!("probing the server's stdout: {e}"),
            }
        }
    })
    .await;
}

/// How stdin and stdout are served depends on what they are: pipes (Python, Rust, Go hosts) by
/// the blocking loop; sockets (what Node-based hosts such as Claude Code hand their servers)
/// on the async loop's reactor; anything else (here a file) read on a blocking thread. All
/// answer the same session byte for byte.
#[tokio::test]
async fn pipes_sockets_and_files_are_all_served() {
    let session = format!(
        "{}\n{INITIALIZED}\n{}\n{}\n",
        initialize(1, "2025-06-18"),
        echo(&json!(2), "über \"both\" loops"),
        request(&json!("p"), "ping", None),
    );
    let session_bytes = session.clone().into_bytes();
    // Over pipes.
    let mut s = spawn(Framing::Ndjson, &["--log-level", "debug"]);
    s.write(session.as_bytes()).await;
    let piped = s.finish().await;
    assert_eq!(piped.status.code(), Some(0), "stderr: {}", piped.stderr);
    assert!(
        piped.stderr.contains("serving on the blocking loop"),
        "stderr: {}",
        piped.stderr
    );

    // Over one end of a socketpair, as both stdin and stdout.
    let (mut child, ours, stderr) = spawn_on_socket(&["--log-level", "debug"]);
    let client = tokio::task::spawn_blocking(move || {
        use std::io::{Read, Write};
        let mut ours = ours;
        ours.write_all(session.as_bytes()).unwrap();
        ours.shutdown(std::net::Shutdown::Write).unwrap();
        let mut out = Vec::new();
        ours.read_to_end(&mut out).unwrap();
        out
    });
    let socketed = within("the socket client", client).await.unwrap();
    let status = within("the server to exit", child.wait()).await.unwrap();
    let stderr = within("stderr to end", stderr).await.unwrap();
    assert_eq!(status.code(), Some(0), "stderr: {stderr}");
    assert!(
        stderr.contains(r#"stdin="a socket" stdout="a socket""#),
        "stderr: {stderr}"
    );

    // stdin from a file, stdout a pipe.
    let path = std::env::temp_dir().join(format!("mcp-echo-session-{}.jsonl", std::process::id()));
    std::fs::write(&path, &session_bytes).unwrap();
    let mut cmd = command(&["--log-level", "debug"]);
    cmd.stdin(std::fs::File::open(&path).unwrap());
    let filed = within("the server on a file", cmd.output()).await.unwrap();
    let _ = std::fs::remove_file(&path);
    let stderr = String::from_utf8_lossy(&filed.stderr);
    assert_eq!(filed.status.code(), Some(0), "stderr: {stderr}");
    assert!(
        stderr.contains(r#"stdin="read on a blocking thread" stdout="a pipe""#),
        "stderr: {stderr}"
    );

    let replies = frames(Framing::Ndjson, &piped.rest);
    assert_eq!(replies.len(), 3, "{replies:?}");
    assert_initialize(&replies[0], &json!(1), "2025-06-18", true);
    assert_result(
        &replies[1],
        &json!(2),
        &echo_result("über \"both\" loops", true),
    );
    assert_eq!(replies[2], r#"{"jsonrpc":"2.0","id":"p","result":{}}"#);
    assert_eq!(
        String::from_utf8(socketed).unwrap(),
        String::from_utf8(piped.rest.clone()).unwrap()
    );
    assert_eq!(
        String::from_utf8(filed.stdout).unwrap(),
        String::from_utf8(piped.rest).unwrap()
    );
}

// ---------------------------------------------------------------------------------------------
// 10: stdout closed by the reader (EPIPE)
// ---------------------------------------------------------------------------------------------

async fn closed_stdout_case(read_first: bool) {
    let mut child = command(&[]).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let stderr = collect(child.stderr.take().unwrap());

    let mut burst = Vec::new();
    if read_first {
        within("writing initialize", async {
            stdin
                .write_all(&Framing::Ndjson.encode(&initialize(1, "2025-06-18")))
                .await
                .unwrap();
            stdin.flush().await.unwrap();
        })
        .await;
        let raw = read_line(&mut stdout).await;
        assert_initialize(&raw, &json!(1), "2025-06-18", true);
    } else {
        burst.extend(Framing::Ndjson.encode(&initialize(1, "2025-06-18")));
    }
    drop(stdout);

    burst.extend(Framing::Ndjson.encode(INITIALIZED));
    for i in 0..200 {
        burst.extend(Framing::Ndjson.encode(&echo(&json!(i + 2), "into the void")));
    }
    // The server may already be gone, so a failed write is fine; a blocked one is not.
    let _ = within("writing to stdin", stdin.write_all(&burst)).await;
    drop(stdin);

    let status = within("the server to exit after EPIPE", child.wait())
        .await
        .unwrap();
    let stderr = within("stderr to end", stderr).await.unwrap();
    assert!(
        !stderr.contains("panicked"),
        "read_first={read_first}: status {status:?}, stderr:\n{stderr}"
    );
}

#[tokio::test]
async fn closed_stdout_exits_quietly() {
    closed_stdout_case(false).await;
    closed_stdout_case(true).await;
}

// ---------------------------------------------------------------------------------------------
// 11: command line
// ---------------------------------------------------------------------------------------------

async fn run(args: &[&str]) -> std::process::Output {
    let mut cmd = command(args);
    cmd.stdin(Stdio::null());
    within(&format!("mcp-echo-server {args:?}"), cmd.output())
        .await
        .unwrap()
}

#[tokio::test]
async fn cli_version_help_and_bad_log_level() {
    let out = run(&["--version"]).await;
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!("mcp-echo-server {VERSION}\n")
    );
    assert_eq!(VERSION, "0.1.0");

    let out = run(&["--help"]).await;
    assert_eq!(out.status.code(), Some(0));
    let help = String::from_utf8(out.stdout).unwrap();
    for flag in ["--framing", "--max-message-bytes", "--log-level"] {
        assert!(
            help.contains(flag),
            "--help does not mention {flag}:\n{help}"
        );
    }

    let out = run(&["--log-level", "no=such=level"]).await;
    assert_eq!(
        out.status.code(),
        Some(2),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty(), "{:?}", out.stdout.escape_ascii());
}

// ---------------------------------------------------------------------------------------------
// 12: message size limit
// ---------------------------------------------------------------------------------------------

/// A `tools/call` echo whose JSON text is exactly `len` bytes.
fn echo_of_len(id: i64, len: usize) -> String {
    let base = echo(&json!(id), "").len();
    let message = echo(&json!(id), &"x".repeat(len - base));
    assert_eq!(message.len(), len);
    message
}

#[tokio::test]
async fn max_message_bytes_is_enforced() {
    for framing in Framing::BOTH {
        let mut s = spawn(framing, &["--max-message-bytes", "1024"]);
        s.handshake("2025-06-18").await;

        let raw = s.call(&echo_of_len(7, 2000)).await;
        assert_error(&raw, &Value::Null, -32600);
        s.ping_ok(8).await;

        // Under the limit is fine.
        let message = echo_of_len(9, 1000);
        let text = serde_json::from_str::<Value>(&message).unwrap()["params"]["arguments"]["text"]
            .as_str()
            .unwrap()
            .to_owned();
        let raw = s.call(&message).await;
        assert_result(&raw, &json!(9), &echo_result(&text, true));

        let done = s.finish().await;
        assert!(done.rest.is_empty(), "{:?}", done.rest.escape_ascii());
        assert_eq!(done.status.code(), Some(0), "stderr: {}", done.stderr);
    }
}

// ---------------------------------------------------------------------------------------------
// Also: version negotiation and exact ids
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn version_negotiation() {
    for (requested, negotiated, modern) in [
        ("2024-11-05", "2024-11-05", false),
        ("2025-03-26", "2025-03-26", false),
        ("2025-06-18", "2025-06-18", true),
        ("2025-11-25", "2025-11-25", true),
        ("1999-01-01", "2025-11-25", true),
    ] {
        let mut s = spawn(Framing::Ndjson, &[]);
        let raw = s.handshake(requested).await;
        assert_initialize(&raw, &json!(1), negotiated, modern);
        let raw = s.call(&echo(&json!(2), "v")).await;
        assert_result(&raw, &json!(2), &echo_result("v", modern));
        let done = s.finish().await;
        assert!(done.rest.is_empty(), "{:?}", done.rest.escape_ascii());
        assert_eq!(done.status.code(), Some(0), "stderr: {}", done.stderr);
    }
}

#[tokio::test]
async fn ids_are_echoed_exactly() {
    let ids = [
        "0",
        "-1",
        "9007199254740993",
        "18446744073709551615",
        r#""""#,
        r#""é🦀""#,
    ];
    for framing in Framing::BOTH {
        let mut s = spawn(framing, &[]);
        s.handshake("2025-06-18").await;
        for id in ids {
            // The id text goes on the wire untouched, and must come back untouched.
            let raw = s
                .call(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#))
                .await;
            assert_eq!(
                raw,
                format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#)
            );

            let raw = s
                .call(&format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"t"}}}}}}"#
                ))
                .await;
            assert_eq!(
                raw,
                format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"text":"t","type":"text"}}],"structuredContent":{{"text":"t"}}}}}}"#
                )
            );

            let raw = s
                .call(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"nope"}}"#))
                .await;
            assert!(
                raw.starts_with(&format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"#)),
                "{raw}"
            );
            let id: Value = serde_json::from_str(id).unwrap();
            assert_error(&raw, &id, -32601);
        }
        let done = s.finish().await;
        assert!(done.rest.is_empty(), "{:?}", done.rest.escape_ascii());
        assert_eq!(done.status.code(), Some(0), "stderr: {}", done.stderr);
    }
}

/// The server grows its stdout pipe (`stdio::OUTPUT_PIPE_BYTES`) so a large reply is one
/// `write`, and still echoes a reply larger than that pipe whole.
#[tokio::test]
async fn stdout_pipe_is_grown_and_large_replies_arrive_whole() {
    use nix::fcntl::{fcntl, FcntlArg};
    let mut s = spawn(Framing::Ndjson, &[]);
    s.handshake("2025-11-25").await;
    let size = fcntl(s.stdout.get_ref(), FcntlArg::F_GETPIPE_SZ).unwrap();
    assert_eq!(size, mcp_echo_server::stdio::OUTPUT_PIPE_BYTES);
    // Two copies of 200 000 bytes: larger than the grown pipe, so written in pieces.
    let text = "é".repeat(100_000);
    let raw = s.call(&echo(&json!(7), &text)).await;
    assert_result(&raw, &json!(7), &echo_result(&text, true));
    let done = s.finish().await;
    assert!(done.rest.is_empty(), "{:?}", done.rest.escape_ascii());
    assert_eq!(done.status.code(), Some(0), "stderr: {}", done.stderr);
}

/// A stdout pipe the host made bigger than `OUTPUT_PIPE_BYTES` already is not shrunk.
#[test]
fn a_larger_stdout_pipe_is_left_as_it_is() {
    use nix::fcntl::{fcntl, FcntlArg};
    use std::io::{BufRead, Write};
    let (read, write) = nix::unistd::pipe().unwrap();
    let big = 4 * mcp_echo_server::stdio::OUTPUT_PIPE_BYTES;
    assert_eq!(fcntl(&write, FcntlArg::F_SETPIPE_SZ(big)).unwrap(), big);
    let mut child = std::process::Command::new(BIN)
        .stdin(Stdio::piped())
        .stdout(Stdio::from(write))
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(format!("{}\n", initialize(1, "2025-11-25")).as_bytes())
        .unwrap();
    // The reply proves the server set its pipes up; read it on a thread, bounded by TIMEOUT.
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::fs::File::from(read.try_clone().unwrap());
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = std::io::BufReader::new(reader).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx.recv_timeout(TIMEOUT).expect("no initialize reply");
    assert!(line.contains(r#""id":1,"result""#), "{line}");
    assert_eq!(fcntl(&read, FcntlArg::F_GETPIPE_SZ).unwrap(), big);
    drop(stdin);
    let deadline = std::time::Instant::now() + TIMEOUT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no exit after stdin closed"
        );
        std::thread::sleep(Duration::from_millis(5));
    };
    assert!(status.success(), "{status}");
}
