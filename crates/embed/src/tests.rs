//! Embedder tests on the real model. They need `scripts/setup-model` to have run: the model directory is
//! `$PATINA_MODEL_DIR`, else where `scripts/setup-model` installs it by default
//! (`${XDG_DATA_HOME:-~/.local/share}/patina/models/all-MiniLM-L6-v2`). A missing model FAILS these
//! tests (CI provisions it); it never skips them.

use std::path::PathBuf;
use std::sync::OnceLock;

use super::*;

/// `scripts/setup-model`'s default destination when neither PATINA_MODEL_DIR nor PATINA_HOME is set.
fn default_model_dir() -> PathBuf {
    let data = std::env::var_os("XDG_DATA_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME is set")).join(".local/share")
        });
    data.join("patina/models").join(MODEL_NAME)
}

fn test_paths() -> ModelPaths {
    let dir = std::env::var_os("PATINA_MODEL_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(default_model_dir);
    let paths = ModelPaths::in_dir(&dir);
    if let Some(why) = paths.missing() {
        panic!(
            "{why}\nThe embedder tests run on the real model and are never skipped. Provision it with\n  \
             PATINA_MODEL_DIR={} scripts/setup-model\n(or point PATINA_MODEL_DIR at an existing install).",
            dir.display()
        );
    }
    paths
}

/// One embedder per precision, shared by the tests (loading a session costs ~0.5 s and ~100 MB).
fn shared(precision: Precision) -> &'static Embedder {
    static FP32: OnceLock<Embedder> = OnceLock::new();
    static INT8: OnceLock<Embedder> = OnceLock::new();
    let cell = match precision {
        Precision::Fp32 => &FP32,
        Precision::Int8 => &INT8,
    };
    cell.get_or_init(|| Embedder::load(&test_paths(), precision, 1).expect("loading the embedder"))
}

struct Reference {
    text: String,
    tokens: usize,
    embedding: Vec<f32>,
}

fn reference() -> Vec<Reference> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scripts/model/reference.json"
    );
    let raw = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {path}: {e}"));
    let json: serde_json::Value = serde_json::from_str(&raw).expect("reference.json is JSON");
    let sentences = json["sentences"]
        .as_array()
        .expect("reference.json has `sentences`");
    assert!(!sentences.is_empty());
    sentences
        .iter()
        .map(|s| Reference {
            text: s["text"].as_str().expect("text").to_owned(),
            tokens: s["tokens"].as_u64().expect("tokens") as usize,
            embedding: s["embedding"]
                .as_array()
                .expect("embedding")
                .iter()
                .map(|x| x.as_f64().expect("number") as f32)
                .collect(),
        })
        .collect()
}

fn norm(v: &[f32]) -> f32 {
    v.iter().map(|x| x * x).sum::<f32>().sqrt()
}

fn assert_unit(v: &[f32; DIM], what: &str) {
    assert!(
        v.iter().all(|x| x.is_finite()),
        "{what}: non-finite component"
    );
    let n = norm(v);
    assert!((n - 1.0).abs() < 1e-4, "{what}: norm {n}, expected 1");
}

#[test]
fn fp32_matches_reference() {
    let refs = reference();
    let texts: Vec<&str> = refs.iter().map(|r| r.text.as_str()).collect();
    let got = shared(Precision::Fp32).embed(&texts).unwrap();
    assert_eq!(got.len(), refs.len());
    let mut min = f32::MAX;
    for (r, v) in refs.iter().zip(&got) {
        assert_eq!(r.embedding.len(), DIM);
        assert_unit(v, &r.text);
        let c = cosine(v, &r.embedding);
        eprintln!(
            "fp32 vs reference: cosine {c:.7} ({} tokens) {:?}",
            r.tokens,
            r.text.chars().take(40).collect::<String>()
        );
        min = min.min(c);
    }
    eprintln!(
        "fp32 vs reference: min cosine {min:.7} over {} sentences",
        refs.len()
    );
    assert!(
        min >= 0.999,
        "fp32 embeddings drift from the reference: min cosine {min}"
    );
    // The shipped anchor: first five dims of the first sentence.
    let anchor = [0.048089f32, 0.051848, -0.073327, -0.014766, 0.042649];
    assert_eq!(refs[0].text, "how do I parse a config file");
    for (g, a) in got[0].iter().zip(anchor) {
        assert!(
            (g - a).abs() < 1e-4,
            "anchor dims {:?} vs {anchor:?}",
            &got[0][..5]
        );
    }
    // The reference includes a text that hits the 256-token cap: truncation must match too.
    assert!(
        refs.iter().any(|r| r.tokens == MAX_TOKENS),
        "reference lacks a truncated sentence"
    );
}

