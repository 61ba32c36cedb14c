//! The signals that end an observed session: SIGTERM, SIGINT and SIGHUP, caught from before
//! the server starts (a host that stops the observer meant to stop the server).

use nix::sys::signal::Signal as NixSignal;
use tokio::signal::unix::{signal, SignalKind};

use crate::clients::timeline::Signal;

pub(super) struct Signals {
    term: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
    hup: tokio::signal::unix::Signal,
}

impl Signals {
    pub(super) fn install() -> std::io::Result<Signals> {
        Ok(Signals {
            term: signal(SignalKind::terminate())?,
            int: signal(SignalKind::interrupt())?,
            hup: signal(SignalKind::hangup())?,
        })
    }

    /// The next one: as the timeline names it, and as it is sent on.
    pub(super) async fn next(&mut self) -> (Signal, NixSignal) {
        tokio::select! {
            _ = self.term.recv() => (Signal::Term, NixSignal::SIGTERM),
            _ = self.int.recv() => (Signal::Int, NixSignal::SIGINT),
            _ = self.hup.recv() => (Signal::Hup, NixSignal::SIGHUP),
        }
    }
}
