//! The stdio transport's framing: newline-delimited messages, each bounded in size. Pure over
//! `BufRead`, so the same code serves stdin and the fuzz target.

use std::io::BufRead;

/// Messages longer than this are discarded unread (and answered with an Invalid Request error).
pub(crate) const MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;

/// What the reader hands on.
#[derive(Debug, PartialEq)]
pub(crate) enum Input {
    /// One message, without its newline.
    Line(Vec<u8>),
    /// A message over the limit, discarded as it was read (never held whole): its size in bytes.
    TooLong(usize),
}

/// Splits a byte stream into [`Input`]s. A message never occupies more than `max` bytes of
/// memory: past the limit the rest of its line is counted and dropped.
pub(crate) struct Lines<R> {
    input: R,
    max: usize,
    buf: Vec<u8>,
    discarded: usize,
}

impl<R: BufRead> Lines<R> {
    pub(crate) fn new(input: R, max: usize) -> Lines<R> {
        Lines {
            input,
            max,
            buf: Vec::new(),
            discarded: 0,
        }
    }

    /// The next message; `None` at the end of input (a last line without a newline still counts).
    pub(crate) fn next_input(&mut self) -> std::io::Result<Option<Input>> {
        loop {
            let available = match self.input.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if available.is_empty() {
                return Ok(if self.discarded > 0 {
                    Some(Input::TooLong(std::mem::take(&mut self.discarded)))
                } else if !self.buf.is_empty() {
                    Some(Input::Line(std::mem::take(&mut self.buf)))
                } else {
                    None
                });
            }
            let (chunk, complete) = match available.iter().position(|&b| b == b'\n') {
                Some(i) => (&available[..i], Some(i + 1)),
                None => (available, None),
            };
            if self.discarded > 0 || self.buf.len() + chunk.len() > self.max {
                self.discarded += self.buf.len() + chunk.len();
                self.buf.clear();
            } else {
                self.buf.extend_from_slice(chunk);
            }
            let used = complete.unwrap_or(chunk.len());
            self.input.consume(used);
            if complete.is_some() {
                return Ok(Some(if self.discarded > 0 {
                    Input::TooLong(std::mem::take(&mut self.discarded))
                } else {
                    Input::Line(std::mem::take(&mut self.buf))
                }));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(bytes: &[u8], chunk: usize, max: usize) -> Vec<Input> {
        let mut lines = Lines::new(std::io::BufReader::with_capacity(chunk, bytes), max);
        std::iter::from_fn(|| lines.next_input().unwrap()).collect()
    }

    #[test]
    fn lines_are_split_bounded_and_the_last_one_needs_no_newline() {
        for chunk in [1, 3, 64] {
            assert_eq!(
                split(b"ab\n\nlong line\nend", chunk, 4),
                vec![
                    Input::Line(b"ab".to_vec()),
                    Input::Line(Vec::new()),
                    Input::TooLong(9),
                    Input::Line(b"end".to_vec()),
                ],
                "read {chunk} bytes at a time"
            );
        }
        assert_eq!(split(b"", 8, 4), vec![]);
        assert_eq!(split(b"toolong", 2, 4), vec![Input::TooLong(7)]);
    }
}
