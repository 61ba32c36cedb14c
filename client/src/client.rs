//! The client: lifecycle state machine, era detection, pending map, reader and writer tasks,
//! close.
//!
//! Legacy era: `new → initialized → ready → closed` (`basic/lifecycle.mdx`; the chapter's
//! diagram). Modern era (2026-07-28): `new → ready → closed`, ready as soon as the
//! `server/discover` probe is answered, and every request carries `_meta`. A
//! reader task pairs each reply with its caller through a map keyed by request id, whatever
//! order replies arrive in; a writer task owns the server's stdin. When the server goes away
//! every waiting caller is failed at once with the reason, exit status and last stderr lines.

use std::collections::HashMap;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use futures::{SinkExt, Stream, StreamExt};
use mcp_protocol::codec::DecodedFrame;
use mcp_protocol::mcp::{
    methods, modern, CallToolResult, InitializeResult, ListToolsResult, ProtocolVersion, Tool,
};
use mcp_protocol::{
    ErrorCode, ErrorObject, Framing, FramingMode, Incoming, Message, Notification, Outgoing,
    Request, RequestId, Response, StdioCodec,
};
use nix::sys::signal::Signal;
use serde::de::DeserializeOwned;
use serde_json::{json, Map, Value};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{broadcast, mpsc, oneshot, watch, OnceCell};
use tokio_util::codec::{FramedRead, FramedWrite};
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::command::ServerCommand;
use crate::era::{self, Connected, DiscoverResult, Era, EraChoice, ProbeError};
use crate::error::{ClientError, CloseCause, ClosedReason};
use crate::options::{ClientOptions, FrameDirection};
use crate::process::{self, KillOnDrop, Process};
use crate::state::{Phase, State};

/// How long output still in the pipe is read after the server exits.
const EXIT_DRAIN: Duration = Duration::from_millis(500);
/// How many pages `list_tools` follows before deciding the server loops.
const MAX_PAGES: usize = 1000;

/// Which step of [`Client::close`] ended the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CloseStep {
    /// It had exited before `close()` was called.
    AlreadyExited,
    /// It exited after its stdin was closed (the polite way, `lifecycle.mdx` "Shutdown").
    StdinClosed,
    /// It needed SIGTERM.
    Terminated,
    /// It needed SIGKILL.
    Killed,
    /// An in-memory connection: our output was closed; there is no process.
    OutputClosed,
}

/// What [`Client::close`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct CloseReport {
    pub step: CloseStep,
    pub status: Option<ExitStatus>,
    pub elapsed: Duration,
}

struct Shared {
    options: ClientOptions,
    phase: Mutex<Phase>,
    /// What the handshake or the probe established; `Legacy` from the `initialize` result on.
    connected: Mutex<Option<Connected>>,
    pending: Mutex<HashMap<RequestId, oneshot::Sender<Response>>>,
    next_id: AtomicI64,
    out: mpsc::Sender<Outgoing>,
    /// Cancelled to close the server's stdin after what is queued is written.
    stop_writer: CancellationToken,
    /// Cancelled when the reader has finished and every pending caller was failed.
    reader_done: CancellationToken,
    /// Cancelled when the writer has written what was queued and closed the output.
    writer_done: CancellationToken,
    close_requested: AtomicBool,
    /// Why the writer stopped, if it failed: the cause callers see until the reader finishes.
    write_error: Mutex<Option<String>>,
    close_report: OnceCell<CloseReport>,
    notifications: broadcast::Sender<Notification>,
    closed: watch::Sender<Option<ClosedReason>>,
    process: Option<Arc<Process>>,
}

/// Held by client handles only (not by the tasks): dropping the last handle stops the tasks
/// and kills the server.
struct Handles {
    _stop_tasks: DropGuard,
    _kill: Option<KillOnDrop>,
}

/// An MCP client connection. Cheap to clone; all clones share the connection. Dropping the
/// last clone kills the server (if spawned) and reaps it.
#[derive(Clone)]
pub struct Client {
    shared: Arc<Shared>,
    _handles: Arc<Handles>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("state", &self.state())
            .field("era", &self.era())
            .field("pid", &self.pid())
            .finish()
    }
}

