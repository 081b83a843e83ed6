//! The two ends of the transport, each on a plain thread: frames read from stdin into a channel
//! (closed at the end of input), and messages framed onto stdout in the order they are sent.

use std::io::Write;

use patina_lsp::framing;
use serde_json::Value;

use crate::logging::{debug_enabled, log};

/// Read frames from stdin on a thread. The channel closes at end of input.
pub(crate) fn spawn_reader(tx: tokio::sync::mpsc::Sender<framing::Frame>) {
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        let mut input = framing::FrameReader::new(stdin.lock());
        loop {
            match input.next_frame() {
                Ok(Some(frame)) => {
                    if tx.blocking_send(frame).is_err() {
                        return;
                    }
                }
                Ok(None) => return,
                Err(e) => {
                    log(format!("reading stdin: {e}"));
                    return;
                }
            }
        }
    });
}

/// The stdout side: framed messages written by a dedicated thread.
#[derive(Clone)]
pub(crate) struct Out(std::sync::mpsc::Sender<Option<String>>);

impl Out {
    pub fn spawn() -> (Out, std::thread::JoinHandle<()>) {
        let (tx, rx) = std::sync::mpsc::channel::<Option<String>>();
        let handle = std::thread::spawn(move || {
            let stdout = std::io::stdout();
            while let Ok(Some(msg)) = rx.recv() {
                let mut out = stdout.lock();
                if framing::write_frame(&mut out, msg.as_bytes()).is_err() {
                    return;
                }
            }
            let _ = stdout.lock().flush();
        });
        (Out(tx), handle)
    }

    pub fn send(&self, msg: &Value) {
        let text = msg.to_string();
        if debug_enabled() {
            log(format!("-> {}", &text[..text.floor_char_boundary(2000)]));
        }
        let _ = self.0.send(Some(text));
    }

    /// No more messages: the writer thread flushes and ends.
    pub fn close(&self) {
        let _ = self.0.send(None);
    }
}
