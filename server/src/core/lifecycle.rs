//! One connection's lifecycle and method dispatch (legacy era, `basic/lifecycle.mdx`), and
//! stateless 2026-07-28 requests beside it (`basic/versioning.mdx`).
//!
//! `AwaitingInit --initialize--> Initialized --notifications/initialized--> Ready`.
//! `ping` is answered in every state; `tools/*` only when ready, so a client that skips a
//! handshake step is told which one. A request whose `_meta` names a protocol version is a
//! 2026-07-28 request ([`Era::of`]), served whatever the legacy state.

use std::collections::BTreeSet;
use std::sync::Arc;

use mcp_protocol::mcp::{
    methods, modern, CallToolParams, CallToolResult, CancelledParams, Implementation,
    InitializeParams, InitializeResult, ListToolsParams, ListToolsResult, ProtocolVersion,
    ServerCapabilities, ToolsCapability,
};
use mcp_protocol::{Message, Notification, Outgoing, Request, RequestId, Response};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};

use super::outbound::{self, CallMeta};
use super::subscriptions::{self, Listen, Subscriptions};
use super::{Served, Work};
use crate::error::ServerError;
use crate::modern::TTL_MS;
use crate::params::ServerParams;
use crate::tools::ToolCall;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    AwaitingInit,
    /// `initialize` was answered; waiting for `notifications/initialized`.
    Initialized(ProtocolVersion),
    Ready(ProtocolVersion),
}

/// The era a request is served in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Era {
    /// The `initialize` handshake and the state it leaves.
    Legacy,
    /// 2026-07-28: the protocol version in `params._meta`, no state.
    Modern,
}

impl Era {
    /// `initialize` is legacy by definition; anything else with a protocol version in
    /// `params._meta` is a 2026-07-28 request. Every transport asks here.
    pub(crate) fn of(method: &str, params: Option<&ServerParams>) -> Era {
        Era::judge(method, params).0
    }

    /// The era, and for a 2026-07-28 request whether its `_meta` is acceptable.
    fn judge(method: &str, params: Option<&ServerParams>) -> (Era, Result<(), ServerError>) {
        match crate::modern::check_meta(params.and_then(ServerParams::meta)) {
            Some(checked) if method != methods::INITIALIZE => (Era::Modern, checked),
            _ => (Era::Legacy, Ok(())),
        }
    }
}

/// What a message asks of the core.
pub(crate) enum Handled {
    /// Nothing to send: a notification, or an invalid cancellation.
    Nothing,
    /// Send this now: a response, or a tool's result in its typed form.
    Reply(Outgoing),
    /// A tool call still running: run it, then reply to this id, shaped for this version.
    Run(RequestId, Work, ProtocolVersion, CallMeta),
    /// `notifications/cancelled` for this request.
    Cancel(RequestId),
    /// A `subscriptions/listen` to open on a stream of its own (a request served on its own,
    /// over Streamable HTTP).
    Listen(Listen),
    /// The client's response to a request the server sent.
    Answer(Response),
}

/// The per-connection protocol state. Not shared: the core owns it and feeds it messages in
/// arrival order, so lifecycle transitions need no locking.
#[derive(Debug)]
pub(crate) struct Lifecycle {
    state: State,
    served: Arc<Served>,
    /// What the client declared in `initialize`: which requests the server may send it.
    client_capabilities: Map<String, Value>,
    /// The level `logging/setLevel` set (a rank in `LOG_LEVELS`); `None`: never set.
    log_level: Option<usize>,
    /// Tools whose offering this connection flipped ([`crate::peer::Peer::toggle_tool`]).
    toggled: BTreeSet<String>,
    /// 2026-07-28 `subscriptions/listen`: only with diagnostic tools, the only ones that
    /// change the list.
    listening: Listening,
}

/// Where this core's 2026-07-28 `subscriptions/listen` streams are held.
#[derive(Debug)]
enum Listening {
    /// Not offered (-32601): no diagnostic tools, or a legacy HTTP session's core.
    No,
    /// On this connection's one channel (stdio), which holds them.
    Here(Subscriptions),
    /// A request served on its own (Streamable HTTP): each stream is its own response,
    /// held server-wide by the transport ([`super::subscriptions::Listeners`]), and the tools
    /// toggled are the server's ([`Served::stateless_toggled`]).
    ServerWide,
}

