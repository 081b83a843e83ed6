//! The embedding cache: a hash of exactly what was embedded (model, context and text) → the
//! model's vector as 8-bit integers and one scale (the form the vector index keeps it in, see
//! [`crate::vectors`]), shared by every repository and kept across restarts, branches and
//! `patina rm`, so an unchanged chunk is embedded once. 8-bit, a vector is 428 bytes on disk
//! instead of 1,576 as `f32`: with exact vectors the cache alone was more than the source it
//! indexes (bench/RESULTS.md, twenty-third session).
//!
//! Two append-only files in a directory of their own, read with positioned reads: the vectors
//! stay in the operating system's page cache, not in the daemon's heap. The process holds only a
//! map from the first 8 bytes of each key to its record (~20 bytes a vector). (Kept in sled, the
//! cache's nodes filled sled's page cache after every bulk embedding and stayed there after the
//! repository that brought them was removed — bench/RESULTS.md, twelfth and thirteenth sessions.)
//!
//! - `vectors`: a format line, the dimension (`u32` LE), then fixed-size records: the key (32
//!   bytes), the scale (`f32` LE), the integers (`dim` × `i8`) and the first 8 bytes of the
//!   blake3 of all three. A file of the first format (exact `f32` vectors) is converted in place
//!   at open: written beside, synced, renamed over it; the `keys` file does not change.
//! - `keys`: the first 8 bytes of each record's key, in record order: what a start reads to
//!   rebuild the map (8 bytes a vector instead of the whole file).
//!
//! A record is written before its key, so a crash leaves at most a tail that the next open cuts
//! off (both files are truncated to the records they have in common). A record that fails its
//! checksum — torn by a crash after its key was written — reads as a miss: the chunk is embedded
//! again and appended anew. Nothing here is precious: the cache only saves time.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use anyhow::{Context, Result};

/// The first bytes of `vectors`.
const FORMAT: &[u8] = b"patina-embedding-cache-2\n";
/// The first format: exact `f32` vectors (converted at open).
const FORMAT_F32: &[u8] = b"patina-embedding-cache-1\n";
const HEADER: u64 = FORMAT.len() as u64 + 4;
const SCALE: usize = 4;
const KEY: usize = 32;
const CHECK: usize = 8;
/// Larger is not an embedding: the header is damaged.
const MAX_DIM: usize = 1 << 16;

/// Content key → vector, on disk. Cheap to clone (shared).
#[derive(Clone)]
pub struct EmbeddingCache {
    inner: Arc<Inner>,
}

struct Inner {
    dir: PathBuf,
    /// The vectors file, for positioned reads (and appends, under `writer`).
    vectors: File,
    /// Key prefix → record number.
    index: RwLock<HashMap<u64, u32>>,
    writer: Mutex<Writer>,
    /// Components per vector (0: nothing cached yet).
    dim: AtomicUsize,
}

struct Writer {
    keys: File,
    /// Records in both files.
    records: u64,
}

fn prefix(key: &[u8; 32]) -> u64 {
    u64::from_le_bytes(key[..8].try_into().expect("8 bytes"))
}

/// Bytes of one record of `dim` components.
fn record_len(dim: usize) -> usize {
    KEY + SCALE + dim + CHECK
}

/// `v` as a record's scale and integers.
fn encode(v: &[f32], out: &mut Vec<u8>) {
    let (q, scale) = crate::vectors::quantize(v);
    out.extend_from_slice(&scale.to_le_bytes());
    out.extend(q.iter().map(|&x| x as u8));
}

/// A record's scale and integers as the vector they stand for.
fn decode(bytes: &[u8]) -> Vec<f32> {
    let (scale, q) = bytes.split_at(SCALE);
    let scale = f32::from_le_bytes(scale.try_into().expect("4 bytes"));
    crate::vectors::dequantize(q.iter().map(|&x| x as i8), scale)
}

/// The vector the cache gives back for `v`: what a caller keeps in memory beside the cache, so a
/// vector computed now and one read back after a restart are the same numbers.
pub fn as_stored(v: &[f32]) -> Vec<f32> {
    let mut b = Vec::with_capacity(SCALE + v.len());
    encode(v, &mut b);
    decode(&b)
}

fn check(key: &[u8], vector: &[u8]) -> [u8; CHECK] {
    let mut h = blake3::Hasher::new();
    h.update(key);
    h.update(vector);
    h.finalize().as_bytes()[..CHECK]
        .try_into()
        .expect("8 bytes")
}

