//! From ranked results to hits: candidates with what ranking needs, then hits at the requested
//! granularity with metadata and snippets.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use anyhow::Result;
use patina_core::meta::ChunkMeta;
use patina_core::{ChunkKind, FileRole, ModuleHalf, is_doc_path};
use patina_retrieve::QueryPlan;
use patina_retrieve::fusion::{Contribution, Fused};
use patina_retrieve::rank::{self, Candidate, Definitions, RankOptions, Scored};

use crate::query::oracles::HitKey;
use crate::query::request::{Granularity, HitItem, MAX_SNIPPET_LINES, SearchHit, SearchRequest};
use crate::services::sessions::Sessions;
use crate::state::repo::Repo;

/// The fused results with what ranking needs: file, role, symbol, parent and lines (notes are
/// not part of a file), whether the symbol oracle found the chunk as a re-export of a name
/// the query names (`reexports`), and whether its file is the root of a folder the query
/// names; and the definitions that declarations among them stand for ([`rank::hand_over`]).
/// Chunks that vanished since the oracles ran are dropped.
pub(crate) fn candidates(
    fused: Vec<Fused<HitKey>>,
    repos: &[Arc<Repo>],
    reexports: &HashSet<HitKey>,
    plan: &QueryPlan,
) -> (Vec<Candidate<HitKey>>, Definitions<HitKey>) {
    let mut roots: HashMap<(usize, String), bool> = HashMap::new();
    let mut interfaces: HashMap<(usize, Arc<str>, String), bool> = HashMap::new();
    let mut implemented: HashMap<(usize, Arc<str>, String), Option<u64>> = HashMap::new();
    let mut declares: Vec<(HitKey, usize, u64)> = Vec::new();
    let mut stands_for: Vec<(HitKey, usize, String)> = Vec::new();
    let mut out = Vec::with_capacity(fused.len());
    let mut candidate = |key: HitKey,
                         fused: f64,
                         provenance: Vec<Contribution>,
                         ri: usize,
                         meta: ChunkMeta,
                         declaration: bool| Candidate {
        reexport: reexports.contains(&key),
        module_root: *roots
            .entry((ri, meta.path.to_string()))
            .or_insert_with(|| module_root(&repos[ri], plan, &meta.path)),
        key,
        fused,
        provenance,
        role: meta.role(),
        lines: (meta.start_line, meta.end_line),
        file: Some((ri, meta.path.to_string())),
        declaration,
        symbol: meta.symbol,
        parent: meta.parent,
    };
    for f in fused {
        let HitKey::Chunk {
            repo: ri,
            chunk: chunk_id,
        } = f.key
        else {
            out.push(Candidate {
                key: f.key,
                fused: f.score,
                provenance: f.provenance,
                file: None,
                role: FileRole::Other,
                symbol: None,
                parent: None,
                lines: (0, 0),
                reexport: false,
                module_root: false,
                declaration: false,
            });
            continue;
        };
        let Some(meta) = repos[ri].chunk(chunk_id) else {
            continue;
        };
        let definition = match &meta.symbol {
            Some(symbol) if ModuleHalf::declares(&meta.path, meta.kind) => *implemented
                .entry((ri, meta.path.clone(), symbol.clone()))
                .or_insert_with(|| defined_in_implementation(&repos[ri], &meta.path, symbol)),
            _ => None,
        };
        if let Some(definition) = definition {
            declares.push((f.key, ri, definition));
        } else if meta.symbol.is_none()
            && let Some(implementation) = ModuleHalf::implementation_beside(&meta.path)
        {
            stands_for.push((f.key, ri, implementation));
        }
        let declaration = definition.is_some()
            || meta.kind.declares_only()
            || meta.kind == ChunkKind::Method
                && meta.parent.as_ref().is_some_and(|parent| {
                    *interfaces
                        .entry((ri, meta.path.clone(), parent.clone()))
                        .or_insert_with(|| declared_in_interface(&repos[ri], &meta.path, parent))
                });
        out.push(candidate(
            f.key,
            f.score,
            f.provenance,
            ri,
            meta,
            declaration,
        ));
    }
    let mut definitions = Definitions::new();
    for (declaration, ri, chunk_id) in declares {
        let key = HitKey::Chunk {
            repo: ri,
            chunk: chunk_id,
        };
        let known = out.iter().find(|c| c.key == key).cloned();
        let template = match known {
            Some(known) => known,
            None => {
                let Some(meta) = repos[ri].chunk(chunk_id) else {
                    continue;
                };
                candidate(key, 0.0, Vec::new(), ri, meta, false)
            }
        };
        definitions.insert(declaration, template);
    }
    // An `.mli`'s unnamed block (its documentation) stands for the `.ml` beside it as a whole:
    // the chunk of that file the oracles ranked best, else its first definition.
    for (declaration, ri, implementation) in stands_for {
        let best = out
            .iter()
            .filter(|c| {
                c.file
                    .as_ref()
                    .is_some_and(|(r, path)| *r == ri && *path == implementation)
            })
            .max_by(|a, b| a.fused.total_cmp(&b.fused))
            .cloned();
        let template = match best {
            Some(best) => best,
            None => {
                let Some(first) = first_definition(&repos[ri], &implementation) else {
                    continue;
                };
                let Some(meta) = repos[ri].chunk(first) else {
                    continue;
                };
                let key = HitKey::Chunk {
                    repo: ri,
                    chunk: first,
                };
                candidate(key, 0.0, Vec::new(), ri, meta, false)
            }
        };
        if let Some(block) = out.iter_mut().find(|c| c.key == declaration) {
            block.declaration = true;
        }
        definitions.insert(declaration, template);
    }
    (out, definitions)
}

