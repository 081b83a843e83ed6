//! Splits a file's text into chunks: the units that are indexed and returned by search.
//!
//! Code is parsed with tree-sitter and cut at symbol level: one chunk per
//! definition (function, method, type, …), including the comments, attributes
//! and decorators directly above it. A container (class, impl, trait,
//! namespace, …) yields a chunk for its header, up to its first member
//! definition, and each member gets its own chunk naming the container as its
//! parent. Lines outside every definition (imports, top-level statements)
//! become [`ChunkKind::Block`] chunks; lone closing brackets join the chunk
//! above them. Markdown is cut into heading sections; plain text, and code in
//! which parsing finds no definition, into overlapping line windows. Chunks
//! longer than [`ChunkOptions::max_lines`] are split into overlapping pieces.
//!
//! Every non-blank line of a file lands in at least one chunk, and chunking
//! never fails: malformed input still yields chunks.

use std::cmp::Reverse;

use tree_sitter::{Node, Tree};

pub use super::languages::Language;
use super::languages::{
    Definition, Syntax, is_inner_doc_comment, ocaml_documented_below, parse, syntax,
};
pub use patina_core::ChunkKind;

/// A contiguous range of lines of a file, with what it defines.
#[derive(Clone, Debug, PartialEq)]
pub struct Chunk {
    /// First line, 1-based, inclusive.
    pub start_line: u32,
    /// Last line, 1-based, inclusive.
    pub end_line: u32,
    /// Name of the definition, e.g. `parse_args`, `HttpClient`, or a Markdown heading's text.
    pub symbol: Option<String>,
    pub kind: ChunkKind,
    /// Enclosing symbol: the class or impl type of a method, the parent heading of a section.
    pub parent: Option<String>,
    /// The exact source lines `start_line..=end_line` joined with '\n' (no '\r').
    pub text: String,
    /// The share (0..=1) of the chunk's non-blank bytes inside string literals of prose: help
    /// texts, usage templates, long messages (at least [`PROSE_LITERAL_BYTES`] bytes and
    /// [`PROSE_LITERAL_WORDS`] words). Docstrings (a string standing alone as a statement) are
    /// not counted: they document the code around them. 0 outside code.
    pub prose_share: f32,
}

/// A string literal this long (bytes, quotes included) with at least [`PROSE_LITERAL_WORDS`]
/// words is prose the program prints, not data.
pub const PROSE_LITERAL_BYTES: usize = 64;
pub const PROSE_LITERAL_WORDS: usize = 8;

/// Whether functions defined inside a container of this kind are methods.
fn holds_methods(kind: ChunkKind) -> bool {
    matches!(
        kind,
        ChunkKind::Class
            | ChunkKind::Struct
            | ChunkKind::Enum
            | ChunkKind::Trait
            | ChunkKind::Interface
            | ChunkKind::Impl
    )
}

/// Size limits for chunks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkOptions {
    /// Longest chunk of code, in lines; longer definitions are split into pieces.
    pub max_lines: usize,
    /// Longest Markdown section or window, in lines: prose is a unit of meaning as its author cut
    /// it, and only a very long one is split.
    pub max_prose_lines: usize,
    /// Length of the windows plain text is cut into, in lines.
    pub window_lines: usize,
    /// Lines shared by consecutive windows and pieces (at most half their length).
    pub window_overlap: usize,
}

impl Default for ChunkOptions {
    fn default() -> Self {
        ChunkOptions {
            max_lines: 80,
            max_prose_lines: 150,
            window_lines: 60,
            window_overlap: 10,
        }
    }
}

/// Splits a file's text into chunks, sorted by `(start_line, end_line)`.
///
/// Never panics, on any input. Empty or whitespace-only text yields no chunks.
pub fn chunk_file(language: Language, text: &str, opts: &ChunkOptions) -> Vec<Chunk> {
    let tree = parse(language, text);
    chunk_parsed(language, text, tree.as_ref(), opts)
}

