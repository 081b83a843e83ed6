//! The ordered queue of overlay changes (an open file's unsaved text, or `None` to drop it) on
//! their way to the daemon, with sequence numbers: what was queued ([`Overlays::sent`]) and what
//! the daemon has applied ([`Overlays::wait_applied`]). `buffers.rs` fills and drains it.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::{mpsc, watch};

/// How long the daemon may take to index one buffer before the request goes on without it.
pub(crate) const INDEX_WAIT: Duration = Duration::from_secs(10);

/// One overlay change: the file's new text, or `None` to drop the overlay.
pub(crate) struct Op {
    pub seq: u64,
    pub path: String,
    pub text: Option<String>,
}

pub(crate) struct Overlays {
    sent: AtomicU64,
    applied: watch::Sender<u64>,
    tx: mpsc::UnboundedSender<Op>,
    rx: Mutex<Option<mpsc::UnboundedReceiver<Op>>>,
}

impl Overlays {
    pub fn new() -> Overlays {
        let (tx, rx) = mpsc::unbounded_channel();
        Overlays {
            sent: AtomicU64::new(0),
            applied: watch::Sender::new(0),
            tx,
            rx: Mutex::new(Some(rx)),
        }
    }

    /// The sequence number of the last change queued.
    pub fn sent(&self) -> u64 {
        self.sent.load(Ordering::SeqCst)
    }

    /// Wait until every change up to `seq` was handed to the daemon (and indexed, or timed out).
    pub async fn wait_applied(&self, seq: u64) {
        let mut rx = self.applied.subscribe();
        let _ = tokio::time::timeout(INDEX_WAIT * 2, rx.wait_for(|a| *a >= seq)).await;
    }

    /// Queue a change of `path`: its new text, or `None` to drop its overlay.
    pub fn queue(&self, path: String, text: Option<String>) {
        let seq = self.sent.fetch_add(1, Ordering::SeqCst) + 1;
        let _ = self.tx.send(Op { seq, path, text });
    }

    /// The receiving end, for the one task that forwards changes (`None` once taken).
    pub fn take_receiver(&self) -> Option<mpsc::UnboundedReceiver<Op>> {
        self.rx.lock().expect("rx lock").take()
    }

    /// Every change up to `seq` was handed to the daemon.
    pub fn applied_to(&self, seq: u64) {
        self.applied.send_replace(seq);
    }
}
