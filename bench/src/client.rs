//! The client-library driver (`--driver client`): the same echo calls made through
//! [`mcp_client::Client`] — its spawn, `initialize` handshake, pending map keyed by id, codec
//! and reader task — so a report says how many calls per second the library itself can drive
//! and what each costs it. The lean driver ([`super::driver`]) stays the default: it is what
//! measures servers, and it is cheaper per call than any general-purpose client.
//!
//! The library picks the JSON-RPC ids, so each call's text names the call's own number instead
//! (`"<n>.xxxx…"`), and the reply's `content[0].text` must be exactly that text. The EOF burst
//! is not made here: a library caller cannot close stdin between two frames it wrote, so
//! `--driver client` reports the close-to-exit time of `Client::close` and no EOF count.

use std::time::{Duration, Instant};

use futures::stream::{self, StreamExt, TryStreamExt};
use mcp_client::{Client, ClientOptions, CloseStep, EraChoice};
use mcp_protocol::mcp::{CallToolResult, ContentBlock, ProtocolVersion};

use super::error::{verify, DriveError, BENCH_VERSION, ECHO_CONTRACT};
use super::text::{text_len, Filler};
use super::{procfs, BenchConfig, Calls, RunResult};

/// One runtime thread, like the lean driver: the bench process's CPU is the client's.
fn runtime() -> Result<tokio::runtime::Runtime, DriveError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| DriveError::Start(format!("cannot start a tokio runtime: {e}")))
}

fn options(config: &BenchConfig) -> ClientOptions {
    ClientOptions {
        framing: config.framing,
        request_timeout: config.wait,
        protocol_version: ProtocolVersion::parse_legacy(BENCH_VERSION)
            .unwrap_or(ProtocolVersion::LATEST_LEGACY),
        // The lean driver's handshake: `initialize` first, no `server/discover` probe.
        era: EraChoice::Legacy,
        close_grace: config.wait,
        ..ClientOptions::default()
    }
}

/// Spawns the server and connects; returns the client and the milliseconds from the spawn to
/// the end of the handshake (the `initialize` reply, then `notifications/initialized` queued).
async fn start(config: &BenchConfig) -> Result<(Client, f64), DriveError> {
    let spawned = Instant::now();
    let client = super::pin::on_server_cpu(config.pin, || {
        Client::spawn(config.command.clone(), options(config))
    })
    .map_err(DriveError::Start)?
    .map_err(|e| DriveError::Start(format!("cannot start {}: {e}", config.command.display())))?;
    client
        .connect()
        .await
        .map_err(|e| verify(format!("the handshake failed: {e}")))?;
    Ok((client, spawned.elapsed().as_secs_f64() * 1e3))
}

/// Whether `result` is call `n`'s echo: not an error, `content[0].text` exactly its text, and
/// so is `structuredContent.text` when that is a string (other structured output is the
/// server's own schema).
fn check(
    result: &CallToolResult,
    n: u64,
    payload: usize,
    filler: &Filler,
) -> Result<(), DriveError> {
    let text = match result.content.first() {
        Some(ContentBlock::Text { text }) => Some(text.as_str()),
        _ => None,
    };
    let structured_ok = match result
        .structured_content
        .as_ref()
        .and_then(|s| s.get("text"))
    {
        Some(serde_json::Value::String(t)) => filler.is_text(t.as_bytes(), n, payload),
        _ => true,
    };
    match text {
        Some(t)
            if result.is_error != Some(true)
                && structured_ok
                && filler.is_text(t.as_bytes(), n, payload) =>
        {
            Ok(())
        }
        _ => {
            let shown: String = serde_json::to_string(result)
                .unwrap_or_default()
                .chars()
                .take(300)
                .collect();
            // A tool error or no text at all: most often the server's `echo` is another tool.
            let advice = if result.is_error == Some(true) || text.is_none() {
                format!("; {ECHO_CONTRACT}")
            } else {
                String::new()
            };
            Err(verify(format!(
                "call {n}: the result is not the echo of the {}-byte text it sent (\"{n}.xx…\"): {shown}{advice}",
                text_len(n, payload),
            )))
        }
    }
}

/// Call `n` with its `payload`-byte text (`filler` holds at least `payload` bytes).
async fn call(client: &Client, n: u64, payload: usize, filler: &Filler) -> Result<(), DriveError> {
    let text = filler
        .text(n, payload)
        .ok_or_else(|| verify(format!("no text for call {n}: the filler is too short")))?;
    let result = client
        .call_tool("echo", serde_json::json!({ "text": text }))
        .await
        .map_err(|e| verify(format!("call {n}: {e}")))?;
    check(&result, n, payload, filler)
}

/// Starts the server, connects and closes it; nothing is measured.
pub(super) fn warm_up(config: &BenchConfig) -> Result<(), DriveError> {
    runtime()?.block_on(async {
        let (client, _) = start(config).await?;
        client.close().await;
        Ok(())
    })
}

