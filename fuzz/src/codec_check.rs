//! The codec invariants: `StdioCodec` fed bytes in arbitrary chunkings.
//!
//! One scenario is a codec configuration (framing mode, strict or lenient, small limits so
//! they are reachable) and a byte stream: either structured frames built from the input, whose
//! expected items are known, or the raw input. Invariants asserted:
//!
//! 1. Chunking independence: the decoded items (messages and per-frame errors, compared with
//!    `==`) are the same whole, split at one point, in random-sized chunks and byte by byte.
//! 2. One item per frame: newline-delimited input (fixed, or detected by `Auto`) yields exactly
//!    the items of a line-by-line reference model (one per non-blank line, an over-long line is
//!    one `TooLarge`); structured `Content-Length` streams yield exactly the item each frame was
//!    built to produce.
//! 3. Bounded memory: after each decode the buffer holds at most `max_message + max_header`
//!    bytes (plus the chunk just fed, before decoding), its capacity stays within a small
//!    multiple of that, and nothing is left in it after EOF.
//! 4. Decoding never fails (`Err` is only for I/O) and never loops.

use bytes::BytesMut;
use mcp_protocol::codec::DecodedFrame;
use mcp_protocol::{parse, FrameError, Framing, FramingMode, StdioCodec};
use tokio_util::codec::Decoder;

use crate::input::{chunk, Input, Rng};

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// What one frame must decode to.
#[derive(Debug, Clone, PartialEq)]
pub enum Expect {
    /// A frame with this body: the item is `parse(body)`.
    Body(Vec<u8>),
    TooLarge(Option<u64>),
    Header,
    Truncated,
    NotAMessage,
}

/// One codec configuration and one input stream.
#[derive(Debug, Clone)]
pub struct Scenario {
    pub mode: FramingMode,
    pub strict: bool,
    pub max_message: usize,
    pub max_header: usize,
    pub stream: Vec<u8>,
    /// For structured `Content-Length` streams: the items the frames must yield.
    pub lsp_expected: Option<Vec<Expect>>,
    pub chunk_seed: u64,
    pub chunk_max: usize,
    pub split_at: usize,
}

impl Scenario {
    /// Builds a scenario from fuzzer bytes.
    pub fn from_bytes(data: &[u8]) -> Scenario {
        let mut input = Input::new(data);
        let config = input.byte();
        let mode = [
            FramingMode::Ndjson,
            FramingMode::ContentLength,
            FramingMode::Auto,
        ][(config % 3) as usize];
        let strict = config & 0x04 != 0;
        let structured = config & 0x18 != 0;
        let limits = input.byte();
        let max_message = [16, 64, 256, 4096][(limits & 3) as usize];
        let max_header = [32, 64, 256, 8192][((limits >> 2) & 3) as usize];
        let chunk_seed = input.u64();
        let chunk_max = [1, 2, 3, 7, 16, 64, 1024, 4096][((limits >> 4) & 7) as usize];
        let split_at = input.u16() as usize;
        let mut scenario = Scenario {
            mode,
            strict,
            max_message,
            max_header,
            stream: Vec::new(),
            lsp_expected: None,
            chunk_seed,
            chunk_max,
            split_at,
        };
        if !structured {
            scenario.stream = input.rest().to_vec();
            return scenario;
        }
        let framing = match mode {
            FramingMode::Ndjson => Framing::Ndjson,
            FramingMode::ContentLength => Framing::ContentLength,
            FramingMode::Auto if input.bool() => Framing::ContentLength,
            FramingMode::Auto => Framing::Ndjson,
        };
        match framing {
            Framing::Ndjson => scenario.stream = ndjson_stream(&mut input, max_message),
            Framing::ContentLength => {
                let (stream, expected) = lsp_stream(&mut input, max_message, max_header, strict);
                scenario.stream = stream;
                scenario.lsp_expected = Some(expected);
            }
        }
        scenario
    }

    fn codec(&self) -> StdioCodec {
        let codec = StdioCodec::new(self.mode)
            .with_max_message_bytes(self.max_message)
            .with_max_header_bytes(self.max_header);
        if self.strict {
            codec.strict()
        } else {
            codec
        }
    }
}

