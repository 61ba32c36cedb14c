//! The headers a client puts on a request to an MCP endpoint, decided once for the client
//! library, the conformance harness and the bench.
//!
//! A POST carries `Accept` listing both media types and `Content-Type: application/json`
//! (§Sending Messages to the Server). A legacy message (2025-11-25 and earlier) carries the
//! session id once `initialize`'s reply set one, and `MCP-Protocol-Version` with the
//! negotiated version on every request after `initialize` (2025-06-18 on; "Protocol Version
//! Header"). A 2026-07-28 message (one whose `params._meta` declares a protocol version, or
//! any once the connection is modern) mirrors its body instead (`basic/transports/
//! streamable-http`, "Request Metadata"): `MCP-Protocol-Version`, `Mcp-Method` on every
//! request and notification, `Mcp-Name` on `tools/call`, `prompts/get` and `resources/read`
//! requests, both values in the "Value Encoding" of [`encode_header_value`]; it carries no
//! session id, as that revision has no sessions.

use http::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;

use super::{encode_header_value, mirrored_name, JSON, METHOD, NAME, PROTOCOL_VERSION, SESSION_ID};
use crate::mcp::methods;
use crate::mcp::modern::META_PROTOCOL_VERSION;
use crate::Message;

/// `Accept` on every POST: the client MUST list both media types.
const ACCEPT_BOTH: &str = "application/json, text/event-stream";
const ACCEPT: &str = "accept";
const CONTENT_TYPE: &str = "content-type";

/// What a POST's body is, as far as its headers go: read off a [`Message`] or a JSON value,
/// or filled in by a caller that writes its bodies itself.
#[derive(Debug, Clone, Copy, Default)]
pub struct Posted<'a> {
    /// The body's `method`; `None` for a response, or a body that is no message.
    pub method: Option<&'a str>,
    /// The body's `params`.
    pub params: Option<&'a Value>,
    /// The body is a request (it has an id): only requests carry `Mcp-Name`.
    pub request: bool,
}

impl<'a> Posted<'a> {
    pub fn message(message: &'a Message) -> Posted<'a> {
        match message {
            Message::Request(r) => Posted {
                method: Some(&r.method),
                params: r.params.as_ref(),
                request: true,
            },
            Message::Notification(n) => Posted {
                method: Some(&n.method),
                params: n.params.as_ref(),
                request: false,
            },
            Message::Response(_) => Posted::default(),
        }
    }

    /// Any JSON value, as a harness may post it: a string `method` makes it a request when it
    /// has an `id` that is not `null`, else a notification.
    pub fn json(value: &'a Value) -> Posted<'a> {
        let method = value.get("method").and_then(Value::as_str);
        Posted {
            method,
            params: value.get("params"),
            request: method.is_some() && value.get("id").is_some_and(|id| !id.is_null()),
        }
    }

    /// The version `params._meta` declares (2026-07-28), if any.
    fn declared_version(&self) -> Option<&'a str> {
        self.params?
            .get("_meta")?
            .get(META_PROTOCOL_VERSION)?
            .as_str()
    }
}

/// What the connection learned that its requests carry back.
#[derive(Debug, Clone, Copy, Default)]
pub struct Negotiated<'a> {
    /// `Mcp-Session-Id` from the `initialize` reply (legacy).
    pub session_id: Option<&'a str>,
    /// The version `initialize` negotiated (legacy).
    pub legacy_version: Option<&'a str>,
    /// The 2026-07-28 version the connection speaks: every message is then modern, with or
    /// without `_meta` of its own.
    pub modern_version: Option<&'a str>,
}

/// A header value that is not one (control characters, non-ASCII): only the session id and
/// the version a server gave can be, the mirrored values are encoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{value:?} cannot be sent as {name}: a header value is visible ASCII, spaces and tabs")]
pub struct InvalidHeader {
    pub name: &'static str,
    pub value: String,
}

/// The headers of one request, in the order they are sent: (lowercase name, value).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RequestHeaders {
    entries: Vec<(&'static str, String)>,
}

impl RequestHeaders {
    /// The headers of a POST of `posted` (see the module docs).
    pub fn post(posted: Posted<'_>, negotiated: &Negotiated<'_>) -> RequestHeaders {
        let mut h = RequestHeaders::default();
        h.push(ACCEPT, ACCEPT_BOTH);
        h.push(CONTENT_TYPE, JSON);
        if let Some(version) = posted.declared_version().or(negotiated.modern_version) {
            h.push(PROTOCOL_VERSION, version);
            if let Some(method) = posted.method {
                h.push(METHOD, &encode_header_value(method));
                if let (true, Some(Some(name))) =
                    (posted.request, mirrored_name(method, posted.params))
                {
                    h.push(NAME, &encode_header_value(name));
                }
            }
            return h;
        }
        h.legacy(negotiated, posted.method != Some(methods::INITIALIZE));
        h
    }

