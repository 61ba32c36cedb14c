//! The blocking loop: what the binary runs when stdin and stdout are pipes.
//!
//! At window 1 a round trip through the async loop costs an `epoll_wait` and the runtime's
//! wake-up around each read: on pipes with the server beside the client on one CPU, 1.2× the
//! p50 of this loop, and 1.55–1.6× the floor's against this loop's 1.3× (BENCHMARKS.md, "The
//! speed machinery, piece by piece"). Here the serving thread sits in a plain blocking `read(2)`
//! and answers with a plain `write(2)`; everything but the I/O and the waiting is the shared
//! [`Connection`]'s, as on the async loop. Sockets gained less than a fifth and go to the async
//! loop.
//!
//! What a blocking loop must still do:
//! - **Stop on a signal.** A blocked `read` or `write` does not notice a flag. A [`Stopper`]
//!   (driven by the binary's signal thread) marks the stop, makes this loop's pipes
//!   non-blocking (their open file descriptions are the server's own: [`super::streams`]
//!   reopens them), pokes the wake pipe and interrupts the serving thread with `SIGURG`; the
//!   interrupted call restarts, finds it may not wait, and returns.
//! - **Run tool calls that take time.** They run on a runtime started on first need, on a
//!   thread of its own; each that ends, and each request one sends the client, writes a byte
//!   to the wake pipe. While any is running the loop waits in `poll(2)` on stdin and the wake
//!   pipe instead of `read(2)`.
//! - **Bound shutdown.** After EOF or a signal, what was read is answered and written within
//!   `Config::shutdown_grace`, with non-blocking writes and `poll(2)` timeouts.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::mpsc as std_mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::future::AbortHandle;
use mcp_protocol::mcp::CallToolResult;
use nix::fcntl::{fcntl, FcntlArg, OFlag};
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::pthread::{pthread_self, Pthread};
use parking_lot::Mutex;

use super::connection::{log_end, Connection, Frames, Runner, READ_SIZE};
use super::replies::Replies;
use crate::config::Config;
use crate::core::Work;
use crate::exit::Exit;
use crate::peer::{CallId, Peer, PeerError};
use crate::tools::ToolSet;

/// The signal that interrupts the serving thread's blocked call. Its default action is to do
/// nothing, so one sent from outside changes nothing either.
const INTERRUPT: i32 = libc::SIGURG;

/// The blocking loop's files: its input and output pipes, and a wake pipe.
#[derive(Debug)]
pub struct BlockingStdio {
    input: File,
    output: File,
    wake_rx: File,
    shared: Arc<Shared>,
}

/// What the serving thread shares with a [`Stopper`] and with its calls.
#[derive(Debug)]
struct Shared {
    /// 0 while serving; the signal number (or -1) once stopped.
    stop: AtomicI32,
    /// Set while [`serve_blocking`] runs, so a stop never touches a thread that has moved on
    /// or keeps the files open after it.
    serving: Mutex<Option<Serving>>,
    /// Written (one byte, never blocking) when a call ends or asks, or the loop is stopped.
    wake_tx: File,
}

/// The serving thread, and clones of its input and output (the same open file descriptions).
#[derive(Debug)]
struct Serving {
    thread: Pthread,
    input: File,
    output: File,
}

/// Clears [`Shared::serving`] when [`serve_blocking`] returns, however it returns.
struct ServingGuard<'a>(&'a Shared);

impl Drop for ServingGuard<'_> {
    fn drop(&mut self) {
        *self.0.serving.lock() = None;
    }
}

impl Shared {
    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Acquire) != 0
    }

    fn wake(&self) {
        // Full means a wake-up is already pending: nothing is lost.
        let _ = (&self.wake_tx).write(&[1]);
    }
}

/// Stops a [`serve_blocking`] loop from another thread (the binary's signal thread).
#[derive(Debug, Clone)]
pub struct Stopper(Arc<Shared>);

