//! The stdio framing codec: one tokio-util `Decoder` + `Encoder` for both framings.
//!
//! * Newline-delimited JSON: what every MCP revision specifies for stdio
//!   (`basic/transports.mdx`: "Messages are delimited by newlines, and MUST NOT contain
//!   embedded newlines") and what every SDK and host speaks.
//! * LSP-style `Content-Length: N\r\n\r\n<body>`, N counted in UTF-8 bytes, for peers built
//!   on language-server plumbing.
//! * [`FramingMode::Auto`] looks at the first non-whitespace bytes (`{`/`[` → newline-delimited,
//!   `Content-…` → headers), locks the choice, and makes every clone of the codec (the writer's
//!   included) answer in the same framing.
//!
//! Every buffer is bounded: a message over [`StdioCodec::max_message_bytes`] is reported once as
//! [`FrameError::TooLarge`] and skipped to its end without being buffered, and a header block
//! over [`StdioCodec::max_header_bytes`] is an error too. Recoverable problems are items, so a
//! `FramedRead` keeps going after them; the decoder's `Error` is only an I/O failure.

mod detect;
mod lsp;
mod ndjson;
mod outgoing;
mod write;

pub use lsp::header_block;
pub use outgoing::Outgoing;

use std::fmt;
use std::io;
use std::str::FromStr;
use std::sync::{Arc, OnceLock};

use bytes::{BufMut, Bytes, BytesMut};
use serde::Serialize;
use tokio_util::codec::{Decoder, Encoder};

use crate::error::FrameError;
use crate::message::Incoming;

/// Default maximum message size: 16 MiB, as rmcp uses (rust-sdk PR #1049).
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;
/// Default maximum size of a `Content-Length` header block.
pub const DEFAULT_MAX_HEADER_BYTES: usize = 8 * 1024;

/// A stream's framing, once known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// One JSON message per line (the MCP stdio transport).
    Ndjson,
    /// `Content-Length: N\r\n\r\n` followed by N bytes of JSON (LSP base protocol).
    ContentLength,
}

impl Framing {
    /// `ndjson` or `content-length`: how command lines and reports write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Framing::Ndjson => "ndjson",
            Framing::ContentLength => "content-length",
        }
    }
}

impl fmt::Display for Framing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A codec fixed to one framing.
impl From<Framing> for FramingMode {
    fn from(framing: Framing) -> FramingMode {
        match framing {
            Framing::Ndjson => FramingMode::Ndjson,
            Framing::ContentLength => FramingMode::ContentLength,
        }
    }
}

/// How a codec chooses its framing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FramingMode {
    /// Detect from the first input bytes and lock the choice.
    #[default]
    Auto,
    Ndjson,
    ContentLength,
}

impl FromStr for FramingMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "auto" => Ok(FramingMode::Auto),
            "ndjson" | "newline" | "jsonl" => Ok(FramingMode::Ndjson),
            "content-length" | "lsp" => Ok(FramingMode::ContentLength),
            other => Err(format!(
                "unknown framing {other:?}: expected auto, ndjson or content-length"
            )),
        }
    }
}

/// A decoded frame: a message or batch, or a recoverable problem with that one frame.
pub type DecodedFrame = Result<Incoming, FrameError>;

/// One frame's body bytes (without framing), or a recoverable problem with that frame.
pub type RawFrame = Result<Bytes, FrameError>;

/// The stdio codec. Clones share the detected framing, so a reader and a writer built from
/// one codec agree on it.
#[derive(Debug, Clone)]
pub struct StdioCodec {
    mode: FramingMode,
    /// Set once by the first decode in `Auto` mode; shared by all clones.
    detected: Arc<OnceLock<Framing>>,
    max_message: usize,
    max_header: usize,
    lines: ndjson::LineDecoder,
    headers: lsp::HeaderDecoder,
    /// Report what a lenient reader skips between messages (see [`StdioCodec::strict`]).
    strict: bool,
    /// Digits of the last Content-Length written: the guess for the next header's width.
    length_digits: usize,
}

