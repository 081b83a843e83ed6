//! A test stands for the code it tests. Test names describe behaviour in the words people ask in
//! (`WhenASinkThrowsOtherSinksAreStillInvoked`, `test_session_survives_key_rotation`), where the
//! code under test is named for its mechanism (`SafeAggregateSink`). For a question about how
//! the code works, a test the lexical or semantic oracle ranks gives its place in that ranking
//! to the definition it tests — found by the test naming conventions
//! ([`patina_core::role::tested_stem`]: `FooTests.cs` → `Foo`, `test_foo.py` → `foo`) as the
//! definition named so in a source file of that name — unless the ranking placed that definition
//! higher already. A test without such a subject (a fixture, a suite named for a scenario) keeps
//! its place. For a question about tests it goes the other way: a source hit brings the tests
//! named for it ([`sources_bring_their_tests`]). Release notes, which name every part of the
//! program, come after every other hit unless the question is about releases
//! ([`release_notes_last`]). Only places move: the fusion still weighs each oracle, the ranking
//! each role.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use patina_core::{FileRole, OracleId};
use patina_retrieve::fusion::Ranking;

use crate::query::oracles::{HitKey, OracleQuery};
use crate::state::repo::Repo;

/// At most this many subjects stand for one test (or tests follow one source file): a stem shared
/// by several files (one per platform, `GlobalContext.kt` in `jvmMain/`, `jsMain/`,
/// `nativeMain/`) names each of them.
const MAX_SUBJECTS: usize = 3;

/// Gives every test hit's place in the lexical and semantic rankings to the definitions it tests
/// (see the module doc). For the default oracles only: a single oracle asked for by name ranks
/// as it finds.
pub(crate) fn tests_stand_for_subjects(rankings: &mut [Ranking<HitKey>], q: &OracleQuery) {
    let mut subjects = Subjects::new(q);
    reorder(rankings, |items, i, out| {
        let (key, score) = items[i];
        let tested = subjects.of(key);
        if tested.is_empty() {
            out.push((key, score));
        }
        out.extend(tested.into_iter().map(|subject| (subject, score)));
    });
}

/// For a question about tests: every source hit of the lexical and semantic rankings is followed
/// by the tests of its file (named for it by the conventions of [`patina_core::role::tested_stem`]:
/// `session_hijacking.rb` ← `session_hijacking_spec.rb`), unless the ranking placed them higher
/// already. The words of such a question describe the behaviour, which the code's own words often
/// say better than its test's; the test is what was asked for. For the default oracles only.
pub(crate) fn sources_bring_their_tests(rankings: &mut [Ranking<HitKey>], q: &OracleQuery) {
    let mut tests = Tests::new(q);
    reorder(rankings, |items, i, out| {
        let (key, score) = items[i];
        out.push((key, score));
        // A test follows its source as the next hit would: with the next hit's score.
        let next = items.get(i + 1).map_or(score, |n| n.1);
        out.extend(tests.of(key).into_iter().map(|test| (test, next)));
    });
}

/// Release notes come after every other hit of the lexical and semantic rankings
/// ([`patina_core::role::is_changelog`]): a changelog's many sections each name a part of the
/// program in a line, so they match every question a little and would take the places of the code
/// in each oracle's list before the ranking could lower them. Not for a question about releases.
pub(crate) fn release_notes_last(rankings: &mut [Ranking<HitKey>], q: &OracleQuery) {
    let mut notes: HashMap<HitKey, bool> = HashMap::new();
    let mut is_notes = |key: HitKey| {
        *notes.entry(key).or_insert_with(|| {
            key.chunk()
                .and_then(|(ri, chunk)| q.repos[ri].chunk(chunk))
                .is_some_and(|meta| patina_core::role::is_changelog(&meta.path))
        })
    };
    for r in rankings
        .iter_mut()
        .filter(|r| matches!(r.oracle, OracleId::Lexical | OracleId::Semantic))
    {
        let (notes, rest): (Vec<_>, Vec<_>) = r.items.iter().partition(|(key, _)| is_notes(*key));
        if notes.is_empty() {
            continue;
        }
        r.items = rest.into_iter().chain(notes).collect();
    }
}

