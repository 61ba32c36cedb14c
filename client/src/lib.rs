//! An async MCP client over stdio, and the bridge that merges a server's tools into an agent's
//! local tool registry.
//!
//! ```no_run
//! use mcp_client::{Client, ClientOptions, ServerCommand};
//! use serde_json::json;
//!
//! # async fn demo() -> Result<(), mcp_client::ClientError> {
//! let client = Client::spawn(ServerCommand::new("mcp-echo-server"), ClientOptions::default())?;
//! let init = client.connect().await?; // initialize + notifications/initialized
//! println!("connected to {} {}", init.server_info.name, init.server_info.version);
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
//!   lifecycle `new → initialized → ready → closed` with typed refusals
//!   ([`ClientError::InvalidState`]); a pending map keyed by request id; per-request timeouts that
//!   send `notifications/cancelled`; server `ping` answered and other server requests refused
//!   with -32601; notifications as a stream; `close()` with escalation; frame tracing
//!   ([`ClientOptions::frame_hook`], or `RUST_LOG=mcp::frames=debug`).
//! * [`raw`]: [`RawConnection`], a spawned server with byte-level access and a transcript,
//!   for a conformance harness.
//! * [`registry`]: a local [`ToolRegistry`] with risk tiers and an approval gate.
//! * [`bridge`]: [`register_mcp_tools`] puts a server's tools in a registry under a prefix.

pub mod bridge;
mod client;
mod command;
mod error;
mod options;
mod process;
pub mod raw;
pub mod registry;

pub use mcp_protocol as protocol;

pub use crate::bridge::{register_mcp_tools, BridgeOptions};
pub use crate::client::{Client, CloseReport, CloseStep, State};
pub use crate::command::{ServerCommand, StderrMode};
pub use crate::error::{ClientError, CloseCause, ClosedReason};
pub use crate::options::{ClientOptions, FrameDirection, FrameHook};
pub use crate::raw::{RawConnection, RawEvent, TranscriptEntry};
pub use crate::registry::{RiskTier, ToolOutput, ToolRegistry, ToolSpec};
