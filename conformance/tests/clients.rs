//! `mcp-conformance client`: the real harness binary judging real client processes over real
//! pipes and sockets: the plain-Python fixture client (correct, and with one `--bug` per client
//! check), our own `agent_demo`, a command that does not exist, and a client that never exits.
#![allow(clippy::unwrap_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use common::{describe, find, run, Run, TempDir};
use serde_json::Value;

/// `tests/fixtures/feature_client.py`.
fn fixture_client() -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("fixtures")
        .join("feature_client.py");
    assert!(path.is_file(), "missing fixture {}", path.display());
    path
}

/// `python3 -S feature_client.py [--bug BUG]`.
fn fixture(bug: Option<&str>) -> Vec<String> {
    let mut cmd = vec![
        "python3".to_owned(),
        "-S".to_owned(),
        fixture_client().display().to_string(),
    ];
    if let Some(bug) = bug {
        cmd.extend(["--bug".to_owned(), bug.to_owned()]);
    }
    cmd
}

/// `mcp-conformance client --format json -q --transport T OPTIONS -- COMMAND`.
fn judge(transport: &str, options: &[&str], command: &[String]) -> (Run, Value) {
    let mut args: Vec<String> = ["client", "--format", "json", "-q", "--transport", transport]
        .map(str::to_owned)
        .to_vec();
    args.extend(options.iter().map(|s| (*s).to_owned()));
    args.push("--".to_owned());
    args.extend(command.iter().cloned());
    let run = run(&args);
    let report = run.json();
    (run, report)
}

fn checks(report: &Value) -> &Vec<Value> {
    report["targets"][0]["checks"].as_array().unwrap()
}

/// Every check passed, or did not apply and says why; exit 0.
fn assert_all_pass(run: &Run, report: &Value) {
    for c in checks(report) {
        let status = c["status"].as_str().unwrap();
        assert!(
            matches!(status, "PASS" | "SKIP" | "N/A" | "INFO"),
            "{status} {}\n{}",
            c["id"],
            run.context()
        );
        if status != "PASS" {
            assert!(
                c["detail"].as_str().is_some_and(|d| !d.is_empty()),
                "{} {status} without a reason\n{}",
                c["id"],
                run.context()
            );
        }
    }
    assert_eq!(run.code, 0, "{}", run.context());
}

#[test]
fn a_correct_client_passes_over_stdio() {
    let (run, report) = judge("stdio", &[], &fixture(None));
    assert_all_pass(&run, &report);
    let target = &report["targets"][0];
    assert_eq!(target["framing"], "stdio");
    assert_eq!(target["name"], "feature_client.py");
    assert_eq!(target["eras"], serde_json::json!(["legacy", "modern"]));
    assert!(target["durationMs"].as_f64().unwrap() > 0.0);
    // The lifecycle checks are judged from what the client really did.
    for id in ["client.initialize-first", "client.initialized-sent"] {
        assert_eq!(find(&report, id)["status"], "PASS", "{}", run.context());
    }
}

#[test]
fn a_correct_client_passes_over_http() {
    let (run, report) = judge("http", &[], &fixture(None));
    assert_all_pass(&run, &report);
    assert_eq!(report["targets"][0]["framing"], "http");
    for id in ["client.initialize-first", "client.initialized-sent"] {
        assert_eq!(find(&report, id)["status"], "PASS", "{}", run.context());
    }
}

/// With `--bug BUG` over `transport`, check `id` has `status` and no other check FAILs or WARNs.
fn assert_bug(bug: &str, transport: &str, id: &str, status: &str) {
    assert_bug_breaks(bug, transport, &[id], status);
}

/// With `--bug BUG` over `transport`, each of `broken` has `status` and no other check FAILs or
/// WARNs.
fn assert_bug_breaks(bug: &str, transport: &str, broken: &[&str], status: &str) {
    let (run, report) = judge(transport, &[], &fixture(Some(bug)));
    let ids: Vec<&str> = checks(&report)
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    for id in broken {
        assert!(
            ids.contains(id),
            "{id} is not in the catalogue yet\n{}",
            describe(&report)
        );
        assert_eq!(
            find(&report, id)["status"],
            status,
            "--bug {bug} over {transport}: {id}\n{}",
            run.context()
        );
    }
    for c in checks(&report) {
        if !broken.iter().any(|id| c["id"] == *id) {
            assert!(
                c["status"] != "FAIL" && c["status"] != "WARN",
                "--bug {bug} over {transport} also broke {}\n{}",
                c["id"],
                run.context()
            );
        }
    }
    assert_eq!(run.code, i32::from(status == "FAIL"), "{}", run.context());
}

