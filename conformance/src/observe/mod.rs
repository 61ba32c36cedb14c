//! `mcp-conformance observe`: a proxy between a real host and a real server that forwards
//! every message unchanged and judges both sides as the session goes.
//!
//! * `cli`: the options; `signals`: the signals that end a session;
//! * `stdio`, `http`: the two proxies: they only move bytes, and hand a copy of each chunk to
//!   the judging side through `feed` (bounded, never waiting);
//! * `recorder`: the judging side, on a thread of its own: the chunks become a timeline of
//!   messages and events (the same evidence `client` mode judges), the transcript file, and
//!   the report rewritten as it goes;
//! * `server_checks`: what is judged of the server, passively; `report`: the timeline judged
//!   into the harness's report, written atomically.

mod cli;
mod feed;
mod http;
mod recorder;
mod report;
mod server_checks;
mod stdio;

use std::process::ExitCode;
use std::thread::JoinHandle;
use std::time::Instant;

use clap::Parser;

use self::cli::Options;
use self::feed::{Drain, Tap};
use self::recorder::Recorder;
use self::report::{Coverage, Subject};
use crate::check::TargetReport;
use crate::clients::timeline::Wire;

const USAGE: u8 = 2;
const START: u8 = 3;

/// Runs `mcp-conformance observe ARGS…` (the process's arguments after `observe`).
/// The server checks `observe` judges passively, besides the client checks, in report order.
pub fn observed_server_checks() -> Vec<crate::clients::ClientCheckInfo> {
    server_checks::checks()
        .into_iter()
        .map(Into::into)
        .collect()
}

pub(crate) fn main() -> ExitCode {
    let name = std::ffi::OsString::from("mcp-conformance observe");
    let opts = Options::parse_from(std::iter::once(name).chain(std::env::args_os().skip(2)));
    ExitCode::from(run(&opts))
}

fn run(opts: &Options) -> u8 {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("mcp-conformance observe: cannot start the async runtime: {e}");
            return 1;
        }
    };
    match (&opts.listen, &opts.upstream, opts.command.is_empty()) {
        (Some(listen), Some(upstream), true) => {
            runtime.block_on(http::run(opts, *listen, upstream))
        }
        (None, None, false) => runtime.block_on(stdio::run(opts)),
        (Some(_), _, false) => usage(
            "give either a server command after -- (stdio) or --listen and --upstream (HTTP), not both",
        ),
        _ => usage("give the server command after --: mcp-conformance observe [OPTIONS] -- SERVER_COMMAND [ARGS...] (or --listen ADDR --upstream URL)"),
    }
}

fn usage(message: &str) -> u8 {
    eprintln!("mcp-conformance observe: {message}");
    USAGE
}

/// The judging side of a session: a thread that builds the timeline and rewrites the report.
#[derive(Debug)]
struct Observer {
    tap: Tap,
    thread: JoinHandle<(Recorder, Drain)>,
    subject: Subject,
    report: Option<std::path::PathBuf>,
    quiet: bool,
    started: Instant,
}

impl Observer {
    /// Starts judging; an error is a transcript file that cannot be opened.
    fn start(opts: &Options, subject: Subject) -> std::io::Result<Observer> {
        let mut recorder = Recorder::new(subject.wire, opts.transcript.as_deref())?;
        let (tap, drain) = feed::channel();
        let started = Instant::now();
        let path = opts.report.clone();
        let for_thread = subject.clone();
        let thread = std::thread::Builder::new()
            .name("observe-judge".into())
            .spawn(move || {
                let mut failed = false;
                recorder.run(&drain, |rec, stopped| {
                    let Some(path) = &path else { return };
                    let coverage = Coverage {
                        stopped,
                        truncated: rec.truncated.clone(),
                        ended: false,
                    };
                    let report =
                        report::build(&for_thread, rec, &coverage, started.elapsed(), None);
                    if let Err(e) = report::write_json(path, &report) {
                        if !std::mem::replace(&mut failed, true) {
                            eprintln!(
                                "mcp-conformance observe: cannot write {}: {e}",
                                path.display()
                            );
                        }
                    }
                });
                (recorder, drain)
            })?;
        Ok(Observer {
            tap,
            thread,
            subject,
            report: opts.report.clone(),
            quiet: opts.quiet,
            started,
        })
    }

    /// Ends judging: the final report, written to `--report` and (unless `--quiet`) stderr.
    fn finish(self, start_error: Option<String>) -> Option<TargetReport> {
        self.tap.done();
        let Ok((mut recorder, drain)) = self.thread.join() else {
            eprintln!("mcp-conformance observe: the judge failed; no report");
            return None;
        };
        for (at, what) in drain.late() {
            recorder.late(at, what);
        }
        let coverage = Coverage {
            stopped: drain.stopped(),
            truncated: recorder.truncated.clone(),
            ended: true,
        };
        let report = report::build(
            &self.subject,
            &recorder,
            &coverage,
            self.started.elapsed(),
            start_error,
        );
        if let Some(path) = &self.report {
            if let Err(e) = report::write_json(path, &report) {
                eprintln!(
                    "mcp-conformance observe: cannot write {}: {e}",
                    path.display()
                );
            }
        }
        if !self.quiet {
            eprint!("{}", report::text(&report));
        }
        Some(report)
    }
}

/// The subject of a stdio session: the server's command line.
fn stdio_subject(command: &[String]) -> Subject {
    Subject {
        name: command.join(" "),
        wire: Wire::Stdio,
    }
}
