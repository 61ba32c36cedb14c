//! The server's side of an observed session, judged passively: only what the traffic shows
//! without asking the server anything, and only where the sentence leaves no doubt. The
//! harness's own server checks (`mcp-conformance -- SERVER`) probe far more; these judge a real
//! host's session as it happened.

use std::collections::HashMap;

use serde_json::Value;

use crate::check::{Level, Outcome, Transport};
use crate::clients::judge::{ClientCheck, Session};
use crate::clients::timeline::{Message, Side, Timeline, What};
use crate::ids::observed as id;

const BASIC: &str = "2025-11-25 basic/index.mdx";

/// The server checks `observe` judges, in report order.
pub(crate) fn checks() -> Vec<ClientCheck> {
    vec![
        ClientCheck::new(
            id::SERVER_RESPONSES_MATCH_REQUESTS,
            Level::Must,
            "every response of the server answers a request the client sent, with its id, once",
            &format!("{BASIC}, Responses; JSON-RPC 2.0 §5"),
            responses_match_requests,
        )
        .quote("Result responses MUST include the same ID as the request they correspond to. / When a rpc call is made, the Server MUST reply with a Response, except for in the case of Notifications. (JSON-RPC 2.0 §5)")
        .because("a request still unanswered when the session ended is reported, not failed: the session may have ended before the answer was due"),
        ClientCheck::new(
            id::SERVER_JSONRPC_SHAPE,
            Level::Must,
            "every message of the server is a JSON-RPC 2.0 object: jsonrpc \"2.0\"; a request or notification has a string method (a request a string or integer id, a notification none); a response has an id and exactly one of result and error {code (integer), message (string)}",
            &format!("{BASIC}, Messages; JSON-RPC 2.0 §4, §5"),
            jsonrpc_shape,
        )
        .quote("All messages between MCP clients and servers MUST follow the JSON-RPC 2.0 specification. / Requests MUST include a string or integer ID. / Notifications MUST NOT include an ID. / Error responses MUST include an error field with a code and message. / Error codes MUST be integers."),
        ClientCheck::new(
            id::SERVER_INITIALIZE_RESULT_SHAPE,
            Level::Must,
            "the initialize result has protocolVersion (a string), capabilities (an object) and serverInfo {name, version} (strings)",
            "2025-11-25 basic/lifecycle.mdx, Initialization; schema.ts InitializeResult",
            initialize_result_shape,
        )
        .quote("The server MUST respond with its own capabilities and information:")
        .because("schema.ts InitializeResult requires protocolVersion, capabilities and serverInfo {name, version}"),
        ClientCheck::new(
            id::SERVER_STDOUT_ONLY_MESSAGES,
            Level::Must,
            "everything the server wrote to stdout is a JSON message (no log lines, no blank lines, nothing that is not JSON)",
            "2025-11-25 basic/transports.mdx, stdio",
            stdout_only_messages,
        )
        .quote("The server MUST NOT write anything to its stdout that is not a valid MCP message.")
        .transport(Transport::Stdio),
        ClientCheck::new(
            id::SERVER_LOGGING_DECLARED,
            Level::Must,
            "notifications/message only from a server that declared the logging capability (in initialize, or server/discover)",
            "2025-11-25 server/utilities/logging.mdx, Capabilities",
            logging_declared,
        )
        .quote("Servers that emit log message notifications MUST declare the logging capability"),
    ]
}

/// The JSON-RPC objects of a message: its members if it is a batch.
fn members(m: &Message) -> Vec<&Value> {
    match &m.json {
        Some(Value::Array(items)) => items.iter().collect(),
        Some(v) => vec![v],
        None => Vec::new(),
    }
}

fn is_request(v: &Value) -> bool {
    v.get("method").is_some() && v.get("id").is_some()
}

fn is_response(v: &Value) -> bool {
    v.get("method").is_none() && (v.get("result").is_some() || v.get("error").is_some())
}

