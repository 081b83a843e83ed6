//! Conditional compilation read as one build: the text a grammar parses when directives
//! (`#if`/`#elif`/`#else`/`#endif`) may stand anywhere, even inside a declaration.
//!
//! C# code that targets several frameworks switches a signature or an expression body between
//! variants:
//!
//! ```text
//! #if FEATURE_SPAN
//!     EventProperty[] Construct(MessageTemplate t, ReadOnlySpan<object?> args)
//! #else
//!     EventProperty[] Construct(MessageTemplate t, object?[] args)
//! #endif
//!     { … }
//! ```
//!
//! Parsed as written, both signatures reach the grammar and the method falls apart: the first
//! signature becomes a method of its own without a body, the directive's symbol
//! (`FEATURE_SPAN`) becomes a method's name, members lose their class. Compilers read one
//! variant; so does the chunker: the first branch of every conditional, as ctags and most
//! documentation tools do. The other branches and the conditional directives are blanked — every byte
//! but line breaks becomes a space — so every offset and line of the parse is the file's own,
//! and a chunk's text, cut from the file, still holds every variant.

use std::borrow::Cow;

/// `text` with the conditional directives and every branch of a conditional but its first
/// blanked; borrowed when nothing was.
pub(crate) fn first_branches(text: &str) -> Cow<'_, str> {
    if !text.contains('#') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    // One entry per open `#if`: whether lines of its current branch are read.
    let mut open: Vec<bool> = Vec::new();
    let mut changed = false;
    for line in text.split_inclusive('\n') {
        let reading = open.iter().all(|r| *r);
        let blank = match directive(line) {
            Some(Directive::If) => {
                open.push(reading);
                true
            }
            Some(Directive::Else) => {
                // The first branch was read (when its parent was): no other branch is.
                if let Some(top) = open.last_mut() {
                    *top = false;
                }
                true
            }
            Some(Directive::EndIf) => {
                open.pop();
                true
            }
            Some(Directive::Other) => !reading,
            None => !reading,
        };
        if blank {
            changed = true;
            for c in line.chars() {
                match c {
                    '\n' | '\r' => out.push(c),
                    // One space per byte keeps every offset after it.
                    c => out.extend(std::iter::repeat_n(' ', c.len_utf8())),
                }
            }
        } else {
            out.push_str(line);
        }
    }
    if changed {
        Cow::Owned(out)
    } else {
        Cow::Borrowed(text)
    }
}

enum Directive {
    If,
    /// `#elif` or `#else`.
    Else,
    EndIf,
    /// `#region`, `#pragma`, `#nullable`, `#define` and the like: no branch; the grammar reads
    /// them where they are read.
    Other,
}

fn directive(line: &str) -> Option<Directive> {
    let rest = line.trim_start().strip_prefix('#')?.trim_start();
    let word: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect();
    Some(match word.as_str() {
        "if" | "ifdef" | "ifndef" => Directive::If,
        "elif" | "else" => Directive::Else,
        "endif" => Directive::EndIf,
        "region" | "endregion" | "pragma" | "nullable" | "define" | "undef" | "line"
        | "warning" | "error" => Directive::Other,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::first_branches;

    #[test]
    fn the_first_branch_is_read_and_every_offset_kept() {
        let text =
            "class A\n{\n#if X\n    void F(int a)\n#else\n    void F(long a)\n#endif\n    { }\n}\n";
        let read = first_branches(text);
        assert_eq!(read.len(), text.len());
        assert_eq!(read.lines().count(), text.lines().count());
        assert!(read.contains("void F(int a)"));
        assert!(!read.contains("long"));
        assert!(!read.contains('#'));
        // Byte offsets hold past multi-byte characters blanked.
        let text = "#if X\n// café\n#else\n// thé\n#endif\nint b;\n";
        let read = first_branches(text);
        assert_eq!(read.len(), text.len());
        assert_eq!(read.find("int b;"), text.find("int b;"));
    }

    #[test]
    fn nested_conditionals_read_only_first_branches_of_read_branches() {
        let text = "#if A\na\n#if B\nb\n#else\nc\n#endif\n#elif C\nd\n#if E\ne\n#endif\n#else\nf\n#endif\ng\n";
        let kept: Vec<&str> = first_branches(text)
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(|l| &text[text.find(l).unwrap()..][..l.len()])
            .collect();
        assert_eq!(kept, ["a", "b", "g"]);
    }

    #[test]
    fn text_without_directives_is_borrowed_and_hashes_in_code_are_not_directives() {
        let text = "var s = \"#if\"; // #else\nint x = 1; # not a directive\n";
        assert!(matches!(
            first_branches(text),
            std::borrow::Cow::Borrowed(_)
        ));
        // An unbalanced `#endif` closes nothing it does not have.
        let text = "#endif\nint x;\n";
        assert!(first_branches(text).contains("int x;"));
    }
}
