//! Client settings.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use mcp_protocol::codec::DEFAULT_MAX_MESSAGE_BYTES;
use mcp_protocol::mcp::{Implementation, ProtocolVersion};
use mcp_protocol::Framing;

/// Which way a frame went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameDirection {
    Send,
    Receive,
}

impl fmt::Display for FrameDirection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FrameDirection::Send => "[mcp:send]",
            FrameDirection::Receive => "[mcp:receive]",
        })
    }
}

/// Called with each frame's JSON as it is sent or received.
pub type FrameHook = Arc<dyn Fn(FrameDirection, &str) + Send + Sync>;

/// How a [`Client`](crate::Client) talks to its server.
#[derive(Clone)]
pub struct ClientOptions {
    /// Newline-delimited JSON (the MCP standard) unless the server needs `Content-Length`.
    pub framing: Framing,
    /// Default per-request timeout; MCP hosts use 60 s.
    pub request_timeout: Duration,
    /// The version offered in `initialize`.
    pub protocol_version: ProtocolVersion,
    pub client_info: Implementation,
    /// The largest reply accepted, in bytes.
    pub max_message_bytes: usize,
    /// `close()`: how long to wait after closing stdin, then after SIGTERM (the TypeScript and
    /// Python SDKs use 2 s each).
    pub close_grace: Duration,
    /// Sees every frame; [`ClientOptions::print_frames`] prints them as the chapter's demo does.
    /// Frames are also logged at DEBUG under the `mcp::frames` tracing target.
    pub frame_hook: Option<FrameHook>,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            framing: Framing::Ndjson,
            request_timeout: Duration::from_secs(60),
            protocol_version: ProtocolVersion::LATEST,
            client_info: Implementation {
                name: env!("CARGO_PKG_NAME").to_owned(),
                title: None,
                version: env!("CARGO_PKG_VERSION").to_owned(),
            },
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            close_grace: Duration::from_secs(2),
            frame_hook: None,
        }
    }
}

impl ClientOptions {
    /// Prints `[mcp:send] {...}` / `[mcp:receive] {...}` lines on stdout.
    pub fn print_frames(mut self) -> Self {
        self.frame_hook = Some(Arc::new(|direction, json| println!("{direction} {json}")));
        self
    }
}

impl fmt::Debug for ClientOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientOptions")
            .field("framing", &self.framing)
            .field("request_timeout", &self.request_timeout)
            .field("protocol_version", &self.protocol_version)
            .field("client_info", &self.client_info)
            .field("max_message_bytes", &self.max_message_bytes)
            .field("close_grace", &self.close_grace)
            .field("frame_hook", &self.frame_hook.is_some())
            .finish()
    }
}
