//! How results look on this terminal: `--color` and `--hyperlink` (set once from the command
//! line), the ANSI styles and OSC 8 links to files.

use std::io::IsTerminal;
use std::path::Path;

pub(crate) struct Style {
    pub(crate) on: bool,
    /// Wrap paths in OSC 8 hyperlinks (`file://host/abs/path`) to the file they name.
    pub(crate) links: bool,
}

impl Style {
    /// `text` as a link to the absolute file `abs`, when links are on.
    pub(crate) fn link(&self, abs: &Path, text: &str) -> String {
        if !self.links {
            return text.to_string();
        }
        format!("\x1b]8;;{}\x1b\\{text}\x1b]8;;\x1b\\", file_url(abs))
    }
    pub(crate) fn paint(&self, code: &str, s: &str) -> String {
        if self.on {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
    pub(crate) fn path(&self, s: &str) -> String {
        self.paint("35", s)
    }
    pub(crate) fn lines(&self, s: &str) -> String {
        self.paint("32", s)
    }
    pub(crate) fn symbol(&self, s: &str) -> String {
        self.paint("1", s)
    }
    pub(crate) fn dim(&self, s: &str) -> String {
        self.paint("2", s)
    }
}

/// `--color`: when results are coloured.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ColorChoice {
    /// On a terminal, unless `NO_COLOR` is set.
    #[default]
    Auto,
    Always,
    Never,
}

static COLOR: std::sync::OnceLock<(ColorChoice, ColorChoice)> = std::sync::OnceLock::new();

/// Set once, from the command line, before anything is printed: `--color` and `--hyperlink`.
pub(crate) fn set_color(color: ColorChoice, hyperlink: ColorChoice) {
    let _ = COLOR.set((color, hyperlink));
}

pub(crate) fn stdout_style() -> Style {
    let (color, hyperlink) = COLOR.get().copied().unwrap_or_default();
    let tty = std::io::stdout().is_terminal();
    Style {
        on: match color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => tty && std::env::var_os("NO_COLOR").is_none(),
        },
        links: match hyperlink {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => tty && terminal_has_hyperlinks(&|k| std::env::var(k).ok()),
        },
    }
}

/// Whether the terminal described by these environment variables is known to render OSC 8
/// hyperlinks. Unknown terminals (and multiplexers, which pass links through only when configured
/// to) get none: a terminal that does not understand the sequence may print it.
fn terminal_has_hyperlinks(var: &dyn Fn(&str) -> Option<String>) -> bool {
    if var("TMUX").is_some() || var("STY").is_some() {
        return false;
    }
    if matches!(var("TERM").as_deref(), Some("dumb" | "linux")) {
        return false;
    }
    let known_program = matches!(
        var("TERM_PROGRAM").as_deref(),
        Some("iTerm.app" | "WezTerm" | "vscode" | "ghostty" | "Hyper" | "Tabby" | "rio")
    );
    let vte = var("VTE_VERSION")
        .and_then(|v| v.parse::<u32>().ok())
        .is_some_and(|v| v >= 5000);
    let term = var("TERM").unwrap_or_default();
    known_program
        || vte
        || var("KITTY_WINDOW_ID").is_some()
        || var("WT_SESSION").is_some()
        || var("KONSOLE_VERSION").is_some()
        || ["kitty", "alacritty", "foot", "wezterm", "ghostty"]
            .iter()
            .any(|t| term.contains(t))
}

/// A `file://` URL for an absolute path, with the host name (as ripgrep's hyperlinks).
fn file_url(abs: &Path) -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default();
    patina_core::paths::file_uri(abs, &host)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hyperlinks_on_terminals_known_to_render_them_never_inside_a_multiplexer() {
        let has = |vars: &[(&str, &str)]| {
            let vars: Vec<(String, String)> = vars
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            terminal_has_hyperlinks(&|k| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()))
        };
        assert!(has(&[("TERM", "xterm-kitty"), ("KITTY_WINDOW_ID", "1")]));
        assert!(has(&[
            ("TERM", "xterm-256color"),
            ("TERM_PROGRAM", "WezTerm")
        ]));
        assert!(has(&[("TERM", "xterm-256color"), ("VTE_VERSION", "7600")]));
        assert!(!has(&[("TERM", "xterm-256color"), ("VTE_VERSION", "3405")]));
        assert!(!has(&[("TERM", "xterm-256color")]), "unknown: no links");
        assert!(!has(&[
            ("TERM", "tmux-256color"),
            ("TMUX", "/tmp/tmux-1/default,1,0"),
            ("TERM_PROGRAM", "WezTerm")
        ]));
        assert!(!has(&[("TERM", "dumb"), ("WT_SESSION", "x")]));
    }
}
