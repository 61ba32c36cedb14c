//! The scripted server of `client` mode, sans-I/O: a client message in, the messages to send
//! back out. Both transports drive it (stdio through the relay, Streamable HTTP through the
//! harness's listener), so a scenario behaves the same on either; they only move bytes.

use std::collections::HashMap;

use mcp_protocol::mcp::modern;
use serde_json::{json, Value};

use super::scenario::ScenarioId;

/// The version the legacy scenarios answer `initialize` with (when the client asks for another
/// they answer this one, as version negotiation allows).
pub(crate) const LEGACY_VERSION: &str = "2025-11-25";
/// The one version the modern scenario supports.
pub(crate) const MODERN_VERSION: &str = "2026-07-28";
/// What the wrong-version scenario answers `initialize` with.
pub(crate) const UNSUPPORTED_VERSION: &str = "1999-01-01";
/// The tool every scenario offers (the official suite's `tools_call` tool).
pub(crate) const TOOL: &str = "add_numbers";

/// What the server does with one client message.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Step {
    /// Messages to send, in order: server requests and notifications, then the response (if the
    /// message was a request that gets one now). Over HTTP they go on the POST's SSE stream.
    pub(crate) messages: Vec<Value>,
    /// A request that is answered now (its response is the last of `messages`).
    pub(crate) answered: bool,
    /// Streamable HTTP: answer 404 Not Found instead (the session expired); the client must
    /// start a new one.
    pub(crate) expire: bool,
}

/// A server request the script sent and the client has not answered yet.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Asked {
    pub(crate) method: &'static str,
}

/// The scripted server of one scenario run.
#[derive(Debug)]
pub(crate) struct Script {
    scenario: ScenarioId,
    /// The capabilities the client declared in `initialize`.
    client_capabilities: Value,
    /// `notifications/initialized` arrived.
    initialized: bool,
    /// session-expired: the one 404 was served.
    expired_once: bool,
    next_id: u64,
    /// Server-initiated messages waiting for a way to the client (over HTTP: the next response
    /// stream).
    queued: Vec<Value>,
    /// Requests sent to the client, by id, not answered yet.
    asked: HashMap<String, Asked>,
}

impl Script {
    pub(crate) fn new(scenario: ScenarioId) -> Script {
        Script {
            scenario,
            client_capabilities: json!({}),
            initialized: false,
            expired_once: false,
            next_id: 0,
            queued: Vec::new(),
            asked: HashMap::new(),
        }
    }

    /// One message from the client. `can_push`: server-initiated messages can go out now (stdio:
    /// always; HTTP: only on the stream answering a request), else they wait for a later step.
    /// `has_session`: over HTTP, the request carried an `Mcp-Session-Id` (stdio: false).
    pub(crate) fn on_message(
        &mut self,
        message: &Value,
        can_push: bool,
        has_session: bool,
    ) -> Step {
        let method = message.get("method").and_then(Value::as_str);
        let id = message.get("id");
        let mut step = Step::default();
        match (method, id) {
            (Some(method), Some(id)) => {
                if self.scenario == ScenarioId::SessionExpired
                    && has_session
                    && self.initialized
                    && !self.expired_once
                {
                    self.expired_once = true;
                    self.initialized = false;
                    // The session is gone: what waited for a way to its client goes with it.
                    self.queued.clear();
                    self.asked.clear();
                    step.expire = true;
                    return step;
                }
                let answer = self.answer(method, id, message.get("params"));
                if can_push {
                    step.messages.append(&mut self.queued);
                }
                if let Some(answer) = answer {
                    step.messages.push(answer);
                    step.answered = true;
                }
            }
            (Some(method), None) => {
                if method == "notifications/initialized" && self.legacy() {
                    self.initialized = true;
                    self.ask_after_initialized();
                }
                if can_push {
                    step.messages.append(&mut self.queued);
                }
            }
            (None, Some(id)) => {
                self.asked.remove(&id.to_string());
            }
            (None, None) => {}
        }
        step
    }