#[test]
fn int8_close_to_fp32() {
    let refs = reference();
    let mut texts: Vec<&str> = refs.iter().map(|r| r.text.as_str()).collect();
    // A few code-ish extras so the mean is not over six texts only.
    texts.extend([
        "fn cosine(a: &[f32], b: &[f32]) -> f32 { a.iter().zip(b).map(|(x, y)| x * y).sum() }",
        "class LRUCache:\n    def __init__(self, capacity):\n        self.cache = OrderedDict()",
        "retry the HTTP request with exponential backoff",
        "SELECT * FROM orders WHERE created_at > now() - interval '1 day'",
    ]);
    let fp = shared(Precision::Fp32).embed(&texts).unwrap();
    let q = shared(Precision::Int8).embed(&texts).unwrap();
    let cos: Vec<f32> = fp.iter().zip(&q).map(|(a, b)| cosine(a, b)).collect();
    let mean = cos.iter().sum::<f32>() / cos.len() as f32;
    let min = cos.iter().copied().fold(f32::MAX, f32::min);
    eprintln!(
        "int8 vs fp32: mean cosine {mean:.5}, min {min:.5} over {} texts",
        cos.len()
    );
    for v in &q {
        assert_unit(v, "int8");
    }
    assert!(
        mean >= 0.99,
        "int8 too far from fp32: mean cosine {mean} (min {min})"
    );
}

#[test]
fn batch_invariance() {
    let e = shared(Precision::Fp32);
    let refs = reference();
    let short = "parse a config file";
    let alone = e.embed(&[short]).unwrap()[0];
    // Same text amid longer ones (incl. a 256-token one), so it is padded; and repeated in several positions.
    let mut batch: Vec<&str> = refs.iter().map(|r| r.text.as_str()).collect();
    batch.insert(2, short);
    batch.push(short);
    let out = e.embed(&batch).unwrap();
    assert_eq!(out.len(), batch.len());
    let mut min = f32::MAX;
    for (i, t) in batch.iter().enumerate() {
        if *t == short {
            min = min.min(cosine(&alone, &out[i]));
        }
    }
    // Every other text also equals its solo embedding (checks un-sorting as well as padding).
    for (i, t) in batch.iter().enumerate() {
        let solo = e.embed(&[t]).unwrap()[0];
        min = min.min(cosine(&solo, &out[i]));
    }
    eprintln!("batch invariance: min cosine {min:.7}");
    assert!(
        min >= 0.9999,
        "embedding depends on the batch: min cosine {min}"
    );

    // Several batches (max_batch 2) must give the same answers in the same order.
    let small = Embedder::load(&test_paths(), Precision::Fp32, 1)
        .unwrap()
        .with_max_batch(2);
    let out2 = small.embed(&batch).unwrap();
    for (a, b) in out.iter().zip(&out2) {
        assert!(cosine(a, b) >= 0.9999);
    }
}

