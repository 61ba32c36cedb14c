//! What the harness watches on every message the server sends during the whole run, in every
//! process: log messages (`server/utilities/logging.mdx`), progress notifications
//! (`basic/utilities/progress.mdx`), and requests for client capabilities the harness did not
//! declare (`basic/lifecycle.mdx`, Operation). Sans-I/O: the probe shows it each message sent
//! and received; it answers with what to change in a request (a progress token, the declared
//! client capabilities), the findings a message makes, and the reply a server request gets.
//! What it saw is tallied for the whole target ([`Watch`]), so the checks that own these rules
//! can say how much of the run they judged.

use std::collections::HashMap;
use std::sync::Arc;

use mcp_protocol::mcp::modern::{LOG_LEVELS, META_CLIENT_CAPABILITIES, META_LOG_LEVEL};
use parking_lot::Mutex;
use serde_json::{json, Value};

use super::answers;
use crate::capability::Capability;
use crate::config::ClientCapability;
use crate::mismatch::{self, Kind};
use crate::pattern::short;

/// The harness's requests that may run long and so carry `_meta.progressToken`.
const LONG: [&str; 4] = [
    "tools/call",
    "resources/read",
    "prompts/get",
    "completion/complete",
];

/// Requests and tokens remembered per process (a server flooding us cannot grow them).
const KEPT: usize = 1000;

/// What the whole run saw, for the checks that judge it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// `notifications/message`, in all.
    pub log_messages: usize,
    /// Of them, in a legacy session after `logging/setLevel` was answered.
    pub log_after_set_level: usize,
    /// 2026-07-28 requests sent without `io.modelcontextprotocol/logLevel`, answered.
    pub modern_unlogged_requests: usize,
    /// Requests sent with a `progressToken`.
    pub progress_tokens: usize,
    /// `notifications/progress`, in all.
    pub progress: usize,
    /// Of them, where their order with the response is observable (stdio).
    pub progress_ordered: usize,
    /// Requests from the server in legacy sessions.
    pub server_requests: usize,
}

/// Does the server declare `logging`, per era (`None`: not known)?
#[derive(Debug, Clone, Copy, Default)]
struct Declared {
    legacy: Option<bool>,
    modern: Option<bool>,
}

#[derive(Debug, Default)]
struct Shared {
    tally: Tally,
    declared: Declared,
}

/// What every process of one target saw, shared.
#[derive(Debug, Clone, Default)]
pub struct Watch(Arc<Mutex<Shared>>);

impl Watch {
    /// The server's `capabilities` per era, once the start-up has read them.
    pub fn declared(&self, legacy: Option<&Value>, modern: Option<&Value>) {
        let logging = |c: Option<&Value>| c.map(|c| Capability::Logging.declared_in(c));
        self.0.lock().declared = Declared {
            legacy: logging(legacy),
            modern: logging(modern),
        };
    }

    pub fn tally(&self) -> Tally {
        self.0.lock().tally
    }

    fn count(&self, f: impl FnOnce(&mut Tally)) {
        f(&mut self.0.lock().tally);
    }

    fn logging_declared(&self, modern: bool) -> Option<bool> {
        let declared = self.0.lock().declared;
        if modern {
            declared.modern
        } else {
            declared.legacy
        }
    }
}

/// A request of the harness that is not answered yet.
#[derive(Debug)]
struct Pending {
    id: Value,
    method: String,
    token: Option<String>,
    /// `io.modelcontextprotocol/logLevel` of a 2026-07-28 request; `logging/setLevel`'s level.
    level: Option<String>,
    modern: bool,
}

/// A progress token the harness sent.
#[derive(Debug, Default)]
struct Token {
    answered: bool,
    last: Option<f64>,
}

/// What one message from the server makes.
#[derive(Debug, Default, PartialEq)]
pub struct Judged {
    pub findings: Vec<(Kind, String)>,
    /// The replies the harness owes the server's requests.
    pub replies: Vec<Value>,
}

/// How a message was received.
#[derive(Debug, Clone, Copy)]
pub struct Seen {
    /// In a 2026-07-28 session.
    pub modern: bool,
    /// Its order with the other messages of the process is the server's (stdio).
    pub ordered: bool,
}

/// The watch over one process.
#[derive(Debug)]
pub struct Watcher {
    shared: Watch,
    client: Vec<ClientCapability>,
    pending: Vec<Pending>,
    tokens: HashMap<String, Token>,
    /// The level `logging/setLevel` set (an index into [`LOG_LEVELS`]).
    level: Option<usize>,
    /// `logging` as this process's `initialize` or `server/discover` result declared it.
    logging: Option<bool>,
    next_token: u64,
}

