//! Chunk rows and texts, beside sled rather than in it: one repository's chunk metadata and texts
//! are lz4 blocks appended to files of its own (`<store>/chunks/<repo id>.<generation>`), and
//! sled keeps for each chunk only where its two blocks are ([`BlockLoc`], 16 bytes each). Kept in
//! sled, they were nearly all of its data, and sled 0.34 holds several times what it writes: its
//! nodes grew far past the page cache's capacity during a bulk round (2.9 GiB on a 100k-file
//! tree) and its log to 2.5 times the data on disk (bench/RESULTS.md, twenty-second session).
//!
//! A block is appended and synced before the sled row that points at it is written, so a row
//! never points at bytes that are not on disk; a crash leaves at most an unreferenced tail. Blocks
//! of removed chunks are garbage; when the garbage outweighs the live blocks (and is more than
//! [`MIN_GARBAGE`]), the index round copies the live blocks into a new generation, points the rows
//! at them batch by batch, and deletes the old generation once no row refers to it. A crash mid-way
//! leaves rows in both generations, and both files are kept until none refers to the old one.
//!
//! This module knows files and blocks; which chunk a block belongs to is the store's business.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use anyhow::{Context, Result, bail};

/// Garbage below this is never worth a copy of the live blocks.
pub const MIN_GARBAGE: u64 = if cfg!(test) {
    64 * 1024
} else {
    8 * 1024 * 1024
};
/// No chunk block is larger (the chunker bounds files well below this): a block that says it
/// decompresses to more is damaged.
const MAX_TEXT: usize = 64 * 1024 * 1024;

/// Where one block is: its generation's file, its offset and length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockLoc {
    generation: u32,
    offset: u64,
    len: u32,
}

impl BlockLoc {
    pub const ENCODED: usize = 16;

    pub fn encode(&self) -> [u8; Self::ENCODED] {
        let mut b = [0u8; Self::ENCODED];
        b[..4].copy_from_slice(&self.generation.to_le_bytes());
        b[4..12].copy_from_slice(&self.offset.to_le_bytes());
        b[12..].copy_from_slice(&self.len.to_le_bytes());
        b
    }

    pub fn decode(b: &[u8]) -> Option<BlockLoc> {
        if b.len() != Self::ENCODED {
            return None;
        }
        Some(BlockLoc {
            generation: u32::from_le_bytes(b[..4].try_into().ok()?),
            offset: u64::from_le_bytes(b[4..12].try_into().ok()?),
            len: u32::from_le_bytes(b[12..].try_into().ok()?),
        })
    }

