//! Property tests for the server's dispatch: the invariants of the `server_dispatch` fuzz
//! target, checked by the same code (`fuzz/src/server_check.rs`, included below) on a few
//! hundred generated message sequences, in seconds.
//!
//! `serve` runs in-process over a tokio duplex; the sequence is written in random chunks and
//! input is closed. Every request that parses gets exactly one response with its exact id (in
//! input order when no tool call is still running; a cancelled running call may get none), a bad
//! frame one error with its id or null, notifications and responses none, batches one array,
//! and nothing but response frames is written.
//!
//! The server's reading of params (`ServerParams`) is held to the reference parser by
//! `fuzz/src/params_check.rs` (also run by the `parse` fuzz target) on generated messages.
#![allow(clippy::unwrap_used)]

#[path = "../../fuzz/src/input.rs"]
mod input;

#[path = "../../fuzz/src/server_check.rs"]
mod server_check;

#[path = "../../fuzz/src/params_check.rs"]
mod params_check;

#[path = "../../protocol/tests/support/json_text.rs"]
mod json_text;

use std::time::Duration;

use mcp_protocol::FramingMode;
use proptest::prelude::*;
use serde_json::{json, Value};
use server_check::Scenario;

/// Generous: a loaded machine is slow, and a hang is still caught.
const LIMIT: Duration = Duration::from_secs(60);

fn frame(lsp: bool, message: &Value) -> Vec<u8> {
    let body = serde_json::to_vec(message).unwrap();
    if lsp {
        let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
        out.extend_from_slice(&body);
        out
    } else {
        let mut out = body;
        out.push(b'\n');
        out
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Any bytes, read as a scenario: configuration, then generated messages (or a raw stream).
    #[test]
    fn dispatch_invariants_on_any_bytes(data in prop::collection::vec(any::<u8>(), 0..800)) {
        server_check::run(&data);
    }

    /// After a handshake, echo calls with distinct ids of every kind are answered once each,
    /// in order, with their text unchanged, whatever the framing and chunking.
    #[test]
    fn echo_calls_are_answered_once_in_order(
        texts in prop::collection::vec(any::<String>(), 1..24),
        lsp in any::<bool>(),
        auto in any::<bool>(),
        string_ids in any::<bool>(),
        chunk_seed in any::<u64>(),
        chunk_max in prop_oneof![Just(1usize), 1usize..64, Just(1 << 20)],
        duplex in prop_oneof![Just(64usize), Just(1 << 16)],
    ) {
        let mut stream = frame(lsp, &json!({"jsonrpc": "2.0", "id": "init", "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "props", "version": "1"}}}));
        stream.extend(frame(lsp, &json!({"jsonrpc": "2.0", "method": "notifications/initialized"})));
        let ids: Vec<Value> = (0..texts.len())
            .map(|i| if string_ids { json!(format!("{i}-é")) } else { json!(u64::MAX - i as u64) })
            .collect();
        for (id, text) in ids.iter().zip(&texts) {
            stream.extend(frame(lsp, &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": text}}})));
        }
        let framing = match (auto, lsp) {
            (true, _) => FramingMode::Auto,
            (false, true) => FramingMode::ContentLength,
            (false, false) => FramingMode::Ndjson,
        };
        let scenario = Scenario {
            framing,
            max_message: 1 << 20,
            max_header: 8192,
            slow_tool: false,
            duplex,
            chunk_seed,
            chunk_max,
            stream,
        };
        let run = server_check::run_server(&scenario, LIMIT);
        // The shared check: one reply per request, in order, echo text intact.
        server_check::check(&scenario, &run);
        // Over a socket, as the binary reads and writes one, and on the blocking loop (what
        // the binary runs on pipes): the same bytes.
        let socket = server_check::run_server_on_socket(&scenario, LIMIT);
        server_check::check(&scenario, &socket);
        prop_assert_eq!(&socket.output, &run.output);
        let blocking = server_check::run_server_blocking(&scenario, LIMIT);
        server_check::check(&scenario, &blocking);
        prop_assert_eq!(&blocking.output, &run.output);
        // And spelled out for this case.
        let replies: Vec<Value> = if lsp {
            let mut out = Vec::new();
            let mut rest = &run.output[..];
            while !rest.is_empty() {
                let end = rest.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
                let len: usize = std::str::from_utf8(&rest[16..end]).unwrap().parse().unwrap();
                out.push(serde_json::from_slice(&rest[end + 4..end + 4 + len]).unwrap());
                rest = &rest[end + 4 + len..];
            }
            out
        } else {
            run.output
                .split(|b| *b == b'\n')
                .filter(|l| !l.is_empty())
                .map(|l| serde_json::from_slice(l).unwrap())
                .collect()
        };
        prop_assert_eq!(replies.len(), texts.len() + 1);
        for ((reply, id), text) in replies[1..].iter().zip(&ids).zip(&texts) {
            prop_assert_eq!(&reply["id"], id);
            prop_assert_eq!(&reply["result"]["content"][0]["text"], &json!(text));
        }
    }
}

/// Any JSON value, with the strings JSON must escape.
fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        "[a-z\\\\\"\n\u{0}é🦀]{0,8}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(("[a-z_]{0,6}", inner), 0..4)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// A params member's text: any JSON, `tools/call`-shaped with any member values (sometimes a
/// member repeated), or an ordinary echo call.
fn arb_params() -> impl Strategy<Value = String> {
    prop_oneof![
        arb_json().prop_map(|v| v.to_string()),
        (arb_json(), arb_json(), arb_json(), any::<bool>()).prop_map(|(name, args, meta, dup)| {
            let again = if dup {
                format!(r#","name":{args},"arguments":{name}"#)
            } else {
                String::new()
            };
            format!(r#"{{"name":{name},"arguments":{args},"_meta":{meta}{again}}}"#)
        }),
        ("[a-z]{0,6}", "[a-z ]{0,12}").prop_map(|(name, text)| {
            json!({"name": name, "arguments": {"text": text}}).to_string()
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// `tools/call` and other methods, params before or after the method, requests and
    /// notifications, single or batched: the server reads what the reference parser reads.
    #[test]
    fn server_params_read_as_the_reference_parser_does(
        params in arb_params(),
        method in prop_oneof![
            3 => Just("tools/call".to_owned()),
            1 => Just("tools/list".to_owned()),
            1 => "[a-z/]{0,10}",
        ],
        params_first in any::<bool>(),
        notification in any::<bool>(),
        batch in any::<bool>(),
    ) {
        let id = if notification { "" } else { r#""id":7,"# };
        let message = if params_first {
            format!(r#"{{"jsonrpc":"2.0",{id}"params":{params},"method":"{method}"}}"#)
        } else {
            format!(r#"{{"jsonrpc":"2.0",{id}"method":"{method}","params":{params}}}"#)
        };
        let text = if batch { format!("[{message},{message}]") } else { message };
        params_check::run(text.as_bytes());
    }

    /// Message text written token by token, for the fast path's sake (escapes, whitespace,
    /// member order, numbers it leaves to serde_json), single or batched.
    #[test]
    fn server_params_read_as_the_reference_parser_does_on_message_text(
        text in json_text::message(),
        batch in any::<bool>(),
    ) {
        let text = if batch { format!("[{text}]") } else { text };
        params_check::run(text.as_bytes());
    }

    #[test]
    fn server_params_read_as_the_reference_parser_does_on_any_bytes(
        data in prop::collection::vec(any::<u8>(), 0..300),
    ) {
        params_check::run(&data);
    }
}
