//! Locating inside a chosen file, pure: once the ranking has chosen a file, which of its regions
//! (its chunks: functions, methods, blocks) the question is about. The file's best-matching chunk
//! is often not the one a fix changes: an issue names an error message, a function, a parameter
//! and three modules, and the search's best chunk is the one with most of those words, where
//! the change is in the function that raises the message.
//!
//! So every region of the file is scored against the whole question ([`score_regions`]): BM25
//! over the file's own regions as the collection (a word every function of the file uses says
//! nothing about which one is meant), with two exact signals: the region defines a name the
//! question writes out (added at the weight of its words), and the region holds a message the
//! question quotes verbatim (it then outranks every region that does not). [`order`] then lays located regions beside the
//! search's matched pieces on one scale, so the budget goes to the likely file's likely regions
//! before the weak hits of unlikely files. By default a file weighs by its best hit's score
//! against the best file's ([`confidence_priors`]): depth when the ranking is sure of one file,
//! breadth when two score alike (held out over 20 context sets at 4000 tokens: line recall
//! 0.444 → 0.455, file recall 0.82 → 0.83; bench/RESULTS.md, forty-sixth session).

use std::collections::{HashMap, HashSet};

use patina_core::tokens::for_each_token;

use crate::query::is_stop_word;

/// BM25's usual term-frequency saturation and length normalisation (Robertson & Zaragoza).
const K1: f64 = 1.2;
const B: f64 = 0.75;
/// A quoted span shorter than this many characters is a name, not a message.
const MIN_MESSAGE_CHARS: usize = 12;

/// One region of a file: its text and the name it defines, if any.
pub struct Region<'a> {
    pub text: &'a str,
    pub symbol: Option<&'a str>,
}

/// What a question brings to locating: its distinct content tokens, the names it writes out
/// whole, and the messages it quotes.
pub struct Needle {
    terms: Vec<String>,
    names: HashSet<String>,
    messages: Vec<String>,
}

impl Needle {
    pub fn of(question: &str) -> Needle {
        let mut terms = Vec::new();
        let mut seen = HashSet::new();
        for_each_token(question, |_, _, t| {
            if t.len() >= 2 && !is_stop_word(t) && seen.insert(t.to_string()) {
                terms.push(t.to_string());
            }
        });
        // Whole identifiers as the question writes them (`_showfixtures_main`, `SetHelpFunc`):
        // a word with an inner capital, an underscore or a digit after letters.
        let names = question
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| w.len() >= 4 && looks_like_a_name(w))
            .map(|w| w.trim_matches('_').to_lowercase())
            .filter(|w| !w.is_empty())
            .collect();
        Needle {
            terms,
            names,
            messages: quoted(question)
                .into_iter()
                .filter(|m| m.chars().count() >= MIN_MESSAGE_CHARS)
                .map(|m| m.to_lowercase())
                .collect(),
        }
    }
}

impl Needle {
    /// Also the names the question writes as code, whatever their case: a word called
    /// (`parse(`), one quoted alone in backticks (`` `strict` ``), the last part of a dotted
    /// path (`req.fresh`). A commit message or an issue names the function to change that way
    /// more often than by an inner capital or an underscore.
    pub fn with_code_names(mut self, question: &str) -> Needle {
        let word = |w: &str| {
            w.len() >= 3
                && w.chars().all(|c| c.is_alphanumeric() || c == '_')
                && w.chars()
                    .next()
                    .is_some_and(|c| c.is_alphabetic() || c == '_')
        };
        let mut add = |w: &str| {
            let w = w.trim_matches('_').to_lowercase();
            if w.len() >= 3 && !is_stop_word(&w) {
                self.names.insert(w);
            }
        };
        for line in question.lines() {
            let parts: Vec<&str> = line.split('`').collect();
            for inside in parts
                .iter()
                .skip(1)
                .step_by(2)
                .take(parts.len().saturating_sub(1) / 2)
            {
                let t = inside.trim().trim_end_matches("()");
                let last = t.rsplit(['.', ':']).next().unwrap_or(t);
                if word(last) {
                    add(last);
                }
            }
        }
        let chars: Vec<char> = question.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            if chars[i].is_alphanumeric() || chars[i] == '_' {
                let start = i;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                let w: String = chars[start..i].iter().collect();
                let dotted = start > 0
                    && chars[start - 1] == '.'
                    && start > 1
                    && (chars[start - 2].is_alphanumeric() || chars[start - 2] == '_');
                let called = chars.get(i) == Some(&'(');
                if (dotted || called) && word(&w) {
                    add(&w);
                }
            } else {
                i += 1;
            }
        }
        self
    }
}

