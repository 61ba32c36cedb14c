//! `mcp-conformance observe`'s command line.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Parser;

/// Sits between a host and a real MCP server, forwards every message unchanged in both
/// directions, and judges both sides as the session goes.
///
/// stdio: `mcp-conformance observe [OPTIONS] -- SERVER_COMMAND [ARGS...]`, put in a host's config
/// in place of the server command. Every byte is forwarded as it comes, in order; the server's
/// stderr goes to ours. The observer exits with the server's exit code (128 + the signal's
/// number if a signal ended it); a SIGTERM, SIGINT or SIGHUP it gets is forwarded to the server.
///
/// Streamable HTTP: `mcp-conformance observe --listen 127.0.0.1:PORT --upstream URL`: every
/// request is forwarded to the upstream MCP endpoint and its response streamed back; it runs
/// until SIGINT or SIGTERM, then exits 1 if a check failed, else 0.
///
/// Exit codes of its own: 2 usage error, 3 the server could not be started (or the address not
/// bound).
#[derive(Debug, Parser)]
#[command(name = "mcp-conformance observe", version)]
pub(crate) struct Options {
    /// The server command and its arguments (after `--`), for stdio.
    #[arg(last = true, value_name = "SERVER_COMMAND")]
    pub(crate) command: Vec<String>,

    /// Write the report (the JSON of `mcp-conformance --format json`) to FILE, rewritten as
    /// the session goes (at most every 250 ms, atomically: a reader never sees half a file)
    /// and once at the end, so a host that kills the observer still leaves a readable report.
    #[arg(long, value_name = "FILE")]
    pub(crate) report: Option<PathBuf>,

    /// Append every message and event to FILE as JSON lines
    /// (`{"ms":…,"from":"client"|"server"|"event","text":…}`), flushed as they come.
    #[arg(long, value_name = "FILE")]
    pub(crate) transcript: Option<PathBuf>,

    /// No text report on stderr at the end.
    #[arg(long, short)]
    pub(crate) quiet: bool,

    /// Streamable HTTP: listen on this address (port 0 picks a free one; the address bound is
    /// printed on stderr: `observing on http://ADDR/ -> URL`).
    #[arg(long, value_name = "ADDR", requires = "upstream")]
    pub(crate) listen: Option<SocketAddr>,

    /// Streamable HTTP: the MCP endpoint every request is forwarded to
    /// (e.g. http://127.0.0.1:3001/mcp), whatever path the client used.
    #[arg(long, value_name = "URL", requires = "listen")]
    pub(crate) upstream: Option<String>,
}
