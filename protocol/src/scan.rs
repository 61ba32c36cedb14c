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
use crate::message::{Message, Notification, Params, Request, RequestId};

/// Nesting the fast path reads; deeper input is left to serde_json, whose own limit is 128.
const MAX_DEPTH: u32 = 64;

/// A cursor over one frame's JSON text, handed to [`Params::scan`].
///
/// Every method returns `None` for input it does not read; the caller then gives up too.
#[derive(Debug)]
pub struct Scanner<'a> {
    text: &'a str,
    pos: usize,
    depth: u32,
}

impl<'a> Scanner<'a> {
    fn new(text: &'a str) -> Self {
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

    fn word(&mut self, word: &str) -> Option<()> {
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
    fn integer(&mut self) -> Option<i64> {
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

/// A request or notification read on the fast path, or `None` to leave the frame to serde.
pub(crate) fn message<P: Params>(text: &str) -> Option<Message<P>> {
    let mut s = Scanner::new(text);
    let mut jsonrpc = false;
    let mut id: Option<RequestId> = None;
    let mut method: Option<String> = None;
    let mut params: Option<Option<P>> = None;
    s.object(|name, s| {
        match &*name {
            // Any other version is the serde path's -32600.
            "jsonrpc" if !jsonrpc && s.string()? == "2.0" => jsonrpc = true,
            "id" if id.is_none() => {
                id = Some(match s.peek()? {
                    b'"' => match s.string()? {
                        Cow::Borrowed(id) => RequestId::from(id),
                        Cow::Owned(id) => RequestId::from(id),
                    },
                    _ => RequestId::from(s.integer()?),
                })
            }
            "method" if method.is_none() => method = Some(s.string()?.into_owned()),
            // As on the serde path, params are read under the method only if it came first.
            "params" if params.is_none() => {
                params = Some(match s.peek()? {
                    b'n' => s.word("null").map(|()| None)?,
                    b'{' | b'[' => Some(P::scan(method.as_deref(), s)?),
                    _ => return None,
                })
            }
            _ => return None,
        }
        Some(())
    })?;
    if s.peek().is_some() || !jsonrpc {
        return None;
    }
    let method = method?;
    let params = params.flatten();
    Some(match id {
        Some(id) => Message::Request(Request { id, method, params }),
        None => Message::Notification(Notification { method, params }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::parse_with_serde;
    use crate::Incoming;

    fn fast(text: &str) -> Option<Message> {
        message::<Value>(text)
    }

    /// What the fast path reads is what serde_json's path reads.
    fn reads(text: &str) -> Message {
        let ours = fast(text).unwrap_or_else(|| panic!("the fast path gave up on {text}"));
        match parse_with_serde::<Value>(text.as_bytes()) {
            Ok(Incoming::Single(theirs)) => assert_eq!(ours, theirs, "{text}"),
            other => panic!("{text}: serde_json's path gave {other:?}"),
        }
        ours
    }

    #[test]
    fn reads_requests_and_notifications_as_sdks_write_them() {
        let m = reads(
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}"#,
        );
        let Message::Request(r) = m else {
            panic!("{m:?}")
        };
        assert_eq!(r.id, RequestId::from(7));
        assert_eq!(r.method, "tools/call");
        assert_eq!(
            r.params,
            Some(serde_json::json!({"name": "echo", "arguments": {"text": "hi"}}))
        );
        // Any member order, whitespace between tokens, string ids, no params, null params.
        reads("\r\n {\t\"method\" : \"ping\" ,\n\"id\":\"a-1\", \"jsonrpc\":\"2.0\"} \n");
        reads(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        reads(r#"{"jsonrpc":"2.0","method":"m","params":null}"#);
        reads(r#"{"params":[1,-2,true,false,null,[],{}],"jsonrpc":"2.0","method":"m"}"#);
        reads(r#"{"jsonrpc":"2.0","id":-999999999999999999,"method":"m"}"#);
        reads(r#"{"jsonrpc":"2.0","id":0,"method":"m","params":{"a":{"b":[{"c":"d"}]}}}"#);
        // A repeated member inside params keeps the last value, as in a `Value`.
        reads(r#"{"jsonrpc":"2.0","method":"m","params":{"a":1,"a":2}}"#);
    }

    #[test]
    fn unescapes_every_escape_as_serde_json_does() {
        let m = reads(
            r#"{"jsonrpc":"2.0","id":"\"\\\/\b\f\n\r\t\u00e9\u00E9\u0000\uD83E\uDD80","method":"m\u0031"}"#,
        );
        let Message::Request(r) = m else {
            panic!("{m:?}")
        };
        assert_eq!(r.id.as_str(), Some("\"\\/\u{8}\u{c}\n\r\té\u{e9}\0🦀"));
        assert_eq!(r.method, "m1");
        // Escaped member names and values are read too.
        reads(r#"{"\u006asonrpc":"2\u002e0","method":"m","params":{"\"k\"":"\u2028"}}"#);
        // Long strings: across the reader's 8- and 32-byte steps, with escapes anywhere.
        for at in [0, 7, 8, 9, 31, 32, 33, 40, 63, 64, 65, 100] {
            let mut text = "x".repeat(120);
            text.insert_str(at, r"\n");
            reads(&format!(
                r#"{{"jsonrpc":"2.0","method":"m","params":{{"t":"{text}","u":"é{text}"}}}}"#
            ));
        }
    }

    #[test]
    fn leaves_everything_else_to_serde_json() {
        let cases = [
            // Not what it reads: numbers it cannot keep exactly, and ids serde_json refuses.
            r#"{"jsonrpc":"2.0","id":1.0,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1e3,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1E3,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":-0,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1234567890123456789,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","method":"m","params":{"x":0.5}}"#,
            // Not a request or notification, or not a valid one.
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1}"#,
            r#"{"jsonrpc":"1.0","method":"m"}"#,
            r#"{"method":"m"}"#,
            r#"{"jsonrpc":"2.0","method":5}"#,
            r#"{"jsonrpc":"2.0","method":"m","params":"p"}"#,
            r#"{"jsonrpc":"2.0","method":"m","x":1}"#,
            // Repeated members.
            r#"{"jsonrpc":"2.0","method":"m","method":"n"}"#,
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","jsonrpc":"2.0","method":"m"}"#,
            r#"{"jsonrpc":"2.0","method":"m","params":{},"params":{}}"#,
            // Not JSON.
            r#"{"jsonrpc":"2.0","method":"m"} x"#,
            r#"{"jsonrpc":"2.0","method":"m",}"#,
            r#"{"jsonrpc":"2.0","method":"m""#,
            "{\"jsonrpc\":\"2.0\",\"method\":\"a\tb\"}",
            "\u{c}{\"jsonrpc\":\"2.0\",\"method\":\"m\"}",
            r#"{"jsonrpc":"2.0","method":"\ud800"}"#,
            r#"{"jsonrpc":"2.0","method":"\udc00"}"#,
            r#"{"jsonrpc":"2.0","method":"\ud800\u0041"}"#,
            r#"{"jsonrpc":"2.0","method":"\u12"}"#,
            r#"{"jsonrpc":"2.0","method":"\x"}"#,
            r#"{"jsonrpc":"2.0","method":"m","params":[007]}"#,
            r#"{"jsonrpc":"2.0","method":"m","params":[nul]}"#,
            r#"{"jsonrpc":"2.0","method":"m","params":[1,]}"#,
        ];
        for text in cases {
            assert_eq!(fast(text), None, "{text}");
        }
        // Nesting: 64 levels are read; deeper is serde_json's (its own limit is 128).
        let nested = |depth: usize| {
            format!(
                r#"{{"jsonrpc":"2.0","method":"m","params":{}{}}}"#,
                "[".repeat(depth - 1),
                "]".repeat(depth - 1)
            )
        };
        reads(&nested(MAX_DEPTH as usize));
        assert_eq!(fast(&nested(MAX_DEPTH as usize + 1)), None);
    }
}