fn looks_like_a_name(w: &str) -> bool {
    let inner_capital =
        w.chars().skip(1).any(char::is_uppercase) && w.chars().any(char::is_lowercase);
    w.contains('_') || inner_capital
}

/// The messages of `text`: spans between matching double quotes or backticks on one line, and
/// what follows `SomeError: ` (a traceback's last line, or a log line naming a warning).
fn quoted(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for line in text.lines() {
        if let Some(at) = line.find(": ") {
            let head = line[..at].trim_start_matches(|c: char| !c.is_alphanumeric());
            let kind = head
                .rsplit(|c: char| !(c.is_alphanumeric() || c == '_'))
                .next();
            if kind.is_some_and(|k| {
                ["Error", "Exception", "Warning"]
                    .iter()
                    .any(|s| k.ends_with(s))
            }) {
                out.push(line[at + 2..].trim());
            }
        }
        for q in ['"', '`'] {
            let parts: Vec<&str> = line.split(q).collect();
            // Odd positions are inside a pair of quotes.
            for inside in parts
                .iter()
                .skip(1)
                .step_by(2)
                .take(parts.len().saturating_sub(1) / 2)
            {
                let t = inside.trim();
                if !t.is_empty() {
                    out.push(t);
                }
            }
        }
    }
    out
}

/// The score of each region of one file against `needle` (0: nothing of the question is in it).
pub fn score_regions(needle: &Needle, regions: &[Region]) -> Vec<f64> {
    let n = regions.len();
    if n == 0 {
        return Vec::new();
    }
    let wanted: HashSet<&str> = needle.terms.iter().map(String::as_str).collect();
    // Term frequencies of the question's terms per region, and the regions' lengths.
    let mut tfs: Vec<HashMap<&str, u32>> = Vec::with_capacity(n);
    let mut lens = Vec::with_capacity(n);
    for r in regions {
        let mut tf: HashMap<&str, u32> = HashMap::new();
        let mut len = 0u32;
        for_each_token(r.text, |_, _, t| {
            len += 1;
            if let Some(&w) = wanted.get(t) {
                *tf.entry(w).or_default() += 1;
            }
        });
        tfs.push(tf);
        lens.push(f64::from(len.max(1)));
    }
    let avg = lens.iter().sum::<f64>() / n as f64;
    let idf: HashMap<&str, f64> = wanted
        .iter()
        .map(|&w| {
            let df = tfs.iter().filter(|tf| tf.contains_key(w)).count() as f64;
            (w, (1.0 + (n as f64 - df + 0.5) / (df + 0.5)).ln())
        })
        .collect();
    let weight_of = |text: &str| -> f64 {
        let mut seen = HashSet::new();
        let mut w = 0.0;
        for_each_token(text, |_, _, t| {
            if seen.insert(t.to_string()) {
                w += idf.get(t).copied().unwrap_or(0.0);
            }
        });
        w
    };
    let plain: Vec<f64> = (0..n)
        .map(|i| {
            let norm = K1 * (1.0 - B + B * lens[i] / avg);
            tfs[i]
                .iter()
                .map(|(w, &tf)| {
                    let tf = f64::from(tf);
                    idf[w] * tf * (K1 + 1.0) / (tf + norm)
                })
                .sum()
        })
        .collect();
    // A message quoted verbatim is the strongest pointer a question has, whatever its words:
    // the region holding it outranks every region without it.
    let best = plain.iter().copied().fold(0.0, f64::max);
    regions
        .iter()
        .zip(plain)
        .map(|(r, mut s)| {
            if let Some(sym) = r.symbol {
                let sym = sym.trim_matches('_').to_lowercase();
                if needle.names.contains(&sym) {
                    s += weight_of(&sym);
                }
            }
            if !needle.messages.is_empty() {
                let lower = r.text.to_lowercase();
                for m in &needle.messages {
                    if lower.contains(m.as_str()) {
                        s += best + weight_of(m);
                    }
                }
            }
            s
        })
        .collect()
}

