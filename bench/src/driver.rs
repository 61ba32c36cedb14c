//! The lean load driver: one server process, its pipes in non-blocking mode, and one thread that
//! writes and reads with `poll(2)`. Every wait is bounded by the run's `--timeout`.
//!
//! Requests are `tools/call` of `echo` with a text that names its own id (`"<id>.xxxx…"`, padded
//! to the payload size), so a reply is verified without remembering what was sent: its id must
//! be one that is outstanding and its `result.content[0].text` must be exactly that id's text.

use std::borrow::Cow;
use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::os::fd::AsFd;
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::process::Child;
use std::sync::LazyLock;
use std::time::{Duration, Instant};

use mcp_protocol::codec::{header_block, put_plain_header};
use mcp_protocol::Framing;
use memchr::memmem;
use nix::fcntl::{fcntl, FcntlArg, OFlag};
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use serde::de::IgnoredAny;
use serde::Deserialize;

use super::shape::Shape;
use super::structured::StructuredText;
use super::text::{digits, text_len, text_matches, Filler};
use mcp_client::ServerCommand;

/// The protocol version offered in the benchmark's handshake.
pub const BENCH_VERSION: &str = "2025-11-25";

/// Why a run failed.
#[derive(Debug)]
pub enum DriveError {
    /// The server could not be started.
    Start(String),
    /// A reply was missing, late, malformed or wrong: the run fails.
    Verify(String),
}

impl std::fmt::Display for DriveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DriveError::Start(m) | DriveError::Verify(m) => f.write_str(m),
        }
    }
}

pub(crate) fn verify(message: impl Into<String>) -> DriveError {
    DriveError::Verify(message.into())
}

/// What the bench asks of a server, said when a reply shows the server's `echo` is another
/// tool (or missing), as with servers that were not written for the bench.
pub(crate) const ECHO_CONTRACT: &str = "the bench calls a tool named `echo` with arguments \
                             {\"text\": string} and expects that text back, unchanged, in \
                             result.content[0].text; does this server have such a tool \
                             (`tools/list`)?";

/// How the server's stdin and stdout are connected to the bench.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stdio {
    /// Two pipes, as Python, Rust and Go hosts connect their servers.
    Pipes,
    /// One end of a Unix socketpair as both stdin and stdout, as Node-based hosts (Claude
    /// Code, Cursor, Claude Desktop) connect theirs: libuv makes child stdio from socketpairs.
    Socket,
}

impl Stdio {
    pub fn name(self) -> &'static str {
        match self {
            Stdio::Pipes => "pipes",
            Stdio::Socket => "socket",
        }
    }
}

/// One spawned server with non-blocking stdio.
#[derive(Debug)]
pub struct Server {
    child: Child,
    pid: u32,
    /// Our end of the server's stdin: a pipe, or a duplicate of our socket.
    stdin: Option<File>,
    /// Our end of the server's stdout: a pipe, or our socket.
    stdout: File,
    stdio: Stdio,
    framing: Framing,
    wait: Duration,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// Where the search for the next newline resumes (ndjson).
    scanned: usize,
    out: Vec<u8>,
    out_pos: usize,
    out_eof: bool,
    /// The last read found nothing: wait for `poll` before reading again, rather than make a
    /// second `read` that fails the same way.
    dry: bool,
    scratch: Vec<u8>,
    filler: Filler,
    exited_at: Option<Instant>,
}

fn nonblocking(fd: impl AsFd) -> std::io::Result<()> {
    let flags = OFlag::from_bits_truncate(fcntl(fd.as_fd(), FcntlArg::F_GETFL)?);
    fcntl(fd.as_fd(), FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK))?;
    Ok(())
}

#[derive(Deserialize)]
struct Reply<'a> {
    #[serde(default)]
    id: Option<u64>,
    #[serde(default)]
    method: Option<IgnoredAny>,
    #[serde(default, borrow)]
    result: Option<CallResult<'a>>,
    #[serde(default)]
    error: Option<IgnoredAny>,
}

