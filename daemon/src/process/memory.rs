//! The daemon's memory: the `[daemon] memory_mb` budget split into the limits that actually bound
//! memory (sled's page cache, tantivy's writer heap, how long the bulk embedding session stays
//! loaded when idle), what the process holds now (`/proc/self/status`), and giving freed heap back
//! to the operating system after bulk work (glibc `malloc_trim`).
//!
//! The split is pure and unit-tested; reading `/proc` and trimming are the only system calls.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

const MIB: u64 = 1024 * 1024;

/// Smallest budget accepted: the binary, two tokio runtimes' stacks and one embedding session
/// already take about this much.
pub(crate) const MIN_MEMORY_MB: u64 = 128;
/// Largest budget accepted (1 TiB): anything above is a typo for another unit.
pub(crate) const MAX_MEMORY_MB: u64 = 1024 * 1024;
/// The default: a daemon that lives in the background of a laptop all day.
pub(crate) const DEFAULT_MEMORY_MB: u64 = 512;

/// tantivy refuses a writer heap below 15 MB per indexing thread.
const TANTIVY_MIN_HEAP: u64 = 15_000_000;
/// Above this a bigger writer heap no longer makes indexing faster here (one thread, batches of
/// a few hundred files).
const TANTIVY_MAX_HEAP: u64 = 64 * MIB;

/// The budget split into the limits each component is given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Budget {
    /// The whole budget, in bytes.
    pub total: u64,
    /// sled's page cache (`sled::Config::cache_capacity`; sled's own default is 1 GiB).
    pub sled_cache: u64,
    /// tantivy's indexing heap per writer (one writer at a time: index jobs run one by one).
    pub tantivy_writer: u64,
    /// How long the bulk embedding session stays loaded once the backlog is empty; then it is
    /// dropped (its weights and working memory return) and loaded again for the next backlog.
    pub bulk_idle: Duration,
}

impl Budget {
    /// The split of `memory_mb` MiB: a sixteenth to sled's page cache (answers read only their
    /// hits' records; an eighth or a thirty-second left a restarted 100k-chunk daemon within
    /// 6 MiB of the same resident size: sled's nodes are not what the cap bounds), a sixteenth
    /// (15–64 MiB) to
    /// tantivy's writer; the rest is left to what cannot be capped but is released — the
    /// embedding sessions (CPU arena off, bulk session released after `bulk_idle`), the chunk,
    /// symbol and graph tables and the vectors of the registered repositories.
    pub fn of(memory_mb: u64) -> Budget {
        let total = memory_mb * MIB;
        Budget {
            total,
            sled_cache: (total / 16).max(8 * MIB),
            tantivy_writer: (total / 16).clamp(TANTIVY_MIN_HEAP, TANTIVY_MAX_HEAP),
            // A laptop budget gives the weights back soon; a large one keeps them warm longer.
            bulk_idle: if memory_mb >= 2048 {
                Duration::from_secs(300)
            } else {
                Duration::from_secs(20)
            },
        }
    }

    /// `Err` with a message naming the accepted range when `memory_mb` is not a sensible budget.
    pub fn check(memory_mb: u64) -> Result<(), String> {
        if (MIN_MEMORY_MB..=MAX_MEMORY_MB).contains(&memory_mb) {
            Ok(())
        } else {
            Err(format!(
                "[daemon] memory_mb = {memory_mb} is out of range: give the daemon's memory \
                 budget in MiB, from {MIN_MEMORY_MB} to {MAX_MEMORY_MB} (default \
                 {DEFAULT_MEMORY_MB})"
            ))
        }
    }
}

/// What `/proc/self/status` says the process holds, in bytes (0 where unknown).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Resident {
    /// VmRSS: everything resident.
    pub total: u64,
    /// RssAnon: heap, stacks, the model's weights and working memory.
    pub anon: u64,
    /// RssFile: mapped files — the binary and libraries, tantivy's segments.
    pub file: u64,
}

impl Resident {
    pub fn now() -> Resident {
        std::fs::read_to_string("/proc/self/status")
            .map(|s| Resident::parse(&s))
            .unwrap_or_default()
    }

