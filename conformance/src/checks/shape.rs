//! Judging a JSON value against its `schema.ts` type by hand, field by field: what is required
//! is there with its type, what is optional has its type where present. Each departure is
//! collected with its JSON path, so one report names every problem at once.

use serde_json::{Map, Value};

use crate::pattern::short;

/// The JSON type a field must have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Str,
    Bool,
    Number,
    Object,
    Array,
    /// An array of strings.
    Strings,
}

impl Kind {
    fn fits(self, v: &Value) -> bool {
        match self {
            Kind::Str => v.is_string(),
            Kind::Bool => v.is_boolean(),
            Kind::Number => v.is_number(),
            Kind::Object => v.is_object(),
            Kind::Array => v.is_array(),
            Kind::Strings => v.as_array().is_some_and(|a| a.iter().all(Value::is_string)),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Str => "a string",
            Kind::Bool => "a boolean",
            Kind::Number => "a number",
            Kind::Object => "an object",
            Kind::Array => "an array",
            Kind::Strings => "an array of strings",
        }
    }
}

/// The departures found so far, each `path: what is wrong`.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Problems(Vec<String>);

impl Problems {
    pub(crate) fn push(&mut self, path: &str, what: impl std::fmt::Display) {
        self.0.push(format!("{path}: {what}"));
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Every problem, in the order found.
    pub(crate) fn into_vec(self) -> Vec<String> {
        self.0
    }

    /// One problem a line, for a report.
    pub(crate) fn join(&self) -> String {
        self.0.join("\n")
    }

    /// `v` as an object, or a problem.
    pub(crate) fn object<'a>(
        &mut self,
        v: &'a Value,
        path: &str,
    ) -> Option<&'a Map<String, Value>> {
        let obj = v.as_object();
        if obj.is_none() {
            self.push(path, format!("is not an object: {}", short(v)));
        }
        obj
    }

    /// The required field `key` of `obj` as a string, or a problem.
    pub(crate) fn required_str<'a>(
        &mut self,
        obj: &'a Map<String, Value>,
        key: &str,
        path: &str,
    ) -> Option<&'a str> {
        match obj.get(key) {
            Some(Value::String(s)) => Some(s),
            Some(other) => {
                self.push(
                    &format!("{path}.{key}"),
                    format!("is not a string: {}", short(other)),
                );
                None
            }
            None => {
                self.push(&format!("{path}.{key}"), "is required but missing");
                None
            }
        }
    }

    /// The optional field `key` of `obj`: absent, or of `kind`.
    pub(crate) fn optional<'a>(
        &mut self,
        obj: &'a Map<String, Value>,
        key: &str,
        kind: Kind,
        path: &str,
    ) -> Option<&'a Value> {
        let v = obj.get(key)?;
        if kind.fits(v) {
            Some(v)
        } else {
            self.push(
                &format!("{path}.{key}"),
                format!("is not {}: {}", kind.name(), short(v)),
            );
            None
        }
    }

    /// The optional `icons` of `obj` (schema.ts Icons): each `{src: string, mimeType?: string,
    /// sizes?: string[], theme?: "light" | "dark"}`.
    pub(crate) fn icons(&mut self, obj: &Map<String, Value>, path: &str) {
        let Some(icons) = self.optional(obj, "icons", Kind::Array, path) else {
            return;
        };
        for (i, icon) in icons.as_array().into_iter().flatten().enumerate() {
            let at = format!("{path}.icons[{i}]");
            let Some(icon) = self.object(icon, &at) else {
                continue;
            };
            self.required_str(icon, "src", &at);
            self.optional(icon, "mimeType", Kind::Str, &at);
            self.optional(icon, "sizes", Kind::Strings, &at);
            if let Some(theme) = icon.get("theme") {
                if theme != "light" && theme != "dark" {
                    self.push(
                        &format!("{at}.theme"),
                        format!("is not \"light\" or \"dark\": {}", short(theme)),
                    );
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn required_and_optional_fields_name_their_paths() {
        let v = json!({"name": 1, "title": "t", "description": false,
            "icons": [{"src": "a.png", "sizes": ["any"]}, {"theme": "blue"}]});
        let mut p = Problems::default();
        let obj = p.object(&v, "$").unwrap();
        assert_eq!(p.required_str(obj, "name", "$"), None);
        assert_eq!(p.required_str(obj, "uri", "$"), None);
        p.optional(obj, "title", Kind::Str, "$");
        p.optional(obj, "description", Kind::Str, "$");
        p.icons(obj, "$");
        assert_eq!(
            p.join(),
            "$.name: is not a string: 1\n$.uri: is required but missing\n\
             $.description: is not a string: false\n$.icons[1].src: is required but missing\n\
             $.icons[1].theme: is not \"light\" or \"dark\": \"blue\""
        );
        assert!(Problems::default().object(&json!([]), "$").is_none());
    }
}
