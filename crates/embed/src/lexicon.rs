//! The model's whole-word vocabulary read as an English lexicon.
//!
//! The WordPiece vocabulary of the model keeps a whole entry for every common English word
//! (`pause`, `edited`, `skinny`) and splits rarer and misspelt ones into pieces (`arguements` ->
//! `argue ##ments`). A word it holds whole is a word of the language, so a question that uses it
//! means it, even when the code never says it: that is what keeps spelling correction from reading
//! `pause` as `parse`.

use crate::wordpiece::WordPiece;

/// Plain lowercase words, sorted, in one allocation (~22,000 words, ~250 KB).
pub struct Lexicon {
    text: String,
    /// Start of each word in `text`; word `i` ends where word `i + 1` starts.
    starts: Vec<u32>,
}

impl Lexicon {
    /// The whole-word entries of `tokenizer`'s vocabulary: entries of ASCII lowercase letters only
    /// (no `##` continuation pieces, no digits or punctuation), at least two letters long. Read
    /// entry by entry, so no copy of the whole vocabulary is made on the way.
    pub(crate) fn of(tokenizer: &WordPiece) -> Lexicon {
        let n = tokenizer.vocab_size() as u32;
        Lexicon::from_words((0..n).filter_map(|id| tokenizer.id_to_token(id)))
    }

    /// A lexicon of `words` (those that are not plain lowercase words are left out).
    pub fn from_words(words: impl IntoIterator<Item = impl AsRef<str>>) -> Lexicon {
        // Packed as they come, then sorted by index and packed again: two buffers, no
        // allocation per word.
        let mut raw = String::new();
        let mut spans: Vec<(u32, u32)> = Vec::new();
        for w in words {
            let w = w.as_ref();
            if w.len() >= 2 && w.bytes().all(|b| b.is_ascii_lowercase()) {
                spans.push((raw.len() as u32, w.len() as u32));
                raw.push_str(w);
            }
        }
        let at = |(s, l): (u32, u32)| &raw[s as usize..(s + l) as usize];
        spans.sort_unstable_by(|a, b| at(*a).cmp(at(*b)));
        spans.dedup_by(|a, b| at(*a) == at(*b));
        let mut text = String::with_capacity(raw.len());
        let mut starts = Vec::with_capacity(spans.len());
        for span in spans {
            starts.push(text.len() as u32);
            text.push_str(at(span));
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
