//! What both command lines (servers, and `client`) share: the runtime a run goes on, which ends
//! every process group it started (also when interrupted), and writing the reports asked for.

use std::future::Future;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use crate::check::TargetReport;
use crate::report::{json, junit, markdown, text, transcript};

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

/// The report options both command lines share: what is written, where, and against which
/// check set and baseline.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct ReportArgs {
    /// Report format on stdout: text (failures in full, the rest counted per area), json (the
    /// stable schema mcp-conformance/report/v1), or markdown (a summary for a CI job summary
    /// or a pull-request comment).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub(crate) format: Format,

    /// Text: every check on a line of its own, with details of passing checks too.
    #[arg(long, short)]
    pub(crate) verbose: bool,

    /// Also write a JUnit XML report.
    #[arg(long, value_name = "FILE")]
    pub(crate) junit: Option<PathBuf>,

    /// Also append the Markdown summary to FILE (e.g. "$GITHUB_STEP_SUMMARY").
    #[arg(long, value_name = "FILE")]
    pub(crate) markdown: Option<PathBuf>,

    /// Write every check's evidence (frames or session events, and stderr) as JSON lines
    /// under DIR.
    #[arg(long, value_name = "DIR")]
    pub(crate) transcript: Option<PathBuf>,

    /// Checks listed here (one id per line, then the reason; `#` comments; for servers,
    /// `NAME:` before an id limits it to that server of a --config) do not fail the run; a
    /// listed check that passes is stale and does.
    #[arg(long, value_name = "FILE")]
    pub(crate) expected_failures: Option<PathBuf>,

    /// Run only the checks this harness version had (e.g. 0.1.0): checks added later are
    /// skipped until you move the pin, so an upgrade never fails a run that passed.
    #[arg(long, value_name = "VERSION", value_parser = crate::checkset::parse_pin)]
    pub(crate) check_set: Option<crate::checkset::Version>,
}

/// The report format on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Format {
    Text,
    Json,
    Markdown,
}

impl ReportArgs {
    /// The check set a run uses: the pin, else this harness's own.
    pub(crate) fn check_set(&self) -> crate::checkset::Version {
        self.check_set
            .unwrap_or_else(crate::checkset::Version::current)
    }
}

/// The report on stdout, and the files asked for; `Err`: the exit code of a file that could
/// not be written.
pub(crate) fn write_reports(args: &ReportArgs, reports: &[TargetReport]) -> Result<(), u8> {
    print_report(args, reports);
    write_files(args, reports)
}

/// The report on stdout, in the format asked for.
pub(crate) fn print_report(args: &ReportArgs, reports: &[TargetReport]) {
    let check_set = args.check_set();
    match args.format {
        Format::Json => match serde_json::to_string_pretty(&json::render(reports, check_set)) {
            Ok(s) => println!("{s}"),
            Err(e) => eprintln!("mcp-conformance: cannot write the JSON report: {e}"),
        },
        Format::Markdown => print!("{}", markdown::render(reports, &check_set.to_string())),
        Format::Text => {
            let opts = text::TextOptions {
                color: text::color_wanted(std::io::stdout().is_terminal()),
                verbose: args.verbose,
            };
            print!("{}", text::render(reports, &opts));
        }
    }
}

/// The JUnit, Markdown and transcript files asked for; `Err`: the exit code of a file that
/// could not be written.
pub(crate) fn write_files(args: &ReportArgs, reports: &[TargetReport]) -> Result<(), u8> {
    let check_set = args.check_set().to_string();
    if let Some(path) = &args.junit {
        write_file(path, junit::render(reports).as_bytes(), false)?;
    }
    if let Some(path) = &args.markdown {
        write_file(path, markdown::render(reports, &check_set).as_bytes(), true)?;
    }
    if let Some(dir) = &args.transcript {
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

/// Writes (or appends to) a report file; `Err`: the usage exit code, the error on stderr.
fn write_file(path: &Path, bytes: &[u8], append: bool) -> Result<(), u8> {
    let written = if append {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut f| std::io::Write::write_all(&mut f, bytes))
    } else {
        std::fs::write(path, bytes)
    };
    written.map_err(|e| {
        eprintln!("mcp-conformance: cannot write {}: {e}", path.display());
        USAGE
    })
}
