//! Each client check against hand-made timelines: what passes, what fails, what is skipped.

use std::time::Duration;

use serde_json::{json, Value};

use crate::check::Outcome;
use crate::clients::judge::Session;
use crate::clients::scenario::ScenarioId;
use crate::clients::timeline::{Exchange, Message, Side, Signal, Timeline, What, Wire};
use crate::ids::client as id;
use crate::ids::CheckId;

/// Builds a timeline event by event.
struct T(Timeline);

impl T {
    fn new(wire: Wire) -> T {
        T(Timeline::new(wire))
    }

    fn push(mut self, what: What) -> T {
        let at = Duration::from_millis(self.0.events.len() as u64);
        self.0.push(at, what);
        self
    }

    fn msg(self, from: Side, v: Value) -> T {
        let exchange = self.last_exchange();
        self.push(What::Message(Message {
            from,
            raw: v.to_string().into_bytes(),
            json: Some(v),
            exchange,
        }))
    }

    fn last_exchange(&self) -> Option<usize> {
        if self.0.wire == Wire::Stdio {
            return None;
        }
        self.0
            .events
            .iter()
            .rposition(|e| matches!(e.what, What::Http(_)))
    }

    fn c(self, v: Value) -> T {
        self.msg(Side::Client, v)
    }

    fn s(self, v: Value) -> T {
        self.msg(Side::Server, v)
    }

    fn http(self, method: &str, headers: &[(&str, &str)], status: u16, session: Option<&str>) -> T {
        self.push(What::Http(Exchange {
            method: method.into(),
            path: "/mcp".into(),
            headers: headers
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect(),
            status,
            content_type: "application/json".into(),
            response_headers: session
                .map(|s| vec![("mcp-session-id".to_string(), s.to_string())])
                .unwrap_or_default(),
        }))
    }

    /// A legacy handshake: initialize (with these client capabilities), its result,
    /// initialized.
    fn handshake(self, caps: Value) -> T {
        self.c(req(
            1,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": caps,
                                           "clientInfo": {"name": "c", "version": "1"}}),
        ))
        .s(result(
            1,
            json!({"protocolVersion": "2025-11-25",
                                "capabilities": {"tools": {}, "logging": {}},
                                "serverInfo": {"name": "s", "version": "1"}}),
        ))
        .c(note("notifications/initialized", json!({})))
    }
}

fn req(id: impl Into<Value>, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id.into(), "method": method, "params": params})
}

fn note(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

fn result(id: impl Into<Value>, r: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id.into(), "result": r})
}

fn error(id: impl Into<Value>, code: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id.into(), "error": {"code": code, "message": "x"}})
}

fn judge(check: CheckId, t: &T, scenario: Option<ScenarioId>) -> Outcome {
    let all = super::all();
    let c = all
        .iter()
        .find(|c| c.info.id == check.as_str())
        .expect("a known check");
    (c.judge)(&Session {
        timeline: &t.0,
        scenario,
    })
}

fn is_pass(o: &Outcome) -> bool {
    matches!(o, Outcome::Pass(_))
}

fn is_fail(o: &Outcome) -> bool {
    matches!(o, Outcome::Fail { .. })
}

fn is_skip(o: &Outcome) -> bool {
    matches!(o, Outcome::Skip(_))
}

const ROOT: &str = "file:///tmp";

fn good() -> T {
    T::new(Wire::Stdio)
        .handshake(json!({"roots": {}}))
        .s(req("s-1", "ping", json!({})))
        .s(req("s-2", "roots/list", json!({})))
        .c(result("s-1", json!({})))
        .c(result("s-2", json!({"roots": [{"uri": ROOT}]})))
        .c(req(2, "tools/list", json!({})))
        .s(result(2, json!({"tools": []})))
        .push(What::StdinClosed)
}

#[test]
fn a_good_legacy_session_passes_every_check_with_evidence() {
    let t = good();
    for check in [
        id::INITIALIZE_FIRST,
        id::INITIALIZE_SHAPE,
        id::INITIALIZED_SENT,
        id::REQUESTS_BEFORE_INITIALIZED,
        id::JSONRPC_SHAPE,
        id::IDS_UNIQUE,
        id::PING_ANSWERED,
        id::SERVER_REQUESTS_ANSWERED,
        id::NEGOTIATED_CAPABILITIES,
        id::INITIALIZE_NOT_CANCELLED,
        id::STDIO_FRAMING,
        id::STDIO_SHUTDOWN,
    ] {
        let o = judge(check, &t, Some(ScenarioId::Initialize));
        assert!(is_pass(&o), "{check}: {o:?}");
    }
}

