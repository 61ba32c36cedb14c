//! Content blocks (`schema.ts` ContentBlock: text, image, audio, resource_link, resource), as
//! `prompts/get` messages and `tools/call` results carry them. Binary data must be base64 and
//! come with a valid MIME type (server/prompts.mdx, Image Content, Audio Content, Embedded
//! Resources: "MUST be base64-encoded and include a valid MIME type").

use serde_json::{Map, Value};

use super::shape::{Kind, Problems};
use crate::pattern::short;

/// The roles a message or an annotation's audience may name (`schema.ts` Role).
pub(crate) const ROLES: [&str; 2] = ["user", "assistant"];

/// Adds to `problems` every way `block` (at `path`) departs from `schema.ts` ContentBlock.
pub(crate) fn check_block(block: &Value, path: &str, problems: &mut Problems) {
    let Some(obj) = problems.object(block, path) else {
        return;
    };
    match obj.get("type").and_then(Value::as_str) {
        Some("text") => {
            problems.required_str(obj, "text", path);
        }
        Some("image" | "audio") => {
            base64_field(obj, "data", path, problems);
            mime_field(obj, path, problems, true);
        }
        Some("resource_link") => {
            uri_field(obj, path, problems);
            problems.required_str(obj, "name", path);
            problems.optional(obj, "title", Kind::Str, path);
            problems.optional(obj, "description", Kind::Str, path);
            problems.optional(obj, "size", Kind::Number, path);
            mime_field(obj, path, problems, false);
            problems.icons(obj, path);
        }
        Some("resource") => embedded(obj, path, problems),
        _ => {
            problems.push(
                &format!("{path}.type"),
                format!(
                "is not one of \"text\", \"image\", \"audio\", \"resource_link\", \"resource\": {}",
                obj.get("type").map(short).unwrap_or_else(|| "missing".to_owned())
            ),
            )
        }
    }
    annotations(obj, path, problems);
    problems.optional(obj, "_meta", Kind::Object, path);
}

/// `resource`: `{uri, mimeType?, text}` or `{uri, mimeType?, blob}` (TextResourceContents,
/// BlobResourceContents).
fn embedded(obj: &Map<String, Value>, path: &str, problems: &mut Problems) {
    let at = format!("{path}.resource");
    let Some(resource) = obj.get("resource") else {
        problems.push(&at, "is required but missing");
        return;
    };
    let Some(resource) = problems.object(resource, &at) else {
        return;
    };
    uri_field(resource, &at, problems);
    mime_field(resource, &at, problems, false);
    match (resource.get("text"), resource.get("blob")) {
        (Some(_), None) => {
            problems.required_str(resource, "text", &at);
        }
        (None, Some(_)) => base64_field(resource, "blob", &at, problems),
        (Some(_), Some(_)) => problems.push(&at, "has both text and blob"),
        (None, None) => problems.push(&at, "has neither text nor blob"),
    }
}

/// `annotations?: {audience?: Role[], priority?: number in [0, 1], lastModified?: string}`.
fn annotations(obj: &Map<String, Value>, path: &str, problems: &mut Problems) {
    let Some(a) = problems.optional(obj, "annotations", Kind::Object, path) else {
        return;
    };
    let at = format!("{path}.annotations");
    let Some(a) = a.as_object() else { return };
    if let Some(audience) = problems.optional(a, "audience", Kind::Strings, &at) {
        let odd: Vec<&Value> = audience
            .as_array()
            .into_iter()
            .flatten()
            .filter(|r| !r.as_str().is_some_and(|r| ROLES.contains(&r)))
            .collect();
        if !odd.is_empty() {
            problems.push(
                &format!("{at}.audience"),
                format!(
                    "names a role other than \"user\" or \"assistant\": {}",
                    short(&Value::from(odd.into_iter().cloned().collect::<Vec<_>>()))
                ),
            );
        }
    }
    if let Some(priority) = problems.optional(a, "priority", Kind::Number, &at) {
        if !priority.as_f64().is_some_and(|p| (0.0..=1.0).contains(&p)) {
            problems.push(
                &format!("{at}.priority"),
                format!("is not between 0 and 1: {priority}"),
            );
        }
    }
    problems.optional(a, "lastModified", Kind::Str, &at);
}

/// A required string field holding base64 data.
fn base64_field(obj: &Map<String, Value>, key: &str, path: &str, problems: &mut Problems) {
    if let Some(data) = problems.required_str(obj, key, path) {
        if !is_base64(data) {
            problems.push(
                &format!("{path}.{key}"),
                format!(
                    "is not base64 (RFC 4648, padded): {}",
                    short(&Value::from(data))
                ),
            );
        }
    }
}

/// `mimeType`: required (image, audio) or optional, and a `type/subtype` where present.
fn mime_field(obj: &Map<String, Value>, path: &str, problems: &mut Problems, required: bool) {
    let mime = if required {
        problems.required_str(obj, "mimeType", path)
    } else {
        problems
            .optional(obj, "mimeType", Kind::Str, path)
            .and_then(Value::as_str)
    };
    if let Some(mime) = mime {
        if !is_mime_type(mime) {
            problems.push(
                &format!("{path}.mimeType"),
                format!("is not a MIME type (type/subtype): {mime:?}"),
            );
        }
    }
}

