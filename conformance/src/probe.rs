//! One server process under test, with the small vocabulary checks are written in: send,
//! wait for the response to an id, expect silence, shut down. Every wait is bounded.

use std::process::ExitStatus;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use mcp_client::raw::Direction;
use mcp_client::{RawConnection, RawEvent, TranscriptEntry};
use mcp_protocol::mcp::modern;
use serde_json::{json, Value};

use crate::pattern::short;
use crate::runner::Ctx;

/// What a check's processes left behind, for the report.
#[derive(Debug, Default)]
pub struct Collected {
    pub transcript: Vec<TranscriptEntry>,
    pub stderr: Vec<String>,
}

pub type Sink = Arc<Mutex<Collected>>;

/// At most this many frames (and, separately, non-frames) are kept in [`Probe::received`] and
/// [`Probe::garbage`]: a server flooding stdout must not grow the harness's memory. Checks send
/// a few hundred messages at most; the totals are still counted.
pub const KEPT: usize = 1000;

/// Of each process's transcript, the report keeps entries from the start up to this many bytes
/// of text, and from the end up to [`TRANSCRIPT_TAIL_BYTES`]; a note says how many were left
/// out between them. A flood of 20 000 garbage lines is not worth megabytes per check.
pub const TRANSCRIPT_HEAD_BYTES: usize = 16 * 1024;
pub const TRANSCRIPT_TAIL_BYTES: usize = 8 * 1024;

/// One thing read from stdout.
#[derive(Debug, Clone, PartialEq)]
pub enum Got {
    Json(Value),
    /// Bytes that are not a JSON frame: a spec violation on stdout.
    Garbage(String),
    Eof,
    Timeout,
}

/// A spawned server with helpers for checks.
#[derive(Debug)]
pub struct Probe {
    conn: RawConnection,
    next_id: i64,
    /// The bound of each wait.
    pub wait: Duration,
    /// Responses that arrived while waiting for another id.
    stash: Vec<Value>,
    /// Everything on stdout that was not a JSON frame (the first [`KEPT`]).
    pub garbage: Vec<String>,
    /// How many things on stdout were not JSON frames, all told.
    pub garbage_total: usize,
    /// Every JSON frame received (the first [`KEPT`]).
    pub received: Vec<Value>,
    /// How many JSON frames were received, all told.
    pub received_total: usize,
    /// Added as `params._meta` to every request [`Probe::request`] sends (a modern session,
    /// see [`Ctx::modern_session`]); `None` for legacy sessions.
    pub meta: Option<Value>,
    sink: Sink,
}

impl Drop for Probe {
    fn drop(&mut self) {
        let kept = bounded_transcript(self.conn.transcript());
        let mut c = self.sink.lock().unwrap_or_else(PoisonError::into_inner);
        c.transcript.extend(kept);
        c.stderr.extend(self.conn.stderr_now());
    }
}

/// Is this a JSON-RPC response (not a request or notification)?
pub fn is_response(v: &Value) -> bool {
    v.get("method").is_none() && (v.get("result").is_some() || v.get("error").is_some())
}

impl Probe {
    pub(crate) fn new(conn: RawConnection, wait: Duration, sink: Sink) -> Probe {
        Probe {
            conn,
            next_id: 1,
            wait,
            stash: Vec::new(),
            garbage: Vec::new(),
            garbage_total: 0,
            received: Vec::new(),
            received_total: 0,
            meta: None,
            sink,
        }
    }

    pub fn conn(&self) -> &RawConnection {
        &self.conn
    }

    /// A fresh integer id.
    pub fn id(&mut self) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    pub async fn send(&mut self, v: &Value) -> Result<(), String> {
        match self.conn.send_json(v).await {
            Ok(()) => Ok(()),
            Err(e) => Err(self.write_failed(&e).await),
        }
    }

    pub async fn send_raw(&mut self, bytes: &[u8]) -> Result<(), String> {
        match self.conn.send_raw(bytes).await {
            Ok(()) => Ok(()),
            Err(e) => Err(self.write_failed(&e).await),
        }
    }

    /// Why a write failed: usually because the server is gone, so say how it ended.
    async fn write_failed(&self, e: &std::io::Error) -> String {
        format!(
            "writing to the server's stdin failed: {e}{}",
            self.exit_note().await
        )
    }

    /// One frame holding `body` in the connection's framing.
    pub fn frame(&self, body: &[u8]) -> Vec<u8> {
        self.conn.frame(body)
    }

