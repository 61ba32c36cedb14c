//! What the client sends and how it answers, in any era and on any transport: JSON-RPC shape,
//! ids, `ping`, server requests, capabilities, progress tokens, cancellation
//! (2025-11-25 `basic/index.mdx`, `basic/lifecycle.mdx`, `basic/utilities/*.mdx`).

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use crate::check::{Level, Outcome};
use crate::clients::judge::{ClientCheck, Session};
use crate::clients::scenario::ScenarioId;
use crate::clients::timeline::{Message, Side, Timeline, What};
use crate::ids::client as id;

use super::lifecycle::{ended_by_client, modern_session};

const BASIC: &str = "2025-11-25 basic/index.mdx";

pub(super) fn checks() -> Vec<ClientCheck> {
    vec![
        ClientCheck::new(
            id::JSONRPC_SHAPE,
            Level::Must,
            "every message is JSON-RPC 2.0: requests with a method and a string or integer id, notifications without an id, responses with the id of a server request and exactly one of result or error (an integer code)",
            &format!("{BASIC}, Messages"),
            jsonrpc_shape,
        )
        .quote("All messages between MCP clients and servers MUST follow the JSON-RPC 2.0 specification. / Requests MUST include a string or integer ID. / Notifications MUST NOT include an ID. / Error codes MUST be integers."),
        ClientCheck::new(
            id::IDS_UNIQUE,
            Level::Must,
            "request ids are never null and never reused in the session",
            &format!("{BASIC}, Requests"),
            ids_unique,
        )
        .quote("Unlike base JSON-RPC, the ID MUST NOT be null. The request ID MUST NOT have been previously used by the requestor within the same session."),
        ClientCheck::new(
            id::PING_ANSWERED,
            Level::Must,
            "a ping from the server gets an empty result",
            "2025-11-25 basic/utilities/ping.mdx, Behavior Requirements",
            ping_answered,
        )
        .quote("The receiver MUST respond promptly with an empty response"),
        ClientCheck::new(
            id::SERVER_REQUESTS_ANSWERED,
            Level::Must,
            "roots/list, sampling/createMessage and elicitation/create are answered with a result of the schema's shape, or an error",
            "2025-11-25 schema.ts ListRootsResult, CreateMessageResult, ElicitResult",
            server_requests_answered,
        )
        .quote("schema.ts: ListRootsResult { roots: Root[] }, Root { uri: string }; CreateMessageResult { model: string } extends SamplingMessage { role, content }; ElicitResult { action: \"accept\" | \"decline\" | \"cancel\" }")
        .because("schema.ts makes these fields required; an error answer (the user declined) is allowed"),
        ClientCheck::new(
            id::UNDECLARED_REQUESTS,
            Level::Info,
            "what the client answers to roots/list, sampling/createMessage and elicitation/create it did not declare (an error, such as -32601, is what a server can act on)",
            "2025-11-25 basic/lifecycle.mdx, Operation; JSON-RPC 2.0 §5",
            undeclared_requests,
        )
        .because("the server must not send these (\"Only use capabilities that were successfully negotiated\"), so nothing then binds the client: reported, not judged")
        .only_in(&[ScenarioId::UndeclaredRequests]),
        ClientCheck::new(
            id::NEGOTIATED_CAPABILITIES,
            Level::Must,
            "the client calls only what the server declared (resources/*, prompts/*, completion/complete, logging/setLevel, tools/*) and sends roots list_changed only if it declared it",
            "2025-11-25 basic/lifecycle.mdx, Operation",
            negotiated_capabilities,
        )
        .quote("Both parties MUST: Respect the negotiated protocol version; Only use capabilities that were successfully negotiated"),
        ClientCheck::new(
            id::PROGRESS_TOKENS_UNIQUE,
            Level::Must,
            "a progress token is not reused while the request that carried it is active",
            "2025-11-25 basic/utilities/progress.mdx, Progress Flow",
            progress_tokens_unique,
        )
        .quote("Progress tokens can be chosen by the sender using any means, but MUST be unique across all active requests."),
        ClientCheck::new(
            id::CANCEL_ON_TIMEOUT,
            Level::Should,
            "a tools/call that gets no response is cancelled (notifications/cancelled with its id) when the client gives up on it",
            "2025-11-25 basic/lifecycle.mdx, Timeouts",
            cancel_on_timeout,
        )
        .quote("When the request has not received a success or error response within the timeout period, the sender SHOULD issue a cancellation notification for that request and stop waiting for a response.")
        .because("a client still waiting when the scenario ends (its timeout is longer) is reported as not observed")
        .only_in(&[ScenarioId::Timeout]),
        ClientCheck::new(
            id::INITIALIZE_NOT_CANCELLED,
            Level::Must,
            "initialize is never cancelled",
            "2025-11-25 basic/utilities/cancellation.mdx, Behavior Requirements",
            initialize_not_cancelled,
        )
        .quote("The initialize request MUST NOT be cancelled by clients"),
    ]
}

