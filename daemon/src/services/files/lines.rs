//! A range of lines out of a stream of bytes, in one pass and bounded memory: every line is
//! counted (the total is exact, however large the file), only the lines asked for are kept, and
//! never more than a given number of bytes of them. Lines are those of `str::lines`: split at
//! `\n`, a trailing `\r` dropped, a last line without `\n` counted, no empty line after a final
//! `\n`.

use std::io::Read;

/// Bytes looked at for a NUL, the sign of a binary file.
pub(crate) const BINARY_PROBE: usize = 8000;

/// What [`slice`] found.
#[derive(Debug, PartialEq)]
pub(crate) struct Sliced {
    /// Every line of the stream.
    pub total_lines: u32,
    /// The bytes of the stream.
    pub total_bytes: u64,
    /// The lines kept, joined by `\n` (no final newline).
    pub body: Vec<u8>,
    /// The last line kept, in part or whole (0 when none was).
    pub last: u32,
    /// The last line kept is longer than the bound: only its first bytes are in `body`.
    pub line_cut: bool,
    /// The stream holds a NUL byte in its first [`BINARY_PROBE`] bytes.
    pub binary: bool,
    /// The stream's first [`HEAD_BYTES`] bytes (a shebang, or an Objective-C header's `@interface`, says its language).
    pub head: Vec<u8>,
}

/// Bytes of the stream's start kept in [`Sliced::head`].
pub(crate) const HEAD_BYTES: usize = 64 * 1024;

/// Lines `first..=last` (1-based; `last` `u32::MAX` for every line from `first`) of `input`,
/// at most `max_bytes` of them: lines are kept whole until the next would not fit, and a first
/// line longer than the bound alone is kept in part (`line_cut`).
pub(crate) fn slice(
    mut input: impl Read,
    first: u32,
    last: u32,
    max_bytes: usize,
) -> std::io::Result<Sliced> {
    let mut out = Sliced {
        total_lines: 0,
        total_bytes: 0,
        body: Vec::new(),
        last: 0,
        line_cut: false,
        binary: false,
        head: Vec::new(),
    };
    let mut lines = Lines {
        first: first.max(1),
        last,
        max_bytes,
        line_no: 1,
        current: Vec::new(),
        full: false,
        open: false,
    };
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match input.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let probe_end = BINARY_PROBE.saturating_sub(out.total_bytes as usize).min(n);
        if buf[..probe_end].contains(&0) {
            out.binary = true;
            return Ok(out);
        }
        if out.head.len() < HEAD_BYTES {
            let more = (HEAD_BYTES - out.head.len()).min(n);
            out.head.extend_from_slice(&buf[..more]);
        }
        out.total_bytes += n as u64;
        let mut rest = &buf[..n];
        while !rest.is_empty() {
            let (piece, ended) = match rest.iter().position(|&b| b == b'\n') {
                Some(i) => (&rest[..i], true),
                None => (rest, false),
            };
            rest = if ended { &rest[piece.len() + 1..] } else { &[] };
            lines.piece(&out, piece);
            if ended {
                lines.end(&mut out);
            }
        }
    }
    if lines.open {
        lines.end(&mut out);
    }
    out.total_lines = lines.line_no - 1;
    Ok(out)
}

/// The line being read: its number, its bytes while it is kept, and whether the bound is reached
/// (then nothing more is kept, but lines are still counted).
struct Lines {
    first: u32,
    last: u32,
    max_bytes: usize,
    line_no: u32,
    current: Vec<u8>,
    full: bool,
    /// Bytes of line `line_no` were seen.
    open: bool,
}

impl Lines {
    fn wanted(&self) -> bool {
        !self.full && self.line_no >= self.first && self.line_no <= self.last
    }

    /// More bytes of the current line (no `\n` among them).
    fn piece(&mut self, out: &Sliced, piece: &[u8]) {
        self.open = true;
        if !self.wanted() {
            return;
        }
        self.current.extend_from_slice(piece);
        let room = self
            .max_bytes
            .saturating_sub(out.body.len() + usize::from(out.last != 0));
        if self.current.len() > room {
            if out.last == 0 {
                // The first line, longer than the bound on its own: its first bytes only (one more
                // than fits, so that `end` sees it is cut).
                self.current.truncate(room + 1);
            } else {
                // It cannot fit after the lines kept: stop keeping.
                self.current.clear();
                self.full = true;
            }
        }
    }

