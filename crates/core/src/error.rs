//! Errors a caller can fix, as opposed to internal failures: the daemon maps them to
//! `NotFound`/`InvalidArgument` on the wire.

/// Errors a caller can fix, as opposed to internal failures.
#[derive(Debug)]
pub enum UserError {
    NotFound(String),
    Invalid(String),
    /// A name or path that no registered repository matches: the caller can list them
    /// ([`Remedy::ListRepos`]). The message names no command; each client says how in its terms.
    Unregistered(String),
}

/// What a caller can do about an error or a notice, as a code beside the message: each client
/// says it in its own terms (`patina repos` in a shell, `list_repos` for an agent), so no client
/// reads the daemon's prose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Remedy {
    /// See which repositories are registered.
    ListRepos,
    /// Register a repository.
    AddRepo,
}

impl Remedy {
    /// The code on the wire.
    pub fn code(self) -> &'static str {
        match self {
            Remedy::ListRepos => "list-repos",
            Remedy::AddRepo => "add-repo",
        }
    }

    pub fn parse(code: &str) -> Option<Remedy> {
        [Remedy::ListRepos, Remedy::AddRepo]
            .into_iter()
            .find(|r| r.code() == code)
    }

    /// How a person at a shell does it.
    pub fn for_shell(self) -> &'static str {
        match self {
            Remedy::ListRepos => "see `patina repos`",
            Remedy::AddRepo => "add one with `patina add PATH`",
        }
    }
}

impl std::error::Error for UserError {}

impl std::fmt::Display for UserError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UserError::NotFound(m) | UserError::Invalid(m) | UserError::Unregistered(m) => {
                f.write_str(m)
            }
        }
    }
}
