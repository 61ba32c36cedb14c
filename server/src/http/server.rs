//! Listening, serving connections within bounds, and shutting down gracefully.
//!
//! Each accepted connection is served by hyper's HTTP/1 connection driver with a timer, so
//! a client that sends its request head slowly (slowloris) is cut off after
//! `header_timeout` (the timer also runs while a keep-alive connection waits for its next
//! request, so idle connections are closed too), and at the connection cap the oldest
//! connection that never sent a request makes room for a new one ([`admit`]); a head larger
//! than `max_header_bytes` gets 431; hyper's read buffer is bounded by the same number. A client that stops reading
//! its response is disconnected after `send_timeout` ([`SendTimeout`]). On the shutdown
//! signal the listener closes, idle keep-alive connections close, and requests in flight
//! finish within `shutdown_grace` (hyper-util's `GracefulShutdown`). Connections still open
//! when the grace ends are closed; whether that cut a reply ([`super::inflight`]) decides
//! the exit status.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::config::HttpConfig;
use super::inflight::{serving, Connections, Track};
use super::routes::router;
use super::stall::SendTimeout;
use super::state::Shared;
use crate::core::Served;
use crate::exit::Exit;
use crate::info::ServerInfo;
use crate::tools::ToolSet;

/// hyper's smallest allowed read buffer (it panics below this).
const MIN_BUF: usize = 8192;

/// How long closing the connections left at the end of the grace may take.
const CLOSING: Duration = Duration::from_secs(1);

