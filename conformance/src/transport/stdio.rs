//! A spawned server with byte-level access: send what a well-behaved client never would, and
//! see exactly what comes back and when.
//!
//! Unlike `mcp_client::Client` there is no lifecycle and no pairing: every frame the server
//! writes is handed out in order, unparsed, and everything is kept in a timestamped transcript.
//! The process itself (its signals, exit and stderr) is `mcp_client`'s; its process group is
//! held as a [`Group`], and ended as a whole (SIGTERM, then SIGKILL) when the connection is
//! dropped, even if the server itself has exited and left something running.

use std::process::ExitStatus;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use mcp_client::process::{self, KillOnDrop, Process};
use mcp_client::{ClientError, ServerCommand};
use mcp_protocol::codec::{RawCodec, RawFrame};
use mcp_protocol::{char_prefix, Framing, FramingMode, StdioCodec};
use nix::sys::signal::Signal;
use parking_lot::Mutex;
use serde_json::Value;
use tokio::io::AsyncWriteExt;
use tokio::process::ChildStdin;
use tokio::sync::mpsc;
use tokio_util::codec::FramedRead;

use super::event::RawEvent;
use crate::groups::{self, Group};
use crate::transcript::{Direction, TranscriptEntry};

/// Stderr lines kept for a transcript.
const STDERR_LINES: usize = 2000;
/// Bytes of transcript text kept from the start, and again from the end: a server that floods
/// stdout costs at most twice this, and the report still shows how it began and ended.
const KEEP_BYTES: usize = 256 * 1024;
/// Frames are kept whole up to a quarter of the ring (so a few long frames do not push the
/// rest of a shared session's frames out of it); only a longer one (a 1 MiB echo) is cut,
/// with its size.
const MAX_ENTRY_TEXT: usize = KEEP_BYTES / 4;

type Transcript = Arc<Mutex<Log>>;

/// The first [`KEEP_BYTES`] of entries, then a ring of the last [`KEEP_BYTES`]; what falls out
/// between them is counted.
#[derive(Debug, Default)]
struct Log {
    /// Entries recorded so far, kept or not: entry `n` is the `n`th ever recorded.
    recorded: usize,
    head: Vec<TranscriptEntry>,
    head_bytes: usize,
    tail: std::collections::VecDeque<TranscriptEntry>,
    tail_bytes: usize,
    dropped: usize,
    dropped_bytes: usize,
}

impl Log {
    fn push(&mut self, entry: TranscriptEntry) {
        self.recorded += 1;
        let size = entry.text.len();
        if self.tail.is_empty() && self.head_bytes + size <= KEEP_BYTES {
            self.head_bytes += size;
            self.head.push(entry);
            return;
        }
        self.tail_bytes += size;
        self.tail.push_back(entry);
        while self.tail_bytes > KEEP_BYTES {
            let Some(old) = self.tail.pop_front() else {
                break;
            };
            self.tail_bytes -= old.text.len();
            self.dropped += 1;
            self.dropped_bytes += old.text.len();
        }
    }

    /// The entries recorded since entry number `mark` that are still kept, with a note where
    /// some between them were left out.
    fn since(&self, mark: usize) -> Vec<TranscriptEntry> {
        let mut all: Vec<TranscriptEntry> = self.head.iter().skip(mark).cloned().collect();
        let tail_first = self.recorded - self.tail.len();
        let skip_in_tail = mark.saturating_sub(tail_first);
        let left_out = tail_first.saturating_sub(mark.max(self.head.len()));
        if left_out > 0 {
            all.push(TranscriptEntry {
                at_ms: self.tail.front().map_or(0.0, |e| e.at_ms),
                direction: Direction::Event,
                text: format!("… {left_out} entries left out of the transcript …"),
            });
        }
        all.extend(self.tail.iter().skip(skip_in_tail).cloned());
        all
    }
}

/// A server process with raw pipes.
#[derive(Debug)]
pub struct StdioConn {
    process: Arc<Process>,
    /// Both taken when the connection is dropped, to end the group in the background.
    guard: Option<KillOnDrop>,
    group: Option<Group>,
    stdin: Option<ChildStdin>,
    events: mpsc::Receiver<RawEvent>,
    framing: Framing,
    started: Instant,
    transcript: Transcript,
    eof_seen: bool,
}

impl Drop for StdioConn {
    /// Closes stdin and ends the process group (SIGTERM, then SIGKILL after the grace period)
    /// without holding up the caller; the run waits for every group before it exits. Without
    /// a runtime to do that in, the group is killed at once.
    fn drop(&mut self) {
        self.stdin = None;
        let (group, guard) = (self.group.take(), self.guard.take());
        if let (Ok(runtime), Some(group)) = (tokio::runtime::Handle::try_current(), group) {
            runtime.spawn(async move {
                group.end(groups::GRACE).await;
                drop(guard);
            });
        }
    }
}

