//! A client in the 2026-07-28 era: the `_meta` every request carries, and what it does after
//! -32022 (2026-07-28 `basic/versioning.mdx`, `schema.ts` RequestMetaObject).

use serde_json::Value;

use mcp_protocol::mcp::modern::{
    META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION, UNSUPPORTED_PROTOCOL_VERSION,
};

use crate::check::{Level, Outcome};
use crate::clients::judge::{ClientCheck, Session};
use crate::clients::scenario::ScenarioId;
use crate::clients::timeline::{Message, Side, Timeline};
use crate::ids::client as id;

pub(super) fn checks() -> Vec<ClientCheck> {
    vec![
        ClientCheck::new(
            id::MODERN_META,
            Level::Must,
            "every 2026-07-28 request carries _meta io.modelcontextprotocol/protocolVersion (a string) and io.modelcontextprotocol/clientCapabilities (an object)",
            "2026-07-28 schema.ts RequestMetaObject; basic/versioning.mdx, Protocol Version Negotiation",
            modern_meta,
        )
        .quote("schema.ts RequestMetaObject: \"io.modelcontextprotocol/protocolVersion\": string — The MCP Protocol Version being used for this request. Required. / \"io.modelcontextprotocol/clientCapabilities\": ClientCapabilities — The client's capabilities for this specific request. Required.")
        .scenarios(&[ScenarioId::Modern]),
        ClientCheck::new(
            id::MODERN_VERSION_RETRY,
            Level::Should,
            "after -32022 UnsupportedProtocolVersionError the client retries with a version from data.supported (or stops), and does not fall back to initialize",
            "2026-07-28 basic/versioning.mdx, Protocol Version Negotiation; basic/transports/stdio.mdx, Backward Compatibility",
            modern_version_retry,
        )
        .quote("The client SHOULD select a mutually supported version from the supported list and retry the request, or surface an error to the user if no compatible version exists.")
        .scenarios(&[ScenarioId::Modern]),
    ]
}

fn version_of(m: &Message) -> Option<&Value> {
    m.params()?.get("_meta")?.get(META_PROTOCOL_VERSION)
}

/// Whether any client request spoke 2026-07-28 (a `_meta` protocol version).
fn speaks_modern(t: &Timeline) -> bool {
    t.from(Side::Client)
        .any(|(_, m)| m.is_request() && version_of(m).is_some())
}

fn modern_meta(s: &Session<'_>) -> Outcome {
    let t = s.timeline;
    if !speaks_modern(t) {
        return Outcome::Skip("no request carried a 2026-07-28 _meta protocol version: the client does not speak that era".into());
    }
    let mut count = 0;
    for (_, m) in t.from(Side::Client).filter(|(_, m)| m.is_request()) {
        let method = m.method().unwrap_or_default();
        if method == "initialize" {
            continue;
        }
        let meta = m.params().and_then(|p| p.get("_meta"));
        let version = meta.and_then(|x| x.get(META_PROTOCOL_VERSION));
        let caps = meta.and_then(|x| x.get(META_CLIENT_CAPABILITIES));
        if !version.is_some_and(Value::is_string) || !caps.is_some_and(Value::is_object) {
            return Outcome::fail(
                "_meta with protocolVersion and clientCapabilities on every request",
                format!(
                    "{method} carried _meta {}",
                    meta.cloned().unwrap_or(Value::Null)
                ),
            );
        }
        count += 1;
    }
    Outcome::pass(format!("{count} requests, each with both keys"))
}

fn modern_version_retry(s: &Session<'_>) -> Outcome {
    let t = s.timeline;
    let rejected = t
        .from(Side::Server)
        .find(|(_, m)| m.error_code() == Some(UNSUPPORTED_PROTOCOL_VERSION));
    let Some((at, error)) = rejected else {
        return Outcome::Skip(
            "no request got -32022: the client asked for a supported version first".into(),
        );
    };
    let supported: Vec<Value> = error
        .json
        .as_ref()
        .and_then(|e| e["error"]["data"]["supported"].as_array().cloned())
        .unwrap_or_default();
    let next = t
        .from(Side::Client)
        .find(|(i, m)| *i > at && m.is_request());
    match next {
        None => Outcome::Observed("the client stopped after -32022".into()),
        Some((_, m)) if m.method() == Some("initialize") => Outcome::fail(
            "a retry with a supported version, not a fall back to initialize",
            "sent initialize after -32022",
        ),
        Some((_, m)) => match version_of(m) {
            Some(v) if supported.contains(v) => Outcome::pass(format!("retried with {v}")),
            v => Outcome::fail(
                format!("a retry with one of {}", Value::Array(supported.clone())),
                format!(
                    "{} with version {}",
                    m.method().unwrap_or("?"),
                    v.cloned().unwrap_or(Value::Null)
                ),
            ),
        },
    }
}
