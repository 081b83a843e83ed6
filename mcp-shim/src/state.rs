//! The server's state, shared by every request: the daemon channel, the negotiated protocol
//! version, the connection's session and its recent answers. Knows no tool and no message: tools
//! take a `&State`, the protocol layer owns it.

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use patina_proto::daemon::Daemon;

use crate::answers::Answers;
use crate::versions::LATEST_VERSION;

/// State shared by every request.
pub(crate) struct State {
    pub daemon: Daemon,
    version: Mutex<&'static str>,
    /// The session this client started or used last: the default of the session tools.
    pub session: Mutex<Option<String>>,
    batches: AtomicU64,
    /// Recent answers of this connection, for implicit feedback (`tools/feedback.rs`).
    pub answers: Answers,
}

impl State {
    pub fn new(socket: PathBuf) -> State {
        State {
            daemon: Daemon::new(socket, "patina-mcp").with_remedies(crate::content::for_agent),
            version: Mutex::new(LATEST_VERSION),
            session: Mutex::new(None),
            batches: AtomicU64::new(0),
            answers: Answers::default(),
        }
    }

    /// The negotiated protocol version (the newest until `initialize`).
    pub fn version(&self) -> &'static str {
        *self.version.lock().expect("version lock")
    }

    /// Record the version `initialize` negotiated.
    pub fn set_version(&self, version: &'static str) {
        *self.version.lock().expect("version lock") = version;
    }

    /// A fresh number for a batch (its key among the requests in flight).
    pub fn next_batch(&self) -> u64 {
        self.batches.fetch_add(1, Ordering::Relaxed)
    }
}
