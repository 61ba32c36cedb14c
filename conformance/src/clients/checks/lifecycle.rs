//! The legacy lifecycle as the client drives it (2025-11-25 `basic/lifecycle.mdx`): the
//! `initialize` request, `notifications/initialized`, what may come before it, version
//! negotiation, and the `server/discover` probe of a dual-era client (2026-07-28
//! `basic/transports/stdio.mdx`, Backward Compatibility).

use serde_json::Value;

use crate::check::{Level, Outcome};
use crate::clients::judge::{ClientCheck, Session};
use crate::clients::scenario::ScenarioId;
use crate::clients::script::UNSUPPORTED_VERSION;
use crate::clients::timeline::{Message, Side, Timeline, What};
use crate::ids::client as id;

const LIFECYCLE: &str = "2025-11-25 basic/lifecycle.mdx";

/// The scenarios whose server speaks the legacy era.
pub(super) const LEGACY: &[ScenarioId] = &[
    ScenarioId::Initialize,
    ScenarioId::ToolsCall,
    ScenarioId::DiscoverEmptyResult,
    ScenarioId::Timeout,
    ScenarioId::WrongVersion,
    ScenarioId::SessionExpired,
    ScenarioId::UndeclaredRequests,
];

pub(super) fn checks() -> Vec<ClientCheck> {
    vec![
        ClientCheck::new(
            id::INITIALIZE_FIRST,
            Level::Must,
            "initialize is the first request (after a server/discover probe, if any)",
            &format!("{LIFECYCLE}, Initialization"),
            initialize_first,
        )
        .quote("The initialization phase MUST be the first interaction between client and server.")
        .scenarios(LEGACY),
        ClientCheck::new(
            id::INITIALIZE_SHAPE,
            Level::Must,
            "initialize params carry protocolVersion (a string), capabilities (an object) and clientInfo {name, version}",
            &format!("{LIFECYCLE}, Initialization; schema.ts InitializeRequestParams"),
            initialize_shape,
        )
        .quote("The client MUST initiate this phase by sending an initialize request containing: Protocol version supported, Client capabilities, Client implementation information")
        .scenarios(LEGACY),
        ClientCheck::new(
            id::INITIALIZED_SENT,
            Level::Must,
            "after a successful initialize result, notifications/initialized is sent before any other request but ping",
            &format!("{LIFECYCLE}, Initialization"),
            initialized_sent,
        )
        .quote("After successful initialization, the client MUST send an initialized notification to indicate it is ready to begin normal operations")
        .scenarios(&[
            ScenarioId::Initialize,
            ScenarioId::ToolsCall,
            ScenarioId::DiscoverEmptyResult,
            ScenarioId::Timeout,
            ScenarioId::SessionExpired,
            ScenarioId::UndeclaredRequests,
        ]),
        ClientCheck::new(
            id::REQUESTS_BEFORE_INITIALIZED,
            Level::Should,
            "no request but ping between sending initialize and its response",
            &format!("{LIFECYCLE}, Initialization"),
            requests_before_initialized,
        )
        .quote("The client SHOULD NOT send requests other than pings before the server has responded to the initialize request.")
        .scenarios(LEGACY),
        ClientCheck::new(
            id::UNSUPPORTED_VERSION_DISCONNECT,
            Level::Should,
            "when initialize is answered with a version it does not support (1999-01-01), the client sends nothing more and disconnects",
            &format!("{LIFECYCLE}, Version Negotiation"),
            unsupported_version_disconnect,
        )
        .quote("If the client does not support the version in the server's response, it SHOULD disconnect.")
        .only_in(&[ScenarioId::WrongVersion]),
        ClientCheck::new(
            id::DISCOVER_FALLBACK,
            Level::Should,
            "a client that probes with server/discover falls back to initialize when the answer is not a DiscoverResult or a recognized modern error (-32601, or an empty result {})",
            "2026-07-28 basic/transports/stdio.mdx, Backward Compatibility",
            discover_fallback,
        )
        .quote("A client that supports both modern (per-request-metadata) MCP versions and a legacy version that requires an initialize handshake SHOULD probe with server/discover before sending any other request ... The server returns any other error, or does not respond within a reasonable timeout: the server is legacy. Fall back to the initialize handshake.")
        .because("the fallback is the outcome of the probe the SHOULD sentence asks for; a client that does not probe is not judged")
        .only_in(&[ScenarioId::Initialize, ScenarioId::DiscoverEmptyResult]),
    ]
}

