//! The async loop: one task reads frames, hands them to the core, runs the calls it is handed
//! (on the task itself) and writes what it made.
//!
//! It waits for a shutdown, a finished call, a call's request to the client, or input, in
//! that order (`select!`), and reads on without waiting while more input is ready, so a burst
//! of requests costs one wake-up. Output is written before more input is read (a client that
//! does not read its replies gets back-pressure, not unbounded memory), and a shutdown
//! interrupts a write the peer never drains. When input ends or a shutdown comes, what was
//! read is answered and written within `Config::shutdown_grace`.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::sync::Arc;

use futures::future::{AbortHandle, BoxFuture};
use futures::stream::FuturesUnordered;
use futures::{FutureExt, StreamExt};
use mcp_protocol::mcp::CallToolResult;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::connection::{log_end, Connection, Frames, Runner};
use super::replies::Replies;
use crate::config::Config;
use crate::core::Work;
use crate::exit::Exit;
use crate::peer::{CallId, Peer, PeerError};
use crate::tools::ToolSet;

/// Serves one MCP connection over `input`/`output` until input ends, `shutdown` completes, or
/// the output is closed. Returns `Err` only if writing fails for a reason other than a closed
/// pipe.
pub async fn serve<R, W, S>(
    mut input: R,
    mut output: W,
    config: &Config,
    tools: Arc<ToolSet>,
    shutdown: S,
) -> io::Result<Exit>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
    S: Future<Output = ()>,
{
    let mut conn = Connection::new(config, tools, OnTheLoop::default());
    tokio::pin!(shutdown);
    // A burst stopped to write: whole frames wait in the input buffer, handled before reading.
    let mut buffered = false;
    let exit = loop {
        let turn = tokio::select! {
            biased;
            () = &mut shutdown => break Exit::Shutdown,
            turn = next(&mut conn, &mut input, buffered) => turn?,
        };
        buffered = matches!(turn, Turn::Due);
        // Write before reading on: at once when the output takes it all (the common case),
        // else waiting on the peer, and then a signal interrupts a write it never drains.
        let written = match write_all(&mut output, conn.out()).now_or_never() {
            Some(written) => written,
            None => tokio::select! {
                biased;
                () = &mut shutdown => break Exit::Shutdown,
                written = write_all(&mut output, conn.out()) => written,
            },
        };
        match written {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => break Exit::OutputClosed,
            Err(e) => return Err(e),
        }
        if let Turn::End(exit) = turn {
            break exit;
        }
    };
    drain(conn, output, config, exit).await
}

/// What a turn of the loop leaves to do after writing.
enum Turn {
    /// Wait for input, a call or a request to the client.
    Go,
    /// A burst stopped to write; whole frames still wait.
    Due,
    End(Exit),
}

/// The calls a connection runs on the loop's own task, polled while it waits.
#[derive(Default)]
struct OnTheLoop {
    calls: FuturesUnordered<BoxFuture<'static, (CallId, Option<CallToolResult>)>>,
    aborts: HashMap<CallId, AbortHandle>,
}

impl Runner for OnTheLoop {
    fn start(&mut self, call: CallId, work: Work, peer: Peer) {
        let (running, handle) = futures::future::abortable(work(peer));
        self.aborts.insert(call, handle);
        self.calls
            .push(running.map(move |result| (call, result.ok())).boxed());
    }

    fn abort(&mut self, call: CallId) {
        if let Some(handle) = self.aborts.remove(&call) {
            handle.abort();
        }
    }
}

/// Waits for the next thing to do and does it: a call that ended, a call's request to the
/// client, or input (unless whole frames are `buffered` already). Cancel-safe.
async fn next<R: AsyncRead + Unpin>(
    conn: &mut Connection<OnTheLoop>,
    input: &mut R,
    buffered: bool,
) -> io::Result<Turn> {
    // Only a running call asks the client anything, and only one that runs can end.
    let running = !conn.runner.calls.is_empty();
    let (asks, buf, runner) = conn.parts();
    let read = tokio::select! {
        biased;
        Some((call, result)) = runner.calls.next(), if running => {
            ended_call(conn, call, result)?;
            // Others that ended meanwhile, until replies are due.
            while !conn.out().due() {
                match conn.runner.calls.next().now_or_never() {
                    Some(Some((call, result))) => ended_call(conn, call, result)?,
                    _ => break,
                }
            }
            return Ok(Turn::Go);
        }
        Some(ask) = asks.recv(), if running => return conn.ask(ask).map(|()| Turn::Go),
        read = read_unless(buffered, input, buf) => read,
    };
    burst(conn, input, read)
}

