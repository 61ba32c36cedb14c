//! Tool names: the rule the model APIs hold every name to.

use super::error::RegistryError;

/// Longest tool name the Messages API accepts (`^[a-zA-Z0-9_-]{1,128}$`).
pub const MAX_TOOL_NAME_LEN: usize = 128;

/// A name the Messages API accepts (`^[a-zA-Z0-9_-]{1,128}$`): one bad name there fails every
/// request, so it is refused here, where the caller can still rename the tool.
pub(super) fn check_name(name: &str) -> Result<(), RegistryError> {
    let reason = if name.is_empty() {
        format!(
            "it is empty; give the tool a name of 1 to {MAX_TOOL_NAME_LEN} characters from A-Z, a-z, 0-9, `_` and `-`"
        )
    } else if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
    {
        format!(
            "it contains {c:?}; model APIs accept only A-Z, a-z, 0-9, `_` and `-` in tool names (replace the others, e.g. with `_`)"
        )
    } else if name.len() > MAX_TOOL_NAME_LEN {
        format!(
            "it is {} characters long; model APIs accept at most {MAX_TOOL_NAME_LEN}",
            name.len()
        )
    } else {
        return Ok(());
    };
    Err(RegistryError::InvalidName {
        name: name.to_owned(),
        reason,
    })
}

#[cfg(test)]
mod tests {
    use crate::registry::tests::{constant, spec};
    use crate::registry::{RiskTier, ToolRegistry};

    use super::*;

    #[test]
    fn invalid_names_are_refused_by_register_and_check_free() {
        let mut tools = ToolRegistry::new();
        let err = tools
            .register(spec("fs.read", RiskTier::Auto), constant("x"))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            r#""fs.read" is not a valid tool name: it contains '.'; model APIs accept only A-Z, a-z, 0-9, `_` and `-` in tool names (replace the others, e.g. with `_`)"#
        );
        assert!(matches!(
            tools.register(spec("", RiskTier::Auto), constant("x")),
            Err(RegistryError::InvalidName { name, .. }) if name.is_empty()
        ));
        let long = "x".repeat(MAX_TOOL_NAME_LEN + 1);
        assert_eq!(
            tools.check_free(["ok", long.as_str()]),
            Err(RegistryError::InvalidName {
                name: long.clone(),
                reason: "it is 129 characters long; model APIs accept at most 128".to_owned()
            })
        );
        let longest = "x".repeat(MAX_TOOL_NAME_LEN);
        assert_eq!(tools.check_free(["a-b_C9", longest.as_str()]), Ok(()));
        assert!(tools.is_empty());
    }
}
