//! Checking each reply without remembering what was sent: its id must be outstanding and its
//! `result.content[0].text` exactly that id's text. A reply that fits the shape of the last
//! fully checked one is checked by comparing bytes; any other is parsed.

use std::borrow::Cow;
use std::sync::LazyLock;

use memchr::memmem;
use serde::de::IgnoredAny;
use serde::Deserialize;

use super::error::{shown, verify, DriveError, ECHO_CONTRACT};
use super::shape::Shape;
use super::structured::StructuredText;
use super::text::{text_len, text_matches, Filler};

#[derive(Deserialize)]
struct Reply<'a> {
    #[serde(default)]
    id: Option<u64>,
    #[serde(default)]
    method: Option<IgnoredAny>,
    #[serde(default, borrow)]
    result: Option<CallResult<'a>>,
    #[serde(default)]
    error: Option<IgnoredAny>,
}

#[derive(Deserialize)]
struct CallResult<'a> {
    #[serde(default, borrow)]
    content: Vec<Content<'a>>,
    /// A tool error is never an echo, whatever its text (as the client driver checks it).
    #[serde(default, rename = "isError")]
    is_error: Option<bool>,
    #[serde(default, borrow, rename = "structuredContent")]
    structured: StructuredText<'a>,
}

impl CallResult<'_> {
    /// `structuredContent.text` when it is a string: a server that echoes into its structured
    /// output too must echo the same text there.
    fn structured_text(&self) -> Option<&str> {
        self.structured.0.as_deref()
    }
}

#[derive(Deserialize)]
struct Content<'a> {
    #[serde(default, borrow)]
    text: Option<Cow<'a, str>>,
}

/// What a frame from the server was.
#[derive(Debug, PartialEq, Eq)]
pub enum Received {
    /// A verified reply to this id.
    Reply(u64),
    /// A notification or a server-to-client request: ignored.
    Other,
}

/// Verifies replies; keeps buffers between frames, and the shape of the last reply that
/// passed the full check.
#[derive(Debug, Default)]
pub struct Verifier {
    filler: Filler,
    scratch: Vec<u8>,
    shape: Option<Shape>,
    /// Shapes learnt or tried, each after a reply that did not fit the last: past [`LEARNT`],
    /// the server's replies vary in more than id and text, and no more are tried.
    learnt: u32,
}

/// How many shapes the verifier learns or tries before it keeps to the full check.
const LEARNT: u32 = 32;

/// What replaces a verified text before the frame is parsed (`"\u0000@"`): a server cannot
/// produce it by echoing the bench's texts.
const SENTINEL: &[u8] = br#"\u0000@"#;
const SENTINEL_TEXT: &str = "\u{0}@";

impl Verifier {
    /// Whether `raw` (a JSON string's raw bytes) is id `id`'s text, compared with `memcmp`.
    fn is_text(&mut self, raw: &[u8], id: u64, payload: usize) -> bool {
        self.filler.grow(payload);
        self.filler.is_text(raw, id, payload)
    }

    /// Verifies one frame as the reply to a `tools/call` echo of `payload` bytes.
    ///
    /// The fast path finds the echoed text with `memmem`, compares it with what was sent, and
    /// parses the frame with every copy of that text cut out, so a 16 KiB echo costs a few
    /// `memcmp`s and a parse of a few hundred bytes; it then requires the reply's id to be the
    /// one the text names and `result.content[0].text` to be exactly the cut-out text. Anything
    /// else takes the slow path, a full parse, which also words the error.
    ///
    /// Before either, a reply of the shape of the last one that passed ([`Shape`]) is verified
    /// by comparing bytes.
    pub fn check(&mut self, frame: &[u8], payload: usize) -> Result<Received, DriveError> {
        self.filler.grow(payload);
        if let Some(shape) = &self.shape {
            if let Some(id) = shape.matches(frame, payload, &self.filler) {
                return Ok(Received::Reply(id));
            }
        }
        // Small frames parse faster than they are cut.
        if frame.len() > 2048 {
            if let Some(id) = self.fast(frame, payload) {
                self.learn(frame, id, payload);
                return Ok(Received::Reply(id));
            }
        }
        let checked = check_reply(frame, payload)?;
        if let Received::Reply(id) = checked {
            self.learn(frame, id, payload);
        }
        Ok(checked)
    }

