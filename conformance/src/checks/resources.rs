//! Resources (`server/resources.mdx` of each era, `schema.ts` Resource, ResourceTemplate,
//! ReadResourceResult): lists and their pages, reads of listed resources, an unknown URI,
//! templates as RFC 6570 templates, and (legacy) subscriptions. Each check is written once
//! and declared per era, with the words of that era's page.

use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::Engine as _;
use futures::FutureExt;
use iri_string::spec::UriSpec;
use iri_string::template::simple_context::SimpleContext;
use iri_string::template::UriTemplateStr;
use iri_string::types::UriStr;
use serde_json::{json, Value};

use super::pages::{self, Listed};
use super::twins::About;
use super::{step, StepError};
use crate::capability::Capability;
use crate::catalog::Check;
use crate::check::{Level, Outcome};
use crate::ctx::Ctx;
use crate::era::Era;
use crate::ids;
use crate::pattern::{describe, short, Mismatch};
use crate::probe::{Got, Probe};

/// A URI no server serves: the unknown-resource checks read it.
const UNKNOWN_URI: &str = "mcp-conformance://no-such-resource/never-listed";

pub fn checks() -> Vec<Check> {
    let (legacy, modern) = (Era::Legacy, Era::Modern);
    let r = Capability::Resources;
    vec![
        LIST.declare(ids::RESOURCES_LIST_SHAPE, legacy, r, |ctx| {
            list_shape(ctx, Era::Legacy).boxed()
        }),
        TEMPLATES.declare(ids::RESOURCES_TEMPLATES_LIST_SHAPE, legacy, r, |ctx| {
            templates_shape(ctx, Era::Legacy).boxed()
        }),
        CURSOR.declare(ids::RESOURCES_INVALID_CURSOR, legacy, r, |ctx| {
            invalid_cursor(ctx, Era::Legacy).boxed()
        }),
        URIS.declare(ids::RESOURCES_URIS_RFC3986, legacy, r, |ctx| {
            uris_rfc3986(ctx, Era::Legacy).boxed()
        }),
        READ.declare(ids::RESOURCES_READ_SHAPE, legacy, r, |ctx| {
            read_shape(ctx, Era::Legacy).boxed()
        }),
        UNKNOWN_LEGACY.declare(ids::RESOURCES_UNKNOWN_URI, legacy, r, |ctx| {
            unknown_uri(ctx, Era::Legacy).boxed()
        }),
        RFC6570.declare(ids::RESOURCES_TEMPLATES_RFC6570, legacy, r, |ctx| {
            templates_rfc6570(ctx, Era::Legacy).boxed()
        }),
        SUBSCRIBE.declare(
            ids::RESOURCES_SUBSCRIBE,
            legacy,
            Capability::ResourceSubscribe,
            |ctx| subscribe(ctx).boxed(),
        ),
        LIST.declare(ids::MODERN_RESOURCES_LIST_SHAPE, modern, r, |ctx| {
            list_shape(ctx, Era::Modern).boxed()
        }),
        TEMPLATES.declare(
            ids::MODERN_RESOURCES_TEMPLATES_LIST_SHAPE,
            modern,
            r,
            |ctx| templates_shape(ctx, Era::Modern).boxed(),
        ),
        CURSOR.declare(ids::MODERN_RESOURCES_INVALID_CURSOR, modern, r, |ctx| {
            invalid_cursor(ctx, Era::Modern).boxed()
        }),
        URIS.declare(ids::MODERN_RESOURCES_URIS_RFC3986, modern, r, |ctx| {
            uris_rfc3986(ctx, Era::Modern).boxed()
        }),
        READ.declare(ids::MODERN_RESOURCES_READ_SHAPE, modern, r, |ctx| {
            read_shape(ctx, Era::Modern).boxed()
        }),
        UNKNOWN_MODERN.declare(ids::MODERN_RESOURCES_UNKNOWN_URI, modern, r, |ctx| {
            unknown_uri(ctx, Era::Modern).boxed()
        }),
        RFC6570.declare(ids::MODERN_RESOURCES_TEMPLATES_RFC6570, modern, r, |ctx| {
            templates_rfc6570(ctx, Era::Modern).boxed()
        }),
        // A subscription's stream stays open: a process of its own, not the shared session.
        Check::code(
            ids::MODERN_RESOURCES_SUBSCRIPTIONS_LISTEN,
            Level::Must,
            "with resources.subscribe declared, subscriptions/listen for a listed resource is acknowledged first: notifications/subscriptions/acknowledged carrying the request's id as subscriptionId, before any other message of the subscription",
            "2026-07-28 basic/patterns/subscriptions.mdx, Acknowledgment; server/resources.mdx, Subscriptions",
            |ctx| listen(ctx).boxed(),
        )
        .quote("The server MUST send notifications/subscriptions/acknowledged as the first message carrying the subscription's ID in _meta under io.modelcontextprotocol/subscriptionId, and MUST NOT send any notification on the subscription before it.")
        .because("an error reply instead (no subscription opened) is reported (INFO): no sentence requires the server to accept it")
        .modern()
        .needs(Capability::ResourceSubscribe, modern),
    ]
}