impl Client {
    /// Spawns `command` with piped stdin/stdout and connects to it. Must be called inside a
    /// tokio runtime.
    pub fn spawn(command: ServerCommand, options: ClientOptions) -> Result<Client, ClientError> {
        let spawned = process::spawn(&command, process::STDERR_TAIL_LINES)?;
        tracing::debug!(command = %command.display(), pid = ?spawned.process.pid(), "spawned MCP server");
        Ok(Client::start(
            spawned.stdout,
            spawned.stdin,
            options,
            Some(spawned.process),
            Some(spawned.guard),
        ))
    }

    /// Connects over any byte streams (an in-memory duplex in tests, a socket, …).
    pub fn connect_io<R, W>(reader: R, writer: W, options: ClientOptions) -> Client
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        Client::start(reader, writer, options, None, None)
    }

    fn start<R, W>(
        reader: R,
        writer: W,
        options: ClientOptions,
        process: Option<Arc<Process>>,
        kill: Option<KillOnDrop>,
    ) -> Client
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let mode = match options.framing {
            Framing::Ndjson => FramingMode::Ndjson,
            Framing::ContentLength => FramingMode::ContentLength,
        };
        let codec = StdioCodec::new(mode).with_max_message_bytes(options.max_message_bytes);
        let (out, out_rx) = mpsc::channel(256);
        let stop_tasks = CancellationToken::new();
        let shared = Arc::new(Shared {
            options,
            phase: Mutex::new(Phase::New),
            connected: Mutex::new(None),
            pending: Mutex::new(HashMap::new()),
            next_id: AtomicI64::new(1),
            out,
            stop_writer: CancellationToken::new(),
            reader_done: CancellationToken::new(),
            writer_done: CancellationToken::new(),
            close_requested: AtomicBool::new(false),
            write_error: Mutex::new(None),
            close_report: OnceCell::new(),
            notifications: broadcast::channel(256).0,
            closed: watch::channel(None).0,
            process,
        });
        tokio::spawn(write_loop(
            FramedWrite::new(writer, codec.clone()),
            out_rx,
            Arc::clone(&shared),
            stop_tasks.clone(),
        ));
        tokio::spawn(read_loop(
            FramedRead::new(reader, codec),
            Arc::clone(&shared),
            stop_tasks.clone(),
        ));
        Client {
            shared,
            _handles: Arc::new(Handles {
                _stop_tasks: stop_tasks.drop_guard(),
                _kill: kill,
            }),
        }
    }

    pub fn state(&self) -> State {
        self.shared.phase().public()
    }

    /// The server's process id, when spawned.
    pub fn pid(&self) -> Option<u32> {
        self.shared.process.as_ref().and_then(|p| p.pid())
    }

    /// The era of the connection, once `connect()` (or `initialize()`) determined it. Cached
    /// for the connection's lifetime: the era is a property of the server process.
    pub fn era(&self) -> Option<Era> {
        lock(&self.shared.connected).as_ref().map(Connected::era)
    }

    /// What the handshake (legacy) or the probe (modern) established.
    pub fn connected(&self) -> Option<Connected> {
        lock(&self.shared.connected).clone()
    }

    /// The `initialize` result (legacy era), once the handshake got that far.
    pub fn initialize_result(&self) -> Option<InitializeResult> {
        lock(&self.shared.connected)
            .as_ref()
            .and_then(|c| c.initialize_result().cloned())
    }

    /// The `server/discover` result (modern era).
    pub fn discover_result(&self) -> Option<DiscoverResult> {
        lock(&self.shared.connected)
            .as_ref()
            .and_then(|c| c.discover_result().cloned())
    }

    /// The protocol version in use, in either era: the one `initialize` negotiated (legacy) or
    /// the one every request declares in `_meta` (modern).
    pub fn protocol_version(&self) -> Option<String> {
        lock(&self.shared.connected)
            .as_ref()
            .map(|c| c.protocol_version().to_owned())
    }

    /// The negotiated legacy version, typed (legacy era only).
    pub fn legacy_protocol_version(&self) -> Option<ProtocolVersion> {
        lock(&self.shared.connected)
            .as_ref()
            .and_then(|c| c.initialize_result())
            .and_then(|init| ProtocolVersion::parse(&init.protocol_version))
    }

    /// Why the connection closed, once it has.
    pub fn closed_reason(&self) -> Option<ClosedReason> {
        self.shared.closed.borrow().clone()
    }

    /// The server's last stderr lines (when captured).
    pub fn stderr_tail(&self) -> Vec<String> {
        self.shared
            .process
            .as_ref()
            .map(|p| p.stderr_tail())
            .unwrap_or_default()
    }

    /// Server notifications (e.g. `notifications/tools/list_changed`) from now on. The stream
    /// ends when the connection closes; a subscriber that falls 256 behind skips ahead.
    pub fn notifications(&self) -> impl Stream<Item = Notification> + Send + 'static {
        let rx = self.shared.notifications.subscribe();
        let closed = self.shared.closed.subscribe();
        futures::stream::unfold((rx, closed), |(mut rx, mut closed)| async move {
            loop {
                let item = tokio::select! {
                    biased; // what was already received comes out before the end
                    item = rx.recv() => item,
                    _ = closed.wait_for(Option::is_some) => return None,
                };
                match item {
                    Ok(n) => return Some((n, (rx, closed))),
                    Err(broadcast::error::RecvError::Lagged(k)) => {
                        tracing::warn!(skipped = k, "notification subscriber fell behind");
                    }
                    Err(broadcast::error::RecvError::Closed) => return None,
                }
            }
        })
    }

    /// Sends `initialize` (allowed only in state `new`, one call at a time; after a failure
    /// it may be retried). A version this client does not support closes the connection.
    ///
    /// This is the legacy era's first step, whatever [`ClientOptions::era`] says: calling it
    /// instead of [`connect`](Self::connect) skips the `server/discover` probe.
    pub async fn initialize(&self) -> Result<InitializeResult, ClientError> {
        self.shared.claim(
            Phase::Initializing,
            "initialize",
            "initialize is sent once per connection",
        )?;
        self.run_initialize().await
    }

    /// `initialize`, once the phase is `Initializing`.
    async fn run_initialize(&self) -> Result<InitializeResult, ClientError> {
        let options = &self.shared.options;
        let params = json!({
            "protocolVersion": options.protocol_version.as_str(),
            "capabilities": {},
            "clientInfo": options.client_info,
        });
        // `initialize` MUST NOT be cancelled (`utilities/cancellation.mdx`).
        let outcome = self
            .shared
            .call(
                methods::INITIALIZE,
                Some(params),
                options.request_timeout,
                false,
            )
            .await
            .and_then(|v| decode::<InitializeResult>(methods::INITIALIZE, v));
        let result = match outcome {
            Ok(result) => result,
            Err(e) => {
                self.shared.set_phase_unless_closed(Phase::New);
                return Err(e);
            }
        };
        let Some(version) = ProtocolVersion::parse(&result.protocol_version) else {
            let e = ClientError::UnsupportedVersion {
                offered: result.protocol_version.clone(),
                supported: ProtocolVersion::ALL.map(|v| v.as_str()).join(", "),
            };
            tracing::warn!("{e}");
            self.close().await;
            return Err(e);
        };
        tracing::debug!(%version, "legacy era: initialize answered");
        *lock(&self.shared.connected) = Some(Connected::Legacy(result.clone()));
        self.shared.set_phase_unless_closed(Phase::Initialized);
        Ok(result)
    }

    /// Sends `notifications/initialized`: the connection becomes ready.
    pub async fn notify_initialized(&self) -> Result<(), ClientError> {
        let phase = self.shared.phase();
        if phase != Phase::Initialized {
            return Err(self.shared.refusal(
                "send notifications/initialized",
                phase,
                "it follows a successful initialize",
            ));
        }
        self.shared.notify_raw(methods::INITIALIZED, None).await?;
        self.shared.set_phase_unless_closed(Phase::Ready);
        Ok(())
    }

    /// Connects in the era [`ClientOptions::era`] chooses, as `basic/transports/stdio.mdx`
    /// ("Backward Compatibility") says:
    ///
    /// * [`EraChoice::Auto`] (default): probe with `server/discover`, carrying modern `_meta`,
    ///   bounded by [`ClientOptions::probe_timeout`].
    ///   - A `DiscoverResult` → modern: the connection is ready at once
    ///     ([`Connected::Modern`]). A result that is not a `DiscoverResult` is
    ///     [`ClientError::InvalidResult`] (only modern servers know the method).
    ///   - A recognized modern error (`UnsupportedProtocolVersionError`, -32022 with
    ///     `data.supported`; `MissingRequiredClientCapabilityError`, -32021 with
    ///     `data.requiredCapabilities`) → modern, never a fallback: the probe is retried with
    ///     another modern version of this client that the server lists, else
    ///     [`ClientError::UnsupportedModernVersion`] (or the -32021 as
    ///     [`ClientError::Server`]).
    ///   - Any other error, whatever its code, or no reply within the probe timeout → legacy:
    ///     `initialize` then `notifications/initialized` ([`Connected::Legacy`]). A late reply
    ///     to the probe is dropped as an unknown id.
    /// * [`EraChoice::Legacy`]: no probe; `initialize` then `notifications/initialized`.
    /// * [`EraChoice::Modern`]: the probe; what would fall back to legacy is
    ///   [`ClientError::NotModern`] instead.
    ///
    /// The era is cached ([`era`](Self::era)). A connection that ended (`Closed`) is not
    /// retried; after any other failure the state is `new` again and `connect()` may be
    /// retried.
    pub async fn connect(&self) -> Result<Connected, ClientError> {
        let choice = self.shared.options.era;
        if choice == EraChoice::Legacy {
            let result = self.initialize().await?;
            self.notify_initialized().await?;
            return Ok(Connected::Legacy(result));
        }
        self.shared.claim(
            Phase::Probing,
            "connect",
            "connect() succeeds once per connection",
        )?;
        let not_modern = match self.probe().await {
            Ok(Ok(connected)) => return Ok(connected),
            Ok(Err(not_modern)) => not_modern,
            Err(e) => {
                self.shared.set_phase_if(Phase::Probing, Phase::New);
                return Err(e);
            }
        };
        if choice == EraChoice::Modern {
            self.shared.set_phase_if(Phase::Probing, Phase::New);
            return Err(ClientError::NotModern { reason: not_modern });
        }
        tracing::debug!("legacy era: {not_modern}; falling back to initialize");
        if !self
            .shared
            .set_phase_if(Phase::Probing, Phase::Initializing)
        {
            return Err(self.shared.closed_error());
        }
        let result = self.run_initialize().await?;
        self.notify_initialized().await?;
        Ok(Connected::Legacy(result))
    }

    /// The `server/discover` probe (phase `Probing`). `Ok(Ok(_))`: modern and ready;
    /// `Ok(Err(reason))`: not a modern server; `Err(_)`: a modern server this client cannot
    /// use, or the connection failed.
    async fn probe(&self) -> Result<Result<Connected, String>, ClientError> {
        let options = &self.shared.options;
        let timeout = options.probe_timeout;
        let mut tried: Vec<&'static str> = Vec::new();
        let mut version = modern::VERSION;
        loop {
            tried.push(version);
            let meta = era::request_meta(version, &options.client_info);
            let params = json!({ "_meta": meta });
            // Not cancelled on timeout: a legacy server never knew the request.
            let outcome = self
                .shared
                .call(modern::DISCOVER, Some(params), timeout, false)
                .await;
            let value = match outcome {
                Ok(value) => value,
                Err(ClientError::Server { error, .. }) => match ProbeError::classify(&error) {
                    ProbeError::UnsupportedVersion { supported } => {
                        match era::newest_common(&supported, &tried) {
                            Some(next) => {
                                tracing::debug!(
                                    requested = version,
                                    next,
                                    "server/discover: version unsupported; retrying"
                                );
                                version = next;
                                continue;
                            }
                            None => {
                                return Err(unsupported_modern(version, supported));
                            }
                        }
                    }
                    ProbeError::OtherModern => {
                        return Err(ClientError::Server {
                            method: modern::DISCOVER.to_owned(),
                            error,
                        })
                    }
                    ProbeError::NotModern => {
                        return Ok(Err(format!(
                            "server/discover got error {} ({})",
                            error.code, error.message
                        )))
                    }
                },
                Err(ClientError::Timeout { after, .. }) => {
                    return Ok(Err(format!(
                        "server/discover got no reply within {after:?}"
                    )))
                }
                Err(e) => return Err(e),
            };
            if let Some(result_type) = era::incomplete_result_type(&value) {
                return Err(ClientError::UnsupportedResultType {
                    method: modern::DISCOVER.to_owned(),
                    result_type,
                });
            }
            let discover =
                DiscoverResult::from_value(value).map_err(|reason| ClientError::InvalidResult {
                    method: modern::DISCOVER.to_owned(),
                    reason,
                })?;
            let Some(chosen) = discover.common_version() else {
                return Err(unsupported_modern(version, discover.supported_versions));
            };
            tracing::debug!(
                version = chosen,
                server = ?discover.server_info,
                "modern era: server/discover answered"
            );
            let connected = Connected::Modern {
                protocol_version: chosen.to_owned(),
                discover,
            };
            *lock(&self.shared.connected) = Some(connected.clone());
            if !self.shared.set_phase_if(Phase::Probing, Phase::Ready) {
                return Err(self.shared.closed_error());
            }
            return Ok(Ok(connected));
        }
    }

    /// Liveness check (allowed once initialized). Legacy: `ping`. Modern: 2026-07-28 removed
    /// `ping`, so this sends `server/discover` (with `_meta`) and succeeds on any complete
    /// result; the cached [`discover_result`](Self::discover_result) is not replaced.
    pub async fn ping(&self) -> Result<(), ClientError> {
        if self.era() == Some(Era::Modern) {
            return self.request(modern::DISCOVER, None).await.map(drop);
        }
        let phase = self.shared.phase();
        if !matches!(phase, Phase::Initialized | Phase::Ready) {
            return Err(self.shared.refusal(
                "ping",
                phase,
                "ping is allowed once initialize succeeded",
            ));
        }
        let timeout = self.shared.options.request_timeout;
        self.shared
            .call(methods::PING, None, timeout, true)
            .await
            .map(drop)
    }

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
        let modern_version = match lock(&self.shared.connected).as_ref() {
            Some(Connected::Modern {
                protocol_version, ..
            }) => Some(protocol_version.clone()),
            _ => None,
        };
        let Some(version) = modern_version else {
            return self.shared.call(method, params, timeout, true).await;
        };
        let meta = era::request_meta(&version, &self.shared.options.client_info);
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

    /// Closes the connection as the spec's shutdown sequence says: close the server's stdin,
    /// wait (`close_grace`), SIGTERM, wait, SIGKILL. Requests still in flight may be answered
    /// during the first wait; afterwards they fail. Idempotent: later calls return the same
    /// report.
    pub async fn close(&self) -> CloseReport {
        let shared = Arc::clone(&self.shared);
        self.shared
            .close_report
            .get_or_init(|| async move { shared.shutdown().await })
            .await
            .clone()
    }
}

