//! One stdio connection's state, whichever loop drives it: the input buffer and codec, the
//! [`Core`], the replies waiting to be written, and where its calls run ([`Runner`]). Bytes in,
//! frames to the core, its actions carried out; nothing here decides anything about the
//! protocol.

use std::io;
use std::sync::Arc;

use bytes::BytesMut;
use mcp_protocol::codec::RawCodec;
use mcp_protocol::mcp::CallToolResult;
use mcp_protocol::StdioCodec;
use tokio::sync::mpsc;
use tokio_util::codec::Decoder;

use super::replies::Replies;
use crate::config::Config;
use crate::core::{Action, Core, Served, Work};
use crate::exit::Exit;
use crate::info::ServerInfo;
use crate::peer::{Answer, Ask, CallId, Link, Peer};
use crate::tools::ToolSet;

/// Bytes a read asks for: the input buffer's capacity.
pub(super) const READ_SIZE: usize = 64 * 1024;

/// Requests to the client that running calls may have queued before the loop takes them.
const ASKS_QUEUED: usize = 64;

/// Where a connection's calls run: on the async loop itself, or on a runtime beside the
/// blocking loop. Either way each ends in [`Connection::ended_call`].
pub(super) trait Runner {
    /// Runs `work`, given the `peer` it may ask the client through.
    fn start(&mut self, call: CallId, work: Work, peer: Peer);

    /// Stops `call`: it was cancelled.
    fn abort(&mut self, call: CallId);

    /// Called once a running call's request to the client is queued, if the loop does not
    /// wait on the queue itself.
    fn notify(&self) -> Option<Arc<dyn Fn() + Send + Sync>> {
        None
    }
}

/// Logs how a loop ended; `false` if the output is gone, so nothing is left to drain.
pub(super) fn log_end(exit: &Exit) -> bool {
    match exit {
        Exit::ReadFailed(e) => tracing::error!("reading input failed: {e}"),
        other => tracing::debug!(?other, "input loop ended"),
    }
    if matches!(exit, Exit::OutputClosed) {
        tracing::debug!("output closed by the peer; exiting");
        return false;
    }
    true
}

/// Why [`Connection::frames`] returned.
#[derive(Debug)]
pub(super) enum Frames {
    /// No whole frame is left: read more (at the end of input: nothing more will come).
    Idle,
    /// Enough replies wait ([`Replies::due`]): write them, then handle the rest.
    Due,
    /// The input cannot be decoded any further.
    Failed(io::Error),
}

pub(super) struct Connection<R> {
    core: Core<Answer>,
    codec: RawCodec,
    /// Read bytes not yet a whole frame.
    input: BytesMut,
    /// Input ended: what is left is decoded as an unterminated last frame.
    ended: bool,
    replies: Replies,
    /// Given to each running call's [`Peer`]; [`asks`](Self::asks) is where its requests
    /// arrive.
    link: Link,
    asks: mpsc::Receiver<Ask>,
    /// The core's actions, reused from frame to frame.
    actions: Vec<Action<Answer>>,
    pub(super) runner: R,
}

impl<R: Runner> Connection<R> {
    pub(super) fn new(config: &Config, tools: Arc<ToolSet>, runner: R) -> Self {
        let codec = StdioCodec::new(config.framing)
            .with_max_message_bytes(config.max_message_bytes)
            .with_max_header_bytes(config.max_header_bytes);
        let (asks_tx, asks) = mpsc::channel(ASKS_QUEUED);
        let link = Link::new(asks_tx, runner.notify());
        Connection {
            core: Core::on_stream(Served::new(tools, ServerInfo::default())),
            codec: RawCodec(codec.clone()),
            input: BytesMut::with_capacity(READ_SIZE),
            ended: false,
            replies: Replies::new(codec),
            link,
            asks,
            actions: Vec::new(),
            runner,
        }
    }

