//! What an answer reads, and the version of each: every piece of state a search or a context
//! reads is an [`Input`], whose version moves whenever it changes and is kept beside the state it
//! versions — the daemon-wide ones here ([`Generations`]: which repositories are registered,
//! session notes), a repository's in [`RepoVersions`] (`Repo::changed`) and its tuned settings in
//! their slot (`TuneSlot::version`). The query pipeline declares which inputs each of its stages
//! and oracles reads (`crate::query::pipeline::inputs`), and the query cache stamps an answer with
//! the versions of exactly those (`crate::query::cache::Stamp`). So a new input cannot be left out
//! of the cache's check: it has no version until [`Generations::version`] or `Repo::version` names
//! one (their matches do not compile without it), a stage or an oracle reads it only by declaring
//! it (`Stage::reads`, `pipeline::oracle_reads`, matched the same way), and an input nothing
//! declares fails `pipeline::tests::every_input_is_declared_by_a_stage_or_an_oracle`.

use std::sync::atomic::{AtomicU64, Ordering};

/// A piece of state answers are computed from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Input {
    /// Which repositories are registered (daemon-wide).
    Registry,
    /// Session notes and their embeddings (daemon-wide).
    Notes,
    /// A repository's chunks, text index, symbols and graph: what its index rounds commit.
    Index,
    /// Its vectors: the vector index, the static stand-ins, the embedding backlog.
    Vectors,
    /// Its record (name, settings).
    Record,
    /// Its commit history: the view at HEAD and the messages' vectors.
    History,
    /// Its tuned settings (`patina tune`).
    Tuned,
    /// A ranking input that exists only in the unit tests: it shows that the cache checks what
    /// the pipeline declares.
    #[cfg(test)]
    Probe,
}

impl Input {
    /// Every input (the test-only one aside).
    #[cfg(test)]
    pub const ALL: &[Input] = &[
        Input::Registry,
        Input::Notes,
        Input::Index,
        Input::Vectors,
        Input::Record,
        Input::History,
        Input::Tuned,
    ];

    /// Whether each repository has its own version of this input (else one is daemon-wide).
    pub fn per_repo(self) -> bool {
        match self {
            Input::Registry | Input::Notes => false,
            Input::Index | Input::Vectors | Input::Record | Input::History | Input::Tuned => true,
            #[cfg(test)]
            Input::Probe => false,
        }
    }
}

/// The daemon-wide inputs' versions. One is made at start and handed to whoever moves or reads
/// them.
#[derive(Debug, Default)]
pub(crate) struct Generations {
    registry: AtomicU64,
    notes: AtomicU64,
    #[cfg(test)]
    probe: AtomicU64,
}

impl Generations {
    /// A repository was registered or removed.
    pub fn registry_changed(&self) {
        self.registry.fetch_add(1, Ordering::SeqCst);
    }

    /// Session notes were written, removed or embedded.
    pub fn notes_changed(&self) {
        self.notes.fetch_add(1, Ordering::SeqCst);
    }

    /// A daemon-wide input's version now (`None` for a repository's: `Repo::version`).
    pub fn version(&self, input: Input) -> Option<u64> {
        Some(match input {
            Input::Registry => self.registry.load(Ordering::SeqCst),
            Input::Notes => self.notes.load(Ordering::SeqCst),
            Input::Index | Input::Vectors | Input::Record | Input::History | Input::Tuned => {
                return None;
            }
            #[cfg(test)]
            Input::Probe => self.probe.load(Ordering::SeqCst),
        })
    }

    /// The test-only input [`Input::Probe`] changed.
    #[cfg(test)]
    pub fn probe_changed(&self) {
        self.probe.fetch_add(1, Ordering::SeqCst);
    }
}

/// A repository's versions of the inputs its `Repo` keeps.
#[derive(Debug, Default)]
pub(crate) struct RepoVersions {
    index: AtomicU64,
    vectors: AtomicU64,
    record: AtomicU64,
    history: AtomicU64,
}

impl RepoVersions {
    fn slot(&self, input: Input) -> &AtomicU64 {
        match input {
            Input::Index => &self.index,
            Input::Vectors => &self.vectors,
            Input::Record => &self.record,
            Input::History => &self.history,
            other => panic!("{other:?} is not versioned by the repository"),
        }
    }

    /// `input` changed (one of `Index`, `Vectors`, `Record`, `History`).
    pub fn bump(&self, input: Input) {
        self.slot(input).fetch_add(1, Ordering::SeqCst);
    }

    pub fn get(&self, input: Input) -> u64 {
        self.slot(input).load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_input_moves_only_its_own_version() {
        let g = Generations::default();
        let before: Vec<_> = [Input::Registry, Input::Notes]
            .iter()
            .map(|i| g.version(*i))
            .collect();
        g.notes_changed();
        assert_eq!(g.version(Input::Registry), before[0]);
        assert_ne!(g.version(Input::Notes), before[1]);
        let v = RepoVersions::default();
        v.bump(Input::History);
        assert_eq!((v.get(Input::History), v.get(Input::Index)), (1, 0));
        // A repository's input has no daemon-wide version.
        assert_eq!(g.version(Input::Index), None);
    }
}
