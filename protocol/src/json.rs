//! How a JSON value is named in an error message: its type, or its text cut short (at a char
//! boundary, as every crate here cuts peer text).

use serde_json::Value;

/// The JSON type of `v`, as an error message names it ("a string", "null", …).
pub(crate) fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A value for an error message, cut short so a huge input cannot make a huge reply.
pub(crate) fn short_json(v: &Value) -> String {
    let s = v.to_string();
    if s.len() <= 64 {
        return s;
    }
    format!("{}...", char_prefix(&s, 61))
}

/// The longest start of `s` that is at most `max_bytes` long and ends on a char boundary:
/// how peer text is cut before it goes into a message, a log line or a transcript.
pub fn char_prefix(s: &str, max_bytes: usize) -> &str {
    let mut end = max_bytes.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prefix_never_splits_a_char() {
        let s = "aé🦀";
        let prefixes: Vec<&str> = (0..=s.len() + 1).map(|n| char_prefix(s, n)).collect();
        assert_eq!(
            prefixes,
            ["", "a", "a", "aé", "aé", "aé", "aé", "aé🦀", "aé🦀"]
        );
    }
}
