//! The lexical oracle: BM25 over code-aware tokens (see `index::lexical`).

use std::sync::Arc;

use anyhow::Result;
use patina_embed::Lexicon;
use patina_index::lexical::LexicalIndex;
use patina_retrieve::{Intent, QueryPlan, expand};

use crate::state::repo::Repo;

use patina_core::OracleId;

use super::{Oracle, OracleHit, OracleQuery, merge_by_score};
use patina_core::tokens::{for_each_token, query_terms};

/// Queries longer than this many distinct terms are cut: beyond it BM25 only gets slower.
const MAX_TERMS: usize = 64;

/// Every distinct token of a long text with how often it occurs (stop words included: their low
/// inverse document frequency ranks them out).
pub(crate) fn counted_terms(text: &str) -> Vec<(String, u32)> {
    let mut counts: std::collections::HashMap<String, u32> = std::collections::HashMap::new();
    let mut order = Vec::new();
    for_each_token(text, |_, _, t| {
        // Line numbers, addresses and hashes from traces and logs are rare but say nothing.
        if t.len() < 2 || t.chars().all(|c| c.is_ascii_digit()) {
            return;
        }
        let c = counts.entry(t.to_string()).or_insert_with(|| {
            order.push(t.to_string());
            0
        });
        *c += 1;
    });
    order
        .into_iter()
        .map(|t| {
            let c = counts[&t];
            (t, c)
        })
        .collect()
}

/// A repository's lexical vocabulary as query expansion reads it.
struct Vocab<'a>(&'a LexicalIndex);

impl expand::Vocabulary for Vocab<'_> {
    fn with_prefix(&self, prefix: &str, max: usize) -> Vec<(String, u64)> {
        self.0.terms_with_prefix(prefix, max)
    }
    fn doc_freq(&self, term: &str) -> u64 {
        self.0.body_doc_freq(term)
    }
}

/// The plan of `text` as the oracles read it: with expansion on, its misspelt words read as the
/// code's words ([`corrections`]); and the notice that says so, if any.
pub(crate) fn plan(
    text: &str,
    repos: &[Arc<Repo>],
    expand: bool,
    lexicon: Option<&Lexicon>,
) -> (QueryPlan, Option<String>) {
    let mut plan = QueryPlan::analyze(text);
    if !expand {
        return (plan, None);
    }
    let fixes = corrections(&plan, repos, lexicon);
    let notice = (!fixes.is_empty()).then(|| {
        let read: Vec<String> = fixes
            .iter()
            .map(|(typed, meant)| format!("'{typed}' as '{meant}'"))
            .collect();
        format!("read {}", read.join(", "))
    });
    plan.correct(fixes);
    (plan, notice)
}

/// The misspelt words of a short question, each with the word the searched repositories' code
/// uses one edit away (`arguements` -> `arguments`; see [`expand::correction`]). Only with an
/// English lexicon (the model's): without one, an English word the code never uses cannot be told
/// from a typo.
fn corrections(
    plan: &QueryPlan,
    repos: &[Arc<Repo>],
    lexicon: Option<&Lexicon>,
) -> Vec<(String, String)> {
    let Some(lexicon) = lexicon else {
        return Vec::new();
    };
    let words = plan.correctable_words();
    if words.is_empty() {
        return Vec::new();
    }
    let vocabs: Vec<Vocab<'_>> = repos.iter().map(|r| Vocab(r.lexical())).collect();
    let vocabs: Vec<&dyn expand::Vocabulary> = vocabs
        .iter()
        .map(|v| v as &dyn expand::Vocabulary)
        .collect();
    expand::corrections(&words, &vocabs, &|w| lexicon.contains(w))
}

/// `terms` plus the index's variants of the question's plain `words` and of the corrections of
/// its misspelt words, at a lower weight.
fn with_variants(
    terms: &[(String, f32)],
    words: &[String],
    corrections: &[(String, String)],
    vocab: &dyn expand::Vocabulary,
) -> Vec<(String, f32)> {
    let mut out = terms.to_vec();
    let typed: Vec<String> = terms.iter().map(|(t, _)| t.clone()).collect();
    for w in words.iter().chain(corrections.iter().map(|(_, m)| m)) {
        for v in expand::variants(w, vocab, &typed) {
            if out.len() < MAX_TERMS && !out.iter().any(|(t, _)| *t == v) {
                out.push((v, expand::VARIANT_WEIGHT));
            }
        }
    }
    out
}

/// The lexical tokens of a question's scope words (`python3` -> `python3`, `python`, `3`).
fn scope_tokens(words: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for w in words {
        patina_core::tokens::for_each_token(w, |_, _, t| out.push(t.to_string()));
    }
    out
}

pub(crate) struct LexicalOracle;

impl Oracle for LexicalOracle {
    fn id(&self) -> OracleId {
        OracleId::Lexical
    }

    fn search(&self, q: &OracleQuery) -> Result<Vec<OracleHit>> {
        // A short query uses all its terms; a long text its most informative ones, per index.
        let counted = (q.plan.long).then(|| counted_terms(&q.text));
        let short: Vec<(String, f32)> = if counted.is_none() {
            // The language a question is asked in names no word of the code ("python check if
            // a variable is iterable": `python` would match docstrings that mention Python).
            let scope = scope_tokens(&q.plan.scope_words);
            let mut terms: Vec<(String, f32)> = query_terms(&q.text, MAX_TERMS + scope.len())
                .into_iter()
                .filter(|t| !scope.contains(t))
                .take(MAX_TERMS)
                .map(|t| (t, 1.0))
                .collect();
            // A misspelt word's correction is searched as if typed.
            for (_, meant) in &q.plan.corrections {
                if !terms.iter().any(|(t, _)| t == meant) {
                    terms.push((meant.clone(), 1.0));
                }
            }
            terms
        } else {
            Vec::new()
        };
        // Questions in words also match the code's inflections and abbreviations of those words
        // (`generated` -> `generate`, `configuration` -> `config`); identifiers stay exact.
        let expand = q.expand && counted.is_none() && q.plan.intent != Intent::Identifier;
        let words = if expand {
            expand::words(&q.text, &q.plan.content_words)
        } else {
            Vec::new()
        };
        let mut hits = Vec::new();
        for (i, repo) in q.repos.iter().enumerate() {
            let allow = q
                .filter
                .as_ref()
                .map(|f| repo.with_chunks(|c| f.allowed_chunks(c)));
            let selected;
            let mut expanded;
            let terms = match &counted {
                Some(c) => {
                    selected = repo.lexical().select_terms(c, MAX_TERMS)?;
                    &selected
                }
                None if expand => {
                    let vocab = Vocab(repo.lexical());
                    expanded = with_variants(&short, &words, &q.plan.corrections, &vocab);
                    // Neighbouring words as the code glues them (`file name` -> `filename`): a
                    // form of the typed words, weighed as their other variants are.
                    for c in expand::compounds(&q.text, &vocab) {
                        if expanded.len() < MAX_TERMS && !expanded.iter().any(|(t, _)| *t == c) {
                            expanded.push((c, expand::VARIANT_WEIGHT));
                        }
                    }
                    &expanded
                }
                None => &short,
            };
            for (chunk_id, score) in repo.lexical().search(terms, q.limit, allow)? {
                hits.push(OracleHit::chunk(i, chunk_id, score));
            }
        }
        Ok(merge_by_score(hits, q.limit))
    }
}
