//! The core driven with no I/O: bytes in, exact bytes out, however the input is split.

use std::time::Duration;

use futures::FutureExt;
use mcp_protocol::mcp::{self, CallToolResult};
use mcp_protocol::FramingMode;
use serde_json::{json, Map, Value};

use super::*;
use crate::connection::CurrentRuntime;
use crate::tools::{default_tools, Tool, ToolCall};

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// A session's frames: replies of every kind, a bad frame, an invalid response (no reply).
const FRAMES: [&str; 8] = [
    r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
    r#"{"jsonrpc":"2.0","id":"e","method":"tools/call","params":{"name":"echo","arguments":{"text":"héllo\n"}}}"#,
    r#"[{"jsonrpc":"2.0","id":3,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"}]"#,
    r#"{"jsonrpc":"2.0","id":4,"method":"nope"}"#,
    r#"{"jsonrpc":"2.0","id":5,"result":{},"error":{"code":1,"message":"m"}}"#,
    r#"{"jsonrpc":"2.0","id":6,"#,
    r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{}}}"#,
    r#"{"jsonrpc":"2.0","id":8,"method":"ping"}"#,
];

/// The reply bodies to [`FRAMES`] but the last, in order (the invalid response gets none).
const REPLIES: [&str; 6] = [
    r#"{"jsonrpc":"2.0","id":2,"result":{}}"#,
    r#"{"jsonrpc":"2.0","id":"e","result":{"content":[{"text":"héllo\n","type":"text"}]}}"#,
    r#"[{"jsonrpc":"2.0","id":3,"result":{}}]"#,
    r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"Method not found: nope"}}"#,
    r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: EOF while parsing a value at line 1 column 24"}}"#,
    r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"text":"Invalid arguments for tool echo: missing required property `text` (a string). Call echo with {\"text\": \"<the text to echo>\"}.","type":"text"}],"isError":true}}"#,
];

fn init_reply() -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":{{"capabilities":{{"tools":{{"listChanged":false}}}},"instructions":"Echo server for testing MCP clients: call the `echo` tool with {{\"text\": \"...\"}} and it returns the text unchanged.","protocolVersion":"2025-03-26","serverInfo":{{"name":"mcp-echo-server","version":"{}"}}}}}}"#,
        env!("CARGO_PKG_VERSION")
    )
}

fn core(framing: FramingMode) -> Core<CurrentRuntime> {
    let config = Config {
        framing,
        ..Config::default()
    };
    Core::new(&config, Arc::new(default_tools()), CurrentRuntime)
}

/// Takes every unwritten reply, as a write that takes all would.
fn take(out: &mut Replies, into: &mut Vec<u8>) {
    let n = out.unwritten().len();
    into.extend_from_slice(out.unwritten());
    out.wrote(n);
}

/// Handles the frames read so far, "writing" whenever replies are due.
fn handle(core: &mut Core<CurrentRuntime>, written: &mut Vec<u8>) {
    loop {
        match core.handle().unwrap() {
            Burst::Idle => return,
            Burst::Due => take(core.out(), written),
            Burst::Failed(e) => panic!("{e}"),
        }
    }
}

/// Feeds `chunks` one by one, handling frames (and "writing" when due) after each, then ends
/// input and drains: every byte written, in order.
fn serve(framing: FramingMode, chunks: &[&[u8]]) -> Vec<u8> {
    let mut core = core(framing);
    let mut written = Vec::new();
    for chunk in chunks {
        core.feed(chunk);
        handle(&mut core, &mut written);
        take(core.out(), &mut written);
    }
    core.end_input();
    handle(&mut core, &mut written);
    let mut drain = core.finish(&Exit::InputClosed).unwrap();
    loop {
        match drain.next().unwrap() {
            Step::Write => take(drain.out(), &mut written),
            Step::Wait => panic!("no task runs"),
            Step::Done => return written,
        }
    }
}

/// The session framed as NDJSON, the last frame unterminated.
fn ndjson() -> Vec<u8> {
    let mut input = format!("{INIT}\n{INITIALIZED}\n").into_bytes();
    input.extend(FRAMES.join("\n").bytes());
    input
}

/// The session with `Content-Length` headers, the last frame cut short.
fn content_length() -> Vec<u8> {
    let mut input = Vec::new();
    for body in [INIT, INITIALIZED].iter().chain(&FRAMES) {
        input.extend(format!("Content-Length: {}\r\n\r\n{body}", body.len()).bytes());
    }
    input.truncate(input.len() - 3);
    input
}

/// Every reply, framed, the last one being `last`.
fn expected(frame: fn(&str) -> String, last: &str) -> String {
    let init = init_reply();
    std::iter::once(init.as_str())
        .chain(REPLIES)
        .chain([last])
        .map(frame)
        .collect()
}

fn ndjson_frame(body: &str) -> String {
    format!("{body}\n")
}

fn cl_frame(body: &str) -> String {
    format!("Content-Length: {}\r\n\r\n{body}", body.len())
}

