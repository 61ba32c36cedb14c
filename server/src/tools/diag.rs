//! The diagnostic tools (`mcp-echo-server --diagnostic`): each makes the client exercise one
//! feature when a person asks a host to call it. What may be sent to the client, and how
//! (legacy server requests or 2026-07-28 input requests, log levels, progress tokens), is the
//! core's decision ([`Peer::notify`], [`Peer::request`]); these tools only ask and report.

use std::time::Duration;

use futures::FutureExt;
use mcp_protocol::mcp::{self, CallToolResult, ContentBlock, ToolAnnotations};
use serde_json::{json, Map, Value};

use super::{Tool, ToolCall, ToolSet};
use crate::peer::{Peer, PeerError, Withheld};

/// A 16×16 checkerboard PNG (93 bytes), base64.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAIAAACQkWg2AAAAJElEQVR42mOQq7CBo/8VJ+AIlzjDINRAjCJk8cGoYTQeBoUGADbHiJAITDAzAAAAAElFTkSuQmCC";

/// The log levels `diag_log` sends, lowest first (RFC 5424, `server/utilities/logging.mdx`).
const LEVELS: [&str; 8] = mcp::modern::LOG_LEVELS;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Progress,
    Slow,
    Log,
    Sampling,
    Elicitation,
    Roots,
    ListChanged,
    Extra,
    Error,
    Large,
    Image,
}

/// One diagnostic tool.
struct Diag {
    kind: Kind,
    definition: mcp::Tool,
}

/// An integer argument: its range and default.
struct IntArg {
    name: &'static str,
    min: u64,
    max: u64,
    default: u64,
    description: &'static str,
}

const STEPS: IntArg = IntArg {
    name: "steps",
    min: 1,
    max: 20,
    default: 5,
    description: "How many progress notifications to send (1-20, default 5).",
};
const DELAY_MS: IntArg = IntArg {
    name: "delay_ms",
    min: 0,
    max: 2000,
    default: 200,
    description: "Milliseconds between notifications (0-2000, default 200).",
};
const SECONDS: IntArg = IntArg {
    name: "seconds",
    min: 1,
    max: 300,
    default: 30,
    description: "How long to wait, in seconds (1-300, default 30).",
};
const KIB: IntArg = IntArg {
    name: "kib",
    min: 1,
    max: 1024,
    default: 256,
    description: "The size of the text, in KiB (1-1024, default 256).",
};

/// Name, description, and integer arguments of each tool.
fn spec(kind: Kind) -> (&'static str, &'static str, &'static [IntArg]) {
    match kind {
        Kind::Progress => ("diag_progress", "Diagnostic: sends progress notifications (notifications/progress) for this call's progressToken, with increasing progress and a total, then returns. Checks that the client shows progress.", &[STEPS, DELAY_MS]),
        Kind::Slow => ("diag_slow", "Diagnostic: waits the given number of seconds, then returns. Cancel it in the client to check that the client sends notifications/cancelled: the server then stops and sends no response.", &[SECONDS]),
        Kind::Log => ("diag_log", "Diagnostic: sends one log message (notifications/message) at every level, debug to emergency, honouring the level the client set. Checks that the client receives and filters logs.", &[]),
        Kind::Sampling => ("diag_sampling", "Diagnostic: asks the client to sample an LLM (sampling/createMessage) and returns what the client answered. Checks the client's sampling support.", &[]),
        Kind::Elicitation => ("diag_elicitation", "Diagnostic: asks the user, through the client, for a name (elicitation/create, form mode) and returns what the client answered. Checks the client's elicitation support.", &[]),
        Kind::Roots => ("diag_roots", "Diagnostic: asks the client for its roots (roots/list) and returns what it answered. Checks the client's roots support.", &[]),
        Kind::ListChanged => ("diag_tool_list_changed", "Diagnostic: adds the tool diag_extra (or removes it if present) and sends notifications/tools/list_changed. Checks that the client refreshes its tool list.", &[]),
        Kind::Extra => (EXTRA, "Diagnostic: present only after diag_tool_list_changed added it. Returns a short text.", &[]),
        Kind::Error => ("diag_error", "Diagnostic: always fails with a tool error (isError: true). Checks that the client shows tool errors.", &[]),
        Kind::Large => ("diag_large", "Diagnostic: returns one text block of the given size. Checks that the client handles large results.", &[KIB]),
        Kind::Image => ("diag_image", "Diagnostic: returns a small PNG image (16x16 checkerboard) as an image content block. Checks that the client shows images.", &[]),
    }
}

const KINDS: [Kind; 11] = [
    Kind::Progress,
    Kind::Slow,
    Kind::Log,
    Kind::Sampling,
    Kind::Elicitation,
    Kind::Roots,
    Kind::ListChanged,
    Kind::Extra,
    Kind::Error,
    Kind::Large,
    Kind::Image,
];

/// The tool `diag_tool_list_changed` adds and removes.
const EXTRA: &str = "diag_extra";

