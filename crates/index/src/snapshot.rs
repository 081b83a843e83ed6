//! Portable index snapshots: a repository's index at one commit, in a file a clone of the same
//! commit anywhere can load instead of embedding its chunks again.
//!
//! The file holds the *logical* content, never tantivy segments or sled pages (those depend on
//! timing, merges and ids): a header (format, commit, model, chunker and graph versions), then
//! every chunk in chunk-id order — its id, place, names, text hash and embedding (exact `f32`
//! bytes) — then the BLAKE3 digest of everything before it. Paths are repository-relative, so
//! the bytes, and therefore the digest, are the same for the same commit and model wherever the
//! clone lives (the vectors are the model's output: the same model build on the same kind of
//! CPU computes the same floats). Pure: no store, no daemon.
//!
//! ```text
//! "PATINA-SNAPSHOT\n" · header JSON · "\n" · u64 count · entries · 32-byte digest
//! entry: u64 id · str path · u32 start · u32 end · str parent · str symbol · str hash ·
//!        u8 has_vector · [dim × f32 LE]        (str = u32 length + UTF-8 bytes; integers LE)
//! ```

use anyhow::{Result, bail, ensure};
use serde::{Deserialize, Serialize};

const MAGIC: &[u8] = b"PATINA-SNAPSHOT\n";
/// The format this code writes and reads.
pub const FORMAT: u32 = 1;
/// Longest string an entry may hold (a path, a symbol): a bound against corrupt lengths.
const MAX_STR: usize = 64 * 1024;

/// What a snapshot is of. Field order is the serialised order (part of the digest).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    pub format: u32,
    /// The commit the index was made at (full hash).
    pub commit: String,
    /// The embedding model and precision the vectors come from (e.g. `all-MiniLM-L6-v2`).
    pub model: String,
    /// Vector dimensions.
    pub dim: u32,
    /// `patina_chunk::VERSION` and `GRAPH_VERSION` of the index.
    pub chunker: u32,
    pub graph: u32,
    /// The Patina version that wrote it (informational).
    pub patina: String,
}

/// One chunk: where it is, what it is named, its text hash, and its embedding.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub id: u64,
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    pub parent: String,
    pub symbol: String,
    pub hash: String,
    pub vector: Option<Vec<f32>>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Snapshot {
    pub header: Header,
    pub entries: Vec<Entry>,
}

/// A digest, shown as hex.
pub fn hex(digest: &[u8; 32]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

impl Snapshot {
    /// The file's bytes (entries sorted by id, so the same index gives the same bytes) and their
    /// digest.
    pub fn encode(&self) -> Result<(Vec<u8>, [u8; 32])> {
        let dim = self.header.dim as usize;
        let mut entries: Vec<&Entry> = self.entries.iter().collect();
        entries.sort_by_key(|e| e.id);
        let mut out = Vec::with_capacity(64 + entries.len() * (64 + dim * 4));
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&serde_json::to_vec(&self.header)?);
        out.push(b'\n');
        out.extend_from_slice(&(entries.len() as u64).to_le_bytes());
        for e in entries {
            out.extend_from_slice(&e.id.to_le_bytes());
            for s in [&e.path, &e.parent, &e.symbol, &e.hash] {
                ensure!(s.len() <= MAX_STR, "a name longer than {MAX_STR} bytes");
            }
            put_str(&mut out, &e.path);
            out.extend_from_slice(&e.start_line.to_le_bytes());
            out.extend_from_slice(&e.end_line.to_le_bytes());
            put_str(&mut out, &e.parent);
            put_str(&mut out, &e.symbol);
            put_str(&mut out, &e.hash);
            match &e.vector {
                Some(v) => {
                    ensure!(
                        v.len() == dim,
                        "a vector of {} dimensions, not {dim}",
                        v.len()
                    );
                    out.push(1);
                    for x in v {
                        out.extend_from_slice(&x.to_le_bytes());
                    }
                }
                None => out.push(0),
            }
        }
        let digest = *blake3::hash(&out).as_bytes();
        out.extend_from_slice(&digest);
        Ok((out, digest))
    }

    /// Read and verify a snapshot: the digest must match the content, and the content must parse
    /// completely. Any damage (a flipped byte, a truncated file) is an error that says so.
    pub fn decode(bytes: &[u8]) -> Result<(Snapshot, [u8; 32])> {
        ensure!(
            bytes.starts_with(MAGIC),
            "not a Patina snapshot (it does not start with the snapshot marker)"
        );
        ensure!(bytes.len() >= MAGIC.len() + 32, "the snapshot is truncated");
        let (body, tail) = bytes.split_at(bytes.len() - 32);
        let digest: [u8; 32] = tail.try_into().expect("32 bytes");
        if *blake3::hash(body).as_bytes() != digest {
            bail!(
                "the snapshot is damaged: its content does not match its digest (truncated or altered)"
            );
        }
        let mut r = Reader {
            b: &body[MAGIC.len()..],
        };
        let line = r.line()?;
        let header: Header = serde_json::from_slice(line)
            .map_err(|e| anyhow::anyhow!("the snapshot's header is not valid: {e}"))?;
        ensure!(
            header.format == FORMAT,
            "snapshot format {} is not supported by this Patina (format {FORMAT})",
            header.format
        );
        let dim = header.dim as usize;
        ensure!(
            (1..=4096).contains(&dim),
            "a snapshot of {dim}-dimensional vectors"
        );
        let n = r.u64()? as usize;
        // Each entry takes at least 8 + 4 + 8 + 4 + 4 + 4 + 1 bytes: a count beyond that is damage.
        ensure!(
            n <= r.b.len() / 33 + 1,
            "the snapshot's entry count is corrupt"
        );
        let mut entries = Vec::with_capacity(n);
        let mut last: Option<u64> = None;
        for _ in 0..n {
            let id = r.u64()?;
            ensure!(
                last.is_none_or(|l| l < id),
                "the snapshot's entries are out of order"
            );
            last = Some(id);
            let path = r.str()?;
            let start_line = r.u32()?;
            let end_line = r.u32()?;
            let parent = r.str()?;
            let symbol = r.str()?;
            let hash = r.str()?;
            let vector = match r.u8()? {
                0 => None,
                1 => {
                    let raw = r.take(dim * 4)?;
                    Some(
                        raw.chunks_exact(4)
                            .map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes")))
                            .collect(),
                    )
                }
                _ => bail!("the snapshot's entries are corrupt"),
            };
            entries.push(Entry {
                id,
                path,
                start_line,
                end_line,
                parent,
                symbol,
                hash,
                vector,
            });
        }
        ensure!(
            r.b.is_empty(),
            "the snapshot has trailing bytes after its entries"
        );
        Ok((Snapshot { header, entries }, digest))
    }
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u32).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