#[derive(Deserialize)]
struct CallResult<'a> {
    #[serde(default, borrow)]
    content: Vec<Content<'a>>,
    /// A tool error is never an echo, whatever its text (as the client driver checks it).
    #[serde(default, rename = "isError")]
    is_error: Option<bool>,
    #[serde(default, borrow, rename = "structuredContent")]
    structured: StructuredText<'a>,
}

impl CallResult<'_> {
    /// `structuredContent.text` when it is a string: a server that echoes into its structured
    /// output too must echo the same text there.
    fn structured_text(&self) -> Option<&str> {
        self.structured.0.as_deref()
    }
}

#[derive(Deserialize)]
struct Content<'a> {
    #[serde(default, borrow)]
    text: Option<Cow<'a, str>>,
}

/// A frame for error messages: at most 300 bytes of it.
fn shown(frame: &[u8]) -> String {
    let s = String::from_utf8_lossy(&frame[..frame.len().min(300)]).into_owned();
    if frame.len() > 300 {
        format!("{s}… ({} bytes)", frame.len())
    } else {
        s
    }
}

/// What a frame from the server was.
#[derive(Debug, PartialEq, Eq)]
pub enum Incoming {
    /// A verified reply to this id.
    Reply(u64),
    /// A notification or a server-to-client request: ignored.
    Other,
}

/// Verifies replies; keeps buffers between frames, and the shape of the last reply that
/// passed the full check.
#[derive(Debug, Default)]
pub struct Verifier {
    filler: Filler,
    scratch: Vec<u8>,
    shape: Option<Shape>,
    /// Shapes learnt or tried, each after a reply that did not fit the last: past [`LEARNT`],
    /// the server's replies vary in more than id and text, and no more are tried.
    learnt: u32,
}

/// How many shapes the verifier learns or tries before it keeps to the full check.
const LEARNT: u32 = 32;

/// What replaces a verified text before the frame is parsed (`"\u0000@"`): a server cannot
/// produce it by echoing the bench's texts.
const SENTINEL: &[u8] = br#"\u0000@"#;
const SENTINEL_TEXT: &str = "\u{0}@";

impl Verifier {
    /// Whether `raw` (a JSON string's raw bytes) is id `id`'s text, compared with `memcmp`.
    fn is_text(&mut self, raw: &[u8], id: u64, payload: usize) -> bool {
        self.filler.grow(payload);
        self.filler.is_text(raw, id, payload)
    }

    /// Verifies one frame as the reply to a `tools/call` echo of `payload` bytes.
    ///
    /// The fast path finds the echoed text with `memmem`, compares it with what was sent, and
    /// parses the frame with every copy of that text cut out, so a 16 KiB echo costs a few
    /// `memcmp`s and a parse of a few hundred bytes; it then requires the reply's id to be the
    /// one the text names and `result.content[0].text` to be exactly the cut-out text. Anything
    /// else takes the slow path, a full parse, which also words the error.
    ///
    /// Before either, a reply of the shape of the last one that passed ([`Shape`]) is verified
    /// by comparing bytes.
    pub fn check(&mut self, frame: &[u8], payload: usize) -> Result<Incoming, DriveError> {
        self.filler.grow(payload);
        if let Some(shape) = &self.shape {
            if let Some(id) = shape.matches(frame, payload, &self.filler) {
                return Ok(Incoming::Reply(id));
            }
        }
        // Small frames parse faster than they are cut.
        if frame.len() > 2048 {
            if let Some(id) = self.fast(frame, payload) {
                self.learn(frame, id, payload);
                return Ok(Incoming::Reply(id));
            }
        }
        let checked = check_reply(frame, payload)?;
        if let Incoming::Reply(id) = checked {
            self.learn(frame, id, payload);
        }
        Ok(checked)
    }

    /// Keeps the shape of `frame`, which passed the full check as id `id`'s reply.
    fn learn(&mut self, frame: &[u8], id: u64, payload: usize) {
        if self.learnt < LEARNT {
            self.learnt += 1;
            self.shape = Shape::learn(frame, id, payload, &self.filler);
        }
    }

