//! Which check runs where: the shared session of each era (its checks one after another, the
//! ones others rely on first, the ones that end it last), and the checks with processes of
//! their own (those that judge one observation together; those whose server may go silent
//! first, so their bounded waits overlap the rest of the run).

use crate::catalog::Check;
use crate::check::RunsIn;

/// A check and its place in the report.
pub(super) type Placed<'a> = (usize, &'a Check);

/// The checks to run, grouped.
#[derive(Debug, Default)]
pub(super) struct Plan<'a> {
    pub legacy: Vec<Placed<'a>>,
    pub modern: Vec<Placed<'a>>,
    /// Checks with processes of their own that run first, each unit one after another.
    pub own_first: Vec<Vec<Placed<'a>>>,
    pub own_rest: Vec<Vec<Placed<'a>>>,
}

impl<'a> Plan<'a> {
    /// Groups `checks` (to run, with their places in the report).
    pub(super) fn new(checks: Vec<Placed<'a>>) -> Plan<'a> {
        let mut plan = Plan::default();
        let mut own: Vec<Vec<Placed<'a>>> = Vec::new();
        for (i, check) in checks {
            match check.info.runs_in {
                RunsIn::Legacy => plan.legacy.push((i, check)),
                RunsIn::Modern => plan.modern.push((i, check)),
                RunsIn::Own | RunsIn::Startup => join_unit(&mut own, (i, check)),
            }
        }
        // In a shared session: the checks others rely on first, the ones that end it last.
        plan.legacy.sort_by_key(|(_, c)| c.info.session_order());
        plan.modern.sort_by_key(|(_, c)| c.info.session_order());
        (plan.own_first, plan.own_rest) = own
            .into_iter()
            .partition(|unit| unit.iter().any(|(_, c)| c.info.runs_first));
        plan
    }
}

/// Checks that share an observation run together, one after another: the first makes it, the
/// others judge it at once.
fn join_unit<'a>(units: &mut Vec<Vec<Placed<'a>>>, placed: Placed<'a>) {
    let shares = &placed.1.info.shares;
    let unit = units
        .iter_mut()
        .find(|u| !shares.is_empty() && u[0].1.info.shares == *shares);
    match unit {
        Some(unit) => unit.push(placed),
        None => units.push(vec![placed]),
    }
}