/// Ids of the client's requests, as JSON text, with how many are waiting for an answer.
#[derive(Default)]
struct Ledger {
    waiting: HashMap<String, usize>,
    /// In order, for the report.
    order: Vec<String>,
    cancelled: Vec<String>,
    answered: usize,
    problems: Vec<String>,
}

impl Ledger {
    fn client(&mut self, v: &Value) {
        if is_request(v) {
            let key = v["id"].to_string();
            *self.waiting.entry(key.clone()).or_default() += 1;
            self.order.push(key);
        } else if v.get("method").and_then(Value::as_str) == Some("notifications/cancelled") {
            if let Some(id) = v.pointer("/params/requestId") {
                self.cancelled.push(id.to_string());
            }
        }
    }

    fn server(&mut self, v: &Value) {
        if !is_response(v) {
            return;
        }
        let id = v.get("id").unwrap_or(&Value::Null);
        if id.is_null() && v.get("error").is_some() {
            // An error about a request whose id could not be read (basic/index.mdx allows it).
            return;
        }
        let key = id.to_string();
        match self.waiting.get_mut(&key) {
            Some(n) if *n > 0 => {
                *n -= 1;
                self.answered += 1;
            }
            Some(_) => self.problems.push(format!("a second response to id {key}")),
            None => self.problems.push(format!(
                "a response to id {key}, which no request of the client had"
            )),
        }
    }

    fn unanswered(&self) -> Vec<&str> {
        let mut left = self.waiting.clone();
        let mut out = Vec::new();
        for key in &self.order {
            if let Some(n) = left.get_mut(key) {
                if *n > 0 && !self.cancelled.contains(key) {
                    out.push(key.as_str());
                }
                *n = 0;
            }
        }
        out
    }
}

fn responses_match_requests(s: &Session<'_>) -> Outcome {
    let mut ledger = Ledger::default();
    for (_, m) in s.timeline.messages() {
        for v in members(m) {
            match m.from {
                Side::Client => ledger.client(v),
                Side::Server => ledger.server(v),
            }
        }
    }
    if !ledger.problems.is_empty() {
        return Outcome::fail(
            "one response per request, with the request's id",
            ledger.problems.join("; "),
        );
    }
    if ledger.order.is_empty() {
        return Outcome::Skip("the client sent no request".into());
    }
    let unanswered = ledger.unanswered();
    if unanswered.is_empty() {
        Outcome::pass(format!(
            "{} request(s), each answered once with its id",
            ledger.answered
        ))
    } else {
        Outcome::Observed(format!(
            "{} response(s) matched; no response (and no cancellation) when the session ended for id(s) {}",
            ledger.answered,
            unanswered.join(", ")
        ))
    }
}

/// What is wrong with one JSON-RPC object the server sent, if anything.
fn shape_problem(v: &Value) -> Option<String> {
    let Some(obj) = v.as_object() else {
        return Some(format!("not a JSON object: {v}"));
    };
    if obj.get("jsonrpc") != Some(&Value::String("2.0".into())) {
        return Some("jsonrpc is not \"2.0\"".into());
    }
    let id_ok = |id: &Value| id.is_string() || id.is_i64() || id.is_u64();
    if let Some(method) = obj.get("method") {
        if !method.is_string() {
            return Some("method is not a string".into());
        }
        return match obj.get("id") {
            Some(id) if !id_ok(id) => Some(format!("request id {id} is not a string or integer")),
            _ => None,
        };
    }
    let Some(id) = obj.get("id") else {
        return Some("neither a request, a notification nor a response (no method, no id)".into());
    };
    match (obj.get("result"), obj.get("error")) {
        (Some(_), Some(_)) => Some("a response with both result and error".into()),
        (None, None) => Some("neither a request, a notification nor a response".into()),
        (Some(_), None) if !id_ok(id) => Some(format!(
            "result response id {id} is not a string or integer"
        )),
        (None, Some(e)) => {
            let code_ok = e.get("code").is_some_and(|c| c.is_i64() || c.is_u64());
            let message_ok = e.get("message").is_some_and(Value::is_string);
            (!(code_ok && message_ok))
                .then(|| format!("error {e} lacks an integer code or a string message"))
        }
        (Some(_), None) => None,
    }
}

