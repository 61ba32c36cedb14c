//! The modern era (2026-07-28, `basic/versioning.mdx`): a request whose `params._meta` carries
//! `io.modelcontextprotocol/protocolVersion` is served statelessly, with no handshake.
//!
//! This module reads and checks that `_meta`, and tags results as the revision requires
//! (`resultType`, server identity in result `_meta`, cache hints on cacheable results).

use mcp_protocol::mcp::{modern, ProtocolVersion};
use serde_json::{json, Map, Value};

use crate::error::ServerError;
use crate::info::{supported_versions, ServerInfo};

/// How long a client may cache `server/discover` and `tools/list`: without diagnostic tools the
/// tool set never changes while the process runs, and an hour bounds staleness across upgrades.
/// With them (`diag_tool_list_changed`) `tools/list` says 0: not to be reused.
pub(crate) const TTL_MS: u64 = 3_600_000;

/// `None` for a legacy request (no protocol version in its params' `_meta`, which `meta` is);
/// otherwise whether the modern `_meta` is acceptable: a version this server speaks, client
/// capabilities (required), and a valid log level if one is set.
pub(crate) fn check_meta(meta: Option<&Value>) -> Option<Result<(), ServerError>> {
    let meta = meta?.as_object()?;
    let version = meta.get(modern::META_PROTOCOL_VERSION)?;
    let invalid = |reason: String| ServerError::InvalidMeta(reason);
    Some((|| {
        let Some(version) = version.as_str() else {
            return Err(invalid(format!(
                "{} must be a string such as \"{}\", got {version}",
                modern::META_PROTOCOL_VERSION,
                ProtocolVersion::LATEST
            )));
        };
        if !ProtocolVersion::parse(version).is_some_and(ProtocolVersion::is_modern) {
            return Err(ServerError::UnsupportedProtocolVersion(version.to_owned()));
        }
        match meta.get(modern::META_CLIENT_CAPABILITIES) {
            Some(Value::Object(_)) => {}
            Some(other) => {
                return Err(invalid(format!(
                    "{} must be an object, got {other}",
                    modern::META_CLIENT_CAPABILITIES
                )))
            }
            None => {
                return Err(invalid(format!(
                    "{} is required on every {} request ({{}} if the client has none)",
                    modern::META_CLIENT_CAPABILITIES,
                    ProtocolVersion::LATEST
                )))
            }
        }
        if let Some(level) = meta.get(modern::META_LOG_LEVEL) {
            if !level
                .as_str()
                .is_some_and(|l| modern::LOG_LEVELS.contains(&l))
            {
                return Err(invalid(format!(
                    "{} must be one of {}, got {level}",
                    modern::META_LOG_LEVEL,
                    modern::LOG_LEVELS.join(", ")
                )));
            }
        }
        Ok(())
    })())
}

/// The server's identity as result `_meta` carries it.
pub(crate) fn server_info(info: &ServerInfo) -> Value {
    let mut v = json!({ "name": info.name, "version": info.version });
    if let Some(title) = &info.title {
        v["title"] = json!(title);
    }
    v
}

/// Tags a result object: `resultType: "complete"`, the server's identity in `_meta`, and for
/// cacheable results (`server/discover`, `tools/list`: `ttl_ms` given) `ttlMs` and `cacheScope`.
pub(crate) fn complete(value: Value, server_info: &Value, ttl_ms: Option<u64>) -> Value {
    tagged(value, "complete", server_info, ttl_ms)
}

/// Tags an `InputRequiredResult` (`basic/patterns/mrtr.mdx`): `resultType: "input_required"`
/// and the server's identity; never cacheable.
pub(crate) fn input_required(value: Value, server_info: &Value) -> Value {
    tagged(value, "input_required", server_info, None)
}

fn tagged(mut value: Value, result_type: &str, server_info: &Value, ttl_ms: Option<u64>) -> Value {
    if let Value::Object(map) = &mut value {
        map.insert("resultType".into(), json!(result_type));
        if let Some(ttl_ms) = ttl_ms {
            map.insert("ttlMs".into(), json!(ttl_ms));
            map.insert("cacheScope".into(), json!("public"));
        }
        let meta = map
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(meta) = meta {
            meta.insert(modern::META_SERVER_INFO.into(), server_info.clone());
        }
    }
    value
}

/// The `server/discover` result (before tagging); `logging` with diagnostic tools, which log,
/// and `list_changed` where they can also tell a `subscriptions/listen` stream of list changes.
pub(crate) fn discover(instructions: Option<&str>, logging: bool, list_changed: bool) -> Value {
    let mut v = json!({
        "supportedVersions": supported_versions(),
        "capabilities": { "tools": {} },
    });
    if list_changed {
        v["capabilities"]["tools"]["listChanged"] = json!(true);
    }
    if logging {
        v["capabilities"]["logging"] = json!({});
    }
    if let Some(text) = instructions {
        v["instructions"] = json!(text);
    }
    v
}
