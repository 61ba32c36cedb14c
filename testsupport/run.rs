//! Shared by the harness's and the bench's integration tests (included with `#[path]`): runs a
//! binary under test as a child process in its own process group, stdout and stderr collected,
//! and kills the whole group (failing the test) if it outlives a limit. The limit only turns a
//! hang into a failure; no test judges speed by it.

use std::ffi::OsString;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

/// One finished run of the binary under test.
#[derive(Debug)]
pub struct Run {
    /// The binary's name, for messages.
    pub bin: &'static str,
    pub args: Vec<String>,
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
}

impl Run {
    /// stdout parsed as the JSON report.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "the report of `{} {}` is not JSON ({e}); exit {}\nstdout:\n{}\nstderr:\n{}",
                self.bin,
                self.args.join(" "),
                self.code,
                self.stdout,
                self.stderr
            )
        })
    }
}

/// Runs `bin` (named `name` in messages) with `args`, bounded by `limit`.
pub fn run_args<S: Into<OsString> + Clone>(
    bin: &Path,
    name: &'static str,
    args: &[S],
    limit: Duration,
) -> Run {
    let args: Vec<OsString> = args.iter().cloned().map(Into::into).collect();
    let shown: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let mut cmd = Command::new(bin);
    cmd.args(&args);
    run_bounded(cmd, name, shown, limit, |_| {})
}

/// Runs `cmd` (the binary `bin` with `args` as shown, perhaps behind a wrapper) with stdin
/// empty, `NO_COLOR` set and `RUST_LOG` unset; `tick(pid)` is called every 2 ms while it runs.
/// After `limit` the group is killed and the test fails.
pub fn run_bounded(
    mut cmd: Command,
    bin: &'static str,
    args: Vec<String>,
    limit: Duration,
    mut tick: impl FnMut(u32),
) -> Run {
    let shown = format!("{bin} {}", args.join(" "));
    use std::os::unix::process::CommandExt;
    let started = Instant::now();
    let mut child = cmd
        .env("NO_COLOR", "1")
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start `{shown}`: {e}"));
    let pid = child.id();
    let stdout = drain(child.stdout.take().expect("stdout is piped"));
    let stderr = drain(child.stderr.take().expect("stderr is piped"));
    let status = loop {
        if let Some(status) = child.try_wait().expect("waiting for the child") {
            break status;
        }
        tick(pid);
        if started.elapsed() > limit {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(i32::try_from(pid).expect("a pid fits in i32")),
                nix::sys::signal::Signal::SIGKILL,
            );
            let _ = child.wait();
            panic!("`{shown}` still ran after {limit:?}: killed");
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let elapsed = started.elapsed();
    let collect = |rx: mpsc::Receiver<String>, what: &str| {
        rx.recv_timeout(Duration::from_secs(10))
            .unwrap_or_else(|_| panic!("`{shown}`'s {what} stayed open after it exited"))
    };
    Run {
        bin,
        args,
        code: status
            .code()
            .unwrap_or_else(|| panic!("`{shown}` was killed by a signal: {status}")),
        stdout: collect(stdout, "stdout"),
        stderr: collect(stderr, "stderr"),
        elapsed,
    }
}

fn drain(mut pipe: impl Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        let _ = tx.send(String::from_utf8_lossy(&bytes).into_owned());
    });
    rx
}
