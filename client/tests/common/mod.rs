//! Helpers shared by the client's integration tests: bounded waits, the real server binary, an
//! in-memory echo server, a scripted fake server, fixtures, and `/proc` inspection.
//!
//! Every wait here is bounded, so a broken client fails a test instead of hanging it.
#![allow(clippy::unwrap_used, dead_code)]

#[path = "../../../testsupport/echo_server.rs"]
mod echo_server_bin;

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_client::{Client, ClientOptions, EraChoice, FrameDirection};
use mcp_echo_server::{default_tools, serve, Config, Exit};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};
use tokio::task::JoinHandle;

/// The bound on every wait that should finish almost at once.
pub const WAIT: Duration = Duration::from_secs(10);

/// Awaits `fut`, failing the test if it takes longer than [`WAIT`].
pub async fn within<F: Future>(what: &str, fut: F) -> F::Output {
    within_for(WAIT, what, fut).await
}

/// Awaits `fut`, failing the test if it takes longer than `limit`.
pub async fn within_for<F: Future>(limit: Duration, what: &str, fut: F) -> F::Output {
    tokio::time::timeout(limit, fut)
        .await
        .unwrap_or_else(|_| panic!("timed out after {limit:?} waiting for {what}"))
}

/// Polls `check` every 10 ms until it holds, failing the test after `limit`.
pub async fn eventually(limit: Duration, what: &str, mut check: impl FnMut() -> bool) {
    within_for(limit, what, async {
        while !check() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
}

// ---------------------------------------------------------------------------------------------
// The real server binary
// ---------------------------------------------------------------------------------------------

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    echo_server_bin::workspace_root()
}

/// The `mcp-echo-server` of the profile these tests were built with (built once if missing).
pub fn server_bin() -> &'static Path {
    echo_server_bin::echo_server()
}

/// A fixture script of `tests/fixtures/`.
pub fn fixture(name: &str) -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("fixtures")
        .join(name);
    assert!(path.is_file(), "missing fixture {}", path.display());
    path
}

// ---------------------------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------------------------

/// Options with short timeouts, so a test that needs one to fire stays fast.
pub fn quick_options() -> ClientOptions {
    ClientOptions {
        request_timeout: Duration::from_secs(5),
        close_grace: Duration::from_millis(300),
        ..ClientOptions::default()
    }
}

/// [`quick_options`] that skip the `server/discover` probe: for tests of the legacy handshake
/// itself, and for scripted servers that answer whatever comes first as `initialize`.
pub fn legacy_options() -> ClientOptions {
    ClientOptions {
        era: EraChoice::Legacy,
        ..quick_options()
    }
}

/// [`quick_options`] that insist on the modern era.
pub fn modern_options() -> ClientOptions {
    ClientOptions {
        era: EraChoice::Modern,
        ..quick_options()
    }
}

/// A frame log filled by [`ClientOptions::frame_hook`].
pub type Frames = Arc<Mutex<Vec<(FrameDirection, Value)>>>;

/// `options` with a frame hook that records every frame as (direction, parsed JSON).
pub fn recording(options: ClientOptions) -> (ClientOptions, Frames) {
    let frames: Frames = Arc::default();
    let log = Arc::clone(&frames);
    let options = ClientOptions {
        frame_hook: Some(Arc::new(move |direction, json: &str| {
            let value = serde_json::from_str(json)
                .unwrap_or_else(|e| panic!("the frame hook got invalid JSON ({e}): {json}"));
            log.lock().unwrap().push((direction, value));
        })),
        ..options
    };
    (options, frames)
}

/// The `method` members of the frames sent so far.
pub fn sent_methods(frames: &Frames) -> Vec<String> {
    frames
        .lock()
        .unwrap()
        .iter()
        .filter(|(d, _)| *d == FrameDirection::Send)
        .filter_map(|(_, v)| v["method"].as_str().map(str::to_owned))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// The echo server in memory
// ---------------------------------------------------------------------------------------------

/// Our echo server (`mcp_echo_server::serve`) over two in-memory pipes, and a client for it.
pub fn echo_in_memory(options: ClientOptions) -> (Client, JoinHandle<std::io::Result<Exit>>) {
    let (client_write, server_read) = tokio::io::duplex(1 << 16);
    let (server_write, client_read) = tokio::io::duplex(1 << 16);
    let server = tokio::spawn(async move {
        serve(
            server_read,
            server_write,
            &Config::default(),
            Arc::new(default_tools()),
            std::future::pending(),
        )
        .await
    });
    (
        Client::connect_io(client_read, client_write, options),
        server,
    )
}

// ---------------------------------------------------------------------------------------------
// A scripted fake server
// ---------------------------------------------------------------------------------------------

/// The other end of an in-memory connection, driven by the test line by line
/// (newline-delimited JSON).
pub struct Fake {
    lines: Lines<BufReader<DuplexStream>>,
    write: Option<DuplexStream>,
}

/// A client connected to a [`Fake`] server over two in-memory pipes.
pub fn fake_server(options: ClientOptions) -> (Client, Fake) {
    let (client_write, server_read) = tokio::io::duplex(1 << 20);
    let (server_write, client_read) = tokio::io::duplex(1 << 20);
    let client = Client::connect_io(client_read, client_write, options);
    let fake = Fake {
        lines: BufReader::new(server_read).lines(),
        write: Some(server_write),
    };
    (client, fake)
}

/// A valid `initialize` result offering `version`.
pub fn init_result(version: &str) -> Value {
    json!({
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": true}},
        "serverInfo": {"name": "fake-server", "version": "9.9.9"},
        "instructions": "scripted by a test"
    })
}

/// A valid `server/discover` result (2026-07-28) listing `versions`.
pub fn discover_result(versions: &[&str]) -> Value {
    json!({
        "resultType": "complete",
        "supportedVersions": versions,
        "capabilities": {"tools": {"listChanged": true}},
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "fake-modern", "version": "7.7.7"}},
        "instructions": "a modern fake",
        "ttlMs": 60000,
        "cacheScope": "public"
    })
}

