//! `Content-Length` framing, as in the LSP base protocol: a header block of `Name: value`
//! lines ended by an empty line, then exactly `Content-Length` bytes of UTF-8 JSON.
//!
//! Header names are case-insensitive; `Content-Type` and unknown headers are tolerated; a bare
//! `\n` line ending is accepted. A declared length over the limit is never allocated: the body
//! is reported once and skipped as it streams in. A header block that cannot be read is
//! reported, then input is skipped to the next `Content-Length` so one bad frame does not end
//! the connection.

use bytes::{Buf, BytesMut};

use super::{snippet, RawFrame};
use crate::error::FrameError;

const NEEDLE: &[u8] = b"content-length";

#[derive(Debug, Clone, Default)]
pub(super) enum HeaderDecoder {
    /// Waiting for a complete header block.
    #[default]
    Header,
    /// The header was read; the body has this many bytes.
    Body(usize),
    /// Skipping the rest of an over-long body that was already reported.
    Skip(u64),
    /// After an unreadable header: skipping to the next `Content-Length`.
    Resync,
}

impl HeaderDecoder {
    pub(super) fn decode(
        &mut self,
        src: &mut BytesMut,
        max: usize,
        max_header: usize,
        strict: bool,
    ) -> Option<RawFrame> {
        loop {
            match *self {
                HeaderDecoder::Header => {
                    // Whitespace between frames (a stray "\r\n" after a body) is not a header.
                    let blank = src.iter().take_while(|b| b.is_ascii_whitespace()).count();
                    src.advance(blank);
                    if src.is_empty() {
                        return None;
                    }
                    if strict {
                        if let Some(item) = unknown_first_line(src) {
                            return Some(item);
                        }
                    }
                    let window = &src[..src.len().min(max_header)];
                    let Some(end) = header_end(window) else {
                        if window.len() < max_header {
                            return None;
                        }
                        src.advance(max_header);
                        *self = HeaderDecoder::Resync;
                        return Some(Err(FrameError::Header(format!(
                            "no empty line within the first {max_header} bytes of the header block"
                        ))));
                    };
                    let parsed = content_length(&src[..end]);
                    src.advance(end);
                    match parsed {
                        Err(reason) => {
                            *self = HeaderDecoder::Resync;
                            return Some(Err(FrameError::Header(reason)));
                        }
                        Ok(len) if len > max as u64 => {
                            *self = HeaderDecoder::Skip(len);
                            return Some(Err(FrameError::TooLarge {
                                declared: Some(len),
                                max,
                            }));
                        }
                        // `len <= max`, which is a `usize`.
                        Ok(len) => *self = HeaderDecoder::Body(len as usize),
                    }
                }
                HeaderDecoder::Body(len) => {
                    if src.len() < len {
                        src.reserve(len - src.len());
                        return None;
                    }
                    let body = src.split_to(len).freeze();
                    *self = HeaderDecoder::Header;
                    return Some(Ok(body));
                }
                HeaderDecoder::Skip(remaining) => {
                    let n = remaining.min(src.len() as u64);
                    src.advance(n as usize);
                    if n < remaining {
                        *self = HeaderDecoder::Skip(remaining - n);
                        return None;
                    }
                    *self = HeaderDecoder::Header;
                }
                HeaderDecoder::Resync => match find_ignore_case(src, NEEDLE) {
                    Some(i) => {
                        src.advance(i);
                        *self = HeaderDecoder::Header;
                    }
                    None => {
                        // Keep a tail that could be the start of the needle.
                        let keep = NEEDLE.len() - 1;
                        if src.len() > keep {
                            src.advance(src.len() - keep);
                        }
                        return None;
                    }
                },
            }
        }
    }

    pub(super) fn decode_eof(&mut self, src: &mut BytesMut) -> Option<RawFrame> {
        let rest = src.split();
        let state = std::mem::take(self);
        match state {
            HeaderDecoder::Header if !rest.iter().all(u8::is_ascii_whitespace) => Some(Err(
                FrameError::Truncated(format!("incomplete header block \"{}\"", snippet(&rest))),
            )),
            HeaderDecoder::Body(len) => Some(Err(FrameError::Truncated(format!(
                "Content-Length declared {len} bytes but only {} arrived",
                rest.len()
            )))),
            _ => None,
        }
    }
}

