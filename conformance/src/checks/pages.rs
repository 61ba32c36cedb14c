//! Every `*/list` method's pages, followed the same way (`server/utilities/pagination.mdx`):
//! `nextCursor` to the end, at most [`MAX_PAGES`], and a cursor the server issued twice is a
//! loop: reported and not followed.

use std::collections::HashSet;

use serde_json::{json, Value};

use super::{step, StepError};
use crate::check::Outcome;
use crate::ctx::Ctx;
use crate::era::Era;
use crate::pattern::{describe, short};
use crate::probe::Probe;

/// The pages a list is followed for before the harness stops (and says so).
pub(crate) const MAX_PAGES: usize = 100;

/// A list method's pages, as far as they were followed.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Listed {
    /// Each page's `result`, in order.
    pub pages: Vec<Value>,
    /// The items of every page (the array under the list's key), in order.
    pub items: Vec<Value>,
    /// Where following stopped short of the end, and why: a cursor that repeats (a loop), or
    /// more than [`MAX_PAGES`] pages.
    pub stopped: Option<String>,
}

/// Lists `method` (`tools/list`, `resources/list`, …), whose items are under `key`, following
/// `nextCursor`. An error reply, a result without the `key` array or a cursor that is not a
/// string ends it with an error; a loop or too many pages end it with `stopped` set.
pub(crate) async fn list(p: &mut Probe, method: &str, key: &str) -> Result<Listed, StepError> {
    let mut listed = Listed::default();
    let mut cursor: Option<Value> = None;
    let mut seen = HashSet::new();
    while listed.pages.len() < MAX_PAGES {
        let params = cursor.as_ref().map(|c| json!({ "cursor": c }));
        let reply = p.request(method, params).await?;
        let Some(result) = reply.get("result") else {
            return Err(StepError::Answer(format!(
                "{method} failed: {}",
                short(&reply)
            )));
        };
        let Some(items) = result.get(key).and_then(Value::as_array) else {
            return Err(StepError::Answer(format!(
                "result.{key} is not an array: {}",
                short(result)
            )));
        };
        listed.items.extend(items.iter().cloned());
        listed.pages.push(result.clone());
        match result.get("nextCursor") {
            None | Some(Value::Null) => return Ok(listed),
            Some(c @ Value::String(s)) => {
                if !seen.insert(s.clone()) {
                    listed.stopped = Some(format!(
                        "{method}: nextCursor {s:?} was issued before: the pages loop (not \
                         followed again)"
                    ));
                    return Ok(listed);
                }
                cursor = Some(c.clone());
            }
            Some(other) => {
                return Err(StepError::Answer(format!(
                    "{method}: nextCursor is not a string: {}",
                    short(other)
                )))
            }
        }
    }
    listed.stopped = Some(format!(
        "{method}: more than {MAX_PAGES} pages (not followed further)"
    ));
    Ok(listed)
}

/// `method` with a cursor the server never issued, in a session of `era`: -32602 is the page's
/// SHOULD (`server/utilities/pagination.mdx`, Error Handling: "Invalid cursors SHOULD result in
/// an error with code -32602 (Invalid params).").
pub(crate) async fn invalid_cursor(ctx: &Ctx, era: Era, method: &str) -> Outcome {
    let mut p = step!(ctx.session(era).await, "a session");
    let params = json!({"cursor": "mcp-conformance-no-such-cursor"});
    let reply = step!(p.request(method, Some(params)).await, "a reply");
    match reply.pointer("/error/code").and_then(Value::as_i64) {
        Some(-32602) => Outcome::pass("-32602"),
        _ => Outcome::fail("error -32602", describe(&reply)),
    }
}

impl Listed {
    /// A list check's verdict from the `problems` its items have (`expected`: what well-formed
    /// items are): a FAIL if any; else, if following stopped short (a loop, too many pages),
    /// what was seen, reported: no sentence requires pages to end ("Servers SHOULD provide
    /// stable cursors" is about cursors staying valid); else a PASS naming how many `noun`s.
    pub(crate) fn verdict(&self, noun: &str, expected: &str, problems: Vec<String>) -> Outcome {
        let seen = format!(
            "{} {noun}(s) on {} page(s)",
            self.items.len(),
            self.pages.len()
        );
        match (problems.is_empty(), &self.stopped) {
            (false, stopped) => {
                let mut found = problems;
                found.extend(stopped.iter().cloned());
                Outcome::fail(expected, found.join("\n"))
            }
            (true, Some(why)) => Outcome::Observed(format!("{seen}, each well formed; {why}")),
            (true, None) => Outcome::pass(seen),
        }
    }
}
