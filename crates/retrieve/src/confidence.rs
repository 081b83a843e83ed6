//! How far an oracle's best answer can be trusted, from the answer itself.
//!
//! BM25 ranks a chunk that matches two of a question's five words above one that matches none,
//! and rank fusion cannot tell that second-best-of-poor from a chunk that says everything the
//! question says. [`coverage`] is that difference: the share of the question's content words
//! (compared by English stem, against the code-aware tokens of the chunk and its path) that the
//! best lexical hit contains. A question whose words all occur in one chunk is one the lexical
//! oracle has genuinely recognised.

use std::collections::HashSet;

use patina_core::tokens::for_each_token;

use crate::expand::stem;

/// A chunk about a question's topic holds a few of its words, never all of a long one: a
/// question's coverage is counted against at most this many of its content words, so a long
/// question ("where does the JUnit 5 integration, after each test, undo fakes, confirm that every
/// recorded call was checked and flag stubs that were never used") is not read as one BM25 failed
/// to recognise only because no chunk could hold fourteen words. Measured at no cap, 10, 8, 6 and
/// 5 over eighteen sets: 8 raised four and lowered none; 6 and 5 raise the mean more but lower two
/// and six sets (bench/RESULTS.md, twenty-ninth session).
pub const MAX_COVERED_WORDS: usize = 8;

/// The share (0..=1) of `words` (a question's content words, lowercase, in the question's order)
/// whose stem occurs among the stems of the tokens of `text` and `path`, alone or glued to a
/// neighbouring word as code writes a phrase (`file name` in `filename`), counted against at most
/// [`MAX_COVERED_WORDS`] of them. No words: 0.
pub fn coverage(words: &[String], text: &str, path: &str) -> f64 {
    if words.is_empty() {
        return 0.0;
    }
    let mut stems: HashSet<String> = HashSet::new();
    for t in [path, text] {
        for_each_token(t, |_, _, tok| {
            if tok.bytes().any(|b| b.is_ascii_alphabetic()) {
                stems.insert(stem(tok));
            }
        });
    }
    let has = |w: &str| stems.contains(&stem(w));
    // Two neighbouring words the code glues into one (`file name` -> `filename`) are both there.
    let glued = |i: usize, j: usize| {
        words
            .get(i)
            .zip(words.get(j))
            .is_some_and(|(a, b)| has(&format!("{a}{b}")))
    };
    let found = (0..words.len())
        .filter(|&i| has(&words[i]) || glued(i, i + 1) || i > 0 && glued(i - 1, i))
        .count();
    (found as f64 / words.len().min(MAX_COVERED_WORDS) as f64).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn every_word_in_the_chunk_or_its_path_is_full_coverage() {
        let text = "func (c *Command) GenBashCompletion(w io.Writer) error {";
        assert_eq!(
            coverage(&w("bash completions"), text, "bash_completions.go"),
            1.0
        );
        // Stems, not abbreviations: `Gen` does not stand for `generated` here.
        let c = coverage(
            &w("bash completions generated"),
            text,
            "bash_completions.go",
        );
        assert!((c - 2.0 / 3.0).abs() < 1e-9, "{c}");
    }

    #[test]
    fn a_long_question_is_counted_against_what_one_chunk_can_hold() {
        let words = w(
            "where does the integration after each test undo fakes confirm recorded calls checked flag stubs never used",
        );
        let n = words.len();
        assert!(n > MAX_COVERED_WORDS);
        // Four of the words: half of what a chunk can hold, not four of the fourteen.
        let c = coverage(
            &words,
            "fun afterEach() { unmockkAll(); checkUnnecessaryStub(); confirmVerified() }",
            "MockKExtension.kt",
        );
        assert!(c >= 4.0 / MAX_COVERED_WORDS as f64 && c <= 1.0, "{c}");
        assert!(c > 4.0 / n as f64);
    }

    #[test]
    fn words_match_by_stem_and_identifier_parts() {
        // `parsing` ~ `parseConfig`'s `parse`; `configs` ~ `config`.
        let c = coverage(&w("parsing configs"), "fn parseConfig() {}", "src/lib.rs");
        assert_eq!(c, 1.0);
    }

    #[test]
    fn neighbouring_words_glued_into_one_identifier_are_both_found() {
        let text = "def get_filename(path): return os.path.basename(path)";
        assert_eq!(coverage(&w("file name"), text, "fn/1.py"), 1.0);
        // Glued only as neighbours: `name` and `file` apart from each other are not `filename`.
        assert_eq!(coverage(&w("name path file"), text, "fn/1.py"), 1.0 / 3.0);
    }

    #[test]
    fn a_partial_match_is_the_share_of_words_found() {
        let c = coverage(
            &w("join two data frames"),
            "def join(a, b): return a + b",
            "fn/1.py",
        );
        assert_eq!(c, 0.25);
        assert_eq!(coverage(&[], "anything", "x"), 0.0);
    }
}
