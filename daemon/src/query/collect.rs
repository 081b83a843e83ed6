//! From ranked results to hits: candidates with what ranking needs, then hits at the requested
//! granularity with metadata and snippets.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use anyhow::Result;
use patina_core::{ChunkKind, FileRole, is_doc_path};
use patina_retrieve::QueryPlan;
use patina_retrieve::fusion::{Contribution, Fused};
use patina_retrieve::rank::{self, Candidate, RankOptions, Scored};

use crate::query::engine::QueryEngine;
use crate::query::oracles::HitKey;
use crate::query::request::{Granularity, HitItem, MAX_SNIPPET_LINES, SearchHit, SearchRequest};
use crate::state::repo::Repo;

impl QueryEngine {
    /// The fused results with what ranking needs: file, role, symbol, parent and lines (notes are
    /// not part of a file), whether the symbol oracle found the chunk as a re-export of a name
    /// the query names (`reexports`), and whether its file is the root of a folder the query
    /// names. Chunks that vanished since the oracles ran are dropped.
    pub(crate) fn candidates(
        &self,
        fused: Vec<Fused<HitKey>>,
        repos: &[Arc<Repo>],
        reexports: &HashSet<HitKey>,
        plan: &QueryPlan,
    ) -> Vec<Candidate<HitKey>> {
        let mut roots: HashMap<(usize, String), bool> = HashMap::new();
        let mut interfaces: HashMap<(usize, Arc<str>, String), bool> = HashMap::new();
        let mut out = Vec::with_capacity(fused.len());
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
            let module_root = *roots
                .entry((ri, meta.path.to_string()))
                .or_insert_with(|| module_root(&repos[ri], plan, &meta.path));
            let declaration = meta.kind.declares_only()
                || meta.kind == ChunkKind::Method
                    && meta.parent.as_ref().is_some_and(|parent| {
                        *interfaces
                            .entry((ri, meta.path.clone(), parent.clone()))
                            .or_insert_with(|| {
                                declared_in_interface(&repos[ri], &meta.path, parent)
                            })
                    });
            out.push(Candidate {
                reexport: reexports.contains(&f.key),
                module_root,
                key: f.key,
                fused: f.score,
                provenance: f.provenance,
                role: meta.role(),
                lines: (meta.start_line, meta.end_line),
                file: Some((ri, meta.path.to_string())),
                declaration,
                symbol: meta.symbol,
                parent: meta.parent,
            });
        }
        out
    }

    /// The ranked results as hits at the requested granularity: chunks (overlaps removed, repeats
    /// of a file decayed), files (chunk scores aggregated), session notes where they fit (not at
    /// module/repo level), or per-directory / per-repository groups. Secret files
    /// ([`patina_core::secret_reason`]) never appear.
    pub(crate) fn collect_hits(
        &self,
        scored: Vec<Scored<HitKey>>,
        repos: &[Arc<Repo>],
        req: &SearchRequest,
        limit: usize,
        opts: &RankOptions,
        fusion: &rank::FileFusion,
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
        let scored: Vec<_> = scored
            .into_iter()
            .filter(|s| {
                s.candidate.file.as_ref().is_none_or(|(_, path)| {
                    patina_core::secret_reason(path).is_none()
                        && (req.granularity != Granularity::Doc || is_doc_path(path))
                })
            })
            .collect();
        let mut hits = Vec::new();
        if matches!(req.granularity, Granularity::Module | Granularity::Repo) {
            struct Acc {
                ri: usize,
                dir: String,
                best: u64,
                score: f64,
                matches: u32,
                provenance: Vec<Contribution>,
            }
            let mut groups: Vec<Acc> = Vec::new();
            let mut index: HashMap<(usize, String), usize> = HashMap::new();
            for s in scored {
                let (Some((ri, path)), HitKey::Chunk { chunk: best, .. }) =
                    (&s.candidate.file, s.candidate.key)
                else {
                    continue;
                };
                let dir = match req.granularity {
                    Granularity::Repo => String::new(),
                    _ => path.rsplit_once('/').map_or("", |(d, _)| d).to_string(),
                };
                let at = *index.entry((*ri, dir.clone())).or_insert_with(|| {
                    groups.push(Acc {
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
            for g in groups.into_iter().take(limit) {
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
                });
            }
            return Ok(hits);
        }
        let ranked: Vec<(Scored<HitKey>, f64, Vec<Contribution>)> =
            if req.granularity == Granularity::File {
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
            };
        for (s, score, provenance) in ranked {
            let (ri, chunk_id) = match s.candidate.key {
                HitKey::Chunk { repo, chunk } => (repo, chunk),
                HitKey::Note(note_id) => {
                    let Some(note) = self.sessions.as_ref().and_then(|ss| ss.get_note(note_id))
                    else {
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
            });
        }
        Ok(hits)
    }
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