impl Default for StdioCodec {
    fn default() -> Self {
        StdioCodec::new(FramingMode::Auto)
    }
}

impl StdioCodec {
    pub fn new(mode: FramingMode) -> Self {
        StdioCodec {
            mode,
            detected: Arc::new(OnceLock::new()),
            max_message: DEFAULT_MAX_MESSAGE_BYTES,
            max_header: DEFAULT_MAX_HEADER_BYTES,
            lines: ndjson::LineDecoder::default(),
            headers: lsp::HeaderDecoder::default(),
            strict: false,
            length_digits: 1,
        }
    }

    /// Reports, as [`FrameError::NotAMessage`], what a lenient reader skips between messages:
    /// blank lines, a byte-order mark, header lines other than `Content-Length`/`Content-Type`.
    /// For judging a peer (a conformance harness), not for serving one.
    pub fn strict(mut self) -> Self {
        self.strict = true;
        self
    }

    /// Sets the largest message body accepted, in bytes (a line's `\r\n` is not counted).
    pub fn with_max_message_bytes(mut self, max: usize) -> Self {
        self.max_message = max.max(1);
        self
    }

    /// Sets the largest `Content-Length` header block accepted, in bytes.
    pub fn with_max_header_bytes(mut self, max: usize) -> Self {
        self.max_header = max.max(32);
        self
    }

    pub fn max_message_bytes(&self) -> usize {
        self.max_message
    }

    pub fn max_header_bytes(&self) -> usize {
        self.max_header
    }

    pub fn mode(&self) -> FramingMode {
        self.mode
    }

    /// The framing in use: fixed by the mode, or detected; `None` while `Auto` has seen nothing.
    pub fn framing(&self) -> Option<Framing> {
        match self.mode {
            FramingMode::Ndjson => Some(Framing::Ndjson),
            FramingMode::ContentLength => Some(Framing::ContentLength),
            FramingMode::Auto => self.detected.get().copied(),
        }
    }

    /// Writes any serializable value as one frame. Used for messages, and by tools that must
    /// send arbitrary JSON (a conformance harness).
    pub fn encode_value<T: Serialize + ?Sized>(
        &self,
        value: &T,
        dst: &mut BytesMut,
    ) -> io::Result<()> {
        // Before anything was detected, answer in the spec's framing.
        match self.framing().unwrap_or(Framing::Ndjson) {
            Framing::Ndjson => {
                // Compact serde_json never writes a raw newline: strings escape it.
                serde_json::to_writer((&mut *dst).writer(), value)?;
                dst.put_u8(b'\n');
            }
            Framing::ContentLength => {
                let body = serde_json::to_vec(value)?;
                dst.reserve(body.len() + 32);
                put_plain_header(dst, body.len());
                dst.put_slice(&body);
            }
        }
        Ok(())
    }
}

impl StdioCodec {
    /// Decodes the next frame's body without parsing it: for tools that must see exactly what
    /// a peer sent (a conformance harness).
    pub fn decode_raw(&mut self, src: &mut BytesMut) -> io::Result<Option<RawFrame>> {
        let framing = match self.framing() {
            Some(f) => f,
            None => match detect::detect(src) {
                Some(f) => *self.detected.get_or_init(|| f),
                None => return Ok(None),
            },
        };
        Ok(match framing {
            Framing::Ndjson => self.lines.decode(src, self.max_message, self.strict),
            Framing::ContentLength => {
                self.headers
                    .decode(src, self.max_message, self.max_header, self.strict)
            }
        })
    }

    /// [`decode_raw`](Self::decode_raw) at the end of input: an unterminated last frame.
    pub fn decode_raw_eof(&mut self, src: &mut BytesMut) -> io::Result<Option<RawFrame>> {
        if let Some(item) = self.decode_raw(src)? {
            return Ok(Some(item));
        }
        // Whatever is left is an unterminated frame (or nothing but whitespace).
        Ok(match self.framing().unwrap_or(Framing::Ndjson) {
            Framing::Ndjson => self.lines.decode_eof(src, self.max_message, self.strict),
            Framing::ContentLength => self.headers.decode_eof(src),
        })
    }
}