impl Shared {
    fn phase(&self) -> Phase {
        *lock(&self.phase)
    }

    fn set_phase_unless_closed(&self, next: Phase) {
        let mut phase = lock(&self.phase);
        if *phase != Phase::Closed {
            *phase = next;
        }
    }

    /// Moves from `from` to `next`; false (and no change) if the phase is not `from` (closed
    /// meanwhile).
    fn set_phase_if(&self, from: Phase, next: Phase) -> bool {
        let mut phase = lock(&self.phase);
        if *phase == from {
            *phase = next;
            true
        } else {
            false
        }
    }

    /// Starts a handshake step: `new` → `next`, refused in any other phase.
    fn claim(&self, next: Phase, operation: &str, hint: &'static str) -> Result<(), ClientError> {
        let mut phase = lock(&self.phase);
        match *phase {
            Phase::New => {
                *phase = next;
                Ok(())
            }
            Phase::Probing | Phase::Initializing => Err(ClientError::InitializeInProgress),
            other => Err(self.refusal(operation, other, hint)),
        }
    }

    fn refusal(&self, operation: &str, phase: Phase, hint: &'static str) -> ClientError {
        if phase == Phase::Closed {
            return self.closed_error();
        }
        ClientError::InvalidState {
            operation: operation.to_owned(),
            state: phase.public(),
            hint,
        }
    }

