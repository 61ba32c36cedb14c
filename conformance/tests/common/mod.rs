//! Helpers for the harness's own tests: the real `mcp-conformance` binary run as a child process
//! (every run bounded), the broken fixture server, the bundled echo server, reading the JSON
//! report, and temporary directories.
#![allow(clippy::unwrap_used, dead_code)]

#[path = "../../../testsupport/echo_server.rs"]
mod echo_server_bin;
#[path = "../../../testsupport/run.rs"]
mod run_bin;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

/// The longest one harness run may take; past it the run is killed and the test fails. Runs
/// take seconds: this only turns a hang into a failure.
pub const RUN_LIMIT: Duration = Duration::from_secs(90);

/// `--timeout` for every run against a server: each single wait of a check.
pub const TIMEOUT: &str = "3";

/// The harness binary under test.
pub fn harness() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_mcp-conformance"))
}

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    echo_server_bin::workspace_root()
}

/// The `mcp-echo-server` of the profile these tests were built with (built once if missing).
pub fn echo_server() -> &'static Path {
    echo_server_bin::echo_server()
}

/// `tests/fixtures/broken_server.py`.
pub fn fixture_script() -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("fixtures")
        .join("broken_server.py");
    assert!(path.is_file(), "missing fixture {}", path.display());
    path
}

/// `tests/fixtures/feature_server.py` (every server feature, both eras) in `era` (`legacy`,
/// `modern` or `dual`), correct or with one `--bug`.
pub fn feature_server(bug: Option<&str>, era: &str) -> Vec<String> {
    let mut args = vec!["--era", era];
    if let Some(bug) = bug {
        args.extend(["--bug", bug]);
    }
    feature_server_with(&args)
}

/// `python3 -S tests/fixtures/feature_server.py ARGS` (dual-era unless `--era` says otherwise).
pub fn feature_server_with(args: &[&str]) -> Vec<String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("fixtures")
        .join("feature_server.py");
    assert!(script.is_file(), "missing fixture {}", script.display());
    let mut cmd = vec![
        "python3".to_owned(),
        "-S".to_owned(),
        script.display().to_string(),
    ];
    cmd.extend(args.iter().map(|a| (*a).to_owned()));
    cmd
}

/// Runs `jobs` at once, each a harness run (`check`'s options and target): the runs, in order.
pub fn in_parallel(jobs: Vec<(Vec<&str>, Vec<String>)>) -> Vec<(Run, Value)> {
    std::thread::scope(|s| {
        let handles: Vec<_> = jobs
            .iter()
            .map(|(options, target)| s.spawn(move || check(options, target)))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

/// The fixture server's command line: correct, or with one `--bug`; legacy unless `era`.
#[derive(Debug, Clone)]
pub struct Fixture {
    bug: Option<String>,
    era: Option<String>,
    content_length: bool,
    extra: Vec<String>,
}

impl Fixture {
    /// The correct server.
    pub fn correct() -> Fixture {
        Fixture {
            bug: None,
            era: None,
            content_length: false,
            extra: Vec::new(),
        }
    }

    /// The server with one injected defect.
    pub fn bug(name: &str) -> Fixture {
        Fixture {
            bug: Some(name.to_owned()),
            ..Fixture::correct()
        }
    }

    /// Speaks the protocol era(s) `era`: `legacy` (the fixture's default), `modern` or `dual`.
    pub fn era(mut self, era: &str) -> Fixture {
        self.era = Some(era.to_owned());
        self
    }

    /// Speaks `Content-Length` framing instead of newline-delimited JSON.
    pub fn content_length(mut self) -> Fixture {
        self.content_length = true;
        self
    }

    /// One more argument for the fixture (e.g. `--crash-after`, `3`).
    pub fn arg(mut self, arg: &str) -> Fixture {
        self.extra.push(arg.to_owned());
        self
    }

    /// The command line (`python3 -S broken_server.py ...`). `-S`: no site-packages (the
    /// fixture uses the standard library only), which also makes each start faster.
    pub fn command(&self) -> Vec<String> {
        let mut cmd = vec![
            "python3".to_owned(),
            "-S".to_owned(),
            fixture_script().display().to_string(),
        ];
        if let Some(bug) = &self.bug {
            cmd.extend(["--bug".to_owned(), bug.clone()]);
        }
        if let Some(era) = &self.era {
            cmd.extend(["--era".to_owned(), era.clone()]);
        }
        if self.content_length {
            cmd.extend(["--framing".to_owned(), "content-length".to_owned()]);
        }
        cmd.extend(self.extra.iter().cloned());
        cmd
    }
}

/// One finished run of the harness.
pub use run_bin::Run;

impl Run {
    /// What to show when an assertion about this run fails.
    pub fn context(&self) -> String {
        let report = serde_json::from_str::<Value>(&self.stdout)
            .map(|v| describe(&v))
            .unwrap_or_else(|_| format!("stdout:\n{}", self.stdout));
        format!(
            "`mcp-conformance {}` exited {} after {:.1?}\n{report}\nstderr:\n{}",
            self.args.join(" "),
            self.code,
            self.elapsed,
            self.stderr
        )
    }
}

/// Runs the harness with `args`, failing the test if it takes longer than [`RUN_LIMIT`].
pub fn run<S: Into<OsString> + Clone>(args: &[S]) -> Run {
    run_bin::run_args(harness(), "mcp-conformance", args, RUN_LIMIT)
}

/// Runs `cmd` (the harness, perhaps behind a wrapper) in its own process group with stdout and
/// stderr collected; `tick(pid)` is called every 2 ms while it runs. After [`RUN_LIMIT`] the
/// whole group is killed and the test fails.
pub fn run_command(cmd: Command, shown: Vec<String>, tick: impl FnMut(u32)) -> Run {
    run_bin::run_bounded(cmd, "mcp-conformance", shown, RUN_LIMIT, tick)
}

/// Runs the harness against `target` (a command line; empty: the bundled server) with a JSON
/// report and `--timeout 3` (unless `options` set it), plus `options`.
pub fn check(options: &[&str], target: &[String]) -> (Run, Value) {
    let mut args: Vec<String> = vec!["--format".into(), "json".into()];
    if !options.contains(&"--timeout") {
        args.extend(["--timeout".into(), TIMEOUT.into()]);
    }
    args.extend(options.iter().map(|s| (*s).to_owned()));
    if !target.is_empty() {
        args.push("--".into());
        args.extend(target.iter().cloned());
    }
    let run = run(&args);
    let report = run.json();
    (run, report)
}

// ---------------------------------------------------------------------------------------------
// Reading the report
// ---------------------------------------------------------------------------------------------

/// The checks of target `i`.
pub fn checks(report: &Value, i: usize) -> &Vec<Value> {
    report["targets"][i]["checks"]
        .as_array()
        .unwrap_or_else(|| panic!("no checks array for target {i}: {report:#}"))
}

/// The check `id` of the first target.
pub fn find<'a>(report: &'a Value, id: &str) -> &'a Value {
    checks(report, 0)
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("no check {id} in the report:\n{}", describe(report)))
}

