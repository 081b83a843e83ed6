//! Identities: pure hashes, stable across runs, processes and machines.

use std::path::Path;

/// Stable chunk identity, `blake3(path, start, end, blake3(text))`: the same text at the same place
/// in the same file has the same id, so re-indexing an unchanged file changes nothing.
pub fn chunk_id(path: &str, start: u32, end: u32, text_hash: &[u8; 32]) -> u64 {
    let mut h = blake3::Hasher::new();
    h.update(path.as_bytes());
    h.update(&[0]);
    h.update(&start.to_le_bytes());
    h.update(&end.to_le_bytes());
    h.update(text_hash);
    let bytes = h.finalize();
    u64::from_le_bytes(bytes.as_bytes()[..8].try_into().expect("8 bytes"))
}

/// A repository's id: the first 12 hex digits of the blake3 of its (canonical) root path.
pub fn repo_id(root: &Path) -> String {
    blake3::hash(root.as_os_str().as_encoded_bytes()).to_hex()[..12].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_stable() {
        // Changing either function re-keys every existing index: these values are a contract.
        let text = blake3::hash(b"fn main() {}");
        assert_eq!(
            chunk_id("src/main.rs", 1, 1, text.as_bytes()),
            6932405254300353521
        );
        assert_ne!(
            chunk_id("src/main.rs", 1, 1, text.as_bytes()),
            chunk_id("src/main.rs", 1, 2, text.as_bytes())
        );
        assert_eq!(repo_id(Path::new("/work/x")), "19fc3d90e727");
    }
}
