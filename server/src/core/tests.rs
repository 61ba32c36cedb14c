//! The core driven with no I/O at all: messages in, exact actions out.
#![allow(clippy::unwrap_used)]

use futures::FutureExt;
use mcp_protocol::mcp::{self, CallToolResult};
use mcp_protocol::{parse_as, ErrorCode, RequestId};
use serde_json::{json, Map, Value};

use super::*;
use crate::tools::{default_tools, Tool, ToolCall};

/// A tool whose calls run until the transport ends them (it never has to here).
struct Later(mcp::Tool);

impl Tool for Later {
    fn definition(&self) -> &mcp::Tool {
        &self.0
    }
    fn call(&self, _: Map<String, Value>) -> ToolCall {
        ToolCall::Pending(std::future::pending().boxed())
    }
}

fn core() -> Core<&'static str> {
    let mut tools = default_tools();
    tools
        .register(Later(mcp::Tool {
            name: "later".into(),
            title: None,
            description: None,
            input_schema: json!({"type": "object"}),
            output_schema: None,
            annotations: None,
        }))
        .unwrap();
    Core::new(Served::new(Arc::new(tools), ServerInfo::default()))
}

/// A running call's request through [`Core::ask`], as a transport with a stream sees it: the
/// message to write, or the refusal handed back with its answer.
pub(super) fn ask(
    c: &mut Core<&'static str>,
    call: CallId,
    method: String,
    params: Option<Value>,
    answer: &'static str,
) -> Result<Outgoing, (&'static str, PeerError)> {
    let asked = c.ask(call, Sending::Message { method, params }, answer, true);
    match (asked.send.into_iter().next(), asked.settle) {
        (Some(send), _) => Ok(send),
        (None, Some((answer, Err(why)))) => Err((answer, why)),
        (None, settle) => panic!("nothing sent, settled with {settle:?}"),
    }
}

/// Hands `message` to the core; its actions.
pub(super) fn feed(core: &mut Core<&'static str>, message: Value) -> Vec<Action<&'static str>> {
    let bytes = serde_json::to_vec(&message).unwrap();
    let mut out = Vec::new();
    core.incoming(parse_as::<ServerParams>(&bytes).unwrap(), &mut out);
    out
}

fn ready(capabilities: Value) -> Core<&'static str> {
    let mut c = core();
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2025-03-26","capabilities":capabilities,
        "clientInfo":{"name":"t","version":"1"}}});
    assert!(matches!(feed(&mut c, init)[..], [Action::Send(_)]));
    assert!(feed(
        &mut c,
        json!({"jsonrpc":"2.0","method":"notifications/initialized"})
    )
    .is_empty());
    c
}

fn call(id: Value, tool: &str) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":tool,"arguments":{}}})
}

fn cancel(id: Value) -> Value {
    json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":id}})
}

/// The messages `action` sends, as JSON.
pub(super) fn sent(action: &Action<&'static str>) -> Value {
    match action {
        Action::Send(out) => {
            let messages = out.clone().into_messages();
            let values: Vec<Value> = messages
                .iter()
                .map(|m| serde_json::to_value(m).unwrap())
                .collect();
            match out {
                Outgoing::Batch(_) => Value::Array(values),
                _ => values.into_iter().next().unwrap(),
            }
        }
        other => panic!("not a Send: {other:?}"),
    }
}

