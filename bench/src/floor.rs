//! The floor: a trivial stdio program that answers each request with a canned reply, as the
//! reference for what the pipes and the load driver cost. It runs as a hidden subcommand of
//! the bench's own binary (`mcp-bench serve-floor`), so no extra executable is needed.
//! [`over_http`] gives the same replies over Streamable HTTP (`mcp-bench serve-http-floor`).
//!
//! It reads stdin in large chunks and, for every complete frame in a chunk, finds `"id":` and
//! the `"text":"…"` string with `memchr`-level scanning (no JSON tree), splices them into a
//! canned `tools/call` result, and writes all replies of the chunk with one `write`. It answers
//! `initialize` with a fixed result, anything without a text with `{}`, ignores notifications
//! (frames without an id) and exits when stdin closes, after answering everything it read.
//!
//! Its echo reply is the smallest valid one, the text once ([`Reply::Plain`]), or the text in
//! `content` and again in `structuredContent` ([`Reply::Structured`]): the reply a tool with an
//! `outputSchema` must send from 2025-06-18 (spec, server/tools "Structured Content"), in the
//! shape `mcp-echo-server` sends it. With large texts the pipes and the driver cost per byte, so
//! the second floor tells how close a server is to what its own reply costs to carry.
//!
//! With `--floor-work NS` it also spins for NS nanoseconds on each request it answers. On a
//! machine with few CPUs, where the scheduler puts a pair of processes follows, among other
//! things, how busy they keep a CPU; a floor that costs what a server costs per call shows
//! what that placement alone does to the server's throughput (BENCHMARKS.md, "Placement
//! follows CPU per call").

use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use mcp_protocol::codec::{header_block, put_plain_header};
use memchr::memmem;

pub mod over_http;

const INIT_RESULT: &[u8] = br#"{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"mcp-conformance-floor","version":"0"}}"#;

/// The floor's echo reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply {
    /// `{"content":[{"type":"text","text":…}],"isError":false}`: the text once.
    Plain,
    /// `{"content":[{"text":…,"type":"text"}],"structuredContent":{"text":…}}`: the text twice,
    /// as `mcp-echo-server` answers from 2025-06-18.
    Structured,
}

impl Reply {
    /// The name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Reply::Plain => "plain",
            Reply::Structured => "structured",
        }
    }
}

/// Runs the floor on stdin/stdout until stdin closes; returns the process exit code. `work`
/// is busy CPU time spent on each request it answers (`--floor-work`).
pub fn serve(content_length: bool, reply: Reply, work: Duration) -> u8 {
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    // The output pipe grown as `mcp-echo-server` grows it (its `stdio::OUTPUT_PIPE_BYTES`, and
    // never shrunk), so the floor keeps measuring the same pipes.
    {
        use nix::fcntl::{fcntl, FcntlArg};
        const GROWN: i32 = 256 * 1024;
        if fcntl(stdout.as_fd(), FcntlArg::F_GETPIPE_SZ).is_ok_and(|bytes| bytes < GROWN) {
            let _ = fcntl(stdout.as_fd(), FcntlArg::F_SETPIPE_SZ(GROWN));
        }
    }
    let mut input = stdin.lock();
    // Not `Stdout`: its line buffering wrote a Content-Length reply as two `write`s, the
    // header (up to its last newline) and then the body, which cost the floor in that framing
    // 0.3 µs per round trip that a server writing each batch at once does not pay.
    let Ok(mut output) = stdout.as_fd().try_clone_to_owned().map(std::fs::File::from) else {
        return 1;
    };
    let mut buf = vec![0u8; 1 << 16];
    let (mut start, mut end) = (0usize, 0usize);
    let mut out: Vec<u8> = Vec::with_capacity(1 << 16);
    let mut body: Vec<u8> = Vec::new();
    loop {
        if end == buf.len() {
            if start > 0 {
                buf.copy_within(start..end, 0);
                end -= start;
                start = 0;
            } else {
                let n = buf.len() * 2;
                buf.resize(n, 0);
            }
        }
        let n = match input.read(&mut buf[end..]) {
            Ok(0) => return 0,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return 1,
        };
        end += n;
        loop {
            let data = &buf[start..end];
            let frame = if content_length {
                let Some((h, length)) = header_block(data) else {
                    break;
                };
                let Some(len) = length else {
                    return 1;
                };
                if data.len() < h + len {
                    break;
                }
                start += h + len;
                &data[h..h + len]
            } else {
                let Some(i) = memchr::memchr(b'\n', data) else {
                    break;
                };
                start += i + 1;
                &data[..i]
            };
            body.clear();
            if answer(frame, reply, &mut body) != Answered::Nothing {
                busy(work);
                if content_length {
                    put_plain_header(&mut out, body.len());
                    out.extend_from_slice(&body);
                } else {
                    out.extend_from_slice(&body);
                    out.push(b'\n');
                }
            }
        }
        if start == end {
            start = 0;
            end = 0;
        }
        if !out.is_empty() {
            if output
                .write_all(&out)
                .and_then(|()| output.flush())
                .is_err()
            {
                return 1;
            }
            out.clear();
        }
    }
}

