//! Starting the target: one [`Spawner`] per target makes each fresh [`Probe`].

use std::sync::Arc;

use crate::transport::StdioConn;
use mcp_client::ClientError;

use crate::transport::{Conn, HttpConn};

use super::starts::StartLog;
use super::{Probe, ProbeError, Run, Waits, Watch};
use crate::config::RunConfig;
use crate::evidence::Trace;
use crate::mismatch::{Findings, Kind};
use crate::target::Target;

/// What every probe of one target shares: how to start the server, the waits, and where
/// findings and start times go.
#[derive(Debug, Clone)]
pub struct Spawner {
    pub target: Arc<Target>,
    pub config: Arc<RunConfig>,
    pub findings: Findings,
    pub starts: StartLog,
    /// What every process saw of the server's messages.
    pub watch: Watch,
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
            watch: Watch::default(),
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
                    // The client's error names the program again: only its reason here.
                    reason: match e {
                        ClientError::Spawn { reason, .. } => reason,
                        other => other.to_string(),
                    },
                })?,
            ),
        };
        let label = match &self.target.http {
            Some(_) => format!("{} (HTTP client)", label.into()),
            None => label.into(),
        };
        let waits = Waits {
            wait: self.config.wait,
            start_wait: self.config.first_reply_wait(),
        };
        let run = Run {
            findings: self.findings.clone(),
            starts: self.starts.clone(),
            watch: self.watch.clone(),
            client: self.config.client_capabilities.clone(),
            tool_calls: self.config.tool_calls,
        };
        Ok(Probe::new(conn, waits, trace.clone(), label, run))
    }
}
