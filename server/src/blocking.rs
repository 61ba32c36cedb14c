//! The blocking stdio loop: what the binary runs when stdin and stdout are pipes or sockets.
//!
//! At window 1 a round trip through an async reactor costs a `read` that fails with `EAGAIN`,
//! an `epoll_wait`, the wake-up and the scheduler around the task: 4.6 against 4.0 µs per
//! round trip pinned to one CPU (BENCHMARKS.md, "Window 1: what a round trip's work costs").
//! Here the serving thread sits in a plain blocking `read(2)` and answers with a plain
//! `write(2)`: no runtime on the hot path. Everything but the I/O and the waiting is the
//! [`Core`]'s, shared with the async loop.
//!
//! What a blocking loop must still do:
//! - **Stop on a signal.** A blocked `read` or `write` does not notice a flag. A [`Stopper`]
//!   (driven by the binary's signal thread) marks the stop, makes this loop's input and
//!   output stop waiting ([`stop_waiting`]: O_NONBLOCK on a pipe, a timeout on a socket),
//!   pokes the wake pipe and interrupts the serving thread with `SIGURG`; the interrupted call
//!   restarts, finds it may not wait, and returns.
//! - **Run tool calls that take time.** Those run on a runtime started on first need, on a
//!   thread of its own. Their replies come back on a queue, and each finished task writes a
//!   byte to the wake pipe; while any is running the loop waits in `poll(2)` on stdin and the
//!   wake pipe instead of `read(2)`.
//! - **Bound shutdown.** After EOF or a signal, what was read is answered and written within
//!   `Config::shutdown_grace`, with non-blocking writes and `poll(2)` timeouts.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use nix::fcntl::{fcntl, FcntlArg, OFlag};
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::pthread::{pthread_self, Pthread};
use tokio::task::AbortHandle;

use crate::config::Config;
use crate::connection::{lock, Spawn};
use crate::exit::Exit;
use crate::replies::Replies;
use crate::sans_io::{Burst, Core, Step, READ_SIZE};
use crate::tools::ToolSet;

/// The signal that interrupts the serving thread's blocked call. Its default action is to do
/// nothing, so one sent from outside changes nothing either.
const INTERRUPT: i32 = libc::SIGURG;

/// The blocking loop's files: its input and output, and a wake pipe.
#[derive(Debug)]
pub struct BlockingStdio {
    input: File,
    output: File,
    wake_rx: File,
    shared: Arc<Shared>,
}

/// What the serving thread shares with a [`Stopper`] and with its background tasks.
#[derive(Debug)]
struct Shared {
    /// 0 while serving; the signal number (or -1) once stopped.
    stop: AtomicI32,
    /// Set while [`serve_blocking`] runs, so a stop never touches a thread that has moved on
    /// or keeps the files open after it.
    serving: Mutex<Option<Serving>>,
    /// Written (one byte, never blocking) when a task finishes or the loop is stopped.
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
        *lock(&self.0.serving) = None;
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
        // Order matters: the descriptors are non-blocking before the thread is interrupted,
        // so a call it makes after the check of `stop`, or restarts after the interrupt,
        // returns at once.
        shared.wake();
        if let Some(serving) = &*lock(&shared.serving) {
            let _ = stop_waiting(&serving.input, Direction::Read);
            let _ = stop_waiting(&serving.output, Direction::Write);
            let _ =
                nix::sys::pthread::pthread_kill(serving.thread, nix::sys::signal::Signal::SIGURG);
        }
    }
}

impl BlockingStdio {
    /// A loop over `input` and `output`, each a pipe or a socket. A pipe must be an open file
    /// description of its own: a stop makes both non-blocking, and so does the end of serving
    /// for `output` (its last writes are bounded by the grace). A socket gets timeouts
    /// instead. Installs, once per process, the `SIGURG` handler
    /// that lets a stop interrupt a blocked call.
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
    *lock(&stdio.shared.serving) = Some(Serving {
        thread: pthread_self(),
        input: stdio.input.try_clone()?,
        output: stdio.output.try_clone()?,
    });
    let _serving = ServingGuard(&stdio.shared);
    let shared = &stdio.shared;
    let mut core = Core::new(
        config,
        tools,
        Background {
            runtime: None,
            shared: Arc::clone(shared),
        },
    );
    let mut input = Input {
        file: &stdio.input,
        scratch: vec![0; READ_SIZE],
    };
    let output = &stdio.output;

    let exit = 'serve: loop {
        // Replies of finished tasks first; then everything made so far goes out before more
        // input is read.
        core.task_replies()?;
        match write_all(output, core.out(), shared)? {
            Written::All => {}
            Written::Stopped => break Exit::Shutdown,
            Written::Closed => break Exit::OutputClosed,
        }
        if shared.stopped() {
            break Exit::Shutdown;
        }
        if core.replies_queued() {
            // More than one write's worth, or the last task finished after they were taken.
            continue;
        }
        if core.running() {
            // A task may finish while we wait: wait for it or for input.
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
        match input.read(&mut core, shared) {
            Got::Data => {}
            Got::Again => continue,
            Got::Eof => core.end_input(),
            Got::Stopped => break Exit::Shutdown,
            Got::Failed(e) => break Exit::ReadFailed(e),
        }
        loop {
            match core.handle()? {
                Burst::Idle => break,
                Burst::Due => match write_all(output, core.out(), shared)? {
                    Written::All => {}
                    Written::Stopped => break 'serve Exit::Shutdown,
                    Written::Closed => break 'serve Exit::OutputClosed,
                },
                Burst::Failed(e) => break 'serve Exit::ReadFailed(e),
            }
        }
        if core.input_ended() {
            // Its replies are written in the drain, within the grace.
            break Exit::InputClosed;
        }
    };

