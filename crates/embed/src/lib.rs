//! `patina-embed`: text → vectors. Runs all-MiniLM-L6-v2 with ONNX Runtime to turn texts (chunks,
//! queries, notes) into unit vectors for the semantic oracle, and keeps a small LRU of query
//! embeddings.
//!
//! Architecture invariant: this crate knows text, a model directory and vectors, nothing else. It
//! never sees Patina's repositories, chunks' identities, the store, the vector index or the
//! daemon, and has no async runtime (no tokio): callers pass plain values (paths, strings) and
//! decide on which thread an embedding runs. Which texts to embed, and caching of chunk
//! embeddings across runs, belong to the daemon.
//!
//! - **Model**: the files `scripts/setup-model` installs (see `scripts/model/README.md`): `model.onnx` (fp32),
//!   `model.int8.onnx`, `tokenizer.json` and `lib/libonnxruntime.so*`. [`ModelPaths`] finds them and says
//!   what is missing; nothing is downloaded at build or run time.
//! - **Runtime**: `ort` with `load-dynamic`. The library is `dlopen`ed once per process from an explicit path
//!   (the wheel names it `libonnxruntime.so.1.31.1`, which ort's default lookup misses) and one ORT environment
//!   is shared by every [`Embedder`]. The first library path loaded wins for the life of the process.
//! - **Recipe** (what sentence-transformers does for this model): WordPiece tokens truncated at
//!   [`MAX_TOKENS`], padding to the longest text of the batch, mean of `last_hidden_state` over the
//!   attention mask, L2 normalisation. Output matches the float64 reference in
//!   `scripts/model/reference.json` to cosine ≥ 0.999 (fp32) — see the tests.
//! - **Batching**: [`Embedder::embed`] sorts texts by token count and runs batches of similar length, so a
//!   short text never pays for a long neighbour's padding; results come back in input order and do not
//!   depend on what else was in the batch.
//! - **Threads**: one session per [`Embedder`], intra-op spinning off (spinning threads on a shared 2-core
//!   box ran 2–3× slower). `run` needs `&mut Session`, so calls on one embedder are serialised: give
//!   queries their own `Embedder` so they never wait behind bulk indexing.
//! - [`QueryCache`]: a small LRU of query embeddings.
//! - [`Lexicon`]: the tokenizer's whole words, an English lexicon for telling a misspelling from a
//!   word the code merely never uses.
//! - [`StaticTable`]: the static first pass, a token table distilled from the model
//!   (`scripts/model/distil.py`) whose rows summed give a vector in the model's space without
//!   running it.

mod cache;
mod embedder;
mod lexicon;
mod static_table;
#[cfg(test)]
mod tests;
mod wordpiece;

use std::path::{Path, PathBuf};

pub use cache::QueryCache;
pub use embedder::Embedder;
pub use lexicon::Lexicon;
pub use static_table::StaticTable;

/// Embedding width of all-MiniLM-L6-v2.
pub const DIM: usize = 384;
/// Longest input in tokens (including `[CLS]`/`[SEP]`); longer texts are truncated (sentence-transformers'
/// `max_seq_length` for this model).
pub const MAX_TOKENS: usize = 256;
/// Texts per `session.run` unless [`Embedder::with_max_batch`] says otherwise.
pub const DEFAULT_MAX_BATCH: usize = 16;
/// [`Embedder::embed`]'s default attention budget: a full batch of [`DEFAULT_MAX_BATCH`] texts of
/// half the longest input. Self-attention holds `texts × heads × longest²` scores per layer, and
/// ONNX Runtime's arena keeps the largest batch's working memory for as long as the session
/// lives: sixteen texts of 256 tokens need four times what sixteen of 128 do. Long texts go four
/// to a batch instead, which costs no speed (one text of 256 tokens already fills both cores).
pub const DEFAULT_ATTENTION_BUDGET: usize = DEFAULT_MAX_BATCH * (MAX_TOKENS / 2) * (MAX_TOKENS / 2);
/// Directory name of the model under `<state_root>/models/`.
pub const MODEL_NAME: &str = "all-MiniLM-L6-v2";

/// Which graph to run: the fp32 export or its dynamic-int8 quantisation (~1.3× faster per CPU-second,
/// mean cosine ≈ 0.997 against fp32).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precision {
    Fp32,
    Int8,
}

