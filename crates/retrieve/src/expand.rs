//! Query expansion with the repository's own vocabulary.
//!
//! A question is worded in English ("where are completions generated"), the code in identifiers
//! (`GenCompletion`, `completionCmd`, `cfg`). Three kinds of variant bridge the gap, and only forms
//! that the index actually contains are ever added, so expansion cannot invent vocabulary:
//!
//! * **Inflections**: words with the same Snowball (Porter 2) stem — `generated` → `generate`,
//!   `generator`; `completions` → `completion`.
//! * **Abbreviations by truncation**, the way code shortens words: a vocabulary term of at least
//!   four letters that is a prefix of the word's stem — `configuration` → `config`,
//!   `authentication` → `auth`, `initialize` → `init`.
//! * **Compounds** ([`compounds`]), the way code glues a phrase into one word: two neighbouring
//!   words joined — `file name` → `filename`, `data frames` → `dataframe`, `upper case` →
//!   `uppercase`.
//!
//! Variants count for less than the words the user typed ([`VARIANT_WEIGHT`]).
//!
//! A fourth kind stands for the typed word itself: a **correction** ([`correction`]) of a word
//! that is no English word and that the index does not contain in any form (`arguements` ->
//! `arguments`), one edit away from a word it does. A misspelt word matches no document and splits
//! into meaningless word pieces for the model, so the question is read with the word the
//! repository uses.

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

/// Words shorter than this are never taken for misspellings: a short word is one edit away from
/// too many others (`load` / `lead` / `road`).
const MIN_MISSPELT: usize = 5;
/// Longer words are left alone (their edits are many, and such words are rarely prose).
const MAX_MISSPELT: usize = 24;
/// A correction must occur in at least this many documents: a word found once may itself be a
/// typo, or a name.
const MIN_CORRECTION_DF: u64 = 2;

/// At most this many unknown words in a question are corrected; a question with more is written
/// in words the code does not use (jargon, another language, pasted noise), not mistyped, and
/// each correction costs ~50 lookups per letter in every index.
pub const MAX_CORRECTED: usize = 3;

/// The misspelt words of a question (`words`: its plain words, lowercase) with their corrections
/// ([`correction`]); none when more than [`MAX_CORRECTED`] of them are unknown.
pub fn corrections(
    words: &[String],
    vocabs: &[&dyn Vocabulary],
    english: &dyn Fn(&str) -> bool,
) -> Vec<(String, String)> {
    let unknown: Vec<&String> = words
        .iter()
        .filter(|w| is_unknown(w, vocabs, english))
        .collect();
    if unknown.len() > MAX_CORRECTED {
        return Vec::new();
    }
    unknown
        .into_iter()
        .filter_map(|w| nearest(w, vocabs).map(|c| (w.clone(), c)))
        .collect()
}

/// Whether `word` could be a misspelling: a plain lowercase word of
/// [`MIN_MISSPELT`]..=[`MAX_MISSPELT`] letters that is no word of the language (`english`: `pause`
/// is not a misspelt `parse`, though the code says only the latter) and that no vocabulary
/// contains, in no inflection either (a word the code uses in some form is what the user meant).
/// An abbreviation does not count: `dict` is no evidence that `dictionarry` is spelt right.
fn is_unknown(word: &str, vocabs: &[&dyn Vocabulary], english: &dyn Fn(&str) -> bool) -> bool {
    if !(MIN_MISSPELT..=MAX_MISSPELT).contains(&word.len())
        || !word.bytes().all(|b| b.is_ascii_lowercase())
        || english(word)
    {
        return false;
    }
    let stemmer = Stemmer::create(Algorithm::English);
    let root = stemmer.stem(word);
    vocabs
        .iter()
        .all(|v| v.doc_freq(word) == 0 && inflections(word, &root, &stemmer, *v).is_empty())
}

/// The word that `word` most likely misspells, among the vocabularies of the searched indices:
/// the most frequent term one edit away (a letter left out, added, changed, or two neighbours
/// swapped), in at least [`MIN_CORRECTION_DF`] documents. `None` unless `word` could be a
/// misspelling at all (see [`corrections`]).
pub fn correction(
    word: &str,
    vocabs: &[&dyn Vocabulary],
    english: &dyn Fn(&str) -> bool,
) -> Option<String> {
    if !is_unknown(word, vocabs, english) {
        return None;
    }
    nearest(word, vocabs)
}

