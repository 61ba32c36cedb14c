//! Settings of the Streamable HTTP transport: where it listens and every bound it keeps.
//!
//! Every limit exists because the peer is a network client, not the process that launched
//! the server: bodies, headers, sessions and slow clients are bounded so that no client can
//! make the server hold memory or a task without end.

use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use mcp_protocol::codec::DEFAULT_MAX_MESSAGE_BYTES;

/// The address `--http` binds when given no ADDR: loopback only, as the spec asks of local
/// servers (`basic/transports.mdx` §Security Warning: "bind only to localhost").
pub const DEFAULT_ADDR: SocketAddr =
    SocketAddr::new(std::net::IpAddr::V4(Ipv4Addr::LOCALHOST), 8000);

/// How [`serve_http`](crate::serve_http) listens, validates and bounds.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// Port 0 picks a free port; the bound address is printed on stderr.
    pub addr: SocketAddr,
    /// The one MCP endpoint (§Streamable HTTP: "a single HTTP endpoint path"); other paths
    /// get 404.
    pub path: String,
    /// Origins accepted besides loopback ones (`http(s)://localhost`, `127.0.0.1`, `[::1]`,
    /// any port), compared exactly (case-insensitive).
    pub allowed_origins: Vec<String>,
    /// The largest POST body; larger ones get 413 without being read.
    pub max_message_bytes: usize,
    /// The most bytes hyper buffers for a request head (request line and headers); larger
    /// heads get 431. hyper requires at least 8192.
    pub max_header_bytes: usize,
    /// Sessions alive at once. At the bound an `initialize` evicts an idle session (never
    /// used ones first, then the least recently used); 503 only when all are busy.
    pub max_sessions: usize,
    /// Connections served at once; more wait in the listen backlog until one closes. With
    /// `max_message_bytes` this bounds the memory bodies in flight can take.
    pub max_connections: usize,
    /// A session unused for this long ends (its id then gets 404).
    pub session_idle: Duration,
    /// How long a client may take to send a request head (slowloris bound).
    pub header_timeout: Duration,
    /// How long a client may take to send a request body once its head arrived.
    pub body_timeout: Duration,
    /// On SIGTERM/SIGINT, how long requests in flight may take to finish.
    pub shutdown_grace: Duration,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            addr: DEFAULT_ADDR,
            path: "/mcp".to_owned(),
            allowed_origins: Vec::new(),
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            max_header_bytes: 16 * 1024,
            max_sessions: 1024,
            max_connections: 1024,
            session_idle: Duration::from_secs(600),
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            shutdown_grace: Duration::from_secs(2),
        }
    }
}
