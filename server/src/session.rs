//! One connection's lifecycle and method dispatch (legacy era, `basic/lifecycle.mdx`).
//!
//! `AwaitingInit --initialize--> Initialized --notifications/initialized--> Ready`.
//! `ping` is answered in every state; `tools/*` only when ready, so a client that skips a
//! handshake step is told which one.

use std::sync::Arc;

use futures::future::BoxFuture;
use futures::FutureExt;
use mcp_protocol::mcp::{
    methods, modern, CallToolParams, CallToolResult, CancelledParams, Implementation,
    InitializeParams, InitializeResult, ListToolsParams, ListToolsResult, ProtocolVersion,
    ServerCapabilities, ToolsCapability,
};
use mcp_protocol::{Message, Notification, Outgoing, Request, RequestId, Response};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::error::ServerError;
use crate::info::ServerInfo;
use crate::params::ServerParams;
use crate::tools::{ToolCall, ToolSet};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    AwaitingInit,
    /// `initialize` was answered; waiting for `notifications/initialized`.
    Initialized(ProtocolVersion),
    Ready(ProtocolVersion),
}

/// What the I/O loop must do with a message.
pub enum Dispatch {
    /// Nothing to send: a notification or a response.
    Nothing,
    /// Send this now: a response, or a tool's result in its typed form.
    Reply(Outgoing),
    /// Run this to completion, then send its response, unless cancelled first.
    Pending(RequestId, BoxFuture<'static, Response>),
    /// `notifications/cancelled` for this request: abort it and send nothing for it.
    Cancel(RequestId),
}

impl std::fmt::Debug for Dispatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Dispatch::Nothing => f.write_str("Nothing"),
            Dispatch::Reply(r) => f.debug_tuple("Reply").field(r).finish(),
            Dispatch::Pending(id, _) => f.debug_tuple("Pending").field(id).finish(),
            Dispatch::Cancel(id) => f.debug_tuple("Cancel").field(id).finish(),
        }
    }
}

/// The per-connection protocol state. Not shared: the I/O loop owns it and feeds it messages
/// in arrival order, so lifecycle transitions need no locking.
#[derive(Debug)]
pub struct Session {
    state: State,
    tools: Arc<ToolSet>,
    info: ServerInfo,
    /// `info` as modern result `_meta` carries it: built once, not per request.
    modern_info: Value,
}

impl Session {
    pub fn new(tools: Arc<ToolSet>, info: ServerInfo) -> Self {
        let modern_info = crate::modern::server_info(&info);
        Session {
            state: State::AwaitingInit,
            tools,
            info,
            modern_info,
        }
    }

    /// The negotiated version, once `initialize` was answered.
    pub fn version(&self) -> Option<ProtocolVersion> {
        match self.state {
            State::AwaitingInit => None,
            State::Initialized(v) | State::Ready(v) => Some(v),
        }
    }

    pub fn is_ready(&self) -> bool {
        matches!(self.state, State::Ready(_))
    }

    pub fn handle(&mut self, message: Message<ServerParams>) -> Dispatch {
        match message {
            Message::Request(req) => self.request(req),
            Message::Notification(n) => self.notification(n),
            Message::Response(r) => {
                // This server sends no requests, so no response can be expected.
                tracing::warn!(id = ?r.id.as_ref().map(crate::error::shown_id), "ignoring a response sent to the server: it sends no requests");
                Dispatch::Nothing
            }
        }
    }

    fn request(&mut self, req: Request<ServerParams>) -> Dispatch {
        let Request { id, method, params } = req;
        // `initialize` is legacy by definition; anything else with a protocol version in
        // `_meta` is a modern request, served statelessly whatever the legacy state.
        let outcome = match crate::modern::check_meta(params.as_ref().and_then(ServerParams::meta))
        {
            Some(meta) if method != methods::INITIALIZE => {
                meta.and_then(|()| self.modern(&method, params))
            }
            _ => self.legacy(method, params),
        };
        match outcome {
            Ok(Outcome::Done(value)) => Dispatch::Reply(Response::success(id, value).into()),
            Ok(Outcome::Tool(result)) => Dispatch::Reply(Outgoing::ToolResult(id, result)),
            Ok(Outcome::Running(work)) => {
                let reply_id = id.clone();
                Dispatch::Pending(
                    id,
                    work.map(move |v| Response::success(reply_id, v)).boxed(),
                )
            }
            Err(e) => Dispatch::Reply(Response::error(Some(id), e.to_error_object()).into()),
        }
    }

