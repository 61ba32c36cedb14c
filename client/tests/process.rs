//! The client against real child processes: the `mcp-echo-server` binary in both framings,
//! and small shell fixtures (`tests/fixtures/*.sh`) that crash mid-call, ignore EOF, ignore
//! SIGTERM, or exit at once. Covers close escalation, crash reporting, and that dropping a
//! client leaves neither a zombie nor an orphan.
#![allow(clippy::unwrap_used)]

mod common;

use std::os::unix::process::ExitStatusExt;
use std::time::{Duration, Instant};

use mcp_client::protocol::mcp::ContentBlock;
use mcp_client::protocol::Framing;
use mcp_client::{
    Client, ClientError, ClientOptions, CloseCause, CloseStep, FrameDirection, ServerCommand,
    State, StderrMode,
};
use serde_json::json;

use common::{
    eventually, fixture, group_members, legacy_options, proc_stat, quick_options, recording,
    server_bin, within, within_for,
};

/// A command running a fixture script with `sh`.
fn sh_fixture(name: &str) -> ServerCommand {
    ServerCommand::new("sh").arg(fixture(name))
}

fn echo_text(result: &mcp_client::protocol::mcp::CallToolResult) -> &str {
    match result.content.as_slice() {
        [ContentBlock::Text { text }] => text,
        other => panic!("expected one text block, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// The real echo server
// ---------------------------------------------------------------------------------------------

/// A grace of an hour for servers that do exit on EOF: only their exit can end `close()`, so
/// a slow start on a loaded machine cannot turn `StdinClosed` into `Terminated`, and a server
/// that ignored EOF would fail the test at its `within` bound instead.
fn patient_close() -> ClientOptions {
    ClientOptions {
        close_grace: Duration::from_secs(3600),
        ..quick_options()
    }
}

async fn exercise_real_server(command: ServerCommand, framing: Framing) {
    let options = ClientOptions {
        framing,
        request_timeout: Duration::from_secs(10),
        ..patient_close()
    };
    let client = Client::spawn(command, options).unwrap();
    assert!(client.pid().is_some());
    assert_eq!(client.state(), State::New);
    let init = within("connect", client.connect()).await.unwrap();
    assert_eq!(init.server_info().unwrap().name, "mcp-echo-server");
    assert_eq!(client.state(), State::Ready);

    let tools = within("list_tools", client.list_tools()).await.unwrap();
    assert_eq!(tools.len(), 1, "{tools:?}");
    assert_eq!(tools[0].name, "echo");
    assert_eq!(tools[0].input_schema["required"], json!(["text"]));

    let big: String = "0123456789abcdef".repeat(64 * 1024); // 1 MiB
    assert_eq!(big.len(), 1 << 20);
    for text in [
        "hello",
        "你好 🦀",
        "line\nbreak \"quoted\" \\",
        big.as_str(),
    ] {
        let result = within("call_tool", client.call_tool("echo", json!({"text": text})))
            .await
            .unwrap();
        assert_eq!(result.is_error, None);
        assert!(
            echo_text(&result) == text,
            "echo changed a text of {} bytes",
            text.len()
        );
        assert_eq!(result.structured_content, Some(json!({"text": text})));
    }
    // A bad argument is a tool result with isError, not a failure of the call.
    let bad = within("call_tool", client.call_tool("echo", json!({"text": 5})))
        .await
        .unwrap();
    assert_eq!(bad.is_error, Some(true));
    assert!(echo_text(&bad).contains("`text` must be a string"));
    within("ping", client.ping()).await.unwrap();

    let report = within("close", client.close()).await;
    assert_eq!(report.step, CloseStep::StdinClosed, "{report:?}");
    assert!(report.status.unwrap().success(), "{report:?}");
    assert_eq!(client.state(), State::Closed);
    match within("call after close", client.ping()).await {
        Err(ClientError::Closed(reason)) => {
            assert_eq!(reason.cause, CloseCause::ClientClosed, "{reason}");
            assert!(reason.status.unwrap().success(), "{reason}");
        }
        other => panic!("expected Closed, got {other:?}"),
    }
    assert_eq!(within("second close", client.close()).await, report);
}

#[tokio::test]
async fn real_server_newline_delimited() {
    exercise_real_server(ServerCommand::new(server_bin()), Framing::Ndjson).await;
}

#[tokio::test]
async fn real_server_content_length() {
    let command = ServerCommand::new(server_bin()).args(["--framing", "content-length"]);
    exercise_real_server(command, Framing::ContentLength).await;
}

#[tokio::test]
async fn frame_hook_with_a_real_server() {
    let (options, frames) = recording(ClientOptions {
        framing: Framing::ContentLength,
        ..legacy_options()
    });
    let command = ServerCommand::new(server_bin()).args(["--framing", "content-length"]);
    let client = Client::spawn(command, options).unwrap();
    within("connect", client.connect()).await.unwrap();
    within("ping", client.ping()).await.unwrap();
    let frames = frames.lock().unwrap().clone();
    // The hook sees JSON bodies, not Content-Length headers.
    let init_sent = frames
        .iter()
        .position(|(d, v)| *d == FrameDirection::Send && v["method"] == "initialize")
        .unwrap_or_else(|| panic!("no initialize sent: {frames:?}"));
    let id = frames[init_sent].1["id"].clone();
    let init_received = frames
        .iter()
        .position(|(d, v)| *d == FrameDirection::Receive && v["id"] == id)
        .unwrap_or_else(|| panic!("no initialize reply received: {frames:?}"));
    assert!(init_sent < init_received, "{frames:?}");
    assert_eq!(
        frames[init_received].1["result"]["serverInfo"]["name"],
        "mcp-echo-server"
    );
    let ping_sent = frames
        .iter()
        .position(|(d, v)| *d == FrameDirection::Send && v["method"] == "ping")
        .unwrap();
    assert!(init_received < ping_sent);
    within("close", client.close()).await;
}

#[tokio::test]
async fn command_args_env_and_cwd_reach_the_server() {
    let dir = std::env::temp_dir();
    let command = ServerCommand::new("sh")
        .args([
            "-c",
            r#"printf '%s|%s|%s\n' "$1" "$MCP_TEST_VAR" "$(pwd -P)" >&2"#,
        ])
        .arg("sh")
        .arg("first arg")
        .env("MCP_TEST_VAR", "value 1")
        .current_dir(&dir)
        .stderr(StderrMode::Capture);
    let client = Client::spawn(command, quick_options()).unwrap();
    eventually(WAIT_EXIT, "the script to exit", || {
        client.closed_reason().is_some()
    })
    .await;
    let expected = format!(
        "first arg|value 1|{}",
        dir.canonicalize().unwrap().display()
    );
    assert_eq!(client.stderr_tail(), vec![expected.clone()]);
    assert_eq!(client.closed_reason().unwrap().stderr_tail, vec![expected]);
}

const WAIT_EXIT: Duration = Duration::from_secs(5);

// ---------------------------------------------------------------------------------------------
// A server that crashes mid-call
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn crash_mid_call_fails_every_caller_with_status_and_stderr() {
    // The fixture answers its first line as `initialize`: no probe. The calls' timeout is an
    // hour: only the crash can end them (else the `within` bound fails the test).
    let options = ClientOptions {
        request_timeout: Duration::from_secs(3600),
        ..legacy_options()
    };
    let client = Client::spawn(sh_fixture("crash_mid_call.sh"), options).unwrap();
    let init = within("connect", client.connect()).await.unwrap();
    assert_eq!(init.server_info().unwrap().name, "crash-mid-call");
    assert_eq!(client.state(), State::Ready);

    let calls = futures::future::join_all([
        client.call_tool("echo", json!({"text": "the call that crashes it"})),
        client.call_tool("echo", json!({"text": "a second caller"})),
        client.call_tool("echo", json!({"text": "a third caller"})),
    ]);
    let results = within("the calls to fail", calls).await;
    for (i, result) in results.into_iter().enumerate() {
        match result {
            Err(ClientError::Closed(reason)) => {
                assert!(
                    matches!(
                        reason.cause,
                        CloseCause::ServerExited | CloseCause::ServerClosedOutput
                    ),
                    "caller {i}: {reason}"
                );
                assert_eq!(
                    reason.status.and_then(|s| s.code()),
                    Some(3),
                    "caller {i}: {reason}"
                );
                assert!(
                    reason
                        .stderr_tail
                        .iter()
                        .any(|l| l == "fatal: boom while handling the call"),
                    "caller {i}: {reason}"
                );
                let message = ClientError::Closed(reason).to_string();
                assert!(message.contains("fatal: boom"), "{message}");
            }
            other => panic!("caller {i}: expected Closed, got {other:?}"),
        }
    }
    assert_eq!(client.state(), State::Closed);
    let reason = client.closed_reason().unwrap();
    assert_eq!(reason.status.and_then(|s| s.code()), Some(3));
    assert!(matches!(
        within("call after the crash", client.ping()).await,
        Err(ClientError::Closed(_))
    ));
    let report = within("close", client.close()).await;
    assert_eq!(report.step, CloseStep::AlreadyExited);
    assert_eq!(report.status.and_then(|s| s.code()), Some(3));
}

#[tokio::test]
async fn crash_during_initialize_closes_the_connection() {
    let script = r#"IFS= read -r line; echo "cannot start: missing config" >&2; exit 5"#;
    let command = ServerCommand::new("sh").args(["-c", script]);
    // An hour: only the crash can end the wait (else the `within` bound fails the test).
    let options = ClientOptions {
        request_timeout: Duration::from_secs(3600),
        ..quick_options()
    };
    let client = Client::spawn(command, options).unwrap();
    let reason = match within("initialize", client.initialize()).await {
        Err(ClientError::Closed(reason)) => reason,
        other => panic!("expected Closed, got {other:?}"),
    };
    assert_eq!(reason.status.and_then(|s| s.code()), Some(5), "{reason}");
    assert_eq!(
        reason.stderr_tail,
        ["cannot start: missing config"],
        "{reason}"
    );
    // Not back to new: the server is gone, so a retry fails the same way.
    assert_eq!(client.state(), State::Closed);
    match within("initialize again", client.initialize()).await {
        Err(ClientError::Closed(again)) => assert_eq!(again, reason),
        other => panic!("expected Closed, got {other:?}"),
    }
}

#[tokio::test]
async fn stderr_tail_keeps_the_last_twenty_lines() {
    let script =
        r#"i=1; while [ $i -le 30 ]; do echo "stderr line $i" >&2; i=$((i+1)); done; exit 1"#;
    let client = Client::spawn(
        ServerCommand::new("sh").args(["-c", script]),
        quick_options(),
    )
    .unwrap();
    eventually(WAIT_EXIT, "the server to exit", || {
        client.closed_reason().is_some()
    })
    .await;
    let expected: Vec<String> = (11..=30).map(|i| format!("stderr line {i}")).collect();
    let reason = client.closed_reason().unwrap();
    assert_eq!(reason.status.and_then(|s| s.code()), Some(1), "{reason}");
    assert_eq!(reason.stderr_tail, expected);
    assert_eq!(client.stderr_tail(), expected);
}

// ---------------------------------------------------------------------------------------------
// close() escalation
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn close_kills_a_server_that_ignores_eof_and_sigterm() {
    let client = Client::spawn(sh_fixture("ignores_eof_and_term.sh"), quick_options()).unwrap();
    // Once the shell runs its loop, its trap is installed: SIGTERM must find it ignoring.
    let pid = client.pid().unwrap();
    eventually(WAIT_EXIT, "the fixture to start its loop", || {
        group_members(pid).iter().any(|&(p, _, _)| p != pid)
    })
    .await;
    assert_eq!(client.state(), State::New);
    let report = within("close", client.close()).await;
    assert_eq!(report.step, CloseStep::Killed, "{report:?}");
    assert_eq!(report.status.unwrap().signal(), Some(9), "{report:?}");
    assert!(
        report.elapsed >= Duration::from_millis(600),
        "two grace periods of 300 ms come first: {report:?}"
    );
    assert_eq!(client.state(), State::Closed);
}

#[tokio::test]
async fn close_terminates_a_server_that_ignores_eof() {
    let client = Client::spawn(sh_fixture("ignores_eof.sh"), quick_options()).unwrap();
    assert_eq!(client.state(), State::New);
    let report = within("close", client.close()).await;
    assert_eq!(report.step, CloseStep::Terminated, "{report:?}");
    assert_eq!(report.status.unwrap().signal(), Some(15), "{report:?}");
    assert!(
        report.elapsed >= Duration::from_millis(300),
        "one grace period comes first: {report:?}"
    );
}

#[tokio::test]
async fn close_closes_stdin_of_the_echo_server() {
    let client = Client::spawn(ServerCommand::new(server_bin()), patient_close()).unwrap();
    assert_eq!(client.state(), State::New);
    let report = within("close", client.close()).await;
    assert_eq!(report.step, CloseStep::StdinClosed, "{report:?}");
    assert!(report.status.unwrap().success(), "{report:?}");
}

#[tokio::test]
async fn a_call_in_flight_is_answered_during_close() {
    let (options, frames) = recording(patient_close());
    let client = Client::spawn(ServerCommand::new(server_bin()), options).unwrap();
    within("connect", client.connect()).await.unwrap();
    let big: String = "z".repeat(1 << 20);
    let call = tokio::spawn({
        let client = client.clone();
        let big = big.clone();
        async move { client.call_tool("echo", json!({ "text": big })).await }
    });
    eventually(WAIT_EXIT, "the call to be sent", || {
        common::sent_methods(&frames)
            .iter()
            .any(|m| m == "tools/call")
    })
    .await;
    let report = within("close", client.close()).await;
    assert_eq!(report.step, CloseStep::StdinClosed, "{report:?}");
    // The server answered what it had read before it saw EOF, and the answer got through.
    let result = within("the call", call).await.unwrap().unwrap();
    assert!(
        echo_text(&result) == big,
        "the in-flight call got another text"
    );
}

#[tokio::test]
async fn close_reports_a_server_that_already_exited() {
    let command = ServerCommand::new("sh").args(["-c", "exit 7"]);
    let client = Client::spawn(command, quick_options()).unwrap();
    eventually(WAIT_EXIT, "the server to exit", || {
        client.closed_reason().is_some()
    })
    .await;
    let reason = client.closed_reason().unwrap();
    assert!(
        matches!(
            reason.cause,
            CloseCause::ServerExited | CloseCause::ServerClosedOutput
        ),
        "{reason}"
    );
    assert_eq!(reason.status.and_then(|s| s.code()), Some(7), "{reason}");
    assert_eq!(client.state(), State::Closed);
    match within("initialize", client.initialize()).await {
        Err(ClientError::Closed(r)) => assert_eq!(r, reason),
        other => panic!("expected Closed, got {other:?}"),
    }
    let report = within("close", client.close()).await;
    assert_eq!(report.step, CloseStep::AlreadyExited, "{report:?}");
    assert_eq!(report.status.and_then(|s| s.code()), Some(7));
}

// ---------------------------------------------------------------------------------------------
// Drop
// ---------------------------------------------------------------------------------------------

/// Processes of group `pgid` that are still a problem: alive (not a zombie), or a zombie
/// that this test process should have reaped. Zombies re-parented to another process (the
/// `sleep` children of a killed shell go to init, which in some sandboxes never reaps) are
/// dead and out of the client's reach.
fn left_behind(pgid: u32) -> Vec<(u32, char, u32)> {
    let me = std::process::id();
    group_members(pgid)
        .into_iter()
        .filter(|&(_, state, ppid)| state != 'Z' || ppid == me)
        .collect()
}

#[tokio::test]
async fn dropping_the_client_leaves_no_zombie_or_orphan() {
    let client = Client::spawn(sh_fixture("ignores_eof_and_term.sh"), quick_options()).unwrap();
    let pid = client.pid().unwrap();
    // Wait until the shell has started a `sleep`: the group has more than the leader.
    eventually(WAIT_EXIT, "the fixture to start a child", || {
        group_members(pid).iter().any(|&(p, _, _)| p != pid)
    })
    .await;
    assert_eq!(proc_stat(pid).map(|(_, _, pgrp)| pgrp), Some(pid));
    let clone = client.clone();
    drop(client);
    // A clone keeps the connection alive.
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(
        proc_stat(pid).is_some_and(|(state, _, _)| state != 'Z'),
        "a live clone must keep the server running"
    );
    drop(clone);
    let gone = tokio::task::spawn_blocking(move || {
        assert_group_gone_blocking(pid, "after dropping the client")
    });
    within_for(WAIT_EXIT * 2, "the group check", gone)
        .await
        .unwrap();
}

/// Waits (bounded, blocking) until the server `pid` was reaped and nothing of its process
/// group runs any more; then kills what is left, so a failing run leaves nothing behind.
fn assert_group_gone_blocking(pid: u32, what: &str) {
    let me = std::process::id();
    let leader_gone = || match proc_stat(pid) {
        None => true,
        // The pid was reused by an unrelated process.
        Some((_, ppid, pgrp)) => ppid != me && pgrp != pid,
    };
    let started = Instant::now();
    while !(leader_gone() && left_behind(pid).is_empty()) && started.elapsed() < WAIT_EXIT {
        std::thread::sleep(Duration::from_millis(20));
    }
    let leader = proc_stat(pid);
    let left = left_behind(pid);
    let clean = leader_gone() && left.is_empty();
    if !clean {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", "--", &format!("-{pid}")])
            .status();
    }
    assert!(
        clean,
        "{what}: leader {pid}: {leader:?} (state, ppid, pgrp; our pid is {me}); \
         group members left: {left:?} (pid, state, ppid)"
    );
}

#[tokio::test]
async fn dropping_the_client_kills_the_servers_own_children() {
    let client = Client::spawn(sh_fixture("spawns_a_child.sh"), quick_options()).unwrap();
    let pid = client.pid().unwrap();
    // The leader, its long-lived helper and a `sleep 0.05` of the loop.
    eventually(WAIT_EXIT, "the fixture to start its helper", || {
        group_members(pid).len() >= 3
    })
    .await;
    drop(client);
    let gone = tokio::task::spawn_blocking(move || {
        assert_group_gone_blocking(pid, "after dropping the client")
    });
    within_for(WAIT_EXIT * 2, "the group check", gone)
        .await
        .unwrap();
}

/// The last handle dropped as its runtime ends, as at the end of `#[tokio::main]` or of a
/// `#[tokio::test]` that never called `close()`: no task of the client runs afterwards.
#[test]
fn dropping_the_client_as_the_runtime_ends_leaves_no_orphan() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let pid = runtime.block_on(async {
        let client = Client::spawn(sh_fixture("spawns_a_child.sh"), quick_options()).unwrap();
        let pid = client.pid().unwrap();
        eventually(WAIT_EXIT, "the fixture to start its helper", || {
            group_members(pid).len() >= 3
        })
        .await;
        pid
        // `client` is dropped here, as the block ends.
    });
    drop(runtime);
    assert_group_gone_blocking(pid, "after dropping the client and then its runtime");
}

#[tokio::test]
async fn dropping_a_connected_client_stops_the_echo_server() {
    let client = Client::spawn(ServerCommand::new(server_bin()), quick_options()).unwrap();
    within("connect", client.connect()).await.unwrap();
    let pid = client.pid().unwrap();
    drop(client);
    let me = std::process::id();
    eventually(WAIT_EXIT, "the server to be reaped", || {
        match proc_stat(pid) {
            None => true,
            Some((_, ppid, pgrp)) => ppid != me && pgrp != pid,
        }
    })
    .await;
}

// ---------------------------------------------------------------------------------------------
// Spawn failure
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn spawning_a_missing_program_is_a_spawn_error() {
    let program = "/nonexistent/dir/no-such-mcp-server";
    let command = ServerCommand::new(program).arg("--flag");
    match Client::spawn(command, quick_options()) {
        Err(ClientError::Spawn { program: p, reason }) => {
            assert!(p.contains(program), "{p}");
            assert!(!reason.is_empty());
            let message = ClientError::Spawn { program: p, reason }.to_string();
            assert!(message.contains(program), "{message}");
        }
        other => panic!("expected Spawn, got {other:?}"),
    }
}

#[tokio::test]
async fn a_server_that_prints_junk_does_not_break_the_client() {
    // Garbage lines on stdout are logged and skipped; stderr never mixes with frames.
    let script = r#"
IFS= read -r line
id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
echo 'this is not JSON'
echo 'a log line on stderr' >&2
printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"junk","version":"1"}}}\n' "$id"
IFS= read -r initialized
IFS= read -r ping
id=$(printf '%s' "$ping" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
printf '{"jsonrpc":"2.0","id":%s,"result":{}}\n' "$id"
IFS= read -r rest
"#;
    let command = ServerCommand::new("sh").args(["-c", script]);
    // The script answers its first line as `initialize`: no probe.
    let options = ClientOptions {
        era: mcp_client::EraChoice::Legacy,
        ..patient_close()
    };
    let client = Client::spawn(command, options).unwrap();
    let init = within("connect", client.connect()).await.unwrap();
    assert_eq!(init.server_info().unwrap().name, "junk");
    within("ping", client.ping()).await.unwrap();
    eventually(WAIT_EXIT, "the stderr line", || {
        client.stderr_tail() == ["a log line on stderr"]
    })
    .await;
    let report = within("close", client.close()).await;
    assert_eq!(report.step, CloseStep::StdinClosed, "{report:?}");
}
