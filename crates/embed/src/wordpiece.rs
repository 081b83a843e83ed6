//! The model's tokenizer: BERT's uncased WordPiece, read from the model's `tokenizer.json`.
//!
//! all-MiniLM-L6-v2 is tokenized as BERT is, in four steps, each written here as Hugging Face's
//! `tokenizers` defines it (the fixture test checks the ids against that library's own output):
//! 1. special tokens (`[CLS]`, `[SEP]`, `[MASK]`, …) written literally in the text are taken as
//!    they are, before anything else;
//! 2. the normalizer cleans the text (NUL, U+FFFD and control characters dropped, every
//!    whitespace a space), spaces out CJK ideographs, strips accents (NFD, nonspacing marks
//!    dropped) and lowercases, a character at a time;
//! 3. the pre-tokenizer splits at whitespace and isolates each punctuation character;
//! 4. each word is cut greedily into the longest vocabulary pieces from its start (`##` before
//!    every piece but the first); a word that cannot be cut, or of more than
//!    `max_input_chars_per_word` characters, is `[UNK]`.
//!
//! A `tokenizer.json` that asks for anything else (another normalizer, model or pre-tokenizer) is
//! refused with the reason: silently tokenizing differently would give vectors from another space.

use std::collections::HashMap;
use std::path::Path;

use anyhow::{Context, Result, bail, ensure};
use unicode_categories::UnicodeCategories;
use unicode_normalization::UnicodeNormalization;

/// BERT's WordPiece tokenizer for one vocabulary.
pub struct WordPiece {
    vocab: HashMap<String, u32>,
    /// Entry of each id (`""` where the file leaves an id out).
    tokens: Vec<String>,
    /// Special tokens matched literally in the raw text, longest first.
    specials: Vec<(String, u32)>,
    unk: u32,
    cls: u32,
    sep: u32,
    pad: u32,
    prefix: String,
    max_word_chars: usize,
    lowercase: bool,
    strip_accents: bool,
    clean_text: bool,
    chinese_chars: bool,
}