    /// Keeps the shape of `frame`, which passed the full check as id `id`'s reply.
    fn learn(&mut self, frame: &[u8], id: u64, payload: usize) {
        if self.learnt < LEARNT {
            self.learnt += 1;
            self.shape = Shape::learn(frame, id, payload, &self.filler);
        }
    }

    fn fast(&mut self, frame: &[u8], payload: usize) -> Option<u64> {
        let key = &*TEXT_KEY;
        let at = key.find(frame)? + key.needle().len();
        // The id the text names gives its whole length: no scan for the closing quote.
        let digits_end = frame.len().min(at + 21);
        let dot = at + memchr::memchr(b'.', &frame[at..digits_end])?;
        let id: u64 = std::str::from_utf8(&frame[at..dot]).ok()?.parse().ok()?;
        let end = at + text_len(id, payload);
        if frame.get(end) != Some(&b'"') || !self.is_text(&frame[at..end], id, payload) {
            return None;
        }
        let raw = &frame[at..end];
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        // Cut out every copy of the text; the search resumes after each copy, not inside it.
        let (mut from, mut search) = (0, 0);
        while let Some(hit) = key.find(&frame[search..]).map(|h| h + search) {
            let start = hit + key.needle().len();
            let stop = start + raw.len();
            if frame.get(start..stop) == Some(raw) && frame.get(stop) == Some(&b'"') {
                scratch.extend_from_slice(&frame[from..start]);
                scratch.extend_from_slice(SENTINEL);
                from = stop;
                search = stop;
            } else {
                search = hit + 1;
            }
        }
        scratch.extend_from_slice(&frame[from..]);
        let ok = match serde_json::from_slice::<Reply<'_>>(&scratch) {
            Ok(reply) => {
                reply.method.is_none()
                    && reply.error.is_none()
                    && reply.id == Some(id)
                    && reply.result.as_ref().is_some_and(|r| {
                        r.is_error != Some(true)
                            && r.content.first().and_then(|c| c.text.as_deref())
                                == Some(SENTINEL_TEXT)
                            && r.structured_text().is_none_or(|t| t == SENTINEL_TEXT)
                    })
            }
            Err(_) => false,
        };
        self.scratch = scratch;
        ok.then_some(id)
    }
}

/// Where a text member's string begins, searched with one prebuilt finder.
static TEXT_KEY: LazyLock<memmem::Finder<'static>> =
    LazyLock::new(|| memmem::Finder::new(b"\"text\":\""));

/// The id whose text `text` is, if it is one of the bench's texts.
fn text_names(text: &[u8], payload: usize) -> Option<u64> {
    let dot = memchr::memchr(b'.', text)?;
    let id: u64 = std::str::from_utf8(&text[..dot]).ok()?.parse().ok()?;
    text_matches(text, id, payload).then_some(id)
}

