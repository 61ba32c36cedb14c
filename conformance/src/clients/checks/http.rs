//! Streamable HTTP checks of a client: headers, sessions, DELETE
//! (2025-11-25 `basic/transports.mdx`, Streamable HTTP; 2026-07-28
//! `basic/transports/streamable-http.mdx`).

use std::collections::HashMap;

use mcp_protocol::mcp::modern::META_PROTOCOL_VERSION;
use mcp_protocol::mcp::ProtocolVersion;
use serde_json::Value;

use crate::check::{Level, Outcome, Transport};
use crate::clients::judge::{ClientCheck, Session};
use crate::clients::scenario::ScenarioId;
use crate::clients::timeline::{Exchange, Message, Side, Timeline, What};
use crate::ids::client as id;

use super::lifecycle::LEGACY;

const HTTP: &str = "2025-11-25 basic/transports.mdx, Streamable HTTP";
const MODERN_HTTP: &str = "2026-07-28 basic/transports/streamable-http.mdx";

pub(super) fn checks() -> Vec<ClientCheck> {
    let http = |c: ClientCheck| c.transport(Transport::Http);
    vec![
        http(ClientCheck::new(
            id::HTTP_ACCEPT,
            Level::Must,
            "every POST's Accept lists application/json and text/event-stream",
            &format!("{HTTP}, Sending Messages to the Server"),
            accept,
        )
        .quote("The client MUST include an Accept header, listing both application/json and text/event-stream as supported content types.")),
        http(ClientCheck::new(
            id::HTTP_PROTOCOL_VERSION_HEADER,
            Level::Must,
            "every request after initialize carries MCP-Protocol-Version (2026-07-28: every POST, equal to its _meta version)",
            &format!("{HTTP}, Protocol Version Header; {MODERN_HTTP}, Protocol Version Header"),
            protocol_version_header,
        )
        .quote("If using HTTP, the client MUST include the MCP-Protocol-Version: <protocol-version> HTTP header on all subsequent requests to the MCP server / The header value MUST match the io.modelcontextprotocol/protocolVersion field carried in the request body's _meta.")),
        http(ClientCheck::new(
            id::HTTP_SESSION_ID,
            Level::Must,
            "after initialize returned an Mcp-Session-Id, every later request carries it",
            &format!("{HTTP}, Session Management"),
            session_id,
        )
        .quote("If an MCP-Session-Id is returned by the server during initialization, clients using the Streamable HTTP transport MUST include it in the MCP-Session-Id header on all of their subsequent HTTP requests.")),
        http(ClientCheck::new(
            id::HTTP_SESSION_EXPIRED,
            Level::Must,
            "after a 404 to a request with a session id, the client sends a new initialize without a session id",
            &format!("{HTTP}, Session Management"),
            session_expired,
        )
        .quote("When a client receives HTTP 404 in response to a request containing an MCP-Session-Id, it MUST start a new session by sending a new InitializeRequest without a session ID attached.")
        .scenarios(&[ScenarioId::SessionExpired])),
        http(ClientCheck::new(
            id::HTTP_DELETE,
            Level::Should,
            "a client done with its session sends DELETE with the Mcp-Session-Id",
            &format!("{HTTP}, Session Management"),
            delete,
        )
        .quote("Clients that no longer need a particular session (e.g., because the user is leaving the client application) SHOULD send an HTTP DELETE to the MCP endpoint with the MCP-Session-Id header, to explicitly terminate the session.")
        .only_in(LEGACY)),
        http(ClientCheck::new(
            id::HTTP_MODERN_HEADERS,
            Level::Must,
            "every 2026-07-28 POST carries Mcp-Method equal to the body's method, and tools/call, resources/read and prompts/get carry Mcp-Name equal to params.name or params.uri",
            &format!("{MODERN_HTTP}, Standard Request Headers"),
            modern_headers,
        )
        .quote("The client MUST include the request metadata headers on each POST request. / [Mcp-Method: all requests; Mcp-Name: tools/call, resources/read, prompts/get requests] These headers are REQUIRED for compliance.")
        .scenarios(&[ScenarioId::Modern])),
    ]
}

/// The client's POSTs, each with the message it carried (the first of a batch).
fn posts(t: &Timeline) -> Vec<(usize, &Exchange, Option<&Message>)> {
    let bodies = Bodies::of(t);
    t.exchanges()
        .filter(|(_, x)| x.method == "POST")
        .map(|(i, x)| (i, x, bodies.get(i)))
        .collect()
}

