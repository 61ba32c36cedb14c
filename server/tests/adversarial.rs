//! The adversarial input matrix (issue 8) against the real `mcp-echo-server` binary.
//!
//! Every case spawns the binary over real pipes, does the legacy handshake (`initialize` with
//! protocolVersion 2025-11-25, then `notifications/initialized`), sends one bad input, then
//! usually a `ping`, and checks what comes back:
//! * stdout is read strictly in the case's framing: anything that is not a well-formed frame
//!   holding exactly one JSON value fails the case;
//! * each reply to the bad input is compared with the expected JSON value (code, id, and the
//!   message where it is stable), or there must be none;
//! * the ping must then be answered with exactly `{"jsonrpc":"2.0","id":4242,"result":{}}`
//!   while stdin is still open;
//! * after stdin closes nothing else may be written, and the process must exit 0.
//!
//! Cases that end the stream (a body cut short by EOF, say) check the behaviour at EOF instead
//! of a ping. Each case runs in its own process; a few worker threads run them in parallel.
//!
//! Where the server is wrong today, the case states the correct behaviour and its name is in
//! [`KNOWN_FAILURES`]: such a case must still fail (when it starts passing, the test fails until
//! its entry is removed), and every other case must pass.
#![allow(clippy::unwrap_used)]

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-echo-server");
/// The longest wait for any one reply, for stdout to end, or for the exit. Generous, because
/// the machine may be loaded; a server that hangs fails the case after this long.
const WAIT: Duration = Duration::from_secs(30);
/// Cases run in this many processes at once.
const WORKERS: usize = 4;
/// The id of the ping sent after the bad input.
const PING_ID: i64 = 4242;
const LEGACY: &str = "2025-11-25";
/// The only revision with JSON-RPC batches.
const BATCH_ERA: &str = "2025-03-26";
/// `--max-message-bytes` for the size-limit cases.
const LIMIT: usize = 1024;
const DEFAULT_LIMIT: u64 = 16 * 1024 * 1024;
const INITIALIZED: &[u8] = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
/// A valid request, 40 bytes: the raw material of many bad inputs.
const PING5: &[u8] = br#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#;

/// Cases where the server's behaviour is wrong today (each is explained in the case list and
/// in the robustness matrix notes). They still run and must still fail.
const KNOWN_FAILURES: &[&str] = &[
    // None today. D1..D7 of the robustness notes (lone surrogates, ids beyond 64 bits, a
    // duplicate member losing the id, unbounded echo, replies to responses, an array batch
    // member, stray bytes before a Content-Length header) are fixed.
];

// ---------------------------------------------------------------------------------------------
// The case model
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    Ndjson,
    ContentLength,
}

const BOTH: &[Framing] = &[Framing::Ndjson, Framing::ContentLength];
const NDJSON: &[Framing] = &[Framing::Ndjson];
const CL: &[Framing] = &[Framing::ContentLength];

impl Framing {
    fn frame(self, body: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(body.len() + 32);
        self.frame_into(body, &mut out);
        out
    }

    fn frame_into(self, body: &[u8], out: &mut Vec<u8>) {
        match self {
            Framing::Ndjson => {
                out.extend_from_slice(body);
                out.push(b'\n');
            }
            Framing::ContentLength => {
                out.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
                out.extend_from_slice(body);
            }
        }
    }

    fn name(self) -> &'static str {
        match self {
            Framing::Ndjson => "ndjson",
            Framing::ContentLength => "content-length",
        }
    }
}

/// What the case sends after the handshake.
enum Input {
    /// One message body, framed in the case's framing.
    Body(Vec<u8>),
    /// One body framed this many times.
    Repeat(Vec<u8>, usize),
    /// Bytes sent exactly as given (for a case of one framing).
    Raw(Vec<u8>),
}

impl Input {
    fn write_into(&self, framing: Framing, out: &mut Vec<u8>) {
        match self {
            Input::Body(body) => framing.frame_into(body, out),
            Input::Repeat(body, n) => {
                for _ in 0..*n {
                    framing.frame_into(body, out);
                }
            }
            Input::Raw(bytes) => out.extend_from_slice(bytes),
        }
    }
}

/// What follows the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Then {
    /// A ping, which must be answered exactly while stdin is open; then stdin closes.
    Ping,
    /// stdin closes right after the input: the case is about the server's behaviour at EOF.
    Eof,
    /// A ping that the input makes part of a skipped body: it must never be answered, and the
    /// server must still end cleanly at EOF.
    PingSwallowed,
}

/// How an error message is checked.
enum Msg {
    /// Exactly this text.
    Is(String),
    /// A property of the text (for a correct behaviour whose exact wording is not fixed yet).
    Check(&'static str, fn(&str) -> bool),
}

/// One expected frame on stdout.
enum Reply {
    /// Exactly this JSON value.
    Json(Value),
    /// An error response with exactly this id and code, no `data`, and a message that passes.
    Error { id: Value, code: i64, message: Msg },
    /// A batch reply: exactly these values, in any order (JSON-RPC 2.0 §6 fixes no order).
    BatchAnyOrder(Vec<Value>),
}

struct Case {
    name: &'static str,
    framings: &'static [Framing],
    input: Input,
    /// Every frame the input must produce, in order; empty means silence.
    expect: Vec<Reply>,
    then: Then,
    args: &'static [&'static str],
    /// The protocolVersion of the handshake.
    version: &'static str,
}

fn case(
    name: &'static str,
    framings: &'static [Framing],
    input: Input,
    expect: Vec<Reply>,
) -> Case {
    Case {
        name,
        framings,
        input,
        expect,
        then: Then::Ping,
        args: &[],
        version: LEGACY,
    }
}

impl Case {
    fn then(mut self, then: Then) -> Self {
        self.then = then;
        self
    }

    fn args(mut self, args: &'static [&'static str]) -> Self {
        self.args = args;
        self
    }

    fn version(mut self, version: &'static str) -> Self {
        self.version = version;
        self
    }
}

// ---------------------------------------------------------------------------------------------
// Expected replies
// ---------------------------------------------------------------------------------------------

fn silence() -> Vec<Reply> {
    Vec::new()
}

fn result(id: Value, result: Value) -> Reply {
    Reply::Json(json!({ "jsonrpc": "2.0", "id": id, "result": result }))
}

fn error(id: Value, code: i64, message: impl Into<String>) -> Reply {
    Reply::Error {
        id,
        code,
        message: Msg::Is(message.into()),
    }
}

fn error_where(id: Value, code: i64, what: &'static str, check: fn(&str) -> bool) -> Reply {
    Reply::Error {
        id,
        code,
        message: Msg::Check(what, check),
    }
}

/// -32700 with id null and this detail after "Parse error: ".
fn parse_error(detail: &str) -> Reply {
    error(Value::Null, -32700, format!("Parse error: {detail}"))
}

fn header_error(detail: &str) -> Reply {
    parse_error(&format!("malformed Content-Length header: {detail}"))
}

