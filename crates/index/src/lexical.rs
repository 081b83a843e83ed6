//! The on-disk tantivy index behind the lexical oracle: one index per repository, one document per
//! chunk, tokenised with [`CodeTokenizer`] and scored with BM25 over
//! weighted fields (symbol and path above body). Documents carry only the chunk id; metadata and
//! text live in the store.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::{Context, Result};
use tantivy::collector::{FilterCollector, TopDocs};
use tantivy::query::Bm25StatisticsProvider;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query, TermQuery};
use tantivy::schema::{
    FAST, Field, INDEXED, IndexRecordOption, STRING, Schema, TextFieldIndexing, TextOptions,
};
use tantivy::{
    DocSet, Index, IndexReader, IndexWriter, ReloadPolicy, Searcher, TERMINATED, TantivyDocument,
    Term, doc,
};

use super::tokens::CodeTokenizer;

const TOKENIZER: &str = "code";
const WRITER_HEAP: usize = 64 * 1024 * 1024;
/// tantivy's own minimum per indexing thread.
const WRITER_HEAP_MIN: usize = 15_000_000;

#[derive(Clone, Copy)]
pub struct Fields {
    chunk_id: Field,
    path_key: Field,
    path: Field,
    symbol: Field,
    body: Field,
}

/// Field boosts. A symbol name also occurs in its chunk's body, so a name match scores in both
/// fields and always outranks the same match in a body alone; and because BM25 normalises by field
/// length, a one-word symbol field already scores a match highly. Larger boosts let any chunk
/// *named* after one query word drown the chunks that match the whole question: on CoSQA,
/// symbol/path boosts of 3/2 scored MRR@10 0.249, 0.4/0.4 score 0.337 (body only: 0.323).
const SYMBOL_BOOST: f32 = 0.4;
const PATH_BOOST: f32 = 0.4;
const BODY_BOOST: f32 = 1.0;

pub struct LexicalIndex {
    index: Index,
    reader: IndexReader,
    fields: Fields,
    /// Indexing heap of the next writer, in bytes (tantivy's minimum is 15 MB).
    writer_heap: AtomicUsize,
    /// Live documents' field lengths of the last searcher generation asked ([`AliveStats`]).
    lengths: std::sync::Mutex<Option<(u64, FieldLengths)>>,
}

/// Summed lengths of the live documents per field, as BM25 reads them.
#[derive(Clone, Copy, Default)]
struct FieldLengths {
    path: u64,
    symbol: u64,
    body: u64,
}

/// One chunk as the lexical index sees it.
pub struct LexicalDoc<'a> {
    pub chunk_id: u64,
    pub path: &'a str,
    pub symbol: &'a str,
    pub body: &'a str,
}

impl LexicalIndex {
    pub fn open(dir: &Path) -> Result<LexicalIndex> {
        std::fs::create_dir_all(dir)?;
        let (schema, fields) = schema();
        let directory = tantivy::directory::MmapDirectory::open(dir)
            .with_context(|| format!("opening the lexical index at {}", dir.display()))?;
        let index = Index::open_or_create(directory, schema)
            .with_context(|| format!("opening the lexical index at {}", dir.display()))?;
        index
            .tokenizers()
            .register(TOKENIZER, CodeTokenizer::default());
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
        Ok(LexicalIndex {
            index,
            reader,
            fields,
            writer_heap: AtomicUsize::new(WRITER_HEAP),
            lengths: std::sync::Mutex::new(None),
        })
    }

    /// Bound the indexing heap of the writers opened from now on (at least tantivy's 15 MB).
    pub fn set_writer_heap(&self, bytes: usize) {
        self.writer_heap
            .store(bytes.max(WRITER_HEAP_MIN), Ordering::Relaxed);
    }

    pub fn writer(&self) -> Result<LexicalWriter> {
        let writer = self
            .index
            .writer_with_num_threads(1, self.writer_heap.load(Ordering::Relaxed))
            .context("opening the lexical index writer")?;
        Ok(LexicalWriter {
            writer,
            fields: self.fields,
        })
    }

