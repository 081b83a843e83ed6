//! Talking to the daemon: connect, start it when absent (detached, logging to a file), check that
//! it speaks our protocol, and the typed calls the commands use.

use std::io::IsTerminal;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use patina_proto::v1 as pb;
use pb::health_client::HealthClient;
use pb::history_client::HistoryClient;
use pb::repos_client::ReposClient;
use pb::search_client::SearchClient;
use tonic::transport::Channel;

/// How long a freshly started daemon may take to accept connections.
const START_TIMEOUT: Duration = Duration::from_secs(15);

pub(crate) struct Client {
    channel: Channel,
}

/// Turn a gRPC status into an error whose message is the daemon's explanation. A status the
/// daemon did not send — the connection broke under the request (it has a transport error as its
/// source: an HTTP/2 reset, a closed socket) — says what happened and what to do, not the
/// transport's words.
pub(crate) fn status_error(s: tonic::Status) -> anyhow::Error {
    if s.code() == tonic::Code::Unavailable || std::error::Error::source(&s).is_some() {
        return anyhow!(
            "the daemon stopped answering in the middle of the request (it was stopped, or it \
             crashed: its log is {}); run the command again, which starts a daemon when none \
             runs",
            patina_proto::endpoint::log_path().display()
        );
    }
    match patina_proto::kinds::remedy_of(&s) {
        Some(r) => anyhow!("{} ({})", s.message(), r.for_shell()),
        None => anyhow!("{}", s.message()),
    }
}

/// The notices of an answer for a person at a shell: each notice, then what to do about them
/// (the answer's remedies, `patina_core::Remedy`).
pub(crate) fn notice_lines(notices: &[String], remedies: &[i32]) -> Vec<String> {
    patina_proto::kinds::notices_with_remedies(notices, remedies, patina_core::Remedy::for_shell)
}

impl Client {
    /// Connect to a running daemon; fails when none listens.
    pub async fn connect(socket: &Path) -> Result<Client> {
        Client::connect_with(socket, true).await
    }

    /// [`Client::connect`] without the warning about a replaced daemon binary (for `daemon
    /// stop`, which is the cure, and `doctor`, which reports it as a check).
    pub async fn connect_quiet(socket: &Path) -> Result<Client> {
        Client::connect_with(socket, false).await
    }

    async fn connect_with(socket: &Path, warn: bool) -> Result<Client> {
        let channel = match patina_proto::endpoint::connect(socket).await {
            Ok(ch) => ch,
            Err(patina_proto::endpoint::ConnectError::Refused(why)) => bail!("{why}"),
            Err(e) => return Err(e).with_context(|| format!("no daemon at {}", socket.display())),
        };
        // Kept typed (not flattened to text) so `doctor` can tell a protocol mismatch apart.
        let h = patina_proto::endpoint::check(&channel)
            .await
            .map_err(anyhow::Error::new)?;
        if warn && h.binary_replaced {
            eprintln!(
                "patina: the running daemon (pid {}) still runs the patinad it started from, \
                 which has since been replaced on disk; restart it to run the new one: \
                 `patina daemon stop` (it starts again on demand)",
                h.pid
            );
        }
        Ok(Client { channel })
    }

    /// Connect, starting the daemon first if nothing listens on `socket`.
    pub async fn connect_or_start(socket: &Path) -> Result<Client> {
        patina_proto::endpoint::connect_or_start(socket, START_TIMEOUT)
            .await
            .map_err(|e| anyhow!(e))?;
        Client::connect(socket).await
    }

    /// The open channel, for a service without a typed call here.
    pub fn channel(&self) -> Channel {
        self.channel.clone()
    }

    pub async fn health(&mut self) -> Result<pb::CheckResponse> {
        let r = HealthClient::new(self.channel.clone())
            .check(pb::CheckRequest {
                client_protocol: patina_proto::PROTOCOL_VERSION,
            })
            .await
            .map_err(status_error)?;
        Ok(r.into_inner())
    }

    pub async fn navigate(
        &mut self,
        what: &str,
        symbol: &str,
        repos: &[String],
    ) -> Result<pb::NavigateResponse> {
        Ok(pb::graph_client::GraphClient::new(self.channel.clone())
            .navigate(pb::NavigateRequest {
                what: what.into(),
                symbol: symbol.into(),
                repos: repos.to_vec(),
            })
            .await
            .map_err(status_error)?
            .into_inner())
    }

    pub async fn walk(&mut self, req: pb::WalkRequest) -> Result<pb::WalkResponse> {
        Ok(pb::graph_client::GraphClient::new(self.channel.clone())
            .walk(req)
            .await
            .map_err(status_error)?
            .into_inner())
    }

    pub async fn map(&mut self, req: pb::MapRequest) -> Result<pb::MapResponse> {
        Ok(pb::graph_client::GraphClient::new(self.channel.clone())
            .map(req)
            .await
            .map_err(status_error)?
            .into_inner())
    }

    pub async fn list(&mut self) -> Result<pb::ListResponse> {
        Ok(ReposClient::new(self.channel.clone())
            .list(pb::ListRequest {})
            .await
            .map_err(status_error)?
            .into_inner())
    }

    pub async fn remove(&mut self, key: &str) -> Result<pb::RepoInfo> {
        let r = ReposClient::new(self.channel.clone())
            .remove(pb::RemoveRequest { repo: key.into() })
            .await
            .map_err(status_error)?;
        r.into_inner()
            .removed
            .context("daemon returned no repository")
    }

