//! What the core lets a diagnostic tool's call send the client, in both eras: driven with no
//! I/O, exact messages and refusals out.
#![allow(clippy::unwrap_used)]

use mcp_protocol::ErrorCode;
use serde_json::{json, Value};

use super::tests::{ask, feed, sent, started};
use super::*;
use crate::peer::{Sending, Withheld};
use crate::tools::{default_tools, diagnostic_tools};

fn diag_core() -> Core<&'static str> {
    Core::new(Served::new(
        Arc::new(diagnostic_tools()),
        ServerInfo::default(),
    ))
}

/// A diagnostic core after the handshake; the `initialize` result.
fn ready(capabilities: Value) -> (Core<&'static str>, Value) {
    let mut c = diag_core();
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":capabilities,
        "clientInfo":{"name":"t","version":"1"}}});
    let result = sent(&feed(&mut c, init)[0])["result"].clone();
    assert!(feed(
        &mut c,
        json!({"jsonrpc":"2.0","method":"notifications/initialized"})
    )
    .is_empty());
    (c, result)
}

/// A running `diag_slow` call with this `_meta` (and `extra` params members).
fn slow(c: &mut Core<&'static str>, id: i64, meta: Value, extra: Value) -> CallId {
    let mut params = json!({"name":"diag_slow","arguments":{},"_meta":meta});
    if let (Value::Object(p), Value::Object(e)) = (&mut params, extra) {
        p.extend(e);
    }
    started(&feed(
        c,
        json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":params}),
    ))
}

fn modern_meta(capabilities: Value) -> Value {
    json!({"io.modelcontextprotocol/protocolVersion":"2026-07-28",
           "io.modelcontextprotocol/clientCapabilities":capabilities})
}

fn message(method: &str, params: Option<Value>) -> Sending {
    Sending::Message {
        method: method.into(),
        params,
    }
}

fn as_json(out: Outgoing) -> Value {
    serde_json::to_value(out.into_messages().remove(0)).unwrap()
}

/// A notification through the core: what it sends, or why not.
fn notify(
    c: &mut Core<&'static str>,
    call: CallId,
    method: &str,
    params: Value,
) -> Result<Value, PeerError> {
    let what = Sending::Message {
        method: method.into(),
        params: Some(params),
    };
    let asked = c.ask(call, what, "n", true);
    let mut send = asked.send;
    match (send.pop(), send.is_empty(), asked.settle) {
        (Some(out), true, Some(("n", Ok(Value::Null)))) => Ok(as_json(out)),
        (None, _, Some(("n", Err(why)))) => Err(why),
        (out, _, settle) => panic!("{out:?} {send:?} {settle:?}"),
    }
}