    fn require_ready(&self, method: &str) -> Result<(), ClientError> {
        match self.phase() {
            Phase::Ready => Ok(()),
            phase => Err(self.refusal(method, phase, "call connect() first")),
        }
    }

    fn closed_error(&self) -> ClientError {
        if let Some(reason) = self.closed.borrow().clone() {
            return ClientError::Closed(reason);
        }
        let cause = match lock(&self.write_error).clone() {
            Some(e) => CloseCause::WriteFailed(e),
            None => CloseCause::ClientClosed,
        };
        ClientError::Closed(ClosedReason {
            cause,
            status: self.process.as_ref().and_then(|p| p.exit_status()),
            stderr_tail: self
                .process
                .as_ref()
                .map(|p| p.stderr_tail())
                .unwrap_or_default(),
        })
    }

    async fn send(&self, frame: Outgoing) -> Result<(), ClientError> {
        if self.closed.borrow().is_some() {
            return Err(self.closed_error());
        }
        self.out.send(frame).await.map_err(|_| self.closed_error())
    }

    async fn notify_raw(&self, method: &str, params: Option<Value>) -> Result<(), ClientError> {
        let n = Notification {
            method: method.to_owned(),
            params,
        };
        self.send(Message::Notification(n).into()).await
    }

    /// Sends a request and waits for its reply, bounded by `timeout`.
    async fn call(
        &self,
        method: &str,
        params: Option<Value>,
        timeout: Duration,
        cancel_on_timeout: bool,
    ) -> Result<Value, ClientError> {
        let id = RequestId::from(self.next_id.fetch_add(1, Ordering::Relaxed));
        let (tx, rx) = oneshot::channel();
        lock(&self.pending).insert(id.clone(), tx);
        // Removes the entry however this call ends (reply, timeout, or the caller giving up).
        let _entry = PendingEntry {
            shared: self,
            id: &id,
        };
        let request = Request {
            id: id.clone(),
            method: method.to_owned(),
            params,
        };
        // The timeout bounds the whole call: queueing the request too, since a server that
        // stops reading its stdin fills the write queue.
        let deadline = tokio::time::Instant::now() + timeout;
        let timed_out = || ClientError::Timeout {
            method: method.to_owned(),
            id: id.clone(),
            after: timeout,
        };
        match tokio::time::timeout_at(deadline, self.send(Message::Request(request).into())).await {
            Ok(sent) => sent?,
            // Never queued, so there is nothing to cancel.
            Err(_) => return Err(timed_out()),
        }
        match tokio::time::timeout_at(deadline, rx).await {
            Ok(Ok(response)) => response.outcome.map_err(|error| ClientError::Server {
                method: method.to_owned(),
                error,
            }),
            Ok(Err(_)) => Err(self.closed_error()),
            Err(_) => {
                if cancel_on_timeout {
                    let params = json!({
                        "requestId": id,
                        "reason": format!("timed out after {timeout:?}"),
                    });
                    // Best effort: waiting for room in a full write queue would make the
                    // timeout itself hang.
                    let n = Notification {
                        method: methods::CANCELLED.to_owned(),
                        params: Some(params),
                    };
                    if self.out.try_send(Message::Notification(n).into()).is_err() {
                        tracing::debug!(%id, "write queue full or closed: cancellation not sent");
                    }
                }
                Err(timed_out())
            }
        }
    }

