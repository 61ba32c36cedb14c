//! `structuredContent.text` of an echo reply, read without building a `Value`: the verifier
//! runs once per reply, and at 64 B a map allocation per reply would be a visible share of the
//! driver's work (and of a window-1 round trip).

use std::borrow::Cow;
use std::fmt;

use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

/// `structuredContent.text` when `structuredContent` is an object whose `text` is a string;
/// `None` for any other value, which is the server's own output schema and not checked.
#[derive(Debug, Default)]
pub struct StructuredText<'a>(pub Option<Cow<'a, str>>);

/// Any JSON value: its string if it is one, else nothing (the rest is skipped, not kept).
struct AnyText<'a>(Option<Cow<'a, str>>);

/// What to do with an object: look for `text` (the `structuredContent` level) or skip it.
#[derive(Clone, Copy)]
struct Look {
    members: bool,
}

impl<'de> Visitor<'de> for Look {
    type Value = Option<Cow<'de, str>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok((!self.members).then_some(Cow::Borrowed(v)))
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok((!self.members).then(|| Cow::Owned(v.to_owned())))
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut text = None;
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            if self.members && key == "text" {
                // The last `text` wins, as in a `Value` object.
                text = map.next_value::<AnyText<'de>>()?.0;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(text)
    }
}

impl<'de> Deserialize<'de> for AnyText<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(Look { members: false }).map(AnyText)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for StructuredText<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(Look { members: true })
            .map(StructuredText)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(json: &str) -> Option<String> {
        serde_json::from_str::<StructuredText<'_>>(json)
            .unwrap()
            .0
            .map(Cow::into_owned)
    }

    #[test]
    fn only_a_string_text_member_of_an_object_counts() {
        assert_eq!(text(r#"{"text":"a"}"#).as_deref(), Some("a"));
        assert_eq!(
            text(r#"{"x":[1,{"text":"no"}],"text":"a\"b"}"#).as_deref(),
            Some("a\"b")
        );
        assert_eq!(text(r#"{"text":"a","text":"b"}"#).as_deref(), Some("b"));
        for other in [
            r#"{"text":3}"#,
            r#"{"text":{"text":"a"}}"#,
            r#"{"echoed":"a"}"#,
            r#""a""#,
            r#"["a"]"#,
            "null",
            "1.5",
            "true",
        ] {
            assert_eq!(text(other), None, "{other}");
        }
    }
}