/// [`chunk_file`] over a tree already parsed from `text` (`None`: no grammar or no tree).
pub(crate) fn chunk_parsed(
    language: Language,
    text: &str,
    tree: Option<&Tree>,
    opts: &ChunkOptions,
) -> Vec<Chunk> {
    let lines = split_lines(text);
    if lines.iter().all(|line| is_blank(line)) {
        return Vec::new();
    }
    let mut prose = Vec::new();
    let code = match language {
        Language::Markdown | Language::Text => None,
        code => tree.and_then(|tree| code_spans(code, tree, text, &lines, &mut prose)),
    };
    let (spans, max_lines) = match code {
        Some(spans) => (spans, opts.max_lines),
        None if language == Language::Markdown => {
            (markdown::sections(&lines), opts.max_prose_lines)
        }
        None => {
            let header = tree.and_then(|tree| leading_comment_rows(tree, &lines, opts));
            (
                header_then_windows(&lines, header, opts),
                opts.max_prose_lines,
            )
        }
    };
    let mut chunks: Vec<Chunk> = spans
        .into_iter()
        .flat_map(|span| split_long(span, max_lines, opts.window_overlap))
        .map(|span| span.into_chunk(&lines, &prose))
        .collect();
    chunks.sort_by_key(|chunk| (chunk.start_line, chunk.end_line));
    chunks
}

/// A chunk before its text is cut out, over 0-based inclusive rows.
#[derive(Clone, Debug)]
struct Span {
    start: usize,
    end: usize,
    kind: ChunkKind,
    symbol: Option<String>,
    parent: Option<String>,
}

impl Span {
    fn anonymous(start: usize, end: usize, kind: ChunkKind) -> Span {
        Span {
            start,
            end,
            kind,
            symbol: None,
            parent: None,
        }
    }

    /// The chunk of these rows; `prose[row]` counts the row's bytes inside prose literals (empty
    /// when the file was not parsed).
    fn into_chunk(self, lines: &[&str], prose: &[u32]) -> Chunk {
        let rows = self.start..=self.end;
        let solid: usize = lines[rows.clone()].iter().map(|l| l.trim().len()).sum();
        let in_prose: usize = rows
            .clone()
            .map(|r| prose.get(r).copied().unwrap_or(0) as usize)
            .sum();
        Chunk {
            start_line: line_number(self.start),
            end_line: line_number(self.end),
            symbol: self.symbol,
            kind: self.kind,
            parent: self.parent,
            text: lines[rows].join("\n"),
            prose_share: if solid == 0 {
                0.0
            } else {
                (in_prose as f32 / solid as f32).min(1.0)
            },
        }
    }
}

fn line_number(row: usize) -> u32 {
    u32::try_from(row + 1).unwrap_or(u32::MAX)
}

/// Splits on '\n', dropping a '\r' before it and the empty line after a final newline.
fn split_lines(text: &str) -> Vec<&str> {
    let body = text.strip_suffix('\n').unwrap_or(text);
    body.split('\n')
        .map(|line| line.strip_suffix('\r').unwrap_or(line))
        .collect()
}

fn is_blank(line: &str) -> bool {
    line.trim().is_empty()
}

/// The first and last non-blank rows within `start..=end`.
fn non_blank_bounds(lines: &[&str], start: usize, end: usize) -> Option<(usize, usize)> {
    let first = (start..=end).find(|&row| !is_blank(lines[row]))?;
    let last = (first..=end).rev().find(|&row| !is_blank(lines[row]))?;
    Some((first, last))
}

/// Whether a line carries nothing of its own: closing brackets such as `}` or
/// `});` (perhaps with a trailing comment), Ruby's `end`, Objective-C's `@end`, or a C++ access
/// label.
fn is_closing(line: &str) -> bool {
    let line = line.trim();
    let keyword = line
        .strip_prefix("@end")
        .or_else(|| line.strip_prefix("end"))
        .filter(|rest| rest.is_empty() || rest.starts_with([')', ';', ',', ' ', '\t']))
        .unwrap_or(line);
    let rest = keyword.trim_start_matches(['}', ')', ']', ';', ',', ' ', '\t']);
    let only_closers = rest.len() < line.len()
        && (rest.is_empty() || rest.starts_with("//") || rest.starts_with('#'));
    only_closers || matches!(line, "public:" | "protected:" | "private:")
}

/// Cuts `span` into consecutive pieces of at most `max_lines` lines, `overlap` lines shared.
fn split_long(span: Span, max_lines: usize, overlap: usize) -> Vec<Span> {
    let max = max_lines.max(1);
    if span.end - span.start < max {
        return vec![span];
    }
    let step = max - overlap.min(max / 2);
    let mut pieces = Vec::with_capacity((span.end - span.start) / step + 1);
    let mut start = span.start;
    loop {
        let end = (start + max - 1).min(span.end);
        pieces.push(Span {
            start,
            end,
            ..span.clone()
        });
        if end == span.end {
            return pieces;
        }
        start += step;
    }
}