pub(super) fn started(actions: &[Action<&'static str>]) -> CallId {
    match actions {
        [Action::Start(call, _)] => *call,
        other => panic!("not one Start: {other:?}"),
    }
}

#[test]
fn a_ready_call_is_answered_at_once_and_a_running_one_when_it_ends() {
    let mut c = ready(json!({}));
    let echo = json!({"jsonrpc":"2.0","id":1,"method":"tools/call",
        "params":{"name":"echo","arguments":{"text":"hi"}}});
    let out = feed(&mut c, echo);
    assert_eq!(sent(&out[0])["result"]["content"][0]["text"], "hi");

    let call = started(&feed(&mut c, call(json!("x"), "later")));
    let mut out = Vec::new();
    c.finished(call, CallToolResult::text("done"), &mut out);
    assert_eq!(
        sent(&out[0]),
        json!({"jsonrpc":"2.0","id":"x","result":{"content":[{"type":"text","text":"done"}]}})
    );
    // Reported twice: the second is for a call the core no longer knows.
    let mut again = Vec::new();
    c.finished(call, CallToolResult::text("done"), &mut again);
    assert!(again.is_empty(), "{again:?}");
}

#[test]
fn a_duplicate_id_in_flight_is_refused_and_free_again_once_the_call_ends() {
    let mut c = ready(json!({}));
    let first = started(&feed(&mut c, call(json!(7), "later")));
    let out = feed(&mut c, call(json!(7), "later"));
    let reply = sent(&out[0]);
    assert_eq!(reply["id"], 7);
    assert_eq!(reply["error"]["code"], ErrorCode::INVALID_REQUEST.0);
    c.finished(first, CallToolResult::text("a"), &mut Vec::new());
    started(&feed(&mut c, call(json!(7), "later")));
}

#[test]
fn cancellation_aborts_the_call_and_its_late_result_is_dropped() {
    let mut c = ready(json!({}));
    let running = started(&feed(&mut c, call(json!(3), "later")));
    let out = feed(&mut c, cancel(json!(3)));
    assert!(
        matches!(out[..], [Action::Abort(call)] if call == running),
        "{out:?}"
    );
    let mut late = Vec::new();
    c.finished(running, CallToolResult::text("late"), &mut late);
    assert!(late.is_empty());
    // Unknown ids and invalid params are ignored.
    assert!(feed(&mut c, cancel(json!(99))).is_empty());
    assert!(feed(
        &mut c,
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"x":1}})
    )
    .is_empty());
}

#[test]
fn a_batch_is_answered_once_its_last_member_ends() {
    let mut c = core();
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}});
    feed(&mut c, init);
    feed(
        &mut c,
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
    );
    let batch = json!([
        call(json!(1), "later"),
        {"jsonrpc":"2.0","id":2,"method":"ping"},
        {"jsonrpc":"2.0","method":"notifications/x"},
        call(json!(3), "later"),
    ]);
    let out = feed(&mut c, batch);
    let calls: Vec<CallId> = out
        .iter()
        .map(|a| match a {
            Action::Start(call, _) => *call,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(calls.len(), 2);
    // Batch members are not cancellable.
    assert!(feed(&mut c, cancel(json!(1))).is_empty());
    let mut out = Vec::new();
    c.finished(calls[1], CallToolResult::text("three"), &mut out);
    assert!(out.is_empty(), "{out:?}");
    c.finished(calls[0], CallToolResult::text("one"), &mut out);
    let ids: Vec<Value> = sent(&out[0])
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].clone())
        .collect();
    // Those answered at once first, then the running ones, each in member order.
    assert_eq!(ids, [json!(2), json!(1), json!(3)]);
}

#[test]
fn batches_only_in_2025_03_26() {
    let mut c = ready(json!({}));
    let mut legacy = core();
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}});
    feed(&mut legacy, init);
    let out = feed(
        &mut legacy,
        json!([{"jsonrpc":"2.0","id":1,"method":"ping"}]),
    );
    let reply = sent(&out[0]);
    assert_eq!(reply["id"], Value::Null);
    assert_eq!(reply["error"]["code"], ErrorCode::INVALID_REQUEST.0);
    // In 2025-03-26, a batch of notifications gets nothing.
    assert!(feed(
        &mut c,
        json!([{"jsonrpc":"2.0","method":"notifications/x"}])
    )
    .is_empty());
}

#[test]
fn a_call_asks_the_client_only_what_it_declared_and_gets_the_answer_routed_back() {
    let mut c = ready(json!({"roots": {}}));
    let call = started(&feed(&mut c, call(json!(1), "later")));

    let Err((answer, why)) = ask(
        &mut c,
        call,
        "sampling/createMessage".into(),
        None,
        "sampling",
    ) else {
        panic!("sampling was not declared");
    };
    assert_eq!(answer, "sampling");
    assert_eq!(
        why,
        PeerError::NotDeclared("sampling", "sampling/createMessage".into())
    );

    let request = ask(&mut c, call, "roots/list".into(), None, "roots").unwrap();
    let Outgoing::Single(Message::Request(request)) = request else {
        panic!("{request:?}");
    };
    assert_eq!(request.method, "roots/list");
    let answer = json!({"jsonrpc":"2.0","id":request.id,"result":{"roots":[]}});
    let out = feed(&mut c, answer.clone());
    match &out[..] {
        [Action::Answer("roots", Ok(result))] => assert_eq!(result, &json!({"roots": []})),
        other => panic!("{other:?}"),
    }
    // The same answer again, or one to an id never used: ignored.
    assert!(feed(&mut c, answer).is_empty());
    assert!(feed(&mut c, json!({"jsonrpc":"2.0","id":"nope","result":{}})).is_empty());
}

