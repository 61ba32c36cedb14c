//! `mcp-echo-server --diagnostic` as a child process over real pipes, driven with raw JSON
//! lines: each diagnostic tool's exact frames, in the legacy era (a session) and in
//! 2026-07-28 (per-request `_meta`); and without the flag, exactly the one `echo` tool.
#![allow(clippy::unwrap_used)]

use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, Command};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-echo-server");
/// Only a hang guard: every wait is for a frame the server sends at once or after a bounded
/// wait of its own.
const HANG: Duration = Duration::from_secs(60);

struct Session {
    child: Child,
    stdin: Box<dyn AsyncWrite + Unpin + Send>,
    lines: Lines<BufReader<Box<dyn AsyncRead + Unpin + Send>>>,
}

impl Session {
    /// Over pipes (the server's blocking loop).
    fn start(args: &[&str]) -> Session {
        let mut child = Command::new(BIN)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stdin = Box::new(child.stdin.take().unwrap());
        let stdout: Box<dyn AsyncRead + Unpin + Send> = Box::new(child.stdout.take().unwrap());
        Session {
            child,
            stdin,
            lines: BufReader::new(stdout).lines(),
        }
    }

    /// Over one end of a socketpair as both stdin and stdout, as Node-based hosts connect
    /// theirs (the server's async loop).
    fn start_on_socket(args: &[&str]) -> Session {
        let (ours, theirs) = std::os::unix::net::UnixStream::pair().unwrap();
        let theirs_out = theirs.try_clone().unwrap();
        let mut command = Command::new(BIN);
        command
            .args(args)
            .stdin(Stdio::from(std::os::fd::OwnedFd::from(theirs)))
            .stdout(Stdio::from(std::os::fd::OwnedFd::from(theirs_out)))
            .stderr(Stdio::null())
            .kill_on_drop(true);
        let child = command.spawn().unwrap();
        // The command holds copies of the child's ends: with them open, no EOF would come.
        drop(command);
        ours.set_nonblocking(true).unwrap();
        let ours = tokio::net::UnixStream::from_std(ours).unwrap();
        let (read, write) = ours.into_split();
        let read: Box<dyn AsyncRead + Unpin + Send> = Box::new(read);
        Session {
            child,
            stdin: Box::new(write),
            lines: BufReader::new(read).lines(),
        }
    }

    /// `--diagnostic`, after a 2025-11-25 handshake declaring `capabilities`.
    async fn legacy(capabilities: Value) -> Session {
        Session::handshaken(Session::start(&["--diagnostic"]), capabilities).await
    }

    async fn handshaken(mut s: Session, capabilities: Value) -> Session {
        let init = s.initialize(capabilities).await;
        assert_eq!(
            init["result"]["capabilities"],
            json!({"logging": {}, "tools": {"listChanged": true}})
        );
        s
    }

    async fn initialize(&mut self, capabilities: Value) -> Value {
        self.send(
            json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
            "protocolVersion":"2025-11-25","capabilities":capabilities,
            "clientInfo":{"name":"diagnostic-test","version":"1"}}}),
        )
        .await;
        let init = self.recv().await;
        self.send(json!({"jsonrpc":"2.0","method":"notifications/initialized"}))
            .await;
        init
    }

    async fn send(&mut self, message: Value) {
        let mut line = serde_json::to_vec(&message).unwrap();
        line.push(b'\n');
        self.stdin.write_all(&line).await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    async fn recv(&mut self) -> Value {
        let line = tokio::time::timeout(HANG, self.lines.next_line())
            .await
            .expect("no frame from the server")
            .unwrap()
            .expect("the server closed stdout");
        serde_json::from_str(&line).unwrap()
    }

    /// Every frame up to and including the response to `id`.
    async fn until_response(&mut self, id: i64) -> Vec<Value> {
        let mut frames = Vec::new();
        loop {
            let frame = self.recv().await;
            let done = frame["id"] == id && frame.get("method").is_none();
            frames.push(frame);
            if done {
                return frames;
            }
        }
    }

    /// Calls `tool`; the frames up to its response.
    async fn call(&mut self, id: i64, tool: &str, arguments: Value, meta: Value) -> Vec<Value> {
        self.send(json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
            "params":{"name":tool,"arguments":arguments,"_meta":meta}}))
            .await;
        self.until_response(id).await
    }

    /// Closes stdin: the server writes nothing more and exits 0.
    async fn finish(mut self) {
        self.stdin.shutdown().await.unwrap();
        drop(self.stdin);
        let rest = tokio::time::timeout(HANG, self.lines.next_line())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(rest, None, "unexpected output after the last reply");
        let status = tokio::time::timeout(HANG, self.child.wait())
            .await
            .unwrap()
            .unwrap();
        assert!(status.success(), "{status}");
    }
}