    /// The current line ended: keep it when it is wanted and fits, in part when it is the first
    /// and alone too long; once one does not fit, nothing more is kept.
    fn end(&mut self, out: &mut Sliced) {
        let n = self.line_no;
        self.line_no = self.line_no.saturating_add(1);
        self.open = false;
        let wanted = !self.full && n >= self.first && n <= self.last;
        let current = &mut self.current;
        if !wanted {
            current.clear();
            return;
        }
        if current.last() == Some(&b'\r') {
            current.pop();
        }
        let sep = usize::from(out.last != 0);
        if out.body.len() + sep + current.len() <= self.max_bytes {
            if sep == 1 {
                out.body.push(b'\n');
            }
            out.body.append(current);
            out.last = n;
        } else if out.last == 0 {
            current.truncate(self.max_bytes);
            out.body.append(current);
            out.last = n;
            out.line_cut = true;
            self.full = true;
        } else {
            current.clear();
            self.full = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str, first: u32, last: u32, max: usize) -> (u32, String, u32, bool) {
        let s = slice(text.as_bytes(), first, last, max).unwrap();
        assert!(!s.binary);
        assert_eq!(s.total_bytes, text.len() as u64);
        (
            s.total_lines,
            String::from_utf8(s.body).unwrap(),
            s.last,
            s.line_cut,
        )
    }

    #[test]
    fn lines_are_counted_as_str_lines_counts_them() {
        for text in [
            "",
            "\n",
            "a",
            "a\n",
            "a\nb",
            "a\r\nb\r\n",
            "\n\n\nx",
            "a\n\n",
        ] {
            let want: Vec<&str> = text.lines().collect();
            let (total, body, last, cut) = lines(text, 1, u32::MAX, 1 << 20);
            assert_eq!(total as usize, want.len(), "{text:?}");
            assert_eq!(body, want.join("\n"), "{text:?}");
            assert_eq!((last as usize, cut), (want.len(), false), "{text:?}");
        }
    }

    #[test]
    fn a_range_keeps_its_lines_and_counts_all_of_them() {
        let text: String = (1..=1000).map(|i| format!("line {i}\n")).collect();
        let (total, body, last, _) = lines(&text, 500, 502, 1 << 20);
        assert_eq!(
            (total, body.as_str(), last),
            (1000, "line 500\nline 501\nline 502", 502)
        );
        let (_, body, last, _) = lines(&text, 999, u32::MAX, 1 << 20);
        assert_eq!((body.as_str(), last), ("line 999\nline 1000", 1000));
        let (_, body, last, _) = lines(&text, 2000, u32::MAX, 1 << 20);
        assert_eq!((body.as_str(), last), ("", 0), "past the end: nothing");
    }

    #[test]
    fn the_bound_stops_at_a_whole_line_and_says_where() {
        let text: String = (1..=100).map(|i| format!("{i:09}\n")).collect(); // 10 bytes a line
        // 9 bytes a line, joined by newlines: 5 lines are 49 bytes, 6 are 59.
        let (total, body, last, cut) = lines(&text, 1, u32::MAX, 55);
        assert_eq!((total, last, cut), (100, 5, false));
        assert_eq!(body.len(), 49);
        let (_, body, last, _) = lines(&text, 6, u32::MAX, 55);
        assert_eq!((body.lines().next(), last), (Some("000000006"), 10));
    }

    #[test]
    fn one_line_longer_than_the_bound_is_kept_in_part() {
        let text = format!("{}\nnext\n", "x".repeat(300_000));
        let (total, body, last, cut) = lines(&text, 1, u32::MAX, 1000);
        assert_eq!((total, body.len(), last, cut), (2, 1000, 1, true));
        let (_, body, last, cut) = lines(&text, 2, u32::MAX, 1000);
        assert_eq!((body.as_str(), last, cut), ("next", 2, false));
    }

    #[test]
    fn a_nul_in_the_first_bytes_is_a_binary_file() {
        assert!(slice(&b"text\0more"[..], 1, u32::MAX, 100).unwrap().binary);
        let late = format!("{}\0", "a\n".repeat(BINARY_PROBE));
        assert!(!slice(late.as_bytes(), 1, u32::MAX, 100).unwrap().binary);
    }
}
