//! Why a bench run fails, and what the bench asks of a server.

/// The protocol version offered in the benchmark's handshake.
pub const BENCH_VERSION: &str = "2025-11-25";

/// Why a run failed.
#[derive(Debug)]
pub enum DriveError {
    /// The server could not be started.
    Start(String),
    /// A reply was missing, late, malformed or wrong: the run fails.
    Verify(String),
}

impl std::fmt::Display for DriveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DriveError::Start(m) | DriveError::Verify(m) => f.write_str(m),
        }
    }
}

pub(crate) fn verify(message: impl Into<String>) -> DriveError {
    DriveError::Verify(message.into())
}

/// What the bench asks of a server, said when a reply shows the server's `echo` is another
/// tool (or missing), as with servers that were not written for the bench.
pub(crate) const ECHO_CONTRACT: &str = "the bench calls a tool named `echo` with arguments \
                             {\"text\": string} and expects that text back, unchanged, in \
                             result.content[0].text; does this server have such a tool \
                             (`tools/list`)?";

/// A frame in an error message: its first 300 bytes, and its length when longer.
pub(crate) fn shown(frame: &[u8]) -> String {
    let s = String::from_utf8_lossy(&frame[..frame.len().min(300)]).into_owned();
    if frame.len() > 300 {
        format!("{s}… ({} bytes)", frame.len())
    } else {
        s
    }
}
