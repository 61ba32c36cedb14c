//! The fast path of [`crate::parse_as`]: one pass over the text, without serde's generic
//! machinery, for the frames a server reads most: requests and notifications as every SDK
//! writes them. serde_json's reader had been over half of the instructions of a 64 B echo
//! round trip (BENCHMARKS.md).
//!
//! It reads only what it is sure of:
//! * an object with `"jsonrpc": "2.0"` and a string `method`;
//! * optionally an `id` that is a string or a plain integer of up to 18 digits;
//! * optionally `params` that are an object, an array or `null`;
//! * each member once, in any order, and nothing else.
//!
//! On anything else it gives up (`None`), and serde_json's path reads the frame from the
//! start: a fraction, an exponent or a bigger integer anywhere, a lone surrogate escape, a
//! duplicate or unknown member, a response, deep nesting, anything invalid. So every message
//! it returns is the one the serde path returns, and every error is still worded by that
//! path. Tests and the fuzzer compare the two paths on every input they make.

use std::borrow::Cow;

use serde_json::{Map, Value};

use crate::escape::{first_escape, next_escape, word_at};

/// Nesting the fast path reads; deeper input is left to serde_json, whose own limit is 128.
pub(crate) const MAX_DEPTH: u32 = 64;

/// A cursor over one frame's JSON text, handed to [`crate::Params::scan`].
///
/// Every method returns `None` for input it does not read; the caller then gives up too.
#[derive(Debug)]
pub struct Scanner<'a> {
    text: &'a str,
    pos: usize,
    depth: u32,
}

