//! How the server keeps a request's params ([`mcp_protocol::Params`]): a `Value` tree, except
//! for `tools/call`, whose params object is read into its parts (`name`, `arguments`, the
//! rest). On the parser's fast path ([`mcp_protocol::Scanner`]), which reads requests as SDKs
//! write them, the commonest request then builds no map for its params, allocates no key
//! strings for them and needs no `from_value` walk to become [`CallToolParams`]
//! (BENCHMARKS.md). Frames the fast path leaves to serde are read as a `Value` and split. Anything
//! unusual about the params is turned back into the `Value` they would have been, so every
//! error is worded as before.

use std::borrow::Cow;

use mcp_protocol::mcp::{methods, CallToolParams};
use mcp_protocol::{Params, ParamsType, Scanner};
use serde::de::MapAccess;
use serde_json::{Map, Value};

/// A request's or notification's params as the server reads them.
#[derive(Debug, Clone, PartialEq)]
pub enum ServerParams {
    Value(Value),
    /// A `tools/call`'s params object, in parts.
    ToolCall(ToolCallParts),
}

/// The members of a `tools/call` params object: `name` and `arguments` as read, and every
/// other member (such as `_meta`) in `rest`. A repeated member keeps its last value, as a
/// `Value` object does.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolCallParts {
    name: Option<Value>,
    arguments: Option<Value>,
    rest: Map<String, Value>,
}

impl From<Value> for ServerParams {
    fn from(value: Value) -> Self {
        ServerParams::Value(value)
    }
}

impl ServerParams {
    /// The `Value` these params are.
    pub fn into_value(self) -> Value {
        match self {
            ServerParams::Value(value) => value,
            ServerParams::ToolCall(parts) => parts.into_value(),
        }
    }

    /// One member of the params object, whichever form they were kept in.
    pub fn member(&self, key: &str) -> Option<&Value> {
        match self {
            ServerParams::Value(value) => value.get(key),
            ServerParams::ToolCall(parts) => match key {
                "name" => parts.name.as_ref(),
                "arguments" => parts.arguments.as_ref(),
                other => parts.rest.get(other),
            },
        }
    }

    /// Takes one member out of the params object (not `name` or `arguments`).
    pub(crate) fn take(&mut self, key: &str) -> Option<Value> {
        match self {
            ServerParams::Value(Value::Object(map)) => map.remove(key),
            ServerParams::Value(_) => None,
            ServerParams::ToolCall(parts) => parts.rest.remove(key),
        }
    }

    /// The params' `_meta` member, if they are an object that has one.
    pub fn meta(&self) -> Option<&Value> {
        match self {
            ServerParams::Value(value) => value.get("_meta"),
            ServerParams::ToolCall(parts) => parts.rest.get("_meta"),
        }
    }
}

impl ToolCallParts {
    /// Keeps one member, read by either parser; a repeated one keeps its last value.
    #[inline]
    fn set(&mut self, key: PartKey, value: Value) {
        match key {
            PartKey::Name => self.name = Some(value),
            PartKey::Arguments => self.arguments = Some(value),
            PartKey::Other(key) => {
                self.rest.insert(key, value);
            }
        }
    }

    /// The params object these parts are.
    pub fn into_value(self) -> Value {
        let mut members = self.rest;
        if let Some(name) = self.name {
            members.insert("name".to_owned(), name);
        }
        if let Some(arguments) = self.arguments {
            members.insert("arguments".to_owned(), arguments);
        }
        Value::Object(members)
    }

    /// The typed params when `name` is a string and `arguments` an object, null or absent
    /// (what `from_value::<CallToolParams>` accepts); otherwise the parts, untouched, for the
    /// caller to report through the `Value` path.
    pub fn into_call(self) -> Result<CallToolParams, ToolCallParts> {
        match (self.name, self.arguments) {
            (Some(Value::String(name)), None | Some(Value::Null)) => Ok(CallToolParams {
                name,
                arguments: None,
            }),
            (Some(Value::String(name)), Some(Value::Object(arguments))) => Ok(CallToolParams {
                name,
                arguments: Some(arguments),
            }),
            (name, arguments) => Err(ToolCallParts {
                name,
                arguments,
                rest: self.rest,
            }),
        }
    }
}

impl Params for ServerParams {
    /// The serde path, for frames the fast path leaves to it (anything unusual): the `Value`,
    /// split into parts for `tools/call`.
    fn read<'de, A: MapAccess<'de>>(method: Option<&Value>, map: &mut A) -> Result<Self, A::Error> {
        let value: Value = map.next_value()?;
        Ok(match value {
            Value::Object(members)
                if method.and_then(Value::as_str) == Some(methods::TOOLS_CALL) =>
            {
                let mut parts = ToolCallParts::default();
                for (key, value) in members {
                    parts.set(PartKey::of(Cow::Owned(key)), value);
                }
                ServerParams::ToolCall(parts)
            }
            value => ServerParams::Value(value),
        })
    }

