//! A sealed segment: an immutable file holding a bounded set of vectors and their HNSW graph
//! ([`super::hnsw`]), written once and then searched where it lies, memory-mapped. Nothing of a
//! point is deserialised onto the heap: ids, scales, vectors and links are read from the mapping,
//! so resident memory follows the pages queries touch (and the kernel may drop them again), not
//! the segment's size. Only the tombstones (ids removed since the file was written) are held.
//!
//! The file, little-endian, each section a multiple of 4 bytes:
//!
//! ```text
//! header   64 bytes: FORMAT line (zero-padded to 24), n u64, dim u32, m0 u32, m u32,
//!          entry u32, top layer u32, upper nodes u u32, upper lists l u32, 0 u32
//! ids      u64[n], ascending (a chunk is found by binary search)
//! scales   f32[n]
//! vectors  i8[n × dim], zero-padded to a multiple of 4
//! layer 0  u32[n × m0], each list padded with u32::MAX
//! upper    nodes u32[u] ascending; start u32[u + 1] (list index of each node's layer 1);
//!          links u32[l × m], each list padded with u32::MAX
//! ```
//!
//! The manifest ([`super::manifest`]) names each file with its blake3 and length; [`open`] checks
//! both (reading the file through the page cache, not the mapping) and refuses a file that does
//! not match — it is derived data, and its vectors come back from the embedding cache.

use std::collections::HashSet;
use std::io::{Read, Write};
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result};
use memmap2::Mmap;

use super::hnsw::{self, Graph, M, M0, NONE};

/// The first bytes of a sealed segment's file.
const FORMAT: &[u8] = b"patina-hnsw-i8-1\n";
const HEADER: usize = 64;

/// A sealed segment as the index holds it: the mapped file and the tombstones. A clone shares the
/// mapping (a merge reads its inputs off the lock).
#[derive(Clone)]
pub(crate) struct Sealed {
    pub number: u64,
    pub hash: [u8; 32],
    map: Arc<Mmap>,
    layout: Layout,
    /// Ids of this segment whose chunks were removed (or whose vector moved to the fresh segment).
    pub tombstones: HashSet<u64>,
}

/// The counts in a file's header and where each section starts.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Layout {
    n: usize,
    dim: usize,
    entry: u32,
    top: usize,
    uppers: usize,
    lists: usize,
    ids: usize,
    scales: usize,
    q: usize,
    layer0: usize,
    upper_nodes: usize,
    upper_start: usize,
    upper_links: usize,
    end: usize,
}

impl Layout {
    fn new(n: usize, dim: usize, entry: u32, top: usize, uppers: usize, lists: usize) -> Layout {
        let ids = HEADER;
        let scales = ids + 8 * n;
        let q = scales + 4 * n;
        let layer0 = q + (n * dim).next_multiple_of(4);
        let upper_nodes = layer0 + 4 * n * M0;
        let upper_start = upper_nodes + 4 * uppers;
        let upper_links = upper_start + 4 * (uppers + 1);
        let end = upper_links + 4 * lists * M;
        Layout {
            n,
            dim,
            entry,
            top,
            uppers,
            lists,
            ids,
            scales,
            q,
            layer0,
            upper_nodes,
            upper_start,
            upper_links,
            end,
        }
    }

    fn header(&self) -> [u8; HEADER] {
        let mut h = [0u8; HEADER];
        h[..FORMAT.len()].copy_from_slice(FORMAT);
        h[24..32].copy_from_slice(&(self.n as u64).to_le_bytes());
        let words = [
            self.dim as u32,
            M0 as u32,
            M as u32,
            self.entry,
            self.top as u32,
            self.uppers as u32,
            self.lists as u32,
            0,
        ];
        for (i, w) in words.iter().enumerate() {
            h[32 + 4 * i..36 + 4 * i].copy_from_slice(&w.to_le_bytes());
        }
        h
    }