/// One test per bug and transport: `bug!(test_name, "bug", "transport", "check id", "STATUS")`.
macro_rules! bug {
    ($(#[$attr:meta])* $name:ident, $bug:literal, $transport:literal, $id:literal, $status:literal) => {
        #[test]
        $(#[$attr])*
        fn $name() {
            assert_bug($bug, $transport, $id, $status);
        }
    };
}

bug!(
    no_initialized_stdio,
    "no-initialized",
    "stdio",
    "client.initialized-sent",
    "FAIL"
);
bug!(
    no_initialized_http,
    "no-initialized",
    "http",
    "client.initialized-sent",
    "FAIL"
);
bug!(
    request_before_initialized_response_stdio,
    "request-before-initialized-response",
    "stdio",
    "client.requests-before-initialized",
    "WARN"
);
bug!(
    stay_after_wrong_version_stdio,
    "stay-after-wrong-version",
    "stdio",
    "client.unsupported-version-disconnect",
    "WARN"
);
bug!(
    stay_after_wrong_version_http,
    "stay-after-wrong-version",
    "http",
    "client.unsupported-version-disconnect",
    "WARN"
);
bug!(
    no_fallback_on_empty_result_stdio,
    "no-fallback-on-empty-result",
    "stdio",
    "client.discover-fallback",
    "WARN"
);
bug!(
    no_fallback_on_empty_result_http,
    "no-fallback-on-empty-result",
    "http",
    "client.discover-fallback",
    "WARN"
);
bug!(
    reuse_ids_stdio,
    "reuse-ids",
    "stdio",
    "client.ids-unique",
    "FAIL"
);
bug!(
    reuse_ids_http,
    "reuse-ids",
    "http",
    "client.ids-unique",
    "FAIL"
);
#[test]
fn null_id_stdio() {
    // Both judges see a null id: it is no MCP request id, and no unique one.
    assert_bug_breaks(
        "null-id",
        "stdio",
        &["client.ids-unique", "client.jsonrpc-shape"],
        "FAIL",
    );
}
bug!(
    no_ping_answer_stdio,
    "no-ping-answer",
    "stdio",
    "client.ping-answered",
    "FAIL"
);
bug!(
    no_ping_answer_http,
    "no-ping-answer",
    "http",
    "client.ping-answered",
    "FAIL"
);
bug!(
    bad_roots_result_stdio,
    "bad-roots-result",
    "stdio",
    "client.server-requests-answered",
    "FAIL"
);
bug!(
    no_cancel_stdio,
    "no-cancel",
    "stdio",
    "client.cancel-on-timeout",
    "WARN"
);
bug!(
    no_cancel_http,
    "no-cancel",
    "http",
    "client.cancel-on-timeout",
    "WARN"
);
bug!(
    cancel_initialize_stdio,
    "cancel-initialize",
    "stdio",
    "client.initialize-not-cancelled",
    "FAIL"
);
bug!(
    modern_no_meta_stdio,
    "modern-no-meta",
    "stdio",
    "client.modern-meta",
    "FAIL"
);
bug!(
    embedded_garbage_line_stdio,
    "embedded-garbage-line",
    "stdio",
    "client.stdio-framing",
    "FAIL"
);
bug!(
    sigterm_without_closing_stdin_stdio,
    "sigterm-without-closing-stdin",
    "stdio",
    "client.stdio-shutdown",
    "WARN"
);
bug!(
    http_accept_json_only,
    "http-accept-json-only",
    "http",
    "client.http-accept",
    "FAIL"
);
bug!(
    http_no_protocol_version_header,
    "http-no-protocol-version-header",
    "http",
    "client.http-protocol-version-header",
    "FAIL"
);
bug!(
    http_no_session_header,
    "http-no-session-header",
    "http",
    "client.http-session-id",
    "FAIL"
);
bug!(
    http_no_reinit_after_404,
    "http-no-reinit-after-404",
    "http",
    "client.http-session-expired",
    "FAIL"
);
bug!(
    http_no_delete,
    "http-no-delete",
    "http",
    "client.http-delete",
    "WARN"
);
bug!(
    http_wrong_mcp_method_header,
    "http-wrong-mcp-method-header",
    "http",
    "client.http-modern-headers",
    "FAIL"
);
bug!(
    progress_token_reuse_stdio,
    "progress-token-reuse",
    "stdio",
    "client.progress-tokens-unique",
    "FAIL"
);
bug!(
    undeclared_method_stdio,
    "undeclared-method",
    "stdio",
    "client.negotiated-capabilities",
    "FAIL"
);

#[test]
fn list_shows_the_client_checks_and_the_scenarios() {
    let run = run(&["client", "--list"]);
    assert_eq!(run.code, 0, "{}", run.context());
    for word in [
        "client.initialize-first",
        "MUST",
        "spec: 2025-11-25 basic/lifecycle.mdx",
        "initialize",
        "tools_call",
        "discover-empty-result",
        "timeout",
        "wrong-version",
        "modern",
        "session-expired",
        "[http only]",
    ] {
        assert!(
            run.stdout.contains(word),
            "{word:?} missing\n{}",
            run.stdout
        );
    }
    // The server CLI is untouched: `client` is not one of its options.
    let run = common::run(&["--list"]);
    assert_eq!(run.code, 0);
    assert!(!run.stdout.contains("client.initialize-first"));
}

#[test]
fn usage_errors_exit_2() {
    for args in [
        vec!["client", "--scenario", "nope", "--", "true"],
        vec!["client", "--scenario", "session-expired", "--", "true"],
        vec!["client", "--only", "no.such.check", "--", "true"],
        vec!["client"],
    ] {
        let run = run(&args);
        assert_eq!(run.code, 2, "{}", run.context());
        assert!(
            run.stderr.contains("mcp-conformance client:"),
            "{}",
            run.context()
        );
    }
}

#[test]
fn a_client_command_that_does_not_exist_exits_3_and_says_why() {
    let run = run(&["client", "--", "/nonexistent/mcp-client-xyz", "--flag"]);
    assert_eq!(run.code, 3, "{}", run.context());
    assert!(
        run.stderr
            .contains("cannot start the client command `/nonexistent/mcp-client-xyz --flag`"),
        "{}",
        run.context()
    );
    assert!(
        run.stderr.contains("No such file or directory"),
        "{}",
        run.context()
    );
    assert!(
        run.stderr.contains("exists and is executable"),
        "{}",
        run.context()
    );
    // With --format json the report says so too.
    let (run, report) = judge("stdio", &[], &["/nonexistent/mcp-client-xyz".to_owned()]);
    assert_eq!(run.code, 3, "{}", run.context());
    let error = report["targets"][0]["startError"].as_str().unwrap_or("");
    assert!(
        error.contains("No such file or directory"),
        "{}",
        run.context()
    );
    assert_eq!(report["failed"], true);
}

#[test]
fn a_client_that_dies_at_once_everywhere_exits_3_with_its_output() {
    let run = run(&["client", "--", "python3", "-S", "/nonexistent/client.py"]);
    assert_eq!(run.code, 3, "{}", run.context());
    assert!(
        run.stderr.contains("could not be started"),
        "{}",
        run.context()
    );
    assert!(
        run.stderr.contains("/nonexistent/client.py"),
        "{}",
        run.context()
    );
}

/// A client that spawns the relay, writes both pids to a file and then hangs.
const HANGING_CLIENT: &str = r#"
import os, subprocess, sys, time
relay = subprocess.Popen([sys.argv[-1]], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write("%d %d\n" % (os.getpid(), relay.pid))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
while True:
    time.sleep(1)
"#;

fn alive(pid: i32) -> bool {
    // A zombie is not running: read its state.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, rest)| rest.trim_start().to_owned())
        })
        .is_some_and(|rest| !rest.starts_with('Z') && !rest.starts_with('X'))
}

#[test]
fn a_client_that_never_exits_is_stopped_at_the_bound_and_nothing_is_left() {
    let tmp = TempDir::new("hanging-client");
    let script = tmp.write("hang.py", HANGING_CLIENT);
    let pids = tmp.path().join("pids");
    let command = vec![
        "python3".to_owned(),
        "-S".to_owned(),
        script.display().to_string(),
        pids.display().to_string(),
    ];
    let (run, report) = judge(
        "stdio",
        &["--timeout", "2", "--scenario", "initialize"],
        &command,
    );
    let text = std::fs::read_to_string(&pids).unwrap();
    let pids: Vec<i32> = text
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    assert_eq!(pids.len(), 2);
    for pid in pids {
        assert!(
            !alive(pid),
            "process {pid} is still running\n{}",
            run.context()
        );
    }
    let transcript = find(&report, "client.initialize-first")["transcript"].to_string();
    assert!(
        transcript.contains("the scenario's time bound passed"),
        "{}",
        run.context()
    );
    // Nothing was judged, nothing failed.
    assert_eq!(run.code, 0, "{}", run.context());
}

#[test]
fn expected_failures_and_stale_ones() {
    let tmp = TempDir::new("client-baseline");
    let baseline = tmp.write(
        "baseline.txt",
        "# known\nclient.initialized-sent  the fixture's bug\n",
    );
    let baseline = baseline.display().to_string();
    let options = ["--expected-failures", baseline.as_str()];
    let (run, report) = judge("stdio", &options, &fixture(Some("no-initialized")));
    assert_eq!(run.code, 0, "{}", run.context());
    let check = find(&report, "client.initialized-sent");
    assert_eq!(check["status"], "FAIL");
    assert_eq!(check["expectedFailure"], true);
    let (run, report) = judge("stdio", &options, &fixture(None));
    assert_eq!(run.code, 1, "{}", run.context());
    assert_eq!(
        report["targets"][0]["staleExpectedFailures"],
        serde_json::json!(["client.initialized-sent"])
    );
    let bad = tmp.write("bad.txt", "client.nope\n");
    let run = common::run(&[
        "client",
        "--expected-failures",
        bad.to_str().unwrap(),
        "--",
        "true",
    ]);
    assert_eq!(run.code, 2, "{}", run.context());
    assert!(run
        .stderr
        .contains("unknown client check id \"client.nope\""));
}

#[test]
fn transcripts_and_junit_are_written() {
    let tmp = TempDir::new("client-files");
    let dir = tmp.path().join("t");
    let junit = tmp.path().join("junit.xml");
    let (run, _) = judge(
        "http",
        &[
            "--scenario",
            "initialize",
            "--transcript",
            dir.to_str().unwrap(),
            "--junit",
            junit.to_str().unwrap(),
        ],
        &fixture(None),
    );
    assert_eq!(run.code, 0, "{}", run.context());
    let file = dir
        .join("feature_client.py")
        .join("client.initialized-sent.jsonl");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains(r#""text":"POST /mcp -> 200""#), "{text}");
    assert!(text.contains("notifications/initialized"), "{text}");
    assert!(text.contains("DELETE /mcp -> 200"), "{text}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("client.initialized-sent"), "{xml}");
}

/// `target/<profile>/examples/agent_demo`, built once if missing.
fn agent_demo() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let profile_dir = common::harness().parent().unwrap().to_path_buf();
        let bin = profile_dir.join("examples").join("agent_demo");
        if !bin.is_file() {
            let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
            let status = Command::new(cargo)
                .args(["build", "-p", "mcp-client", "--example", "agent_demo"])
                .arg("--target-dir")
                .arg(profile_dir.parent().unwrap())
                .current_dir(common::workspace_root())
                .status()
                .unwrap();
            assert!(status.success(), "building agent_demo failed: {status}");
        }
        bin
    })
}

