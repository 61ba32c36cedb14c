//! `mcp-conformance`: replays handshake, JSON-RPC error, tool and byte-level framing scenarios,
//! and stateless 2026-07-28 ones, against any stdio or Streamable HTTP MCP server (`--url`);
//! reports which protocol era(s) it speaks and, with spec references, what it does wrong.
//!
//! The crate's API is its command line ([`cli::main`]) and the check catalogue ([`builtin`],
//! [`CheckInfo`]) that `docs/checks.md` is generated from; the modules below are internal.
//!
//! * `check`: levels (MUST / SHOULD / INFO), where a check runs, outcomes, verdicts and
//!   reports' data; `ids`: the built-in checks' ids, one table.
//! * `checks`: the built-in checks; `scenario`: checks as JSON data (`--scenario-file`);
//!   `catalog`: a check as the runner sees it.
//! * `probe`: one server process (or HTTP client) with the vocabulary checks are written in;
//!   `transport`: how it reaches the server, stdio or Streamable HTTP; `transcript`: what it
//!   sent and saw, timed;
//!   `ctx`: what a check gets: its processes (fresh, shared, observed once);
//!   `mismatch`: replies that cannot be matched, and the root causes they point to.
//! * `startup`: era detection with two processes, and the start error when nothing answers;
//!   `runner`: where each check runs, shared sessions, `--jobs`, a server that stops
//!   answering, root causes, expected failures.
//! * `target`: command lines and host config files; `report`: text, JSON, JUnit, transcripts;
//!   `entry`: what both command lines share (the runtime, writing the reports).
//! * `groups`: the process groups of the servers the harness starts, each ended as a whole;
//!   `interrupt`: an interrupted run ends them all before it exits.

mod capability;
mod catalog;
mod check;
mod checks;
mod checkset;
pub mod cli;
mod clients;
mod config;
mod coverage;
mod ctx;
mod entry;
mod era;
mod evidence;
mod groups;
mod ids;
mod interrupt;
mod mismatch;
mod observe;
mod pattern;
mod probe;
mod progress;
mod replay;
mod report;
mod requests;
mod runner;
mod scenario;
mod select;
mod startup;
mod stops;
mod target;
mod transcript;
mod transport;

pub use crate::check::{CheckInfo, Level, RunsIn, Transport};
pub use crate::checks::builtin;
pub use crate::clients::{client_checks, ClientCheckInfo};
pub use crate::observe::observed_server_checks;

use mcp_protocol::mcp::ProtocolVersion;

/// The version offered in handshakes.
pub(crate) const LATEST: &str = ProtocolVersion::LATEST_LEGACY.as_str_const();