    fn parse(h: &[u8]) -> Result<Layout, String> {
        if h.len() < HEADER || &h[..FORMAT.len()] != FORMAT {
            return Err("not a vector segment of this release".into());
        }
        let n = u64::from_le_bytes(h[24..32].try_into().expect("8 bytes"));
        let w = |i: usize| u32_at(h, 32 + 4 * i) as usize;
        let (dim, m0, m, entry, top, uppers, lists) = (w(0), w(1), w(2), w(3), w(4), w(5), w(6));
        if m0 != M0 || m != M {
            return Err(format!("links {m0}/{m}, this release writes {M0}/{M}"));
        }
        let n = usize::try_from(n).map_err(|_| "too many vectors".to_string())?;
        if n > u32::MAX as usize / 2 || dim > 65_536 || uppers > n || lists > n * 64 || top > 64 {
            return Err("implausible counts".into());
        }
        if n > 0 && entry >= n {
            return Err("entry point out of range".into());
        }
        Ok(Layout::new(n, dim, entry as u32, top, uppers, lists))
    }
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

/// A segment written: its number and blake3.
#[derive(Clone, Debug)]
pub(crate) struct Written {
    pub number: u64,
    pub hash: [u8; 32],
}

/// The file name of segment `number`.
pub(crate) fn file_name(number: u64) -> String {
    format!("{number:08}.hnsw")
}

/// Build the graph of the vectors (`ids` in any order, each with its `dim` integers in `q` and
/// its scale) and write it as segment `number` in `dir`: to a temporary, fsynced, renamed, the
/// directory fsynced, so the manifest never names a file that is not whole on disk.
pub(crate) fn write(
    dir: &Path,
    number: u64,
    dim: usize,
    ids: Vec<u64>,
    q: Vec<i8>,
    scales: Vec<f32>,
) -> Result<Written> {
    // Nodes in id order: a chunk is then found by binary search of the mapped ids.
    let mut order: Vec<usize> = (0..ids.len()).collect();
    order.sort_unstable_by_key(|&i| ids[i]);
    let sorted_ids: Vec<u64> = order.iter().map(|&i| ids[i]).collect();
    anyhow::ensure!(
        sorted_ids.windows(2).all(|w| w[0] < w[1]),
        "a segment repeats a chunk"
    );
    let mut sorted_q = Vec::with_capacity(q.len());
    for &i in &order {
        sorted_q.extend_from_slice(&q[i * dim..(i + 1) * dim]);
    }
    drop(q);
    let sorted_scales: Vec<f32> = order.iter().map(|&i| scales[i]).collect();
    drop(scales);
    let g = hnsw::build(dim, sorted_q, sorted_scales);

    let upper_nodes: Vec<u32> = (0..g.len() as u32)
        .filter(|&i| !g.upper[i as usize].is_empty())
        .collect();
    let lists: usize = g.upper.iter().map(Vec::len).sum();
    let (entry, top) = g.entry.unwrap_or((0, 0));
    let layout = Layout::new(g.len(), dim, entry, top, upper_nodes.len(), lists);

    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let path = dir.join(file_name(number));
    let hash = super::manifest::write_atomic_with(&path, |f| {
        // Buffered before the hash, so it sees large blocks rather than one number at a time.
        let mut w = std::io::BufWriter::with_capacity(
            1 << 16,
            Hashing {
                inner: f,
                hash: blake3::Hasher::new(),
                len: 0,
            },
        );
        w.write_all(&layout.header())?;
        for id in &sorted_ids {
            w.write_all(&id.to_le_bytes())?;
        }
        for s in &g.scales {
            w.write_all(&s.to_le_bytes())?;
        }
        let q: Vec<u8> = g.q.iter().map(|&x| x as u8).collect();
        w.write_all(&q)?;
        w.write_all(&vec![0u8; q.len().next_multiple_of(4) - q.len()])?;
        for l in &g.layer0 {
            w.write_all(&l.to_le_bytes())?;
        }
        for n in &upper_nodes {
            w.write_all(&n.to_le_bytes())?;
        }
        let mut start = 0u32;
        for &n in &upper_nodes {
            w.write_all(&start.to_le_bytes())?;
            start += g.upper[n as usize].len() as u32;
        }
        w.write_all(&start.to_le_bytes())?;
        for &n in &upper_nodes {
            for links in &g.upper[n as usize] {
                for i in 0..M {
                    w.write_all(&links.get(i).copied().unwrap_or(NONE).to_le_bytes())?;
                }
            }
        }
        let w = w.into_inner().map_err(|e| e.into_error())?;
        anyhow::ensure!(w.len as usize == layout.end, "segment layout");
        Ok(*w.hash.finalize().as_bytes())
    })?;
    super::manifest::sync_dir(dir);
    Ok(Written { number, hash })
}

/// Open segment `number` in `dir` if its file is whole: the length its header gives and the blake3
/// the manifest names. The hash is read through the page cache (one pass with `read`), so the
/// pages count against no process; then the file is mapped for random access.
pub(crate) fn open(
    dir: &Path,
    number: u64,
    hash: [u8; 32],
    tombstones: HashSet<u64>,
) -> Result<Sealed, String> {
    let path = dir.join(file_name(number));
    let mut file = std::fs::File::open(&path).map_err(|e| e.to_string())?;
    let mut hasher = blake3::Hasher::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut head = Vec::with_capacity(HEADER);
    let mut len = 0usize;
    loop {
        let n = file.read(&mut buf).map_err(|e| e.to_string())?;
        if n == 0 {
            break;
        }
        if head.len() < HEADER {
            let take = (HEADER - head.len()).min(n);
            head.extend_from_slice(&buf[..take]);
        }
        hasher.update(&buf[..n]);
        len += n;
    }
    let layout = Layout::parse(&head)?;
    if len != layout.end {
        return Err(format!("{len} bytes where its header says {}", layout.end));
    }
    if hasher.finalize().as_bytes() != &hash {
        return Err("checksum mismatch".into());
    }
    // SAFETY: the file is Patina's own (0600 in the state root), written once and never changed
    // in place; it is replaced by a new file and a manifest, never truncated while mapped.
    let map = unsafe { Mmap::map(&file) }.map_err(|e| e.to_string())?;
    if map.len() != layout.end {
        return Err("changed while opening".into());
    }
    // A query touches a few scattered pages; read-ahead would fault in neighbours it never uses.
    let _ = map.advise(memmap2::Advice::Random);
    let mut s = Sealed {
        number,
        hash,
        map: Arc::new(map),
        layout,
        tombstones: HashSet::new(),
    };
    s.tombstones = tombstones
        .into_iter()
        .filter(|&id| s.find(id).is_some())
        .collect();
    Ok(s)
}

impl Sealed {
    pub fn len(&self) -> usize {
        self.layout.n
    }