impl EmbeddingCache {
    /// Open (or create) the cache in `dir`. The first vector cached fixes the cache's dimension
    /// (it holds one model's vectors); a file of another format, or one that cannot be read, is
    /// started afresh — the cache only saves time.
    pub fn open(dir: &Path) -> Result<EmbeddingCache> {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("creating the embedding cache at {}", dir.display()))?;
        let vpath = dir.join("vectors");
        let kpath = dir.join("keys");
        let open = |p: &Path| {
            OpenOptions::new()
                .read(true)
                .append(true)
                .create(true)
                .open(p)
                .with_context(|| format!("opening {}", p.display()))
        };
        let vectors = open(&vpath)?;
        let keys = open(&kpath)?;

        let mut header = vec![0u8; HEADER as usize];
        let mut vlen = vectors.metadata()?.len();
        let readable = vlen >= HEADER && vectors.read_exact_at(&mut header, 0).is_ok();
        let dim_in =
            |h: &[u8]| u32::from_le_bytes(h[FORMAT.len()..].try_into().expect("4")) as usize;
        let mut vectors = vectors;
        let dim = if readable && &header[..FORMAT.len()] == FORMAT {
            dim_in(&header)
        } else if readable && &header[..FORMAT.len()] == FORMAT_F32 {
            let dim = dim_in(&header);
            if dim == 0 || dim > MAX_DIM {
                0
            } else {
                vectors = convert_f32(dir, &vpath, &vectors, dim)?;
                vlen = vectors.metadata()?.len();
                dim
            }
        } else {
            0
        };
        if dim == 0 || dim > MAX_DIM {
            if vlen > 0 {
                tracing::info!(
                    "the embedding cache at {} is not in this release's format: starting it afresh",
                    dir.display()
                );
            }
            vectors.set_len(0)?;
            keys.set_len(0)?;
            return Ok(EmbeddingCache::new(
                dir,
                vectors,
                keys,
                HashMap::new(),
                0,
                0,
            ));
        }
        let record = record_len(dim) as u64;
        let mut prefixes = Vec::new();
        File::open(&kpath)
            .with_context(|| format!("opening {}", kpath.display()))?
            .read_to_end(&mut prefixes)?;
        let records = ((vlen - HEADER) / record)
            .min(prefixes.len() as u64 / 8)
            .min(u32::MAX as u64);
        // Cut what a crash left half-written (or a record without its key).
        if vlen != HEADER + records * record {
            vectors.set_len(HEADER + records * record)?;
        }
        if prefixes.len() as u64 != records * 8 {
            keys.set_len(records * 8)?;
        }
        let mut index = HashMap::with_capacity(records as usize);
        for (n, p) in prefixes.chunks_exact(8).take(records as usize).enumerate() {
            // A later record of the same key wins (it was written because the earlier one failed
            // its checksum).
            index.insert(u64::from_le_bytes(p.try_into().expect("8")), n as u32);
        }
        Ok(EmbeddingCache::new(dir, vectors, keys, index, records, dim))
    }

    fn new(
        dir: &Path,
        vectors: File,
        keys: File,
        index: HashMap<u64, u32>,
        records: u64,
        dim: usize,
    ) -> EmbeddingCache {
        EmbeddingCache {
            inner: Arc::new(Inner {
                dir: dir.to_path_buf(),
                vectors,
                index: RwLock::new(index),
                writer: Mutex::new(Writer { keys, records }),
                dim: AtomicUsize::new(dim),
            }),
        }
    }

    /// The cache's dimension (0 until the first vector is cached).
    fn dim(&self) -> usize {
        self.inner.dim.load(Ordering::Acquire)
    }

    /// The vector cached for `key`, if any (and intact).
    pub fn get(&self, key: &[u8; 32]) -> Result<Option<Vec<f32>>> {
        let n = match self
            .inner
            .index
            .read()
            .expect("cache index")
            .get(&prefix(key))
        {
            Some(&n) => n,
            None => return Ok(None),
        };
        let len = record_len(self.dim());
        let mut buf = vec![0u8; len];
        self.inner
            .vectors
            .read_exact_at(&mut buf, HEADER + n as u64 * len as u64)
            .with_context(|| {
                format!(
                    "reading the embedding cache at {}",
                    self.inner.dir.display()
                )
            })?;
        let (k, rest) = buf.split_at(KEY);
        let (v, c) = rest.split_at(rest.len() - CHECK);
        if c != check(k, v) {
            // Torn by a crash or damaged on disk: forget it, so the vector is cached again once
            // the chunk is embedded again.
            let mut index = self.inner.index.write().expect("cache index");
            if index.get(&prefix(key)) == Some(&n) {
                index.remove(&prefix(key));
            }
            return Ok(None);
        }
        if k != key {
            // Another key with the same first 8 bytes.
            return Ok(None);
        }
        Ok(Some(decode(v)))
    }

    /// Cache `items`. Keys already cached are left as they are; a vector of another dimension than
    /// the cache's is not cached (the cache holds one model's vectors).
    pub fn put_many(&self, items: &[([u8; 32], &[f32])]) -> Result<()> {
        let mut w = self.inner.writer.lock().expect("cache writer");
        let err = || {
            format!(
                "writing the embedding cache at {}",
                self.inner.dir.display()
            )
        };
        if self.dim() == 0 {
            let Some(dim) = items
                .iter()
                .map(|(_, v)| v.len())
                .find(|&d| d > 0 && d <= MAX_DIM)
            else {
                return Ok(());
            };
            let mut h = FORMAT.to_vec();
            h.extend_from_slice(&(dim as u32).to_le_bytes());
            if let Err(e) = (&self.inner.vectors).write_all(&h) {
                // A partial header must not stay in front of the records to come.
                let _ = self.inner.vectors.set_len(0);
                return Err(e).with_context(err);
            }
            self.inner.dim.store(dim, Ordering::Release);
        }
        let dim = self.dim();
        let mut records = Vec::new();
        let mut keys = Vec::new();
        let mut fresh = Vec::new();
        let mut seen = std::collections::HashSet::new();
        {
            let index = self.inner.index.read().expect("cache index");
            for (key, v) in items {
                if v.len() != dim || index.contains_key(&prefix(key)) || !seen.insert(prefix(key)) {
                    continue;
                }
                let start = records.len();
                records.extend_from_slice(key);
                encode(v, &mut records);
                let c = check(key, &records[start + KEY..]);
                records.extend_from_slice(&c);
                keys.extend_from_slice(&key[..8]);
                fresh.push((prefix(key), w.records + fresh.len() as u64));
            }
        }
        if fresh.is_empty() {
            return Ok(());
        }
        if w.records + fresh.len() as u64 > u32::MAX as u64 {
            return Ok(());
        }
        let written = (&self.inner.vectors)
            .write_all(&records)
            .and_then(|()| w.keys.write_all(&keys));
        if let Err(e) = written {
            // A short write (a full disk) must not shift every later record: cut both files back
            // to the records they held.
            let record = record_len(dim) as u64;
            let _ = self.inner.vectors.set_len(HEADER + w.records * record);
            let _ = w.keys.set_len(w.records * 8);
            return Err(e).with_context(err);
        }
        w.records += fresh.len() as u64;
        let mut index = self.inner.index.write().expect("cache index");
        for (p, n) in fresh {
            index.insert(p, n as u32);
        }
        Ok(())
    }

    /// How many vectors the cache holds.
    pub fn len(&self) -> usize {
        self.inner.index.read().expect("cache index").len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Make what was written durable (the files are flushed by the operating system otherwise).
    pub fn sync(&self) -> Result<()> {
        let w = self.inner.writer.lock().expect("cache writer");
        self.inner.vectors.sync_data()?;
        w.keys.sync_data()?;
        Ok(())
    }
}

