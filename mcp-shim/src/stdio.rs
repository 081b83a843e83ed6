//! The two stdio threads: one reads stdin into messages (see [`crate::framing::Lines`]), one
//! writes stdout, a message per line, so a slow reader never blocks request handling.

use std::io::Write;

use serde_json::Value;

use crate::framing::{Input, Lines, MAX_MESSAGE_BYTES};
use crate::log::{debug_enabled, log, truncate_for_log};

/// Read newline-delimited messages from stdin on a thread (see [`Lines`]). The channel closes at
/// end of input.
pub(crate) fn spawn_reader(tx: tokio::sync::mpsc::Sender<Input>) {
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        let mut lines = Lines::new(stdin.lock(), MAX_MESSAGE_BYTES);
        loop {
            match lines.next_input() {
                Ok(Some(input)) => {
                    if tx.blocking_send(input).is_err() {
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

/// The stdout side: messages are written, one per line, by a dedicated thread so a slow reader
/// never blocks request handling.
#[derive(Clone)]
pub(crate) struct Out(std::sync::mpsc::Sender<Option<String>>);

impl Out {
    pub fn spawn() -> (Out, std::thread::JoinHandle<()>) {
        let (tx, rx) = std::sync::mpsc::channel::<Option<String>>();
        let handle = std::thread::spawn(move || {
            let stdout = std::io::stdout();
            // `None` ends the stream (everything sent before it is written first).
            while let Ok(Some(msg)) = rx.recv() {
                let mut out = stdout.lock();
                if out
                    .write_all(msg.as_bytes())
                    .and_then(|_| out.write_all(b"\n"))
                    .and_then(|_| out.flush())
                    .is_err()
                {
                    return;
                }
            }
        });
        (Out(tx), handle)
    }

    pub fn send(&self, msg: &Value) {
        let text = msg.to_string();
        if debug_enabled() {
            log(format!("-> {}", truncate_for_log(&text)));
        }
        let _ = self.0.send(Some(text));
    }

    /// Write what was sent so far, then stop the writer.
    pub fn close(&self) {
        let _ = self.0.send(None);
    }
}