    fn hook(&self, direction: FrameDirection, frame: &impl serde::Serialize) {
        let traced = tracing::enabled!(target: "mcp::frames", tracing::Level::DEBUG);
        if self.options.frame_hook.is_none() && !traced {
            return;
        }
        let json = serde_json::to_string(frame).unwrap_or_default();
        if traced {
            tracing::debug!(target: "mcp::frames", "{direction} {json}");
        }
        if let Some(hook) = &self.options.frame_hook {
            hook(direction, &json);
        }
    }

    async fn on_frame(&self, frame: DecodedFrame) {
        match frame {
            Ok(Incoming::Single(message)) => self.on_message(message).await,
            Ok(Incoming::Batch(items)) => {
                for item in items {
                    match item {
                        Ok(message) => self.on_message(message).await,
                        Err(invalid) => {
                            tracing::warn!("server sent an invalid batch member: {invalid}")
                        }
                    }
                }
            }
            Err(e) => tracing::warn!("server sent a bad frame: {e}"),
        }
    }

    async fn on_message(&self, message: Message) {
        self.hook(FrameDirection::Receive, &message);
        match message {
            Message::Response(response) => {
                let Some(id) = response.id.clone() else {
                    if let Err(e) = &response.outcome {
                        tracing::warn!("server sent an error for a message it could not read: {e}");
                    }
                    return;
                };
                let waiter = lock(&self.pending).remove(&id);
                match waiter {
                    Some(tx) => {
                        let _ = tx.send(response);
                    }
                    None => tracing::warn!(%id, "dropped a reply with an unknown id"),
                }
            }
            Message::Request(request) => {
                // Servers may ping clients; this client offers no other server-to-client method.
                let reply = if request.method == methods::PING {
                    Response::success(request.id, json!({}))
                } else {
                    let error = ErrorObject::new(
                        ErrorCode::METHOD_NOT_FOUND,
                        format!(
                            "Method not found: {} (this client offers no server-to-client methods)",
                            request.method
                        ),
                    );
                    Response::error(Some(request.id), error)
                };
                // Waits for room rather than drop the reply; while a server that stops reading
                // its stdin blocks this, every call still ends at its own timeout.
                let _ = self.send(reply.into()).await;
            }
            Message::Notification(n) => {
                let _ = self.notifications.send(n);
            }
        }
    }

