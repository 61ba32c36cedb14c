//! The agent's tool registry: every tool a model may call, local or remote, in one place.
//!
//! A local tool (a Rust closure) and a tool of a remote MCP server (an executor that sends
//! `tools/call`) are registered the same way, as a [`ToolSpec`] plus an [`Executor`], so the
//! agent loop and the model cannot tell them apart. Three rules hold for every tool:
//!
//! - **Names are unique.** A second tool under a taken name is an error, never an overwrite;
//!   [`ToolRegistry::check_free`] lets a bridge register a whole server's tools or none.
//! - **Failures are data.** [`ToolRegistry::execute`] never returns `Err` and never panics:
//!   an unknown tool, a denied call or a panicking executor becomes a [`ToolOutput`] with
//!   `is_error` set, which the model reads and recovers from.
//! - **Risk tiers gate calls.** [`RiskTier::Approve`] tools run only after the [`Approver`]
//!   says yes; with no approver configured they never run.
//!
//! ```
//! use mcp_client::registry::{executor, ParamSpec, RiskTier, ToolOutput, ToolRegistry, ToolSpec};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let mut tools = ToolRegistry::new();
//! tools.register(
//!     ToolSpec {
//!         name: "shout".into(),
//!         description: "Upper-cases a text.".into(),
//!         parameters: vec![ParamSpec::new("text", "string")
//!             .with_description("The text to shout.")
//!             .as_required()],
//!         risk: RiskTier::Auto,
//!     },
//!     executor(|args| async move {
//!         match args["text"].as_str() {
//!             Some(text) => ToolOutput::ok(text.to_uppercase()),
//!             None => ToolOutput::error("shout needs {\"text\": \"...\"}"),
//!         }
//!     }),
//! )?;
//! let request_tools = tools.model_tools(); // serialize into the Messages API `tools` field
//! assert_eq!(request_tools[0].name, "shout");
//! let output = tools.execute("shout", serde_json::json!({"text": "hi"})).await;
//! assert_eq!(output, ToolOutput::ok("HI"));
//! # Ok(())
//! # }
//! # futures::executor::block_on(demo()).unwrap();
//! ```

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::future::BoxFuture;
use futures::FutureExt;
use serde_json::{json, Map, Value};

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
    /// Every call needs a yes from the [`Approver`]; no approver means no call.
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

/// A tool's body: arguments in, output out.
pub type Executor = Arc<dyn Fn(Value) -> BoxFuture<'static, ToolOutput> + Send + Sync>;

/// Asked before each call of an `Approve` tool: (spec, arguments) -> allowed?
pub type Approver = Arc<dyn Fn(&ToolSpec, &Value) -> BoxFuture<'static, bool> + Send + Sync>;

/// A tool as handed to a model: {"name", "description", "input_schema"} (Anthropic Messages
/// API tool shape).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ModelTool {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
}

/// Why a tool could not be registered.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RegistryError {
    #[error("a tool named {0:?} is already registered")]
    Duplicate(String),
    #[error(
        "the tool name {0:?} appears more than once in the tools to register; give each tool its own name"
    )]
    DuplicateInBatch(String),
    #[error("{name:?} is not a valid tool name: {reason}")]
    InvalidName { name: String, reason: String },
    #[error("tool {name:?} has an invalid input schema: {reason}")]
    InvalidSchema { name: String, reason: String },
}

/// Appended to the description of a [`RiskTier::Suggest`] tool in [`ToolRegistry::model_tools`].
pub const SUGGESTION_NOTE: &str =
    "(Suggestion tool: each call is shown to the user as a suggestion for them to review.)";

/// Longest tool name the Messages API accepts (`^[a-zA-Z0-9_-]{1,128}$`).
pub const MAX_TOOL_NAME_LEN: usize = 128;

