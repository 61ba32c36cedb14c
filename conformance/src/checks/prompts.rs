//! Prompts (`server/prompts.mdx`, `schema.ts` Prompt, GetPromptResult), in both eras: the list
//! and its pages, `prompts/get` of listed prompts with their required arguments filled, and
//! the errors for an unknown prompt and a missing argument. Only `prompts/list` and
//! `prompts/get` are sent: getting a prompt has no effects.

use futures::FutureExt;
use serde_json::{json, Map, Value};

use super::content::{check_block, ROLES};
use super::shape::{Kind, Problems};
use super::twins::{both_eras, Twin};
use super::{pages, step, StepError};
use crate::capability::Capability;
use crate::catalog::Check;
use crate::check::{Level, Outcome};
use crate::ctx::Ctx;
use crate::era::Era;
use crate::ids;
use crate::pattern::{describe, short};
use crate::probe::Probe;

/// What the harness fills a required argument with (schema.ts: arguments are strings).
const SAMPLE: &str = "mcp-conformance";
/// A prompt name no server lists.
const NO_SUCH_PROMPT: &str = "mcp-conformance-no-such-prompt";

pub fn checks() -> Vec<Check> {
    both_eras(
        &[
            Twin {
                ids: [ids::PROMPTS_LIST_SHAPE, ids::MODERN_PROMPTS_LIST_SHAPE],
                level: Level::Must,
                what: "prompts/list returns prompts with a string name and arguments each with a string name (optional fields typed); every page is followed",
                spec: "server/prompts.mdx, Listing Prompts; schema.ts ListPromptsResult, Prompt, PromptArgument",
                quote: "schema.ts: Prompt { name: string; title?: string; description?: string; arguments?: PromptArgument[]; icons?: Icon[] }; PromptArgument { name: string; description?: string; required?: boolean }",
                because: "required and typed fields of the schema; pages that repeat a cursor never end and are reported here",
                run: [
                    |ctx| list_shape(ctx, Era::Legacy).boxed(),
                    |ctx| list_shape(ctx, Era::Modern).boxed(),
                ],
            },
            Twin {
                ids: [ids::PROMPTS_INVALID_CURSOR, ids::MODERN_PROMPTS_INVALID_CURSOR],
                level: Level::Should,
                what: "prompts/list with a cursor the server never issued gets -32602",
                spec: "server/utilities/pagination.mdx, Error Handling",
                quote: "Invalid cursors SHOULD result in an error with code -32602 (Invalid params).",
                because: "",
                run: [
                    |ctx| invalid_cursor(ctx, Era::Legacy).boxed(),
                    |ctx| invalid_cursor(ctx, Era::Modern).boxed(),
                ],
            },
            Twin {
                ids: [ids::PROMPTS_GET_RESULT, ids::MODERN_PROMPTS_GET_RESULT],
                level: Level::Must,
                what: "prompts/get of listed prompts (required arguments filled) returns messages with role \"user\" or \"assistant\" and a valid content block (image and audio data base64 with a MIME type)",
                spec: "server/prompts.mdx, Getting a Prompt, PromptMessage; schema.ts GetPromptResult, ContentBlock",
                quote: "The image data MUST be base64-encoded and include a valid MIME type. / The audio data MUST be base64-encoded and include a valid MIME type. / Resources can contain either text or binary (blob) data and MUST include: A valid resource URI ... Either text content or base64-encoded blob data",
                because: "and the required, typed fields of GetPromptResult and PromptMessage in schema.ts; an embedded resource's MIME type, which the page's list also names, is optional in schema.ts (ResourceContents.mimeType?): judged only where present",
                run: [
                    |ctx| get_result(ctx, Era::Legacy).boxed(),
                    |ctx| get_result(ctx, Era::Modern).boxed(),
                ],
            },
            Twin {
                ids: [ids::PROMPTS_UNKNOWN_PROMPT, ids::MODERN_PROMPTS_UNKNOWN_PROMPT],
                level: Level::Should,
                what: "prompts/get of a prompt name the server does not list gets -32602",
                spec: "server/prompts.mdx, Error Handling",
                quote: "Servers SHOULD return standard JSON-RPC errors for common failure cases: Invalid prompt name: -32602 (Invalid params)",
                because: "",
                run: [
                    |ctx| unknown_prompt(ctx, Era::Legacy).boxed(),
                    |ctx| unknown_prompt(ctx, Era::Modern).boxed(),
                ],
            },
            Twin {
                ids: [ids::PROMPTS_MISSING_ARGUMENT, ids::MODERN_PROMPTS_MISSING_ARGUMENT],
                level: Level::Should,
                what: "prompts/get without a required argument gets -32602 (where the same get with it gets a result)",
                spec: "server/prompts.mdx, Error Handling",
                quote: "Servers SHOULD return standard JSON-RPC errors for common failure cases: Missing required arguments: -32602 (Invalid params)",
                because: "",
                run: [
                    |ctx| missing_argument(ctx, Era::Legacy).boxed(),
                    |ctx| missing_argument(ctx, Era::Modern).boxed(),
                ],
            },
        ],
        Capability::Prompts,
    )
}

