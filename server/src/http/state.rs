//! The state every request handler shares: settings, sessions and what every connection
//! core serves (tools and server identity).

use std::sync::Arc;

use tokio::sync::Semaphore;

use super::budget::Budget;
use super::config::HttpConfig;
use super::listen::Streams;
use super::sessions::Sessions;
use crate::core::Served;

/// What every request handler shares.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) config: HttpConfig,
    pub(crate) sessions: Sessions,
    pub(crate) served: Arc<Served>,
    /// Request bodies being received, all clients together.
    pub(crate) bodies: Arc<Budget>,
    /// Large replies not yet read by their clients, all together.
    pub(crate) replies: Arc<Budget>,
    /// Turns to parse a large body: one at a time ([`super::body::parse`]).
    pub(crate) large_parses: Semaphore,
    /// 2026-07-28 `subscriptions/listen` streams, server-wide (only with diagnostic tools).
    pub(crate) listeners: Arc<Streams>,
}

impl Shared {
    pub(crate) fn new(config: HttpConfig, served: Arc<Served>) -> Shared {
        Shared {
            sessions: Sessions::new(config.max_sessions, config.session_idle),
            // The largest message must always fit.
            bodies: Budget::new(config.body_budget_bytes.max(config.max_message_bytes)),
            replies: Budget::new(config.reply_budget_bytes),
            large_parses: Semaphore::new(1),
            listeners: Arc::new(Streams::new(&served)),
            config,
            served,
        }
    }
}
