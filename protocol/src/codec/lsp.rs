//! `Content-Length` framing, as in the LSP base protocol: a header block of `Name: value`
//! lines ended by an empty line, then exactly `Content-Length` bytes of UTF-8 JSON.
//!
//! Header names are case-insensitive; `Content-Type` and unknown headers are tolerated; a bare
//! `\n` line ending is accepted. A declared length over the limit is never allocated: the body
//! is reported once and skipped as it streams in. A header block that cannot be read is
//! reported, then input is skipped to the next `Content-Length` so one bad frame does not end
//! the connection.
//!
//! Header names must be HTTP tokens (RFC 9110 §5.1, `tchar`), so stray bytes that run into the
//! next header (an undeclared rest of a body, garbage, an NDJSON line) are not mistaken for an
//! unknown header: they are reported once, and decoding restarts at the `Content-Length` they
//! ran into, so the frame behind them is not lost.

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
                    if let Some((len, end)) = plain_header(src) {
                        if len <= max && end <= max_header {
                            src.advance(end);
                            *self = HeaderDecoder::Body(len);
                            continue;
                        }
                    }
                    // Whitespace between frames (a stray "\r\n" after a body) is not a header.
                    let blank = src.iter().take_while(|b| b.is_ascii_whitespace()).count();
                    src.advance(blank);
                    if src.is_empty() {
                        return None;
                    }
                    if strict {
                        if let Some(item) = unknown_first_line(src, max_header) {
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
                    if let Err(BadHeader::NotHeaders(_)) = parsed {
                        // Bytes that are not headers, possibly run into a real header: restart
                        // at the first `Content-Length` after the block's first byte.
                        if let Some(i) = find_ignore_case(&src[1..end], NEEDLE) {
                            return Some(Err(stray_bytes(src, i + 1)));
                        }
                    }
                    src.advance(end);
                    match parsed {
                        Err(BadHeader::NotHeaders(reason) | BadHeader::BadLength(reason)) => {
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

/// Reports and consumes the first `n` bytes of `src`: stray input before a `Content-Length`.
fn stray_bytes(src: &mut BytesMut, n: usize) -> FrameError {
    let text = format!(
        "{n} stray bytes before a Content-Length header: \"{}\"",
        snippet(&src[..n])
    );
    src.advance(n);
    FrameError::NotAMessage(text)
}

/// Strict mode: a first line that is not a `Content-Length`/`Content-Type` header is reported
/// and consumed alone, so the frame after it still decodes. If a `Content-Length` starts
/// inside the line (stray bytes glued to it), only the bytes before it are consumed.
///
/// Only the first `max_header` bytes are searched for the line's end, as for a header block,
/// so a longer line is a header error however the input is split into reads.
fn unknown_first_line(src: &mut BytesMut, max_header: usize) -> Option<RawFrame> {
    let nl = memchr::memchr(b'\n', &src[..src.len().min(max_header)])?;
    let line = src[..nl].strip_suffix(b"\r").unwrap_or(&src[..nl]);
    let name = line
        .iter()
        .position(|b| *b == b':')
        .map(|colon| line[..colon].trim_ascii())?;
    if name.eq_ignore_ascii_case(b"content-length") || name.eq_ignore_ascii_case(b"content-type") {
        return None;
    }
    if let Some(i) = line
        .get(1..)
        .and_then(|rest| find_ignore_case(rest, NEEDLE))
    {
        return Some(Err(stray_bytes(src, i + 1)));
    }
    let text = format!("a line that is not a frame header: \"{}\"", snippet(line));
    src.advance(nl + 1);
    Some(Err(FrameError::NotAMessage(text)))
}

/// The header block at the start of `src`, once its empty line has arrived: where the body
/// starts, and the `Content-Length` the block gives (`None` if it gives no usable one), read as
/// the decoder reads it. For peers that read this framing themselves (the bench's load driver
/// and floor), so no second header parser exists.
pub fn header_block(src: &[u8]) -> Option<(usize, Option<usize>)> {
    if let Some((length, size)) = plain_header(src) {
        return Some((size, Some(length)));
    }
    let end = header_end(src)?;
    let length = content_length(&src[..end]).ok();
    Some((end, length.and_then(|n| usize::try_from(n).ok())))
}

/// The header block every client writes, `Content-Length: N\r\n\r\n`, read without the
/// general parser below (a quarter of a 64 B echo's decoding): its length and size. `None`
/// for anything else, which that parser reads, with the same result for this form.
pub(crate) fn plain_header(src: &[u8]) -> Option<(usize, usize)> {
    const NAME: &[u8] = b"Content-Length: ";
    let digits = src.strip_prefix(NAME)?;
    let count = digits.iter().take_while(|b| b.is_ascii_digit()).count();
    // Up to 19 digits cannot overflow a u64; a longer count is the general parser's to refuse.
    if count == 0 || count > 19 || digits.get(count..count + 4)? != b"\r\n\r\n" {
        return None;
    }
    let len = digits[..count]
        .iter()
        .fold(0u64, |n, d| n * 10 + u64::from(d - b'0'));
    Some((usize::try_from(len).ok()?, NAME.len() + count + 4))
}

/// The index just past the empty line that ends a header block, if there is one.
fn header_end(buf: &[u8]) -> Option<usize> {
    memchr::memchr_iter(b'\n', buf).find_map(|i| match &buf[i + 1..] {
        [b'\n', ..] => Some(i + 2),
        [b'\r', b'\n', ..] => Some(i + 3),
        _ => None,
    })
}

/// Why a header block could not be read. Each holds the text for the error.
#[derive(Debug, PartialEq)]
enum BadHeader {
    /// The block holds bytes that are not headers (a line without a colon, a name that is not
    /// a token) or no `Content-Length` at all: perhaps stray input run into the next header.
    NotHeaders(String),
    /// A `Content-Length` header is there but unusable (a bad value, out of range, repeated).
    BadLength(String),
}

/// Reads `Content-Length` from a header block; says what is wrong otherwise.
fn content_length(block: &[u8]) -> Result<u64, BadHeader> {
    let mut length = None;
    for line in block.split(|b| *b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            continue;
        }
        let Some(colon) = memchr::memchr(b':', line) else {
            return Err(BadHeader::NotHeaders(format!(
                "header line \"{}\" is not \"Name: value\"",
                snippet(line)
            )));
        };
        let name = line[..colon].trim_ascii();
        // `Content-Length` is a token: the every-frame case skips the byte-class check.
        let is_length = name.eq_ignore_ascii_case(b"content-length");
        if !is_length && !is_token(name) {
            return Err(BadHeader::NotHeaders(format!(
                "header line \"{}\" is not \"Name: value\" (the name is not an RFC 9110 token)",
                snippet(line)
            )));
        }
        let value = line[colon + 1..].trim_ascii();
        if !is_length {
            continue; // Content-Type (any charset) and unknown headers are tolerated.
        }
        if length.is_some() {
            return Err(BadHeader::BadLength(
                "Content-Length appears more than once".to_owned(),
            ));
        }
        if value.is_empty() || !value.iter().all(u8::is_ascii_digit) {
            return Err(BadHeader::BadLength(format!(
                "Content-Length must be a decimal byte count, got \"{}\"",
                snippet(value)
            )));
        }
        let n = value
            .iter()
            .try_fold(0u64, |n, d| {
                n.checked_mul(10)?.checked_add(u64::from(d - b'0'))
            })
            .ok_or_else(|| {
                BadHeader::BadLength(format!("Content-Length {} is out of range", snippet(value)))
            })?;
        length = Some(n);
    }
    length.ok_or_else(|| BadHeader::NotHeaders("missing Content-Length header".to_owned()))
}

/// An HTTP field name: one or more `tchar` (RFC 9110 §5.1, §5.6.2).
fn is_token(name: &[u8]) -> bool {
    !name.is_empty()
        && name.iter().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'!' | b'#'
                        | b'$'
                        | b'%'
                        | b'&'
                        | b'\''
                        | b'*'
                        | b'+'
                        | b'-'
                        | b'.'
                        | b'^'
                        | b'_'
                        | b'`'
                        | b'|'
                        | b'~'
                )
        })
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

    fn reason(r: Result<u64, BadHeader>) -> String {
        match r {
            Err(BadHeader::NotHeaders(t) | BadHeader::BadLength(t)) => t,
            Ok(n) => panic!("expected an error, got {n}"),
        }
    }

    #[test]
    fn header_parsing() {
        assert_eq!(content_length(b"Content-Length: 12\r\n\r\n"), Ok(12));
        assert_eq!(content_length(b"content-length:7\n\n"), Ok(7));
        assert_eq!(content_length(b"Content-Length: 007\r\n\r\n"), Ok(7));
        assert_eq!(
            content_length(b"Content-Length: 18446744073709551615\r\n\r\n"),
            Ok(u64::MAX)
        );
        assert_eq!(
            content_length(b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nCONTENT-LENGTH: 3\r\n\r\n"),
            Ok(3)
        );
        assert!(
            reason(content_length(b"Content-Length: -1\r\n\r\n")).contains("decimal byte count")
        );
        assert!(content_length(b"Content-Length: abc\r\n\r\n").is_err());
        assert!(reason(content_length(
            b"Content-Length: 18446744073709551616\r\n\r\n"
        ))
        .contains("out of range"));
        assert!(reason(content_length(
            b"Content-Length: 1\r\nContent-Length: 1\r\n\r\n"
        ))
        .contains("more than once"));
        assert_eq!(
            content_length(b"X-Other: 1\r\n\r\n"),
            Err(BadHeader::NotHeaders(
                "missing Content-Length header".to_owned()
            ))
        );
        assert!(reason(content_length(b"garbage\r\n\r\n")).contains("is not \"Name: value\""));
    }

    #[test]
    fn bad_values_and_stray_bytes_are_told_apart() {
        // A Content-Length that is there but unusable: the block is resynced past, as before.
        for block in [
            &b"Content-Length: -1\r\n\r\n"[..],
            b"Content-Length: 99999999999999999999\r\n\r\n",
            b"Content-Length: 1\r\ncontent-length: 1\r\n\r\n",
        ] {
            assert!(
                matches!(content_length(block), Err(BadHeader::BadLength(_))),
                "{}",
                block.escape_ascii()
            );
        }
        // Bytes that are not headers.
        for block in [
            &b"garbage\r\n\r\n"[..],
            b"xyzContent-Length: 40\r\n\r\n", // a token: an unknown header, then no length
            b"{\"jsonrpc\":\"2.0\"}\nContent-Length: 2\r\n\r\n",
            b"d\":\"ping\"}Content-Length: 44\r\n\r\n",
            b"\0\0\0Content-Length: 1\r\n\r\n",
            b": no name\r\nContent-Length: 1\r\n\r\n",
            b"X Y: 1\r\nContent-Length: 1\r\n\r\n",
        ] {
            assert!(
                matches!(content_length(block), Err(BadHeader::NotHeaders(_))),
                "{}",
                block.escape_ascii()
            );
        }
        let text = reason(content_length(b"{\"jsonrpc\":\"2.0\"}\n\n"));
        assert!(text.contains("not an RFC 9110 token"), "{text}");
    }

    #[test]
    fn header_names_are_tokens() {
        for name in [&b"Content-Length"[..], b"X-Trace", b"a!#$%&'*+-.^_`|~9"] {
            assert!(is_token(name), "{}", name.escape_ascii());
        }
        for name in [
            &b""[..],
            b"{\"jsonrpc\"",
            b"a b",
            b"a\0",
            b"a\"",
            b"(x)",
            b"caf\xc3\xa9",
        ] {
            assert!(!is_token(name), "{}", name.escape_ascii());
        }
    }

    /// Decodes everything in `input` (lenient unless `strict`), as items.
    fn decode_all(input: &[u8], strict: bool) -> Vec<RawFrame> {
        decode_with(input, strict, 1 << 20, 8192)
    }

    fn decode_with(input: &[u8], strict: bool, max: usize, max_header: usize) -> Vec<RawFrame> {
        let mut decoder = HeaderDecoder::default();
        let mut src = BytesMut::from(input);
        let mut out = Vec::new();
        while let Some(item) = decoder.decode(&mut src, max, max_header, strict) {
            out.push(item);
        }
        out.extend(decoder.decode_eof(&mut src));
        out
    }

    #[test]
    fn header_block_reads_what_the_encoder_writes_and_any_other_block() {
        use crate::codec::put_plain_header;
        for body in [0, 1, 9, 10, 99, 154, 16_531, 999_999_999_999_999] {
            let mut frame = Vec::new();
            put_plain_header(&mut frame, body);
            let start = frame.len();
            frame.extend_from_slice(b"{}");
            assert_eq!(header_block(&frame), Some((start, Some(body))), "{body}");
            // Until the empty line has arrived there is no block yet.
            for cut in 0..start {
                assert_eq!(header_block(&frame[..cut]), None, "{body} cut at {cut}");
            }
        }
        let cases: [(&[u8], Option<usize>); 8] = [
            (b"content-length:12\r\n\r\n", Some(12)),
            (b"Content-Length:  12 \r\n\r\n", Some(12)),
            (
                b"Content-Type: application/json\r\nContent-Length: 3\r\n\r\n",
                Some(3),
            ),
            (b"Content-Length: 00000000000000000012\r\n\r\n", Some(12)),
            (b"Content-Length: 99999999999999999999\r\n\r\n", None),
            (b"Content-Length: -1\r\n\r\n", None),
            (b"Content-Type: x\r\n\r\n", None),
            (b"Content-Length: 2\r\nContent-Length: 2\r\n\r\n", None),
        ];
        for (data, length) in cases {
            let shown = String::from_utf8_lossy(data);
            assert_eq!(header_block(data), Some((data.len(), length)), "{shown}");
        }
    }

    #[test]
    fn the_plain_header_is_read_as_the_general_parser_reads_it() {
        // A blank line first makes the decoder skip it and parse the block the general way.
        let general = |input: &[u8], strict, max, max_header| {
            let mut blank = b"\r\n".to_vec();
            blank.extend_from_slice(input);
            decode_with(&blank, strict, max, max_header)
        };
        let cases: [(&[u8], usize, usize); 13] = [
            (b"Content-Length: 2\r\n\r\n{}", 1 << 20, 8192),
            (b"Content-Length: 0\r\n\r\n", 1 << 20, 8192),
            (b"Content-Length: 007\r\n\r\n1234567", 1 << 20, 8192),
            (b"Content-Length: 5\r\n\r\n12345", 5, 8192),
            (b"Content-Length: 5\r\n\r\n12345", 4, 8192),
            (b"Content-Length: 2\r\n\r\n{}", 1 << 20, 21),
            (b"Content-Length: 2\r\n\r\n{}", 1 << 20, 20),
            (
                b"Content-Length: 1234567890123456789\r\n\r\n",
                1 << 20,
                8192,
            ),
            (
                b"Content-Length: 12345678901234567890\r\n\r\n",
                1 << 20,
                8192,
            ),
            (b"Content-Length: 3\r\n\r\n{}", 1 << 20, 8192),
            (b"Content-Length: 2\r\n\r", 1 << 20, 8192),
            (b"Content-Length: 2 \r\n\r\n{}", 1 << 20, 8192),
            (
                b"Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}",
                1 << 20,
                8192,
            ),
        ];
        for (input, max, max_header) in cases {
            for strict in [false, true] {
                let fast = decode_with(input, strict, max, max_header);
                assert_eq!(
                    fast,
                    general(input, strict, max, max_header),
                    "{}",
                    input.escape_ascii()
                );
            }
        }
        // The limits hold on the plain header too: its 21 bytes, and the body's size.
        let header_error = decode_with(b"Content-Length: 2\r\n\r\n{}", false, 1 << 20, 20);
        assert!(
            matches!(&header_error[..], [Err(FrameError::Header(_)), ..]),
            "{header_error:?}"
        );
        let too_large = decode_with(b"Content-Length: 5\r\n\r\n12345", false, 4, 8192);
        assert!(
            matches!(
                &too_large[..],
                [Err(FrameError::TooLarge {
                    declared: Some(5),
                    max: 4
                })]
            ),
            "{too_large:?}"
        );
    }

    #[test]
    fn stray_bytes_are_reported_once_and_the_next_frame_decodes() {
        let frame = b"Content-Length: 2\r\n\r\n{}";
        for (stray, shown) in [
            (
                &b"xyz"[..],
                "3 stray bytes before a Content-Length header: \"xyz\"",
            ),
            (
                b"\0\0\0",
                "3 stray bytes before a Content-Length header: \"\\x00\\x00\\x00\"",
            ),
            (
                b"d\":\"ping\"}",
                "10 stray bytes before a Content-Length header: \"d\\\":\\\"ping\\\"}\"",
            ),
            (
                b"{\"a\":1}\r\n",
                "9 stray bytes before a Content-Length header: \"{\\\"a\\\":1}\\r\\n\"",
            ),
            (
                b"garbage\nmore\n",
                "13 stray bytes before a Content-Length header: \"garbage\\nmore\\n\"",
            ),
        ] {
            let input = [stray, frame].concat();
            assert_eq!(
                decode_all(&input, false),
                vec![
                    Err(FrameError::NotAMessage(shown.to_owned())),
                    Ok(bytes::Bytes::from_static(b"{}"))
                ],
                "{}",
                stray.escape_ascii()
            );
            // Strict mode may word it differently (a whole line that is not a header is
            // reported as such), but it too reports once and keeps the frame.
            let items = decode_all(&input, true);
            assert_eq!(
                items.len(),
                2,
                "{} (strict): {items:?}",
                stray.escape_ascii()
            );
            assert!(matches!(items[0], Err(FrameError::NotAMessage(_))));
            assert_eq!(items[1], Ok(bytes::Bytes::from_static(b"{}")));
        }
    }

    #[test]
    fn blocks_without_a_later_content_length_resync_as_before() {
        let next = b"Content-Length: 2\r\n\r\n{}";
        for bad in [
            &b"X-Other: 1\r\n\r\n"[..],
            b"Content-Length: 2\r\ngarbage\r\n\r\n{}",
            b"{\"a\":1}\r\n\r\n",
        ] {
            let input = [bad, next].concat();
            let items = decode_all(&input, false);
            assert_eq!(items.len(), 2, "{}", bad.escape_ascii());
            assert!(
                matches!(items[0], Err(FrameError::Header(_))),
                "{}",
                bad.escape_ascii()
            );
            assert_eq!(items[1], Ok(bytes::Bytes::from_static(b"{}")));
        }
        // A bad value is not stray bytes: the block (and a Content-Length inside it) is skipped.
        let input = b"Content-Length: x\r\nContent-Length: 2\r\n\r\n{}";
        let items = decode_all(input, false);
        assert_eq!(items.len(), 1, "{items:?}");
        assert!(matches!(items[0], Err(FrameError::Header(_))));
    }

    #[test]
    fn strict_first_line_search_is_bounded_by_the_header_limit() {
        let mut input = b"X-Long: ".to_vec();
        input.extend(std::iter::repeat_n(b'a', 100));
        input.extend_from_slice(b"\r\nContent-Length: 2\r\n\r\n{}");
        let mut whole = HeaderDecoder::default();
        let mut src = BytesMut::from(&input[..]);
        let first = whole.decode(&mut src, 1 << 20, 64, true);
        assert!(
            matches!(first, Some(Err(FrameError::Header(_)))),
            "{first:?}"
        );
    }

    #[test]
    fn finds_needle_any_case() {
        assert_eq!(find_ignore_case(b"xxCONTENT-length", NEEDLE), Some(2));
        assert_eq!(find_ignore_case(b"content-lengt", NEEDLE), None);
    }
}