    /// The headers of a `GET` or `DELETE` within a legacy session: its id and the negotiated
    /// version (the `Accept` of a `GET` is the caller's).
    pub fn session(negotiated: &Negotiated<'_>) -> RequestHeaders {
        let mut h = RequestHeaders::default();
        h.legacy(negotiated, true);
        h
    }

    fn legacy(&mut self, negotiated: &Negotiated<'_>, with_version: bool) {
        if let Some(session) = negotiated.session_id {
            self.push(SESSION_ID, session);
        }
        if let (Some(version), true) = (negotiated.legacy_version, with_version) {
            self.push(PROTOCOL_VERSION, version);
        }
    }

    fn push(&mut self, name: &'static str, value: &str) {
        self.entries.push((name, value.to_owned()));
    }

    /// The value sent as `name` (lowercase), if any.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }

    /// Every header, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &str)> + '_ {
        self.entries.iter().map(|(n, v)| (*n, v.as_str()))
    }

    /// Sets every header in `map`, replacing what it held under those names. A value that
    /// cannot be a header value is left out and returned as the error, after the others are
    /// set (the first such; see [`InvalidHeader`]).
    pub fn insert_into(&self, map: &mut HeaderMap) -> Result<(), InvalidHeader> {
        let mut invalid = None;
        for (name, value) in self.iter() {
            match HeaderValue::from_str(value) {
                Ok(v) => {
                    map.insert(HeaderName::from_static(name), v);
                }
                Err(_) => {
                    invalid.get_or_insert_with(|| InvalidHeader {
                        name,
                        value: value.to_owned(),
                    });
                }
            }
        }
        invalid.map_or(Ok(()), Err)
    }

    /// The headers as a map for `reqwest` or `hyper`; fails on a value that cannot be a header
    /// value.
    pub fn to_map(&self) -> Result<HeaderMap, InvalidHeader> {
        let mut map = HeaderMap::with_capacity(self.entries.len());
        self.insert_into(&mut map)?;
        Ok(map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Notification, Request, RequestId};
    use serde_json::json;

    const BOTH: [(&str, &str); 2] = [
        ("accept", "application/json, text/event-stream"),
        ("content-type", "application/json"),
    ];

    fn sent(h: &RequestHeaders) -> Vec<(&'static str, &str)> {
        h.iter().collect()
    }

    fn with_both<'a>(rest: &[(&'static str, &'a str)]) -> Vec<(&'static str, &'a str)> {
        BOTH.iter().copied().chain(rest.iter().copied()).collect()
    }

    fn request(method: &str, params: Value) -> Message {
        Message::Request(Request {
            id: RequestId::from(1),
            method: method.to_owned(),
            params: Some(params),
        })
    }

    fn modern(params: Value) -> Value {
        let mut params = params;
        params["_meta"] = json!({META_PROTOCOL_VERSION: "2026-07-28"});
        params
    }

    const SESSION: Negotiated<'static> = Negotiated {
        session_id: Some("abc"),
        legacy_version: Some("2025-11-25"),
        modern_version: None,
    };

    #[test]
    fn a_legacy_message_carries_the_session_and_the_version_and_mirrors_nothing() {
        let call = request("tools/call", json!({"name": "echo"}));
        let want = with_both(&[
            ("mcp-session-id", "abc"),
            ("mcp-protocol-version", "2025-11-25"),
        ]);
        assert_eq!(
            sent(&RequestHeaders::post(Posted::message(&call), &SESSION)),
            want
        );
        let note = Message::Notification(Notification {
            method: "notifications/initialized".into(),
            params: None,
        });
        assert_eq!(
            sent(&RequestHeaders::post(Posted::message(&note), &SESSION)),
            want
        );
    }

    #[test]
    fn the_session_and_the_version_are_sent_only_when_given() {
        let ping = request("ping", json!({}));
        let posted = Posted::message(&ping);
        assert_eq!(
            sent(&RequestHeaders::post(posted, &Negotiated::default())),
            BOTH
        );
        let only_version = Negotiated {
            legacy_version: Some("2025-06-18"),
            ..Negotiated::default()
        };
        let only_session = Negotiated {
            session_id: Some("s-1"),
            ..Negotiated::default()
        };
        for (negotiated, want) in [
            (only_version, ("mcp-protocol-version", "2025-06-18")),
            (only_session, ("mcp-session-id", "s-1")),
        ] {
            assert_eq!(
                sent(&RequestHeaders::post(posted, &negotiated)),
                with_both(&[want])
            );
        }
    }

    #[test]
    fn initialize_carries_no_version_it_negotiates() {
        let init = request("initialize", json!({"protocolVersion": "2025-11-25"}));
        assert_eq!(
            sent(&RequestHeaders::post(Posted::message(&init), &SESSION)),
            with_both(&[("mcp-session-id", "abc")])
        );
    }

    #[test]
    fn a_modern_request_mirrors_its_body_and_sends_no_session() {
        let call = request("tools/call", modern(json!({"name": "echo"})));
        assert_eq!(
            sent(&RequestHeaders::post(Posted::message(&call), &SESSION)),
            with_both(&[
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "tools/call"),
                ("mcp-name", "echo"),
            ])
        );
        let read = request("resources/read", modern(json!({"uri": "file:///x y"})));
        assert_eq!(
            RequestHeaders::post(Posted::message(&read), &Negotiated::default()).get("mcp-name"),
            Some("file:///x y")
        );
        let discover = request("server/discover", modern(json!({})));
        assert_eq!(
            sent(&RequestHeaders::post(
                Posted::message(&discover),
                &Negotiated::default()
            )),
            with_both(&[
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "server/discover"),
            ])
        );
    }

    #[test]
    fn mirrored_values_that_are_not_plain_ascii_are_encoded() {
        let call = request("tools/call", modern(json!({"name": "Hello, 世界"})));
        let h = RequestHeaders::post(Posted::message(&call), &Negotiated::default());
        assert_eq!(h.get("mcp-name"), Some("=?base64?SGVsbG8sIOS4lueVjA==?="));
        let odd = request("tools/call\n", modern(json!({"name": " padded "})));
        let h = RequestHeaders::post(Posted::message(&odd), &Negotiated::default());
        assert_eq!(h.get("mcp-method"), Some("=?base64?dG9vbHMvY2FsbAo=?="));
        assert_eq!(h.get("mcp-name"), None, "not a method that mirrors a name");
        let map = h.to_map().expect("encoded values are header values");
        assert_eq!(map["mcp-method"], "=?base64?dG9vbHMvY2FsbAo=?=");
    }

    #[test]
    fn a_modern_connection_makes_every_message_modern_and_notifications_name_nothing() {
        let connected = Negotiated {
            modern_version: Some("2026-07-28"),
            ..SESSION
        };
        let call = json!({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "echo"}});
        assert_eq!(
            sent(&RequestHeaders::post(Posted::json(&call), &connected)),
            with_both(&[
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "tools/call"),
            ]),
            "a notification (no id) carries no Mcp-Name"
        );
        let response = json!({"jsonrpc": "2.0", "id": 1, "result": {}});
        assert_eq!(
            sent(&RequestHeaders::post(Posted::json(&response), &connected)),
            with_both(&[("mcp-protocol-version", "2026-07-28")])
        );
    }

    #[test]
    fn json_values_read_as_messages_do() {
        let value = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                           "params": modern(json!({"name": "echo"}))});
        let Ok(crate::Incoming::Single(message)) = crate::parse(value.to_string().as_bytes())
        else {
            panic!("not one message: {value}");
        };
        assert_eq!(
            RequestHeaders::post(Posted::json(&value), &SESSION),
            RequestHeaders::post(Posted::message(&message), &SESSION)
        );
        let null_id = json!({"jsonrpc": "2.0", "id": null, "method": "tools/call"});
        assert!(!Posted::json(&null_id).request);
        assert!(Posted::json(&json!("garbage")).method.is_none());
        assert_eq!(
            sent(&RequestHeaders::post(Posted::json(&Value::Null), &SESSION)),
            with_both(&[
                ("mcp-session-id", "abc"),
                ("mcp-protocol-version", "2025-11-25"),
            ])
        );
    }

    #[test]
    fn a_get_or_delete_carries_the_session_only() {
        assert_eq!(
            sent(&RequestHeaders::session(&SESSION)),
            [
                ("mcp-session-id", "abc"),
                ("mcp-protocol-version", "2025-11-25"),
            ]
        );
        assert_eq!(sent(&RequestHeaders::session(&Negotiated::default())), []);
    }

    #[test]
    fn maps_hold_every_header_and_name_a_value_that_is_none() {
        let call = request("tools/call", json!({"name": "echo"}));
        let map = RequestHeaders::post(Posted::message(&call), &SESSION)
            .to_map()
            .expect("valid values");
        assert_eq!(map.len(), 4);
        assert_eq!(map["accept"], "application/json, text/event-stream");
        assert_eq!(map["content-type"], "application/json");
        assert_eq!(map["mcp-session-id"], "abc");
        assert_eq!(map["mcp-protocol-version"], "2025-11-25");

        let bad = Negotiated {
            session_id: Some("abc"),
            legacy_version: Some("2025-11-25\n"),
            modern_version: None,
        };
        let headers = RequestHeaders::post(Posted::message(&call), &bad);
        let mut map = HeaderMap::new();
        map.insert("accept", HeaderValue::from_static("text/plain"));
        assert_eq!(
            headers.insert_into(&mut map),
            Err(InvalidHeader {
                name: "mcp-protocol-version",
                value: "2025-11-25\n".to_owned()
            })
        );
        assert_eq!(
            map["accept"], "application/json, text/event-stream",
            "replaced"
        );
        assert_eq!(map["mcp-session-id"], "abc", "the valid ones are set");
        assert!(map.get("mcp-protocol-version").is_none());
        assert!(headers.to_map().is_err());
    }
}
