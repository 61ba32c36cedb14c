//! The two eras of MCP (`basic/versioning.mdx` of 2026-07-28) and what the client learns when
//! it connects in either.
//!
//! * **Legacy** (2025-11-25 and earlier): an `initialize` handshake opens a session.
//! * **Modern** (2026-07-28 and later): no handshake; every request carries its protocol
//!   version, the client's capabilities and identity in `params._meta`, and `server/discover`
//!   tells the versions, capabilities and identity of the server.
//!
//! [`Client::connect`](crate::Client::connect) detects the era on stdio as
//! `basic/transports/stdio.mdx` ("Backward Compatibility") says; see [`EraChoice`].

use std::fmt;

use mcp_protocol::mcp::{
    modern, Implementation, InitializeResult, ProtocolVersion, ServerCapabilities,
};
use mcp_protocol::ErrorObject;
use serde::Deserialize;
use serde_json::{Map, Value};

/// The era a connection speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Era {
    /// `initialize` + `notifications/initialized`, then a session (2025-11-25 and earlier).
    Legacy,
    /// Stateless requests with `_meta` (2026-07-28 and later).
    Modern,
}

impl fmt::Display for Era {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Era::Legacy => "legacy",
            Era::Modern => "modern",
        })
    }
}

/// Which era [`Client::connect`](crate::Client::connect) uses
/// ([`ClientOptions::era`](crate::ClientOptions::era)).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum EraChoice {
    /// Probe with `server/discover` (bounded by
    /// [`ClientOptions::probe_timeout`](crate::ClientOptions::probe_timeout)): a
    /// `DiscoverResult` means modern; a recognized modern error means modern but not a version
    /// this client speaks (an error, no fallback); any other error, or no reply in time, means
    /// legacy, and the `initialize` handshake follows.
    #[default]
    Auto,
    /// Skip the probe: `initialize` is the first request.
    Legacy,
    /// Probe, and fail with [`ClientError::NotModern`](crate::ClientError::NotModern) if the
    /// server does not answer as a modern server.
    Modern,
}

/// `server/discover` result (`schema.ts` `DiscoverResult`): what a modern server says about
/// itself. Only `supportedVersions` and `capabilities` are required to recognize one.
#[derive(Debug, Clone, PartialEq)]
pub struct DiscoverResult {
    /// The protocol versions the server supports.
    pub supported_versions: Vec<String>,
    pub capabilities: ServerCapabilities,
    pub instructions: Option<String>,
    /// `_meta["io.modelcontextprotocol/serverInfo"]` (servers SHOULD send it); `None` when
    /// absent or not an `Implementation`. Self-reported: for display and logs only.
    pub server_info: Option<Implementation>,
    /// How long the result may be cached, in milliseconds (`CacheableResult`).
    pub ttl_ms: Option<f64>,
    /// `"public"` or `"private"` (`CacheableResult`).
    pub cache_scope: Option<String>,
    /// The result's `_meta`, as sent.
    pub meta: Map<String, Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireDiscoverResult {
    supported_versions: Vec<String>,
    capabilities: ServerCapabilities,
    #[serde(default)]
    instructions: Option<String>,
    #[serde(default)]
    ttl_ms: Option<f64>,
    #[serde(default)]
    cache_scope: Option<String>,
    #[serde(default, rename = "_meta")]
    meta: Option<Map<String, Value>>,
}

impl DiscoverResult {
    /// Reads a `server/discover` result; the reason says what is missing or malformed.
    pub fn from_value(value: Value) -> Result<DiscoverResult, String> {
        let wire: WireDiscoverResult = serde_json::from_value(value).map_err(|e| e.to_string())?;
        let meta = wire.meta.unwrap_or_default();
        let server_info = meta
            .get(modern::META_SERVER_INFO)
            .and_then(|v| serde_json::from_value::<Implementation>(v.clone()).ok());
        Ok(DiscoverResult {
            supported_versions: wire.supported_versions,
            capabilities: wire.capabilities,
            instructions: wire.instructions,
            server_info,
            ttl_ms: wire.ttl_ms,
            cache_scope: wire.cache_scope,
            meta,
        })
    }

    /// The newest modern version both sides speak.
    pub fn common_version(&self) -> Option<ProtocolVersion> {
        newest_common(&self.supported_versions, &[])
    }
}

/// What [`Client::connect`](crate::Client::connect) established.
#[derive(Debug, Clone, PartialEq)]
pub enum Connected {
    /// The `initialize` handshake succeeded with this result.
    Legacy(InitializeResult),
    /// `server/discover` answered; every request now carries `protocol_version` in `_meta`.
    Modern {
        protocol_version: ProtocolVersion,
        discover: DiscoverResult,
    },
}

impl Connected {
    pub fn era(&self) -> Era {
        match self {
            Connected::Legacy(_) => Era::Legacy,
            Connected::Modern { .. } => Era::Modern,
        }
    }