/// Serves MCP over Streamable HTTP until `shutdown` completes, then drains.
///
/// Prints `listening on http://ADDR/PATH` on stderr once bound (ADDR as bound, so port 0
/// shows the port chosen): a fixed line that scripts and tests wait for, printed whatever
/// the log level. Returns [`Exit::Shutdown`] when every request received was answered within
/// the grace period (a request whose body had not fully arrived is closed, losing nothing),
/// [`Exit::DrainTimedOut`] when a reply was cut; binding fails with the I/O error.
pub async fn serve_http(
    config: HttpConfig,
    tools: Arc<ToolSet>,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<Exit> {
    let listener = TcpListener::bind(config.addr).await?;
    serve_http_on(listener, config, tools, shutdown).await
}

/// [`serve_http`] on a listener bound already (`config.addr` is not used): for tests, which
/// bind port 0 themselves to know the port.
#[doc(hidden)]
pub async fn serve_http_on(
    listener: TcpListener,
    config: HttpConfig,
    tools: Arc<ToolSet>,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<Exit> {
    announce(&listener, &config)?;
    let grace = config.shutdown_grace;
    let shared = Arc::new(Shared::new(
        config,
        Served::new(tools, ServerInfo::default()),
    ));
    let sweeper = tokio::spawn(sweep_forever(Arc::clone(&shared)));
    let graceful = GracefulShutdown::new();
    let connections = Arc::new(Connections::default());
    accept(
        listener,
        Arc::clone(&shared),
        &graceful,
        &connections,
        shutdown,
    )
    .await;
    sweeper.abort();
    // Listen streams never end on their own: ended here, each with its completion response,
    // so they do not hold the drain to the end of the grace.
    super::listen::close_all(&shared.listeners);
    tracing::info!(
        connections = graceful.count(),
        "no longer accepting; finishing requests in flight"
    );
    let exit = match tokio::time::timeout(grace, graceful.shutdown()).await {
        Ok(()) => Exit::Shutdown,
        Err(_) => end_of_grace(&connections, grace).await,
    };
    // Calls whose client went away (legacy calls outlive their POST) end with the server.
    shared.sessions.end_all();
    Ok(exit)
}

/// The grace is over: every connection still open is closed. A request not fully received
/// is no lost work (exit 0); a received request whose reply is cut counts as on stdio: a
/// warning naming it (logged by [`Connections::close_all`]), and [`Exit::DrainTimedOut`].
async fn end_of_grace(connections: &Connections, grace: Duration) -> Exit {
    let left = connections.close_all();
    // Aborted tasks end at their next poll; bounded all the same.
    if tokio::time::timeout(CLOSING, connections.closed())
        .await
        .is_err()
    {
        tracing::warn!(
            "connections still closing {} s after the grace",
            CLOSING.as_secs_f64()
        );
    }
    if left.cut == 0 {
        tracing::info!(
            closed = left.unreceived,
            "shutdown grace ({} s) over: closed the connections whose requests had not fully arrived",
            grace.as_secs_f64()
        );
        Exit::Shutdown
    } else {
        tracing::warn!(
            cut = left.cut,
            closed = left.unreceived,
            "shutdown grace ({} s) over with replies unsent; exiting with status 1",
            grace.as_secs_f64()
        );
        Exit::DrainTimedOut
    }
}

/// The `listening on` line, and a warning for an address others can reach.
fn announce(listener: &TcpListener, config: &HttpConfig) -> std::io::Result<()> {
    let local = listener.local_addr()?;
    if !local.ip().is_loopback() {
        tracing::warn!(
            addr = %local,
            "listening on a non-loopback address: any host that can reach it can use this server (there is no authentication)"
        );
    }
    eprintln!("listening on http://{local}{}", config.path);
    tracing::info!(
        version = env!("CARGO_PKG_VERSION"),
        addr = %local,
        path = config.path,
        max_sessions = config.max_sessions,
        "serving MCP over Streamable HTTP"
    );
    Ok(())
}

/// Accepts connections until `shutdown`, each served by hyper within the configured bounds.
async fn accept(
    listener: TcpListener,
    shared: Arc<Shared>,
    graceful: &GracefulShutdown,
    connections: &Arc<Connections>,
    shutdown: impl Future<Output = ()>,
) {
    let config = &shared.config;
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(config.header_timeout)
        .max_header_size(config.max_header_bytes)
        .max_buf_size(config.max_header_bytes.max(MIN_BUF));
    let send_timeout = config.send_timeout;
    let slots = Arc::new(Semaphore::new(config.max_connections.max(1)));
    let app = router(Arc::clone(&shared));
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let accepted = admit(&listener, &slots, connections);
        tokio::select! {
            (slot, accepted) = accepted => match accepted {
                Ok((stream, peer)) => {
                    let _ = stream.set_nodelay(true);
                    let registered = connections.register(peer);
                    let id = registered.id;
                    let service = TowerToHyperService::new(app.clone());
                    let service = Track::new(service, Arc::clone(&registered.conn));
                    let stream = SendTimeout::new(stream, send_timeout);
                    let connection = builder.serve_connection(TokioIo::new(stream), service);
                    let connection = graceful.watch(connection);
                    let conn = Arc::clone(&registered.conn);
                    let task = tokio::spawn(serving(conn, async move {
                        let _slot = slot;
                        let _registered = registered;
                        if let Err(e) = connection.await {
                            tracing::debug!(%peer, "connection ended: {e}");
                        }
                    }));
                    connections.set_abort(id, task.abort_handle());
                }
                Err(e) => {
                    // Out of file descriptors or similar: back off briefly instead of
                    // spinning on accept.
                    tracing::warn!("accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
            () = &mut shutdown => break,
        }
    }
}

/// The next connection and its slot. Below the cap, a slot then a connection. At the cap, the
/// next client is accepted, room is made by closing the oldest connection that never sent a
/// request (slowloris), and the client waits for that slot; with none to close it waits for
/// any, as do clients still in the backlog, so memory stays bounded by the cap (plus one).
async fn admit(
    listener: &TcpListener,
    slots: &Arc<Semaphore>,
    connections: &Connections,
) -> (
    Option<OwnedSemaphorePermit>,
    std::io::Result<(TcpStream, SocketAddr)>,
) {
    if let Ok(slot) = Arc::clone(slots).try_acquire_owned() {
        return (Some(slot), listener.accept().await);
    }
    let accepted = listener.accept().await;
    if accepted.is_ok() {
        connections.close_oldest_unused();
    }
    (Arc::clone(slots).acquire_owned().await.ok(), accepted)
}

/// Ends idle sessions in the background, so memory is returned even when no `initialize`
/// arrives to sweep the full store.
async fn sweep_forever(shared: Arc<Shared>) {
    let period =
        (shared.sessions.idle() / 2).clamp(Duration::from_secs(1), Duration::from_secs(60));
    let mut tick = tokio::time::interval(period);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        shared.sessions.sweep();
    }
}
