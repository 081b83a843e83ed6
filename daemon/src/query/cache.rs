//! The query cache: a bounded LRU of request → answer, so a repeated question costs a lookup.
//!
//! An answer is served only while nothing it was computed from has changed: it carries the
//! [`Stamp`] of versions taken *before* it was computed — of every input the query pipeline
//! declares it reads (`crate::query::pipeline::inputs`: which repositories are registered,
//! session notes, and per repository in scope its index, vectors, record, history and tuned
//! settings; `crate::state::generations::Input`) — and is served only when all of them are
//! unchanged, every repository in scope is fresh (nothing pending, not indexing, no embedding
//! backlog, indexed at HEAD) and it is younger than `[cache] ttl_secs`. A change during the
//! computation therefore makes the stored answer unservable at once, and an input a stage starts
//! reading is checked as soon as the stage declares it. Answers do not depend on who asks (notes
//! of every session are searched the same way for everyone), so the request alone is the key.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::services::freshness::Freshness;
use crate::state::generations::Input;
use crate::state::repo::Repo;
use crate::state::repos::Repos;

/// The versions of the inputs an answer was computed at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Stamp {
    /// Each daemon-wide input's version.
    pub global: Vec<(Input, u64)>,
    /// (repository id, each of its inputs' versions) for every repository in the answer's scope.
    pub repos: Vec<(String, Vec<(Input, u64)>)>,
}

impl Stamp {
    /// The versions of `inputs` now: the daemon-wide ones, and each of `repos`' own (by id);
    /// `version(input, repo id)` reads one. `None` when a version cannot be read.
    pub fn take(
        inputs: &[Input],
        repos: &[&str],
        version: impl Fn(Input, Option<&str>) -> Option<u64>,
    ) -> Option<Stamp> {
        let of = |repo: Option<&str>| -> Option<Vec<(Input, u64)>> {
            inputs
                .iter()
                .filter(|i| i.per_repo() == repo.is_some())
                .map(|i| Some((*i, version(*i, repo)?)))
                .collect()
        };
        Some(Stamp {
            global: of(None)?,
            repos: repos
                .iter()
                .map(|id| Some((id.to_string(), of(Some(id))?)))
                .collect::<Option<_>>()?,
        })
    }

    /// Whether every version of the stamp is still the version `version` reads now.
    pub fn holds(&self, version: impl Fn(Input, Option<&str>) -> Option<u64>) -> bool {
        self.global
            .iter()
            .all(|(i, v)| version(*i, None) == Some(*v))
            && self.repos.iter().all(|(id, vs)| {
                vs.iter()
                    .all(|(i, v)| version(*i, Some(id.as_str())) == Some(*v))
            })
    }

    /// Keep the repositories `ids` in that order; `None` when one of them was not registered
    /// when the stamp was taken (the answer cannot be cached).
    pub fn narrow(&self, ids: &[&str]) -> Option<Stamp> {
        let repos = ids
            .iter()
            .map(|id| self.repos.iter().find(|(r, _)| r == id).cloned())
            .collect::<Option<Vec<_>>>()?;
        Some(Stamp {
            global: self.global.clone(),
            repos,
        })
    }
}

/// `input`'s version now (of the repository `id`, one of `all`, for a repository's input).
fn version_in(repos: &Repos, all: &[Arc<Repo>], input: Input, id: Option<&str>) -> Option<u64> {
    match id {
        None => repos.generations().version(input),
        Some(id) => all.iter().find(|r| r.id() == id)?.version(input),
    }
}

/// The stamp before computing an answer: the versions of every input the pipeline declares,
/// for every registered repository (narrowed to the answer's scope with [`Stamp::narrow`]).
pub(crate) fn stamp_now(repos: &Repos) -> Stamp {
    let all = repos.all();
    let ids: Vec<&str> = all.iter().map(|r| r.id()).collect();
    let inputs = crate::query::pipeline::inputs(&[]);
    Stamp::take(&inputs, &ids, |input, id| {
        version_in(repos, &all, input, id)
    })
    .expect("every registered repository has every version")
}