    /// The reader ended: record why and fail every waiting caller at once.
    async fn finish(&self, cause: CloseCause) {
        let cause = if self.close_requested.load(Ordering::SeqCst) {
            CloseCause::ClientClosed
        } else {
            cause
        };
        let (status, stderr_tail) = match &self.process {
            Some(p) => {
                let status = p.wait_exit(EXIT_DRAIN).await;
                p.wait_stderr(EXIT_DRAIN).await;
                (status, p.stderr_tail())
            }
            None => (None, Vec::new()),
        };
        let reason = ClosedReason {
            cause,
            status,
            stderr_tail,
        };
        tracing::debug!("MCP connection closed: {reason}");
        *lock(&self.phase) = Phase::Closed;
        self.closed.send_if_modified(|slot| {
            if slot.is_none() {
                *slot = Some(reason);
                true
            } else {
                false
            }
        });
        // Dropping the senders wakes every waiting caller with the reason just stored.
        lock(&self.pending).clear();
        self.stop_writer.cancel();
        self.reader_done.cancel();
    }

    async fn shutdown(&self) -> CloseReport {
        let started = Instant::now();
        self.close_requested.store(true, Ordering::SeqCst);
        *lock(&self.phase) = Phase::Closed;
        self.stop_writer.cancel();
        let grace = self.options.close_grace;
        let (step, status) = match &self.process {
            None => {
                // What was queued (a reply, a cancellation) is written and the output closed
                // before this returns, so dropping the client right after loses nothing.
                let _ = tokio::time::timeout(grace, self.writer_done.cancelled()).await;
                let _ = tokio::time::timeout(grace, self.reader_done.cancelled()).await;
                (CloseStep::OutputClosed, None)
            }
            Some(p) => {
                if let Some(status) = p.exit_status() {
                    (CloseStep::AlreadyExited, Some(status))
                } else if let Some(status) = p.wait_exit(grace).await {
                    (CloseStep::StdinClosed, Some(status))
                } else {
                    p.signal(Signal::SIGTERM);
                    if let Some(status) = p.wait_exit(grace).await {
                        (CloseStep::Terminated, Some(status))
                    } else {
                        p.signal(Signal::SIGKILL);
                        (CloseStep::Killed, p.wait_exit(Duration::from_secs(5)).await)
                    }
                }
            }
        };
        // Let the reader record the end, so waiting callers see "closed by the client".
        if self.process.is_some() {
            let _ = tokio::time::timeout(EXIT_DRAIN, self.reader_done.cancelled()).await;
        }
        if !self.reader_done.is_cancelled() {
            self.finish(CloseCause::ClientClosed).await;
        }
        let report = CloseReport {
            step,
            status,
            elapsed: started.elapsed(),
        };
        tracing::debug!(?report, "closed");
        report
    }
}