    /// Parse the `VmRSS`, `RssAnon` and `RssFile` lines (kB) of a `/proc/<pid>/status` text.
    pub fn parse(status: &str) -> Resident {
        let mut r = Resident::default();
        for line in status.lines() {
            let Some((key, rest)) = line.split_once(':') else {
                continue;
            };
            let kb = || -> u64 {
                rest.split_whitespace()
                    .next()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0)
            };
            match key {
                "VmRSS" => r.total = kb() * 1024,
                "RssAnon" => r.anon = kb() * 1024,
                "RssFile" => r.file = kb() * 1024,
                _ => {}
            }
        }
        r
    }
}

/// One line of `patina status`'s memory breakdown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Part {
    pub component: &'static str,
    pub bytes: u64,
    /// The budget's cap (0: not capped, released after use instead).
    pub limit: u64,
    pub estimated: bool,
}

/// Bytes the registered repositories hold in memory, counted from their tables' sizes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Held {
    /// Model, commit-message and static vectors.
    pub vectors: u64,
    pub chunk_tables: u64,
    pub symbol_tables: u64,
}

/// What the daemon holds, by component, summing to `now.total`: the embedding sessions (measured
/// when loaded), the vectors, chunk and symbol tables (from their sizes), the mapped files (binary,
/// libraries, tantivy segments: RssFile) and the rest of the heap, whose page-cache share sled
/// keeps under `budget.sled_cache`.
pub(crate) fn breakdown(
    now: Resident,
    budget: &Budget,
    sessions: (u64, u64),
    held: Held,
) -> Vec<Part> {
    let part = |component, bytes, limit, estimated| Part {
        component,
        bytes,
        limit,
        estimated,
    };
    let mut heap = now.anon;
    let mut take = |b: u64| {
        let b = b.min(heap);
        heap -= b;
        b
    };
    // The data first: its sizes are counted from the tables themselves; a session's size is the
    // resident growth while it loaded, which overcounts when other work allocated meanwhile (two
    // sessions loaded at once can add up to more than the heap holds).
    let (vectors, tables, symbols) = (
        take(held.vectors),
        take(held.chunk_tables),
        take(held.symbol_tables),
    );
    let (query, bulk) = (take(sessions.0), take(sessions.1));
    let mapped = now.total.saturating_sub(now.anon);
    vec![
        part("embedding model (query session)", query, 0, false),
        part("embedding model (bulk session)", bulk, 0, false),
        part(
            "vector index (unsealed vectors, commit messages)",
            vectors,
            0,
            true,
        ),
        part("chunk tables", tables, 0, true),
        part("symbol tables", symbols, 0, true),
        part(
            "other heap (sled page cache, tantivy writer, requests)",
            heap,
            budget.sled_cache + budget.tantivy_writer,
            false,
        ),
        part(
            "mapped files (binary, libraries, tantivy segments)",
            mapped,
            0,
            false,
        ),
    ]
}

/// Approximate heap bytes of a chunk table row: the row, its strings (the path is shared by a
/// file's chunks and the licence by many files: each holder counts its share).
pub(crate) fn chunk_entry_bytes(meta: &patina_core::ChunkMeta) -> u64 {
    use std::sync::Arc;
    let path = (16 + meta.path.len()) / Arc::strong_count(&meta.path).max(1);
    let licence = meta.licence.as_ref().map_or(0, |l| {
        (16 + std::mem::size_of::<patina_core::Licence>() + l.expr.as_ref().map_or(0, |e| e.len()))
            / Arc::strong_count(l).max(1)
    });
    let strings = path
        + licence
        + meta.symbol.as_ref().map_or(0, |s| s.len())
        + meta.parent.as_ref().map_or(0, |s| s.len());
    (std::mem::size_of::<(u64, patina_core::ChunkMeta)>() + strings) as u64
}

/// Give the heap freed by bulk work back to the operating system. glibc keeps freed memory in
/// its arenas (one per thread that allocated, up to 8 per core) and returns only the top of
/// each; `malloc_trim(0)` releases every whole free page of every arena. Cheap (a few ms) and
/// called only after bulk work: an index job, a drained embedding backlog, `patina rm`.
pub(crate) fn release_free_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim has no preconditions; it only walks glibc's own arenas under their locks.
    unsafe {
        libc::malloc_trim(0);
    }
    #[cfg(target_os = "linux")]
    crate::process::apart::release_empty_runs();
}

