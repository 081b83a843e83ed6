//! Patina's Zed extension: starts `patina-lsp` for the languages `extension.toml` lists. The
//! binary is `lsp.patina.binary.path` from Zed's settings when set, else `patina-lsp` on the
//! worktree's `PATH` (Zed's shell environment for the project).

use zed_extension_api::{self as zed, LanguageServerId, Result, settings::LspSettings};

/// The language server's id: the key of `[language_servers.patina]` in `extension.toml` and of
/// `"lsp": {"patina": …}` in Zed's settings.
const SERVER_ID: &str = "patina";
/// The binary looked up on `PATH` when the settings name none.
const BINARY: &str = "patina-lsp";

struct Patina;

impl zed::Extension for Patina {
    fn new() -> Self {
        Patina
    }

    fn language_server_command(
        &mut self,
        language_server_id: &LanguageServerId,
        worktree: &zed::Worktree,
    ) -> Result<zed::Command> {
        if language_server_id.as_ref() != SERVER_ID {
            return Err(format!("unknown language server {language_server_id}"));
        }
        let binary = LspSettings::for_worktree(SERVER_ID, worktree)
            .ok()
            .and_then(|s| s.binary);
        let args = binary
            .as_ref()
            .and_then(|b| b.arguments.clone())
            .unwrap_or_default();
        let command = match binary.and_then(|b| b.path) {
            Some(path) => path,
            None => worktree.which(BINARY).ok_or_else(|| {
                format!(
                    "{BINARY} is not on PATH: install Patina (scripts/setup --install) or set \
                     lsp.patina.binary.path in Zed's settings"
                )
            })?,
        };
        Ok(zed::Command {
            command,
            args,
            env: worktree.shell_env(),
        })
    }
}

zed::register_extension!(Patina);
