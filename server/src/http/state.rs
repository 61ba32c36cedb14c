//! The state every request handler shares: settings, sessions and the protocol core's
//! inputs (tools and server identity).

use std::sync::Arc;

use super::config::HttpConfig;
use super::sessions::Sessions;
use crate::info::ServerInfo;
use crate::tools::ToolSet;

/// What every request handler shares.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) config: HttpConfig,
    pub(crate) sessions: Sessions,
    pub(crate) tools: Arc<ToolSet>,
    pub(crate) info: ServerInfo,
}