    fn fast(&mut self, frame: &[u8], payload: usize) -> Option<u64> {
        let key = &*TEXT_KEY;
        let at = key.find(frame)? + key.needle().len();
        // The id the text names gives its whole length: no scan for the closing quote.
        let digits_end = frame.len().min(at + 21);
        let dot = at + memchr::memchr(b'.', &frame[at..digits_end])?;
        let id: u64 = std::str::from_utf8(&frame[at..dot]).ok()?.parse().ok()?;
        let end = at + text_len(id, payload);
        if frame.get(end) != Some(&b'"') || !self.is_text(&frame[at..end], id, payload) {
            return None;
        }
        let raw = &frame[at..end];
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        // Cut out every copy of the text; the search resumes after each copy, not inside it.
        let (mut from, mut search) = (0, 0);
        while let Some(hit) = key.find(&frame[search..]).map(|h| h + search) {
            let start = hit + key.needle().len();
            let stop = start + raw.len();
            if frame.get(start..stop) == Some(raw) && frame.get(stop) == Some(&b'"') {
                scratch.extend_from_slice(&frame[from..start]);
                scratch.extend_from_slice(SENTINEL);
                from = stop;
                search = stop;
            } else {
                search = hit + 1;
            }
        }
        scratch.extend_from_slice(&frame[from..]);
        let ok = match serde_json::from_slice::<Reply<'_>>(&scratch) {
            Ok(reply) => {
                reply.method.is_none()
                    && reply.error.is_none()
                    && reply.id == Some(id)
                    && reply.result.as_ref().is_some_and(|r| {
                        r.is_error != Some(true)
                            && r.content.first().and_then(|c| c.text.as_deref())
                                == Some(SENTINEL_TEXT)
                            && r.structured_text().is_none_or(|t| t == SENTINEL_TEXT)
                    })
            }
            Err(_) => false,
        };
        self.scratch = scratch;
        ok.then_some(id)
    }
}

/// Where a text member's string begins, searched with one prebuilt finder.
static TEXT_KEY: LazyLock<memmem::Finder<'static>> =
    LazyLock::new(|| memmem::Finder::new(b"\"text\":\""));

/// The id whose text `text` is, if it is one of the bench's texts.
fn text_names(text: &[u8], payload: usize) -> Option<u64> {
    let dot = memchr::memchr(b'.', text)?;
    let id: u64 = std::str::from_utf8(&text[..dot]).ok()?.parse().ok()?;
    text_matches(text, id, payload).then_some(id)
}

