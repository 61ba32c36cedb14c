//! The 2026-07-28 mirrored headers (`basic/transports/streamable-http` §Request Metadata and
//! §Server Validation): `MCP-Protocol-Version`, `Mcp-Method` and, for `tools/call`,
//! `resources/read` and `prompts/get`, `Mcp-Name` must be present and equal to the body, or
//! the request gets 400 with `HeaderMismatch` (-32020). A load balancer may route on the
//! headers while this server acts on the body; they must not disagree.

use axum::http::HeaderMap;
use mcp_protocol::http::{mirrored_name, METHOD, NAME, PROTOCOL_VERSION};
use serde_json::Value;

/// Checks the headers of a modern request against its body (`method`, `params`, and the
/// `_meta` protocol version); `Err` says which header is wrong, for the -32020 message.
pub(crate) fn check(
    headers: &HeaderMap,
    method: &str,
    params: Option<&Value>,
    meta_version: &str,
) -> Result<(), String> {
    same(
        headers,
        PROTOCOL_VERSION,
        "MCP-Protocol-Version",
        meta_version,
    )?;
    same(headers, METHOD, "Mcp-Method", method)?;
    match mirrored_name(method, params) {
        None => Ok(()),
        Some(None) => Err(format!(
            "the body of {method} has no name for the Mcp-Name header to mirror"
        )),
        Some(Some(name)) => {
            let header = headers.get(NAME).ok_or("the Mcp-Name header is missing")?;
            let raw = header
                .to_str()
                .map_err(|_| "the Mcp-Name header is not visible ASCII".to_owned())?;
            let decoded = decode_sentinel(raw)
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

/// A header value as sent: plain, or `=?base64?…?=` (§Value Encoding), decoded to UTF-8.
/// `None` when the sentinel's content is not valid Base64 of UTF-8.
fn decode_sentinel(value: &str) -> Option<String> {
    match value
        .strip_prefix("=?base64?")
        .and_then(|v| v.strip_suffix("?="))
    {
        None => Some(value.to_owned()),
        Some(encoded) => String::from_utf8(base64_decode(encoded)?).ok(),
    }
}

/// Standard Base64 (RFC 4648 §4), padding optional. Small enough not to need a crate.
fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let text = text.trim_end_matches('=');
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let mut acc = 0u32;
    let mut bits = 0;
    for b in text.bytes() {
        let v = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentinel_values_are_decoded() {
        assert_eq!(decode_sentinel("echo").as_deref(), Some("echo"));
        assert_eq!(
            decode_sentinel("=?base64?SGVsbG8sIOS4lueVjA==?=").as_deref(),
            Some("Hello, 世界")
        );
        assert_eq!(
            decode_sentinel("=?base64?IHBhZGRlZCA=?=").as_deref(),
            Some(" padded ")
        );
        assert_eq!(decode_sentinel("=?base64?!!?="), None);
    }
}