const PAGE: &str = "server/resources.mdx";

const LIST: About = About {
    level: Level::Must,
    what: "resources/list returns resources with string uri and name (title, description, mimeType strings and size a number where present); every page followed (a cursor that repeats is reported, not followed again)",
    page: PAGE,
    section: "Listing Resources; schema.ts ListResourcesResult, Resource",
    quote: "schema.ts: ListResourcesResult { resources: Resource[] }; Resource { uri: string; name: string; title?: string; description?: string; mimeType?: string; size?: number }",
    because: "required and typed fields of the schema; no sentence requires pages to end, so a loop is reported (INFO)",
};

const TEMPLATES: About = About {
    level: Level::Must,
    what: "resources/templates/list returns templates with string uriTemplate and name (title, description, mimeType strings where present); every page followed",
    page: PAGE,
    section: "Resource Templates; schema.ts ListResourceTemplatesResult, ResourceTemplate",
    quote: "schema.ts: ListResourceTemplatesResult { resourceTemplates: ResourceTemplate[] }; ResourceTemplate { uriTemplate: string; name: string; title?: string; description?: string; mimeType?: string }",
    because: "required and typed fields of the schema; an error reply is reported (INFO): no sentence requires templates",
};

const CURSOR: About = About {
    level: Level::Should,
    what: "resources/list with a cursor the server never issued gets -32602",
    page: "server/utilities/pagination.mdx",
    section: "Error Handling",
    quote: "Invalid cursors SHOULD result in an error with code -32602 (Invalid params).",
    because: "",
};

const URIS: About = About {
    level: Level::Must,
    what: "every listed resource's uri is a URI of RFC 3986: a scheme, then only the characters and percent-encodings it allows",
    page: PAGE,
    section: "Common URI Schemes, Custom URI Schemes; schema.ts Resource",
    quote: "Custom URI schemes MUST be in accordance with RFC3986 / schema.ts Resource.uri: The URI of this resource. @format uri",
    because: "",
};

const READ: About = About {
    level: Level::Must,
    what: "resources/read of listed resources, and of URIs made from listed templates (variables set to the first completion offered, or a sample), at most --max-items of each, returns contents with a string uri, a string text or a base64 blob, and a string mimeType where present",
    page: PAGE,
    section: "Reading Resources, Security Considerations; schema.ts ReadResourceResult",
    quote: "schema.ts: ReadResourceResult { contents: (TextResourceContents | BlobResourceContents)[] }; ResourceContents { uri: string; mimeType?: string }; TextResourceContents { text: string }; BlobResourceContents { blob: string (@format byte: base64) } / Binary data MUST be properly encoded",
    because: "required and typed fields of the schema; a read answered with an error is reported, not judged: the page lets a read fail (-32603 for internal errors), and a sample value may name nothing",
};

const UNKNOWN_LEGACY: About = About {
    level: Level::Should,
    what: "resources/read of a URI the server never listed gets the error -32002 (resource not found)",
    page: PAGE,
    section: "Error Handling",
    quote: "Servers SHOULD return standard JSON-RPC errors for common failure cases: Resource not found: -32002",
    because: "",
};

const UNKNOWN_MODERN: About = About {
    level: Level::Must,
    what: "resources/read of a URI the server never listed gets the error -32602, not a result (an empty contents array least of all)",
    page: PAGE,
    section: "Error Handling",
    quote: "If the requested resource does not exist, servers MUST return a JSON-RPC error with code -32602 (Invalid Params). / Servers MUST NOT return an empty contents array for a non-existent resource.",
    because: "-32002 is what earlier versions used: clients SHOULD accept it, but the 2026-07-28 server MUST send -32602",
};