/// Verifies one frame as the reply to a `tools/call` echo of `payload` bytes (a full parse).
pub fn check_reply(frame: &[u8], payload: usize) -> Result<Incoming, DriveError> {
    let reply: Reply<'_> = match serde_json::from_slice(frame) {
        Ok(r) => r,
        Err(e) => {
            return Err(match serde_json::from_slice::<serde_json::Value>(frame) {
                Ok(v) if v.get("id").is_some_and(|id| !id.is_u64() && !id.is_null()) => {
                    verify(format!(
                        "a reply with id {} (the bench sends integer ids): {}",
                        v["id"],
                        shown(frame)
                    ))
                }
                Ok(_) => verify(format!(
                    "a reply that is not a tools/call result ({e}): {}",
                    shown(frame)
                )),
                Err(_) => verify(format!("a frame that is not JSON ({e}): {}", shown(frame))),
            });
        }
    };
    if reply.method.is_some() {
        return Ok(Incoming::Other);
    }
    let Some(id) = reply.id else {
        return Err(verify(format!("a reply without an id: {}", shown(frame))));
    };
    if reply.error.is_some() {
        return Err(verify(format!(
            "request {id} got an error reply: {}; {ECHO_CONTRACT}",
            shown(frame)
        )));
    }
    // A tool error in place of the echo: most often the server's `echo` is not the bench's.
    if reply.result.as_ref().and_then(|r| r.is_error) == Some(true) {
        return Err(verify(format!(
            "the reply to id {id} is a tool error (isError: true), not the echo: {}; \
             {ECHO_CONTRACT}",
            shown(frame)
        )));
    }
    let text = reply
        .result
        .as_ref()
        .and_then(|r| r.content.first())
        .and_then(|c| c.text.as_deref());
    if let Some(t) = reply.result.as_ref().and_then(|r| r.structured_text()) {
        if !text_matches(t.as_bytes(), id, payload) {
            return Err(verify(format!(
                "echo mismatch: the reply to id {id} carries a structuredContent.text of {} \
                 bytes that is not the text sent with id {id} ({} bytes): {}",
                t.len(),
                text_len(id, payload),
                shown(frame)
            )));
        }
    }
    match text {
        Some(t) if text_matches(t.as_bytes(), id, payload) => Ok(Incoming::Reply(id)),
        Some(t) => Err(verify(match text_names(t.as_bytes(), payload) {
            Some(other) => format!(
                "id mismatch: the reply with id {id} carries the text sent with id {other}: {}",
                shown(frame)
            ),
            None => format!(
                "echo mismatch: the reply to id {id} carries a text of {} bytes that is not the \
                 text sent with id {id} ({} bytes): {}",
                t.len(),
                text_len(id, payload),
                shown(frame)
            ),
        })),
        None => Err(verify(format!(
            "the reply to id {id} has no result.content[0].text: {}; {ECHO_CONTRACT}",
            shown(frame)
        ))),
    }
}

impl Server {
    /// Spawns `target` (in its own process group) with its stdin/stdout connected as `stdio`
    /// says; stderr is discarded.
    pub fn spawn(
        command: &ServerCommand,
        framing: Framing,
        stdio: Stdio,
        wait: Duration,
    ) -> Result<Server, DriveError> {
        let start =
            |e: std::io::Error| DriveError::Start(format!("cannot connect the server: {e}"));
        let mut cmd = command.to_command();
        cmd.stderr(std::process::Stdio::null()).process_group(0);
        let socket = match stdio {
            Stdio::Pipes => {
                cmd.stdin(std::process::Stdio::piped())
                    .stdout(std::process::Stdio::piped());
                None
            }
            Stdio::Socket => {
                // Every descriptor made before the spawn, so no failure leaves a child behind.
                let (ours, theirs) = UnixStream::pair().map_err(start)?;
                let theirs_out = theirs.try_clone().map_err(start)?;
                let ours_in = ours.try_clone().map_err(start)?;
                cmd.stdin(OwnedFd::from(theirs))
                    .stdout(OwnedFd::from(theirs_out));
                Some((
                    File::from(OwnedFd::from(ours_in)),
                    File::from(OwnedFd::from(ours)),
                ))
            }
        };
        let spawned = cmd.spawn();
        // The command holds our copies of the server's socket end: with them open, the
        // server would never see its input end.
        drop(cmd);
        let mut child = spawned
            .map_err(|e| DriveError::Start(format!("cannot start {}: {e}", command.display())))?;
        let (stdin, stdout) = match socket {
            Some(ends) => ends,
            None => match (child.stdin.take(), child.stdout.take()) {
                (Some(stdin), Some(stdout)) => (
                    File::from(OwnedFd::from(stdin)),
                    File::from(OwnedFd::from(stdout)),
                ),
                _ => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(DriveError::Start(
                        "stdin/stdout pipes were not created".into(),
                    ));
                }
            },
        };
        let pid = child.id();
        let server = Server {
            child,
            pid,
            stdin: Some(stdin),
            stdout,
            stdio,
            framing,
            wait,
            buf: vec![0; 1 << 16],
            start: 0,
            end: 0,
            scanned: 0,
            out: Vec::with_capacity(1 << 16),
            out_pos: 0,
            out_eof: false,
            dry: false,
            scratch: Vec::new(),
            filler: Filler::default(),
            exited_at: None,
        };
        if let Some(stdin) = &server.stdin {
            nonblocking(stdin).map_err(|e| DriveError::Start(format!("fcntl: {e}")))?;
        }
        nonblocking(&server.stdout).map_err(|e| DriveError::Start(format!("fcntl: {e}")))?;
        Ok(server)
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Queues one frame whose body is `parts` in order: the header (Content-Length) or the
    /// newline (NDJSON) around them, after dropping what was written when that is at least
    /// half of the queue (so each byte moves at most once).
    fn queue_frame(&mut self, parts: &[&[u8]]) {
        let out = &mut self.out;
        if self.out_pos > 0 && self.out_pos * 2 >= out.len() {
            out.drain(..self.out_pos);
            self.out_pos = 0;
        }
        if self.framing == Framing::ContentLength {
            let body: usize = parts.iter().map(|p| p.len()).sum();
            put_plain_header(out, body);
        }
        for part in parts {
            out.extend_from_slice(part);
        }
        if self.framing == Framing::Ndjson {
            out.push(b'\n');
        }
    }

