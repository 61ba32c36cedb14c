//! Async MCP client library over stdio.
//!
//! Placeholder crate: the client (spawn, lifecycle state machine, pending map, close) is
//! built in issue #3 on top of [`mcp_protocol`].

pub use mcp_protocol as protocol;