/// Each JSON-RPC message the client sent (a batch's elements one by one), with its event index.
fn client_messages(t: &Timeline) -> Vec<(usize, &Value)> {
    let mut out = Vec::new();
    for (i, m) in t.from(Side::Client) {
        match &m.json {
            Some(Value::Array(items)) => out.extend(items.iter().map(|v| (i, v))),
            Some(v) => out.push((i, v)),
            None => {}
        }
    }
    out
}

/// The ids of the requests the server sent.
fn server_request_ids(t: &Timeline) -> HashSet<String> {
    t.from(Side::Server)
        .filter(|(_, m)| m.is_request())
        .filter_map(|(_, m)| m.id().map(Value::to_string))
        .collect()
}

fn is_valid_id(id: &Value) -> bool {
    id.is_string() || id.is_i64() || id.is_u64()
}

/// What is wrong with one message, if anything.
fn shape_problem(v: &Value, server_ids: &HashSet<String>) -> Option<String> {
    let Some(obj) = v.as_object() else {
        return Some(format!("not a JSON object: {v}"));
    };
    if obj.get("jsonrpc") != Some(&Value::from("2.0")) {
        return Some("jsonrpc is not \"2.0\"".into());
    }
    match (obj.get("method"), obj.get("id")) {
        (Some(method), id) if method.is_string() => match id {
            Some(id) if !is_valid_id(id) => {
                Some(format!("request id {id} is not a string or integer"))
            }
            _ => None,
        },
        (Some(method), _) => Some(format!("method {method} is not a string")),
        (None, id) => {
            let (result, error) = (obj.get("result"), obj.get("error"));
            if result.is_some() == error.is_some() {
                return Some("a response needs exactly one of result and error".into());
            }
            if let Some(error) = error {
                if !(error["code"].is_i64() && error["message"].is_string()) {
                    return Some(format!(
                        "error {error} lacks an integer code or a string message"
                    ));
                }
            }
            match id {
                Some(id) if server_ids.contains(&id.to_string()) => None,
                Some(id) => Some(format!("response id {id} answers no server request")),
                None => Some("a response without an id".into()),
            }
        }
    }
}

fn jsonrpc_shape(s: &Session<'_>) -> Outcome {
    let t = s.timeline;
    let server_ids = server_request_ids(t);
    let messages = client_messages(t);
    if messages.is_empty() {
        return Outcome::Skip("the client sent no JSON message".into());
    }
    for (_, v) in &messages {
        if let Some(problem) = shape_problem(v, &server_ids) {
            return Outcome::fail("JSON-RPC 2.0 messages", format!("{problem}: {v}"));
        }
    }
    Outcome::pass(format!("{} messages", messages.len()))
}