/// The client requests of the session, in order, leaving out a `server/discover` probe.
fn requests_after_probe(t: &Timeline) -> impl Iterator<Item = (usize, &Message)> {
    t.from(Side::Client)
        .filter(|(_, m)| m.is_request() && m.method() != Some("server/discover"))
}

/// A `server/discover` the server answered with a `DiscoverResult`: a modern session, which has
/// no `initialize`.
pub(super) fn modern_session(t: &Timeline) -> bool {
    t.from(Side::Client)
        .filter(|(_, m)| m.is_request() && m.method() == Some("server/discover"))
        .any(|(_, m)| {
            m.id()
                .and_then(|id| t.response_to(Side::Client, id))
                .and_then(|(_, r)| r.result())
                .is_some_and(|r| r.get("supportedVersions").is_some_and(Value::is_array))
        })
}

fn initialize_first(s: &Session<'_>) -> Outcome {
    let t = s.timeline;
    if modern_session(t) {
        return Outcome::Skip("a modern session (server/discover answered): no initialize".into());
    }
    match requests_after_probe(t).next() {
        None => Outcome::Skip("the client sent no request".into()),
        Some((_, m)) if m.method() == Some("initialize") => {
            Outcome::pass("initialize was the first request")
        }
        Some((_, m)) => Outcome::fail(
            "initialize first",
            format!("the first request was {}", m.method().unwrap_or("?")),
        ),
    }
}

fn initialize_shape(s: &Session<'_>) -> Outcome {
    let Some((_, init)) = s.timeline.first_request(Side::Client, "initialize") else {
        return Outcome::Skip("the client sent no initialize".into());
    };
    let params = init.params().cloned().unwrap_or(Value::Null);
    let problems = initialize_params_problems(&params);
    if problems.is_empty() {
        Outcome::pass(format!(
            "protocolVersion {}, clientInfo {}",
            params["protocolVersion"], params["clientInfo"]["name"]
        ))
    } else {
        Outcome::fail(
            "protocolVersion (string), capabilities (object), clientInfo {name, version} (strings)",
            format!("{}: {params}", problems.join("; ")),
        )
    }
}

fn initialize_params_problems(params: &Value) -> Vec<&'static str> {
    let mut problems = Vec::new();
    if !params["protocolVersion"].is_string() {
        problems.push("protocolVersion is not a string");
    }
    if !params["capabilities"].is_object() {
        problems.push("capabilities is not an object");
    }
    let info = &params["clientInfo"];
    if !info["name"].is_string() || !info["version"].is_string() {
        problems.push("clientInfo lacks a string name or version");
    }
    problems
}

/// The `initialize` the server answered with a result, and the index of that result.
fn successful_initialize(t: &Timeline) -> Option<(usize, &Message)> {
    let (_, init) = t.first_request(Side::Client, "initialize")?;
    let (at, response) = t.response_to(Side::Client, init.id()?)?;
    response.result().map(|_| (at, init))
}

fn initialized_sent(s: &Session<'_>) -> Outcome {
    let t = s.timeline;
    let Some((answered_at, _)) = successful_initialize(t) else {
        return Outcome::Skip("no initialize got a result".into());
    };
    let after = t.from(Side::Client).filter(|(i, _)| *i > answered_at);
    for (_, m) in after {
        match m.method() {
            Some("notifications/initialized") => {
                return Outcome::pass("notifications/initialized followed the result")
            }
            Some(method) if m.is_request() && method != "ping" => {
                return Outcome::fail(
                    "notifications/initialized before other requests",
                    format!("{method} was sent first"),
                )
            }
            _ => {}
        }
    }
    Outcome::fail(
        "notifications/initialized after the initialize result",
        "never sent",
    )
}