impl Fake {
    /// The next line the client sent, or `None` once the client closed its output.
    pub async fn line(&mut self) -> Option<String> {
        within("a frame from the client", self.lines.next_line())
            .await
            .unwrap()
    }

    /// The next message the client sent, parsed.
    pub async fn recv(&mut self) -> Value {
        let line = self
            .line()
            .await
            .expect("the client closed its output instead of sending a frame");
        serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("the client sent invalid JSON ({e}): {line}"))
    }

    /// The next message, which must be a request for `method`.
    pub async fn expect_request(&mut self, method: &str) -> Value {
        let request = self.recv().await;
        assert_eq!(request["jsonrpc"], "2.0", "{request}");
        assert_eq!(request["method"], method, "{request}");
        assert!(
            request["id"].is_i64() || request["id"].is_string(),
            "a request needs an id: {request}"
        );
        request
    }

    /// Asserts the client sends nothing within `limit` (and does not close its output).
    pub async fn expect_silence(&mut self, limit: Duration) {
        if let Ok(line) = tokio::time::timeout(limit, self.lines.next_line()).await {
            panic!("expected no frame from the client, got {line:?}");
        }
    }

    /// Waits until the client closes its output (EOF), failing on any frame before that.
    pub async fn expect_eof(&mut self) {
        if let Some(line) = self.line().await {
            panic!("expected the client to close its output, got {line}");
        }
    }

    pub async fn send_raw(&mut self, line: &str) {
        let write = self.write.as_mut().expect("output already closed");
        within("writing to the client", async {
            write.write_all(line.as_bytes()).await.unwrap();
            write.write_all(b"\n").await.unwrap();
        })
        .await;
    }

    pub async fn send(&mut self, message: Value) {
        self.send_raw(&message.to_string()).await;
    }

    pub async fn reply(&mut self, id: &Value, result: Value) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "result": result}))
            .await;
    }

    pub async fn reply_error(&mut self, id: &Value, code: i64, message: &str) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}))
            .await;
    }

    /// Answers `initialize` (offering `version`) and reads `notifications/initialized`. A
    /// `server/discover` probe before it (`EraChoice::Auto`) is refused with -32601, as a
    /// legacy server does.
    pub async fn handshake_with(&mut self, version: &str) {
        let mut init = self.recv().await;
        if init["method"] == "server/discover" {
            self.reply_error(&init["id"], -32601, "Method not found")
                .await;
            init = self.recv().await;
        }
        assert_eq!(init["jsonrpc"], "2.0", "{init}");
        assert_eq!(init["method"], "initialize", "{init}");
        assert!(init["id"].is_i64(), "a request needs an id: {init}");
        self.reply(&init["id"], init_result(version)).await;
        let initialized = self.recv().await;
        assert_eq!(
            initialized,
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
        );
    }

    pub async fn handshake(&mut self) {
        self.handshake_with("2025-11-25").await;
    }

    /// Answers the `server/discover` probe as a modern server; returns the probe.
    pub async fn discover(&mut self) -> Value {
        let probe = self.expect_request("server/discover").await;
        self.reply(&probe["id"], discover_result(&["2026-07-28"]))
            .await;
        probe
    }

    /// Closes the server's output: the client reads EOF.
    pub fn close_output(&mut self) {
        self.write = None;
    }
}

// ---------------------------------------------------------------------------------------------
// /proc
// ---------------------------------------------------------------------------------------------

/// (state, ppid, pgrp) of a process, from `/proc/<pid>/stat`; `None` when it does not exist.
pub fn proc_stat(pid: u32) -> Option<(char, u32, u32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may contain spaces: split after the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some((state, ppid, pgrp))
}

/// Every process in process group `pgid`: (pid, state, ppid).
pub fn group_members(pgid: u32) -> Vec<(u32, char, u32)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let (state, ppid, pgrp) = proc_stat(pid)?;
            (pgrp == pgid).then_some((pid, state, ppid))
        })
        .collect()
}