    /// Bytes of the block on disk.
    pub fn len(&self) -> u64 {
        self.len as u64
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn generation(&self) -> u32 {
        self.generation
    }
}

/// One repository's block files. Cheap to share (`Arc`); appends are serialised by the caller (the
/// index round is the only writer), reads may run on any thread at any time.
pub struct ChunkLog {
    dir: PathBuf,
    repo: String,
    /// Generation → its file, for positioned reads.
    files: RwLock<BTreeMap<u32, Arc<File>>>,
    writer: Mutex<Writer>,
    /// Bytes of the blocks rows refer to.
    live: AtomicU64,
}

struct Writer {
    generation: u32,
    file: Arc<File>,
    /// The current generation's length: where the next block goes.
    end: u64,
}

fn file_name(repo: &str, generation: u32) -> String {
    format!("{repo}.{generation}")
}

/// The generation a file of `repo` in the directory is, if it is one of `repo`'s.
fn generation_of(name: &str, repo: &str) -> Option<u32> {
    name.strip_prefix(repo)?.strip_prefix('.')?.parse().ok()
}

impl ChunkLog {
    /// Open `repo`'s blocks in `dir`, given where every stored row points (`referenced`): files of
    /// generations no row refers to are deleted (a compaction's finished old generation, or a new
    /// one a crash left unreferenced), and appends go to the newest generation.
    pub fn open(dir: &Path, repo: &str, referenced: &[BlockLoc]) -> Result<ChunkLog> {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let mut used: BTreeMap<u32, u64> = BTreeMap::new();
        let mut live = 0u64;
        for loc in referenced {
            *used.entry(loc.generation).or_default() += loc.len();
            live += loc.len();
        }
        for entry in std::fs::read_dir(dir)? {
            let name = entry?.file_name();
            let Some(generation) = name.to_str().and_then(|n| generation_of(n, repo)) else {
                continue;
            };
            if !used.contains_key(&generation) {
                let _ = std::fs::remove_file(dir.join(&name));
            }
        }
        let current = used.keys().next_back().copied().unwrap_or(0);
        let mut files = BTreeMap::new();
        for &generation in used.keys() {
            let path = dir.join(file_name(repo, generation));
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .open(&path)
                .with_context(|| {
                    format!(
                        "opening {} (chunk rows refer to it: this repository's chunks are \
                         missing; `patina rm` and `patina add` index it again)",
                        path.display()
                    )
                })?;
            files.insert(generation, Arc::new(file));
        }
        let writer = match files.get(&current) {
            Some(f) => Writer {
                generation: current,
                end: f.metadata()?.len(),
                file: f.clone(),
            },
            None => {
                let file = Arc::new(create(&dir.join(file_name(repo, current)))?);
                files.insert(current, file.clone());
                Writer {
                    generation: current,
                    file,
                    end: 0,
                }
            }
        };
        Ok(ChunkLog {
            dir: dir.to_path_buf(),
            repo: repo.to_string(),
            files: RwLock::new(files),
            writer: Mutex::new(writer),
            live: AtomicU64::new(live),
        })
    }

    /// Compress and append `items` in one write, synced before it returns: their places, in order.
    pub fn append(&self, items: &[&[u8]]) -> Result<Vec<BlockLoc>> {
        let blocks: Vec<Vec<u8>> = items
            .iter()
            .map(|t| lz4_flex::block::compress_prepend_size(t))
            .collect();
        self.append_blocks(&blocks)
    }

    fn append_blocks(&self, blocks: &[Vec<u8>]) -> Result<Vec<BlockLoc>> {
        if blocks.is_empty() {
            return Ok(Vec::new());
        }
        let mut w = self.writer.lock().expect("text log writer");
        let mut buf = Vec::with_capacity(blocks.iter().map(Vec::len).sum());
        let mut locs = Vec::with_capacity(blocks.len());
        for b in blocks {
            let len = u32::try_from(b.len()).context("a chunk block of 4 GiB")?;
            locs.push(BlockLoc {
                generation: w.generation,
                offset: w.end + buf.len() as u64,
                len,
            });
            buf.extend_from_slice(b);
        }
        w.file
            .write_all_at(&buf, w.end)
            .and_then(|()| w.file.sync_data())
            .with_context(|| format!("writing chunk blocks in {}", self.dir.display()))?;
        w.end += buf.len() as u64;
        self.live.fetch_add(buf.len() as u64, Ordering::Relaxed);
        Ok(locs)
    }

    /// The block at `loc`, as stored (compressed).
    fn block(&self, loc: BlockLoc) -> Result<Vec<u8>> {
        let file = self
            .files
            .read()
            .expect("text files")
            .get(&loc.generation)
            .cloned();
        let Some(file) = file else {
            bail!(Gone);
        };
        let mut buf = vec![0u8; loc.len as usize];
        file.read_exact_at(&mut buf, loc.offset)
            .with_context(|| format!("reading a chunk block in {}", self.dir.display()))?;
        Ok(buf)
    }

    /// The bytes at `loc`. Fails with [`Gone`] when its generation was compacted away since `loc`
    /// was read (read the row again).
    pub fn read(&self, loc: BlockLoc) -> Result<Vec<u8>> {
        let block = self.block(loc)?;
        let size = block
            .get(..4)
            .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")) as usize);
        if size.is_none_or(|s| s > MAX_TEXT) {
            bail!("a damaged chunk block in {}", self.dir.display());
        }
        lz4_flex::block::decompress_size_prepended(&block)
            .map_err(|e| anyhow::anyhow!("a damaged chunk block in {}: {e}", self.dir.display()))
    }