    /// Queues one JSON message, framed.
    pub fn queue_json(&mut self, body: &[u8]) {
        self.queue_frame(&[body]);
    }

    /// Queues the `tools/call` echo request `id` with a `payload`-byte text, written straight
    /// into the output queue (the text is copied once, from the filler).
    pub fn queue_call(&mut self, id: u64, payload: usize) {
        let fill = text_len(id, payload) - digits(id) - 1;
        let mut head = std::mem::take(&mut self.scratch);
        head.clear();
        let _ = write!(
            head,
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"{id}."#
        );
        let mut filler = std::mem::take(&mut self.filler);
        self.queue_frame(&[&head, filler.take(fill), b"\"}}}"]);
        self.filler = filler;
        self.scratch = head;
    }

    /// Waits for `poll` before the next read: a request was just queued and nothing else is
    /// outstanding, so the reply cannot be there yet.
    pub fn expect_reply(&mut self) {
        self.dry = true;
    }

    /// Whether queued bytes are still unwritten.
    pub fn writing(&self) -> bool {
        self.out_pos < self.out.len()
    }

    /// Whether the server's stdout reached its end.
    pub fn stdout_closed(&self) -> bool {
        self.out_eof
    }

    /// Closes the server's stdin (after the queued bytes are written: call when `!writing()`).
    /// A socket's write side is shut down: closing our duplicate alone would not end it.
    pub fn close_stdin(&mut self) {
        if let Some(stdin) = self.stdin.take() {
            if self.stdio == Stdio::Socket {
                let _ = nix::sys::socket::shutdown(
                    std::os::fd::AsRawFd::as_raw_fd(&stdin),
                    nix::sys::socket::Shutdown::Write,
                );
            }
        }
    }