fn jsonrpc_shape(s: &Session<'_>) -> Outcome {
    let mut seen = 0;
    for (_, m) in s.timeline.from(Side::Server) {
        for v in members(m) {
            seen += 1;
            if let Some(problem) = shape_problem(v) {
                return Outcome::fail(
                    "JSON-RPC 2.0 messages",
                    format!("{problem}: {}", String::from_utf8_lossy(&m.raw)),
                );
            }
        }
    }
    if seen == 0 {
        return Outcome::Skip("the server sent no JSON message".into());
    }
    Outcome::pass(format!("{seen} message(s), each a JSON-RPC 2.0 object"))
}

/// The result of the first `initialize` the server answered with a result.
fn initialize_result(t: &Timeline) -> Option<&Value> {
    let (_, init) = t.first_request(Side::Client, "initialize")?;
    let (_, response) = t.response_to(Side::Client, init.id()?)?;
    response.result()
}

fn initialize_result_shape(s: &Session<'_>) -> Outcome {
    let Some(result) = initialize_result(s.timeline) else {
        return Outcome::Skip("no initialize got a result".into());
    };
    let mut problems = Vec::new();
    if !result["protocolVersion"].is_string() {
        problems.push("protocolVersion is not a string");
    }
    if !result["capabilities"].is_object() {
        problems.push("capabilities is not an object");
    }
    let info = &result["serverInfo"];
    if !info["name"].is_string() || !info["version"].is_string() {
        problems.push("serverInfo lacks a string name or version");
    }
    if problems.is_empty() {
        Outcome::pass(format!(
            "protocolVersion {}, serverInfo {}",
            result["protocolVersion"], info["name"]
        ))
    } else {
        Outcome::fail(
            "protocolVersion (string), capabilities (object), serverInfo {name, version} (strings)",
            format!("{}: {result}", problems.join("; ")),
        )
    }
}

fn stdout_only_messages(s: &Session<'_>) -> Outcome {
    let mut messages = 0;
    for e in &s.timeline.events {
        match &e.what {
            What::Garbage {
                from: Side::Server,
                raw,
            } => {
                return Outcome::fail(
                    "nothing but JSON messages on stdout",
                    format!("wrote {}", String::from_utf8_lossy(raw)),
                )
            }
            What::Message(m) if m.from == Side::Server => {
                if !m
                    .json
                    .as_ref()
                    .is_some_and(|v| v.is_object() || v.is_array())
                {
                    return Outcome::fail(
                        "nothing but JSON-RPC messages on stdout",
                        format!("wrote {}", String::from_utf8_lossy(&m.raw)),
                    );
                }
                messages += 1;
            }
            _ => {}
        }
    }
    if messages == 0 {
        return Outcome::Skip("the server wrote nothing to stdout".into());
    }
    Outcome::pass(format!("{messages} message(s), nothing else"))
}

/// The capabilities the server declared: in its initialize result, or its server/discover one.
fn declared_capabilities(t: &Timeline) -> Option<&Value> {
    if let Some(result) = initialize_result(t) {
        return result.get("capabilities");
    }
    let (_, probe) = t.first_request(Side::Client, "server/discover")?;
    let (_, response) = t.response_to(Side::Client, probe.id()?)?;
    response.result()?.get("capabilities")
}

