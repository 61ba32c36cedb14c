//! The async loop: one task reads, hands the bytes to the [`Core`] and writes what it made;
//! tasks exist only for tool calls that are still running.
//!
//! It waits for a shutdown, a finished task's reply or input, in that order (`select!`), and
//! reads on without waiting while more input is ready, so a burst of requests costs one
//! wake-up. Output is written before more input is read, and a shutdown interrupts a write the
//! peer never drains. Everything else (frames, replies, pacing, the last frame, the drain's
//! policy) is the core's, shared with [`crate::serve_blocking`].

use std::future::Future;
use std::io;
use std::sync::Arc;

use futures::FutureExt;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::config::Config;
use crate::connection::CurrentRuntime;
use crate::exit::Exit;
use crate::replies::Replies;
use crate::sans_io::{Burst, Core, Step};
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
    let mut core = Core::new(config, tools, CurrentRuntime);
    tokio::pin!(shutdown);
    // A burst stopped to write: whole frames wait in the input buffer, handled before reading.
    let mut buffered = false;
    let exit = loop {
        let (queue, buf) = core.queue_and_input();
        let turn = tokio::select! {
            biased;
            () = &mut shutdown => break Exit::Shutdown,
            Some(reply) = queue.recv() => {
                core.task_reply(reply)?;
                core.task_replies()?;
                Turn::Read
            }
            read = read_unless(buffered, &mut input, buf) => burst(&mut core, &mut input, read)?,
        };
        buffered = matches!(turn, Turn::Due);
        // Write before reading on, and let a signal interrupt a write the peer never drains.
        let written = tokio::select! {
            biased;
            () = &mut shutdown => break Exit::Shutdown,
            written = write_all(&mut output, core.out()) => written,
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

    let Some(mut drain) = core.finish(&exit) else {
        return Ok(exit);
    };
    let grace = drain.grace();
    let drained = tokio::time::timeout(grace, async {
        loop {
            match drain.next()? {
                Step::Write => write_all(&mut output, drain.out()).await?,
                Step::Wait => {
                    // `None`: the last task ended; `next` finds the queue closed.
                    if let Some(reply) = drain.queue().recv().await {
                        drain.task_reply(reply)?;
                    }
                }
                Step::Done => return Ok::<(), io::Error>(()),
            }
        }
    })
    .await;
    match drained {
        Err(_elapsed) => Ok(drain.give_up()),
        Ok(Ok(())) => Ok(exit),
        Ok(Err(e)) if e.kind() == io::ErrorKind::BrokenPipe => Ok(drain.output_closed()),
        Ok(Err(e)) => Err(e),
    }
}

/// What a turn of the loop leaves to do after writing.
enum Turn {
    /// Wait for input or a task's reply.
    Read,
    /// A burst stopped to write; whole frames still wait.
    Due,
    End(Exit),
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

/// Handles what was read, and reads on while more is ready at once: one wake-up for a burst,
/// stopping to write when replies are due.
fn burst<R: AsyncRead + Unpin>(
    core: &mut Core<CurrentRuntime>,
    input: &mut R,
    mut read: Option<io::Result<usize>>,
) -> io::Result<Turn> {
    loop {
        match read {
            Some(Ok(0)) => core.end_input(),
            Some(Ok(_)) | None => {}
            Some(Err(e)) => return Ok(Turn::End(Exit::ReadFailed(e))),
        }
        match core.handle()? {
            Burst::Due => return Ok(Turn::Due),
            Burst::Failed(e) => return Ok(Turn::End(Exit::ReadFailed(e))),
            Burst::Idle if core.input_ended() => return Ok(Turn::End(Exit::InputClosed)),
            Burst::Idle => {}
        }
        match input.read_buf(core.input()).now_or_never() {
            Some(more) => read = Some(more),
            None => return Ok(Turn::Read),
        }
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