    /// The next thing on stdout, bounded by `limit`.
    pub async fn next(&mut self, limit: Duration) -> Got {
        match self.conn.recv(limit).await {
            None => Got::Timeout,
            Some(RawEvent::Eof) | Some(RawEvent::ReadError(_)) => Got::Eof,
            Some(RawEvent::Invalid(e)) => self.garbage(e.to_string()),
            Some(RawEvent::Frame(bytes)) => match serde_json::from_slice::<Value>(&bytes) {
                Ok(v) => {
                    self.received_total += 1;
                    if self.received.len() < KEPT {
                        self.received.push(v.clone());
                    }
                    Got::Json(v)
                }
                Err(e) => self.garbage(format!(
                    "not JSON ({e}): {}",
                    String::from_utf8_lossy(&bytes[..bytes.len().min(120)])
                )),
            },
        }
    }

    fn garbage(&mut self, text: String) -> Got {
        self.garbage_total += 1;
        if self.garbage.len() < KEPT {
            self.garbage.push(text.clone());
        }
        Got::Garbage(text)
    }

    /// The next thing on stdout, or `Timeout` once `deadline` has passed. Unlike a loop over
    /// [`Probe::next`] with the time left, this ends at the deadline even while the server
    /// keeps writing (a zero limit still returns whatever is already there).
    pub async fn next_until(&mut self, deadline: tokio::time::Instant) -> Got {
        let now = tokio::time::Instant::now();
        if now >= deadline {
            return Got::Timeout;
        }
        self.next(deadline - now).await
    }

    /// What came instead of a reply since `garbage_before` non-frames had been seen, if
    /// anything: for a message that says why no reply was found.
    fn garbage_note(&self, garbage_before: usize) -> String {
        let n = self.garbage_total - garbage_before;
        if n == 0 {
            return String::new();
        }
        let first = self
            .garbage
            .get(garbage_before)
            .or(self.garbage.last())
            .map(String::as_str)
            .unwrap_or("");
        format!(
            "; meanwhile {n} thing{} read from stdout {} not a JSON frame (garbage), the first: \
             {first}",
            if n == 1 { "" } else { "s" },
            if n == 1 { "was" } else { "were" },
        )
    }

    /// Waits for the response whose `id` equals `id` (responses to other ids are kept for
    /// later; notifications and server requests are passed over).
    pub async fn response(&mut self, id: &Value) -> Result<Value, String> {
        if let Some(i) = self.stash.iter().position(|r| r.get("id") == Some(id)) {
            return Ok(self.stash.remove(i));
        }
        let deadline = tokio::time::Instant::now() + self.wait;
        let garbage_before = self.garbage_total;
        loop {
            match self.next_until(deadline).await {
                Got::Json(v) if is_response(&v) => {
                    if v.get("id") == Some(id) {
                        return Ok(v);
                    }
                    if self.stash.len() < KEPT {
                        self.stash.push(v);
                    }
                }
                Got::Json(_) | Got::Garbage(_) => {}
                Got::Eof => {
                    return Err(format!(
                        "the server closed its stdout before answering id {id}{}{}",
                        self.exit_note().await,
                        self.garbage_note(garbage_before)
                    ))
                }
                Got::Timeout => {
                    return Err(format!(
                        "no response to id {id} within {:?}{}",
                        self.wait,
                        self.garbage_note(garbage_before)
                    ))
                }
            }
        }
    }

    /// The next response (requests and notifications from the server are passed over), or
    /// `None` if none came within `window`.
    pub async fn next_response(&mut self, window: Duration) -> Result<Option<Value>, String> {
        let deadline = tokio::time::Instant::now() + window;
        loop {
            match self.next_until(deadline).await {
                Got::Json(v) if is_response(&v) => return Ok(Some(v)),
                Got::Json(_) => {}
                Got::Garbage(g) => return Err(format!("bytes that are not a frame: {g}")),
                Got::Eof => {
                    return Err(format!(
                        "the server closed its stdout{}",
                        self.exit_note().await
                    ))
                }
                Got::Timeout => return Ok(None),
            }
        }
    }

    /// A short session of ordinary and failing requests (answers are the caller's to judge
    /// through [`Probe::received`]).
    pub async fn exercise(&mut self) {
        let _ = self.request("ping", None).await;
        let _ = self.request("tools/list", None).await;
        let _ = self.request("no/such/method", None).await;
        let _ = self
            .request(
                "tools/call",
                Some(json!({"name": "mcp-conformance-no-such-tool", "arguments": {}})),
            )
            .await;
    }

    /// Sends a request with a fresh id and returns its whole response object. In a modern
    /// session the request carries [`Probe::meta`] as `params._meta` (unless it has its own).
    pub async fn request(&mut self, method: &str, params: Option<Value>) -> Result<Value, String> {
        let params = match &self.meta {
            Some(meta) => Some(with_meta(params, meta)),
            None => params,
        };
        self.send_request(method, params).await
    }

