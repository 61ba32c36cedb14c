//! How a parser keeps a message's params: a `Value` tree, or a form of the reader's own.

use serde::de::MapAccess;
use serde_json::Value;

use crate::json::json_type;
use crate::scan::Scanner;

/// How a parser keeps a message's params ([`crate::parse_as`]).
///
/// `Value` (a tree) is the default. A server can read the params of a method it serves often
/// straight into a form of its own in the same pass, chosen by the method when `"method"`
/// comes before `"params"`, as every SDK writes them (`Value` otherwise).
pub trait Params: Sized {
    /// Reads the `params` member's value; `method` is the message's `"method"` if it came
    /// first. Must accept every JSON value that a `Value` accepts: a wrong shape is reported
    /// from [`Params::json_type`] by the parser, or by whoever handles the method.
    fn read<'de, A: MapAccess<'de>>(method: Option<&Value>, map: &mut A) -> Result<Self, A::Error>;

    /// Reads an object or array params value on [`crate::parse_as`]'s fast path ([`Scanner`]),
    /// with the same result as [`Params::read`]; `None` leaves the frame to the serde path.
    /// The default always does.
    fn scan(method: Option<&str>, scanner: &mut Scanner<'_>) -> Option<Self> {
        let _ = (method, scanner);
        None
    }

    /// The JSON type read: params must be an object, an array or null.
    fn json_type(&self) -> ParamsType;
}

/// The JSON type of a params member, as the parser's shape checks need it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamsType {
    Null,
    Object,
    Array,
    /// Any other, named for an error message ("a string", …).
    Other(&'static str),
}

impl Params for Value {
    fn read<'de, A: MapAccess<'de>>(
        _method: Option<&Value>,
        map: &mut A,
    ) -> Result<Self, A::Error> {
        map.next_value()
    }

    fn scan(_method: Option<&str>, scanner: &mut Scanner<'_>) -> Option<Self> {
        scanner.value()
    }

    fn json_type(&self) -> ParamsType {
        match self {
            Value::Null => ParamsType::Null,
            Value::Object(_) => ParamsType::Object,
            Value::Array(_) => ParamsType::Array,
            other => ParamsType::Other(json_type(other)),
        }
    }
}
