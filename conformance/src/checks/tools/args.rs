//! Arguments for a tool, made from its `inputSchema` so that they satisfy it: `const`, `enum`,
//! `format` (uri, email, date-time, date, time, uuid, hostname, ipv4, ipv6), `pattern` (see
//! [`super::pattern_gen`]), bounds and lengths, `minItems`, nested objects and local `$ref`s.
//! What is made is checked with the validator (formats asserted) before it is sent; when no
//! such arguments can be made, the tool is not called, and the reason is reported.

use serde_json::{json, Map, Number, Value};

use super::pattern_gen;
use super::schema::{Compiled, SchemaError};

/// Arguments that satisfy `schema` (checked), or why none could be made.
pub(crate) fn arguments_for(schema: &Value) -> Result<Value, SchemaError> {
    let args = Maker { root: schema }.object(schema, 0)?;
    let validator = Compiled::new(schema, true)?;
    validator.check(&args).map_err(|e| {
        SchemaError(format!(
            "the arguments made, {args}, do not satisfy it: {e}"
        ))
    })?;
    Ok(args)
}

/// Deeper than this, a schema is taken for a recursive one and no value is made.
const MAX_DEPTH: usize = 12;

struct Maker<'a> {
    root: &'a Value,
}

impl Maker<'_> {
    /// The object's required properties (and at least `minProperties` of the others).
    fn object(&self, schema: &Value, depth: usize) -> Result<Value, SchemaError> {
        let props = schema.get("properties").and_then(Value::as_object);
        let mut out = Map::new();
        let required = schema.get("required").and_then(Value::as_array);
        for name in required.into_iter().flatten().filter_map(Value::as_str) {
            let prop = props
                .and_then(|p| p.get(name))
                .unwrap_or(&Value::Bool(true));
            let value = self
                .value(prop, depth + 1)
                .map_err(|e| SchemaError(format!("property {name:?}: {e}")))?;
            out.insert(name.to_owned(), value);
        }
        let min = schema
            .get("minProperties")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        for (name, prop) in props.into_iter().flatten() {
            if out.len() as u64 >= min {
                break;
            }
            if !out.contains_key(name) {
                let value = self
                    .value(prop, depth + 1)
                    .map_err(|e| SchemaError(format!("property {name:?}: {e}")))?;
                out.insert(name.clone(), value);
            }
        }
        Ok(Value::Object(out))
    }

    fn value(&self, schema: &Value, depth: usize) -> Result<Value, SchemaError> {
        if depth > MAX_DEPTH {
            return Err(SchemaError(
                "the schema nests too deep (recursive?)".to_owned(),
            ));
        }
        let schema = self.resolve(schema)?;
        if let Some(c) = schema.get("const") {
            return Ok(c.clone());
        }
        if let Some(first) = schema
            .get("enum")
            .and_then(Value::as_array)
            .and_then(|e| e.first())
        {
            return Ok(first.clone());
        }
        if let Some(d) = schema.get("default") {
            return Ok(d.clone());
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(first) = schema
                .get(key)
                .and_then(Value::as_array)
                .and_then(|a| a.first())
            {
                return self.value(first, depth + 1);
            }
        }
        if let Some(first) = schema
            .get("allOf")
            .and_then(Value::as_array)
            .and_then(|a| a.first())
        {
            if schema.get("type").is_none() {
                return self.value(first, depth + 1);
            }
        }
        match kind(schema) {
            Some("object") => self.object(schema, depth),
            Some("array") => self.array(schema, depth),
            Some("integer") => number(schema, true),
            Some("number") => number(schema, false),
            Some("boolean") => Ok(json!(false)),
            Some("null") => Ok(Value::Null),
            Some("string") | None => string(schema),
            Some(other) => Err(SchemaError(format!("unknown type {other:?}"))),
        }
    }

    /// A local `$ref` (`#/...`) followed; the schema itself if it has none.
    fn resolve<'s>(&'s self, schema: &'s Value) -> Result<&'s Value, SchemaError> {
        let Some(reference) = schema.get("$ref").and_then(Value::as_str) else {
            return Ok(schema);
        };
        let pointer = reference
            .strip_prefix('#')
            .ok_or_else(|| SchemaError(format!("$ref {reference} is not local")))?;
        self.root
            .pointer(pointer)
            .ok_or_else(|| SchemaError(format!("$ref {reference} names nothing in the schema")))
    }

    fn array(&self, schema: &Value, depth: usize) -> Result<Value, SchemaError> {
        let min = schema.get("minItems").and_then(Value::as_u64).unwrap_or(0);
        let prefix = schema.get("prefixItems").and_then(Value::as_array);
        let mut out = Vec::new();
        for item in prefix.into_iter().flatten().take(min as usize) {
            out.push(self.value(item, depth + 1)?);
        }
        let items = schema.get("items").unwrap_or(&Value::Bool(true));
        while (out.len() as u64) < min.min(100) {
            let mut item = self.value(items, depth + 1)?;
            // Distinct items for uniqueItems: numbers counted up, strings suffixed.
            let n = out.len();
            match &mut item {
                Value::Number(x) if x.is_i64() => item = json!(x.as_i64().unwrap_or(0) + n as i64),
                Value::String(s) if n > 0 => s.push_str(&n.to_string()),
                _ => {}
            }
            out.push(item);
        }
        Ok(Value::Array(out))
    }
}

