//! The URL benched: `http://HOST:PORT/PATH`, plain HTTP only (the bench measures a server, not
//! TLS), with the socket address its port is waited on.

use std::net::{SocketAddr, ToSocketAddrs};

use http::Uri;

/// A parsed `--url`.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// The URL as given, for reports.
    pub url: String,
    /// Where each request goes.
    pub uri: Uri,
    /// Where the server listens: what is waited on after starting it.
    pub addr: SocketAddr,
}

impl Endpoint {
    /// Parses `url`; the host must resolve (a name or an address), the port must not be 0.
    pub fn parse(url: &str) -> Result<Endpoint, String> {
        let uri: Uri = url
            .parse()
            .map_err(|e| format!("--url {url:?} is not a URL: {e}"))?;
        match uri.scheme_str() {
            Some("http") => {}
            Some(other) => {
                return Err(format!(
                    "--url {url:?}: only http:// is benched, not {other}://"
                ))
            }
            None => return Err(format!("--url {url:?} needs http://")),
        }
        let authority = uri
            .authority()
            .ok_or_else(|| format!("--url {url:?} has no host"))?;
        let port = authority.port_u16().unwrap_or(80);
        if port == 0 {
            return Err(format!(
                "--url {url:?}: port 0 names no server; give the port it listens on"
            ));
        }
        let host = authority
            .host()
            .trim_start_matches('[')
            .trim_end_matches(']');
        let addr = (host, port)
            .to_socket_addrs()
            .map_err(|e| format!("--url {url:?}: cannot resolve {host}: {e}"))?
            .next()
            .ok_or_else(|| format!("--url {url:?}: {host} has no address"))?;
        Ok(Endpoint {
            url: url.to_owned(),
            uri,
            addr,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_http_urls_only() {
        let e = Endpoint::parse("http://127.0.0.1:8080/mcp").expect("a URL");
        assert_eq!(e.addr, "127.0.0.1:8080".parse().expect("an address"));
        assert_eq!(e.uri.path(), "/mcp");
        assert_eq!(
            Endpoint::parse("http://[::1]:9/mcp").map(|e| e.addr.port()),
            Ok(9)
        );
        for bad in [
            "https://127.0.0.1/mcp",
            "127.0.0.1:80",
            "http://127.0.0.1:0/mcp",
            "::",
        ] {
            assert!(Endpoint::parse(bad).is_err(), "{bad}");
        }
    }
}
