//! What documentation names: the inline code spans of Markdown and reStructuredText
//! ([`code_spans`]) and the names each may stand for ([`names_in`]). A guide says what the
//! program does in the words people ask in and names the code that does it in code spans
//! (`` `pyenv latest <prefix>` ``, `` `setupKoinFragmentFactory()` ``); the daemon's dependency
//! oracle resolves those names to definitions and files and walks from them.

/// The inline code spans of a documentation text, in order. A span opens with a run of backticks
/// and closes with a run of the same length (CommonMark; reStructuredText's ``` ``literal`` ```
/// and `` :func:`name` `` read the same way). Fenced blocks are left out: they show use, not
/// names.
pub fn code_spans(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut fence: Option<(char, usize)> = None;
    for line in text.lines() {
        let t = line.trim_start();
        if let Some(f) = fence_of(t) {
            match fence {
                None => fence = Some(f),
                Some((c, n)) if f.0 == c && f.1 >= n => fence = None,
                Some(_) => {}
            }
            continue;
        }
        if fence.is_some() {
            continue;
        }
        let mut rest = line;
        while let Some(open) = rest.find('`') {
            let run = rest[open..].chars().take_while(|&c| c == '`').count();
            let after = &rest[open + run..];
            let Some(close) = closing_run(after, run) else {
                // No closing run of that length: the backticks are literal.
                rest = after;
                continue;
            };
            let span = after[..close].trim();
            if !span.is_empty() {
                out.push(span);
            }
            rest = &after[close + run..];
        }
    }
    out
}

/// A fence line's character and length (three or more backticks or tildes).
fn fence_of(line: &str) -> Option<(char, usize)> {
    let c = line.chars().next().filter(|&c| c == '`' || c == '~')?;
    let n = line.chars().take_while(|&x| x == c).count();
    (n >= 3).then_some((c, n))
}

/// Where a run of exactly `run` backticks starts in `text`.
fn closing_run(text: &str, run: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'`' {
            let n = bytes[i..].iter().take_while(|&&b| b == b'`').count();
            if n == run {
                return Some(i);
            }
            i += n;
        } else {
            i += 1;
        }
    }
    None
}

/// What a span may name, most specific first: its first two words as one when the span reads as
/// a command and its subcommand (`pyenv latest -k 3.10` → `pyenv latest`, the script
/// `pyenv-latest`), then each word that could be an identifier (`MinimumLevel.Override("x")` →
/// `MinimumLevel`, `Override`, `x`). Options (`-k`), numbers and punctuation name nothing.
pub fn names_in(span: &str) -> Vec<String> {
    let word = |w: &str| {
        w.chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_')
            && w.chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '-')
    };
    let mut out = Vec::new();
    let spaced: Vec<&str> = span.split_whitespace().collect();
    if spaced.len() >= 2 && word(spaced[0]) && word(spaced[1]) {
        out.push(format!("{} {}", spaced[0], spaced[1]));
    }
    out.extend(
        span.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
            .filter(|w| word(w))
            .map(str::to_string),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_are_read_outside_fenced_blocks() {
        let text =
            "Run `pyenv latest -k 3.10` to see.\n```sh\npyenv `nope`\n```\nThen `Foo.bar()`.";
        assert_eq!(code_spans(text), ["pyenv latest -k 3.10", "Foo.bar()"]);
    }

    #[test]
    fn a_fence_closes_only_with_a_fence_of_its_kind() {
        let text = "~~~~\n```\n`inside`\n~~~~\nafter `out`";
        assert_eq!(code_spans(text), ["out"]);
    }

    #[test]
    fn double_backticks_and_rst_roles_are_spans() {
        let text = "Use ``pytest.raises`` or :func:`approx`; a `` `tick` `` too.";
        assert_eq!(code_spans(text), ["pytest.raises", "approx", "`tick`"]);
    }

    #[test]
    fn an_unclosed_backtick_is_literal() {
        assert_eq!(code_spans("a `` b `c`"), ["c"]);
        assert!(code_spans("a ``b` c").is_empty());
    }

    #[test]
    fn a_command_span_names_its_script_then_its_words() {
        assert_eq!(
            names_in("pyenv latest -k <prefix>"),
            ["pyenv latest", "pyenv", "latest", "prefix"]
        );
        assert_eq!(
            names_in("MinimumLevel.Override(\"Microsoft\", 3)"),
            ["MinimumLevel", "Override", "Microsoft"]
        );
        assert_eq!(names_in("./site build"), ["site", "build"]);
        assert_eq!(
            names_in("bats_require_minimum_version"),
            ["bats_require_minimum_version"]
        );
    }
}
