//! The stdio transport: one task reads frames, hands them to the [`Core`], runs the calls it
//! is handed and writes what it made (`basic/transports.mdx` §stdio).
//!
//! It waits for a shutdown, a finished call, a call's request to the client, or input, in
//! that order (`select!`), and reads on without waiting while more input is ready, so a burst
//! of requests costs one wake-up. Output is written before more input is read (a client that
//! does not read its replies gets back-pressure, not unbounded memory), and a shutdown
//! interrupts a write the peer never drains. When input ends or a shutdown comes, what was
//! read is answered and written within `Config::shutdown_grace`.
//!
//! [`streams`] gives the process's stdin and stdout on the reactor: pipes and sockets, as
//! MCP hosts give them.

mod connection;
mod pacing;
mod replies;
mod socket;
mod streams;

use std::future::Future;
use std::io;
use std::sync::Arc;

use futures::FutureExt;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};

use self::connection::{Connection, Turn};
use self::replies::Replies;
pub use self::socket::Socket;
pub use self::streams::{streams, Input, Output, OUTPUT_PIPE_BYTES};
use crate::config::Config;
use crate::exit::Exit;
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
    let mut conn = Connection::new(config, tools);
    tokio::pin!(shutdown);
    let exit = loop {
        let turn = tokio::select! {
            biased;
            () = &mut shutdown => break Exit::Shutdown,
            turn = conn.next(&mut input) => turn,
        };
        // Write before reading on, and let a signal interrupt a write the peer never drains.
        let written = tokio::select! {
            biased;
            () = &mut shutdown => break Exit::Shutdown,
            written = write_all(&mut output, conn.out()) => written,
        };
        match written {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => break Exit::OutputClosed,
            Err(e) => return Err(e),
        }
        if let Turn::End(exit) = turn? {
            break exit;
        }
    };
    drain(conn, output, config, exit).await
}

/// After the loop: logs how it ended, then answers and writes what was read (the replies made,
/// then each running call's) within the grace, unless the output is gone.
async fn drain<W: AsyncWrite + Unpin>(
    mut conn: Connection,
    mut output: W,
    config: &Config,
    exit: Exit,
) -> io::Result<Exit> {
    match &exit {
        Exit::ReadFailed(e) => tracing::error!("reading input failed: {e}"),
        other => tracing::debug!(?other, "input loop ended"),
    }
    if matches!(exit, Exit::OutputClosed) {
        tracing::debug!("output closed by the peer; exiting");
        return Ok(exit);
    }
    let grace = config.shutdown_grace;
    let drained = tokio::time::timeout(grace, async {
        loop {
            write_all(&mut output, conn.out()).await?;
            if !conn.wait_for_a_call().await? {
                return Ok::<(), io::Error>(());
            }
        }
    })
    .await;
    match drained {
        Ok(Ok(())) => Ok(exit),
        Err(_elapsed) => {
            tracing::warn!(
                running = conn.running(),
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

/// Reads into `buf` once, if bytes are ready now (`None` if not).
fn read_now<R: AsyncRead + Unpin>(
    input: &mut R,
    buf: &mut bytes::BytesMut,
) -> Option<io::Result<usize>> {
    use tokio::io::AsyncReadExt;
    input.read_buf(buf).now_or_never()
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