fn modern_meta(capabilities: Value) -> Value {
    json!({"io.modelcontextprotocol/protocolVersion":"2026-07-28",
           "io.modelcontextprotocol/clientCapabilities":capabilities,
           "io.modelcontextprotocol/clientInfo":{"name":"diagnostic-test","version":"1"}})
}

fn text(response: &Value) -> &str {
    response["result"]["content"][0]["text"].as_str().unwrap()
}

fn tool_names(list: &Value) -> Vec<String> {
    list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn without_the_flag_only_echo_is_offered() {
    let mut s = Session::start(&[]);
    let init = s.initialize(json!({})).await;
    assert_eq!(
        init["result"]["capabilities"],
        json!({"tools": {"listChanged": false}})
    );
    s.send(json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}))
        .await;
    assert_eq!(tool_names(&s.recv().await), ["echo"]);
    let frames = s.call(2, "diag_error", json!({}), json!({})).await;
    assert_eq!(frames[0]["error"]["code"], -32602);
    s.send(json!({"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"info"}}))
        .await;
    assert_eq!(s.recv().await["error"]["code"], -32601);
    s.finish().await;
}

#[tokio::test]
async fn the_diagnostic_tools_are_listed_with_valid_schemas() {
    let mut s = Session::legacy(json!({})).await;
    s.send(json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}))
        .await;
    let list = s.recv().await;
    assert_eq!(
        tool_names(&list),
        [
            "echo",
            "diag_progress",
            "diag_slow",
            "diag_log",
            "diag_sampling",
            "diag_elicitation",
            "diag_roots",
            "diag_tool_list_changed",
            "diag_error",
            "diag_large",
            "diag_image"
        ]
    );
    for tool in list["result"]["tools"].as_array().unwrap() {
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
        assert!(tool["description"].as_str().unwrap().len() > 20, "{tool}");
    }
    s.finish().await;
}

/// The progress notifications among `frames`: (token, progress, total).
fn progress(frames: &[Value]) -> Vec<(Value, u64, u64)> {
    frames
        .iter()
        .filter(|f| f["method"] == "notifications/progress")
        .map(|f| {
            let p = &f["params"];
            let n = |k: &str| p[k].as_u64().unwrap();
            (p["progressToken"].clone(), n("progress"), n("total"))
        })
        .collect()
}

#[tokio::test]
async fn diag_progress_sends_increasing_progress_for_the_token_in_both_eras() {
    let mut s = Session::legacy(json!({})).await;
    let args = json!({"steps": 3, "delay_ms": 0});
    let frames = s
        .call(
            1,
            "diag_progress",
            args.clone(),
            json!({"progressToken": "p-1"}),
        )
        .await;
    assert_eq!(frames.len(), 4, "{frames:#?}");
    let token = json!("p-1");
    assert_eq!(
        progress(&frames),
        [(token.clone(), 1, 3), (token.clone(), 2, 3), (token, 3, 3)]
    );
    assert!(text(&frames[3]).starts_with("Sent 3 progress notifications"));
    let frames = s.call(2, "diag_progress", args.clone(), json!({})).await;
    assert_eq!(frames.len(), 1, "{frames:#?}");
    assert!(text(&frames[0]).starts_with("No progress token was given"));

    let mut meta = modern_meta(json!({}));
    meta["progressToken"] = json!(42);
    let frames = s.call(3, "diag_progress", args, meta).await;
    assert_eq!(progress(&frames).len(), 3, "{frames:#?}");
    assert_eq!(progress(&frames)[2], (json!(42), 3, 3));
    assert_eq!(frames[3]["result"]["resultType"], "complete");
    s.finish().await;
}

