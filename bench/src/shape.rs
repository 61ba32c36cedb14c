//! The shape of a server's echo reply, learnt from one reply that passed the full check: its
//! bytes with the id and every copy of the text cut out. A later reply that differs from it
//! only in those places, by the id and the text that id was sent, is verified by comparing
//! bytes, with no JSON parse.
//!
//! Why: at window 1 the driver's work is measured with the server's, and parsing each reply
//! was most of it (8.3 k instructions per round trip against our server, more than the server
//! itself), and it grew with the reply, so a server answering with more JSON looked slower
//! than its own work made it.
//!
//! Why it is sound: the learnt reply was valid JSON whose top-level `id` was a plain integer
//! and whose `result.content[0].text` (and `structuredContent.text`, if a string) was the
//! text. Every `"id": N` member with that value, and every string token that was exactly that
//! text, is a slot; everything else must be equal byte for byte. Bench texts need no escapes
//! and ids are plain digits, so filling the slots anew keeps every token what it was: the
//! reply parses to the same JSON with the new id and text wherever the old ones were, which is
//! what the full check would accept. A reply of any other shape takes the full check, which
//! words its error.

use std::ops::Range;

use memchr::memmem;

use super::text::{text_len, Filler};

/// One piece of a learnt reply.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    /// Bytes that must be equal: this range of [`Shape::bytes`].
    Literal(Range<usize>),
    /// The digits of the reply's id.
    Id,
    /// The text sent with that id, inside its quotes.
    Text,
}

/// A learnt reply; see the module's documentation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Shape {
    bytes: Vec<u8>,
    parts: Vec<Part>,
}

impl Shape {
    /// The shape of `frame`, a reply that passed the full check as the echo of id `id`'s
    /// `payload`-byte text. `None` when the id is not found as a plain `"id": N` member.
    pub(crate) fn learn(frame: &[u8], id: u64, payload: usize, filler: &Filler) -> Option<Shape> {
        let text = filler.text(id, payload)?;
        let quoted = format!("\"{text}\"");
        let mut slots: Vec<(Range<usize>, Part)> = memmem::find_iter(frame, quoted.as_bytes())
            .map(|at| (at + 1..at + 1 + text.len(), Part::Text))
            .collect();
        let digits = id.to_string();
        for at in memmem::find_iter(frame, b"\"id\"") {
            let mut pos = at + 4;
            pos += whitespace(&frame[pos..]);
            if frame.get(pos) != Some(&b':') {
                continue;
            }
            pos += 1;
            pos += whitespace(&frame[pos..]);
            let end = pos + digits.len();
            let ends_number = matches!(
                frame.get(end),
                Some(b',' | b'}' | b' ' | b'\t' | b'\n' | b'\r')
            );
            if frame.get(pos..end) == Some(digits.as_bytes()) && ends_number {
                slots.push((pos..end, Part::Id));
            }
        }
        if !slots.iter().any(|(_, part)| *part == Part::Id) {
            return None;
        }
        slots.sort_by_key(|(range, _)| range.start);
        let mut shape = Shape {
            bytes: Vec::new(),
            parts: Vec::new(),
        };
        let mut from = 0;
        for (range, part) in slots {
            shape.literal(frame.get(from..range.start)?);
            shape.parts.push(part);
            from = range.end;
        }
        shape.literal(frame.get(from..)?);
        Some(shape)
    }

    fn literal(&mut self, bytes: &[u8]) {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(bytes);
        self.parts.push(Part::Literal(start..self.bytes.len()));
    }

    /// The id `frame` answers, if it is this shape filled with an id and that id's text.
    pub(crate) fn matches(&self, frame: &[u8], payload: usize, filler: &Filler) -> Option<u64> {
        let mut pos = 0;
        let mut id = None;
        for part in &self.parts {
            match part {
                Part::Literal(range) => {
                    let literal = self.bytes.get(range.clone())?;
                    if !frame.get(pos..)?.starts_with(literal) {
                        return None;
                    }
                    pos += literal.len();
                }
                Part::Id => {
                    let (n, len) = number(frame.get(pos..)?)?;
                    if id.is_some_and(|id| id != n) {
                        return None;
                    }
                    id = Some(n);
                    pos += len;
                }
                Part::Text => {
                    // The text names its id, so it can come first (`{"result":…,"id":N}`).
                    let n = match id {
                        Some(n) => n,
                        None => number(frame.get(pos..)?)?.0,
                    };
                    let end = pos + text_len(n, payload);
                    if !filler.is_text(frame.get(pos..end)?, n, payload) {
                        return None;
                    }
                    id = Some(n);
                    pos = end;
                }
            }
        }
        if pos == frame.len() {
            id
        } else {
            None
        }
    }
}