/// Whether an answer stamped `stamp` may be served now: no version moved and every repository
/// in scope is fresh. Then the freshness of each, in the stamp's order. Blocking (reads HEAD).
pub(crate) fn still_valid(repos: &Repos, stamp: &Stamp) -> Option<Vec<Freshness>> {
    let all = repos.all();
    if !stamp.holds(|input, id| version_in(repos, &all, input, id)) {
        return None;
    }
    stamp
        .repos
        .iter()
        .map(|(id, _)| {
            let repo = all.iter().find(|r| r.id() == id)?;
            let f = Freshness::of(repo);
            f.is_fresh().then_some(f)
        })
        .collect()
}

struct Entry<V> {
    value: V,
    stamp: Stamp,
    at: Instant,
    used: u64,
}

struct Inner<V> {
    map: HashMap<Vec<u8>, Entry<V>>,
    clock: u64,
}

/// What [`QueryCache::get`] found.
pub(crate) enum Lookup<V> {
    Hit(V),
    /// Nothing stored, or what was stored can no longer be served (dropped).
    Miss,
}

/// A bounded LRU with a TTL; validity of a stamp is decided by the caller (`valid`).
pub(crate) struct QueryCache<V> {
    inner: Mutex<Inner<V>>,
    capacity: usize,
    ttl: Duration,
}

impl<V: Clone> QueryCache<V> {
    /// `capacity` 0 turns the cache off.
    pub fn new(capacity: usize, ttl: Duration) -> QueryCache<V> {
        QueryCache {
            inner: Mutex::new(Inner {
                map: HashMap::new(),
                clock: 0,
            }),
            capacity,
            ttl,
        }
    }

    pub fn is_on(&self) -> bool {
        self.capacity > 0 && !self.ttl.is_zero()
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.inner.lock().expect("cache lock").map.len()
    }

    /// The answer stored for `key` if it is younger than the TTL and `valid` accepts its stamp
    /// (`valid` runs without the cache's lock); an entry that fails either is dropped.
    pub fn get(&self, key: &[u8], valid: impl FnOnce(&Stamp) -> bool) -> Lookup<V> {
        if !self.is_on() {
            return Lookup::Miss;
        }
        let (value, stamp) = {
            let mut inner = self.inner.lock().expect("cache lock");
            let Some(e) = inner.map.get(key) else {
                return Lookup::Miss;
            };
            if e.at.elapsed() > self.ttl {
                inner.map.remove(key);
                return Lookup::Miss;
            }
            (e.value.clone(), e.stamp.clone())
        };
        if !valid(&stamp) {
            let mut inner = self.inner.lock().expect("cache lock");
            if inner.map.get(key).is_some_and(|e| e.stamp == stamp) {
                inner.map.remove(key);
            }
            return Lookup::Miss;
        }
        let mut inner = self.inner.lock().expect("cache lock");
        inner.clock += 1;
        let clock = inner.clock;
        if let Some(e) = inner.map.get_mut(key) {
            e.used = clock;
        }
        Lookup::Hit(value)
    }

