//! Where Patina keeps its state and its socket, resolved the same way by the daemon and every
//! client, and (with the `client` feature) a tonic channel over that socket.
//!
//! Resolution order for the socket: an explicit path (`--socket`), `$PATINA_SOCKET`,
//! `$PATINA_HOME/run/patina.sock` when `PATINA_HOME` is set (isolated instances, tests),
//! `$XDG_RUNTIME_DIR/patina/patina.sock`, and finally `<data dir>/run/patina.sock`.

use std::path::{Path, PathBuf};

/// The state root: `$PATINA_HOME`, else the platform data dir (`~/.local/share/patina` on Linux).
pub fn state_root() -> PathBuf {
    if let Some(home) = std::env::var_os("PATINA_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(home);
    }
    match project_dirs() {
        Some(dirs) => dirs.data_dir().to_path_buf(),
        None => std::env::temp_dir().join("patina"),
    }
}

/// The config file: `$PATINA_HOME/config.toml`, else `<XDG config dir>/patina/config.toml`.
pub fn config_file() -> PathBuf {
    if let Some(home) = std::env::var_os("PATINA_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(home).join("config.toml");
    }
    match project_dirs() {
        Some(dirs) => dirs.config_dir().join("config.toml"),
        None => state_root().join("config.toml"),
    }
}

/// The socket path, given an optional explicit override (a `--socket` flag).
pub fn socket_path(explicit: Option<&Path>) -> PathBuf {
    if let Some(p) = explicit {
        return p.to_path_buf();
    }
    if let Some(p) = std::env::var_os("PATINA_SOCKET").filter(|v| !v.is_empty()) {
        return PathBuf::from(p);
    }
    if let Some(home) = std::env::var_os("PATINA_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(home).join("run").join("patina.sock");
    }
    if let Some(rt) = std::env::var_os("XDG_RUNTIME_DIR").filter(|v| !v.is_empty()) {
        return PathBuf::from(rt).join("patina").join("patina.sock");
    }
    if let Some(rt) = project_dirs().and_then(|d| d.runtime_dir().map(Path::to_path_buf)) {
        return rt.join("patina.sock");
    }
    state_root().join("run").join("patina.sock")
}

fn project_dirs() -> Option<directories::ProjectDirs> {
    directories::ProjectDirs::from("", "", "patina")
}

#[cfg(feature = "client")]
pub use client::connect;

#[cfg(feature = "client")]
mod client {
    use std::path::Path;

    use hyper_util::rt::TokioIo;
    use tonic::transport::{Channel, Endpoint, Uri};

    /// Open a gRPC channel to the daemon listening on `socket`. Fails fast (no retry) when nothing
    /// listens there, so callers can decide to start a daemon.
    pub async fn connect(socket: &Path) -> Result<Channel, tonic::transport::Error> {
        let socket = socket.to_path_buf();
        // The URI is required by tonic but never used: the connector below ignores it.
        Endpoint::from_static("http://patina.invalid")
            .connect_with_connector(tower::service_fn(move |_: Uri| {
                let socket = socket.clone();
                async move {
                    let stream = tokio::net::UnixStream::connect(socket).await?;
                    Ok::<_, std::io::Error>(TokioIo::new(stream))
                }
            }))
            .await
    }
}