    let Some(mut drain) = core.finish(&exit) else {
        return Ok(exit);
    };
    let deadline = Instant::now() + drain.grace();
    let _ = stop_waiting(output, Direction::Write);
    // Dropping the drain stops the tool-call runtime's thread, if one was started; it is not
    // waited for.
    loop {
        match drain.next()? {
            Step::Write => match write_by(output, drain.out(), deadline) {
                Ok(true) => {}
                Ok(false) => return Ok(drain.give_up()),
                Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return Ok(drain.output_closed()),
                Err(e) => return Err(e),
            },
            Step::Wait => match wait_readable(&[&stdio.wake_rx], Some(deadline))? {
                Some(_) => drain_wake(&stdio.wake_rx),
                // Interrupted (a stop during an EOF drain sends SIGURG): only the deadline
                // ends the wait.
                None if Instant::now() < deadline => {}
                None => return Ok(drain.give_up()),
            },
            Step::Done => return Ok(exit),
        }
    }
}

/// The input side: `read(2)` into `scratch`, then on to the core.
struct Input<'a> {
    file: &'a File,
    /// `read(2)` needs initialised memory, and the core's buffer's spare room is not (no
    /// `unsafe` here): bytes are read here and copied on, a `memcpy` of what was read.
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
    fn read(&mut self, core: &mut Core<Background>, shared: &Shared) -> Got {
        match self.file.read(&mut self.scratch) {
            Ok(0) => Got::Eof,
            Ok(n) => {
                core.feed(&self.scratch[..n]);
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

/// Runs tool calls that did not finish at once, on a runtime started on first need. Each task
/// pokes the wake pipe when it is done (or aborted).
struct Background {
    runtime: Option<Runner>,
    shared: Arc<Shared>,
}

/// A `current_thread` runtime driven by a thread of its own until `stop` is sent or dropped.
/// Not the multi-thread flavour: that one links libm into the binary for its scheduler's
/// arithmetic, a third of a MiB of resident memory for a runtime the echo tool never needs.
struct Runner {
    handle: tokio::runtime::Handle,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Runner {
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
        Ok(Runner {
            handle,
            stop: Some(stop),
        })
    }
}

impl Drop for Runner {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

impl Spawn for Background {
    fn start(&mut self) -> io::Result<()> {
        if self.runtime.is_none() {
            self.runtime = Some(Runner::start()?);
        }
        Ok(())
    }

    fn spawn(&mut self, task: BoxFuture<'static, ()>) -> AbortHandle {
        let Some(runner) = &self.runtime else {
            unreachable!("Spawn::spawn is only called after Spawn::start succeeded");
        };
        let wake = Wake(Arc::clone(&self.shared));
        runner
            .handle
            .spawn(async move {
                let _wake = wake;
                task.await;
            })
            .abort_handle()
    }
}

/// Pokes the wake pipe when a task ends or is aborted. The task, and with it its count
/// (`Core::running`), is dropped first (an inner scope): a loop that wakes sees it gone.
struct Wake(Arc<Shared>);

impl Drop for Wake {
    fn drop(&mut self) {
        self.0.wake();
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
    static INSTALLED: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    INSTALLED
        .get_or_init(|| {
            signal_hook::flag::register(INTERRUPT, Arc::default())
                .map(drop)
                .map_err(|e| format!("cannot install the SIGURG handler: {e}"))
        })
        .clone()
        .map_err(io::Error::other)
}

#[derive(Clone, Copy)]
enum Direction {
    Read,
    Write,
}

/// Makes `file`'s blocking calls in `direction` return at once (with `EAGAIN`), including one
/// that is restarted after an interrupt. A pipe gets O_NONBLOCK: its open file description is
/// ours alone ([`crate::stdio`]). A socket cannot be reopened, and its description may be
/// shared, so it gets a receive or send timeout of a microsecond instead (the kernel waits at
/// most a scheduler tick): a property of our end of the socket that the host's end never sees.
fn stop_waiting(file: &File, direction: Direction) -> io::Result<()> {
    use std::os::unix::fs::FileTypeExt;
    if !file.metadata()?.file_type().is_socket() {
        return set_nonblocking(file);
    }
    use nix::sys::socket::{setsockopt, sockopt};
    let tick = nix::sys::time::TimeVal::new(0, 1);
    match direction {
        Direction::Read => setsockopt(file, sockopt::ReceiveTimeout, &tick)?,
        Direction::Write => setsockopt(file, sockopt::SendTimeout, &tick)?,
    }
    Ok(())
}

fn set_nonblocking(file: &File) -> io::Result<()> {
    let flags = OFlag::from_bits_truncate(fcntl(file, FcntlArg::F_GETFL)?);
    fcntl(file, FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK))?;
    Ok(())
}