    fn scan(method: Option<&str>, s: &mut Scanner<'_>) -> Option<Self> {
        if method != Some(methods::TOOLS_CALL) || s.peek() != Some(b'{') {
            return s.value().map(ServerParams::Value);
        }
        let mut parts = ToolCallParts::default();
        s.object(|key, s| {
            parts.set(PartKey::of(key), s.value()?);
            Some(())
        })?;
        Some(ServerParams::ToolCall(parts))
    }

    fn json_type(&self) -> ParamsType {
        match self {
            ServerParams::Value(value) => value.json_type(),
            ServerParams::ToolCall(_) => ParamsType::Object,
        }
    }
}

/// A `tools/call` params member's name: the two read into parts, and the others.
enum PartKey {
    Name,
    Arguments,
    Other(String),
}

impl PartKey {
    #[inline]
    fn of(key: Cow<'_, str>) -> PartKey {
        match &*key {
            "name" => PartKey::Name,
            "arguments" => PartKey::Arguments,
            _ => PartKey::Other(key.into_owned()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_protocol::{parse, parse_as, Incoming, Message};
    use serde_json::json;

    fn params(text: &str) -> Option<ServerParams> {
        match parse_as::<ServerParams>(text.as_bytes()) {
            Ok(Incoming::Single(Message::Request(r))) => r.params,
            other => panic!("{text}: {other:?}"),
        }
    }

    fn plain(text: &str) -> Option<Value> {
        match parse(text.as_bytes()) {
            Ok(Incoming::Single(Message::Request(r))) => r.params,
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn tool_calls_are_read_into_parts_that_are_the_same_value() {
        for p in [
            r#"{"name":"echo","arguments":{"text":"hi"}}"#,
            r#"{"arguments":{"text":"hi"},"name":"echo","_meta":{"progressToken":1}}"#,
            r#"{"name":"echo","name":"other","arguments":null,"x":[1,{"y":2.5}]}"#,
            r#"{"name":5,"arguments":"no"}"#,
            r#"{}"#,
        ] {
            let text = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{p}}}"#);
            let read = params(&text);
            assert!(
                matches!(read, Some(ServerParams::ToolCall(_))),
                "{p}: {read:?}"
            );
            assert_eq!(read.map(ServerParams::into_value), plain(&text), "{p}");
        }
        // Not an object, or another method, or params before the method: a `Value`.
        for text in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1,"a",null,true]}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"name":"echo"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"params":{"name":"echo"},"method":"tools/call"}"#,
        ] {
            let read = params(text);
            assert!(
                matches!(read, Some(ServerParams::Value(_))),
                "{text}: {read:?}"
            );
            assert_eq!(read.map(ServerParams::into_value), plain(text), "{text}");
        }
        // Params of the wrong type are the parser's -32600, worded as for `Value` params.
        for p in [r#""x""#, "5", "true", "-1.5e3"] {
            let text = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{p}}}"#);
            let ours = format!(
                "{:?}",
                parse_as::<ServerParams>(text.as_bytes()).map(|_| ())
            );
            let theirs = format!("{:?}", parse(text.as_bytes()).map(|_| ()));
            assert_eq!(ours, theirs, "{p}");
            assert!(ours.contains("must be an object or an array"), "{ours}");
        }
    }

    #[test]
    fn parts_become_call_params_only_when_from_value_would_accept_them() {
        let parts = |v: Value| {
            let text = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{v}}}"#);
            match params(&text) {
                Some(ServerParams::ToolCall(parts)) => parts,
                other => panic!("{other:?}"),
            }
        };
        for v in [
            json!({"name": "echo", "arguments": {"text": "a"}}),
            json!({"name": "echo"}),
            json!({"name": "echo", "arguments": null, "_meta": {}}),
            json!({"name": 5}),
            json!({"arguments": {}}),
            json!({"name": "echo", "arguments": [1]}),
            json!({"name": null}),
        ] {
            let typed = parts(v.clone()).into_call().ok();
            let reference = serde_json::from_value::<CallToolParams>(v.clone()).ok();
            assert_eq!(typed, reference, "{v}");
        }
        // Refused parts come back whole.
        let back = parts(json!({"name": 5, "arguments": [1], "_meta": {"a": 1}})).into_call();
        assert_eq!(
            back.err().map(ToolCallParts::into_value),
            Some(json!({"name": 5, "arguments": [1], "_meta": {"a": 1}}))
        );
    }

    #[test]
    fn meta_is_found_in_both_forms() {
        let text = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"e","_meta":{"k":1}}}"#;
        assert_eq!(
            params(text).as_ref().and_then(ServerParams::meta),
            Some(&json!({"k": 1}))
        );
        let value = ServerParams::from(json!({"_meta": 2}));
        assert_eq!(value.meta(), Some(&json!(2)));
        assert_eq!(ServerParams::from(json!([1])).meta(), None);
    }
}