    /// The live documents' field lengths for `searcher`'s generation, summed once per generation.
    /// Every segment is summed from its stored per-document lengths, with or without deletions, so
    /// the totals depend on which documents are live and not on how they are split in segments
    /// (tantivy keeps exact totals only per segment, deleted documents included).
    fn lengths(&self, searcher: &Searcher) -> Result<FieldLengths> {
        let generation = searcher.generation().generation_id();
        if let Some((g, l)) = *self.lengths.lock().expect("lengths lock")
            && g == generation
        {
            return Ok(l);
        }
        let f = self.fields;
        let mut out = FieldLengths::default();
        for seg in searcher.segment_readers() {
            let alive = seg.alive_bitset();
            for (field, total) in [
                (f.path, &mut out.path),
                (f.symbol, &mut out.symbol),
                (f.body, &mut out.body),
            ] {
                let norms = seg.get_fieldnorms_reader(field)?;
                for doc in 0..seg.max_doc() {
                    if alive.is_none_or(|a| a.is_alive(doc)) {
                        *total += u64::from(norms.fieldnorm(doc));
                    }
                }
            }
        }
        *self.lengths.lock().expect("lengths lock") = Some((generation, out));
        Ok(out)
    }

    /// Make committed changes visible to searches.
    pub fn reload(&self) -> Result<()> {
        self.reader.reload()?;
        Ok(())
    }

    /// The chunk id of every live document, one entry per document (a chunk indexed twice appears
    /// twice), as of the last reload. Reconciliation compares it with the chunk table.
    pub fn chunk_ids(&self) -> Result<Vec<u64>> {
        let searcher = self.reader.searcher();
        let mut out = Vec::with_capacity(searcher.num_docs() as usize);
        for seg in searcher.segment_readers() {
            let col = seg.fast_fields().u64("chunk_id")?;
            let alive = seg.alive_bitset();
            for doc in 0..seg.max_doc() {
                if alive.is_some_and(|a| !a.is_alive(doc)) {
                    continue;
                }
                if let Some(id) = col.first(doc) {
                    out.push(id);
                }
            }
        }
        Ok(out)
    }

    /// BM25 over the weighted fields for a disjunction of `terms`. `allow` filters chunk ids
    /// before ranking so that selective filters do not starve the result list.
    pub fn search(
        &self,
        terms: &[(String, f32)],
        limit: usize,
        allow: Option<Arc<dyn Fn(u64) -> bool + Send + Sync>>,
    ) -> Result<Vec<(u64, f32)>> {
        if terms.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let f = self.fields;
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for (t, weight) in terms {
            for (field, boost) in [
                (f.symbol, SYMBOL_BOOST),
                (f.path, PATH_BOOST),
                (f.body, BODY_BOOST),
            ] {
                let q = TermQuery::new(
                    Term::from_field_text(field, t),
                    IndexRecordOption::WithFreqs,
                );
                clauses.push((
                    Occur::Should,
                    Box::new(BoostQuery::new(Box::new(q), boost * weight)),
                ));
            }
        }
        let query = BooleanQuery::new(clauses);
        let searcher = self.reader.searcher();
        let stats = AliveStats {
            searcher: &searcher,
            lengths: self.lengths(&searcher)?,
            fields: self.fields,
        };
        let top = TopDocs::with_limit(limit).order_by_score();
        let docs = match allow {
            Some(allow) => {
                let pred = move |id: u64| allow(id);
                searcher.search_with_statistics_provider(
                    &query,
                    &FilterCollector::new("chunk_id".to_string(), pred, top),
                    &stats,
                )?
            }
            None => searcher.search_with_statistics_provider(&query, &top, &stats)?,
        };
        let mut out = Vec::with_capacity(docs.len());
        for (score, addr) in docs {
            let seg = searcher.segment_reader(addr.segment_ord);
            let col = seg.fast_fields().u64("chunk_id")?;
            if let Some(id) = col.first(addr.doc_id) {
                out.push((id, score));
            }
        }
        Ok(out)
    }
}

/// BM25's collection statistics over the documents alive in `searcher`. tantivy's own count a
/// deleted document until a merge drops it, so the same files would score differently by when
/// merges ran: an index that followed a hundred checkouts would rank unlike one built from
/// scratch, and one run of a benchmark unlike the next. Document frequencies: segments without
/// deletions answer from their stored counts, a segment with deletions counts the live postings
/// of each query term. Field lengths: summed over live documents once per searcher generation
/// ([`LexicalIndex::lengths`]).
struct AliveStats<'a> {
    searcher: &'a Searcher,
    lengths: FieldLengths,
    fields: Fields,
}

