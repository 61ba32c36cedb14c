//! A cursor over fuzzer bytes that turns them into choices, numbers and byte strings.
//!
//! Shared by the cargo-fuzz targets (`fuzz/`) and the proptest files (`*/tests/props.rs`,
//! which include this file with `#[path]`), so both drive the same generators. Reading past
//! the end yields zeros, so every byte string decodes to some scenario.
#![allow(dead_code)]

/// Reads choices from a byte slice, front to back.
#[derive(Debug, Clone)]
pub struct Input<'a> {
    data: &'a [u8],
}

impl<'a> Input<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Input { data }
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// The next byte, or 0 once the input is used up.
    pub fn byte(&mut self) -> u8 {
        match self.data.split_first() {
            Some((b, rest)) => {
                self.data = rest;
                *b
            }
            None => 0,
        }
    }

    pub fn bool(&mut self) -> bool {
        self.byte() & 1 == 1
    }

    pub fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.byte(), self.byte()])
    }

    pub fn u64(&mut self) -> u64 {
        let mut b = [0u8; 8];
        for x in &mut b {
            *x = self.byte();
        }
        u64::from_le_bytes(b)
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        if n <= 256 {
            self.byte() as usize % n
        } else {
            self.u16() as usize % n
        }
    }

    /// One of `items` (which must not be empty).
    pub fn pick<'b, T>(&mut self, items: &'b [T]) -> &'b T {
        &items[self.below(items.len())]
    }

    /// Up to `max` bytes, length chosen by the input.
    pub fn bytes(&mut self, max: usize) -> &'a [u8] {
        let n = self.below(max.saturating_add(1)).min(self.data.len());
        let (head, rest) = self.data.split_at(n);
        self.data = rest;
        head
    }

    /// A short string: ASCII, escapes, multi-byte UTF-8 and control characters.
    pub fn text(&mut self, max_chars: usize) -> String {
        const PIECES: &[&str] = &[
            "a",
            "Z",
            "0",
            " ",
            "\"",
            "\\",
            "\n",
            "\r",
            "\t",
            "\u{0}",
            "\u{1f}",
            "é",
            "你好",
            "🦀",
            "\u{2028}",
            "\u{feff}",
            "{",
            "}",
            "[",
            "]",
            ":",
            ",",
            "Content-Length: ",
            "\u{7f}",
        ];
        let n = self.below(max_chars + 1);
        let mut s = String::new();
        for _ in 0..n {
            let b = self.byte();
            if b < 128 && (b as char).is_ascii_graphic() {
                s.push(b as char);
            } else {
                s.push_str(PIECES[b as usize % PIECES.len()]);
            }
        }
        s
    }

    /// Everything not read yet.
    pub fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.data)
    }
}

/// A small deterministic generator (xorshift64*) for chunk boundaries derived from a seed.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number in `1..=max` (`max` ≥ 1).
    pub fn size(&mut self, max: usize) -> usize {
        1 + (self.next_u64() % max.max(1) as u64) as usize
    }
}

/// Splits `data` into chunks whose sizes come from `rng`, each at most `max` bytes.
pub fn chunk<'a>(data: &'a [u8], rng: &mut Rng, max: usize) -> Vec<&'a [u8]> {
    let mut out = Vec::new();
    let mut rest = data;
    while !rest.is_empty() {
        let n = rng.size(max).min(rest.len());
        let (head, tail) = rest.split_at(n);
        out.push(head);
        rest = tail;
    }
    out
}
