//! JSON Schema → parameter specs: an MCP `inputSchema` becomes [`ParamSpec`]s, with local
//! `$ref`s inlined.

use serde_json::{Map, Value};

use super::error::RegistryError;
use super::spec::{ParamSpec, RiskTier, ToolSpec};

/// `$ref` expansions allowed per schema: a remote server's schema must not blow up memory.
const MAX_REF_EXPANSIONS: usize = 1000;

impl ParamSpec {
    /// Converts an object JSON Schema (`{"type":"object","properties":{...},"required":[...]}`)
    /// to parameter specs, in the order of `properties` (serde_json without `preserve_order`
    /// sorts keys), required ones flagged.
    ///
    /// A schema without `properties` gives an empty list. Local `$ref`s (`#/$defs/..`,
    /// `#/definitions/..`, as pydantic emits) are inlined, since the top-level `$defs` is not
    /// kept; a name in `required` with no property becomes an `"any"` parameter. Other
    /// top-level keywords (`additionalProperties`, `title`, ...) are dropped.
    ///
    /// Errors are [`RegistryError::InvalidSchema`] with an empty `name` (this function does
    /// not know the tool); [`ToolSpec::from_input_schema`] fills it in.
    pub fn from_json_schema(schema: &Value) -> Result<Vec<ParamSpec>, RegistryError> {
        params_from_schema(schema).map_err(|reason| RegistryError::InvalidSchema {
            name: String::new(),
            reason,
        })
    }
}

impl ToolSpec {
    /// A spec from an MCP-style `inputSchema` (see [`ParamSpec::from_json_schema`]); schema
    /// errors name the tool.
    pub fn from_input_schema(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: &Value,
        risk: RiskTier,
    ) -> Result<ToolSpec, RegistryError> {
        let name = name.into();
        let parameters =
            params_from_schema(input_schema).map_err(|reason| RegistryError::InvalidSchema {
                name: name.clone(),
                reason,
            })?;
        Ok(ToolSpec {
            name,
            description: description.into(),
            parameters,
            risk,
        })
    }
}

/// [`ParamSpec::from_json_schema`] with the error as a bare reason.
fn params_from_schema(schema: &Value) -> Result<Vec<ParamSpec>, String> {
    let Value::Object(root) = schema else {
        return Err(format!(
            "expected a JSON Schema object like {{\"type\": \"object\", \"properties\": {{...}}}}, found {}",
            describe(schema)
        ));
    };
    match root.get("type") {
        None => {}
        Some(Value::String(t)) if t == "object" => {}
        Some(other) => {
            return Err(format!(
                "`type` must be \"object\" (tool arguments are an object), found {}",
                describe(other)
            ))
        }
    }
    let properties = match root.get("properties") {
        None => None,
        Some(Value::Object(properties)) => Some(properties),
        Some(other) => {
            return Err(format!(
                "`properties` must be an object, found {}",
                describe(other)
            ))
        }
    };
    let required: Vec<&str> = match root.get("required") {
        None => Vec::new(),
        Some(Value::Array(names)) => names
            .iter()
            .map(|n| {
                n.as_str().ok_or_else(|| {
                    format!(
                        "`required` must be an array of strings, found {} in it",
                        describe(n)
                    )
                })
            })
            .collect::<Result<_, _>>()?,
        Some(other) => {
            return Err(format!(
                "`required` must be an array of strings, found {}",
                describe(other)
            ))
        }
    };

    let mut inliner = RefInliner {
        root,
        stack: Vec::new(),
        expansions: 0,
    };
    let mut params = Vec::new();
    for (name, property) in properties.into_iter().flatten() {
        // Refused here as `register` would refuse it, so a bridge fails before registering.
        if name.is_empty() {
            return Err("a property has an empty name".to_owned());
        }
        if !matches!(property, Value::Object(_) | Value::Bool(_)) {
            return Err(format!(
                "property {name:?} must be a JSON Schema (an object or a boolean), found {}",
                describe(property)
            ));
        }
        let schema = inliner.inline(property)?;
        params.push(ParamSpec {
            name: name.clone(),
            type_name: type_name(&schema),
            description: schema
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_owned),
            required: required.contains(&name.as_str()),
            schema,
        });
    }
    // JSON Schema lets `required` name a property it does not describe: any value will do.
    for name in required {
        if !params.iter().any(|p| p.name == name) {
            params.push(ParamSpec::new(name, "any").as_required());
        }
    }
    Ok(params)
}

