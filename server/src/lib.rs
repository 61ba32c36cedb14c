//! `mcp-echo-server` as a library: the MCP server over stdio ([`serve`]) and over Streamable
//! HTTP ([`serve_http`]), and the tool set with the `echo` tool.
//!
//! One protocol core decides everything about a connection (lifecycle, eras, batches,
//! duplicate ids, cancellation, requests to the client); each transport only moves bytes and
//! runs the tool calls the core hands it. Logs go through `tracing`; the binary sends them to
//! stderr, never stdout.

mod config;
mod core;
mod error;
mod exit;
mod http;
mod info;
mod modern;
mod params;
mod peer;
pub mod stdio;
pub mod tools;

pub use crate::config::Config;
pub use crate::error::ServerError;
pub use crate::exit::Exit;
#[doc(hidden)]
pub use crate::http::serve_http_on;
pub use crate::http::{serve_http, HttpConfig, DEFAULT_ADDR as DEFAULT_HTTP_ADDR};
pub use crate::info::ServerInfo;
#[doc(hidden)]
pub use crate::params::ServerParams;
pub use crate::peer::{Peer, PeerError, Withheld};
pub use crate::stdio::{serve, serve_blocking, BlockingStdio, Stopper};
pub use crate::tools::{default_tools, diagnostic_tools, DuplicateTool, Tool, ToolCall, ToolSet};