/// Verifies one frame as the reply to a `tools/call` echo of `payload` bytes (a full parse).
pub fn check_reply(frame: &[u8], payload: usize) -> Result<Received, DriveError> {
    let reply: Reply<'_> = match serde_json::from_slice(frame) {
        Ok(r) => r,
        Err(e) => {
            return Err(match serde_json::from_slice::<serde_json::Value>(frame) {
                Ok(v) if v.get("id").is_some_and(|id| !id.is_u64() && !id.is_null()) => {
                    verify(format!(
                        "a reply with id {} (the bench sends integer ids): {}",
                        v["id"],
                        shown(frame)
                    ))
                }
                Ok(_) => verify(format!(
                    "a reply that is not a tools/call result ({e}): {}",
                    shown(frame)
                )),
                Err(_) => verify(format!("a frame that is not JSON ({e}): {}", shown(frame))),
            });
        }
    };
    if reply.method.is_some() {
        return Ok(Received::Other);
    }
    let Some(id) = reply.id else {
        return Err(verify(format!("a reply without an id: {}", shown(frame))));
    };
    if reply.error.is_some() {
        return Err(verify(format!(
            "request {id} got an error reply: {}; {ECHO_CONTRACT}",
            shown(frame)
        )));
    }
    // A tool error in place of the echo: most often the server's `echo` is not the bench's.
    if reply.result.as_ref().and_then(|r| r.is_error) == Some(true) {
        return Err(verify(format!(
            "the reply to id {id} is a tool error (isError: true), not the echo: {}; \
             {ECHO_CONTRACT}",
            shown(frame)
        )));
    }
    let text = reply
        .result
        .as_ref()
        .and_then(|r| r.content.first())
        .and_then(|c| c.text.as_deref());
    if let Some(t) = reply.result.as_ref().and_then(|r| r.structured_text()) {
        if !text_matches(t.as_bytes(), id, payload) {
            return Err(verify(format!(
                "echo mismatch: the reply to id {id} carries a structuredContent.text of {} \
                 bytes that is not the text sent with id {id} ({} bytes): {}",
                t.len(),
                text_len(id, payload),
                shown(frame)
            )));
        }
    }
    match text {
        Some(t) if text_matches(t.as_bytes(), id, payload) => Ok(Received::Reply(id)),
        Some(t) => Err(verify(match text_names(t.as_bytes(), payload) {
            Some(other) => format!(
                "id mismatch: the reply with id {id} carries the text sent with id {other}: {}",
                shown(frame)
            ),
            None => format!(
                "echo mismatch: the reply to id {id} carries a text of {} bytes that is not the \
                 text sent with id {id} ({} bytes): {}",
                t.len(),
                text_len(id, payload),
                shown(frame)
            ),
        })),
        None => Err(verify(format!(
            "the reply to id {id} has no result.content[0].text: {}; {ECHO_CONTRACT}",
            shown(frame)
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::digits;

    #[test]
    fn verifies_fast_and_slow() {
        let mut v = Verifier::default();
        let good = br#"{"jsonrpc":"2.0","id":12,"result":{"content":[{"type":"text","text":"12.xxx"}],"structuredContent":{"text":"12.xxx"}}}"#;
        assert_eq!(v.fast(good, 6), Some(12));
        assert_eq!(v.check(good, 6).ok(), Some(Received::Reply(12)));
        // The text elsewhere, content[0].text empty: not the fast path, and an error.
        let moved = br#"{"jsonrpc":"2.0","id":12,"result":{"structuredContent":{"text":"12.xxx"},"content":[{"type":"text","text":""}]}}"#;
        assert_eq!(v.fast(moved, 6), None);
        assert!(v.check(moved, 6).is_err());
        let wrong_id =
            br#"{"jsonrpc":"2.0","id":13,"result":{"content":[{"type":"text","text":"12.xxx"}]}}"#;
        let e = v
            .check(wrong_id, 6)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("id mismatch"), "{e}");
        let note = br#"{"jsonrpc":"2.0","method":"notifications/message","params":{}}"#;
        assert_eq!(v.check(note, 6).ok(), Some(Received::Other));
    }

    /// With a shape learnt, a reply that differs in more than id and text still gets the full
    /// check; replies that vary every time (a counter) stop the learning after [`LEARNT`].
    #[test]
    fn a_learnt_shape_never_lets_a_wrong_reply_through() {
        let mut v = Verifier::default();
        let reply = |id: u64, text: &str, n: u64| {
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"{text}"}}],"_meta":{{"n":{n}}}}}}}"#
            )
        };
        for id in 1..=100 {
            let text = format!("{id}.{}", "x".repeat(4 - digits(id)));
            assert_eq!(
                v.check(reply(id, &text, id).as_bytes(), 5).ok(),
                Some(Received::Reply(id)),
                "{id}"
            );
        }
        assert_eq!(v.learnt, LEARNT);
        // Past the limit a good reply still passes (the full check), and a wrong one fails.
        let last = reply(101, "101.x", 100);
        assert_eq!(v.check(last.as_bytes(), 5).ok(), Some(Received::Reply(101)));
        for (id, text) in [(102, "102.y"), (103, "102.x"), (104, "104.")] {
            let bad = reply(id, text, 100);
            assert!(v.check(bad.as_bytes(), 5).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_wrong_structured_text_fails_both_paths() {
        let mut v = Verifier::default();
        let text = format!("5.{}", "x".repeat(3000));
        let reply = |structured: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","id":5,"result":{{"content":[{{"type":"text","text":"{text}"}}],"structuredContent":{structured}}}}}"#
            )
        };
        let good = reply(&format!(r#"{{"text":"{text}"}}"#));
        assert_eq!(v.fast(good.as_bytes(), text.len()), Some(5));
        // One byte short in the structured copy: the fast path declines, the slow one says why.
        let short = reply(&format!(r#"{{"text":"{}"}}"#, &text[..text.len() - 1]));
        assert_eq!(v.fast(short.as_bytes(), text.len()), None);
        let e = v
            .check(short.as_bytes(), text.len())
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("structuredContent.text"), "{e}");
        // Structured output without a string `text` is the server's own schema: not checked.
        for other in [r#"{"echoed":1}"#, r#"{"text":3}"#, "null"] {
            let frame = reply(other);
            assert_eq!(v.fast(frame.as_bytes(), text.len()), Some(5), "{other}");
            assert_eq!(
                check_reply(frame.as_bytes(), text.len()).ok(),
                Some(Received::Reply(5)),
                "{other}"
            );
        }
    }

    #[test]
    fn fast_path_skips_decoys_and_cuts_every_copy() {
        let mut v = Verifier::default();
        let text = format!("7.{}", "x".repeat(3000));
        // A decoy `"text":"` key with another string before the echoed copies, and one after.
        let frame = format!(
            r#"{{"jsonrpc":"2.0","id":7,"result":{{"_meta":{{"text":"7.x"}},"content":[{{"type":"text","text":"{text}"}}],"structuredContent":{{"text":"{text}"}},"x":{{"text":"no"}}}}}}"#
        );
        assert_eq!(
            v.fast(frame.as_bytes(), text.len()),
            None,
            "the first text is a decoy"
        );
        assert_eq!(
            v.check(frame.as_bytes(), text.len()).ok(),
            Some(Received::Reply(7)),
            "the full parse still verifies content[0].text"
        );
        let frame = frame.replace(r#""_meta":{"text":"7.x"},"#, "");
        assert_eq!(v.fast(frame.as_bytes(), text.len()), Some(7));
        // One byte of the structured copy changed: not a copy, so it stays in the parsed rest,
        // where it is not the sentinel: both paths reject the reply.
        let changed = frame.replacen(
            &format!(r#"{{"text":"{text}"}}"#),
            &format!(r#"{{"text":"{}y"}}"#, &text[..text.len() - 1]),
            1,
        );
        assert_eq!(v.fast(changed.as_bytes(), text.len()), None);
        assert!(v.check(changed.as_bytes(), text.len()).is_err());
        // The echoed text one byte short: rejected by both paths.
        let short = frame.replace(&text, &text[..text.len() - 1]);
        assert_eq!(v.fast(short.as_bytes(), text.len()), None);
        assert!(v.check(short.as_bytes(), text.len()).is_err());
        // The text names another id.
        let other = frame.replace(r#""id":7"#, r#""id":8"#);
        assert_eq!(v.fast(other.as_bytes(), text.len()), None);
        assert!(v.check(other.as_bytes(), text.len()).is_err());
    }
}
