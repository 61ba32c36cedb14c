//! Why a tool could not be registered.

/// Why a tool could not be registered.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RegistryError {
    #[error("a tool named {0:?} is already registered")]
    Duplicate(String),
    #[error(
        "the tool name {0:?} appears more than once in the tools to register; give each tool its own name"
    )]
    DuplicateInBatch(String),
    #[error("{name:?} is not a valid tool name: {reason}")]
    InvalidName { name: String, reason: String },
    #[error("tool {name:?} has an invalid input schema: {reason}")]
    InvalidSchema { name: String, reason: String },
}