/// The (first) client message each exchange carried, by the exchange's event index: made once
/// per judgement, so a lookup does not scan the timeline (an observed session can be long).
struct Bodies<'a>(HashMap<usize, &'a Message>);

impl<'a> Bodies<'a> {
    fn of(t: &'a Timeline) -> Bodies<'a> {
        let mut bodies = HashMap::new();
        for (_, m) in t.from(Side::Client) {
            if let Some(exchange) = m.exchange {
                bodies.entry(exchange).or_insert(m);
            }
        }
        Bodies(bodies)
    }

    fn get(&self, exchange: usize) -> Option<&'a Message> {
        self.0.get(&exchange).copied()
    }

    fn method(&self, exchange: usize) -> Option<&'a str> {
        self.get(exchange).and_then(Message::method)
    }
}

fn describe(x: &Exchange, m: Option<&Message>) -> String {
    format!(
        "{} carrying {}",
        x.method,
        m.and_then(Message::method).unwrap_or("a response")
    )
}

fn accept(s: &Session<'_>) -> Outcome {
    let posts = posts(s.timeline);
    if posts.is_empty() {
        return Outcome::Skip("the client made no POST".into());
    }
    for (_, x, m) in &posts {
        let accept = x.header("accept").unwrap_or("").to_ascii_lowercase();
        if !(accept.contains("application/json") && accept.contains("text/event-stream")) {
            return Outcome::fail(
                "Accept: application/json, text/event-stream",
                format!("{} with Accept {:?}", describe(x, *m), x.header("accept")),
            );
        }
    }
    Outcome::pass(format!("{} POSTs, each accepting both", posts.len()))
}

fn meta_version(m: &Message) -> Option<&str> {
    m.params()?
        .get("_meta")?
        .get(META_PROTOCOL_VERSION)?
        .as_str()
}

fn protocol_version_header(s: &Session<'_>) -> Outcome {
    let t = s.timeline;
    let bodies = Bodies::of(t);
    let mut after_initialize = false;
    let mut judged = 0;
    for (i, x) in t.exchanges() {
        let message = bodies.get(i);
        let header = x.header("mcp-protocol-version");
        let modern = message.and_then(meta_version);
        let is_initialize = message.and_then(Message::method) == Some("initialize");
        if let Some(version) = modern {
            judged += 1;
            if header != Some(version) {
                return Outcome::fail(
                    format!("MCP-Protocol-Version: {version} (the _meta version)"),
                    format!(
                        "{} with MCP-Protocol-Version {header:?}",
                        describe(x, message)
                    ),
                );
            }
        } else if after_initialize && !is_initialize {
            judged += 1;
            if header.is_none() {
                return Outcome::fail(
                    "MCP-Protocol-Version on every request after initialize",
                    format!("{} without it", describe(x, message)),
                );
            }
        }
        if is_initialize && negotiated(t, message) {
            after_initialize = true;
        }
    }
    if judged == 0 {
        return Outcome::Skip("no request after initialize and no 2026-07-28 request".into());
    }
    Outcome::pass(format!("{judged} requests carried it"))
}

/// Whether the `initialize` got a result with a protocol version this toolkit knows: after one
/// with a version no client supports (the wrong-version scenario), nothing was negotiated, and
/// the client can only disconnect.
fn negotiated(t: &Timeline, initialize: Option<&Message>) -> bool {
    let version = initialize
        .and_then(Message::id)
        .and_then(|id| t.response_to(Side::Client, id))
        .and_then(|(_, r)| r.result())
        .and_then(|r| r.get("protocolVersion"))
        .and_then(Value::as_str);
    version.is_some_and(|v| ProtocolVersion::parse(v).is_some())
}

/// The session id the server returned, and the index of the exchange that returned it.
fn returned_session(t: &Timeline, from: usize) -> Option<(usize, &str)> {
    t.exchanges()
        .filter(|(i, _)| *i >= from)
        .find_map(|(i, x)| x.response_header("mcp-session-id").map(|v| (i, v)))
}

