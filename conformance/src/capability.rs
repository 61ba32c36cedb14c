//! The server capabilities a check can need (schema.ts `ServerCapabilities`): a check of a
//! feature runs only where the server declares it in the era the check runs in; where it does
//! not, the check is not applicable and `capabilities.undeclared` reports what the feature's
//! methods get.

use serde_json::Value;

/// A server capability, or a flag inside one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Capability {
    Tools,
    Resources,
    /// `resources.subscribe: true`.
    ResourceSubscribe,
    Prompts,
    Logging,
    Completions,
}

impl Capability {
    /// Every capability, in report order.
    pub const ALL: [Capability; 6] = [
        Capability::Tools,
        Capability::Resources,
        Capability::ResourceSubscribe,
        Capability::Prompts,
        Capability::Logging,
        Capability::Completions,
    ];

    /// Where it is declared in `capabilities`, as the report names it.
    pub fn as_str(self) -> &'static str {
        match self {
            Capability::Tools => "tools",
            Capability::Resources => "resources",
            Capability::ResourceSubscribe => "resources.subscribe",
            Capability::Prompts => "prompts",
            Capability::Logging => "logging",
            Capability::Completions => "completions",
        }
    }

    /// Is it declared in `capabilities` (an `initialize` or `server/discover` result's)? An
    /// object (even `{}`) declares a capability; a flag is declared by `true`.
    pub fn declared_in(self, capabilities: &Value) -> bool {
        let present = |key: &str| capabilities.get(key).is_some_and(|v| !v.is_null());
        match self {
            Capability::ResourceSubscribe => {
                capabilities.pointer("/resources/subscribe") == Some(&Value::Bool(true))
            }
            other => present(other.as_str()),
        }
    }
}

impl std::fmt::Display for Capability {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn declared_means_present_and_not_null_and_flags_true() {
        let caps = json!({"tools": {}, "resources": {"subscribe": false}, "logging": null});
        assert!(Capability::Tools.declared_in(&caps));
        assert!(Capability::Resources.declared_in(&caps));
        assert!(!Capability::ResourceSubscribe.declared_in(&caps));
        assert!(!Capability::Logging.declared_in(&caps));
        assert!(!Capability::Prompts.declared_in(&caps));
        let caps = json!({"resources": {"subscribe": true}});
        assert!(Capability::ResourceSubscribe.declared_in(&caps));
    }
}
