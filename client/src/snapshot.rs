//! `patina snapshot create [REPO] [--out FILE]`, `patina snapshot verify FILE`,
//! `patina snapshot restore FILE --into PATH`: a repository's index at its commit as a portable,
//! content-addressed file, and loading one for a clone of the same commit without embedding.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::Subcommand;
use patina_proto::v1 as pb;
use serde_json::json;

use crate::daemon::{Client, status_error};

#[derive(Subcommand)]
pub(crate) enum SnapshotCmd {
    /// Write the index of a repository (default: the current one) at its commit to a file.
    Create {
        repo: Option<String>,
        /// The file to write (default: NAME-COMMIT.patina-snapshot in the current directory).
        #[arg(long, short)]
        out: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Check a snapshot file: its digest and content.
    Verify {
        file: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Load a snapshot for a clone of the same commit: register and index the clone, using the
    /// snapshot's vectors instead of embedding.
    Restore {
        file: PathBuf,
        /// The clone (checked out at the snapshot's commit).
        #[arg(long)]
        into: PathBuf,
        #[arg(long)]
        json: bool,
    },
}

fn absolute(p: &Path) -> Result<String> {
    Ok(std::path::absolute(p)?.to_string_lossy().into_owned())
}

fn info_json(i: &pb::SnapshotInfo) -> serde_json::Value {
    json!({"file": i.file, "digest": i.digest, "commit": i.commit, "model": i.model,
           "chunks": i.chunks, "vectors": i.vectors, "bytes": i.bytes, "format": i.format})
}

fn print_info(i: &pb::SnapshotInfo) {
    outln!("{}", i.file);
    outln!("  digest   {}", i.digest);
    outln!("  commit   {}", i.commit);
    outln!("  model    {}", i.model);
    outln!(
        "  {} chunks, {} vectors, {:.1} MB (format {})",
        i.chunks,
        i.vectors,
        i.bytes as f64 / 1e6,
        i.format
    );
}

/// One snapshot's facts, as JSON or as text with an optional last line.
fn show(i: &pb::SnapshotInfo, json: bool, last: Option<&str>) -> Result<()> {
    if json {
        outln!("{}", serde_json::to_string_pretty(&info_json(i))?);
    } else {
        print_info(i);
        if let Some(l) = last {
            outln!("  {l}");
        }
    }
    Ok(())
}

pub(crate) async fn run(socket: &Path, cmd: SnapshotCmd) -> Result<ExitCode> {
    let mut c = Client::connect_or_start(socket).await?;
    let mut svc = pb::snapshots_client::SnapshotsClient::new(c.channel());
    match cmd {
        SnapshotCmd::Create { repo, out, json } => {
            let key = match repo {
                Some(r) => crate::scope::repo_key(&r),
                None => {
                    let cwd = std::env::current_dir()?;
                    match crate::scope::git_root(&cwd) {
                        Some(root) => root.to_string_lossy().into_owned(),
                        None => bail!(
                            "not inside a repository: name one (`patina snapshot create REPO`)"
                        ),
                    }
                }
            };
            let out = match out {
                Some(o) => absolute(&o)?,
                None => {
                    let list = c.list().await?;
                    let r = list
                        .repos
                        .iter()
                        .find(|r| r.id == key || r.name == key || r.root == key)
                        .ok_or_else(|| anyhow::anyhow!("no registered repository '{key}'"))?;
                    let commit = r
                        .freshness
                        .as_ref()
                        .map(|f| f.indexed_commit.chars().take(12).collect::<String>())
                        .unwrap_or_default();
                    absolute(Path::new(&format!("{}-{commit}.patina-snapshot", r.name)))?
                }
            };
            let i = svc
                .create(pb::CreateSnapshotRequest { repo: key, out })
                .await
                .map_err(status_error)?
                .into_inner();
            show(&i, json, None)?;
        }
        SnapshotCmd::Verify { file, json } => {
            let i = svc
                .verify(pb::VerifySnapshotRequest {
                    file: absolute(&file)?,
                })
                .await
                .map_err(status_error)?
                .into_inner();
            show(&i, json, Some("ok: the content matches its digest"))?;
        }
        SnapshotCmd::Restore { file, into, json } => {
            let r = svc
                .restore(pb::RestoreSnapshotRequest {
                    file: absolute(&file)?,
                    into: absolute(&into)?,
                })
                .await
                .map_err(status_error)?
                .into_inner();
            let repo = r.repo.unwrap_or_default();
            if json {
                outln!(
                    "{}",
                    serde_json::to_string_pretty(&json!({
                        "snapshot": r.snapshot.as_ref().map(info_json),
                        "vectors_imported": r.vectors_imported,
                        "repo": {"id": repo.id, "name": repo.name, "root": repo.root,
                                 "files": repo.files, "chunks": repo.chunks,
                                 "vectors": repo.vectors, "embed_backlog": repo.embed_backlog},
                    }))?
                );
            } else {
                if let Some(i) = &r.snapshot {
                    print_info(i);
                }
                outln!(
                    "restored into {}: {} files, {} chunks, {} vectors from the snapshot",
                    repo.root,
                    repo.files,
                    repo.chunks,
                    r.vectors_imported
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