    /// Makes progress: writes queued bytes and reads what the server wrote, waiting (at most
    /// the run's timeout) only when neither is possible right now.
    pub fn pump(&mut self) -> Result<(), DriveError> {
        loop {
            let mut progressed = false;
            if self.out_pos < self.out.len() {
                if let Some(stdin) = &mut self.stdin {
                    match stdin.write(&self.out[self.out_pos..]) {
                        Ok(n) => {
                            self.out_pos += n;
                            progressed = n > 0;
                            if self.out_pos == self.out.len() {
                                self.out.clear();
                                self.out_pos = 0;
                            }
                        }
                        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                        Err(e) if e.kind() == ErrorKind::Interrupted => progressed = true,
                        Err(e) => {
                            return Err(verify(format!(
                                "writing to the server failed ({e}); it closed its stdin or exited"
                            )))
                        }
                    }
                }
            }
            if !self.out_eof && !self.dry {
                if self.end == self.buf.len() {
                    if self.start > 0 {
                        self.buf.copy_within(self.start..self.end, 0);
                        self.end -= self.start;
                        self.scanned = self.scanned.saturating_sub(self.start);
                        self.start = 0;
                    } else {
                        let n = self.buf.len() * 2;
                        self.buf.resize(n, 0);
                    }
                }
                match self.stdout.read(&mut self.buf[self.end..]) {
                    Ok(0) => {
                        self.out_eof = true;
                        progressed = true;
                    }
                    Ok(n) => {
                        self.end += n;
                        progressed = true;
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => self.dry = true,
                    Err(e) if e.kind() == ErrorKind::Interrupted => progressed = true,
                    Err(e) => return Err(verify(format!("reading the server's stdout: {e}"))),
                }
            }
            if progressed {
                return Ok(());
            }
            if self.out_eof && !(self.writing() && self.stdin.is_some()) {
                return Err(verify("the server closed its stdout"));
            }
            let timeout = PollTimeout::try_from(self.wait).unwrap_or(PollTimeout::MAX);
            let ready = {
                let mut fds = Vec::with_capacity(2);
                if !self.out_eof {
                    fds.push(PollFd::new(self.stdout.as_fd(), PollFlags::POLLIN));
                }
                if self.writing() {
                    if let Some(stdin) = &self.stdin {
                        fds.push(PollFd::new(stdin.as_fd(), PollFlags::POLLOUT));
                    }
                }
                poll(&mut fds, timeout)
            };
            match ready {
                Ok(0) => {
                    return Err(verify(format!(
                        "no progress within {:.1} s: the server neither answered nor read its \
                         input",
                        self.wait.as_secs_f64()
                    )))
                }
                Ok(_) | Err(nix::errno::Errno::EINTR) => self.dry = false,
                Err(e) => return Err(verify(format!("poll: {e}"))),
            }
        }
    }

    /// The next complete frame read, as a byte range of [`Server::frame`].
    pub fn next_frame(&mut self) -> Result<Option<(usize, usize)>, DriveError> {
        loop {
            let data = &self.buf[self.start..self.end];
            match self.framing {
                Framing::Ndjson => {
                    let skip = self.scanned.saturating_sub(self.start).min(data.len());
                    let Some(i) = memchr::memchr(b'\n', &data[skip..]).map(|i| i + skip) else {
                        self.scanned = self.end;
                        return Ok(None);
                    };
                    let begin = self.start;
                    let mut stop = begin + i;
                    self.start = stop + 1;
                    if stop > begin && self.buf[stop - 1] == b'\r' {
                        stop -= 1;
                    }
                    if self.buf[begin..stop].iter().all(u8::is_ascii_whitespace) {
                        continue;
                    }
                    return Ok(Some((begin, stop)));
                }
                Framing::ContentLength => {
                    let Some((h, length)) = header_block(data) else {
                        return Ok(None);
                    };
                    let Some(length) = length else {
                        return Err(verify(format!(
                            "a Content-Length frame header without a valid length: {}",
                            shown(&data[..h])
                        )));
                    };
                    let body = self.start + h;
                    if self.end < body + length {
                        if body + length > self.buf.len() && self.start > 0 {
                            self.buf.copy_within(self.start..self.end, 0);
                            self.end -= self.start;
                            self.scanned = self.scanned.saturating_sub(self.start);
                            self.start = 0;
                        }
                        return Ok(None);
                    }
                    self.start = body + length;
                    return Ok(Some((body, body + length)));
                }
            }
        }
    }

    /// The bytes of a frame returned by [`Server::next_frame`].
    pub fn frame(&self, range: (usize, usize)) -> &[u8] {
        &self.buf[range.0..range.1]
    }

    /// Waits (bounded) for the process to exit; returns when it exited.
    pub fn wait_exit(&mut self, limit: Duration) -> Option<Instant> {
        if let Some(at) = self.exited_at {
            return Some(at);
        }
        let deadline = Instant::now() + limit;
        let mut nap = Duration::from_micros(50);
        loop {
            if let Ok(Some(_)) = self.child.try_wait() {
                let at = Instant::now();
                self.exited_at = Some(at);
                return Some(at);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(nap);
            nap = (nap * 2).min(Duration::from_millis(2));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.close_stdin();
        if self.exited_at.is_none() {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            let _ = killpg(Pid::from_raw(self.pid as i32), Signal::SIGKILL);
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_name_their_id() {
        assert!(text_matches(b"17.xxxxx", 17, 8));
        assert!(text_matches(b"1234.", 1234, 2));
        assert!(!text_matches(b"18.xxxxx", 17, 8));
        assert!(!text_matches(b"17.xxxx", 17, 8));
        assert!(!text_matches(b"17.xxxxy", 17, 8));
    }

    #[test]
    fn verifies_fast_and_slow() {
        let mut v = Verifier::default();
        let good = br#"{"jsonrpc":"2.0","id":12,"result":{"content":[{"type":"text","text":"12.xxx"}],"structuredContent":{"text":"12.xxx"}}}"#;
        assert_eq!(v.fast(good, 6), Some(12));
        assert_eq!(v.check(good, 6).ok(), Some(Incoming::Reply(12)));
        // The text elsewhere, content[0].text empty: not the fast path, and an error.
        let moved = br#"{"jsonrpc":"2.0","id":12,"result":{"structuredContent":{"text":"12.xxx"},"content":[{"type":"text","text":""}]}}"#;
        assert_eq!(v.fast(moved, 6), None);
        assert!(v.check(moved, 6).is_err());
        let wrong_id =
            br#"{"jsonrpc":"2.0","id":13,"result":{"content":[{"type":"text","text":"12.xxx"}]}}"#;
        let e = v
            .check(wrong_id, 6)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("id mismatch"), "{e}");
        let note = br#"{"jsonrpc":"2.0","method":"notifications/message","params":{}}"#;
        assert_eq!(v.check(note, 6).ok(), Some(Incoming::Other));
    }

    /// With a shape learnt, a reply that differs in more than id and text still gets the full
    /// check; replies that vary every time (a counter) stop the learning after [`LEARNT`].
    #[test]
    fn a_learnt_shape_never_lets_a_wrong_reply_through() {
        let mut v = Verifier::default();
        let reply = |id: u64, text: &str, n: u64| {
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"{text}"}}],"_meta":{{"n":{n}}}}}}}"#
            )
        };
        for id in 1..=100 {
            let text = format!("{id}.{}", "x".repeat(4 - digits(id)));
            assert_eq!(
                v.check(reply(id, &text, id).as_bytes(), 5).ok(),
                Some(Incoming::Reply(id)),
                "{id}"
            );
        }
        assert_eq!(v.learnt, LEARNT);
        // Past the limit a good reply still passes (the full check), and a wrong one fails.
        let last = reply(101, "101.x", 100);
        assert_eq!(v.check(last.as_bytes(), 5).ok(), Some(Incoming::Reply(101)));
        for (id, text) in [(102, "102.y"), (103, "102.x"), (104, "104.")] {
            let bad = reply(id, text, 100);
            assert!(v.check(bad.as_bytes(), 5).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_wrong_structured_text_fails_both_paths() {
        let mut v = Verifier::default();
        let text = format!("5.{}", "x".repeat(3000));
        let reply = |structured: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","id":5,"result":{{"content":[{{"type":"text","text":"{text}"}}],"structuredContent":{structured}}}}}"#
            )
        };
        let good = reply(&format!(r#"{{"text":"{text}"}}"#));
        assert_eq!(v.fast(good.as_bytes(), text.len()), Some(5));
        // One byte short in the structured copy: the fast path declines, the slow one says why.
        let short = reply(&format!(r#"{{"text":"{}"}}"#, &text[..text.len() - 1]));
        assert_eq!(v.fast(short.as_bytes(), text.len()), None);
        let e = v
            .check(short.as_bytes(), text.len())
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("structuredContent.text"), "{e}");
        // Structured output without a string `text` is the server's own schema: not checked.
        for other in [r#"{"echoed":1}"#, r#"{"text":3}"#, "null"] {
            let frame = reply(other);
            assert_eq!(v.fast(frame.as_bytes(), text.len()), Some(5), "{other}");
            assert_eq!(
                check_reply(frame.as_bytes(), text.len()).ok(),
                Some(Incoming::Reply(5)),
                "{other}"
            );
        }
    }

    #[test]
    fn fast_path_skips_decoys_and_cuts_every_copy() {
        let mut v = Verifier::default();
        let text = format!("7.{}", "x".repeat(3000));
        // A decoy `"text":"` key with another string before the echoed copies, and one after.
        let frame = format!(
            r#"{{"jsonrpc":"2.0","id":7,"result":{{"_meta":{{"text":"7.x"}},"content":[{{"type":"text","text":"{text}"}}],"structuredContent":{{"text":"{text}"}},"x":{{"text":"no"}}}}}}"#
        );
        assert_eq!(
            v.fast(frame.as_bytes(), text.len()),
            None,
            "the first text is a decoy"
        );
        assert_eq!(
            v.check(frame.as_bytes(), text.len()).ok(),
            Some(Incoming::Reply(7)),
            "the full parse still verifies content[0].text"
        );
        let frame = frame.replace(r#""_meta":{"text":"7.x"},"#, "");
        assert_eq!(v.fast(frame.as_bytes(), text.len()), Some(7));
        // One byte of the structured copy changed: not a copy, so it stays in the parsed rest,
        // where it is not the sentinel: both paths reject the reply.
        let changed = frame.replacen(
            &format!(r#"{{"text":"{text}"}}"#),
            &format!(r#"{{"text":"{}y"}}"#, &text[..text.len() - 1]),
            1,
        );
        assert_eq!(v.fast(changed.as_bytes(), text.len()), None);
        assert!(v.check(changed.as_bytes(), text.len()).is_err());
        // The echoed text one byte short: rejected by both paths.
        let short = frame.replace(&text, &text[..text.len() - 1]);
        assert_eq!(v.fast(short.as_bytes(), text.len()), None);
        assert!(v.check(short.as_bytes(), text.len()).is_err());
        // The text names another id.
        let other = frame.replace(r#""id":7"#, r#""id":8"#);
        assert_eq!(v.fast(other.as_bytes(), text.len()), None);
        assert!(v.check(other.as_bytes(), text.len()).is_err());
    }

    /// `cat` as the server: what the driver queues comes back byte for byte, so each framing's
    /// request is checked whole (its Content-Length against its body, its JSON, its text), over
    /// pipes and over a socket.
    #[test]
    fn queued_calls_are_exact_frames_in_both_framings() {
        let both = [Stdio::Pipes, Stdio::Socket];
        for (stdio, framing) in both
            .into_iter()
            .flat_map(|s| [(s, Framing::Ndjson), (s, Framing::ContentLength)])
        {
            let command = ServerCommand::new("cat");
            let mut server = Server::spawn(&command, framing, stdio, Duration::from_secs(10))
                .unwrap_or_else(|e| panic!("cat over {stdio:?}: {e}"));
            let cases = [(1u64, 64usize), (12, 5000), (123_456, 3), (9, 70_000)];
            for &(id, payload) in &cases {
                server.queue_call(id, payload);
            }
            let mut seen = 0;
            while seen < cases.len() {
                match server.next_frame() {
                    Ok(Some(range)) => {
                        let (id, payload) = cases[seen];
                        let body = server.frame(range);
                        let v: serde_json::Value = serde_json::from_slice(body)
                            .unwrap_or_else(|e| panic!("{framing:?} id {id}: {e}"));
                        assert_eq!(v["id"], id, "{framing:?}");
                        assert_eq!(v["method"], "tools/call");
                        assert_eq!(v["params"]["name"], "echo");
                        let text = v["params"]["arguments"]["text"]
                            .as_str()
                            .unwrap_or_default();
                        assert!(
                            text_matches(text.as_bytes(), id, payload),
                            "{framing:?} {id}"
                        );
                        seen += 1;
                    }
                    Ok(None) => server.pump().unwrap_or_else(|e| panic!("{e}")),
                    Err(e) => panic!("{framing:?}: {e}"),
                }
            }
            server.close_stdin();
        }
    }
}
