//! JSON Schema, by the `jsonschema` crate: which dialect a tool's schema is in, whether it is
//! valid for it, and whether a value conforms to it (basic/index.mdx, JSON Schema Usage).

use jsonschema::Draft;
use serde_json::Value;

/// Why a schema cannot be used, or a value does not conform to it: in words, for the report.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct SchemaError(pub(crate) String);

/// What the meta-schema of a schema's dialect says of it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum SchemaVerdict {
    /// Valid for its dialect (named).
    Valid(&'static str),
    /// Not valid for its dialect: the dialect and the first error.
    Invalid(&'static str, String),
    /// `$schema` names a dialect the harness does not know: not judged.
    Unsupported(String),
}

/// The dialect a schema declares with `$schema`, else 2020-12 (the default since 2025-11-25);
/// `Err` with the `$schema` value if it names none the validator knows.
pub(crate) fn dialect(schema: &Value) -> Result<Draft, SchemaError> {
    match schema.get("$schema") {
        None => Ok(Draft::Draft202012),
        Some(Value::String(uri)) => match Draft::from_schema_uri(uri) {
            Draft::Unknown => Err(SchemaError(uri.clone())),
            draft => Ok(draft),
        },
        Some(other) => Err(SchemaError(other.to_string())),
    }
}

pub(crate) fn dialect_name(draft: Draft) -> &'static str {
    match draft {
        Draft::Draft4 => "draft-04",
        Draft::Draft6 => "draft-06",
        Draft::Draft7 => "draft-07",
        Draft::Draft201909 => "2019-09",
        Draft::Draft202012 => "2020-12",
        _ => "an unknown dialect",
    }
}

/// Validates `schema` against the meta-schema of its dialect. `fallback`: a dialect that also
/// counts for a schema without `$schema` (revisions before 2025-11-25 name no default).
pub(crate) fn judge_schema(schema: &Value, fallback: Option<Draft>) -> SchemaVerdict {
    let draft = match dialect(schema) {
        Ok(draft) => draft,
        Err(uri) => return SchemaVerdict::Unsupported(uri.0),
    };
    let name = dialect_name(draft);
    let Some(meta) = draft_meta(draft) else {
        return SchemaVerdict::Unsupported(name.to_owned());
    };
    let first_error = match meta.validate(schema) {
        Ok(()) => return SchemaVerdict::Valid(name),
        Err(e) => format!("{e} (at {})", location(e.instance_path().as_str())),
    };
    if schema.get("$schema").is_none() {
        if let Some(meta) = fallback.and_then(draft_meta) {
            if meta.validate(schema).is_ok() {
                return SchemaVerdict::Valid(fallback.map_or(name, dialect_name));
            }
        }
    }
    SchemaVerdict::Invalid(name, first_error)
}

fn draft_meta(draft: Draft) -> Option<jsonschema::meta::MetaValidator<'static>> {
    let validator = match draft {
        Draft::Draft4 => jsonschema::draft4::meta::validator(),
        Draft::Draft6 => jsonschema::draft6::meta::validator(),
        Draft::Draft7 => jsonschema::draft7::meta::validator(),
        Draft::Draft201909 => jsonschema::draft201909::meta::validator(),
        Draft::Draft202012 => jsonschema::draft202012::meta::validator(),
        _ => return None,
    };
    Some(validator)
}

fn location(path: &str) -> &str {
    if path.is_empty() {
        "the root"
    } else {
        path
    }
}

/// A compiled schema in its dialect. `formats`: whether `format` is asserted (the harness's
/// own arguments must satisfy it; a server's output is held only to what 2020-12 asserts).
#[derive(Debug)]
pub(crate) struct Compiled(jsonschema::Validator);

impl Compiled {
    /// Compiles `schema`; `Err` says why it cannot be used (an unknown dialect, a `$ref` that
    /// cannot be resolved offline, a pattern the regex engine rejects).
    pub(crate) fn new(schema: &Value, formats: bool) -> Result<Compiled, SchemaError> {
        let draft =
            dialect(schema).map_err(|uri| SchemaError(format!("unsupported $schema {uri}")))?;
        jsonschema::options()
            .with_draft(draft)
            .should_validate_formats(formats)
            .build(schema)
            .map(Compiled)
            .map_err(|e| SchemaError(format!("the schema cannot be compiled: {e}")))
    }

    /// `Ok`, or the errors (at most three), each with where in the value.
    pub(crate) fn check(&self, value: &Value) -> Result<(), SchemaError> {
        let errors: Vec<String> = self
            .0
            .iter_errors(value)
            .take(3)
            .map(|e| format!("{} (at {})", e, location(e.instance_path().as_str())))
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(SchemaError(errors.join("; ")))
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn dialects_are_judged_by_their_meta_schema() {
        let ok = json!({"type": "object", "properties": {"a": {"type": "string"}}});
        assert_eq!(judge_schema(&ok, None), SchemaVerdict::Valid("2020-12"));
        let bad = json!({"type": "object", "properties": {"a": {"type": "text"}}});
        assert!(matches!(
            judge_schema(&bad, None),
            SchemaVerdict::Invalid("2020-12", _)
        ));
        let seven = json!({"$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object", "properties": {"a": {"type": "array", "items": [{"type": "string"}]}}});
        assert_eq!(judge_schema(&seven, None), SchemaVerdict::Valid("draft-07"));
        // Tuple `items` is draft-07, not 2020-12: valid only where draft-07 is the fallback.
        let mut bare = seven.clone();
        bare.as_object_mut().map(|o| o.remove("$schema"));
        assert!(matches!(
            judge_schema(&bare, None),
            SchemaVerdict::Invalid(..)
        ));
        assert_eq!(
            judge_schema(&bare, Some(Draft::Draft7)),
            SchemaVerdict::Valid("draft-07")
        );
        let custom = json!({"$schema": "https://example.com/my-dialect", "type": "object"});
        assert_eq!(
            judge_schema(&custom, None),
            SchemaVerdict::Unsupported("https://example.com/my-dialect".to_owned())
        );
    }

    #[test]
    fn values_are_checked_with_formats_only_when_asked() {
        let schema = json!({"type": "object", "properties": {"u": {"type": "string", "format": "email"}},
            "required": ["u"]});
        let strict = Compiled::new(&schema, true).expect("compiles");
        let lax = Compiled::new(&schema, false).expect("compiles");
        assert!(strict.check(&json!({"u": "a@example.com"})).is_ok());
        assert!(strict.check(&json!({"u": "nope"})).is_err());
        assert!(lax.check(&json!({"u": "nope"})).is_ok());
        let missing = lax.check(&json!({})).expect_err("required");
        assert!(missing.0.contains("\"u\""), "{missing}");
    }
}
