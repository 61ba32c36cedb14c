//! Conformance harness for stdio MCP servers.
//!
//! Placeholder crate: scenarios, reports and the bench are built in issue #4 on top of the
//! `mcp-client` crate.

pub use mcp_client as client;