/// A program without definitions (a script of top-level commands) is cut into windows; the
/// comment it opens with, when it has one of three lines or more and the file is longer than a
/// window, is a chunk of its own first: a script's header says what it does (`# Summary: Print
/// the latest installed version with the given prefix`, then its usage), as a module's
/// documentation does, and in a window it shared the model's view with the option parsing below
/// it. The windows start after it.
fn header_then_windows(lines: &[&str], header: Option<usize>, opts: &ChunkOptions) -> Vec<Span> {
    let Some(last) = header else {
        return line_windows(lines, opts);
    };
    let mut spans = vec![Span::anonymous(0, last, ChunkKind::Block)];
    spans.extend(
        line_windows(&lines[last + 1..], opts)
            .into_iter()
            .map(|w| Span::anonymous(w.start + last + 1, w.end + last + 1, ChunkKind::Window)),
    );
    spans
}

/// The last row of the comments a parsed file opens with (a shebang counts), when they take
/// three lines or more but no more than a window, code follows them, and the file is longer
/// than one window. (A longer opening comment is a guide in itself, a crate's `//!`
/// documentation: its windows stay as they were.)
fn leading_comment_rows(tree: &Tree, lines: &[&str], opts: &ChunkOptions) -> Option<usize> {
    if lines.len() <= opts.window_lines {
        return None;
    }
    let header = |end: usize| (2..opts.window_lines).contains(&end);
    let root = tree.root_node();
    let mut cursor = root.walk();
    let mut last: Option<usize> = None;
    for child in root.children(&mut cursor) {
        let row = child.start_position().row;
        if !child.kind().contains("comment") {
            // Code must follow on a line of its own.
            return last.filter(|&end| header(end) && row > end);
        }
        if last.is_some_and(|end| row > end + 1) {
            // A blank line ends the header.
            return last.filter(|&end| header(end));
        }
        last = Some(child.end_position().row);
    }
    None
}

/// Overlapping windows of `window_lines` lines, trimmed of blank lines at their edges.
fn line_windows(lines: &[&str], opts: &ChunkOptions) -> Vec<Span> {
    let size = opts.window_lines.max(1);
    let step = size - opts.window_overlap.min(size / 2);
    let mut windows = Vec::with_capacity(lines.len() / step + 1);
    let mut covered_to = None;
    let mut start = 0;
    loop {
        let end = (start + size).min(lines.len()) - 1;
        if let Some((first, last)) = non_blank_bounds(lines, start, end)
            && covered_to.is_none_or(|covered| last > covered)
        {
            windows.push(Span::anonymous(first, last, ChunkKind::Window));
            covered_to = Some(last);
        }
        if end + 1 >= lines.len() {
            return windows;
        }
        start += step;
    }
}

// ---------------------------------------------------------------------------
// Code

/// Symbol-level spans of a source file, or `None` if it has no definitions to cut at.
fn code_spans(
    language: Language,
    tree: &Tree,
    text: &str,
    lines: &[&str],
    prose: &mut Vec<u32>,
) -> Option<Vec<Span>> {
    let syntax = syntax(language)?;
    *prose = prose_rows(tree.root_node(), text, lines);
    let finder = DefinitionFinder {
        syntax,
        src: text,
        lines,
    };
    let mut found = finder.find(tree.root_node());
    if found.is_empty() {
        return None;
    }
    if matches!(language, Language::OCaml | Language::OCamlInterface) {
        take_docs_below(&mut found, lines);
    }
    Some(lay_out(&found, lines))
}

/// Extends each OCaml definition over the doc comment right below it ([`ocaml_documented_below`]).
fn take_docs_below(found: &mut [Found], lines: &[&str]) {
    let mut starts: Vec<usize> = found.iter().map(|f| f.start).collect();
    starts.sort_unstable();
    for item in found.iter_mut() {
        let next = starts
            .get(starts.partition_point(|&s| s <= item.end))
            .copied();
        if let Some(last) = ocaml_documented_below(lines, item.end, next) {
            item.end = last;
        }
    }
}

/// Tree-sitter kinds of string literals across the chunked languages.
fn is_string_literal(kind: &str) -> bool {
    matches!(
        kind,
        "string_literal"
            | "raw_string_literal"
            | "interpreted_string_literal"
            | "string"
            | "template_string"
            | "text_block"
            | "concatenated_string"
    )
}