/// What kind of connection a core serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A legacy HTTP session.
    Session,
    /// A connection whose messages share one channel for its whole life (stdio).
    Stream,
    /// One 2026-07-28 request served on its own (Streamable HTTP).
    Stateless,
}

impl Lifecycle {
    pub(crate) fn new(served: Arc<Served>, kind: Kind) -> Self {
        let listening = match kind {
            _ if !served.tools.is_diagnostic() => Listening::No,
            Kind::Session => Listening::No,
            Kind::Stream => Listening::Here(Subscriptions::default()),
            Kind::Stateless => Listening::ServerWide,
        };
        Lifecycle {
            listening,
            state: State::AwaitingInit,
            served,
            client_capabilities: Map::new(),
            log_level: None,
            toggled: BTreeSet::new(),
        }
    }

    /// Flips whether this connection (for a request served on its own: the server) offers
    /// the tool `name`; whether it does now.
    pub(crate) fn toggle_tool(&mut self, name: String) -> bool {
        let flip = |toggled: &mut BTreeSet<String>| {
            if !toggled.remove(&name) {
                toggled.insert(name.clone());
            }
            self.served.tools.listed(&name, toggled)
        };
        match self.listening {
            Listening::ServerWide => flip(&mut self.served.stateless_toggled.lock()),
            _ => flip(&mut self.toggled),
        }
    }

    /// `f` of the tools this connection toggled (for a request served on its own with
    /// diagnostic tools: the server's).
    fn with_toggled<T>(&self, f: impl FnOnce(&BTreeSet<String>) -> T) -> T {
        match self.listening {
            Listening::ServerWide => f(&self.served.stateless_toggled.lock()),
            _ => f(&self.toggled),
        }
    }

    /// Where a 2026-07-28 list change goes: `None` when the transport holds the streams
    /// (server-wide); otherwise `notifications/tools/list_changed` for each open subscription
    /// of this connection that asked.
    pub(crate) fn tools_changed(&mut self) -> Option<Vec<Outgoing>> {
        match &mut self.listening {
            Listening::ServerWide => None,
            Listening::No => Some(Vec::new()),
            Listening::Here(open) => {
                let mut send = Vec::new();
                open.tools_changed(|(), out| {
                    send.push(out);
                    true
                });
                Some(send)
            }
        }
    }

    /// The server's identity as 2026-07-28 results carry it.
    pub(crate) fn modern_info(&self) -> &Value {
        &self.served.modern_info
    }

    /// The level the client set with `logging/setLevel`, if it did.
    pub(crate) fn log_level(&self) -> Option<usize> {
        self.log_level
    }

    /// What this server declares beyond tools: only with diagnostic tools.
    pub(crate) fn declared(&self) -> outbound::Declared {
        let diagnostic = self.served.tools.is_diagnostic();
        outbound::Declared {
            logging: diagnostic,
            list_changed: diagnostic,
        }
    }

    /// The negotiated version, once `initialize` was answered.
    pub(crate) fn version(&self) -> Option<ProtocolVersion> {
        match self.state {
            State::AwaitingInit => None,
            State::Initialized(v) | State::Ready(v) => Some(v),
        }
    }

    /// Whether the client declared `capability` (`roots`, `sampling`, `elicitation`, …).
    pub(crate) fn client_declared(&self, capability: &str) -> bool {
        self.client_capabilities.contains_key(capability)
    }

    pub(crate) fn handle(&mut self, message: Message<ServerParams>) -> Handled {
        match message {
            Message::Request(req) => self.request(req),
            Message::Notification(n) => self.notification(n),
            Message::Response(r) => Handled::Answer(r),
        }
    }

