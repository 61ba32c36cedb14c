//! The I/O loop: one task reads, dispatches and writes; tasks exist only for tool calls that
//! are still running.
//!
//! Messages are handled in arrival order. A reply that is ready at once is encoded straight
//! into the output buffer, so the common case spawns nothing and hands nothing to another
//! task. Frames that are already readable are handled without waiting, and their replies
//! go out in writes of a few KiB ([`crate::pacing`]), so a burst of small requests costs a few
//! `write`s and a client on another CPU reads the first replies while later ones are made.
//! Output is written before more input is read, and replies of running tool calls come
//! through a bounded queue: a client that stops reading its replies stops the server reading
//! requests instead of growing its memory.

use std::future::Future;
use std::io;
use std::sync::Arc;

use futures::{FutureExt, StreamExt};
use mcp_protocol::codec::RawCodec;
use mcp_protocol::{Outgoing, StdioCodec};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio_util::codec::FramedRead;

use crate::config::Config;
use crate::connection::{give_up, log_end, Connection, CurrentRuntime, InFlight};
use crate::exit::Exit;
use crate::info::ServerInfo;
use crate::replies::Replies;
use crate::session::Session;
use crate::tools::ToolRegistry;

/// Serves one MCP connection over `input`/`output` until input ends, `shutdown` completes, or
/// the output is closed. Returns `Err` only if writing fails for a reason other than a closed
/// pipe.
pub async fn serve<R, W, S>(
    input: R,
    output: W,
    config: &Config,
    tools: Arc<ToolRegistry>,
    shutdown: S,
) -> io::Result<Exit>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
    S: Future<Output = ()>,
{
    let codec = StdioCodec::new(config.framing)
        .with_max_message_bytes(config.max_message_bytes)
        .with_max_header_bytes(config.max_header_bytes);
    // Frames are parsed by `Connection::frame`, with the server's params.
    let mut reader = FramedRead::with_capacity(input, RawCodec(codec.clone()), 64 * 1024);
    let mut out = Output {
        io: output,
        replies: Replies::new(codec),
    };
    // Replies of tool calls that ran in their own task.
    let (tx, mut rx) = mpsc::channel::<Outgoing>(config.outgoing_queue.max(1));
    let mut conn = Connection {
        session: Session::new(tools, ServerInfo::default()),
        in_flight: InFlight::default(),
        tx,
        spawner: CurrentRuntime,
    };
    tokio::pin!(shutdown);
    let exit = loop {
        let end = tokio::select! {
            biased;
            () = &mut shutdown => break Exit::Shutdown,
            Some(reply) = rx.recv() => {
                out.encode(reply)?;
                while !out.replies.due() {
                    match rx.try_recv() {
                        Ok(reply) => out.encode(reply)?,
                        Err(_) => break,
                    }
                }
                None
            }
            mut item = reader.next() => {
                // Handle the frames that are already readable, one wake-up for a burst,
                // stopping to write when enough replies are waiting (`Replies::due`).
                loop {
                    match item {
                        None => break Some(Exit::InputClosed),
                        Some(Err(e)) => break Some(Exit::ReadFailed(e)),
                        Some(Ok(frame)) => {
                            if let Some(reply) = conn.frame(frame) {
                                out.encode(reply)?;
                            }
                        }
                    }
                    if out.replies.due() {
                        break None;
                    }
                    match reader.next().now_or_never() {
                        Some(next) => item = next,
                        None => break None,
                    }
                }
            }
        };
        // Write before reading on, and let a signal interrupt a write the peer never drains.
        let written = tokio::select! {
            biased;
            () = &mut shutdown => break Exit::Shutdown,
            written = out.write_all() => written,
        };
        match written {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => break Exit::OutputClosed,
            Err(e) => return Err(e),
        }
        if let Some(exit) = end {
            break exit;
        }
    };
    if log_end(&exit) {
        return Ok(exit);
    }

    // Answer and flush everything read: what is buffered, then each running tool's reply. The
    // queue ends once every sender is gone: ours now, and each tool's task when it finishes.
    let Connection { in_flight, tx, .. } = conn;
    drop(tx);
    let drain = async {
        loop {
            out.write_all().await?;
            match rx.recv().await {
                Some(reply) => out.encode(reply)?,
                None => return Ok::<(), io::Error>(()),
            }
        }
    };
    match tokio::time::timeout(config.shutdown_grace, drain).await {
        Err(_elapsed) => Ok(give_up(&in_flight, config.shutdown_grace)),
        Ok(Ok(())) => Ok(exit),
        Ok(Err(e)) if e.kind() == io::ErrorKind::BrokenPipe => {
            tracing::debug!("output closed by the peer; exiting");
            Ok(Exit::OutputClosed)
        }
        Ok(Err(e)) => Err(e),
    }
}