/// `$ref` expansions allowed per schema: a remote server's schema must not blow up memory.
const MAX_REF_EXPANSIONS: usize = 1000;

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
    fn model_description(&self) -> String {
        match self.risk {
            RiskTier::Suggest if self.description.is_empty() => SUGGESTION_NOTE.to_owned(),
            RiskTier::Suggest => format!("{}\n\n{SUGGESTION_NOTE}", self.description),
            RiskTier::Auto | RiskTier::Approve => self.description.clone(),
        }
    }

    /// Parameter names must be present and unique, or `input_schema` would lose one.
    fn check_parameters(&self) -> Result<(), RegistryError> {
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

/// An [`Executor`] from an async closure.
pub fn executor<F, Fut>(f: F) -> Executor
where
    F: Fn(Value) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ToolOutput> + Send + 'static,
{
    Arc::new(move |args| f(args).boxed())
}

/// An [`Approver`] from an async closure that takes owned copies of the spec and arguments
/// (the returned future must be `'static`, so it cannot borrow them).
pub fn approver<F, Fut>(f: F) -> Approver
where
    F: Fn(ToolSpec, Value) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = bool> + Send + 'static,
{
    Arc::new(move |spec, args| f(spec.clone(), args.clone()).boxed())
}

#[derive(Clone)]
struct Entry {
    spec: ToolSpec,
    executor: Executor,
}

/// Local and remote tools, in registration order, with the approval gate.
#[derive(Default, Clone)]
pub struct ToolRegistry {
    tools: Vec<Entry>,
    by_name: HashMap<String, usize>,
    approver: Option<Approver>,
}

impl fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        struct Tools<'a>(&'a [Entry]);
        impl fmt::Debug for Tools<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_map()
                    .entries(self.0.iter().map(|e| (&e.spec.name, e.spec.risk)))
                    .finish()
            }
        }
        f.debug_struct("ToolRegistry")
            .field("tools", &Tools(&self.tools))
            .field("approver", &self.approver.is_some())
            .finish()
    }
}

impl ToolRegistry {
    pub fn new() -> Self {
        ToolRegistry::default()
    }

    /// Registers a tool. Duplicate names are an explicit error (never a silent overwrite);
    /// so are names a model API would reject and duplicate parameter names.
    pub fn register(&mut self, spec: ToolSpec, executor: Executor) -> Result<(), RegistryError> {
        check_name(&spec.name)?;
        if self.by_name.contains_key(&spec.name) {
            return Err(RegistryError::Duplicate(spec.name));
        }
        spec.check_parameters()?;
        self.by_name.insert(spec.name.clone(), self.tools.len());
        self.tools.push(Entry { spec, executor });
        Ok(())
    }

