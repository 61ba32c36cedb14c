//! What both command lines (servers, and `client`) share: the runtime a run goes on, which ends
//! every process group it started (also when interrupted), and writing the reports asked for.

use std::future::Future;
use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use crate::check::TargetReport;
use crate::report::{json, junit, text, transcript};

/// Exit code of a file that could not be written (as for a usage error).
const USAGE: u8 = 2;

/// Runs `run` to its exit code on a two-thread runtime, through
/// [`crate::interrupt::run_to_the_end`].
pub(crate) fn run_to_exit(run: impl Future<Output = u8>) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("mcp-conformance: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let code = runtime.block_on(crate::interrupt::run_to_the_end(run));
    runtime.shutdown_timeout(Duration::from_secs(1));
    ExitCode::from(code)
}

/// The reports a run writes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Outputs<'a> {
    /// JSON on stdout (else text).
    pub(crate) json: bool,
    /// Text: details of passing checks too.
    pub(crate) verbose: bool,
    pub(crate) junit: Option<&'a Path>,
    pub(crate) transcript: Option<&'a Path>,
}

/// The report on stdout, and the JUnit and transcript files asked for; `Err`: the exit code
/// of a file that could not be written.
pub(crate) fn write_reports(out: Outputs<'_>, reports: &[TargetReport]) -> Result<(), u8> {
    if out.json {
        match serde_json::to_string_pretty(&json::render(reports)) {
            Ok(s) => println!("{s}"),
            Err(e) => eprintln!("mcp-conformance: cannot write the JSON report: {e}"),
        }
    } else {
        let opts = text::TextOptions {
            color: text::color_wanted(std::io::stdout().is_terminal()),
            verbose: out.verbose,
        };
        print!("{}", text::render(reports, &opts));
    }
    if let Some(path) = out.junit {
        if let Err(e) = std::fs::write(path, junit::render(reports)) {
            eprintln!("mcp-conformance: cannot write {}: {e}", path.display());
            return Err(USAGE);
        }
    }
    if let Some(dir) = out.transcript {
        if let Err(e) = transcript::write(dir, reports) {
            eprintln!(
                "mcp-conformance: cannot write transcripts under {}: {e}",
                dir.display()
            );
            return Err(USAGE);
        }
    }
    Ok(())
}
