//! What the read-only tool calls returned ([`super::calls`]): the result's shape, its
//! structured content against the `outputSchema`, the serialized JSON beside it, and tool
//! failures that came as JSON-RPC errors instead of results with `isError`.

use serde_json::Value;

use super::calls::{not_judged, observed, replies, unjudged};
use super::schema::Compiled;
use crate::check::Outcome;
use crate::ctx::Ctx;
use crate::ctx::{ToolCall, ToolCalls};
use crate::era::Era;
use crate::pattern::short;

/// The JSON-RPC errors a call may get for what the request itself was (the page's protocol
/// errors: unknown tool, malformed request), and -32042 (a URL elicitation is required).
const PROTOCOL_ERRORS: [i64; 5] = [-32700, -32600, -32601, -32602, -32042];

/// The results (not JSON-RPC errors, not 2026-07-28 interim `input_required` results) of the
/// calls, or the Skip saying why there is none.
fn results(calls: &ToolCalls) -> Result<Vec<(&ToolCall, &Value)>, Outcome> {
    let got: Vec<(&ToolCall, &Value)> = replies(calls)?
        .into_iter()
        .filter_map(|(call, reply)| Some((call, reply.get("result")?)))
        .filter(|(_, r)| r.get("resultType").and_then(Value::as_str) != Some("input_required"))
        .collect();
    if got.is_empty() {
        return Err(Outcome::Skip(not_judged(calls)));
    }
    Ok(got)
}

pub(super) async fn call_result_shape(ctx: &Ctx, era: Era) -> Outcome {
    let calls = observed(ctx, era).await;
    let got = match results(&calls) {
        Ok(got) => got,
        Err(outcome) => return outcome,
    };
    let mut problems = Vec::new();
    let mut seen = Vec::new();
    for (call, result) in &got {
        let name = &call.name;
        let Some(content) = result.get("content").and_then(Value::as_array) else {
            problems.push(format!(
                "{name}: result.content is not an array: {}",
                short(result)
            ));
            continue;
        };
        let untyped: Vec<String> = content
            .iter()
            .filter(|b| !b.get("type").is_some_and(Value::is_string))
            .map(short)
            .collect();
        if !untyped.is_empty() {
            problems.push(format!(
                "{name}: content blocks without a string \"type\": {}",
                untyped.join(", ")
            ));
        }
        if let Some(flag) = result.get("isError").filter(|f| !f.is_boolean()) {
            problems.push(format!("{name}: isError is {}, not a boolean", short(flag)));
        }
        seen.push(format!("{name}: {} block(s)", content.len()));
    }
    if problems.is_empty() {
        Outcome::pass(seen.join("; "))
    } else {
        Outcome::fail(
            "a content array of typed blocks, and a boolean isError if any",
            problems.join("\n"),
        )
    }
}

pub(super) async fn structured_content(ctx: &Ctx, era: Era) -> Outcome {
    let calls = observed(ctx, era).await;
    let got = match results(&calls) {
        Ok(got) => got,
        Err(outcome) => return outcome,
    };
    let with_schema: Vec<_> = got
        .iter()
        .filter(|(call, _)| call.tool.get("outputSchema").is_some())
        .collect();
    if with_schema.is_empty() {
        let declared = calls
            .calls
            .iter()
            .filter(|c| c.tool.get("outputSchema").is_some());
        let why: Vec<String> = declared
            .map(|c| format!("{}: {}", c.name, unjudged(c)))
            .collect();
        return Outcome::Skip(if why.is_empty() {
            "no read-only tool declares an outputSchema".to_owned()
        } else {
            format!(
                "no result of a tool with an outputSchema: {}",
                why.join("; ")
            )
        });
    }
    let (mut passed, mut problems, mut notes) = (Vec::new(), Vec::new(), Vec::new());
    for (call, result) in with_schema {
        let name = &call.name;
        if result.get("isError") == Some(&Value::Bool(true)) {
            notes.push(format!(
                "{name} returned isError: nothing structured to check"
            ));
            continue;
        }
        let Some(structured) = result.get("structuredContent") else {
            problems.push(format!("{name}: no structuredContent in {}", short(result)));
            continue;
        };
        let schema = &call.tool["outputSchema"];
        match Compiled::new(schema, false) {
            Err(why) => notes.push(format!("{name}: not judged: {why}")),
            Ok(validator) => match validator.check(structured) {
                Ok(()) => passed.push(name.clone()),
                Err(why) => problems.push(format!(
                    "{name}: structuredContent {} does not conform to its outputSchema: {why}",
                    short(structured)
                )),
            },
        }
    }
    if !problems.is_empty() {
        return Outcome::fail(
            "structuredContent conforming to the outputSchema",
            problems.join("\n"),
        );
    }
    if passed.is_empty() {
        return Outcome::Skip(notes.join("; "));
    }
    Outcome::pass(format!("conforms: {}", passed.join(", ")))
}