/// The output side of the async loop.
struct Output<W> {
    io: W,
    replies: Replies,
}

impl<W: AsyncWrite + Unpin> Output<W> {
    fn encode(&mut self, reply: Outgoing) -> io::Result<()> {
        self.replies.encode(reply)
    }

    /// Writes the whole buffer and flushes. Cancel-safe: what was written is gone from `buf`,
    /// the rest stays for the next call.
    async fn write_all(&mut self) -> io::Result<()> {
        let bytes = self.replies.buf.len();
        while !self.replies.buf.is_empty() {
            if self.io.write_buf(&mut self.replies.buf).await? == 0 {
                return Err(io::ErrorKind::WriteZero.into());
            }
        }
        self.io.flush().await?;
        self.replies.written(bytes);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::default_tools;
    use serde_json::{json, Value};

    /// Serves `input` (newline-delimited) to its end; returns every reply, parsed.
    async fn replies(input: &str) -> Vec<Value> {
        let mut output = Vec::new();
        let tools = Arc::new(default_tools());
        let exit = serve(
            input.as_bytes(),
            &mut output,
            &Config::default(),
            tools,
            std::future::pending(),
        )
        .await
        .unwrap();
        assert!(matches!(exit, Exit::InputClosed), "{exit:?}");
        String::from_utf8(output)
            .unwrap()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }

    const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
"#;

    #[tokio::test]
    async fn invalid_responses_get_no_reply() {
        let input = format!(
            "{INIT}{}\n{}\n{}\n{}\n{}\n{}\n{}\n",
            r#"{"jsonrpc":"2.0","id":5,"error":"x"}"#,
            r#"{"jsonrpc":"2.0","id":5,"result":{},"error":{"code":1,"message":"m"}}"#,
            r#"{"jsonrpc":"2.0","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":5,"id":6,"result":{}}"#,
            // In a batch: the invalid response is skipped, the request answered.
            r#"[{"jsonrpc":"2.0","id":5,"error":"x"},{"jsonrpc":"2.0","id":7,"method":"ping"}]"#,
            // A batch of nothing but invalid responses gets nothing at all.
            r#"[{"jsonrpc":"2.0","result":{}}]"#,
            r#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#,
        );
        let got = replies(&input).await;
        assert_eq!(got.len(), 3, "{got:#?}");
        assert_eq!(got[0]["id"], 1);
        assert_eq!(got[1], json!([{"jsonrpc":"2.0","id":7,"result":{}}]));
        assert_eq!(got[2], json!({"jsonrpc":"2.0","id":9,"result":{}}));
    }

    #[tokio::test]
    async fn invalid_requests_are_still_answered() {
        let input = format!(
            "{INIT}{}\n{}\n",
            r#"{"jsonrpc":"2.0","id":5,"method":"ping","result":{}}"#,
            r#"[{"jsonrpc":"2.0","id":6}]"#,
        );
        let got = replies(&input).await;
        assert_eq!(got.len(), 3, "{got:#?}");
        assert_eq!(got[1]["id"], 5);
        assert_eq!(got[1]["error"]["code"], -32600);
        assert_eq!(got[2][0]["id"], 6);
        assert_eq!(got[2][0]["error"]["code"], -32600);
    }
}