    fn request(&mut self, req: Request<ServerParams>) -> Handled {
        let Request { id, method, params } = req;
        let outcome = match Era::judge(&method, params.as_ref()) {
            (Era::Modern, checked) if method == subscriptions::LISTEN => {
                return self.listen(id, checked, params);
            }
            (Era::Modern, checked) => checked.and_then(|()| self.modern(&method, params)),
            (Era::Legacy, _) => self.legacy(method, params),
        };
        match outcome {
            Ok(Outcome::Done(value)) => Handled::Reply(Response::success(id, value).into()),
            Ok(Outcome::Tool(result, version)) => {
                Handled::Reply(self.tool_reply(id, result, version))
            }
            Ok(Outcome::Running(work, version, meta)) => Handled::Run(id, work, version, meta),
            Err(e) => Handled::Reply(Response::error(Some(id), e.to_error_object()).into()),
        }
    }

    /// `subscriptions/listen` (2026-07-28): acknowledged, and left open with no response until
    /// the client cancels it; -32601 where no subscription can be held (a legacy session, or
    /// without diagnostic tools, whose list never changes). A request served on its own is
    /// opened by its transport on its response stream ([`Handled::Listen`]).
    fn listen(
        &mut self,
        id: RequestId,
        checked: Result<(), ServerError>,
        params: Option<ServerParams>,
    ) -> Handled {
        let declared = self.declared().list_changed;
        let accepted = checked.and_then(|()| {
            if matches!(self.listening, Listening::No) {
                return Err(ServerError::MethodNotFound(
                    subscriptions::LISTEN.to_owned(),
                ));
            }
            let params = params.map(ServerParams::into_value);
            subscriptions::filter(id.clone(), params.as_ref(), declared)
        });
        let listen = match accepted {
            Ok(listen) => listen,
            Err(e) => return Handled::Reply(Response::error(Some(id), e.to_error_object()).into()),
        };
        let Listening::Here(open) = &mut self.listening else {
            return Handled::Listen(listen);
        };
        match open.open(listen, ()) {
            Ok((_, ack)) => {
                tracing::debug!(id = %crate::error::shown_id(&id), "subscription opened");
                Handled::Reply(ack)
            }
            Err(e) => Handled::Reply(Response::error(Some(id), e.to_error_object()).into()),
        }
    }

    /// A tool's result as the reply to `id`: shaped for `version`, and tagged as 2026-07-28
    /// results are. The one place a result becomes a reply, at once or later.
    pub(crate) fn tool_reply(
        &self,
        id: RequestId,
        result: CallToolResult,
        version: ProtocolVersion,
    ) -> Outgoing {
        let result = result.for_version(version);
        if version.is_modern() {
            let value =
                crate::modern::complete(result.into_value(), &self.served.modern_info, None);
            Response::success(id, value).into()
        } else {
            Outgoing::ToolResult(id, result)
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
            outbound::SET_LEVEL if self.declared().logging => {
                self.ready_version(&method)?;
                self.set_level(&method, params).map(Outcome::Done)
            }
            modern::DISCOVER => Err(ServerError::DiscoverWithoutMeta),
            _ => Err(ServerError::MethodNotFound(method)),
        }
    }

    /// The modern era (2026-07-28): no handshake; results tagged `resultType: "complete"` with
    /// the server's identity in `_meta`, and cache hints on `server/discover` and `tools/list`.
    fn modern(&self, method: &str, params: Option<ServerParams>) -> Result<Outcome, ServerError> {
        let info = &self.served.modern_info;
        let version = ProtocolVersion::V2026_07_28;
        match method {
            modern::DISCOVER => {
                let instructions = self.served.info.instructions.as_deref();
                let list_changed = !matches!(self.listening, Listening::No);
                let result =
                    crate::modern::discover(instructions, self.declared().logging, list_changed);
                Ok(Outcome::Done(crate::modern::complete(
                    result,
                    info,
                    Some(TTL_MS),
                )))
            }
            methods::TOOLS_LIST => {
                let result = self.list_tools(method, params, version)?;
                // A list the diagnostic tools can change is not to be reused.
                let ttl = if matches!(self.listening, Listening::No) {
                    TTL_MS
                } else {
                    0
                };
                Ok(Outcome::Done(crate::modern::complete(
                    result,
                    info,
                    Some(ttl),
                )))
            }
            methods::TOOLS_CALL => self.call_tool(method, params, version),
            methods::PING | "logging/setLevel" => {
                Err(ServerError::RemovedInModern(method.to_owned()))
            }
            other => Err(ServerError::MethodNotFound(other.to_owned())),
        }
    }

