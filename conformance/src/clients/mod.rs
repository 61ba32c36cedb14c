//! Judging the other side: MCP clients and hosts.
//!
//! * `timeline`: what happened between a client and a server, in order (the evidence);
//! * `scenario`: the scenarios `client` mode plays; `script`: the scripted server of a
//!   scenario, sans-I/O;
//! * `judge`: a client check and how its verdicts over several sessions become one result;
//!   `checks`: the client checks, each citing its sentence at its level.

pub(crate) mod checks;
pub(crate) mod cli;
pub(crate) mod http;
pub(crate) mod judge;
pub(crate) mod live;
pub(crate) mod process;
pub mod relay;
pub(crate) mod run;
pub(crate) mod scenario;
pub(crate) mod script;
pub(crate) mod stdio;
pub(crate) mod timeline;

use crate::check::CheckInfo;

/// A client check as `--list` and docs/checks.md show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientCheckInfo {
    pub info: CheckInfo,
    /// The `client` scenarios whose sessions it judges (empty: all).
    pub scenarios: Vec<&'static str>,
    /// `mcp-conformance observe` judges it too.
    pub observed: bool,
}

/// Every client check, in report order.
pub fn client_checks() -> Vec<ClientCheckInfo> {
    checks::all()
        .into_iter()
        .map(ClientCheckInfo::from)
        .collect()
}

impl From<judge::ClientCheck> for ClientCheckInfo {
    fn from(c: judge::ClientCheck) -> ClientCheckInfo {
        ClientCheckInfo {
            scenarios: c.scenarios.iter().map(|s| s.name()).collect(),
            observed: c.observed,
            info: c.info,
        }
    }
}
