//! The serve loops' sans-I/O core: bytes in, replies out. It owns a connection's session, its
//! input buffer and codec, and its replies; a loop only reads, writes and waits, and asks the
//! core what to do next. Tests drive it with no I/O at all (STYLE.md §13: rustls's
//! `read_tls`/`process_new_packets`/`write_tls`, quinn-proto).
//!
//! A loop's life: [`Core::handle`] the frames read so far, writing whenever replies are due,
//! then read more (or [`Core::end_input`]); encode finished tasks' replies as they come. When
//! input ends or a stop comes, [`Core::finish`] gives the [`Drain`], which says what to do
//! within `Config::shutdown_grace`: write, wait for a task, or be done.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use bytes::BytesMut;
use mcp_protocol::codec::RawCodec;
use mcp_protocol::{Outgoing, StdioCodec};
use tokio::sync::mpsc;
use tokio::sync::mpsc::error::TryRecvError;
use tokio_util::codec::Decoder;

use crate::config::Config;
use crate::connection::{lock, Connection, InFlight, Running, Spawn};
use crate::exit::Exit;
use crate::info::ServerInfo;
use crate::replies::Replies;
use crate::session::Session;
use crate::tools::ToolSet;

/// Bytes a read asks for: the input buffer's capacity.
pub(crate) const READ_SIZE: usize = 64 * 1024;

/// One connection's state between reads and writes.
pub(crate) struct Core<S> {
    conn: Connection<S>,
    codec: RawCodec,
    /// Read bytes not yet a whole frame.
    input: BytesMut,
    /// Input ended: what is left is decoded as an unterminated last frame.
    ended: bool,
    replies: Replies,
    /// Replies of tool calls that ran in their own task (`Connection::tx` sends here).
    queue: mpsc::Receiver<Outgoing>,
    grace: Duration,
}

/// Why [`Core::handle`] returned.
#[derive(Debug)]
pub(crate) enum Burst {
    /// No whole frame is left: read more (at the end of input: nothing more will come).
    Idle,
    /// Enough replies wait ([`Replies::due`]): write them, then handle the rest.
    Due,
    /// The input cannot be decoded any further.
    Failed(io::Error),
}

impl<S: Spawn> Core<S> {
    /// A new connection; tool calls that take time are spawned with `spawner`.
    pub(crate) fn new(config: &Config, tools: Arc<ToolSet>, spawner: S) -> Self {
        let codec = StdioCodec::new(config.framing)
            .with_max_message_bytes(config.max_message_bytes)
            .with_max_header_bytes(config.max_header_bytes);
        let (tx, queue) = mpsc::channel(config.outgoing_queue.max(1));
        Core {
            conn: Connection {
                session: Session::new(tools, ServerInfo::default()),
                in_flight: InFlight::default(),
                running: Running::default(),
                tx,
                spawner,
            },
            codec: RawCodec(codec.clone()),
            input: BytesMut::with_capacity(READ_SIZE),
            ended: false,
            replies: Replies::new(codec),
            queue,
            grace: config.shutdown_grace,
        }
    }

    /// Where read bytes go. An empty buffer goes back to the start of its allocation first
    /// (nothing moves: the frames split off it are gone), or each request would land on
    /// fresh cache lines further on.
    pub(crate) fn input(&mut self) -> &mut BytesMut {
        if self.input.is_empty() {
            self.input.reserve(READ_SIZE);
        }
        &mut self.input
    }

    /// Bytes read.
    pub(crate) fn feed(&mut self, bytes: &[u8]) {
        self.input().extend_from_slice(bytes);
    }

    /// Input ended: the next [`handle`](Self::handle) decodes an unterminated last frame too,
    /// which is still a frame (answered, or reported).
    pub(crate) fn end_input(&mut self) {
        self.ended = true;
    }

    /// Whether [`end_input`](Self::end_input) was called.
    pub(crate) fn input_ended(&self) -> bool {
        self.ended
    }

    /// Handles the whole frames read so far, in order, and stops early when replies are due,
    /// so a client on another CPU reads the first replies while later ones are made. Once
    /// input ended nothing stops it: what is left is one last frame at most. `Err` only if a
    /// reply cannot be encoded.
    pub(crate) fn handle(&mut self) -> io::Result<Burst> {
        loop {
            let frame = if self.ended {
                self.codec.decode_eof(&mut self.input)
            } else {
                self.codec.decode(&mut self.input)
            };
            match frame {
                Ok(Some(frame)) => {
                    if let Some(reply) = self.conn.frame(frame) {
                        self.replies.encode(reply)?;
                    }
                }
                Ok(None) => return Ok(Burst::Idle),
                Err(e) => return Ok(Burst::Failed(e)),
            }
            if !self.ended && self.replies.due() {
                return Ok(Burst::Due);
            }
        }
    }