    /// Checks that every one of `names` is valid, free, and listed once, so a bridge can
    /// register a server's tools all or nothing.
    pub fn check_free<'a>(
        &self,
        names: impl IntoIterator<Item = &'a str>,
    ) -> Result<(), RegistryError> {
        let mut seen = HashSet::new();
        for name in names {
            check_name(name)?;
            if self.by_name.contains_key(name) {
                return Err(RegistryError::Duplicate(name.to_owned()));
            }
            if !seen.insert(name) {
                return Err(RegistryError::DuplicateInBatch(name.to_owned()));
            }
        }
        Ok(())
    }

    /// Sets (or replaces) the callback asked before each call of an `Approve` tool.
    pub fn set_approver(&mut self, approver: Approver) {
        self.approver = Some(approver);
    }

    pub fn len(&self) -> usize {
        self.tools.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// Tool names in registration order.
    pub fn names(&self) -> Vec<&str> {
        self.tools.iter().map(|e| e.spec.name.as_str()).collect()
    }

    pub fn spec(&self, name: &str) -> Option<&ToolSpec> {
        self.entry(name).map(|e| &e.spec)
    }

    /// The specs to hand to a model, in registration order.
    pub fn model_tools(&self) -> Vec<ModelTool> {
        self.tools
            .iter()
            .map(|e| ModelTool {
                name: e.spec.name.clone(),
                description: e.spec.model_description(),
                input_schema: e.spec.input_schema(),
            })
            .collect()
    }

    /// Runs a tool and returns what the model should read. Never fails: an unknown tool, a
    /// call that was not approved and a panicking executor are error outputs.
    pub async fn execute(&self, name: &str, args: Value) -> ToolOutput {
        let Some(entry) = self.entry(name) else {
            return self.unknown_tool(name);
        };
        if entry.spec.risk == RiskTier::Approve {
            if let Err(denied) = self.approve(&entry.spec, &args).await {
                return denied;
            }
        }
        let executor = Arc::clone(&entry.executor);
        // The executor is called inside the async block, so a panic before its future
        // exists is caught too.
        match AssertUnwindSafe(async move { executor(args).await })
            .catch_unwind()
            .await
        {
            Ok(output) => output,
            Err(_) => ToolOutput::error(format!("tool {name} failed: panicked")),
        }
    }

    fn entry(&self, name: &str) -> Option<&Entry> {
        self.by_name.get(name).and_then(|&i| self.tools.get(i))
    }

    fn unknown_tool(&self, name: &str) -> ToolOutput {
        if self.tools.is_empty() {
            ToolOutput::error(format!("Unknown tool: {name}. No tools are available."))
        } else {
            ToolOutput::error(format!(
                "Unknown tool: {name}. Available tools: {}",
                self.names().join(", ")
            ))
        }
    }

    /// `Ok` when the approver allows the call; otherwise the output that explains why not.
    async fn approve(&self, spec: &ToolSpec, args: &Value) -> Result<(), ToolOutput> {
        let name = &spec.name;
        let Some(approver) = &self.approver else {
            return Err(ToolOutput::error(format!(
                "Tool {name} was not run: it needs the user's approval and no approver is configured."
            )));
        };
        match AssertUnwindSafe(async { approver(spec, args).await })
            .catch_unwind()
            .await
        {
            Ok(true) => Ok(()),
            Ok(false) => Err(ToolOutput::error(format!(
                "The user denied the call to tool {name}; it was not run. Do not retry it unchanged."
            ))),
            Err(_) => Err(ToolOutput::error(format!(
                "Tool {name} was not run: the approval check failed (panicked)."
            ))),
        }
    }
}