#[test]
fn an_empty_session_is_skipped_not_passed() {
    let t = T::new(Wire::Stdio).push(What::ClientExited { code: Some(0) });
    for check in crate::ids::client::ALL {
        let o = judge(*check, &t, Some(ScenarioId::Initialize));
        assert!(!is_pass(&o), "{check} passed without evidence: {o:?}");
    }
}

#[test]
fn initialize_first_and_shape() {
    let t = T::new(Wire::Stdio).c(req(1, "tools/list", json!({})));
    assert!(is_fail(&judge(id::INITIALIZE_FIRST, &t, None)));
    let probe = T::new(Wire::Stdio)
        .c(req(0, "server/discover", json!({})))
        .s(error(0, -32601))
        .handshake(json!({}));
    assert!(is_pass(&judge(id::INITIALIZE_FIRST, &probe, None)));
    let bad = T::new(Wire::Stdio).c(req(
        1,
        "initialize",
        json!({"protocolVersion": 2025, "capabilities": {}}),
    ));
    assert!(is_fail(&judge(id::INITIALIZE_SHAPE, &bad, None)));
}

#[test]
fn initialized_missing_or_late() {
    let t = T::new(Wire::Stdio)
        .c(req(1, "initialize", json!({})))
        .s(result(
            1,
            json!({"protocolVersion": "2025-11-25", "capabilities": {}}),
        ))
        .c(req(2, "tools/list", json!({})));
    let o = judge(id::INITIALIZED_SENT, &t, None);
    assert!(
        matches!(&o, Outcome::Fail { actual, .. } if actual.contains("tools/list")),
        "{o:?}"
    );
    let never = T::new(Wire::Stdio)
        .c(req(1, "initialize", json!({})))
        .s(result(1, json!({})))
        .push(What::StdinClosed);
    assert!(is_fail(&judge(id::INITIALIZED_SENT, &never, None)));
}

#[test]
fn requests_before_the_initialize_response() {
    let t = T::new(Wire::Stdio)
        .c(req(1, "initialize", json!({})))
        .c(req(2, "ping", json!({})))
        .c(req(3, "tools/list", json!({})))
        .s(result(1, json!({})));
    let o = judge(id::REQUESTS_BEFORE_INITIALIZED, &t, None);
    assert!(
        matches!(&o, Outcome::Fail { actual, .. } if actual == "sent tools/list"),
        "{o:?}"
    );
}

#[test]
fn wrong_version_disconnect() {
    let base = || {
        T::new(Wire::Stdio)
            .c(req(1, "initialize", json!({})))
            .s(result(
                1,
                json!({"protocolVersion": "1999-01-01", "capabilities": {}}),
            ))
    };
    let s = Some(ScenarioId::WrongVersion);
    assert!(is_pass(&judge(
        id::UNSUPPORTED_VERSION_DISCONNECT,
        &base().push(What::StdinClosed),
        s
    )));
    let stays = base().c(note("notifications/initialized", json!({})));
    assert!(is_fail(&judge(
        id::UNSUPPORTED_VERSION_DISCONNECT,
        &stays,
        s
    )));
    let idle = base().push(What::Bound);
    assert!(matches!(
        judge(id::UNSUPPORTED_VERSION_DISCONNECT, &idle, s),
        Outcome::Observed(_)
    ));
}

#[test]
fn discover_fallback() {
    let probe = |answer: Value| {
        T::new(Wire::Stdio)
            .c(req(0, "server/discover", json!({})))
            .s(answer)
    };
    let falls_back = probe(result(0, json!({}))).c(req(1, "initialize", json!({})));
    assert!(is_pass(&judge(id::DISCOVER_FALLBACK, &falls_back, None)));
    let gives_up = probe(result(0, json!({}))).push(What::StdinClosed);
    assert!(is_fail(&judge(id::DISCOVER_FALLBACK, &gives_up, None)));
    let no_probe = T::new(Wire::Stdio).handshake(json!({}));
    assert!(is_skip(&judge(id::DISCOVER_FALLBACK, &no_probe, None)));
}