    /// A 2026-07-28 request: `params._meta` carries the version, empty client capabilities and
    /// the harness's identity ([`modern_meta`]), whatever kind of session this is.
    pub async fn modern_request(
        &mut self,
        method: &str,
        params: Option<Value>,
    ) -> Result<Value, String> {
        let params = with_meta(params, &modern_meta(modern::VERSION));
        self.send_request(method, Some(params)).await
    }

    /// Sends a request exactly as given (no `_meta` added) and returns its response object.
    pub async fn send_request(
        &mut self,
        method: &str,
        params: Option<Value>,
    ) -> Result<Value, String> {
        let id = json!(self.id());
        let mut msg = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if let Some(p) = params {
            msg["params"] = p;
        }
        self.send(&msg).await?;
        self.response(&id).await
    }

    pub async fn notify(&mut self, method: &str, params: Option<Value>) -> Result<(), String> {
        let mut msg = json!({"jsonrpc": "2.0", "method": method});
        if let Some(p) = params {
            msg["params"] = p;
        }
        self.send(&msg).await
    }

    /// `initialize` with `version`; returns the response object (result or error).
    pub async fn initialize(&mut self, version: &str) -> Result<Value, String> {
        self.request("initialize", Some(initialize_params(version)))
            .await
    }

    /// `initialize` + `notifications/initialized`; returns the initialize result.
    pub async fn handshake(&mut self, version: &str) -> Result<Value, String> {
        let reply = self.initialize(version).await?;
        match reply.get("result") {
            Some(result) => {
                let result = result.clone();
                self.notify("notifications/initialized", None).await?;
                Ok(result)
            }
            None => Err(format!("initialize failed: {}", short(&reply))),
        }
    }

    /// Expects no response (and nothing that is not a frame) within `window`.
    pub async fn silence(&mut self, window: Duration) -> Result<(), String> {
        if let Some(r) = self.stash.first() {
            return Err(format!("got {}", short(r)));
        }
        let deadline = tokio::time::Instant::now() + window;
        loop {
            match self.next_until(deadline).await {
                Got::Timeout => return Ok(()),
                Got::Json(v) if is_response(&v) => return Err(format!("got {}", short(&v))),
                Got::Json(_) => {}
                Got::Garbage(g) => return Err(format!("got bytes that are not a frame: {g}")),
                Got::Eof => return Ok(()),
            }
        }
    }

    /// Checks the server still answers: a ping, or any response to it.
    pub async fn still_serving(&mut self) -> Result<(), String> {
        self.request("ping", None)
            .await
            .map(drop)
            .map_err(|e| format!("the server stopped serving: {e}"))
    }

    pub fn close_stdin(&mut self) {
        self.conn.close_stdin();
    }

    pub fn terminate(&self) {
        self.conn.terminate();
    }

    pub async fn wait_exit(&self, limit: Duration) -> Option<ExitStatus> {
        self.conn.wait_exit(limit).await
    }

    /// How the server ended, if it did within a moment: ` (the server was killed by signal 9
    /// (SIGKILL))`, or nothing.
    async fn exit_note(&self) -> String {
        match self.conn.wait_exit(Duration::from_millis(300)).await {
            Some(status) => format!(" (the server {})", describe_exit(status)),
            None => String::new(),
        }
    }
}

/// `exited with status 1`, `was killed by signal 9 (SIGKILL)`.
pub fn describe_exit(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    if let Some(code) = status.code() {
        return format!("exited with status {code}");
    }
    match status.signal() {
        Some(n) => match nix::sys::signal::Signal::try_from(n) {
            Ok(signal) => format!("was killed by signal {n} ({signal})"),
            Err(_) => format!("was killed by signal {n}"),
        },
        None => format!("ended ({status})"),
    }
}

/// A process's transcript cut to a bounded size: the entries from the start up to
/// [`TRANSCRIPT_HEAD_BYTES`] of text, a note of how many were left out, and the entries at
/// the end up to [`TRANSCRIPT_TAIL_BYTES`].
pub fn bounded_transcript(mut entries: Vec<TranscriptEntry>) -> Vec<TranscriptEntry> {
    let fits = |budget: usize, it: &mut dyn Iterator<Item = &TranscriptEntry>| {
        let mut used = 0;
        it.take_while(|e| {
            used += e.text.len();
            used <= budget
        })
        .count()
    };
    let head = fits(TRANSCRIPT_HEAD_BYTES, &mut entries.iter()).max(1);
    if head >= entries.len() {
        return entries;
    }
    let tail = fits(TRANSCRIPT_TAIL_BYTES, &mut entries[head..].iter().rev());
    let left_out = entries.len() - head - tail;
    if left_out == 0 {
        return entries;
    }
    let at_ms = entries[head].at_ms;
    let rest = entries.split_off(head + left_out);
    entries.truncate(head);
    entries.push(TranscriptEntry {
        at_ms,
        direction: Direction::Event,
        text: format!("<{left_out} transcript entries left out>"),
    });
    entries.extend(rest);
    entries
}

