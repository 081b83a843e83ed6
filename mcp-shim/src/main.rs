//! `patina-mcp`: the MCP stdio shim that will forward agent tool calls to `patinad` over its
//! socket. Placeholder until its issue lands: it says so instead of pretending to serve.

fn main() -> std::process::ExitCode {
    eprintln!(
        "patina-mcp: the MCP shim is not available in this build yet; use `patina q` meanwhile"
    );
    std::process::ExitCode::from(2)
}