impl Stopper {
    /// Ends the loop as SIGTERM does: answer what was read, flush within the grace, return
    /// [`Exit::Shutdown`]. `signal` is logged; the first call wins.
    pub fn stop(&self, signal: i32) {
        let shared = &self.0;
        let signal = if signal == 0 { -1 } else { signal };
        if shared
            .stop
            .compare_exchange(0, signal, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return;
        }
        // Order matters: the pipes are non-blocking before the thread is interrupted, so a
        // call it makes after the check of `stop`, or restarts after the interrupt, returns at
        // once.
        shared.wake();
        if let Some(serving) = &*shared.serving.lock() {
            let _ = set_nonblocking(&serving.input);
            let _ = set_nonblocking(&serving.output);
            let _ =
                nix::sys::pthread::pthread_kill(serving.thread, nix::sys::signal::Signal::SIGURG);
        }
    }
}

impl BlockingStdio {
    /// A loop over the pipes `input` and `output`, each an open file description of its own
    /// (a stop makes both non-blocking, and so does the end of serving for `output`, whose
    /// last writes are bounded by the grace). Installs, once per process, the `SIGURG`
    /// handler that lets a stop interrupt a blocked call.
    pub fn new(input: File, output: File) -> io::Result<Self> {
        install_interrupt_handler()?;
        let (wake_rx, wake_tx) = nix::unistd::pipe2(OFlag::O_CLOEXEC | OFlag::O_NONBLOCK)?;
        Ok(BlockingStdio {
            shared: Arc::new(Shared {
                stop: AtomicI32::new(0),
                serving: Mutex::new(None),
                wake_tx: File::from(wake_tx),
            }),
            input,
            output,
            wake_rx: File::from(wake_rx),
        })
    }

    pub fn stopper(&self) -> Stopper {
        Stopper(Arc::clone(&self.shared))
    }

    /// The signal [`Stopper::stop`] was called with, if it was.
    pub fn stopped_by(&self) -> Option<i32> {
        match self.shared.stop.load(Ordering::Acquire) {
            0 => None,
            signal => Some(signal),
        }
    }
}

/// Serves one MCP connection on the calling thread with blocking I/O, until input ends, the
/// [`Stopper`] stops it, or the output is closed. The same replies, in the same order, as
/// [`serve`](crate::serve); `Err` only if writing fails for a reason other than a closed pipe.
pub fn serve_blocking(
    stdio: &BlockingStdio,
    config: &Config,
    tools: Arc<ToolSet>,
) -> io::Result<Exit> {
    *stdio.shared.serving.lock() = Some(Serving {
        thread: pthread_self(),
        input: stdio.input.try_clone()?,
        output: stdio.output.try_clone()?,
    });
    let _serving = ServingGuard(&stdio.shared);
    let mut conn = Connection::new(config, tools, Background::new(&stdio.shared));
    let exit = serve_until_done(stdio, &mut conn)?;
    drain(stdio, conn, config, exit)
}

/// The loop until input ends, a stop, or a closed output.
fn serve_until_done(stdio: &BlockingStdio, conn: &mut Connection<Background>) -> io::Result<Exit> {
    let shared = &stdio.shared;
    let mut input = Input {
        file: &stdio.input,
        scratch: vec![0; READ_SIZE],
    };
    loop {
        // What calls sent meanwhile first; then everything made so far goes out before more
        // input is read.
        if conn.runner.running > 0 {
            take_events(conn)?;
        }
        match write_all(&stdio.output, conn.out(), shared)? {
            Written::All => {}
            Written::Stopped => return Ok(Exit::Shutdown),
            Written::Closed => return Ok(Exit::OutputClosed),
        }
        if shared.stopped() {
            return Ok(Exit::Shutdown);
        }
        if conn.runner.running > 0 {
            // A call may end or ask while we wait: wait for it or for input.
            match wait_readable(&[&stdio.wake_rx, &stdio.input], None)? {
                Some(0) => {
                    drain_wake(&stdio.wake_rx);
                    continue;
                }
                Some(_) => {}
                // Interrupted: look at the stop flag.
                None => continue,
            }
        }
        match input.read(conn, shared) {
            Got::Data => {}
            Got::Again => continue,
            Got::Eof => conn.end_input(),
            Got::Stopped => return Ok(Exit::Shutdown),
            Got::Failed(e) => return Ok(Exit::ReadFailed(e)),
        }
        loop {
            match conn.frames()? {
                Frames::Idle => break,
                Frames::Due => match write_all(&stdio.output, conn.out(), shared)? {
                    Written::All => {}
                    Written::Stopped => return Ok(Exit::Shutdown),
                    Written::Closed => return Ok(Exit::OutputClosed),
                },
                Frames::Failed(e) => return Ok(Exit::ReadFailed(e)),
            }
        }
        if conn.input_ended() {
            // Its replies are written in the drain, within the grace.
            return Ok(Exit::InputClosed);
        }
    }
}

