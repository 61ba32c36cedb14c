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

mod blocking;
mod connection;
mod pacing;
mod replies;
mod serve;
mod socket;
mod streams;

pub use self::blocking::{serve_blocking, BlockingStdio, Stopper};
pub use self::serve::serve;
pub use self::socket::Socket;
pub use self::streams::{blocking, streams, Input, Output, OUTPUT_PIPE_BYTES};

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
