//! What checks say to the server: requests (in a modern session with `_meta`), notifications,
//! `initialize` and the whole handshake, a short exercise, and whether it still serves.

use mcp_protocol::mcp::{modern, ProtocolVersion};
use serde_json::{json, Value};

use super::error::ProbeError;
use super::messages::{initialize_params, modern_meta, with_meta};
use super::Probe;
use crate::pattern::short;

impl Probe {
    /// A short session of ordinary and failing requests (answers are the caller's to judge
    /// through [`Probe::inbox`]). It stops at the first request that gets no reply (the wait
    /// ran out, the server closed, a write failed) and says why; a reply that came but cannot
    /// be read is its root cause's business, and the session goes on.
    pub async fn exercise(&mut self) -> Result<(), ProbeError> {
        let call = json!({"name": "mcp-conformance-no-such-tool", "arguments": {}});
        let mut requests = vec![("tools/list", None), ("no/such/method", None)];
        if !self.conversation.no_tool_calls {
            requests.push(("tools/call", Some(call)));
        }
        if !self.is_modern() {
            requests.insert(0, ("ping", None));
        }
        for (method, params) in requests {
            match self.request(method, params).await {
                Ok(_) | Err(ProbeError::Blocked { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Sends a request with a fresh id and returns its whole response object. In a modern
    /// session the request carries the session's `_meta` (unless it has its own).
    pub async fn request(
        &mut self,
        method: &str,
        params: Option<Value>,
    ) -> Result<Value, ProbeError> {
        let params = match &self.conversation.meta {
            Some(meta) => Some(with_meta(params, meta)),
            None => params,
        };
        self.send_request(method, params).await
    }

    /// A 2026-07-28 request: `params._meta` carries the version, empty client capabilities and
    /// the harness's identity ([`modern_meta`]), whatever kind of session this is.
    pub async fn modern_request(
        &mut self,
        method: &str,
        params: Option<Value>,
    ) -> Result<Value, ProbeError> {
        let params = with_meta(params, &modern_meta(ProtocolVersion::LATEST.as_str()));
        self.send_request(method, Some(params)).await
    }

    /// Sends a request exactly as given (no `_meta` added) and returns its response object.
    pub async fn send_request(
        &mut self,
        method: &str,
        params: Option<Value>,
    ) -> Result<Value, ProbeError> {
        let id = json!(self.id());
        let mut msg = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if let Some(p) = params {
            msg["params"] = p;
        }
        self.send(&msg).await?;
        self.response(&id).await
    }

    /// Sends a notification. `notifications/initialized` completes the handshake: from then
    /// on the server owes a reply to every request.
    pub async fn notify(&mut self, method: &str, params: Option<Value>) -> Result<(), ProbeError> {
        self.replies.notified();
        self.conversation.notifications_sent += 1;
        let mut msg = json!({"jsonrpc": "2.0", "method": method});
        if let Some(p) = params {
            msg["params"] = p;
        }
        self.send(&msg).await?;
        if method == "notifications/initialized" {
            self.conversation.operational = true;
        }
        Ok(())
    }

    /// `initialize` with `version`; returns the response object (result or error).
    pub async fn initialize(&mut self, version: &str) -> Result<Value, ProbeError> {
        self.request("initialize", Some(initialize_params(version)))
            .await
    }

    /// `initialize` + `notifications/initialized`; returns the initialize result.
    pub async fn handshake(&mut self, version: &str) -> Result<Value, ProbeError> {
        let reply = self.initialize(version).await?;
        match reply.get("result") {
            Some(result) => {
                let result = result.clone();
                self.notify("notifications/initialized", None).await?;
                Ok(result)
            }
            None => Err(ProbeError::Refused(short(&reply))),
        }
    }

    /// Checks the server still answers: a ping (in a modern session `server/discover`), or
    /// any response to it.
    pub async fn still_serving(&mut self) -> Result<(), ProbeError> {
        let method = if self.is_modern() {
            modern::DISCOVER
        } else {
            "ping"
        };
        self.request(method, None)
            .await
            .map(drop)
            .map_err(|e| ProbeError::StoppedServing(Box::new(e)))
    }
}