/// The grouped results ([`group`]) as hits: metadata and snippets read from the store, notes
/// from their `sessions`, each ranked result with its `features` when they were computed (one per
/// result, in order). Results whose chunk vanished since are dropped.
pub(crate) fn collect_hits(
    grouped: Grouped,
    features: Vec<patina_retrieve::features::Vector>,
    repos: &[Arc<Repo>],
    req: &SearchRequest,
    sessions: Option<&Arc<Sessions>>,
    org: &[patina_team::OrgHit],
) -> Result<Vec<SearchHit>> {
    let snippet_of = |text: &str| {
        text.lines()
            .take(req.snippet_lines.min(MAX_SNIPPET_LINES))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let chunk_snippet = |repo: &Repo, chunk_id: u64| -> Result<String> {
        Ok(if req.snippet_lines > 0 {
            snippet_of(&repo.index().text(chunk_id)?.unwrap_or_default())
        } else {
            String::new()
        })
    };
    let mut hits = Vec::new();
    let ranked = match grouped {
        Grouped::Folders(groups) => {
            for g in groups {
                let repo = &repos[g.ri];
                let Some(best) = repo.chunk(g.best) else {
                    continue;
                };
                hits.push(SearchHit {
                    snippet: chunk_snippet(repo, g.best)?,
                    role: Some(best.role()),
                    item: HitItem::Group {
                        repo: repo.clone(),
                        dir: g.dir,
                        best,
                        matches: g.matches,
                    },
                    score: g.score,
                    provenance: g.provenance,
                    features: None,
                });
            }
            return Ok(hits);
        }
        Grouped::Ranked(ranked) => ranked,
    };
    let mut features = features.into_iter();
    for (s, score, provenance) in ranked {
        let features = features.next();
        let (ri, chunk_id) = match s.candidate.key {
            HitKey::Chunk { repo, chunk } => (repo, chunk),
            HitKey::Note(note_id) => {
                let Some(note) = sessions.and_then(|ss| ss.get_note(note_id)) else {
                    continue;
                };
                hits.push(SearchHit {
                    snippet: if req.snippet_lines > 0 {
                        snippet_of(&note.text)
                    } else {
                        String::new()
                    },
                    role: None,
                    item: HitItem::Note(note),
                    score,
                    provenance,
                    features,
                });
                continue;
            }
            HitKey::Org(i) => {
                let Some(found) = org.get(i as usize) else {
                    continue;
                };
                hits.push(SearchHit {
                    snippet: if req.snippet_lines > 0 {
                        snippet_of(&found.body)
                    } else {
                        String::new()
                    },
                    role: None,
                    item: HitItem::Org(found.clone()),
                    score,
                    provenance,
                    features,
                });
                continue;
            }
        };
        let repo = &repos[ri];
        let Some(meta) = repo.chunk(chunk_id) else {
            continue;
        };
        hits.push(SearchHit {
            snippet: chunk_snippet(repo, chunk_id)?,
            role: Some(meta.role()),
            item: HitItem::Chunk {
                repo: repo.clone(),
                chunk_id,
                meta,
            },
            score,
            provenance,
            features,
        });
    }
    Ok(hits)
}

/// The ranked results at a granularity, the first `limit`: chunks (overlaps removed, repeats of
/// a file decayed), files (chunk scores aggregated, [`rank::files`]), or per-directory /
/// per-repository groups.
pub(crate) enum Grouped {
    /// Chunks or files (and notes where they fit): the best chunk, the score, the provenance.
    Ranked(Vec<(Scored<HitKey>, f64, Vec<Contribution>)>),
    /// Directories or repositories (`dir` empty), best first.
    Folders(Vec<Folder>),
}

impl Grouped {
    /// The (repository index, path) of each result's best chunk, best first (none for a note).
    pub(crate) fn files(&self) -> Vec<Option<(usize, &str)>> {
        match self {
            Grouped::Ranked(r) => r
                .iter()
                .map(|(s, _, _)| s.candidate.file.as_ref().map(|(ri, p)| (*ri, p.as_str())))
                .collect(),
            Grouped::Folders(f) => f.iter().map(|g| Some((g.ri, g.dir.as_str()))).collect(),
        }
    }
}

/// One directory's (or repository's) results summed.
pub(crate) struct Folder {
    ri: usize,
    dir: String,
    best: u64,
    score: f64,
    matches: u32,
    provenance: Vec<Contribution>,
}

/// The scored results grouped at `granularity` (see [`Grouped`]), the first `limit`. Secret files
/// ([`patina_core::secret_reason`]) never appear; the documentation granularity keeps
/// documentation only. Pure: the last stage of the pipeline (`crate::query::pipeline`).
pub(crate) fn group(
    scored: Vec<Scored<HitKey>>,
    granularity: Granularity,
    limit: usize,
    opts: &RankOptions,
    fusion: &rank::FileFusion,
) -> Grouped {
    let scored: Vec<_> = scored
        .into_iter()
        .filter(|s| {
            s.candidate.file.as_ref().is_none_or(|(_, path)| {
                patina_core::secret_reason(path).is_none()
                    && (granularity != Granularity::Doc || is_doc_path(path))
            })
        })
        .collect();
    if matches!(granularity, Granularity::Module | Granularity::Repo) {
        let mut groups: Vec<Folder> = Vec::new();
        let mut index: HashMap<(usize, String), usize> = HashMap::new();
        for s in scored {
            let (Some((ri, path)), HitKey::Chunk { chunk: best, .. }) =
                (&s.candidate.file, s.candidate.key)
            else {
                continue;
            };
            let dir = match granularity {
                Granularity::Repo => String::new(),
                _ => path.rsplit_once('/').map_or("", |(d, _)| d).to_string(),
            };
            let at = *index.entry((*ri, dir.clone())).or_insert_with(|| {
                groups.push(Folder {
                    ri: *ri,
                    dir,
                    best,
                    score: 0.0,
                    matches: 0,
                    provenance: Vec::new(),
                });
                groups.len() - 1
            });
            let g = &mut groups[at];
            g.score += s.score;
            g.matches += 1;
            merge_provenance(&mut g.provenance, s.candidate.provenance);
        }
        // Stable: equal sums keep the order of their best chunks.
        groups.sort_by(|a, b| b.score.total_cmp(&a.score));
        groups.truncate(limit);
        return Grouped::Folders(groups);
    }
    Grouped::Ranked(if granularity == Granularity::File {
        rank::files(scored, opts, Some(fusion))
            .into_iter()
            .take(limit)
            .map(|f| (f.best, f.score, f.provenance))
            .collect()
    } else {
        rank::chunks(scored, opts)
            .into_iter()
            .take(limit)
            .map(|s| {
                let (score, provenance) = (s.score, s.candidate.provenance.clone());
                (s, score, provenance)
            })
            .collect()
    })
}

/// Keep each oracle's best rank.
pub(crate) fn merge_provenance(into: &mut Vec<Contribution>, from: Vec<Contribution>) {
    for c in from {
        match into.iter_mut().find(|p| p.oracle == c.oracle) {
            Some(p) if p.rank <= c.rank => {}
            Some(p) => *p = c,
            None => into.push(c),
        }
    }
}

/// Whether `path` is the root of a folder the query names ([`rank::names_module_folder`]): a
/// root by the language's convention, else by the dependency graph — the file that imports most
/// of its folder, or that most of it imports (asked only of a folder the query names). A folder
/// named as the repository is (`src/flask` of flask) is the project itself, which questions name
/// without asking about its root ("how does the flask command find the app": `cli.py`, not
/// `app.py`, which imports most of `src/flask`). Only a question asks how a folder works: a
/// report or a commit's "sync: fix racy access …" names folders on its way to one of their files.
/// The chunk of the implementation half of `path`'s module (the file of the same stem: `.m` for
/// a `.h`, `.ml` for an `.mli`) that defines `symbol`, which the interface half declares. `None`
/// when that file defines no such name, or no such file is indexed.
fn defined_in_implementation(repo: &Arc<Repo>, path: &str, symbol: &str) -> Option<u64> {
    let stem = ModuleHalf::stem(path);
    let name = symbol.to_lowercase();
    repo.symbols()
        .named(&name)
        .filter_map(|s| repo.chunk(s.chunk_id).map(|m| (s.chunk_id, m)))
        .filter(|(_, m)| {
            ModuleHalf::of(&m.path) == Some(ModuleHalf::Implementation)
                && ModuleHalf::stem(&m.path) == stem
                && !m.kind.declares_only()
        })
        .map(|(id, m)| (m.start_line, id))
        .min()
        .map(|(_, id)| id)
}

/// The first named chunk of the file at `path` (else its first chunk); `None` when the file has
/// no chunks or the graph of a large repository is not built yet.
fn first_definition(repo: &Arc<Repo>, path: &str) -> Option<u64> {
    let graph = crate::state::repo::graph_for_query(repo)?;
    let chunks = graph.chunks_in(path);
    chunks
        .iter()
        .find(|d| !d.symbol.is_empty())
        .or_else(|| chunks.first())
        .map(|d| d.chunk_id)
}

/// Whether `parent`, the container of a method in the file at `path`, is an interface of that file
/// (a C#/Java/PHP/Kotlin interface, a Swift protocol): its members declare what implementations
/// do — in their doc comments, often in the question's words — and do none of it.
fn declared_in_interface(repo: &Arc<Repo>, path: &str, parent: &str) -> bool {
    let name = parent.rsplit("::").next().unwrap_or(parent).to_lowercase();
    repo.symbols().named(&name).any(|s| {
        repo.chunk(s.chunk_id)
            .is_some_and(|m| m.kind == ChunkKind::Interface && *m.path == *path)
    })
}

fn module_root(repo: &Arc<Repo>, plan: &QueryPlan, path: &str) -> bool {
    if !plan.question {
        return false;
    }
    let project = rank::module_folder(path)
        .is_some_and(|f| rank::normalize(f) == rank::normalize(&repo.record().name));
    !project
        && rank::names_module_folder(plan, path)
        && (patina_index::graph::conventional_root(path)
            || crate::state::repo::graph_for_query(repo).is_some_and(|g| g.ties_its_folder(path)))
}
