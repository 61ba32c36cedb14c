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
    /// The largest body of a POST with neither `Mcp-Session-Id` nor `Mcp-Method`, which can
    /// only be an `initialize` (or an error): larger ones get 413, before or as soon as they
    /// pass it. An `initialize` as SDKs send it is under 1 KiB; 64 KiB leaves room for large
    /// capabilities and `clientInfo` icons, while a client without a session cannot make the
    /// server read (and parse) a 16 MiB body only to refuse it.
    pub max_initialize_bytes: usize,
    /// The most bytes all request bodies being received may take together; a body that
    /// would pass it gets 503 (`Retry-After: 1`). A declared `Content-Length` is counted
    /// before the body is read. At least `max_message_bytes`, or the largest message could
    /// never be received.
    pub body_budget_bytes: usize,
    /// The most bytes of replies over 64 KiB that clients have not read yet; a reply that
    /// would pass it is refused (503, or an error in its place on an SSE stream). Together
    /// with `send_timeout` this bounds what clients that stop reading can make the server
    /// hold.
    pub reply_budget_bytes: usize,
    /// How long a response may wait for its client to read the next bytes; after it the
    /// connection is closed, and what the response held is freed.
    pub send_timeout: Duration,
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
            max_initialize_bytes: 64 * 1024,
            body_budget_bytes: 128 * 1024 * 1024,
            reply_budget_bytes: 64 * 1024 * 1024,
            send_timeout: Duration::from_secs(30),
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
