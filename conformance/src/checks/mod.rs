//! The built-in checks: Rust code for what needs logic, JSON scenarios for plain replays.
//! Each names the spec text it rests on and quotes the words that make its level.

mod cacheable;
mod cancellation;
mod capabilities;
mod completions;
mod content;
mod framing;
mod http;
mod jsonrpc;
mod lifecycle;
mod logging;
mod modern;
mod pages;
mod prompts;
mod resources;
mod shape;
mod tools;
mod twins;
mod watch;

use crate::catalog::Check;
use crate::check::Transport;
use crate::ids;
use crate::probe::ProbeError;

pub(crate) use watch::{judged_at_end, settle as settle_watched};

/// The scenarios that ship with the harness (the same format as `--scenario-file`).
const BUILTIN_SCENARIOS: &str = include_str!("../../scenarios/builtin.json");

/// The built-in scenarios (`scenarios/builtin.json`) do not parse: a defect of this build.
#[derive(Debug, thiserror::Error)]
#[error("built-in scenarios: {0}")]
pub struct BuiltinError(#[from] serde_json::Error);

/// Every built-in check, in report order.
pub fn builtin() -> Result<Vec<Check>, BuiltinError> {
    let mut checks = Vec::new();
    checks.extend(modern::era_checks());
    checks.extend(lifecycle::checks());
    checks.extend(jsonrpc::checks());
    checks.extend(tools::checks());
    checks.extend(resources::checks());
    checks.extend(completions::checks());
    checks.extend(prompts::checks());
    checks.extend(logging::checks());
    checks.extend(capabilities::checks());
    // Byte framing, stdin, exit and stderr are stdio's; UTF-8 holds on every transport.
    checks.extend(framing::checks().into_iter().map(|c| {
        if ids::FRAMING_UTF8 == c.info.id {
            c
        } else {
            c.transport(Transport::Stdio)
        }
    }));
    checks.extend(cancellation::checks());
    checks.extend(http::checks());
    checks.extend(modern::checks());
    checks.extend(cacheable::checks());
    checks.extend(watch::checks());
    checks.extend(from_scenarios(BUILTIN_SCENARIOS)?);
    Ok(checks)
}

/// The checks of a scenario file.
pub fn from_scenarios(text: &str) -> Result<Vec<Check>, serde_json::Error> {
    Ok(crate::scenario::parse(text)?
        .into_iter()
        .map(Check::scenario)
        .collect())
}

/// Why a step of a check could not get what it needed: the probe's error, or an answer that
/// does not serve (what came, in words).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum StepError {
    #[error(transparent)]
    Probe(#[from] ProbeError),
    #[error("{0}")]
    Answer(String),
}

/// `?` for checks: a setup step that failed ends the check with that failure.
macro_rules! step {
    ($e:expr, $what:expr) => {
        match $e {
            Ok(v) => v,
            Err(e) => return $crate::check::Outcome::fail($what, e),
        }
    };
}
pub(crate) use step;

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::collections::BTreeSet;

    use super::*;
    use crate::catalog::Body;

    /// The id table and the catalogue name the same checks: an id with no check (a root cause's
    /// owner that cannot fail), or a Rust check missing from the table, is caught here.
    #[test]
    fn the_id_table_is_the_catalogue() {
        let checks = builtin().unwrap();
        let code: Vec<&str> = checks
            .iter()
            .filter(|c| matches!(c.body, Body::Code(_)))
            .map(|c| c.info.id.as_str())
            .collect();
        let table: Vec<&str> = ids::ALL.iter().map(|id| id.as_str()).collect();
        assert_eq!(
            code, table,
            "the table lists the Rust checks, in report order"
        );
        let unique: BTreeSet<&str> = checks.iter().map(|c| c.info.id.as_str()).collect();
        assert_eq!(unique.len(), checks.len(), "every id is used once");
    }
}
