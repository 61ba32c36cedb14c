//! One stdio connection's driver state: the input buffer and codec, the [`Core`], the calls it
//! runs, and the replies waiting to be written. Bytes in, frames to the core, its actions
//! carried out; nothing here decides anything about the protocol.

use std::collections::HashMap;
use std::io;
use std::sync::Arc;

use bytes::BytesMut;
use futures::future::{AbortHandle, BoxFuture};
use futures::stream::FuturesUnordered;
use futures::{FutureExt, StreamExt};
use mcp_protocol::codec::RawCodec;
use mcp_protocol::mcp::CallToolResult;
use mcp_protocol::StdioCodec;
use tokio::io::AsyncRead;
use tokio::sync::mpsc;
use tokio_util::codec::Decoder;

use super::read_now;
use super::replies::Replies;
use crate::config::Config;
use crate::core::{Action, Core, Served, Work};
use crate::exit::Exit;
use crate::info::ServerInfo;
use crate::peer::{Answer, Ask, CallId, Link, Peer, PeerError};
use crate::tools::ToolSet;

/// Bytes a read asks for: the input buffer's capacity.
const READ_SIZE: usize = 64 * 1024;

/// Requests to the client that running calls may have queued before the loop takes them.
const ASKS_QUEUED: usize = 64;

/// A running call: its id, and its result (`None` if it was aborted).
type CallFuture = BoxFuture<'static, (CallId, Option<CallToolResult>)>;

/// What a turn of the loop leaves to do after writing.
#[derive(Debug)]
pub(super) enum Turn {
    /// Go on: wait for input, a call or a request to the client.
    Go,
    End(Exit),
}

pub(super) struct Connection {
    core: Core<Answer>,
    codec: RawCodec,
    /// Read bytes not yet a whole frame.
    input: BytesMut,
    /// Input ended: what is left is decoded as an unterminated last frame.
    ended: bool,
    /// A burst stopped to write: whole frames wait in `input`, handled before reading.
    buffered: bool,
    replies: Replies,
    /// The calls the core handed over, polled by the loop itself.
    calls: FuturesUnordered<CallFuture>,
    aborts: HashMap<CallId, AbortHandle>,
    /// Given to each running call's [`Peer`]; `asks` is where its requests arrive.
    link: Link,
    asks: mpsc::Receiver<Ask>,
    /// The core's actions, reused from frame to frame.
    actions: Vec<Action<Answer>>,
}

impl Connection {
    pub(super) fn new(config: &Config, tools: Arc<ToolSet>) -> Self {
        let codec = StdioCodec::new(config.framing)
            .with_max_message_bytes(config.max_message_bytes)
            .with_max_header_bytes(config.max_header_bytes);
        let (link, asks) = mpsc::channel(ASKS_QUEUED);
        Connection {
            core: Core::new(Served::new(tools, ServerInfo::default())),
            codec: RawCodec(codec.clone()),
            input: BytesMut::with_capacity(READ_SIZE),
            ended: false,
            buffered: false,
            replies: Replies::new(codec),
            calls: FuturesUnordered::new(),
            aborts: HashMap::new(),
            link,
            asks,
            actions: Vec::new(),
        }
    }

    /// The replies to write ([`Replies::unwritten`], [`Replies::wrote`]).
    pub(super) fn out(&mut self) -> &mut Replies {
        &mut self.replies
    }

    /// Calls still running.
    pub(super) fn running(&self) -> usize {
        self.calls.len()
    }

    /// Waits for the next thing to do and does it: a call that ended, a call's request to
    /// the client, or input (unless whole frames are buffered already). Cancel-safe.
    pub(super) async fn next<R: AsyncRead + Unpin>(&mut self, input: &mut R) -> io::Result<Turn> {
        let buffered = self.buffered;
        self.reserve_input();
        let read = tokio::select! {
            biased;
            Some((call, result)) = self.calls.next(), if !self.calls.is_empty() => {
                self.ended_call(call, result)?;
                return self.more_calls_ended().map(|()| Turn::Go);
            }
            Some(ask) = self.asks.recv() => return self.ask(ask).map(|()| Turn::Go),
            read = read_unless(buffered, input, &mut self.input) => read,
        };
        self.burst(input, read)
    }