    /// Server requests sent and not answered.
    #[cfg(test)]
    pub(crate) fn unanswered(&self) -> impl Iterator<Item = &Asked> {
        self.asked.values()
    }

    fn legacy(&self) -> bool {
        self.scenario != ScenarioId::Modern
    }

    /// The response to a client request, or `None` to leave it unanswered (timeout).
    fn answer(&mut self, method: &str, id: &Value, params: Option<&Value>) -> Option<Value> {
        if self.scenario == ScenarioId::Modern {
            return Some(self.answer_modern(method, id, params));
        }
        let result = match method {
            "initialize" => {
                self.client_capabilities = params
                    .and_then(|p| p.get("capabilities"))
                    .cloned()
                    .unwrap_or_else(|| json!({}));
                self.initialize_result(params)
            }
            "server/discover" if self.scenario == ScenarioId::DiscoverEmptyResult => json!({}),
            "ping" => json!({}),
            "tools/list" => json!({ "tools": [tool()] }),
            "tools/call" if self.scenario == ScenarioId::Timeout => return None,
            "tools/call" => return Some(self.call_tool(id, params)),
            "logging/setLevel" => json!({}),
            _ => return Some(error(id, -32601, &format!("Method not found: {method}"))),
        };
        Some(json!({"jsonrpc": "2.0", "id": id, "result": result}))
    }

    fn initialize_result(&self, params: Option<&Value>) -> Value {
        let asked = params
            .and_then(|p| p.get("protocolVersion"))
            .and_then(Value::as_str);
        let version = match (self.scenario, asked) {
            (ScenarioId::WrongVersion, _) => UNSUPPORTED_VERSION,
            (_, Some(v @ ("2024-11-05" | "2025-03-26" | "2025-06-18" | "2025-11-25"))) => v,
            _ => LEGACY_VERSION,
        };
        json!({
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": true}, "logging": {}},
            "serverInfo": {"name": "mcp-conformance", "version": env!("CARGO_PKG_VERSION")},
        })
    }

    /// `add_numbers`: progress first if a token was given, a log message, then the sum.
    fn call_tool(&mut self, id: &Value, params: Option<&Value>) -> Value {
        if let Some(token) = params
            .and_then(|p| p.get("_meta"))
            .and_then(|m| m.get("progressToken"))
        {
            for progress in [1, 2] {
                self.queued.push(notification(
                    "notifications/progress",
                    json!({"progressToken": token, "progress": progress, "total": 2}),
                ));
            }
        }
        self.queued.push(notification(
            "notifications/message",
            json!({"level": "info", "logger": "mcp-conformance", "data": "add_numbers called"}),
        ));
        let name = params.and_then(|p| p.get("name")).and_then(Value::as_str);
        if name != Some(TOOL) {
            return error(id, -32602, &format!("Unknown tool: {}", name.unwrap_or("")));
        }
        let args = params.and_then(|p| p.get("arguments"));
        let number = |k: &str| args.and_then(|a| a.get(k)).and_then(Value::as_f64);
        let result = match (number("a"), number("b")) {
            (Some(a), Some(b)) => json!({
                "content": [{"type": "text", "text": format!("The sum of {a} and {b} is {}", a + b)}],
            }),
            _ => json!({
                "content": [{"type": "text", "text": "a and b must be numbers"}],
                "isError": true,
            }),
        };
        json!({"jsonrpc": "2.0", "id": id, "result": result})
    }

