//! Where a Streamable HTTP server is and what every request to it carries (`--url`,
//! `--header`), with the header values kept out of everything the harness prints.

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

/// The MCP endpoint under test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub url: String,
    /// Sent on every request (`--header K:V`, a config entry's `headers`); values are never
    /// printed: see [`Endpoint::redacted_headers`].
    pub headers: Vec<(String, String)>,
}

impl Endpoint {
    pub fn new(url: impl Into<String>) -> Endpoint {
        Endpoint {
            url: url.into(),
            headers: Vec::new(),
        }
    }

    /// The user's headers as a map (invalid names or values were refused when parsed).
    pub fn header_map(&self) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in &self.headers {
            if let (Ok(name), Ok(value)) = (
                HeaderName::from_bytes(k.as_bytes()),
                HeaderValue::from_str(v),
            ) {
                map.append(name, value);
            }
        }
        map
    }

    /// `K: <redacted>` for each user header, for transcripts and reports.
    pub fn redacted_headers(&self) -> Vec<String> {
        self.headers
            .iter()
            .map(|(k, _)| format!("{k}: <redacted>"))
            .collect()
    }

    /// `host:port` of the URL, to wait for a started server to accept connections.
    pub fn authority(&self) -> Option<(String, u16)> {
        let url = reqwest::Url::parse(&self.url).ok()?;
        let host = url.host_str()?.trim_matches(['[', ']']).to_owned();
        Some((host, url.port_or_known_default()?))
    }
}

/// A `--header` that cannot be sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeaderError {
    #[error("--header expects NAME:VALUE")]
    NoColon,
    #[error("--header: {0:?} is not a valid header name")]
    Name(String),
    #[error("--header: the value of {0} is not a valid header value")]
    Value(String),
}

/// Parses `K:V` (or `K: V`) for `--header`.
pub fn parse_header(kv: &str) -> Result<(String, String), HeaderError> {
    let (k, v) = kv.split_once(':').ok_or(HeaderError::NoColon)?;
    let (k, v) = (k.trim(), v.trim());
    if HeaderName::from_bytes(k.as_bytes()).is_err() {
        return Err(HeaderError::Name(k.to_owned()));
    }
    if HeaderValue::from_str(v).is_err() {
        return Err(HeaderError::Value(k.to_owned()));
    }
    Ok((k.to_owned(), v.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_parse_and_never_show_their_values() {
        let (k, v) = parse_header("Authorization: Bearer s3cret").unwrap();
        assert_eq!((k.as_str(), v.as_str()), ("Authorization", "Bearer s3cret"));
        assert!(parse_header("novalue").is_err());
        assert!(parse_header("bad name: x").is_err());
        let mut e = Endpoint::new("http://127.0.0.1:8080/mcp");
        e.headers.push((k, v));
        assert_eq!(e.redacted_headers(), ["Authorization: <redacted>"]);
        assert_eq!(e.authority(), Some(("127.0.0.1".to_owned(), 8080)));
        assert_eq!(e.header_map().len(), 1);
    }
}