/// A ready core whose client declared `roots`, a running call, and its `roots/list` request.
fn asking() -> (Core<&'static str>, CallId, mcp_protocol::Request) {
    let mut c = ready(json!({"roots": {}}));
    let call = started(&feed(&mut c, call(json!(1), "later")));
    match ask(&mut c, call, "roots/list".into(), None, "roots") {
        Ok(Outgoing::Single(Message::Request(request))) => (c, call, request),
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_error_answer_reaches_the_call_as_an_error() {
    let (mut c, _, request) = asking();
    let out = feed(
        &mut c,
        json!({"jsonrpc":"2.0","id":request.id,"error":{"code":-1,"message":"no"}}),
    );
    match &out[..] {
        [Action::Answer(_, Err(PeerError::Error(e)))] => assert_eq!(e.message, "no"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn requests_a_call_leaves_unanswered_are_cancelled_when_it_ends() {
    let (mut c, call, request) = asking();
    let out = feed(&mut c, cancel(json!(1)));
    assert_eq!(
        sent(&out[0]),
        json!({"jsonrpc":"2.0","method":"notifications/cancelled",
               "params":{"requestId":request.id,"reason":"the tool call that sent it ended"}})
    );
    assert!(matches!(out[1], Action::Abort(c) if c == call));
    // The late answer finds nobody waiting.
    assert!(feed(&mut c, json!({"jsonrpc":"2.0","id":request.id,"result":{}})).is_empty());
    // And an ended call can ask nothing more.
    let Err((_, why)) = ask(&mut c, call, "ping".into(), None, "x") else {
        panic!();
    };
    assert_eq!(why, PeerError::Closed);
}

#[test]
fn a_2026_07_28_call_cannot_ask_and_needs_no_handshake() {
    let mut c = core();
    let client = mcp::Implementation {
        name: "t".into(),
        title: None,
        version: "1".into(),
    };
    let meta = mcp::modern::request_meta(mcp::ProtocolVersion::LATEST.as_str(), &client);
    let request = json!({"jsonrpc":"2.0","id":1,"method":"tools/call",
        "params":{"name":"later","arguments":{},"_meta":meta}});
    assert_eq!(
        Era::of("tools/call", parse_request_params(&request).as_ref()),
        Era::Modern
    );
    let call = started(&feed(&mut c, request));
    let Err((_, why)) = ask(&mut c, call, "ping".into(), None, "x") else {
        panic!();
    };
    assert_eq!(why, PeerError::Stateless);
    let mut out = Vec::new();
    c.finished(call, CallToolResult::text("m"), &mut out);
    let reply = sent(&out[0]);
    assert_eq!(reply["result"]["resultType"], "complete");
    assert_eq!(reply["id"], 1);
    // `initialize` is legacy whatever its `_meta`.
    assert_eq!(
        Era::of("initialize", parse_request_params(&reply).as_ref()),
        Era::Legacy
    );
}

fn parse_request_params(v: &Value) -> Option<ServerParams> {
    v.get("params").cloned().map(ServerParams::from)
}

#[test]
fn a_bad_frame_is_answered_with_its_id_and_an_invalid_response_is_not() {
    let mut c = ready(json!({}));
    let mut out = Vec::new();
    c.frame(
        Ok(br#"{"jsonrpc":"2.0","id":5,"method":"ping","result":{}}"#
            .to_vec()
            .into()),
        &mut out,
    );
    let reply = sent(&out[0]);
    assert_eq!(reply["id"], 5);
    assert_eq!(reply["error"]["code"], ErrorCode::INVALID_REQUEST.0);
    let mut out = Vec::new();
    c.frame(
        Ok(br#"{"jsonrpc":"2.0","id":5,"error":"x"}"#.to_vec().into()),
        &mut out,
    );
    assert!(out.is_empty(), "{out:?}");
    assert_eq!(RequestId::from(5), RequestId::from(5));
}