    /// The protocol version in use: the negotiated one (legacy) or the one every request
    /// declares (modern).
    pub fn protocol_version(&self) -> &str {
        match self {
            Connected::Legacy(init) => &init.protocol_version,
            Connected::Modern {
                protocol_version, ..
            } => protocol_version.as_str(),
        }
    }

    /// The server's identity: `serverInfo` (legacy; always there) or the discover result's
    /// `_meta` `serverInfo` (modern; optional).
    pub fn server_info(&self) -> Option<&Implementation> {
        match self {
            Connected::Legacy(init) => Some(&init.server_info),
            Connected::Modern { discover, .. } => discover.server_info.as_ref(),
        }
    }

    pub fn capabilities(&self) -> &ServerCapabilities {
        match self {
            Connected::Legacy(init) => &init.capabilities,
            Connected::Modern { discover, .. } => &discover.capabilities,
        }
    }

    pub fn instructions(&self) -> Option<&str> {
        match self {
            Connected::Legacy(init) => init.instructions.as_deref(),
            Connected::Modern { discover, .. } => discover.instructions.as_deref(),
        }
    }

    /// The `initialize` result (legacy only).
    pub fn initialize_result(&self) -> Option<&InitializeResult> {
        match self {
            Connected::Legacy(init) => Some(init),
            Connected::Modern { .. } => None,
        }
    }

    /// The `server/discover` result (modern only).
    pub fn discover_result(&self) -> Option<&DiscoverResult> {
        match self {
            Connected::Legacy(_) => None,
            Connected::Modern { discover, .. } => Some(discover),
        }
    }
}

/// The `_meta` every modern request carries.
pub(crate) use modern::request_meta;

/// `params` with `meta` merged into `params._meta`: keys the caller set are kept as they are,
/// the others are added; params and `_meta` are created if absent.
pub(crate) fn with_meta(
    params: Option<Value>,
    meta: Map<String, Value>,
) -> Result<Value, &'static str> {
    let mut params = match params {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(params)) => params,
        Some(_) => {
            return Err("modern request params must be a JSON object: they carry _meta");
        }
    };
    let slot = params
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(existing) = slot else {
        return Err("params._meta must be a JSON object");
    };
    for (key, value) in meta {
        existing.entry(key).or_insert(value);
    }
    Ok(Value::Object(params))
}

/// How a modern result's `resultType` reads: `None` for `"complete"` (or absent, which
/// `schema.ts` says to treat as complete), else the type.
pub(crate) fn incomplete_result_type(result: &Value) -> Option<String> {
    match result.get("resultType") {
        None | Some(Value::Null) => None,
        Some(Value::String(t)) if t == "complete" => None,
        Some(Value::String(t)) => Some(t.clone()),
        Some(other) => Some(other.to_string()),
    }
}

/// A JSON-RPC error to the probe, read as `stdio.mdx` says.
#[derive(Debug)]
pub(crate) enum ProbeError {
    /// `UnsupportedProtocolVersionError` (-32022) with `data.supported`: a modern server that
    /// does not speak the requested version.
    UnsupportedVersion { supported: Vec<String> },
    /// Another recognized modern error (`MissingRequiredClientCapabilityError`, -32021, with
    /// `data.requiredCapabilities`): a modern server, no fallback.
    OtherModern,
    /// Anything else: a legacy server.
    NotModern,
}

impl ProbeError {
    /// Recognition needs the code *and* the data shape the schema gives it: a legacy server
    /// may use any code in the implementation-defined range for its own purposes.
    pub(crate) fn classify(error: &ErrorObject) -> ProbeError {
        let data = error.data.as_ref();
        if error.code.0 == modern::UNSUPPORTED_PROTOCOL_VERSION {
            let supported = data
                .and_then(|d| d.get("supported"))
                .and_then(Value::as_array)
                .and_then(|list| {
                    list.iter()
                        .map(|v| v.as_str().map(str::to_owned))
                        .collect::<Option<Vec<String>>>()
                });
            if let Some(supported) = supported {
                return ProbeError::UnsupportedVersion { supported };
            }
        }
        if error.code.0 == modern::MISSING_REQUIRED_CLIENT_CAPABILITY
            && data
                .and_then(|d| d.get("requiredCapabilities"))
                .is_some_and(Value::is_object)
        {
            return ProbeError::OtherModern;
        }
        ProbeError::NotModern
    }
}