/// Registers every diagnostic tool (`diag_extra` not offered until a connection adds it).
pub(super) fn register(tools: &mut ToolSet) {
    for kind in KINDS {
        let diag = Diag {
            kind,
            definition: definition(kind),
        };
        // The diagnostic names are not taken by `echo`.
        let _ = tools.register(diag);
    }
}

fn definition(kind: Kind) -> mcp::Tool {
    let (name, description, args) = spec(kind);
    let properties: Map<String, Value> = args
        .iter()
        .map(|a| {
            let schema = json!({"type": "integer", "minimum": a.min, "maximum": a.max,
                "default": a.default, "description": a.description});
            (a.name.to_owned(), schema)
        })
        .collect();
    let read_only = !matches!(kind, Kind::ListChanged);
    mcp::Tool {
        name: name.to_owned(),
        title: None,
        description: Some(description.to_owned()),
        input_schema: json!({"type": "object", "properties": properties,
            "additionalProperties": false}),
        output_schema: None,
        annotations: Some(ToolAnnotations {
            title: None,
            read_only_hint: Some(read_only),
            destructive_hint: Some(false),
            idempotent_hint: Some(read_only),
            open_world_hint: Some(false),
        }),
    }
}

/// The integer arguments, each checked against its range; an `isError` result that says
/// which argument is wrong otherwise.
fn read_args(kind: Kind, arguments: &Map<String, Value>) -> Result<Vec<u64>, CallToolResult> {
    let (name, _, args) = spec(kind);
    if let Some(unknown) = arguments
        .keys()
        .find(|k| !args.iter().any(|a| a.name == k.as_str()))
    {
        let known: Vec<&str> = args.iter().map(|a| a.name).collect();
        return Err(CallToolResult::error(format!(
            "Invalid arguments for tool {name}: unexpected property `{}`; it accepts {}.",
            crate::error::shown(unknown),
            if known.is_empty() {
                "no arguments".to_owned()
            } else {
                known.join(", ")
            }
        )));
    }
    args.iter()
        .map(|a| match arguments.get(a.name) {
            None => Ok(a.default),
            Some(v) => v.as_u64().filter(|n| (a.min..=a.max).contains(n)).ok_or_else(|| {
                CallToolResult::error(format!(
                    "Invalid arguments for tool {name}: `{}` must be an integer from {} to {}, got {}.",
                    a.name, a.min, a.max, crate::error::shown(&v.to_string())
                ))
            }),
        })
        .collect()
}

impl Tool for Diag {
    fn definition(&self) -> &mcp::Tool {
        &self.definition
    }

    fn listed(&self) -> bool {
        self.kind != Kind::Extra
    }

    fn call(&self, arguments: Map<String, Value>) -> ToolCall {
        let args = match read_args(self.kind, &arguments) {
            Ok(args) => args,
            Err(invalid) => return ToolCall::Ready(invalid),
        };
        let arg = |i: usize| args.get(i).copied().unwrap_or(0);
        match self.kind {
            Kind::Progress => {
                let (steps, delay) = (arg(0), arg(1));
                asking(move |peer| progress(peer, steps, delay))
            }
            Kind::Slow => ToolCall::Pending(slow(arg(0)).boxed()),
            Kind::Log => asking(log),
            Kind::Sampling => asking(|peer| ask(peer, "sampling/createMessage", sampling())),
            Kind::Elicitation => asking(|peer| ask(peer, "elicitation/create", elicitation())),
            Kind::Roots => asking(|peer| ask(peer, "roots/list", None)),
            Kind::ListChanged => asking(toggle),
            Kind::Extra => ToolCall::Ready(CallToolResult::text(
                "diag_extra was added by diag_tool_list_changed; call that tool again to remove it.",
            )),
            Kind::Error => ToolCall::Ready(CallToolResult::error(
                "This is a deliberate tool error from diag_error (isError: true): nothing went wrong. \
                 A client should show it as a failed tool call, not as a protocol error.",
            )),
            Kind::Large => ToolCall::Ready(large(arg(0))),
            Kind::Image => ToolCall::Ready(image()),
        }
    }
}

fn asking<F, Fut>(work: F) -> ToolCall
where
    F: FnOnce(Peer) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = CallToolResult> + Send + 'static,
{
    ToolCall::Asking(Box::new(move |peer| work(peer).boxed()))
}

async fn progress(peer: Peer, steps: u64, delay_ms: u64) -> CallToolResult {
    for step in 1..=steps {
        if step > 1 && delay_ms > 0 {
            tokio::time::sleep(Duration::from_millis(delay_ms)).await;
        }
        let params = json!({"progress": step, "total": steps,
            "message": format!("diag_progress: step {step} of {steps}")});
        match peer.notify("notifications/progress", Some(params)).await {
            Ok(()) => {}
            Err(PeerError::Withheld(Withheld::NoProgressToken)) => {
                return CallToolResult::text(
                    "No progress token was given: the request's _meta had no progressToken, so no \
                     progress notifications were sent. A client that shows progress sends one.",
                )
            }
            Err(e) => {
                return CallToolResult::error(format!(
                    "Progress notification {step} of {steps} could not be sent: {e}."
                ))
            }
        }
    }
    CallToolResult::text(format!(
        "Sent {steps} progress notifications (progress 1 to {steps}, total {steps}) for the request's progressToken."
    ))
}