impl<'a> Scanner<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        Scanner {
            text,
            pos: 0,
            depth: 0,
        }
    }

    fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    /// The next byte that is not JSON whitespace (RFC 8259 §2), without consuming it.
    #[inline]
    pub fn peek(&mut self) -> Option<u8> {
        // Compact JSON has no whitespace: every JSON whitespace byte is at most a space.
        match self.bytes().get(self.pos) {
            Some(&b) if b > b' ' => Some(b),
            _ => self.peek_past_whitespace(),
        }
    }

    fn peek_past_whitespace(&mut self) -> Option<u8> {
        let bytes = self.bytes();
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = bytes.get(self.pos) {
            self.pos += 1;
        }
        bytes.get(self.pos).copied()
    }

    fn eat(&mut self, byte: u8) -> bool {
        let found = self.peek() == Some(byte);
        if found {
            self.pos += 1;
        }
        found
    }

    pub(crate) fn word(&mut self, word: &str) -> Option<()> {
        self.peek()?;
        let end = self.pos + word.len();
        (self.bytes().get(self.pos..end)? == word.as_bytes()).then(|| self.pos = end)
    }

    /// A string, unescaped: borrowed from the text unless it holds escapes.
    pub fn string(&mut self) -> Option<Cow<'a, str>> {
        if !self.eat(b'"') {
            return None;
        }
        // Most strings (member names, methods, ids) are short and plain: when the first byte
        // to stop at in the next 8 is the closing quote, that is the string.
        let start = self.pos;
        if let Some(len) = word_at(self.bytes(), start).and_then(first_escape) {
            if self.bytes().get(start + len) == Some(&b'"') {
                self.pos = start + len + 1;
                return self.text.get(start..start + len).map(Cow::Borrowed);
            }
        }
        self.string_rest()
    }

    /// [`Scanner::string`] after its opening quote, for any string. Kept out of line, so that
    /// the short path does not pay for this one's registers.
    #[inline(never)]
    fn string_rest(&mut self) -> Option<Cow<'a, str>> {
        let mut run = self.pos;
        let mut unescaped: Option<String> = None;
        loop {
            // The text is valid UTF-8 (checked before the scan), and `run` and `at` are at
            // ASCII bytes, so the slices below are on character boundaries.
            let at = next_escape(self.bytes(), self.pos)?;
            match self.bytes().get(at)? {
                b'"' => {
                    let tail = self.text.get(run..at)?;
                    self.pos = at + 1;
                    return Some(match unescaped {
                        None => Cow::Borrowed(tail),
                        Some(mut s) => {
                            s.push_str(tail);
                            Cow::Owned(s)
                        }
                    });
                }
                b'\\' => {
                    let s = unescaped.get_or_insert_with(String::new);
                    s.push_str(self.text.get(run..at)?);
                    self.pos = at + 1;
                    s.push(self.escape()?);
                    run = self.pos;
                }
                // A raw control character: not JSON.
                _ => return None,
            }
        }
    }

    /// The character an escape stands for, read after its backslash (RFC 8259 §7).
    fn escape(&mut self) -> Option<char> {
        let byte = *self.bytes().get(self.pos)?;
        self.pos += 1;
        Some(match byte {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let unit = self.hex4()?;
                if (0xD800..0xDC00).contains(&unit) {
                    // A surrogate pair is two escapes; a lone surrogate is serde_json's to
                    // refuse (`char::from_u32` is `None` for a lone low one).
                    if self.bytes().get(self.pos..self.pos + 2)? != b"\\u" {
                        return None;
                    }
                    self.pos += 2;
                    let low = self.hex4()?;
                    if !(0xDC00..0xE000).contains(&low) {
                        return None;
                    }
                    char::from_u32(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))?
                } else {
                    char::from_u32(unit)?
                }
            }
            _ => return None,
        })
    }

    fn hex4(&mut self) -> Option<u32> {
        let digits = self.bytes().get(self.pos..self.pos + 4)?;
        let mut unit = 0;
        for &d in digits {
            unit = unit * 16 + char::from(d).to_digit(16)?;
        }
        self.pos += 4;
        Some(unit)
    }

    /// A plain integer of at most 18 digits, so it fits an `i64` exactly.
    ///
    /// `-0` is left to serde_json, which reads it as the float -0.0; so are leading zeros
    /// (not JSON) and any fraction or exponent.
    pub(crate) fn integer(&mut self) -> Option<i64> {
        self.peek()?;
        let bytes = self.bytes();
        let negative = bytes.get(self.pos) == Some(&b'-');
        let start = self.pos + usize::from(negative);
        let mut end = start;
        while bytes.get(end).is_some_and(u8::is_ascii_digit) {
            end += 1;
        }
        let digits = bytes.get(start..end)?;
        let leading_zero = digits.first() == Some(&b'0') && (digits.len() > 1 || negative);
        if digits.is_empty() || digits.len() > 18 || leading_zero {
            return None;
        }
        if let Some(b'.' | b'e' | b'E') = bytes.get(end) {
            return None;
        }
        let magnitude = digits
            .iter()
            .fold(0i64, |n, &d| n * 10 + i64::from(d - b'0'));
        self.pos = end;
        Some(if negative { -magnitude } else { magnitude })
    }

    /// Any JSON value, as serde_json reads it into a `Value`.
    pub fn value(&mut self) -> Option<Value> {
        Some(match self.peek()? {
            b'"' => Value::String(self.string()?.into_owned()),
            b'{' => {
                let mut members = Map::new();
                self.object(|name, s| {
                    // A repeated name keeps its last value, as serde_json's `Value` does.
                    members.insert(name.into_owned(), s.value()?);
                    Some(())
                })?;
                Value::Object(members)
            }
            b'[' => {
                let mut items = Vec::new();
                self.array(|s| {
                    items.push(s.value()?);
                    Some(())
                })?;
                Value::Array(items)
            }
            b't' => self.word("true").map(|()| Value::Bool(true))?,
            b'f' => self.word("false").map(|()| Value::Bool(false))?,
            b'n' => self.word("null").map(|()| Value::Null)?,
            _ => Value::from(self.integer()?),
        })
    }

    /// An object: `member` is called with each member's unescaped name and must read its
    /// value.
    pub fn object(
        &mut self,
        mut member: impl FnMut(Cow<'a, str>, &mut Self) -> Option<()>,
    ) -> Option<()> {
        self.items(*b"{}", |s| {
            let name = s.string()?;
            if !s.eat(b':') {
                return None;
            }
            member(name, s)
        })
    }

    /// An array: `item` is called for each item and must read it.
    pub fn array(&mut self, item: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.items(*b"[]", item)
    }

    /// Comma-separated items between `brackets`, each read by `each`, nested one level deeper.
    fn items(
        &mut self,
        [open, close]: [u8; 2],
        mut each: impl FnMut(&mut Self) -> Option<()>,
    ) -> Option<()> {
        if !self.eat(open) || self.depth == MAX_DEPTH {
            return None;
        }
        self.depth += 1;
        if !self.eat(close) {
            loop {
                each(self)?;
                if !self.eat(b',') {
                    break;
                }
            }
            if !self.eat(close) {
                return None;
            }
        }
        self.depth -= 1;
        Some(())
    }
}