    /// The replies to write ([`Replies::unwritten`], [`Replies::wrote`]).
    pub(super) fn out(&mut self) -> &mut Replies {
        &mut self.replies
    }

    /// Where read bytes go. An empty buffer goes back to the start of its allocation first
    /// (nothing moves: the frames split off it are gone), or each request would land on
    /// fresh cache lines further on.
    pub(super) fn input(&mut self) -> &mut BytesMut {
        if self.input.is_empty() {
            self.input.reserve(READ_SIZE);
        }
        &mut self.input
    }

    /// Where running calls' requests to the client arrive, where read bytes go, and the
    /// runner: all at once, for a loop that waits on any of them.
    pub(super) fn parts(&mut self) -> (&mut mpsc::Receiver<Ask>, &mut BytesMut, &mut R) {
        self.input();
        (&mut self.asks, &mut self.input, &mut self.runner)
    }

    /// Input ended: the next [`frames`](Self::frames) decodes an unterminated last frame too,
    /// which is still a frame (answered, or reported).
    pub(super) fn end_input(&mut self) {
        self.ended = true;
    }

    pub(super) fn input_ended(&self) -> bool {
        self.ended
    }

    /// Hands the whole frames read so far to the core, in order, and stops early when replies
    /// are due, so a client on another CPU reads the first replies while later ones are made.
    /// Once input ended nothing stops it: what is left is one last frame at most. `Err` only
    /// if a reply cannot be encoded.
    pub(super) fn frames(&mut self) -> io::Result<Frames> {
        loop {
            let frame = if self.ended {
                self.codec.decode_eof(&mut self.input)
            } else {
                self.codec.decode(&mut self.input)
            };
            match frame {
                Ok(Some(frame)) => {
                    self.core.frame(frame, &mut self.actions);
                    self.act()?;
                }
                Ok(None) => return Ok(Frames::Idle),
                Err(e) => return Ok(Frames::Failed(e)),
            }
            if !self.ended && self.replies.due() {
                return Ok(Frames::Due);
            }
        }
    }

    /// A call ended (`None`: it was aborted, and the core forgot it already).
    pub(super) fn ended_call(
        &mut self,
        call: CallId,
        result: Option<CallToolResult>,
    ) -> io::Result<()> {
        if let Some(result) = result {
            self.core.finished(call, result, &mut self.actions);
            self.act()?;
        }
        Ok(())
    }

    /// A call could not be given a task to run in: it is answered with an internal error.
    pub(super) fn cannot_run(&mut self, call: CallId, why: String) -> io::Result<()> {
        self.core.cannot_run(call, why, &mut self.actions);
        self.act()
    }

    /// A running call's message to the client: written (then answered, for a notification),
    /// or refused at once.
    pub(super) fn ask(&mut self, ask: Ask) -> io::Result<()> {
        let asked = self.core.ask(ask.call, ask.what, ask.answer, true);
        for message in asked.send {
            self.replies.encode(message)?;
        }
        if let Some((answer, outcome)) = asked.settle {
            let _ = answer.send(outcome);
        }
        Ok(())
    }

    /// Carries out the core's actions.
    fn act(&mut self) -> io::Result<()> {
        let mut actions = std::mem::take(&mut self.actions);
        let mut result = Ok(());
        for action in actions.drain(..) {
            match action {
                Action::Send(out) => {
                    if let Err(e) = self.replies.encode(out) {
                        result = Err(e);
                    }
                }
                Action::Start(call, work) => {
                    let peer = Peer::new(call, self.link.clone());
                    self.runner.start(call, work, peer);
                }
                Action::Abort(call) => self.runner.abort(call),
                Action::Answer(answer, outcome) => {
                    // The call may have stopped waiting: then nobody wants the answer.
                    let _ = answer.send(outcome);
                }
                // Only a core serving one HTTP request asks for a stream of its own; stdio's
                // core holds its subscriptions itself.
                Action::Listen(_) => {}
            }
        }
        self.actions = actions;
        result
    }
}
