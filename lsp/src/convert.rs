//! Pure conversions between the daemon's answers and LSP's shapes (`lsp_types`): `file://` URIs,
//! UTF-16 positions, symbol kinds, ranges of 1-based line spans, the identifier under the cursor,
//! and the signature and doc comment of a definition read from its lines.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use lsp_types::{Location, Position, Range, SymbolKind, Uri};
use serde_json::Value;

/// `file://` URI of an absolute path (percent-encoding everything but unreserved characters and `/`).
pub(crate) fn path_to_uri(path: &Path) -> String {
    patina_core::paths::file_uri(path, "")
}

/// The `file://` URI of an absolute path, as an LSP `Uri`.
pub(crate) fn file_uri(path: &Path) -> Uri {
    Uri::from_str(&path_to_uri(path))
        .expect("`file://` and a percent-encoded path (unreserved bytes and `/`) is a URI")
}

/// The path of a `file://` URI (`None` for other schemes or a bad encoding).
pub(crate) fn uri_to_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    // `file://host/path`: only the local host (empty or "localhost") is a path here.
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    if !rest.starts_with('/') {
        return None;
    }
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Some(PathBuf::from(String::from_utf8(out).ok()?))
}

/// The LSP range of the 1-based inclusive line span `start..=end`: from the start of the first
/// line to the start of the line after the last.
pub(crate) fn line_range(start: u32, end: u32) -> Range {
    let start = start.max(1) - 1;
    let end = end.max(start + 1);
    Range::new(Position::new(start, 0), Position::new(end, 0))
}

/// The `Location` of the 1-based line span `start..=end` of file `rel` in `root`.
pub(crate) fn location(root: &Path, rel: &str, start: u32, end: u32) -> Location {
    Location::new(file_uri(&root.join(rel)), line_range(start, end))
}

/// LSP `SymbolKind` of a chunk or definition kind as the chunker names it.
pub(crate) fn symbol_kind(kind: &str) -> SymbolKind {
    match kind {
        "file" => SymbolKind::FILE,
        "module" | "mod" | "namespace" | "package" => SymbolKind::MODULE,
        "class" | "impl" | "object" => SymbolKind::CLASS,
        "method" => SymbolKind::METHOD,
        "property" => SymbolKind::PROPERTY,
        "field" => SymbolKind::FIELD,
        "constructor" => SymbolKind::CONSTRUCTOR,
        "enum" => SymbolKind::ENUM,
        "interface" | "trait" | "protocol" => SymbolKind::INTERFACE,
        "function" | "fn" | "func" | "macro" => SymbolKind::FUNCTION,
        "variable" | "let" | "var" => SymbolKind::VARIABLE,
        "const" | "constant" | "static" => SymbolKind::CONSTANT,
        "section" | "heading" => SymbolKind::STRING,
        "struct" | "union" | "record" => SymbolKind::STRUCT,
        "type" | "type_alias" | "typedef" => SymbolKind::TYPE_PARAMETER,
        _ => SymbolKind::FILE,
    }
}

/// The byte offset in `text` of an LSP position (line, UTF-16 column); positions past a line's
/// end clamp to it, lines past the end to the end of the text.
pub(crate) fn offset_of(text: &str, line: u32, character: u32) -> usize {
    let mut start = 0;
    for _ in 0..line {
        match text[start..].find('\n') {
            Some(i) => start += i + 1,
            None => return text.len(),
        }
    }
    let line_text = &text[start..];
    let line_end = line_text.find('\n').unwrap_or(line_text.len());
    let mut units = 0u32;
    for (i, c) in line_text[..line_end].char_indices() {
        if units >= character {
            return start + i;
        }
        units += c.len_utf16() as u32;
    }
    start + line_end
}