impl StdioConn {
    /// Spawns `command`; its output is decoded in `framing` with frames up to `max_message_bytes`.
    pub fn spawn(
        command: &ServerCommand,
        framing: Framing,
        max_message_bytes: usize,
    ) -> Result<StdioConn, ClientError> {
        let spawned = process::spawn(command, STDERR_LINES)?;
        let started = Instant::now();
        let transcript: Transcript = Arc::default();
        let mode = FramingMode::from(framing);
        // Strict: blank lines, a BOM or stray header lines on stdout are reported, not skipped.
        let codec = RawCodec(
            StdioCodec::new(mode)
                .with_max_message_bytes(max_message_bytes)
                .strict(),
        );
        let mut frames = FramedRead::new(spawned.stdout, codec);
        // Bounded: a harness that stops reading stops the server's writes, not our memory.
        let (tx, events) = mpsc::channel(4096);
        let log = Arc::clone(&transcript);
        tokio::spawn(async move {
            loop {
                let event = match frames.next().await {
                    None => RawEvent::Eof,
                    Some(Err(e)) => RawEvent::ReadError(e.to_string()),
                    Some(Ok(frame)) => event_of(frame),
                };
                let text = match &event {
                    RawEvent::Frame(b) => String::from_utf8_lossy(b).into_owned(),
                    RawEvent::Invalid(e) => format!("<invalid frame: {e}>"),
                    RawEvent::Unanswered(u) => format!("<no reply: {}>", u.seen),
                    RawEvent::Eof => "<stdout closed>".to_owned(),
                    RawEvent::ReadError(e) => format!("<read error: {e}>"),
                };
                record(&log, started, Direction::Receive, text);
                let last = matches!(event, RawEvent::Eof | RawEvent::ReadError(_));
                if tx.send(event).await.is_err() || last {
                    break;
                }
            }
        });
        Ok(StdioConn {
            group: spawned.process.pid().and_then(Group::led_by),
            process: spawned.process,
            guard: Some(spawned.guard),
            stdin: Some(spawned.stdin),
            events,
            framing,
            started,
            transcript,
            eof_seen: false,
        })
    }

    pub fn framing(&self) -> Framing {
        self.framing
    }

    pub fn pid(&self) -> Option<u32> {
        self.process.pid()
    }

    /// The bytes of one frame holding `json`, in this connection's framing.
    pub fn frame(&self, json: &[u8]) -> Vec<u8> {
        match self.framing {
            Framing::Ndjson => {
                let mut v = Vec::with_capacity(json.len() + 1);
                v.extend_from_slice(json);
                v.push(b'\n');
                v
            }
            Framing::ContentLength => {
                let mut v = format!("Content-Length: {}\r\n\r\n", json.len()).into_bytes();
                v.extend_from_slice(json);
                v
            }
        }
    }