/// Whether a string literal documents the code around it rather than being printed: a string
/// standing alone as a statement (Python's docstrings), or the text of Elixir's `@doc`,
/// `@moduledoc` and `@typedoc` attributes.
fn is_docstring(string: Node<'_>, text: &str) -> bool {
    let Some(parent) = string.parent() else {
        return false;
    };
    // Python's docstring is an expression statement; Julia's a string standing alone before a
    // definition, at the top of a file or module.
    if matches!(
        parent.kind(),
        "expression_statement" | "source_file" | "module_definition"
    ) {
        return true;
    }
    let attribute = parent
        .parent()
        .filter(|call| parent.kind() == "arguments" && call.kind() == "call")
        .filter(|call| call.parent().is_some_and(|p| p.kind() == "unary_operator"));
    attribute
        .and_then(|call| call.child_by_field_name("target"))
        .and_then(|target| text.get(target.byte_range()))
        .is_some_and(|name| matches!(name, "doc" | "moduledoc" | "typedoc"))
}

/// Per row, the bytes inside prose literals ([`Chunk::prose_share`]).
fn prose_rows(root: Node<'_>, text: &str, lines: &[&str]) -> Vec<u32> {
    let mut rows = vec![0u32; lines.len()];
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if is_string_literal(node.kind()) {
            let body = text.get(node.byte_range()).unwrap_or("");
            if body.len() >= PROSE_LITERAL_BYTES
                && body.split_whitespace().count() >= PROSE_LITERAL_WORDS
                && !is_docstring(node, text)
            {
                let (from, to) = (node.start_position(), node.end_position());
                for r in from.row..=to.row.min(lines.len().saturating_sub(1)) {
                    let line = lines[r].len();
                    let start = if r == from.row {
                        from.column.min(line)
                    } else {
                        0
                    };
                    let end = if r == to.row {
                        to.column.min(line)
                    } else {
                        line
                    };
                    let solid = lines[r].get(start..end).map_or(0, |s| s.trim().len());
                    rows[r] += solid as u32;
                }
            }
            continue;
        }
        let mut cursor = node.walk();
        stack.extend(node.children(&mut cursor));
    }
    rows
}

/// A definition located in the file.
struct Found {
    /// First row, including leading comments and attributes.
    start: usize,
    /// First row of the definition proper.
    own_start: usize,
    end: usize,
    definition: Definition,
    /// Index of the enclosing container definition.
    container: Option<usize>,
}

struct DefinitionFinder<'a> {
    syntax: &'static Syntax,
    src: &'a str,
    lines: &'a [&'a str],
}

/// A node whose children are still to be searched.
struct Visit<'t> {
    node: Node<'t>,
    /// Index of the innermost container definition around `node`.
    container: Option<usize>,
    /// First row of `node` including the comments attached above it.
    start: usize,
    /// Whether `node` is no definition itself, so the comments attached above it belong to the
    /// definition it begins with.
    groups: bool,
}

