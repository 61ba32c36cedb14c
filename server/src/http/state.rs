//! The state every request handler shares: settings, sessions and what every connection
//! core serves (tools and server identity).

use std::sync::Arc;

use super::config::HttpConfig;
use super::sessions::Sessions;
use crate::core::Served;

/// What every request handler shares.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) config: HttpConfig,
    pub(crate) sessions: Sessions,
    pub(crate) served: Arc<Served>,
}