    /// After `notifications/initialized`: a ping, then one request for each client capability
    /// declared (and only those: a server may only use what was negotiated).
    fn ask_after_initialized(&mut self) {
        self.ask("ping", json!({}));
        // The undeclared-requests scenario asks for exactly what was not declared.
        let flip = self.scenario == ScenarioId::UndeclaredRequests;
        let declared = |name: &str| self.client_capabilities.get(name).is_some() != flip;
        let (roots, sampling, elicitation) = (
            declared("roots"),
            declared("sampling"),
            declared("elicitation"),
        );
        if roots {
            self.ask("roots/list", json!({}));
        }
        if sampling {
            self.ask(
                "sampling/createMessage",
                json!({
                    "messages": [{"role": "user", "content": {"type": "text", "text": "Say hi"}}],
                    "maxTokens": 16,
                }),
            );
        }
        if elicitation {
            self.ask(
                "elicitation/create",
                json!({
                    "mode": "form",
                    "message": "Your name, please",
                    "requestedSchema": {
                        "type": "object",
                        "properties": {"name": {"type": "string", "default": "Ada"}},
                    },
                }),
            );
        }
    }

    fn ask(&mut self, method: &'static str, params: Value) {
        self.next_id += 1;
        let id = json!(format!("s-{}", self.next_id));
        self.asked.insert(id.to_string(), Asked { method });
        self.queued
            .push(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
    }

    fn answer_modern(&mut self, method: &str, id: &Value, params: Option<&Value>) -> Value {
        let meta = params.and_then(|p| p.get("_meta"));
        let version = meta
            .and_then(|m| m.get(modern::META_PROTOCOL_VERSION))
            .and_then(Value::as_str);
        match version {
            None => {
                return error(
                    id,
                    -32602,
                    "Missing _meta[\"io.modelcontextprotocol/protocolVersion\"]",
                )
            }
            Some(v) if v != MODERN_VERSION => {
                return json!({"jsonrpc": "2.0", "id": id, "error": {
                    "code": modern::UNSUPPORTED_PROTOCOL_VERSION,
                    "message": "Unsupported protocol version",
                    "data": {"supported": [MODERN_VERSION], "requested": v},
                }})
            }
            Some(_) => {}
        }
        let cache = |mut v: Value| {
            v["resultType"] = json!("complete");
            v["ttlMs"] = json!(0);
            v["cacheScope"] = json!("private");
            v
        };
        let result = match method {
            "server/discover" => cache(json!({
                "supportedVersions": [MODERN_VERSION],
                "capabilities": {"tools": {}},
                "_meta": {modern::META_SERVER_INFO: {
                    "name": "mcp-conformance", "version": env!("CARGO_PKG_VERSION")}},
            })),
            "tools/list" => cache(json!({ "tools": [tool()] })),
            "tools/call" => {
                let mut response = self.call_tool(id, params);
                // 2026-07-28: no notifications/message unless a logLevel was asked for.
                self.queued
                    .retain(|m| m.get("method") != Some(&json!("notifications/message")));
                if let Some(result) = response.get_mut("result") {
                    result["resultType"] = json!("complete");
                }
                return response;
            }
            _ => return error(id, -32601, &format!("Method not found: {method}")),
        };
        json!({"jsonrpc": "2.0", "id": id, "result": result})
    }
}

fn tool() -> Value {
    json!({
        "name": TOOL,
        "description": "Add two numbers together",
        "inputSchema": {
            "type": "object",
            "properties": {
                "a": {"type": "number", "description": "First number"},
                "b": {"type": "number", "description": "Second number"},
            },
            "required": ["a", "b"],
        },
    })
}

fn notification(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

fn error(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(id: u64, method: &str, params: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
    }

    fn init(caps: Value) -> Value {
        request(
            1,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": caps,
                   "clientInfo": {"name": "c", "version": "1"}}),
        )
    }

    #[test]
    fn legacy_handshake_then_ping_and_the_declared_requests() {
        let mut s = Script::new(ScenarioId::Initialize);
        let step = s.on_message(&init(json!({"roots": {}})), true, false);
        assert_eq!(step.messages.len(), 1);
        assert_eq!(step.messages[0]["result"]["protocolVersion"], "2025-11-25");
        let step = s.on_message(
            &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            true,
            false,
        );
        let methods: Vec<&str> = step
            .messages
            .iter()
            .filter_map(|m| m["method"].as_str())
            .collect();
        assert_eq!(methods, ["ping", "roots/list"]);
        assert_eq!(s.unanswered().count(), 2);
        s.on_message(
            &json!({"jsonrpc": "2.0", "id": "s-1", "result": {}}),
            true,
            false,
        );
        assert_eq!(s.unanswered().count(), 1);
    }