/// Rebuilds the lexical and semantic rankings hit by hit: `place(items, i, out)` puts what
/// stands at hit `i` into `out`; a key placed already keeps its first place.
fn reorder(
    rankings: &mut [Ranking<HitKey>],
    mut place: impl FnMut(&[(HitKey, f32)], usize, &mut Vec<(HitKey, f32)>),
) {
    for r in rankings
        .iter_mut()
        .filter(|r| matches!(r.oracle, OracleId::Lexical | OracleId::Semantic))
    {
        let mut placed: HashSet<HitKey> = HashSet::new();
        let mut items = Vec::with_capacity(r.items.len());
        let mut here = Vec::new();
        for i in 0..r.items.len() {
            place(&r.items, i, &mut here);
            items.extend(here.drain(..).filter(|(key, _)| placed.insert(*key)));
        }
        r.items = items;
    }
}

/// The tests of source files: per repository, each test file's first chunk by the normalized stem
/// of what it tests, built once per query.
struct Tests<'q> {
    q: &'q OracleQuery,
    by_stem: HashMap<usize, TestsByStem>,
}

impl<'q> Tests<'q> {
    fn new(q: &'q OracleQuery) -> Self {
        Tests {
            q,
            by_stem: HashMap::new(),
        }
    }

    fn of(&mut self, key: HitKey) -> Vec<HitKey> {
        let Some((ri, meta)) = hit_of_role(self.q, key, FileRole::Source) else {
            return Vec::new();
        };
        let q = self.q;
        let by_stem = self
            .by_stem
            .entry(ri)
            .or_insert_with(|| tests_by_stem(&q.repos[ri], q));
        let Some(tests) = by_stem.get(&stem_of(&meta.path)) else {
            return Vec::new();
        };
        let found = nearest(&meta.path, tests.iter().map(|(p, c)| (p, *c)));
        found
            .into_iter()
            .take(MAX_SUBJECTS)
            .map(|(_, chunk)| HitKey::Chunk { repo: ri, chunk })
            .collect()
    }
}

/// The chunk behind `key` with its repository's index, when its file has `role`.
fn hit_of_role(
    q: &OracleQuery,
    key: HitKey,
    role: FileRole,
) -> Option<(usize, patina_core::ChunkMeta)> {
    let (ri, chunk) = key.chunk()?;
    let meta = q.repos[ri].chunk(chunk)?;
    (meta.role() == role).then_some((ri, meta))
}

/// `files` (path, chunk) with how many folder names each shares with `anchor`, those sharing
/// most first, then by path.
fn nearest<'a>(
    anchor: &str,
    files: impl Iterator<Item = (&'a Arc<str>, u64)>,
) -> Vec<(usize, u64)> {
    let anchor_dirs: HashSet<&str> = folders(anchor).collect();
    let mut found: Vec<(usize, &Arc<str>, u64)> = files
        .map(|(path, chunk)| {
            let shared = folders(path).filter(|d| anchor_dirs.contains(d)).count();
            (shared, path, chunk)
        })
        .collect();
    found.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
    found.into_iter().map(|(n, _, c)| (n, c)).collect()
}

/// Test files (path, first chunk) by the normalized stem of what they test.
type TestsByStem = HashMap<String, Vec<(Arc<str>, u64)>>;

/// A repository's test files by the normalized stem they test, each with its first chunk. Only
/// files whose lowercased name could follow a test convention are read.
fn tests_by_stem(repo: &Arc<Repo>, q: &OracleQuery) -> TestsByStem {
    let mut out = TestsByStem::new();
    for f in repo.symbols().files() {
        let maybe = ["test", "spec", "suite"]
            .iter()
            .any(|w| f.file_name.contains(w))
            || f.file_name.ends_with(".bats")
            || f.path.contains("__tests__/");
        if !maybe {
            continue;
        }
        let Some(meta) = repo.chunk(f.chunk_id) else {
            continue;
        };
        if meta.role() != FileRole::Test || q.filter.as_ref().is_some_and(|f| !f.allows(&meta)) {
            continue;
        }
        if let Some(stem) = patina_core::role::tested_stem(&meta.path) {
            out.entry(patina_index::symbols::normalize(stem))
                .or_default()
                .push((meta.path.clone(), f.chunk_id));
        }
    }
    out
}