/// Removes a pending entry when its call ends for any reason.
struct PendingEntry<'a> {
    shared: &'a Shared,
    id: &'a RequestId,
}

impl Drop for PendingEntry<'_> {
    fn drop(&mut self) {
        lock(&self.shared.pending).remove(self.id);
    }
}

async fn read_loop<R: AsyncRead + Unpin>(
    mut frames: FramedRead<R, StdioCodec>,
    shared: Arc<Shared>,
    stop: CancellationToken,
) {
    let cause = loop {
        let exited = async {
            match &shared.process {
                Some(p) => p.exited().await,
                None => std::future::pending().await,
            }
        };
        let next = tokio::select! {
            biased;
            () = stop.cancelled() => return,
            next = frames.next() => next,
            () = exited => {
                // Replies may still be in the pipe: take what arrives within a moment.
                let drain = async {
                    while let Some(Ok(frame)) = frames.next().await {
                        shared.on_frame(frame).await;
                    }
                };
                let _ = tokio::time::timeout(EXIT_DRAIN, drain).await;
                break CloseCause::ServerExited;
            }
        };
        match next {
            None => break CloseCause::ServerClosedOutput,
            Some(Err(e)) => break CloseCause::ReadFailed(e.to_string()),
            Some(Ok(frame)) => shared.on_frame(frame).await,
        }
    };
    shared.finish(cause).await;
}

