//! `tools/call` with a wait of its own: no sentence bounds how long a tool may run, so a call
//! waits `--tool-timeout`, and a call that outlives it is not judged. Its timeout is no sign
//! that the server stopped answering (a server that serves one request at a time cannot answer
//! anything meanwhile), so it does not feed what the run learns of stalls.

use std::time::Duration;

use serde_json::Value;

use super::error::ProbeError;
use super::Probe;

impl Probe {
    /// Sends `tools/call` with `params` (in a modern session with its `_meta`) and waits up to
    /// `limit` (never less than `--timeout`) for its response object.
    pub async fn call_tool(&mut self, params: Value, limit: Duration) -> Result<Value, ProbeError> {
        let wait = self.waits.wait;
        self.waits.wait = limit.max(wait);
        self.conversation.tool_call = true;
        let reply = self.request("tools/call", Some(params)).await;
        self.waits.wait = wait;
        self.conversation.tool_call = false;
        reply
    }
}
