//! What context expansion adds around a hit (`patina_index::expansion` finds it, context
//! assembly renders it): plain data.

use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RelatedKind {
    /// The header of the enclosing class, impl, trait, …
    Container,
    /// An import the definition uses.
    Import,
    /// The signature of a definition next to it with the same parent.
    Sibling,
    /// The signature of a repository function it calls.
    Callee,
    /// A heading above a Markdown section.
    ParentSection,
    /// The title of a subsection.
    ChildSection,
}

impl RelatedKind {
    /// Stable lowercase name, as it appears on the wire.
    pub fn name(self) -> &'static str {
        match self {
            RelatedKind::Container => "container",
            RelatedKind::Import => "import",
            RelatedKind::Sibling => "sibling",
            RelatedKind::Callee => "callee",
            RelatedKind::ParentSection => "parent_section",
            RelatedKind::ChildSection => "child_section",
        }
    }
}

/// One piece of context around a hit: lines `start_line..=end_line` of `path`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Related {
    pub kind: RelatedKind,
    pub path: Arc<str>,
    pub start_line: u32,
    pub end_line: u32,
    /// What it names: the class, the imported name, the sibling or callee, the heading.
    pub symbol: String,
    pub text: String,
}

impl Related {
    pub fn reference(&self) -> String {
        format!("{}:{}-{}", self.path, self.start_line, self.end_line)
    }
}
