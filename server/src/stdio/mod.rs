//! The stdio transport (`basic/transports.mdx` §stdio): frames read from stdin go to the
//! protocol core, the calls it hands over are run, and what it made is written to stdout.
//!
//! Two loops drive the same `connection` state and write the same bytes: [`serve`], the async
//! loop, for sockets, terminals, files and in-process streams; and [`serve_blocking`], plain
//! blocking reads and writes on the calling thread, for pipes, where it answers a lone request
//! about a fifth sooner (BENCHMARKS.md). Either way output is written before more input is
//! read (back-pressure, not unbounded memory), and when input ends or a stop comes, what was
//! read is answered and written within `Config::shutdown_grace`. [`streams`] and [`blocking`]
//! give the process's own stdin and stdout to each.

mod blocking;
mod connection;
mod pacing;
mod replies;
mod serve;
mod socket;
mod streams;

pub use self::blocking::{serve_blocking, BlockingStdio, Stopper};
pub use self::serve::serve;
#[doc(hidden)] // the socket stream, for tests that serve over a socketpair as the binary does
pub use self::socket::Socket;
#[doc(hidden)] // for the binary's tests of the pipe it grows
pub use self::streams::OUTPUT_PIPE_BYTES;
pub use self::streams::{blocking, streams, Input, Output};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::exit::Exit;
    use crate::tools::default_tools;
    use serde_json::{json, Value};
    use std::sync::Arc;

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
