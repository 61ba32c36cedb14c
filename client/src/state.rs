//! The connection's lifecycle: the state callers see, and the finer phase the client tracks.

/// The connection's lifecycle state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Connected; neither the `server/discover` probe nor `initialize` has succeeded yet.
    New,
    /// Legacy: `initialize` answered; `notifications/initialized` not sent yet.
    Initialized,
    /// Legacy handshake complete, or modern probe answered: every method is allowed.
    Ready,
    Closed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    New,
    /// `connect()` is waiting for the `server/discover` probe.
    Probing,
    Initializing,
    Initialized,
    Ready,
    Closed,
}

impl Phase {
    pub(crate) fn public(self) -> State {
        match self {
            Phase::New | Phase::Probing | Phase::Initializing => State::New,
            Phase::Initialized => State::Initialized,
            Phase::Ready => State::Ready,
            Phase::Closed => State::Closed,
        }
    }
}