/// The levels of the log messages among `frames`.
fn levels(frames: &[Value]) -> Vec<&str> {
    frames
        .iter()
        .filter(|f| f["method"] == "notifications/message")
        .map(|f| f["params"]["level"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn diag_log_honours_set_level_and_the_requests_log_level() {
    let mut s = Session::legacy(json!({})).await;
    let all = s.call(1, "diag_log", json!({}), json!({})).await;
    assert_eq!(
        levels(&all),
        [
            "debug",
            "info",
            "notice",
            "warning",
            "error",
            "critical",
            "alert",
            "emergency"
        ]
    );
    s.send(json!({"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"error"}}))
        .await;
    assert_eq!(s.recv().await, json!({"jsonrpc":"2.0","id":2,"result":{}}));
    let some = s.call(3, "diag_log", json!({}), json!({})).await;
    assert_eq!(levels(&some), ["error", "critical", "alert", "emergency"]);
    assert_eq!(
        some[0]["params"],
        json!({"level":"error","logger":"diag_log","data":"diag_log: a message at level error"})
    );

    // 2026-07-28: nothing without the request's level; at or above it otherwise.
    let none = s
        .call(4, "diag_log", json!({}), modern_meta(json!({})))
        .await;
    assert_eq!(none.len(), 1, "{none:#?}");
    assert!(text(&none[0]).contains("io.modelcontextprotocol/logLevel"));
    let mut meta = modern_meta(json!({}));
    meta["io.modelcontextprotocol/logLevel"] = json!("alert");
    let modern = s.call(5, "diag_log", json!({}), meta).await;
    assert_eq!(levels(&modern), ["alert", "emergency"]);
    s.finish().await;
}

const ASKS: [(&str, &str, &str); 3] = [
    ("diag_sampling", "sampling/createMessage", "sampling"),
    ("diag_elicitation", "elicitation/create", "elicitation"),
    ("diag_roots", "roots/list", "roots"),
];

#[tokio::test]
async fn legacy_server_requests_are_sent_when_declared_and_refused_when_not() {
    let mut s = Session::legacy(json!({"sampling": {}, "elicitation": {}, "roots": {}})).await;
    for (i, (tool, method, _)) in (1..).zip(ASKS) {
        s.send(json!({"jsonrpc":"2.0","id":i,"method":"tools/call","params":{"name":tool}}))
            .await;
        let request = s.recv().await;
        assert_eq!(request["method"], method, "{request}");
        if method == "elicitation/create" {
            assert_eq!(
                request["params"]["requestedSchema"]["required"],
                json!(["name"])
            );
        }
        let answer = json!({"answered": method});
        s.send(json!({"jsonrpc":"2.0","id":request["id"],"result":answer}))
            .await;
        let response = s.recv().await;
        assert_eq!(response["id"], i);
        assert_eq!(
            text(&response),
            format!("The client answered {method} with: {answer}")
        );
        assert_eq!(response["result"].get("isError"), None);
    }
    s.finish().await;

    let mut s = Session::legacy(json!({})).await;
    for (i, (tool, _, capability)) in (1..).zip(ASKS) {
        let frames = s.call(i, tool, json!({}), json!({})).await;
        assert_eq!(frames.len(), 1, "no request is sent: {frames:#?}");
        assert_eq!(frames[0]["result"]["isError"], true);
        let expected =
            format!("The client did not declare the {capability} capability in initialize");
        assert!(text(&frames[0]).starts_with(&expected), "{}", frames[0]);
    }
    s.finish().await;
}

#[tokio::test]
async fn modern_requests_ask_through_input_required_and_the_retry_gets_the_answer() {
    let mut s = Session::start(&["--diagnostic"]);
    let declared = json!({"sampling": {}, "elicitation": {}, "roots": {}});
    for (i, (tool, method, _)) in (1..).zip(ASKS) {
        let first = s
            .call(i * 10, tool, json!({}), modern_meta(declared.clone()))
            .await;
        assert_eq!(first.len(), 1, "no server request: {first:#?}");
        let result = &first[0]["result"];
        assert_eq!(result["resultType"], "input_required");
        assert_eq!(result["inputRequests"][method]["method"], method);
        let answer = json!({"answered": method});
        s.send(
            json!({"jsonrpc":"2.0","id":i * 10 + 1,"method":"tools/call","params":{
            "name":tool,"inputResponses":{method: answer},"_meta":modern_meta(declared.clone())}}),
        )
        .await;
        let retry = s.until_response(i * 10 + 1).await;
        assert_eq!(retry.len(), 1, "{retry:#?}");
        assert_eq!(retry[0]["result"]["resultType"], "complete");
        assert_eq!(
            text(&retry[0]),
            format!("The client answered {method} with: {answer}")
        );
    }
    for (i, (tool, _, capability)) in (100..).zip(ASKS) {
        let frames = s.call(i, tool, json!({}), modern_meta(json!({}))).await;
        assert_eq!(frames[0]["result"]["isError"], true, "{frames:#?}");
        assert!(text(&frames[0]).contains(&format!("did not declare the {capability} capability")));
    }
    s.finish().await;
}

#[tokio::test]
async fn a_cancelled_diag_slow_stops_and_sends_no_response_in_both_eras() {
    let mut s = Session::legacy(json!({})).await;
    for (id, meta) in [(1, json!({})), (2, modern_meta(json!({})))] {
        s.send(json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
            "params":{"name":"diag_slow","arguments":{"seconds":300},"_meta":meta}}))
            .await;
        s.send(json!({"jsonrpc":"2.0","method":"notifications/cancelled",
            "params":{"requestId":id,"reason":"test"}}))
            .await;
    }
    // The ping is answered; the slow calls never are (finish sees no more output, and the
    // server exits at once instead of waiting 300 s).
    s.send(json!({"jsonrpc":"2.0","id":3,"method":"ping"}))
        .await;
    assert_eq!(s.recv().await, json!({"jsonrpc":"2.0","id":3,"result":{}}));
    s.finish().await;
}

#[tokio::test]
async fn diag_slow_returns_after_its_wait() {
    let mut s = Session::legacy(json!({})).await;
    let frames = s
        .call(1, "diag_slow", json!({"seconds": 1}), json!({}))
        .await;
    assert!(text(&frames[0]).starts_with("Waited 1 s"), "{frames:#?}");
    let frames = s
        .call(2, "diag_slow", json!({"seconds": 0}), json!({}))
        .await;
    assert_eq!(frames[0]["result"]["isError"], true);
    assert!(text(&frames[0]).contains("`seconds` must be an integer from 1 to 300"));
    s.finish().await;
}

#[tokio::test]
async fn diag_tool_list_changed_toggles_diag_extra_and_notifies() {
    let mut s = Session::legacy(json!({})).await;
    let frames = s
        .call(1, "diag_tool_list_changed", json!({}), json!({}))
        .await;
    assert_eq!(
        frames[0],
        json!({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})
    );
    assert!(text(&frames[1]).contains("added the tool diag_extra"));
    s.send(json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}))
        .await;
    assert!(tool_names(&s.recv().await).contains(&"diag_extra".to_owned()));
    let extra = s.call(3, "diag_extra", json!({}), json!({})).await;
    assert!(text(&extra[0]).starts_with("diag_extra was added"));

    // 2026-07-28 has no list_changed outside subscriptions/listen: none is sent.
    let frames = s
        .call(
            4,
            "diag_tool_list_changed",
            json!({}),
            modern_meta(json!({})),
        )
        .await;
    assert_eq!(frames.len(), 1, "{frames:#?}");
    assert!(text(&frames[0]).contains("removed the tool diag_extra"));
    assert!(text(&frames[0]).contains("subscriptions/listen"));
    s.send(json!({"jsonrpc":"2.0","id":5,"method":"tools/list"}))
        .await;
    assert!(!tool_names(&s.recv().await).contains(&"diag_extra".to_owned()));
    s.finish().await;
}

#[tokio::test]
async fn a_modern_list_change_goes_on_the_open_subscription() {
    let mut s = Session::start(&["--diagnostic"]);
    s.send(
        json!({"jsonrpc":"2.0","id":"sub","method":"subscriptions/listen",
        "params":{"notifications":{"toolsListChanged":true},"_meta":modern_meta(json!({}))}}),
    )
    .await;
    let tag = json!({"io.modelcontextprotocol/subscriptionId": "sub"});
    assert_eq!(
        s.recv().await,
        json!({"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged",
            "params":{"notifications":{"toolsListChanged":true},"_meta":tag}})
    );
    let frames = s
        .call(
            1,
            "diag_tool_list_changed",
            json!({}),
            modern_meta(json!({})),
        )
        .await;
    assert_eq!(
        frames[0],
        json!({"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":tag}})
    );
    assert!(text(&frames[1]).contains("added the tool diag_extra and sent"));
    assert_eq!(frames.len(), 2);
    // Cancelled: no response for it, and the next change is not sent.
    s.send(
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"sub"}}),
    )
    .await;
    let frames = s
        .call(
            2,
            "diag_tool_list_changed",
            json!({}),
            modern_meta(json!({})),
        )
        .await;
    assert_eq!(frames.len(), 1, "{frames:#?}");
    assert!(text(&frames[0]).contains("was not sent"));
    s.finish().await;
}