async fn write_loop<W: AsyncWrite + Unpin>(
    mut sink: FramedWrite<W, StdioCodec>,
    mut rx: mpsc::Receiver<Outgoing>,
    shared: Arc<Shared>,
    stop: CancellationToken,
) {
    loop {
        let frame = tokio::select! {
            biased;
            () = stop.cancelled() => return,
            frame = rx.recv() => frame,
            () = shared.stop_writer.cancelled() => None,
        };
        let Some(frame) = frame else { break };
        let mut written = write_frame(&mut sink, &shared, frame).await;
        while let (Ok(()), Ok(next)) = (&written, rx.try_recv()) {
            written = write_frame(&mut sink, &shared, next).await;
        }
        if let Err(e) = match written {
            Ok(()) => sink.flush().await,
            Err(e) => Err(e),
        } {
            // The server closed its stdin (or died); the reader will see the rest.
            tracing::debug!("writing to the server failed: {e}");
            *lock(&shared.write_error) = Some(e.to_string());
            // A request that was not written will never be answered: end the connection so
            // every waiting caller hears why now, not at its timeout.
            shared.finish(CloseCause::WriteFailed(e.to_string())).await;
            break;
        }
    }
    // Closing the server's stdin is the first step of the spec's shutdown sequence.
    let _ = sink.close().await;
    shared.writer_done.cancel();
}

async fn write_frame<W: AsyncWrite + Unpin>(
    sink: &mut FramedWrite<W, StdioCodec>,
    shared: &Shared,
    frame: Outgoing,
) -> std::io::Result<()> {
    shared.hook(FrameDirection::Send, &frame);
    sink.feed(frame).await
}

fn unsupported_modern(requested: &str, supported: Vec<String>) -> ClientError {
    ClientError::UnsupportedModernVersion {
        requested: requested.to_owned(),
        supported,
        ours: modern::VERSIONS.iter().map(|v| (*v).to_owned()).collect(),
    }
}

fn decode<T: DeserializeOwned>(method: &str, value: Value) -> Result<T, ClientError> {
    serde_json::from_value(value).map_err(|e| ClientError::InvalidResult {
        method: method.to_owned(),
        reason: e.to_string(),
    })
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