/// The type to make: the first non-null one of a list; an object if only properties say so.
fn kind(schema: &Value) -> Option<&str> {
    match schema.get("type") {
        Some(Value::String(k)) => Some(k.as_str()),
        Some(Value::Array(kinds)) => {
            let kinds: Vec<&str> = kinds.iter().filter_map(Value::as_str).collect();
            kinds
                .iter()
                .find(|k| **k != "null")
                .or(kinds.first())
                .copied()
        }
        _ if schema.get("properties").is_some() => Some("object"),
        _ => None,
    }
}

fn number(schema: &Value, integer: bool) -> Result<Value, SchemaError> {
    let get = |k: &str| schema.get(k).and_then(Value::as_f64);
    let step = if integer { 1.0 } else { 0.5 };
    let mut lo = get("minimum").unwrap_or(f64::NEG_INFINITY);
    if let Some(x) = get("exclusiveMinimum") {
        lo = lo.max(x + step);
    }
    let mut hi = get("maximum").unwrap_or(f64::INFINITY);
    if let Some(x) = get("exclusiveMaximum") {
        hi = hi.min(x - step);
    }
    let mut n = 1.0_f64.clamp(lo.min(hi), hi.max(lo));
    if integer {
        n = n.ceil();
    }
    if let Some(m) = get("multipleOf").filter(|m| *m > 0.0) {
        n = (n / m).ceil() * m;
    }
    if n < lo || n > hi {
        return Err(SchemaError(format!("no number in [{lo}, {hi}] found")));
    }
    if integer || n.fract() == 0.0 {
        return Ok(json!(n as i64));
    }
    Number::from_f64(n)
        .map(Value::Number)
        .ok_or_else(|| SchemaError("no finite number".to_owned()))
}

fn string(schema: &Value) -> Result<Value, SchemaError> {
    let min = schema.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
    let max = schema
        .get("maxLength")
        .and_then(Value::as_u64)
        .map(|m| m as usize);
    let mut s = if let Some(pattern) = schema.get("pattern").and_then(Value::as_str) {
        pattern_gen::sample(pattern, min).ok_or_else(|| {
            SchemaError(format!(
                "no string for the pattern {pattern:?} could be made"
            ))
        })?
    } else if let Some(format) = schema.get("format").and_then(Value::as_str) {
        formatted(format)
            .ok_or_else(|| SchemaError(format!("no string of the format {format:?} can be made")))?
            .to_owned()
    } else {
        "mcp-conformance".to_owned()
    };
    if schema.get("pattern").is_none() && schema.get("format").is_none() {
        while s.chars().count() < min {
            s.push('x');
        }
        if let Some(max) = max {
            s = s.chars().take(max).collect();
        }
    }
    Ok(Value::String(s))
}

/// A string of a known `format`.
fn formatted(format: &str) -> Option<&'static str> {
    Some(match format {
        "uri" | "iri" | "uri-reference" | "iri-reference" | "url" => "https://example.com/",
        "email" | "idn-email" => "mcp-conformance@example.com",
        "date-time" => "2025-01-01T00:00:00Z",
        "date" => "2025-01-01",
        "time" => "00:00:00Z",
        "duration" => "P1D",
        "uuid" => "00000000-0000-4000-8000-000000000000",
        "hostname" | "idn-hostname" => "example.com",
        "ipv4" => "127.0.0.1",
        "ipv6" => "::1",
        "json-pointer" => "/a",
        "regex" => "a",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_satisfy_formats_patterns_bounds_and_nesting() {
        let schema = json!({"type": "object", "required": ["a", "n", "e", "u", "k", "l", "o", "d"],
            "properties": {"a": {"type": "string"}, "n": {"type": "integer", "minimum": 5},
            "e": {"enum": ["x", "y"]}, "u": {"type": "string", "format": "uri"},
            "k": {"type": "string", "pattern": "^[a-zA-Z0-9]+$"},
            "l": {"type": "array", "minItems": 2, "items": {"type": "string", "format": "email"}},
            "o": {"type": "object", "required": ["when"],
                  "properties": {"when": {"type": "string", "format": "date-time"}}},
            "d": {"$ref": "#/$defs/small"},
            "optional": {"type": "number"}},
            "$defs": {"small": {"type": "number", "exclusiveMaximum": 0}}});
        let args = arguments_for(&schema).expect("arguments");
        assert_eq!(args["a"], json!("mcp-conformance"));
        assert_eq!(args["n"], json!(5));
        assert_eq!(args["e"], json!("x"));
        assert_eq!(args["u"], json!("https://example.com/"));
        assert_eq!(args["k"], json!("a"));
        assert_eq!(args["l"].as_array().map(Vec::len), Some(2));
        assert_eq!(args["o"]["when"], json!("2025-01-01T00:00:00Z"));
        assert!(args["d"].as_f64().is_some_and(|d| d < 0.0));
        assert!(args.get("optional").is_none());
    }

    #[test]
    fn arguments_that_cannot_be_made_say_why() {
        let look_around = json!({"type": "object", "required": ["x"],
            "properties": {"x": {"type": "string", "pattern": "^(?!a)b$"}}});
        let why = arguments_for(&look_around).expect_err("no argument");
        assert!(
            why.0.contains("\"x\"") && why.0.contains("pattern"),
            "{why}"
        );
        let empty = json!({"type": "object", "required": ["n"],
            "properties": {"n": {"type": "integer", "minimum": 3, "maximum": 2}}});
        assert!(arguments_for(&empty).is_err());
    }
}