    fn notification(&mut self, n: Notification<ServerParams>) -> Handled {
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
                    Ok(Some(p)) => {
                        let id = p.request_id;
                        let closed = match &mut self.listening {
                            Listening::Here(open) => !open.cancel(&id).is_empty(),
                            _ => false,
                        };
                        if closed {
                            tracing::debug!(id = %crate::error::shown_id(&id), "subscription closed");
                            return Handled::Nothing;
                        }
                        return Handled::Cancel(id);
                    }
                    // "Invalid cancellation notifications SHOULD be ignored."
                    _ => tracing::debug!("invalid notifications/cancelled ignored"),
                }
            }
            other => tracing::debug!(method = other, "unknown notification ignored"),
        }
        Handled::Nothing
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
        let version = ProtocolVersion::parse_legacy(&params.protocol_version)
            .unwrap_or(ProtocolVersion::LATEST_LEGACY);
        tracing::info!(
            client = %crate::error::shown(&params.client_info.name),
            client_version = %crate::error::shown(&params.client_info.version),
            requested = %crate::error::shown(&params.protocol_version),
            negotiated = %version,
            "initialize"
        );
        self.state = State::Initialized(version);
        self.client_capabilities = params.capabilities;
        let info = &self.served.info;
        let result = InitializeResult {
            protocol_version: version.as_str().to_owned(),
            capabilities: self.capabilities(),
            server_info: Implementation {
                name: info.name.clone(),
                // `Implementation.title` exists from 2025-06-18.
                title: info
                    .title
                    .clone()
                    .filter(|_| version.has_structured_output()),
                version: info.version.clone(),
            },
            instructions: info.instructions.clone(),
        };
        Ok(to_value(&result))
    }

    /// `tools` (`listChanged` only with diagnostic tools, which change the list), and `logging`
    /// with diagnostic tools, which log.
    fn capabilities(&self) -> ServerCapabilities {
        let declared = self.declared();
        let mut other = Map::new();
        if declared.logging {
            other.insert("logging".to_owned(), Value::Object(Map::new()));
        }
        ServerCapabilities {
            tools: Some(ToolsCapability {
                list_changed: Some(declared.list_changed),
            }),
            other,
        }
    }

    /// `logging/setLevel` (`server/utilities/logging.mdx`): later log messages of the session
    /// below `level` are not sent.
    fn set_level(
        &mut self,
        method: &str,
        params: Option<ServerParams>,
    ) -> Result<Value, ServerError> {
        #[derive(serde::Deserialize)]
        struct SetLevel {
            level: String,
        }
        let params: SetLevel = parse_params(method, params)?;
        let Some(level) = outbound::level_index(&params.level) else {
            return Err(ServerError::InvalidParams {
                method: method.to_owned(),
                reason: format!(
                    "level must be one of {}, got {:?}",
                    modern::LOG_LEVELS.join(", "),
                    crate::error::shown(&params.level)
                ),
            });
        };
        self.log_level = Some(level);
        Ok(Value::Object(Map::new()))
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
            tools: self.with_toggled(|toggled| self.served.tools.offered(version, toggled)),
            next_cursor: None,
        }))
    }

    fn call_tool(
        &self,
        method: &str,
        params: Option<ServerParams>,
        version: ProtocolVersion,
    ) -> Result<Outcome, ServerError> {
        let mut params = params;
        let meta = CallMeta::take(params.as_mut(), version);
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
            .with_toggled(|toggled| self.served.tools.get_offered(&params.name, toggled))
            .ok_or_else(|| ServerError::UnknownTool(params.name.clone()))?;
        Ok(match tool.call(params.arguments.unwrap_or_default()) {
            ToolCall::Ready(result) => Outcome::Tool(result, version),
            ToolCall::Pending(fut) => Outcome::Running(Box::new(move |_| fut), version, meta),
            ToolCall::Asking(work) => Outcome::Running(work, version, meta),
        })
    }
}

/// A method's result: ready now, or still running (a tool call).
enum Outcome {
    Done(Value),
    /// A tool's result, ready now: sent in its typed form, with no `Value` tree.
    Tool(CallToolResult, ProtocolVersion),
    Running(Work, ProtocolVersion, CallMeta),
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