/// Our own client, `agent_demo --server RELAY` / `agent_demo --url URL`: the MUST checks pass
/// in the scenarios it runs, and it falls back to initialize when server/discover gets `{}`.
fn our_client_passes(transport: &str, option: &str) {
    let command = vec![agent_demo().display().to_string(), option.to_owned()];
    let scenarios = [
        "--scenario",
        "initialize",
        "--scenario",
        "tools_call",
        "--scenario",
        "discover-empty-result",
    ];
    let (run, report) = judge(transport, &scenarios, &command);
    for c in checks(&report).iter().filter(|c| c["level"] == "MUST") {
        assert!(
            matches!(c["status"].as_str(), Some("PASS" | "SKIP" | "N/A")),
            "{} {}\n{}",
            c["status"],
            c["id"],
            run.context()
        );
    }
    assert_eq!(
        find(&report, "client.initialize-first")["status"],
        "PASS",
        "{}",
        run.context()
    );
    assert_eq!(
        find(&report, "client.discover-fallback")["status"],
        "PASS",
        "{}",
        run.context()
    );
    let (run, report) = judge(
        transport,
        &["--scenario", "discover-empty-result"],
        &command,
    );
    let fallback = find(&report, "client.discover-fallback");
    assert_eq!(fallback["status"], "PASS", "{}", run.context());
    assert!(
        fallback["detail"]
            .as_str()
            .unwrap_or("")
            .contains("result {}"),
        "{}",
        run.context()
    );
}

