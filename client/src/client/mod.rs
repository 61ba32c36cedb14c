//! The client: lifecycle state machine, era detection, pending map, reader and writer tasks,
//! close.
//!
//! Legacy era: `new → initialized → ready → closed` (`basic/lifecycle.mdx`; the chapter's
//! diagram). Modern era (2026-07-28): `new → ready → closed`, ready as soon as the
//! `server/discover` probe is answered, and every request carries `_meta`. A
//! reader task pairs each reply with its caller through a map keyed by request id, whatever
//! order replies arrive in; a writer task owns the server's stdin. When the server goes away
//! every waiting caller is failed at once with the reason, exit status and last stderr lines.
//! Over Streamable HTTP (`http/`) one task takes the reader's and writer's place: it POSTs what
//! the writer would write and feeds each reply's messages to the same inbound path.
//!
//! This file is the [`Client`] handle: starting a connection, what it learned, notifications,
//! `close()`. The rest of its API extends `Client` from `handshake.rs` (`connect`,
//! `initialize`, `ping`) and `requests.rs` (`request`, `notify`, `list_tools`, `call_tool`).
//! Under the handle, none of them importing it or those two: `shared.rs` (the state handles
//! and tasks share; `call`), `pending.rs` (the pending map), `tasks.rs` (reader and writer),
//! `inbound.rs` (what the reader does with a frame), `close.rs` (the shutdown sequence) and
//! `lock.rs`.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use futures::Stream;
use mcp_protocol::mcp::{InitializeResult, ProtocolVersion};
use mcp_protocol::{Notification, Outgoing, StdioCodec};
use parking_lot::Mutex;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{broadcast, mpsc, watch, OnceCell, Semaphore};
use tokio_util::codec::{FramedRead, FramedWrite};
use tokio_util::sync::{CancellationToken, DropGuard};

mod close;
mod handshake;
mod http;
mod inbound;
mod pending;
mod requests;
mod shared;
mod tasks;

pub use self::close::{CloseReport, CloseStep};
pub use self::http::HttpTarget;

use self::pending::Pending;
use self::shared::Shared;
use crate::command::ServerCommand;
use crate::era::{Connected, DiscoverResult, Era};
use crate::error::{ClientError, ClosedReason};
use crate::options::ClientOptions;
use crate::process::{self, KillOnDrop, Process};
use crate::state::{Phase, State};

/// Held by client handles only (not by the tasks): dropping the last handle stops the tasks
/// and kills the server.
struct Handles {
    _stop_tasks: DropGuard,
    _kill: Option<KillOnDrop>,
    /// What the first [`Client::close`] did; later calls return it.
    close_report: OnceCell<CloseReport>,
}

/// An MCP client connection. Cheap to clone; all clones share the connection. Dropping the
/// last clone kills the server (if spawned) and reaps it.
#[derive(Clone)]
pub struct Client {
    shared: Arc<Shared>,
    handles: Arc<Handles>,
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
        let codec = StdioCodec::new(options.framing.into())
            .with_max_message_bytes(options.max_message_bytes);
        let (shared, out_rx) = Client::new_shared(options, process);
        let stop_tasks = CancellationToken::new();
        tokio::spawn(tasks::write_loop(
            FramedWrite::new(writer, codec.clone()),
            out_rx,
            Arc::clone(&shared),
            stop_tasks.clone(),
        ));
        tokio::spawn(tasks::read_loop(
            FramedRead::new(reader, codec),
            Arc::clone(&shared),
            stop_tasks.clone(),
        ));
        Client::from_parts(shared, stop_tasks, kill)
    }

    /// The state a transport's tasks share with the handles, and the write queue's receiving
    /// end, which the transport's writer owns.
    fn new_shared(
        options: ClientOptions,
        process: Option<Arc<Process>>,
    ) -> (Arc<Shared>, mpsc::Receiver<Outgoing>) {
        let (out, out_rx) = mpsc::channel(256);
        let shared = Arc::new(Shared {
            options,
            phase: Mutex::new(Phase::New),
            connected: Mutex::new(None),
            pending: Pending::new(),
            out,
            stop_writer: CancellationToken::new(),
            reader_done: CancellationToken::new(),
            writer_done: CancellationToken::new(),
            close_requested: AtomicBool::new(false),
            write_error: Mutex::new(None),
            notifications: broadcast::channel(256).0,
            closed: watch::channel(None).0,
            process,
            server_requests: Arc::new(Semaphore::new(Shared::SERVER_REQUESTS)),
        });
        (shared, out_rx)
    }

    /// The handle over a started transport: `stop_tasks` is cancelled when the last handle
    /// drops.
    fn from_parts(
        shared: Arc<Shared>,
        stop_tasks: CancellationToken,
        kill: Option<KillOnDrop>,
    ) -> Client {
        Client {
            shared,
            handles: Arc::new(Handles {
                _stop_tasks: stop_tasks.drop_guard(),
                _kill: kill,
                close_report: OnceCell::new(),
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
        self.shared.connected.lock().as_ref().map(Connected::era)
    }

    /// What the handshake (legacy) or the probe (modern) established.
    pub fn connected(&self) -> Option<Connected> {
        self.shared.connected.lock().clone()
    }

    /// The `initialize` result (legacy era), once the handshake got that far.
    pub fn initialize_result(&self) -> Option<InitializeResult> {
        self.shared
            .connected
            .lock()
            .as_ref()
            .and_then(|c| c.initialize_result().cloned())
    }

    /// The `server/discover` result (modern era).
    pub fn discover_result(&self) -> Option<DiscoverResult> {
        self.shared
            .connected
            .lock()
            .as_ref()
            .and_then(|c| c.discover_result().cloned())
    }

    /// The protocol version in use, in either era: the one `initialize` negotiated (legacy) or
    /// the one every request declares in `_meta` (modern).
    pub fn protocol_version(&self) -> Option<String> {
        self.shared
            .connected
            .lock()
            .as_ref()
            .map(|c| c.protocol_version().to_owned())
    }

    /// The negotiated legacy version, typed (legacy era only).
    pub fn legacy_protocol_version(&self) -> Option<ProtocolVersion> {
        self.shared
            .connected
            .lock()
            .as_ref()
            .and_then(|c| c.initialize_result())
            .and_then(|init| ProtocolVersion::parse_legacy(&init.protocol_version))
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

    /// Closes the connection as the spec's shutdown sequence says: close the server's stdin,
    /// wait (`close_grace`), SIGTERM, wait, SIGKILL. Requests still in flight may be answered
    /// during the first wait; afterwards they fail. Over HTTP: what was queued is posted,
    /// requests in flight fail, and the session (if any) is ended with `DELETE`, bounded by
    /// `close_grace`. Idempotent: later calls return the same report.
    pub async fn close(&self) -> CloseReport {
        let shared = Arc::clone(&self.shared);
        self.handles
            .close_report
            .get_or_init(|| async move { shared.shutdown().await })
            .await
            .clone()
    }
}
