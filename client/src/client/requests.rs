//! Requests once the connection is ready: any request or notification (with the modern era's
//! `_meta`), and the typed helpers `list_tools` and `call_tool`.

use std::time::Duration;

use mcp_protocol::mcp::{methods, CallToolResult, ListToolsResult, Tool};
use serde::de::DeserializeOwned;
use serde_json::{json, Map, Value};

use super::Client;
use crate::era::{self, Connected};
use crate::error::ClientError;

/// How many pages `list_tools` follows before deciding the server loops.
const MAX_PAGES: usize = 1000;

impl Client {
    /// All tools, following `nextCursor` pages.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, ClientError> {
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        let mut seen = std::collections::HashSet::new();
        for _ in 0..MAX_PAGES {
            let params = cursor.as_ref().map(|c| json!({ "cursor": c }));
            let page: ListToolsResult = decode(
                methods::TOOLS_LIST,
                self.request(methods::TOOLS_LIST, params).await?,
            )?;
            tools.extend(page.tools);
            match page.next_cursor {
                None => return Ok(tools),
                Some(next) if !seen.insert(next.clone()) => {
                    return Err(ClientError::InvalidResult {
                        method: methods::TOOLS_LIST.to_owned(),
                        reason: format!("nextCursor {next:?} was returned twice; the pages loop"),
                    })
                }
                Some(next) => cursor = Some(next),
            }
        }
        Err(ClientError::InvalidResult {
            method: methods::TOOLS_LIST.to_owned(),
            reason: format!("more than {MAX_PAGES} pages"),
        })
    }

    /// `tools/call`. `arguments` must be a JSON object (or null for none). A tool that ran and
    /// failed is `Ok` with `is_error: Some(true)`.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Value,
    ) -> Result<CallToolResult, ClientError> {
        let timeout = self.shared.options.request_timeout;
        self.call_tool_with_timeout(name, arguments, timeout).await
    }

    pub async fn call_tool_with_timeout(
        &self,
        name: &str,
        arguments: Value,
        timeout: Duration,
    ) -> Result<CallToolResult, ClientError> {
        let mut params = Map::new();
        params.insert("name".into(), Value::from(name));
        match arguments {
            Value::Null => {}
            Value::Object(args) => {
                params.insert("arguments".into(), Value::Object(args));
            }
            other => {
                return Err(ClientError::InvalidArguments(format!(
                    "tool arguments must be a JSON object, got {other}"
                )))
            }
        }
        let value = self
            .request_with_timeout(methods::TOOLS_CALL, Some(Value::Object(params)), timeout)
            .await?;
        decode(methods::TOOLS_CALL, value)
    }

    /// Any request (only when ready), with the default timeout. In the modern era its params
    /// get `_meta` (see [`request_with_timeout`](Self::request_with_timeout)).
    pub async fn request(&self, method: &str, params: Option<Value>) -> Result<Value, ClientError> {
        let timeout = self.shared.options.request_timeout;
        self.request_with_timeout(method, params, timeout).await
    }

    /// Any request (only when ready). On timeout `notifications/cancelled` is sent.
    ///
    /// Modern era: `params._meta` gets `io.modelcontextprotocol/protocolVersion`,
    /// `…/clientCapabilities` (`{}`) and `…/clientInfo`; params and `_meta` are created if
    /// absent, and keys the caller put in `_meta` are kept as they are (so a caller can send
    /// another version on purpose). Params that are not an object are
    /// [`ClientError::InvalidArguments`]. A result whose `resultType` is not `"complete"`
    /// (absent counts as complete) is [`ClientError::UnsupportedResultType`]; the value is
    /// returned as the server sent it otherwise.
    pub async fn request_with_timeout(
        &self,
        method: &str,
        params: Option<Value>,
        timeout: Duration,
    ) -> Result<Value, ClientError> {
        self.shared.require_ready(method)?;
        let modern_version = match self.shared.connected.lock().as_ref() {
            Some(Connected::Modern {
                protocol_version, ..
            }) => Some(*protocol_version),
            _ => None,
        };
        let Some(version) = modern_version else {
            return self.shared.call(method, params, timeout, true).await;
        };
        let meta = era::request_meta(version.as_str(), &self.shared.options.client_info);
        let params = era::with_meta(params, meta)
            .map_err(|reason| ClientError::InvalidArguments(reason.to_owned()))?;
        let value = self
            .shared
            .call(method, Some(params), timeout, true)
            .await?;
        if let Some(result_type) = era::incomplete_result_type(&value) {
            return Err(ClientError::UnsupportedResultType {
                method: method.to_owned(),
                result_type,
            });
        }
        Ok(value)
    }

    /// Any notification (only when ready). Sent as given in both eras: notifications carry
    /// no protocol `_meta`.
    pub async fn notify(&self, method: &str, params: Option<Value>) -> Result<(), ClientError> {
        self.shared.require_ready(method)?;
        self.shared.notify_raw(method, params).await
    }
}

pub(super) fn decode<T: DeserializeOwned>(method: &str, value: Value) -> Result<T, ClientError> {
    serde_json::from_value(value).map_err(|e| ClientError::InvalidResult {
        method: method.to_owned(),
        reason: e.to_string(),
    })
}