/// Runs every check on the scenario built from `data`. Panics on a violated invariant.
pub fn run(data: &[u8]) {
    check(&Scenario::from_bytes(data));
}

/// Runs every check on one scenario.
pub fn check(s: &Scenario) {
    let stream = &s.stream[..];
    let whole = decode(s, &[stream]);

    // 1. Chunking independence. (This found a strict-mode bug, fixed in 3b8f217: a long
    // unknown first header line decoded differently whole and in pieces.)
    let at = s.split_at % (stream.len() + 1);
    let (a, b) = stream.split_at(at);
    assert_same(&whole, &decode(s, &[a, b]), &format!("split at {at}"), s);
    let mut rng = Rng::new(s.chunk_seed);
    let chunks = chunk(stream, &mut rng, s.chunk_max);
    assert_same(
        &whole,
        &decode(s, &chunks),
        &format!("chunks of at most {}", s.chunk_max),
        s,
    );
    // Byte by byte is quadratic in a header scan; keep it to small inputs.
    if stream.len() <= 2048 && s.chunk_max != 1 {
        let bytes: Vec<&[u8]> = stream.chunks(1).collect();
        assert_same(&whole, &decode(s, &bytes), "byte by byte", s);
    }

    // 2. One item per frame, against a reference.
    let expected = match s.mode {
        FramingMode::Ndjson => Some(model_ndjson(stream, s.max_message, s.strict)),
        FramingMode::ContentLength => s.lsp_expected.clone(),
        FramingMode::Auto => match detect_model(stream) {
            (Some(Framing::ContentLength), _) => s.lsp_expected.clone(),
            // Undetected at EOF: the rest is read as newline-delimited.
            (_, rest) => Some(model_ndjson(rest, s.max_message, s.strict)),
        },
    };
    if let Some(expected) = expected {
        assert_eq!(
            whole.len(),
            expected.len(),
            "item count differs from the frames in the input\nitems: {whole:#?}\nexpected: {expected:#?}\nscenario: {}",
            describe(s)
        );
        for (i, (item, want)) in whole.iter().zip(&expected).enumerate() {
            assert!(
                matches_expect(item, want, s.max_message),
                "item {i} is {item:?}, expected {want:?}\nscenario: {}",
                describe(s)
            );
        }
    }
}

fn matches_expect(item: &DecodedFrame, want: &Expect, max: usize) -> bool {
    match want {
        Expect::Body(body) => *item == parse(body),
        Expect::TooLarge(declared) => {
            *item
                == Err(FrameError::TooLarge {
                    declared: *declared,
                    max,
                })
        }
        Expect::Header => matches!(item, Err(FrameError::Header(_))),
        Expect::Truncated => matches!(item, Err(FrameError::Truncated(_))),
        Expect::NotAMessage => matches!(item, Err(FrameError::NotAMessage(_))),
    }
}

fn assert_same(whole: &[DecodedFrame], other: &[DecodedFrame], how: &str, s: &Scenario) {
    if whole != other {
        let first = whole
            .iter()
            .zip(other)
            .position(|(a, b)| a != b)
            .unwrap_or(whole.len().min(other.len()));
        panic!(
            "decoding depends on chunking ({how}): first difference at item {first}\nwhole: {:?}\n{how}: {:?}\nscenario: {}",
            whole.get(first),
            other.get(first),
            describe(s)
        );
    }
}

fn describe(s: &Scenario) -> String {
    format!(
        "mode {:?} strict {} max_message {} max_header {} stream ({} bytes) \"{}\"",
        s.mode,
        s.strict,
        s.max_message,
        s.max_header,
        s.stream.len(),
        s.stream[..s.stream.len().min(600)].escape_ascii()
    )
}

