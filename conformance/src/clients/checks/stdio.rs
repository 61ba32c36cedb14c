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
            "the client shuts the server down by closing its stdin and waiting for it to exit; a signal (SIGTERM) only if it does not",
            "2025-11-25 basic/lifecycle.mdx, Shutdown, stdio",
            stdio_shutdown,
        )
        .quote("For the stdio transport, the client SHOULD initiate shutdown by: First, closing the input stream to the child process (the server); Waiting for the server to exit, or sending SIGTERM if the server does not exit within a reasonable time")
        .because("the relay exits as soon as its stdin closes, so a client that waits for the exit never needs a signal: any signal it gets was sent without waiting")
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
    let events = &s.timeline.events;
    // The relay exits as soon as its stdin closes, so a client that waits for the exit never
    // needs a signal: any signal the relay got, and a SIGKILL that ended it before it could
    // report its exit (its connection closed without one), came without waiting.
    let closed_at = events
        .iter()
        .position(|e| matches!(e.what, What::StdinClosed));
    // Observing a real server (no scenario), its exit by a signal nobody sent is its own.
    let relay = s.scenario.is_some();
    let stopped = events.iter().enumerate().find_map(|(i, e)| match e.what {
        What::Signal(signal) => Some((i, signal.name())),
        What::ServerExited { code: None } if relay => Some((i, "SIGKILL")),
        _ => None,
    });
    match (closed_at, stopped) {
        // Through the relay, a signal right after closing stdin and one with stdin open are the
        // same conduct (which the relay reads first is scheduling): one verdict, one text.
        (_, Some((_, signal))) if relay => Outcome::fail(
            "stdin closed, then the server's exit awaited",
            format!("{signal} without closing stdin and waiting for the server to exit"),
        ),
        // A real server may take its time to exit: a signal after stdin closed is the spec's
        // next step, whatever the wait ("a reasonable time" has no figure).
        (Some(c), Some((i, signal))) if c < i => Outcome::pass(format!(
            "closed the server's stdin first; {signal} {} ms later, the server still running",
            events[i].at.saturating_sub(events[c].at).as_millis()
        )),
        (_, Some((_, signal))) => Outcome::fail(
            "stdin closed before any signal",
            format!("{signal} with stdin still open"),
        ),
        (Some(_), None) => Outcome::pass("closed the server's stdin first; the server exited"),
        (None, None) if events.iter().any(|e| matches!(e.what, What::Bound)) => {
            Outcome::Skip("the client had not shut the server down when the scenario ended".into())
        }
        (None, None) => Outcome::Skip("the session ended without a shutdown the relay saw".into()),
    }
}