#[test]
fn the_server_declares_logging_and_list_changes_only_with_diagnostic_tools() {
    let (_, result) = ready(json!({}));
    assert_eq!(
        result["capabilities"],
        json!({"logging":{},"tools":{"listChanged":true}})
    );
    let mut plain = Core::<&'static str>::new(Served::new(
        Arc::new(default_tools()),
        ServerInfo::default(),
    ));
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}});
    let result = sent(&feed(&mut plain, init)[0])["result"].clone();
    assert_eq!(
        result["capabilities"],
        json!({"tools":{"listChanged":false}})
    );
    feed(
        &mut plain,
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
    );
    let set = json!({"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"info"}});
    assert_eq!(sent(&feed(&mut plain, set)[0])["error"]["code"], -32601);
}

#[test]
fn progress_carries_the_requests_token_and_must_increase() {
    let (mut c, _) = ready(json!({}));
    let call = slow(&mut c, 1, json!({"progressToken":"tok"}), json!({}));
    let first = notify(
        &mut c,
        call,
        "notifications/progress",
        json!({"progress":1,"total":2}),
    )
    .unwrap();
    assert_eq!(
        first,
        json!({"jsonrpc":"2.0","method":"notifications/progress",
               "params":{"progress":1,"total":2,"progressToken":"tok"}})
    );
    let again = notify(
        &mut c,
        call,
        "notifications/progress",
        json!({"progress":1}),
    );
    assert_eq!(again, Err(PeerError::Withheld(Withheld::NotIncreasing)));
    assert!(notify(
        &mut c,
        call,
        "notifications/progress",
        json!({"progress":2})
    )
    .is_ok());

    let untokened = slow(&mut c, 2, json!({}), json!({}));
    let none = notify(
        &mut c,
        untokened,
        "notifications/progress",
        json!({"progress":1}),
    );
    assert_eq!(none, Err(PeerError::Withheld(Withheld::NoProgressToken)));
}

#[test]
fn legacy_log_messages_honour_set_level() {
    let (mut c, _) = ready(json!({}));
    let call = slow(&mut c, 1, json!({}), json!({}));
    // Never set: every level goes.
    assert!(notify(
        &mut c,
        call,
        "notifications/message",
        json!({"level":"debug","data":"d"})
    )
    .is_ok());
    let set =
        json!({"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"warning"}});
    assert_eq!(
        sent(&feed(&mut c, set)[0]),
        json!({"jsonrpc":"2.0","id":2,"result":{}})
    );
    let info = notify(
        &mut c,
        call,
        "notifications/message",
        json!({"level":"info","data":"i"}),
    );
    assert_eq!(
        info,
        Err(PeerError::Withheld(Withheld::BelowLevel("warning")))
    );
    assert!(notify(
        &mut c,
        call,
        "notifications/message",
        json!({"level":"warning","data":"w"})
    )
    .is_ok());
    let bad = json!({"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"loud"}});
    assert_eq!(sent(&feed(&mut c, bad)[0])["error"]["code"], -32602);
}

#[test]
fn modern_log_messages_need_the_requests_log_level() {
    let mut c = diag_core();
    let call = slow(&mut c, 1, modern_meta(json!({})), json!({}));
    let none = notify(
        &mut c,
        call,
        "notifications/message",
        json!({"level":"emergency","data":"e"}),
    );
    assert_eq!(none, Err(PeerError::Withheld(Withheld::NoLogLevel)));

    let mut meta = modern_meta(json!({}));
    meta["io.modelcontextprotocol/logLevel"] = json!("info");
    let call = slow(&mut c, 2, meta, json!({}));
    let debug = notify(
        &mut c,
        call,
        "notifications/message",
        json!({"level":"debug","data":"d"}),
    );
    assert_eq!(
        debug,
        Err(PeerError::Withheld(Withheld::BelowLevel("info")))
    );
    assert!(notify(
        &mut c,
        call,
        "notifications/message",
        json!({"level":"info","data":"i"})
    )
    .is_ok());
}

#[test]
fn list_changes_go_in_the_legacy_era_only() {
    let (mut c, _) = ready(json!({}));
    let call = slow(&mut c, 1, json!({}), json!({}));
    let sent = notify(&mut c, call, "notifications/tools/list_changed", json!({}));
    assert_eq!(sent.unwrap()["method"], "notifications/tools/list_changed");
    let mut m = diag_core();
    let call = slow(&mut m, 1, modern_meta(json!({})), json!({}));
    let refused = notify(&mut m, call, "notifications/tools/list_changed", json!({}));
    assert_eq!(refused, Err(PeerError::Withheld(Withheld::NoSubscription)));
}

#[test]
fn a_modern_call_asks_through_an_input_required_result_and_its_retry_is_answered() {
    let mut c = diag_core();
    let call = slow(&mut c, 7, modern_meta(json!({"sampling":{}})), json!({}));
    // Even without a stream to push on (an HTTP POST answered with JSON).
    let asked = c.ask(
        call,
        message("sampling/createMessage", Some(json!({"maxTokens": 1}))),
        "s",
        false,
    );
    assert!(matches!(
        asked.settle,
        Some(("s", Err(PeerError::InputRequired)))
    ));
    let reply = as_json(asked.send.into_iter().next().unwrap());
    assert_eq!(reply["id"], 7);
    assert_eq!(reply["result"]["resultType"], "input_required");
    assert_eq!(
        reply["result"]["inputRequests"],
        json!({"sampling/createMessage":{"method":"sampling/createMessage","params":{"maxTokens":1}}})
    );
    // That run of the call is over: its own end sends nothing more.
    let mut out = Vec::new();
    c.finished(call, CallToolResult::text("late"), &mut out);
    assert!(out.is_empty(), "{out:?}");

    let answer = json!({"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"});
    let retry = slow(
        &mut c,
        8,
        modern_meta(json!({"sampling":{}})),
        json!({"inputResponses":{"sampling/createMessage":answer}}),
    );
    let asked = c.ask(retry, message("sampling/createMessage", None), "s", true);
    assert!(asked.send.is_empty());
    assert_eq!(asked.settle, Some(("s", Ok(answer))));
}

#[test]
fn a_capability_the_client_did_not_declare_is_refused_in_both_eras() {
    let mut m = diag_core();
    let call = slow(&mut m, 1, modern_meta(json!({"sampling":{}})), json!({}));
    let refused = ask(&mut m, call, "roots/list".into(), None, "r").unwrap_err();
    assert_eq!(
        refused.1,
        PeerError::NotDeclared("roots", "roots/list".into())
    );

    let (mut c, _) = ready(json!({"roots":{}}));
    let call = slow(&mut c, 1, json!({}), json!({}));
    let refused = ask(&mut c, call, "elicitation/create".into(), None, "e").unwrap_err();
    assert_eq!(
        refused.1,
        PeerError::NotDeclared("elicitation", "elicitation/create".into())
    );
    // A legacy request or notification needs a stream to go on.
    let asked = c.ask(call, message("roots/list", None), "r", false);
    assert!(asked.send.is_empty());
    assert_eq!(asked.settle, Some(("r", Err(PeerError::NoStream))));
}

#[test]
fn diag_extra_is_neither_listed_nor_callable_until_added() {
    let (mut c, _) = ready(json!({}));
    let list = sent(
        &feed(
            &mut c,
            json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}),
        )[0],
    );
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"diag_tool_list_changed") && !names.contains(&"diag_extra"),
        "{names:?}"
    );
    let call = json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"diag_extra"}});
    assert_eq!(sent(&feed(&mut c, call)[0])["error"]["code"], -32602);
}

