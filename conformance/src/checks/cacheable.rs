//! 2026-07-28: the other list results carry caching hints too (`server/utilities/caching.mdx`,
//! Cacheable Results): `prompts/list`, `resources/list`, `resources/templates/list`, every page.
//! (`tools/list` is `modern.tools-list-cacheable`.)

use futures::FutureExt;

use super::modern::cacheable_problems;
use super::pages;
use super::step;
use crate::capability::Capability;
use crate::catalog::Check;
use crate::check::{Level, Outcome, RunsIn};
use crate::ctx::Ctx;
use crate::era::Era;
use crate::ids::{self, CheckId};

const WORDS: &str = "Servers MUST include caching hints on results with resultType: \"complete\" \
                     returned by the following operations: ... / Servers MUST provide a ttlMs \
                     value that is >= 0.";
const SPEC: &str =
    "2026-07-28 server/utilities/caching.mdx, Cacheable Results, Time-to-Live (TTL) Field";

pub fn checks() -> Vec<Check> {
    vec![
        one(
            ids::MODERN_PROMPTS_LIST_CACHEABLE,
            "prompts/list results carry ttlMs (a number >= 0) and cacheScope (\"public\" or \"private\") on every page",
            Capability::Prompts,
            |ctx| cacheable(ctx, "prompts/list", "prompts").boxed(),
        ),
        one(
            ids::MODERN_RESOURCES_LIST_CACHEABLE,
            "resources/list results carry ttlMs (a number >= 0) and cacheScope (\"public\" or \"private\") on every page",
            Capability::Resources,
            |ctx| cacheable(ctx, "resources/list", "resources").boxed(),
        ),
        one(
            ids::MODERN_RESOURCE_TEMPLATES_LIST_CACHEABLE,
            "resources/templates/list results carry ttlMs (a number >= 0) and cacheScope (\"public\" or \"private\") on every page",
            Capability::Resources,
            |ctx| cacheable(ctx, "resources/templates/list", "resourceTemplates").boxed(),
        ),
    ]
}

fn one(
    id: CheckId,
    description: &str,
    capability: Capability,
    f: crate::catalog::CheckFn,
) -> Check {
    Check::code(id, Level::Must, description, SPEC, f)
        .quote(WORDS)
        .runs_in(RunsIn::Modern)
        .needs(capability, Era::Modern)
}

async fn cacheable(ctx: &Ctx, method: &str, key: &str) -> Outcome {
    let mut p = step!(ctx.session(Era::Modern).await, "the server starts");
    let listed = step!(
        pages::list(&mut p, method, key).await,
        format!("a {method} result")
    );
    let mut problems = Vec::new();
    for (i, page) in listed.pages.iter().enumerate() {
        cacheable_problems(page, &format!("{method} page {}", i + 1), &mut problems);
    }
    if problems.is_empty() {
        Outcome::pass(format!(
            "{} page(s): ttlMs {}, cacheScope {}",
            listed.pages.len(),
            listed.pages[0]["ttlMs"],
            listed.pages[0]["cacheScope"]
        ))
    } else {
        Outcome::fail(
            "ttlMs (a number >= 0) and cacheScope (\"public\" or \"private\") on every page",
            problems.join("\n"),
        )
    }
}
