//! Which protocol era(s) a server speaks (2026-07-28 `basic/versioning.mdx`, Backward
//! Compatibility with Initialization-Based Versions): what the two start-up probes found,
//! judged. The probes themselves are [`crate::startup`]'s.

use crate::transcript::TranscriptEntry;
use mcp_protocol::mcp::modern;
use serde_json::Value;

use crate::capability::Capability;
use crate::mismatch::Kind;
use crate::pattern::{describe, short};
use crate::probe::ProbeError;

/// A protocol era: legacy (the `initialize` handshake) or modern (2026-07-28, stateless).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    Legacy,
    Modern,
}

/// What the era probes found about one server.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EraReport {
    /// `initialize` got a result.
    pub legacy: bool,
    /// `server/discover` with 2026-07-28 `_meta` got a DiscoverResult or a -32022 error.
    pub modern: bool,
    /// It got a DiscoverResult: the server accepts 2026-07-28 requests.
    pub accepts_latest: bool,
    /// The versions the server named (`supportedVersions`, or `data.supported` of a -32022).
    pub supported: Vec<String>,
    /// `_meta["io.modelcontextprotocol/serverInfo"]` of the DiscoverResult, if any.
    pub server_info: Option<Value>,
    /// The reply to the start-up `initialize` (with the latest legacy version), or why none.
    pub initialize_reply: Option<Result<Value, ProbeError>>,
    /// `capabilities` of the `initialize` result and of the DiscoverResult.
    pub legacy_capabilities: Option<Value>,
    pub modern_capabilities: Option<Value>,
    /// What each probe got, in a few words.
    pub discover: String,
    pub initialize: String,
    /// A start-up reply could not be read: every check that needs the server is blocked.
    pub blocked: Option<(Kind, String)>,
    /// The probes' frames and the server's stderr, for the checks that judge the start-up.
    pub transcript: Vec<TranscriptEntry>,
    pub stderr: Vec<String>,
}

impl EraReport {
    /// `legacy`, `modern`, `dual-era` or `neither`.
    pub fn label(&self) -> &'static str {
        match (self.legacy, self.modern) {
            (true, true) => "dual-era",
            (true, false) => "legacy",
            (false, true) => "modern",
            (false, false) => "neither",
        }
    }

    /// The eras for the report: `["legacy"]`, `["modern"]`, `["legacy", "modern"]` or `[]`.
    pub fn eras(&self) -> Vec<String> {
        let mut eras = Vec::new();
        if self.legacy {
            eras.push("legacy".to_owned());
        }
        if self.modern {
            eras.push("modern".to_owned());
        }
        eras
    }

    /// One line for `era.detect`: the label, then what each probe got.
    pub fn summary(&self) -> String {
        format!(
            "{}: server/discover → {}; initialize → {}",
            self.label(),
            self.discover,
            self.initialize
        )
    }

    /// The start-up's frames and stderr, for a check that judges them (its times count from
    /// the start of the run).
    pub fn evidence(&self) -> crate::evidence::Collected {
        crate::evidence::Collected {
            transcript: self.transcript.clone(),
            whole: self.transcript.clone(),
            stderr: self.stderr.clone(),
            blocked: None,
            stalls: Vec::new(),
        }
    }

    /// Does the server declare `capability` in the era a check runs in?
    pub fn declares(&self, capability: Capability, era: Era) -> bool {
        self.capabilities(era)
            .is_some_and(|c| capability.declared_in(c))
    }

    /// The capabilities the server declared in `era`'s start-up result, if it has one.
    pub fn capabilities(&self, era: Era) -> Option<&Value> {
        match era {
            Era::Modern => self.modern_capabilities.as_ref(),
            Era::Legacy => self.legacy_capabilities.as_ref(),
        }
    }
}

/// Is `result` a DiscoverResult (as opposed to, say, `{}` from a server that answers every
/// method)? It names `supportedVersions` or carries a `resultType`.
fn is_modern_result(result: &Value) -> bool {
    result.get("supportedVersions").is_some() || result.get("resultType").is_some()
}

/// The strings of a JSON array of strings.
pub fn strings(v: Option<&Value>) -> Option<Vec<String>> {
    v?.as_array()?
        .iter()
        .map(|s| s.as_str().map(str::to_owned))
        .collect()
}