/// One run through the client library: start, every (payload, window) cell, then close.
pub(super) fn run_once(config: &BenchConfig, run: usize) -> Result<RunResult, DriveError> {
    let rt = runtime()?;
    super::progress(config, run, "starting (client library)");
    let (client, start_ms) = rt.block_on(start(config))?;
    let pid = client
        .pid()
        .ok_or_else(|| DriveError::Start("the client reports no server process".to_owned()))?;
    let mut result = RunResult {
        start_ms,
        eof_answered: None,
        ..RunResult::default()
    };
    let mut calls = ClientCalls {
        rt: &rt,
        client: &client,
        filler: Filler::default(),
        next: 0,
    };
    super::measure_cells(config, run, Some(pid), &mut calls, &mut result)?;
    result.peak_rss_kib = procfs::peak_rss_kib(pid).map(|k| k as f64);
    super::progress(config, run, "closing (client library)");
    let closed = rt.block_on(client.close());
    match closed.step {
        CloseStep::StdinClosed | CloseStep::AlreadyExited => {
            result.eof_exit_ms = Some(closed.elapsed.as_secs_f64() * 1e3);
        }
        step => {
            result.eof_problem = Some(format!(
                "the server did not exit within {:.1} s of its stdin closing ({step:?} after {:.1} s)",
                config.wait.as_secs_f64(),
                closed.elapsed.as_secs_f64()
            ));
        }
    }
    Ok(result)
}

/// The client library's calls, numbered from 1 across the run, each cell's driven on the
/// runtime with `block_on`. The driver's CPU is the whole process's: the library's tasks.
struct ClientCalls<'a> {
    rt: &'a tokio::runtime::Runtime,
    client: &'a Client,
    filler: Filler,
    next: u64,
}

impl Calls for ClientCalls<'_> {
    fn one(&mut self, payload: usize) -> Result<(), DriveError> {
        self.filler.grow(payload);
        self.next += 1;
        self.rt
            .block_on(call(self.client, self.next, payload, &self.filler))
    }

    fn many(&mut self, calls: usize, window: usize, payload: usize) -> Result<(), DriveError> {
        self.filler.grow(payload);
        let first = self.next + 1;
        self.next += calls as u64;
        let (client, filler) = (self.client, &self.filler);
        self.rt.block_on(
            stream::iter(first..=self.next)
                .map(|n| call(client, n, payload, filler))
                .buffer_unordered(window)
                .try_for_each(|()| async { Ok(()) }),
        )
    }

    fn own_cpu(&self) -> Option<Duration> {
        procfs::cpu_time(std::process::id())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sized(len: usize) -> Filler {
        let mut filler = Filler::default();
        filler.grow(len);
        filler
    }

    #[test]
    fn texts_are_exact_and_checked() {
        let filler = sized(5);
        assert_eq!(filler.text(7, 5).as_deref(), Some("7.xxx"));
        assert_eq!(filler.text(12345, 2).as_deref(), Some("12345."));
        assert_eq!(
            sized(2).text(7, 5),
            None,
            "a filler too short for the payload"
        );
        let good = CallToolResult {
            content: vec![ContentBlock::text("7.xxx")],
            structured_content: None,
            is_error: None,
        };
        assert!(check(&good, 7, 5, &filler).is_ok());
        assert!(check(&good, 8, 5, &filler).is_err(), "another call's text");
        assert!(
            check(&good, 7, 6, &sized(6)).is_err(),
            "a text of the wrong length"
        );
        let bad = CallToolResult {
            content: vec![ContentBlock::text("7.xyx")],
            ..good.clone()
        };
        assert!(
            check(&bad, 7, 5, &filler).is_err(),
            "one byte of the padding changed"
        );
        let structured = |v: serde_json::Value| CallToolResult {
            structured_content: Some(v),
            ..good.clone()
        };
        assert!(check(
            &structured(serde_json::json!({"text": "7.xxx"})),
            7,
            5,
            &filler
        )
        .is_ok());
        assert!(
            check(
                &structured(serde_json::json!({"text": "7.xxy"})),
                7,
                5,
                &filler
            )
            .is_err(),
            "a wrong structured copy"
        );
        assert!(
            check(&structured(serde_json::json!({"echoed": 1})), 7, 5, &filler).is_ok(),
            "the server's own output schema"
        );
        let e = check(
            &structured(serde_json::json!({"text": "7.xxy"})),
            7,
            5,
            &filler,
        )
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
        assert!(
            !e.contains(ECHO_CONTRACT),
            "a wrong copy is not a missing tool: {e}"
        );
        let failed = CallToolResult {
            is_error: Some(true),
            ..good
        };
        let e = check(&failed, 7, 5, &filler)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            e.starts_with("call 7: the result is not the echo of the 5-byte text it sent")
                && e.ends_with(&format!("; {ECHO_CONTRACT}")),
            "{e}"
        );
    }
}
