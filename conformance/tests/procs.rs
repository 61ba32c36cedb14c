//! The harness's own processes and ports: every server it starts (through `sh -c`, through
//! `npx`, over stdio or for `--url`) is ended with everything it started, at the end of the
//! run and when the harness is interrupted; a `--url` port already in use is refused before
//! the command starts; a `--url` without a command is waited for, and "connection refused"
//! said. Real child processes and real sockets; the processes write their pids, and each test
//! waits for those processes to be gone (a deadline only turns a leak into a failure).
#![allow(clippy::unwrap_used)]

mod common;

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::{assert_exit, check, echo_server, harness, run_command, TempDir, TIMEOUT};
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;

/// How long processes may take to be gone, or files to appear: a failure guard, not a wait.
const DEADLINE: Duration = Duration::from_secs(30);

/// A loopback port nothing listens on (bound, then released).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Is `pid` gone? A zombie (ended, not yet reaped by an init that does not reap) is.
fn gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X'])),
    }
}

/// The pids in `dir`'s `*.pid` files (one or more per line each), once `expected` files hold
/// at least `lines` pids in all.
fn pids(dir: &Path, expected: &[&str], lines: usize) -> Vec<i32> {
    let started = Instant::now();
    loop {
        let read: Vec<i32> = expected
            .iter()
            .filter_map(|name| std::fs::read_to_string(dir.join(name)).ok())
            .flat_map(|text| {
                text.lines()
                    .filter_map(|l| l.trim().parse().ok())
                    .collect::<Vec<i32>>()
            })
            .collect();
        let files = expected.iter().filter(|n| dir.join(n).exists()).count();
        if files == expected.len() && read.len() >= lines {
            return read;
        }
        assert!(
            started.elapsed() < DEADLINE,
            "the server processes did not write {expected:?} in {dir:?}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Waits until every one of `pids` is gone; fails naming those still running.
fn assert_all_gone(pids: &[i32], context: &str) {
    let started = Instant::now();
    loop {
        let left: Vec<i32> = pids.iter().copied().filter(|p| !gone(*p)).collect();
        if left.is_empty() {
            return;
        }
        if started.elapsed() > DEADLINE {
            for pid in &left {
                let _ = nix::sys::signal::kill(Pid::from_raw(*pid), Signal::SIGKILL);
            }
            panic!("processes {left:?} outlived the run (now killed)\n{context}");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// `sh -c SCRIPT sh ARGS...`: the script sees ARGS as `$1`, `$2`, ….
fn sh(script: &str, args: &[&str]) -> Vec<String> {
    let mut cmd = vec![
        "sh".to_owned(),
        "-c".to_owned(),
        script.to_owned(),
        "sh".to_owned(),
    ];
    cmd.extend(args.iter().map(|a| (*a).to_owned()));
    cmd
}

/// A shell that starts an idle background child and the HTTP echo server on `addr`, writes
/// all three pids, and waits: signalling only the shell would leave both running.
const SHELL_WITH_HTTP_SERVER: &str = "sleep 100000 & echo $! > \"$1/idle.pid\"; \
     \"$2\" --http \"$3\" & echo $! > \"$1/server.pid\"; echo $$ > \"$1/shell.pid\"; wait";

#[test]
fn an_http_server_started_through_sh_is_ended_with_what_it_started() {
    let dir = TempDir::new("procs-sh-http");
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let addr = format!("127.0.0.1:{port}");
    let dir_arg = dir.path().display().to_string();
    let echo = echo_server().display().to_string();
    let target = sh(SHELL_WITH_HTTP_SERVER, &[&dir_arg, &echo, &addr]);
    let (run, _) = check(&["--url", &url, "--only", "lifecycle.ping"], &target);
    assert_exit(&run, 0);
    let pids = pids(dir.path(), &["idle.pid", "server.pid", "shell.pid"], 3);
    assert_all_gone(&pids, &run.context());
}

#[test]
fn an_http_server_started_through_npx_is_ended_with_what_it_started() {
    if Command::new("npx").arg("--version").output().is_err() {
        eprintln!("skipped: npx is not installed");
        return;
    }
    let dir = TempDir::new("procs-npx-http");
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let package = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/npx_server");
    let env = [
        format!("PID_DIR={}", dir.path().display()),
        format!("SERVER={}", echo_server().display()),
        format!("SERVER_ARGS=--http\n127.0.0.1:{port}"),
    ];
    let mut options = vec!["--url", url.as_str(), "--only", "lifecycle.ping"];
    for kv in &env {
        options.extend(["--env", kv.as_str()]);
    }
    // --offline: the package is a directory of the repository, nothing to download.
    let target = [
        "npx".to_owned(),
        "--yes".to_owned(),
        "--offline".to_owned(),
        package.display().to_string(),
    ];
    let (run, _) = check(&options, &target);
    assert_exit(&run, 0);
    let pids = pids(dir.path(), &["node.pid", "server.pid", "idle.pid"], 3);
    assert_all_gone(&pids, &run.context());
}

#[test]
fn stdio_servers_are_ended_with_what_they_started_even_after_they_exit() {
    let dir = TempDir::new("procs-sh-stdio");
    // Each start leaves an idle child behind, also when the server exits on its own (stdin
    // closed, SIGTERM): only ending the group ends it.
    let script = "sleep 100000 </dev/null >/dev/null 2>&1 & echo $! >> \"$1/idle.pid\"; \
                  exec \"$2\"";
    let dir_arg = dir.path().display().to_string();
    let echo = echo_server().display().to_string();
    let (run, report) = check(&["--profile", "generic"], &sh(script, &[&dir_arg, &echo]));
    assert_exit(&run, 0);
    let starts = report["targets"][0]["starts"]["count"].as_u64().unwrap();
    assert!(starts >= 3, "{starts} starts\n{}", run.context());
    let pids = pids(dir.path(), &["idle.pid"], starts as usize);
    assert_all_gone(&pids, &run.context());
}

/// Runs the harness with `args` in a group of its own, as a shell runs a foreground job;
/// once `ready` holds, the group gets SIGINT, as a terminal's Ctrl-C sends it.
fn interrupted(args: &[String], ready: impl Fn() -> bool) -> common::Run {
    let mut cmd = Command::new(harness());
    cmd.args(args);
    let mut sent = false;
    run_command(cmd, args.to_vec(), |pid| {
        if !sent && ready() {
            sent = true;
            let group = Pid::from_raw(i32::try_from(pid).unwrap());
            killpg(group, Signal::SIGINT).unwrap();
        }
    })
}

#[test]
fn ctrl_c_ends_a_url_server_that_never_listens() {
    let dir = TempDir::new("procs-int-http");
    let port = free_port();
    let script = "sleep 100000 & echo $! > \"$1/idle.pid\"; echo $$ > \"$1/shell.pid\"; wait";
    let mut args: Vec<String> = ["--url", &format!("http://127.0.0.1:{port}/mcp")]
        .map(str::to_owned)
        .to_vec();
    args.extend([
        "--start-timeout".to_owned(),
        "600".to_owned(),
        "--".to_owned(),
    ]);
    args.extend(sh(script, &[&dir.path().display().to_string()]));
    let both = || dir.path().join("idle.pid").exists() && dir.path().join("shell.pid").exists();
    let run = interrupted(&args, both);
    assert_exit(&run, 130);
    assert!(
        run.stderr
            .contains("interrupted (SIGINT): ending the servers it started"),
        "{}",
        run.context()
    );
    let pids = pids(dir.path(), &["idle.pid", "shell.pid"], 2);
    assert_all_gone(&pids, &run.context());
}

#[test]
fn ctrl_c_ends_stdio_servers_that_never_answer() {
    let dir = TempDir::new("procs-int-stdio");
    // Two start-up processes, each silent on stdout; their idle children ignore stdin.
    let script = "sleep 100000 </dev/null >/dev/null 2>&1 & echo $! >> \"$1/idle.pid\"; \
                  echo $$ >> \"$1/shell.pid\"; exec cat >/dev/null";
    let mut args: Vec<String> = ["--start-timeout", "600", "--timeout", TIMEOUT, "--"]
        .map(str::to_owned)
        .to_vec();
    args.extend(sh(script, &[&dir.path().display().to_string()]));
    let lines = |name: &str| {
        std::fs::read_to_string(dir.path().join(name)).map_or(0, |t| t.lines().count())
    };
    let run = interrupted(&args, || lines("idle.pid") == 2 && lines("shell.pid") == 2);
    assert_exit(&run, 130);
    let pids = pids(dir.path(), &["idle.pid", "shell.pid"], 4);
    assert_all_gone(&pids, &run.context());
}

#[test]
fn a_url_port_already_in_use_is_refused_before_the_command_starts() {
    let dir = TempDir::new("procs-in-use");
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let started = dir.path().join("started");
    let target = sh("touch \"$1\"", &[&started.display().to_string()]);
    let (run, report) = check(&["--url", &url], &target);
    assert_exit(&run, 3);
    let error = report["targets"][0]["startError"].as_str().unwrap();
    assert!(
        error.starts_with(&format!(
            "127.0.0.1:{port} already accepts connections, before the server was started"
        )),
        "{}",
        run.context()
    );
    assert!(
        error.contains("give the server and --url a free port"),
        "{error}"
    );
    assert!(!started.exists(), "the command was started");
    drop(listener);
}

#[test]
fn a_url_without_a_command_where_nothing_listens_says_connection_refused() {
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let (run, report) = check(&["--url", &url, "--start-timeout", "2"], &[]);
    assert_exit(&run, 3);
    assert!(
        run.stderr.contains(&format!(
            "mcp-conformance: 127.0.0.1:{port}: connection refused; waiting up to 2s \
             (--start-timeout) for a server to listen there"
        )),
        "{}",
        run.context()
    );
    assert_eq!(
        report["targets"][0]["startError"],
        format!(
            "nothing accepts connections at 127.0.0.1:{port} (connection refused) after 2s \
             (--start-timeout): start the server first, or give the command that starts it \
             after `--` (mcp-conformance --url URL -- COMMAND...)"
        ),
        "{}",
        run.context()
    );
}

#[test]
fn a_url_without_a_command_finds_a_server_that_starts_while_it_waits() {
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let mut harness = Command::new(harness())
        .args([
            "--url",
            &url,
            "--start-timeout",
            "600",
            "--only",
            "lifecycle.ping",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let stderr = harness.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let said = |line: &String| line.contains("connection refused; waiting up to 600s");
    let started = Instant::now();
    loop {
        let left = DEADLINE.saturating_sub(started.elapsed());
        match rx.recv_timeout(left) {
            Ok(line) if said(&line) => break,
            Ok(_) => {}
            Err(e) => {
                let _ = harness.kill();
                panic!("the harness did not say it waits for the port ({e})");
            }
        }
    }
    let mut server = Command::new(echo_server())
        .args(["--http", &format!("127.0.0.1:{port}")])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = harness.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > DEADLINE {
            let _ = harness.kill();
            let _ = server.kill();
            panic!("the harness did not end after the server started");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let _ = server.kill();
    let _ = server.wait();
    let rest: Vec<String> = rx.try_iter().collect();
    assert_eq!(status.code(), Some(0), "stderr:\n{}", rest.join("\n"));
}