impl WordPiece {
    /// Read `tokenizer.json`; the error names the file and what it holds that is not supported.
    pub fn from_file(path: &Path) -> Result<WordPiece> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read tokenizer {}", path.display()))?;
        WordPiece::from_json(&text).with_context(|| format!("tokenizer {}", path.display()))
    }

    /// [`WordPiece::from_file`] from the file's text.
    pub fn from_json(text: &str) -> Result<WordPiece> {
        let json: serde_json::Value = serde_json::from_str(text).context("not JSON")?;
        let model = &json["model"];
        ensure!(
            model["type"] == "WordPiece",
            "model type {} (only WordPiece is supported)",
            model["type"]
        );
        let normalizer = &json["normalizer"];
        ensure!(
            normalizer["type"] == "BertNormalizer",
            "normalizer {} (only BertNormalizer is supported)",
            normalizer["type"]
        );
        ensure!(
            json["pre_tokenizer"]["type"] == "BertPreTokenizer",
            "pre-tokenizer {} (only BertPreTokenizer is supported)",
            json["pre_tokenizer"]["type"]
        );
        let flag = |name: &str, default: bool| normalizer[name].as_bool().unwrap_or(default);
        let lowercase = flag("lowercase", true);
        // `strip_accents: null` follows `lowercase`, as in BERT.
        let strip_accents = normalizer["strip_accents"].as_bool().unwrap_or(lowercase);

        let Some(entries) = model["vocab"].as_object() else {
            bail!("model.vocab is not an object");
        };
        let mut vocab = HashMap::with_capacity(entries.len());
        let mut tokens = Vec::new();
        for (token, id) in entries {
            let Some(id) = id.as_u64().and_then(|i| u32::try_from(i).ok()) else {
                bail!("vocabulary entry {token:?} has no id");
            };
            if tokens.len() <= id as usize {
                tokens.resize(id as usize + 1, String::new());
            }
            tokens[id as usize] = token.clone();
            vocab.insert(token.clone(), id);
        }
        let id_of = |t: &str| {
            vocab
                .get(t)
                .copied()
                .with_context(|| format!("no {t} in the vocabulary"))
        };
        let unk_token = model["unk_token"].as_str().unwrap_or("[UNK]");
        let mut specials: Vec<(String, u32)> = json["added_tokens"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|t| {
                        let content = t["content"].as_str()?;
                        let id = u32::try_from(t["id"].as_u64()?).ok()?;
                        (!content.is_empty()).then(|| (content.to_owned(), id))
                    })
                    .collect()
            })
            .unwrap_or_default();
        specials.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(&b.0)));
        Ok(WordPiece {
            unk: id_of(unk_token)?,
            cls: id_of("[CLS]")?,
            sep: id_of("[SEP]")?,
            pad: id_of("[PAD]")?,
            prefix: model["continuing_subword_prefix"]
                .as_str()
                .unwrap_or("##")
                .to_owned(),
            max_word_chars: model["max_input_chars_per_word"].as_u64().unwrap_or(100) as usize,
            lowercase,
            strip_accents,
            clean_text: flag("clean_text", true),
            chinese_chars: flag("handle_chinese_chars", true),
            vocab,
            tokens,
            specials,
        })
    }

    /// The ids of `text`, `[CLS]` … `[SEP]` around them when `special`, at most `max` in all
    /// (the text's first tokens are kept; `[SEP]` stays last).
    pub fn encode(&self, text: &str, special: bool, max: usize) -> Vec<u32> {
        let room = if special { max.saturating_sub(2) } else { max };
        let mut ids = Vec::new();
        if special {
            ids.push(self.cls);
        }
        let start = ids.len();
        self.each_piece(text, &mut |id| {
            if ids.len() - start >= room {
                return false;
            }
            ids.push(id);
            true
        });
        if special && max >= 2 {
            ids.push(self.sep);
        }
        ids
    }

    /// The id of `[PAD]`.
    pub fn pad_id(&self) -> u32 {
        self.pad
    }

    /// Entries in the vocabulary (ids run from 0 to this, less one).
    pub fn vocab_size(&self) -> usize {
        self.tokens.len()
    }

    /// The entry of `id`, if the vocabulary has one.
    pub fn id_to_token(&self, id: u32) -> Option<&str> {
        self.tokens
            .get(id as usize)
            .map(String::as_str)
            .filter(|t| !t.is_empty())
    }

    /// The id of the entry `token`.
    #[cfg(test)]
    pub fn token_to_id(&self, token: &str) -> Option<u32> {
        self.vocab.get(token).copied()
    }

    /// Calls `emit` with each piece's id in order until it returns false.
    fn each_piece(&self, text: &str, emit: &mut dyn FnMut(u32) -> bool) {
        let mut rest = text;
        while !rest.is_empty() {
            // The earliest special token, the longest where several start at one place.
            let found = self
                .specials
                .iter()
                .filter_map(|(s, id)| rest.find(s.as_str()).map(|at| (at, s.len(), *id)))
                .min_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
            let (plain, special) = match found {
                Some((at, len, id)) => (&rest[..at], Some((len, id))),
                None => (rest, None),
            };
            if !self.plain_pieces(plain, emit) {
                return;
            }
            match special {
                Some((len, id)) => {
                    if !emit(id) {
                        return;
                    }
                    rest = &rest[plain.len() + len..];
                }
                None => return,
            }
        }
    }

    /// The pieces of text without special tokens; false once `emit` said stop.
    fn plain_pieces(&self, text: &str, emit: &mut dyn FnMut(u32) -> bool) -> bool {
        let mut word = String::new();
        let flush = |word: &mut String, emit: &mut dyn FnMut(u32) -> bool| -> bool {
            let ok = word.is_empty() || self.word_pieces(word, emit);
            word.clear();
            ok
        };
        for c in text.chars() {
            if self.clean_text && (c == '\0' || c == '\u{FFFD}' || is_control(c)) {
                continue;
            }
            let c = if self.clean_text && is_whitespace(c) {
                ' '
            } else {
                c
            };
            if self.chinese_chars && is_chinese_char(c) {
                if !flush(&mut word, emit) || !self.word_pieces(&c.to_string(), emit) {
                    return false;
                }
                continue;
            }
            // Normalised a character at a time, as the normalizer does.
            let mut push = |n: char| -> bool {
                if n.is_whitespace() {
                    return flush(&mut word, emit);
                }
                if is_punctuation(n) {
                    return flush(&mut word, emit) && self.word_pieces(&n.to_string(), emit);
                }
                word.push(n);
                true
            };
            let ok = if self.strip_accents {
                c.to_string()
                    .nfd()
                    .filter(|d| !d.is_mark_nonspacing())
                    .flat_map(|d| lower(d, self.lowercase))
                    .all(&mut push)
            } else {
                lower(c, self.lowercase).all(&mut push)
            };
            if !ok {
                return false;
            }
        }
        flush(&mut word, emit)
    }

    /// One word's pieces: greedy longest match from its start, or `[UNK]` for the whole word.
    fn word_pieces(&self, word: &str, emit: &mut dyn FnMut(u32) -> bool) -> bool {
        if word.chars().count() > self.max_word_chars {
            return emit(self.unk);
        }
        let mut pieces = Vec::new();
        let mut start = 0;
        let mut candidate = String::new();
        while start < word.len() {
            let mut end = word.len();
            let mut found = None;
            while end > start {
                candidate.clear();
                if start > 0 {
                    candidate.push_str(&self.prefix);
                }
                candidate.push_str(&word[start..end]);
                if let Some(&id) = self.vocab.get(candidate.as_str()) {
                    found = Some(id);
                    break;
                }
                end = word[..end]
                    .char_indices()
                    .next_back()
                    .map_or(start, |(i, _)| i);
            }
            let Some(id) = found else {
                return emit(self.unk);
            };
            pieces.push(id);
            start = end;
        }
        pieces.into_iter().all(emit)
    }
}