impl Decoder for StdioCodec {
    type Item = DecodedFrame;
    type Error = io::Error;

    fn decode(&mut self, src: &mut BytesMut) -> io::Result<Option<DecodedFrame>> {
        Ok(self.decode_raw(src)?.map(parse_frame))
    }

    fn decode_eof(&mut self, src: &mut BytesMut) -> io::Result<Option<DecodedFrame>> {
        Ok(self.decode_raw_eof(src)?.map(parse_frame))
    }
}

/// The same codec yielding each frame's raw body ([`RawFrame`]) instead of a parsed message.
#[derive(Debug, Clone, Default)]
pub struct RawCodec(pub StdioCodec);

impl Decoder for RawCodec {
    type Item = RawFrame;
    type Error = io::Error;

    fn decode(&mut self, src: &mut BytesMut) -> io::Result<Option<RawFrame>> {
        self.0.decode_raw(src)
    }

    fn decode_eof(&mut self, src: &mut BytesMut) -> io::Result<Option<RawFrame>> {
        self.0.decode_raw_eof(src)
    }
}

impl Encoder<Outgoing> for StdioCodec {
    type Error = io::Error;

    fn encode(&mut self, item: Outgoing, dst: &mut BytesMut) -> io::Result<()> {
        // Written straight into `dst` by the fast writer (same bytes as `encode_value`).
        match self.framing().unwrap_or(Framing::Ndjson) {
            Framing::Ndjson => {
                write::outgoing(dst, &item);
                dst.put_u8(b'\n');
            }
            Framing::ContentLength => {
                // The header's width depends on the body's length, known once the body is
                // written. Room for a header as wide as the last one is left in front; when
                // the guess holds (replies on one connection are alike) nothing moves,
                // otherwise the body is moved once.
                let start = dst.len();
                let room = PREFIX.len() + self.length_digits + 4;
                dst.put_bytes(0, room);
                write::outgoing(dst, &item);
                let end = dst.len();
                let mut digits = [0u8; 20];
                let length = decimal(end - start - room, &mut digits);
                let header = PREFIX.len() + length.len() + 4;
                if header != room {
                    if header > room {
                        dst.put_bytes(0, header - room);
                    }
                    dst.copy_within(start + room..end, start + header);
                    dst.truncate(end - room + header);
                }
                let at = &mut dst[start..start + header];
                at[..PREFIX.len()].copy_from_slice(PREFIX);
                at[PREFIX.len()..header - 4].copy_from_slice(length);
                at[header - 4..].copy_from_slice(b"\r\n\r\n");
                self.length_digits = length.len();
            }
        }
        Ok(())
    }
}

/// The start of the header block every peer writes (LSP base protocol, "Header Part").
const PREFIX: &[u8] = b"Content-Length: ";

/// Appends `Content-Length: N\r\n\r\n`, the plain header [`header_block`] reads first, for a body of
/// `body` bytes.
pub fn put_plain_header(dst: &mut impl BufMut, body: usize) {
    let mut digits = [0u8; 20];
    dst.put_slice(PREFIX);
    dst.put_slice(decimal(body, &mut digits));
    dst.put_slice(b"\r\n\r\n");
}

/// `n` in decimal, written at the end of `buf`.
fn decimal(mut n: usize, buf: &mut [u8; 20]) -> &[u8] {
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &buf[at..];
        }
    }
}

/// Parses one frame's body. Shared by both framings so they report identically.
fn parse_frame(body: RawFrame) -> DecodedFrame {
    crate::parse::parse(&body?)
}

/// Shows a few bytes of bad input in an error message, escaped and cut short.
fn snippet(bytes: &[u8]) -> String {
    const MAX: usize = 48;
    let shown = &bytes[..bytes.len().min(MAX)];
    let mut s: String = shown.escape_ascii().to_string();
    if bytes.len() > MAX {
        s.push_str("...");
    }
    s
}