    /// Store `value` computed at `stamp`; the least recently used entry leaves when full.
    pub fn put(&self, key: Vec<u8>, value: V, stamp: Stamp) {
        if !self.is_on() {
            return;
        }
        let mut inner = self.inner.lock().expect("cache lock");
        inner.clock += 1;
        let used = inner.clock;
        if !inner.map.contains_key(&key) && inner.map.len() >= self.capacity {
            // Capacities are small (hundreds): a scan is cheaper than keeping a list in order.
            if let Some(old) = inner
                .map
                .iter()
                .min_by_key(|(_, e)| e.used)
                .map(|(k, _)| k.clone())
            {
                inner.map.remove(&old);
            }
        }
        inner.map.insert(
            key,
            Entry {
                value,
                stamp,
                at: Instant::now(),
                used,
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamp(g: u64) -> Stamp {
        Stamp {
            global: vec![(Input::Registry, g)],
            repos: vec![("r".into(), vec![(Input::Index, g)])],
        }
    }

    fn hit(c: &QueryCache<u32>, key: &str, now: &Stamp) -> Option<u32> {
        match c.get(key.as_bytes(), |s| s == now) {
            Lookup::Hit(v) => Some(v),
            Lookup::Miss => None,
        }
    }

    #[test]
    fn serves_only_at_the_stamp_it_was_computed_at() {
        let c = QueryCache::new(4, Duration::from_secs(60));
        c.put(b"q".to_vec(), 1, stamp(1));
        assert_eq!(hit(&c, "q", &stamp(1)), Some(1));
        assert_eq!(hit(&c, "other", &stamp(1)), None);
        assert_eq!(hit(&c, "q", &stamp(2)), None, "a changed generation");
        assert_eq!(c.len(), 0, "an unservable entry is dropped");
        assert_eq!(hit(&c, "q", &stamp(1)), None);
    }

    #[test]
    fn least_recently_used_leaves_first() {
        let c = QueryCache::new(2, Duration::from_secs(60));
        let s = stamp(0);
        c.put(b"a".to_vec(), 1, s.clone());
        c.put(b"b".to_vec(), 2, s.clone());
        assert_eq!(hit(&c, "a", &s), Some(1));
        c.put(b"c".to_vec(), 3, s.clone());
        assert_eq!(c.len(), 2);
        assert_eq!(hit(&c, "b", &s), None, "b was used least recently");
        assert_eq!(hit(&c, "a", &s), Some(1));
        assert_eq!(hit(&c, "c", &s), Some(3));
    }

    #[test]
    fn entries_expire_and_a_zero_capacity_is_off() {
        let c = QueryCache::new(2, Duration::from_millis(20));
        c.put(b"a".to_vec(), 1, stamp(0));
        std::thread::sleep(Duration::from_millis(40));
        assert_eq!(hit(&c, "a", &stamp(0)), None);
        let off = QueryCache::new(0, Duration::from_secs(60));
        off.put(b"a".to_vec(), 1, stamp(0));
        assert_eq!(hit(&off, "a", &stamp(0)), None);
    }

    /// A ranking input added to the pipeline (the test-only `Input::Probe`, declared as read
    /// beside every real stage and oracle) is in the stamp: when its version moves, the answer
    /// computed before is not served; an input nobody declares is not checked.
    #[test]
    fn an_input_the_pipeline_declares_invalidates_the_answers_computed_before_it_moved() {
        use crate::state::generations::Generations;
        let daemon = Generations::default();
        let version = |input: Input, repo: Option<&str>| {
            assert!(repo.is_none(), "no repository in this scope");
            daemon.version(input)
        };
        let declared = crate::query::pipeline::inputs(&[&[Input::Probe]]);
        let stamp = Stamp::take(&declared, &[], version).expect("versions");
        assert!(stamp.global.iter().any(|(i, _)| *i == Input::Probe));
        let undeclared = crate::query::pipeline::inputs(&[]);
        let blind = Stamp::take(&undeclared, &[], version).expect("versions");

        let c = QueryCache::new(4, Duration::from_secs(60));
        c.put(b"q".to_vec(), 1, stamp.clone());
        c.put(b"blind".to_vec(), 2, blind);
        let get = |key: &str| match c.get(key.as_bytes(), |s| s.holds(version)) {
            Lookup::Hit(v) => Some(v),
            Lookup::Miss => None,
        };
        assert_eq!(get("q"), Some(1), "nothing moved");
        daemon.probe_changed();
        assert_eq!(get("q"), None, "the declared input moved");
        assert_eq!(
            get("blind"),
            Some(2),
            "a stamp without the input cannot see it"
        );
        // A real input the pipeline declares: session notes.
        c.put(
            b"q".to_vec(),
            1,
            Stamp::take(&declared, &[], version).expect("versions"),
        );
        assert_eq!(get("q"), Some(1));
        daemon.notes_changed();
        assert_eq!(get("q"), None, "notes moved");
    }
}