impl Watcher {
    pub fn new(shared: Watch, client: Vec<ClientCapability>) -> Watcher {
        Watcher {
            shared,
            client,
            pending: Vec::new(),
            tokens: HashMap::new(),
            level: None,
            logging: None,
            next_token: 1,
        }
    }

    /// A message about to be sent: the request as it goes (a `progressToken` added to a
    /// request that may run long, the declared client capabilities where `{}` stood), if it
    /// changes; and the requests in it are remembered until their responses.
    pub fn outgoing(&mut self, msg: &Value) -> Option<Value> {
        let mut out = msg.clone();
        let method = msg.get("method").and_then(Value::as_str);
        let is_request = msg.get("id").is_some_and(|id| !id.is_null());
        let params = out.get_mut("params").and_then(Value::as_object_mut);
        if let (Some(method), true, Some(params)) = (method, is_request, params) {
            self.declare(method, params);
            if LONG.contains(&method) {
                self.add_token(params);
            }
        }
        self.remember(&out);
        (out != *msg).then_some(out)
    }

    /// Bytes a check sent as they are (unchanged): the requests on their whole JSON lines are
    /// remembered, so their tokens and log levels count.
    pub fn sent_raw(&mut self, bytes: &[u8]) {
        for line in bytes.split(|b| *b == b'\n') {
            if let Ok(v) = serde_json::from_slice::<Value>(line) {
                self.remember(&v);
            }
        }
    }

    /// The requests of a message sent (one, or a batch's), until their responses.
    fn remember(&mut self, msg: &Value) {
        if let Value::Array(items) = msg {
            items.iter().for_each(|m| self.remember(m));
            return;
        }
        let Some(method) = msg.get("method").and_then(Value::as_str) else {
            return;
        };
        let Some(id) = msg.get("id").filter(|id| !id.is_null()) else {
            return;
        };
        let params = msg.get("params");
        let meta = params.and_then(|p| p.get("_meta"));
        let token = meta
            .and_then(|m| m.get("progressToken"))
            .map(Value::to_string);
        let level = match method {
            "logging/setLevel" => params.and_then(|p| p.get("level")),
            _ => meta.and_then(|m| m.get(META_LOG_LEVEL)),
        };
        if self.pending.len() >= KEPT {
            return;
        }
        if let Some(token) = token.clone().filter(|_| self.tokens.len() < KEPT) {
            self.tokens.entry(token).or_default();
        }
        self.pending.push(Pending {
            id: id.clone(),
            method: method.to_owned(),
            token,
            level: level.and_then(Value::as_str).map(str::to_owned),
            modern: meta.is_some_and(|m| m.get(META_CLIENT_CAPABILITIES).is_some()),
        });
    }

    /// The client capabilities the harness declares, where a request says `{}`: `initialize`'s
    /// `capabilities`, a 2026-07-28 request's `_meta` clientCapabilities.
    fn declare(&self, method: &str, params: &mut serde_json::Map<String, Value>) {
        if self.client.is_empty() {
            return;
        }
        let declared = answers::capabilities(&self.client);
        if method == "initialize" && params.get("capabilities") == Some(&json!({})) {
            params.insert("capabilities".to_owned(), declared.clone());
        }
        if let Some(meta) = params.get_mut("_meta").and_then(Value::as_object_mut) {
            if meta.get(META_CLIENT_CAPABILITIES) == Some(&json!({})) {
                meta.insert(META_CLIENT_CAPABILITIES.to_owned(), declared);
            }
        }
    }

    /// A fresh token in `params._meta.progressToken`, unless the request has one.
    fn add_token(&mut self, params: &mut serde_json::Map<String, Value>) {
        let meta = params.entry("_meta").or_insert_with(|| json!({}));
        let Some(meta) = meta.as_object_mut() else {
            return;
        };
        if meta.contains_key("progressToken") {
            return;
        }
        let token = format!("mcp-conformance-progress-{}", self.next_token);
        self.next_token += 1;
        meta.insert("progressToken".to_owned(), json!(token));
        self.shared.count(|t| t.progress_tokens += 1);
    }

    /// A message from the server.
    pub fn incoming(&mut self, msg: &Value, seen: Seen) -> Judged {
        let mut judged = Judged::default();
        match msg {
            Value::Array(items) => {
                for item in items {
                    let one = self.incoming(item, seen);
                    judged.findings.extend(one.findings);
                    judged.replies.extend(one.replies);
                }
            }
            _ => self.one(msg, seen, &mut judged),
        }
        judged
    }