/// Convert a `vectors` file of exact `f32` vectors to 8-bit records, in record order (the `keys`
/// file stays valid): written beside it, synced, then renamed over it, so a crash on the way
/// leaves the old file to convert at the next open. A record that failed its checksum stays a
/// miss. Returns the converted file, open as [`EmbeddingCache::open`] opens it.
fn convert_f32(dir: &Path, vpath: &Path, old: &File, dim: usize) -> Result<File> {
    use std::io::{BufReader, BufWriter, Seek, SeekFrom};
    let tmp = dir.join("vectors.converting");
    let old_len = old.metadata()?.len();
    let old_record = KEY + 4 * dim + CHECK;
    let records = (old_len - HEADER) / old_record as u64;
    let mut reader = BufReader::with_capacity(1 << 20, old.try_clone()?);
    reader.seek(SeekFrom::Start(HEADER))?;
    let out = File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
    let mut w = BufWriter::with_capacity(1 << 20, &out);
    w.write_all(FORMAT)?;
    w.write_all(&(dim as u32).to_le_bytes())?;
    let mut buf = vec![0u8; old_record];
    let mut rec = Vec::with_capacity(record_len(dim));
    let mut v = vec![0f32; dim];
    for _ in 0..records {
        reader.read_exact(&mut buf)?;
        let (k, rest) = buf.split_at(KEY);
        let (bytes, c) = rest.split_at(4 * dim);
        for (x, b) in v.iter_mut().zip(bytes.chunks_exact(4)) {
            *x = f32::from_le_bytes(b.try_into().expect("4 bytes"));
        }
        rec.clear();
        rec.extend_from_slice(k);
        encode(&v, &mut rec);
        let sum = if c == check(k, bytes) {
            check(k, &rec[KEY..])
        } else {
            [0; CHECK] // stays a miss
        };
        rec.extend_from_slice(&sum);
        w.write_all(&rec)?;
    }
    w.flush()?;
    drop(w);
    out.sync_all()?;
    std::fs::rename(&tmp, vpath).with_context(|| format!("replacing {}", vpath.display()))?;
    tracing::info!(
        vectors = records,
        before_bytes = old_len,
        after_bytes = HEADER + records * record_len(dim) as u64,
        "the embedding cache at {} now holds 8-bit vectors",
        dir.display()
    );
    OpenOptions::new()
        .read(true)
        .append(true)
        .open(vpath)
        .with_context(|| format!("opening {}", vpath.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(n: u8) -> [u8; 32] {
        *blake3::hash(&[n]).as_bytes()
    }

    fn vector(n: u8, dim: usize) -> Vec<f32> {
        (0..dim).map(|i| n as f32 + i as f32 / 10.0).collect()
    }

    #[test]
    fn vectors_come_back_exactly_and_survive_a_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let c = EmbeddingCache::open(dir.path()).unwrap();
        assert!(c.get(&key(1)).unwrap().is_none());
        let (a, b) = (vector(1, 4), vector(2, 4));
        c.put_many(&[(key(1), &a), (key(2), &b)]).unwrap();
        assert_eq!(c.get(&key(1)).unwrap(), Some(as_stored(&a)));
        assert_eq!(c.get(&key(2)).unwrap(), Some(as_stored(&b)));
        assert!(c.get(&key(3)).unwrap().is_none());
        drop(c);
        let c = EmbeddingCache::open(dir.path()).unwrap();
        assert_eq!(c.len(), 2);
        assert_eq!(c.get(&key(1)).unwrap(), Some(as_stored(&a)));
        assert_eq!(c.get(&key(2)).unwrap(), Some(as_stored(&b)));
    }

    fn unit(n: u8, dim: usize) -> Vec<f32> {
        let v: Vec<f32> = (0..dim)
            .map(|i| ((n as f32 + 1.0) * (i as f32 + 0.5)).sin())
            .collect();
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter().map(|x| x / norm).collect()
    }

    #[test]
    fn a_vector_comes_back_within_a_hair_of_the_exact_one_and_as_the_index_stores_it() {
        let dir = tempfile::tempdir().unwrap();
        let c = EmbeddingCache::open(dir.path()).unwrap();
        let exact: Vec<Vec<f32>> = (0..20).map(|n| unit(n, 384)).collect();
        let items: Vec<([u8; 32], &[f32])> = exact
            .iter()
            .enumerate()
            .map(|(n, v)| (key(n as u8), v.as_slice()))
            .collect();
        c.put_many(&items).unwrap();
        for (n, v) in exact.iter().enumerate() {
            let back = c.get(&key(n as u8)).unwrap().expect("cached");
            let cos = crate::vectors::dot(v, &back) / crate::vectors::dot(&back, &back).sqrt();
            assert!(cos > 0.9999, "vector {n}: cosine {cos} to the exact one");
            // The vector index quantizes what it is given: the same integers either way.
            assert_eq!(
                crate::vectors::quantize(&back).0,
                crate::vectors::quantize(v).0,
                "vector {n}"
            );
        }
        let bytes = std::fs::metadata(dir.path().join("vectors")).unwrap().len();
        assert_eq!(
            bytes,
            HEADER + 20 * (32 + 4 + 384 + 8),
            "428 bytes a vector"
        );
    }

    /// A `vectors` file as the first format wrote it: exact `f32` vectors.
    fn write_f32_cache(dir: &Path, vectors: &[([u8; 32], Vec<f32>)]) {
        let dim = vectors[0].1.len();
        let mut file = FORMAT_F32.to_vec();
        file.extend_from_slice(&(dim as u32).to_le_bytes());
        let mut keys = Vec::new();
        for (k, v) in vectors {
            let start = file.len();
            file.extend_from_slice(k);
            for x in v {
                file.extend_from_slice(&x.to_le_bytes());
            }
            let c = check(k, &file[start + KEY..]);
            file.extend_from_slice(&c);
            keys.extend_from_slice(&k[..8]);
        }
        std::fs::write(dir.join("vectors"), file).unwrap();
        std::fs::write(dir.join("keys"), keys).unwrap();
    }

    #[test]
    fn a_cache_of_exact_vectors_is_converted_in_place_and_keeps_every_vector() {
        let dir = tempfile::tempdir().unwrap();
        let old: Vec<([u8; 32], Vec<f32>)> = (0..10).map(|n| (key(n), unit(n, 16))).collect();
        write_f32_cache(dir.path(), &old);
        // Record 3 damaged on disk: it must stay a miss, not become a valid wrong vector.
        let v = dir.path().join("vectors");
        let f = OpenOptions::new().read(true).write(true).open(&v).unwrap();
        let at = HEADER + 3 * (KEY + 4 * 16 + CHECK) as u64 + KEY as u64 + 1;
        f.write_all_at(&[0x5a], at).unwrap();
        drop(f);
        let before = std::fs::metadata(&v).unwrap().len();

        let c = EmbeddingCache::open(dir.path()).unwrap();
        assert_eq!(c.len(), 10);
        for (n, (k, vec)) in old.iter().enumerate() {
            let got = c.get(k).unwrap();
            if n == 3 {
                assert!(got.is_none(), "the damaged record is a miss");
            } else {
                assert_eq!(got, Some(as_stored(vec)), "record {n}");
            }
        }
        let after = std::fs::metadata(&v).unwrap().len();
        assert_eq!(after, HEADER + 10 * record_len(16) as u64);
        assert!(after * 3 < before * 2, "{before} → {after} bytes");
        assert!(!dir.path().join("vectors.converting").exists());
        // It goes on in the new format, across a reopen.
        c.put_many(&[(key(3), &unit(3, 16)), (key(50), &unit(50, 16))])
            .unwrap();
        drop(c);
        let c = EmbeddingCache::open(dir.path()).unwrap();
        assert_eq!(c.len(), 11);
        assert_eq!(c.get(&key(3)).unwrap(), Some(as_stored(&unit(3, 16))));
        assert_eq!(c.get(&key(50)).unwrap(), Some(as_stored(&unit(50, 16))));
        assert_eq!(c.get(&key(9)).unwrap(), Some(as_stored(&old[9].1)));
    }

    #[test]
    fn a_key_is_stored_once_and_the_first_vector_kept() {
        let dir = tempfile::tempdir().unwrap();
        let c = EmbeddingCache::open(dir.path()).unwrap();
        let (a, b) = (vector(1, 3), vector(9, 3));
        c.put_many(&[(key(1), &a), (key(1), &b)]).unwrap();
        c.put_many(&[(key(1), &b)]).unwrap();
        assert_eq!(c.len(), 1);
        assert_eq!(c.get(&key(1)).unwrap(), Some(as_stored(&a)));
        let bytes = std::fs::metadata(dir.path().join("vectors")).unwrap().len();
        assert_eq!(bytes, HEADER + record_len(3) as u64);
    }

    #[test]
    fn the_first_vector_fixes_the_dimension() {
        let dir = tempfile::tempdir().unwrap();
        let c = EmbeddingCache::open(dir.path()).unwrap();
        c.put_many(&[(key(1), &vector(1, 4)), (key(2), &vector(2, 5))])
            .unwrap();
        c.put_many(&[(key(3), &vector(3, 5))]).unwrap();
        assert_eq!(c.get(&key(1)).unwrap(), Some(as_stored(&vector(1, 4))));
        assert!(c.get(&key(2)).unwrap().is_none());
        assert!(c.get(&key(3)).unwrap().is_none());
        drop(c);
        let c = EmbeddingCache::open(dir.path()).unwrap();
        assert_eq!(c.len(), 1);
        c.put_many(&[(key(3), &vector(3, 5)), (key(4), &vector(4, 4))])
            .unwrap();
        assert!(c.get(&key(3)).unwrap().is_none());
        assert_eq!(c.get(&key(4)).unwrap(), Some(as_stored(&vector(4, 4))));
    }

    #[test]
    fn a_crash_mid_write_loses_only_the_torn_tail() {
        let dir = tempfile::tempdir().unwrap();
        let c = EmbeddingCache::open(dir.path()).unwrap();
        for n in 0..5 {
            c.put_many(&[(key(n), &vector(n, 4))]).unwrap();
        }
        drop(c);
        // The last record half-written, its key never: as a crash between the writes leaves it.
        let v = dir.path().join("vectors");
        let k = dir.path().join("keys");
        let vlen = std::fs::metadata(&v).unwrap().len();
        OpenOptions::new()
            .write(true)
            .open(&v)
            .unwrap()
            .set_len(vlen - 20)
            .unwrap();
        OpenOptions::new()
            .write(true)
            .open(&k)
            .unwrap()
            .set_len(4 * 8 + 3)
            .unwrap();
        let c = EmbeddingCache::open(dir.path()).unwrap();
        assert_eq!(c.len(), 4);
        for n in 0..4 {
            assert_eq!(
                c.get(&key(n)).unwrap(),
                Some(as_stored(&vector(n, 4))),
                "record {n}"
            );
        }
        assert!(c.get(&key(4)).unwrap().is_none());
        // And the cache goes on from there.
        c.put_many(&[(key(4), &vector(4, 4))]).unwrap();
        drop(c);
        let c = EmbeddingCache::open(dir.path()).unwrap();
        assert_eq!(c.get(&key(4)).unwrap(), Some(as_stored(&vector(4, 4))));
    }

    #[test]
    fn a_damaged_record_reads_as_a_miss_and_can_be_written_again() {
        let dir = tempfile::tempdir().unwrap();
        let c = EmbeddingCache::open(dir.path()).unwrap();
        c.put_many(&[(key(1), &vector(1, 4)), (key(2), &vector(2, 4))])
            .unwrap();
        drop(c);
        // Flip a byte of the first record's vector.
        let v = dir.path().join("vectors");
        let f = OpenOptions::new().read(true).write(true).open(&v).unwrap();
        let at = HEADER + KEY as u64 + 2;
        let mut b = [0u8];
        f.read_exact_at(&mut b, at).unwrap();
        f.write_all_at(&[b[0] ^ 0xff], at).unwrap();
        drop(f);
        let c = EmbeddingCache::open(dir.path()).unwrap();
        assert!(c.get(&key(1)).unwrap().is_none());
        assert_eq!(c.get(&key(2)).unwrap(), Some(as_stored(&vector(2, 4))));
        // A damaged record is replaced by a new one once the chunk is embedded again.
        c.put_many(&[(key(1), &vector(1, 4))]).unwrap();
        assert_eq!(c.get(&key(1)).unwrap(), Some(as_stored(&vector(1, 4))));
        drop(c);
        let c = EmbeddingCache::open(dir.path()).unwrap();
        assert_eq!(c.get(&key(1)).unwrap(), Some(as_stored(&vector(1, 4))));
    }

    #[test]
    fn a_file_of_another_format_starts_afresh() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("vectors"), b"garbage that is long enough").unwrap();
        std::fs::write(dir.path().join("keys"), b"01234567").unwrap();
        let c = EmbeddingCache::open(dir.path()).unwrap();
        assert!(c.is_empty());
        c.put_many(&[(key(1), &vector(1, 8))]).unwrap();
        drop(c);
        let c = EmbeddingCache::open(dir.path()).unwrap();
        assert_eq!(c.get(&key(1)).unwrap(), Some(as_stored(&vector(1, 8))));
    }

    #[test]
    fn writers_on_several_threads_lose_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let c = EmbeddingCache::open(dir.path()).unwrap();
        std::thread::scope(|s| {
            for t in 0..4u8 {
                let c = c.clone();
                s.spawn(move || {
                    for n in 0..50u8 {
                        let id = t * 50 + n;
                        c.put_many(&[(key(id), &vector(id, 4))]).unwrap();
                        assert_eq!(c.get(&key(id)).unwrap(), Some(as_stored(&vector(id, 4))));
                    }
                });
            }
        });
        drop(c);
        let c = EmbeddingCache::open(dir.path()).unwrap();
        assert_eq!(c.len(), 200);
        for id in 0..200u8 {
            assert_eq!(c.get(&key(id)).unwrap(), Some(as_stored(&vector(id, 4))));
        }
    }
}
