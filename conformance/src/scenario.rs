//! Scenarios as data: a check written as JSON steps, built in or loaded with
//! `--scenario-file`, so users can add their own replays without writing Rust.
//!
//! ```json
//! {"scenarios": [{
//!   "id": "custom.unknown-method",
//!   "level": "MUST",
//!   "description": "an unknown method gets -32601",
//!   "spec": "JSON-RPC 2.0 §5.1",
//!   "steps": [
//!     {"send": {"jsonrpc": "2.0", "id": 1, "method": "no/such/method"}},
//!     {"expect": {"id": 1, "error": {"code": -32601}}}
//!   ]
//! }]}
//! ```
//!
//! Steps: `send` (one JSON message, framed), `send_frame` (a text body, framed: for invalid
//! JSON), `send_raw` (bytes exactly as given: for framing tests), `expect` (the response whose
//! `id` is the pattern's `id`, or else the next response, must match a
//! [pattern](crate::pattern)), `expect_no_reply` (no response within `within_ms`),
//! `still_serving` (a ping is answered), `close_stdin`, `expect_exit` (exit within `within_ms`,
//! optionally with `code`). A scenario starts with a complete handshake unless `handshake` is
//! false; `protocol_version` picks the version it offers. `quote` may give the words of the
//! cited text that make its level what it is. A scenario runs in a fresh server process.

use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use crate::check::{Level, Outcome};
use crate::ctx::Ctx;
use crate::pattern::{matches, short};
use crate::probe::{Probe, ProbeError};

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub id: String,
    pub level: Level,
    pub description: String,
    pub spec: String,
    #[serde(default)]
    pub quote: String,
    #[serde(default)]
    pub echo_only: bool,
    #[serde(default = "yes")]
    pub handshake: bool,
    #[serde(default)]
    pub protocol_version: Option<String>,
    pub steps: Vec<Step>,
}

fn yes() -> bool {
    true
}

impl Scenario {
    /// A scenario that closes stdin or waits for an exit is about a process: stdio only.
    pub fn transport(&self) -> crate::check::Transport {
        let process = self
            .steps
            .iter()
            .any(|s| matches!(s, Step::CloseStdin(_) | Step::ExpectExit { .. }));
        if process {
            crate::check::Transport::Stdio
        } else {
            crate::check::Transport::Any
        }
    }
}

impl Scenario {
    /// Does it read what the server answers (as opposed to only writing, closing stdin and
    /// waiting for the exit)?
    pub fn reads_replies(&self) -> bool {
        self.steps.iter().any(|s| {
            matches!(
                s,
                Step::Expect(_) | Step::ExpectNoReply { .. } | Step::StillServing(_)
            )
        })
    }
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Step {
    Send(Value),
    SendFrame(String),
    SendRaw(String),
    Expect(Value),
    ExpectNoReply {
        within_ms: u64,
    },
    StillServing(bool),
    CloseStdin(bool),
    ExpectExit {
        within_ms: u64,
        #[serde(default)]
        code: Option<i32>,
    },
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum File {
    Wrapped { scenarios: Vec<Scenario> },
    Bare(Vec<Scenario>),
}

/// Parses a scenario file (`{"scenarios": [...]}` or a bare array).
pub fn parse(text: &str) -> Result<Vec<Scenario>, serde_json::Error> {
    let file: File = serde_json::from_str(text)?;
    Ok(match file {
        File::Wrapped { scenarios } | File::Bare(scenarios) => scenarios,
    })
}

/// Runs a scenario in a fresh server process.
pub async fn run(s: &Scenario, ctx: &Ctx) -> Outcome {
    let mut probe = match ctx.spawn().await {
        Ok(p) => p,
        Err(e) => return Outcome::fail("the server starts", e),
    };
    if s.handshake {
        let version = s.protocol_version.as_deref().unwrap_or(crate::LATEST);
        if let Err(e) = probe.handshake(version).await {
            return Outcome::fail("a complete handshake", e);
        }
    }
    let mut last = Vec::new();
    for (n, step) in s.steps.iter().enumerate() {
        let step_no = n + 1;
        let result: Result<Option<String>, Outcome> = match step {
            Step::Send(v) => probe
                .send(v)
                .await
                .map(|_| None)
                .map_err(|e| Outcome::fail("to write", e)),
            Step::SendFrame(body) => {
                let bytes = probe.frame(body.as_bytes());
                probe
                    .send_raw(&bytes)
                    .await
                    .map(|_| None)
                    .map_err(|e| Outcome::fail("to write", e))
            }
            Step::SendRaw(bytes) => probe
                .send_raw(bytes.as_bytes())
                .await
                .map(|_| None)
                .map_err(|e| Outcome::fail("to write", e)),
            Step::Expect(pattern) => expect(&mut probe, pattern).await.map(Some),
            Step::ExpectNoReply { within_ms } => {
                match probe.silence(Duration::from_millis(*within_ms)).await {
                    None => Ok(None),
                    Some(got) => Err(Outcome::fail(
                        format!("no reply within {within_ms} ms"),
                        got,
                    )),
                }
            }
            Step::StillServing(_) => probe
                .still_serving()
                .await
                .map(|_| None)
                .map_err(|e| Outcome::fail("the server still answers a ping", e)),
            Step::CloseStdin(_) => {
                probe.close_stdin();
                Ok(None)
            }
            Step::ExpectExit { within_ms, code } => {
                match probe.wait_exit(Duration::from_millis(*within_ms)).await {
                    None => Err(Outcome::fail(
                        format!("the server exits within {within_ms} ms"),
                        "it was still running",
                    )),
                    Some(status) => match code {
                        Some(c) if status.code() != Some(*c) => {
                            Err(Outcome::fail(format!("exit code {c}"), status.to_string()))
                        }
                        _ => Ok(Some(status.to_string())),
                    },
                }
            }
        };
        match result {
            Ok(Some(seen)) => last.push(seen),
            Ok(None) => {}
            Err(Outcome::Fail { expected, actual }) => {
                return Outcome::fail(format!("step {step_no}: {expected}"), actual)
            }
            Err(other) => return other,
        }
    }
    Outcome::pass(last.join("; "))
}

/// The response the pattern is about (by its `id`, else the next one) matches the pattern.
async fn expect(probe: &mut Probe, pattern: &Value) -> Result<String, Outcome> {
    let reply = match pattern.get("id") {
        Some(id) if !id.as_str().is_some_and(|s| s.starts_with('$')) => probe
            .response(id)
            .await
            .map_err(|e| Outcome::fail(format!("a reply matching {}", short(pattern)), e))?,
        _ => next_response(probe)
            .await
            .map_err(|e| Outcome::fail(format!("a reply matching {}", short(pattern)), e))?,
    };
    matches(pattern, &reply)
        .map(|_| short(&reply))
        .map_err(|why| {
            Outcome::fail(
                format!("a reply matching {}", short(pattern)),
                format!("{} ({why})", short(&reply)),
            )
        })
}

async fn next_response(probe: &mut Probe) -> Result<Value, ProbeError> {
    let wait = probe.wait();
    probe
        .next_response(wait)
        .await?
        .ok_or(ProbeError::NoReply { within: wait })
}