    fn one(&mut self, msg: &Value, seen: Seen, judged: &mut Judged) {
        let method = msg.get("method").and_then(Value::as_str);
        let id = msg.get("id").filter(|id| !id.is_null());
        let params = msg.get("params").unwrap_or(&Value::Null);
        match (method, id) {
            (None, Some(id)) => self.answered(id, msg),
            (Some("notifications/message"), None) => {
                judged.findings.extend(self.log(params, seen));
            }
            (Some("notifications/progress"), None) => {
                judged.findings.extend(self.progress(params, seen));
            }
            (Some(method), Some(id)) => {
                judged
                    .findings
                    .extend(self.server_request(method, msg, seen));
                judged
                    .replies
                    .push(answers::reply(id, method, &self.client));
            }
            _ => {}
        }
    }

    /// A response: its request is no longer in progress; what it taught (the capabilities,
    /// the log level set).
    fn answered(&mut self, id: &Value, msg: &Value) {
        let at = self
            .pending
            .iter()
            .position(|p| p.id == *id || mismatch::loosely_equal(&p.id, id));
        let Some(at) = at else {
            return;
        };
        let request = self.pending.remove(at);
        if let Some(token) = request.token.and_then(|t| self.tokens.get_mut(&t)) {
            token.answered = true;
        }
        let Some(result) = msg.get("result") else {
            return;
        };
        match request.method.as_str() {
            "initialize" | "server/discover" => {
                if let Some(caps) = result.get("capabilities") {
                    self.logging = Some(Capability::Logging.declared_in(caps));
                }
            }
            "logging/setLevel" => {
                self.level = request.level.as_deref().and_then(level_index);
            }
            _ => {}
        }
        if request.modern && request.level.is_none() {
            self.shared.count(|t| t.modern_unlogged_requests += 1);
        }
    }

    /// `notifications/message`: its shape, whether `logging` is declared, its level.
    fn log(&mut self, params: &Value, seen: Seen) -> Vec<(Kind, String)> {
        self.shared.count(|t| t.log_messages += 1);
        let mut findings = Vec::new();
        let level = params.get("level").and_then(Value::as_str);
        let index = level.and_then(level_index);
        if index.is_none() || params.get("data").is_none() {
            findings.push((
                Kind::LogShape,
                format!(
                    "a notifications/message whose params lack a valid level (one of {}) or \
                     data: {}",
                    LOG_LEVELS.join(", "),
                    short(params)
                ),
            ));
        }
        let declared = self
            .logging
            .or_else(|| self.shared.logging_declared(seen.modern));
        if declared == Some(false) {
            findings.push((
                Kind::LogUndeclared,
                format!(
                    "a notifications/message from a server whose capabilities declare no \
                     logging: {}",
                    short(params)
                ),
            ));
        }
        if seen.modern {
            findings.extend(self.log_unrequested(params));
        } else if let (Some(min), Some(at)) = (self.level, index) {
            self.shared.count(|t| t.log_after_set_level += 1);
            if at < min {
                findings.push((
                    Kind::LogBelowLevel,
                    format!(
                        "a notifications/message at level {} after logging/setLevel set {}: {}",
                        LOG_LEVELS[at],
                        LOG_LEVELS[min],
                        short(params)
                    ),
                ));
            }
        }
        findings
    }

    /// In a 2026-07-28 session: a log message while no request in progress asked for them.
    fn log_unrequested(&self, params: &Value) -> Option<(Kind, String)> {
        let asked = self.pending.iter().any(|p| p.modern && p.level.is_some());
        let in_progress: Vec<&str> = self.pending.iter().map(|p| p.method.as_str()).collect();
        (!asked).then(|| {
            (
                Kind::LogUnrequested,
                format!(
                    "a notifications/message while no request in progress carried {META_LOG_LEVEL} \
                     (in progress: {}): {}",
                    if in_progress.is_empty() {
                        "none".to_owned()
                    } else {
                        in_progress.join(", ")
                    },
                    short(params)
                ),
            )
        })
    }

