//! The Streamable HTTP transport (`basic/transports.mdx` §Streamable HTTP, 2025-03-26 …
//! 2025-11-25, and `basic/transports/streamable-http`, 2026-07-28), on one endpoint for
//! both eras.
//!
//! It is a layer that turns HTTP requests into messages for the same protocol core stdio
//! drives (`crate::core`); nothing about the protocol is decided here. One file per job:
//! * [`config`]: where to listen and every bound;
//! * [`server`]: listening, per-connection limits (slow or huge request heads) and graceful
//!   shutdown;
//! * [`inflight`]: what each connection is doing, so shutdown tells a cut reply from a
//!   request that never fully arrived;
//! * [`routes`]: the endpoint and its methods (POST, GET → 405, DELETE), `Origin` first;
//! * [`origin`]: header checks before a body is read (`Origin`, `MCP-Protocol-Version`,
//!   `Content-Type`);
//! * [`budget`]: what all clients together may make the server hold (bodies being received,
//!   replies not yet read);
//! * [`body`]: reading a POST body within its cap, timeout and the budget, and parsing it
//!   off the I/O threads when large;
//! * [`post`]: deciding from headers what can be decided before the body, then choosing the
//!   era of the message;
//! * [`mirror`]: 2026-07-28 mirrored headers (-32020);
//! * [`sessions`]: legacy sessions, bounded and expiring;
//! * [`stall`]: disconnecting a client that stops reading its response;
//! * [`state`]: what every handler shares;
//! * [`exchange`]: a POST's messages through a connection's core, its calls run in tasks,
//!   and the POST's response (202, a reply, or an SSE stream);
//! * [`listen`]: 2026-07-28 `subscriptions/listen` streams (with `--diagnostic`), bounded;
//! * [`reply`]: JSON, SSE, 202 and error bodies.

mod body;
mod budget;
mod config;
mod exchange;
mod inflight;
mod listen;
mod mirror;
mod origin;
mod post;
mod reply;
mod routes;
mod server;
mod sessions;
mod stall;
mod state;

pub use self::config::{HttpConfig, DEFAULT_ADDR};
pub use self::server::{serve_http, serve_http_on};

#[cfg(test)]
mod tests;
