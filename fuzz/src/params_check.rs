//! The server's own reading of params (`mcp_echo_server::ServerParams`, through
//! `mcp_protocol::parse_as`) against the reference parser, `mcp_protocol::parse`, on any bytes:
//!
//! 1. The same outcome: both accept or both refuse, with the same error, word for word.
//! 2. The same messages, once the server's params are turned back into `Value`s.
//! 3. The same result with and without the fast path (`ServerParams::scan`).
//! 4. A `tools/call` read into parts becomes typed params (`into_call`) exactly when
//!    `from_value::<CallToolParams>` accepts the reference's params, and into the same ones.

use mcp_echo_server::ServerParams;
use mcp_protocol::mcp::CallToolParams;
use mcp_protocol::{parse, parse_as, parse_with_serde, Incoming, Message, Notification, Request};
use serde_json::Value;

/// Runs every check on `data`. Panics on a violated invariant.
pub fn run(data: &[u8]) {
    let reference = parse(data);
    let ours = parse_as::<ServerParams>(data);
    assert_eq!(
        format!("{ours:?}"),
        format!("{:?}", parse_with_serde::<ServerParams>(data)),
        "ServerParams: the fast path and serde_json's path differ on {}",
        data.escape_ascii()
    );
    let (reference, ours) = match (reference, ours) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(a), Err(b)) => {
            assert_eq!(
                format!("{a:?}"),
                format!("{b:?}"),
                "different errors for {}",
                data.escape_ascii()
            );
            return;
        }
        (a, b) => panic!(
            "parse gave {a:?} but parse_as::<ServerParams> {b:?}\ninput: {}",
            data.escape_ascii()
        ),
    };
    let pairs: Vec<(Message, Message<ServerParams>)> = match (reference, ours) {
        (Incoming::Single(a), Incoming::Single(b)) => vec![(a, b)],
        (Incoming::Batch(a), Incoming::Batch(b)) => {
            assert_eq!(a.len(), b.len(), "batch sizes differ");
            let mut pairs = Vec::new();
            for (a, b) in a.into_iter().zip(b) {
                match (a, b) {
                    (Ok(a), Ok(b)) => pairs.push((a, b)),
                    (Err(a), Err(b)) => assert_eq!(a, b, "batch member errors differ"),
                    (a, b) => panic!("batch member: {a:?} against {b:?}"),
                }
            }
            pairs
        }
        (a, b) => panic!("single against batch: {a:?} / {b:?}"),
    };
    for (reference, ours) in pairs {
        if let Message::Request(Request {
            params: Some(ServerParams::ToolCall(parts)),
            ..
        }) = &ours
        {
            let expected = match &reference {
                Message::Request(r) => r
                    .params
                    .clone()
                    .and_then(|p| serde_json::from_value::<CallToolParams>(p).ok()),
                _ => None,
            };
            assert_eq!(
                parts.clone().into_call().ok(),
                expected,
                "typed tools/call params"
            );
        }
        assert_eq!(reference, as_values(ours), "input: {}", data.escape_ascii());
    }
}

fn as_values(message: Message<ServerParams>) -> Message {
    let value = |p: Option<ServerParams>| p.map(ServerParams::into_value);
    match message {
        Message::Request(r) => Message::Request(Request {
            id: r.id,
            method: r.method,
            params: value(r.params),
        }),
        Message::Notification(n) => Message::Notification(Notification {
            method: n.method,
            params: value(n.params),
        }),
        Message::Response(r) => Message::<Value>::Response(r),
    }
}
