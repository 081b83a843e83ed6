//! Query expansion with the repository's own vocabulary.
//!
//! A question is worded in English ("where are completions generated"), the code in identifiers
//! (`GenCompletion`, `completionCmd`, `cfg`). Two kinds of variant bridge the gap, and only forms
//! that the index actually contains are ever added, so expansion cannot invent vocabulary:
//!
//! * **Inflections**: words with the same Snowball (Porter 2) stem — `generated` → `generate`,
//!   `generator`; `completions` → `completion`.
//! * **Abbreviations by truncation**, the way code shortens words: a vocabulary term of at least
//!   four letters that is a prefix of the word's stem — `configuration` → `config`,
//!   `authentication` → `auth`, `initialize` → `init`.
//!
//! Variants count for less than the words the user typed ([`VARIANT_WEIGHT`]).

use rust_stemmers::{Algorithm, Stemmer};

/// The weight of a variant relative to the query word it came from.
pub const VARIANT_WEIGHT: f32 = 0.5;
/// At most this many variants per query word (the most frequent in the index first).
pub const MAX_VARIANTS: usize = 4;
/// Words shorter than this are not expanded: their stems are too ambiguous.
const MIN_WORD: usize = 4;
/// The shortest abbreviation accepted (`auth`, `init`, `conf`); three letters collide too often.
const MIN_ABBREVIATION: usize = 4;

/// What the expansion needs to know of an index's vocabulary.
pub trait Vocabulary {
    /// Terms of the index that start with `prefix`, with their document frequency (a bounded
    /// number; more are not needed).
    fn with_prefix(&self, prefix: &str, max: usize) -> Vec<(String, u64)>;
    /// The document frequency of `term` (0 when the index does not contain it).
    fn doc_freq(&self, term: &str) -> u64;
}

/// The English stem of a lowercase word.
pub fn stem(word: &str) -> String {
    Stemmer::create(Algorithm::English).stem(word).into_owned()
}

/// Whether `word` is a plain English-looking word worth expanding (lowercase letters only, long
/// enough). Identifiers, numbers and mixed tokens are exact evidence and are left alone.
pub fn expandable(word: &str) -> bool {
    word.len() >= MIN_WORD && word.bytes().all(|b| b.is_ascii_lowercase())
}

/// The words of a question that may be expanded: written as plain words (`Configuration`,
/// `routing`), not as identifiers (`parse_config`, `parseConfig`, `a.b`), and among its content
/// words (`content`: no stop words).
pub fn words(text: &str, content: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for raw in text.split_whitespace() {
        let w = raw.trim_matches(|c: char| {
            matches!(
                c,
                '.' | ',' | ';' | ':' | '!' | '?' | '(' | ')' | '"' | '\'' | '`'
            )
        });
        let mut chars = w.chars();
        let plain = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
            && chars.all(|c| c.is_ascii_lowercase());
        if !plain {
            continue;
        }
        let w = w.to_ascii_lowercase();
        if expandable(&w) && content.contains(&w) && !out.contains(&w) {
            out.push(w);
        }
    }
    out
}