    /// `notifications/progress`: a token the harness sent, still in progress (where order is
    /// observable), and `progress` increasing.
    fn progress(&mut self, params: &Value, seen: Seen) -> Vec<(Kind, String)> {
        self.shared.count(|t| t.progress += 1);
        let token = params.get("progressToken").map(Value::to_string);
        let Some(state) = token.as_ref().and_then(|t| self.tokens.get_mut(t)) else {
            return vec![(
                Kind::ProgressUnknownToken,
                format!(
                    "a notifications/progress for a token no request of the harness carried: {}",
                    short(params)
                ),
            )];
        };
        let mut findings = Vec::new();
        if seen.ordered {
            self.shared.count(|t| t.progress_ordered += 1);
            if state.answered {
                findings.push((
                    Kind::ProgressAfterResponse,
                    format!(
                        "a notifications/progress after the response to its request: {}",
                        short(params)
                    ),
                ));
            }
        }
        let progress = params.get("progress").and_then(Value::as_f64);
        if let (Some(last), Some(now)) = (state.last, progress) {
            if now <= last {
                findings.push((
                    Kind::ProgressNotIncreasing,
                    format!(
                        "progress {now} after {last} for the same token: {}",
                        short(params)
                    ),
                ));
            }
        }
        if progress.is_some() {
            state.last = progress;
        }
        findings
    }

    /// A request from the server: in a legacy session, one for a client capability the
    /// harness did not declare is a finding (2026-07-28 sessions are
    /// `modern.no-server-requests`'s).
    fn server_request(&self, method: &str, msg: &Value, seen: Seen) -> Option<(Kind, String)> {
        if seen.modern {
            return None;
        }
        self.shared.count(|t| t.server_requests += 1);
        let needed = answers::needed(method)?;
        (!self.client.contains(&needed)).then(|| {
            (
                Kind::UndeclaredClientCapability,
                format!(
                    "a {method} request, though the harness declared no {} capability: {}",
                    needed.as_str(),
                    short(msg)
                ),
            )
        })
    }
}

/// The index of a log level in [`LOG_LEVELS`] (least severe first).
fn level_index(level: &str) -> Option<usize> {
    LOG_LEVELS.iter().position(|l| *l == level)
}

#[cfg(test)]
mod tests {
    use super::*;

    const STDIO: Seen = Seen {
        modern: false,
        ordered: true,
    };

    fn kinds(judged: &Judged) -> Vec<Kind> {
        judged.findings.iter().map(|(k, _)| *k).collect()
    }

    fn request(id: i64, method: &str, params: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
    }