    /// A row that pointed at `loc` was removed or replaced: its block is garbage now.
    pub fn forget(&self, loc: BlockLoc) {
        let _ = self
            .live
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |l| {
                Some(l.saturating_sub(loc.len()))
            });
    }

    /// Bytes on disk, and those of them that rows refer to.
    pub fn sizes(&self) -> (u64, u64) {
        let files = self.files.read().expect("text files");
        let disk = files
            .values()
            .map(|f| f.metadata().map(|m| m.len()).unwrap_or(0))
            .sum();
        (disk, self.live.load(Ordering::Relaxed))
    }

    /// Whether the garbage outweighs the live blocks enough to copy them.
    pub fn wants_compaction(&self) -> bool {
        let (disk, live) = self.sizes();
        let garbage = disk.saturating_sub(live);
        garbage > live && garbage > MIN_GARBAGE
    }

    /// Start a new generation: appends go there from now on. Returns it.
    pub fn roll(&self) -> Result<u32> {
        let mut w = self.writer.lock().expect("text log writer");
        let generation = w.generation + 1;
        let file = Arc::new(create(&self.dir.join(file_name(&self.repo, generation)))?);
        self.files
            .write()
            .expect("text files")
            .insert(generation, file.clone());
        *w = Writer {
            generation,
            file,
            end: 0,
        };
        Ok(generation)
    }

    /// Copy the blocks at `locs` (of older generations) to the current one, synced: their new
    /// places, in order. The caller points the rows there, then [`ChunkLog::retire`]s the old
    /// generations.
    pub fn copy(&self, locs: &[BlockLoc]) -> Result<Vec<BlockLoc>> {
        let blocks = locs
            .iter()
            .map(|&l| self.block(l))
            .collect::<Result<Vec<_>>>()?;
        let moved: u64 = locs.iter().map(BlockLoc::len).sum();
        let new = self.append_blocks(&blocks)?;
        // The copies are live, the originals garbage: live is unchanged.
        self.live.fetch_sub(moved, Ordering::Relaxed);
        Ok(new)
    }

    /// Delete every generation older than the current one (no row refers to them any more).
    pub fn retire(&self) {
        let current = self.writer.lock().expect("text log writer").generation;
        let mut files = self.files.write().expect("text files");
        let old: Vec<u32> = files.range(..current).map(|(g, _)| *g).collect();
        for g in old {
            files.remove(&g);
            let _ = std::fs::remove_file(self.dir.join(file_name(&self.repo, g)));
        }
    }

    /// Delete every file of `repo` in `dir` (the repository was removed).
    pub fn remove_all(dir: &Path, repo: &str) -> Result<()> {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Ok(());
        };
        for entry in entries {
            let name = entry?.file_name();
            if name.to_str().and_then(|n| generation_of(n, repo)).is_some() {
                std::fs::remove_file(dir.join(&name))
                    .with_context(|| format!("removing {}", dir.join(&name).display()))?;
            }
        }
        Ok(())
    }
}

/// A block's generation was compacted away between reading its row and reading the block.
#[derive(Debug)]
pub struct Gone;

impl std::fmt::Display for Gone {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the chunk block moved (compacted); read its row again")
    }
}

impl std::error::Error for Gone {}

