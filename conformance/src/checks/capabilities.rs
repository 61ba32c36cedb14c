//! What the methods of a capability the server does not declare get (basic/lifecycle.mdx,
//! Capability Negotiation): reported, never judged, since a server may answer more than it
//! declares. They run last in their session: a request for an undeclared method can change how
//! a server answers later ones (a TypeScript SDK 2.x server then answered server/discover with
//! an unsupported version as if it were supported).

use futures::FutureExt;
use serde_json::{json, Value};

use super::step;
use crate::capability::Capability;
use crate::catalog::Check;
use crate::check::{Level, Outcome, RunsIn};
use crate::ctx::Ctx;
use crate::era::Era;
use crate::ids;
use crate::pattern::describe;

pub fn checks() -> Vec<Check> {
    let words = "Servers that support resources MUST declare the resources capability (and \
                 likewise prompts, logging, completions, tools)";
    let why = "it binds servers that support a feature; one that answers an undeclared method \
               may only be lenient: reported";
    vec![
        Check::code(
            ids::CAPABILITIES_UNDECLARED,
            Level::Info,
            "what the methods of each capability the initialize result does not declare get (tools/list, resources/list, prompts/list, logging/setLevel, completion/complete)",
            "basic/lifecycle.mdx, Capability Negotiation; server/resources.mdx, Capabilities (and each feature page's)",
            |ctx| undeclared(ctx, Era::Legacy).boxed(),
        )
        .quote(words)
        .because(why)
        .runs_in(RunsIn::Legacy)
        .ends_session(),
        Check::code(
            ids::MODERN_CAPABILITIES_UNDECLARED,
            Level::Info,
            "what the methods of each capability the server/discover result does not declare get, with 2026-07-28 _meta (tools/list, resources/list, prompts/list, completion/complete)",
            "2026-07-28 server/discover.mdx; server/resources.mdx, Capabilities (and each feature page's)",
            |ctx| undeclared(ctx, Era::Modern).boxed(),
        )
        .quote(words)
        .because(why)
        .runs_in(RunsIn::Modern)
        .ends_session(),
    ]
}

/// The request that shows whether a server serves `capability` anyway, in `era` (2026-07-28
/// has no `logging/setLevel`: the level travels in each request's `_meta`).
fn probe_request(capability: Capability, era: Era) -> Option<(&'static str, Value)> {
    Some(match capability {
        Capability::Tools => ("tools/list", json!({})),
        Capability::Resources => ("resources/list", json!({})),
        Capability::Prompts => ("prompts/list", json!({})),
        Capability::Logging if era == Era::Legacy => ("logging/setLevel", json!({"level": "info"})),
        Capability::Completions => (
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "mcp-conformance"},
                   "argument": {"name": "x", "value": ""}}),
        ),
        Capability::Logging | Capability::ResourceSubscribe => return None,
    })
}

async fn undeclared(ctx: &Ctx, era: Era) -> Outcome {
    let declared = ctx.era().capabilities(era).cloned().unwrap_or(Value::Null);
    let missing: Vec<Capability> = Capability::ALL
        .into_iter()
        .filter(|c| !c.declared_in(&declared))
        .collect();
    let asks: Vec<(Capability, &str, Value)> = missing
        .iter()
        .filter_map(|&c| probe_request(c, era).map(|(m, params)| (c, m, params)))
        .collect();
    if asks.is_empty() {
        return Outcome::Skip(
            "the server declares every capability these methods belong to".to_owned(),
        );
    }
    let mut p = step!(ctx.session(era).await, "a session");
    let mut seen = Vec::new();
    for (capability, method, params) in asks {
        let reply = step!(
            p.request(method, Some(params)).await,
            format!("a reply to {method}")
        );
        seen.push(format!(
            "{capability} (not declared): {method} got {}",
            describe(&reply)
        ));
    }
    Outcome::Observed(seen.join("; "))
}