const RFC6570: About = About {
    level: Level::Must,
    what: "every listed resource template's uriTemplate is an RFC 6570 URI template",
    page: PAGE,
    section: "Resource Templates; schema.ts ResourceTemplate",
    quote: "schema.ts ResourceTemplate.uriTemplate: A URI template (according to RFC 6570) that can be used to construct resource URIs. @format uri-template",
    because: "the schema types the field as an RFC 6570 template: a string that does not parse as one is not of the type",
};

const SUBSCRIBE: About = About {
    level: Level::Must,
    what: "with resources.subscribe: true declared, resources/subscribe and resources/unsubscribe of a listed resource get results (EmptyResult)",
    page: PAGE,
    section: "Subscriptions; schema.ts SubscribeRequest, UnsubscribeRequest",
    quote: "schema.ts ServerCapabilities.resources.subscribe: Whether this server supports subscribing to resource updates. / export type EmptyResult = Result; (the result of resources/subscribe and resources/unsubscribe)",
    because: "the result's type is the schema's; an error reply is reported (INFO), as no sentence requires the request to succeed",
};

// ---------------------------------------------------------------------------------------------
// Lists
// ---------------------------------------------------------------------------------------------

/// The items of every page of `method` as far as they could be followed: a loop is the list
/// checks' finding, so other checks use what was listed before it.
pub(crate) async fn items(p: &mut Probe, method: &str, key: &str) -> Result<Vec<Value>, StepError> {
    Ok(pages::list(p, method, key).await?.items)
}

/// What `resources/templates/list` gave: a server with resources need not serve templates.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Templates {
    /// Its pages.
    Listed(Listed),
    /// Its first page got an error reply (described).
    Refused(String),
}

/// Lists the resource templates, every page.
pub(crate) async fn templates(p: &mut Probe) -> Result<Templates, StepError> {
    let first = p.request("resources/templates/list", None).await?;
    if first.get("error").is_some() {
        return Ok(Templates::Refused(format!(
            "resources/templates/list got {}",
            describe(&first)
        )));
    }
    let listed = pages::list(p, "resources/templates/list", "resourceTemplates").await?;
    Ok(Templates::Listed(listed))
}

/// What is wrong with an item: `required` fields that are not strings, `strings` that are
/// present and not strings, `numbers` present and not numbers.
fn field_problems(
    item: &Value,
    required: &[&str],
    strings: &[&str],
    numbers: &[&str],
) -> Vec<String> {
    let label = required
        .iter()
        .find_map(|key| item.get(*key).and_then(Value::as_str))
        .map_or_else(|| short(item), str::to_owned);
    if !item.is_object() {
        return vec![format!("an item that is not an object: {}", short(item))];
    }
    let mut problems = Vec::new();
    for key in required {
        if !item.get(*key).is_some_and(Value::is_string) {
            problems.push(format!("{label}: {key} is not a string (required)"));
        }
    }
    for key in strings {
        if item.get(*key).is_some_and(|v| !v.is_string()) {
            problems.push(format!(
                "{label}: {key} is not a string: {}",
                short(&item[*key])
            ));
        }
    }
    for key in numbers {
        if item.get(*key).is_some_and(|v| !v.is_number()) {
            problems.push(format!(
                "{label}: {key} is not a number: {}",
                short(&item[*key])
            ));
        }
    }
    problems
}

fn resource_problems(resource: &Value) -> Vec<String> {
    field_problems(
        resource,
        &["uri", "name"],
        &["title", "description", "mimeType"],
        &["size"],
    )
}

fn template_problems(template: &Value) -> Vec<String> {
    field_problems(
        template,
        &["uriTemplate", "name"],
        &["title", "description", "mimeType"],
        &[],
    )
}

/// The list's verdict: its items' problems and where following its pages stopped.
fn judge_list(listed: &Listed, noun: &str, problems: impl Fn(&Value) -> Vec<String>) -> Outcome {
    let found: Vec<String> = listed.items.iter().flat_map(problems).collect();
    listed.verdict(noun, &format!("well-formed {noun}s"), found)
}

async fn list_shape(ctx: &Ctx, era: Era) -> Outcome {
    let mut p = step!(ctx.session(era).await, "a session");
    let listed = step!(
        pages::list(&mut p, "resources/list", "resources").await,
        "a resources/list result"
    );
    judge_list(&listed, "resource", resource_problems)
}

async fn templates_shape(ctx: &Ctx, era: Era) -> Outcome {
    let mut p = step!(ctx.session(era).await, "a session");
    match step!(templates(&mut p).await, "a resources/templates/list result") {
        Templates::Listed(listed) => judge_list(&listed, "template", template_problems),
        Templates::Refused(why) => Outcome::Observed(format!("{why}: no templates to judge")),
    }
}