fn logging_declared(s: &Session<'_>) -> Outcome {
    let t = s.timeline;
    let logs = t
        .from(Side::Server)
        .flat_map(|(_, m)| members(m))
        .filter(|v| v.get("method").and_then(Value::as_str) == Some("notifications/message"))
        .count();
    if logs == 0 {
        return Outcome::Skip("the server sent no notifications/message".into());
    }
    let Some(capabilities) = declared_capabilities(t) else {
        return Outcome::Skip(format!(
            "{logs} notifications/message, but no initialize or server/discover result was seen to tell what was declared"
        ));
    };
    if capabilities.get("logging").is_some() {
        Outcome::pass(format!("{logs} notifications/message; logging declared"))
    } else {
        Outcome::fail(
            "the logging capability declared before notifications/message",
            format!("{logs} notifications/message; capabilities {capabilities}"),
        )
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::clients::timeline::Wire;
    use crate::ids::observed::ALL;

    #[test]
    fn the_id_table_and_the_checks_agree() {
        let mut ids: Vec<String> = checks().into_iter().map(|c| c.info.id).collect();
        ids.push(id::OBSERVER_COMPLETE.as_str().to_owned());
        let table: Vec<String> = ALL.iter().map(|id| id.as_str().to_owned()).collect();
        assert_eq!(ids, table);
    }

    fn timeline(messages: &[(Side, Value)]) -> Timeline {
        let mut t = Timeline::new(Wire::Stdio);
        for (from, json) in messages {
            t.push(
                std::time::Duration::ZERO,
                What::Message(Message {
                    from: *from,
                    raw: json.to_string().into_bytes(),
                    json: Some(json.clone()),
                    exchange: None,
                }),
            );
        }
        t
    }

    fn judge(f: fn(&Session<'_>) -> Outcome, t: &Timeline) -> Outcome {
        f(&Session {
            timeline: t,
            scenario: None,
        })
    }

    #[test]
    fn a_second_or_unknown_response_fails_and_a_missing_one_is_reported() {
        let req = |id: u64| json!({"jsonrpc": "2.0", "id": id, "method": "ping"});
        let ok = |id: u64| json!({"jsonrpc": "2.0", "id": id, "result": {}});
        let twice = timeline(&[
            (Side::Client, req(1)),
            (Side::Server, ok(1)),
            (Side::Server, ok(1)),
        ]);
        assert!(matches!(
            judge(responses_match_requests, &twice),
            Outcome::Fail { .. }
        ));
        let unknown = timeline(&[(Side::Client, req(1)), (Side::Server, ok(2))]);
        assert!(matches!(
            judge(responses_match_requests, &unknown),
            Outcome::Fail { .. }
        ));
        let open = timeline(&[
            (Side::Client, req(1)),
            (Side::Client, req(2)),
            (Side::Server, ok(2)),
        ]);
        assert!(
            matches!(judge(responses_match_requests, &open), Outcome::Observed(t) if t.contains("id(s) 1"))
        );
        let good = timeline(&[(Side::Client, req(1)), (Side::Server, ok(1))]);
        assert!(matches!(
            judge(responses_match_requests, &good),
            Outcome::Pass(_)
        ));
    }

    #[test]
    fn malformed_server_messages_fail_the_shape() {
        for bad in [
            json!({"jsonrpc": "1.0", "id": 1, "result": {}}),
            json!({"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "x"}}),
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": "x", "message": "x"}}),
            json!({"jsonrpc": "2.0", "id": null, "method": "ping"}),
            json!({"jsonrpc": "2.0"}),
            json!(7),
        ] {
            let t = timeline(&[(Side::Server, bad.clone())]);
            assert!(
                matches!(judge(jsonrpc_shape, &t), Outcome::Fail { .. }),
                "{bad}"
            );
        }
        let t = timeline(&[(
            Side::Server,
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "parse"}}),
        )]);
        assert!(matches!(judge(jsonrpc_shape, &t), Outcome::Pass(_)));
    }

    #[test]
    fn logging_without_the_capability_fails() {
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}});
        let result = |caps: Value| json!({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-11-25", "capabilities": caps, "serverInfo": {"name": "s", "version": "1"}}});
        let log = json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}});
        let undeclared = timeline(&[
            (Side::Client, init.clone()),
            (Side::Server, result(json!({}))),
            (Side::Server, log.clone()),
        ]);
        assert!(matches!(
            judge(logging_declared, &undeclared),
            Outcome::Fail { .. }
        ));
        let declared = timeline(&[
            (Side::Client, init),
            (Side::Server, result(json!({"logging": {}}))),
            (Side::Server, log),
        ]);
        assert!(matches!(
            judge(logging_declared, &declared),
            Outcome::Pass(_)
        ));
    }
}