    /// Vectors not tombstoned.
    pub fn live(&self) -> usize {
        self.layout.n - self.tombstones.len()
    }

    pub fn dim(&self) -> usize {
        self.layout.dim
    }

    /// Bytes mapped (the file's length).
    pub fn mapped_bytes(&self) -> u64 {
        self.map.len() as u64
    }

    pub fn id(&self, node: u32) -> u64 {
        let at = self.layout.ids + 8 * node as usize;
        u64::from_le_bytes(self.map[at..at + 8].try_into().expect("8 bytes"))
    }

    /// The node holding `id`, live or not.
    pub fn find(&self, id: u64) -> Option<u32> {
        let (mut lo, mut hi) = (0usize, self.layout.n);
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.id(mid as u32).cmp(&id) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(mid as u32),
            }
        }
        None
    }

    /// Whether `id` is here and not tombstoned.
    pub fn holds(&self, id: u64) -> bool {
        !self.tombstones.contains(&id) && self.find(id).is_some()
    }

    /// (id, integers, scale) of every live vector, in id order.
    pub fn iter_live(&self) -> impl Iterator<Item = (u64, &[i8], f32)> + '_ {
        (0..self.layout.n as u32)
            .map(|i| (self.id(i), i))
            .filter(|(id, _)| !self.tombstones.contains(id))
            .map(|(id, i)| (id, self.q(i), self.scale(i)))
    }

    /// Live ids, in id order.
    pub fn live_ids(&self) -> impl Iterator<Item = u64> + '_ {
        (0..self.layout.n as u32)
            .map(|i| self.id(i))
            .filter(|id| !self.tombstones.contains(id))
    }

    /// The `ef` nearest vectors the graph finds, as (id, cosine), best first; tombstoned ones
    /// included (the caller skips them with the rest of its filter).
    pub fn search(&self, query: &[f32], ef: usize) -> Vec<(u64, f32)> {
        if query.len() != self.layout.dim {
            return Vec::new();
        }
        hnsw::search(self, query, ef)
            .into_iter()
            .map(|s| (self.id(s.node), s.sim))
            .collect()
    }
}

impl Graph for Sealed {
    fn len(&self) -> usize {
        self.layout.n
    }

    fn entry(&self) -> Option<(u32, usize)> {
        (self.layout.n > 0).then_some((self.layout.entry, self.layout.top))
    }

    fn q(&self, node: u32) -> &[i8] {
        let dim = self.layout.dim;
        let at = self.layout.q + node as usize * dim;
        let bytes = &self.map[at..at + dim];
        // SAFETY: i8 and u8 have the same size and alignment, and every bit pattern is valid.
        unsafe { &*(bytes as *const [u8] as *const [i8]) }
    }

    fn scale(&self, node: u32) -> f32 {
        let at = self.layout.scales + 4 * node as usize;
        f32::from_le_bytes(self.map[at..at + 4].try_into().expect("4 bytes"))
    }

    fn neighbours(&self, node: u32, layer: usize, out: &mut Vec<u32>) {
        out.clear();
        let l = &self.layout;
        // Links out of range are skipped, never followed: a search cannot leave the mapping.
        let valid = |n: u32| n != NONE && (n as usize) < l.n;
        if layer == 0 {
            let at = l.layer0 + 4 * M0 * node as usize;
            out.extend(
                (0..M0)
                    .map(|i| u32_at(&self.map, at + 4 * i))
                    .take_while(|&n| n != NONE)
                    .filter(|&n| valid(n)),
            );
            return;
        }
        // Binary search of the nodes with upper layers.
        let (mut lo, mut hi) = (0usize, l.uppers);
        while lo < hi {
            let mid = (lo + hi) / 2;
            let n = u32_at(&self.map, l.upper_nodes + 4 * mid);
            match n.cmp(&node) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => {
                    let start = u32_at(&self.map, l.upper_start + 4 * mid) as usize;
                    let stop = u32_at(&self.map, l.upper_start + 4 * (mid + 1)) as usize;
                    let list = start + layer - 1;
                    if list < stop && list < l.lists {
                        let at = l.upper_links + 4 * M * list;
                        out.extend(
                            (0..M)
                                .map(|i| u32_at(&self.map, at + 4 * i))
                                .take_while(|&n| n != NONE)
                                .filter(|&n| valid(n)),
                        );
                    }
                    return;
                }
            }
        }
    }
}

/// A writer that hashes and counts the bytes passing through it.
struct Hashing<W> {
    inner: W,
    hash: blake3::Hasher,
    len: u64,
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hash.update(&buf[..n]);
        self.len += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}