/// The subjects of test chunks, looked up once per test file.
struct Subjects<'q> {
    q: &'q OracleQuery,
    by_file: HashMap<(usize, Arc<str>), Vec<HitKey>>,
    /// Per repository: each file's first chunk by the file's stem (normalized), built once per
    /// query, and only when a subject names no definition (one pass over the files, not one per
    /// test file).
    stems: HashMap<usize, HashMap<String, Vec<u64>>>,
}

impl<'q> Subjects<'q> {
    fn new(q: &'q OracleQuery) -> Self {
        Subjects {
            q,
            by_file: HashMap::new(),
            stems: HashMap::new(),
        }
    }

    fn of(&mut self, key: HitKey) -> Vec<HitKey> {
        let Some((ri, meta)) = hit_of_role(self.q, key, FileRole::Test) else {
            return Vec::new();
        };
        let repo = &self.q.repos[ri];
        let q = self.q;
        let stems = &mut self.stems;
        self.by_file
            .entry((ri, meta.path.clone()))
            .or_insert_with(|| subjects_of(repo, ri, &meta.path, q, stems))
            .clone()
    }
}

/// The definitions the test file `test_path` tests: in each source file whose stem is spelled
/// like the test's subject (style-insensitive: `session_store` finds `SessionStore.kt`), the
/// top-level definition named so, else the file's first chunk; the files whose folders share
/// most with the test's first. Where no file defines the name, the name is all there is to go
/// by: two files of that stem sharing as many folders with the test are both as likely, and
/// neither is its subject (`tests/test_blueprints.py` beside `flask/blueprints.py` and
/// `flask/sansio/blueprints.py`).
fn subjects_of(
    repo: &Arc<Repo>,
    ri: usize,
    test_path: &str,
    q: &OracleQuery,
    stems: &mut HashMap<usize, HashMap<String, Vec<u64>>>,
) -> Vec<HitKey> {
    use patina_index::symbols::normalize;
    let Some(stem) = patina_core::role::tested_stem(test_path) else {
        return Vec::new();
    };
    let want = normalize(stem);
    let usable = |meta: &patina_core::ChunkMeta| {
        meta.role() == FileRole::Source && q.filter.as_ref().is_none_or(|f| f.allows(meta))
    };
    let symbols = repo.symbols();
    // Per file: (is a nested definition, first line, chunk): a class before its constructor.
    let mut best: HashMap<Arc<str>, (bool, u32, u64)> = HashMap::new();
    for s in symbols.same_words(stem) {
        let Some(meta) = repo.chunk(s.chunk_id) else {
            continue;
        };
        if stem_of(&meta.path) != want || !usable(&meta) {
            continue;
        }
        let rank = (meta.parent.is_some(), meta.start_line, s.chunk_id);
        let slot = best.entry(meta.path.clone()).or_insert(rank);
        if rank < *slot {
            *slot = rank;
        }
    }
    let by_name = !best.is_empty();
    if !by_name {
        let files = stems.entry(ri).or_insert_with(|| symbols.files_by_stem());
        for &chunk in files.get(&want).map_or(&[][..], Vec::as_slice) {
            if let Some(meta) = repo.chunk(chunk).filter(|m| usable(m)) {
                best.insert(meta.path.clone(), (false, meta.start_line, chunk));
            }
        }
    }
    let found = nearest(
        test_path,
        best.iter().map(|(path, &(_, _, chunk))| (path, chunk)),
    );
    if !by_name && found.len() > 1 && found[0].0 == found[1].0 {
        return Vec::new();
    }
    found
        .into_iter()
        .take(MAX_SUBJECTS)
        .map(|(_, chunk)| HitKey::Chunk { repo: ri, chunk })
        .collect()
}

/// A file's stem (its name up to the first dot), style-insensitive: `SafeAggregateSink.cs` and
/// `safe_aggregate_sink.rb` → `safeaggregatesink`.
fn stem_of(path: &str) -> String {
    let name = path.rsplit('/').next().unwrap_or(path);
    patina_index::symbols::normalize(name.split('.').next().unwrap_or(name))
}

/// The folder names of a path (`src`, `Core`).
fn folders(path: &str) -> impl Iterator<Item = &str> {
    let dirs = path.rsplit_once('/').map_or("", |(d, _)| d);
    dirs.split('/').filter(|d| !d.is_empty())
}
