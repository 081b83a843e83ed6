//! The connection to `patinad`: opened once (starting the daemon when none answers, exactly as the
//! `patina` client does, via `patina_proto::endpoint`), checked for protocol compatibility, reused
//! by every call, and re-opened — restarting the daemon if it died — when a call finds it gone.

use std::future::Future;
use std::path::PathBuf;
use std::time::Duration;

use tonic::transport::Channel;
use tonic::{Code, Status};

/// How long a freshly started daemon may take to accept connections.
const START_TIMEOUT: Duration = Duration::from_secs(20);
/// How long one call may take before the agent is told the daemon did not answer.
const CALL_TIMEOUT: Duration = Duration::from_secs(120);

pub(crate) struct Daemon {
    socket: PathBuf,
    channel: tokio::sync::Mutex<Option<Channel>>,
}

impl Daemon {
    pub fn new(socket: PathBuf) -> Daemon {
        Daemon {
            socket,
            channel: tokio::sync::Mutex::new(None),
        }
    }

    /// The open channel, connecting (and starting the daemon) first when there is none.
    pub async fn channel(&self) -> Result<Channel, String> {
        let mut slot = self.channel.lock().await;
        if let Some(ch) = slot.as_ref() {
            return Ok(ch.clone());
        }
        let ch = patina_proto::endpoint::connect_or_start(&self.socket, START_TIMEOUT)
            .await
            .map_err(|e| format!("cannot reach the Patina daemon: {e}"))?;
        patina_proto::endpoint::check(&ch).await?;
        *slot = Some(ch.clone());
        Ok(ch)
    }

    /// Run one RPC. When the daemon is gone (it was stopped, restarted or crashed) the channel is
    /// re-opened — starting a daemon — and the call retried once. Errors come back as the
    /// daemon's own explanation, for the agent to act on.
    pub async fn call<T, F, Fut>(&self, rpc: F) -> Result<T, String>
    where
        F: Fn(Channel) -> Fut,
        Fut: Future<Output = Result<T, Status>>,
    {
        for attempt in 0..2 {
            let ch = self.channel().await?;
            match tokio::time::timeout(CALL_TIMEOUT, rpc(ch)).await {
                Err(_) => {
                    return Err(format!(
                        "the Patina daemon did not answer within {} s",
                        CALL_TIMEOUT.as_secs()
                    ));
                }
                Ok(Ok(v)) => return Ok(v),
                Ok(Err(s)) if attempt == 0 && gone(&s) => {
                    crate::log(format!(
                        "daemon connection lost ({}); reconnecting",
                        s.message()
                    ));
                    *self.channel.lock().await = None;
                }
                Ok(Err(s)) => return Err(explain(s)),
            }
        }
        Err(
            "the Patina daemon keeps going away; see its log (patinad.log in the state directory)"
                .into(),
        )
    }
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

fn explain(s: Status) -> String {
    match s.code() {
        Code::InvalidArgument | Code::NotFound | Code::FailedPrecondition | Code::AlreadyExists => {
            s.message().to_string()
        }
        Code::Unavailable => format!("the Patina daemon is unavailable: {}", s.message()),
        _ => format!("the Patina daemon failed: {}", s.message()),
    }
}
