//! How a probe reaches its server: a process's stdio ([`StdioConn`]) or a Streamable HTTP
//! endpoint ([`HttpConn`]). Both hand out the same [`RawEvent`] frames and keep the same
//! transcript, so checks are written once; what only a process has (stdin, signals, an exit,
//! stderr) is absent over HTTP.

use std::process::ExitStatus;
use std::time::Duration;

use mcp_protocol::Framing;

use crate::transcript::TranscriptEntry;

mod event;
pub mod http;
mod stdio;

pub use event::{is_response, NoResponse, RawEvent, Unanswered};
pub use http::{Endpoint, HttpConn};
pub use stdio::StdioConn;

/// One connection to the server under test.
#[derive(Debug)]
pub enum Conn {
    Stdio(StdioConn),
    Http(HttpConn),
}

impl Conn {
    pub fn framing(&self) -> Framing {
        match self {
            Conn::Stdio(c) => c.framing(),
            Conn::Http(_) => Framing::Ndjson,
        }
    }

    pub fn pid(&self) -> Option<u32> {
        match self {
            Conn::Stdio(c) => c.pid(),
            Conn::Http(_) => None,
        }
    }

    /// One frame holding `body`: over HTTP a line, which [`HttpConn::send_raw`] POSTs alone.
    pub fn frame(&self, body: &[u8]) -> Vec<u8> {
        match self {
            Conn::Stdio(c) => c.frame(body),
            Conn::Http(_) => {
                let mut v = body.to_vec();
                v.push(b'\n');
                v
            }
        }
    }

    pub async fn send_raw(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        match self {
            Conn::Stdio(c) => c.send_raw(bytes).await,
            Conn::Http(c) => c.send_raw(bytes).await,
        }
    }

    pub async fn send_json(&mut self, value: &serde_json::Value) -> std::io::Result<()> {
        match self {
            Conn::Stdio(c) => c.send_json(value).await,
            Conn::Http(c) => c.send_json(value).await,
        }
    }

    /// Waits, at most `limit`, for the replies still on their way over HTTP (POSTs in flight,
    /// in no order); `false` for a byte stream, whose replies come in order.
    pub async fn settle(&mut self, limit: Duration) -> bool {
        match self {
            Conn::Stdio(_) => false,
            Conn::Http(c) => {
                c.settle(limit).await;
                true
            }
        }
    }

    pub async fn recv(&mut self, limit: Duration) -> Option<RawEvent> {
        match self {
            Conn::Stdio(c) => c.recv(limit).await,
            Conn::Http(c) => c.recv(limit).await,
        }
    }

    /// How many events `recv` can return without waiting.
    pub fn buffered(&self) -> usize {
        match self {
            Conn::Stdio(c) => c.buffered(),
            Conn::Http(c) => c.buffered(),
        }
    }

    /// Closes the server's stdin; over HTTP there is none.
    pub fn close_stdin(&mut self) {
        if let Conn::Stdio(c) = self {
            c.close_stdin();
        }
    }

    /// SIGTERM to the process; over HTTP there is none of its own.
    pub fn terminate(&self) {
        if let Conn::Stdio(c) = self {
            c.terminate();
        }
    }

    pub async fn wait_exit(&self, limit: Duration) -> Option<ExitStatus> {
        match self {
            Conn::Stdio(c) => c.wait_exit(limit).await,
            Conn::Http(_) => None,
        }
    }

    pub fn exit_status(&self) -> Option<ExitStatus> {
        match self {
            Conn::Stdio(c) => c.exit_status(),
            Conn::Http(_) => None,
        }
    }

    pub async fn stderr(&self, limit: Duration) -> Vec<String> {
        match self {
            Conn::Stdio(c) => c.stderr(limit).await,
            Conn::Http(_) => Vec::new(),
        }
    }

    pub fn stderr_now(&self) -> Vec<String> {
        match self {
            Conn::Stdio(c) => c.stderr_now(),
            Conn::Http(_) => Vec::new(),
        }
    }

    pub fn stderr_volume(&self) -> (u64, u64) {
        match self {
            Conn::Stdio(c) => c.stderr_volume(),
            Conn::Http(_) => (0, 0),
        }
    }

    pub fn elapsed(&self) -> Duration {
        match self {
            Conn::Stdio(c) => c.elapsed(),
            Conn::Http(c) => c.elapsed(),
        }
    }

    pub fn transcript(&self) -> Vec<TranscriptEntry> {
        self.transcript_since(0)
    }

    pub fn transcript_mark(&self) -> usize {
        match self {
            Conn::Stdio(c) => c.transcript_mark(),
            Conn::Http(c) => c.transcript_mark(),
        }
    }

    pub fn transcript_since(&self, mark: usize) -> Vec<TranscriptEntry> {
        match self {
            Conn::Stdio(c) => c.transcript_since(mark),
            Conn::Http(c) => c.transcript_since(mark),
        }
    }
}
