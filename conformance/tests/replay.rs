//! A session recorded by `mcp-conformance observe --transcript` replays as a check
//! (`--scenario-file FILE.jsonl`) against a real server: the bundled `mcp-echo-server` as a
//! child process. A recording the server still matches passes; one it no longer matches fails,
//! naming the request.
#![allow(clippy::unwrap_used)]

mod common;

use common::{assert_exit, check, echo_server, find, run, TempDir};
use serde_json::{json, Value};

fn line(from: &str, message: Value) -> String {
    json!({"ms": 0.5, "from": from, "text": message.to_string()}).to_string()
}

/// A host's session with the echo server: handshake, tools/list, an echo call, an unknown tool.
fn recording(tools_list_answer: Value) -> String {
    [
        line(
            "client",
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "host", "version": "1"}}}),
        ),
        line(
            "server",
            json!({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25"}}),
        ),
        line(
            "client",
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        ),
        line(
            "client",
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        ),
        line("server", tools_list_answer),
        line(
            "client",
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                              "params": {"name": "nope", "arguments": {}}}),
        ),
        line(
            "server",
            json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32602, "message": "x"}}),
        ),
        json!({"ms": 3.0, "from": "event", "text": "stdin closed"}).to_string(),
    ]
    .join("\n")
}

fn replay(dir: &TempDir, name: &str, text: &str) -> (common::Run, Value) {
    let file = dir.write(name, text);
    let server = vec![echo_server().display().to_string()];
    check(
        &[
            "--scenario-file",
            file.to_str().unwrap(),
            "--only",
            "replay.*",
        ],
        &server,
    )
}

#[test]
fn a_recording_the_server_still_matches_passes() {
    let dir = TempDir::new("replay-pass");
    let answer = json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": []}});
    let (run, report) = replay(&dir, "host.jsonl", &recording(answer));
    assert_exit(&run, 0);
    assert_eq!(
        find(&report, "replay.host")["status"],
        "PASS",
        "{}",
        run.context()
    );
}

#[test]
fn a_recording_the_server_no_longer_matches_fails_naming_the_request() {
    let dir = TempDir::new("replay-fail");
    let answer = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "x"}});
    let (run, report) = replay(&dir, "regressed.jsonl", &recording(answer));
    assert_exit(&run, 1);
    let c = find(&report, "replay.regressed");
    assert_eq!(c["status"], "FAIL", "{}", run.context());
    assert!(c["expected"].as_str().unwrap().contains("-32601"), "{c:#}");
}

#[test]
fn a_file_that_is_not_a_transcript_is_a_usage_error() {
    let dir = TempDir::new("replay-bad");
    let file = dir.write(
        "bad.jsonl",
        "{\"from\": \"client\", \"text\": \"{}\"}\nnot json\n",
    );
    let run = run(&["--scenario-file", file.to_str().unwrap(), "--list"]);
    assert_exit(&run, 2);
    assert!(
        run.stderr.contains("bad.jsonl is not a transcript"),
        "{}",
        run.context()
    );
    assert!(run.stderr.contains("line 2"), "{}", run.context());
}