/// Keeps this CPU busy for `work`: a request that costs what a real server's costs, without
/// that server's other differences (its threads, its writes).
fn busy(work: Duration) {
    if work.is_zero() {
        return;
    }
    let start = Instant::now();
    while start.elapsed() < work {
        std::hint::spin_loop();
    }
}

/// What the floor made of a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answered {
    /// A frame without an id (a notification): no reply.
    Nothing,
    /// `initialize`: its fixed result.
    Initialize,
    /// Any other request: the echo, or `{}` when it carries no text.
    Request,
}

/// Writes the reply to `frame` into `out`, and says what it answered.
fn answer(frame: &[u8], reply: Reply, out: &mut Vec<u8>) -> Answered {
    let Some(at) = memmem::find(frame, b"\"id\":") else {
        return Answered::Nothing;
    };
    let rest = &frame[at + 5..];
    let id_end = memchr::memchr2(b',', b'}', rest).unwrap_or(rest.len());
    let id = rest[..id_end].trim_ascii();
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    out.extend_from_slice(id);
    out.extend_from_slice(br#","result":"#);
    let answered = if memmem::find(frame, b"\"method\":\"initialize\"").is_some() {
        out.extend_from_slice(INIT_RESULT);
        Answered::Initialize
    } else {
        echo(frame, reply, out);
        Answered::Request
    };
    out.push(b'}');
    answered
}

/// The result of a request other than `initialize`: the echo of its text, or `{}`.
fn echo(frame: &[u8], reply: Reply, out: &mut Vec<u8>) {
    if let Some(text) = text_of(frame) {
        match reply {
            Reply::Plain => {
                out.extend_from_slice(br#"{"content":[{"type":"text","text":""#);
                out.extend_from_slice(text);
                out.extend_from_slice(br#""}],"isError":false}"#);
            }
            Reply::Structured => {
                out.extend_from_slice(br#"{"content":[{"text":""#);
                out.extend_from_slice(text);
                out.extend_from_slice(br#"","type":"text"}],"structuredContent":{"text":""#);
                out.extend_from_slice(text);
                out.extend_from_slice(br#""}}"#);
            }
        }
    } else {
        out.extend_from_slice(b"{}");
    }
}

/// The raw (still escaped) contents of the first `"text":"…"` string.
fn text_of(frame: &[u8]) -> Option<&[u8]> {
    let at = memmem::find(frame, b"\"text\":\"")? + 8;
    let rest = &frame[at..];
    let mut from = 0;
    loop {
        let q = from + memchr::memchr(b'"', &rest[from..])?;
        let backslashes = rest[..q].iter().rev().take_while(|&&b| b == b'\\').count();
        if backslashes % 2 == 0 {
            return Some(&rest[..q]);
        }
        from = q + 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_with_id_and_text_spliced_in() {
        let mut out = Vec::new();
        assert_eq!(
            answer(
                br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a\"b"}}}"#,
                Reply::Plain,
                &mut out
            ),
            Answered::Request
        );
        assert_eq!(
            out,
            br#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"a\"b"}],"isError":false}}"#
        );
        out.clear();
        assert_eq!(
            answer(
                br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
                Reply::Plain,
                &mut out
            ),
            Answered::Nothing
        );
        assert!(out.is_empty());
        assert_eq!(
            answer(
                br#"{"jsonrpc":"2.0","id":"x","method":"initialize","params":{}}"#,
                Reply::Plain,
                &mut out
            ),
            Answered::Initialize
        );
        assert!(out.starts_with(br#"{"jsonrpc":"2.0","id":"x","result":{"protocolVersion""#));
    }

    #[test]
    fn the_structured_reply_carries_the_text_twice() {
        let mut out = Vec::new();
        assert_eq!(
            answer(
                br#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"echo","arguments":{"text":"x\\"}}}"#,
                Reply::Structured,
                &mut out
            ),
            Answered::Request
        );
        assert_eq!(
            out,
            br#"{"jsonrpc":"2.0","id":"a","result":{"content":[{"text":"x\\","type":"text"}],"structuredContent":{"text":"x\\"}}}"#
        );
    }
}
