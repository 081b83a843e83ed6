//! `patina-lsp`'s transport, as a library so the fuzz targets in `fuzz/` reach it: the LSP base
//! protocol's `Content-Length` framing. The server itself is the `patina-lsp` binary.

pub mod framing;