async fn list_shape(ctx: &Ctx, era: Era) -> Outcome {
    let mut p = step!(ctx.session(era).await, "a session");
    let listed = step!(
        pages::list(&mut p, "prompts/list", "prompts").await,
        "a prompts/list result"
    );
    let mut problems = Problems::default();
    for (i, prompt) in listed.items.iter().enumerate() {
        prompt_shape(prompt, &format!("prompts[{i}]"), &mut problems);
    }
    listed.verdict(
        "prompt",
        "prompts of schema.ts's Prompt type",
        problems.into_vec(),
    )
}

/// Adds every way `prompt` departs from `schema.ts` Prompt.
fn prompt_shape(prompt: &Value, path: &str, problems: &mut Problems) {
    let Some(obj) = problems.object(prompt, path) else {
        return;
    };
    problems.required_str(obj, "name", path);
    problems.optional(obj, "title", Kind::Str, path);
    problems.optional(obj, "description", Kind::Str, path);
    problems.optional(obj, "_meta", Kind::Object, path);
    problems.icons(obj, path);
    let Some(arguments) = problems.optional(obj, "arguments", Kind::Array, path) else {
        return;
    };
    for (i, argument) in arguments.as_array().into_iter().flatten().enumerate() {
        let at = format!("{path}.arguments[{i}]");
        let Some(argument) = problems.object(argument, &at) else {
            continue;
        };
        problems.required_str(argument, "name", &at);
        problems.optional(argument, "title", Kind::Str, &at);
        problems.optional(argument, "description", Kind::Str, &at);
        problems.optional(argument, "required", Kind::Bool, &at);
    }
}

async fn invalid_cursor(ctx: &Ctx, era: Era) -> Outcome {
    super::pages::invalid_cursor(ctx, era, "prompts/list").await
}

/// The listed prompts (as far as the pages were followed: a loop is `list_shape`'s finding).
async fn listed(p: &mut Probe) -> Result<Vec<Value>, StepError> {
    Ok(pages::list(p, "prompts/list", "prompts").await?.items)
}

/// `{name: SAMPLE}` for each required argument of `prompt`.
fn arguments_for(prompt: &Value) -> Value {
    let args = required_arguments(prompt)
        .into_iter()
        .map(|argument| (argument.to_owned(), json!(SAMPLE)))
        .collect();
    Value::Object(args)
}

/// The names of `prompt`'s arguments marked `required: true`.
fn required_arguments(prompt: &Value) -> Vec<&str> {
    prompt
        .get("arguments")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|a| a.get("required") == Some(&json!(true)))
        .filter_map(|a| a.get("name").and_then(Value::as_str))
        .collect()
}

/// `prompts/get` of `name` with `arguments`: the whole reply.
async fn get(p: &mut Probe, name: &str, arguments: Value) -> Result<Value, StepError> {
    Ok(p.request(
        "prompts/get",
        Some(json!({"name": name, "arguments": arguments})),
    )
    .await?)
}

/// `prompts/get` of `prompt` with its required arguments filled: set to [`SAMPLE`], and, if
/// that gets an error and the server declares `completions` in `era`, to the first value
/// `completion/complete` offers for each (a read-only request). The arguments sent last, and
/// the reply to them.
async fn get_filled(
    ctx: &Ctx,
    era: Era,
    p: &mut Probe,
    name: &str,
    prompt: &Value,
) -> Result<(Value, Value), StepError> {
    let arguments = arguments_for(prompt);
    let reply = get(p, name, arguments.clone()).await?;
    if reply.get("error").is_none() || !ctx.era().declares(Capability::Completions, era) {
        return Ok((arguments, reply));
    }
    let completed = completed_arguments(p, name, prompt).await?;
    if completed == arguments {
        return Ok((arguments, reply));
    }
    let reply = get(p, name, completed.clone()).await?;
    Ok((completed, reply))
}

