//! How a serve loop ended: both loops return it, and the binary maps it to an exit status.

use std::io;

/// Why a transport ([`crate::serve`], [`crate::serve_http`]) returned.
#[derive(Debug)]
pub enum Exit {
    /// Input ended; everything read was answered and flushed.
    InputClosed,
    /// The shutdown future fired (SIGTERM/SIGINT); everything read was answered and flushed.
    Shutdown,
    /// The output was closed by the peer (EPIPE): nobody is listening any more.
    OutputClosed,
    /// Answering what was read did not finish within `Config::shutdown_grace`.
    DrainTimedOut,
    /// Reading input failed.
    ReadFailed(io::Error),
}
