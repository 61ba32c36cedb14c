//! Helpers for the bench's own tests: the real `mcp-bench` binary run as a child process (every
//! run bounded), the bundled echo server, and the harness's broken fixture server.
#![allow(clippy::unwrap_used, dead_code)]

#[path = "../../../testsupport/echo_server.rs"]
mod echo_server_bin;
#[path = "../../../testsupport/run.rs"]
mod run_bin;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The longest one bench run may take; past it the run is killed and the test fails. Runs take
/// seconds: this only turns a hang into a failure.
pub const RUN_LIMIT: Duration = Duration::from_secs(120);

/// The bench binary under test.
pub fn bench_bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_mcp-bench"))
}

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    echo_server_bin::workspace_root()
}

/// The `mcp-echo-server` of the profile these tests were built with (built once if missing).
pub fn echo_server() -> &'static Path {
    echo_server_bin::echo_server()
}

/// The harness's fixture server with one injected defect (`--bug NAME`).
pub fn broken_server(bug: &str) -> Vec<String> {
    let script = workspace_root()
        .join("conformance")
        .join("tests")
        .join("fixtures")
        .join("broken_server.py");
    assert!(script.is_file(), "missing fixture {}", script.display());
    ["python3", "-S", &script.display().to_string(), "--bug", bug]
        .map(str::to_owned)
        .to_vec()
}

pub use run_bin::Run;

/// Runs the bench with `args`, failing the test if it takes longer than [`RUN_LIMIT`].
pub fn run<S: Into<OsString> + Clone>(args: &[S]) -> Run {
    run_bin::run_args(bench_bin(), "mcp-bench", args, RUN_LIMIT)
}

/// Runs `cmd` (the bench, perhaps behind a wrapper), bounded by [`RUN_LIMIT`].
pub fn run_command(cmd: Command, shown: Vec<String>) -> Run {
    run_bin::run_bounded(cmd, "mcp-bench", shown, RUN_LIMIT, |_| {})
}
