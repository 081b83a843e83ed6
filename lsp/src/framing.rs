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

/// Read the next frame; `None` at the end of input.
pub fn read_frame(input: &mut impl BufRead) -> std::io::Result<Option<Frame>> {
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
        let mut r = std::io::BufReader::new(input);
        std::iter::from_fn(|| read_frame(&mut r).unwrap()).collect()
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