/// Judges the two probes' replies (`Err`: no reply, and why).
pub fn conclude(
    discover: Result<Value, ProbeError>,
    initialize: Result<Value, ProbeError>,
) -> EraReport {
    let mut era = EraReport::default();
    match &discover {
        Ok(reply) => match (reply.get("result"), reply.get("error")) {
            (Some(result), _) if is_modern_result(result) => {
                era.modern = true;
                era.accepts_latest = true;
                era.supported = strings(result.get("supportedVersions")).unwrap_or_default();
                era.server_info = result
                    .pointer("/_meta")
                    .and_then(|m| m.get(modern::META_SERVER_INFO))
                    .cloned();
                era.modern_capabilities = result.get("capabilities").cloned();
                era.discover = match result.get("supportedVersions") {
                    Some(v) => format!("a DiscoverResult (supportedVersions {})", short(v)),
                    None => "a result with a resultType but no supportedVersions".to_owned(),
                };
            }
            (Some(result), _) => {
                era.discover = format!("a result that is not a DiscoverResult: {}", short(result));
            }
            (None, Some(error))
                if error.get("code").and_then(Value::as_i64)
                    == Some(modern::UNSUPPORTED_PROTOCOL_VERSION) =>
            {
                era.modern = true;
                era.supported = strings(error.pointer("/data/supported")).unwrap_or_default();
                era.discover = format!(
                    "-32022 UnsupportedProtocolVersionError (supported {})",
                    error
                        .pointer("/data/supported")
                        .map(short)
                        .unwrap_or_else(|| "not given".to_owned())
                );
            }
            _ => era.discover = describe(reply),
        },
        Err(e) => era.discover = format!("no answer ({e})"),
    }
    match &initialize {
        Ok(reply) => match reply.get("result") {
            Some(result) => {
                era.legacy = true;
                era.legacy_capabilities = result.get("capabilities").cloned();
                era.initialize = match result.get("protocolVersion") {
                    Some(v) => format!("a result (protocolVersion {})", short(v)),
                    None => format!("a result {}", short(result)),
                };
            }
            None => era.initialize = describe(reply),
        },
        Err(e) => era.initialize = format!("no answer ({e})"),
    }
    era.initialize_reply = Some(initialize);
    era
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn discover_ok() -> Value {
        json!({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete",
            "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}, "ttlMs": 0,
            "cacheScope": "public",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}}})
    }

    fn initialize_ok() -> Value {
        json!({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-11-25",
            "capabilities": {}}})
    }

    fn error(code: i64) -> Value {
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": code, "message": "no"}})
    }

    #[test]
    fn eras_from_probes() {
        let dual = conclude(Ok(discover_ok()), Ok(initialize_ok()));
        assert_eq!(
            (dual.label(), dual.eras()),
            ("dual-era", vec!["legacy".to_owned(), "modern".to_owned()])
        );
        assert!(dual.accepts_latest);
        assert_eq!(dual.server_info, Some(json!({"name": "s", "version": "1"})));
        assert!(dual
            .summary()
            .starts_with("dual-era: server/discover → a DiscoverResult"));
        assert!(dual.declares(Capability::Tools, Era::Modern));
        assert!(!dual.declares(Capability::Tools, Era::Legacy));

        let legacy = conclude(Ok(error(-32601)), Ok(initialize_ok()));
        assert_eq!(
            (legacy.label(), legacy.eras()),
            ("legacy", vec!["legacy".to_owned()])
        );
        assert!(
            legacy.summary().contains("error -32601"),
            "{}",
            legacy.summary()
        );

        let modern = conclude(Ok(discover_ok()), Ok(error(-32601)));
        assert_eq!(
            (modern.label(), modern.eras()),
            ("modern", vec!["modern".to_owned()])
        );

        // -32022 is modern, but the server does not accept 2026-07-28.
        let other = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32022, "message": "x",
            "data": {"supported": ["2027-01-01"], "requested": "2026-07-28"}}});
        let future = conclude(Ok(other), Err(ProbeError::NoSession));
        assert_eq!(future.label(), "modern");
        assert!(!future.accepts_latest);
        assert_eq!(future.supported, vec!["2027-01-01".to_owned()]);

        // A server that answers every method with {} is not modern.
        let empty = json!({"jsonrpc": "2.0", "id": 1, "result": {}});
        let neither = conclude(Ok(empty), Err(ProbeError::NoSession));
        assert_eq!(
            (neither.label(), neither.eras()),
            ("neither", Vec::<String>::new())
        );
    }
}