#[test]
fn edge_inputs_and_counting() {
    // A fresh embedder so the count is not disturbed by tests running in parallel.
    let e = Embedder::load(&test_paths(), Precision::Fp32, 1).unwrap();
    assert_eq!(e.precision(), Precision::Fp32);
    assert_eq!(e.texts_embedded(), 0);
    assert!(e.embed(&[]).unwrap().is_empty());
    assert_eq!(e.texts_embedded(), 0);

    let huge: String = "lorem ipsum dolor sit amet, consectetur ".repeat(2600); // ~104 KB
    assert!(huge.len() > 100_000);
    let huge_word = "x".repeat(100_000); // one 100 KB "word" → [UNK]
    let unicode = "\u{0}\u{1}\u{7f} \u{FFFD}\u{FEFF}\u{200B}\u{200D} e\u{301}\u{301}\u{301} 🦀👩‍👩‍👧 \u{202E}عربى 中文 \u{10FFFF}\u{E000}";
    let texts = [
        "",
        " \n\t ",
        "x",
        "a",
        &huge,
        &huge_word,
        unicode,
        "[CLS] [SEP] [PAD] [MASK] [UNK]",
    ];
    let out = e.embed(&texts).unwrap();
    assert_eq!(out.len(), texts.len());
    for (t, v) in texts.iter().zip(&out) {
        assert_unit(v, &format!("{:?}", t.chars().take(30).collect::<String>()));
    }
    assert_eq!(e.texts_embedded(), texts.len() as u64);

    // The 100 KB text is truncated: it embeds like its own first few hundred words.
    let prefix: String = "lorem ipsum dolor sit amet, consectetur ".repeat(100);
    let p = e.embed(&[&prefix]).unwrap()[0];
    assert!(
        cosine(&p, &out[4]) >= 0.9999,
        "truncation changed the embedding"
    );
    assert_eq!(e.texts_embedded(), texts.len() as u64 + 1);
    assert_eq!(e.token_count(&huge).unwrap(), MAX_TOKENS);
    assert_eq!(e.token_count("").unwrap(), 2);
    assert_eq!(e.token_count("how do I parse a config file").unwrap(), 12);
}

#[test]
fn cosine_basics() {
    assert!((cosine(&[1.0, 0.0], &[1.0, 0.0]) - 1.0).abs() < 1e-6);
    assert!(cosine(&[1.0, 0.0], &[0.0, 2.0]).abs() < 1e-6);
    assert!((cosine(&[1.0, 1.0], &[-2.0, -2.0]) + 1.0).abs() < 1e-6);
    assert_eq!(cosine(&[0.0, 0.0], &[1.0, 0.0]), 0.0);
}

#[test]
fn model_paths_report_what_is_missing() {
    let tmp = tempfile::tempdir().unwrap();
    let absent = ModelPaths {
        model_dir: tmp.path().join("nope"),
        ort_lib: tmp.path().join("lib.so"),
    };
    let why = absent.missing().unwrap();
    assert!(why.starts_with("model not installed at "), "{why}");
    assert!(why.contains("scripts/setup-model"), "{why}");

    let dir = tmp.path().join("m");
    std::fs::create_dir_all(&dir).unwrap();
    let p = ModelPaths {
        model_dir: dir.clone(),
        ort_lib: dir.join("lib/libonnxruntime.so"),
    };
    assert!(p.missing().unwrap().contains("tokenizer.json is missing"));
    for f in ["tokenizer.json", "model.onnx", "model.int8.onnx"] {
        std::fs::write(dir.join(f), b"").unwrap();
    }
    assert!(
        p.missing()
            .unwrap()
            .starts_with("ONNX Runtime library not found")
    );
    std::fs::create_dir_all(dir.join("lib")).unwrap();
    std::fs::write(dir.join("lib/libonnxruntime.so"), b"").unwrap();
    assert_eq!(p.missing(), None);
    assert!(Embedder::load(&absent, Precision::Fp32, 1).is_err());

    let located = ModelPaths::locate(tmp.path());
    if std::env::var_os("PATINA_MODEL_DIR").is_none_or(|v| v.is_empty()) {
        assert_eq!(
            located.model_dir,
            tmp.path().join("models").join(MODEL_NAME)
        );
    }
}

