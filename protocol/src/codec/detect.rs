//! Framing detection for [`FramingMode::Auto`](super::FramingMode::Auto).

use bytes::{Buf, BytesMut};

use super::Framing;

const BOM: &[u8] = b"\xEF\xBB\xBF";
/// LSP headers are `Content-Length` and `Content-Type`, in either order.
const HEADER_PREFIX: &[u8] = b"content-";

/// Decides the framing from the first meaningful bytes, or asks for more (`None`).
///
/// Leading whitespace and a UTF-8 byte-order mark are consumed, so waiting never grows the
/// buffer. Anything that does not start a header is newline-delimited JSON, the spec's
/// framing; a garbage first line then becomes a parse error for that line, not a dead stream.
pub(super) fn detect(src: &mut BytesMut) -> Option<Framing> {
    loop {
        if src.starts_with(BOM) {
            src.advance(BOM.len());
            continue;
        }
        if !src.is_empty() && BOM.starts_with(src) {
            return None;
        }
        let blank = src.iter().take_while(|b| b.is_ascii_whitespace()).count();
        src.advance(blank);
        if blank == 0 {
            break;
        }
    }
    let first = *src.first()?;
    if first == b'{' || first == b'[' {
        return Some(Framing::Ndjson);
    }
    let n = src.len().min(HEADER_PREFIX.len());
    if !src[..n].eq_ignore_ascii_case(&HEADER_PREFIX[..n]) {
        return Some(Framing::Ndjson);
    }
    (n == HEADER_PREFIX.len()).then_some(Framing::ContentLength)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(input: &[u8]) -> (Option<Framing>, Vec<u8>) {
        let mut buf = BytesMut::from(input);
        (detect(&mut buf), buf.to_vec())
    }

    #[test]
    fn detects() {
        assert_eq!(run(b"{}").0, Some(Framing::Ndjson));
        assert_eq!(run(b" \r\n [").0, Some(Framing::Ndjson));
        assert_eq!(run(b"Content-Length: 2").0, Some(Framing::ContentLength));
        assert_eq!(run(b"content-type: x").0, Some(Framing::ContentLength));
        assert_eq!(run(b"CONTENT-").0, Some(Framing::ContentLength));
        assert_eq!(run(b"garbage\n").0, Some(Framing::Ndjson));
        assert_eq!(run(b"\xEF\xBB\xBF{").0, Some(Framing::Ndjson));
    }

    #[test]
    fn waits_for_enough_bytes() {
        assert_eq!(run(b""), (None, vec![]));
        assert_eq!(run(b"  \n"), (None, vec![]));
        assert_eq!(run(b"Cont"), (None, b"Cont".to_vec()));
        assert_eq!(run(b"\xEF\xBB"), (None, b"\xEF\xBB".to_vec()));
    }
}