/// Feeds `chunks` to a fresh codec, then EOF; checks the buffer bounds after every step.
fn decode(s: &Scenario, chunks: &[&[u8]]) -> Vec<DecodedFrame> {
    let mut codec = s.codec();
    let bound = s.max_message + s.max_header;
    let total: usize = chunks.iter().map(|c| c.len()).sum();
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    // The caller's own allocations (a big chunk) stay in the buffer's capacity; the codec may
    // add at most one message (a `Content-Length` body it reserves for).
    let mut largest = 0;
    for c in chunks {
        largest = largest.max(c.len());
        buf.extend_from_slice(c);
        assert!(
            buf.len() <= bound + c.len(),
            "buffer holds {} bytes before decoding a chunk of {} (bound {bound} + chunk)",
            buf.len(),
            c.len()
        );
        loop {
            match codec.decode(&mut buf) {
                Ok(Some(item)) => out.push(item),
                Ok(None) => break,
                Err(e) => panic!("decode returned a fatal error on in-memory input: {e}"),
            }
            assert!(
                out.len() <= total + 1,
                "decoder loops: more items than bytes"
            );
        }
        assert!(
            buf.len() <= bound,
            "buffer holds {} bytes after decoding (max_message {} + max_header {})",
            buf.len(),
            s.max_message,
            s.max_header
        );
        assert!(
            buf.capacity() <= 4 * (bound + largest) + 16 * 1024,
            "buffer capacity grew to {} (bound {bound}, largest chunk {largest})",
            buf.capacity(),
        );
    }
    loop {
        match codec.decode_eof(&mut buf) {
            Ok(Some(item)) => out.push(item),
            Ok(None) => break,
            Err(e) => panic!("decode_eof returned a fatal error: {e}"),
        }
        assert!(out.len() <= total + 2, "decode_eof loops");
    }
    assert!(buf.is_empty(), "{} bytes left after EOF", buf.len());
    out
}

/// The newline-delimited reference: each `\n`-terminated line (and an unterminated last one)
/// is one frame. A line of `max + 2` bytes or more is one `TooLarge` without a size (the codec
/// stops looking for its end there); otherwise a trailing `\r` and a leading BOM are stripped,
/// a blank line is skipped (strict: reported), and the rest is a body or `TooLarge(len)`.
pub fn model_ndjson(mut rest: &[u8], max: usize, strict: bool) -> Vec<Expect> {
    let mut out = Vec::new();
    while !rest.is_empty() {
        let (line, next) = match rest.iter().position(|b| *b == b'\n') {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, &[][..]),
        };
        rest = next;
        if line.len() >= max + 2 {
            out.push(Expect::TooLarge(None));
            continue;
        }
        let mut line = line.strip_suffix(b"\r").unwrap_or(line);
        let bom = line.starts_with(BOM);
        if bom {
            line = &line[BOM.len()..];
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            if strict {
                out.push(Expect::NotAMessage);
            }
            continue;
        }
        if strict && bom {
            out.push(Expect::NotAMessage);
        }
        out.push(if line.len() > max {
            Expect::TooLarge(Some(line.len() as u64))
        } else {
            Expect::Body(line.to_vec())
        });
    }
    out
}

/// Auto detection on the whole input: skip BOMs and whitespace; `{`/`[` or anything that is
/// not a case-insensitive `content-` prefix is newline-delimited; a full prefix is headers.
/// Returns the framing (`None`: still undecided at EOF) and the input after the skipped bytes.
pub fn detect_model(mut s: &[u8]) -> (Option<Framing>, &[u8]) {
    loop {
        if s.starts_with(BOM) {
            s = &s[BOM.len()..];
            continue;
        }
        if !s.is_empty() && BOM.starts_with(s) {
            return (None, s);
        }
        let ws = s.iter().take_while(|b| b.is_ascii_whitespace()).count();
        s = &s[ws..];
        if ws == 0 {
            break;
        }
    }
    let Some(&first) = s.first() else {
        return (None, s);
    };
    if first == b'{' || first == b'[' {
        return (Some(Framing::Ndjson), s);
    }
    let n = s.len().min(8);
    if !s[..n].eq_ignore_ascii_case(&b"content-"[..n]) {
        return (Some(Framing::Ndjson), s);
    }
    if n == 8 {
        (Some(Framing::ContentLength), s)
    } else {
        (None, s)
    }
}

