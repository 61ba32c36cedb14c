//! Client settings.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use mcp_protocol::codec::DEFAULT_MAX_MESSAGE_BYTES;
use mcp_protocol::mcp::{Implementation, ProtocolVersion};
use mcp_protocol::Framing;

use serde_json::{Map, Value};

use crate::elicitation::Elicitation;
use crate::era::EraChoice;

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
    /// The legacy version offered in `initialize` (a 2026-07-28 version here is offered as the
    /// newest legacy one: `initialize` cannot negotiate it). Modern requests declare
    /// `ProtocolVersion::LATEST`, or the newest both sides speak.
    pub protocol_version: ProtocolVersion,
    /// Sent in `initialize` (legacy) and in every request's `_meta` (modern).
    pub client_info: Implementation,
    /// Which era `connect()` uses: [`EraChoice::Auto`] (default) probes with
    /// `server/discover` and falls back to `initialize`.
    pub era: EraChoice,
    /// How long `connect()` waits for the reply to its `server/discover` probe before it
    /// decides the server is legacy (5 s). A late reply is dropped as an unknown id.
    pub probe_timeout: Duration,
    /// The largest reply accepted, in bytes.
    pub max_message_bytes: usize,
    /// `close()`: how long to wait after closing stdin, then after SIGTERM (the TypeScript and
    /// Python SDKs use 2 s each).
    pub close_grace: Duration,
    /// Sees every frame; [`ClientOptions::print_frames`] prints them as the chapter's demo does.
    /// Frames are also logged at DEBUG under the `mcp::frames` tracing target.
    pub frame_hook: Option<FrameHook>,
    /// Answers the server's `elicitation/create` (legacy era), and declares the `elicitation`
    /// capability in `initialize`; `None` (default): neither.
    pub elicitation: Option<Elicitation>,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            framing: Framing::Ndjson,
            request_timeout: Duration::from_secs(60),
            protocol_version: ProtocolVersion::LATEST_LEGACY,
            client_info: Implementation {
                name: env!("CARGO_PKG_NAME").to_owned(),
                title: None,
                version: env!("CARGO_PKG_VERSION").to_owned(),
            },
            era: EraChoice::Auto,
            probe_timeout: Duration::from_secs(5),
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            close_grace: Duration::from_secs(2),
            frame_hook: None,
            elicitation: None,
        }
    }
}

impl ClientOptions {
    /// The capabilities `initialize` declares: those this client can honour with these
    /// options (`basic/lifecycle.mdx`: "Client capabilities"). Modern requests declare none in
    /// `_meta`: 2026-07-28 asks for input with `input_required` results, which this client does
    /// not handle.
    pub(crate) fn legacy_capabilities(&self) -> Value {
        let mut capabilities = Map::new();
        if self.elicitation.is_some() {
            capabilities.insert("elicitation".to_owned(), Elicitation::capability());
        }
        Value::Object(capabilities)
    }

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
            .field("era", &self.era)
            .field("probe_timeout", &self.probe_timeout)
            .field("max_message_bytes", &self.max_message_bytes)
            .field("close_grace", &self.close_grace)
            .field("frame_hook", &self.frame_hook.is_some())
            .field("elicitation", &self.elicitation)
            .finish()
    }
}
