//! What a run covered, per server capability and era: declared or not, and how many of the
//! checks that exercise it ran, passed, failed, were skipped (and why), so a PASS never hides
//! "not tested".

use std::collections::BTreeSet;

use crate::capability::Capability;
use crate::check::{CheckResult, Coverage, RunsIn, Status};
use crate::era::{Era, EraReport};

/// The coverage of a target whose start-up found `era`, from its `results`: every capability
/// in every era the server speaks.
pub fn of(era: &EraReport, results: &[CheckResult]) -> Vec<Coverage> {
    let mut out = Vec::new();
    let eras = [(Era::Legacy, era.legacy), (Era::Modern, era.modern)];
    for (in_era, spoken) in eras {
        if !spoken {
            continue;
        }
        for capability in Capability::ALL {
            out.push(one(era, results, capability, in_era));
        }
    }
    out
}

fn one(era: &EraReport, results: &[CheckResult], capability: Capability, in_era: Era) -> Coverage {
    let mut c = Coverage {
        capability: capability.as_str().to_owned(),
        era: era_name(in_era).to_owned(),
        declared: era.declares(capability, in_era),
        ..Coverage::default()
    };
    let mut reasons = BTreeSet::new();
    let mine = results.iter().filter(|r| {
        r.info.capability.as_deref() == Some(capability.as_str()) && era_of(r) == in_era
    });
    for r in mine {
        match r.status {
            Status::Pass => c.passed += 1,
            Status::Fail | Status::Warn => c.failed += 1,
            Status::Info => c.info += 1,
            Status::Skip | Status::Blocked | Status::NotApplicable => {
                c.not_run += 1;
                reasons.insert(r.outcome.text().to_owned());
                continue;
            }
        }
        c.ran += 1;
    }
    c.reasons = reasons.into_iter().filter(|r| !r.is_empty()).collect();
    c
}

/// The era a check exercises its capability in: the modern session's, or the legacy one.
fn era_of(r: &CheckResult) -> Era {
    if r.info.runs_in == RunsIn::Modern {
        Era::Modern
    } else {
        Era::Legacy
    }
}

fn era_name(era: Era) -> &'static str {
    match era {
        Era::Legacy => "legacy",
        Era::Modern => "modern",
    }
}
