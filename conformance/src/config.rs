//! How a run is done: framing, waits, profile, selection, parallelism, progress.

use std::time::Duration;

use mcp_protocol::Framing;

use crate::check::Profile;

/// Where progress goes while checks run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Progress {
    /// Nothing (`--quiet`, or several targets at once on a terminal).
    #[default]
    Off,
    /// One line rewritten in place: stderr is a terminal.
    Terminal,
    /// One line per finished check, `[12/65] lifecycle.ping PASS 0.2s`: for CI logs.
    Lines,
}

/// How a run is done.
#[derive(Debug, Clone)]
pub struct RunConfig {
    pub framing: Framing,
    /// The bound of each single wait (a reply, an exit) once a process has answered.
    pub wait: Duration,
    /// The bound of each server process's first reply (`--start-timeout`, at least `wait`):
    /// a server started through `npx` or `uvx` may download or compile first.
    pub start_wait: Duration,
    /// The bound of a `tools/call`'s reply (`--tool-timeout`, at least `wait`).
    pub tool_wait: Duration,
    /// Whether read-only tools may be called (`--no-tool-calls` turns it off).
    pub tool_calls: bool,
    /// How many items of each kind are exercised (`--max-items`).
    pub max_items: usize,
    /// The client capabilities the harness declares (`--client-capabilities`).
    pub client_capabilities: Vec<ClientCapability>,
    pub profile: Profile,
    pub max_message_bytes: usize,
    pub only: Vec<String>,
    pub skip: Vec<String>,
    /// `--check-set`: checks added after this version are skipped.
    pub check_set: Option<crate::checkset::Version>,
    /// Checks (or shared sessions) run at once against one target.
    pub jobs: usize,
    pub progress: Progress,
    /// Keep every check's whole transcript for `--transcript` files (else only the report's
    /// head and tail of each process's part).
    pub whole_transcripts: bool,
    /// Progress lines name the target (several are tested at once).
    pub name_in_progress: bool,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            framing: Framing::Ndjson,
            wait: Duration::from_secs(5),
            start_wait: Duration::from_secs(30),
            tool_wait: Duration::from_secs(30),
            tool_calls: true,
            max_items: 5,
            client_capabilities: Vec::new(),
            profile: Profile::Generic,
            max_message_bytes: 64 * 1024 * 1024,
            only: Vec::new(),
            skip: Vec::new(),
            check_set: None,
            jobs: 1,
            progress: Progress::Off,
            whole_transcripts: false,
            name_in_progress: false,
        }
    }
}

impl RunConfig {
    /// The bound of a process's first reply: the start budget, never less than `wait`.
    pub fn first_reply_wait(&self) -> Duration {
        self.start_wait.max(self.wait)
    }
}

/// A client capability the harness can declare, and answer the server's requests for with a
/// fixed reply (`--client-capabilities`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClientCapability {
    Roots,
    Sampling,
    Elicitation,
}

impl ClientCapability {
    /// Its key in `ClientCapabilities`.
    pub fn as_str(self) -> &'static str {
        match self {
            ClientCapability::Roots => "roots",
            ClientCapability::Sampling => "sampling",
            ClientCapability::Elicitation => "elicitation",
        }
    }
}
