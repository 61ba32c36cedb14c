//! Runs the scenarios of `client` mode: each its own session, scripted server and client
//! process, up to `--jobs` at once; a client still running at the bound is stopped.

use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;

use super::http::HttpServer;
use super::live::Live;
use super::process::{spawn, ClientCommand, Ended, Output, Running};
use super::scenario::ScenarioId;
use super::stdio::RelayServer;
use super::timeline::{Timeline, What, Wire};

/// How long, after the client exits, its relays may take to report their end (they see stdin
/// close when it goes).
const SETTLE: Duration = Duration::from_secs(1);

/// How every scenario is run.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    pub(crate) wire: Wire,
    /// How long one scenario may take.
    pub(crate) bound: Duration,
    pub(crate) command: ClientCommand,
    /// This program, which the relay script runs.
    pub(crate) exe: PathBuf,
    pub(crate) jobs: usize,
    /// One line on stderr per scenario run.
    pub(crate) progress: bool,
}

/// One scenario, run.
#[derive(Debug, Clone)]
pub(crate) struct ScenarioRun {
    pub(crate) scenario: ScenarioId,
    pub(crate) timeline: Timeline,
    pub(crate) output: Output,
    /// How the client's run ended.
    pub(crate) ended: Ended,
}

impl ScenarioRun {
    /// How the client's run ended, in words.
    pub(crate) fn ending(&self) -> String {
        let at = self
            .timeline
            .events
            .last()
            .map_or(0.0, |e| e.at.as_secs_f64());
        match self.ended {
            Ended::Exited(Some(code)) => format!("client exited ({code}) after {at:.2}s"),
            Ended::Exited(None) => format!("client ended by a signal after {at:.2}s"),
            Ended::Bound => format!("client stopped at the bound ({at:.2}s)"),
        }
    }

    /// The client spoke to the server at all (a message, garbage, or an HTTP request).
    pub(crate) fn connected(&self) -> bool {
        self.timeline.events.iter().any(|e| {
            matches!(
                e.what,
                What::Message(_) | What::Garbage { .. } | What::Http(_) | What::StdinClosed
            )
        })
    }
}

/// Why a run could not happen.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RunError {
    #[error("cannot start the client command `{command}`: {source}")]
    Spawn { command: String, source: io::Error },
    #[error("cannot set up the {what} the client connects to: {source}")]
    Setup {
        what: &'static str,
        source: io::Error,
    },
}

/// Runs the scenarios, `settings.jobs` at once; the runs in the order given.
pub(crate) async fn run_all(
    scenarios: &[ScenarioId],
    settings: &Settings,
) -> Result<Vec<ScenarioRun>, RunError> {
    let runs: Vec<Result<ScenarioRun, RunError>> = futures::stream::iter(scenarios.iter().copied())
        .map(|s| async move {
            let run = run_one(s, settings).await;
            if let (true, Ok(run)) = (settings.progress, &run) {
                eprintln!("  scenario {:<22} {}", s.name(), run.ending());
            }
            run
        })
        .buffered(settings.jobs.max(1))
        .collect()
        .await;
    runs.into_iter().collect()
}

async fn run_one(scenario: ScenarioId, settings: &Settings) -> Result<ScenarioRun, RunError> {
    let live = Arc::new(Live::new(scenario, settings.wire));
    let setup = |what| move |source| RunError::Setup { what, source };
    let (ended, output) = match settings.wire {
        Wire::Stdio => {
            let mut relay = RelayServer::start(Arc::clone(&live), &settings.exe)
                .map_err(setup("relay socket"))?;
            let arg = relay.script().to_string_lossy().into_owned();
            let mut client = start(settings, &arg, scenario)?;
            let ended = client.wait(settings.bound).await;
            let exit_at = live.now();
            if ended != Ended::Bound {
                relay.settle(SETTLE).await;
            }
            if let Ended::Exited(code) = ended {
                // Ordered by time among what the relay saw, which it may report later.
                live.insert_at(exit_at, What::ClientExited { code });
            }
            let done = finish(&live, ended, client).await;
            live.sort_by_time();
            done
        }
        Wire::Http => {
            let server = HttpServer::start(Arc::clone(&live))
                .await
                .map_err(setup("HTTP listener"))?;
            let mut client = start(settings, server.url(), scenario)?;
            let ended = client.wait(settings.bound).await;
            if let Ended::Exited(code) = ended {
                live.push(What::ClientExited { code });
            }
            let done = finish(&live, ended, client).await;
            server.stop().await;
            done
        }
    };
    Ok(ScenarioRun {
        scenario,
        timeline: live.timeline(),
        output,
        ended,
    })
}

fn start(settings: &Settings, last: &str, scenario: ScenarioId) -> Result<Running, RunError> {
    spawn(&settings.command, last, scenario).map_err(|source| RunError::Spawn {
        command: settings.command.shown(),
        source,
    })
}

/// Records a client stopped at the bound, freezes the session (the harness's clean-up is no
/// evidence) and ends what is left of the client's process group.
async fn finish(live: &Live, ended: Ended, client: Running) -> (Ended, Output) {
    if ended == Ended::Bound {
        live.push(What::Bound);
    }
    live.freeze();
    (ended, client.stop().await)
}
