//! `mcp-conformance observe`: the real binary in front of the real `mcp-echo-server`, over real
//! pipes and sockets. Traffic must pass byte for byte, the report must judge what the host did,
//! signals must reach the server, and nothing may be left running. Every wait is on an event
//! (a reply, a line, the report's content), bounded only to turn a hang into a failure.
#![allow(clippy::unwrap_used)]

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use futures::StreamExt as _;
use serde_json::{json, Value};

use common::{echo_server, harness, TempDir};

/// The longest a wait may take before the test fails (a hang, not a timing assumption).
const LIMIT: Duration = Duration::from_secs(30);

fn initialize(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "observe-test", "version": "1.0.0"}}})
}

fn initialized() -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
}

fn request(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// Runs `cmd` with `input` on stdin (then closed), bounded: its exit, stdout and stderr.
fn run_with_input(mut cmd: Command, input: Vec<u8>) -> Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let (tx, rx) = mpsc::channel();
    let pid = child.id();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(LIMIT) {
        Ok(out) => out.unwrap(),
        Err(_) => {
            kill_group(pid);
            panic!("the command still ran after {LIMIT:?}");
        }
    }
}

fn kill_group(pid: u32) {
    let _ = nix::sys::signal::killpg(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGKILL,
    );
}

fn observer(args: &[&str]) -> Command {
    let mut cmd = Command::new(harness());
    cmd.arg("observe")
        .args(args)
        .env("NO_COLOR", "1")
        .env_remove("RUST_LOG");
    cmd
}

fn direct_vs_observed(input: &[u8]) {
    let direct = run_with_input(Command::new(echo_server()), input.to_vec());
    let mut cmd = observer(&["--quiet", "--"]);
    cmd.arg(echo_server());
    let observed = run_with_input(cmd, input.to_vec());
    assert!(!direct.stdout.is_empty(), "the server answered nothing");
    assert_eq!(
        String::from_utf8_lossy(&observed.stdout),
        String::from_utf8_lossy(&direct.stdout),
        "stdout differs through the observer"
    );
    assert_eq!(observed.stdout, direct.stdout);
    assert_eq!(observed.status.code(), direct.status.code());
}

#[test]
fn newline_delimited_traffic_passes_byte_for_byte() {
    let mut input = Vec::new();
    for m in [initialize(1), initialized()] {
        input.extend_from_slice(m.to_string().as_bytes());
        input.push(b'\n');
    }
    input.extend_from_slice(b"this is not json\n");
    input.extend_from_slice(format!("{}\r\n", request(2, "tools/list", json!({}))).as_bytes());
    let long = "x".repeat(300_000);
    let call = request(
        3,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": long}}),
    );
    input.extend_from_slice(format!("{call}\n").as_bytes());
    input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"}");
    direct_vs_observed(&input);
}

#[test]
fn content_length_traffic_passes_byte_for_byte() {
    let mut input = Vec::new();
    for m in [
        initialize(1),
        initialized(),
        request(
            2,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "héllo"}}),
        ),
    ] {
        let body = m.to_string();
        input.extend_from_slice(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes());
    }
    direct_vs_observed(&input);
}

/// An observer in front of the echo server, driven message by message like a host.
struct Host {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    dir: TempDir,
}

impl Host {
    fn start(name: &str) -> Host {
        let dir = TempDir::new(name);
        let mut cmd = observer(&["--quiet", "--report"]);
        cmd.arg(dir.path().join("report.json"))
            .arg("--transcript")
            .arg(dir.path().join("transcript.jsonl"))
            .arg("--")
            .arg(echo_server());
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Host {
            child,
            stdin,
            lines,
            dir,
        }
    }

    fn report_path(&self) -> PathBuf {
        self.dir.path().join("report.json")
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(format!("{message}\n").as_bytes()).unwrap();
        stdin.flush().unwrap();
    }

