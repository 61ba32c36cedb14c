//! `mcp-echo-server` as a library: the stdio MCP server loops, its lifecycle and dispatch, and
//! the tool set with the `echo` tool.
//!
//! Two loops serve a connection with the same message handling: [`serve_blocking`], which the
//! binary runs when stdin and stdout are pipes or sockets (plain blocking reads and writes on
//! its main thread), and the async [`serve`], for anything else and for in-memory tests. Both
//! only read, write and wait; what to do with the bytes is one sans-I/O core's.
//! [`serve_http`] serves the same protocol core over Streamable HTTP instead (both the
//! 2025 session era and stateless 2026-07-28), for `--http`.
//! Logs go through `tracing`; the binary sends them to stderr, never stdout.

mod blocking;
mod config;
mod connection;
mod error;
mod exit;
mod http;
mod info;
mod modern;
mod pacing;
mod params;
mod replies;
mod sans_io;
mod serve;
mod session;
pub mod stdio;
pub mod tools;

pub use crate::blocking::{serve_blocking, BlockingStdio, Stopper};
pub use crate::config::Config;
pub use crate::error::ServerError;
pub use crate::exit::Exit;
pub use crate::http::{serve_http, HttpConfig, DEFAULT_ADDR as DEFAULT_HTTP_ADDR};
pub use crate::info::ServerInfo;
pub use crate::params::{ServerParams, ToolCallParts};
pub use crate::serve::serve;
pub use crate::session::{Dispatch, Session};
pub use crate::tools::{default_tools, DuplicateTool, Tool, ToolCall, ToolSet};