    pub async fn repair(&mut self, key: &str, check_only: bool) -> Result<pb::RepairResponse> {
        Ok(ReposClient::new(self.channel.clone())
            .repair(pb::RepairRequest {
                repo: key.into(),
                check_only,
            })
            .await
            .map_err(status_error)?
            .into_inner())
    }

    pub async fn query(
        &mut self,
        req: pb::QueryRequest,
    ) -> Result<pb::QueryResponse, tonic::Status> {
        Ok(SearchClient::new(self.channel.clone())
            .query(req)
            .await?
            .into_inner())
    }

    pub async fn context(
        &mut self,
        req: pb::ContextRequest,
    ) -> Result<pb::ContextResponse, tonic::Status> {
        Ok(SearchClient::new(self.channel.clone())
            .context(req)
            .await?
            .into_inner())
    }

    pub async fn get_file(&mut self, req: pb::GetFileRequest) -> Result<pb::GetFileResponse> {
        Ok(pb::files_client::FilesClient::new(self.channel.clone())
            .get_file(req)
            .await
            .map_err(status_error)?
            .into_inner())
    }

    pub async fn log(&mut self, req: pb::LogRequest) -> Result<pb::LogResponse> {
        Ok(HistoryClient::new(self.channel.clone())
            .log(req)
            .await
            .map_err(status_error)?
            .into_inner())
    }

    pub async fn related(&mut self, req: pb::RelatedRequest) -> Result<pb::RelatedResponse> {
        Ok(HistoryClient::new(self.channel.clone())
            .related(req)
            .await
            .map_err(status_error)?
            .into_inner())
    }

    pub async fn feedback_stats(&mut self) -> Result<pb::FeedbackStatsResponse> {
        Ok(
            pb::feedback_client::FeedbackClient::new(self.channel.clone())
                .stats(pb::FeedbackStatsRequest {})
                .await
                .map_err(status_error)?
                .into_inner(),
        )
    }

    /// Register/reindex `path`; with `wait`, follow the progress (a bar on a terminal) to the end.
    /// `force` registers what the daemon would refuse (not a git repository, `$HOME`, …).
    pub async fn add_with(&mut self, path: &Path, wait: bool, force: bool) -> Result<pb::RepoInfo> {
        let mut stream = ReposClient::new(self.channel.clone())
            .add(pb::AddRequest {
                path: path.to_string_lossy().into_owned(),
                force,
            })
            .await
            .map_err(status_error)?
            .into_inner();
        let first = stream
            .message()
            .await
            .map_err(status_error)?
            .context("daemon sent no progress")?;
        let mut info = first.repo.clone().map(|b| *b).unwrap_or_default();
        // A note the daemon makes before indexing (what a large repository will cost).
        if first.phase != pb::IndexPhase::Failed as i32 && !first.message.is_empty() {
            eprintln!("{}: {}", info.root, first.message);
        }
        if !wait {
            return Ok(info);
        }
        let started = Instant::now();
        let bar = progress_bar();
        let mut last = first;
        loop {
            bar.set_length(last.files_total.max(1));
            bar.set_position(last.files_done);
            bar.set_message(match crate::output::status::round_eta(&last) {
                Some(eta) => format!("{} chunks, {eta}", last.chunks),
                None => format!("{} chunks", last.chunks),
            });
            if last.phase == pb::IndexPhase::Done as i32
                || last.phase == pb::IndexPhase::Failed as i32
            {
                break;
            }
            match stream.message().await.map_err(status_error)? {
                Some(p) => last = p,
                None => break,
            }
        }
        bar.finish_and_clear();
        if let Some(r) = last.repo.clone() {
            info = *r;
        }
        if last.phase == pb::IndexPhase::Failed as i32 {
            bail!("indexing {} failed: {}", info.root, last.message);
        }
        eprintln!(
            "indexed {}: {} files examined, {} changed, {} removed, {} chunks written in {:.1}s",
            info.root,
            last.files_done,
            last.files_changed,
            last.files_removed,
            last.chunks,
            started.elapsed().as_secs_f64()
        );
        Ok(info)
    }
}

fn progress_bar() -> indicatif::ProgressBar {
    if !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(1);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} indexing [{bar:30}] {pos}/{len} files, {msg} ({elapsed})",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    bar.enable_steady_tick(Duration::from_millis(120));
    bar
}

/// Ask the daemon to stop and wait until its socket is gone.
pub(crate) async fn stop(socket: &Path) -> Result<()> {
    let Ok(mut c) = Client::connect_quiet(socket).await else {
        outln!("patinad is not running");
        return Ok(());
    };
    let pid = c.health().await.map(|h| h.pid).unwrap_or(0);
    HealthClient::new(c.channel.clone())
        .shutdown(pb::ShutdownRequest {})
        .await
        .map_err(status_error)?;
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if patina_proto::endpoint::connect(socket).await.is_err() && !pid_alive(pid) {
            outln!("patinad stopped (pid {pid})");
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    bail!("patinad (pid {pid}) did not stop within 30s")
}

fn pid_alive(pid: u32) -> bool {
    // A daemon started by a client is reparented to init once that client exits; where init does
    // not reap promptly (containers), the exited daemon lingers as a zombie, which signal 0 still
    // finds. A zombie has stopped: its state in /proc is 'Z'.
    if let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        && let Some((_, rest)) = stat.rsplit_once(')')
        && rest.split_whitespace().next() == Some("Z")
    {
        return false;
    }
    // SAFETY: signal 0 only checks for existence.
    pid != 0 && unsafe { libc::kill(pid as i32, 0) } == 0
}