impl Bm25StatisticsProvider for AliveStats<'_> {
    fn total_num_tokens(&self, field: Field) -> tantivy::Result<u64> {
        let f = self.fields;
        Ok(if field == f.path {
            self.lengths.path
        } else if field == f.symbol {
            self.lengths.symbol
        } else if field == f.body {
            self.lengths.body
        } else {
            self.searcher.total_num_tokens(field)?
        })
    }

    fn total_num_docs(&self) -> tantivy::Result<u64> {
        Ok(self.searcher.num_docs())
    }

    fn doc_freq(&self, term: &Term) -> tantivy::Result<u64> {
        alive_doc_freq(self.searcher, term)
    }
}

/// The number of live documents of `searcher` that contain `term` (see [`AliveStats`]).
fn alive_doc_freq(searcher: &Searcher, term: &Term) -> tantivy::Result<u64> {
    let mut n = 0u64;
    for seg in searcher.segment_readers() {
        let inverted = seg.inverted_index(term.field())?;
        match seg.alive_bitset() {
            None => n += u64::from(inverted.doc_freq(term)?),
            Some(alive) => {
                if let Some(mut postings) =
                    inverted.read_postings(term, IndexRecordOption::Basic)?
                {
                    let mut doc = postings.doc();
                    while doc != TERMINATED {
                        n += u64::from(alive.is_alive(doc));
                        doc = postings.advance();
                    }
                }
            }
        }
    }
    Ok(n)
}

/// A long text's terms read at most this many postings per document of the index, in all.
const POSTINGS_BUDGET: f64 = 2.0;
/// The budget never goes below this many postings: small indices are read whole.
const MIN_POSTINGS_BUDGET: u64 = 20_000;
/// A long text's terms found in more than this share of the documents are left out.
const COMMON_SHARE: f64 = 0.3;

impl LexicalIndex {
    /// The `max` most informative of `terms` (with how often the query repeats each) for this
    /// index: terms it does not contain are dropped, the rest ranked by inverse document frequency
    /// times a dampened query frequency (`1 + ln tf`), which also becomes each term's weight.
    /// A long text (a bug report) thus queries with its rare, repeated words, not its first ones;
    /// terms in most documents are left out and the postings read are bounded (see
    /// `POSTINGS_BUDGET`), so the cost of a long text does not grow with its common words.
    pub fn select_terms(&self, terms: &[(String, u32)], max: usize) -> Result<Vec<(String, f32)>> {
        self.select_terms_within(terms, max, MIN_POSTINGS_BUDGET)
    }

    /// [`LexicalIndex::select_terms`] with the budget's floor given: an index smaller than it is
    /// cheap to read whole, and its words are all kept.
    fn select_terms_within(
        &self,
        terms: &[(String, u32)],
        max: usize,
        floor: u64,
    ) -> Result<Vec<(String, f32)>> {
        let searcher = self.reader.searcher();
        let n = searcher.num_docs() as f64;
        let mut scored: Vec<(String, f64, f32, u64)> = Vec::new();
        for (t, tf) in terms {
            // Live documents only, as BM25 counts them: which words a long text queries with
            // must not depend on when the index last merged.
            let df = alive_doc_freq(&searcher, &Term::from_field_text(self.fields.body, t))?
                + alive_doc_freq(&searcher, &Term::from_field_text(self.fields.path, t))?;
            if df == 0 {
                continue;
            }
            let postings = df;
            let df = (df as f64).min(n);
            let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
            let w = 1.0 + (*tf as f64).ln();
            scored.push((t.clone(), idf * w, w as f32, postings));
        }
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        // BM25's cost is the postings it reads: terms in most documents (`the`, `self`) add
        // nearly nothing to the ranking but read most of the index, so they are left out, and the
        // terms kept (most informative first) read at most `POSTINGS_BUDGET × documents` postings.
        // (When every term is that common, the most informative one is still asked for.)
        let budget = ((n * POSTINGS_BUDGET) as u64).max(floor);
        let small = (n as u64) * 2 <= floor;
        let fallback = scored.first().map(|(t, _, w, _)| (t.clone(), *w));
        let mut spent = 0u64;
        let mut out = Vec::new();
        for (t, _, w, df) in scored {
            if out.len() >= max {
                break;
            }
            if (!small && df as f64 > n * COMMON_SHARE) || (!out.is_empty() && spent + df > budget)
            {
                continue;
            }
            spent += df;
            out.push((t, w));
        }
        if out.is_empty() {
            out.extend(fallback);
        }
        Ok(out)
    }
}