fn session_id(s: &Session<'_>) -> Outcome {
    let t = s.timeline;
    let Some((at, session)) = returned_session(t, 0) else {
        return Outcome::Skip("the server returned no Mcp-Session-Id".into());
    };
    let bodies = Bodies::of(t);
    let mut judged = 0;
    for (i, x) in t.exchanges().filter(|(i, _)| *i > at) {
        let sent = x.header("mcp-session-id");
        if sent.is_none() && x.method == "POST" && bodies.method(i) == Some("initialize") {
            break; // a new session (after a 404): its own id follows
        }
        judged += 1;
        if sent != Some(session) {
            return Outcome::fail(
                format!("Mcp-Session-Id: {session}"),
                format!("{} {} with Mcp-Session-Id {sent:?}", x.method, x.path),
            );
        }
        if x.status == 404 {
            break;
        }
    }
    if judged == 0 {
        return Outcome::Skip("no request after the session id was returned".into());
    }
    Outcome::pass(format!("{judged} later requests carried {session}"))
}

fn session_expired(s: &Session<'_>) -> Outcome {
    let t = s.timeline;
    let expired = t
        .exchanges()
        .find(|(_, x)| x.status == 404 && x.header("mcp-session-id").is_some());
    let Some((at, _)) = expired else {
        return Outcome::Skip("no request with a session id got 404".into());
    };
    let bodies = Bodies::of(t);
    // A dual-era client may probe again (server/discover, no session id) before initialize.
    let next = t.exchanges().find(|(i, x)| {
        *i > at
            && x.method == "POST"
            && !(bodies.method(*i) == Some("server/discover")
                && x.header("mcp-session-id").is_none())
    });
    match next {
        Some((i, x))
            if bodies.method(i) == Some("initialize") && x.header("mcp-session-id").is_none() =>
        {
            Outcome::pass("a new initialize without a session id followed the 404")
        }
        Some((i, x)) => Outcome::fail(
            "a new initialize without a session id after the 404",
            format!(
                "next POST: {}, Mcp-Session-Id {:?}",
                bodies.method(i).unwrap_or("not a request"),
                x.header("mcp-session-id")
            ),
        ),
        None if s.scenario.is_some() => Outcome::fail(
            "a new initialize without a session id after the 404",
            "the client sent no further POST",
        ),
        None => Outcome::Skip("the client sent nothing after the 404".into()),
    }
}

fn delete(s: &Session<'_>) -> Outcome {
    let t = s.timeline;
    let Some((_, session)) = returned_session(t, 0) else {
        return Outcome::Skip("the server returned no Mcp-Session-Id".into());
    };
    let deleted = t.exchanges().find(|(_, x)| x.method == "DELETE");
    if let Some((_, x)) = deleted {
        return match x.header("mcp-session-id") {
            Some(_) => Outcome::pass("DELETE with the session id"),
            None => Outcome::fail("DELETE with Mcp-Session-Id", "DELETE without it"),
        };
    }
    let bound = t.events.iter().any(|e| matches!(e.what, What::Bound));
    if bound {
        return Outcome::Skip("the client was still running when the scenario ended".into());
    }
    Outcome::fail(
        format!("DELETE with Mcp-Session-Id {session} before the client exits"),
        "the client exited without DELETE",
    )
}

fn modern_headers(s: &Session<'_>) -> Outcome {
    let t = s.timeline;
    let mut judged = 0;
    for (_, x, m) in posts(t) {
        let Some(m) = m.filter(|m| m.is_request() && meta_version(m).is_some()) else {
            continue;
        };
        judged += 1;
        let method = m.method().unwrap_or_default();
        if x.header("mcp-method") != Some(method) {
            return Outcome::fail(
                format!("Mcp-Method: {method}"),
                format!("Mcp-Method {:?}", x.header("mcp-method")),
            );
        }
        let name_source = match method {
            "tools/call" | "prompts/get" => m.params().and_then(|p| p.get("name")),
            "resources/read" => m.params().and_then(|p| p.get("uri")),
            _ => continue,
        };
        let expected = name_source.and_then(Value::as_str).unwrap_or_default();
        let sent = x.header("mcp-name").map(decode_name);
        if sent.as_deref() != Some(expected) {
            return Outcome::fail(
                format!("Mcp-Name: {expected}"),
                format!("{method} with Mcp-Name {:?}", x.header("mcp-name")),
            );
        }
    }
    if judged == 0 {
        return Outcome::Skip("no 2026-07-28 request was POSTed".into());
    }
    Outcome::pass(format!("{judged} requests with matching headers"))
}

/// A header value in the Base64 sentinel form `=?base64?…?=` decoded; others as they are.
fn decode_name(value: &str) -> String {
    use base64::Engine;
    value
        .strip_prefix("=?base64?")
        .and_then(|v| v.strip_suffix("?="))
        .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok())
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .unwrap_or_else(|| value.to_owned())
}