/// Let the system take back the resident pages of every mapping of a file whose name contains
/// `name` (`madvise(MADV_PAGEOUT)`): for a library whose code nothing runs now — ONNX Runtime once
/// no embedding session is loaded (its kernels, touched by a bulk batch, stayed resident after
/// the session and the repository that needed it had gone). The contents are kept: a page is read
/// again from the file when it is next used. Returns the bytes of the mappings advised.
pub(crate) fn page_out_mappings_of(name: &str) -> u64 {
    #[cfg(target_os = "linux")]
    {
        let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else {
            return 0;
        };
        let mut advised = 0;
        for (lo, hi) in mappings_of(&maps, name) {
            // SAFETY: the range is a whole mapping of this process as /proc listed it a moment
            // ago; MADV_PAGEOUT changes residency only, never contents, and fails harmlessly
            // (EINVAL, ENOMEM) on kernels without it or on a range unmapped since.
            let rc = unsafe { libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_PAGEOUT) };
            if rc == 0 {
                advised += (hi - lo) as u64;
            }
        }
        advised
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = name;
        0
    }
}

/// The address ranges in `/proc/self/maps` text of the mappings of a file whose name contains
/// `name` (the file name, not the directories above it).
fn mappings_of(maps: &str, name: &str) -> Vec<(usize, usize)> {
    maps.lines()
        .filter_map(|line| {
            let mut f = line.split_whitespace();
            let range = f.next()?;
            let path = f.nth(4)?;
            let file = path.rsplit('/').next()?;
            if !path.starts_with('/') || !file.contains(name) {
                return None;
            }
            let (lo, hi) = range.split_once('-')?;
            Some((
                usize::from_str_radix(lo, 16).ok()?,
                usize::from_str_radix(hi, 16).ok()?,
            ))
        })
        .collect()
}

/// Run `f` with the calling thread's small allocations kept in a region of their own (see
/// `crate::process::apart`): for work that frees much and leaves a few small allocations behind for good.
pub(crate) fn apart<T>(f: impl FnOnce() -> T) -> T {
    #[cfg(target_os = "linux")]
    return crate::process::apart::run(f);
    #[cfg(not(target_os = "linux"))]
    f()
}

/// When [`release_free_heap_as_it_settles`] trims again after its trim at once: freed memory reaches
/// glibc's free lists over seconds, not at once — sled reclaims a dropped tree's nodes as its
/// epochs advance, tantivy's threads let go of their segments when they next wake. After `patina
/// rm` of a 120k-chunk repository (bench/RESULTS.md, eleventh session) a trim at once left 232 MB
/// of anonymous memory, one 2 s later 188 MB, one 7 s later 127 MB.
const SETTLE: [Duration; 3] = [
    Duration::from_secs(2),
    Duration::from_secs(5),
    Duration::from_secs(15),
];

/// Trims asked for since the daemon started, and whether a sequence of them is running.
static SETTLE_REQUESTS: AtomicU64 = AtomicU64::new(0);
static SETTLING: AtomicBool = AtomicBool::new(false);

/// [`release_free_heap`] at once, and again ([`SETTLE`]) while the memory freed by a large
/// release (a removed repository, a finished index job) settles into the allocator's free lists.
/// The later trims are shared: one sequence runs at a time, and a request while it runs restarts
/// it at its next step, so a stream of releases (a start's catch-up rounds over hundreds of
/// repositories) adds no more than one trim every 2 s to the one each release makes — a trim walks
/// every arena under its lock, ~20 ms of CPU on the heap of a 120k-chunk repository even when it
/// finds nothing. Needs a tokio runtime; the trims run on the blocking pool.
pub(crate) fn release_free_heap_as_it_settles() {
    tokio::task::spawn_blocking(release_free_heap);
    SETTLE_REQUESTS.fetch_add(1, Ordering::SeqCst);
    if SETTLING.swap(true, Ordering::SeqCst) {
        return;
    }
    tokio::spawn(async {
        let mut seen = SETTLE_REQUESTS.load(Ordering::SeqCst);
        let mut since = tokio::time::Instant::now();
        let mut step = 0;
        loop {
            if step == SETTLE.len() {
                SETTLING.store(false, Ordering::SeqCst);
                // A request that saw the sequence still running before it ended is served here,
                // unless its caller started a sequence of its own meanwhile.
                if SETTLE_REQUESTS.load(Ordering::SeqCst) == seen
                    || SETTLING.swap(true, Ordering::SeqCst)
                {
                    return;
                }
                (seen, since, step) = (
                    SETTLE_REQUESTS.load(Ordering::SeqCst),
                    tokio::time::Instant::now(),
                    0,
                );
                continue;
            }
            tokio::time::sleep_until(since + SETTLE[step]).await;
            let _ = tokio::task::spawn_blocking(release_free_heap).await;
            let now = SETTLE_REQUESTS.load(Ordering::SeqCst);
            if now != seen {
                (seen, since, step) = (now, tokio::time::Instant::now(), 0);
            } else {
                step += 1;
            }
        }
    });
}