    /// Writes bytes as they are (no framing added) and flushes.
    pub async fn send_raw(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.record(Direction::Send, String::from_utf8_lossy(bytes).into_owned());
        let stdin = self.stdin.as_mut().ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::BrokenPipe, "stdin was closed")
        })?;
        stdin.write_all(bytes).await?;
        stdin.flush().await
    }

    /// Writes one JSON value as one frame.
    pub async fn send_json(&mut self, value: &Value) -> std::io::Result<()> {
        let json = serde_json::to_vec(value)?;
        let frame = self.frame(&json);
        self.send_raw(&frame).await
    }

    /// The next event, or `None` if nothing came within `limit`. After `Eof` it keeps
    /// returning `Eof`.
    pub async fn recv(&mut self, limit: Duration) -> Option<RawEvent> {
        if self.eof_seen {
            return Some(RawEvent::Eof);
        }
        match tokio::time::timeout(limit, self.events.recv()).await {
            Err(_) => None,
            Ok(None) => {
                self.eof_seen = true;
                Some(RawEvent::Eof)
            }
            Ok(Some(event)) => {
                if matches!(event, RawEvent::Eof | RawEvent::ReadError(_)) {
                    self.eof_seen = true;
                }
                Some(event)
            }
        }
    }

    /// How many events [`StdioConn::recv`] can return without waiting (the end counts as one).
    pub fn buffered(&self) -> usize {
        if self.eof_seen {
            1
        } else {
            self.events.len()
        }
    }

    /// Closes the server's stdin (EOF), the first step of the spec's shutdown.
    pub fn close_stdin(&mut self) {
        if self.stdin.take().is_some() {
            self.record(Direction::Event, "<stdin closed>".to_owned());
        }
    }

    /// Sends SIGTERM to the server's process group.
    pub fn terminate(&self) {
        self.record(Direction::Event, "<SIGTERM>".to_owned());
        self.process.signal(Signal::SIGTERM);
    }

    /// Waits up to `limit` for the server to exit.
    pub async fn wait_exit(&self, limit: Duration) -> Option<ExitStatus> {
        let status = self.process.wait_exit(limit).await;
        if let Some(status) = status {
            self.record(Direction::Event, format!("<exited: {status}>"));
        }
        status
    }

    pub fn exit_status(&self) -> Option<ExitStatus> {
        self.process.exit_status()
    }

    /// Waits (bounded) for stderr to reach its end, then returns what it held.
    pub async fn stderr(&self, limit: Duration) -> Vec<String> {
        self.process.wait_stderr(limit).await;
        self.process.stderr_tail()
    }

    /// The stderr lines read so far (the last 2000), without waiting.
    pub fn stderr_now(&self) -> Vec<String> {
        self.process.stderr_tail()
    }

    /// (bytes, lines) the server wrote to stderr so far.
    pub fn stderr_volume(&self) -> (u64, u64) {
        self.process.stderr_volume()
    }

    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// How many transcript entries have been recorded so far: a mark for
    /// [`StdioConn::transcript_since`], so one process's transcript can be cut into the
    /// parts that belong to different users of it.
    pub fn transcript_mark(&self) -> usize {
        self.transcript.lock().recorded
    }

    /// The entries recorded since `mark` (see [`StdioConn::transcript_mark`]), in order.
    pub fn transcript_since(&self, mark: usize) -> Vec<TranscriptEntry> {
        self.transcript.lock().since(mark)
    }

    fn record(&self, direction: Direction, text: String) {
        record(&self.transcript, self.started, direction, text);
    }
}

fn event_of(frame: RawFrame) -> RawEvent {
    match frame {
        Ok(bytes) => RawEvent::Frame(bytes),
        Err(e) => RawEvent::Invalid(e),
    }
}

fn record(log: &Transcript, started: Instant, direction: Direction, mut text: String) {
    if text.len() > MAX_ENTRY_TEXT {
        let total = text.len();
        text.truncate(char_prefix(&text, MAX_ENTRY_TEXT).len());
        text.push_str(&format!("… ({total} bytes in all)"));
    }
    log.lock().push(TranscriptEntry {
        at_ms: started.elapsed().as_secs_f64() * 1000.0,
        direction,
        text,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flood_keeps_the_start_and_the_end_within_bounds() {
        let log: Transcript = Arc::default();
        let started = Instant::now();
        for i in 0..10_000 {
            record(
                &log,
                started,
                Direction::Receive,
                format!("{i:04} {}", "x".repeat(4000)),
            );
        }
        let entries = log.lock().since(0);
        let bytes: usize = entries.iter().map(|e| e.text.len()).sum();
        assert!(bytes <= 2 * KEEP_BYTES + 200, "{bytes} bytes kept");
        assert!(entries[0].text.starts_with("0000 "));
        assert!(entries.last().unwrap().text.starts_with("9999 "));
        let gap = entries
            .iter()
            .find(|e| e.direction == Direction::Event)
            .unwrap();
        assert!(
            gap.text.contains("entries") && gap.text.contains("left out"),
            "{}",
            gap.text
        );
    }

    #[test]
    fn since_a_mark_gives_the_later_entries_and_notes_a_gap() {
        let log: Transcript = Arc::default();
        let started = Instant::now();
        let push = |i: usize| {
            record(
                &log,
                started,
                Direction::Send,
                format!("{i:04} {}", "x".repeat(4000)),
            )
        };
        for i in 0..10 {
            push(i);
        }
        let texts = |mark| -> Vec<String> {
            log.lock()
                .since(mark)
                .iter()
                .map(|e| e.text.chars().take(4).collect())
                .collect()
        };
        assert_eq!(texts(7), ["0007", "0008", "0009"]);
        assert_eq!(texts(10), Vec::<String>::new());
        // Past the head: the middle is dropped; a later mark still gets exactly its entries.
        for i in 10..1000 {
            push(i);
        }
        assert_eq!(texts(997), ["0997", "0998", "0999"]);
        let from_start = texts(3);
        assert_eq!(from_start[0], "0003");
        assert_eq!(from_start.last().map(String::as_str), Some("0999"));
        assert!(
            from_start.iter().any(|t| t.starts_with('…')),
            "{from_start:?}"
        );
    }
}