/// Each required argument of `prompt` set to the first value `completion/complete` offers for
/// it (given the ones chosen before it), or to [`SAMPLE`] where it offers none.
async fn completed_arguments(
    p: &mut Probe,
    name: &str,
    prompt: &Value,
) -> Result<Value, StepError> {
    let mut chosen = Map::new();
    for argument in required_arguments(prompt) {
        let reply = p
            .request(
                "completion/complete",
                Some(json!({
                    "ref": {"type": "ref/prompt", "name": name},
                    "argument": {"name": argument, "value": ""},
                    "context": {"arguments": chosen.clone()},
                })),
            )
            .await?;
        let offered = reply
            .pointer("/result/completion/values/0")
            .and_then(Value::as_str)
            .unwrap_or(SAMPLE);
        chosen.insert(argument.to_owned(), json!(offered));
    }
    Ok(Value::Object(chosen))
}

/// Why a reply to `prompts/get` has no messages to judge, if it has none: an error (the
/// sample arguments may not suit the prompt) or, in 2026-07-28, a request for more input.
fn not_judged(reply: &Value) -> Option<String> {
    if reply.get("error").is_some() {
        return Some(describe(reply));
    }
    let result = reply.get("result")?;
    (result.get("resultType") == Some(&json!("input_required")))
        .then(|| "an InputRequiredResult (asks for more input; not followed)".to_owned())
}

async fn get_result(ctx: &Ctx, era: Era) -> Outcome {
    let mut p = step!(ctx.session(era).await, "a session");
    let prompts = step!(listed(&mut p).await, "a prompts/list result");
    let names: Vec<(&str, &Value)> = prompts
        .iter()
        .filter_map(|pr| Some((pr.get("name")?.as_str()?, pr)))
        .take(ctx.config().max_items)
        .collect();
    if names.is_empty() {
        return Outcome::Skip("the server lists no prompts: nothing to get".to_owned());
    }
    let mut problems = Problems::default();
    let (mut judged, mut unjudged) = (Vec::new(), Vec::new());
    for (name, prompt) in names {
        let (_, reply) = step!(
            get_filled(ctx, era, &mut p, name, prompt).await,
            format!("a reply to prompts/get {name}")
        );
        if let Some(why) = not_judged(&reply) {
            unjudged.push(format!("{name}: {why}"));
            continue;
        }
        let Some(result) = reply.get("result") else {
            problems.push(name, format!("neither result nor error: {}", short(&reply)));
            continue;
        };
        judged.push(format!(
            "{name} ({} message(s))",
            messages_shape(result, name, &mut problems)
        ));
    }
    if !problems.is_empty() {
        return Outcome::fail(
            "messages of schema.ts's PromptMessage type with valid content blocks",
            problems.join(),
        );
    }
    if judged.is_empty() {
        return Outcome::Skip(format!(
            "no prompts/get with the required arguments filled (set to {SAMPLE:?}, or to \
             what completion/complete offers) got a result: {}",
            unjudged.join("; ")
        ));
    }
    let mut seen = judged.join(", ");
    if !unjudged.is_empty() {
        seen.push_str(&format!("; not judged: {}", unjudged.join("; ")));
    }
    Outcome::pass(seen)
}

/// Adds every way a GetPromptResult departs from its type; returns how many messages it has.
fn messages_shape(result: &Value, path: &str, problems: &mut Problems) -> usize {
    let Some(obj) = problems.object(result, path) else {
        return 0;
    };
    problems.optional(obj, "description", Kind::Str, path);
    let Some(messages) = obj.get("messages").and_then(Value::as_array) else {
        let got = obj
            .get("messages")
            .map_or_else(|| "missing".to_owned(), short);
        problems.push(
            &format!("{path}.messages"),
            format!("is not an array: {got}"),
        );
        return 0;
    };
    for (i, message) in messages.iter().enumerate() {
        let at = format!("{path}.messages[{i}]");
        let Some(m) = problems.object(message, &at) else {
            continue;
        };
        if !m
            .get("role")
            .and_then(Value::as_str)
            .is_some_and(|r| ROLES.contains(&r))
        {
            problems.push(
                &format!("{at}.role"),
                format!(
                    "is not \"user\" or \"assistant\": {}",
                    m.get("role")
                        .map(short)
                        .unwrap_or_else(|| "missing".to_owned())
                ),
            );
        }
        match m.get("content") {
            Some(block) => check_block(block, &format!("{at}.content"), problems),
            None => problems.push(&format!("{at}.content"), "is required but missing"),
        }
    }
    messages.len()
}

