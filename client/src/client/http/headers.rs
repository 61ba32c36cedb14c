//! The MCP headers a POST carries, read off the message and what the connection learned:
//! legacy (2025-11-25 and earlier) sends the session and the negotiated version; 2026-07-28
//! mirrors the body into `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name`
//! (`basic/transports/streamable-http.mdx`, "Request Metadata").

use mcp_protocol::http::{self as names, encode_header_value, mirrored_name};
use mcp_protocol::mcp::modern::META_PROTOCOL_VERSION;
use mcp_protocol::Message;
use serde_json::Value;

/// What the connection knows when a message goes out.
#[derive(Debug, Default)]
pub(super) struct Context {
    /// The legacy session, once an `initialize` reply set one.
    pub(super) session: Option<String>,
    /// The version `initialize` negotiated (legacy).
    pub(super) legacy_version: Option<String>,
    /// The version the `server/discover` probe chose (modern).
    pub(super) modern_version: Option<String>,
}

/// The MCP headers for `message`, as (lowercase name, value) pairs.
///
/// A request whose `params._meta` declares a protocol version is modern (the probe, and every
/// request once connected modern): its headers mirror the body, so they agree with it by
/// construction, and it carries no session. Anything else is legacy.
pub(super) fn for_message(message: &Message, cx: &Context) -> Vec<(&'static str, String)> {
    let (method, params) = match message {
        Message::Request(r) => (Some(r.method.as_str()), r.params.as_ref()),
        Message::Notification(n) => (Some(n.method.as_str()), n.params.as_ref()),
        Message::Response(_) => (None, None),
    };
    let declared = params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(META_PROTOCOL_VERSION))
        .and_then(Value::as_str);
    let mut headers = Vec::new();
    if let Some(version) = declared.or(cx.modern_version.as_deref()) {
        headers.push((names::PROTOCOL_VERSION, version.to_owned()));
        if let Some(method) = method {
            headers.push((names::METHOD, encode_header_value(method)));
            if let (Message::Request(_), Some(Some(name))) =
                (message, mirrored_name(method, params))
            {
                headers.push((names::NAME, encode_header_value(name)));
            }
        }
        return headers;
    }
    if let Some(session) = &cx.session {
        headers.push((names::SESSION_ID, session.clone()));
    }
    if let Some(version) = &cx.legacy_version {
        headers.push((names::PROTOCOL_VERSION, version.clone()));
    }
    headers
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_protocol::{Notification, Request, RequestId};
    use serde_json::json;

    fn request(method: &str, params: Value) -> Message {
        Message::Request(Request {
            id: RequestId::from(1),
            method: method.to_owned(),
            params: Some(params),
        })
    }

    #[test]
    fn a_modern_request_mirrors_its_body_and_sends_no_session() {
        let cx = Context {
            session: Some("s".into()),
            ..Context::default()
        };
        let body = json!({"name": "echo", "_meta": {META_PROTOCOL_VERSION: "2026-07-28"}});
        assert_eq!(
            for_message(&request("tools/call", body), &cx),
            vec![
                (names::PROTOCOL_VERSION, "2026-07-28".to_owned()),
                (names::METHOD, "tools/call".to_owned()),
                (names::NAME, "echo".to_owned()),
            ]
        );
    }

    #[test]
    fn legacy_messages_carry_the_session_and_the_negotiated_version() {
        let cx = Context {
            session: Some("abc".into()),
            legacy_version: Some("2025-11-25".into()),
            modern_version: None,
        };
        let n = Message::Notification(Notification {
            method: "notifications/initialized".into(),
            params: None,
        });
        let want = vec![
            (names::SESSION_ID, "abc".to_owned()),
            (names::PROTOCOL_VERSION, "2025-11-25".to_owned()),
        ];
        assert_eq!(for_message(&n, &cx), want);
        assert_eq!(
            for_message(&request("tools/call", json!({"name": "x"})), &cx),
            want
        );
        assert!(for_message(&request("initialize", json!({})), &Context::default()).is_empty());
    }
}
