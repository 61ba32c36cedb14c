//! Partial JSON patterns: how a scenario says what a reply must look like.
//!
//! An object pattern lists only the members it cares about; arrays match element by element
//! and must have the same length; other values must be equal. Strings starting with `$` are
//! placeholders: `$any` (present, any value), `$absent` (as an object member: must not be
//! there), `$string`, `$number`, `$integer`, `$bool`, `$object`, `$array`, `$null`.

use mcp_protocol::char_prefix;
use serde_json::Value;

/// Where a value departs from what was asked of it (a pattern, a schema), by its JSON path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Mismatch(pub String);

/// Checks `actual` against `pattern`; the error names the first mismatch by its JSON path.
pub fn matches(pattern: &Value, actual: &Value) -> Result<(), Mismatch> {
    at("$", pattern, Some(actual))
}

fn at(path: &str, pattern: &Value, actual: Option<&Value>) -> Result<(), Mismatch> {
    if let Value::String(p) = pattern {
        if let Some(kind) = p.strip_prefix('$') {
            return placeholder(path, kind, actual);
        }
    }
    let Some(actual) = actual else {
        return Err(Mismatch(format!(
            "{path}: missing, expected {}",
            short(pattern)
        )));
    };
    match (pattern, actual) {
        (Value::Object(p), Value::Object(a)) => {
            for (key, want) in p {
                at(&format!("{path}.{key}"), want, a.get(key))?;
            }
            Ok(())
        }
        (Value::Array(p), Value::Array(a)) => {
            if p.len() != a.len() {
                return Err(Mismatch(format!(
                    "{path}: expected an array of {} items, got {}",
                    p.len(),
                    a.len()
                )));
            }
            for (i, (want, got)) in p.iter().zip(a).enumerate() {
                at(&format!("{path}[{i}]"), want, Some(got))?;
            }
            Ok(())
        }
        (p, a) if p == a => Ok(()),
        (p, a) => Err(Mismatch(format!(
            "{path}: expected {}, got {}",
            short(p),
            short(a)
        ))),
    }
}

fn placeholder(path: &str, kind: &str, actual: Option<&Value>) -> Result<(), Mismatch> {
    let ok = match (kind, actual) {
        ("absent", None) => true,
        ("absent", Some(v)) => {
            return Err(Mismatch(format!(
                "{path}: expected no such member, got {}",
                short(v)
            )))
        }
        (_, None) => return Err(Mismatch(format!("{path}: missing, expected ${kind}"))),
        ("any", Some(_)) => true,
        ("string", Some(v)) => v.is_string(),
        ("number", Some(v)) => v.is_number(),
        ("integer", Some(v)) => v.is_i64() || v.is_u64(),
        ("bool", Some(v)) => v.is_boolean(),
        ("object", Some(v)) => v.is_object(),
        ("array", Some(v)) => v.is_array(),
        ("null", Some(v)) => v.is_null(),
        (other, Some(_)) => return Err(Mismatch(format!("{path}: unknown placeholder ${other}"))),
    };
    if ok {
        Ok(())
    } else {
        Err(Mismatch(format!(
            "{path}: expected ${kind}, got {}",
            actual.map(short).unwrap_or_default()
        )))
    }
}

/// A value for a message, cut short.
/// `error CODE MESSAGE` or `result {…}`: a reply in a few words.
pub fn describe(reply: &Value) -> String {
    match (reply.get("result"), reply.get("error")) {
        (_, Some(e)) => format!(
            "error {} {}",
            e.get("code").map(short).unwrap_or_default(),
            e.get("message").map(short).unwrap_or_default()
        ),
        (Some(r), None) => format!("result {}", short(r)),
        _ => short(reply),
    }
}

/// A JSON value on one line, cut to about 160 characters.
pub fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.len() <= 160 {
        return s;
    }
    format!("{}...", char_prefix(&s, 157))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn partial_objects_and_placeholders() {
        let reply = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "x"}});
        assert!(matches(&json!({"id": 1, "error": {"code": -32601}}), &reply).is_ok());
        assert!(matches(
            &json!({"result": "$absent", "error": {"message": "$string"}}),
            &reply
        )
        .is_ok());
        assert_eq!(
            matches(&json!({"error": {"code": -32600}}), &reply)
                .unwrap_err()
                .to_string(),
            "$.error.code: expected -32600, got -32601"
        );
        assert_eq!(
            matches(&json!({"result": "$any"}), &reply)
                .unwrap_err()
                .to_string(),
            "$.result: missing, expected $any"
        );
        assert!(matches(&json!({"error": "$absent"}), &reply).is_err());
        assert!(matches(&json!({"id": "$integer"}), &reply).is_ok());
        assert!(matches(&json!({"id": "$string"}), &reply).is_err());
    }

    #[test]
    fn arrays_match_item_by_item() {
        assert!(matches(
            &json!([{"id": 1}, {"id": 2}]),
            &json!([{"id": 1, "r": 0}, {"id": 2}])
        )
        .is_ok());
        assert!(matches(&json!([{"id": 1}]), &json!([{"id": 1}, {"id": 2}])).is_err());
    }
}
