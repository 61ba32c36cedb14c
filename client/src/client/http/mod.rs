//! Streamable HTTP, as a transport under the same [`Client`]: [`Client::connect_http`] starts
//! a task (`driver.rs`) that takes the messages the stdio writer would write and POSTs them
//! (`post.rs`), feeding every message of each reply to the inbound path the stdio reader
//! uses; an SSE stream that ends early is resumed with `Last-Event-ID` (`sse.rs`).
//! `session.rs` holds the endpoint and the legacy session, and what each request's MCP
//! headers are built from (`mcp_protocol::http::RequestHeaders` builds them). Handshake, eras,
//! timeouts, cancellation and the pending map are the client's own, unchanged.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use tokio_util::sync::CancellationToken;

use super::Client;
use crate::error::ClientError;
use crate::options::ClientOptions;

mod driver;
mod listen;
mod post;
mod session;
mod sse;

/// An MCP endpoint over Streamable HTTP: its URL (such as `http://127.0.0.1:3000/mcp`), headers
/// sent on every request (such as `Authorization`), and the HTTP timeouts.
#[derive(Clone)]
pub struct HttpTarget {
    pub url: String,
    /// Extra headers for every request, in order (`Authorization: Bearer …`, say).
    pub headers: Vec<(String, String)>,
    /// How long opening a connection may take (10 s).
    pub connect_timeout: Duration,
    /// How long a reply may go without a byte, within one response or SSE stream (60 s). A
    /// call's own timeout ([`ClientOptions::request_timeout`]) still bounds the call.
    pub read_timeout: Duration,
}

impl HttpTarget {
    pub fn new(url: impl Into<String>) -> Self {
        HttpTarget {
            url: url.into(),
            headers: Vec::new(),
            connect_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(60),
        }
    }

    /// Adds a header sent on every request.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }
}

impl From<&str> for HttpTarget {
    fn from(url: &str) -> Self {
        HttpTarget::new(url)
    }
}

impl From<String> for HttpTarget {
    fn from(url: String) -> Self {
        HttpTarget::new(url)
    }
}

/// Header values are left out: they often hold credentials.
impl fmt::Debug for HttpTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("HttpTarget")
            .field("url", &self.url)
            .field("headers", &names)
            .field("connect_timeout", &self.connect_timeout)
            .field("read_timeout", &self.read_timeout)
            .finish()
    }
}

impl Client {
    /// A client for an MCP server over Streamable HTTP. Nothing is sent until
    /// [`connect`](Client::connect), which works as over stdio: the `server/discover` probe
    /// (a 4xx without a recognized modern error means legacy), then `initialize` for a legacy
    /// server, which may start a session (`Mcp-Session-Id`, sent on every later request).
    /// Must be called inside a tokio runtime.
    ///
    /// A bad URL (not `http`/`https`) or header is [`ClientError::InvalidArguments`]. Per
    /// request, HTTP adds [`ClientError::Http`] (an error status, with the body's JSON-RPC
    /// error), [`ClientError::Transport`] and [`ClientError::SessionExpired`] (the session
    /// ended: `connect()` again starts a new one). `close()` ends the session with `DELETE`.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), mcp_client::ClientError> {
    /// use mcp_client::{Client, ClientError, ClientOptions, HttpTarget};
    /// use serde_json::json;
    ///
    /// let target = HttpTarget::new("http://127.0.0.1:3001/mcp").header("Authorization", "Bearer t");
    /// let client = Client::connect_http(target, ClientOptions::default())?;
    /// client.connect().await?;
    /// let tools = client.list_tools().await?;
    /// match client.call_tool("echo", json!({"message": "hi"})).await {
    ///     Err(ClientError::SessionExpired { .. }) => drop(client.connect().await?),
    ///     other => println!("{other:?}"),
    /// }
    /// client.close().await;
    /// # Ok(()) }
    /// ```
    pub fn connect_http(
        target: impl Into<HttpTarget>,
        options: ClientOptions,
    ) -> Result<Client, ClientError> {
        let target = target.into();
        let invalid = |reason: String| ClientError::InvalidArguments(reason);
        let url = reqwest::Url::parse(&target.url)
            .map_err(|e| invalid(format!("invalid MCP endpoint URL {:?}: {e}", target.url)))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(invalid(format!(
                "the MCP endpoint URL {:?} is not http or https",
                target.url
            )));
        }
        let mut headers = HeaderMap::new();
        for (name, value) in &target.headers {
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|e| invalid(format!("invalid header name {name:?}: {e}")))?;
            let mut value = HeaderValue::from_str(value)
                .map_err(|e| invalid(format!("invalid value for header {name}: {e}")))?;
            value.set_sensitive(true);
            headers.append(name, value);
        }
        let client = reqwest::Client::builder()
            .default_headers(headers)
            .connect_timeout(target.connect_timeout)
            .read_timeout(target.read_timeout)
            // A redirected POST may turn into a GET; an MCP endpoint has one URL.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| invalid(format!("cannot build the HTTP client: {e}")))?;
        let (shared, out_rx) = Client::new_shared(options, None);
        let stop = CancellationToken::new();
        let conn = Arc::new(session::Conn::new(client, url));
        tokio::spawn(driver::run(conn, out_rx, Arc::clone(&shared), stop.clone()));
        Ok(Client::from_parts(shared, stop, None))
    }
}