fn ids_unique(s: &Session<'_>) -> Outcome {
    let mut seen: HashSet<String> = HashSet::new();
    let mut count = 0;
    for (_, v) in client_messages(s.timeline) {
        let (Some(method), Some(id)) = (v.get("method"), v.get("id")) else {
            continue;
        };
        // A new initialize (after a 404 over HTTP) starts a new session.
        if method == "initialize" {
            seen.clear();
        }
        if id.is_null() {
            return Outcome::fail("a string or integer id", format!("{method} with id null"));
        }
        if !seen.insert(id.to_string()) {
            return Outcome::fail(
                "ids unique in the session",
                format!("id {id} reused by {method}"),
            );
        }
        count += 1;
    }
    if count == 0 {
        return Outcome::Skip("the client sent no request".into());
    }
    Outcome::pass(format!("{count} requests, every id distinct"))
}

/// The client's response to the server request at event `asked`, or whether it shows it read
/// past it without answering (it answered a later server request, or sent a request after a
/// response the server sent later).
enum Answer<'a> {
    Answered(&'a Message),
    Ignored(String),
    Unknown,
}

fn answer_to<'a>(t: &'a Timeline, asked: usize, request: &Message) -> Answer<'a> {
    if let Some((_, r)) = request.id().and_then(|id| t.response_to(Side::Server, id)) {
        return Answer::Answered(r);
    }
    let later_server: HashSet<String> = t
        .from(Side::Server)
        .filter(|(i, m)| *i > asked && m.is_request())
        .filter_map(|(_, m)| m.id().map(Value::to_string))
        .collect();
    let read_past = t.from(Side::Client).find(|(_, m)| {
        m.is_response()
            && m.id()
                .is_some_and(|id| later_server.contains(&id.to_string()))
    });
    match read_past {
        Some((_, m)) => Answer::Ignored(format!(
            "unanswered, though the client answered a later server request ({})",
            m.id().map(Value::to_string).unwrap_or_default()
        )),
        None => Answer::Unknown,
    }
}

fn ping_answered(s: &Session<'_>) -> Outcome {
    let t = s.timeline;
    let Some((asked, ping)) = t.first_request(Side::Server, "ping") else {
        return Outcome::Skip("the server sent no ping".into());
    };
    match answer_to(t, asked, ping) {
        Answer::Answered(r) => match r.result() {
            Some(result)
                if result
                    .as_object()
                    .is_some_and(|o| o.keys().all(|k| k == "_meta")) =>
            {
                Outcome::pass("ping answered with {}")
            }
            Some(result) => Outcome::fail("an empty result {}", format!("result {result}")),
            None => Outcome::fail(
                "an empty result {}",
                format!("error {}", r.error_code().unwrap_or_default()),
            ),
        },
        Answer::Ignored(why) => Outcome::fail("an empty result {}", why),
        Answer::Unknown => Outcome::Skip(
            "the session ended before the client answered the ping or anything after it".into(),
        ),
    }
}

/// What is wrong with a result to a server request, if anything.
fn result_problem(method: &str, r: &Value) -> Option<&'static str> {
    match method {
        "roots/list" => {
            let ok = r["roots"]
                .as_array()
                .is_some_and(|roots| roots.iter().all(|root| root["uri"].is_string()));
            (!ok).then_some("roots must be an array of objects with a string uri")
        }
        "sampling/createMessage" => {
            let role = matches!(r["role"].as_str(), Some("user" | "assistant"));
            let content = r["content"].is_object() || r["content"].is_array();
            (!(role && content && r["model"].is_string()))
                .then_some("role (user|assistant), content and model (string) are required")
        }
        "elicitation/create" => {
            let action = matches!(r["action"].as_str(), Some("accept" | "decline" | "cancel"));
            let content = r.get("content").is_none_or(Value::is_object);
            (!(action && content))
                .then_some("action must be accept, decline or cancel; content an object")
        }
        _ => None,
    }
}

const CLIENT_FEATURES: [&str; 3] = ["roots/list", "sampling/createMessage", "elicitation/create"];

