//! 2026-07-28: the other list results, and `resources/read`'s, carry caching hints too
//! (`server/utilities/caching.mdx`, Cacheable Results): `prompts/list`, `resources/list`,
//! `resources/templates/list` (every page), `resources/read`. (`tools/list` is
//! `modern.tools-list-cacheable`, `server/discover` `modern.discover`.)

use futures::FutureExt;
use serde_json::{json, Value};

use super::modern::cacheable_problems;
use super::pages;
use super::step;
use crate::capability::Capability;
use crate::catalog::Check;
use crate::check::{Level, Outcome, RunsIn};
use crate::ctx::Ctx;
use crate::era::Era;
use crate::ids::{self, CheckId};
use crate::pattern::describe;

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
        one(
            ids::MODERN_RESOURCES_READ_CACHEABLE,
            "a resources/read result (resultType \"complete\") of the first listed resource carries ttlMs (a number >= 0) and cacheScope (\"public\" or \"private\")",
            Capability::Resources,
            |ctx| read_cacheable(ctx).boxed(),
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

/// The first listed resource read: its result's hints, where the result is complete (an
/// `input_required` one is interim, not cacheable).
async fn read_cacheable(ctx: &Ctx) -> Outcome {
    let mut p = step!(ctx.session(Era::Modern).await, "the server starts");
    let listed = step!(
        pages::list(&mut p, "resources/list", "resources").await,
        "a resources/list result"
    );
    let Some(uri) = listed
        .items
        .iter()
        .find_map(|r| r.get("uri").and_then(Value::as_str))
        .map(str::to_owned)
    else {
        return Outcome::Skip("resources/list lists no resource to read".to_owned());
    };
    let reply = step!(
        p.request("resources/read", Some(json!({ "uri": uri })))
            .await,
        "a resources/read reply"
    );
    let Some(result) = reply.get("result") else {
        return Outcome::Skip(format!(
            "resources/read of {uri} got no result ({}): nothing to judge",
            describe(&reply)
        ));
    };
    if result.get("resultType") != Some(&json!("complete")) {
        return Outcome::Skip(format!(
            "resources/read of {uri} got resultType {}: only complete results are cacheable",
            result
                .get("resultType")
                .map_or("(none)".to_owned(), Value::to_string)
        ));
    }
    let mut problems = Vec::new();
    cacheable_problems(result, &format!("resources/read {uri}"), &mut problems);
    if problems.is_empty() {
        Outcome::pass(format!(
            "{uri}: ttlMs {}, cacheScope {}",
            result["ttlMs"], result["cacheScope"]
        ))
    } else {
        Outcome::fail(
            "ttlMs (a number >= 0) and cacheScope (\"public\" or \"private\")",
            problems.join("\n"),
        )
    }
}