    /// The legacy era: the `initialize` handshake, then tools (`basic/lifecycle.mdx`).
    fn legacy(
        &mut self,
        method: String,
        params: Option<ServerParams>,
    ) -> Result<Outcome, ServerError> {
        match method.as_str() {
            methods::PING => Ok(Outcome::Done(Value::Object(Map::new()))),
            methods::INITIALIZE => self.initialize(&method, params).map(Outcome::Done),
            methods::TOOLS_LIST => {
                let version = self.ready_version(&method)?;
                self.list_tools(&method, params, version).map(Outcome::Done)
            }
            methods::TOOLS_CALL => {
                let version = self.ready_version(&method)?;
                self.call_tool(&method, params, version)
            }
            modern::DISCOVER => Err(ServerError::DiscoverWithoutMeta),
            _ => Err(ServerError::MethodNotFound(method)),
        }
    }

    /// The modern era (2026-07-28): no handshake; results tagged `resultType: "complete"` with
    /// the server's identity in `_meta`, and cache hints on `server/discover` and `tools/list`.
    fn modern(&self, method: &str, params: Option<ServerParams>) -> Result<Outcome, ServerError> {
        let info = &self.modern_info;
        let latest = ProtocolVersion::LATEST;
        match method {
            modern::DISCOVER => {
                let result = crate::modern::discover(self.info.instructions.as_deref());
                Ok(Outcome::Done(crate::modern::complete(result, info, true)))
            }
            methods::TOOLS_LIST => {
                let result = self.list_tools(method, params, latest)?;
                Ok(Outcome::Done(crate::modern::complete(result, info, true)))
            }
            methods::TOOLS_CALL => Ok(match self.call_tool(method, params, latest)? {
                Outcome::Done(v) => Outcome::Done(crate::modern::complete(v, info, false)),
                Outcome::Tool(r) => {
                    Outcome::Done(crate::modern::complete(r.into_value(), info, false))
                }
                Outcome::Running(work) => {
                    let info = info.clone();
                    Outcome::Running(
                        work.map(move |v| crate::modern::complete(v, &info, false))
                            .boxed(),
                    )
                }
            }),
            methods::PING | "logging/setLevel" => {
                Err(ServerError::RemovedInModern(method.to_owned()))
            }
            other => Err(ServerError::MethodNotFound(other.to_owned())),
        }
    }

    fn notification(&mut self, n: Notification<ServerParams>) -> Dispatch {
        match n.method.as_str() {
            methods::INITIALIZED => match self.state {
                State::Initialized(v) => {
                    self.state = State::Ready(v);
                    tracing::debug!(version = %v, "client initialized; ready");
                }
                State::Ready(_) => tracing::debug!("duplicate notifications/initialized ignored"),
                State::AwaitingInit => {
                    tracing::warn!("notifications/initialized before initialize: ignored")
                }
            },
            methods::CANCELLED => {
                match n
                    .params
                    .map(|p| serde_json::from_value::<CancelledParams>(p.into_value()))
                    .transpose()
                {
                    Ok(Some(p)) => return Dispatch::Cancel(p.request_id),
                    // "Invalid cancellation notifications SHOULD be ignored."
                    _ => tracing::debug!("invalid notifications/cancelled ignored"),
                }
            }
            other => tracing::debug!(method = other, "unknown notification ignored"),
        }
        Dispatch::Nothing
    }