    fn progress(token: &Value, progress: f64) -> Value {
        json!({"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": token, "progress": progress}})
    }

    #[test]
    fn long_requests_get_a_unique_token_and_others_none() {
        let mut w = Watcher::new(Watch::default(), Vec::new());
        let a = w
            .outgoing(&request(1, "tools/call", json!({"name": "x"})))
            .unwrap();
        let b = w
            .outgoing(&request(2, "resources/read", json!({"uri": "u"})))
            .unwrap();
        let ta = &a["params"]["_meta"]["progressToken"];
        assert_eq!(ta, "mcp-conformance-progress-1");
        assert_eq!(
            b["params"]["_meta"]["progressToken"],
            "mcp-conformance-progress-2"
        );
        assert_eq!(w.outgoing(&request(3, "tools/list", json!({}))), None);
        let own = request(4, "prompts/get", json!({"_meta": {"progressToken": 7}}));
        assert_eq!(w.outgoing(&own), None, "a token of the check's own is kept");
        assert!(w
            .incoming(&progress(&json!(7), 1.0), STDIO)
            .findings
            .is_empty());
        assert_eq!(w.shared.tally().progress_tokens, 2);
        w.sent_raw(b"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"_meta\":{\"progressToken\":\"raw\"}}}\n");
        assert!(w
            .incoming(&progress(&json!("raw"), 1.0), STDIO)
            .findings
            .is_empty());
    }

    #[test]
    fn progress_for_unknown_repeated_and_late_tokens() {
        let mut w = Watcher::new(Watch::default(), Vec::new());
        let sent = w.outgoing(&request(1, "tools/call", json!({}))).unwrap();
        let token = sent["params"]["_meta"]["progressToken"].clone();
        assert!(w
            .incoming(&progress(&token, 0.5), STDIO)
            .findings
            .is_empty());
        let again = w.incoming(&progress(&token, 0.5), STDIO);
        assert_eq!(kinds(&again), [Kind::ProgressNotIncreasing]);
        let other = w.incoming(&progress(&json!("nope"), 1.0), STDIO);
        assert_eq!(kinds(&other), [Kind::ProgressUnknownToken]);
        w.incoming(&json!({"jsonrpc": "2.0", "id": 1, "result": {}}), STDIO);
        let late = w.incoming(&progress(&token, 2.0), STDIO);
        assert_eq!(kinds(&late), [Kind::ProgressAfterResponse]);
        // Over HTTP the order across streams is not the server's: not judged.
        let http = Seen {
            ordered: false,
            ..STDIO
        };
        assert!(w.incoming(&progress(&token, 3.0), http).findings.is_empty());
        let t = w.shared.tally();
        assert_eq!((t.progress, t.progress_ordered), (5, 3));
    }

    fn log(level: &str) -> Value {
        json!({"jsonrpc": "2.0", "method": "notifications/message",
            "params": {"level": level, "data": "x"}})
    }

    #[test]
    fn log_messages_shape_declaration_and_level() {
        let shared = Watch::default();
        shared.declared(Some(&json!({"logging": {}})), None);
        let mut w = Watcher::new(shared.clone(), Vec::new());
        assert!(w.incoming(&log("debug"), STDIO).findings.is_empty());
        assert_eq!(kinds(&w.incoming(&log("verbose"), STDIO)), [Kind::LogShape]);
        let no_data = json!({"jsonrpc": "2.0", "method": "notifications/message",
            "params": {"level": "info"}});
        assert_eq!(kinds(&w.incoming(&no_data, STDIO)), [Kind::LogShape]);
        w.outgoing(&request(1, "logging/setLevel", json!({"level": "warning"})));
        w.incoming(&json!({"jsonrpc": "2.0", "id": 1, "result": {}}), STDIO);
        assert_eq!(
            kinds(&w.incoming(&log("info"), STDIO)),
            [Kind::LogBelowLevel]
        );
        assert!(w.incoming(&log("error"), STDIO).findings.is_empty());
        assert_eq!(shared.tally().log_after_set_level, 2);
        // This process's initialize result says no logging.
        w.outgoing(&request(2, "initialize", json!({"capabilities": {}})));
        w.incoming(
            &json!({"jsonrpc": "2.0", "id": 2, "result": {"capabilities": {}}}),
            STDIO,
        );
        assert_eq!(
            kinds(&w.incoming(&log("error"), STDIO)),
            [Kind::LogUndeclared]
        );
    }

    #[test]
    fn modern_log_messages_only_for_requests_that_asked() {
        let shared = Watch::default();
        shared.declared(None, Some(&json!({"logging": {}})));
        let mut w = Watcher::new(shared.clone(), Vec::new());
        let modern = Seen {
            modern: true,
            ordered: true,
        };
        let meta = |level: Option<&str>| {
            let mut meta = json!({META_CLIENT_CAPABILITIES: {}});
            if let Some(level) = level {
                meta[META_LOG_LEVEL] = json!(level);
            }
            json!({"_meta": meta})
        };
        w.outgoing(&request(1, "tools/list", meta(None)));
        assert_eq!(
            kinds(&w.incoming(&log("error"), modern)),
            [Kind::LogUnrequested]
        );
        w.outgoing(&request(2, "tools/list", meta(Some("debug"))));
        assert!(w.incoming(&log("error"), modern).findings.is_empty());
        w.incoming(&json!({"jsonrpc": "2.0", "id": 1, "result": {}}), modern);
        w.incoming(&json!({"jsonrpc": "2.0", "id": 2, "result": {}}), modern);
        assert_eq!(
            kinds(&w.incoming(&log("error"), modern)),
            [Kind::LogUnrequested]
        );
        assert_eq!(shared.tally().modern_unlogged_requests, 1);
    }

    #[test]
    fn server_requests_are_answered_and_undeclared_ones_found() {
        let sampling = json!({"jsonrpc": "2.0", "id": "s", "method": "sampling/createMessage",
            "params": {}});
        let mut bare = Watcher::new(Watch::default(), Vec::new());
        let judged = bare.incoming(&sampling, STDIO);
        assert_eq!(kinds(&judged), [Kind::UndeclaredClientCapability]);
        assert_eq!(judged.replies[0]["error"]["code"], -32601);
        let modern = Seen {
            modern: true,
            ordered: true,
        };
        assert!(bare.incoming(&sampling, modern).findings.is_empty());
        let mut declared = Watcher::new(Watch::default(), vec![ClientCapability::Sampling]);
        let judged = declared.incoming(&sampling, STDIO);
        assert!(judged.findings.is_empty());
        assert_eq!(judged.replies[0]["result"]["model"], "mcp-conformance");
        let init = request(1, "initialize", json!({"capabilities": {}}));
        let sent = declared.outgoing(&init).unwrap();
        assert_eq!(sent["params"]["capabilities"], json!({"sampling": {}}));
        let meta = request(
            2,
            "tools/list",
            json!({"_meta": {META_CLIENT_CAPABILITIES: {}}}),
        );
        let sent = declared.outgoing(&meta).unwrap();
        assert_eq!(
            sent["params"]["_meta"][META_CLIENT_CAPABILITIES],
            json!({"sampling": {}})
        );
    }
}
