//! Generates the patina.v1 gRPC code. Uses the vendored `protoc` unless `PROTOC` is set,
//! so a fresh machine needs no system protobuf compiler.

/// The attribute that serialises an enum field by its name (`crate::kinds::json::<f>`).
fn json_with(f: &str) -> String {
    format!("#[cfg_attr(feature = \"json\", serde(serialize_with = \"crate::kinds::json::{f}\"))]")
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if std::env::var_os("PROTOC").is_none() {
        let protoc = protoc_bin_vendored::protoc_bin_path()?;
        // SAFETY: build scripts are single-threaded; nothing else reads the environment concurrently.
        unsafe { std::env::set_var("PROTOC", protoc) };
    }
    let protos = [
        "patina/v1/health.proto",
        "patina/v1/repos.proto",
        "patina/v1/search.proto",
        "patina/v1/files.proto",
        "patina/v1/sessions.proto",
        "patina/v1/history.proto",
        "patina/v1/graph.proto",
        "patina/v1/feedback.proto",
        "patina/v1/buffers.proto",
        "patina/v1/tune.proto",
        "patina/v1/snapshots.proto",
        "patina/v1/team.proto",
    ];
    tonic_prost_build::configure()
        .build_transport(false)
        .client_mod_attribute(".", "#[cfg(feature = \"client\")]")
        .server_mod_attribute(".", "#[cfg(feature = \"server\")]")
        // With `json`, every message serialises to JSON (patina-mcp passes daemon answers through).
        .type_attribute(
            ".",
            "#[cfg_attr(feature = \"json\", derive(serde::Serialize))]",
        )
        // Closed sets travel as enums; as JSON they keep their names (`crate::kinds::json`).
        .field_attribute(".patina.v1.OracleRank.oracle", json_with("oracle"))
        .field_attribute(".patina.v1.OracleReport.oracle", json_with("oracle"))
        .field_attribute(".patina.v1.OracleReport.status", json_with("status"))
        .field_attribute(".patina.v1.ContextItem.oracles", json_with("oracles"))
        .field_attribute(".patina.v1.TuneResult.oracles", json_with("oracles"))
        .field_attribute(".patina.v1.ContextItem.why", json_with("context_reason"))
        .field_attribute(".patina.v1.QueryResponse.intent", json_with("intent"))
        .field_attribute(".patina.v1.TuneState.phase", json_with("tune_phase"))
        .field_attribute(".patina.v1.QueryResponse.remedies", json_with("remedies"))
        .field_attribute(".patina.v1.ContextResponse.remedies", json_with("remedies"))
        .field_attribute(".patina.v1.LogResponse.remedies", json_with("remedies"))
        .compile_protos(&protos, &["."])?;
    Ok(())
}
