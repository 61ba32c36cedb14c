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
}

impl LineDecoder {
    pub(super) fn decode(&mut self, src: &mut BytesMut, max: usize) -> Option<RawFrame> {
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
                    if let Some(item) = frame(line, max) {
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
    pub(super) fn decode_eof(&mut self, src: &mut BytesMut, max: usize) -> Option<RawFrame> {
        let line = src.split().freeze();
        self.scanned = 0;
        if std::mem::take(&mut self.discarding) {
            return None;
        }
        frame(line, max)
    }
}

/// One line without its `\n`: strips `\r` and a BOM, skips blank lines, checks the size.
fn frame(mut line: Bytes, max: usize) -> Option<RawFrame> {
    if line.ends_with(b"\r") {
        line.truncate(line.len() - 1);
    }
    if line.starts_with(BOM) {
        line.advance(BOM.len());
    }
    if line.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    if line.len() > max {
        return Some(Err(FrameError::TooLarge {
            declared: Some(line.len() as u64),
            max,
        }));
    }
    Some(Ok(line))
}
