//! The 2026-07-28 mirrored headers (`basic/transports/streamable-http` §Request Metadata and
//! §Server Validation): `MCP-Protocol-Version`, `Mcp-Method` and, for `tools/call`,
//! `resources/read` and `prompts/get`, `Mcp-Name` must be present and equal to the body, or
//! the request gets 400 with `HeaderMismatch` (-32020). A load balancer may route on the
//! headers while this server acts on the body; they must not disagree.

use axum::http::HeaderMap;
use mcp_protocol::http::{decode_header_value, mirrored_key, METHOD, NAME, PROTOCOL_VERSION};
use serde_json::Value;

use crate::params::ServerParams;

/// Checks the headers of a modern request against its body (`method`, `params`, and the
/// `_meta` protocol version), as the request was parsed (not parsed again: the body may be
/// megabytes); `Err` says which header is wrong, for the -32020 message.
pub(crate) fn check(
    headers: &HeaderMap,
    method: &str,
    params: Option<&ServerParams>,
    meta_version: &str,
) -> Result<(), String> {
    same(
        headers,
        PROTOCOL_VERSION,
        "MCP-Protocol-Version",
        meta_version,
    )?;
    same(headers, METHOD, "Mcp-Method", method)?;
    let mirrored =
        mirrored_key(method).map(|key| params.and_then(|p| p.member(key)).and_then(Value::as_str));
    match mirrored {
        None => Ok(()),
        Some(None) => Err(format!(
            "the body of {method} has no name for the Mcp-Name header to mirror"
        )),
        Some(Some(name)) => {
            let header = headers.get(NAME).ok_or("the Mcp-Name header is missing")?;
            let raw = header
                .to_str()
                .map_err(|_| "the Mcp-Name header is not visible ASCII".to_owned())?;
            let decoded = decode_header_value(raw)
                .ok_or("the Mcp-Name header has invalid =?base64?…?= encoding")?;
            if decoded == name {
                Ok(())
            } else {
                Err(format!(
                    "Mcp-Name header value {} does not match body value {}",
                    crate::error::quoted(&decoded),
                    crate::error::quoted(name)
                ))
            }
        }
    }
}

fn same(headers: &HeaderMap, key: &str, shown: &str, body: &str) -> Result<(), String> {
    let value = headers
        .get(key)
        .ok_or_else(|| format!("the {shown} header is missing"))?;
    let text = value
        .to_str()
        .map_err(|_| format!("the {shown} header is not visible ASCII"))?;
    if text == body {
        Ok(())
    } else {
        Err(format!(
            "{shown} header value {} does not match body value {}",
            crate::error::quoted(text),
            crate::error::quoted(body)
        ))
    }
}
