//! The long-lived connection of a client that serves many calls (`patina-mcp`, `patina-lsp`) to
//! `patinad`: opened once (starting the daemon when none answers, exactly as the `patina` client
//! does, via [`crate::endpoint`]), checked for protocol compatibility, reused by every call, and
//! re-opened — restarting the daemon if it died — when a call finds it gone, retrying with backoff
//! (bounded) until a daemon answers.

use std::future::Future;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use tonic::transport::Channel;
use tonic::{Code, Status};

/// How long a freshly started daemon may take to accept connections.
const START_TIMEOUT: Duration = Duration::from_secs(20);
/// How long one call may take before the agent is told the daemon did not answer.
const CALL_TIMEOUT: Duration = Duration::from_secs(120);
/// How long a call keeps reconnecting (with backoff) to a daemon that went away before giving up:
/// a killed daemon's socket may still accept for a moment, and its successor needs a moment to
/// load before it listens.
const RECONNECT_FOR: Duration = Duration::from_secs(30);
const FIRST_BACKOFF: Duration = Duration::from_millis(25);
const MAX_BACKOFF: Duration = Duration::from_secs(1);

pub struct Daemon {
    socket: PathBuf,
    /// The program's name, for the lines it logs to stderr.
    program: &'static str,
    /// How this program says an error's remedy (`patina_core::Remedy`): a shell's words by
    /// default, an agent's tools for `patina-mcp`.
    remedy_text: fn(crate::kinds::Remedy) -> &'static str,
    channel: tokio::sync::Mutex<Option<Channel>>,
}

/// Why no channel could be opened: worth retrying (nothing answers yet, or the connection broke
/// during the handshake), or not (the daemon speaks another protocol; the socket path is taken).
enum NoChannel {
    Transient(String),
    Permanent(String),
}

impl Daemon {
    pub fn new(socket: PathBuf, program: &'static str) -> Daemon {
        Daemon {
            socket,
            program,
            remedy_text: crate::kinds::Remedy::for_shell,
            channel: tokio::sync::Mutex::new(None),
        }
    }

    /// Say errors' remedies with `text` (e.g. name the agent's own tools).
    pub fn with_remedies(mut self, text: fn(crate::kinds::Remedy) -> &'static str) -> Daemon {
        self.remedy_text = text;
        self
    }

    /// Connect (starting the daemon if needed) ahead of the first call; the error says why not.
    pub async fn warm_up(&self) -> Result<(), String> {
        match self.channel().await {
            Ok(_) => Ok(()),
            Err(NoChannel::Transient(e) | NoChannel::Permanent(e)) => Err(e),
        }
    }

    /// The open channel, connecting (and starting the daemon) first when there is none.
    async fn channel(&self) -> Result<Channel, NoChannel> {
        let mut slot = self.channel.lock().await;
        if let Some(ch) = slot.as_ref() {
            return Ok(ch.clone());
        }
        let ch = crate::endpoint::connect_or_start(&self.socket, START_TIMEOUT)
            .await
            .map_err(|e| {
                let msg = format!("cannot reach the Patina daemon: {e}");
                if e.permanent {
                    NoChannel::Permanent(msg)
                } else {
                    NoChannel::Transient(msg)
                }
            })?;
        crate::endpoint::check(&ch).await.map_err(|e| {
            // A protocol mismatch is for the user to fix; anything else is a daemon that is not
            // (or no longer) answering on a connection it accepted.
            if e.permanent() {
                NoChannel::Permanent(e.to_string())
            } else {
                NoChannel::Transient(e.to_string())
            }
        })?;
        *slot = Some(ch.clone());
        Ok(ch)
    }

    /// Run one RPC. When the daemon is gone (it was stopped, restarted or crashed) the channel is
    /// re-opened — starting a daemon — and the call retried, with backoff, until a daemon answers
    /// or [`RECONNECT_FOR`] has passed. Calls that write carry an idempotency key, so a retry of a
    /// call whose reply was lost stores nothing twice. Errors come back as the daemon's own
    /// explanation, for the agent to act on.
    pub async fn call<T, F, Fut>(&self, rpc: F) -> Result<T, String>
    where
        F: Fn(Channel) -> Fut,
        Fut: Future<Output = Result<T, Status>>,
    {
        let deadline = Instant::now() + RECONNECT_FOR;
        let mut backoff = FIRST_BACKOFF;
        loop {
            let why = match self.channel().await {
                Err(NoChannel::Permanent(e)) => return Err(e),
                Err(NoChannel::Transient(e)) => e,
                Ok(ch) => match tokio::time::timeout(CALL_TIMEOUT, rpc(ch)).await {
                    Err(_) => {
                        return Err(format!(
                            "the Patina daemon did not answer within {} s",
                            CALL_TIMEOUT.as_secs()
                        ));
                    }
                    Ok(Ok(v)) => return Ok(v),
                    Ok(Err(s)) if gone(&s) => s.message().to_string(),
                    Ok(Err(s)) => return Err(explain(s, self.remedy_text)),
                },
            };
            *self.channel.lock().await = None;
            if Instant::now() + backoff > deadline {
                return Err(format!(
                    "the Patina daemon does not answer ({why}) after {} s of retrying; see its \
                     log ({})",
                    RECONNECT_FOR.as_secs(),
                    crate::endpoint::log_path().display()
                ));
            }
            eprintln!(
                "{}: daemon connection lost ({why}); reconnecting in {} ms",
                self.program,
                backoff.as_millis()
            );
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
    }
}

/// A fresh idempotency key for one write (a tool call): unique across processes and calls, and
/// the same for every retry of that call.
pub fn idempotency_key() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    static STARTED: std::sync::OnceLock<u128> = std::sync::OnceLock::new();
    let started = STARTED.get_or_init(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    });
    format!(
        "mcp-{:x}-{started:x}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// Did the call fail because nothing answers on the socket any more?
fn gone(s: &Status) -> bool {
    match s.code() {
        Code::Unavailable => true,
        Code::Unknown | Code::Internal => {
            let m = s.message().to_ascii_lowercase();
            ["transport", "connection", "broken pipe", "connect"]
                .iter()
                .any(|k| m.contains(k))
        }
        _ => false,
    }
}

fn explain(s: Status, remedy_text: fn(crate::kinds::Remedy) -> &'static str) -> String {
    if let Some(r) = crate::kinds::remedy_of(&s) {
        return format!("{} ({})", s.message(), remedy_text(r));
    }
    match s.code() {
        Code::InvalidArgument | Code::NotFound | Code::FailedPrecondition | Code::AlreadyExists => {
            s.message().to_string()
        }
        Code::Unavailable => format!("the Patina daemon is unavailable: {}", s.message()),
        _ => format!("the Patina daemon failed: {}", s.message()),
    }
}