/// A required `uri` that is a URI (it has a scheme).
fn uri_field(obj: &Map<String, Value>, path: &str, problems: &mut Problems) {
    if let Some(uri) = problems.required_str(obj, "uri", path) {
        if !has_scheme(uri) {
            problems.push(
                &format!("{path}.uri"),
                format!("is not a URI (no scheme): {uri:?}"),
            );
        }
    }
}

/// Base64 as RFC 4648 section 4 defines it: the standard alphabet, padded to a multiple of 4
/// characters, `=` only at the end (at most two), no whitespace. The empty string is the
/// encoding of no bytes.
pub(crate) fn is_base64(s: &str) -> bool {
    let bytes = s.as_bytes();
    if !bytes.len().is_multiple_of(4) {
        return false;
    }
    let body = s.trim_end_matches('=');
    let padding = bytes.len() - body.len();
    padding <= 2
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/')
}

/// A MIME type as RFC 6838 section 4.2 names one: `type/subtype` of restricted-name characters,
/// parameters after `;` allowed (not judged).
pub(crate) fn is_mime_type(s: &str) -> bool {
    let essence = s.split(';').next().unwrap_or_default().trim();
    let mut parts = essence.split('/');
    let name = |p: Option<&str>| {
        p.is_some_and(|p| {
            p.len() <= 127
                && p.starts_with(|c: char| c.is_ascii_alphanumeric())
                && p.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "!#$&-^_.+".contains(c))
        })
    };
    name(parts.next()) && name(parts.next()) && parts.next().is_none()
}

/// Does `s` start with a URI scheme (RFC 3986 section 3.1: `ALPHA *( ALPHA / DIGIT / "+" / "-" /
/// "." ) ":"`)? Every absolute URI does.
pub(crate) fn has_scheme(s: &str) -> bool {
    let Some((scheme, _)) = s.split_once(':') else {
        return false;
    };
    scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn problems(block: Value) -> String {
        let mut p = Problems::default();
        check_block(&block, "$", &mut p);
        p.join()
    }

    #[test]
    fn base64_is_rfc_4648_padded() {
        for good in ["", "AA==", "AAA=", "AAAA", "aGVsbG8=", "+/+/"] {
            assert!(is_base64(good), "{good}");
        }
        for bad in [
            "A",
            "AA",
            "AAA",
            "A===",
            "AA=A",
            "aGVs bG8=",
            "aGVsbG8",
            "-_-_",
            "not base64!",
        ] {
            assert!(!is_base64(bad), "{bad}");
        }
    }

    #[test]
    fn mime_types_and_uris() {
        for good in [
            "image/png",
            "text/plain; charset=utf-8",
            "application/vnd.api+json",
        ] {
            assert!(is_mime_type(good), "{good}");
        }
        for bad in ["", "png", "image/", "/png", "image/png/x", "image /png"] {
            assert!(!is_mime_type(bad), "{bad}");
        }
        assert!(has_scheme("file:///a") && has_scheme("fixture://a.txt") && has_scheme("urn:x"));
        assert!(!has_scheme("a.txt") && !has_scheme("1x:y") && !has_scheme("/a:b"));
    }

    #[test]
    fn well_formed_blocks_have_no_problems() {
        for block in [
            json!({"type": "text", "text": "hi", "annotations": {"audience": ["user"], "priority": 0.5}}),
            json!({"type": "image", "data": "AAAA", "mimeType": "image/png"}),
            json!({"type": "audio", "data": "", "mimeType": "audio/wav"}),
            json!({"type": "resource_link", "uri": "file:///a.rs", "name": "a.rs", "mimeType": "text/x-rust"}),
            json!({"type": "resource", "resource": {"uri": "x://a", "text": "t"}}),
            json!({"type": "resource", "resource": {"uri": "x://a", "mimeType": "application/octet-stream", "blob": "AAAA"}}),
        ] {
            assert_eq!(problems(block.clone()), "", "{block}");
        }
    }

    #[test]
    fn each_defect_is_named_by_its_path() {
        let cases = [
            (json!({"type": "text"}), "$.text: is required but missing"),
            (
                json!({"type": "image", "data": "no!", "mimeType": "image/png"}),
                "$.data: is not base64",
            ),
            (
                json!({"type": "audio", "data": "AAAA"}),
                "$.mimeType: is required but missing",
            ),
            (
                json!({"type": "image", "data": "AAAA", "mimeType": "png"}),
                "$.mimeType: is not a MIME type",
            ),
            (
                json!({"type": "resource_link", "uri": "a.rs", "name": "a"}),
                "$.uri: is not a URI",
            ),
            (
                json!({"type": "resource_link", "uri": "x://a"}),
                "$.name: is required but missing",
            ),
            (
                json!({"type": "resource", "resource": {"uri": "x://a"}}),
                "$.resource: has neither text nor blob",
            ),
            (
                json!({"type": "resource", "resource": {"uri": "x://a", "blob": "%%"}}),
                "$.resource.blob: is not base64",
            ),
            (json!({"type": "video"}), "$.type: is not one of"),
            (
                json!({"type": "text", "text": "t", "annotations": {"priority": 2}}),
                "$.annotations.priority: is not between 0 and 1",
            ),
            (
                json!({"type": "text", "text": "t", "annotations": {"audience": ["system"]}}),
                "$.annotations.audience: names a role",
            ),
            (json!("text"), "$: is not an object"),
        ];
        for (block, want) in cases {
            let got = problems(block.clone());
            assert!(got.starts_with(want), "{block}: {got}");
        }
    }
}