/// Strict mode: a first line that is not a `Content-Length`/`Content-Type` header is reported
/// and consumed alone, so the frame after it still decodes.
fn unknown_first_line(src: &mut BytesMut) -> Option<RawFrame> {
    let nl = memchr::memchr(b'\n', src)?;
    let line = src[..nl].strip_suffix(b"\r").unwrap_or(&src[..nl]);
    let name = line
        .iter()
        .position(|b| *b == b':')
        .map(|colon| line[..colon].trim_ascii())?;
    if name.eq_ignore_ascii_case(b"content-length") || name.eq_ignore_ascii_case(b"content-type") {
        return None;
    }
    let text = format!("a line that is not a frame header: \"{}\"", snippet(line));
    src.advance(nl + 1);
    Some(Err(FrameError::NotAMessage(text)))
}

/// The index just past the empty line that ends a header block, if there is one.
fn header_end(buf: &[u8]) -> Option<usize> {
    memchr::memchr_iter(b'\n', buf).find_map(|i| match &buf[i + 1..] {
        [b'\n', ..] => Some(i + 2),
        [b'\r', b'\n', ..] => Some(i + 3),
        _ => None,
    })
}

/// Reads `Content-Length` from a header block; says what is wrong otherwise.
fn content_length(block: &[u8]) -> Result<u64, String> {
    let mut length = None;
    for line in block.split(|b| *b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            continue;
        }
        let Some(colon) = memchr::memchr(b':', line) else {
            return Err(format!(
                "header line \"{}\" is not \"Name: value\"",
                snippet(line)
            ));
        };
        let name = line[..colon].trim_ascii();
        let value = line[colon + 1..].trim_ascii();
        if !name.eq_ignore_ascii_case(b"content-length") {
            continue; // Content-Type (any charset) and unknown headers are tolerated.
        }
        if length.is_some() {
            return Err("Content-Length appears more than once".to_owned());
        }
        if value.is_empty() || !value.iter().all(u8::is_ascii_digit) {
            return Err(format!(
                "Content-Length must be a decimal byte count, got \"{}\"",
                snippet(value)
            ));
        }
        let n = std::str::from_utf8(value)
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
            .ok_or_else(|| format!("Content-Length {} is out of range", snippet(value)))?;
        length = Some(n);
    }
    length.ok_or_else(|| "missing Content-Length header".to_owned())
}

/// ASCII case-insensitive substring search.
fn find_ignore_case(hay: &[u8], needle: &[u8]) -> Option<usize> {
    let (first, rest) = needle.split_first()?;
    memchr::memchr2_iter(first.to_ascii_lowercase(), first.to_ascii_uppercase(), hay).find(|&i| {
        hay.get(i + 1..i + needle.len())
            .is_some_and(|tail| tail.eq_ignore_ascii_case(rest))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_parsing() {
        assert_eq!(content_length(b"Content-Length: 12\r\n\r\n"), Ok(12));
        assert_eq!(content_length(b"content-length:7\n\n"), Ok(7));
        assert_eq!(
            content_length(b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nCONTENT-LENGTH: 3\r\n\r\n"),
            Ok(3)
        );
        assert!(content_length(b"Content-Length: -1\r\n\r\n")
            .unwrap_err()
            .contains("decimal byte count"));
        assert!(content_length(b"Content-Length: abc\r\n\r\n").is_err());
        assert!(
            content_length(b"Content-Length: 18446744073709551616\r\n\r\n")
                .unwrap_err()
                .contains("out of range")
        );
        assert!(
            content_length(b"Content-Length: 1\r\nContent-Length: 1\r\n\r\n")
                .unwrap_err()
                .contains("more than once")
        );
        assert_eq!(
            content_length(b"X-Other: 1\r\n\r\n"),
            Err("missing Content-Length header".to_owned())
        );
        assert!(content_length(b"garbage\r\n\r\n")
            .unwrap_err()
            .contains("is not \"Name: value\""));
    }

    #[test]
    fn finds_needle_any_case() {
        assert_eq!(find_ignore_case(b"xxCONTENT-length", NEEDLE), Some(2));
        assert_eq!(find_ignore_case(b"content-lengt", NEEDLE), None);
    }
}