/// A 2026-07-28 tools/list that the diagnostic tools can change is not to be cached
/// (`ttlMs: 0`); without them the list is fixed for the process and may be kept an hour.
#[tokio::test]
async fn a_modern_tool_list_that_can_change_is_not_cached() {
    for (args, ttl) in [(&["--diagnostic"][..], 0), (&[][..], 3_600_000)] {
        let mut s = Session::start(args);
        s.send(json!({"jsonrpc":"2.0","id":1,"method":"tools/list",
            "params":{"_meta":modern_meta(json!({}))}}))
            .await;
        let list = s.recv().await;
        assert_eq!(list["result"]["ttlMs"], ttl, "{args:?}: {list}");
        assert_eq!(list["result"]["resultType"], "complete");
        s.finish().await;
    }
}

#[tokio::test]
async fn diag_error_large_and_image_results() {
    let mut s = Session::legacy(json!({})).await;
    let error = s.call(1, "diag_error", json!({}), json!({})).await;
    assert_eq!(error[0]["result"]["isError"], true);
    assert!(text(&error[0]).starts_with("This is a deliberate tool error"));

    let large = s.call(2, "diag_large", json!({"kib": 3}), json!({})).await;
    assert_eq!(text(&large[0]).len(), 3 * 1024);
    let too_large = s
        .call(3, "diag_large", json!({"kib": 1025}), json!({}))
        .await;
    assert_eq!(too_large[0]["result"]["isError"], true);

    let mut meta = modern_meta(json!({}));
    meta["progressToken"] = json!("unused");
    let image = s.call(4, "diag_image", json!({}), meta).await;
    let block = &image[0]["result"]["content"][0];
    assert_eq!(block["type"], "image");
    assert_eq!(block["mimeType"], "image/png");
    // The PNG signature, base64.
    assert!(block["data"].as_str().unwrap().starts_with("iVBORw0KGgo"));
    s.finish().await;
}