async fn invalid_cursor(ctx: &Ctx, era: Era) -> Outcome {
    super::pages::invalid_cursor(ctx, era, "resources/list").await
}

/// Why `uri` is not a URI of RFC 3986 (absolute, with a scheme), if it is not one.
fn uri_problem(uri: &str) -> Option<String> {
    UriStr::new(uri).err().map(|e| format!("{uri:?}: {e}"))
}

async fn uris_rfc3986(ctx: &Ctx, era: Era) -> Outcome {
    let mut p = step!(ctx.session(era).await, "a session");
    let resources = match items(&mut p, "resources/list", "resources").await {
        Ok(resources) => resources,
        Err(StepError::Answer(why)) => return Outcome::Skip(format!("no URI to judge: {why}")),
        Err(e) => return Outcome::fail("a resources/list result", e),
    };
    let uris: Vec<&str> = resources
        .iter()
        .filter_map(|r| r.get("uri").and_then(Value::as_str))
        .collect();
    if uris.is_empty() {
        return Outcome::Skip("resources/list lists no resource with a string uri".into());
    }
    let bad: Vec<String> = uris.iter().filter_map(|u| uri_problem(u)).collect();
    if bad.is_empty() {
        Outcome::pass(format!("{} URI(s)", uris.len()))
    } else {
        Outcome::fail("URIs of RFC 3986", bad.join("\n"))
    }
}

// ---------------------------------------------------------------------------------------------
// Reads
// ---------------------------------------------------------------------------------------------

/// Standard base64 (RFC 4648 §4) with its padding; bits after the last byte are not judged
/// (RFC 4648 §3.5 lets a decoder accept them).
const BASE64: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_allow_trailing_bits(true),
);

/// What is wrong with one item of `contents`.
fn content_problems(read: &str, content: &Value) -> Vec<String> {
    if !content.is_object() {
        return vec![format!(
            "{read}: a contents item that is not an object: {}",
            short(content)
        )];
    }
    let mut problems: Vec<String> =
        field_problems(content, &["uri"], &["mimeType", "text", "blob"], &[])
            .into_iter()
            .map(|p| format!("{read}: {p}"))
            .collect();
    match (content.get("text"), content.get("blob")) {
        (None, None) => problems.push(format!(
            "{read}: a contents item with neither text nor blob: {}",
            short(content)
        )),
        (_, Some(Value::String(blob))) => {
            if let Err(e) = BASE64.decode(blob) {
                problems.push(format!(
                    "{read}: blob is not standard base64 ({e}): {}",
                    short(&Value::String(blob.clone()))
                ));
            }
        }
        _ => {}
    }
    problems
}

/// What is wrong with a `resources/read` result for `uri`.
fn read_problems(uri: &str, result: &Value) -> Vec<String> {
    match result.get("contents").and_then(Value::as_array) {
        Some(contents) => contents
            .iter()
            .flat_map(|c| content_problems(uri, c))
            .collect(),
        None => vec![format!(
            "{uri}: result.contents is not an array: {}",
            short(result)
        )],
    }
}

/// A 2026-07-28 result that asks for input first (multi round-trip requests): no contents yet.
fn input_required(result: &Value) -> bool {
    result
        .get("resultType")
        .and_then(Value::as_str)
        .is_some_and(|t| t != "complete")
}

/// The URIs of the first `max` listed resources.
fn uris(resources: &[Value], max: usize) -> Vec<String> {
    resources
        .iter()
        .filter_map(|r| r.get("uri").and_then(Value::as_str))
        .take(max)
        .map(str::to_owned)
        .collect()
}

/// What a template variable is set to when no completion offers a value.
const SAMPLE_VALUE: &str = "mcp-conformance";

/// A value for `variable` of `template`: the first completion the server offers (if it
/// declares completions in `era`), else [`SAMPLE_VALUE`].
async fn variable_value(
    ctx: &Ctx,
    p: &mut Probe,
    era: Era,
    template: &str,
    variable: &str,
) -> Result<String, StepError> {
    if ctx.era().declares(Capability::Completions, era) {
        let params = json!({
            "ref": {"type": "ref/resource", "uri": template},
            "argument": {"name": variable, "value": ""},
        });
        let reply = p.request("completion/complete", Some(params)).await?;
        if let Some(value) = reply
            .pointer("/result/completion/values/0")
            .and_then(Value::as_str)
        {
            return Ok(value.to_owned());
        }
    }
    Ok(SAMPLE_VALUE.to_owned())
}

