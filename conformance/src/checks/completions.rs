//! Completions (`server/utilities/completion.mdx` of each era, `schema.ts` CompleteResult):
//! `completion/complete` for the first argument of a listed prompt that has arguments
//! (`ref/prompt`) and the first variable of a listed resource template (`ref/resource`).

use futures::FutureExt;
use serde_json::{json, Value};

use super::resources::{items, template_variables, templates, Templates};
use super::twins::About;
use crate::capability::Capability;
use crate::catalog::Check;
use crate::check::{Level, Outcome};
use crate::ctx::Ctx;
use crate::era::Era;
use crate::ids;
use crate::pattern::{describe, short};
use crate::probe::Probe;

/// Most values one completion result may carry.
const MAX_VALUES: usize = 100;

pub fn checks() -> Vec<Check> {
    let c = Capability::Completions;
    vec![
        SHAPE.declare(ids::COMPLETIONS_COMPLETE_SHAPE, Era::Legacy, c, |ctx| {
            complete_shape(ctx, Era::Legacy).boxed()
        }),
        MAX_LEGACY.declare(ids::COMPLETIONS_VALUES_MAX, Era::Legacy, c, |ctx| {
            values_max(ctx, Era::Legacy).boxed()
        }),
        SHAPE.declare(
            ids::MODERN_COMPLETIONS_COMPLETE_SHAPE,
            Era::Modern,
            c,
            |ctx| complete_shape(ctx, Era::Modern).boxed(),
        ),
        MAX_MODERN.declare(ids::MODERN_COMPLETIONS_VALUES_MAX, Era::Modern, c, |ctx| {
            values_max(ctx, Era::Modern).boxed()
        }),
    ]
}

const PAGE: &str = "server/utilities/completion.mdx";

const SHAPE: About = About {
    level: Level::Must,
    what: "completion/complete for a prompt argument and a template variable returns completion.values (strings), total a number and hasMore a boolean where present",
    page: PAGE,
    section: "Completion Results; schema.ts CompleteResult",
    quote: "schema.ts: CompleteResult { completion: { values: string[]; total?: number; hasMore?: boolean } }",
    because: "required and typed fields of the schema; a request answered with an error is reported, not judged",
};

const MAX_LEGACY: About = About {
    level: Level::Info,
    what: "completion/complete returns at most 100 values",
    page: PAGE,
    section: "Completion Results; schema.ts CompleteResult",
    quote: "Maximum 100 items per response / schema.ts: An array of completion values. Must not exceed 100 items.",
    because: "no RFC 2119 keyword in capitals (\"Must not\" in a schema comment): reported",
};

const MAX_MODERN: About = About {
    level: Level::Must,
    what: "completion/complete returns at most 100 values",
    page: PAGE,
    section: "Completion Results; schema.ts CompleteResult",
    quote: "schema.ts CompleteResult.completion.values: An array of completion values. Must not exceed 100 items. @maxItems 100",
    because: "the 2026-07-28 schema constrains the array (@maxItems 100, part of its JSON Schema)",
};

/// What is completed: a reference and one of its arguments.
#[derive(Debug, Clone, PartialEq)]
struct Completable {
    reference: Value,
    argument: String,
}

impl Completable {
    fn label(&self) -> String {
        let name = self
            .reference
            .get("name")
            .or_else(|| self.reference.get("uri"))
            .map(short)
            .unwrap_or_default();
        format!(
            "{} {name} argument {:?}",
            self.reference["type"], self.argument
        )
    }
}

/// The first argument of the first prompt that has one.
fn prompt_argument(prompts: &[Value]) -> Option<Completable> {
    prompts.iter().find_map(|prompt| {
        let name = prompt.get("name")?.as_str()?;
        let argument = prompt.pointer("/arguments/0/name")?.as_str()?;
        Some(Completable {
            reference: json!({"type": "ref/prompt", "name": name}),
            argument: argument.to_owned(),
        })
    })
}

/// The first variable of the first template (that parses) that has one.
fn template_variable(templates: &[Value]) -> Option<Completable> {
    templates.iter().find_map(|template| {
        let uri = template.get("uriTemplate")?.as_str()?;
        let variable = template_variables(uri).ok()?.into_iter().next()?;
        Some(Completable {
            reference: json!({"type": "ref/resource", "uri": uri}),
            argument: variable,
        })
    })
}

/// What can be completed on this server in `era`, and why nothing of a kind can.
async fn completables(ctx: &Ctx, p: &mut Probe, era: Era) -> (Vec<Completable>, Vec<String>) {
    let (mut found, mut why) = (Vec::new(), Vec::new());
    if !ctx.era().declares(Capability::Prompts, era) {
        why.push("no prompts capability".to_owned());
    } else {
        match items(p, "prompts/list", "prompts").await {
            Ok(prompts) => match prompt_argument(&prompts) {
                Some(c) => found.push(c),
                None => why.push("no listed prompt has arguments".to_owned()),
            },
            Err(e) => why.push(format!("prompts/list: {e}")),
        }
    }
    if !ctx.era().declares(Capability::Resources, era) {
        why.push("no resources capability".to_owned());
    } else {
        match templates(p).await {
            Ok(Templates::Listed(listed)) => match template_variable(&listed.items) {
                Some(c) => found.push(c),
                None => why.push("no listed resource template has a variable".to_owned()),
            },
            Ok(Templates::Refused(e)) => why.push(e),
            Err(e) => why.push(format!("resources/templates/list: {e}")),
        }
    }
    (found, why)
}