/// Serves `input` whole, split in two at every offset, and one byte at a time: the same
/// bytes out each time, and `expected` ones.
fn same_however_split(input: &[u8], expected: &str) {
    assert_eq!(text(&serve(FramingMode::Auto, &[input])), expected);
    for at in 0..=input.len() {
        let (a, b) = input.split_at(at);
        assert_eq!(
            text(&serve(FramingMode::Auto, &[a, b])),
            expected,
            "split at {at}"
        );
    }
    let bytes: Vec<&[u8]> = input.chunks(1).collect();
    assert_eq!(text(&serve(FramingMode::Auto, &bytes)), expected);
}

fn text(bytes: &[u8]) -> &str {
    std::str::from_utf8(bytes).unwrap()
}

#[test]
fn ndjson_replies_are_exact_however_the_input_is_split() {
    // The unterminated last line is still a frame, answered at the end of input.
    let expected = expected(ndjson_frame, r#"{"jsonrpc":"2.0","id":8,"result":{}}"#);
    same_however_split(&ndjson(), &expected);
}

#[test]
fn content_length_replies_are_exact_however_the_input_is_split() {
    // A body cut short by the end of input is reported.
    let last = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: input ended inside a message: Content-Length declared 40 bytes but only 37 arrived"}}"#;
    same_however_split(&content_length(), &expected(cl_frame, last));
}

#[test]
fn a_burst_stops_to_write_when_replies_are_due_and_goes_on_after() {
    let mut core = core(FramingMode::Ndjson);
    let mut input = format!("{INIT}\n{INITIALIZED}\n");
    let mut want = ndjson_frame(&init_reply());
    for id in 0..200 {
        input.push_str(&format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}\n"
        ));
        want.push_str(&format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{}}}}\n"
        ));
    }
    core.feed(input.as_bytes());
    let mut written = Vec::new();
    let mut writes = 0;
    while let Burst::Due = core.handle().unwrap() {
        assert!(core.out().unwritten().len() >= crate::pacing::WRITE_AT);
        take(core.out(), &mut written);
        writes += 1;
    }
    take(core.out(), &mut written);
    assert!(writes >= 2, "{writes}");
    assert_eq!(text(&written), want);
}

#[test]
fn nothing_is_drained_once_the_output_is_closed() {
    assert!(core(FramingMode::Auto)
        .finish(&Exit::OutputClosed)
        .is_none());
}

/// A tool that answers after `ms` milliseconds: a task the drain waits for.
struct Sleep(mcp::Tool);

impl Tool for Sleep {
    fn definition(&self) -> &mcp::Tool {
        &self.0
    }
    fn call(&self, args: Map<String, Value>) -> ToolCall {
        let ms = args.get("ms").and_then(Value::as_u64).unwrap_or(0);
        ToolCall::Pending(
            async move {
                tokio::time::sleep(Duration::from_millis(ms)).await;
                CallToolResult::text(format!("slept {ms}"))
            }
            .boxed(),
        )
    }
}

/// A drain with a `sleep` of `ms` running, a ping answered after it, and input ended.
fn draining(ms: u64) -> Drain<CurrentRuntime> {
    let mut tools = default_tools();
    tools
        .register(Sleep(mcp::Tool {
            name: "sleep".into(),
            title: None,
            description: None,
            input_schema: json!({"type": "object"}),
            output_schema: None,
            annotations: None,
        }))
        .unwrap();
    let mut core = Core::new(&Config::default(), Arc::new(tools), CurrentRuntime);
    let sleep = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                       "params": {"name": "sleep", "arguments": {"ms": ms}}});
    core.feed(format!("{INIT}\n{INITIALIZED}\n{sleep}\n").as_bytes());
    core.feed(br#"{"jsonrpc":"2.0","id":10,"method":"ping"}"#);
    core.end_input();
    assert!(matches!(core.handle().unwrap(), Burst::Idle));
    assert!(core.running());
    core.finish(&Exit::InputClosed).unwrap()
}

#[tokio::test]
async fn the_drain_writes_what_was_made_then_waits_for_each_running_task() {
    let mut drain = draining(5);
    let mut written = Vec::new();
    assert_eq!(drain.next().unwrap(), Step::Write);
    take(drain.out(), &mut written);
    assert_eq!(drain.next().unwrap(), Step::Wait);
    let reply = drain.queue().recv().await.unwrap();
    drain.task_reply(reply).unwrap();
    assert_eq!(drain.next().unwrap(), Step::Write);
    take(drain.out(), &mut written);
    assert_eq!(drain.next().unwrap(), Step::Done);
    let sleep =
        r#"{"jsonrpc":"2.0","id":9,"result":{"content":[{"text":"slept 5","type":"text"}]}}"#;
    let ping = r#"{"jsonrpc":"2.0","id":10,"result":{}}"#;
    let want: String = [init_reply().as_str(), ping, sleep]
        .into_iter()
        .map(ndjson_frame)
        .collect();
    assert_eq!(text(&written), want);
}

#[tokio::test]
async fn giving_up_aborts_the_running_tasks() {
    let mut drain = draining(60_000);
    assert_eq!(drain.next().unwrap(), Step::Write);
    let mut written = Vec::new();
    take(drain.out(), &mut written);
    assert_eq!(drain.next().unwrap(), Step::Wait);
    let in_flight = Arc::clone(&drain.in_flight);
    assert!(matches!(drain.give_up(), Exit::DrainTimedOut));
    assert!(lock(&in_flight).is_empty());
}