async fn unknown_prompt(ctx: &Ctx, era: Era) -> Outcome {
    let mut p = step!(ctx.session(era).await, "a session");
    let reply = step!(
        get(&mut p, NO_SUCH_PROMPT, json!({})).await,
        "a reply to prompts/get"
    );
    match reply.pointer("/error/code").and_then(Value::as_i64) {
        Some(-32602) => Outcome::pass(format!("{NO_SUCH_PROMPT:?}: -32602")),
        _ => Outcome::fail(
            format!("error -32602 for prompt {NO_SUCH_PROMPT:?}"),
            describe(&reply),
        ),
    }
}

async fn missing_argument(ctx: &Ctx, era: Era) -> Outcome {
    let mut p = step!(ctx.session(era).await, "a session");
    let prompts = step!(listed(&mut p).await, "a prompts/list result");
    let Some((name, prompt, argument)) = prompts.iter().find_map(|pr| {
        let name = pr.get("name")?.as_str()?;
        Some((name, pr, *required_arguments(pr).first()?))
    }) else {
        return Outcome::Skip("no listed prompt has a required argument".to_owned());
    };
    let (mut arguments, control) = step!(
        get_filled(ctx, era, &mut p, name, prompt).await,
        format!("a reply to prompts/get {name}")
    );
    if let Some(why) =
        not_judged(&control).or_else(|| control.get("result").is_none().then(|| describe(&control)))
    {
        return Outcome::Skip(format!(
            "prompts/get {name} with its required arguments filled ({}) got {why}: an error \
             without {argument:?} would prove nothing",
            short(&arguments)
        ));
    }
    if let Some(args) = arguments.as_object_mut() {
        args.remove(argument);
    }
    let reply = step!(
        get(&mut p, name, arguments).await,
        format!("a reply to prompts/get {name}")
    );
    match reply.pointer("/error/code").and_then(Value::as_i64) {
        Some(-32602) => Outcome::pass(format!("{name} without {argument:?}: -32602")),
        _ => Outcome::fail(
            format!("error -32602 for prompt {name:?} without its required argument {argument:?}"),
            describe(&reply),
        ),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn prompt_shapes() {
        let mut p = Problems::default();
        prompt_shape(
            &json!({"name": "a", "arguments": [{"name": "x", "required": true}, {"description": "d"},
                {"name": "y", "required": "yes"}]}),
            "prompts[0]",
            &mut p,
        );
        assert_eq!(
            p.join(),
            "prompts[0].arguments[1].name: is required but missing\n\
             prompts[0].arguments[2].required: is not a boolean: \"yes\""
        );
    }

    #[test]
    fn required_arguments_are_filled() {
        let prompt = json!({"name": "p", "arguments": [{"name": "a", "required": true},
            {"name": "b"}, {"name": "c", "required": true}]});
        assert_eq!(required_arguments(&prompt), ["a", "c"]);
        assert_eq!(arguments_for(&prompt), json!({"a": SAMPLE, "c": SAMPLE}));
    }

    #[test]
    fn messages_are_judged_by_role_and_content() {
        let mut p = Problems::default();
        let result = json!({"messages": [
            {"role": "user", "content": {"type": "text", "text": "hi"}},
            {"role": "system", "content": {"type": "image", "data": "AAAA", "mimeType": "image/png"}},
            {"role": "assistant"}]});
        assert_eq!(messages_shape(&result, "p", &mut p), 3);
        assert_eq!(
            p.join(),
            "p.messages[1].role: is not \"user\" or \"assistant\": \"system\"\n\
             p.messages[2].content: is required but missing"
        );
        assert!(not_judged(&json!({"result": {"resultType": "input_required"}})).is_some());
        assert!(not_judged(&json!({"error": {"code": -32602, "message": "m"}})).is_some());
        assert!(not_judged(&json!({"result": {"messages": []}})).is_none());
    }
}
