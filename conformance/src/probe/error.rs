//! Why a probe could not do what a check asked. The kind decides what happens next (a start
//! error, a blocked check, a session that broke); the text (`Display`) is what reports show.

use std::process::ExitStatus;
use std::time::Duration;

use serde_json::Value;
use thiserror::Error;

use super::exit::describe_exit;
use crate::mismatch::Kind;

/// What a probe's send or wait ran into.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ProbeError {
    /// The server could not be started.
    #[error("could not start {command}: {reason}")]
    Spawn { command: String, reason: String },
    /// Writing to the server failed (usually because it is gone).
    #[error("writing to the server's stdin failed: {reason}{}", exit_note(.exit))]
    WriteFailed {
        reason: String,
        exit: Option<ExitStatus>,
    },
    /// The server closed its stdout before what was awaited came.
    #[error("the server closed its stdout{awaited}{}{notes}", exit_note(.exit))]
    Eof {
        awaited: Awaited,
        exit: Option<ExitStatus>,
        /// What came instead, in words (`; meanwhile …`), or nothing.
        notes: String,
    },
    /// No reply to `id` within `limit`.
    #[error("no response to id {id} within {limit:?}{}{notes}", budget_note(*.start_budget))]
    Timeout {
        id: Value,
        limit: Duration,
        /// The limit was the start budget: the process had answered nothing yet.
        start_budget: bool,
        /// What came instead, in words (`; meanwhile …`), or nothing.
        notes: String,
    },
    /// No response at all (to any id) within `within`.
    #[error("no reply within {within:?}")]
    NoReply { within: Duration },
    /// The barrier sent after a check's messages got no reply: the server stopped answering.
    #[error(
        "no response within {wait:?} to the {method} sent after it as a barrier: the server \
         stopped answering"
    )]
    BarrierTimeout {
        method: &'static str,
        wait: Duration,
    },
    /// Nothing came for the first request of a process, then the barrier sent after it was
    /// answered first: no reply to it is coming.
    #[error(
        "no response to id {id}: nothing came within {wait:?}, then {method}, sent after it, was \
         answered first"
    )]
    Overtaken {
        id: Value,
        wait: Duration,
        method: String,
    },
    /// The HTTP response to the request's POST ended without a JSON-RPC response (an HTTP
    /// error whose body is no JSON-RPC message): what came, never taken for a reply.
    #[error("no JSON-RPC response to id {id}: {seen}")]
    NoJsonRpc { id: Value, seen: String },
    /// Bytes that are not a frame came where a response was read.
    #[error("bytes that are not a frame: {0}")]
    Garbage(String),
    /// A reply that cannot be read (or a process not started) because of a root cause: the
    /// check is blocked by the check that owns `kind`.
    #[error("{why}")]
    Blocked { kind: Kind, why: String },
    /// `initialize` got an error, not a result: the reply, in short.
    #[error("initialize failed: {0}")]
    Refused(String),
    /// A ping (`server/discover`) sent to see whether the server still serves was not answered.
    #[error("the server stopped serving: {0}")]
    StoppedServing(Box<ProbeError>),
    /// The shared session was not there to lease.
    #[error("the shared session is in use or gone")]
    NoSession,
}

impl ProbeError {
    /// Did a wait run out (as opposed to the server closing, or an answer that cannot be read)?
    pub fn is_timeout(&self) -> bool {
        match self {
            ProbeError::Timeout { .. }
            | ProbeError::NoReply { .. }
            | ProbeError::BarrierTimeout { .. } => true,
            ProbeError::StoppedServing(inner) => inner.is_timeout(),
            _ => false,
        }
    }
}

/// What a wait that met the end of stdout was waiting for.
#[derive(Debug, Clone, PartialEq)]
pub enum Awaited {
    /// Any response.
    Anything,
    /// The response to this id.
    Reply(Value),
    /// The reply to the barrier (`ping`, `server/discover`) sent after the check's messages.
    Barrier(&'static str),
}

impl std::fmt::Display for Awaited {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Awaited::Anything => Ok(()),
            Awaited::Reply(id) => write!(f, " before answering id {id}"),
            Awaited::Barrier(method) => {
                write!(f, " before answering the {method} sent as a barrier")
            }
        }
    }
}

/// ` (the server exited with status 1)`, or nothing.
fn exit_note(exit: &Option<ExitStatus>) -> String {
    match exit {
        Some(status) => format!(" (the server {})", describe_exit(*status)),
        None => String::new(),
    }
}

fn budget_note(start_budget: bool) -> &'static str {
    if start_budget {
        " (the start budget, --start-timeout: the process had answered nothing)"
    } else {
        ""
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::ExitStatusExt;

    use serde_json::json;

    use super::*;

    /// The words reports have always shown.
    #[test]
    fn texts() {
        let eof = ProbeError::Eof {
            awaited: Awaited::Reply(json!(3)),
            exit: Some(ExitStatus::from_raw(1 << 8)),
            notes: String::new(),
        };
        assert_eq!(
            eof.to_string(),
            "the server closed its stdout before answering id 3 (the server exited with status 1)"
        );
        let timeout = ProbeError::Timeout {
            id: json!("w1"),
            limit: Duration::from_secs(5),
            start_budget: false,
            notes: String::new(),
        };
        assert_eq!(timeout.to_string(), "no response to id \"w1\" within 5s");
        assert!(timeout.is_timeout());
        let barrier = ProbeError::BarrierTimeout {
            method: "ping",
            wait: Duration::from_secs(1),
        };
        assert_eq!(
            ProbeError::StoppedServing(Box::new(barrier.clone())).to_string(),
            "the server stopped serving: no response within 1s to the ping sent after it as a \
             barrier: the server stopped answering"
        );
        assert!(ProbeError::StoppedServing(Box::new(barrier)).is_timeout());
        assert!(!eof.is_timeout());
    }
}