    /// Drain: waits for one running call to end and encodes its reply; `false` if none runs.
    /// Input has ended, so a call's request to the client can get no answer: refused.
    pub(super) async fn wait_for_a_call(&mut self) -> io::Result<bool> {
        if self.calls.is_empty() {
            return Ok(false);
        }
        tokio::select! {
            biased;
            Some((call, result)) = self.calls.next() => self.ended_call(call, result)?,
            Some(ask) = self.asks.recv() => {
                let _ = ask.answer.send(Err(PeerError::Closed));
            }
        }
        Ok(true)
    }

    /// Handles what was read, and reads on while more is ready at once: one wake-up for a
    /// burst, stopping to write when replies are due.
    fn burst<R: AsyncRead + Unpin>(
        &mut self,
        input: &mut R,
        mut read: Option<io::Result<usize>>,
    ) -> io::Result<Turn> {
        loop {
            match read {
                Some(Ok(0)) => self.ended = true,
                Some(Ok(_)) | None => {}
                Some(Err(e)) => return Ok(Turn::End(Exit::ReadFailed(e))),
            }
            match self.frames()? {
                Frames::Due => {
                    self.buffered = true;
                    return Ok(Turn::Go);
                }
                Frames::Failed(e) => return Ok(Turn::End(Exit::ReadFailed(e))),
                Frames::Idle if self.ended => return Ok(Turn::End(Exit::InputClosed)),
                Frames::Idle => self.buffered = false,
            }
            self.reserve_input();
            match read_now(input, &mut self.input) {
                Some(more) => read = Some(more),
                None => return Ok(Turn::Go),
            }
        }
    }

    /// Hands the whole frames read so far to the core, in order, and stops early when replies
    /// are due, so a client on another CPU reads the first replies while later ones are made.
    /// Once input ended nothing stops it: what is left is one last frame at most. `Err` only
    /// if a reply cannot be encoded.
    fn frames(&mut self) -> io::Result<Frames> {
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
                Action::Start(call, work) => self.start(call, work),
                Action::Abort(call) => {
                    if let Some(handle) = self.aborts.remove(&call) {
                        handle.abort();
                    }
                }
                Action::Answer(answer, outcome) => {
                    // The call may have stopped waiting: then nobody wants the answer.
                    let _ = answer.send(outcome);
                }
            }
        }
        self.actions = actions;
        result
    }

    fn start(&mut self, call: CallId, work: Work) {
        let peer = Peer::new(call, self.link.clone());
        let (running, handle) = futures::future::abortable(work(peer));
        self.aborts.insert(call, handle);
        self.calls
            .push(running.map(move |result| (call, result.ok())).boxed());
    }

    /// A call ended (`None`: it was aborted, and the core forgot it already).
    fn ended_call(&mut self, call: CallId, result: Option<CallToolResult>) -> io::Result<()> {
        self.aborts.remove(&call);
        if let Some(result) = result {
            self.core.finished(call, result, &mut self.actions);
            self.act()?;
        }
        Ok(())
    }

    /// Other calls that ended meanwhile, until replies are due.
    fn more_calls_ended(&mut self) -> io::Result<()> {
        while !self.replies.due() {
            match self.calls.next().now_or_never() {
                Some(Some((call, result))) => self.ended_call(call, result)?,
                _ => break,
            }
        }
        Ok(())
    }

    /// A running call's request to the client: written, or refused at once.
    fn ask(&mut self, ask: Ask) -> io::Result<()> {
        match self.core.ask(ask.call, ask.method, ask.params, ask.answer) {
            Ok(request) => self.replies.encode(request),
            Err((answer, why)) => {
                let _ = answer.send(Err(why));
                Ok(())
            }
        }
    }

    /// An empty input buffer goes back to the start of its allocation before a read (nothing
    /// moves: the frames split off it are gone), or each request would land on fresh cache
    /// lines further on.
    fn reserve_input(&mut self) {
        if self.input.is_empty() {
            self.input.reserve(READ_SIZE);
        }
    }
}

/// Why [`Connection::frames`] returned.
enum Frames {
    /// No whole frame is left: read more (at the end of input: nothing more will come).
    Idle,
    /// Enough replies wait ([`Replies::due`]): write them, then handle the rest.
    Due,
    /// The input cannot be decoded any further.
    Failed(io::Error),
}

/// Reads into `buf`, unless whole frames are `buffered` already (`None`). Cancel-safe: a read
/// that did not complete read nothing.
async fn read_unless<R: AsyncRead + Unpin>(
    buffered: bool,
    input: &mut R,
    buf: &mut BytesMut,
) -> Option<io::Result<usize>> {
    use tokio::io::AsyncReadExt;
    if buffered {
        return None;
    }
    Some(input.read_buf(buf).await)
}
