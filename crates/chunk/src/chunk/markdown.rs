//! Markdown: one section per heading, named by the heading's words.
//!
//! Headings are ATX (`## Usage`) and setext (a one-line paragraph underlined with `===` or `---`)
//! outside code fences. A page's front matter (`---` … `---` at its top) with a `title:` names the
//! page as a heading above all of its own: static-site docs give their title there and start their
//! text at `##`.

use super::{ChunkKind, Span, non_blank_bounds};

/// One section per heading, plus the text before the first heading.
pub(super) fn sections(lines: &[&str]) -> Vec<Span> {
    let headings = headings(lines);
    let mut sections = Vec::with_capacity(headings.len() + 1);
    let preamble_end = headings.first().map_or(lines.len(), |heading| heading.row);
    if preamble_end > 0
        && let Some((first, last)) = non_blank_bounds(lines, 0, preamble_end - 1)
    {
        sections.push(Span::anonymous(first, last, ChunkKind::Section));
    }
    // Headings enclosing the current one: (level, title).
    let mut enclosing: Vec<(usize, Option<&str>)> = Vec::new();
    for (index, heading) in headings.iter().enumerate() {
        while enclosing
            .last()
            .is_some_and(|&(level, _)| level >= heading.level)
        {
            enclosing.pop();
        }
        let next = headings.get(index + 1).map_or(lines.len(), |next| next.row);
        let end =
            non_blank_bounds(lines, heading.row, next - 1).map_or(heading.row, |(_, last)| last);
        sections.push(Span {
            start: heading.row,
            end,
            kind: ChunkKind::Section,
            symbol: heading.title.clone(),
            parent: enclosing
                .last()
                .and_then(|&(_, title)| title)
                .map(str::to_owned),
        });
        enclosing.push((heading.level, heading.title.as_deref()));
    }
    sections
}

struct Heading {
    row: usize,
    level: usize,
    /// The heading's words ([`plain_title`]); `None` when it has none.
    title: Option<String>,
}

/// The headings outside fenced code blocks: the front matter's title (level 0), ATX and setext.
fn headings(lines: &[&str]) -> Vec<Heading> {
    let mut headings = Vec::new();
    let mut body = 0;
    if let Some((end, title)) = front_matter(lines) {
        headings.push(Heading {
            row: 0,
            level: 0,
            title,
        });
        body = end + 1;
    }
    let mut fence: Option<Fence> = None;
    // The row of a paragraph line that stands alone so far (blank or a heading above it): what a
    // setext underline turns into a heading.
    let mut lone_line: Option<usize> = None;
    let mut after_break = true;
    for (row, line) in lines.iter().enumerate().skip(body) {
        let found = headings.len();
        let mut paragraph = false;
        match &fence {
            Some(open) => {
                if open.is_closed_by(line) {
                    fence = None;
                }
            }
            None => {
                if let Some(opened) = Fence::opened_by(line) {
                    fence = Some(opened);
                } else if let Some((level, title)) = atx_heading(line) {
                    let title = title.and_then(plain_title);
                    headings.push(Heading { row, level, title });
                } else if let (Some(level), Some(title_row)) = (setext_level(line), lone_line) {
                    let title = plain_title(lines[title_row].trim());
                    headings.push(Heading {
                        row: title_row,
                        level,
                        title,
                    });
                } else {
                    paragraph = is_paragraph_line(line);
                }
            }
        }
        lone_line = (paragraph && after_break).then_some(row);
        after_break = line.trim().is_empty() || headings.len() > found;
    }
    headings
}