    fn initialize(
        &mut self,
        method: &str,
        params: Option<ServerParams>,
    ) -> Result<Value, ServerError> {
        if let Some(v) = self.version() {
            return Err(ServerError::AlreadyInitialized(v));
        }
        let params: InitializeParams = parse_params(method, params)?;
        // Version negotiation (`lifecycle.mdx`): the client's if supported, else our latest.
        let version =
            ProtocolVersion::parse(&params.protocol_version).unwrap_or(ProtocolVersion::LATEST);
        tracing::info!(
            client = %crate::error::shown(&params.client_info.name),
            client_version = %crate::error::shown(&params.client_info.version),
            requested = %crate::error::shown(&params.protocol_version),
            negotiated = %version,
            "initialize"
        );
        self.state = State::Initialized(version);
        let result = InitializeResult {
            protocol_version: version.as_str().to_owned(),
            capabilities: ServerCapabilities {
                tools: Some(ToolsCapability {
                    list_changed: Some(false),
                }),
                other: Map::new(),
            },
            server_info: Implementation {
                name: self.info.name.clone(),
                // `Implementation.title` exists from 2025-06-18.
                title: self
                    .info
                    .title
                    .clone()
                    .filter(|_| version.has_structured_output()),
                version: self.info.version.clone(),
            },
            instructions: self.info.instructions.clone(),
        };
        Ok(to_value(&result))
    }

    fn ready_version(&self, method: &str) -> Result<ProtocolVersion, ServerError> {
        match self.state {
            State::Ready(v) => Ok(v),
            State::Initialized(_) => Err(ServerError::NotReady(method.to_owned())),
            State::AwaitingInit => Err(ServerError::NotInitialized(method.to_owned())),
        }
    }

    fn list_tools(
        &self,
        method: &str,
        params: Option<ServerParams>,
        version: ProtocolVersion,
    ) -> Result<Value, ServerError> {
        let params: ListToolsParams = match params {
            None => ListToolsParams::default(),
            Some(p) => parse_params(method, Some(p))?,
        };
        if let Some(cursor) = params.cursor {
            return Err(ServerError::InvalidCursor(cursor));
        }
        Ok(to_value(&ListToolsResult {
            tools: self.tools.definitions(version),
            next_cursor: None,
        }))
    }

    fn call_tool(
        &self,
        method: &str,
        params: Option<ServerParams>,
        version: ProtocolVersion,
    ) -> Result<Outcome, ServerError> {
        // Read in parts by the parser when it could (`crate::params`); anything else, and
        // parts that do not fit, take the `Value` path, which words the -32602.
        let params: CallToolParams = match params {
            Some(ServerParams::ToolCall(parts)) => match parts.into_call() {
                Ok(params) => params,
                Err(parts) => parse_params(method, Some(ServerParams::ToolCall(parts)))?,
            },
            other => parse_params(method, other)?,
        };
        let tool = self
            .tools
            .get(&params.name)
            .ok_or_else(|| ServerError::UnknownTool(params.name.clone()))?;
        Ok(match tool.call(params.arguments.unwrap_or_default()) {
            ToolCall::Ready(result) => Outcome::Tool(result.for_version(version)),
            ToolCall::Pending(fut) => Outcome::Running(
                fut.map(move |result| result.for_version(version).into_value())
                    .boxed(),
            ),
        })
    }
}

/// A method's result: ready now, or still running (a tool call).
enum Outcome {
    Done(Value),
    /// A tool's result, ready now: sent in its typed form, with no `Value` tree.
    Tool(CallToolResult),
    Running(BoxFuture<'static, Value>),
}

/// Params of a protocol method; anything that does not fit its schema is -32602.
fn parse_params<T: DeserializeOwned>(
    method: &str,
    params: Option<ServerParams>,
) -> Result<T, ServerError> {
    let invalid = |reason: String| ServerError::InvalidParams {
        method: method.to_owned(),
        reason,
    };
    match params.map(ServerParams::into_value) {
        None => Err(invalid("params are required".to_owned())),
        Some(Value::Object(map)) => {
            serde_json::from_value(Value::Object(map)).map_err(|e| invalid(e.to_string()))
        }
        Some(_) => Err(invalid("params must be an object".to_owned())),
    }
}

fn to_value<T: Serialize>(value: &T) -> Value {
    // These types have string keys and no fallible serializers: this cannot fail.
    serde_json::to_value(value).unwrap_or(Value::Null)
}
