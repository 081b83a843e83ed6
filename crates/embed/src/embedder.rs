//! The ONNX session + tokenizer pair behind [`Embedder`].

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{Result, anyhow, bail, ensure};
use ort::environment::Environment;
use ort::session::{Session, SessionInputValue};
use ort::value::Tensor;

use super::wordpiece::WordPiece;
use super::{DEFAULT_ATTENTION_BUDGET, DEFAULT_MAX_BATCH, DIM, MAX_TOKENS, ModelPaths, Precision};

/// Inputs longer than this many bytes are cut (at a char boundary) before tokenising. Truncation at
/// [`MAX_TOKENS`] only happens after the whole text is tokenised, so without the cut a multi-megabyte blob
/// costs time proportional to its size. 256 bytes per token is far beyond real text (WordPiece turns any
/// word over 100 chars into a single `[UNK]`), so the first `MAX_TOKENS` tokens are unaffected in practice.
const MAX_INPUT_BYTES: usize = MAX_TOKENS * 256;

/// Model inputs, in the order the graph declares them (`token_type_ids` is optional).
const INPUT_IDS: &str = "input_ids";
const ATTENTION_MASK: &str = "attention_mask";
const TOKEN_TYPE_IDS: &str = "token_type_ids";
const OUTPUT: &str = "last_hidden_state";

/// all-MiniLM-L6-v2 behind one ONNX Runtime session. `Send + Sync`; calls to [`Embedder::embed`] on the same
/// value are serialised on the session.
pub struct Embedder {
    session: Mutex<Session>,
    tokenizer: WordPiece,
    /// Which optional inputs the graph takes (`token_type_ids`).
    takes_type_ids: bool,
    pad_id: i64,
    precision: Precision,
    max_batch: usize,
    /// Largest `texts × longest²` (tokens) one `session.run` may take: see [`batches`].
    attention_budget: usize,
    embedded: AtomicU64,
}

/// Consecutive ranges of `lengths` (token counts, ascending) that make the batches: each at most
/// `max_batch` long, and each within `budget` of `texts × longest²` unless it is a single text.
pub(crate) fn batches(
    lengths: &[usize],
    max_batch: usize,
    budget: usize,
) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, &len) in lengths.iter().enumerate() {
        let n = i - start + 1;
        // Ascending: the text being added is the batch's longest.
        if n > 1 && (n > max_batch.max(1) || n.saturating_mul(len.saturating_mul(len)) > budget) {
            out.push(start..i);
            start = i;
        }
    }
    if start < lengths.len() {
        out.push(start..lengths.len());
    }
    out
}

// `Embedder` is shared across the daemon's threads; fail the build, not a caller, if a dependency changes that.
const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Embedder>();
};

/// The process-wide ORT environment. ort allows one per process and loads the library once, so the first
/// successful [`Embedder::load`] fixes the library path; failures are not cached (installing the model later
/// and retrying works without a restart).
static ORT_ENV: Mutex<Option<(Environment, PathBuf)>> = Mutex::new(None);

fn ort_environment(lib: &Path) -> Result<Environment> {
    let mut slot = ORT_ENV.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((env, loaded)) = slot.as_ref() {
        if loaded != lib {
            tracing::warn!(
                requested = %lib.display(),
                loaded = %loaded.display(),
                "ONNX Runtime is already loaded in this process; ignoring the other library path"
            );
        }
        return Ok(env.clone());
    }
    let env = ort::init_from(lib)
        .map_err(|e| anyhow!("cannot load ONNX Runtime from {}: {e}", lib.display()))?
        .with_name("patina")
        .with_telemetry(false)
        .build()
        .map_err(|e| anyhow!("cannot create the ONNX Runtime environment: {e}"))?;
    *slot = Some((env.clone(), lib.to_path_buf()));
    Ok(env)
}

impl Embedder {
    /// Load the ONNX runtime (once per process, from `paths.ort_lib`), the tokenizer (truncation
    /// [`MAX_TOKENS`], batch-longest padding) and one session with `threads` intra-op threads (0 = ORT's
    /// default, one per core) and spinning off.
    pub fn load(paths: &ModelPaths, precision: Precision, threads: usize) -> Result<Embedder> {
        Embedder::load_with(paths, precision, threads, true)
    }

