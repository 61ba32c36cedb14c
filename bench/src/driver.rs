//! The lean load driver: one server process, its pipes in non-blocking mode, and one thread that
//! writes and reads with `poll(2)`. Every wait is bounded by the run's `--timeout`.
//!
//! Requests are `tools/call` of `echo` with a text that names its own id (`"<id>.xxxx…"`, padded
//! to the payload size), so a reply is verified without remembering what was sent: its id must
//! be one that is outstanding and its `result.content[0].text` must be exactly that id's text.

use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::os::fd::AsFd;
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::process::Child;
use std::time::{Duration, Instant};

use mcp_protocol::codec::{header_block, put_plain_header};
use mcp_protocol::Framing;
use nix::fcntl::{fcntl, FcntlArg, OFlag};
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;

use super::error::{shown, verify, DriveError};
use super::text::{digits, text_len, Filler};
use mcp_client::ServerCommand;

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
    use crate::text::text_matches;

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