    /// The next line the server wrote, as JSON.
    fn reply(&self) -> Value {
        let line = self
            .lines
            .recv_timeout(LIMIT)
            .expect("a reply through the observer");
        serde_json::from_str(&line).unwrap()
    }

    fn call(&mut self, message: &Value) -> Value {
        self.send(message);
        let reply = self.reply();
        assert_eq!(reply["id"], message["id"], "{reply}");
        reply
    }

    fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Waits for the observer's exit: its code.
    fn exit(mut self) -> (i32, Value, TempDir) {
        let started = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if started.elapsed() > LIMIT {
                kill_group(self.child.id());
                panic!("the observer still ran after {LIMIT:?}");
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        let code = status.code().expect("the observer exits, not killed");
        let report = read_report(&self.report_path()).expect("the final report");
        (code, report, self.dir)
    }

    fn handshake(&mut self) {
        let reply = self.call(&initialize(1));
        assert!(reply["result"]["serverInfo"].is_object(), "{reply}");
        self.send(&initialized());
    }
}

fn read_report(path: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(path).ok()?;
    serde_json::from_str(&text).ok()
}

fn checks(report: &Value) -> &Vec<Value> {
    report["targets"][0]["checks"].as_array().unwrap()
}

fn status_of<'a>(report: &'a Value, id: &str) -> &'a str {
    checks(report)
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("no check {id} in {report}"))["status"]
        .as_str()
        .unwrap()
}

fn failing(report: &Value) -> Vec<String> {
    let mut ids: Vec<String> = checks(report)
        .iter()
        .filter(|c| c["status"] == "FAIL")
        .map(|c| c["id"].as_str().unwrap().to_owned())
        .collect();
    ids.sort();
    ids
}

fn has_check(report: &Value, id: &str) -> bool {
    checks(report).iter().any(|c| c["id"] == id)
}

#[test]
fn a_good_session_passes_and_exits_with_the_servers_code() {
    let mut host = Host::start("good");
    host.handshake();
    let tools = host.call(&request(2, "tools/list", json!({})));
    assert_eq!(tools["result"]["tools"][0]["name"], "echo");
    let echoed = host.call(&request(
        3,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "hi"}}),
    ));
    assert_eq!(echoed["result"]["structuredContent"]["text"], "hi");
    host.close_stdin();
    let (code, report, dir) = host.exit();
    assert_eq!(code, 0, "the echo server exits 0 at EOF");
    assert_eq!(failing(&report), Vec::<String>::new(), "{report:#}");
    for c in checks(&report) {
        let status = c["status"].as_str().unwrap();
        assert!(
            ["PASS", "SKIP", "N/A", "INFO"].contains(&status),
            "{} is {status}: {c}",
            c["id"]
        );
    }
    for id in [
        "client.initialize-first",
        "client.initialize-shape",
        "client.initialized-sent",
        "server.responses-match-requests",
        "server.jsonrpc-shape",
        "server.initialize-result-shape",
        "server.stdout-only-messages",
    ] {
        assert_eq!(status_of(&report, id), "PASS", "{id}: {report:#}");
    }
    assert_eq!(
        report["targets"][0]["serverInfo"]["name"],
        "mcp-echo-server"
    );
    assert_eq!(report["targets"][0]["eras"], json!(["legacy"]));
    let transcript = std::fs::read_to_string(dir.path().join("transcript.jsonl")).unwrap();
    let lines: Vec<Value> = transcript
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let froms: Vec<&str> = lines.iter().map(|l| l["from"].as_str().unwrap()).collect();
    assert_eq!(
        froms.iter().filter(|f| **f == "client").count(),
        4,
        "{transcript}"
    );
    assert_eq!(
        froms.iter().filter(|f| **f == "server").count(),
        3,
        "{transcript}"
    );
    assert!(
        transcript.contains("client closed the server's stdin"),
        "{transcript}"
    );
    assert!(
        transcript.contains("server exited (Some(0))"),
        "{transcript}"
    );
}

