//! Server settings.

use std::time::Duration;

use mcp_protocol::codec::{DEFAULT_MAX_HEADER_BYTES, DEFAULT_MAX_MESSAGE_BYTES};
use mcp_protocol::FramingMode;

/// How [`serve`](crate::serve) frames, bounds and shuts down a connection.
#[derive(Debug, Clone)]
pub struct Config {
    pub framing: FramingMode,
    pub max_message_bytes: usize,
    pub max_header_bytes: usize,
    /// How long shutdown (stdin EOF or a signal) may take to answer what was already read and
    /// flush it. MCP clients send SIGTERM 2 s after closing stdin, so this stays short.
    pub shutdown_grace: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            framing: FramingMode::Auto,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            max_header_bytes: DEFAULT_MAX_HEADER_BYTES,
            shutdown_grace: Duration::from_secs(2),
        }
    }
}
