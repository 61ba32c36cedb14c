//! The text each bench call echoes: `"<id>.xxxx…"`, `payload` bytes long (longer only when
//! the id needs it), so a reply names its call and its length shows it was carried whole.

/// Decimal digits of `n`.
pub(crate) fn digits(n: u64) -> usize {
    let mut d = 1;
    let mut n = n / 10;
    while n > 0 {
        d += 1;
        n /= 10;
    }
    d
}

/// The length of id `id`'s echo text for `payload` bytes.
pub fn text_len(id: u64, payload: usize) -> usize {
    payload.max(digits(id) + 1)
}

/// Whether `text` is exactly id `id`'s echo text for `payload` bytes.
pub fn text_matches(text: &[u8], id: u64, payload: usize) -> bool {
    let d = digits(id);
    if text.len() != text_len(id, payload) || text.get(d) != Some(&b'.') {
        return false;
    }
    let mut n: u64 = 0;
    for &b in &text[..d] {
        if !b.is_ascii_digit() {
            return false;
        }
        n = n.wrapping_mul(10).wrapping_add(u64::from(b - b'0'));
    }
    n == id && text[d + 1..].iter().all(|&b| b == b'x')
}

/// The `x`s that pad every bench text, kept so that texts are written and checked with
/// `memcpy`/`memcmp` rather than byte by byte. A filler of `payload` bytes serves every id.
#[derive(Debug, Default, Clone)]
pub struct Filler(Vec<u8>);

impl Filler {
    /// Makes it at least `len` bytes long.
    pub fn grow(&mut self, len: usize) {
        if self.0.len() < len {
            self.0.resize(len, b'x');
        }
    }

    /// The first `len` bytes, grown to that length first if needed.
    pub(crate) fn take(&mut self, len: usize) -> &[u8] {
        self.grow(len);
        &self.0[..len]
    }

    /// Id `id`'s text for `payload` bytes (`"<id>.xxxx…"`).
    pub fn text(&self, id: u64, payload: usize) -> Option<String> {
        let fill = text_len(id, payload) - digits(id) - 1;
        let pad = std::str::from_utf8(self.0.get(..fill)?).ok()?;
        Some(format!("{id}.{pad}"))
    }

    /// Whether `raw` is exactly id `id`'s text for `payload` bytes; false also when this
    /// filler is too short to tell.
    pub fn is_text(&self, raw: &[u8], id: u64, payload: usize) -> bool {
        let d = digits(id);
        let len = text_len(id, payload);
        if raw.len() != len || raw.get(d) != Some(&b'.') {
            return false;
        }
        Some(&raw[d + 1..]) == self.0.get(..len - d - 1) && text_matches(&raw[..d + 1], id, d + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_name_their_id() {
        assert!(text_matches(b"17.xxxxx", 17, 8));
        assert!(text_matches(b"1234.", 1234, 2));
        assert!(!text_matches(b"18.xxxxx", 17, 8));
        assert!(!text_matches(b"17.xxxx", 17, 8));
        assert!(!text_matches(b"17.xxxxy", 17, 8));
    }
}
