//! The base protocol of LSP: messages framed by a `Content-Length` header block (`\r\n`-terminated
//! lines, a blank line, then exactly that many bytes of JSON). Pure over `BufRead`/`Write`.

use std::io::{BufRead, Read, Write};

/// Bodies longer than this are skipped unread (and answered with an error).
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;
/// Header blocks longer than this are malformed.
const MAX_HEADER_BYTES: usize = 8 * 1024;

/// One read from the stream.
#[derive(Debug, PartialEq)]
pub enum Frame {
    /// A message body (not yet parsed as JSON).
    Message(Vec<u8>),
    /// A frame that could not be read: why. The stream stays usable (the bad frame was skipped).
    Malformed(String),
}

/// Reads frames from a byte stream, and finds its footing again after a frame whose
/// `Content-Length` was wrong: a length too short leaves the rest of the body before the next
/// header, on the same line (dropped up to the header's name); a length too long swallows the
/// start of the next message (a body that is not JSON but holds a `Content-Length:` header is cut
/// there, and the rest read again). No message after a bad one is lost for good.
pub struct FrameReader<R> {
    input: Rewind<R>,
}

impl<R: BufRead> FrameReader<R> {
    pub fn new(input: R) -> FrameReader<R> {
        FrameReader {
            input: Rewind {
                back: Vec::new(),
                pos: 0,
                inner: input,
            },
        }
    }

    /// The next frame; `None` at the end of input.
    pub fn next_frame(&mut self) -> std::io::Result<Option<Frame>> {
        let frame = read_frame(&mut self.input)?;
        let Some(Frame::Message(body)) = &frame else {
            return Ok(frame);
        };
        // A body with a header inside that is not JSON: the length said was too long.
        if let Some(at) = find_header(body).filter(|&at| at > 0)
            && serde_json::from_slice::<serde::de::IgnoredAny>(body).is_err()
        {
            self.input.push_back(&body[at..]);
            return Ok(Some(Frame::Malformed(format!(
                "the message is shorter than its Content-Length ({}) said: read again from the \
                 next header",
                body.len()
            ))));
        }
        Ok(frame)
    }
}

/// Where `Content-Length:` (in any case) starts in `bytes`, if it does.
fn find_header(bytes: &[u8]) -> Option<usize> {
    const NAME: &[u8] = b"content-length:";
    bytes
        .windows(NAME.len())
        .position(|w| w.eq_ignore_ascii_case(NAME))
}

/// A reader that gives back bytes pushed back before reading on.
struct Rewind<R> {
    back: Vec<u8>,
    pos: usize,
    inner: R,
}

impl<R> Rewind<R> {
    fn push_back(&mut self, bytes: &[u8]) {
        let mut back = bytes.to_vec();
        back.extend_from_slice(&self.back[self.pos..]);
        self.back = back;
        self.pos = 0;
    }
}

impl<R: BufRead> Read for Rewind<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.pos < self.back.len() {
            let n = (self.back.len() - self.pos).min(buf.len());
            buf[..n].copy_from_slice(&self.back[self.pos..self.pos + n]);
            self.pos += n;
            return Ok(n);
        }
        self.inner.read(buf)
    }
}

impl<R: BufRead> BufRead for Rewind<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if self.pos < self.back.len() {
            return Ok(&self.back[self.pos..]);
        }
        self.inner.fill_buf()
    }

    fn consume(&mut self, n: usize) {
        if self.pos < self.back.len() {
            self.pos += n;
            if self.pos >= self.back.len() {
                self.back.clear();
                self.pos = 0;
            }
        } else {
            self.inner.consume(n);
        }
    }
}

/// Read the next frame; `None` at the end of input. A header line with bytes before its
/// `Content-Length:` (the rest of a body whose length was said too short) is read from the
/// header's name on.
fn read_frame(input: &mut impl BufRead) -> std::io::Result<Option<Frame>> {
    let mut length: Option<Result<usize, String>> = None;
    let mut header_bytes = 0usize;
    let mut saw_any = false;
    loop {
        let mut line = Vec::new();
        let n = input
            .by_ref()
            .take((MAX_HEADER_BYTES + 1) as u64)
            .read_until(b'\n', &mut line)?;
        if n == 0 {
            return Ok(if saw_any {
                Some(Frame::Malformed("end of input inside a header".into()))
            } else {
                None
            });
        }
        header_bytes += n;
        if header_bytes > MAX_HEADER_BYTES {
            skip_line(input)?;
            return Ok(Some(Frame::Malformed(format!(
                "header block longer than {MAX_HEADER_BYTES} bytes"
            ))));
        }
        if let Some(at) = find_header(&line).filter(|&at| at > 0) {
            // Leftovers of a bad frame before a header: the header starts a frame afresh.
            line.drain(..at);
            length = None;
            header_bytes = line.len();
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            if !saw_any {
                // Stray blank lines between messages are tolerated.
                continue;
            }
            break;
        }
        saw_any = true;
        let Some((name, value)) = text.split_once(':') else {
            length = Some(Err(format!("header line without a colon: {text:?}")));
            continue;
        };
        if name.trim().eq_ignore_ascii_case("content-length") {
            length = Some(
                value
                    .trim()
                    .parse::<usize>()
                    .map_err(|_| format!("Content-Length is not a number: {:?}", value.trim())),
            );
        }
    }
    let len = match length {
        None => return Ok(Some(Frame::Malformed("no Content-Length header".into()))),
        Some(Err(why)) => return Ok(Some(Frame::Malformed(why))),
        Some(Ok(len)) => len,
    };
    if len > MAX_MESSAGE_BYTES {
        std::io::copy(&mut input.by_ref().take(len as u64), &mut std::io::sink())?;
        return Ok(Some(Frame::Malformed(format!(
            "a message of {len} bytes exceeds the limit of {MAX_MESSAGE_BYTES} bytes"
        ))));
    }
    let mut body = vec![0; len];
    input.read_exact(&mut body)?;
    Ok(Some(Frame::Message(body)))
}

