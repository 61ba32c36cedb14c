//! How a JSON value is named in an error message: its type, or its text cut short.

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
    let mut s = v.to_string();
    if s.len() > 64 {
        let mut cut = 61;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push_str("...");
    }
    s
}
