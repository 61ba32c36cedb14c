//! What describes a tool: its spec and parameters, its risk tier, what it returns, and the
//! shape a model is handed. Building specs from a JSON Schema
//! ([`ParamSpec::from_json_schema`], [`ToolSpec::from_input_schema`]) is `schema.rs`'s job.

use std::collections::HashSet;

use serde_json::{json, Map, Value};

use super::error::RegistryError;

/// How much a human must be involved before a tool runs.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum RiskTier {
    /// Runs without asking.
    #[default]
    Auto,
    /// Runs without asking; its model description says calls are suggestions (no gate).
    Suggest,
    /// Every call needs a yes from the [`Approver`](super::Approver); no approver means no call.
    Approve,
}

/// One parameter of a tool, as handed to a model.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamSpec {
    pub name: String,
    /// `"string"`, `"integer"`, `"object"`, ... or `"any"` when the schema names no single type.
    pub type_name: String,
    pub description: Option<String>,
    pub required: bool,
    /// The property's full JSON Schema, kept so enums and nested types reach the model.
    pub schema: Value,
}

/// A tool's name, description, parameters and risk tier.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub parameters: Vec<ParamSpec>,
    pub risk: RiskTier,
}

/// What a tool returns to the model. Failures are data: the model reads them and recovers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutput {
    pub text: String,
    pub is_error: bool,
}

/// A tool as handed to a model: {"name", "description", "input_schema"} (Anthropic Messages
/// API tool shape).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ModelTool {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
}

/// Appended to the description of a [`RiskTier::Suggest`] tool in
/// [`ToolRegistry::model_tools`](super::ToolRegistry::model_tools).
pub const SUGGESTION_NOTE: &str =
    "(Suggestion tool: each call is shown to the user as a suggestion for them to review.)";

impl ParamSpec {
    /// A parameter with a plain `{"type": type_name}` schema (`{}` for `"any"`), optional.
    pub fn new(name: impl Into<String>, type_name: impl Into<String>) -> Self {
        let type_name = type_name.into();
        let schema = if type_name == "any" {
            json!({})
        } else {
            json!({ "type": type_name })
        };
        ParamSpec {
            name: name.into(),
            type_name,
            description: None,
            required: false,
            schema,
        }
    }

    /// Sets the description in both the field and the schema, so they cannot disagree.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        let description = description.into();
        if let Value::Object(schema) = &mut self.schema {
            schema.insert("description".to_owned(), Value::String(description.clone()));
        }
        self.description = Some(description);
        self
    }

    pub fn as_required(mut self) -> Self {
        self.required = true;
        self
    }

    /// This parameter's schema for `properties`: `schema`, with `type` and `description`
    /// filled in from the fields where the schema lacks them (hand-built specs may leave
    /// `schema` as `null`).
    fn property_schema(&self) -> Value {
        let mut schema = match &self.schema {
            Value::Object(schema) => schema.clone(),
            // `false` accepts nothing; keep that meaning rather than widen it.
            Value::Bool(false) => return Value::Bool(false),
            _ => Map::new(),
        };
        if self.type_name != "any" && !schema.contains_key("type") {
            schema.insert("type".to_owned(), Value::String(self.type_name.clone()));
        }
        if let Some(description) = &self.description {
            if !schema.contains_key("description") {
                schema.insert("description".to_owned(), Value::String(description.clone()));
            }
        }
        Value::Object(schema)
    }
}

impl ToolSpec {
    /// The JSON Schema built back from `parameters`:
    /// `{"type":"object","properties":{name: schema, ...},"required":[...]}`, without
    /// `required` when no parameter is required.
    pub fn input_schema(&self) -> Value {
        let properties: Map<String, Value> = self
            .parameters
            .iter()
            .map(|p| (p.name.clone(), p.property_schema()))
            .collect();
        let required: Vec<Value> = self
            .parameters
            .iter()
            .filter(|p| p.required)
            .map(|p| Value::String(p.name.clone()))
            .collect();
        let mut schema = Map::new();
        schema.insert("type".to_owned(), json!("object"));
        schema.insert("properties".to_owned(), Value::Object(properties));
        if !required.is_empty() {
            schema.insert("required".to_owned(), Value::Array(required));
        }
        Value::Object(schema)
    }

    /// The description the model sees: risk-tier notes appended.
    pub(super) fn model_description(&self) -> String {
        match self.risk {
            RiskTier::Suggest if self.description.is_empty() => SUGGESTION_NOTE.to_owned(),
            RiskTier::Suggest => format!("{}\n\n{SUGGESTION_NOTE}", self.description),
            RiskTier::Auto | RiskTier::Approve => self.description.clone(),
        }
    }

    /// Parameter names must be present and unique, or `input_schema` would lose one.
    pub(super) fn check_parameters(&self) -> Result<(), RegistryError> {
        let mut seen = HashSet::new();
        for p in &self.parameters {
            let reason = if p.name.is_empty() {
                "a parameter has an empty name".to_owned()
            } else if !seen.insert(p.name.as_str()) {
                format!("parameter {:?} is declared more than once", p.name)
            } else {
                continue;
            };
            return Err(RegistryError::InvalidSchema {
                name: self.name.clone(),
                reason,
            });
        }
        Ok(())
    }
}

impl ToolOutput {
    pub fn ok(text: impl Into<String>) -> Self {
        ToolOutput {
            text: text.into(),
            is_error: false,
        }
    }

    pub fn error(text: impl Into<String>) -> Self {
        ToolOutput {
            text: text.into(),
            is_error: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_schema_of_hand_built_params() {
        let mut bare = ParamSpec::new("n", "integer").as_required();
        bare.schema = Value::Null;
        bare.description = Some("How many.".to_owned());
        let tool = ToolSpec {
            name: "t".to_owned(),
            description: String::new(),
            parameters: vec![
                ParamSpec::new("path", "string").with_description("Where."),
                ParamSpec::new("value", "any"),
                bare,
            ],
            risk: RiskTier::Auto,
        };
        assert_eq!(
            tool.input_schema(),
            json!({
                "type": "object",
                "properties": {
                    "path": { "type": "string", "description": "Where." },
                    "value": {},
                    "n": { "type": "integer", "description": "How many." }
                },
                "required": ["n"]
            })
        );
    }

    #[test]
    fn risk_tier_serializes_lowercase() {
        assert_eq!(
            serde_json::to_value([RiskTier::Auto, RiskTier::Suggest, RiskTier::Approve]).unwrap(),
            json!(["auto", "suggest", "approve"])
        );
        assert_eq!(
            serde_json::from_value::<RiskTier>(json!("approve")).unwrap(),
            RiskTier::Approve
        );
        assert_eq!(RiskTier::default(), RiskTier::Auto);
    }
}