    #[test]
    fn over_http_server_requests_wait_for_a_stream() {
        let mut s = Script::new(ScenarioId::Initialize);
        s.on_message(&init(json!({})), false, false);
        let step = s.on_message(
            &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            false,
            true,
        );
        assert!(step.messages.is_empty());
        let step = s.on_message(&request(2, "tools/list", json!({})), true, true);
        assert_eq!(step.messages[0]["method"], "ping");
        assert_eq!(step.messages[1]["result"]["tools"][0]["name"], TOOL);
        assert!(step.answered);
    }

    #[test]
    fn tools_call_reports_progress_then_answers_and_timeout_never_answers() {
        let call = request(
            3,
            "tools/call",
            json!({"name": TOOL, "arguments": {"a": 1, "b": 2},
                                                    "_meta": {"progressToken": "p"}}),
        );
        let mut s = Script::new(ScenarioId::ToolsCall);
        let step = s.on_message(&call, true, false);
        assert_eq!(step.messages.len(), 4);
        assert_eq!(step.messages[0]["params"]["progress"], 1);
        assert_eq!(
            step.messages[3]["result"]["content"][0]["text"],
            "The sum of 1 and 2 is 3"
        );
        let mut s = Script::new(ScenarioId::Timeout);
        let step = s.on_message(&call, true, false);
        assert!(!step.answered);
        assert!(step.messages.iter().all(|m| m.get("id").is_none()));
    }

    #[test]
    fn modern_discover_and_version_retry() {
        let meta = |v: &str| {
            json!({"_meta": {modern::META_PROTOCOL_VERSION: v,
                                               modern::META_CLIENT_CAPABILITIES: {}}})
        };
        let mut s = Script::new(ScenarioId::Modern);
        let step = s.on_message(
            &request(1, "server/discover", meta("2099-01-01")),
            true,
            false,
        );
        assert_eq!(step.messages[0]["error"]["code"], -32022);
        assert_eq!(
            step.messages[0]["error"]["data"]["supported"],
            json!([MODERN_VERSION])
        );
        let step = s.on_message(
            &request(2, "server/discover", meta(MODERN_VERSION)),
            true,
            false,
        );
        assert_eq!(
            step.messages[0]["result"]["supportedVersions"],
            json!([MODERN_VERSION])
        );
        let step = s.on_message(&request(3, "initialize", json!({})), true, false);
        assert_eq!(step.messages[0]["error"]["code"], -32602);
    }

    #[test]
    fn session_expires_once_after_the_handshake() {
        let mut s = Script::new(ScenarioId::SessionExpired);
        s.on_message(&init(json!({})), false, false);
        s.on_message(
            &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            false,
            true,
        );
        assert!(
            s.on_message(&request(2, "tools/list", json!({})), true, true)
                .expire
        );
        s.on_message(&init(json!({})), false, false);
        s.on_message(
            &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            false,
            true,
        );
        assert!(
            !s.on_message(&request(3, "tools/list", json!({})), true, true)
                .expire
        );
    }

    #[test]
    fn undeclared_requests_asks_for_what_was_not_declared() {
        let mut s = Script::new(ScenarioId::UndeclaredRequests);
        s.on_message(&init(json!({"sampling": {}})), true, false);
        let step = s.on_message(
            &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            true,
            false,
        );
        let methods: Vec<&str> = step
            .messages
            .iter()
            .filter_map(|m| m["method"].as_str())
            .collect();
        assert_eq!(methods, ["ping", "roots/list", "elicitation/create"]);
    }
}
