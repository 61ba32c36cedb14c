//! Tools: the [`Tool`] trait, the [`ToolSet`], and the built-in `echo`.

mod diag;
mod echo;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::Arc;

use futures::future::BoxFuture;
use mcp_protocol::mcp::{self, CallToolResult, ProtocolVersion};
use serde_json::{Map, Value};

pub use self::echo::Echo;
use crate::peer::Peer;

/// The outcome of starting a tool call.
pub enum ToolCall {
    /// Finished at once: answered inline, with no task spawned (the fast path).
    Ready(CallToolResult),
    /// Still running: the transport runs it, and `notifications/cancelled` can abort it.
    Pending(BoxFuture<'static, CallToolResult>),
    /// Still running, and it sends requests to the client through the [`Peer`] it is given.
    Asking(Box<dyn FnOnce(Peer) -> BoxFuture<'static, CallToolResult> + Send>),
}

impl fmt::Debug for ToolCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolCall::Ready(r) => f.debug_tuple("Ready").field(r).finish(),
            ToolCall::Pending(_) => f.write_str("Pending(..)"),
            ToolCall::Asking(_) => f.write_str("Asking(..)"),
        }
    }
}

/// A tool the server exposes.
pub trait Tool: Send + Sync + 'static {
    /// The full definition; fields a negotiated version lacks are removed by the tool set.
    fn definition(&self) -> &mcp::Tool;

    /// Runs the tool. Arguments that fail the input schema are a result with `isError: true`
    /// and a message a model can act on, never a JSON-RPC error.
    fn call(&self, arguments: Map<String, Value>) -> ToolCall;

    /// Whether a connection starts with this tool offered; one that is not is neither listed
    /// nor callable until a call offers it ([`Peer::toggle_tool`]: a tool list that changes,
    /// `server/tools.mdx` List Changed Notification).
    fn listed(&self) -> bool {
        true
    }
}

/// Registering a second tool under a name already taken.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("a tool named {0:?} is already registered")]
pub struct DuplicateTool(pub String);

/// The tools a server offers, in registration order.
#[derive(Default)]
pub struct ToolSet {
    tools: Vec<Arc<dyn Tool>>,
    /// A tree, not a hash map: hashing the name with SipHash cost more than a few `memcmp`s
    /// (2 % of an echo call).
    by_name: BTreeMap<String, usize>,
    /// The diagnostic tools are registered: the server declares `logging` and
    /// `tools.listChanged`, and keeps what each call's request said about itself.
    diagnostic: bool,
}

impl fmt::Debug for ToolSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.tools.iter().map(|t| &t.definition().name))
            .finish()
    }
}

impl ToolSet {
    pub fn new() -> Self {
        ToolSet::default()
    }

    pub fn register(&mut self, tool: impl Tool) -> Result<(), DuplicateTool> {
        let name = tool.definition().name.clone();
        if self.by_name.contains_key(&name) {
            return Err(DuplicateTool(name));
        }
        self.by_name.insert(name, self.tools.len());
        self.tools.push(Arc::new(tool));
        Ok(())
    }

    /// The tool `name` as a connection starts ([`Tool::listed`]).
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.get_offered(name, &BTreeSet::new())
    }

    /// The tool `name` if offered on a connection that `toggled` these tools.
    pub(crate) fn get_offered(
        &self,
        name: &str,
        toggled: &BTreeSet<String>,
    ) -> Option<&Arc<dyn Tool>> {
        self.by_name
            .get(name)
            .map(|&i| &self.tools[i])
            .filter(|t| t.listed() != toggled.contains(name))
    }

    /// Whether `name` is a tool offered on a connection that `toggled` these tools.
    pub(crate) fn listed(&self, name: &str, toggled: &BTreeSet<String>) -> bool {
        self.get_offered(name, toggled).is_some()
    }

    /// Whether the diagnostic tools are registered ([`diagnostic_tools`]).
    pub fn is_diagnostic(&self) -> bool {
        self.diagnostic
    }

    /// The definitions as `version` defines them, of the tools a connection starts with.
    pub fn definitions(&self, version: ProtocolVersion) -> Vec<mcp::Tool> {
        self.offered(version, &BTreeSet::new())
    }

    /// The definitions of the tools offered on a connection that `toggled` these tools.
    pub(crate) fn offered(
        &self,
        version: ProtocolVersion,
        toggled: &BTreeSet<String>,
    ) -> Vec<mcp::Tool> {
        self.tools
            .iter()
            .filter(|t| t.listed() != toggled.contains(&t.definition().name))
            .map(|t| t.definition().for_version(version))
            .collect()
    }
}

/// `echo` and the diagnostic tools (`mcp-echo-server --diagnostic`): each makes the client
/// exercise one feature on request (progress, cancellation, logging, sampling, elicitation,
/// roots, list changes, error, large and image results).
pub fn diagnostic_tools() -> ToolSet {
    let mut tools = default_tools();
    diag::register(&mut tools);
    tools.diagnostic = true;
    tools
}

/// The tools of the `mcp-echo-server` binary: just `echo`.
pub fn default_tools() -> ToolSet {
    let mut tools = ToolSet::new();
    // A fresh set has no names taken.
    let _ = tools.register(Echo::new());
    tools
}