/// `template` (RFC 6570) expanded with `values` for its variables.
fn expand(template: &str, values: &[(String, String)]) -> Result<String, Mismatch> {
    let parsed = UriTemplateStr::new(template).map_err(|e| Mismatch(e.to_string()))?;
    let mut context = SimpleContext::new();
    for (name, value) in values {
        context.insert(name.as_str(), value.as_str());
    }
    let expanded = parsed
        .expand::<UriSpec, _>(&context)
        .map_err(|e| Mismatch(e.to_string()))?;
    Ok(expanded.to_string())
}

/// URIs made from the first `max` listed templates that parse, each variable set by
/// [`variable_value`]: what a server with templates (and perhaps no listed resource) serves.
async fn expanded_uris(
    ctx: &Ctx,
    p: &mut Probe,
    era: Era,
    max: usize,
) -> Result<Vec<String>, StepError> {
    let Templates::Listed(listed) = templates(p).await? else {
        return Ok(Vec::new());
    };
    let mut uris = Vec::new();
    for template in listed
        .items
        .iter()
        .filter_map(|t| t.get("uriTemplate")?.as_str())
    {
        if uris.len() >= max {
            break;
        }
        let Ok(variables) = template_variables(template) else {
            continue; // resources.templates-rfc6570's finding
        };
        let mut values = Vec::new();
        for variable in variables {
            let value = variable_value(ctx, p, era, template, &variable).await?;
            values.push((variable, value));
        }
        if let Ok(uri) = expand(template, &values) {
            uris.push(uri);
        }
    }
    Ok(uris)
}

/// What reading `uris` found: problems, reads not judged (and why), how many were judged.
#[derive(Debug, Default)]
struct Reads {
    problems: Vec<String>,
    unjudged: Vec<String>,
    judged: usize,
}

async fn read_each(p: &mut Probe, uris: &[String], reads: &mut Reads) -> Result<(), StepError> {
    for uri in uris {
        let reply = p
            .request("resources/read", Some(json!({"uri": uri})))
            .await?;
        match reply.get("result") {
            Some(result) if input_required(result) => reads
                .unjudged
                .push(format!("{uri}: asks for input first ({})", short(result))),
            Some(result) => {
                reads.judged += 1;
                reads.problems.extend(read_problems(uri, result));
            }
            None => reads.unjudged.push(format!("{uri}: {}", describe(&reply))),
        }
    }
    Ok(())
}

async fn read_shape(ctx: &Ctx, era: Era) -> Outcome {
    let mut p = step!(ctx.session(era).await, "a session");
    let max = ctx.config().max_items;
    let mut reads = Reads::default();
    let listed = match items(&mut p, "resources/list", "resources").await {
        Ok(resources) => uris(&resources, max),
        Err(StepError::Answer(why)) => {
            reads.unjudged.push(why); // resources.list-shape's finding
            Vec::new()
        }
        Err(e) => return Outcome::fail("a resources/list result", e),
    };
    let expanded = step!(
        expanded_uris(ctx, &mut p, era, max).await,
        "resources/templates/list and completion/complete replies"
    );
    if listed.is_empty() && expanded.is_empty() {
        return Outcome::Skip(
            "nothing to read: no listed resource has a string uri, and no listed template expands"
                .into(),
        );
    }
    step!(
        read_each(&mut p, &listed, &mut reads).await,
        "resources/read replies"
    );
    step!(
        read_each(&mut p, &expanded, &mut reads).await,
        "resources/read replies"
    );
    if !reads.problems.is_empty() {
        return Outcome::fail("well-formed contents", reads.problems.join("\n"));
    }
    if reads.judged == 0 {
        return Outcome::Observed(format!(
            "no read returned contents to judge:\n{}",
            reads.unjudged.join("\n")
        ));
    }
    let mut text = format!(
        "{} read(s) of {} listed resource(s) and {} URI(s) from templates, contents well formed",
        reads.judged,
        listed.len(),
        expanded.len()
    );
    if !reads.unjudged.is_empty() {
        text.push_str(&format!("; not judged:\n{}", reads.unjudged.join("\n")));
    }
    Outcome::pass(text)
}

async fn unknown_uri(ctx: &Ctx, era: Era) -> Outcome {
    let mut p = step!(ctx.session(era).await, "a session");
    let reply = step!(
        p.request("resources/read", Some(json!({"uri": UNKNOWN_URI})))
            .await,
        "a reply"
    );
    judge_unknown(era, &reply)
}