#[test]
fn jsonrpc_shape_and_ids() {
    let null_id = good().c(req(Value::Null, "tools/list", json!({})));
    assert!(is_fail(&judge(id::IDS_UNIQUE, &null_id, None)));
    let reused = good().c(req(2, "tools/list", json!({})));
    let o = judge(id::IDS_UNIQUE, &reused, None);
    assert!(
        matches!(&o, Outcome::Fail { actual, .. } if actual.contains("id 2 reused")),
        "{o:?}"
    );
    let float_id = good().c(req(1.5, "tools/list", json!({})));
    assert!(is_fail(&judge(id::JSONRPC_SHAPE, &float_id, None)));
    let stray = good().c(result("nope", json!({})));
    assert!(is_fail(&judge(id::JSONRPC_SHAPE, &stray, None)));
    let no_version = good().c(json!({"id": 9, "method": "tools/list"}));
    assert!(is_fail(&judge(id::JSONRPC_SHAPE, &no_version, None)));
    // A new session after a 404 may start its ids again.
    let again = good()
        .handshake(json!({}))
        .c(req(2, "tools/list", json!({})));
    assert!(is_pass(&judge(id::IDS_UNIQUE, &again, None)));
}

#[test]
fn ping_and_server_requests() {
    let base = || {
        T::new(Wire::Stdio)
            .handshake(json!({"sampling": {}}))
            .s(req("s-1", "ping", json!({})))
            .s(req("s-2", "sampling/createMessage", json!({})))
    };
    let ignored = base().c(result(
        "s-2",
        json!({"role": "assistant", "content": {"type": "text", "text": "x"}, "model": "m"}),
    ));
    assert!(is_fail(&judge(id::PING_ANSWERED, &ignored, None)));
    assert!(is_pass(&judge(
        id::SERVER_REQUESTS_ANSWERED,
        &ignored,
        None
    )));
    let not_empty = base().c(result("s-1", json!({"ok": true})));
    assert!(is_fail(&judge(id::PING_ANSWERED, &not_empty, None)));
    let ended = base().push(What::StdinClosed);
    assert!(is_skip(&judge(id::PING_ANSWERED, &ended, None)));
    let bad = base().c(result(
        "s-2",
        json!({"role": "assistant", "content": {"type": "text", "text": "x"}}),
    ));
    assert!(is_fail(&judge(id::SERVER_REQUESTS_ANSWERED, &bad, None)));
    let declined = base().c(error("s-2", -1));
    assert!(is_pass(&judge(
        id::SERVER_REQUESTS_ANSWERED,
        &declined,
        None
    )));
}

#[test]
fn negotiated_capabilities() {
    let t = good().c(req(3, "prompts/list", json!({})));
    let o = judge(id::NEGOTIATED_CAPABILITIES, &t, None);
    assert!(
        matches!(&o, Outcome::Fail { actual, .. } if actual.contains("prompts/list")),
        "{o:?}"
    );
    let roots = good().c(note("notifications/roots/list_changed", json!({})));
    assert!(is_fail(&judge(id::NEGOTIATED_CAPABILITIES, &roots, None)));
}

#[test]
fn progress_tokens() {
    let call = |id: u64, token: &str| {
        req(
            id,
            "tools/call",
            json!({"name": "x", "_meta": {"progressToken": token}}),
        )
    };
    let reused = good().c(call(5, "p")).c(call(6, "p"));
    assert!(is_fail(&judge(id::PROGRESS_TOKENS_UNIQUE, &reused, None)));
    let after_done = good()
        .c(call(5, "p"))
        .s(result(5, json!({})))
        .c(call(6, "p"));
    assert!(is_pass(&judge(
        id::PROGRESS_TOKENS_UNIQUE,
        &after_done,
        None
    )));
}

#[test]
fn cancellation() {
    let s = Some(ScenarioId::Timeout);
    let base = || good().c(req(7, "tools/call", json!({"name": "add_numbers"})));
    let cancelled = base().c(note("notifications/cancelled", json!({"requestId": 7})));
    assert!(is_pass(&judge(id::CANCEL_ON_TIMEOUT, &cancelled, s)));
    let gave_up = base().push(What::ClientExited { code: Some(1) });
    assert!(is_fail(&judge(id::CANCEL_ON_TIMEOUT, &gave_up, s)));
    let waiting = base().push(What::Bound);
    assert!(matches!(
        judge(id::CANCEL_ON_TIMEOUT, &waiting, s),
        Outcome::Observed(_)
    ));
    let init = T::new(Wire::Stdio)
        .c(req(1, "initialize", json!({})))
        .c(note("notifications/cancelled", json!({"requestId": 1})));
    assert!(is_fail(&judge(id::INITIALIZE_NOT_CANCELLED, &init, None)));
}

