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
