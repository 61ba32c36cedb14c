//! A check written once and registered for both eras: the legacy one runs in the shared
//! legacy session and cites the 2025-11-25 page, the modern one runs in the shared 2026-07-28
//! session and cites that page (where the two pages say the same words).

use crate::capability::Capability;
use crate::catalog::{Check, CheckFn};
use crate::check::{Level, RunsIn};
use crate::era::Era;
use crate::ids::CheckId;

/// One check of a feature, as both eras' pages state it.
#[derive(Clone, Copy)]
#[allow(missing_debug_implementations)] // fn pointers
pub(crate) struct Twin {
    /// The legacy id (`area.name`) and the modern one (`modern.area-name`).
    pub ids: [CheckId; 2],
    pub level: Level,
    pub what: &'static str,
    /// The page and section, without the version (both pages have it).
    pub spec: &'static str,
    pub quote: &'static str,
    /// Why the level is what it is, where the words alone do not say (may be empty).
    pub because: &'static str,
    /// The body run in a legacy session, and in a modern one.
    pub run: [CheckFn; 2],
}

/// The legacy checks of `twins`, then their modern twins (report order), each needing
/// `capability` declared in its era.
pub(crate) fn both_eras(twins: &[Twin], capability: Capability) -> Vec<Check> {
    let eras = [
        (Era::Legacy, RunsIn::Legacy, "2025-11-25"),
        (Era::Modern, RunsIn::Modern, "2026-07-28"),
    ];
    let mut checks = Vec::new();
    for (i, (era, runs_in, version)) in eras.into_iter().enumerate() {
        for t in twins {
            let spec = format!("{version} {}", t.spec);
            let mut check = Check::code(t.ids[i], t.level, t.what, &spec, t.run[i])
                .quote(t.quote)
                .runs_in(runs_in)
                .needs(capability, era);
            if !t.because.is_empty() {
                check = check.because(t.because);
            }
            checks.push(check);
        }
    }
    checks
}