fn modern_req(id: u64, method: &str, version: &str) -> Value {
    req(
        id,
        method,
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": version,
                                     "io.modelcontextprotocol/clientCapabilities": {}}}),
    )
}

#[test]
fn modern_meta_and_retry() {
    let s = Some(ScenarioId::Modern);
    let t = T::new(Wire::Stdio)
        .c(modern_req(1, "server/discover", "2026-07-28"))
        .s(result(
            1,
            json!({"supportedVersions": ["2026-07-28"], "capabilities": {}}),
        ))
        .c(req(2, "tools/list", json!({})));
    assert!(is_fail(&judge(id::MODERN_META, &t, s)));
    let legacy_only = T::new(Wire::Stdio).handshake(json!({}));
    assert!(is_skip(&judge(id::MODERN_META, &legacy_only, s)));
    let rejected = || {
        T::new(Wire::Stdio)
            .c(modern_req(1, "server/discover", "2099-01-01"))
            .s(
                json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32022, "message": "x",
                      "data": {"supported": ["2026-07-28"], "requested": "2099-01-01"}}}),
            )
    };
    let retried = rejected().c(modern_req(2, "server/discover", "2026-07-28"));
    assert!(is_pass(&judge(id::MODERN_VERSION_RETRY, &retried, s)));
    let same = rejected().c(modern_req(2, "server/discover", "2099-01-01"));
    assert!(is_fail(&judge(id::MODERN_VERSION_RETRY, &same, s)));
    let init = rejected().c(req(2, "initialize", json!({})));
    assert!(is_fail(&judge(id::MODERN_VERSION_RETRY, &init, s)));
}

#[test]
fn stdio_framing_and_shutdown() {
    let garbage = good().push(What::Garbage {
        from: Side::Client,
        raw: b"hello".to_vec(),
    });
    assert!(is_fail(&judge(id::STDIO_FRAMING, &garbage, None)));
    let number = good().c(json!(42));
    assert!(is_fail(&judge(id::STDIO_FRAMING, &number, None)));
    let term = T::new(Wire::Stdio)
        .handshake(json!({}))
        .push(What::Signal(Signal::Term))
        .push(What::StdinClosed);
    assert!(is_fail(&judge(
        id::STDIO_SHUTDOWN,
        &term,
        Some(ScenarioId::Initialize)
    )));
    assert!(is_fail(&judge(id::STDIO_SHUTDOWN, &term, None)));
    let killed = T::new(Wire::Stdio)
        .handshake(json!({}))
        .push(What::ServerExited { code: None });
    assert!(is_fail(&judge(
        id::STDIO_SHUTDOWN,
        &killed,
        Some(ScenarioId::Initialize)
    )));
    // Observing a real server, an exit by a signal nobody sent is the server's own.
    assert!(!is_fail(&judge(id::STDIO_SHUTDOWN, &killed, None)));
    // Killed after the relay read EOF, before it could report its exit: no wait either.
    let killed_at_once = T::new(Wire::Stdio)
        .handshake(json!({}))
        .push(What::StdinClosed)
        .push(What::ServerExited { code: None });
    let o = judge(
        id::STDIO_SHUTDOWN,
        &killed_at_once,
        Some(ScenarioId::Initialize),
    );
    assert!(
        matches!(&o, Outcome::Fail { actual, .. } if actual.starts_with("SIGKILL without closing")),
        "{o:?}"
    );
    let exited = T::new(Wire::Stdio)
        .handshake(json!({}))
        .push(What::StdinClosed)
        .push(What::ServerExited { code: Some(0) });
    assert!(is_pass(&judge(id::STDIO_SHUTDOWN, &exited, None)));
    let hasty = T::new(Wire::Stdio)
        .handshake(json!({}))
        .push(What::StdinClosed)
        .push(What::Signal(Signal::Term));
    let o = judge(id::STDIO_SHUTDOWN, &hasty, Some(ScenarioId::Initialize));
    assert!(
        matches!(&o, Outcome::Fail { actual, .. } if actual.contains("without closing stdin and waiting")),
        "{o:?}"
    );
    // Observing a real server, which may take its time to exit, that is the spec's next step.
    assert!(is_pass(&judge(id::STDIO_SHUTDOWN, &hasty, None)));
    let polite = T::new(Wire::Stdio)
        .handshake(json!({}))
        .push(What::StdinClosed)
        .push(What::ClientExited { code: Some(0) });
    assert!(is_pass(&judge(id::STDIO_SHUTDOWN, &polite, None)));
}

