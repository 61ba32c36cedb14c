//! The messages checks send that every check builds alike: `initialize` as a spec-following
//! client sends it, and the 2026-07-28 `_meta` every modern request carries.

use mcp_protocol::mcp::{modern, Implementation, ProtocolVersion};
use serde_json::{json, Value};

/// The `_meta` of a modern request (2026-07-28 `schema.ts` RequestMetaObject): `version`, no
/// optional client capabilities, and the harness's identity.
pub fn modern_meta(version: &str) -> Value {
    Value::Object(modern::request_meta(version, &harness_info()))
}

/// Who the harness says it is, in `initialize` and in modern `_meta`.
fn harness_info() -> Implementation {
    Implementation {
        name: "mcp-conformance".to_owned(),
        title: None,
        version: env!("CARGO_PKG_VERSION").to_owned(),
    }
}

/// `params` with `_meta` set to `meta`; a `_meta` already there is kept. Params that are not
/// an object (a check sending something odd on purpose) are left alone.
pub fn with_meta(params: Option<Value>, meta: &Value) -> Value {
    let mut params = params.unwrap_or_else(|| json!({}));
    if let Some(obj) = params.as_object_mut() {
        obj.entry("_meta").or_insert_with(|| meta.clone());
    }
    params
}

/// `initialize` params as a spec-following client sends them.
pub fn initialize_params(version: &str) -> Value {
    json!({
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": harness_info(),
    })
}

/// A whole `initialize` request (its id set when it is sent).
pub fn initialize_request(version: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": null, "method": "initialize",
        "params": initialize_params(version)})
}

/// A whole `server/discover` request with 2026-07-28 `_meta` (its id set when it is sent).
pub fn discover_request() -> Value {
    json!({"jsonrpc": "2.0", "id": null, "method": modern::DISCOVER,
        "params": {"_meta": modern_meta(ProtocolVersion::LATEST.as_str())}})
}