fn requests_before_initialized(s: &Session<'_>) -> Outcome {
    let t = s.timeline;
    let Some((sent_at, init)) = t.first_request(Side::Client, "initialize") else {
        return Outcome::Skip("the client sent no initialize".into());
    };
    let answered_at = init
        .id()
        .and_then(|id| t.response_to(Side::Client, id))
        .map_or(usize::MAX, |(i, _)| i);
    let early: Vec<&str> = t
        .from(Side::Client)
        .filter(|(i, m)| *i > sent_at && *i < answered_at && m.is_request())
        .filter_map(|(_, m)| m.method())
        .filter(|method| *method != "ping")
        .collect();
    if early.is_empty() {
        Outcome::pass("nothing but pings before the initialize response")
    } else {
        Outcome::fail(
            "no request but ping before the initialize response",
            format!("sent {}", early.join(", ")),
        )
    }
}

/// Whether the client ended the session: closed stdin, exited, signalled, or sent DELETE.
pub(super) fn ended_by_client(t: &Timeline) -> bool {
    t.events.iter().any(|e| ends_session(&e.what))
}

fn ends_session(what: &What) -> bool {
    match what {
        What::StdinClosed | What::Signal(_) | What::ClientExited { .. } => true,
        What::Http(x) => x.method == "DELETE",
        _ => false,
    }
}

fn unsupported_version_disconnect(s: &Session<'_>) -> Outcome {
    let t = s.timeline;
    let Some((answered_at, _)) = successful_initialize(t) else {
        return Outcome::Skip("no initialize got a result".into());
    };
    // Until the session ends: a client command that starts another session afterwards (a new
    // server process, a new initialize) has disconnected from this one.
    let end = t
        .events
        .iter()
        .enumerate()
        .skip(answered_at)
        .find(|(_, e)| ends_session(&e.what))
        .map_or(usize::MAX, |(i, _)| i);
    // What was sent, each kind once and sorted: the order of a client's concurrent messages
    // is scheduling, not conduct.
    let later: std::collections::BTreeSet<&str> = t
        .from(Side::Client)
        .filter(|(i, _)| *i > answered_at && *i < end)
        .take_while(|(_, m)| m.method() != Some("initialize"))
        .filter(|(_, m)| m.method() != Some("notifications/cancelled"))
        .map(|(_, m)| m.method().unwrap_or("a response"))
        .collect();
    if !later.is_empty() {
        return Outcome::fail(
            format!("no further messages after a {UNSUPPORTED_VERSION} result"),
            format!("sent {}", later.into_iter().collect::<Vec<_>>().join(", ")),
        );
    }
    if ended_by_client(t) {
        Outcome::pass(format!(
            "disconnected after the {UNSUPPORTED_VERSION} result"
        ))
    } else {
        Outcome::Observed(format!(
            "sent nothing more after the {UNSUPPORTED_VERSION} result, but was still connected when the scenario ended"
        ))
    }
}

fn discover_fallback(s: &Session<'_>) -> Outcome {
    let t = s.timeline;
    let Some((probe_at, probe)) = t.first_request(Side::Client, "server/discover") else {
        return Outcome::Skip("the client does not probe with server/discover".into());
    };
    let answer = probe.id().and_then(|id| t.response_to(Side::Client, id));
    let Some((answered_at, answer)) = answer else {
        return Outcome::Skip("the probe was not answered before the client went on".into());
    };
    let got = match (answer.result(), answer.error_code()) {
        (Some(r), _) => format!("result {r}"),
        (None, Some(code)) => format!("error {code}"),
        (None, None) => "an answer".to_owned(),
    };
    let next = t
        .from(Side::Client)
        .find(|(i, m)| *i > answered_at.max(probe_at) && m.is_request());
    match next {
        Some((_, m)) if m.method() == Some("initialize") => {
            Outcome::pass(format!("server/discover got {got}; initialize followed"))
        }
        Some((_, m)) => Outcome::fail(
            "initialize after a server/discover answer that is not modern",
            format!(
                "server/discover got {got}; next request: {}",
                m.method().unwrap_or("?")
            ),
        ),
        None => Outcome::fail(
            "initialize after a server/discover answer that is not modern",
            format!("server/discover got {got}; the client sent no further request"),
        ),
    }
}