const BOTH: &str = "application/json, text/event-stream";

fn http_handshake(accept: &str) -> T {
    T::new(Wire::Http)
        .http("POST", &[("accept", accept)], 200, Some("S1"))
        .c(req(
            1,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                                       "clientInfo": {"name": "c", "version": "1"}}),
        ))
        .s(result(
            1,
            json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}}),
        ))
}

#[test]
fn http_headers_and_sessions() {
    let good_headers = [
        ("accept", BOTH),
        ("mcp-session-id", "S1"),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let t = http_handshake(BOTH)
        .http("POST", &good_headers, 202, None)
        .c(note("notifications/initialized", json!({})))
        .http("DELETE", &good_headers[1..], 200, None);
    for check in [
        id::HTTP_ACCEPT,
        id::HTTP_PROTOCOL_VERSION_HEADER,
        id::HTTP_SESSION_ID,
        id::HTTP_DELETE,
    ] {
        let o = judge(check, &t, Some(ScenarioId::Initialize));
        assert!(is_pass(&o), "{check}: {o:?}");
    }
    let json_only = http_handshake("application/json");
    assert!(is_fail(&judge(id::HTTP_ACCEPT, &json_only, None)));
    let no_version = http_handshake(BOTH)
        .http(
            "POST",
            &[("accept", BOTH), ("mcp-session-id", "S1")],
            202,
            None,
        )
        .c(note("notifications/initialized", json!({})));
    assert!(is_fail(&judge(
        id::HTTP_PROTOCOL_VERSION_HEADER,
        &no_version,
        None
    )));
    let no_session = http_handshake(BOTH)
        .http(
            "POST",
            &[("accept", BOTH), ("mcp-protocol-version", "2025-11-25")],
            202,
            None,
        )
        .c(note("notifications/initialized", json!({})));
    assert!(is_fail(&judge(id::HTTP_SESSION_ID, &no_session, None)));
    let no_delete = t.push(What::ClientExited { code: Some(0) });
    assert!(is_pass(&judge(id::HTTP_DELETE, &no_delete, None)));
    let exited = http_handshake(BOTH).push(What::ClientExited { code: Some(0) });
    assert!(is_fail(&judge(id::HTTP_DELETE, &exited, None)));
}

#[test]
fn http_session_expiry() {
    let s = Some(ScenarioId::SessionExpired);
    let expired = || {
        http_handshake(BOTH)
            .http(
                "POST",
                &[("accept", BOTH), ("mcp-session-id", "S1")],
                404,
                None,
            )
            .c(req(2, "tools/list", json!({})))
    };
    let renewed = expired()
        .http("POST", &[("accept", BOTH)], 200, Some("S2"))
        .c(req(3, "initialize", json!({})));
    assert!(is_pass(&judge(id::HTTP_SESSION_EXPIRED, &renewed, s)));
    let stale = expired()
        .http(
            "POST",
            &[("accept", BOTH), ("mcp-session-id", "S1")],
            404,
            None,
        )
        .c(req(3, "tools/list", json!({})));
    assert!(is_fail(&judge(id::HTTP_SESSION_EXPIRED, &stale, s)));
    let gone = expired().push(What::ClientExited { code: Some(1) });
    assert!(is_fail(&judge(id::HTTP_SESSION_EXPIRED, &gone, s)));
    assert!(is_skip(&judge(id::HTTP_SESSION_EXPIRED, &gone, None)));
    // The renewed session's own id is judged from then on, not the expired one.
    assert!(is_pass(&judge(id::HTTP_SESSION_ID, &renewed, s)));
}

#[test]
fn http_modern_headers() {
    let s = Some(ScenarioId::Modern);
    let call = req(
        1,
        "tools/call",
        json!({"name": "add_numbers", "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}}),
    );
    let with = |headers: &[(&str, &str)]| {
        T::new(Wire::Http)
            .http("POST", headers, 200, None)
            .c(call.clone())
    };
    let base = [
        ("accept", BOTH),
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
    ];
    let good = with(&[base[0], base[1], base[2], ("mcp-name", "add_numbers")]);
    assert!(is_pass(&judge(id::HTTP_MODERN_HEADERS, &good, s)));
    assert!(is_pass(&judge(id::HTTP_PROTOCOL_VERSION_HEADER, &good, s)));
    let encoded = with(&[
        base[0],
        base[1],
        base[2],
        ("mcp-name", "=?base64?YWRkX251bWJlcnM=?="),
    ]);
    assert!(is_pass(&judge(id::HTTP_MODERN_HEADERS, &encoded, s)));
    let no_name = with(&base);
    assert!(is_fail(&judge(id::HTTP_MODERN_HEADERS, &no_name, s)));
    let wrong_method = with(&[
        base[0],
        base[1],
        ("mcp-method", "tools/list"),
        ("mcp-name", "add_numbers"),
    ]);
    assert!(is_fail(&judge(id::HTTP_MODERN_HEADERS, &wrong_method, s)));
    let old_version = with(&[
        base[0],
        ("mcp-protocol-version", "2025-11-25"),
        base[2],
        ("mcp-name", "add_numbers"),
    ]);
    assert!(is_fail(&judge(
        id::HTTP_PROTOCOL_VERSION_HEADER,
        &old_version,
        s
    )));
}

#[test]
fn http_reprobe_after_404_and_nothing_negotiated() {
    let s = Some(ScenarioId::SessionExpired);
    let reprobed = http_handshake(BOTH)
        .http(
            "POST",
            &[("accept", BOTH), ("mcp-session-id", "S1")],
            404,
            None,
        )
        .c(req(2, "tools/list", json!({})))
        .http("POST", &[("accept", BOTH)], 200, None)
        .c(modern_req(3, "server/discover", "2026-07-28"))
        .http("POST", &[("accept", BOTH)], 200, Some("S2"))
        .c(req(4, "initialize", json!({})));
    assert!(is_pass(&judge(id::HTTP_SESSION_EXPIRED, &reprobed, s)));
    // After an initialize answered with a version nobody supports, nothing was negotiated: a
    // DELETE without MCP-Protocol-Version is not judged by the header check.
    let wrong = T::new(Wire::Http)
        .http("POST", &[("accept", BOTH)], 200, Some("S1"))
        .c(req(1, "initialize", json!({})))
        .s(result(
            1,
            json!({"protocolVersion": "1999-01-01", "capabilities": {}}),
        ))
        .http("DELETE", &[("mcp-session-id", "S1")], 200, None);
    assert!(is_skip(&judge(
        id::HTTP_PROTOCOL_VERSION_HEADER,
        &wrong,
        None
    )));
}

#[test]
fn a_new_session_ends_the_old_ones_requests_and_messages() {
    // Another server process (or a new initialize) after a wrong version is a new session.
    let s = Some(ScenarioId::WrongVersion);
    let again = T::new(Wire::Stdio)
        .c(req(1, "initialize", json!({})))
        .s(result(
            1,
            json!({"protocolVersion": "1999-01-01", "capabilities": {}}),
        ))
        .push(What::StdinClosed)
        .c(req(1, "initialize", json!({})));
    assert!(is_pass(&judge(
        id::UNSUPPORTED_VERSION_DISCONNECT,
        &again,
        s
    )));
    let call = |id: u64| {
        req(
            id,
            "tools/call",
            json!({"name": "x", "_meta": {"progressToken": 0}}),
        )
    };
    let renewed = good().c(call(5)).handshake(json!({})).c(call(6));
    assert!(is_pass(&judge(id::PROGRESS_TOKENS_UNIQUE, &renewed, None)));
}

#[test]
fn undeclared_requests_are_reported() {
    let s = Some(ScenarioId::UndeclaredRequests);
    let t = T::new(Wire::Stdio)
        .handshake(json!({}))
        .s(req("s-1", "ping", json!({})))
        .s(req("s-2", "roots/list", json!({})))
        .c(result("s-1", json!({})))
        .c(error("s-2", -32601));
    let o = judge(id::UNDECLARED_REQUESTS, &t, s);
    assert!(
        matches!(&o, Outcome::Observed(text) if text == "roots/list: error -32601"),
        "{o:?}"
    );
    assert!(is_skip(&judge(id::SERVER_REQUESTS_ANSWERED, &t, s)));
    let nothing_asked = T::new(Wire::Stdio)
        .handshake(json!({"roots": {}, "sampling": {}, "elicitation": {}}))
        .s(req("s-1", "ping", json!({})))
        .c(result("s-1", json!({})));
    assert!(is_skip(&judge(id::UNDECLARED_REQUESTS, &nothing_asked, s)));
}