#[test]
fn a_toggled_tool_is_offered_on_that_connection_only() {
    let (mut c, _) = ready(json!({}));
    let (mut other, _) = ready(json!({}));
    let call = slow(&mut c, 1, json!({}), json!({}));
    let toggle = |c: &mut Core<&'static str>| {
        let asked = c.ask(call, Sending::ToggleTool("diag_extra".into()), "t", true);
        assert!(asked.send.is_empty());
        asked.settle
    };
    assert_eq!(toggle(&mut c), Some(("t", Ok(json!(true)))));
    let extra =
        json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"diag_extra"}});
    assert!(
        sent(&feed(&mut c, extra.clone())[0])["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("diag_extra was added")
    );
    assert_eq!(
        sent(&feed(&mut other, extra.clone())[0])["error"]["code"],
        -32602
    );
    assert_eq!(toggle(&mut c), Some(("t", Ok(json!(false)))));
    assert_eq!(sent(&feed(&mut c, extra)[0])["error"]["code"], -32602);
}

fn listen(id: i64, filter: Value) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"subscriptions/listen",
        "params":{"notifications":filter,"_meta":modern_meta(json!({}))}})
}

#[test]
fn modern_list_changes_go_on_the_subscriptions_that_asked_for_them() {
    let mut c = Core::on_stream(Served::new(
        Arc::new(diagnostic_tools()),
        ServerInfo::default(),
    ));
    let ack = sent(
        &feed(
            &mut c,
            listen(
                50,
                json!({"toolsListChanged": true, "promptsListChanged": true}),
            ),
        )[0],
    );
    assert_eq!(
        ack,
        json!({"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged",
            "params":{"notifications":{"toolsListChanged":true},
                      "_meta":{"io.modelcontextprotocol/subscriptionId":50}}})
    );
    let other = sent(&feed(&mut c, listen(51, json!({})))[0]);
    assert_eq!(other["params"]["notifications"], json!({}));
    let again = sent(&feed(&mut c, listen(51, json!({})))[0]);
    assert_eq!(again["error"]["code"], ErrorCode::INVALID_REQUEST.0);

    let call = slow(&mut c, 1, modern_meta(json!({})), json!({}));
    let changed = notify(&mut c, call, "notifications/tools/list_changed", json!({})).unwrap();
    assert_eq!(
        changed,
        json!({"jsonrpc":"2.0","method":"notifications/tools/list_changed",
            "params":{"_meta":{"io.modelcontextprotocol/subscriptionId":50}}})
    );
    // Cancelled: closed with no response, and nothing more goes to it.
    let cancel =
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":50}});
    assert!(feed(&mut c, cancel).is_empty());
    let none = notify(&mut c, call, "notifications/tools/list_changed", json!({}));
    assert_eq!(none, Err(PeerError::Withheld(Withheld::NoSubscription)));
}

