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
//! This file is the registry itself. Beside it: `spec.rs` (what describes a tool: [`ToolSpec`],
//! [`ParamSpec`], [`RiskTier`], [`ToolOutput`], [`ModelTool`]), `schema.rs` (an MCP
//! `inputSchema` → parameters, `$ref`s inlined), `names.rs` (the tool-name rule),
//! `approval.rs` (the [`Approver`] gate) and `error.rs` ([`RegistryError`]). None of them
//! imports this file.
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
use serde_json::Value;

mod approval;
mod error;
mod names;
mod schema;
mod spec;

pub use self::approval::{approver, Approver};
pub use self::error::RegistryError;
pub use self::names::MAX_TOOL_NAME_LEN;
pub use self::spec::{ModelTool, ParamSpec, RiskTier, ToolOutput, ToolSpec, SUGGESTION_NOTE};

/// A tool's body: arguments in, output out.
pub type Executor = Arc<dyn Fn(Value) -> BoxFuture<'static, ToolOutput> + Send + Sync>;

/// An [`Executor`] from an async closure.
pub fn executor<F, Fut>(f: F) -> Executor
where
    F: Fn(Value) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ToolOutput> + Send + 'static,
{
    Arc::new(move |args| f(args).boxed())
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
        names::check_name(&spec.name)?;
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
            names::check_name(name)?;
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
            if let Err(denied) = approval::check(self.approver.as_ref(), &entry.spec, &args).await {
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
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use serde_json::json;

    use super::*;

    pub(super) fn spec(name: &str, risk: RiskTier) -> ToolSpec {
        ToolSpec {
            name: name.to_owned(),
            description: format!("The {name} tool."),
            parameters: vec![ParamSpec::new("text", "string").as_required()],
            risk,
        }
    }

    pub(super) fn constant(text: &'static str) -> Executor {
        executor(move |_| async move { ToolOutput::ok(text) })
    }

    /// An executor that counts its calls and echoes its arguments.
    pub(super) fn counting(calls: &Arc<AtomicUsize>) -> Executor {
        let calls = Arc::clone(calls);
        executor(move |args| {
            calls.fetch_add(1, Ordering::SeqCst);
            async move { ToolOutput::ok(format!("ran with {args}")) }
        })
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
}