/// The last row of the front matter at the top of a page (`---` … `---` or `...`), and its
/// `title:` as words.
fn front_matter(lines: &[&str]) -> Option<(usize, Option<String>)> {
    if lines.first()?.trim_end() != "---" {
        return None;
    }
    let end = lines
        .iter()
        .enumerate()
        .skip(1)
        .take(200)
        .find(|(_, line)| matches!(line.trim_end(), "---" | "..."))?
        .0;
    let title = lines[1..end].iter().find_map(|line| {
        let value = line.strip_prefix("title:")?.trim();
        let unquoted = value
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .or_else(|| value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
            .unwrap_or(value);
        plain_title(unquoted)
    });
    Some((end, title))
}

/// The level of a setext underline: `===` (1) or `---` (2), indented at most three spaces.
fn setext_level(line: &str) -> Option<usize> {
    let body = strip_markdown_indent(line)?.trim_end();
    let marker = body.chars().next()?;
    let level = match marker {
        '=' => 1,
        '-' => 2,
        _ => return None,
    };
    body.chars().all(|c| c == marker).then_some(level)
}

/// Whether a line can be a paragraph's text (and so a setext heading's): not blank, not a list
/// item, quote, table row, HTML block or indented code.
fn is_paragraph_line(line: &str) -> bool {
    let Some(body) = strip_markdown_indent(line) else {
        return false;
    };
    let list_item = |marker: &str| {
        body.strip_prefix(marker)
            .is_some_and(|r| r.is_empty() || r.starts_with([' ', '\t']))
    };
    let ordered = body.split_once(['.', ')']).is_some_and(|(n, r)| {
        !n.is_empty()
            && n.len() <= 9
            && n.bytes().all(|b| b.is_ascii_digit())
            && (r.is_empty() || r.starts_with(' '))
    });
    !body.trim().is_empty()
        && !["-", "*", "+"].into_iter().any(list_item)
        && !ordered
        && !body.starts_with(['>', '|', '<'])
        && setext_level(line).is_none()
}

/// An open code fence (```` ``` ```` or `~~~`).
struct Fence {
    marker: char,
    len: usize,
}

impl Fence {
    fn opened_by(line: &str) -> Option<Fence> {
        let body = strip_markdown_indent(line)?;
        let marker = body.chars().next().filter(|&c| c == '`' || c == '~')?;
        let len = body.chars().take_while(|&c| c == marker).count();
        // A backtick fence's info string cannot contain backticks (that is inline code).
        let valid = len >= 3 && !(marker == '`' && body[len..].contains('`'));
        valid.then_some(Fence { marker, len })
    }

    fn is_closed_by(&self, line: &str) -> bool {
        let Some(body) = strip_markdown_indent(line) else {
            return false;
        };
        let len = body.chars().take_while(|&c| c == self.marker).count();
        len >= self.len && body[len..].trim().is_empty()
    }
}

/// The line without its indentation, if that is at most three spaces (more makes a code block).
fn strip_markdown_indent(line: &str) -> Option<&str> {
    let body = line.trim_start_matches(' ');
    (line.len() - body.len() <= 3).then_some(body)
}

/// The level and title of an ATX heading line (`## Title ##`).
fn atx_heading(line: &str) -> Option<(usize, Option<&str>)> {
    let body = strip_markdown_indent(line)?;
    let level = body.bytes().take_while(|&b| b == b'#').count();
    let rest = &body[level..];
    if !(1..=6).contains(&level) || !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
        return None;
    }
    let mut title = rest.trim();
    let unclosed = title.trim_end_matches('#');
    if unclosed.is_empty() || unclosed.ends_with([' ', '\t']) {
        title = unclosed.trim_end();
    }
    Some((level, (!title.is_empty()).then_some(title)))
}

/// A heading as words: what a reader sees of it, not its markup. Images (`![build](…)`, a README's
/// badges and logos) and HTML tags are dropped, links keep their text, inline code its content,
/// character references become their characters (`&nbsp;` a space). A heading's title names its
/// section and every section below it, in the symbol oracle and in the text embedded for each of
/// them, so markup left in it (badge URLs) would weigh on all of them. `None` when no words are
/// left.
fn plain_title(raw: &str) -> Option<String> {
    // A title is a line's worth of words (a README's line of badges is some 500 bytes); a longer
    // "heading" (a generated file's single line) is read only so far.
    let mut end = raw.len().min(MAX_TITLE_BYTES);
    while !raw.is_char_boundary(end) {
        end -= 1;
    }
    title_words(&raw[..end], true)
}

/// How much of a heading line [`plain_title`] reads.
const MAX_TITLE_BYTES: usize = 4096;

/// The words of `raw`; a link's text is read for its words too (`links`), one level deep: an image
/// inside a link is a badge, a link inside a link is not Markdown. Linear in `raw`: the brackets'
/// pairs and each position's next `>` are found in one pass each.
fn title_words(raw: &str, links: bool) -> Option<String> {
    let bytes = raw.as_bytes();
    let squares = pairs(bytes, b'[', b']');
    let rounds = pairs(bytes, b'(', b')');
    // A link `[text](target)` or `[text][ref]` opening at `at`: where its text ends, and where
    // the link does.
    let link = |at: usize| -> Option<(usize, usize)> {
        let close = squares[at]?;
        let end = match bytes.get(close + 1)? {
            b'(' => rounds[close + 1]?,
            b'[' => squares[close + 1]?,
            _ => return None,
        };
        Some((close, end + 1))
    };
    let mut next_gt = vec![None; bytes.len() + 1];
    for at in (0..bytes.len()).rev() {
        next_gt[at] = if bytes[at] == b'>' {
            Some(at)
        } else {
            next_gt[at + 1]
        };
    }
    let mut out = String::with_capacity(raw.len());
    let mut at = 0;
    while let Some(c) = raw[at..].chars().next() {
        let image = c == '!' && bytes.get(at + 1) == Some(&b'[');
        if let Some((_, end)) = image.then(|| link(at + 1)).flatten() {
            at = end;
        } else if let Some((close, end)) = (c == '[' && links).then(|| link(at)).flatten() {
            if let Some(words) = title_words(&raw[at + 1..close], false) {
                out.push_str(&words);
            }
            at = end;
        } else if let Some(end) = (c == '<' && is_tag_start(&raw[at + 1..]))
            .then(|| next_gt[at])
            .flatten()
        {
            out.push(' ');
            at = end + 1;
        } else if let Some((decoded, len)) = (c == '&')
            .then(|| character_reference(&raw[at..]))
            .flatten()
        {
            out.push(decoded);
            at += len;
        } else {
            if c != '`' {
                out.push(c);
            }
            at += c.len_utf8();
        }
    }
    let words = out.split_whitespace().collect::<Vec<_>>().join(" ");
    let words = words.trim_matches(|c: char| c == '|' || c == '-' || c == '·' || c.is_whitespace());
    (!words.is_empty()).then(|| words.to_owned())
}

