//! What happened between a client and a server, in order: the evidence every client check
//! judges. `client` mode records it while the harness plays a scripted server; `observe`
//! records it while it forwards a real host's traffic to a real server. Plain data, no I/O.

use std::time::Duration;

use serde_json::Value;

/// Which side sent a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Side {
    Client,
    Server,
}

/// How the two sides were connected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Wire {
    Stdio,
    Http,
}

/// One JSON-RPC message as it travelled.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Message {
    pub(crate) from: Side,
    /// The bytes as sent: one stdio line without its `\n` (or one `Content-Length` body), or one
    /// HTTP body, or one SSE event's data.
    pub(crate) raw: Vec<u8>,
    /// The bytes parsed as JSON, if they are; a batch (array) is kept whole.
    pub(crate) json: Option<Value>,
    /// Over HTTP: the index in [`Timeline::events`] of the [`What::Http`] exchange that carried
    /// it (the client's POST, or the reply to it).
    pub(crate) exchange: Option<usize>,
}

impl Message {
    pub(crate) fn method(&self) -> Option<&str> {
        self.json.as_ref()?.get("method")?.as_str()
    }

    /// The `id`, for a request or a response.
    pub(crate) fn id(&self) -> Option<&Value> {
        self.json.as_ref()?.get("id")
    }

    pub(crate) fn is_request(&self) -> bool {
        self.method().is_some() && self.id().is_some()
    }

    /// A response: no method, an id, and a `result` or an `error`.
    pub(crate) fn is_response(&self) -> bool {
        let Some(v) = &self.json else { return false };
        v.get("method").is_none() && (v.get("result").is_some() || v.get("error").is_some())
    }

    pub(crate) fn params(&self) -> Option<&Value> {
        self.json.as_ref()?.get("params")
    }

    pub(crate) fn result(&self) -> Option<&Value> {
        self.json.as_ref()?.get("result")
    }

    pub(crate) fn error_code(&self) -> Option<i64> {
        self.json.as_ref()?.get("error")?.get("code")?.as_i64()
    }
}

/// One HTTP request the client made and the status it was served.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Exchange {
    /// `POST`, `GET`, `DELETE`, …
    pub(crate) method: String,
    pub(crate) path: String,
    /// Request headers, names lower-cased, in order; `authorization` and `cookie` values are
    /// replaced by `<redacted>`.
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) status: u16,
    /// The response's `Content-Type` (empty if none).
    pub(crate) content_type: String,
    /// The response's MCP headers (`mcp-session-id`, …), names lower-cased.
    pub(crate) response_headers: Vec<(String, String)>,
}

impl Exchange {
    /// The value of a request header (names compare case-insensitively), the first if repeated.
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The value of a response header.
    pub(crate) fn response_header(&self, name: &str) -> Option<&str> {
        self.response_headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// A signal the client sent to the server process (stdio).
pub(crate) use crate::stops::Signal;

/// What happened.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum What {
    Message(Message),
    /// Bytes on stdio that are not a line of JSON (or not UTF-8): kept as they came.
    Garbage {
        from: Side,
        raw: Vec<u8>,
    },
    /// An HTTP request of the client, with the status it got.
    Http(Exchange),
    /// stdio: the client closed the server's stdin.
    StdinClosed,
    /// stdio: the client signalled the server process.
    Signal(Signal),
    /// The server process ended (stdio): by itself, after stdin closed, or after a signal.
    ServerExited {
        code: Option<i32>,
    },
    /// The client process ended (`client` mode).
    ClientExited {
        code: Option<i32>,
    },
    /// The harness stopped waiting: the scenario's time bound passed with the client still
    /// running (it is then stopped).
    Bound,
}

/// One event, timed from the start of the session.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Event {
    pub(crate) at: Duration,
    pub(crate) what: What,
}

/// Everything that happened in one session, in order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Timeline {
    pub(crate) wire: Wire,
    pub(crate) events: Vec<Event>,
}

impl Timeline {
    pub(crate) fn new(wire: Wire) -> Timeline {
        Timeline {
            wire,
            events: Vec::new(),
        }
    }

    pub(crate) fn push(&mut self, at: Duration, what: What) -> usize {
        self.events.push(Event { at, what });
        self.events.len() - 1
    }

    /// The messages, each with its event index, in order.
    pub(crate) fn messages(&self) -> impl Iterator<Item = (usize, &Message)> {
        self.events
            .iter()
            .enumerate()
            .filter_map(|(i, e)| match &e.what {
                What::Message(m) => Some((i, m)),
                _ => None,
            })
    }

    /// The messages one side sent, each with its event index.
    pub(crate) fn from(&self, side: Side) -> impl Iterator<Item = (usize, &Message)> {
        self.messages().filter(move |(_, m)| m.from == side)
    }

    /// The first request `side` sent with this method, with its event index.
    pub(crate) fn first_request(&self, side: Side, method: &str) -> Option<(usize, &Message)> {
        self.from(side)
            .find(|(_, m)| m.is_request() && m.method() == Some(method))
    }

    /// The response to the request `id` that `side` sent, from the other side.
    pub(crate) fn response_to(&self, side: Side, id: &Value) -> Option<(usize, &Message)> {
        let other = match side {
            Side::Client => Side::Server,
            Side::Server => Side::Client,
        };
        self.from(other)
            .find(|(_, m)| m.is_response() && m.id() == Some(id))
    }

    /// The HTTP exchanges, each with its event index.
    pub(crate) fn exchanges(&self) -> impl Iterator<Item = (usize, &Exchange)> {
        self.events
            .iter()
            .enumerate()
            .filter_map(|(i, e)| match &e.what {
                What::Http(x) => Some((i, x)),
                _ => None,
            })
    }
}