impl Precision {
    pub const ALL: [Precision; 2] = [Precision::Fp32, Precision::Int8];

    /// Stable lowercase name: `fp32` or `int8` (the config's spelling).
    pub fn name(self) -> &'static str {
        match self {
            Precision::Fp32 => "fp32",
            Precision::Int8 => "int8",
        }
    }

    /// The precision called `name`, if any.
    pub fn parse(name: &str) -> Option<Precision> {
        Precision::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The graph's file name inside the model directory.
    pub fn file_name(self) -> &'static str {
        match self {
            Precision::Fp32 => "model.onnx",
            Precision::Int8 => "model.int8.onnx",
        }
    }
}

/// Where the model and runtime are, and whether they are usable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelPaths {
    pub model_dir: PathBuf,
    pub ort_lib: PathBuf,
}

impl ModelPaths {
    /// `$PATINA_MODEL_DIR`, else `<state_root>/models/all-MiniLM-L6-v2`; `$ORT_DYLIB_PATH`, else
    /// `<model_dir>/lib/libonnxruntime.so`. (Same precedence as `scripts/setup-model`, whose remaining
    /// fallbacks are how `state_root` itself is chosen.)
    pub fn locate(state_root: &Path) -> ModelPaths {
        let model_dir = non_empty_env("PATINA_MODEL_DIR")
            .unwrap_or_else(|| state_root.join("models").join(MODEL_NAME));
        ModelPaths::in_dir(model_dir)
    }

    /// The model in `model_dir`; the runtime from `$ORT_DYLIB_PATH`, else `<model_dir>/lib/libonnxruntime.so`.
    pub fn in_dir(model_dir: impl Into<PathBuf>) -> ModelPaths {
        let model_dir = model_dir.into();
        let ort_lib = non_empty_env("ORT_DYLIB_PATH")
            .unwrap_or_else(|| model_dir.join("lib").join("libonnxruntime.so"));
        ModelPaths { model_dir, ort_lib }
    }

    /// The graph file for `precision`.
    pub fn model_file(&self, precision: Precision) -> PathBuf {
        self.model_dir.join(precision.file_name())
    }

    /// The static table (`scripts/model/distil.py`); optional: without it there is no static pass.
    pub fn static_file(&self) -> PathBuf {
        self.model_dir.join("static.bin")
    }

    /// The tokenizer definition.
    pub fn tokenizer_file(&self) -> PathBuf {
        self.model_dir.join("tokenizer.json")
    }

    /// `None` when everything needed exists; else a one-line reason ("model not installed at …").
    /// Checks presence only (`scripts/setup-model` verifies contents); both precisions are required because
    /// the installer always provides both.
    pub fn missing(&self) -> Option<String> {
        if !self.model_dir.is_dir() {
            return Some(format!(
                "model not installed at {} (run scripts/setup-model)",
                self.model_dir.display()
            ));
        }
        let needed = [
            self.tokenizer_file(),
            self.model_file(Precision::Fp32),
            self.model_file(Precision::Int8),
        ];
        if let Some(absent) = needed.iter().find(|p| !p.is_file()) {
            return Some(format!(
                "model incomplete at {}: {} is missing (run scripts/setup-model --force)",
                self.model_dir.display(),
                absent.file_name().unwrap_or_default().to_string_lossy()
            ));
        }
        // `is_file` follows symlinks, so a dangling `libonnxruntime.so` link is reported too.
        if !self.ort_lib.is_file() {
            return Some(format!(
                "ONNX Runtime library not found at {} (run scripts/setup-model, or set ORT_DYLIB_PATH)",
                self.ort_lib.display()
            ));
        }
        None
    }
}

fn non_empty_env(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// Cosine similarity; 0 when either vector is all zeros. For the unit vectors [`Embedder::embed`] returns this
/// is just the dot product, but it does not assume so. Extra elements of the longer slice are ignored.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    debug_assert_eq!(a.len(), b.len(), "cosine of vectors of different lengths");
    let (mut dot, mut na, mut nb) = (0f32, 0f32, 0f32);
    for (x, y) in a.iter().zip(b) {
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    let denom = (na * nb).sqrt();
    if denom > 0.0 { dot / denom } else { 0.0 }
}