/// A name the Messages API accepts (`^[a-zA-Z0-9_-]{1,128}$`): one bad name there fails every
/// request, so it is refused here, where the caller can still rename the tool.
fn check_name(name: &str) -> Result<(), RegistryError> {
    let reason = if name.is_empty() {
        format!(
            "it is empty; give the tool a name of 1 to {MAX_TOOL_NAME_LEN} characters from A-Z, a-z, 0-9, `_` and `-`"
        )
    } else if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
    {
        format!(
            "it contains {c:?}; model APIs accept only A-Z, a-z, 0-9, `_` and `-` in tool names (replace the others, e.g. with `_`)"
        )
    } else if name.len() > MAX_TOOL_NAME_LEN {
        format!(
            "it is {} characters long; model APIs accept at most {MAX_TOOL_NAME_LEN}",
            name.len()
        )
    } else {
        return Ok(());
    };
    Err(RegistryError::InvalidName {
        name: name.to_owned(),
        reason,
    })
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
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;

    fn spec(name: &str, risk: RiskTier) -> ToolSpec {
        ToolSpec {
            name: name.to_owned(),
            description: format!("The {name} tool."),
            parameters: vec![ParamSpec::new("text", "string").as_required()],
            risk,
        }
    }

    fn constant(text: &'static str) -> Executor {
        executor(move |_| async move { ToolOutput::ok(text) })
    }

    /// An executor that counts its calls and echoes its arguments.
    fn counting(calls: &Arc<AtomicUsize>) -> Executor {
        let calls = Arc::clone(calls);
        executor(move |args| {
            calls.fetch_add(1, Ordering::SeqCst);
            async move { ToolOutput::ok(format!("ran with {args}")) }
        })
    }

    fn fixed_approver(answer: bool) -> Approver {
        approver(move |_, _| async move { answer })
    }

    #[test]
    fn duplicate_name_is_an_error_and_the_first_tool_is_kept() {
        let mut tools = ToolRegistry::new();
        tools
            .register(spec("a", RiskTier::Auto), constant("first"))
            .unwrap();
        let err = tools
            .register(spec("a", RiskTier::Approve), constant("second"))
            .unwrap_err();
        assert_eq!(err, RegistryError::Duplicate("a".to_owned()));
        assert_eq!(err.to_string(), r#"a tool named "a" is already registered"#);
        assert_eq!(tools.len(), 1);
        assert_eq!(tools.spec("a").unwrap().risk, RiskTier::Auto);
    }

    #[tokio::test]
    async fn duplicate_registration_keeps_the_first_executor() {
        let mut tools = ToolRegistry::new();
        tools
            .register(spec("a", RiskTier::Auto), constant("first"))
            .unwrap();
        let _ = tools.register(spec("a", RiskTier::Auto), constant("second"));
        assert_eq!(tools.execute("a", json!({})).await, ToolOutput::ok("first"));
    }

    #[test]
    fn check_free_catches_taken_and_repeated_names() {
        let mut tools = ToolRegistry::new();
        tools
            .register(spec("a", RiskTier::Auto), constant("a"))
            .unwrap();
        assert_eq!(tools.check_free(["b", "c"]), Ok(()));
        assert_eq!(tools.check_free([]), Ok(()));
        assert_eq!(
            tools.check_free(["b", "a"]),
            Err(RegistryError::Duplicate("a".to_owned()))
        );
        let err = tools.check_free(["b", "c", "b"]).unwrap_err();
        assert_eq!(err, RegistryError::DuplicateInBatch("b".to_owned()));
        assert_eq!(
            err.to_string(),
            r#"the tool name "b" appears more than once in the tools to register; give each tool its own name"#
        );
        // Nothing was registered by the checks.
        assert_eq!(tools.names(), ["a"]);
    }

    #[test]
    fn invalid_names_are_refused_by_register_and_check_free() {
        let mut tools = ToolRegistry::new();
        let err = tools
            .register(spec("fs.read", RiskTier::Auto), constant("x"))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            r#""fs.read" is not a valid tool name: it contains '.'; model APIs accept only A-Z, a-z, 0-9, `_` and `-` in tool names (replace the others, e.g. with `_`)"#
        );
        assert!(matches!(
            tools.register(spec("", RiskTier::Auto), constant("x")),
            Err(RegistryError::InvalidName { name, .. }) if name.is_empty()
        ));
        let long = "x".repeat(MAX_TOOL_NAME_LEN + 1);
        assert_eq!(
            tools.check_free(["ok", long.as_str()]),
            Err(RegistryError::InvalidName {
                name: long.clone(),
                reason: "it is 129 characters long; model APIs accept at most 128".to_owned()
            })
        );
        let longest = "x".repeat(MAX_TOOL_NAME_LEN);
        assert_eq!(tools.check_free(["a-b_C9", longest.as_str()]), Ok(()));
        assert!(tools.is_empty());
    }

    #[test]
    fn duplicate_parameter_names_are_refused() {
        let mut tools = ToolRegistry::new();
        let mut twice = spec("t", RiskTier::Auto);
        twice.parameters.push(ParamSpec::new("text", "integer"));
        assert_eq!(
            tools.register(twice, constant("x")),
            Err(RegistryError::InvalidSchema {
                name: "t".to_owned(),
                reason: r#"parameter "text" is declared more than once"#.to_owned()
            })
        );
        assert!(tools.is_empty());
    }

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
    fn model_tools_keep_registration_order_and_shape() {
        let mut tools = ToolRegistry::new();
        for (name, risk) in [
            ("zeta", RiskTier::Auto),
            ("alpha", RiskTier::Suggest),
            ("mid", RiskTier::Approve),
        ] {
            tools.register(spec(name, risk), constant("x")).unwrap();
        }
        assert_eq!(tools.names(), ["zeta", "alpha", "mid"]);
        let text_schema = json!({
            "type": "object",
            "properties": { "text": { "type": "string" } },
            "required": ["text"]
        });
        assert_eq!(
            serde_json::to_value(tools.model_tools()).unwrap(),
            json!([
                { "name": "zeta", "description": "The zeta tool.", "input_schema": text_schema },
                {
                    "name": "alpha",
                    "description": format!("The alpha tool.\n\n{SUGGESTION_NOTE}"),
                    "input_schema": text_schema
                },
                { "name": "mid", "description": "The mid tool.", "input_schema": text_schema }
            ])
        );
    }

    #[tokio::test]
    async fn execute_runs_the_tool_with_its_arguments() {
        let calls = Arc::new(AtomicUsize::new(0));
        let mut tools = ToolRegistry::new();
        tools
            .register(spec("t", RiskTier::Auto), counting(&calls))
            .unwrap();
        let output = tools.execute("t", json!({ "text": "hi" })).await;
        assert_eq!(output, ToolOutput::ok(r#"ran with {"text":"hi"}"#));
        assert!(!output.is_error);
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn tool_errors_pass_through_as_data() {
        let mut tools = ToolRegistry::new();
        tools
            .register(
                spec("t", RiskTier::Auto),
                executor(|_| async { ToolOutput::error("no such file") }),
            )
            .unwrap();
        assert_eq!(
            tools.execute("t", json!({})).await,
            ToolOutput {
                text: "no such file".to_owned(),
                is_error: true
            }
        );
    }

    #[tokio::test]
    async fn unknown_tool_lists_the_available_ones() {
        let mut tools = ToolRegistry::new();
        assert_eq!(
            tools.execute("nope", json!({})).await,
            ToolOutput::error("Unknown tool: nope. No tools are available.")
        );
        tools
            .register(spec("b", RiskTier::Auto), constant("x"))
            .unwrap();
        tools
            .register(spec("a", RiskTier::Auto), constant("x"))
            .unwrap();
        let output = tools.execute("nope", json!({})).await;
        assert_eq!(output.text, "Unknown tool: nope. Available tools: b, a");
        assert!(output.is_error);
    }

    #[tokio::test]
    async fn approve_tool_without_approver_is_not_run() {
        let calls = Arc::new(AtomicUsize::new(0));
        let mut tools = ToolRegistry::new();
        tools
            .register(spec("rm", RiskTier::Approve), counting(&calls))
            .unwrap();
        assert_eq!(
            tools.execute("rm", json!({})).await,
            ToolOutput::error(
                "Tool rm was not run: it needs the user's approval and no approver is configured."
            )
        );
        assert_eq!(calls.load(Ordering::SeqCst), 0);
    }

    #[tokio::test]
    async fn approve_tool_denied_is_not_run() {
        let calls = Arc::new(AtomicUsize::new(0));
        let mut tools = ToolRegistry::new();
        tools
            .register(spec("rm", RiskTier::Approve), counting(&calls))
            .unwrap();
        tools.set_approver(fixed_approver(false));
        assert_eq!(
            tools.execute("rm", json!({})).await,
            ToolOutput::error(
                "The user denied the call to tool rm; it was not run. Do not retry it unchanged."
            )
        );
        assert_eq!(calls.load(Ordering::SeqCst), 0);
    }

    #[tokio::test]
    async fn approve_tool_approved_runs_once() {
        let calls = Arc::new(AtomicUsize::new(0));
        let mut tools = ToolRegistry::new();
        tools
            .register(spec("rm", RiskTier::Approve), counting(&calls))
            .unwrap();
        tools.set_approver(fixed_approver(true));
        assert_eq!(
            tools.execute("rm", json!({ "text": "x" })).await,
            ToolOutput::ok(r#"ran with {"text":"x"}"#)
        );
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn approver_receives_the_spec_and_arguments() {
        let seen: Arc<Mutex<Vec<(ToolSpec, Value)>>> = Arc::default();
        let mut tools = ToolRegistry::new();
        tools
            .register(spec("rm", RiskTier::Approve), constant("done"))
            .unwrap();
        let log = Arc::clone(&seen);
        tools.set_approver(Arc::new(move |spec: &ToolSpec, args: &Value| {
            log.lock().unwrap().push((spec.clone(), args.clone()));
            async { true }.boxed()
        }));
        tools.execute("rm", json!({ "text": "/tmp/x" })).await;
        let seen = seen.lock().unwrap();
        assert_eq!(
            *seen,
            [(spec("rm", RiskTier::Approve), json!({ "text": "/tmp/x" }))]
        );
    }

    #[tokio::test]
    async fn only_approve_tools_ask_the_approver() {
        let asked = Arc::new(AtomicUsize::new(0));
        let calls = Arc::new(AtomicUsize::new(0));
        let mut tools = ToolRegistry::new();
        tools
            .register(spec("auto", RiskTier::Auto), counting(&calls))
            .unwrap();
        tools
            .register(spec("suggest", RiskTier::Suggest), counting(&calls))
            .unwrap();
        let counter = Arc::clone(&asked);
        tools.set_approver(approver(move |_, _| {
            counter.fetch_add(1, Ordering::SeqCst);
            async { false }
        }));
        assert!(!tools.execute("auto", json!({})).await.is_error);
        assert_eq!(
            tools.execute("suggest", json!({})).await,
            ToolOutput::ok("ran with {}")
        );
        assert_eq!(calls.load(Ordering::SeqCst), 2);
        assert_eq!(asked.load(Ordering::SeqCst), 0);
    }

    #[tokio::test]
    async fn suggest_tool_runs_without_an_approver() {
        let calls = Arc::new(AtomicUsize::new(0));
        let mut tools = ToolRegistry::new();
        tools
            .register(spec("s", RiskTier::Suggest), counting(&calls))
            .unwrap();
        assert_eq!(
            tools.execute("s", json!({})).await,
            ToolOutput::ok("ran with {}")
        );
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn panicking_executor_gives_an_error_output() {
        let mut tools = ToolRegistry::new();
        tools
            .register(
                spec("in_future", RiskTier::Auto),
                executor(|_| async { panic!("boom") }),
            )
            .unwrap();
        let before_future: Executor = Arc::new(|_| panic!("boom before the future"));
        tools
            .register(spec("in_call", RiskTier::Auto), before_future)
            .unwrap();
        tools
            .register(spec("fine", RiskTier::Auto), constant("ok"))
            .unwrap();
        assert_eq!(
            tools.execute("in_future", json!({})).await,
            ToolOutput::error("tool in_future failed: panicked")
        );
        assert_eq!(
            tools.execute("in_call", json!({})).await,
            ToolOutput::error("tool in_call failed: panicked")
        );
        // The registry is still usable afterwards.
        assert_eq!(tools.execute("fine", json!({})).await, ToolOutput::ok("ok"));
    }

    #[tokio::test]
    async fn panicking_approver_denies_the_call() {
        let calls = Arc::new(AtomicUsize::new(0));
        let mut tools = ToolRegistry::new();
        tools
            .register(spec("rm", RiskTier::Approve), counting(&calls))
            .unwrap();
        tools.set_approver(approver(|_, _| async { panic!("approver bug") }));
        assert_eq!(
            tools.execute("rm", json!({})).await,
            ToolOutput::error("Tool rm was not run: the approval check failed (panicked).")
        );
        assert_eq!(calls.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn debug_lists_names_and_tiers() {
        let mut tools = ToolRegistry::new();
        tools
            .register(spec("b", RiskTier::Approve), constant("x"))
            .unwrap();
        tools
            .register(spec("a", RiskTier::Auto), constant("x"))
            .unwrap();
        assert_eq!(
            format!("{tools:?}"),
            r#"ToolRegistry { tools: {"b": Approve, "a": Auto}, approver: false }"#
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
