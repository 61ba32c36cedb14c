//! Starting the target: one [`Spawner`] per target makes each fresh [`Probe`].

use std::sync::Arc;
use std::time::Instant;

use crate::transport::StdioConn;

use crate::transport::{Conn, HttpConn};

use super::starts::StartLog;
use super::{Probe, ProbeError};
use crate::config::RunConfig;
use crate::evidence::Trace;
use crate::mismatch::{Findings, Kind, Spread};
use crate::requests::Requests;
use crate::target::Target;

/// What every probe of one target shares: how to start the server, the waits, and where
/// findings and start times go.
#[derive(Debug, Clone)]
pub struct Spawner {
    pub target: Arc<Target>,
    pub config: Arc<RunConfig>,
    pub findings: Findings,
    pub starts: StartLog,
    /// The HTTP client of a target reached over Streamable HTTP (`--url`).
    pub http_client: Option<reqwest::Client>,
}

impl Spawner {
    pub fn new(target: Arc<Target>, config: Arc<RunConfig>) -> Spawner {
        let http_client = target
            .http
            .as_ref()
            .and_then(|e| crate::transport::http::client_for(e, config.wait).ok());
        Spawner {
            http_client,
            target,
            config,
            findings: Findings::default(),
            starts: StartLog::default(),
        }
    }

    /// A fresh server process whose evidence goes to `trace`; `label` says what it is for.
    /// Refused once a start has been seen to answer nothing (there is no point waiting out the
    /// start budget again): the check is then blocked by that finding.
    pub fn spawn(&self, trace: &Trace, label: impl Into<String>) -> Result<Probe, ProbeError> {
        if self.findings.has(Kind::SilentStart) {
            let why = "not started: an earlier start of this server answered nothing within the \
                       start budget, so checks that need a process of their own cannot be judged"
                .to_owned();
            trace.block(Kind::SilentStart, why.clone());
            return Err(ProbeError::Blocked {
                kind: Kind::SilentStart,
                why,
            });
        }
        let conn = match (&self.target.http, &self.http_client) {
            (Some(endpoint), Some(client)) => Conn::Http(HttpConn::new(
                Arc::clone(endpoint),
                client.clone(),
                self.config.max_message_bytes,
                self.config.wait,
            )),
            _ => Conn::Stdio(
                StdioConn::spawn(
                    &self.target.command,
                    self.config.framing,
                    self.config.max_message_bytes,
                )
                .map_err(|e| ProbeError::Spawn {
                    command: self.target.display(),
                    reason: e.to_string(),
                })?,
            ),
        };
        let spawned = Instant::now() - conn.elapsed();
        Ok(Probe {
            conn,
            spawned,
            label: match &self.target.http {
                Some(_) => format!("{} (HTTP client)", label.into()),
                None => label.into(),
            },
            framing: self.config.framing,
            next_id: 1,
            wait: self.config.wait,
            start_wait: self.config.first_reply_wait(),
            barrier: None,
            barrier_id: None,
            first_method: None,
            answered: false,
            notifications: 0,
            notifications_sent: 0,
            disambiguation: None,
            ignored: Vec::new(),
            timed_out: false,
            closed: false,
            replies_this_lease: 0,
            blocked: None,
            pending_initialized: false,
            stash: Vec::new(),
            garbage: Vec::new(),
            garbage_total: 0,
            received: Vec::new(),
            received_total: 0,
            meta: None,
            spread: Spread::default(),
            requests: Requests::new(self.config.framing),
            trace: trace.clone(),
            mark: 0,
            stderr_mark: 0,
            findings: self.findings.clone(),
            starts: self.starts.clone(),
            start_index: self.starts.register(),
        })
    }
}