/// After the loop: logs how it ended, then answers and writes what was read within the
/// grace, unless the output is gone. Input has ended, so a call's request to the client can
/// get no answer: it is refused.
fn drain(
    stdio: &BlockingStdio,
    mut conn: Connection<Background>,
    config: &Config,
    exit: Exit,
) -> io::Result<Exit> {
    if !log_end(&exit) {
        return Ok(exit);
    }
    let deadline = Instant::now() + config.shutdown_grace;
    let output = &stdio.output;
    let _ = set_nonblocking(output);
    conn.runner.closed = true;
    loop {
        take_events(&mut conn)?;
        match write_by(output, conn.out(), deadline) {
            Ok(true) => {}
            Ok(false) => return Ok(give_up(&conn, config)),
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                tracing::debug!("output closed by the peer; exiting");
                return Ok(Exit::OutputClosed);
            }
            Err(e) => return Err(e),
        }
        if conn.runner.running == 0 {
            return Ok(exit);
        }
        match wait_readable(&[&stdio.wake_rx], Some(deadline))? {
            Some(_) => drain_wake(&stdio.wake_rx),
            // Interrupted (a stop during an EOF drain sends SIGURG): only the deadline ends
            // the wait.
            None if Instant::now() < deadline => {}
            None => return Ok(give_up(&conn, config)),
        }
    }
}

/// The grace is over: what is unsent is given up, with a warning. The calls still running are
/// dropped with the runtime they run on.
fn give_up(conn: &Connection<Background>, config: &Config) -> Exit {
    tracing::warn!(
        running = conn.runner.running,
        grace = ?config.shutdown_grace,
        "gave up waiting for replies to be answered and flushed"
    );
    Exit::DrainTimedOut
}

/// Takes the calls that ended and the requests they sent the client, without waiting.
fn take_events(conn: &mut Connection<Background>) -> io::Result<()> {
    while let Ok((call, ended)) = conn.runner.ended.try_recv() {
        conn.runner.running -= 1;
        conn.runner.aborts.remove(&call);
        match ended {
            Ended::Ran(result) => conn.ended_call(call, result)?,
            Ended::CannotRun(why) => conn.cannot_run(call, why)?,
        }
    }
    loop {
        let (asks, _, runner) = conn.parts();
        let Ok(ask) = asks.try_recv() else {
            return Ok(());
        };
        if runner.closed {
            let _ = ask.answer.send(Err(PeerError::Closed));
        } else {
            conn.ask(ask)?;
        }
    }
}

/// The input side: `read(2)` into `scratch`, then on to the connection.
struct Input<'a> {
    file: &'a File,
    /// `read(2)` needs initialised memory, and the connection's buffer's spare room is not
    /// (no `unsafe` here): bytes are read here and copied on, a `memcpy` of what was read.
    scratch: Vec<u8>,
}

enum Got {
    Data,
    Again,
    Eof,
    Stopped,
    Failed(io::Error),
}