/// The most frequent term one edit away from `word` in `vocabs`, in at least
/// [`MIN_CORRECTION_DF`] documents.
fn nearest(word: &str, vocabs: &[&dyn Vocabulary]) -> Option<String> {
    let n = word.len();
    let df = |t: &str| vocabs.iter().map(|v| v.doc_freq(t)).sum::<u64>();
    let b = word.as_bytes();
    let mut edits: Vec<Vec<u8>> = Vec::with_capacity(54 * n + 25);
    for i in 0..n {
        edits.push([&b[..i], &b[i + 1..]].concat());
        if i + 1 < n && b[i] != b[i + 1] {
            let mut t = b.to_vec();
            t.swap(i, i + 1);
            edits.push(t);
        }
    }
    for i in 0..=n {
        for c in b'a'..=b'z' {
            edits.push([&b[..i], &[c], &b[i..]].concat());
            if i < n && b[i] != c {
                let mut t = b.to_vec();
                t[i] = c;
                edits.push(t);
            }
        }
    }
    edits.sort_unstable();
    edits.dedup();
    let mut best: Option<(u64, String)> = None;
    for e in edits {
        let t = String::from_utf8(e).expect("ascii edits");
        let f = df(&t);
        if f >= MIN_CORRECTION_DF && best.as_ref().is_none_or(|(bf, _)| f > *bf) {
            best = Some((f, t));
        }
    }
    best.map(|(_, t)| t)
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
    for (t, df) in inflections(word, &root, &stemmer, vocab) {
        push(t, df, &mut found);
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

/// Words of grammar, never one half of a glued phrase (`is empty` could be `isempty`, but as
/// often glues into noise: `in put`, `the me`).
const GRAMMAR_WORDS: &[&str] = &[
    "the", "and", "but", "for", "nor", "yet", "with", "from", "into", "onto", "over", "under",
    "about", "after", "before", "between", "through", "during", "without", "within", "are", "was",
    "were", "been", "being", "have", "has", "had", "does", "did", "can", "could", "should",
    "would", "will", "shall", "may", "might", "must", "this", "that", "these", "those", "there",
    "here", "what", "which", "who", "whom", "whose", "where", "when", "why", "how", "its", "you",
    "your", "our", "their", "they", "them", "she", "his", "her", "not", "all", "any", "each",
    "some", "than", "then", "also", "just", "only", "very",
];

/// Terms of `vocab` that glue two neighbouring words of the question into one, the way code
/// writes a phrase as a single word (`file name` -> `filename`, `data frames` -> `dataframe`,
/// `time stamp` -> `timestamps`): the joined words or an inflection of them, when the index holds
/// it. Both words are plain words of three letters or more, and neither a word of grammar.
pub fn compounds(text: &str, vocab: &dyn Vocabulary) -> Vec<String> {
    let plain: Vec<Option<String>> = text
        .split_whitespace()
        .map(|raw| {
            let w = raw.trim_matches(|c: char| !c.is_ascii_alphabetic());
            let mut chars = w.chars();
            let ok = w.len() == raw.trim_matches(|c: char| ".,;:!?()\"'`".contains(c)).len()
                && chars.next().is_some_and(|c| c.is_ascii_alphabetic())
                && chars.all(|c| c.is_ascii_lowercase());
            let w = w.to_ascii_lowercase();
            (ok && w.len() >= MIN_WORD - 1 && !GRAMMAR_WORDS.contains(&w.as_str())).then_some(w)
        })
        .collect();
    let stemmer = Stemmer::create(Algorithm::English);
    let mut out: Vec<String> = Vec::new();
    for pair in plain.windows(2) {
        let (Some(a), Some(b)) = (&pair[0], &pair[1]) else {
            continue;
        };
        let joined = format!("{a}{b}");
        let root = stemmer.stem(&joined).into_owned();
        let mut forms = inflections(&joined, &root, &stemmer, vocab);
        let df = vocab.doc_freq(&joined);
        if df > 0 && !forms.iter().any(|(t, _)| *t == joined) {
            forms.push((joined, df));
        }
        forms.sort_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(&y.0)));
        for (t, _) in forms.into_iter().take(2) {
            if !out.contains(&t) {
                out.push(t);
            }
        }
    }
    out
}

