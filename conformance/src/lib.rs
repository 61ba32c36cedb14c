//! `mcp-conformance`: replays handshake, JSON-RPC error, tool and byte-level framing scenarios,
//! and stateless 2026-07-28 ones, against any stdio MCP server; reports which protocol era(s)
//! it speaks and, with spec references, what it does wrong.
//!
//! * [`check`]: levels (MUST / SHOULD / INFO), sessions, outcomes, verdicts and reports' data.
//! * [`checks`]: the built-in checks; [`scenario`]: checks as JSON data (`--scenario-file`);
//!   [`catalog`]: a check as the runner sees it.
//! * [`probe`]: one server process with the vocabulary checks are written in;
//!   [`session`]: the processes a check gets (fresh, shared, observed once);
//!   [`mismatch`]: replies that cannot be matched, and the root causes they point to.
//! * [`startup`]: era detection with two processes, and the start error when nothing answers;
//!   [`runner`]: selection, shared sessions, `--jobs`, expected failures.
//! * [`target`]: command lines and host config files; [`report`]: text, JSON, JUnit, transcripts.

pub mod catalog;
pub mod check;
pub mod checks;
pub mod config;
pub mod era;
pub mod evidence;
pub mod mismatch;
pub mod pattern;
pub mod probe;
pub mod progress;
pub mod report;
pub(crate) mod requests;
pub mod runner;
pub mod scenario;
pub mod session;
pub mod startup;
pub mod target;

use mcp_protocol::mcp::ProtocolVersion;

/// The version offered in handshakes.
pub const LATEST: &str = ProtocolVersion::LATEST.as_str_const();
