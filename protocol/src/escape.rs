//! Finding the bytes a JSON string cannot hold unescaped (RFC 8259 §7: `"`, `\\` and
//! U+0000..U+001F): 8 at a time for the first few words, then 32. The writer escapes them
//! ([`crate::codec`]); the fast reader ([`crate::scan`]) stops at them, since each ends a
//! string, starts an escape or is an error.

/// The index of the first byte at or after `from` that JSON must escape.
pub(crate) fn next_escape(bytes: &[u8], from: usize) -> Option<usize> {
    // Most strings (member names, ids, methods) end within a few words, where the set-up of
    // the 32-byte step below costs more than it saves: 8 bytes at a time first.
    let mut from = from;
    for _ in 0..4 {
        let Some(word) = word_at(bytes, from) else {
            break;
        };
        if let Some(i) = first_escape(word) {
            return Some(from + i);
        }
        from += 8;
    }
    let rest = bytes.get(from..)?;
    // 32 bytes per step: a flag per lane, OR-ed as two u128 words, with no early exit. LLVM
    // makes that a handful of SSE2 compares (baseline on x86_64), 26 instructions per 32
    // bytes against ~45 for the 8-byte bit trick it replaced and 43 for a fold over bools;
    // without `unsafe`. A step with a hit is searched byte by byte.
    let mut skipped = 0;
    for chunk in rest.chunks_exact(32) {
        let mut lanes = [0u8; 32];
        for (lane, &b) in lanes.iter_mut().zip(chunk) {
            *lane = u8::from(needs_escape(b));
        }
        let (low, high) = lanes.split_at(16);
        if (lanes16(low) | lanes16(high)) != 0 {
            break;
        }
        skipped += 32;
    }
    rest[skipped..]
        .iter()
        .position(|&b| needs_escape(b))
        .map(|p| from + skipped + p)
}

/// The index of the first byte in `word` that JSON must escape.
#[inline(always)]
pub(crate) fn first_escape(word: &[u8; 8]) -> Option<usize> {
    let hits = escape_bytes(u64::from_le_bytes(*word));
    (hits != 0).then(|| (hits.trailing_zeros() / 8) as usize)
}

/// The 8 bytes of `bytes` from `at`, if there are 8.
#[inline(always)]
pub(crate) fn word_at(bytes: &[u8], at: usize) -> Option<&[u8; 8]> {
    bytes.get(at..at.checked_add(8)?)?.try_into().ok()
}

/// The high bit of each byte of `word` that JSON must escape; exact for the lowest such byte
/// (a borrow can mark bytes above it too), which is all [`next_escape`] reads.
#[inline(always)]
fn escape_bytes(word: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // `x - 1` sets a byte's high bit where the byte was 0 (or above 0x80, which `!x` drops);
    // `x - 0x20` where it was below 0x20.
    let zero = |x: u64| x.wrapping_sub(ONES) & !x;
    let quote = zero(word ^ (ONES * u64::from(b'"')));
    let backslash = zero(word ^ (ONES * u64::from(b'\\')));
    let control = word.wrapping_sub(ONES * 0x20) & !word;
    (quote | backslash | control) & HIGH
}

#[inline(always)]
fn lanes16(lanes: &[u8]) -> u128 {
    let mut w = [0u8; 16];
    w.copy_from_slice(lanes);
    u128::from_ne_bytes(w)
}

#[inline(always)]
fn needs_escape(b: u8) -> bool {
    (b < 0x20) | (b == b'"') | (b == b'\\')
}