/// The indices of `spans` (the line ranges of one file's regions) nearest `anchor` first: no
/// gap, then by the lines between; equal gaps keep the given order. Regions [`order`] weighs
/// alike (most of a file: nothing of the question in them) are then read outward from where
/// the file's best piece is, since the lines a change touches lie together, rather than from
/// the file's first line.
pub fn nearest_first(spans: &[(u32, u32)], anchor: (u32, u32)) -> Vec<usize> {
    let gap = |&(s, e): &(u32, u32)| {
        if e < anchor.0 {
            anchor.0 - e
        } else {
            s.saturating_sub(anchor.1)
        }
    };
    let mut idx: Vec<usize> = (0..spans.len()).collect();
    idx.sort_by_key(|&i| (gap(&spans[i]), i));
    idx
}

/// Where a piece of context comes from, for [`order`]. `file` is the rank of the piece's file
/// among the files of the search's hits (0: the file of the best hit).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Origin {
    /// A hit of the search, with its fused score.
    Matched { file: usize, score: f64 },
    /// A region of a chosen file, with its location score ([`score_regions`]).
    Located { file: usize, score: f64 },
}

/// How much an uninformative region of a file still weighs against the file's best one: the
/// place of a file in the ranking says more about where the change is than the question's words
/// say about which of its regions (the pasted files beat the best chunks: issue 64).
const FLOOR: f64 = 0.5;

/// The reading order of pieces: each weighs its file's prior, `1 / (rank + 1)^depth`, times its
/// strength within the file, `FLOOR + (1 − FLOOR) · s / best` (a hit's fused score against the
/// file's best hit; a region's location score against the file's best-located region). With
/// `depth` ≥ 1 the best file is read whole, best regions first, before the next file's best
/// region; smaller `depth` lets the next files' best regions in earlier. Ties keep matched
/// pieces first, then the given order.
pub fn order(origins: &[Origin], depth: f64) -> Vec<usize> {
    order_by(origins, |file| 1.0 / ((file + 1) as f64).powf(depth))
}

/// Each file's prior by the ranking's own confidence: its best matched score against the best
/// file's, raised to `depth` (the best file 1). When the search is sure of one file the others
/// weigh little and the best file is read in depth; when two files score alike, both are read
/// by their best regions first (breadth). A file without a matched piece gets the smallest
/// prior of those with one. For [`order_by`].
pub fn confidence_priors(origins: &[Origin], depth: f64) -> Vec<f64> {
    let files = origins
        .iter()
        .map(|o| match *o {
            Origin::Matched { file, .. } | Origin::Located { file, .. } => file + 1,
        })
        .max()
        .unwrap_or(0);
    let mut best = vec![0.0f64; files];
    for o in origins {
        if let Origin::Matched { file, score } = *o {
            best[file] = best[file].max(score);
        }
    }
    let top = best.iter().copied().fold(0.0, f64::max);
    if top <= 0.0 {
        return (0..files).map(|f| 1.0 / (f + 1) as f64).collect();
    }
    let least = best
        .iter()
        .copied()
        .filter(|&s| s > 0.0)
        .fold(top, f64::min);
    best.iter()
        .map(|&s| (if s > 0.0 { s } else { least } / top).powf(depth))
        .collect()
}

/// [`order`] with each file's prior given by `prior(file)`.
pub fn order_by(origins: &[Origin], prior: impl Fn(usize) -> f64) -> Vec<usize> {
    let mut best: HashMap<(usize, bool), f64> = HashMap::new();
    let key = |o: &Origin| match *o {
        Origin::Matched { file, score } => ((file, true), score),
        Origin::Located { file, score } => ((file, false), score),
    };
    for o in origins {
        let (k, s) = key(o);
        let b = best.entry(k).or_insert(0.0);
        *b = b.max(s);
    }
    let weight = |o: &Origin| {
        let ((file, matched), s) = key(o);
        let top = best.get(&(file, matched)).copied().unwrap_or(0.0);
        let strength = if top > 0.0 {
            (s / top).clamp(0.0, 1.0)
        } else {
            0.0
        };
        prior(file) * (FLOOR + (1.0 - FLOOR) * strength)
    };
    let weights: Vec<f64> = origins.iter().map(weight).collect();
    let mut idx: Vec<usize> = (0..origins.len()).collect();
    idx.sort_by(|&a, &b| {
        weights[b]
            .total_cmp(&weights[a])
            .then_with(|| {
                let located = |o: &Origin| matches!(o, Origin::Located { .. });
                located(&origins[a]).cmp(&located(&origins[b]))
            })
            .then(a.cmp(&b))
    });
    idx
}