fn whitespace(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .take_while(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        .count()
}

/// The integer at the start of `bytes`, written as JSON writes it (no leading zero), and its
/// length in bytes.
fn number(bytes: &[u8]) -> Option<(u64, usize)> {
    let len = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
    let digits = bytes.get(..len)?;
    if len == 0 || (len > 1 && digits[0] == b'0') {
        return None;
    }
    let mut n: u64 = 0;
    for &d in digits {
        n = n.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    Some((n, len))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::{check_reply, Received};

    const PAYLOAD: usize = 12;

    fn filler() -> Filler {
        let mut filler = Filler::default();
        filler.grow(PAYLOAD);
        filler
    }

    fn text(id: u64) -> String {
        filler().text(id, PAYLOAD).unwrap_or_default()
    }

    /// `mcp-echo-server`'s reply, the TypeScript SDK's (result first) and one with a nested
    /// `"id"` equal to the reply's and spacing.
    fn replies(id: u64) -> Vec<String> {
        let t = text(id);
        vec![
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"{t}"}}],"structuredContent":{{"text":"{t}"}}}}}}"#
            ),
            format!(
                r#"{{"result":{{"content":[{{"type":"text","text":"{t}"}}]}},"jsonrpc":"2.0","id":{id}}}"#
            ),
            format!(
                r#"{{ "jsonrpc" : "2.0", "result" : {{ "content" : [ {{ "type" : "text", "text" : "{t}" }} ], "_meta" : {{ "id" : {id} }} }}, "id" : {id} }}"#
            ),
        ]
    }

    #[test]
    fn a_learnt_reply_verifies_the_next_ones_by_their_bytes() {
        let filler = filler();
        for (i, learnt) in replies(9).into_iter().enumerate() {
            let Some(shape) = Shape::learn(learnt.as_bytes(), 9, PAYLOAD, &filler) else {
                panic!("no shape learnt from {learnt}");
            };
            // Ids of other widths move everything after them.
            for id in [9, 1, 10, 99, 100, 123_456_789_012] {
                let later = &replies(id)[i];
                assert_eq!(
                    shape.matches(later.as_bytes(), PAYLOAD, &filler),
                    Some(id),
                    "{later}"
                );
            }
        }
    }

    #[test]
    fn a_reply_whose_id_and_text_disagree_is_not_matched() {
        let filler = filler();
        let learnt = &replies(9)[0];
        let Some(shape) = Shape::learn(learnt.as_bytes(), 9, PAYLOAD, &filler) else {
            panic!("no shape");
        };
        let t10 = text(10);
        let t11 = text(11);
        for bad in [
            // Id 10 with id 11's text, in either copy.
            learnt
                .replacen("\"id\":9", "\"id\":10", 1)
                .replace(&text(9), &t11),
            replies(10)[0].replacen(&t10, &t11, 1),
            replies(10)[0].replace(
                &format!("{{\"text\":\"{t10}\"}}"),
                &format!("{{\"text\":\"{t11}\"}}"),
            ),
            // Not JSON's way of writing 10, or not the bench's text.
            replies(10)[0].replacen("\"id\":10", "\"id\":010", 1),
            replies(10)[0].replacen(&t10, &t10.replacen('x', "y", 1), 1),
            replies(10)[0].replacen(&t10, &format!("{t10}x"), 1),
            // Anything else different, or more.
            replies(10)[0].replacen("2.0", "2.1", 1),
            format!("{} ", replies(10)[0]),
            replies(10)[0][..replies(10)[0].len() - 1].to_owned(),
        ] {
            assert_eq!(
                shape.matches(bad.as_bytes(), PAYLOAD, &filler),
                None,
                "{bad}"
            );
        }
        // The same with the text before the id, as the TypeScript SDK orders a reply.
        let learnt = &replies(9)[1];
        let Some(shape) = Shape::learn(learnt.as_bytes(), 9, PAYLOAD, &filler) else {
            panic!("no shape");
        };
        let bad = replies(10)[1].replacen(&t10, &t11, 1);
        assert_eq!(
            shape.matches(bad.as_bytes(), PAYLOAD, &filler),
            None,
            "{bad}"
        );
    }

    #[test]
    fn a_reply_without_a_plain_integer_id_member_teaches_nothing() {
        let filler = filler();
        let t = text(9);
        for reply in [
            format!(r#"{{"jsonrpc":"2.0","id":"9","result":{{"content":[{{"text":"{t}"}}]}}}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":9.0,"result":{{"content":[{{"text":"{t}"}}]}}}}"#),
            format!(r#"{{"jsonrpc":"2.0","result":{{"content":[{{"text":"{t}"}}]}}}}"#),
        ] {
            assert_eq!(
                Shape::learn(reply.as_bytes(), 9, PAYLOAD, &filler),
                None,
                "{reply}"
            );
        }
    }

    /// What a learnt shape accepts, the full check accepts, with the same id: every byte of
    /// each reply changed to each of a few bytes, and each change checked both ways.
    #[test]
    fn whatever_a_shape_accepts_the_full_check_accepts() {
        let filler = filler();
        let mut matched = 0;
        for (learnt, later) in replies(9).into_iter().zip(replies(10)) {
            let Some(shape) = Shape::learn(learnt.as_bytes(), 9, PAYLOAD, &filler) else {
                panic!("no shape learnt from {learnt}");
            };
            let later = later.into_bytes();
            for at in 0..later.len() {
                for b in [b'0', b'1', b'9', b'x', b'"', b' ', b'}', b'\\', b'.'] {
                    let mut frame = later.clone();
                    frame[at] = b;
                    if let Some(id) = shape.matches(&frame, PAYLOAD, &filler) {
                        matched += 1;
                        assert_eq!(
                            check_reply(&frame, PAYLOAD).ok(),
                            Some(Received::Reply(id)),
                            "{}",
                            String::from_utf8_lossy(&frame)
                        );
                    }
                }
            }
        }
        // The unchanged bytes (a byte changed to itself) at least.
        assert!(matched > 0);
    }
}