    /// [`Embedder::load`], choosing whether ONNX Runtime keeps a CPU memory arena. With the arena
    /// (ORT's default) the largest batch's working memory stays reserved for the session's
    /// lifetime; without it (and without memory-pattern planning) every run allocates and frees
    /// through the process allocator, so memory follows the work — for a long-lived daemon.
    pub fn load_with(
        paths: &ModelPaths,
        precision: Precision,
        threads: usize,
        arena: bool,
    ) -> Result<Embedder> {
        if let Some(why) = paths.missing() {
            bail!(why);
        }
        let tokenizer = WordPiece::from_file(&paths.tokenizer_file())?;
        let pad_id = i64::from(tokenizer.pad_id());

        let env = ort_environment(&paths.ort_lib)?;
        let model_file = paths.model_file(precision);
        // Session-builder errors carry the (non-Send) builder for recovery; convert inside the closure.
        let session = (|| -> ort::Result<Session> {
            Session::builder(&env)?
                .with_execution_providers([ort::ep::CPU::default()
                    .with_arena_allocator(arena)
                    .build()])?
                .with_memory_pattern(arena)?
                .with_intra_threads(threads)?
                .with_inter_threads(1)?
                .with_intra_op_spinning(false)?
                .with_inter_op_spinning(false)?
                .commit_from_file(&model_file)
        })()
        .map_err(|e| anyhow!("cannot load {}: {e}", model_file.display()))?;

        let names: Vec<&str> = session.inputs().iter().map(|i| i.name()).collect();
        for required in [INPUT_IDS, ATTENTION_MASK] {
            ensure!(
                names.contains(&required),
                "{} has no `{required}` input (inputs: {names:?})",
                model_file.display()
            );
        }
        let takes_type_ids = names.contains(&TOKEN_TYPE_IDS);
        ensure!(
            session.outputs().iter().any(|o| o.name() == OUTPUT),
            "{} has no `{OUTPUT}` output",
            model_file.display()
        );

        Ok(Embedder {
            session: Mutex::new(session),
            tokenizer,
            takes_type_ids,
            pad_id,
            precision,
            max_batch: DEFAULT_MAX_BATCH,
            attention_budget: DEFAULT_ATTENTION_BUDGET,
            embedded: AtomicU64::new(0),
        })
    }

    /// At most `n` texts per `session.run` (clamped to ≥ 1). Small batches keep padding waste and peak memory
    /// low; on CPU, larger batches barely raise throughput.
    pub fn with_max_batch(mut self, n: usize) -> Embedder {
        self.max_batch = n.max(1);
        self
    }

    pub fn precision(&self) -> Precision {
        self.precision
    }

    /// At most `tokens` of `texts × longest²` per `session.run` ([`batches`]; clamped so one text of
    /// [`MAX_TOKENS`] always fits).
    pub fn with_attention_budget(mut self, tokens: usize) -> Embedder {
        self.attention_budget = tokens.max(MAX_TOKENS * MAX_TOKENS);
        self
    }

    /// L2-normalised mean-pooled embeddings, one per text, in input order. Texts are tokenised, sorted by token
    /// count and run in batches of at most `max_batch` similar-length texts, fewer where they are long
    /// ([`batches`]). Empty input → empty output. Any
    /// UTF-8 is accepted: `""` embeds `[CLS] [SEP]`; long texts are truncated at [`MAX_TOKENS`] tokens.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<[f32; DIM]>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let encoded = texts
            .iter()
            .map(|t| self.tokenize(t))
            .collect::<Result<Vec<_>>>()?;

        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| encoded[i].ids.len());

        let mut out = vec![[0f32; DIM]; texts.len()];
        let lengths: Vec<usize> = order.iter().map(|&i| encoded[i].ids.len()).collect();
        for range in batches(&lengths, self.max_batch, self.attention_budget) {
            let batch = &order[range];
            let rows: Vec<&Encoded> = batch.iter().map(|&i| &encoded[i]).collect();
            let vectors = self.run_batch(&rows)?;
            for (&i, v) in batch.iter().zip(vectors) {
                out[i] = v;
            }
        }
        self.embedded
            .fetch_add(texts.len() as u64, Ordering::Relaxed);
        Ok(out)
    }

    /// Tokens `text` becomes, `[CLS]`/`[SEP]` included, after truncation at [`MAX_TOKENS`]: a count equal to
    /// `MAX_TOKENS` means the tail of the text did not reach the embedding.
    /// The whole words of this model's vocabulary ([`crate::Lexicon`]).
    pub fn lexicon(&self) -> crate::Lexicon {
        crate::Lexicon::of(&self.tokenizer)
    }

    pub fn token_count(&self, text: &str) -> Result<usize> {
        Ok(self.tokenize(text)?.ids.len())
    }

    /// Number of texts embedded (successful [`Embedder::embed`] calls, counted per text) since load.
    pub fn texts_embedded(&self) -> u64 {
        self.embedded.load(Ordering::Relaxed)
    }

    fn tokenize(&self, text: &str) -> Result<Encoded> {
        let text = cut_at_char_boundary(text, MAX_INPUT_BYTES);
        // One sequence, so every type id is 0; padding happens in `run_batch`.
        let ids: Vec<i64> = self
            .tokenizer
            .encode(text, true, MAX_TOKENS)
            .into_iter()
            .map(i64::from)
            .collect();
        let type_ids = vec![0; ids.len()];
        debug_assert!(ids.len() <= MAX_TOKENS);
        Ok(Encoded { ids, type_ids })
    }

    /// One `session.run` over `rows`, padded to the longest; returns one unit vector per row.
    fn run_batch(&self, rows: &[&Encoded]) -> Result<Vec<[f32; DIM]>> {
        let b = rows.len();
        // Never 0: the tokenizer always adds [CLS] and [SEP]. Guard anyway so a broken tokenizer file cannot
        // produce a zero-length tensor.
        let seq = rows.iter().map(|r| r.ids.len()).max().unwrap_or(0).max(1);
        let mut ids = vec![self.pad_id; b * seq];
        let mut mask = vec![0i64; b * seq];
        let mut types = vec![0i64; b * seq];
        for (r, row) in rows.iter().enumerate() {
            let base = r * seq;
            ids[base..base + row.ids.len()].copy_from_slice(&row.ids);
            mask[base..base + row.ids.len()].fill(1);
            types[base..base + row.type_ids.len()].copy_from_slice(&row.type_ids);
        }

        let tensor = |data: Vec<i64>| -> Result<SessionInputValue<'static>> {
            Ok(Tensor::from_array(([b, seq], data))
                .map_err(|e| anyhow!("building an input tensor: {e}"))?
                .into())
        };
        let mut inputs: Vec<(Cow<'static, str>, SessionInputValue<'static>)> = vec![
            (INPUT_IDS.into(), tensor(ids)?),
            (ATTENTION_MASK.into(), tensor(mask.clone())?),
        ];
        if self.takes_type_ids {
            inputs.push((TOKEN_TYPE_IDS.into(), tensor(types)?));
        }

        let mut session = self.session.lock().unwrap_or_else(|p| p.into_inner());
        let outputs = session
            .run(inputs)
            .map_err(|e| anyhow!("running the embedding model on {b} texts × {seq} tokens: {e}"))?;
        let (shape, hidden) = outputs[OUTPUT]
            .try_extract_tensor::<f32>()
            .map_err(|e| anyhow!("reading `{OUTPUT}`: {e}"))?;
        let expected = [b as i64, seq as i64, DIM as i64];
        if **shape != expected {
            bail!("`{OUTPUT}` has shape {:?}, expected {expected:?}", &**shape);
        }

        // Mean over unmasked tokens, then L2-normalise. The 1/count factor cancels in the normalisation, so
        // only the masked sum is computed.
        let mut vectors = Vec::with_capacity(b);
        for r in 0..b {
            let mut acc = [0f32; DIM];
            for t in 0..seq {
                if mask[r * seq + t] == 0 {
                    continue;
                }
                let at = (r * seq + t) * DIM;
                for (a, h) in acc.iter_mut().zip(&hidden[at..at + DIM]) {
                    *a += h;
                }
            }
            normalise(&mut acc);
            vectors.push(acc);
        }
        Ok(vectors)
    }
}

