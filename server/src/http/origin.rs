//! Request-header checks that come before any body is read: `Origin` (DNS rebinding) and
//! `MCP-Protocol-Version`.

use axum::http::{header, HeaderMap};
use mcp_protocol::mcp::ProtocolVersion;

/// The protocol version a request's `MCP-Protocol-Version` header names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HeaderVersion {
    /// No header: a legacy session uses its negotiated version; a session-less request is
    /// taken as 2025-03-26 (§Protocol Version Header: "SHOULD assume protocol version
    /// 2025-03-26").
    Absent,
    Legacy(ProtocolVersion),
    /// 2026-07-28.
    Modern,
}

/// `Origin` check (§Security Warning: servers MUST validate `Origin` on every request, and a
/// present, invalid one MUST get 403). An absent `Origin` is allowed: non-browser clients do
/// not send one, and a browser always does on the cross-origin requests DNS rebinding needs.
pub(crate) fn origin_allowed(headers: &HeaderMap, extra: &[String]) -> bool {
    let Some(value) = headers.get(header::ORIGIN) else {
        return true;
    };
    let Ok(origin) = value.to_str() else {
        return false;
    };
    is_loopback_origin(origin) || extra.iter().any(|o| o.eq_ignore_ascii_case(origin))
}

/// `http(s)://localhost`, `127.0.0.1` or `[::1]`, with or without a port.
fn is_loopback_origin(origin: &str) -> bool {
    let lower = origin.to_ascii_lowercase();
    let Some(rest) = lower
        .strip_prefix("http://")
        .or_else(|| lower.strip_prefix("https://"))
    else {
        return false;
    };
    ["localhost", "127.0.0.1", "[::1]"].iter().any(|host| {
        rest.strip_prefix(host).is_some_and(|after| {
            after.is_empty()
                || after.strip_prefix(':').is_some_and(|port| {
                    (1..=5).contains(&port.len()) && port.bytes().all(|b| b.is_ascii_digit())
                })
        })
    })
}

/// Reads `MCP-Protocol-Version`; `Err` carries the unreadable or unsupported value, which
/// MUST get 400 (§Protocol Version Header).
pub(crate) fn protocol_version(headers: &HeaderMap) -> Result<HeaderVersion, String> {
    let Some(value) = headers.get(mcp_protocol::http::PROTOCOL_VERSION) else {
        return Ok(HeaderVersion::Absent);
    };
    let text = value
        .to_str()
        .map_err(|_| String::from_utf8_lossy(value.as_bytes()).into_owned())?;
    match ProtocolVersion::parse(text) {
        Some(v) if v.is_modern() => Ok(HeaderVersion::Modern),
        Some(v) => Ok(HeaderVersion::Legacy(v)),
        None => Err(text.to_owned()),
    }
}

/// A header as text; `None` when absent or not visible ASCII.
pub(crate) fn text<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// Is the `Content-Type` `application/json` (parameters such as `charset` ignored)?
pub(crate) fn is_json(headers: &HeaderMap) -> bool {
    text(headers, header::CONTENT_TYPE.as_str()).is_some_and(|ct| {
        ct.split(';')
            .next()
            .is_some_and(|m| m.trim().eq_ignore_ascii_case(mcp_protocol::http::JSON))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_origins_with_any_port_pass() {
        for ok in [
            "http://localhost",
            "http://localhost:3000",
            "https://127.0.0.1:8443",
            "http://[::1]:1",
            "HTTP://LOCALHOST:80",
        ] {
            assert!(is_loopback_origin(ok), "{ok}");
        }
        for bad in [
            "http://localhost.evil.com",
            "http://127.0.0.1.nip.io",
            "http://localhost:",
            "http://localhost:123456",
            "null",
            "file://localhost",
            "http://evil.com",
        ] {
            assert!(!is_loopback_origin(bad), "{bad}");
        }
    }
}