/// The verdict on the reply to a read of a URI that does not exist.
fn judge_unknown(era: Era, reply: &Value) -> Outcome {
    let code = reply.pointer("/error/code").and_then(Value::as_i64);
    let empty = reply
        .pointer("/result/contents")
        .and_then(Value::as_array)
        .is_some_and(Vec::is_empty);
    match (era, code) {
        (Era::Legacy, Some(-32002)) | (Era::Modern, Some(-32602)) => {
            Outcome::pass(describe(reply))
        }
        (Era::Legacy, _) => Outcome::fail("error -32002 (resource not found)", describe(reply)),
        (Era::Modern, Some(-32002)) => Outcome::fail(
            "error -32602",
            "error -32002, the code of earlier versions (clients accept it for backwards compatibility; a 2026-07-28 server MUST send -32602)",
        ),
        (Era::Modern, _) if empty => Outcome::fail(
            "error -32602, never an empty contents array for a non-existent resource",
            describe(reply),
        ),
        (Era::Modern, _) => Outcome::fail("error -32602", describe(reply)),
    }
}

// ---------------------------------------------------------------------------------------------
// Templates
// ---------------------------------------------------------------------------------------------

/// The template's variables in order, or why it is not an RFC 6570 template.
pub(crate) fn template_variables(template: &str) -> Result<Vec<String>, Mismatch> {
    let parsed = UriTemplateStr::new(template).map_err(|e| Mismatch(e.to_string()))?;
    Ok(parsed.variables().map(|v| v.as_str().to_owned()).collect())
}

async fn templates_rfc6570(ctx: &Ctx, era: Era) -> Outcome {
    let mut p = step!(ctx.session(era).await, "a session");
    let listed = match step!(templates(&mut p).await, "a resources/templates/list reply") {
        Templates::Listed(listed) => listed,
        Templates::Refused(why) => return Outcome::Skip(format!("{why}: no templates to judge")),
    };
    let texts: Vec<&str> = listed
        .items
        .iter()
        .filter_map(|t| t.get("uriTemplate").and_then(Value::as_str))
        .collect();
    if texts.is_empty() {
        return Outcome::Skip("resources/templates/list lists no uriTemplate string".into());
    }
    let bad: Vec<String> = texts
        .iter()
        .filter_map(|t| template_variables(t).err().map(|e| format!("{t:?}: {e}")))
        .collect();
    if bad.is_empty() {
        Outcome::pass(format!("{} template(s) parse as RFC 6570", texts.len()))
    } else {
        Outcome::fail("RFC 6570 URI templates", bad.join("\n"))
    }
}

// ---------------------------------------------------------------------------------------------
// Subscriptions (2025-11-25; 2026-07-28 replaces them with subscriptions/listen)
// ---------------------------------------------------------------------------------------------

async fn subscribe(ctx: &Ctx) -> Outcome {
    let mut p = step!(ctx.ready().await, "a complete handshake");
    let resources = match items(&mut p, "resources/list", "resources").await {
        Ok(resources) => resources,
        Err(StepError::Answer(why)) => {
            return Outcome::Skip(format!("no resource to subscribe to: {why}"))
        }
        Err(e) => return Outcome::fail("a resources/list result", e),
    };
    let Some(uri) = uris(&resources, 1).pop() else {
        return Outcome::Skip("resources/list lists no resource to subscribe to".into());
    };
    let (mut problems, mut errors) = (Vec::new(), Vec::new());
    for method in ["resources/subscribe", "resources/unsubscribe"] {
        let reply = step!(
            p.request(method, Some(json!({"uri": uri}))).await,
            format!("a {method} reply")
        );
        match (reply.get("result"), reply.get("error")) {
            (Some(r), _) if r.is_object() => {}
            (Some(r), _) => {
                problems.push(format!("{method}: result is not an object: {}", short(r)))
            }
            (None, Some(_)) => errors.push(format!("{method}: {}", describe(&reply))),
            (None, None) => problems.push(format!("{method}: {}", short(&reply))),
        }
    }
    if !problems.is_empty() {
        return Outcome::fail(
            "results of type EmptyResult (an object)",
            problems.join("\n"),
        );
    }
    if !errors.is_empty() {
        return Outcome::Observed(format!(
            "resources.subscribe is declared, yet for {uri}:\n{}",
            errors.join("\n")
        ));
    }
    Outcome::pass(format!("subscribed to and unsubscribed from {uri}"))
}