impl Input<'_> {
    fn read(&mut self, conn: &mut Connection<Background>, shared: &Shared) -> Got {
        match self.file.read(&mut self.scratch) {
            Ok(0) => Got::Eof,
            Ok(n) => {
                conn.input().extend_from_slice(&self.scratch[..n]);
                Got::Data
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Got::Again,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if shared.stopped() {
                    Got::Stopped
                } else {
                    // Not ours to make non-blocking: wait as a blocking read would.
                    match wait_readable(&[self.file], None) {
                        Ok(_) => Got::Again,
                        Err(e) => Got::Failed(e),
                    }
                }
            }
            Err(e) => Got::Failed(e),
        }
    }
}

enum Written {
    All,
    Stopped,
    Closed,
}

/// Writes every reply, blocking while the client is slow to read (that is the back-pressure);
/// a stop ends the wait, and what is left is written within the grace.
fn write_all(file: &File, out: &mut Replies, shared: &Shared) -> io::Result<Written> {
    while !out.unwritten().is_empty() {
        match (&*file).write(out.unwritten()) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => out.wrote(n),
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return Ok(Written::Closed),
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::Interrupted | io::ErrorKind::WouldBlock
                ) =>
            {
                if shared.stopped() {
                    return Ok(Written::Stopped);
                }
                if e.kind() == io::ErrorKind::WouldBlock {
                    wait_writable(file, None)?;
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok(Written::All)
}

/// Writes every reply by `deadline` (the output is non-blocking by then): `false` if the
/// client did not take them in time.
fn write_by(file: &File, out: &mut Replies, deadline: Instant) -> io::Result<bool> {
    while !out.unwritten().is_empty() {
        match (&*file).write(out.unwritten()) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => out.wrote(n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if !wait_writable(file, Some(deadline))? {
                    return Ok(false);
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

/// How a call on the background runtime ended.
enum Ended {
    /// With its result, or aborted (`None`).
    Ran(Option<CallToolResult>),
    /// It could not be given a task: the runtime would not start (out of threads or memory).
    CannotRun(String),
}

/// Runs the calls of a blocking loop on a runtime started on first need. Each call that ends
/// (or is aborted) comes back on `ended` and pokes the wake pipe; so does each request one
/// sends the client.
struct Background {
    runtime: Option<BackgroundRuntime>,
    shared: Arc<Shared>,
    aborts: HashMap<CallId, AbortHandle>,
    /// Calls started and not yet seen on `ended`.
    running: usize,
    ended_tx: std_mpsc::Sender<(CallId, Ended)>,
    ended: std_mpsc::Receiver<(CallId, Ended)>,
    /// Input has ended: requests to the client are refused.
    closed: bool,
}

impl Background {
    fn new(shared: &Arc<Shared>) -> Self {
        let (ended_tx, ended) = std_mpsc::channel();
        Background {
            runtime: None,
            shared: Arc::clone(shared),
            aborts: HashMap::new(),
            running: 0,
            ended_tx,
            ended,
            closed: false,
        }
    }
}

impl Runner for Background {
    fn start(&mut self, call: CallId, work: Work, peer: Peer) {
        let (running, abort) = futures::future::abortable(work(peer));
        self.running += 1;
        let ended = self.ended_tx.clone();
        let shared = Arc::clone(&self.shared);
        let task = async move {
            let result = running.await.ok();
            let _ = ended.send((call, Ended::Ran(result)));
            shared.wake();
        };
        if self.runtime.is_none() {
            match BackgroundRuntime::start() {
                Ok(runtime) => self.runtime = Some(runtime),
                Err(e) => {
                    let _ = self.ended_tx.send((call, Ended::CannotRun(e.to_string())));
                    return;
                }
            }
        }
        if let Some(runtime) = &self.runtime {
            runtime.handle.spawn(task);
            self.aborts.insert(call, abort);
        }
    }

    fn abort(&mut self, call: CallId) {
        if let Some(handle) = self.aborts.remove(&call) {
            handle.abort();
        }
    }

    fn notify(&self) -> Option<Arc<dyn Fn() + Send + Sync>> {
        let shared = Arc::clone(&self.shared);
        Some(Arc::new(move || shared.wake()))
    }
}

/// A `current_thread` runtime driven by a thread of its own until dropped. Not the
/// multi-thread flavour: that one links libm into the binary for its scheduler's arithmetic,
/// a third of a MiB of resident memory for a runtime the echo tool never needs.
struct BackgroundRuntime {
    handle: tokio::runtime::Handle,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl BackgroundRuntime {
    fn start() -> io::Result<Self> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let handle = runtime.handle().clone();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        std::thread::Builder::new()
            .name("tool-calls".to_owned())
            .spawn(move || {
                let _ = runtime.block_on(stopped);
                // Tasks still running are dropped with the runtime, here.
            })?;
        tracing::debug!("started the runtime for tool calls that take time");
        Ok(BackgroundRuntime {
            handle,
            stop: Some(stop),
        })
    }
}

impl Drop for BackgroundRuntime {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// Waits until one of `files` is readable (or hung up): the index of the first that is.
/// `None` if `deadline` passed or a signal interrupted the wait (the caller decides which
/// matters).
fn wait_readable(files: &[&File], deadline: Option<Instant>) -> io::Result<Option<usize>> {
    let mut fds: Vec<PollFd<'_>> = files
        .iter()
        .map(|f| PollFd::new(f.as_fd(), PollFlags::POLLIN))
        .collect();
    match poll(&mut fds, timeout(deadline)) {
        Ok(0) | Err(nix::errno::Errno::EINTR) => Ok(None),
        Ok(_) => Ok(fds
            .iter()
            .position(|fd| fd.revents().is_some_and(|r| !r.is_empty()))),
        Err(e) => Err(e.into()),
    }
}

/// Waits until `output` takes more bytes; `false` if `deadline` passed first.
fn wait_writable(output: &File, deadline: Option<Instant>) -> io::Result<bool> {
    let mut fds = [PollFd::new(output.as_fd(), PollFlags::POLLOUT)];
    match poll(&mut fds, timeout(deadline)) {
        Ok(0) => Ok(deadline.is_some_and(|d| Instant::now() < d)),
        Ok(_) | Err(nix::errno::Errno::EINTR) => Ok(true),
        Err(e) => Err(e.into()),
    }
}

fn timeout(deadline: Option<Instant>) -> PollTimeout {
    match deadline {
        None => PollTimeout::NONE,
        Some(d) => {
            let left = d.saturating_duration_since(Instant::now());
            // Rounded up, so a wait never ends just before the deadline and spins.
            let ms = left.as_millis() + u128::from(left.subsec_nanos() % 1_000_000 != 0);
            PollTimeout::try_from(Duration::from_millis(ms.min(60_000) as u64))
                .unwrap_or(PollTimeout::MAX)
        }
    }
}

fn drain_wake(wake: &File) {
    let mut sink = [0u8; 64];
    while matches!((&*wake).read(&mut sink), Ok(n) if n > 0) {}
}

/// A handler (any) makes `SIGURG` interrupt a blocked call; without one it is ignored. One
/// per process, however many loops there are.
fn install_interrupt_handler() -> io::Result<()> {
    static INSTALLED: std::sync::OnceLock<Result<(), Arc<io::Error>>> = std::sync::OnceLock::new();
    INSTALLED
        .get_or_init(|| {
            signal_hook::flag::register(INTERRUPT, Arc::default())
                .map(drop)
                .map_err(Arc::new)
        })
        .clone()
        .map_err(|e| io::Error::new(e.kind(), format!("cannot install the SIGURG handler: {e}")))
}

/// Makes `file`'s blocking calls return at once (with `EAGAIN`), including one restarted after
/// an interrupt. A pipe's open file description here is the server's alone
/// ([`super::streams`]).
fn set_nonblocking(file: &File) -> io::Result<()> {
    let flags = OFlag::from_bits_truncate(fcntl(file, FcntlArg::F_GETFL)?);
    fcntl(file, FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK))?;
    Ok(())
}
