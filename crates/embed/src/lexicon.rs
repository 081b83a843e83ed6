//! The model's whole-word vocabulary read as an English lexicon.
//!
//! The WordPiece vocabulary of the model keeps a whole entry for every common English word
//! (`pause`, `edited`, `skinny`) and splits rarer and misspelt ones into pieces (`arguements` ->
//! `argue ##ments`). A word it holds whole is a word of the language, so a question that uses it
//! means it, even when the code never says it: that is what keeps spelling correction from reading
//! `pause` as `parse`.

use std::path::Path;

use anyhow::{Result, anyhow};
use tokenizers::Tokenizer;

/// Plain lowercase words, sorted, in one allocation (~22,000 words, ~250 KB).
pub struct Lexicon {
    text: String,
    /// Start of each word in `text`; word `i` ends where word `i + 1` starts.
    starts: Vec<u32>,
}

impl Lexicon {
    /// The whole-word entries of the tokenizer at `path`: entries of ASCII lowercase letters only
    /// (no `##` continuation pieces, no digits or punctuation), at least two letters long.
    pub fn load(path: &Path) -> Result<Lexicon> {
        let tokenizer = Tokenizer::from_file(path)
            .map_err(|e| anyhow!("cannot read tokenizer {}: {e}", path.display()))?;
        Ok(Lexicon::from_words(tokenizer.get_vocab(false).into_keys()))
    }

    /// A lexicon of `words` (those that are not plain lowercase words are left out).
    pub fn from_words(words: impl IntoIterator<Item = impl AsRef<str>>) -> Lexicon {
        let mut list: Vec<String> = words
            .into_iter()
            .map(|w| w.as_ref().to_string())
            .filter(|w| w.len() >= 2 && w.bytes().all(|b| b.is_ascii_lowercase()))
            .collect();
        list.sort_unstable();
        list.dedup();
        let mut text = String::with_capacity(list.iter().map(String::len).sum());
        let mut starts = Vec::with_capacity(list.len());
        for w in &list {
            starts.push(text.len() as u32);
            text.push_str(w);
        }
        Lexicon { text, starts }
    }

    fn word(&self, i: usize) -> &str {
        let start = self.starts[i] as usize;
        let end = self
            .starts
            .get(i + 1)
            .map_or(self.text.len(), |&e| e as usize);
        &self.text[start..end]
    }

    /// Whether `word` (lowercase) is a word of the lexicon.
    pub fn contains(&self, word: &str) -> bool {
        let (mut lo, mut hi) = (0, self.starts.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.word(mid).cmp(word) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return true,
            }
        }
        false
    }

    pub fn len(&self) -> usize {
        self.starts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_words_are_found_and_pieces_are_not_words() {
        let l = Lexicon::from_words(["pause", "##ments", "argue", "a", "zebra", "x86", "Pause"]);
        assert_eq!(l.len(), 3);
        for w in ["pause", "argue", "zebra"] {
            assert!(l.contains(w), "{w}");
        }
        for w in [
            "ments",
            "##ments",
            "arguements",
            "a",
            "x86",
            "",
            "zzz",
            "aaa",
        ] {
            assert!(!l.contains(w), "{w}");
        }
        assert!(Lexicon::from_words(Vec::<String>::new()).is_empty());
    }
}