fn create(path: &Path) -> Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
        .with_context(|| format!("creating {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(n: usize) -> Vec<String> {
        (0..n)
            .map(|i| format!("fn f{i}() {{\n    println!(\"{i}\");\n}}\n").repeat(1 + i % 7))
            .collect()
    }

    #[test]
    fn texts_come_back_exactly_and_survive_a_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let t = texts(50);
        let refs: Vec<&[u8]> = t.iter().map(|s| s.as_bytes()).collect();
        let locs = {
            let log = ChunkLog::open(dir.path(), "abc", &[]).unwrap();
            let locs = log.append(&refs).unwrap();
            for (loc, text) in locs.iter().zip(&t) {
                assert_eq!(log.read(*loc).unwrap(), text.as_bytes());
            }
            locs
        };
        let log = ChunkLog::open(dir.path(), "abc", &locs).unwrap();
        assert_eq!(log.read(locs[31]).unwrap(), t[31].as_bytes());
        let (disk, live) = log.sizes();
        assert_eq!(disk, live, "nothing is garbage");
        assert!(
            disk < t.iter().map(|s| s.len() as u64).sum::<u64>(),
            "blocks are compressed"
        );
        // Appends after a reopen go after what is there.
        let more = log.append(&[b"fn g() {}"]).unwrap();
        assert_eq!(log.read(more[0]).unwrap(), b"fn g() {}");
        assert_eq!(log.read(locs[0]).unwrap(), t[0].as_bytes());
    }

    #[test]
    fn a_location_round_trips_and_a_wrong_length_is_refused() {
        let loc = BlockLoc {
            generation: 3,
            offset: 1 << 40,
            len: 77,
        };
        assert_eq!(BlockLoc::decode(&loc.encode()), Some(loc));
        assert_eq!(BlockLoc::decode(b"old utf-8 text inline"), None);
    }

    #[test]
    fn compaction_keeps_the_live_texts_and_frees_the_garbage() {
        let dir = tempfile::tempdir().unwrap();
        let log = ChunkLog::open(dir.path(), "abc", &[]).unwrap();
        let t = texts(200);
        let refs: Vec<&[u8]> = t.iter().map(|s| s.as_bytes()).collect();
        let locs = log.append(&refs).unwrap();
        // Three quarters removed.
        for l in &locs[50..] {
            log.forget(*l);
        }
        let (disk_before, live) = log.sizes();
        assert!(disk_before > 3 * live);
        let g = log.roll().unwrap();
        let moved = log.copy(&locs[..50]).unwrap();
        assert!(moved.iter().all(|l| l.generation() == g));
        log.retire();
        let (disk, live_after) = log.sizes();
        assert_eq!(
            (disk, live_after),
            (live, live),
            "only the live blocks remain"
        );
        for (loc, text) in moved.iter().zip(&t) {
            assert_eq!(log.read(*loc).unwrap(), text.as_bytes());
        }
        let err = log.read(locs[0]).unwrap_err();
        assert!(err.downcast_ref::<Gone>().is_some(), "{err:#}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn opening_deletes_generations_no_row_refers_to() {
        let dir = tempfile::tempdir().unwrap();
        let (old, new) = {
            let log = ChunkLog::open(dir.path(), "abc", &[]).unwrap();
            let old = log.append(&[b"kept in the old generation"]).unwrap();
            log.roll().unwrap();
            let new = log.append(&[b"in the new one"]).unwrap();
            (old, new)
        };
        // Another repository's file is not touched.
        std::fs::write(dir.path().join("abd.0"), b"x").unwrap();
        // A crash mid-compaction: rows point into both generations; both stay.
        let both = ChunkLog::open(dir.path(), "abc", &[old[0], new[0]]).unwrap();
        assert_eq!(both.read(old[0]).unwrap(), b"kept in the old generation");
        drop(both);
        // Once every row points into the new one, the old one goes.
        let log = ChunkLog::open(dir.path(), "abc", &[new[0]]).unwrap();
        assert_eq!(log.read(new[0]).unwrap(), b"in the new one");
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, ["abc.1", "abd.0"]);
        ChunkLog::remove_all(dir.path(), "abc").unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_damaged_block_is_an_error_not_a_huge_allocation() {
        let dir = tempfile::tempdir().unwrap();
        let log = ChunkLog::open(dir.path(), "abc", &[]).unwrap();
        let loc = log.append(&[b"some text"]).unwrap()[0];
        let file = OpenOptions::new()
            .write(true)
            .open(dir.path().join("abc.0"))
            .unwrap();
        file.write_all_at(&u32::MAX.to_le_bytes(), loc.offset)
            .unwrap();
        let err = log.read(loc).unwrap_err();
        assert!(format!("{err:#}").contains("damaged"), "{err:#}");
    }
}