fn ended_call(
    conn: &mut Connection<OnTheLoop>,
    call: CallId,
    result: Option<CallToolResult>,
) -> io::Result<()> {
    conn.runner.aborts.remove(&call);
    conn.ended_call(call, result)
}

/// Handles what was read, and reads on while more is ready at once: one wake-up for a burst,
/// stopping to write when replies are due.
fn burst<R: AsyncRead + Unpin>(
    conn: &mut Connection<OnTheLoop>,
    input: &mut R,
    mut read: Option<io::Result<usize>>,
) -> io::Result<Turn> {
    loop {
        match read {
            Some(Ok(0)) => conn.end_input(),
            Some(Ok(_)) | None => {}
            Some(Err(e)) => return Ok(Turn::End(Exit::ReadFailed(e))),
        }
        match conn.frames()? {
            Frames::Due => return Ok(Turn::Due),
            Frames::Failed(e) => return Ok(Turn::End(Exit::ReadFailed(e))),
            Frames::Idle if conn.input_ended() => return Ok(Turn::End(Exit::InputClosed)),
            Frames::Idle => {}
        }
        match input.read_buf(conn.input()).now_or_never() {
            Some(more) => read = Some(more),
            None => return Ok(Turn::Go),
        }
    }
}

/// Reads into `buf`, unless whole frames are `buffered` already (`None`). Cancel-safe: a read
/// that did not complete read nothing.
async fn read_unless<R: AsyncRead + Unpin>(
    buffered: bool,
    input: &mut R,
    buf: &mut bytes::BytesMut,
) -> Option<io::Result<usize>> {
    if buffered {
        return None;
    }
    Some(input.read_buf(buf).await)
}

/// After the loop: logs how it ended, then answers and writes what was read (the replies made,
/// then each running call's) within the grace, unless the output is gone. Input has ended, so a
/// call's request to the client can get no answer: it is refused.
async fn drain<W: AsyncWrite + Unpin>(
    mut conn: Connection<OnTheLoop>,
    mut output: W,
    config: &Config,
    exit: Exit,
) -> io::Result<Exit> {
    if !log_end(&exit) {
        return Ok(exit);
    }
    let grace = config.shutdown_grace;
    let drained = tokio::time::timeout(grace, async {
        loop {
            write_all(&mut output, conn.out()).await?;
            if conn.runner.calls.is_empty() {
                return Ok::<(), io::Error>(());
            }
            let (asks, _, runner) = conn.parts();
            tokio::select! {
                biased;
                Some((call, result)) = runner.calls.next() => ended_call(&mut conn, call, result)?,
                Some(ask) = asks.recv() => {
                    let _ = ask.answer.send(Err(PeerError::Closed));
                }
            }
        }
    })
    .await;
    match drained {
        Ok(Ok(())) => Ok(exit),
        Err(_elapsed) => {
            tracing::warn!(
                running = conn.runner.calls.len(),
                grace = ?grace,
                "gave up waiting for replies to be answered and flushed"
            );
            Ok(Exit::DrainTimedOut)
        }
        Ok(Err(e)) if e.kind() == io::ErrorKind::BrokenPipe => {
            tracing::debug!("output closed by the peer; exiting");
            Ok(Exit::OutputClosed)
        }
        Ok(Err(e)) => Err(e),
    }
}

/// Writes every reply and flushes. Cancel-safe: what was written is gone from `out`, the rest
/// stays for the next call.
async fn write_all<W: AsyncWrite + Unpin>(io: &mut W, out: &mut Replies) -> io::Result<()> {
    while !out.unwritten().is_empty() {
        match io.write(out.unwritten()).await? {
            0 => return Err(io::ErrorKind::WriteZero.into()),
            n => out.wrote(n),
        }
    }
    io.flush().await
}