fn server_requests_answered(s: &Session<'_>) -> Outcome {
    if s.scenario == Some(ScenarioId::UndeclaredRequests) {
        return Outcome::Skip("this scenario asks for what the client did not declare".into());
    }
    let t = s.timeline;
    let asked: Vec<(usize, &Message)> = t
        .from(Side::Server)
        .filter(|(_, m)| m.is_request() && m.method().is_some_and(|x| CLIENT_FEATURES.contains(&x)))
        .collect();
    if asked.is_empty() {
        return Outcome::Skip(
            "the server sent no roots, sampling or elicitation request (the client declared none)"
                .into(),
        );
    }
    let mut seen = Vec::new();
    for (at, request) in asked {
        let method = request.method().unwrap_or_default();
        match answer_to(t, at, request) {
            Answer::Answered(r) => match (
                r.result(),
                result_problem(method, r.result().unwrap_or(&Value::Null)),
            ) {
                (Some(result), Some(problem)) => {
                    return Outcome::fail(
                        format!("a {method} result of the schema's shape"),
                        format!("{problem}: {result}"),
                    )
                }
                (Some(_), None) => seen.push(format!("{method}: result")),
                (None, _) => seen.push(format!(
                    "{method}: error {}",
                    r.error_code().unwrap_or_default()
                )),
            },
            Answer::Ignored(why) => return Outcome::fail(format!("an answer to {method}"), why),
            Answer::Unknown => {
                seen.push(format!("{method}: not answered before the session ended"))
            }
        }
    }
    if seen.iter().all(|x| x.ends_with("ended")) {
        return Outcome::Skip(seen.join("; "));
    }
    Outcome::pass(seen.join("; "))
}

fn undeclared_requests(s: &Session<'_>) -> Outcome {
    let t = s.timeline;
    let asked: Vec<(usize, &Message)> = t
        .from(Side::Server)
        .filter(|(_, m)| m.is_request() && m.method().is_some_and(|x| CLIENT_FEATURES.contains(&x)))
        .collect();
    if asked.is_empty() {
        return Outcome::Skip(
            "the client declared roots, sampling and elicitation: nothing to ask".into(),
        );
    }
    let answers: Vec<String> = asked
        .into_iter()
        .map(|(at, request)| {
            let method = request.method().unwrap_or_default();
            match answer_to(t, at, request) {
                Answer::Answered(r) => match r.error_code() {
                    Some(code) => format!("{method}: error {code}"),
                    None => format!("{method}: a result"),
                },
                Answer::Ignored(_) => {
                    format!("{method}: no answer, though it answered later requests")
                }
                Answer::Unknown => format!("{method}: no answer before the session ended"),
            }
        })
        .collect();
    Outcome::Observed(answers.join("; "))
}

/// The server capability a client request needs, if any.
fn needed_capability(method: &str) -> Option<&'static str> {
    let area = method.split('/').next().unwrap_or_default();
    match (area, method) {
        ("resources", _) => Some("resources"),
        ("prompts", _) => Some("prompts"),
        ("tools", _) => Some("tools"),
        (_, "completion/complete") => Some("completions"),
        (_, "logging/setLevel") => Some("logging"),
        _ => None,
    }
}

/// What the server declared: its initialize result's capabilities, or its DiscoverResult's.
fn server_capabilities(t: &Timeline) -> Option<&Value> {
    for method in ["initialize", "server/discover"] {
        for (_, m) in t
            .from(Side::Client)
            .filter(|(_, m)| m.method() == Some(method))
        {
            let caps = m
                .id()
                .and_then(|id| t.response_to(Side::Client, id))
                .and_then(|(_, r)| r.result())
                .and_then(|r| r.get("capabilities"));
            if caps.is_some_and(Value::is_object) {
                return caps;
            }
        }
    }
    None
}

