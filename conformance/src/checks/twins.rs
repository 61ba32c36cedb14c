//! Checks of a feature declared for both eras: the legacy one runs in the shared legacy session
//! and cites the 2025-11-25 page, the modern one runs in the shared 2026-07-28 session and cites
//! that page. [`in_era`] is the one place an era turns into a session, a page version and the
//! capability the check needs; [`About`] (words that may differ per era) and [`Twin`] (the same
//! words in both) are built on it.

use crate::capability::Capability;
use crate::catalog::{Check, CheckFn};
use crate::check::{Level, RunsIn};
use crate::era::Era;
use crate::ids::CheckId;

/// A check in `era`'s shared session, citing `spec` (a page without its version, and its
/// section) on that era's page, judged where the server declares `capability` there.
#[allow(clippy::too_many_arguments)] // the parts of a check's description
fn in_era(
    id: CheckId,
    era: Era,
    capability: Capability,
    level: Level,
    what: &str,
    spec: &str,
    quote: &str,
    because: &str,
    f: CheckFn,
) -> Check {
    let (version, runs_in) = match era {
        Era::Legacy => ("2025-11-25", RunsIn::Legacy),
        Era::Modern => ("2026-07-28", RunsIn::Modern),
    };
    Check::code(id, level, what, &format!("{version} {spec}"), f)
        .quote(quote)
        .because(because)
        .runs_in(runs_in)
        .needs(capability, era)
}

/// What a check says of itself; a check of both eras declares the same words twice (or
/// different ones, where the pages differ), its citation naming the page of the era it runs in.
pub(crate) struct About {
    pub level: Level,
    /// What the server does.
    pub what: &'static str,
    /// The page, without its version: `server/resources.mdx`.
    pub page: &'static str,
    pub section: &'static str,
    pub quote: &'static str,
    pub because: &'static str,
}

impl About {
    /// The check in `era`'s shared session, judged where the server declares `capability`
    /// there.
    pub(crate) fn declare(
        &self,
        id: CheckId,
        era: Era,
        capability: Capability,
        f: CheckFn,
    ) -> Check {
        let spec = format!("{}, {}", self.page, self.section);
        in_era(
            id,
            era,
            capability,
            self.level,
            self.what,
            &spec,
            self.quote,
            self.because,
            f,
        )
    }
}

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
    [Era::Legacy, Era::Modern]
        .into_iter()
        .enumerate()
        .flat_map(|(i, era)| {
            twins.iter().map(move |t| {
                in_era(
                    t.ids[i], era, capability, t.level, t.what, t.spec, t.quote, t.because,
                    t.run[i],
                )
            })
        })
        .collect()
}
