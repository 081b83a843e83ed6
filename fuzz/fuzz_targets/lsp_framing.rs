//! `patina-lsp`'s `Content-Length` framing on arbitrary bytes: every frame is read or reported
//! malformed, and the stream always ends (at the end of input, or with an error when it ends
//! inside a body, which the server takes as the client gone); bytes read again after a wrong
//! length never make the reader go round in circles.
#![no_main]

use libfuzzer_sys::fuzz_target;
use patina_lsp::framing::{Frame, FrameReader, MAX_MESSAGE_BYTES};

fuzz_target!(|data: &[u8]| {
    let mut input = FrameReader::new(std::io::BufReader::with_capacity(7, data));
    let mut frames = 0usize;
    while let Ok(Some(frame)) = input.next_frame() {
        if let Frame::Message(body) = frame {
            assert!(body.len() <= MAX_MESSAGE_BYTES);
        }
        frames += 1;
        assert!(frames <= data.len() + 1, "the reader must make progress");
    }
});