    /// A finished task's reply, taken from [`queue`](Self::queue) by the loop.
    pub(crate) fn task_reply(&mut self, reply: Outgoing) -> io::Result<()> {
        self.replies.encode(reply)
    }

    /// Encodes the finished tasks' replies that are queued, until replies are due.
    pub(crate) fn task_replies(&mut self) -> io::Result<()> {
        while !self.replies.due() {
            match self.queue.try_recv() {
                Ok(reply) => self.replies.encode(reply)?,
                Err(_) => break,
            }
        }
        Ok(())
    }

    /// Whether a tool call's task is still running: its reply may come while the loop waits.
    pub(crate) fn running(&self) -> bool {
        self.conn.running.any()
    }

    /// Whether finished tasks' replies wait in the queue.
    pub(crate) fn replies_queued(&self) -> bool {
        !self.queue.is_empty()
    }

    /// The queue of finished tasks' replies, to wait on, and the input buffer, to read into:
    /// both at once, for a loop that waits for either.
    pub(crate) fn queue_and_input(&mut self) -> (&mut mpsc::Receiver<Outgoing>, &mut BytesMut) {
        self.input();
        (&mut self.queue, &mut self.input)
    }

    /// The replies to write ([`Replies::unwritten`], [`Replies::wrote`]).
    pub(crate) fn out(&mut self) -> &mut Replies {
        &mut self.replies
    }

    /// The serve loop ended with `exit`: logs how, and gives the drain, unless the output is
    /// gone (then nothing more can be written).
    pub(crate) fn finish(self, exit: &Exit) -> Option<Drain<S>> {
        match exit {
            Exit::ReadFailed(e) => tracing::error!("reading input failed: {e}"),
            other => tracing::debug!(?other, "input loop ended"),
        }
        if matches!(exit, Exit::OutputClosed) {
            tracing::debug!("output closed by the peer; exiting");
            return None;
        }
        // The session and our sender go: the queue ends once each running task has ended.
        let Connection {
            in_flight, spawner, ..
        } = self.conn;
        Some(Drain {
            replies: self.replies,
            queue: self.queue,
            in_flight,
            _spawner: spawner,
            grace: self.grace,
        })
    }
}

/// Shutdown (input ended, or a stop): answer and flush everything read, that is the replies
/// made, then each running tool's reply, within `grace`; the loop bounds the time.
pub(crate) struct Drain<S> {
    replies: Replies,
    queue: mpsc::Receiver<Outgoing>,
    in_flight: InFlight,
    /// Kept until the drain ends: the blocking loop's tasks run on a runtime it owns.
    _spawner: S,
    grace: Duration,
}

/// What a [`Drain`] needs next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// Write [`Drain::out`].
    Write,
    /// Wait for a task's reply (or the end of the last task), then ask again.
    Wait,
    /// Everything is answered and written.
    Done,
}

impl<S> Drain<S> {
    /// How long the drain may take: `Config::shutdown_grace`.
    pub(crate) fn grace(&self) -> Duration {
        self.grace
    }

    /// Takes every queued reply, then says what is next.
    pub(crate) fn next(&mut self) -> io::Result<Step> {
        let running = loop {
            match self.queue.try_recv() {
                Ok(reply) => self.replies.encode(reply)?,
                Err(TryRecvError::Empty) => break true,
                Err(TryRecvError::Disconnected) => break false,
            }
        };
        Ok(if !self.replies.unwritten().is_empty() {
            Step::Write
        } else if running {
            Step::Wait
        } else {
            Step::Done
        })
    }

    /// The queue, for a loop that waits on it; what it takes goes to
    /// [`task_reply`](Self::task_reply).
    pub(crate) fn queue(&mut self) -> &mut mpsc::Receiver<Outgoing> {
        &mut self.queue
    }

    pub(crate) fn task_reply(&mut self, reply: Outgoing) -> io::Result<()> {
        self.replies.encode(reply)
    }

    /// The replies to write ([`Replies::unwritten`], [`Replies::wrote`]).
    pub(crate) fn out(&mut self) -> &mut Replies {
        &mut self.replies
    }

    /// The peer closed the output while draining.
    pub(crate) fn output_closed(self) -> Exit {
        tracing::debug!("output closed by the peer; exiting");
        Exit::OutputClosed
    }

    /// The grace is over: the tool calls still running are aborted, and what is unsent is
    /// given up, with a warning.
    pub(crate) fn give_up(self) -> Exit {
        let running = lock(&self.in_flight)
            .drain()
            .map(|(_, h)| h.abort())
            .count();
        tracing::warn!(
            running,
            grace = ?self.grace,
            "gave up waiting for replies to be answered and flushed"
        );
        Exit::DrainTimedOut
    }
}

#[cfg(test)]
#[path = "sans_io_tests.rs"]
mod tests;
