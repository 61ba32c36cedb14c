//! The JSON-RPC request id as MCP narrows it (`basic/index.mdx`): a string or an integer,
//! never `null`.

use std::fmt;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::json::json_type;

/// A request id: a string or an integer (MCP forbids `null`; JSON-RPC discourages fractions).
///
/// Integers are kept exactly across the whole `i64` and `u64` range, so an id such as
/// `18446744073709551615` is echoed byte for byte. Integers outside that range are refused.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct RequestId(IdRepr);

#[derive(Clone, PartialEq, Eq, Hash)]
enum IdRepr {
    Int(i64),
    /// Only values above `i64::MAX`, so every integer has one representation.
    BigUint(u64),
    Str(Box<str>),
}

impl RequestId {
    /// Reads an id from JSON, or says why it is not a valid MCP request id.
    pub fn from_value(value: &Value) -> Result<RequestId, String> {
        match value {
            Value::String(s) => Ok(RequestId(IdRepr::Str(s.as_str().into()))),
            Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    Ok(RequestId(IdRepr::Int(i)))
                } else if let Some(u) = n.as_u64() {
                    Ok(RequestId(IdRepr::BigUint(u)))
                } else if n
                    .as_f64()
                    .is_some_and(|f| f.fract() == 0.0 && f.abs() >= TWO_POW_63)
                {
                    // An integer beyond 64 bits reaches here as an f64 (serde_json keeps no
                    // wider integer): do not show that float, which is not what was sent.
                    Err(ID_OUT_OF_RANGE.to_owned())
                } else {
                    Err(format!(
                        "\"id\" must be a string or an integer, got the number {n}"
                    ))
                }
            }
            Value::Null => Err("\"id\" must not be null in MCP".to_owned()),
            other => Err(format!(
                "\"id\" must be a string or an integer, got {}",
                json_type(other)
            )),
        }
    }

    /// The id as JSON.
    pub fn to_value(&self) -> Value {
        match &self.0 {
            IdRepr::Int(i) => Value::from(*i),
            IdRepr::BigUint(u) => Value::from(*u),
            IdRepr::Str(s) => Value::from(&**s),
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match &self.0 {
            IdRepr::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_i64(&self) -> Option<i64> {
        match &self.0 {
            IdRepr::Int(i) => Some(*i),
            _ => None,
        }
    }
}

/// 2^63: every integral f64 of at least this magnitude came from an integer literal outside
/// `i64`/`u64` (those are kept exactly), or from float syntax such as `1e19`.
const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;

pub(crate) const ID_OUT_OF_RANGE: &str = "\"id\" is an integer out of range: integer ids must be written as plain integers that fit in 64 bits (-2^63 to 2^64-1)";

impl From<i64> for RequestId {
    fn from(i: i64) -> Self {
        RequestId(IdRepr::Int(i))
    }
}

impl From<i32> for RequestId {
    fn from(i: i32) -> Self {
        RequestId(IdRepr::Int(i.into()))
    }
}

impl From<u64> for RequestId {
    fn from(u: u64) -> Self {
        match i64::try_from(u) {
            Ok(i) => RequestId(IdRepr::Int(i)),
            Err(_) => RequestId(IdRepr::BigUint(u)),
        }
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        RequestId(IdRepr::Str(s.into()))
    }
}

impl From<String> for RequestId {
    fn from(s: String) -> Self {
        RequestId(IdRepr::Str(s.into()))
    }
}

/// Strings print quoted, so `7` and `"7"` look different in logs.
impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            IdRepr::Int(i) => write!(f, "{i}"),
            IdRepr::BigUint(u) => write!(f, "{u}"),
            IdRepr::Str(s) => write!(f, "{s:?}"),
        }
    }
}

impl fmt::Debug for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RequestId({self})")
    }
}

impl Serialize for RequestId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            IdRepr::Int(i) => s.serialize_i64(*i),
            IdRepr::BigUint(u) => s.serialize_u64(*u),
            IdRepr::Str(v) => s.serialize_str(v),
        }
    }
}

impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        RequestId::from_value(&v).map_err(D::Error::custom)
    }
}