/// Message bodies: valid requests, notifications, responses and batches, and bad ones.
pub const BODIES: &[&str] = &[
    r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    r#"{"jsonrpc":"2.0","id":"你好","method":"echo","params":{"t":"🦀 你好"}}"#,
    r#"{"jsonrpc":"2.0","id":7,"result":{}}"#,
    r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#,
    r#"[{"jsonrpc":"2.0","id":1,"method":"a"},5,{"jsonrpc":"2.0","method":"n"}]"#,
    "[]",
    "{}",
    "5",
    r#""x""#,
    "{not json",
    r#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#,
    r#"{"jsonrpc":"1.0","id":9,"method":"x"}"#,
    r#"{"jsonrpc":"2.0","id":18446744073709551615,"method":"x"}"#,
    r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"x"}"#,
    r#"{"jsonrpc":"2.0","method":"\ud800"}"#,
    "{\"jsonrpc\":\"2.0\",\"method\":\"\u{0}\"}",
];

/// A message body from the dictionary, from generated text, or raw bytes.
fn body(input: &mut Input, max: usize) -> Vec<u8> {
    match input.byte() % 8 {
        0..=3 => input.pick(BODIES).as_bytes().to_vec(),
        4 => {
            let text = input.text(24);
            serde_json::json!({"jsonrpc": "2.0", "id": input.byte(), "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": text}}})
            .to_string()
            .into_bytes()
        }
        5 => {
            // Near the size limit: a string padded to max-2..=max+2 bytes of body.
            let target = (max + input.below(5)).saturating_sub(2).max(2);
            let mut b = vec![b'"'];
            b.resize(target - 1, b'a');
            b.push(b'"');
            b
        }
        _ => input.bytes(64).to_vec(),
    }
}