/// The status (`PASS`, `FAIL`, ...) of the check `id` of the first target.
pub fn status<'a>(report: &'a Value, id: &str) -> &'a str {
    find(report, id)["status"].as_str().unwrap()
}

/// The ids of the first target's checks with `status`.
pub fn with_status<'a>(report: &'a Value, status: &str) -> Vec<&'a str> {
    checks(report, 0)
        .iter()
        .filter(|c| c["status"] == status)
        .map(|c| c["id"].as_str().unwrap())
        .collect()
}

/// Every check that did not pass, one line each, for assertion messages.
pub fn describe(report: &Value) -> String {
    let mut out = String::new();
    for t in report["targets"].as_array().into_iter().flatten() {
        out.push_str(&format!(
            "target {} ({}, {}, {}): summary {}, startError {}, skipped {}\n",
            t["name"],
            t["framing"],
            t["profile"],
            t["command"],
            t["summary"],
            t["startError"],
            t["skipped"]
        ));
        for c in t["checks"].as_array().into_iter().flatten() {
            if c["status"] != "PASS" {
                out.push_str(&format!(
                    "  {} {}: expected {} / actual {} / detail {}\n",
                    c["status"].as_str().unwrap_or("?"),
                    c["id"].as_str().unwrap_or("?"),
                    c["expected"],
                    c["actual"],
                    c["detail"]
                ));
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Assertions about a run
// ---------------------------------------------------------------------------------------------

pub fn assert_exit(run: &Run, code: i32) {
    assert_eq!(run.code, code, "wrong exit code\n{}", run.context());
}

/// No check FAILed or WARNed.
pub fn assert_clean(run: &Run, report: &Value) {
    for t in report["targets"].as_array().unwrap() {
        for c in t["checks"].as_array().unwrap() {
            assert!(
                c["status"] != "FAIL" && c["status"] != "WARN",
                "{} {} against {}\n{}",
                c["status"],
                c["id"],
                t["name"],
                run.context()
            );
        }
    }
}

/// Each of `ids` has `want` as its status.
pub fn assert_status(run: &Run, report: &Value, ids: &[&str], want: &str) {
    for id in ids {
        assert_eq!(
            status(report, id),
            want,
            "{id} should be {want}\n{}",
            run.context()
        );
    }
}

/// The run failed, and because of each of `ids` (a FAIL that is not an expected failure).
pub fn assert_caught(run: &Run, report: &Value, ids: &[&str]) {
    assert_status(run, report, ids, "FAIL");
    for id in ids {
        assert_eq!(find(report, id)["expectedFailure"], false);
        assert!(
            find(report, id)["expected"].is_string() && find(report, id)["actual"].is_string(),
            "a FAIL says what was expected and what came back\n{}",
            run.context()
        );
    }
    assert_eq!(report["failed"], true, "{}", run.context());
    assert_eq!(report["targets"][0]["failed"], true);
    assert_eq!(report["targets"][0]["startError"], Value::Null);
    assert_exit(run, 1);
}

// ---------------------------------------------------------------------------------------------
// Temporary files
// ---------------------------------------------------------------------------------------------

/// A directory under the system temp dir, removed on drop.
#[derive(Debug)]
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        let path = std::env::temp_dir().join(format!(
            "mcp-conformance-tests-{}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    /// Writes `contents` to `name` in this directory and returns its path.
    pub fn write(&self, name: &str, contents: &str) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, contents).unwrap();
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
