//! The Streamable HTTP transport (`basic/transports.mdx` §Streamable HTTP, 2025-03-26 …
//! 2025-11-25, and `basic/transports/streamable-http`, 2026-07-28), on one endpoint for
//! both eras.
//!
//! It is a layer that turns HTTP requests into messages for the same [`Session`] core stdio
//! uses; nothing about the protocol lives here. One file per job:
//! * [`config`]: where to listen and every bound;
//! * [`server`]: listening, per-connection limits (slow or huge request heads) and graceful
//!   shutdown;
//! * [`routes`]: the endpoint and its methods (POST, GET → 405, DELETE), `Origin` first;
//! * [`origin`]: header checks before a body is read (`Origin`, `MCP-Protocol-Version`,
//!   `Content-Type`);
//! * [`post`]: reading a bounded body and choosing the era of the message;
//! * [`mirror`]: 2026-07-28 mirrored headers (-32020);
//! * [`sessions`]: legacy sessions, bounded and expiring;
//! * [`state`]: what every handler shares;
//! * [`exchange`]: a dispatch to a response, with tool calls in tasks and cancellation;
//! * [`reply`]: JSON, SSE, 202 and error bodies.
//!
//! Only the `mcp-echo-server-http` executable links it (`mcp-echo-server --http` execs that
//! one), so the stdio binary carries none of it.
//!
//! [`Session`]: crate::Session

mod config;
mod exchange;
mod mirror;
mod origin;
mod post;
mod reply;
mod routes;
mod server;
mod sessions;
mod state;

pub use self::config::{HttpConfig, DEFAULT_ADDR};
pub use self::server::serve_http;

#[cfg(test)]
mod tests;