/// The `_meta` of a modern request (2026-07-28 `schema.ts` RequestMetaObject): `version`, no
/// optional client capabilities, and the harness's identity.
pub fn modern_meta(version: &str) -> Value {
    json!({
        (modern::META_PROTOCOL_VERSION): version,
        (modern::META_CLIENT_CAPABILITIES): {},
        (modern::META_CLIENT_INFO): {"name": "mcp-conformance", "version": env!("CARGO_PKG_VERSION")},
    })
}

/// `params` with `_meta` set to `meta`; a `_meta` already there is kept. Params that are not
/// an object (a check sending something odd on purpose) are left alone.
pub fn with_meta(params: Option<Value>, meta: &Value) -> Value {
    let mut params = params.unwrap_or_else(|| json!({}));
    if let Some(obj) = params.as_object_mut() {
        obj.entry("_meta").or_insert_with(|| meta.clone());
    }
    params
}

/// `initialize` params as a spec-following client sends them.
pub fn initialize_params(version: &str) -> Value {
    json!({
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "mcp-conformance", "version": env!("CARGO_PKG_VERSION")}
    })
}

impl Ctx {
    /// A fresh process, no handshake.
    pub async fn spawn(&self) -> Result<Probe, String> {
        let conn = RawConnection::spawn(
            &self.target.command(),
            self.config.framing,
            self.config.max_message_bytes,
        )
        .map_err(|e| e.to_string())?;
        Ok(Probe::new(conn, self.config.wait, Arc::clone(&self.sink)))
    }

    /// A fresh process for a modern (2026-07-28) session: no handshake, and every request sent
    /// with [`Probe::request`] carries [`modern_meta`].
    pub async fn modern_session(&self) -> Result<Probe, String> {
        let mut probe = self.spawn().await?;
        probe.meta = Some(modern_meta(modern::VERSION));
        Ok(probe)
    }

    /// A fresh process after a complete handshake with the latest version.
    pub async fn ready(&self) -> Result<Probe, String> {
        let mut probe = self.spawn().await?;
        probe.handshake(crate::LATEST).await?;
        Ok(probe)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    fn entry(i: usize, len: usize) -> TranscriptEntry {
        TranscriptEntry {
            at_ms: i as f64,
            direction: Direction::Receive,
            text: format!("{i:0>len$}", len = len.min(64)) + &"x".repeat(len.saturating_sub(64)),
        }
    }

    #[test]
    fn a_short_transcript_is_kept_whole() {
        let entries: Vec<TranscriptEntry> = (0..100).map(|i| entry(i, 100)).collect();
        assert_eq!(bounded_transcript(entries.clone()), entries);
    }

    #[test]
    fn a_flood_keeps_its_head_and_tail_and_says_what_was_left_out() {
        let entries: Vec<TranscriptEntry> = (0..20_000).map(|i| entry(i, 100)).collect();
        let kept = bounded_transcript(entries);
        let head = TRANSCRIPT_HEAD_BYTES / 100;
        let tail = TRANSCRIPT_TAIL_BYTES / 100;
        assert_eq!(kept.len(), head + 1 + tail);
        assert_eq!(kept[0].text, entry(0, 100).text);
        assert_eq!(kept[head - 1].text, entry(head - 1, 100).text);
        assert_eq!(kept[head].direction, Direction::Event);
        assert_eq!(
            kept[head].text,
            format!("<{} transcript entries left out>", 20_000 - head - tail)
        );
        assert_eq!(kept[head + 1].text, entry(20_000 - tail, 100).text);
        assert_eq!(kept.last().unwrap().text, entry(19_999, 100).text);
        let bytes: usize = kept.iter().map(|e| e.text.len()).sum();
        assert!(bytes < TRANSCRIPT_HEAD_BYTES + TRANSCRIPT_TAIL_BYTES + 100);
    }

    #[test]
    fn one_huge_entry_is_still_shown() {
        let entries = vec![entry(0, 100_000), entry(1, 10)];
        let kept = bounded_transcript(entries.clone());
        assert_eq!(kept, entries);
    }

    #[test]
    fn exits_are_described_with_their_signal() {
        assert_eq!(
            describe_exit(ExitStatus::from_raw(9)),
            "was killed by signal 9 (SIGKILL)"
        );
        assert_eq!(
            describe_exit(ExitStatus::from_raw(1 << 8)),
            "exited with status 1"
        );
    }
}