/// The variants of `word` found in `vocab`, most frequent first, without `word` itself and
/// without any of `skip` (the other words of the query, already searched for themselves).
pub fn variants(word: &str, vocab: &dyn Vocabulary, skip: &[String]) -> Vec<String> {
    if !expandable(word) {
        return Vec::new();
    }
    let stemmer = Stemmer::create(Algorithm::English);
    let root = stemmer.stem(word).into_owned();
    let mut found: Vec<(String, u64)> = Vec::new();
    let push = |t: String, df: u64, found: &mut Vec<(String, u64)>| {
        if df > 0 && t != word && !skip.contains(&t) && !found.iter().any(|(f, _)| *f == t) {
            found.push((t, df));
        }
    };
    // Inflections: same stem. Every form of a stem starts with the stem's first letters (English
    // stems cut suffixes), except where the stemmer rewrote the last letter (`y` -> `i`).
    let shared = root
        .len()
        .min(word.len())
        .saturating_sub(1)
        .max(MIN_WORD - 1);
    let prefix: String = root.chars().take(shared).collect();
    for (t, df) in vocab.with_prefix(&prefix, 64) {
        if t.len() <= word.len() + 4
            && t.bytes().all(|b| b.is_ascii_lowercase())
            && stemmer.stem(&t) == root
        {
            push(t, df, &mut found);
        }
    }
    // Abbreviations: a prefix of the stem that the code uses as a word of its own.
    for n in MIN_ABBREVIATION..root.len().min(word.len()) {
        let Some(p) = root.get(..n) else { break };
        if stemmer.stem(p) == root {
            continue; // an inflection, found above
        }
        let df = vocab.doc_freq(p);
        push(p.to_string(), df, &mut found);
    }
    found.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    found.truncate(MAX_VARIANTS);
    found.into_iter().map(|(t, _)| t).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    struct Vocab(BTreeMap<&'static str, u64>);

    impl Vocabulary for Vocab {
        fn with_prefix(&self, prefix: &str, max: usize) -> Vec<(String, u64)> {
            self.0
                .iter()
                .filter(|(t, _)| t.starts_with(prefix))
                .take(max)
                .map(|(t, df)| (t.to_string(), *df))
                .collect()
        }
        fn doc_freq(&self, term: &str) -> u64 {
            self.0.get(term).copied().unwrap_or(0)
        }
    }

    fn vocab(terms: &[(&'static str, u64)]) -> Vocab {
        Vocab(terms.iter().copied().collect())
    }

    #[test]
    fn inflections_found_in_the_index_are_added_most_frequent_first() {
        let v = vocab(&[
            ("generate", 3),
            ("generator", 9),
            ("generated", 1),
            ("general", 50),
            ("genus", 2),
        ]);
        assert_eq!(variants("generated", &v, &[]), ["generator", "generate"]);
        let v = vocab(&[("completion", 40), ("completions", 5), ("complete", 7)]);
        assert_eq!(variants("completions", &v, &[]), ["completion", "complete"]);
    }

    #[test]
    fn abbreviations_are_prefixes_of_the_stem_that_the_code_uses() {
        let v = vocab(&[
            ("config", 30),
            ("conf", 2),
            ("cfg", 9),
            ("configuration", 1),
        ]);
        assert_eq!(variants("configuration", &v, &[]), ["config", "conf"]);
        let v = vocab(&[("auth", 12), ("authenticate", 3), ("aut", 50)]);
        assert_eq!(
            variants("authentication", &v, &[]),
            ["auth", "authenticate"]
        );
    }

    #[test]
    fn nothing_is_invented_and_exact_tokens_are_left_alone() {
        let v = vocab(&[("parse", 4)]);
        assert!(variants("completions", &v, &[]).is_empty());
        let v = vocab(&[("parse_config", 4), ("parse", 9)]);
        assert!(variants("parse_config", &v, &[]).is_empty());
        assert!(
            variants("cfg", &v, &[]).is_empty(),
            "short words have ambiguous stems"
        );
        assert!(variants("parseConfig", &v, &[]).is_empty());
    }

    #[test]
    fn only_plain_words_of_the_question_are_expanded() {
        let content: Vec<String> = [
            "configuration",
            "parse_config",
            "parseconfig",
            "loaded",
            "the",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            words(
                "Configuration: where is parse_config / parseConfig loaded?",
                &content
            ),
            ["configuration", "loaded"]
        );
    }

    #[test]
    fn words_the_query_already_has_are_not_repeated() {
        let v = vocab(&[("route", 3), ("router", 8), ("routes", 2)]);
        assert_eq!(
            variants("routing", &v, &["router".into()]),
            ["route", "routes"]
        );
    }
}
