//! The scenarios `mcp-conformance client` plays: one run of the client command each, against a
//! scripted server that behaves as the scenario says ([`super::script`]). The client learns the
//! scenario's name from `MCP_CONFORMANCE_SCENARIO`, as in the official suite; a client that
//! ignores it does what it always does, and the checks judge that.

use super::timeline::Wire;

/// A scenario of `client` mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum ScenarioId {
    /// A legacy (2025-11-25) server: `server/discover` gets -32601; after
    /// `notifications/initialized` it pings the client and asks for what the client declared
    /// (roots, sampling, elicitation); `tools/call` reports progress and logs.
    Initialize,
    /// The same server; the official suite's name for "call the `add_numbers` tool".
    ToolsCall,
    /// A legacy server that answers `server/discover` with an empty result `{}`, as many legacy
    /// servers answer any method they do not know: a probing client must fall back.
    DiscoverEmptyResult,
    /// A legacy server that never answers `tools/call`: a client that gives up should cancel.
    Timeout,
    /// A server that answers `initialize` with a version no client supports (`1999-01-01`).
    WrongVersion,
    /// A 2026-07-28 server: `server/discover` answers; an unsupported requested version gets
    /// -32022 listing 2026-07-28; `initialize` gets -32601.
    Modern,
    /// Streamable HTTP: the session expires (404) after the handshake.
    SessionExpired,
    /// A legacy server that, after `notifications/initialized`, asks for the roots, sampling and
    /// elicitation the client did NOT declare (a server must not: what the client answers is
    /// reported, not judged).
    UndeclaredRequests,
}

impl ScenarioId {
    pub(crate) const ALL: [ScenarioId; 8] = [
        ScenarioId::Initialize,
        ScenarioId::ToolsCall,
        ScenarioId::DiscoverEmptyResult,
        ScenarioId::Timeout,
        ScenarioId::WrongVersion,
        ScenarioId::Modern,
        ScenarioId::SessionExpired,
        ScenarioId::UndeclaredRequests,
    ];

    /// The name in `MCP_CONFORMANCE_SCENARIO`, reports and `--scenario`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            ScenarioId::Initialize => "initialize",
            ScenarioId::ToolsCall => "tools_call",
            ScenarioId::DiscoverEmptyResult => "discover-empty-result",
            ScenarioId::Timeout => "timeout",
            ScenarioId::WrongVersion => "wrong-version",
            ScenarioId::Modern => "modern",
            ScenarioId::SessionExpired => "session-expired",
            ScenarioId::UndeclaredRequests => "undeclared-requests",
        }
    }

    pub(crate) fn from_name(name: &str) -> Option<ScenarioId> {
        ScenarioId::ALL.into_iter().find(|s| s.name() == name)
    }

    /// One line for `--list` and docs.
    pub(crate) fn description(self) -> &'static str {
        match self {
            ScenarioId::Initialize => {
                "legacy server (server/discover gets -32601); pings the client after \
                 notifications/initialized and asks for the roots, sampling and elicitation it \
                 declared; tools/call reports progress and logs"
            }
            ScenarioId::ToolsCall => "the same server; a client written for it calls add_numbers",
            ScenarioId::DiscoverEmptyResult => {
                "legacy server that answers server/discover with {}: a probing client falls back \
                 to initialize"
            }
            ScenarioId::Timeout => "tools/call is never answered: a client that gives up cancels",
            ScenarioId::WrongVersion => {
                "initialize is answered with protocol version 1999-01-01: the client disconnects"
            }
            ScenarioId::Modern => {
                "2026-07-28 server: server/discover answered, -32022 for another version, \
                 initialize gets -32601"
            }
            ScenarioId::SessionExpired => {
                "Streamable HTTP: the first request after the handshake gets 404 (session \
                 expired); the client starts a new session"
            }
            ScenarioId::UndeclaredRequests => {
                "legacy server that asks for the roots, sampling and elicitation the client did \
                 not declare (which a server must not): what the client answers is reported"
            }
        }
    }

    /// Whether the scenario exists on this transport.
    pub(crate) fn runs_on(self, wire: Wire) -> bool {
        !(self == ScenarioId::SessionExpired && wire == Wire::Stdio)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for s in ScenarioId::ALL {
            assert_eq!(ScenarioId::from_name(s.name()), Some(s));
        }
        assert_eq!(ScenarioId::from_name("nope"), None);
    }
}