fn skip_line(input: &mut impl BufRead) -> std::io::Result<()> {
    let mut sink = Vec::new();
    input.read_until(b'\n', &mut sink)?;
    Ok(())
}

/// Write one framed message.
pub fn write_frame(out: &mut impl Write, body: &[u8]) -> std::io::Result<()> {
    write!(out, "Content-Length: {}\r\n\r\n", body.len())?;
    out.write_all(body)?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(input: &[u8]) -> Vec<Frame> {
        let mut r = FrameReader::new(std::io::BufReader::with_capacity(7, input));
        std::iter::from_fn(|| r.next_frame().unwrap()).collect()
    }

    fn framed(body: &str) -> String {
        format!("Content-Length: {}\r\n\r\n{body}", body.len())
    }

    /// A wrong length (too short, too long, not a number) costs its own message only: the next
    /// message is read whole.
    #[test]
    fn after_a_wrong_length_the_next_message_is_read_whole() {
        let bad = r#"{"jsonrpc":"2.0","id":1,"method":"x"}"#;
        let good = r#"{"jsonrpc":"2.0","id":2,"method":"y"}"#;
        for (name, first) in [
            ("too short", format!("Content-Length: 10\r\n\r\n{bad}")),
            (
                "too long",
                format!("Content-Length: {}\r\n\r\n{bad}", bad.len() + 30),
            ),
            ("not a number", format!("Content-Length: ten\r\n\r\n{bad}")),
        ] {
            let input = format!("{first}{}{}", framed(good), framed("[]"));
            let got = frames(input.as_bytes());
            let messages: Vec<&Vec<u8>> = got
                .iter()
                .filter_map(|f| match f {
                    Frame::Message(b) => Some(b),
                    Frame::Malformed(_) => None,
                })
                .collect();
            assert!(
                messages.contains(&&good.as_bytes().to_vec()),
                "{name}: the next message is read whole: {got:?}"
            );
            assert_eq!(messages.last(), Some(&&b"[]".to_vec()), "{name}: {got:?}");
            assert!(
                got.iter().any(|f| matches!(f, Frame::Malformed(_)))
                    || messages
                        .iter()
                        .any(|b| serde_json::from_slice::<serde_json::Value>(b).is_err()),
                "{name}: the bad frame is reported: {got:?}"
            );
        }
    }

    #[test]
    fn reads_framed_messages_back_to_back() {
        let mut buf = Vec::new();
        write_frame(&mut buf, br#"{"a":1}"#).unwrap();
        buf.extend_from_slice(b"content-length: 2\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}");
        assert_eq!(
            frames(&buf),
            vec![
                Frame::Message(br#"{"a":1}"#.to_vec()),
                Frame::Message(b"{}".to_vec())
            ]
        );
    }

    #[test]
    fn a_malformed_header_is_reported_and_the_next_frame_still_read() {
        let input = b"Content-Length: many\r\n\r\nX-Nothing: 1\r\n\r\nContent-Length: 2\r\n\r\n[]";
        let got = frames(input);
        assert!(
            matches!(&got[0], Frame::Malformed(m) if m.contains("not a number")),
            "{got:?}"
        );
        assert!(
            matches!(&got[1], Frame::Malformed(m) if m.contains("no Content-Length")),
            "{got:?}"
        );
        assert_eq!(got[2], Frame::Message(b"[]".to_vec()));
        assert_eq!(got.len(), 3);
    }

    #[test]
    fn end_of_input_inside_a_header_is_malformed_and_then_the_end() {
        assert_eq!(
            frames(b"Content-Length: 3\r\n"),
            vec![Frame::Malformed("end of input inside a header".into())]
        );
        assert!(frames(b"").is_empty());
    }
}