// ---------------------------------------------------------------------------------------------
// Subscriptions (2026-07-28): subscriptions/listen
// ---------------------------------------------------------------------------------------------

const ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";

/// How a message bears on the subscription opened by the request `id`.
#[derive(Debug, Clone, PartialEq)]
enum OnStream {
    /// Its acknowledgment.
    Acknowledged,
    /// The response to the request: it ended (or never opened) the subscription.
    Response,
    /// Another message carrying its subscription id: before the acknowledgment, a violation.
    Early(String),
}

/// How `message` bears on subscription `id`; `None`: not at all (another subscription's
/// message, a log message).
fn on_stream(message: &Value, id: i64) -> Option<OnStream> {
    if message.get("id") == Some(&json!(id)) && message.get("method").is_none() {
        return Some(OnStream::Response);
    }
    let subscription = message
        .pointer("/params/_meta")
        .and_then(|meta| meta.get("io.modelcontextprotocol/subscriptionId"));
    if subscription != Some(&json!(id)) {
        return None;
    }
    Some(match message.get("method") {
        Some(m) if m == ACKNOWLEDGED => OnStream::Acknowledged,
        _ => OnStream::Early(short(message)),
    })
}

/// Opens a subscription to `uri` (request `id`) and reads until its acknowledgment, its
/// response, or the wait's end: what came that bears on it.
async fn open_subscription(
    p: &mut Probe,
    id: i64,
    uri: &str,
) -> Result<(OnStream, Value), StepError> {
    let meta = crate::probe::modern_meta(mcp_protocol::mcp::ProtocolVersion::LATEST.as_str());
    let request = json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": "subscriptions/listen",
        "params": {"_meta": meta, "notifications": {"resourceSubscriptions": [uri]}},
    });
    p.send(&request).await?;
    let deadline = tokio::time::Instant::now() + p.wait();
    loop {
        match p.next_until(deadline).await {
            Got::Json(message) => {
                if let Some(seen) = on_stream(&message, id) {
                    return Ok((seen, message));
                }
            }
            Got::Timeout => {
                let why = format!(
                    "no {ACKNOWLEDGED} for subscription {id} within {:?}",
                    p.wait()
                );
                p.record_timeout(why.clone());
                return Err(StepError::Answer(why));
            }
            Got::Eof => return Err(StepError::Answer("the server closed its output".into())),
            Got::Garbage(_) | Got::Spread(..) | Got::OtherFraming(_) => {}
        }
    }
}

