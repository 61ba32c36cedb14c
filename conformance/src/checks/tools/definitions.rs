//! What `tools/list` says of each tool, beyond its name: its schemas are valid JSON Schema of
//! their dialect, and its `title`, `description`, `icons`, `annotations` and `execution` have the
//! shapes schema.ts gives them. Judged from the tools the tool-call observation listed.

use jsonschema::Draft;
use serde_json::Value;

use super::calls::observed;
use super::schema::{judge_schema, SchemaVerdict};
use crate::check::Outcome;
use crate::ctx::Ctx;
use crate::era::Era;
use crate::pattern::short;

/// The tools listed (and the version a legacy handshake negotiated), or the outcome saying
/// why there are none to judge.
async fn listed(ctx: &Ctx, era: Era) -> Result<(Vec<Value>, Option<String>), Outcome> {
    let calls = observed(ctx, era).await;
    match &calls.listed {
        Err(why) => Err(Outcome::fail("a tools/list result", why)),
        Ok(tools) if tools.is_empty() => Err(Outcome::Skip("tools/list lists no tool".to_owned())),
        Ok(tools) => Ok((tools.clone(), calls.negotiated.clone())),
    }
}

/// Before 2025-11-25 the pages name no default dialect (those revisions' own schema.json is
/// draft-07): a legacy server that negotiated one may mean draft-07 by a schema without
/// `$schema`.
fn fallback(negotiated: Option<&str>) -> Option<Draft> {
    negotiated
        .filter(|version| *version < "2025-11-25")
        .map(|_| Draft::Draft7)
}

pub(super) async fn schemas_valid(ctx: &Ctx, era: Era) -> Outcome {
    let (tools, negotiated) = match listed(ctx, era).await {
        Ok(listed) => listed,
        Err(outcome) => return outcome,
    };
    let fallback = fallback(negotiated.as_deref());
    let (mut judged, mut problems, mut notes) = (0, Vec::new(), Vec::new());
    for tool in &tools {
        let name = tool.get("name").and_then(Value::as_str).unwrap_or("?");
        for key in ["inputSchema", "outputSchema"] {
            let Some(schema) = tool.get(key) else {
                continue;
            };
            if !schema.is_object() {
                problems.push(format!(
                    "{name}: {key} is not a JSON Schema object: {}",
                    short(schema)
                ));
                continue;
            }
            match judge_schema(schema, fallback) {
                SchemaVerdict::Valid(_) => judged += 1,
                SchemaVerdict::Invalid(dialect, why) => {
                    judged += 1;
                    problems.push(format!("{name}: {key} is not valid {dialect} JSON Schema: {why}"));
                }
                SchemaVerdict::Unsupported(uri) => notes.push(format!(
                    "{name}: {key} declares $schema {uri}, a dialect the harness does not know (not judged)"
                )),
            }
        }
    }
    if !problems.is_empty() {
        return Outcome::fail(
            "schemas valid for their declared dialect, or 2020-12 without $schema",
            problems.join("\n"),
        );
    }
    if judged == 0 {
        return Outcome::Skip(format!("no schema could be judged: {}", notes.join("; ")));
    }
    let mut said = format!("{judged} schema(s) of {} tool(s) valid", tools.len());
    for note in notes {
        said.push_str("; ");
        said.push_str(&note);
    }
    Outcome::pass(said)
}

pub(super) async fn definition_shape(ctx: &Ctx, era: Era) -> Outcome {
    let tools = match listed(ctx, era).await {
        Ok((tools, _)) => tools,
        Err(outcome) => return outcome,
    };
    let problems: Vec<String> = tools.iter().flat_map(shape_problems).collect();
    if problems.is_empty() {
        Outcome::pass(format!("{} tool(s)", tools.len()))
    } else {
        Outcome::fail(SHAPES, problems.join("\n"))
    }
}

/// What schema.ts gives a tool's display fields, in short.
const SHAPES: &str = "title, description strings; icons [{src: string, mimeType?: string, sizes?: string[], theme?: \"light\"|\"dark\"}]; annotations {title?: string, *Hint?: boolean}";