/// What a file earns of the budget toward being read whole ([`whole_files`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WholeBy {
    /// Its prior's share among every file's, `prior / Σ priors`: sure of one file, that file
    /// earns most of the budget; unsure, none earns enough for a file of ordinary size.
    Share,
    /// Its prior itself, `prior × budget`: the best file earns the whole budget, a file half as
    /// likely half of it.
    Prior,
}

/// The files to read whole: those whose whole text (`tokens[file]`, the sum of its located
/// regions; 0 when it was not located in) fits in what its prior earns of the `budget` (`by`).
/// A file given whole comes in line order rather than by its regions' scores against the
/// question's words (pasting the top files whole beat the best regions on a third of the context
/// sets: bench/RESULTS.md, forty-sixth session). No constant beyond the priors'.
pub fn whole_files(priors: &[f64], tokens: &[usize], budget: usize, by: WholeBy) -> Vec<usize> {
    let total: f64 = priors.iter().filter(|p| **p > 0.0).sum();
    if total <= 0.0 {
        return Vec::new();
    }
    let earned = |f: usize| match by {
        WholeBy::Share => priors[f].max(0.0) / total * budget as f64,
        WholeBy::Prior => priors[f].clamp(0.0, 1.0) * budget as f64,
    };
    (0..priors.len().min(tokens.len()))
        .filter(|&f| tokens[f] > 0 && tokens[f] as f64 <= earned(f))
        .collect()
}

/// Makes every located region of the `whole` files weigh as its file's best-located one, so
/// [`order_by`] reads each such file whole at its best region's place, in the order its regions
/// were given (line order).
pub fn read_whole(origins: &mut [Origin], whole: &[usize]) {
    for &f in whole {
        let best = origins
            .iter()
            .filter_map(|o| match *o {
                Origin::Located { file, score } if file == f => Some(score),
                _ => None,
            })
            .fold(0.0, f64::max);
        let v = if best > 0.0 { best } else { 1.0 };
        for o in origins.iter_mut() {
            if let Origin::Located { file, score } = o
                && *file == f
            {
                *score = v;
            }
        }
    }
}

/// `order` with the leading piece of each of the `kept` files moved to the front, in the files'
/// rank order: every file the matched pieces alone would have shown keeps its best piece before
/// any file is read in depth, so locating inside the likely file never costs the answer the
/// other files (file recall; issue 64). The rest keep their order. Also how many of the first
/// entries are those leads.
pub fn keep_files(order: &[usize], origins: &[Origin], kept: &[usize]) -> (Vec<usize>, usize) {
    let file = |o: &Origin| match *o {
        Origin::Matched { file, .. } | Origin::Located { file, .. } => file,
    };
    let mut kept: Vec<usize> = kept.to_vec();
    kept.sort_unstable();
    kept.dedup();
    let mut leads: Vec<Option<usize>> = vec![None; kept.len()];
    for &i in order {
        if let Ok(k) = kept.binary_search(&file(&origins[i])) {
            leads[k].get_or_insert(i);
        }
    }
    let leads: Vec<usize> = leads.into_iter().flatten().collect();
    let mut out = leads.clone();
    out.extend(order.iter().copied().filter(|i| !leads.contains(i)));
    (out, leads.len())
}

