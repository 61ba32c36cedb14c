//! Newline-delimited JSON: the MCP stdio framing.
//!
//! The scan follows tokio-util's `LinesCodec`: remember how far the current line was searched,
//! cap the search at the limit, and after an over-long line report once and discard to the
//! next `\n`. A trailing `\r` is stripped (go-sdk #664) and blank lines are skipped.

use bytes::{Buf, Bytes, BytesMut};

use super::RawFrame;
use crate::error::FrameError;

const BOM: &[u8] = b"\xEF\xBB\xBF";

#[derive(Debug, Clone, Default)]
pub(super) struct LineDecoder {
    /// Bytes of the current line already searched for `\n`: each byte is scanned once.
    scanned: usize,
    /// Skipping the rest of an over-long line that was already reported.
    discarding: bool,
    /// Strict mode: a message that follows a reported byte-order mark.
    pending: Option<RawFrame>,
}

impl LineDecoder {
    pub(super) fn decode(
        &mut self,
        src: &mut BytesMut,
        max: usize,
        strict: bool,
    ) -> Option<RawFrame> {
        if let Some(item) = self.pending.take() {
            return Some(item);
        }
        loop {
            if self.discarding {
                match memchr::memchr(b'\n', src) {
                    Some(i) => {
                        src.advance(i + 1);
                        self.discarding = false;
                    }
                    None => {
                        src.clear();
                        return None;
                    }
                }
            }
            // A message of `max` bytes may be followed by "\r\n".
            let window = src.len().min(max.saturating_add(2));
            match memchr::memchr(b'\n', &src[self.scanned..window]) {
                Some(offset) => {
                    let end = self.scanned + offset;
                    self.scanned = 0;
                    let mut line = src.split_to(end + 1).freeze();
                    line.truncate(end);
                    if let Some(item) = self.frame(line, max, strict) {
                        return Some(item);
                    }
                }
                None if window == max.saturating_add(2) => {
                    // No newline within the limit: report once, then skip to the line's end.
                    self.scanned = 0;
                    self.discarding = true;
                    src.advance(window);
                    return Some(Err(FrameError::TooLarge {
                        declared: None,
                        max,
                    }));
                }
                None => {
                    self.scanned = window;
                    return None;
                }
            }
        }
    }

    /// The input ended: a last line without `\n` is still a message (nothing is lost).
    pub(super) fn decode_eof(
        &mut self,
        src: &mut BytesMut,
        max: usize,
        strict: bool,
    ) -> Option<RawFrame> {
        if let Some(item) = self.pending.take() {
            return Some(item);
        }
        let line = src.split().freeze();
        self.scanned = 0;
        if std::mem::take(&mut self.discarding) || line.is_empty() {
            return None;
        }
        self.frame(line, max, strict)
    }

    /// One line without its `\n`: strips `\r` and a BOM, skips blank lines, checks the size.
    /// A strict decoder reports the BOM (then hands out the message) and blank lines.
    fn frame(&mut self, mut line: Bytes, max: usize, strict: bool) -> Option<RawFrame> {
        if line.ends_with(b"\r") {
            line.truncate(line.len() - 1);
        }
        let bom = line.starts_with(BOM);
        if bom {
            line.advance(BOM.len());
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            return strict.then(|| Err(FrameError::NotAMessage("an empty line".to_owned())));
        }
        let item = if line.len() > max {
            Err(FrameError::TooLarge {
                declared: Some(line.len() as u64),
                max,
            })
        } else {
            Ok(line)
        };
        if strict && bom {
            self.pending = Some(item);
            return Some(Err(FrameError::NotAMessage(
                "a UTF-8 byte-order mark (EF BB BF) before a message (RFC 8259 §8.1: MUST NOT)"
                    .to_owned(),
            )));
        }
        Some(item)
    }
}