/// A session recorded with `--transcript` replays against the server (`--scenario-file
/// FILE.jsonl`): what the host sent is sent again, and the server answers in kind.
#[test]
fn a_recorded_session_replays_as_a_scenario() {
    let mut host = Host::start("replay");
    host.handshake();
    host.call(&request(2, "tools/list", json!({})));
    host.call(&request(
        3,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "again"}}),
    ));
    host.call(&request(
        4,
        "tools/call",
        json!({"name": "nope", "arguments": {}}),
    ));
    host.close_stdin();
    let (code, _report, dir) = host.exit();
    assert_eq!(code, 0);
    let recorded = dir.path().join("session.jsonl");
    std::fs::copy(dir.path().join("transcript.jsonl"), &recorded).unwrap();
    let run = common::run(&[
        "--format".to_owned(),
        "json".to_owned(),
        "--only".to_owned(),
        "replay.*".to_owned(),
        "--scenario-file".to_owned(),
        recorded.display().to_string(),
        "--".to_owned(),
        echo_server().display().to_string(),
    ]);
    let report = run.json();
    assert_eq!(run.code, 0, "{report:#}");
    assert_eq!(status_of(&report, "replay.session"), "PASS", "{report:#}");
}

#[test]
fn the_exit_code_is_the_servers() {
    let mut cmd = observer(&["--quiet", "--", "sh", "-c", "cat >/dev/null; exit 7"]);
    cmd.stdin(Stdio::null());
    let out = run_with_input(cmd, Vec::new());
    assert_eq!(out.status.code(), Some(7));
}

#[test]
fn a_server_that_exits_by_itself_ends_the_observer_with_its_code() {
    // The host keeps stdin open: the server's exit alone ends the session.
    let mut child = observer(&["--quiet", "--", "sh", "-c", "echo '{}'; exit 5"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    let _stdin = child.stdin.take();
    let mut stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut out = String::new();
        let _ = stdout.read_to_string(&mut out);
        let _ = tx.send(out);
    });
    let out = rx.recv_timeout(LIMIT).unwrap_or_else(|_| {
        kill_group(child.id());
        panic!("the observer's stdout stayed open after the server exited")
    });
    assert_eq!(out, "{}\n");
    assert_eq!(child.wait().unwrap().code(), Some(5));
}

#[test]
fn a_server_that_cannot_start_exits_3() {
    let out = run_with_input(
        observer(&["--quiet", "--", "/nonexistent/mcp-server"]),
        Vec::new(),
    );
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot start"));
}

#[test]
fn a_bad_host_fails_exactly_its_checks() {
    let mut host = Host::start("bad");
    host.call(&initialize(1));
    // No notifications/initialized, and the id 1 used again.
    host.call(&request(1, "tools/list", json!({})));
    host.close_stdin();
    let (code, report, _dir) = host.exit();
    assert_eq!(code, 0);
    let mut expected: Vec<String> = ["client.initialized-sent", "client.ids-unique"]
        .into_iter()
        .filter(|id| has_check(&report, id))
        .map(str::to_owned)
        .collect();
    expected.sort();
    assert!(expected.contains(&"client.initialized-sent".to_owned()));
    assert_eq!(failing(&report), expected, "{report:#}");
}