/// The body field's vocabulary (query expansion reads it). Document frequencies count live
/// documents only, as BM25 does ([`AliveStats`]): a word left only in deleted documents is not
/// part of the vocabulary.
impl LexicalIndex {
    /// Terms starting with `prefix` (at most `max`, in term order) with their document frequency.
    pub fn terms_with_prefix(&self, prefix: &str, max: usize) -> Vec<(String, u64)> {
        let searcher = self.reader.searcher();
        let mut candidates: std::collections::BTreeSet<String> = Default::default();
        let mut upper = prefix.as_bytes().to_vec();
        upper.push(0xff);
        for seg in searcher.segment_readers() {
            let Ok(inverted) = seg.inverted_index(self.fields.body) else {
                continue;
            };
            let Ok(mut stream) = inverted
                .terms()
                .range()
                .ge(prefix.as_bytes())
                .lt(&upper)
                .into_stream()
            else {
                continue;
            };
            // Bounded per segment (a short prefix can start thousands of words); a word only
            // deleted documents hold can take a place here, but not one of the `max` answers.
            let mut taken = 0;
            while taken < max.saturating_mul(4) && stream.advance() {
                if let Ok(term) = std::str::from_utf8(stream.key()) {
                    candidates.insert(term.to_string());
                    taken += 1;
                }
            }
        }
        let mut found = Vec::new();
        for term in candidates {
            if found.len() >= max {
                break;
            }
            let df = alive_doc_freq(&searcher, &Term::from_field_text(self.fields.body, &term))
                .unwrap_or(0);
            if df > 0 {
                found.push((term, df));
            }
        }
        found
    }

    /// The number of live documents whose body contains `term`.
    pub fn body_doc_freq(&self, term: &str) -> u64 {
        alive_doc_freq(
            &self.reader.searcher(),
            &Term::from_field_text(self.fields.body, term),
        )
        .unwrap_or(0)
    }
}

pub struct LexicalWriter {
    writer: IndexWriter<TantivyDocument>,
    fields: Fields,
}

impl LexicalWriter {
    pub fn delete_path(&mut self, path: &str) {
        self.writer
            .delete_term(Term::from_field_text(self.fields.path_key, path));
    }

    /// Delete every document of one chunk (reconciliation: a document the chunk table does not
    /// know, or a chunk indexed twice).
    pub fn delete_chunk(&mut self, chunk_id: u64) {
        self.writer
            .delete_term(Term::from_field_u64(self.fields.chunk_id, chunk_id));
    }

    pub fn add(&mut self, d: &LexicalDoc<'_>) -> Result<()> {
        let f = self.fields;
        self.writer.add_document(doc!(
            f.chunk_id => d.chunk_id,
            f.path_key => d.path,
            f.path => d.path,
            f.symbol => d.symbol,
            f.body => d.body,
        ))?;
        Ok(())
    }

    /// Durably commit everything added or deleted so far.
    pub fn commit(&mut self) -> Result<()> {
        self.writer
            .commit()
            .context("committing the lexical index")?;
        Ok(())
    }
}

fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let text = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(TOKENIZER)
            .set_index_option(IndexRecordOption::WithFreqs),
    );
    let fields = Fields {
        chunk_id: b.add_u64_field("chunk_id", FAST | INDEXED),
        path_key: b.add_text_field("path_key", STRING),
        path: b.add_text_field("path", text.clone()),
        symbol: b.add_text_field("symbol", text.clone()),
        body: b.add_text_field("body", text),
    };
    (b.build(), fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FOUR: [&str; 4] = ["alpha", "bravo", "charlie", "delta"];
    const FIVE: [&str; 5] = ["echo", "foxtrot", "golf", "hotel", "india"];
    const SIX: [&str; 6] = ["juliet", "kilo", "lima", "mike", "november", "oscar"];

    /// 200 documents: `common` and `shared` in all, `half` in half, one word of each of FOUR,
    /// FIVE and SIX (in a quarter, a fifth, a sixth of them), and a rare `rareN` in each.
    fn index() -> (tempfile::TempDir, LexicalIndex) {
        let dir = tempfile::tempdir().unwrap();
        let index = LexicalIndex::open(dir.path()).unwrap();
        let mut w = index.writer().unwrap();
        for i in 0..200u64 {
            let n = i as usize;
            let body = format!(
                "common shared {} {} {} rare{} {}",
                FOUR[n % 4],
                FIVE[n % 5],
                SIX[n % 6],
                ["zero", "one", "two", "three", "four"][n / 40],
                if i % 2 == 0 { "half" } else { "" }
            );
            let path = format!("f{i}.rs");
            w.add(&LexicalDoc {
                chunk_id: i,
                path: &path,
                symbol: "",
                body: &body,
            })
            .unwrap();
        }
        w.commit().unwrap();
        index.reload().unwrap();
        (dir, index)
    }

    fn counted(words: &[&str], tf: u32) -> Vec<(String, u32)> {
        words.iter().map(|t| (t.to_string(), tf)).collect()
    }

    /// Words in most documents are left out of a long text's query however often it repeats
    /// them, unless nothing else is left.
    #[test]
    fn long_texts_leave_out_words_in_most_documents() {
        let (_dir, index) = index();
        let mut terms = counted(&["common", "shared", "half"], 9);
        terms.extend(counted(&["alpha", "echo"], 1));
        let selected = index.select_terms_within(&terms, 64, 0).unwrap();
        let names: Vec<&str> = selected.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(names, ["echo", "alpha"], "{selected:?}");
        // Only common words: the most informative one is still asked for.
        let only_common = index.select_terms_within(&terms[..3], 64, 0).unwrap();
        assert_eq!(only_common.len(), 1, "{only_common:?}");
        assert_eq!(only_common[0].0, "half");
    }

    /// However many mid-frequency words a long text has, the postings its query reads are
    /// bounded by twice the number of documents; the most informative words are kept.
    #[test]
    fn long_texts_read_a_bounded_number_of_postings() {
        let (_dir, index) = index();
        let words: Vec<&str> = FOUR.iter().chain(&FIVE).chain(&SIX).copied().collect();
        let selected = index
            .select_terms_within(&counted(&words, 1), 64, 0)
            .unwrap();
        let postings: u64 = selected.iter().map(|(t, _)| index.body_doc_freq(t)).sum();
        assert!(postings <= 400, "{postings} postings for {selected:?}");
        for rarest in SIX {
            assert!(
                selected.iter().any(|(t, _)| t == rarest),
                "{rarest}: {selected:?}"
            );
        }
        // A small index is read whole.
        let all = index.select_terms(&counted(&words, 1), 64).unwrap();
        assert_eq!(all.len(), words.len(), "{all:?}");
    }

    /// Deleted documents do not count in BM25's statistics: an index that deleted and re-added
    /// documents scores exactly as one built from the surviving documents alone.
    #[test]
    fn scores_do_not_depend_on_deleted_documents() {
        let docs = |w: &mut LexicalWriter, range: std::ops::Range<u64>, tag: &str| {
            for i in range {
                let body = format!("{tag} parser token{} stream", i % 7);
                let path = format!("{tag}/f{i}.rs");
                w.add(&LexicalDoc {
                    chunk_id: i,
                    path: &path,
                    symbol: "",
                    body: &body,
                })
                .unwrap();
            }
        };
        // Followed: 300 "old" documents, then a checkout deletes 250 of them and adds 100 "new"
        // ones, in a second segment beside the first (no merge has run).
        let followed_dir = tempfile::tempdir().unwrap();
        let followed = LexicalIndex::open(followed_dir.path()).unwrap();
        let mut w = followed.writer().unwrap();
        docs(&mut w, 0..300, "old");
        w.commit().unwrap();
        for i in 50..300u64 {
            w.delete_path(&format!("old/f{i}.rs"));
        }
        docs(&mut w, 300..400, "new");
        w.commit().unwrap();
        followed.reload().unwrap();
        // Fresh: only the 150 surviving documents.
        let fresh_dir = tempfile::tempdir().unwrap();
        let fresh = LexicalIndex::open(fresh_dir.path()).unwrap();
        let mut w = fresh.writer().unwrap();
        docs(&mut w, 0..50, "old");
        docs(&mut w, 300..400, "new");
        w.commit().unwrap();
        fresh.reload().unwrap();

        let q = [
            ("parser".to_string(), 1.0),
            ("token3".to_string(), 1.0),
            ("new".to_string(), 1.0),
        ];
        let a = followed.search(&q, 10, None).unwrap();
        let b = fresh.search(&q, 10, None).unwrap();
        assert_eq!(a.len(), 10);
        assert_eq!(
            a.iter().map(|h| h.0).collect::<Vec<_>>(),
            b.iter().map(|h| h.0).collect::<Vec<_>>()
        );
        for (x, y) in a.iter().zip(&b) {
            assert!((x.1 - y.1).abs() < 1e-5, "{a:?} vs {b:?}");
        }
    }
}
