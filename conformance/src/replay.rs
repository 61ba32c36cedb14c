//! A session `mcp-conformance observe` recorded (`--transcript FILE`, JSON lines), replayed as a
//! scenario against a server (`--scenario-file FILE.jsonl`): what a real host sent is sent
//! again, in order, and every request must get the kind of answer it got then (a result, or an
//! error with the same code). A session from a real host becomes a regression test.
//!
//! Each line of the transcript is `{"ms": …, "from": "client" | "server" | "event", "text": …}`;
//! `text` is one message as it travelled. Events (stdin closed, signals, exits) are not replayed.

use serde::Deserialize;
use serde_json::{json, Value};

use crate::check::Level;
use crate::scenario::{Scenario, Step};

/// Why a transcript cannot be replayed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ReplayError {
    #[error("line {line}: not a transcript entry ({source})")]
    Line {
        line: usize,
        source: serde_json::Error,
    },
    #[error("it holds no message the client sent")]
    Empty,
}

#[derive(Debug, Deserialize)]
struct Entry {
    from: String,
    #[serde(default)]
    text: String,
}

/// The scenario `replay.<name>` that replays the transcript.
pub(crate) fn scenario(text: &str, name: &str) -> Result<Scenario, ReplayError> {
    let mut client = Vec::new();
    let mut server = Vec::new();
    for (n, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let entry: Entry = serde_json::from_str(line).map_err(|source| ReplayError::Line {
            line: n + 1,
            source,
        })?;
        let Ok(message) = serde_json::from_str::<Value>(&entry.text) else {
            continue; // bytes that were not JSON: the observer reported them; not replayed
        };
        match entry.from.as_str() {
            "client" => client.push(message),
            "server" => server.push(message),
            _ => {}
        }
    }
    if client.is_empty() {
        return Err(ReplayError::Empty);
    }
    let mut steps = Vec::new();
    for message in client {
        let expect = answer_pattern(&message, &server);
        steps.push(Step::Send(message));
        steps.extend(expect.map(Step::Expect));
    }
    Ok(Scenario {
        id: format!("replay.{name}"),
        level: Level::Must,
        description: format!(
            "replays the session recorded in {name}: every request gets the kind of answer it got then (a result, or an error with the same code)"
        ),
        spec: format!("recorded session {name}"),
        quote: String::new(),
        echo_only: false,
        handshake: false,
        protocol_version: None,
        steps,
    })
}

/// For a client request answered in the recording: the pattern its answer must match now.
fn answer_pattern(message: &Value, server: &[Value]) -> Option<Value> {
    let id = message.get("id")?;
    message.get("method")?;
    let answer = server
        .iter()
        .find(|m| m.get("id") == Some(id) && m.get("method").is_none())?;
    Some(match answer.get("error") {
        Some(error) => {
            json!({"id": id, "error": {"code": error.get("code").cloned().unwrap_or(Value::Null)}})
        }
        None => json!({"id": id, "result": "$object"}),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(from: &str, message: Value) -> String {
        json!({"ms": 1.0, "from": from, "text": message.to_string()}).to_string()
    }

    #[test]
    fn a_recorded_session_becomes_sends_and_expectations() {
        let text = [
            line(
                "client",
                json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}),
            ),
            line(
                "server",
                json!({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "x"}}),
            ),
            line(
                "client",
                json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            ),
            json!({"ms": 2.0, "from": "event", "text": "stdin closed"}).to_string(),
            line(
                "client",
                json!({"jsonrpc": "2.0", "id": 2, "method": "nope"}),
            ),
            line(
                "server",
                json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32601, "message": "x"}}),
            ),
            line(
                "client",
                json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}),
            ),
            String::new(),
        ]
        .join("\n");
        let s = scenario(&text, "host").unwrap();
        assert_eq!(s.id, "replay.host");
        assert!(!s.handshake);
        let kinds: Vec<String> = s
            .steps
            .iter()
            .map(|step| match step {
                Step::Send(v) => format!("send {}", v["method"].as_str().unwrap_or("?")),
                Step::Expect(p) => format!("expect {p}"),
                other => format!("{other:?}"),
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "send initialize",
                r#"expect {"id":1,"result":"$object"}"#,
                "send notifications/initialized",
                "send nope",
                r#"expect {"error":{"code":-32601},"id":2}"#,
                "send tools/list",
            ]
        );
    }

    #[test]
    fn a_transcript_without_client_messages_or_with_a_bad_line_is_an_error() {
        assert!(matches!(scenario("", "x"), Err(ReplayError::Empty)));
        assert!(matches!(
            scenario("{\"from\": \"client\"}\nnot json", "x"),
            Err(ReplayError::Line { line: 2, .. })
        ));
    }
}