async fn slow(seconds: u64) -> CallToolResult {
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    CallToolResult::text(format!(
        "Waited {seconds} s and was not cancelled. To check cancellation, cancel the call in the client before it returns: the server then stops and sends no response."
    ))
}

async fn log(peer: Peer) -> CallToolResult {
    let mut sent = Vec::new();
    // Levels not sent, grouped by why.
    let mut withheld: Vec<(Withheld, Vec<&str>)> = Vec::new();
    for level in LEVELS {
        let params = json!({"level": level, "logger": "diag_log",
            "data": format!("diag_log: a message at level {level}")});
        match peer.notify("notifications/message", Some(params)).await {
            Ok(()) => sent.push(level),
            Err(PeerError::Withheld(why)) => match withheld.iter_mut().find(|(w, _)| *w == why) {
                Some((_, levels)) => levels.push(level),
                None => withheld.push((why, vec![level])),
            },
            Err(e) => {
                return CallToolResult::error(format!("Log messages could not be sent: {e}."))
            }
        }
    }
    let mut text = if sent.is_empty() {
        "Sent no log message.".to_owned()
    } else {
        format!(
            "Sent log messages (notifications/message) at: {}.",
            sent.join(", ")
        )
    };
    for (why, levels) in withheld {
        text.push_str(&format!(" Not sent at {}: {why}.", levels.join(", ")));
    }
    CallToolResult::text(text)
}

fn sampling() -> Option<Value> {
    Some(json!({
        "messages": [{"role": "user", "content": {"type": "text",
            "text": "This is a test from the diag_sampling tool of mcp-echo-server. Reply with one short sentence."}}],
        "maxTokens": 100,
    }))
}

fn elicitation() -> Option<Value> {
    Some(json!({
        "message": "The diag_elicitation tool of mcp-echo-server asks for a name, to check that this client supports elicitation.",
        "requestedSchema": {"type": "object",
            "properties": {"name": {"type": "string", "description": "Any name"}},
            "required": ["name"]},
    }))
}

/// Sends `method` to the client and reports its answer.
async fn ask(peer: Peer, method: &'static str, params: Option<Value>) -> CallToolResult {
    match peer.request(method, params).await {
        Ok(answer) => CallToolResult {
            content: vec![ContentBlock::text(format!(
                "The client answered {method} with: {answer}"
            ))],
            structured_content: None,
            is_error: None,
        },
        Err(PeerError::NotDeclared(capability, _)) => CallToolResult::error(format!(
            "The client did not declare the {capability} capability in initialize (or, in 2026-07-28, \
             in the request's _meta io.modelcontextprotocol/clientCapabilities), so the server may not \
             send {method}."
        )),
        Err(e) => CallToolResult::error(format!("{method} got no result: {e}.")),
    }
}

/// Adds or removes `diag_extra` on this connection only (for 2026-07-28 requests over HTTP,
/// which share no connection: server-wide), and tells the client.
async fn toggle(peer: Peer) -> CallToolResult {
    let listed = match peer.toggle_tool(EXTRA).await {
        Ok(listed) => listed,
        Err(e) => return CallToolResult::error(format!("The tool list could not change: {e}.")),
    };
    let change = if listed {
        "added the tool diag_extra"
    } else {
        "removed the tool diag_extra"
    };
    match peer
        .notify("notifications/tools/list_changed", None)
        .await
    {
        Ok(()) => CallToolResult::text(format!(
            "diag_tool_list_changed {change} and sent notifications/tools/list_changed; the client should list tools again. Call it again to undo."
        )),
        Err(PeerError::Withheld(why)) => CallToolResult::text(format!(
            "diag_tool_list_changed {change}, but notifications/tools/list_changed was not sent: {why}."
        )),
        Err(e) => CallToolResult::text(format!(
            "diag_tool_list_changed {change}, but notifications/tools/list_changed was not sent: {e}."
        )),
    }
}

fn large(kib: u64) -> CallToolResult {
    const LINE: &str = "diag_large: 64 bytes of filler text to make a large result.....\n";
    let lines = usize::try_from(kib * 1024 / LINE.len() as u64).unwrap_or(0);
    CallToolResult::text(LINE.repeat(lines))
}

fn image() -> CallToolResult {
    CallToolResult {
        content: vec![ContentBlock::Image {
            data: PNG.to_owned(),
            mime_type: "image/png".to_owned(),
        }],
        structured_content: None,
        is_error: None,
    }
}