#[test]
fn our_agent_demo_passes_over_stdio() {
    our_client_passes("stdio", "--server");
}

#[test]
fn our_agent_demo_passes_over_http() {
    our_client_passes("http", "--url");
}

#[test]
fn ctrl_c_ends_the_client_and_its_relay() {
    use nix::sys::signal::{killpg, Signal};
    use nix::unistd::Pid;

    let tmp = TempDir::new("client-ctrl-c");
    let script = tmp.write("hang.py", HANGING_CLIENT);
    let pids = tmp.path().join("pids");
    let args: Vec<String> = [
        "client",
        "--timeout",
        "600",
        "--scenario",
        "initialize",
        "--",
        "python3",
        "-S",
        script.to_str().unwrap(),
        pids.to_str().unwrap(),
    ]
    .map(str::to_owned)
    .to_vec();
    let mut cmd = Command::new(common::harness());
    cmd.args(&args);
    let mut sent = false;
    // The harness runs in a group of its own, as a shell's foreground job; Ctrl-C is SIGINT to it.
    let run = common::run_command(cmd, args.clone(), |pid| {
        if !sent && pids.exists() {
            sent = true;
            let group = Pid::from_raw(i32::try_from(pid).unwrap());
            killpg(group, Signal::SIGINT).unwrap();
        }
    });
    assert_eq!(run.code, 130, "{}", run.context());
    let text = std::fs::read_to_string(&pids).unwrap();
    for pid in text.split_whitespace().map(|p| p.parse::<i32>().unwrap()) {
        assert!(
            !alive(pid),
            "process {pid} is still running\n{}",
            run.context()
        );
    }
}