/// Each completable thing and the `completion` object its `completion/complete` (with an
/// empty value) returned; a reply without a result is noted in the second list. `Err`: the
/// check's outcome already (nothing to complete, or no reply).
async fn complete_all(ctx: &Ctx, era: Era) -> Result<(Vec<(String, Value)>, Vec<String>), Outcome> {
    let mut p = match ctx.session(era).await {
        Ok(p) => p,
        Err(e) => return Err(Outcome::fail("a session", e)),
    };
    let (targets, why) = completables(ctx, &mut p, era).await;
    if targets.is_empty() {
        return Err(Outcome::Skip(format!(
            "nothing to complete: {}",
            why.join("; ")
        )));
    }
    let (mut results, mut unjudged) = (Vec::new(), Vec::new());
    for target in targets {
        let params = json!({
            "ref": target.reference,
            "argument": {"name": target.argument, "value": ""},
        });
        let reply = match p.request("completion/complete", Some(params)).await {
            Ok(reply) => reply,
            Err(e) => return Err(Outcome::fail("a completion/complete reply", e)),
        };
        match reply.get("result") {
            Some(result) => results.push((target.label(), result.clone())),
            None => unjudged.push(format!("{}: {}", target.label(), describe(&reply))),
        }
    }
    Ok((results, unjudged))
}

/// What is wrong with a CompleteResult.
fn shape_problems(result: &Value) -> Vec<String> {
    let Some(completion) = result.get("completion").filter(|c| c.is_object()) else {
        return vec![format!(
            "result.completion is not an object: {}",
            short(result)
        )];
    };
    let mut problems = Vec::new();
    match completion.get("values").and_then(Value::as_array) {
        Some(values) => {
            if let Some(v) = values.iter().find(|v| !v.is_string()) {
                problems.push(format!("a value that is not a string: {}", short(v)));
            }
        }
        None => problems.push(format!(
            "completion.values is not an array: {}",
            short(completion)
        )),
    }
    if completion.get("total").is_some_and(|t| !t.is_number()) {
        problems.push(format!(
            "completion.total is not a number: {}",
            short(&completion["total"])
        ));
    }
    if completion.get("hasMore").is_some_and(|h| !h.is_boolean()) {
        problems.push(format!(
            "completion.hasMore is not a boolean: {}",
            short(&completion["hasMore"])
        ));
    }
    problems
}

/// The outcome when every completion is fine: a pass naming them, or an observation if no
/// request got a result.
fn fine(results: &[(String, Value)], unjudged: &[String], what: &str) -> Outcome {
    if results.is_empty() {
        return Outcome::Observed(format!(
            "no completion/complete got a result to judge:\n{}",
            unjudged.join("\n")
        ));
    }
    let names: Vec<&str> = results.iter().map(|(label, _)| label.as_str()).collect();
    let mut text = format!("{what}: {}", names.join(", "));
    if !unjudged.is_empty() {
        text.push_str(&format!("; not judged:\n{}", unjudged.join("\n")));
    }
    Outcome::pass(text)
}

async fn complete_shape(ctx: &Ctx, era: Era) -> Outcome {
    let (results, unjudged) = match complete_all(ctx, era).await {
        Ok(done) => done,
        Err(outcome) => return outcome,
    };
    let problems: Vec<String> = results
        .iter()
        .flat_map(|(label, result)| {
            shape_problems(result)
                .into_iter()
                .map(move |p| format!("{label}: {p}"))
        })
        .collect();
    if !problems.is_empty() {
        return Outcome::fail("well-formed completion results", problems.join("\n"));
    }
    fine(&results, &unjudged, "well formed")
}

async fn values_max(ctx: &Ctx, era: Era) -> Outcome {
    let (results, unjudged) = match complete_all(ctx, era).await {
        Ok(done) => done,
        Err(outcome) => return outcome,
    };
    let over: Vec<String> = results
        .iter()
        .filter_map(|(label, result)| {
            let n = result.pointer("/completion/values")?.as_array()?.len();
            (n > MAX_VALUES).then(|| format!("{label}: {n} values"))
        })
        .collect();
    if !over.is_empty() {
        return Outcome::fail(format!("at most {MAX_VALUES} values"), over.join("\n"));
    }
    fine(&results, &unjudged, &format!("at most {MAX_VALUES} values"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn completion_result_shapes() {
        assert!(shape_problems(
            &json!({"completion": {"values": ["a"], "total": 1, "hasMore": false}})
        )
        .is_empty());
        assert!(shape_problems(&json!({"completion": {"values": []}})).is_empty());
        assert_eq!(
            shape_problems(&json!({"completion": {"values": [1]}})).len(),
            1
        );
        assert_eq!(
            shape_problems(&json!({"completion": {"values": "a", "total": "1", "hasMore": "no"}}))
                .len(),
            3
        );
        assert_eq!(shape_problems(&json!({"values": []})).len(), 1);
    }

    #[test]
    fn the_first_prompt_argument_and_template_variable() {
        let prompts = json!([{"name": "plain"}, {"name": "greet", "arguments": [{"name": "who"}]}]);
        let c = prompt_argument(prompts.as_array().unwrap()).unwrap();
        assert_eq!(c.reference, json!({"type": "ref/prompt", "name": "greet"}));
        assert_eq!(c.argument, "who");
        let templates = json!([{"uriTemplate": "x://{broken"}, {"uriTemplate": "x://plain"}, {"uriTemplate": "x://{a}/{b}"}]);
        let c = template_variable(templates.as_array().unwrap()).unwrap();
        assert_eq!(
            c.reference,
            json!({"type": "ref/resource", "uri": "x://{a}/{b}"})
        );
        assert_eq!(c.argument, "a");
    }
}
