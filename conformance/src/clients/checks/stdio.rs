//! A client on stdio: what it writes to the server's stdin, and how it shuts the server down
//! (2025-11-25 `basic/transports.mdx`, stdio; `basic/lifecycle.mdx`, Shutdown).

use crate::check::{Level, Outcome, Transport};
use crate::clients::judge::{ClientCheck, Session};
use crate::clients::timeline::{Side, What};
use crate::ids::client as id;

pub(super) fn checks() -> Vec<ClientCheck> {
    vec![
        ClientCheck::new(
            id::STDIO_FRAMING,
            Level::Must,
            "every line the client writes to the server's stdin is one UTF-8 JSON-RPC message",
            "2025-11-25 basic/transports.mdx, stdio",
            stdio_framing,
        )
        .quote("Messages are delimited by newlines, and MUST NOT contain embedded newlines. / The client MUST NOT write anything to the server's stdin that is not a valid MCP message.")
        .transport(Transport::Stdio),
        ClientCheck::new(
            id::STDIO_SHUTDOWN,
            Level::Should,
            "the client shuts the server down by closing its stdin first; a signal (SIGTERM) only if the server does not exit",
            "2025-11-25 basic/lifecycle.mdx, Shutdown, stdio",
            stdio_shutdown,
        )
        .quote("For the stdio transport, the client SHOULD initiate shutdown by: First, closing the input stream to the child process (the server); Waiting for the server to exit, or sending SIGTERM if the server does not exit within a reasonable time")
        .because("the relay exits as soon as its stdin closes, so a signal before that is a signal without closing stdin first")
        .transport(Transport::Stdio),
    ]
}

fn stdio_framing(s: &Session<'_>) -> Outcome {
    let t = s.timeline;
    for e in &t.events {
        if let What::Garbage {
            from: Side::Client,
            raw,
        } = &e.what
        {
            return Outcome::fail(
                "one JSON-RPC message per line",
                format!("wrote {:?}", String::from_utf8_lossy(raw)),
            );
        }
    }
    let lines = t.from(Side::Client).count();
    if lines == 0 {
        return Outcome::Skip("the client wrote nothing".into());
    }
    let not_objects = t.from(Side::Client).find(|(_, m)| {
        !m.json
            .as_ref()
            .is_some_and(|v| v.is_object() || v.is_array())
    });
    if let Some((_, m)) = not_objects {
        return Outcome::fail(
            "one JSON-RPC message per line",
            format!("wrote {}", String::from_utf8_lossy(&m.raw)),
        );
    }
    Outcome::pass(format!("{lines} lines, each a JSON message"))
}

fn stdio_shutdown(s: &Session<'_>) -> Outcome {
    for e in &s.timeline.events {
        match &e.what {
            What::StdinClosed => {
                return Outcome::pass("closed the server's stdin first; the server exited")
            }
            What::Signal(signal) => {
                return Outcome::fail(
                    "stdin closed before any signal",
                    format!("{} with stdin still open", signal.name()),
                )
            }
            What::ServerExited { code: None } => {
                return Outcome::fail(
                    "stdin closed before any signal",
                    "the server was killed (SIGKILL) with stdin still open",
                )
            }
            What::Bound => {
                return Outcome::Skip(
                    "the client had not shut the server down when the scenario ended".into(),
                )
            }
            _ => {}
        }
    }
    Outcome::Skip("the session ended without a shutdown the relay saw".into())
}