#[test]
fn subscriptions_are_offered_only_on_a_stream_with_diagnostic_tools() {
    let discover = json!({"jsonrpc":"2.0","id":1,"method":"server/discover",
        "params":{"_meta":modern_meta(json!({}))}});
    let mut stream = Core::on_stream(Served::new(
        Arc::new(diagnostic_tools()),
        ServerInfo::default(),
    ));
    let caps = sent(&feed(&mut stream, discover.clone())[0])["result"]["capabilities"].clone();
    assert_eq!(caps, json!({"logging":{},"tools":{"listChanged":true}}));
    for mut core in [
        diag_core(),
        Core::on_stream(Served::new(
            Arc::new(default_tools()),
            ServerInfo::default(),
        )),
    ] {
        let caps = sent(&feed(&mut core, discover.clone())[0])["result"]["capabilities"].clone();
        assert_eq!(caps["tools"], json!({}));
        let refused = sent(&feed(&mut core, listen(2, json!({"toolsListChanged": true})))[0]);
        assert_eq!(refused["error"]["code"], -32601);
    }
}

#[test]
fn a_request_served_on_its_own_leaves_listen_streams_and_list_changes_to_the_server() {
    let served = Served::new(Arc::new(diagnostic_tools()), ServerInfo::default());
    let mut a = Core::<&'static str>::stateless(Arc::clone(&served));
    let opened = feed(&mut a, listen(5, json!({"toolsListChanged": true})));
    assert!(
        matches!(&opened[..], [Action::Listen(l)] if *l.id() == mcp_protocol::RequestId::from(5)),
        "{opened:?}"
    );
    let invalid = json!({"jsonrpc":"2.0","id":6,"method":"subscriptions/listen",
        "params":{"_meta":modern_meta(json!({}))}});
    assert_eq!(sent(&feed(&mut a, invalid)[0])["error"]["code"], -32602);

    let call = slow(&mut a, 1, modern_meta(json!({})), json!({}));
    let asked = a.ask(call, Sending::ToggleTool("diag_extra".into()), "t", true);
    assert_eq!(asked.settle, Some(("t", Ok(json!(true)))));
    // The server's list: another request's core offers it.
    let mut b = Core::<&'static str>::stateless(Arc::clone(&served));
    let extra = json!({"jsonrpc":"2.0","id":2,"method":"tools/call",
        "params":{"name":"diag_extra","_meta":modern_meta(json!({}))}});
    assert!(
        sent(&feed(&mut b, extra)[0])["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("diag_extra was added")
    );
    // A list change is handed to the transport's listen streams, stream or not.
    let asked = a.ask(
        call,
        message("notifications/tools/list_changed", None),
        "n",
        false,
    );
    assert!(asked.send.is_empty() && asked.settle.is_none());
    assert_eq!(asked.tools_changed, Some("n"));
}
