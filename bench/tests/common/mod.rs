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
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;

/// The longest one bench run may take; past it the run is killed and the test fails. Runs take
/// seconds: this only turns a hang into a failure.
pub const RUN_LIMIT: Duration = Duration::from_secs(120);

/// The bench binary under test.
pub fn bench_bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_mcp-bench"))
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The `mcp-echo-server` the bench finds beside itself (`target/<profile>/`), built once if it
/// is missing.
pub fn echo_server() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let profile_dir = bench_bin().parent().unwrap().to_path_buf();
        echo_server_bin::echo_server_in(&profile_dir, &workspace_root())
    })
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

/// One finished run of the bench.
#[derive(Debug)]
pub struct Run {
    pub args: Vec<String>,
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// stdout parsed as the JSON report.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "the report of `mcp-bench {}` is not JSON ({e}); exit {}\nstdout:\n{}\nstderr:\n{}",
                self.args.join(" "),
                self.code,
                self.stdout,
                self.stderr
            )
        })
    }
}

/// Runs the bench with `args`, failing the test if it takes longer than [`RUN_LIMIT`].
pub fn run<S: Into<OsString> + Clone>(args: &[S]) -> Run {
    let args: Vec<OsString> = args.iter().cloned().map(Into::into).collect();
    let shown: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let mut cmd = Command::new(bench_bin());
    cmd.args(&args);
    run_command(cmd, shown)
}

/// Runs `cmd` (the bench, perhaps behind a wrapper), bounded by [`RUN_LIMIT`].
pub fn run_command(cmd: Command, shown: Vec<String>) -> Run {
    let line = format!("mcp-bench {}", shown.join(" "));
    let done = run_bin::run_bounded(cmd, &line, RUN_LIMIT, |_| {});
    Run {
        args: shown,
        code: done.code,
        stdout: done.stdout,
        stderr: done.stderr,
    }
}
