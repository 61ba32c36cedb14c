//! A string that matches a `pattern` of a tool's `inputSchema`, for the common shapes: literals,
//! escapes (`\d \w \s \.`), classes (`[a-zA-Z0-9_-]`), groups with alternatives (the first is
//! taken), and the quantifiers `? * + {n} {n,} {n,m}` (the least count, at least one where the
//! string would otherwise be too short). Anything else (look-arounds, back-references) is
//! `None`: the harness then does not call the tool, and says why.

/// A string matching `pattern` with at least `min_len` characters if it allows that, or `None`.
pub(crate) fn sample(pattern: &str, min_len: usize) -> Option<String> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut parser = Parser { chars, at: 0 };
    let node = parser.alternatives()?;
    if parser.at != parser.chars.len() {
        return None;
    }
    let mut out = String::new();
    node.emit(&mut out, min_len);
    Some(out)
}

#[derive(Debug)]
enum Node {
    Seq(Vec<Node>),
    Char(char),
    Empty,
    Repeat(Box<Node>, usize, Option<usize>),
}

impl Node {
    /// Writes the node; `out` should reach `want` characters, so a repetition that may grow does.
    fn emit(&self, out: &mut String, want: usize) {
        match self {
            Node::Char(c) => out.push(*c),
            Node::Empty => {}
            Node::Seq(items) => {
                for item in items {
                    item.emit(out, want);
                }
            }
            Node::Repeat(inner, min, max) => {
                let mut n = 0;
                while n < *min || (out.chars().count() < want && max.is_none_or(|m| n < m)) {
                    let before = out.len();
                    inner.emit(out, 0);
                    n += 1;
                    if out.len() == before || n > 10_000 {
                        break;
                    }
                }
            }
        }
    }
}

struct Parser {
    chars: Vec<char>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.at += 1;
        Some(c)
    }

    /// `a|b|c`: the first alternative (every one matches; the first is as good as any).
    fn alternatives(&mut self) -> Option<Node> {
        let first = self.sequence()?;
        while self.peek() == Some('|') {
            self.at += 1;
            self.sequence()?;
        }
        Some(first)
    }

    fn sequence(&mut self) -> Option<Node> {
        let mut items = Vec::new();
        while let Some(c) = self.peek() {
            if c == '|' || c == ')' {
                break;
            }
            let atom = self.atom()?;
            items.push(self.quantified(atom)?);
        }
        Some(Node::Seq(items))
    }

    fn atom(&mut self) -> Option<Node> {
        match self.bump()? {
            '^' | '$' => Some(Node::Empty),
            '(' => {
                if self.peek() == Some('?') {
                    // Only a non-capturing group: `(?:`.
                    self.at += 1;
                    if self.bump()? != ':' {
                        return None;
                    }
                }
                let inner = self.alternatives()?;
                (self.bump()? == ')').then_some(inner)
            }
            '[' => self.class(),
            '\\' => escape(self.bump()?).map(Node::Char),
            '.' => Some(Node::Char('a')),
            c if "*+?{})]".contains(c) => None,
            c => Some(Node::Char(c)),
        }
    }

    /// `[...]`: a character it allows (negated classes: one outside a few common ones).
    fn class(&mut self) -> Option<Node> {
        let negated = self.peek() == Some('^');
        if negated {
            self.at += 1;
        }
        let mut allowed: Vec<(char, char)> = Vec::new();
        let mut first = true;
        loop {
            let c = self.bump()?;
            if c == ']' && !first {
                break;
            }
            first = false;
            let lo = if c == '\\' {
                let e = self.bump()?;
                match e {
                    'd' => {
                        allowed.push(('0', '9'));
                        continue;
                    }
                    'w' => {
                        allowed.push(('a', 'z'));
                        continue;
                    }
                    's' => {
                        allowed.push((' ', ' '));
                        continue;
                    }
                    other => escape(other)?,
                }
            } else {
                c
            };
            if self.peek() == Some('-') && self.chars.get(self.at + 1).is_some_and(|&n| n != ']') {
                self.at += 1;
                let hi = match self.bump()? {
                    '\\' => escape(self.bump()?)?,
                    hi => hi,
                };
                allowed.push((lo, hi));
            } else {
                allowed.push((lo, lo));
            }
        }
        if negated {
            let inside = |c: char| allowed.iter().any(|&(lo, hi)| (lo..=hi).contains(&c));
            return "a0Z_-x.".chars().find(|&c| !inside(c)).map(Node::Char);
        }
        // Prefer a letter or digit the class allows, else its first character.
        let pick = "abcxyz0123ABC"
            .chars()
            .find(|&c| allowed.iter().any(|&(lo, hi)| (lo..=hi).contains(&c)));
        pick.or_else(|| allowed.first().map(|&(lo, _)| lo))
            .map(Node::Char)
    }

    fn quantified(&mut self, atom: Node) -> Option<Node> {
        let (min, max) = match self.peek() {
            Some('?') => (0, Some(1)),
            Some('*') => (0, None),
            Some('+') => (1, None),
            Some('{') => return self.braces(atom),
            _ => return Some(atom),
        };
        self.at += 1;
        if self.peek() == Some('?') {
            self.at += 1; // lazy: the same strings
        }
        Some(Node::Repeat(Box::new(atom), min, max))
    }

    fn braces(&mut self, atom: Node) -> Option<Node> {
        self.at += 1;
        let mut text = String::new();
        loop {
            match self.bump()? {
                '}' => break,
                c => text.push(c),
            }
        }
        let (min, max) = match text.split_once(',') {
            None => {
                let n = text.trim().parse().ok()?;
                (n, Some(n))
            }
            Some((lo, hi)) => {
                let lo = lo.trim().parse().ok()?;
                let hi = hi.trim();
                (
                    lo,
                    if hi.is_empty() {
                        None
                    } else {
                        Some(hi.parse().ok()?)
                    },
                )
            }
        };
        Some(Node::Repeat(Box::new(atom), min, max))
    }
}

/// The character an escape outside a class stands for (`\d` a digit, `\w` a letter ...), or
/// `None` for what this generator does not handle (back-references, `\b`, look-arounds).
fn escape(c: char) -> Option<char> {
    match c {
        'd' => Some('0'),
        'w' => Some('a'),
        's' => Some(' '),
        'n' => Some('\n'),
        't' => Some('\t'),
        c if c.is_ascii_alphanumeric() => None,
        c => Some(c),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_patterns_get_a_matching_string() {
        assert_eq!(sample("^[a-zA-Z0-9]+$", 0).as_deref(), Some("a"));
        assert_eq!(sample("^[a-z]{3}-\\d{2}$", 0).as_deref(), Some("aaa-00"));
        assert_eq!(sample("^(foo|bar)_[0-9]+$", 0).as_deref(), Some("foo_0"));
        assert_eq!(sample("^[A-Z]{2,}$", 0).as_deref(), Some("AA"));
        assert_eq!(sample("^[a-z]+$", 4).as_deref(), Some("aaaa"));
        assert_eq!(sample("^\\w+@\\w+\\.com$", 0).as_deref(), Some("a@a.com"));
        assert_eq!(sample("[^-]", 0).as_deref(), Some("a"));
        assert_eq!(sample("^(?=x)", 0), None);
        assert_eq!(sample("(a)\\1", 0), None);
    }
}