/// glibc settings for a long-lived process whose big allocations come in bursts (embedding
/// batches, index batches):
/// - fewer arenas: by default every thread that allocates may get its own (up to 8 per core),
///   and memory freed in one cannot serve another; two per core keep the few busy threads
///   contention-free;
/// - a fixed mmap threshold of 1 MiB: by default glibc raises it (up to 32 MiB) each time a
///   large block is freed, after which ONNX Runtime's per-batch tensors (tens of MiB without its
///   arena) come from the heap and stay there; with the threshold fixed they are mapped and
///   unmapped with the batch, so resident memory follows the work.
///
/// Must run before other threads exist.
pub(crate) fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        // SAFETY: mallopt is safe to call at any time; called first thing in main.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, (2 * cores).min(8) as libc::c_int);
            libc::mallopt(libc::M_MMAP_THRESHOLD, 1024 * 1024);
        }
    }
}

/// Resident set size of this process, 0 where unknown.
pub(crate) fn rss_bytes() -> u64 {
    let Ok(statm) = std::fs::read_to_string("/proc/self/statm") else {
        return 0;
    };
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    pages * page.max(0) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_budget_caps_sled_far_below_its_own_default() {
        let b = Budget::of(DEFAULT_MEMORY_MB);
        assert_eq!(b.total, 512 * MIB);
        assert_eq!(b.sled_cache, 32 * MIB, "sled's own default is 1 GiB");
        assert_eq!(b.tantivy_writer, 32 * MIB);
        assert!(b.sled_cache + b.tantivy_writer < b.total / 2);
    }

    #[test]
    fn small_and_large_budgets_keep_tantivy_within_its_limits() {
        let small = Budget::of(MIN_MEMORY_MB);
        assert_eq!(small.tantivy_writer, TANTIVY_MIN_HEAP);
        assert_eq!(small.sled_cache, 8 * MIB);
        let large = Budget::of(16 * 1024);
        assert_eq!(large.tantivy_writer, TANTIVY_MAX_HEAP);
        assert_eq!(large.sled_cache, 1024 * MIB);
        assert!(large.bulk_idle > small.bulk_idle);
    }

    #[test]
    fn nonsense_budgets_are_refused_with_the_range() {
        for bad in [0, 1, MIN_MEMORY_MB - 1, MAX_MEMORY_MB + 1] {
            let e = Budget::check(bad).unwrap_err();
            assert!(
                e.contains("memory_mb") && e.contains("128") && e.contains("MiB"),
                "{e}"
            );
        }
        assert!(Budget::check(MIN_MEMORY_MB).is_ok());
        assert!(Budget::check(DEFAULT_MEMORY_MB).is_ok());
    }

    #[test]
    fn the_breakdown_sums_to_the_resident_total_and_never_overdraws() {
        let now = Resident {
            total: 300 * MIB,
            anon: 200 * MIB,
            file: 100 * MIB,
        };
        let b = Budget::of(512);
        let held = Held {
            vectors: 30 * MIB,
            chunk_tables: 40 * MIB,
            symbol_tables: 20 * MIB,
        };
        let parts = breakdown(now, &b, (90 * MIB, 80 * MIB), held);
        assert_eq!(parts.iter().map(|p| p.bytes).sum::<u64>(), now.total);
        let get = |name: &str| {
            parts
                .iter()
                .find(|p| p.component.starts_with(name))
                .unwrap()
        };
        assert_eq!(get("vector index").bytes, 30 * MIB);
        assert_eq!(get("chunk tables").bytes, 40 * MIB);
        assert_eq!(get("symbol tables").bytes, 20 * MIB);
        assert_eq!(get("embedding model (query").bytes, 90 * MIB);
        // A measure larger than what is left is cut to what is left.
        assert_eq!(get("embedding model (bulk").bytes, 20 * MIB);
        assert_eq!(get("other heap").bytes, 0);
        assert_eq!(get("mapped files").bytes, 100 * MIB);
    }

    #[test]
    fn proc_status_is_read_in_bytes() {
        let status = "Name:\tpatinad\nVmRSS:\t  204800 kB\nRssAnon:\t  150000 kB\nRssFile:\t   54800 kB\nRssShmem:\t 0 kB\n";
        let r = Resident::parse(status);
        assert_eq!(r.total, 204800 * 1024);
        assert_eq!(r.anon, 150000 * 1024);
        assert_eq!(r.file, 54800 * 1024);
        assert_eq!(Resident::parse("garbage"), Resident::default());
    }

    #[test]
    fn the_mappings_of_a_library_are_found_by_its_file_name() {
        let maps = "\
7f00a000-7f00b000 r--p 00000000 08:01 123 /opt/m/libonnxruntime.so.1.22.0
7f00b000-7f00f000 r-xp 00001000 08:01 123 /opt/m/libonnxruntime.so.1.22.0
7f010000-7f011000 rw-p 00000000 00:00 0
7f011000-7f012000 r--p 00000000 08:01 124 /opt/libonnxruntime-dir/libc.so.6
7ffd0000-7ffd1000 rw-p 00000000 00:00 0 [stack]
";
        assert_eq!(
            mappings_of(maps, "libonnxruntime"),
            vec![(0x7f00a000, 0x7f00b000), (0x7f00b000, 0x7f00f000)]
        );
        assert!(mappings_of(maps, "stack").is_empty());
    }

    /// Resident kB of this process's mappings of `path` (`/proc/self/smaps`).
    #[cfg(target_os = "linux")]
    fn resident_kb_of(path: &std::path::Path) -> u64 {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let mut inside = false;
        let mut kb = 0;
        for line in smaps.lines() {
            if line.starts_with(|c: char| c.is_ascii_hexdigit()) && line.contains('-') {
                inside = line.ends_with(path.to_str().unwrap());
            } else if inside && line.starts_with("Rss:") {
                kb += line
                    .split_whitespace()
                    .nth(1)
                    .unwrap()
                    .parse::<u64>()
                    .unwrap();
            }
        }
        kb
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_paged_out_mapping_keeps_its_contents_and_leaves_residency() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("patina-page-out-probe.bin");
        let len = 4 << 20;
        let data: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &data).unwrap();
        std::fs::File::open(&path).unwrap().sync_all().unwrap();
        let file = std::fs::File::open(&path).unwrap();
        // SAFETY: a private read-only mapping of a file this test owns, unmapped below.
        let at = unsafe {
            use std::os::fd::AsRawFd;
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE,
                file.as_raw_fd(),
                0,
            )
        };
        assert_ne!(at, libc::MAP_FAILED);
        // SAFETY: `at` maps `len` readable bytes.
        let view = unsafe { std::slice::from_raw_parts(at as *const u8, len) };
        let sum = |v: &[u8]| v.iter().step_by(4096).map(|&b| b as u64).sum::<u64>();
        let expected = sum(&data);
        assert_eq!(sum(view), expected);
        let before = resident_kb_of(&path);
        assert!(before >= 4000, "every page read: {before} kB resident");
        let advised = page_out_mappings_of("patina-page-out-probe");
        assert_eq!(advised, len as u64, "the mapping was advised");
        let after = resident_kb_of(&path);
        assert!(
            after < before / 2,
            "{before} kB resident before, {after} kB after"
        );
        assert_eq!(
            sum(view),
            expected,
            "the contents are read again from the file"
        );
        // SAFETY: unmapping what was mapped above; `view` is not used after.
        unsafe { libc::munmap(at, len) };
    }
}