/// `c` lowercased (one or more characters), or `c` itself.
fn lower(c: char, lowercase: bool) -> impl Iterator<Item = char> {
    let mut one = Some(c);
    let mut many = None;
    if lowercase {
        many = Some(c.to_lowercase());
        one = None;
    }
    one.into_iter().chain(many.into_iter().flatten())
}

fn is_whitespace(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r') || c.is_whitespace()
}

fn is_control(c: char) -> bool {
    !matches!(c, '\t' | '\n' | '\r') && c.is_other()
}

fn is_punctuation(c: char) -> bool {
    c.is_ascii_punctuation() || c.is_punctuation()
}

fn is_chinese_char(c: char) -> bool {
    matches!(c as u32,
        0x4E00..=0x9FFF
        | 0x3400..=0x4DBF
        | 0x20000..=0x2A6DF
        | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F
        | 0x2B920..=0x2CEAF
        | 0xF900..=0xFAFF
        | 0x2F800..=0x2FA1F)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> WordPiece {
        let vocab: Vec<&str> = vec![
            "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "un", "##aff", "##able", "hello", ",",
            "world", "!", "cafe", "的", "a", "##b",
        ];
        let entries: Vec<String> = vocab
            .iter()
            .enumerate()
            .map(|(i, t)| format!("{}: {i}", serde_json::to_string(t).unwrap()))
            .collect();
        let json = format!(
            r###"{{"added_tokens": [{{"id": 2, "content": "[CLS]"}}, {{"id": 3, "content": "[SEP]"}}, {{"id": 4, "content": "[MASK]"}}],
               "normalizer": {{"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "strip_accents": null, "lowercase": true}},
               "pre_tokenizer": {{"type": "BertPreTokenizer"}},
               "model": {{"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 9, "vocab": {{{}}}}}}}"###,
            entries.join(", ")
        );
        WordPiece::from_json(&json).unwrap()
    }

    #[test]
    fn words_are_cut_into_the_longest_pieces_and_unknown_words_are_one_unk() {
        let t = tiny();
        assert_eq!(t.encode("unaffable", false, 99), vec![5, 6, 7]);
        assert_eq!(
            t.encode("Hello, WORLD!", true, 99),
            vec![2, 8, 9, 10, 11, 3]
        );
        assert_eq!(t.encode("unx hello", false, 99), vec![1, 8]);
        assert_eq!(t.encode("abbb", false, 99), vec![14, 15, 15, 15]);
        assert_eq!(
            t.encode("abbbbbbbbb", false, 99),
            vec![1],
            "longer than 9 chars"
        );
    }

    #[test]
    fn accents_controls_cjk_and_special_tokens_are_handled_before_the_pieces() {
        let t = tiny();
        assert_eq!(t.encode("Café", false, 99), vec![12]);
        assert_eq!(t.encode("he\u{0}llo", false, 99), vec![8]);
        assert_eq!(t.encode("a的b", false, 99), vec![14, 13, 1]);
        assert_eq!(t.encode("hello[MASK]world", false, 99), vec![8, 4, 10]);
        assert_eq!(
            t.encode("[mask]", false, 99),
            vec![1, 1, 1],
            "special tokens are case-sensitive"
        );
    }

    #[test]
    fn truncation_keeps_the_first_tokens_and_the_closing_sep() {
        let t = tiny();
        assert_eq!(t.encode("hello hello hello", true, 4), vec![2, 8, 8, 3]);
        assert_eq!(t.encode("hello hello", false, 1), vec![8]);
    }

    #[test]
    fn another_normalizer_is_refused_with_its_name() {
        let err = WordPiece::from_json(r#"{"model": {"type": "WordPiece", "vocab": {}}, "normalizer": {"type": "NFC"}, "pre_tokenizer": {"type": "BertPreTokenizer"}}"#)
            .err()
            .unwrap();
        assert!(format!("{err:#}").contains("\"NFC\""), "{err:#}");
    }
}
