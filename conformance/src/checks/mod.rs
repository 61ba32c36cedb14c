//! The built-in checks: Rust code for what needs logic, JSON scenarios for plain replays.

mod framing;
mod jsonrpc;
mod lifecycle;
pub mod modern;
mod tools;

use crate::check::{CheckInfo, Level};
use crate::runner::{Body, Check, CheckFn};

/// The scenarios that ship with the harness (the same format as `--scenario-file`).
const BUILTIN_SCENARIOS: &str = include_str!("../../scenarios/builtin.json");

/// Every built-in check, in report order.
pub fn builtin() -> Result<Vec<Check>, String> {
    let mut checks = Vec::new();
    checks.extend(modern::era_checks());
    checks.extend(lifecycle::checks());
    checks.extend(jsonrpc::checks());
    checks.extend(tools::checks());
    checks.extend(framing::checks());
    checks.extend(modern::checks());
    checks.extend(
        crate::scenario::parse(BUILTIN_SCENARIOS)
            .map_err(|e| format!("built-in scenarios: {e}"))?,
    );
    Ok(checks)
}

pub(crate) fn code(id: &str, level: Level, description: &str, spec: &str, f: CheckFn) -> Check {
    Check {
        info: CheckInfo {
            id: id.to_owned(),
            level,
            description: description.to_owned(),
            spec: spec.to_owned(),
            echo_only: false,
        },
        body: Body::Code(f),
    }
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