/// Apply one `TextDocumentContentChangeEvent` (a range edit, or the whole text without a range).
pub(crate) fn apply_change(text: &mut String, change: &Value) {
    let Some(new_text) = change.get("text").and_then(Value::as_str) else {
        return;
    };
    let Some(range) = change.get("range") else {
        *text = new_text.to_string();
        return;
    };
    let pos = |p: &Value| {
        offset_of(
            text,
            p["line"].as_u64().unwrap_or(0) as u32,
            p["character"].as_u64().unwrap_or(0) as u32,
        )
    };
    let (a, b) = (pos(&range["start"]), pos(&range["end"]));
    let (a, b) = (a.min(b), a.max(b));
    text.replace_range(a..b, new_text);
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// The identifier at (or just before) an LSP position.
pub(crate) fn word_at(text: &str, line: u32, character: u32) -> Option<String> {
    let at = offset_of(text, line, character);
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    let line_text = &text[line_start..line_end];
    let mut cur = at - line_start;
    // On the character after a word (the cursor at its end): take that word.
    if !line_text[cur..].starts_with(is_ident) && line_text[..cur].ends_with(is_ident) {
        cur = line_text[..cur]
            .char_indices()
            .next_back()
            .map_or(0, |(i, _)| i);
    }
    if !line_text[cur..].starts_with(is_ident) {
        return None;
    }
    let start = line_text[..cur]
        .char_indices()
        .rev()
        .take_while(|(_, c)| is_ident(*c))
        .last()
        .map_or(cur, |(i, _)| i);
    let end = line_text[cur..]
        .char_indices()
        .find(|(_, c)| !is_ident(*c))
        .map_or(line_text.len(), |(i, _)| cur + i);
    let word = &line_text[start..end];
    (!word.is_empty() && !word.starts_with(|c: char| c.is_ascii_digit())).then(|| word.to_string())
}

/// The index in `lines` of the line that names `symbol` (its last `.`/`::` segment) as a whole
/// word, skipping comment and attribute lines: where a chunk that starts with its doc comment
/// actually defines its symbol.
pub(crate) fn name_line(lines: &[&str], symbol: &str) -> Option<usize> {
    let name = symbol.rsplit(['.', ':']).next().unwrap_or(symbol);
    if name.is_empty() {
        return None;
    }
    lines.iter().position(|l| {
        let t = l.trim_start();
        let comment = COMMENT_PREFIXES.iter().any(|p| t.starts_with(p)) && !t.starts_with("#[");
        !comment
            && !t.starts_with("#[")
            && !t.starts_with('@')
            && t.match_indices(name).any(|(i, _)| {
                !t[..i].ends_with(is_ident) && !t[i + name.len()..].starts_with(is_ident)
            })
    })
}

/// Comment line prefixes a doc comment is made of.
const COMMENT_PREFIXES: [&str; 9] = ["///", "//!", "//", "/**", "*/", "*", "#", "--", ";;"];

/// The signature (the definition's first lines, up to its body) and the doc comment (the comment
/// block right above it, or a docstring right below a Python `def`/`class`) of the definition on
/// line `def` (0-based) of `lines`.
pub(crate) fn signature_and_doc(lines: &[&str], def: usize) -> (String, String) {
    let Some(first) = lines.get(def) else {
        return (String::new(), String::new());
    };
    let mut sig: Vec<&str> = vec![first.trim_end()];
    let ends = |l: &str| {
        let t = l.trim_end();
        t.ends_with('{')
            || t.ends_with(':')
            || t.ends_with(';')
            || t.ends_with("=>")
            || t.ends_with('}')
    };
    if !ends(first) {
        for l in lines.iter().skip(def + 1).take(5) {
            sig.push(l.trim_end());
            if ends(l) {
                break;
            }
        }
    }
    let mut signature = sig.join("\n");
    for suffix in ['{', ':'] {
        if let Some(s) = signature.strip_suffix(suffix)
            && !s.trim().is_empty()
        {
            signature = s.trim_end().to_string();
        }
    }
    // Attributes and decorators between the comment and the definition are skipped.
    let mut i = def;
    while i > 0 && {
        let t = lines[i - 1].trim_start();
        t.starts_with("#[") || t.starts_with('@')
    } {
        i -= 1;
    }
    let mut doc: Vec<String> = Vec::new();
    while i > 0 {
        let t = lines[i - 1].trim();
        let Some(prefix) = COMMENT_PREFIXES
            .iter()
            .find(|p| t.starts_with(**p) && !t.starts_with("#["))
        else {
            break;
        };
        let body = t[prefix.len()..].trim_start_matches(['/', '*', '!']);
        doc.push(
            body.strip_prefix(' ')
                .unwrap_or(body)
                .trim_end()
                .to_string(),
        );
        i -= 1;
    }
    doc.reverse();
    while doc.first().is_some_and(|l| l.is_empty()) {
        doc.remove(0);
    }
    while doc.last().is_some_and(|l| l.is_empty()) {
        doc.pop();
    }
    if doc.is_empty() {
        // A docstring: the first statement of the body.
        let body_start = def + sig.len();
        if let Some(l) = lines.get(body_start) {
            let t = l.trim();
            for q in ["\"\"\"", "'''"] {
                if let Some(rest) = t.strip_prefix(q) {
                    if let Some(one) = rest.strip_suffix(q) {
                        doc.push(one.trim().to_string());
                    } else {
                        doc.push(rest.trim().to_string());
                        for l in lines.iter().skip(body_start + 1).take(30) {
                            let t = l.trim();
                            if let Some(end) = t.strip_suffix(q) {
                                doc.push(end.trim().to_string());
                                break;
                            }
                            doc.push(t.to_string());
                        }
                    }
                    break;
                }
            }
        }
    }
    (signature, doc.join("\n").trim().to_string())
}

/// `YYYY-MM-DD` (UTC) of a Unix time in seconds.
pub(crate) fn date(unix: i64) -> String {
    // Days to the civil date (the proleptic Gregorian calendar, eras of 400 years).
    let z = unix.div_euclid(86_400) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// The fence language of a path, for hover code blocks: the language the index gives the file
/// (its names are the fence names editors highlight), none for prose and plain text.
pub(crate) fn fence_language(path: &str) -> &'static str {
    match patina_core::Language::from_path(Path::new(path)) {
        patina_core::Language::Markdown | patina_core::Language::Text => "",
        patina_core::Language::Tsx => "typescript",
        language => language.name(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn hover_fences_name_the_indexed_language() {
        for (path, fence) in [
            ("src/lib.rs", "rust"),
            ("web/App.tsx", "typescript"),
            ("lib/shop/cart.rb", "ruby"),
            ("src/Invoice.cs", "csharp"),
            ("src/main/kotlin/Invoice.kt", "kotlin"),
            ("lib/acme/invoice.ex", "elixir"),
            ("scripts/deploy.sh", "bash"),
            ("README.md", ""),
            ("data.csv", ""),
        ] {
            assert_eq!(fence_language(path), fence, "{path}");
        }
    }

    #[test]
    fn uris_round_trip_with_percent_encoding() {
        let p = Path::new("/tmp/a dir/ünï/x#1.rs");
        let uri = path_to_uri(p);
        assert_eq!(uri, "file:///tmp/a%20dir/%C3%BCn%C3%AF/x%231.rs");
        assert_eq!(uri_to_path(&uri).as_deref(), Some(p));
        assert_eq!(
            uri_to_path("file://localhost/etc/x").unwrap(),
            Path::new("/etc/x")
        );
        assert_eq!(uri_to_path("untitled:Untitled-1"), None);
        assert_eq!(uri_to_path("file:///bad%2"), None);
    }

    #[test]
    fn positions_count_utf16_units_and_clamp() {
        let text = "a😀b\nsecond\n";
        // 😀 is two UTF-16 units: column 3 is `b`.
        assert_eq!(&text[offset_of(text, 0, 3)..offset_of(text, 0, 4)], "b");
        assert_eq!(offset_of(text, 0, 99), text.find('\n').unwrap());
        assert_eq!(&text[offset_of(text, 1, 0)..], "second\n");
        assert_eq!(offset_of(text, 9, 0), text.len());
    }

    #[test]
    fn changes_apply_as_ranges_or_whole_texts() {
        let mut t = String::from("fn old() {}\n");
        apply_change(
            &mut t,
            &json!({"range": {"start": {"line": 0, "character": 3}, "end": {"line": 0, "character": 6}}, "text": "new_name"}),
        );
        assert_eq!(t, "fn new_name() {}\n");
        apply_change(&mut t, &json!({"text": "whole"}));
        assert_eq!(t, "whole");
    }

    #[test]
    fn the_word_under_the_cursor_is_an_identifier() {
        let text = "let opts = args::parse_args(&argv);";
        assert_eq!(word_at(text, 0, 20).as_deref(), Some("parse_args"));
        assert_eq!(
            word_at(text, 0, 27).as_deref(),
            Some("parse_args"),
            "just after it"
        );
        assert_eq!(word_at(text, 0, 3), Some("let".into()), "just after `let`");
        assert_eq!(word_at("a + 12", 0, 5), None);
        assert_eq!(word_at(" ( ", 0, 1), None);
    }

    #[test]
    fn signature_and_doc_comment_of_a_rust_function() {
        let src = "/// Turn pairs into options.\n/// Second line.\n#[inline]\npub fn parse_args(\n    args: &[String],\n) -> Options {\n    todo!()\n}\n";
        let lines: Vec<&str> = src.lines().collect();
        let (sig, doc) = signature_and_doc(&lines, 3);
        assert_eq!(
            sig,
            "pub fn parse_args(\n    args: &[String],\n) -> Options"
        );
        assert_eq!(doc, "Turn pairs into options.\nSecond line.");
    }

    #[test]
    fn the_name_line_skips_doc_comments_and_attributes() {
        let chunk = [
            "/// Turn parse_args into options.",
            "#[inline]",
            "pub fn parse_args() {",
            "}",
        ];
        assert_eq!(name_line(&chunk, "parse_args"), Some(2));
        assert_eq!(name_line(&chunk, "HttpClient.parse_args"), Some(2));
        assert_eq!(
            name_line(&["fn parse_args_compat() {}"], "parse_args"),
            None
        );
    }

    #[test]
    fn python_docstrings_are_doc_comments() {
        let src = "def parse(argv):\n    \"\"\"Mirror of parse_args.\"\"\"\n    return {}\n";
        let lines: Vec<&str> = src.lines().collect();
        assert_eq!(
            signature_and_doc(&lines, 0),
            ("def parse(argv)".into(), "Mirror of parse_args.".into())
        );
    }

    #[test]
    fn dates_are_civil_utc_days() {
        assert_eq!(date(0), "1970-01-01");
        assert_eq!(date(951_782_400), "2000-02-29");
        assert_eq!(date(1_795_392_000), "2026-11-23");
        assert_eq!(date(-86_400), "1969-12-31");
    }

    #[test]
    fn kinds_map_to_lsp_symbol_kinds() {
        // The numbers on the wire, as before lsp-types.
        let number = |k: &str| serde_json::to_value(symbol_kind(k)).unwrap();
        assert_eq!(number("function"), 12);
        assert_eq!(number("struct"), 23);
        assert_eq!(number("method"), 6);
        assert_eq!(number("heading"), 15);
        assert_eq!(number("typedef"), 26);
        assert_eq!(number("something-new"), 1);
        assert_eq!(
            serde_json::to_value(line_range(3, 5)).unwrap(),
            json!({"start": {"line": 2, "character": 0}, "end": {"line": 5, "character": 0}})
        );
    }
}