/// -32700 with id null for bytes between frames that are not a frame (any wording).
fn stray_bytes_error() -> Reply {
    error_where(Value::Null, -32700, "starts with \"Parse error: \"", |m| {
        m.starts_with("Parse error: ")
    })
}

/// -32600 with this reason after "Invalid request: ".
fn invalid(id: Value, reason: &str) -> Reply {
    error(id, -32600, format!("Invalid request: {reason}"))
}

fn too_large(declared: Option<u64>, max: u64) -> Reply {
    let message = match declared {
        Some(n) => {
            format!("Invalid request: message of {n} bytes exceeds the limit of {max} bytes; it was skipped")
        }
        None => {
            format!("Invalid request: message exceeds the limit of {max} bytes; it was skipped")
        }
    };
    Reply::Json(json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {
            "code": -32600,
            "message": message,
            "data": { "declaredBytes": declared, "maxMessageBytes": max }
        }
    }))
}

fn ping_reply_text() -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{PING_ID},"result":{{}}}}"#)
}

impl Reply {
    fn check(&self, got: &Value) -> Result<(), String> {
        match self {
            Reply::Json(want) => {
                if got == want {
                    Ok(())
                } else {
                    Err(format!("expected {want}"))
                }
            }
            Reply::Error { id, code, message } => {
                let text = got["error"]["message"].as_str().unwrap_or_default();
                let want_text = match message {
                    Msg::Is(m) => m.clone(),
                    Msg::Check(what, check) => {
                        if !check(text) {
                            return Err(format!(
                                "expected an error with id {id} and code {code} whose message {what}"
                            ));
                        }
                        text.to_owned()
                    }
                };
                let want = json!({
                    "jsonrpc": "2.0",
                    "id": id,
                    "error": { "code": code, "message": want_text }
                });
                if *got == want {
                    Ok(())
                } else {
                    Err(format!("expected {}", shorten(&want.to_string())))
                }
            }
            Reply::BatchAnyOrder(items) => {
                let Some(got_items) = got.as_array() else {
                    return Err(format!("expected a batch of {} replies", items.len()));
                };
                let key = |v: &Value| v.to_string();
                let mut want_keys: Vec<String> = items.iter().map(key).collect();
                let mut got_keys: Vec<String> = got_items.iter().map(key).collect();
                want_keys.sort();
                got_keys.sort();
                if want_keys == got_keys {
                    Ok(())
                } else {
                    Err(format!(
                        "expected a batch of exactly {} replies (any order), first {}",
                        items.len(),
                        items.first().map(|v| v.to_string()).unwrap_or_default()
                    ))
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The matrix
// ---------------------------------------------------------------------------------------------

fn b(s: &str) -> Vec<u8> {
    s.as_bytes().to_vec()
}

fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

fn cl_frame(body: &[u8]) -> Vec<u8> {
    Framing::ContentLength.frame(body)
}

/// A ping with id 5 padded with a `params.pad` string to exactly `len` bytes.
fn ping5_of_len(len: usize) -> Vec<u8> {
    let empty = r#"{"jsonrpc":"2.0","id":5,"method":"ping","params":{"pad":""}}"#;
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":5,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(len - empty.len())
    );
    assert_eq!(body.len(), len);
    body.into_bytes()
}

/// The one error a batch longer than the server's bound (1 024) gets, with the bound.
fn batch_too_long() -> Reply {
    Reply::Json(json!({"jsonrpc": "2.0", "id": null, "error": {
        "code": -32600,
        "message": "Invalid request: a batch may hold at most 1024 messages; this one holds more (send them in smaller batches)",
        "data": {"maxBatchLength": 1024}}}))
}

/// `[0,0,…]` of `len` bytes: millions of members, each an invalid message.
fn zeros_batch(len: usize) -> Vec<u8> {
    let mut body = vec![b'['];
    while body.len() + 2 < len {
        body.extend_from_slice(b"0,");
    }
    body.extend_from_slice(b"0]");
    body
}

fn pings_batch(n: usize) -> Vec<u8> {
    let members: Vec<String> = (0..n)
        .map(|i| format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"ping"}}"#))
        .collect();
    format!("[{}]", members.join(",")).into_bytes()
}

fn cases() -> Vec<Case> {
    let id5 = || json!(5);
    let null = || Value::Null;
    let big = "a".repeat(100 * 1024);
    let nested_arrays = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let not_object = "a message must be a JSON object";
    let id_not_int = |rest: &str| format!("\"id\" must be a string or an integer, got {rest}");
    let params_not_structured =
        |rest: &str| format!("\"params\" must be an object or an array, got {rest}");
    let echo_b = json!({
        "content": [{ "type": "text", "text": "b" }],
        "structuredContent": { "text": "b" }
    });
    let recursion: fn(&str) -> bool = |m| m.starts_with("Parse error: recursion limit exceeded");
    // The id is an integer: the message must not call it a float, and must say what is wrong.
    let id_range: fn(&str) -> bool =
        |m| m.starts_with("Invalid request: ") && m.contains("range") && !m.contains("e+");
    let names_surrogate: fn(&str) -> bool =
        |m| m.starts_with("Parse error: ") && m.contains("surrogate");
    // \udfff is a low (trailing) surrogate: calling it "leading" is wrong.
    let names_low_surrogate: fn(&str) -> bool =
        |m| m.starts_with("Parse error: ") && m.contains("surrogate") && !m.contains("leading");

    vec![
        // --- Not JSON --------------------------------------------------------------------------
        case(
            "truncated JSON",
            BOTH,
            Input::Body(b(r#"{"jsonrpc":"2.0","id":5,"method":"ping""#)),
            vec![parse_error("EOF while parsing an object at line 1 column 39")],
        ),
        case(
            "trailing garbage after a message",
            BOTH,
            Input::Body(cat(&[PING5, b" xyz"])),
            vec![parse_error("trailing characters at line 1 column 42")],
        ),
        case(
            "two messages in one frame",
            BOTH,
            Input::Body(cat(&[PING5, PING5])),
            vec![parse_error("trailing characters at line 1 column 41")],
        ),
        case(
            "raw NUL byte inside a string",
            BOTH,
            Input::Body(b("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"p\0ing\"}")),
            vec![parse_error(
                r"control character (\u0000-\u001F) found while parsing a string at line 1 column 36",
            )],
        ),
        case(
            "NUL byte before a message",
            BOTH,
            Input::Body(cat(&[b"\0", PING5])),
            vec![parse_error("expected value at line 1 column 1")],
        ),
        case(
            "NUL byte after a message",
            BOTH,
            Input::Body(cat(&[PING5, b"\0"])),
            vec![parse_error("trailing characters at line 1 column 41")],
        ),
        case(
            "NUL bytes only",
            BOTH,
            Input::Body(b("\0\0\0")),
            vec![parse_error("expected value at line 1 column 1")],
        ),
        case(
            "invalid UTF-8 (0xFF) in a string",
            BOTH,
            Input::Body(cat(&[br#"{"jsonrpc":"2.0","id":5,"method":""#, b"\xff", br#""}"#])),
            vec![parse_error("invalid unicode code point at line 1 column 35")],
        ),
        case(
            "overlong 2-byte UTF-8 for '/'",
            BOTH,
            Input::Body(cat(&[br#"{"jsonrpc":"2.0","id":5,"method":""#, b"\xc0\xaf", br#""}"#])),
            vec![parse_error("invalid unicode code point at line 1 column 35")],
        ),
        case(
            "overlong 3-byte UTF-8 for '/'",
            BOTH,
            Input::Body(cat(&[br#"{"jsonrpc":"2.0","id":5,"method":""#, b"\xe0\x80\xaf", br#""}"#])),
            vec![parse_error("invalid unicode code point at line 1 column 35")],
        ),
        // serde_json says "unexpected end of hex escape" here, which says nothing of the real
        // problem (the escape is complete; it is a lone surrogate): the server rewords it.
        case(
            "lone high surrogate escape in method",
            BOTH,
            Input::Body(b(r#"{"jsonrpc":"2.0","id":5,"method":"\ud800"}"#)),
            vec![error_where(null(), -32700, "names the lone surrogate", names_surrogate)],
        ),
        // serde_json says "lone leading surrogate in hex escape", but \udfff is a trailing
        // (low) surrogate: the server rewords it.
        case(
            "lone low surrogate escape in params",
            BOTH,
            Input::Body(b(r#"{"jsonrpc":"2.0","id":5,"method":"ping","params":{"s":"\udfff"}}"#)),
            vec![error_where(
                null(),
                -32700,
                "names the lone surrogate without calling it leading",
                names_low_surrogate,
            )],
        ),
        case(
            "surrogate pair escape in params",
            BOTH,
            Input::Body(b(r#"{"jsonrpc":"2.0","id":5,"method":"ping","params":{"s":"\ud83d\ude00"}}"#)),
            vec![result(id5(), json!({}))],
        ),
        // --- Nesting ---------------------------------------------------------------------------
        case(
            "10 000-deep arrays as the message",
            BOTH,
            Input::Body(b(&nested_arrays)),
            vec![error_where(null(), -32700, "reports the nesting limit", recursion)],
        ),
        case(
            "10 000-deep arrays in params",
            BOTH,
            Input::Body(b(&format!(
                r#"{{"jsonrpc":"2.0","id":5,"method":"ping","params":{{"a":{nested_arrays}}}}}"#
            ))),
            vec![error_where(null(), -32700, "reports the nesting limit", recursion)],
        ),
        case(
            "10 000-deep objects in params",
            BOTH,
            Input::Body(b(&format!(
                r#"{{"jsonrpc":"2.0","id":5,"method":"ping","params":{}1{}}}"#,
                r#"{"a":"#.repeat(10_000),
                "}".repeat(10_000)
            ))),
            vec![error_where(null(), -32700, "reports the nesting limit", recursion)],
        ),
        case(
            "10 000-deep arrays in an ignored member",
            BOTH,
            Input::Body(b(&format!(
                r#"{{"jsonrpc":"2.0","id":5,"method":"ping","x":{nested_arrays}}}"#
            ))),
            vec![result(id5(), json!({}))],
        ),
        case(
            "10 000 unclosed objects",
            BOTH,
            Input::Body(b(&r#"{"a":"#.repeat(10_000))),
            vec![parse_error("EOF while parsing a value at line 1 column 50000")],
        ),
        // --- Numbers ---------------------------------------------------------------------------
        // It was an integer: the message must say it is out of range, not show the f64
        // serde_json read it as (1.8446744073709552e+19).
        case(
            "id 2^64",
            BOTH,
            Input::Body(b(r#"{"jsonrpc":"2.0","id":18446744073709551616,"method":"ping"}"#)),
            vec![error_where(null(), -32600, "says the integer is out of range", id_range)],
        ),
        // As above (not "got the number -9.223372036854776e+18").
        case(
            "id below i64::MIN",
            BOTH,
            Input::Body(b(r#"{"jsonrpc":"2.0","id":-9223372036854775809,"method":"ping"}"#)),
            vec![error_where(null(), -32600, "says the integer is out of range", id_range)],
        ),
        case(
            "id beyond f64 (1e400)",
            BOTH,
            Input::Body(b(r#"{"jsonrpc":"2.0","id":1e400,"method":"ping"}"#)),
            vec![parse_error("number out of range at line 1 column 27")],
        ),
        case(
            "number beyond f64 in params",
            BOTH,
            Input::Body(b(r#"{"jsonrpc":"2.0","id":5,"method":"ping","params":{"n":-1e400}}"#)),
            vec![parse_error("number out of range at line 1 column 60")],
        ),
        case(
            "integers beyond i64/u64 and tiny floats in params",
            BOTH,
            Input::Body(b(
                r#"{"jsonrpc":"2.0","id":5,"method":"ping","params":{"a":18446744073709551616,"b":-9223372036854775809,"c":123456789012345678901234567890,"d":1e308,"e":4.9e-325}}"#,
            )),
            vec![result(id5(), json!({}))],
        ),
        // --- Duplicate keys --------------------------------------------------------------------
        case(
            "duplicate id member",
            BOTH,
            Input::Body(b(r#"{"jsonrpc":"2.0","id":5,"id":6,"method":"ping"}"#)),
            vec![invalid(null(), "duplicate field `id` at line 1 column 28")],
        ),
        // The one "id" member is readable, so the error must carry it (not "id": null).
        case(
            "duplicate method member",
            BOTH,
            Input::Body(b(r#"{"jsonrpc":"2.0","id":5,"method":"ping","method":"nope"}"#)),
            vec![error_where(id5(), -32600, "names the duplicate method member", |m| {
                m.starts_with("Invalid request: ") && m.contains("duplicate") && m.contains("method")
            })],
        ),
        case(
            "duplicate keys inside params (last wins)",
            BOTH,
            Input::Body(b(
                r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a","text":"b"}}}"#,
            )),
            vec![result(id5(), echo_b)],
        ),
        // --- Ids of the wrong type -------------------------------------------------------------
        case(
            "id as a float",
            BOTH,
            Input::Body(b(r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#)),
            vec![invalid(null(), &id_not_int("the number 1.5"))],
        ),
        case(
            "id as an integral float (5.0)",
            BOTH,
            Input::Body(b(r#"{"jsonrpc":"2.0","id":5.0,"method":"ping"}"#)),
            vec![invalid(null(), &id_not_int("the number 5.0"))],
        ),
        case(
            "id as a boolean",
            BOTH,
            Input::Body(b(r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#)),
            vec![invalid(null(), &id_not_int("a boolean"))],
        ),
        case(
            "id as an object",
            BOTH,
            Input::Body(b(r#"{"jsonrpc":"2.0","id":{"a":5},"method":"ping"}"#)),
            vec![invalid(null(), &id_not_int("an object"))],
        ),
        case(
            "id as an array",
            BOTH,
            Input::Body(b(r#"{"jsonrpc":"2.0","id":[5],"method":"ping"}"#)),
            vec![invalid(null(), &id_not_int("an array"))],
        ),
        case(
            "id null",
            BOTH,
            Input::Body(b(r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#)),
            vec![invalid(null(), "\"id\" must not be null in MCP")],
        ),
        // --- Methods and params ----------------------------------------------------------------
        case(
            "empty method",
            BOTH,
            Input::Body(b(r#"{"jsonrpc":"2.0","id":5,"method":""}"#)),
            vec![error(id5(), -32601, "Method not found: ")],
        ),
        // The name must not be echoed whole (a 100 KiB reply; 16 MiB for a 16 MiB name).
        case(
            "method of 100 KiB",
            BOTH,
            Input::Body(b(&format!(r#"{{"jsonrpc":"2.0","id":5,"method":"{big}"}}"#))),
            vec![error_where(id5(), -32601, "names the method, cut to at most 1 KiB", |m| {
                m.starts_with("Method not found: aaaa") && m.len() <= 1024
            })],
        ),
        case(
            "notification with a method of 100 KiB",
            BOTH,
            Input::Body(b(&format!(r#"{{"jsonrpc":"2.0","method":"{big}"}}"#))),
            silence(),
        ),
        // As for the method: "Unknown tool: …" must not echo the whole name.
        case(
            "tool name of 100 KiB",
            BOTH,
            Input::Body(b(&format!(
                r#"{{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{{"name":"{big}","arguments":{{}}}}}}"#
            ))),
            vec![error_where(id5(), -32602, "names the tool, cut to at most 1 KiB", |m| {
                m.starts_with("Unknown tool: aaaa") && m.len() <= 1024
            })],
        ),
        case(
            "escaped NUL in the method name",
            BOTH,
            Input::Body(b(r#"{"jsonrpc":"2.0","id":5,"method":"ping\u0000"}"#)),
            vec![error(id5(), -32601, "Method not found: ping\0")],
        ),
        case(
            "params as a string",
            BOTH,
            Input::Body(b(r#"{"jsonrpc":"2.0","id":5,"method":"ping","params":"x"}"#)),
            vec![invalid(id5(), &params_not_structured("a string"))],
        ),
        case(
            "params as a number",
            BOTH,
            Input::Body(b(r#"{"jsonrpc":"2.0","id":5,"method":"ping","params":7}"#)),
            vec![invalid(id5(), &params_not_structured("a number"))],
        ),
        case(
            "tools/call params as an array",
            BOTH,
            Input::Body(b(r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":["echo"]}"#)),
            vec![error(
                id5(),
                -32602,
                "Invalid params for tools/call: params must be an object",
            )],
        ),
        // Not a valid notification, so JSON-RPC 2.0 §5 applies: -32600 with id null.
        case(
            "notification with params as a string",
            BOTH,
            Input::Body(b(r#"{"jsonrpc":"2.0","method":"notifications/x","params":"x"}"#)),
            vec![invalid(null(), &params_not_structured("a string"))],
        ),
        // --- Other shapes ----------------------------------------------------------------------
        case(
            "a JSON number as the message",
            BOTH,
            Input::Body(b("5")),
            vec![invalid(null(), not_object)],
        ),
        case(
            "an empty object",
            BOTH,
            Input::Body(b("{}")),
            vec![invalid(null(), "missing \"jsonrpc\": \"2.0\"")],
        ),
        case(
            "jsonrpc 1.0",
            BOTH,
            Input::Body(b(r#"{"jsonrpc":"1.0","id":5,"method":"ping"}"#)),
            vec![invalid(id5(), "\"jsonrpc\" must be \"2.0\", got \"1.0\"")],
        ),
        // --- Responses sent to the server ------------------------------------------------------
        case(
            "response with a result",
            BOTH,
            Input::Body(b(r#"{"jsonrpc":"2.0","id":5,"result":{}}"#)),
            silence(),
        ),
        case(
            "response with an error",
            BOTH,
            Input::Body(b(r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"m"}}"#)),
            silence(),
        ),
        case(
            "error response with id null",
            BOTH,
            Input::Body(b(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"m"}}"#)),
            silence(),
        ),
        // These three are invalid responses: a -32600 reply (with "id": 5 for the first two)
        // would be taken by the client for the answer to *its own* request 5. A response is
        // never answered, valid or not.
        case(
            "response with a non-object error",
            BOTH,
            Input::Body(b(r#"{"jsonrpc":"2.0","id":5,"error":"x"}"#)),
            silence(),
        ),
        case(
            "response with both result and error",
            BOTH,
            Input::Body(b(
                r#"{"jsonrpc":"2.0","id":5,"result":{},"error":{"code":1,"message":"m"}}"#,
            )),
            silence(),
        ),
        case(
            "response with result but no id",
            BOTH,
            Input::Body(b(r#"{"jsonrpc":"2.0","result":{}}"#)),
            silence(),
        ),
        // --- Batches ---------------------------------------------------------------------------
        case(
            "empty batch",
            BOTH,
            Input::Body(b("[]")),
            vec![invalid(null(), "empty batch: a batch must contain at least one message")],
        ),
        case(
            "batch of 1 024 (2025-11-25: no batches)",
            BOTH,
            Input::Body(pings_batch(1024)),
            vec![error(
                null(),
                -32600,
                "JSON-RPC batches are not supported in protocol version 2025-11-25 (only 2025-03-26 has them); send messages one per line",
            )],
        ),
        case(
            "batch of 1 024, the most allowed (2025-03-26)",
            BOTH,
            Input::Body(pings_batch(1024)),
            vec![Reply::BatchAnyOrder(
                (0..1024)
                    .map(|i| json!({ "jsonrpc": "2.0", "id": i, "result": {} }))
                    .collect(),
            )],
        )
        .version(BATCH_ERA),
        // One member too many: one error for the whole batch, not 1 025 replies (nor, for a
        // frame of `[0,0,…]`, millions).
        case(
            "batch of 1 025 (2025-03-26): refused whole",
            BOTH,
            Input::Body(pings_batch(1025)),
            vec![batch_too_long()],
        )
        .version(BATCH_ERA),
        case(
            "15 MiB batch of zeros (2025-03-26): refused whole",
            BOTH,
            Input::Body(zeros_batch(15 << 20)),
            vec![batch_too_long()],
        )
        .version(BATCH_ERA),
        // ["2.0",5,"ping"] must not be read positionally as {"jsonrpc":"2.0","id":5,
        // "method":"ping"} (a derived serde impl maps a sequence onto a struct's fields).
        case(
            "batch member that is an array",
            BOTH,
            Input::Body(b(r#"[["2.0",5,"ping"]]"#)),
            vec![Reply::BatchAnyOrder(vec![json!({
                "jsonrpc": "2.0",
                "id": null,
                "error": { "code": -32600, "message": format!("Invalid request: {not_object}") }
            })])],
        )
        .version(BATCH_ERA),
        // --- Floods ----------------------------------------------------------------------------
        case(
            "100 000 notifications in a burst",
            BOTH,
            Input::Repeat(
                b(r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}"#),
                100_000,
            ),
            silence(),
        ),
        case(
            "empty line flood",
            NDJSON,
            Input::Raw(b(&"\n".repeat(100_000))),
            silence(),
        ),
        case(
            "whitespace-only line flood",
            NDJSON,
            Input::Raw(b(&" \t\r\n".repeat(100_000))),
            silence(),
        ),
        case(
            "blank line flood between frames",
            CL,
            Input::Raw(b(&"\r\n".repeat(100_000))),
            silence(),
        ),
        // --- Size limit (--max-message-bytes 1024) ---------------------------------------------
        case(
            "message of exactly the size limit",
            BOTH,
            Input::Body(ping5_of_len(LIMIT)),
            vec![result(id5(), json!({}))],
        )
        .args(&["--max-message-bytes", "1024"]),
        case(
            "message one byte over the size limit",
            BOTH,
            Input::Body(ping5_of_len(LIMIT + 1)),
            vec![too_large(Some(LIMIT as u64 + 1), LIMIT as u64)],
        )
        .args(&["--max-message-bytes", "1024"]),
        case(
            "line of exactly the size limit ended by CRLF",
            NDJSON,
            Input::Raw(cat(&[&ping5_of_len(LIMIT), b"\r\n"])),
            vec![result(id5(), json!({}))],
        )
        .args(&["--max-message-bytes", "1024"]),
        case(
            "line far over the size limit",
            NDJSON,
            Input::Body(ping5_of_len(5000)),
            vec![too_large(None, LIMIT as u64)],
        )
        .args(&["--max-message-bytes", "1024"]),
        case(
            "body far over the size limit",
            CL,
            Input::Body(ping5_of_len(5000)),
            vec![too_large(Some(5000), LIMIT as u64)],
        )
        .args(&["--max-message-bytes", "1024"]),
        // --- Newline-delimited framing ---------------------------------------------------------
        case(
            "bare CR between two messages",
            NDJSON,
            Input::Raw(cat(&[PING5, b"\r", PING5, b"\n"])),
            vec![parse_error("trailing characters at line 1 column 42")],
        ),
        case(
            "1 MiB garbage line",
            NDJSON,
            Input::Raw(b(&format!("{}\n", "hello ".repeat(174_763)))),
            vec![parse_error("expected value at line 1 column 1")],
        ),
        case(
            "last message without a newline, then EOF",
            NDJSON,
            Input::Raw(PING5.to_vec()),
            vec![result(id5(), json!({}))],
        )
        .then(Then::Eof),
        case(
            "truncated last line, then EOF",
            NDJSON,
            Input::Raw(b(r#"{"jsonrpc":"2.0","id":5,"method":"pi"#)),
            vec![parse_error("EOF while parsing a string at line 1 column 36")],
        )
        .then(Then::Eof),
        // --- Content-Length framing ------------------------------------------------------------
        case(
            "Content-Length of -1",
            CL,
            Input::Raw(cat(&[b"Content-Length: -1\r\n\r\n", PING5])),
            vec![header_error("Content-Length must be a decimal byte count, got \"-1\"")],
        ),
        case(
            "Content-Length of 2^64",
            CL,
            Input::Raw(cat(&[b"Content-Length: 18446744073709551616\r\n\r\n", PING5])),
            vec![header_error("Content-Length 18446744073709551616 is out of range")],
        ),
        // The length is valid: everything after the header is that body, the ping included.
        case(
            "Content-Length of 2^64-1",
            CL,
            Input::Raw(cat(&[b"Content-Length: 18446744073709551615\r\n\r\n", PING5])),
            vec![too_large(Some(u64::MAX), DEFAULT_LIMIT)],
        )
        .then(Then::PingSwallowed),
        case(
            "Content-Length of \"abc\"",
            CL,
            Input::Raw(cat(&[b"Content-Length: abc\r\n\r\n", PING5])),
            vec![header_error("Content-Length must be a decimal byte count, got \"abc\"")],
        ),
        case(
            "empty Content-Length value",
            CL,
            Input::Raw(cat(&[b"Content-Length: \r\n\r\n", PING5])),
            vec![header_error("Content-Length must be a decimal byte count, got \"\"")],
        ),
        case(
            "Content-Length of \"+40\"",
            CL,
            Input::Raw(cat(&[b"Content-Length: +40\r\n\r\n", PING5])),
            vec![header_error("Content-Length must be a decimal byte count, got \"+40\"")],
        ),
        case(
            "missing Content-Length",
            CL,
            Input::Raw(cat(&[b"Content-Type: application/json\r\n\r\n", PING5])),
            vec![header_error("missing Content-Length header")],
        ),
        case(
            "duplicated Content-Length",
            CL,
            Input::Raw(cat(&[b"Content-Length: 40\r\nContent-Length: 40\r\n\r\n", PING5])),
            vec![header_error("Content-Length appears more than once")],
        ),
        case(
            "duplicated Content-Length, different values",
            CL,
            Input::Raw(cat(&[b"Content-Length: 40\r\nContent-Length: 41\r\n\r\n", PING5])),
            vec![header_error("Content-Length appears more than once")],
        ),
        case(
            "Content-Length bigger than the body, then EOF",
            CL,
            Input::Raw(cat(&[b"Content-Length: 100\r\n\r\n", PING5])),
            vec![parse_error(
                "input ended inside a message: Content-Length declared 100 bytes but only 40 arrived",
            )],
        )
        .then(Then::Eof),
        case(
            "header block then EOF",
            CL,
            Input::Raw(b("Content-Length: 100\r\n\r\n")),
            vec![parse_error(
                "input ended inside a message: Content-Length declared 100 bytes but only 0 arrived",
            )],
        )
        .then(Then::Eof),
        case(
            "EOF inside a header",
            CL,
            Input::Raw(b("Content-Len")),
            vec![parse_error(
                "input ended inside a message: incomplete header block \"Content-Len\"",
            )],
        )
        .then(Then::Eof),
        case(
            "header without \\r",
            CL,
            Input::Raw(cat(&[b"Content-Length: 40\n\n", PING5])),
            vec![result(id5(), json!({}))],
        ),
        case(
            "header names in any case, an unknown header, a Content-Type",
            CL,
            Input::Raw(cat(&[
                b"content-LENGTH:40\r\nX-Trace: abc\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n",
                PING5,
            ])),
            vec![result(id5(), json!({}))],
        ),
        case(
            "header line without a colon",
            CL,
            Input::Raw(cat(&[b"Content-Length 40\r\n\r\n", PING5])),
            vec![header_error("header line \"Content-Length 40\" is not \"Name: value\"")],
        ),
        // The unreadable block is skipped to the next Content-Length, which is a whole frame.
        case(
            "1 MiB header line before Content-Length",
            CL,
            Input::Raw(cat(&[
                b"X-Junk: ",
                &b"a".repeat(1 << 20),
                b"\r\nContent-Length: 40\r\n\r\n",
                PING5,
            ])),
            vec![
                header_error("no empty line within the first 8192 bytes of the header block"),
                result(id5(), json!({})),
            ],
        ),
        case(
            "1 MiB Content-Length value",
            CL,
            Input::Raw(cat(&[
                b"Content-Length: ",
                &b"0".repeat(1 << 20),
                b"40\r\n\r\n",
                PING5,
            ])),
            vec![header_error("no empty line within the first 8192 bytes of the header block")],
        ),
        // The next five: bytes that are not a frame run into the next header (e.g.
        // `d":"ping"}Content-Length: 44`). They must be reported once, and decoding must
        // restart at that header, so the ping's frame is not lost (nor an NDJSON line ignored
        // without a word).
        case(
            "Content-Length of 0 with a body",
            CL,
            Input::Raw(cat(&[b"Content-Length: 0\r\n\r\n", PING5])),
            vec![
                parse_error("EOF while parsing a value at line 1 column 0"),
                stray_bytes_error(),
            ],
        ),
        case(
            "Content-Length shorter than the body",
            CL,
            Input::Raw(cat(&[b"Content-Length: 30\r\n\r\n", PING5])),
            vec![
                parse_error("EOF while parsing a string at line 1 column 30"),
                stray_bytes_error(),
            ],
        ),
        case(
            "garbage between frames",
            CL,
            Input::Raw(cat(&[&cl_frame(PING5), b"xyz"])),
            vec![result(id5(), json!({})), stray_bytes_error()],
        ),
        case(
            "NUL bytes before a frame",
            CL,
            Input::Raw(b("\0\0\0")),
            vec![stray_bytes_error()],
        ),
        case(
            "NDJSON line on a Content-Length stream",
            CL,
            Input::Raw(cat(&[PING5, b"\n"])),
            vec![stray_bytes_error()],
        ),
    ]
}

// ---------------------------------------------------------------------------------------------
// Running one case
// ---------------------------------------------------------------------------------------------

/// What the stdout reader saw.
enum Event {
    /// One frame's body.
    Frame(Vec<u8>),
    /// Bytes that are not a well-formed frame.
    Garbage(String),
    /// stdout ended cleanly between frames.
    Eof,
}

/// Reads stdout strictly in `framing`, one event per frame, until EOF or garbage.
fn read_frames(stdout: impl Read, framing: Framing, events: &mpsc::Sender<Event>) {
    let mut reader = BufReader::with_capacity(256 * 1024, stdout);
    loop {
        let event = match framing {
            Framing::Ndjson => read_line(&mut reader),
            Framing::ContentLength => read_cl_frame(&mut reader),
        };
        let last = !matches!(event, Event::Frame(_));
        if events.send(event).is_err() || last {
            return;
        }
    }
}

fn read_line(reader: &mut impl BufRead) -> Event {
    let mut line = Vec::new();
    match reader.read_until(b'\n', &mut line) {
        Ok(0) => Event::Eof,
        Ok(_) if !line.ends_with(b"\n") => {
            Event::Garbage(format!("unterminated line {}", snippet(&line)))
        }
        Ok(_) => {
            line.pop();
            if line.contains(&b'\r') {
                Event::Garbage(format!("\\r in a line {}", snippet(&line)))
            } else {
                Event::Frame(line)
            }
        }
        Err(e) => Event::Garbage(format!("reading stdout: {e}")),
    }
}

fn read_cl_frame(reader: &mut impl BufRead) -> Event {
    let mut header = Vec::new();
    while !header.ends_with(b"\r\n\r\n") {
        let mut byte = [0u8];
        match reader.read(&mut byte) {
            Ok(0) if header.is_empty() => return Event::Eof,
            Ok(0) => {
                return Event::Garbage(format!("stdout ended in a header {}", snippet(&header)))
            }
            Ok(_) => header.push(byte[0]),
            Err(e) => return Event::Garbage(format!("reading stdout: {e}")),
        }
        if header.len() > 40 {
            return Event::Garbage(format!("not a Content-Length header: {}", snippet(&header)));
        }
    }
    let len = std::str::from_utf8(&header)
        .ok()
        .and_then(|h| h.strip_prefix("Content-Length: "))
        .and_then(|h| h.strip_suffix("\r\n\r\n"))
        .filter(|n| !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()))
        .and_then(|n| n.parse::<usize>().ok());
    let Some(len) = len else {
        return Event::Garbage(format!("not a Content-Length header: {}", snippet(&header)));
    };
    let mut body = vec![0; len];
    match reader.read_exact(&mut body) {
        Ok(()) => Event::Frame(body),
        Err(e) => Event::Garbage(format!("stdout ended inside a {len}-byte body: {e}")),
    }
}

fn snippet(bytes: &[u8]) -> String {
    let shown = &bytes[..bytes.len().min(300)];
    let more = if bytes.len() > 300 { "..." } else { "" };
    format!("\"{}\"{more} ({} bytes)", shown.escape_ascii(), bytes.len())
}

fn shorten(text: &str) -> String {
    if text.len() <= 400 {
        return text.to_owned();
    }
    let mut cut = 400;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}... ({} bytes)", &text[..cut], text.len())
}

/// Why no expected frame came.
enum Missing {
    /// The server went idle with stdin still open: it will not send the frame without more
    /// input.
    Idle,
    /// Anything else, described.
    Other(String),
}

/// Tells a server that is idle (waiting for input it will never get) from one still working.
struct Watch<'a> {
    pid: u32,
    /// Set once the whole input is written: before that the server may be waiting for it.
    input_written: &'a AtomicBool,
}

/// How long the server must use no CPU, with all input written and no frame arriving, to be
/// considered idle.
const IDLE: Duration = Duration::from_secs(1);

/// The process's run state and CPU time (utime + stime, in clock ticks), from /proc.
fn cpu(pid: u32) -> Option<(char, u64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let fields: Vec<&str> = stat[stat.rfind(')')? + 1..].split_whitespace().collect();
    let state = fields.first()?.chars().next()?;
    let ticks = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some((state, ticks))
}

/// Waits for the next event; with a `watch`, gives up early once the server is idle.
fn next_event(events: &mpsc::Receiver<Event>, watch: Option<&Watch>) -> Result<Event, Missing> {
    let deadline = Instant::now() + WAIT;
    let mut last = None;
    let mut idle_since = Instant::now();
    loop {
        match events.recv_timeout(Duration::from_millis(50)) {
            Ok(event) => return Ok(event),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(Missing::Other("the stdout reader stopped".to_owned()))
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        if Instant::now() > deadline {
            return Err(Missing::Other(format!(
                "nothing within {WAIT:?} (server hung?)"
            )));
        }
        let Some(watch) = watch else { continue };
        let now = cpu(watch.pid)
            .filter(|(state, _)| *state != 'R' && watch.input_written.load(Ordering::SeqCst));
        match now {
            Some((_, ticks)) if last == Some(ticks) => {
                if idle_since.elapsed() >= IDLE {
                    return Err(Missing::Idle);
                }
            }
            _ => {
                last = now.map(|(_, ticks)| ticks);
                idle_since = Instant::now();
            }
        }
    }
}

/// The next frame as raw text and JSON; anything else is an error naming `what` was expected.
fn next_frame(
    events: &mpsc::Receiver<Event>,
    watch: Option<&Watch>,
    what: &str,
) -> Result<(String, Value), Missing> {
    let other = |e: String| Missing::Other(format!("{what}: {e}"));
    match next_event(events, watch)? {
        Event::Frame(body) => {
            let text = String::from_utf8(body)
                .map_err(|e| other(format!("a frame that is not UTF-8: {e}")))?;
            let value = serde_json::from_str(&text).map_err(|e| {
                other(format!(
                    "a frame that is not one JSON value ({e}): {}",
                    shorten(&text)
                ))
            })?;
            Ok((text, value))
        }
        Event::Garbage(g) => Err(other(format!("stdout is not clean frames: {g}"))),
        Event::Eof => Err(other("stdout ended instead".to_owned())),
    }
}

/// Everything stdout still carries, described, up to its end.
fn drain(events: &mpsc::Receiver<Event>) -> String {
    let mut frames = Vec::new();
    let end = loop {
        match next_event(events, None) {
            Ok(Event::Frame(body)) => frames.push(shorten(&String::from_utf8_lossy(&body))),
            Ok(Event::Eof) => break "then stdout ended".to_owned(),
            Ok(Event::Garbage(g)) => break format!("then garbage: {g}"),
            Err(Missing::Other(e)) => break e,
            Err(Missing::Idle) => break "the server went idle".to_owned(),
        }
    };
    if frames.is_empty() {
        format!("nothing; {end}")
    } else {
        format!("{} frame(s): {}; {end}", frames.len(), frames.join(" | "))
    }
}

fn initialize(version: &str) -> Vec<u8> {
    json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": { "name": "adversarial-test", "version": "1.0.0" }
        }
    })
    .to_string()
    .into_bytes()
}

/// Checks every frame up to the ping's reply, closes stdin (by dropping `close`) and checks
/// that stdout then ends with nothing more.
fn check_replies(
    case: &Case,
    events: &mpsc::Receiver<Event>,
    close: mpsc::Sender<()>,
    watch: &Watch,
) -> Result<(), String> {
    // While stdin is open, a server that goes idle without the expected frame will not send
    // it: close stdin then, and say what it wrote before exiting.
    let watch = (case.then != Then::Eof).then_some(watch);
    let missing = |what: &str, m: Missing, close: mpsc::Sender<()>| match m {
        Missing::Other(e) => e,
        Missing::Idle => {
            drop(close);
            format!(
                "{what}: the server went idle with stdin open and never sent it; after stdin closed it wrote {}",
                drain(events)
            )
        }
    };
    let what = "the initialize reply";
    let (_, init) = match next_frame(events, watch, what) {
        Ok(frame) => frame,
        Err(m) => return Err(missing(what, m, close)),
    };
    if init["id"] != json!(1) || init["result"]["protocolVersion"] != json!(case.version) {
        return Err(format!("unexpected initialize reply {init}"));
    }
    let n = case.expect.len();
    for (i, want) in case.expect.iter().enumerate() {
        let what = format!("reply {} of {n} to the input", i + 1);
        let (text, got) = match next_frame(events, watch, &what) {
            Ok(frame) => frame,
            Err(m) => return Err(missing(&what, m, close)),
        };
        want.check(&got)
            .map_err(|e| format!("{what}: {e}, got {}", shorten(&text)))?;
    }
    if case.then == Then::Ping {
        let what = if n == 0 {
            "the ping reply (the input should get no reply)".to_owned()
        } else {
            format!(
                "the ping reply after {n} repl{}",
                if n == 1 { "y" } else { "ies" }
            )
        };
        let (text, _) = match next_frame(events, watch, &what) {
            Ok(frame) => frame,
            Err(m) => return Err(missing(&what, m, close)),
        };
        if text != ping_reply_text() {
            return Err(format!(
                "{what}: expected {}, got {}",
                ping_reply_text(),
                shorten(&text)
            ));
        }
    }
    drop(close);
    match next_event(events, None) {
        Ok(Event::Eof) => Ok(()),
        Ok(Event::Frame(body)) => Err(format!(
            "an unexpected frame after the expected ones: {}; then {}",
            snippet(&body),
            drain(events)
        )),
        Ok(Event::Garbage(g)) => Err(format!("stdout is not clean frames at the end: {g}")),
        Err(Missing::Other(e)) => Err(format!("after stdin closed: {e}")),
        Err(Missing::Idle) => unreachable!("no watch"),
    }
}

fn wait_exit(child: &mut Child) -> Result<i32, String> {
    let deadline = Instant::now() + WAIT;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                return status
                    .code()
                    .ok_or_else(|| format!("killed by a signal: {status}"))
            }
            Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(5)),
            Ok(None) => return Err(format!("did not exit within {WAIT:?} of stdin closing")),
            Err(e) => return Err(format!("waiting for the server: {e}")),
        }
    }
}

/// Runs one case in one framing against a fresh server process.
fn run_case(case: &Case, framing: Framing) -> Result<(), String> {
    let mut child = Command::new(BIN)
        .args(case.args)
        .env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("spawning {BIN}: {e}"))?;
    let stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();

    let mut input = framing.frame(&initialize(case.version));
    framing.frame_into(INITIALIZED, &mut input);
    case.input.write_into(framing, &mut input);
    if case.then != Then::Eof {
        let ping = format!(r#"{{"jsonrpc":"2.0","id":{PING_ID},"method":"ping"}}"#);
        framing.frame_into(ping.as_bytes(), &mut input);
    }

    let (close_tx, close_rx) = mpsc::channel::<()>();
    let close_at_once = case.then == Then::Eof;
    let input_written = Arc::new(AtomicBool::new(false));
    let written_flag = Arc::clone(&input_written);
    // Written from its own thread while replies are read, so no pipe buffer can deadlock us.
    let writer = thread::spawn(move || {
        let mut stdin = stdin;
        let written = stdin.write_all(&input).and_then(|()| stdin.flush());
        written_flag.store(true, Ordering::SeqCst);
        if !close_at_once {
            // Returns when the checker closes its end: time to close stdin.
            let _ = close_rx.recv();
        }
        drop(stdin);
        written.map_err(|e| format!("writing the input to stdin failed: {e}"))
    });
    let stderr_reader = thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = stderr.read_to_end(&mut buf);
        String::from_utf8_lossy(&buf).into_owned()
    });
    let (events_tx, events) = mpsc::channel();
    let reader = thread::spawn(move || read_frames(stdout, framing, &events_tx));

    let watch = Watch {
        pid: child.id(),
        input_written: &input_written,
    };
    let checked = check_replies(case, &events, close_tx, &watch);
    let exit = match &checked {
        Ok(()) => wait_exit(&mut child),
        Err(_) => {
            // Our own child: stop it so the threads below finish.
            let _ = child.kill();
            let _ = child.wait();
            Ok(0)
        }
    };
    let written = writer.join().unwrap();
    drop(events);
    reader.join().unwrap();
    let stderr = stderr_reader.join().unwrap();
    let with_stderr = |e: String| {
        let tail: String = stderr
            .chars()
            .rev()
            .take(1500)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        format!("{e}\n      server stderr (end): {}", tail.trim_end())
    };
    checked.map_err(with_stderr)?;
    written.map_err(with_stderr)?;
    match exit.map_err(with_stderr)? {
        0 => Ok(()),
        code => Err(with_stderr(format!("exit code {code} at EOF, expected 0"))),
    }
}

fn label(case: &Case, framing: Framing) -> String {
    format!("{} [{}]", case.name, framing.name())
}

/// Runs every (case, framing) on `WORKERS` threads; returns the labels and outcomes.
fn run_all(cases: &[Case]) -> Vec<(String, &'static str, Result<(), String>)> {
    let jobs: Vec<(&Case, Framing)> = cases
        .iter()
        .flat_map(|c| c.framings.iter().map(move |f| (c, *f)))
        .collect();
    let next = AtomicUsize::new(0);
    let outcomes = Mutex::new(Vec::new());
    thread::scope(|s| {
        for _ in 0..WORKERS {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some((case, framing)) = jobs.get(i) else {
                    return;
                };
                let outcome = run_case(case, *framing);
                outcomes
                    .lock()
                    .unwrap()
                    .push((label(case, *framing), case.name, outcome));
            });
        }
    });
    outcomes.into_inner().unwrap()
}

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

#[test]
fn adversarial_matrix() {
    let started = Instant::now();
    let cases = cases();
    let names: HashSet<&str> = cases.iter().map(|c| c.name).collect();
    assert_eq!(names.len(), cases.len(), "case names must be unique");
    assert!(cases.len() >= 40, "only {} distinct inputs", cases.len());
    for known in KNOWN_FAILURES {
        assert!(
            names.contains(known),
            "KNOWN_FAILURES names no case: {known:?}"
        );
    }

    let mut outcomes = run_all(&cases);
    outcomes.sort_by(|a, b| a.0.cmp(&b.0));
    let mut unexpected = Vec::new();
    let mut fixed = Vec::new();
    let mut known = Vec::new();
    for (label, name, outcome) in &outcomes {
        let is_known = KNOWN_FAILURES.contains(name);
        match (outcome, is_known) {
            (Ok(()), false) => {}
            (Ok(()), true) => fixed.push(label.clone()),
            (Err(e), false) => unexpected.push(format!("  {label}: {e}")),
            (Err(e), true) => known.push(format!("  {label}: {e}")),
        }
    }
    eprintln!(
        "adversarial matrix: {} cases, {} runs in {:.1?}; {} known failures still failing:\n{}",
        cases.len(),
        outcomes.len(),
        started.elapsed(),
        known.len(),
        known.join("\n")
    );
    assert!(
        unexpected.is_empty(),
        "{} case(s) failed:\n{}",
        unexpected.len(),
        unexpected.join("\n")
    );
    assert!(
        fixed.is_empty(),
        "known failures that now pass (remove them from KNOWN_FAILURES): {fixed:?}"
    );
}

/// The checker itself must catch wrong replies, extra replies, a missing ping reply and a
/// swallowed ping that was in fact answered: otherwise a broken server could pass the matrix.
#[test]
fn the_checker_catches_wrong_behaviour() {
    let truncated = || Input::Body(b(r#"{"jsonrpc":"2.0","id":5,"method":"ping""#));
    let right = parse_error("EOF while parsing an object at line 1 column 39");
    assert_eq!(
        run_case(
            &case("control", BOTH, truncated(), vec![right]),
            Framing::Ndjson
        ),
        Ok(())
    );
    let wrong: Vec<(&str, Case)> = vec![
        ("expects silence", case("x", BOTH, truncated(), silence())),
        (
            "expects another id",
            case(
                "x",
                BOTH,
                truncated(),
                vec![error_where(json!(5), -32700, "anything", |_| true)],
            ),
        ),
        (
            "expects another message",
            case("x", BOTH, truncated(), vec![parse_error("something else")]),
        ),
        (
            "expects one reply too many",
            case(
                "x",
                BOTH,
                truncated(),
                vec![stray_bytes_error(), stray_bytes_error()],
            ),
        ),
        (
            "expects a swallowed ping",
            case(
                "x",
                BOTH,
                Input::Body(PING5.to_vec()),
                vec![result(json!(5), json!({}))],
            )
            .then(Then::PingSwallowed),
        ),
        (
            "expects a batch",
            case(
                "x",
                BOTH,
                Input::Body(PING5.to_vec()),
                vec![Reply::BatchAnyOrder(vec![
                    json!({"jsonrpc":"2.0","id":5,"result":{}}),
                ])],
            ),
        ),
    ];
    // The ping is swallowed by a huge body: the idle server must be reported, not waited for.
    let swallowed = case(
        "x",
        CL,
        Input::Raw(cat(&[
            b"Content-Length: 18446744073709551615\r\n\r\n",
            PING5,
        ])),
        vec![too_large(Some(u64::MAX), DEFAULT_LIMIT)],
    );
    let error = run_case(&swallowed, Framing::ContentLength).unwrap_err();
    assert!(error.contains("went idle"), "{error}");
    for (what, c) in &wrong {
        for framing in [Framing::Ndjson, Framing::ContentLength] {
            assert!(
                run_case(c, framing).is_err(),
                "a case that {what} passed in {framing:?}"
            );
        }
    }
}

/// The stdout reader accepts clean frames only: a log line, a stray `\r`, a cut frame or a
/// header other than `Content-Length: N` is garbage.
#[test]
fn the_reader_rejects_anything_but_frames() {
    let read = |framing: Framing, bytes: &[u8]| {
        let (tx, rx) = mpsc::channel();
        read_frames(bytes, framing, &tx);
        drop(tx);
        rx.iter()
            .map(|e| match e {
                Event::Frame(body) => format!("frame {}", String::from_utf8_lossy(&body)),
                Event::Garbage(_) => "garbage".to_owned(),
                Event::Eof => "eof".to_owned(),
            })
            .collect::<Vec<_>>()
    };
    use Framing::{ContentLength, Ndjson};
    assert_eq!(read(Ndjson, b"{}\n[]\n"), ["frame {}", "frame []", "eof"]);
    assert_eq!(read(Ndjson, b"{}\r\n"), ["garbage"]);
    assert_eq!(read(Ndjson, b"{}\n{}"), ["frame {}", "garbage"]);
    assert_eq!(
        read(ContentLength, b"Content-Length: 2\r\n\r\n{}"),
        ["frame {}", "eof"]
    );
    for bad in [
        &b"content-length: 2\r\n\r\n{}"[..],
        b"Content-Length: 2\n\n{}",
        b"Content-Length: 3\r\n\r\n{}",
        b"Content-Length: x\r\n\r\n{}",
        b"Content-Length: 2\r\n\r",
        b"INFO serving MCP on stdio\n",
    ] {
        assert_eq!(
            read(ContentLength, bad),
            ["garbage"],
            "{}",
            bad.escape_ascii()
        );
    }
}