/// A client that frames with `Content-Length` (LSP style) and exits 0 only if the harness's
/// answer came back in that framing.
const CONTENT_LENGTH_CLIENT: &str = r#"
import json, subprocess, sys
p = subprocess.Popen([sys.argv[-1]], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def send(m):
    b = json.dumps(m).encode()
    p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(b) + b)
    p.stdin.flush()
def recv():
    n = None
    while True:
        line = p.stdout.readline()
        if line in (b"\r\n", b""):
            break
        k, v = line.split(b":", 1)
        if k.strip().lower() == b"content-length":
            n = int(v)
    return json.loads(p.stdout.read(n))
send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "clientInfo": {"name": "cl", "version": "1"}}})
r = recv()
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
p.stdin.close()
p.wait(5)
sys.exit(0 if r.get("id") == 1 and "result" in r else 1)
"#;

#[test]
fn a_content_length_client_is_answered_in_its_framing() {
    let tmp = TempDir::new("client-content-length");
    let script = tmp.write("cl.py", CONTENT_LENGTH_CLIENT);
    let command = vec![
        "python3".to_owned(),
        "-S".to_owned(),
        script.display().to_string(),
    ];
    let (run, report) = judge("stdio", &["--scenario", "initialize"], &command);
    for id in ["client.initialize-first", "client.initialized-sent"] {
        assert_eq!(find(&report, id)["status"], "PASS", "{}", run.context());
    }
    let transcript = find(&report, "client.initialized-sent")["transcript"].to_string();
    assert!(
        transcript.contains("client exited (Some(0))"),
        "{}",
        run.context()
    );
}

#[test]
fn profiles_and_selection() {
    // A SHOULD is a WARN under generic (exit 0), a FAIL under strict (exit 1).
    let bug = fixture(Some("stay-after-wrong-version"));
    let options = ["--scenario", "wrong-version", "--profile", "strict"];
    let (run, report) = judge("stdio", &options, &bug);
    let id = "client.unsupported-version-disconnect";
    assert_eq!(find(&report, id)["status"], "FAIL", "{}", run.context());
    assert_eq!(run.code, 1, "{}", run.context());
    // --skip leaves the failing check out; --only keeps just what it names.
    let bug = fixture(Some("no-initialized"));
    let (run, report) = judge("stdio", &["--skip", "client.initialized-sent"], &bug);
    assert_eq!(run.code, 0, "{}", run.context());
    assert!(checks(&report)
        .iter()
        .all(|c| c["id"] != "client.initialized-sent"));
    let (run, report) = judge("http", &["--only", "client.http-*"], &fixture(None));
    assert_eq!(run.code, 0, "{}", run.context());
    assert!(checks(&report)
        .iter()
        .all(|c| c["id"].as_str().unwrap().starts_with("client.http-")));
    assert!(!checks(&report).is_empty());
}