fn negotiated_capabilities(s: &Session<'_>) -> Outcome {
    let t = s.timeline;
    let Some(caps) = server_capabilities(t) else {
        return Outcome::Skip(
            "no initialize or server/discover result declared the server's capabilities".into(),
        );
    };
    let client_caps = t
        .first_request(Side::Client, "initialize")
        .and_then(|(_, m)| m.params().and_then(|p| p.get("capabilities")).cloned());
    let mut used = 0;
    for (_, m) in t.from(Side::Client) {
        let Some(method) = m.method() else { continue };
        if method == "notifications/roots/list_changed" && !modern_session(t) {
            let declared = client_caps
                .as_ref()
                .is_some_and(|c| c["roots"]["listChanged"] == true);
            if !declared {
                return Outcome::fail(
                    "roots list_changed only if declared",
                    "sent notifications/roots/list_changed without declaring roots.listChanged",
                );
            }
        }
        let Some(needed) = needed_capability(method) else {
            continue;
        };
        used += 1;
        if caps.get(needed).is_none() {
            return Outcome::fail(
                "only methods of declared capabilities",
                format!("{method}, but the server did not declare {needed} (it declared {caps})"),
            );
        }
    }
    if used == 0 {
        return Outcome::Skip("the client used no server feature".into());
    }
    Outcome::pass(format!("{used} requests, each of a declared capability"))
}

fn progress_tokens_unique(s: &Session<'_>) -> Outcome {
    let t = s.timeline;
    let mut active: HashMap<String, Value> = HashMap::new();
    let mut count = 0;
    for (_, m) in t.messages() {
        if m.from == Side::Server && m.is_response() {
            let id = m.id().cloned().unwrap_or(Value::Null);
            active.retain(|_, request_id| *request_id != id);
            continue;
        }
        if m.from != Side::Client || !m.is_request() {
            continue;
        }
        // A new session (after a 404 over HTTP, or a new server process) ends the old one's
        // requests: none of them is active any more.
        if m.method() == Some("initialize") {
            active.clear();
        }
        let Some(token) = m
            .params()
            .and_then(|p| p.get("_meta"))
            .and_then(|x| x.get("progressToken"))
        else {
            continue;
        };
        count += 1;
        let id = m.id().cloned().unwrap_or(Value::Null);
        if let Some(earlier) = active.insert(token.to_string(), id) {
            return Outcome::fail(
                "a token unique among active requests",
                format!("token {token} reused while request {earlier} was active"),
            );
        }
    }
    if count == 0 {
        return Outcome::Skip("no request carried a progress token".into());
    }
    Outcome::pass(format!("{count} tokens, none reused while active"))
}

fn cancelled_ids(t: &Timeline) -> Vec<Value> {
    t.from(Side::Client)
        .filter(|(_, m)| m.method() == Some("notifications/cancelled"))
        .filter_map(|(_, m)| m.params().and_then(|p| p.get("requestId")).cloned())
        .collect()
}

fn cancel_on_timeout(s: &Session<'_>) -> Outcome {
    let t = s.timeline;
    let Some((_, call)) = t.first_request(Side::Client, "tools/call") else {
        return Outcome::Skip("the client called no tool".into());
    };
    let Some(id) = call.id() else {
        return Outcome::Skip("the tools/call had no id".into());
    };
    if cancelled_ids(t).contains(id) {
        return Outcome::pass(format!("notifications/cancelled for request {id}"));
    }
    let bound = t.events.iter().any(|e| matches!(e.what, What::Bound));
    if bound || !ended_by_client(t) {
        return Outcome::Observed(format!(
            "request {id} was still waiting when the scenario ended: the client's timeout is longer (not observed)"
        ));
    }
    Outcome::fail(
        format!("notifications/cancelled for request {id}"),
        "the client ended the session with the request unanswered and not cancelled",
    )
}

fn initialize_not_cancelled(s: &Session<'_>) -> Outcome {
    let t = s.timeline;
    let Some((_, init)) = t.first_request(Side::Client, "initialize") else {
        return Outcome::Skip("the client sent no initialize".into());
    };
    let id = init.id().cloned().unwrap_or(Value::Null);
    if cancelled_ids(t).contains(&id) {
        return Outcome::fail(
            "initialize never cancelled",
            format!("notifications/cancelled for initialize (id {id})"),
        );
    }
    Outcome::pass("initialize was not cancelled")
}