/// The kept files (by rank, as [`keep_files`] takes them) cut to the best `n` (0: all): each
/// kept file's head costs the best file's depth its tokens.
pub fn keep_at_most(kept: &mut Vec<usize>, n: usize) {
    if n > 0 {
        kept.sort_unstable();
        kept.dedup();
        kept.truncate(n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn region<'a>(text: &'a str, symbol: Option<&'a str>) -> Region<'a> {
        Region { text, symbol }
    }

    #[test]
    fn a_file_is_read_whole_only_when_its_share_of_the_budget_holds_it() {
        // Sure of file 0 (prior 1 against 0.1 and 0.1): its share is 1/1.2 of 1000 tokens.
        assert_eq!(
            whole_files(&[1.0, 0.1, 0.1], &[800, 50, 400], 1000, WholeBy::Share),
            vec![0, 1]
        );
        // By the prior itself: the best file earns the whole budget, the others a tenth.
        assert_eq!(
            whole_files(&[1.0, 0.1, 0.1], &[1000, 101, 400], 1000, WholeBy::Prior),
            vec![0]
        );
        // The same file when the search is not sure (three files alike): a third is 333 tokens.
        assert_eq!(
            whole_files(&[1.0, 1.0, 1.0], &[800, 300, 400], 1000, WholeBy::Share),
            vec![1]
        );
        // Not located in (0 tokens): never whole; no priors: nothing.
        assert!(whole_files(&[1.0], &[0], 1000, WholeBy::Prior).is_empty());
        assert!(whole_files(&[0.0, 0.0], &[10, 10], 1000, WholeBy::Share).is_empty());
    }

    #[test]
    fn a_whole_file_is_read_in_line_order_at_its_best_regions_place() {
        use Origin::*;
        // File 0: a matched hit and three regions (the last best located); file 1: one hit.
        let mut o = vec![
            Matched {
                file: 0,
                score: 1.0,
            },
            Matched {
                file: 1,
                score: 0.9,
            },
            Located {
                file: 0,
                score: 0.1,
            },
            Located {
                file: 0,
                score: 0.0,
            },
            Located {
                file: 0,
                score: 2.0,
            },
        ];
        let p = confidence_priors(&o, 1.0);
        // In pieces: the best-located region before file 1's hit, the weak ones after it.
        assert_eq!(order_by(&o, |f| p[f]), vec![0, 4, 1, 2, 3]);
        read_whole(&mut o, &[0]);
        // Whole: every region of file 0, in line order, before file 1.
        assert_eq!(order_by(&o, |f| p[f]), vec![0, 2, 3, 4, 1]);
    }

    #[test]
    fn the_region_raising_the_quoted_message_outscores_the_one_with_more_of_its_words() {
        let needle = Needle::of(
            "Fixture scope is wrong: pytest prints \"fixture scope mismatch detected\" when a \
             fixture of session scope uses a fixture of function scope",
        );
        let regions = [
            region(
                "def describe_fixture(fixture):\n    # the fixture scope of a fixture: session \
                 scope or function scope\n    return fixture.scope",
                Some("describe_fixture"),
            ),
            region(
                "def check(a, b):\n    if a.rank < b.rank:\n        raise Error('Fixture scope \
                 mismatch detected')",
                Some("check"),
            ),
            region("def unrelated():\n    return 1", Some("unrelated")),
        ];
        let s = score_regions(&needle, &regions);
        assert!(s[1] > s[0], "{s:?}");
        assert_eq!(s[2], 0.0);
    }

    #[test]
    fn a_name_the_question_writes_out_locates_its_definition() {
        let needle = Needle::of("SetHelpFunc should pass the context to the command");
        let regions = [
            region(
                "func (c *Command) Context() context.Context { return c.ctx } // command context",
                Some("Context"),
            ),
            region(
                "func (c *Command) SetHelpFunc(f func(*Command, []string)) { c.helpFunc = f }",
                Some("SetHelpFunc"),
            ),
        ];
        let s = score_regions(&needle, &regions);
        assert!(s[1] > s[0], "{s:?}");
    }

    #[test]
    fn the_last_line_of_a_traceback_is_a_message() {
        let needle = Needle::of(
            "Running it gives\n  File \"src/app.py\", line 3, in load\nE   KeyError: \
             missing section in the settings file\nand `x` is short",
        );
        assert_eq!(needle.messages, ["missing section in the settings file"]);
        let regions = [
            region("def load():\n    return settings['section']", Some("load")),
            region(
                "def read(p):\n    raise KeyError('missing section in the settings file')",
                Some("read"),
            ),
        ];
        let s = score_regions(&needle, &regions);
        assert!(s[1] > s[0], "{s:?}");
    }

    #[test]
    fn names_written_as_code_locate_their_definition_whatever_their_case() {
        let q = "Make req.fresh honour QUERY; `strict` mode and parse() are unchanged";
        let plain = Needle::of(q);
        assert!(plain.names.is_empty(), "{:?}", plain.names);
        let needle = Needle::of(q).with_code_names(q);
        for name in ["fresh", "strict", "parse"] {
            assert!(needle.names.contains(name), "{name}: {:?}", needle.names);
        }
        // `make`, `honour`, `mode` are not written as code.
        assert_eq!(needle.names.len(), 3, "{:?}", needle.names);
        let regions = [
            region(
                "function stale(req) {\n  // a fresh request is not stale\n  return !fresh(req)\n}",
                Some("stale"),
            ),
            region(
                "function fresh(req, res) {\n  return etag(res)\n}",
                Some("fresh"),
            ),
        ];
        let before = score_regions(&plain, &regions);
        let after = score_regions(&needle, &regions);
        assert!(before[0] >= before[1], "{before:?}");
        assert!(after[1] > after[0], "{after:?}");
    }

    #[test]
    fn a_file_the_search_is_unsure_of_is_read_by_its_best_region_before_the_best_files_rest() {
        let origins = |second: f64| {
            [
                Origin::Matched {
                    file: 0,
                    score: 1.0,
                },
                Origin::Matched {
                    file: 1,
                    score: second,
                },
                Origin::Located {
                    file: 0,
                    score: 0.0,
                },
                Origin::Located {
                    file: 1,
                    score: 3.0,
                },
            ]
        };
        let by = |o: &[Origin]| {
            let p = confidence_priors(o, 1.0);
            order_by(o, |f| p[f])
        };
        // Two files alike: file 1's best region before file 0's uninformative one; by rank it
        // is after.
        assert_eq!(by(&origins(0.95)), vec![0, 1, 3, 2]);
        assert_eq!(order(&origins(0.95), 1.0), vec![0, 1, 2, 3]);
        // Sure of file 0: file 0 in depth first.
        assert_eq!(by(&origins(0.2)), vec![0, 2, 1, 3]);
    }

    #[test]
    fn only_the_best_kept_files_lead() {
        let mut kept = vec![4, 0, 2, 7];
        keep_at_most(&mut kept, 2);
        assert_eq!(kept, vec![0, 2]);
        let mut all = vec![4, 0, 2];
        keep_at_most(&mut all, 0);
        assert_eq!(all, vec![4, 0, 2]);
    }

    #[test]
    fn alike_regions_are_read_outward_from_the_anchor() {
        let spans = [(1, 10), (11, 20), (21, 30), (31, 40), (41, 50), (60, 70)];
        assert_eq!(nearest_first(&spans, (31, 40)), vec![3, 2, 4, 1, 5, 0]);
        assert_eq!(nearest_first(&spans, (1, 5)), vec![0, 1, 2, 3, 4, 5]);
    }

    #[test]
    fn a_word_every_region_uses_says_nothing() {
        let needle = Needle::of("config parse");
        let regions = [
            region("config config config", None),
            region("config parse", None),
            region("config", None),
        ];
        let s = score_regions(&needle, &regions);
        assert!(s[1] > s[0] && s[0] < 0.5, "{s:?}");
    }

    #[test]
    fn the_best_file_is_read_first_best_regions_first_and_depth_lets_the_next_in() {
        let origins = [
            Origin::Matched {
                file: 0,
                score: 1.0,
            },
            Origin::Matched {
                file: 1,
                score: 0.9,
            },
            Origin::Located {
                file: 0,
                score: 8.0,
            },
            Origin::Located {
                file: 0,
                score: 0.0,
            },
            Origin::Located {
                file: 1,
                score: 5.0,
            },
            Origin::Located {
                file: 0,
                score: 4.0,
            },
        ];
        // depth 1: file 0's hit and regions by strength; file 1's best pieces (0.5) tie with file
        // 0's uninformative region (0.5): the hit first, then the given order.
        assert_eq!(order(&origins, 1.0), vec![0, 2, 5, 1, 3, 4]);
        // depth 0.5: file 1's best pieces (0.71) come before file 0's weaker regions (0.75 and
        // 0.5 against 0.71): 0.75 first, then file 1, then the uninformative one.
        assert_eq!(order(&origins, 0.5), vec![0, 2, 5, 1, 4, 3]);
    }
    #[test]
    fn every_kept_file_leads_with_its_best_piece_before_any_file_is_read_in_depth() {
        let origins = [
            Origin::Matched {
                file: 0,
                score: 1.0,
            },
            Origin::Located {
                file: 0,
                score: 3.0,
            },
            Origin::Matched {
                file: 2,
                score: 0.5,
            },
            Origin::Located {
                file: 2,
                score: 9.0,
            },
            Origin::Matched {
                file: 1,
                score: 0.7,
            },
        ];
        let depth = order(&origins, 1.0);
        assert_eq!(depth, vec![0, 1, 4, 2, 3]);
        // Files 0 and 2 kept: file 2's best piece (its hit, before its region at equal
        // strength) comes right after file 0's; file 1 is not kept and keeps its place.
        assert_eq!(
            keep_files(&depth, &origins, &[2, 0]),
            (vec![0, 2, 1, 4, 3], 2)
        );
        assert_eq!(keep_files(&depth, &origins, &[]), (depth, 0));
    }
}