/// For each byte of `bytes` that is `open`, the position of the `close` that pairs with it.
fn pairs(bytes: &[u8], open: u8, close: u8) -> Vec<Option<usize>> {
    let mut out = vec![None; bytes.len()];
    let mut stack = Vec::new();
    for (at, &b) in bytes.iter().enumerate() {
        if b == open {
            stack.push(at);
        } else if b == close
            && let Some(opened) = stack.pop()
        {
            out[opened] = Some(at);
        }
    }
    out
}

/// Whether what follows a `<` starts an HTML tag (`img …`, `/a`).
fn is_tag_start(after: &str) -> bool {
    after
        .trim_start_matches('/')
        .starts_with(|c: char| c.is_ascii_alphabetic())
}

/// A character reference (`&nbsp;`, `&amp;`, `&#39;`, `&#x27;`) at the start of `s`: its
/// character and length. Names other than the few headings use are left as text.
fn character_reference(s: &str) -> Option<(char, usize)> {
    let end = s.bytes().take(12).position(|b| b == b';')?;
    let body = &s[1..end];
    let decoded = match body {
        "nbsp" | "ensp" | "emsp" | "thinsp" => ' ',
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        "mdash" => '—',
        "ndash" => '–',
        _ => {
            let number = body.strip_prefix('#')?;
            let code = match number.strip_prefix(['x', 'X']) {
                Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                None => number.parse().ok()?,
            };
            char::from_u32(code)?
        }
    };
    Some((decoded, end + 1))
}

#[cfg(test)]
mod tests {
    use super::plain_title;

    #[test]
    fn a_heading_is_named_by_its_words_not_its_markup() {
        let cases = [
            ("Install", Some("Install")),
            (
                "Serilog&nbsp;[![Build status](https://github.com/x/y/badge.svg?branch=dev)](https://github.com/x/y/actions)&nbsp;[![NuGet](https://img.shields.io/nuget/v/S.svg)](https://nuget.org/S/)",
                Some("Serilog"),
            ),
            ("![Logo](Doc/icons/logo.jpg) Json.NET", Some("Json.NET")),
            (
                "[Warp, the AI terminal](https://www.warp.dev/cobra)",
                Some("Warp, the AI terminal"),
            ),
            ("The `serve` command", Some("The serve command")),
            ("<img src=\"logo.png\" width=\"64\"> Hakyll", Some("Hakyll")),
            ("Q&amp;A &#8212; help", Some("Q&A — help")),
            ("Tom & Jerry; a [b] c", Some("Tom & Jerry; a [b] c")),
            ("a < b", Some("a < b")),
            ("[![CI](https://ci/badge.svg)](https://ci)", None),
            ("[unclosed](link", Some("[unclosed](link")),
        ];
        for (raw, words) in cases {
            assert_eq!(plain_title(raw).as_deref(), words, "{raw}");
        }
    }

    #[test]
    fn a_hostile_heading_is_read_in_bounded_time_and_depth() {
        // Deeply nested brackets: no recursion past one level, no stack to exhaust, no rescans.
        let nested = format!("{}x{}(y)", "[".repeat(200_000), "]".repeat(200_000));
        assert!(plain_title(&nested).is_some());
        // Only a line's worth is read, cut at a character boundary.
        let long = "é".repeat(10_000);
        let words = plain_title(&long).unwrap();
        assert!(words.len() <= super::MAX_TITLE_BYTES, "{}", words.len());
        let tags = "<a".repeat(100_000);
        assert!(plain_title(&tags).is_some());
    }
}