/// The newest of this client's modern versions that is in `supported` and not in `tried`.
pub(crate) fn newest_common(
    supported: &[String],
    tried: &[ProtocolVersion],
) -> Option<ProtocolVersion> {
    ProtocolVersion::MODERN
        .into_iter()
        .filter(|v| supported.iter().any(|s| s == v.as_str()) && !tried.contains(v))
        .max()
}

#[cfg(test)]
mod tests {
    use mcp_protocol::ErrorCode;
    use serde_json::json;

    use super::*;

    fn error(code: i64, data: Option<Value>) -> ErrorObject {
        let e = ErrorObject::new(ErrorCode(code), "x");
        match data {
            Some(d) => e.with_data(d),
            None => e,
        }
    }

    #[test]
    fn probe_errors_are_recognized_by_code_and_data() {
        let supported = json!({"supported": ["2099-01-01"], "requested": "2026-07-28"});
        assert!(matches!(
            ProbeError::classify(&error(-32022, Some(supported))),
            ProbeError::UnsupportedVersion { supported } if supported == ["2099-01-01"]
        ));
        let missing = json!({"requiredCapabilities": {"sampling": {}}});
        assert!(matches!(
            ProbeError::classify(&error(-32021, Some(missing))),
            ProbeError::OtherModern
        ));
        for (code, data) in [
            (-32601, None),
            (-32602, None),
            (-32600, Some(json!({"supported": ["2026-07-28"]}))),
            (-32022, None),
            (-32022, Some(json!({"supported": [1]}))),
            (-32022, Some(json!("2026-07-28"))),
            (-32021, Some(json!({"requiredCapabilities": []}))),
            (-32020, None),
        ] {
            assert!(
                matches!(
                    ProbeError::classify(&error(code, data.clone())),
                    ProbeError::NotModern
                ),
                "{code} {data:?}"
            );
        }
    }

    #[test]
    fn meta_is_merged_without_overriding_the_caller() {
        let info = Implementation {
            name: "c".into(),
            title: None,
            version: "1".into(),
        };
        let meta = request_meta("2026-07-28", &info);
        let expected = json!({"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"}
        }});
        assert_eq!(with_meta(None, meta.clone()), Ok(expected.clone()));
        assert_eq!(with_meta(Some(Value::Null), meta.clone()), Ok(expected));
        let merged = with_meta(
            Some(json!({"a": 1, "_meta": {"k": true, META: "mine"}})),
            meta.clone(),
        )
        .unwrap();
        assert_eq!(merged["a"], 1);
        assert_eq!(merged["_meta"]["k"], true);
        assert_eq!(merged["_meta"][META], "mine");
        assert_eq!(merged["_meta"][modern::META_CLIENT_CAPABILITIES], json!({}));
        assert!(with_meta(Some(json!([])), meta.clone()).is_err());
        assert!(with_meta(Some(json!({"_meta": null})), meta).is_err());
    }

    const META: &str = modern::META_PROTOCOL_VERSION;

    #[test]
    fn result_types() {
        assert_eq!(incomplete_result_type(&json!({})), None);
        assert_eq!(
            incomplete_result_type(&json!({"resultType": "complete"})),
            None
        );
        assert_eq!(
            incomplete_result_type(&json!({"resultType": "input_required"})).as_deref(),
            Some("input_required")
        );
        assert_eq!(
            incomplete_result_type(&json!({"resultType": 3})).as_deref(),
            Some("3")
        );
    }

    #[test]
    fn discover_results() {
        let result = DiscoverResult::from_value(json!({
            "resultType": "complete",
            "supportedVersions": ["2025-11-25", "2026-07-28"],
            "capabilities": {"tools": {}, "resources": {}},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "2"}},
            "ttlMs": 1.5
        }))
        .unwrap();
        assert_eq!(result.common_version(), Some(ProtocolVersion::V2026_07_28));
        assert_eq!(
            result.server_info.as_ref().map(|i| i.name.as_str()),
            Some("s")
        );
        assert!(result.capabilities.other.contains_key("resources"));
        assert_eq!(result.ttl_ms, Some(1.5));
        // serverInfo that is not an Implementation is dropped, not fatal.
        let result = DiscoverResult::from_value(json!({
            "supportedVersions": ["2099-01-01"],
            "capabilities": {},
            "_meta": {"io.modelcontextprotocol/serverInfo": "me"}
        }))
        .unwrap();
        assert_eq!(result.server_info, None);
        assert_eq!(result.common_version(), None);
        assert!(DiscoverResult::from_value(json!({"capabilities": {}})).is_err());
        assert!(DiscoverResult::from_value(json!([])).is_err());
        assert_eq!(
            newest_common(&["2026-07-28".to_owned()], &[ProtocolVersion::V2026_07_28]),
            None
        );
    }
}