fn server_pid(observer_pid: u32) -> u32 {
    let started = Instant::now();
    loop {
        let children = std::fs::read_dir(format!("/proc/{observer_pid}/task"))
            .unwrap()
            .flatten()
            .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
            .flat_map(|c| {
                c.split_whitespace()
                    .filter_map(|p| p.parse::<u32>().ok())
                    .collect::<Vec<_>>()
            })
            .next();
        if let Some(pid) = children {
            return pid;
        }
        assert!(started.elapsed() < LIMIT, "the observer started no server");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn alive(pid: u32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let state = stat
        .rsplit_once(')')
        .map(|(_, f)| f.trim_start().chars().next());
    matches!(state, Some(Some(s)) if s != 'Z' && s != 'X')
}

#[test]
fn sigterm_is_forwarded_and_the_report_written() {
    let mut host = Host::start("sigterm");
    host.handshake();
    // A ping answered through the observer: it has read `initialized`, sent before it on the
    // same pipe, so the signal cannot overtake it.
    host.call(&request(2, "ping", json!({})));
    let server = server_pid(host.child.id());
    assert!(alive(server));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(host.child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let (code, report, dir) = host.exit();
    assert!(!alive(server), "the server {server} is still running");
    let transcript = std::fs::read_to_string(dir.path().join("transcript.jsonl")).unwrap();
    assert!(transcript.contains("client sent SIGTERM"), "{transcript}");
    let exited = if code == 143 {
        "server exited (None)".to_owned()
    } else {
        format!("server exited (Some({code}))")
    };
    assert!(transcript.contains(&exited), "exit {code}: {transcript}");
    assert_eq!(status_of(&report, "client.initialized-sent"), "PASS");
}

#[test]
fn the_report_is_readable_while_the_session_is_open() {
    let mut host = Host::start("incremental");
    host.handshake();
    host.call(&request(2, "tools/list", json!({})));
    let path = host.report_path();
    let started = Instant::now();
    let report = loop {
        if let Some(report) = read_report(&path) {
            let open = checks(&report).iter().any(|c| {
                c["id"] == "observer.complete"
                    && c["detail"]
                        .as_str()
                        .is_some_and(|d| d.contains("still open"))
            });
            if open && status_of(&report, "server.responses-match-requests") == "PASS" {
                break report;
            }
        }
        assert!(
            started.elapsed() < LIMIT,
            "no report with the session's first replies at {}",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(status_of(&report, "client.initialize-first"), "PASS");
    assert_eq!(status_of(&report, "client.initialized-sent"), "PASS");
    host.close_stdin();
    let (code, report, _dir) = host.exit();
    assert_eq!(code, 0);
    assert!(checks(&report)
        .iter()
        .any(|c| c["id"] == "observer.complete"
            && c["detail"] == "every message of the session was judged"));
}

/// Reads lines of `pipe` until one contains `marker`: that line.
fn line_with(pipe: impl Read + Send + 'static, marker: &'static str) -> String {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut sent = false;
        for line in BufReader::new(pipe).lines() {
            let Ok(line) = line else { return };
            if !sent && line.contains(marker) {
                let _ = tx.send(line);
                sent = true;
            }
        }
    });
    rx.recv_timeout(LIMIT)
        .unwrap_or_else(|_| panic!("no line with {marker:?}"))
}

/// A child process in a group of its own, killed with its group when dropped.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        kill_group(self.0.id());
        let _ = self.0.wait();
    }
}

/// Starts `cmd` in a group of its own; the first stderr line holding `marker`, after it.
fn start_announcing(mut cmd: Command, marker: &'static str) -> (Running, String) {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let line = line_with(child.stderr.take().unwrap(), marker);
    let rest = line.split(marker).nth(1).unwrap().trim().to_owned();
    (Running(child), rest)
}

fn start_http_server() -> (Running, String) {
    let mut cmd = Command::new(echo_server());
    cmd.args(["--http", "127.0.0.1:0"]);
    start_announcing(cmd, "listening on ")
}

fn start_http_observer(upstream: &str, report: &Path) -> (Running, String) {
    let mut cmd = observer(&["--quiet", "--listen", "127.0.0.1:0", "--upstream", upstream]);
    cmd.arg("--report").arg(report);
    let (child, rest) = start_announcing(cmd, "observing on ");
    let base = rest
        .split_whitespace()
        .next()
        .unwrap()
        .trim_end_matches('/');
    let url = format!("{base}/mcp");
    (child, url)
}

const MCP_HEADERS: &[&str] = &["content-type", "mcp-protocol-version"];

async fn post(
    client: &reqwest::Client,
    url: &str,
    session: Option<&str>,
    body: &Value,
) -> (u16, Vec<(String, String)>, Option<String>, String) {
    let mut req = client
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(body.to_string());
    if let Some(s) = session {
        req = req
            .header("mcp-session-id", s)
            .header("mcp-protocol-version", "2025-11-25");
    }
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    let headers = MCP_HEADERS
        .iter()
        .filter_map(|h| {
            resp.headers()
                .get(*h)
                .map(|v| ((*h).to_owned(), v.to_str().unwrap().to_owned()))
        })
        .collect();
    let session = resp
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_owned());
    (status, headers, session, resp.text().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_traffic_is_forwarded_unchanged_and_judged() {
    let dir = TempDir::new("http");
    let report_path = dir.path().join("report.json");
    let (_server, upstream) = start_http_server();
    let (mut proxy, url) = start_http_observer(&upstream, &report_path);
    let client = reqwest::Client::new();
    let mut sessions = Vec::new();
    let mut answers = Vec::new();
    for target in [&upstream, &url] {
        let (status, headers, session, body) = post(&client, target, None, &initialize(1)).await;
        let session = session.expect("a session id");
        let ready = post(&client, target, Some(&session), &initialized()).await;
        let list = post(
            &client,
            target,
            Some(&session),
            &request(2, "tools/list", json!({})),
        )
        .await;
        let call = post(
            &client,
            target,
            Some(&session),
            &request(
                3,
                "tools/call",
                json!({"name": "echo", "arguments": {"text": "over http"}}),
            ),
        )
        .await;
        answers.push(vec![
            (status, headers, body),
            (ready.0, ready.1, ready.3),
            (list.0, list.1, list.3),
            (call.0, call.1, call.3),
        ]);
        sessions.push(session);
    }
    assert_eq!(
        answers[0], answers[1],
        "responses differ through the observer"
    );
    assert_eq!(answers[1][0].0, 200);
    assert_eq!(answers[1][1].0, 202);
    assert!(answers[1][3].2.contains("over http"), "{:?}", answers[1][3]);
    // The session ends: DELETE through the observer, then the observer is stopped.
    let deleted = client
        .delete(&url)
        .header("mcp-session-id", &sessions[1])
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .unwrap()
        .status()
        .as_u16();
    assert!(deleted == 200 || deleted == 204, "DELETE got {deleted}");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(proxy.0.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let status = tokio::task::spawn_blocking(move || {
        let status = proxy.0.wait();
        (status, proxy)
    })
    .await
    .unwrap()
    .0
    .unwrap();
    assert_eq!(status.code(), Some(0), "no check failed");
    let report = read_report(&report_path).expect("the report");
    assert_eq!(report["targets"][0]["framing"], "http");
    assert_eq!(
        status_of(&report, "client.initialized-sent"),
        "PASS",
        "{report:#}"
    );
    assert_eq!(
        status_of(&report, "server.responses-match-requests"),
        "PASS"
    );
    assert!(!has_check(&report, "server.stdout-only-messages"));
    let transcript = checks(&report)
        .iter()
        .find(|c| c["id"] == "client.initialize-first")
        .unwrap()["transcript"]
        .to_string();
    for exchange in ["POST /mcp -> 200", "POST /mcp -> 202", "DELETE /mcp -> "] {
        assert!(
            transcript.contains(exchange),
            "{exchange} not in {transcript}"
        );
    }
}

/// `interop/node_modules` (this checkout's, or `MCP_INTEROP_NODE_MODULES`) with the SDK client
/// script beside it, and node on PATH.
fn ts_client() -> Option<PathBuf> {
    let modules = std::env::var_os("MCP_INTEROP_NODE_MODULES")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            common::workspace_root()
                .join("interop")
                .join("node_modules")
        });
    let script = modules.parent()?.join("clients").join("ts_client.mjs");
    let node = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    (modules.join("@modelcontextprotocol/sdk").is_dir() && script.is_file() && node)
        .then_some(script)
}

/// `interop/.venv`'s python (or `MCP_INTEROP_PYTHON`) with the `mcp` SDK, and the client script.
fn py_client() -> Option<(PathBuf, PathBuf)> {
    let python = std::env::var_os("MCP_INTEROP_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| common::workspace_root().join("interop/.venv/bin/python"));
    let script = common::workspace_root().join("interop/clients/py_client.py");
    let sdk = Command::new(&python)
        .args(["-c", "import mcp.client.stdio"])
        .output()
        .is_ok_and(|o| o.status.success());
    (sdk && script.is_file()).then_some((python, script))
}

/// An SDK client (`client ARGS SERVER RESULT_JSON`) spawns the observer as its server: it gets
/// every answer it expects, and its session is judged without a failure.
fn sdk_client_through_the_observer(name: &str, client: &[&Path]) {
    let dir = TempDir::new(name);
    let report = dir.path().join("report.json");
    let wrapper = dir.write(
        "observed-echo",
        &format!(
            "#!/bin/sh\nexec '{}' observe --quiet --report '{}' -- '{}'\n",
            harness().display(),
            report.display(),
            echo_server().display()
        ),
    );
    std::fs::set_permissions(
        &wrapper,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let result = dir.path().join("result.json");
    let mut cmd = Command::new(client[0]);
    cmd.args(&client[1..]).arg(&wrapper).arg(&result);
    let out = run_with_input(cmd, Vec::new());
    assert_eq!(
        out.status.code(),
        Some(0),
        "the {name} client failed through the observer: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let started = Instant::now();
    let report = loop {
        // The client ends the server (stdin closed, perhaps signals): the final report follows.
        let done = |r: &Value| {
            checks(r).iter().any(|c| {
                c["id"] == "observer.complete"
                    && c["detail"] == "every message of the session was judged"
            })
        };
        if let Some(r) = read_report(&report).filter(done) {
            break r;
        }
        assert!(
            started.elapsed() < LIMIT,
            "no final report from the {name} session"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(failing(&report), Vec::<String>::new(), "{report:#}");
    assert_eq!(status_of(&report, "client.initialized-sent"), "PASS");
    assert_eq!(
        status_of(&report, "server.responses-match-requests"),
        "PASS"
    );
}

/// The TypeScript SDK's stdio client: the stack of Claude Code and Cursor.
#[test]
fn the_typescript_sdk_client_through_the_observer() {
    let Some(script) = ts_client() else {
        eprintln!("skipped: the TypeScript SDK (interop/node_modules, or MCP_INTEROP_NODE_MODULES) or node not installed");
        return;
    };
    sdk_client_through_the_observer("ts", &[Path::new("node"), &script]);
}

/// The Python SDK's `ClientSession` over `stdio_client`.
#[test]
fn the_python_sdk_client_through_the_observer() {
    let Some((python, script)) = py_client() else {
        eprintln!("skipped: the Python SDK (interop/.venv, or MCP_INTEROP_PYTHON) not installed");
        return;
    };
    sdk_client_through_the_observer("py", &[&python, &script]);
}

/// What the in-process upstream saw of the request it was sent.
#[derive(Debug, Default)]
struct Seen {
    headers: Vec<(String, String)>,
    path: String,
}

/// An upstream that answers every POST with an SSE stream: one event at once, and a second only
/// when `release` fires. Through the observer, the first must arrive while the second is held.
async fn held_sse_upstream(
    release: std::sync::Arc<tokio::sync::Notify>,
    seen: std::sync::Arc<std::sync::Mutex<Seen>>,
) -> String {
    use axum::body::Body;
    use axum::extract::Request;

    let app = axum::Router::new().fallback(move |request: Request| {
        let release = release.clone();
        let seen = seen.clone();
        async move {
            {
                let mut seen = seen.lock().unwrap();
                seen.path = request.uri().to_string();
                seen.headers = request
                    .headers()
                    .iter()
                    .map(|(n, v)| (n.to_string(), v.to_str().unwrap_or("").to_owned()))
                    .collect();
            }
            let first = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n";
            let second = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n";
            let stream = futures::stream::once(async move { Ok::<_, std::io::Error>(first) })
                .chain(futures::stream::once(async move {
                    release.notified().await;
                    Ok(second)
                }));
            axum::response::Response::builder()
                .header("content-type", "text/event-stream")
                .header("mcp-session-id", "held-1")
                .body(Body::from_stream(stream))
                .unwrap()
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}/mcp")
}

/// An SSE response is streamed through, event by event, not buffered to its end; headers are
/// forwarded (Authorization too) but a secret never reaches the report.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sse_is_streamed_through_and_secrets_stay_out_of_the_report() {
    let release = std::sync::Arc::new(tokio::sync::Notify::new());
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Seen::default()));
    let upstream = held_sse_upstream(release.clone(), seen.clone()).await;
    let dir = TempDir::new("sse");
    let report_path = dir.path().join("report.json");
    let (mut proxy, url) = start_http_observer(&upstream, &report_path);
    let response = reqwest::Client::new()
        .post(format!("{}/elsewhere?x=1", url.trim_end_matches("/mcp")))
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("authorization", "Bearer secret-token-42")
        .header("mcp-protocol-version", "2025-11-25")
        .body(
            request(
                1,
                "tools/call",
                json!({"name": "slow", "arguments": {}, "_meta": {"progressToken": 1}}),
            )
            .to_string(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    assert_eq!(response.headers()["mcp-session-id"], "held-1");
    let mut body = response.bytes_stream();
    let mut got = Vec::new();
    while !String::from_utf8_lossy(&got).contains("notifications/progress") {
        let chunk = tokio::time::timeout(LIMIT, body.next())
            .await
            .expect("the first event through the observer while the second is held")
            .expect("the stream is open")
            .unwrap();
        got.extend_from_slice(&chunk);
    }
    assert!(!String::from_utf8_lossy(&got).contains("\"result\""));
    release.notify_one();
    while let Some(chunk) = tokio::time::timeout(LIMIT, body.next()).await.unwrap() {
        got.extend_from_slice(&chunk.unwrap());
    }
    assert!(String::from_utf8_lossy(&got)
        .ends_with("data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"));
    {
        let seen = seen.lock().unwrap();
        assert_eq!(
            seen.path, "/mcp?x=1",
            "the upstream's path, the client's query"
        );
        let header = |n: &str| {
            seen.headers
                .iter()
                .find(|(k, _)| k == n)
                .map(|(_, v)| v.clone())
        };
        assert_eq!(
            header("authorization").as_deref(),
            Some("Bearer secret-token-42")
        );
        assert_eq!(
            header("mcp-protocol-version").as_deref(),
            Some("2025-11-25")
        );
        // Host is the upstream's, not the observer's (a proxy's one change to the request).
        let authority = upstream
            .trim_start_matches("http://")
            .trim_end_matches("/mcp");
        assert_eq!(header("host").as_deref(), Some(authority));
    }
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(proxy.0.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    tokio::task::spawn_blocking(move || {
        let _ = proxy.0.wait();
        drop(proxy);
    })
    .await
    .unwrap();
    let text = std::fs::read_to_string(&report_path).unwrap();
    assert!(!text.contains("secret-token-42"), "a secret in the report");
    let report: Value = serde_json::from_str(&text).unwrap();
    let transcript = checks(&report)
        .iter()
        .find(|c| c["id"] == "server.responses-match-requests")
        .unwrap()["transcript"]
        .to_string();
    assert!(
        transcript.contains("POST /elsewhere?x=1 -> 200"),
        "{transcript}"
    );
    assert!(
        transcript.contains("notifications/progress"),
        "{transcript}"
    );
    assert_eq!(
        status_of(&report, "server.responses-match-requests"),
        "PASS",
        "{report:#}"
    );
}