/// One of `items` (a helper: inference cannot see through `extend_from_slice(input.pick(..))`).
fn pick_bytes<'b>(input: &mut Input, items: &'b [&'b [u8]]) -> &'b [u8] {
    let item: &&[u8] = input.pick(items);
    item
}

const LINE_ENDINGS: &[&[u8]] = &[b"\n", b"\r\n"];
const BLANK_LINES: &[&[u8]] = &[b"\n", b"\r\n", b"  \t\n", b"\xEF\xBB\xBF\n"];
const BETWEEN_FRAMES: &[&[u8]] = &[b"\r\n", b" ", b"\n\n\t"];

/// A newline-delimited stream: messages, blank lines, BOMs, lines around the limit, raw bytes.
fn ndjson_stream(input: &mut Input, max: usize) -> Vec<u8> {
    let mut out: Vec<u8> = Vec::new();
    for _ in 0..64 {
        if input.is_empty() {
            break;
        }
        match input.byte() % 8 {
            0..=2 => {
                let b = body(input, max);
                out.extend(b.iter().filter(|b| **b != b'\n'));
                out.extend_from_slice(pick_bytes(input, LINE_ENDINGS));
            }
            3 => out.extend_from_slice(pick_bytes(input, BLANK_LINES)),
            4 => {
                out.extend_from_slice(BOM);
                out.extend_from_slice(input.pick(BODIES).as_bytes());
                out.push(b'\n');
            }
            5 => {
                // A line of max-2..=max+4 bytes, with or without "\r": the window edges.
                let len = (max + input.below(7)).saturating_sub(2);
                out.extend(std::iter::repeat_n(b'x', len));
                if input.bool() {
                    out.push(b'\r');
                }
                out.push(b'\n');
            }
            6 => {
                // A long line: several times the limit.
                let len = max * (1 + input.below(4)) + input.below(8);
                out.extend(std::iter::repeat_n(b'y', len));
                out.push(b'\n');
            }
            _ => out.extend_from_slice(input.bytes(32)),
        }
    }
    out
}

/// Header blocks that cannot be read: each is one `Header` error, then input is skipped to the
/// next `Content-Length`. The bool says whether the block itself contains `content-length`.
const GARBAGE: &[(&[u8], bool)] = &[
    (b"Garbage\r\n\r\n", false),
    (b"Content-Length: abc\r\n\r\n{\"x\":1}", true),
    (b"Content-Length: -1\r\n\r\n", true),
    (b"Content-Length: 18446744073709551616\r\n\r\n", true),
    (b"Content-Type: text/plain\r\n\r\n{}", false),
    (b"Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}", true),
    (b"Content-Length 5\r\n\r\n", true),
    (b"Content-Length: \r\n\r\n", true),
    (b"Content-Length: 1 2\n\n", true),
];

/// A `Content-Length` stream and the item each frame must yield.
fn lsp_stream(
    input: &mut Input,
    max: usize,
    max_header: usize,
    strict: bool,
) -> (Vec<u8>, Vec<Expect>) {
    let mut out: Vec<u8> = Vec::new();
    let mut expected = Vec::new();
    // After an unreadable header the decoder skips to the next "content-length".
    let mut resync = false;
    for _ in 0..48 {
        if input.is_empty() {
            break;
        }
        match input.byte() % 10 {
            0..=3 => {
                // A good frame, in one of several header styles.
                let b = body(input, max);
                let n = b.len();
                let style = input.below(6);
                let header = match style {
                    0 => format!("Content-Length: {n}\r\n\r\n"),
                    1 => format!("content-length:{n}\n\n"),
                    2 => format!("Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: {n}\r\n\r\n"),
                    3 => format!("Content-Length: {n}\r\nContent-Type: application/json\r\n\r\n"),
                    4 => format!("X-Foo: bar\r\nCONTENT-LENGTH:   {n}  \r\n\r\n"),
                    _ => format!("Content-Length: 000{n}\r\n\r\n"),
                };
                // A block over the header limit is a different case (below); use the plain one.
                let header = if header.len() > max_header {
                    format!("Content-Length: {n}\r\n\r\n")
                } else {
                    header
                };
                if strict && header.starts_with("X-Foo") && !resync {
                    expected.push(Expect::NotAMessage);
                }
                out.extend_from_slice(header.as_bytes());
                out.extend_from_slice(&b);
                expected.push(if n > max {
                    Expect::TooLarge(Some(n as u64))
                } else {
                    Expect::Body(b)
                });
                resync = false;
            }
            4 => out.extend_from_slice(pick_bytes(input, BETWEEN_FRAMES)),
            5 | 6 => {
                let (g, has_needle) = *input.pick(GARBAGE);
                out.extend_from_slice(g);
                if !resync || has_needle {
                    expected.push(Expect::Header);
                }
                resync = true;
            }
            7 => {
                // A declared length over the limit, with its body: reported, then skipped.
                let n = max + 1 + input.below(2 * max);
                out.extend_from_slice(format!("Content-Length: {n}\r\n\r\n").as_bytes());
                out.extend(std::iter::repeat_n(b'z', n));
                expected.push(Expect::TooLarge(Some(n as u64)));
                resync = false;
            }
            8 => {
                // A header block with no end within the limit (no colon, so strict mode reads
                // it as a header too).
                out.extend_from_slice(b"xpad");
                out.extend(std::iter::repeat_n(b'a', max_header));
                out.extend_from_slice(b"\r\n\r\n");
                if !resync {
                    expected.push(Expect::Header);
                }
                resync = true;
            }
            _ => {
                // Endings that must be last: the input stops inside a frame.
                match input.below(4) {
                    0 => {
                        let b = body(input, max);
                        let short = input.below(b.len().max(1));
                        let n = b.len().max(1);
                        if n > max {
                            continue;
                        }
                        out.extend_from_slice(format!("Content-Length: {n}\r\n\r\n").as_bytes());
                        out.extend_from_slice(&b[..short.min(b.len())]);
                        expected.push(Expect::Truncated);
                    }
                    1 => {
                        out.extend_from_slice(b"Content-Len");
                        if !resync {
                            expected.push(Expect::Truncated);
                        }
                    }
                    2 => {
                        out.extend_from_slice(b"Content-Length: 5\r\n");
                        expected.push(Expect::Truncated);
                    }
                    _ => {
                        // Exactly 32 bytes of header: fits the smallest header limit.
                        out.extend_from_slice(b"Content-Length:999999999999999\n\n{\"a\"");
                        expected.push(Expect::TooLarge(Some(999_999_999_999_999)));
                    }
                }
                break;
            }
        }
    }
    (out, expected)
}