async fn listen(ctx: &Ctx) -> Outcome {
    let mut p = step!(ctx.session(Era::Modern).await, "a session");
    let resources = match items(&mut p, "resources/list", "resources").await {
        Ok(resources) => resources,
        Err(StepError::Answer(why)) => {
            return Outcome::Skip(format!("no resource to subscribe to: {why}"))
        }
        Err(e) => return Outcome::fail("a resources/list result", e),
    };
    let Some(uri) = uris(&resources, 1).pop() else {
        return Outcome::Skip("resources/list lists no resource to subscribe to".into());
    };
    let id = p.id();
    let (seen, message) = step!(
        open_subscription(&mut p, id, &uri).await,
        format!("{ACKNOWLEDGED} for subscriptions/listen {id}")
    );
    let outcome = match seen {
        OnStream::Acknowledged => match message.pointer("/params/notifications") {
            Some(n) if n.is_object() => Outcome::pass(format!(
                "subscription {id} to {uri} acknowledged: {}",
                short(n)
            )),
            _ => Outcome::fail(
                "params.notifications, the filter the server agreed to (schema.ts)",
                short(&message),
            ),
        },
        OnStream::Response if message.get("error").is_some() => Outcome::Observed(format!(
            "resources.subscribe is declared, yet subscriptions/listen for {uri} got {}",
            describe(&message)
        )),
        OnStream::Response => Outcome::fail(
            format!("{ACKNOWLEDGED} first"),
            format!("the response came first: {}", short(&message)),
        ),
        OnStream::Early(before) => Outcome::fail(format!("{ACKNOWLEDGED} first"), before),
    };
    // The client ends a subscription on stdio with notifications/cancelled (over HTTP by
    // closing the stream, which ending the process does).
    let _ = p
        .notify("notifications/cancelled", Some(json!({"requestId": id})))
        .await;
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blobs_must_be_padded_standard_base64() {
        let ok = json!({"contents": [{"uri": "x:a", "blob": "AAEC"}, {"uri": "x:b", "blob": "AA=="}, {"uri": "x:c", "text": ""}]});
        assert_eq!(read_problems("x:a", &ok), Vec::<String>::new());
        for blob in ["AA", "not base64!", "AA-_", "AA==\n"] {
            let bad = json!({"contents": [{"uri": "x:a", "blob": blob}]});
            assert_eq!(read_problems("x:a", &bad).len(), 1, "{blob:?}");
        }
    }

    #[test]
    fn contents_need_a_uri_and_text_or_blob() {
        let result = json!({"contents": [{"text": "t"}, {"uri": "x:a"}, {"uri": "x:a", "text": 1, "mimeType": 2}]});
        let problems = read_problems("x:a", &result);
        assert_eq!(problems.len(), 4, "{problems:?}");
        assert!(read_problems("x:a", &json!({"contents": {}}))[0].contains("not an array"));
    }

    #[test]
    fn unknown_resource_codes_per_era() {
        let error = |code: i64| json!({"error": {"code": code, "message": "m"}});
        let pass = |o: Outcome| matches!(o, Outcome::Pass(_));
        assert!(pass(judge_unknown(Era::Legacy, &error(-32002))));
        assert!(!pass(judge_unknown(Era::Legacy, &error(-32602))));
        assert!(pass(judge_unknown(Era::Modern, &error(-32602))));
        assert!(!pass(judge_unknown(Era::Modern, &error(-32002))));
        let empty = json!({"result": {"contents": []}});
        assert!(!pass(judge_unknown(Era::Legacy, &empty)));
        match judge_unknown(Era::Modern, &empty) {
            Outcome::Fail { expected, .. } => assert!(expected.contains("empty contents")),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn templates_parse_as_rfc_6570() {
        assert_eq!(
            template_variables("file:///{path}{?q,lang}").as_deref(),
            Ok(&["path".to_owned(), "q".to_owned(), "lang".to_owned()][..])
        );
        assert_eq!(template_variables("fixture://plain"), Ok(vec![]));
        assert_eq!(
            expand(
                "file:///{path}{?q}",
                &[("path".into(), "a b".into()), ("q".into(), "é".into())]
            )
            .as_deref(),
            Ok("file:///a%20b?q=%C3%A9")
        );
        for bad in ["fixture://notes/{name", "x://{na me}", "x://{}", "x://}"] {
            assert!(template_variables(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn what_bears_on_a_subscription() {
        let meta = |id: i64| json!({"io.modelcontextprotocol/subscriptionId": id});
        let ack =
            json!({"method": ACKNOWLEDGED, "params": {"_meta": meta(7), "notifications": {}}});
        assert_eq!(on_stream(&ack, 7), Some(OnStream::Acknowledged));
        assert_eq!(on_stream(&ack, 8), None);
        let update = json!({"method": "notifications/resources/updated", "params": {"_meta": meta(7), "uri": "x:a"}});
        assert!(matches!(on_stream(&update, 7), Some(OnStream::Early(_))));
        let log =
            json!({"method": "notifications/message", "params": {"level": "info", "data": 1}});
        assert_eq!(on_stream(&log, 7), None);
        assert_eq!(
            on_stream(&json!({"id": 7, "error": {"code": -32601}}), 7),
            Some(OnStream::Response)
        );
        assert_eq!(
            on_stream(&json!({"id": 7, "method": "roots/list"}), 7),
            None
        );
    }

    #[test]
    fn uris_of_rfc_3986() {
        for ok in [
            "file:///project/src/main.rs",
            "fixture://a.txt",
            "git://h/r#x",
            "urn:isbn:1",
            "x:a%20b",
        ] {
            assert_eq!(uri_problem(ok), None, "{ok:?}");
        }
        for bad in [
            "fixture://a b.txt",
            "docs/readme.md",
            "C:\\notes.txt",
            "x:caf\u{e9}",
            "x:%zz",
            "",
        ] {
            assert!(uri_problem(bad).is_some(), "{bad:?}");
        }
    }

    #[test]
    fn resources_need_string_uri_and_name() {
        assert!(resource_problems(&json!({"uri": "x:a", "name": "a", "size": 3})).is_empty());
        assert_eq!(resource_problems(&json!({"uri": "x:a"})).len(), 1);
        assert_eq!(
            resource_problems(&json!({"uri": "x:a", "name": "a", "mimeType": 1, "size": "3"}))
                .len(),
            2
        );
        assert_eq!(template_problems(&json!({"name": "n"})).len(), 1);
    }
}