/// Terms of `vocab` with the stem `root` of `word` (with their document frequencies).
fn inflections(
    word: &str,
    root: &str,
    stemmer: &Stemmer,
    vocab: &dyn Vocabulary,
) -> Vec<(String, u64)> {
    // Every form of a stem starts with the stem's first letters (English stems cut suffixes),
    // except where the stemmer rewrote the last letter (`y` -> `i`).
    let shared = root
        .len()
        .min(word.len())
        .saturating_sub(1)
        .max(MIN_WORD - 1);
    let prefix: String = root.chars().take(shared).collect();
    vocab
        .with_prefix(&prefix, 64)
        .into_iter()
        .filter(|(t, _)| {
            t.len() <= word.len() + 4
                && t.bytes().all(|b| b.is_ascii_lowercase())
                && stemmer.stem(t) == root
        })
        .collect()
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
    fn a_misspelt_word_is_read_as_the_most_frequent_word_one_edit_away() {
        let v = vocab(&[
            ("arguments", 40),
            ("argument", 12),
            ("dictionary", 9),
            ("diction", 3),
        ]);
        let c = |w| correction(w, &[&v as &dyn Vocabulary], &|_| false);
        assert_eq!(c("arguements").as_deref(), Some("arguments")); // a letter too many
        assert_eq!(c("argumnets").as_deref(), Some("arguments")); // two letters swapped
        assert_eq!(c("dictionarry").as_deref(), Some("dictionary"));
        assert_eq!(c("dictionsry").as_deref(), Some("dictionary")); // a letter changed
        assert_eq!(c("dictinary").as_deref(), Some("dictionary")); // a letter left out
    }

    #[test]
    fn words_the_code_uses_in_some_form_short_words_and_rare_neighbours_are_not_corrected() {
        let v = vocab(&[
            ("arguments", 40),
            ("config", 30),
            ("handle", 5),
            ("exited", 8),
            ("edit", 4),
            ("lonely", 1),
        ]);
        let c = |w| correction(w, &[&v as &dyn Vocabulary], &|w| w == "argus");
        assert_eq!(c("argus"), None); // a word of the language, though the code never says it
        assert_eq!(c("arguments"), None); // in the vocabulary
        assert_eq!(c("handled"), None); // an inflection of `handle`
        assert_eq!(c("edited"), None); // `edit` is there, `exited` is one edit away but not meant
        assert_eq!(c("lovely"), None); // its one neighbour occurs in a single document
        assert_eq!(c("argue"), None); // nothing one edit away
        assert_eq!(c("cfg"), None); // too short
        assert_eq!(c("Arguements"), None); // not a plain lowercase word
    }

    #[test]
    fn neighbouring_words_are_found_glued_together_as_code_writes_them() {
        let v = vocab(&[
            ("filename", 30),
            ("dataframe", 9),
            ("dataframes", 2),
            ("data", 50),
            ("thefile", 3),
        ]);
        assert_eq!(compounds("get the file name", &v), ["filename"]);
        assert_eq!(
            compounds("join two data frames", &v),
            ["dataframe", "dataframes"]
        );
        // Not neighbours, a word of grammar, or written as identifiers: nothing glued.
        assert!(compounds("file and name", &v).is_empty());
        assert!(compounds("open the file", &v).is_empty());
        assert!(compounds("File_ name", &v).is_empty());
    }

    #[test]
    fn a_question_of_many_unknown_words_is_not_taken_for_a_mistyped_one() {
        let v = vocab(&[
            ("arguments", 40),
            ("dictionary", 9),
            ("function", 9),
            ("iterator", 5),
        ]);
        let words = |ws: &[&str]| ws.iter().map(|w| w.to_string()).collect::<Vec<_>>();
        let no_english = |_: &str| false;
        assert_eq!(
            corrections(
                &words(&["pass", "arguements", "to", "functoin"]),
                &[&v as &dyn Vocabulary],
                &no_english
            ),
            [
                ("arguements".to_string(), "arguments".to_string()),
                ("functoin".to_string(), "function".to_string())
            ]
        );
        // Four unknown words: jargon or noise, not typos; nothing is corrected.
        let many = words(&["arguements", "functoin", "iteratr", "dictionry"]);
        assert!(corrections(&many, &[&v as &dyn Vocabulary], &no_english).is_empty());
    }

    #[test]
    fn corrections_read_every_searched_vocabulary() {
        let a = vocab(&[("serialize", 1)]);
        let b = vocab(&[("serialize", 2), ("serialise", 1)]);
        // `serialze`: neither index holds it; `serialize` occurs 3 times over both.
        assert_eq!(
            correction("serialze", &[&a as &dyn Vocabulary, &b], &|_| false).as_deref(),
            Some("serialize")
        );
        // A word one index contains is nobody's typo.
        assert_eq!(
            correction("serialise", &[&a as &dyn Vocabulary, &b], &|_| false),
            None
        );
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
