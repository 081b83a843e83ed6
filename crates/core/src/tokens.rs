//! Code-aware tokenisation shared by indexing, querying and ranking.
//!
//! An identifier such as `parseHTTPRequest_v2` yields the whole identifier (`parsehttprequest_v2`)
//! followed by its parts split on snake_case, kebab-case, camelCase/PascalCase and letter/digit
//! boundaries (`parse`, `http`, `request`, `v`, `2`), all lowercased. A query for `http request`
//! therefore matches `HttpRequest`, and a query for the exact identifier matches it best.

/// Identifiers longer than this are hashes, base64 or minified code: indexed as a whole only.
const MAX_SPLIT_LEN: usize = 64;
/// Tokens longer than this are dropped (tantivy also refuses very long terms).
const MAX_TOKEN_LEN: usize = 128;

/// About how many tokens a language model counts in `s` (≈ characters / 4): what token budgets
/// (context, repository map) are filled against.
pub fn approx_tokens(s: &str) -> usize {
    s.len().div_ceil(4)
}

/// Calls `emit(offset_from, offset_to, token)` for every token of `text`, in order.
pub fn for_each_token(text: &str, mut emit: impl FnMut(usize, usize, &str)) {
    let bytes = text.as_bytes();
    let mut i = 0;
    let mut buf = String::new();
    while i < text.len() {
        let c = text[i..].chars().next().expect("in bounds");
        if !is_word_char(c) {
            i += c.len_utf8();
            continue;
        }
        // A word: alphanumerics and '_', with single '-' joining two word characters (kebab-case).
        let start = i;
        let mut end = i;
        let mut j = i;
        while j < text.len() {
            let c = text[j..].chars().next().expect("in bounds");
            if is_word_char(c) {
                j += c.len_utf8();
                end = j;
            } else if c == '-'
                && j + 1 < text.len()
                && bytes[j + 1] != b'-'
                && text[j + 1..].chars().next().is_some_and(is_word_char)
                && end == j
            {
                j += 1;
            } else {
                break;
            }
        }
        i = j.max(end);
        let word = &text[start..end];
        emit_word(word, start, &mut buf, &mut emit);
    }
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn emit_word(
    word: &str,
    offset: usize,
    buf: &mut String,
    emit: &mut impl FnMut(usize, usize, &str),
) {
    let trimmed = word.trim_matches('_');
    if trimmed.is_empty() || trimmed.len() > MAX_TOKEN_LEN {
        return;
    }
    let lead = word.len() - word.trim_start_matches('_').len();
    let offset = offset + lead;
    buf.clear();
    buf.extend(trimmed.chars().flat_map(char::to_lowercase));
    emit(offset, offset + trimmed.len(), buf);
    if trimmed.len() > MAX_SPLIT_LEN {
        return;
    }
    let parts = split_parts(trimmed);
    if parts.len() <= 1 {
        return;
    }
    for (from, to) in parts {
        buf.clear();
        buf.extend(trimmed[from..to].chars().flat_map(char::to_lowercase));
        emit(offset + from, offset + to, buf);
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Class {
    Lower,
    Upper,
    Digit,
    Sep,
}

fn class(c: char) -> Class {
    if c == '_' || c == '-' {
        Class::Sep
    } else if c.is_numeric() {
        Class::Digit
    } else if c.is_uppercase() {
        Class::Upper
    } else {
        Class::Lower
    }
}

/// Byte ranges of the parts of an identifier: `HTTPServer2_go` → `HTTP`, `Server`, `2`, `go`.
fn split_parts(word: &str) -> Vec<(usize, usize)> {
    let chars: Vec<(usize, char)> = word.char_indices().collect();
    let mut parts = Vec::new();
    let mut start: Option<usize> = None;
    for (k, &(pos, c)) in chars.iter().enumerate() {
        let cls = class(c);
        if cls == Class::Sep {
            if let Some(s) = start.take() {
                parts.push((s, pos));
            }
            continue;
        }
        let Some(s) = start else {
            start = Some(pos);
            continue;
        };
        let prev = class(chars[k - 1].1);
        let next = chars.get(k + 1).map(|&(_, n)| class(n));
        let boundary = match (prev, cls) {
            (Class::Lower, Class::Upper) => true,
            (Class::Digit, Class::Upper | Class::Lower)
            | (Class::Upper | Class::Lower, Class::Digit) => true,
            // "HTTPServer": the boundary falls before the last capital of a run followed by lowercase.
            (Class::Upper, Class::Upper) => next == Some(Class::Lower),
            _ => false,
        };
        if boundary {
            parts.push((s, pos));
            start = Some(pos);
        }
    }
    if let Some(s) = start {
        parts.push((s, word.len()));
    }
    parts
}

/// The distinct tokens of a query, in first-seen order, at most `max`.
pub fn query_terms(text: &str, max: usize) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for_each_token(text, |_, _, tok| {
        if out.len() < max && seen.insert(tok.to_string()) {
            out.push(tok.to_string());
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<String> {
        let mut v = Vec::new();
        for_each_token(s, |_, _, t| v.push(t.to_string()));
        v
    }

    #[test]
    fn splits_identifier_styles_and_keeps_the_whole() {
        assert_eq!(toks("parse_args"), ["parse_args", "parse", "args"]);
        assert_eq!(toks("parseArgs"), ["parseargs", "parse", "args"]);
        assert_eq!(toks("HTTPClient"), ["httpclient", "http", "client"]);
        assert_eq!(
            toks("max-file-size"),
            ["max-file-size", "max", "file", "size"]
        );
        assert_eq!(toks("utf8Decode"), ["utf8decode", "utf", "8", "decode"]);
        assert_eq!(toks("__init__"), ["init"]);
        assert_eq!(toks("plain"), ["plain"]);
    }

    #[test]
    fn punctuation_and_operators_separate_words() {
        assert_eq!(
            toks("a.b(c) -> d--e x - y"),
            ["a", "b", "c", "d", "e", "x", "y"]
        );
        assert_eq!(toks("config.toml"), ["config", "toml"]);
    }

    #[test]
    fn offsets_point_at_the_source() {
        let s = "let fooBar = 1;";
        let mut v = Vec::new();
        for_each_token(s, |a, b, t| v.push((t.to_string(), &s[a..b])));
        assert_eq!(v[1], ("foobar".to_string(), "fooBar"));
        assert_eq!(v[2], ("foo".to_string(), "foo"));
        assert_eq!(v[3], ("bar".to_string(), "Bar"));
    }

    #[test]
    fn unicode_and_garbage_do_not_panic() {
        let _ = toks("naïve_Ünïcode 日本語テキスト \u{0}\u{FFFD} --- ___ - _");
        let long = "x".repeat(10_000);
        assert!(toks(&long).is_empty());
        assert_eq!(query_terms("Foo foo FOO bar", 10), ["foo", "bar"]);
    }
}
