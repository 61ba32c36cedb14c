//! The signals that stop a process of ours: SIGTERM, SIGINT and SIGHUP, caught as one stream.
//! The harness ends the servers it started on them, `observe` passes them on to its server, and
//! the relay of `client` mode reports them as what the client did.

use tokio::signal::unix::{signal, SignalKind};

/// One of the stopping signals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Signal {
    Term,
    Int,
    Hup,
}

impl Signal {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Signal::Term => "SIGTERM",
            Signal::Int => "SIGINT",
            Signal::Hup => "SIGHUP",
        }
    }

    /// As `nix` sends it.
    pub(crate) fn nix(self) -> nix::sys::signal::Signal {
        match self {
            Signal::Term => nix::sys::signal::Signal::SIGTERM,
            Signal::Int => nix::sys::signal::Signal::SIGINT,
            Signal::Hup => nix::sys::signal::Signal::SIGHUP,
        }
    }

    /// The exit code of a process it ended, as a shell reports it: 128 + its number.
    pub(crate) fn exit_code(self) -> u8 {
        128 + self.nix() as u8
    }
}

/// The three signals, installed together.
pub(crate) struct Stops {
    term: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
    hup: tokio::signal::unix::Signal,
}

impl Stops {
    pub(crate) fn install() -> std::io::Result<Stops> {
        Ok(Stops {
            term: signal(SignalKind::terminate())?,
            int: signal(SignalKind::interrupt())?,
            hup: signal(SignalKind::hangup())?,
        })
    }

    /// The next one to arrive.
    pub(crate) async fn next(&mut self) -> Signal {
        tokio::select! {
            _ = self.term.recv() => Signal::Term,
            _ = self.int.recv() => Signal::Int,
            _ = self.hup.recv() => Signal::Hup,
        }
    }
}