/// A TextContent block holding `structured` serialized: text that parses to the same JSON.
fn has_serialized(result: &Value, structured: &Value) -> bool {
    let blocks = result.get("content").and_then(Value::as_array);
    blocks.into_iter().flatten().any(|b| {
        b.get("type").and_then(Value::as_str) == Some("text")
            && b.get("text")
                .and_then(Value::as_str)
                .and_then(|t| serde_json::from_str::<Value>(t).ok())
                .is_some_and(|v| &v == structured)
    })
}

pub(super) async fn structured_text(ctx: &Ctx, era: Era) -> Outcome {
    let calls = observed(ctx, era).await;
    let got = match results(&calls) {
        Ok(got) => got,
        Err(outcome) => return outcome,
    };
    let structured: Vec<_> = got
        .iter()
        .filter_map(|(call, r)| Some((call, *r, r.get("structuredContent")?)))
        .collect();
    if structured.is_empty() {
        return Outcome::Skip(format!(
            "no call returned structuredContent ({} result(s))",
            got.len()
        ));
    }
    let missing: Vec<String> = structured
        .iter()
        .filter(|(_, result, s)| !has_serialized(result, s))
        .map(|(call, result, _)| {
            format!(
                "{}: content is {}",
                call.name,
                short(result.get("content").unwrap_or(&Value::Null))
            )
        })
        .collect();
    if missing.is_empty() {
        Outcome::pass(format!(
            "{} result(s) with structuredContent",
            structured.len()
        ))
    } else {
        Outcome::fail(
            "a TextContent block whose text is the structuredContent serialized as JSON",
            missing.join("\n"),
        )
    }
}

pub(super) async fn errors_in_result(ctx: &Ctx, era: Era) -> Outcome {
    let calls = observed(ctx, era).await;
    let got = match replies(&calls) {
        Ok(got) => got,
        Err(outcome) => return outcome,
    };
    let code = |r: &Value| r.pointer("/error/code").and_then(Value::as_i64);
    let as_errors: Vec<String> = got
        .iter()
        .filter(|(_, reply)| reply.get("error").is_some())
        .filter(|(_, reply)| !code(reply).is_some_and(|c| PROTOCOL_ERRORS.contains(&c)))
        .map(|(call, reply)| format!("{}: {}", call.name, short(&reply["error"])))
        .collect();
    if !as_errors.is_empty() {
        return Outcome::fail(
            "tool failures as results with isError: true (JSON-RPC errors only for protocol \
             errors: -32602, -32601, ...)",
            as_errors.join("\n"),
        );
    }
    let said: Vec<String> = got
        .iter()
        .map(
            |(call, reply)| match (reply.get("error"), reply.get("result")) {
                (Some(_), _) => {
                    format!("{}: protocol error {}", call.name, code(reply).unwrap_or(0))
                }
                (_, Some(r)) if r.get("isError") == Some(&Value::Bool(true)) => {
                    format!("{}: result with isError", call.name)
                }
                _ => format!("{}: result", call.name),
            },
        )
        .collect();
    Outcome::pass(said.join("; "))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn serialized_json_is_recognized_by_value() {
        let s = json!({"a": 1, "b": [true]});
        let with = json!({"content": [{"type": "text", "text": "{\"b\": [true], \"a\": 1}"}]});
        assert!(has_serialized(&with, &s));
        let plain = json!({"content": [{"type": "text", "text": "a is 1"}]});
        assert!(!has_serialized(&plain, &s));
    }
}