/// The single type a schema names; `"any"` when it names none or several (`null` aside,
/// so an optional `["string", "null"]` reads as `"string"`).
fn type_name(schema: &Value) -> String {
    match schema.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(types)) => {
            let mut non_null = types.iter().filter(|t| t.as_str() != Some("null"));
            match (non_null.next().and_then(Value::as_str), non_null.next()) {
                (Some(t), None) => t.to_owned(),
                _ => "any".to_owned(),
            }
        }
        _ => "any".to_owned(),
    }
}

/// How a value reads in an error message.
fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) => format!("the string {s:?}"),
        Value::Array(_) => "an array".to_owned(),
        Value::Object(_) => "an object".to_owned(),
    }
}

/// Replaces `#/$defs/..` and `#/definitions/..` references with the definitions they name.
struct RefInliner<'a> {
    root: &'a Map<String, Value>,
    /// Definitions being expanded, to detect recursion.
    stack: Vec<String>,
    expansions: usize,
}

impl RefInliner<'_> {
    /// Inlines a value that holds schemas: a schema, or an array of them (`allOf`, ...).
    fn inline(&mut self, value: &Value) -> Result<Value, String> {
        match value {
            Value::Object(schema) => self.inline_schema(schema),
            Value::Array(items) => items.iter().map(|v| self.inline(v)).collect(),
            other => Ok(other.clone()),
        }
    }

    fn inline_schema(&mut self, schema: &Map<String, Value>) -> Result<Value, String> {
        let mut out = Map::new();
        for (key, value) in schema {
            let value = match (key.as_str(), value) {
                // Instance data, not schemas: leave any `$ref` look-alikes alone.
                ("enum" | "const" | "default" | "examples" | "$ref", _) => value.clone(),
                // Name -> schema maps: the names are not keywords (a property may be
                // called `default`).
                (
                    "properties" | "patternProperties" | "dependentSchemas" | "$defs"
                    | "definitions",
                    Value::Object(named),
                ) => Value::Object(
                    named
                        .iter()
                        .map(|(name, s)| Ok((name.clone(), self.inline(s)?)))
                        .collect::<Result<_, String>>()?,
                ),
                _ => self.inline(value)?,
            };
            out.insert(key.clone(), value);
        }
        let Some(Value::String(reference)) = schema.get("$ref") else {
            return Ok(Value::Object(out));
        };
        let Some(target) = self.resolve(reference)? else {
            return Ok(Value::Object(out));
        };
        out.remove("$ref");
        // Keywords next to `$ref` are usually the field's own description or default, more
        // specific than the shared definition: they win.
        Ok(match target {
            Value::Object(mut merged) => {
                merged.extend(out);
                Value::Object(merged)
            }
            other if out.is_empty() => other,
            other => {
                out.insert("allOf".to_owned(), Value::Array(vec![other]));
                Value::Object(out)
            }
        })
    }

    /// The inlined definition `reference` names; `None` for references this does not handle
    /// (they are left as they are).
    fn resolve(&mut self, reference: &str) -> Result<Option<Value>, String> {
        let Some((section, token)) = ["$defs", "definitions"].iter().find_map(|section| {
            reference
                .strip_prefix("#/")
                .and_then(|r| r.strip_prefix(section))
                .and_then(|r| r.strip_prefix('/'))
                .filter(|token| !token.contains('/'))
                .map(|token| (*section, token))
        }) else {
            return Ok(None);
        };
        let def_name = token.replace("~1", "/").replace("~0", "~");
        let Some(definition) = self.root.get(section).and_then(|defs| defs.get(&def_name)) else {
            return Err(format!("`$ref` {reference:?} points to no definition"));
        };
        if self.stack.contains(&def_name) {
            return Err(format!(
                "`$ref` {reference:?} is recursive and cannot be inlined; register the tool with a non-recursive schema"
            ));
        }
        self.expansions += 1;
        if self.expansions > MAX_REF_EXPANSIONS {
            return Err(format!(
                "more than {MAX_REF_EXPANSIONS} `$ref` expansions; simplify the schema"
            ));
        }
        self.stack.push(def_name);
        let inlined = self.inline(definition);
        self.stack.pop();
        inlined.map(Some)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Properties are written in sorted order so the expected order holds with and without
    /// serde_json's `preserve_order`.
    fn realistic_schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "filters": {
                    "type": "object",
                    "properties": {
                        "author": { "type": "string" },
                        "since": { "type": "string", "format": "date" }
                    },
                    "required": ["since"]
                },
                "limit": { "type": "integer", "minimum": 1, "default": 10 },
                "mode": {
                    "type": "string",
                    "enum": ["fast", "thorough"],
                    "description": "How hard to search."
                },
                "query": { "type": "string", "description": "What to look for." },
                "tags": { "type": "array", "items": { "type": "string" } }
            },
            "required": ["mode", "query"]
        })
    }

    #[test]
    fn from_json_schema_gives_exact_param_specs() {
        let params = ParamSpec::from_json_schema(&realistic_schema()).unwrap();
        assert_eq!(
            params,
            vec![
                ParamSpec {
                    name: "filters".to_owned(),
                    type_name: "object".to_owned(),
                    description: None,
                    required: false,
                    schema: json!({
                        "type": "object",
                        "properties": {
                            "author": { "type": "string" },
                            "since": { "type": "string", "format": "date" }
                        },
                        "required": ["since"]
                    }),
                },
                ParamSpec {
                    name: "limit".to_owned(),
                    type_name: "integer".to_owned(),
                    description: None,
                    required: false,
                    schema: json!({ "type": "integer", "minimum": 1, "default": 10 }),
                },
                ParamSpec {
                    name: "mode".to_owned(),
                    type_name: "string".to_owned(),
                    description: Some("How hard to search.".to_owned()),
                    required: true,
                    schema: json!({
                        "type": "string",
                        "enum": ["fast", "thorough"],
                        "description": "How hard to search."
                    }),
                },
                ParamSpec {
                    name: "query".to_owned(),
                    type_name: "string".to_owned(),
                    description: Some("What to look for.".to_owned()),
                    required: true,
                    schema: json!({ "type": "string", "description": "What to look for." }),
                },
                ParamSpec {
                    name: "tags".to_owned(),
                    type_name: "array".to_owned(),
                    description: None,
                    required: false,
                    schema: json!({ "type": "array", "items": { "type": "string" } }),
                },
            ]
        );
    }

    #[test]
    fn from_json_schema_edge_cases() {
        assert_eq!(
            ParamSpec::from_json_schema(&json!({ "type": "object" })),
            Ok(vec![])
        );
        assert_eq!(ParamSpec::from_json_schema(&json!({})), Ok(vec![]));
        let params = ParamSpec::from_json_schema(&json!({
            "type": "object",
            "properties": {
                "anything": true,
                "maybe": { "type": ["string", "null"] },
                "either": { "type": ["string", "integer"] }
            },
            "required": ["ghost"]
        }))
        .unwrap();
        let summary: Vec<(&str, &str, bool)> = params
            .iter()
            .map(|p| (p.name.as_str(), p.type_name.as_str(), p.required))
            .collect();
        assert_eq!(
            summary,
            [
                ("anything", "any", false),
                ("either", "any", false),
                ("maybe", "string", false),
                ("ghost", "any", true),
            ]
        );
        assert_eq!(params[0].schema, json!(true));
        assert_eq!(params[3].schema, json!({}));
    }

    #[test]
    fn non_object_schemas_are_errors_that_say_what_was_found() {
        let cases = [
            (
                json!("object"),
                r#"expected a JSON Schema object like {"type": "object", "properties": {...}}, found the string "object""#,
            ),
            (
                json!({ "type": "array", "items": {} }),
                r#"`type` must be "object" (tool arguments are an object), found the string "array""#,
            ),
            (
                json!({ "type": "object", "properties": [] }),
                "`properties` must be an object, found an array",
            ),
            (
                json!({ "type": "object", "required": ["a", 1] }),
                "`required` must be an array of strings, found the number 1 in it",
            ),
            (
                json!({ "type": "object", "properties": { "": {} } }),
                "a property has an empty name",
            ),
            (
                json!({ "type": "object", "properties": { "a": 3 } }),
                r#"property "a" must be a JSON Schema (an object or a boolean), found the number 3"#,
            ),
        ];
        for (schema, reason) in cases {
            assert_eq!(
                ParamSpec::from_json_schema(&schema),
                Err(RegistryError::InvalidSchema {
                    name: String::new(),
                    reason: reason.to_owned()
                }),
                "{schema}"
            );
        }
        let err =
            ToolSpec::from_input_schema("search", "", &json!(null), RiskTier::Auto).unwrap_err();
        assert_eq!(
            err.to_string(),
            r#"tool "search" has an invalid input schema: expected a JSON Schema object like {"type": "object", "properties": {...}}, found null"#
        );
    }

    #[test]
    fn local_refs_are_inlined() {
        // The shape pydantic (and so FastMCP servers) emits for a nested model.
        let schema = json!({
            "$defs": {
                "Range": {
                    "type": "object",
                    "properties": { "end": { "$ref": "#/$defs/Day" }, "start": { "$ref": "#/$defs/Day" } }
                },
                "Day": { "type": "string", "format": "date" }
            },
            "type": "object",
            "properties": {
                "default": { "$ref": "#/$defs/Day" },
                "range": { "$ref": "#/$defs/Range", "description": "Dates to cover." },
                "unknown": { "$ref": "https://example.com/schema.json" }
            },
            "required": ["range"]
        });
        let tool = ToolSpec::from_input_schema("report", "", &schema, RiskTier::Auto).unwrap();
        assert_eq!(tool.parameters[1].type_name, "object");
        assert_eq!(
            tool.parameters[1].description.as_deref(),
            Some("Dates to cover.")
        );
        assert_eq!(
            tool.input_schema(),
            json!({
                "type": "object",
                "properties": {
                    "default": { "type": "string", "format": "date" },
                    "range": {
                        "type": "object",
                        "description": "Dates to cover.",
                        "properties": {
                            "end": { "type": "string", "format": "date" },
                            "start": { "type": "string", "format": "date" }
                        }
                    },
                    "unknown": { "$ref": "https://example.com/schema.json" }
                },
                "required": ["range"]
            })
        );
    }

    #[test]
    fn recursive_and_dangling_refs_are_errors() {
        let recursive = json!({
            "$defs": { "Node": { "type": "object", "properties": { "child": { "$ref": "#/$defs/Node" } } } },
            "properties": { "tree": { "$ref": "#/$defs/Node" } }
        });
        assert_eq!(
            ToolSpec::from_input_schema("t", "", &recursive, RiskTier::Auto),
            Err(RegistryError::InvalidSchema {
                name: "t".to_owned(),
                reason: r##"`$ref` "#/$defs/Node" is recursive and cannot be inlined; register the tool with a non-recursive schema"##.to_owned()
            })
        );
        let dangling = json!({ "properties": { "x": { "$ref": "#/definitions/Missing" } } });
        assert_eq!(
            ParamSpec::from_json_schema(&dangling),
            Err(RegistryError::InvalidSchema {
                name: String::new(),
                reason: r##"`$ref` "#/definitions/Missing" points to no definition"##.to_owned()
            })
        );
    }

    #[test]
    fn input_schema_round_trips() {
        let schema = realistic_schema();
        let tool = ToolSpec::from_input_schema("search", "d", &schema, RiskTier::Auto).unwrap();
        assert_eq!(tool.input_schema(), schema);

        let no_required = json!({ "type": "object", "properties": { "a": { "type": "boolean" } } });
        let tool = ToolSpec::from_input_schema("flag", "d", &no_required, RiskTier::Auto).unwrap();
        assert_eq!(tool.input_schema(), no_required);
    }
}