impl DefinitionFinder<'_> {
    /// All definitions outside function bodies, each container before its members.
    ///
    /// Linear in the size of the tree: it never asks tree-sitter for parents or
    /// previous siblings, which cost time proportional to the depth.
    fn find(&self, root: Node<'_>) -> Vec<Found> {
        let mut found: Vec<Found> = Vec::new();
        // An explicit stack: trees of hostile input can be deeper than the call stack.
        let mut pending = vec![Visit {
            node: root,
            container: None,
            start: root.start_position().row,
            groups: false,
        }];
        let mut cursor = root.walk();
        while let Some(visit) = pending.pop() {
            // A wrapper around a single definition (`export`, decorators,
            // `template<…>`) belongs to that definition's chunk.
            let wrapper =
                self.syntax.is_wrapper(visit.node.kind()) && self.definitions_in(visit.node) == 1;
            let mut trivia = TriviaRun::default();
            // Comments that close the previous sibling, when it is no definition, and touch this
            // one: Haskell's grammar puts the Haddock comment of the first declaration at the end
            // of the imports.
            let mut handed = TriviaRun::default();
            for child in visit.node.children(&mut cursor) {
                // Trivia attach to the definition below them, unless the language reads the
                // node as a definition itself (Elixir's `@callback` among its attributes).
                if child.is_named()
                    && self.syntax.is_trivia(child.kind())
                    && self
                        .syntax
                        .definition(child, self.src, visit.container.is_some())
                        .is_none()
                {
                    let attachable =
                        self.starts_line(child) && !is_inner_doc_comment(child, self.src);
                    trivia.push(child, attachable);
                    continue;
                }
                let mut start = trivia.attached_to(child).min(handed.attached_to(child));
                trivia = TriviaRun::default();
                handed = TriviaRun::default();
                // A node that only groups definitions (Ruby's `body_statement` after a doc
                // comment) hands the comments attached above it to the definition it opens with,
                // after the comments it opens with itself (Haskell's declarations, which open
                // with a function's signature).
                let opens = child.start_byte() == visit.node.start_byte()
                    || start < child.start_position().row
                        && start == visit.node.start_position().row;
                if visit.groups && opens {
                    start = start.min(visit.start);
                }
                if !child.is_named() {
                    continue;
                }
                let definition = self
                    .syntax
                    .definition(child, self.src, visit.container.is_some());
                let Some(definition) = definition else {
                    if child.child_count() > 0 {
                        handed = self.trailing_trivia(child);
                        pending.push(Visit {
                            node: child,
                            container: visit.container,
                            start,
                            groups: true,
                        });
                    }
                    continue;
                };
                let (anchor, start) = if wrapper {
                    (visit.node, visit.start)
                } else {
                    (child, start)
                };
                // A function defined by several equations (Haskell's `f 0 = …` then `f n = …`)
                // is one definition: the next equation extends the one just found.
                if self.syntax.is_equation(child.kind())
                    && let Some(last) = found.last_mut()
                    && last.container == visit.container
                    && last.definition.symbol == definition.symbol
                    && last.definition.kind == definition.kind
                    && last.end + 2 >= start
                {
                    last.end = last.end.max(end_row(anchor).min(self.lines.len() - 1));
                    continue;
                }
                if definition.container {
                    pending.push(Visit {
                        node: child,
                        container: Some(found.len()),
                        start,
                        groups: false,
                    });
                }
                let end = end_row(anchor).min(self.lines.len() - 1);
                let own_start = anchor.start_position().row.min(end);
                found.push(Found {
                    start: start.min(own_start),
                    own_start,
                    end,
                    definition,
                    container: visit.container,
                });
            }
        }
        found
    }

    /// The run of comments that ends `node`, if its last named children are attachable trivia.
    fn trailing_trivia(&self, node: Node<'_>) -> TriviaRun {
        let mut run = TriviaRun::default();
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            let attachable = self.syntax.is_trivia(child.kind())
                && self.starts_line(child)
                && !is_inner_doc_comment(child, self.src);
            run.push(child, attachable);
        }
        run
    }

    fn definitions_in(&self, node: Node<'_>) -> usize {
        let mut cursor = node.walk();
        node.named_children(&mut cursor)
            .filter(|child| self.syntax.is_definition_kind(child.kind()))
            .count()
    }

    /// Whether only whitespace precedes `node` on its first line.
    fn starts_line(&self, node: Node<'_>) -> bool {
        let position = node.start_position();
        self.lines
            .get(position.row)
            .and_then(|line| line.get(..position.column))
            .is_some_and(|before| before.trim().is_empty())
    }
}

/// Consecutive comments and attributes among siblings that would attach to
/// the next sibling: each on lines of its own, with no blank line in between.
#[derive(Default)]
struct TriviaRun {
    /// First and last row of the run.
    rows: Option<(usize, usize)>,
}

impl TriviaRun {
    /// Extends the run with the next sibling, which ends it unless `attachable` or at the end of
    /// the run's last line (a comment there, Haddock's `-- ^` in a signature, is that line's).
    fn push(&mut self, node: Node<'_>, attachable: bool) {
        let (start, end) = (node.start_position().row, end_row(node));
        self.rows = match self.rows {
            Some((first, last)) if !attachable && start == last => Some((first, last.max(end))),
            _ if !attachable => None,
            Some((first, last)) if last + 1 >= start => Some((first, end)),
            _ => Some((start, end)),
        };
    }

    /// The first row of `node` including the run, if the run touches it.
    fn attached_to(&self, node: Node<'_>) -> usize {
        let start = node.start_position().row;
        match self.rows {
            Some((first, last)) if last + 1 >= start => first.min(start),
            _ => start,
        }
    }
}

/// The last row holding part of `node` (a node ending at a line break ends on that line).
fn end_row(node: Node<'_>) -> usize {
    let end = node.end_position();
    if end.column == 0 && end.row > node.start_position().row {
        end.row - 1
    } else {
        end.row
    }
}

/// The line range of a container whose members have chunks of their own.
struct Scope {
    start: usize,
    end: usize,
    name: Option<String>,
}

