//! An async MCP client over stdio or Streamable HTTP, and the bridge that merges a server's tools into an agent's
//! local tool registry. It speaks both eras of MCP: the legacy one (2025-11-25 and earlier,
//! with the `initialize` handshake) and the modern one (2026-07-28, stateless requests that
//! carry their version in `_meta`).
//!
//! ```no_run
//! use mcp_client::{Client, ClientOptions, ServerCommand};
//! use serde_json::json;
//!
//! # async fn demo() -> Result<(), mcp_client::ClientError> {
//! let client = Client::spawn(ServerCommand::new("mcp-echo-server"), ClientOptions::default())?;
//! // server/discover probe; modern if answered, else initialize + notifications/initialized
//! let connected = client.connect().await?;
//! println!("{} era, version {}", connected.era(), connected.protocol_version());
//! if let Some(info) = connected.server_info() {
//!     println!("connected to {} {}", info.name, info.version);
//! }
//! for tool in client.list_tools().await? {
//!     println!("tool: {}", tool.name);
//! }
//! let result = client.call_tool("echo", json!({"text": "hi"})).await?;
//! assert_eq!(result.is_error, None);
//! let report = client.close().await; // stdin EOF, then SIGTERM, then SIGKILL if needed
//! println!("closed by {:?}", report.step);
//! # Ok(()) }
//! ```
//!
//! * [`Client`]: spawn a server ([`ServerCommand`]) or connect over any byte streams; the
//!   lifecycle `new → initialized → ready → closed` (legacy) or `new → ready → closed`
//!   (modern) with typed refusals ([`ClientError::InvalidState`]); a pending map keyed by
//!   request id; per-request timeouts that send `notifications/cancelled`; server `ping`
//!   answered, `elicitation/create` answered when [`ClientOptions::elicitation`] is set, and
//!   other server requests refused with -32601; notifications as a stream;
//!   `close()` with escalation; frame tracing ([`ClientOptions::frame_hook`], or
//!   `RUST_LOG=mcp::frames=debug`).
//! * Eras ([`Era`], [`ClientOptions::era`]): with [`EraChoice::Auto`] (the default)
//!   [`Client::connect`] probes with `server/discover` as `basic/transports/stdio.mdx`
//!   ("Backward Compatibility") says: a `DiscoverResult` means modern; a recognized modern
//!   error (-32022 `UnsupportedProtocolVersionError`) means modern but no common version, a
//!   typed error ([`ClientError::UnsupportedModernVersion`]) and no fallback; any other error,
//!   whatever its code, or no reply within [`ClientOptions::probe_timeout`] (5 s) means
//!   legacy, and the `initialize` handshake follows. [`EraChoice::Legacy`] skips the probe;
//!   [`EraChoice::Modern`] fails with [`ClientError::NotModern`] instead of falling back.
//!   The era is cached ([`Client::era`]); what was learned is [`Connected`]
//!   ([`Client::initialize_result`] or [`Client::discover_result`]). In the modern era every
//!   request gets `params._meta` with `io.modelcontextprotocol/protocolVersion`,
//!   `…/clientCapabilities` and `…/clientInfo`; a result whose `resultType` is not
//!   `"complete"` (such as `"input_required"`) is [`ClientError::UnsupportedResultType`];
//!   [`Client::ping`] sends `server/discover`, since 2026-07-28 removed `ping`.
//! * Streamable HTTP ([`Client::connect_http`], [`HttpTarget`]): the same client as a
//!   transport under the same machinery: each message is a POST, replies (JSON or SSE) feed the
//!   same pending map and notifications stream. Legacy: the `Mcp-Session-Id` session (a 404 is
//!   [`ClientError::SessionExpired`], then `connect()` starts a new one), the GET stream,
//!   `DELETE` on close. Modern: the mirrored `MCP-Protocol-Version`, `Mcp-Method` and
//!   `Mcp-Name` headers. HTTP errors fail only their request ([`ClientError::Http`],
//!   [`ClientError::Transport`]).
//! * [`elicitation`]: answering the server's `elicitation/create` (legacy era) with a handler
//!   set in [`ClientOptions::elicitation`], which also declares the capability; accepted
//!   answers get the requested schema's defaults.
//! * [`registry`]: a local [`ToolRegistry`] with risk tiers and an approval gate.
//! * [`bridge`]: [`register_mcp_tools`] puts a server's tools in a registry under a prefix; it
//!   works the same in both eras.

pub mod bridge;
mod client;
mod command;
pub mod elicitation;
mod era;
mod error;
mod options;
#[doc(hidden)]
pub mod process;
pub mod registry;
mod state;

pub use mcp_protocol as protocol;

pub use crate::bridge::{register_mcp_tools, BridgeOptions};
pub use crate::client::{Client, CloseReport, CloseStep, HttpTarget};
pub use crate::command::{ServerCommand, StderrMode};
pub use crate::elicitation::Elicitation;
pub use crate::era::{Connected, DiscoverResult, Era, EraChoice};
pub use crate::error::{ClientError, CloseCause, ClosedReason};
pub use crate::options::{ClientOptions, FrameDirection, FrameHook};
pub use crate::registry::{RiskTier, ToolOutput, ToolRegistry, ToolSpec};
pub use crate::state::State;
