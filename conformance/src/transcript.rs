//! The entries of a transcript: what the harness sent, what came back, and what it did or saw,
//! each timed. Both transports keep them ([`crate::transport`]); checks' evidence and the
//! reports are made of them.

use serde::Serialize;

/// Which way an entry went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Bytes written to the server (its stdin, or a POST).
    Send,
    /// A frame (or invalid bytes) read from the server.
    Receive,
    /// Something the harness did or saw: stdin closed, a signal, the exit, an HTTP status.
    Event,
}

/// One line of a transcript.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TranscriptEntry {
    /// Milliseconds since the process was spawned (or the connection made); in a check's
    /// evidence, since the check started.
    #[serde(rename = "ms")]
    pub at_ms: f64,
    pub direction: Direction,
    pub text: String,
}