/// Turns found definitions into spans: containers with members keep only their
/// header, members get their parents, and the remaining lines are filled in.
fn lay_out(found: &[Found], lines: &[&str]) -> Vec<Span> {
    let mut first_member = vec![usize::MAX; found.len()];
    for member in found {
        if let Some(container) = member.container {
            first_member[container] = first_member[container].min(member.start);
        }
    }
    let mut spans = Vec::with_capacity(found.len());
    let mut scopes = Vec::new();
    // Definitions whose members are already inside a chunk: their own, or an ancestor's.
    let mut whole = vec![false; found.len()];
    for (index, item) in found.iter().enumerate() {
        let container = item
            .container
            .map(|container| (container, &found[container]));
        if let Some((container, _)) = container
            && whole[container]
        {
            whole[index] = true;
            continue;
        }
        let definition = &item.definition;
        let kind = match container {
            Some((_, outer))
                if definition.kind == ChunkKind::Function
                    && holds_methods(outer.definition.kind) =>
            {
                ChunkKind::Method
            }
            _ => definition.kind,
        };
        let parent = definition
            .owner
            .clone()
            .or_else(|| container.and_then(|(_, outer)| outer.definition.member_parent.clone()));
        let mut end = item.end;
        if definition.container {
            if first_member[index] <= item.own_start {
                // Members share the container's first line: keep it in one piece.
                whole[index] = true;
            } else if first_member[index] != usize::MAX {
                end = non_blank_bounds(lines, item.start, first_member[index] - 1)
                    .map_or(item.start, |(_, last)| last);
                scopes.push(Scope {
                    start: item.start,
                    end: item.end,
                    name: definition.member_parent.clone(),
                });
            }
        }
        spans.push(Span {
            start: item.start,
            end,
            kind,
            symbol: definition.symbol.clone(),
            parent,
        });
    }
    // Several definitions on the same lines (one-liners, minified code) make one chunk.
    spans.sort_by_key(|span| (span.start, span.end));
    spans.dedup_by(|later, earlier| later.start == earlier.start && later.end == earlier.end);
    fill_gaps(&mut spans, lines, &scopes);
    spans
}

/// Covers the lines outside every definition. Runs of closing brackets join
/// the chunk above (or below); other runs become `Block` chunks, parented by
/// the container they lie in.
fn fill_gaps(spans: &mut Vec<Span>, lines: &[&str], scopes: &[Scope]) {
    let mut owner: Vec<Option<usize>> = vec![None; lines.len()];
    for (index, span) in spans.iter().enumerate() {
        owner[span.start..=span.end].fill(Some(index));
    }
    let scope_of_row = innermost_scopes(scopes, lines.len());
    let mut blocks = Vec::new();
    let mut row = 0;
    while row < lines.len() {
        if owner[row].is_some() {
            row += 1;
            continue;
        }
        let run_start = row;
        let scope = scope_of_row[row];
        while row < lines.len() && owner[row].is_none() && scope_of_row[row] == scope {
            row += 1;
        }
        let Some((first, last)) = non_blank_bounds(lines, run_start, row - 1) else {
            continue;
        };
        if (first..=last).all(|r| is_blank(lines[r]) || is_closing(lines[r])) {
            if let Some(above) = run_start.checked_sub(1).and_then(|r| owner[r]) {
                spans[above].end = last;
                owner[run_start..row].fill(Some(above));
                continue;
            }
            if let Some(below) = owner.get(row).copied().flatten() {
                spans[below].start = first;
                continue;
            }
        }
        blocks.push(Span {
            parent: scope.and_then(|scope| scopes[scope].name.clone()),
            ..Span::anonymous(first, last, ChunkKind::Block)
        });
    }
    spans.extend(blocks);
}

/// For each row, the innermost scope containing it (scopes nest like the code does).
fn innermost_scopes(scopes: &[Scope], rows: usize) -> Vec<Option<usize>> {
    let mut order: Vec<usize> = (0..scopes.len()).collect();
    order.sort_by_key(|&index| (scopes[index].start, Reverse(scopes[index].end)));
    let mut order = order.into_iter().peekable();
    let mut open: Vec<usize> = Vec::new();
    let mut scope_of_row = Vec::with_capacity(rows);
    for row in 0..rows {
        while open.last().is_some_and(|&scope| scopes[scope].end < row) {
            open.pop();
        }
        while let Some(scope) = order.next_if(|&scope| scopes[scope].start <= row) {
            open.push(scope);
        }
        scope_of_row.push(open.last().copied());
    }
    scope_of_row
}

mod markdown;
#[cfg(test)]
mod tests;