#[test]
fn query_cache_evicts_least_recently_used() {
    let v = |x: f32| [x; DIM];
    let mut c = QueryCache::new(2);
    assert_eq!(c.capacity(), 2);
    c.insert("a", v(1.0));
    c.insert("b", v(2.0));
    assert_eq!(c.get("a").map(|e| e[0]), Some(1.0)); // a is now more recent than b
    c.insert("c", v(3.0)); // evicts b
    assert_eq!(c.len(), 2);
    assert!(c.get("b").is_none());
    assert_eq!(c.get("a").map(|e| e[0]), Some(1.0));
    assert_eq!(c.get("c").map(|e| e[0]), Some(3.0));
    c.insert("a", v(4.0)); // update refreshes a; c is now the oldest
    c.insert("d", v(5.0)); // evicts c
    assert!(c.get("c").is_none());
    assert_eq!(c.get("a").map(|e| e[0]), Some(4.0));
    assert_eq!(c.get("d").map(|e| e[0]), Some(5.0));
    assert_eq!(c.len(), 2);

    let mut none = QueryCache::new(0);
    none.insert("a", v(1.0));
    assert!(none.is_empty() && none.get("a").is_none());
    c.clear();
    assert!(c.is_empty() && c.get("a").is_none());
}

#[test]
fn the_models_whole_words_tell_english_from_misspellings() {
    let l = shared(Precision::Fp32).lexicon();
    assert!(l.len() > 15_000, "{} words", l.len());
    for w in [
        "pause",
        "relay",
        "edited",
        "skinny",
        "dictionary",
        "arguments",
    ] {
        assert!(l.contains(w), "{w} is a word");
    }
    for w in ["arguements", "dictionarry", "polciy", "##ing", "ments"] {
        assert!(!l.contains(w), "{w} is no word");
    }
}

/// Patina's WordPiece gives the ids Hugging Face's `tokenizers` gives, text for text: source code
/// in several languages and strings made for every step of the tokenization (accents, controls,
/// CJK, special tokens written in the text, long words, every kind of whitespace, random code
/// points). The fixture is written by `scripts/model/wordpiece_fixture.py` with that library.
#[test]
fn wordpiece_gives_the_ids_hugging_faces_tokenizer_gives() {
    let tok = crate::wordpiece::WordPiece::from_file(&test_paths().tokenizer_file()).unwrap();
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/data/wordpiece-fixture.json");
    let raw = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {path}: {e}"));
    let fixture: serde_json::Value = serde_json::from_str(&raw).unwrap();
    let cases = fixture["cases"].as_array().unwrap();
    assert!(cases.len() > 100, "{} cases", cases.len());
    let mut wrong = Vec::new();
    for case in cases {
        let text = case["text"].as_str().unwrap();
        let want: Vec<u32> = case["ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap() as u32)
            .collect();
        let got = tok.encode(text, false, usize::MAX);
        if got != want {
            wrong.push(format!("{text:?}\n  got  {got:?}\n  want {want:?}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} differ:\n{}",
        wrong.len(),
        cases.len(),
        wrong.join("\n")
    );
}

/// With special tokens, a text is `[CLS]` … `[SEP]`, cut to the model's window with `[SEP]` kept
/// last: the first tokens are those of the whole text.
#[test]
fn a_long_text_keeps_its_first_tokens_between_cls_and_sep() {
    let tok = crate::wordpiece::WordPiece::from_file(&test_paths().tokenizer_file()).unwrap();
    let text = "pub fn parse_args(args: &[String]) -> Result<Options, ArgError> { }\n".repeat(60);
    let whole = tok.encode(&text, false, usize::MAX);
    let cut = tok.encode(&text, true, crate::MAX_TOKENS);
    assert_eq!(cut.len(), crate::MAX_TOKENS);
    assert_eq!(cut[0], tok.token_to_id("[CLS]").unwrap());
    assert_eq!(*cut.last().unwrap(), tok.token_to_id("[SEP]").unwrap());
    assert_eq!(
        &cut[1..crate::MAX_TOKENS - 1],
        &whole[..crate::MAX_TOKENS - 2]
    );
}