struct Reader<'a> {
    b: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        ensure!(
            self.b.len() >= n,
            "the snapshot ends in the middle of an entry"
        );
        let (head, rest) = self.b.split_at(n);
        self.b = rest;
        Ok(head)
    }
    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4")))
    }
    fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8")))
    }
    fn str(&mut self) -> Result<String> {
        let n = self.u32()? as usize;
        ensure!(n <= MAX_STR, "the snapshot's entries are corrupt");
        String::from_utf8(self.take(n)?.to_vec())
            .map_err(|_| anyhow::anyhow!("the snapshot holds a name that is not UTF-8"))
    }
    fn line(&mut self) -> Result<&'a [u8]> {
        let end = self
            .b
            .iter()
            .take(64 * 1024)
            .position(|&c| c == b'\n')
            .ok_or_else(|| anyhow::anyhow!("the snapshot's header is not terminated"))?;
        let line = self.take(end)?;
        self.take(1)?;
        Ok(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Snapshot {
        let entry = |id: u64, path: &str, v: Option<Vec<f32>>| Entry {
            id,
            path: path.into(),
            start_line: 1,
            end_line: 9,
            parent: String::new(),
            symbol: format!("f{id}"),
            hash: format!("{id:064x}"),
            vector: v,
        };
        Snapshot {
            header: Header {
                format: FORMAT,
                commit: "a".repeat(40),
                model: "all-MiniLM-L6-v2".into(),
                dim: 3,
                chunker: 3,
                graph: 2,
                patina: "0.1.0".into(),
            },
            entries: vec![
                entry(9, "src/b.rs", Some(vec![0.5, -0.25, 1.0])),
                entry(2, "src/a.rs", Some(vec![0.1, 0.2, 0.3])),
                entry(5, "README.md", None),
            ],
        }
    }

    #[test]
    fn a_snapshot_reads_back_as_written_and_its_digest_does_not_depend_on_order() {
        let s = sample();
        let (bytes, digest) = s.encode().unwrap();
        let (back, d2) = Snapshot::decode(&bytes).unwrap();
        assert_eq!(d2, digest);
        assert_eq!(back.header, s.header);
        assert_eq!(
            back.entries.iter().map(|e| e.id).collect::<Vec<_>>(),
            [2, 5, 9]
        );
        assert_eq!(back.entries[2].vector, Some(vec![0.5, -0.25, 1.0]));
        let mut shuffled = s.clone();
        shuffled.entries.reverse();
        assert_eq!(shuffled.encode().unwrap().1, digest);
        let mut other = s.clone();
        other.header.commit = "b".repeat(40);
        assert_ne!(other.encode().unwrap().1, digest);
    }

    #[test]
    fn damage_is_an_error_that_says_so() {
        let (bytes, _) = sample().encode().unwrap();
        for i in [MAGIC.len() + 3, bytes.len() / 2, bytes.len() - 40] {
            let mut bad = bytes.clone();
            bad[i] ^= 0x01;
            let e = Snapshot::decode(&bad).unwrap_err().to_string();
            assert!(e.contains("damaged"), "byte {i}: {e}");
        }
        let e = Snapshot::decode(&bytes[..bytes.len() - 7])
            .unwrap_err()
            .to_string();
        assert!(e.contains("damaged") || e.contains("truncated"), "{e}");
        assert!(
            Snapshot::decode(b"hello")
                .unwrap_err()
                .to_string()
                .contains("not a Patina snapshot")
        );
        let mut wrong_dim = sample();
        wrong_dim.entries[0].vector = Some(vec![1.0]);
        assert!(wrong_dim.encode().is_err());
    }
}
