//! Errors a caller can fix, as opposed to internal failures: the daemon maps them to
//! `NotFound`/`InvalidArgument` on the wire.

/// Errors a caller can fix, as opposed to internal failures.
#[derive(Debug)]
pub enum UserError {
    NotFound(String),
    Invalid(String),
}

impl std::error::Error for UserError {}

impl std::fmt::Display for UserError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UserError::NotFound(m) | UserError::Invalid(m) => f.write_str(m),
        }
    }
}