#[tokio::test]
async fn the_async_loop_carries_the_same_frames() {
    let socket = Session::start_on_socket(&["--diagnostic"]);
    let mut s = Session::handshaken(socket, json!({"roots": {}})).await;
    let frames = s
        .call(
            1,
            "diag_progress",
            json!({"steps": 2, "delay_ms": 0}),
            json!({"progressToken": 5}),
        )
        .await;
    assert_eq!(progress(&frames), [(json!(5), 1, 2), (json!(5), 2, 2)]);
    s.send(json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"diag_roots"}}))
        .await;
    let request = s.recv().await;
    assert_eq!(request["method"], "roots/list");
    s.send(json!({"jsonrpc":"2.0","id":request["id"],"result":{"roots":[]}}))
        .await;
    assert_eq!(
        text(&s.recv().await),
        r#"The client answered roots/list with: {"roots":[]}"#
    );
    s.send(json!({"jsonrpc":"2.0","id":3,"method":"tools/call",
        "params":{"name":"diag_slow","arguments":{"seconds":300}}}))
        .await;
    s.send(json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}))
        .await;
    s.send(json!({"jsonrpc":"2.0","id":4,"method":"ping"}))
        .await;
    assert_eq!(s.recv().await, json!({"jsonrpc":"2.0","id":4,"result":{}}));
    s.finish().await;
}