/// One tokenised text, unpadded.
struct Encoded {
    ids: Vec<i64>,
    type_ids: Vec<i64>,
}

/// The longest prefix of `s` of at most `max` bytes that ends on a char boundary.
fn cut_at_char_boundary(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Scale to unit length (like `torch.nn.functional.normalize`, eps 1e-12). A non-finite result — which a sane
/// model never produces — becomes the zero vector rather than poisoning every cosine downstream.
fn normalise(v: &mut [f32; DIM]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
    for x in v.iter_mut() {
        *x /= norm;
    }
    if v.iter().any(|x| !x.is_finite()) {
        v.fill(0.0);
    }
}

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn cut_respects_char_boundaries() {
        let s = "é".repeat(10); // 2 bytes each
        assert_eq!(cut_at_char_boundary(&s, 5), "éé");
        assert_eq!(cut_at_char_boundary(&s, 100), s);
        assert_eq!(cut_at_char_boundary("", 0), "");
    }
}

#[cfg(test)]
mod batch_tests {
    use super::batches;

    #[test]
    fn short_texts_fill_whole_batches() {
        let lengths = vec![20; 40];
        assert_eq!(batches(&lengths, 16, 262_144), vec![0..16, 16..32, 32..40]);
    }

    #[test]
    fn long_texts_go_fewer_to_a_batch() {
        // 16 × 128² is the budget: texts of 256 tokens go four to a batch, of 128 sixteen.
        let mut lengths = vec![128; 16];
        lengths.extend([256; 10]);
        assert_eq!(
            batches(&lengths, 16, 16 * 128 * 128),
            vec![0..16, 16..20, 20..24, 24..26]
        );
    }

    #[test]
    fn a_text_over_the_budget_still_goes_alone() {
        assert_eq!(batches(&[10, 300, 400], 16, 100), vec![0..1, 1..2, 2..3]);
        assert!(batches(&[], 16, 100).is_empty());
    }

    #[test]
    fn every_text_is_in_exactly_one_batch_in_order() {
        let lengths: Vec<usize> = (1..=256).step_by(3).collect();
        let got = batches(&lengths, 16, 16 * 128 * 128);
        let mut next = 0;
        for r in &got {
            assert_eq!(r.start, next);
            assert!(!r.is_empty() && r.len() <= 16);
            let longest = lengths[r.end - 1];
            assert!(r.len() == 1 || r.len() * longest * longest <= 16 * 128 * 128);
            next = r.end;
        }
        assert_eq!(next, lengths.len());
    }
}