const HINTS: [&str; 4] = [
    "readOnlyHint",
    "destructiveHint",
    "idempotentHint",
    "openWorldHint",
];

/// What in one tool's definition does not have the type schema.ts gives it.
pub(crate) fn shape_problems(tool: &Value) -> Vec<String> {
    let name = tool.get("name").and_then(Value::as_str).unwrap_or("?");
    let mut found = Found {
        name,
        problems: Vec::new(),
    };
    for key in ["title", "description"] {
        if let Some(v) = tool.get(key).filter(|v| !v.is_string()) {
            found.not(key, v, "a string");
        }
    }
    match tool.get("icons") {
        Some(Value::Array(icons)) => {
            for (i, icon) in icons.iter().enumerate() {
                found.icon(&format!("icons[{i}]"), icon);
            }
        }
        Some(v) => found.not("icons", v, "an array"),
        None => {}
    }
    match tool.get("annotations") {
        Some(Value::Object(a)) => {
            if let Some(v) = a.get("title").filter(|v| !v.is_string()) {
                found.not("annotations.title", v, "a string");
            }
            for hint in HINTS {
                if let Some(v) = a.get(hint).filter(|v| !v.is_boolean()) {
                    found.not(&format!("annotations.{hint}"), v, "a boolean");
                }
            }
        }
        Some(v) => found.not("annotations", v, "an object"),
        None => {}
    }
    found.problems
}

/// The problems found in one tool's definition.
struct Found<'a> {
    name: &'a str,
    problems: Vec<String>,
}

impl Found<'_> {
    fn not(&mut self, what: &str, v: &Value, should: &str) {
        let name = self.name;
        self.problems
            .push(format!("{name}: {what} is {}, not {should}", short(v)));
    }

    /// schema.ts Icon: `src` (required) and `mimeType` strings, `sizes` strings, `theme`
    /// "light" or "dark".
    fn icon(&mut self, at: &str, icon: &Value) {
        if !icon.is_object() {
            return self.not(at, icon, "an Icon object");
        }
        match icon.get("src") {
            Some(Value::String(_)) => {}
            Some(v) => self.not(&format!("{at}.src"), v, "a string"),
            None => self.not(&format!("{at}.src"), &Value::Null, "a string (required)"),
        }
        if let Some(v) = icon.get("mimeType").filter(|v| !v.is_string()) {
            self.not(&format!("{at}.mimeType"), v, "a string");
        }
        let sizes_ok = |v: &Value| v.as_array().is_some_and(|a| a.iter().all(Value::is_string));
        if let Some(v) = icon.get("sizes").filter(|v| !sizes_ok(v)) {
            self.not(&format!("{at}.sizes"), v, "an array of strings");
        }
        let theme_ok = |v: &Value| matches!(v.as_str(), Some("light" | "dark"));
        if let Some(v) = icon.get("theme").filter(|v| !theme_ok(v)) {
            self.not(&format!("{at}.theme"), v, "\"light\" or \"dark\"");
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn draft_07_counts_only_before_2025_11_25() {
        assert_eq!(fallback(Some("2025-06-18")), Some(Draft::Draft7));
        assert_eq!(fallback(Some("2024-11-05")), Some(Draft::Draft7));
        assert_eq!(fallback(Some("2025-11-25")), None);
        assert_eq!(fallback(None), None);
    }

    #[test]
    fn shapes_follow_the_schema() {
        let good = json!({"name": "t", "title": "T", "icons": [{"src": "https://x/i.png",
            "mimeType": "image/png", "sizes": ["48x48"], "theme": "dark"}],
            "annotations": {"title": "T", "readOnlyHint": true}});
        assert!(shape_problems(&good).is_empty());
        let bad = json!({"name": "t", "title": 1, "icons": [{"mimeType": "image/png",
            "sizes": "48x48"}], "annotations": {"readOnlyHint": "yes"}});
        let problems = shape_problems(&bad);
        assert_eq!(problems.len(), 4, "{problems:?}");
        assert!(problems.iter().any(|p| p.contains("readOnlyHint")));
    }
}
