//! A heap apart for work whose few survivors must not scatter.
//!
//! Dropping a repository's sled trees frees every page they held, and sled keeps a small record
//! for each freed page (three to four allocations of 32–160 bytes) until the page id is reused.
//! Allocated from the general heap right after a large repository's memory was freed, these
//! records land in the holes that memory left, one or two to a page, and keep every such page
//! resident: after `patina rm` of a 120k-chunk repository, ~66k of them pinned ~104 MiB that
//! `malloc_trim` could not give back (bench/RESULTS.md, twelfth session).
//!
//! The same holds for the chunk and symbol tables of a repository's first round: their rows'
//! strings, allocated batch by batch between buffers the batch frees, pinned ~130 MiB of a
//! freshly indexed 120k-chunk daemon; copied afresh inside [`run`] after the round
//! (`RepoIndex::repack_if_grown`) they sit together (bench/RESULTS.md, fourteenth session).
//!
//! [`run`] makes the calling thread's small allocations come from a region of their own while
//! a closure runs, so such records sit side by side in a few pages. The region is one reserved
//! range of address space; each 16-byte size class carves its slots from runs of its own, and
//! keeps a free list; a slot freed by any thread goes back to its class's list, and a run
//! whose slots are all free gives its pages back ([`release_empty_runs`], with the daemon's heap
//! trims). Allocations larger than [`MAX_SLOT`] bytes or aligned beyond 16, and every
//! allocation outside [`run`], go to the system allocator as before; a full region falls back
//! to it too.
//!
//! Installed as the global allocator of the daemon (and of its tests); the only cost outside
//! [`run`] is a thread-local flag read on allocation and an address comparison on free.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The largest allocation served from the region. sled's record of a freed page is three
/// allocations of 160, 48 and 32 bytes; the nodes it loads to walk a dropped tree (values, key
/// and value lists) are mostly larger and go to the system allocator, which frees them whole.
pub(crate) const MAX_SLOT: usize = 256;
const GRAIN: usize = 16;
const CLASSES: usize = MAX_SLOT / GRAIN;
/// Each size class carves its slots from runs of this many bytes, so slots of one class sit
/// together: what a walk allocates and frees at once does not end up between the records.
const RUN: usize = 64 << 10;
/// Address space reserved for the region (never committed until used: `MAP_NORESERVE`).
/// sled's records for a million-chunk repository take ~50 MiB.
const RESERVE: usize = 4 << 30;

thread_local! {
    static APART: Cell<bool> = const { Cell::new(false) };
}

/// Runs the region can hold.
const RUNS: usize = RESERVE / RUN;
/// `State::live` of a run that holds no slots: its pages were given back, any class may take it.
const EMPTY_RUN: u32 = u32::MAX;

/// The region: `[base, base + RESERVE)` once reserved.
static BASE: AtomicUsize = AtomicUsize::new(0);
static STATE: Mutex<State> = Mutex::new(State {
    carved: 0,
    classes: [Class {
        free: 0,
        next: 0,
        end: 0,
    }; CLASSES],
    live: [0; RUNS],
});

struct State {
    /// Bytes of the region handed to runs so far.
    carved: usize,
    classes: [Class; CLASSES],
    /// Per run, its live slots ([`EMPTY_RUN`]: given back). Untouched entries cost no memory.
    live: [u32; RUNS],
}

#[derive(Clone, Copy)]
struct Class {
    /// Address of the first free slot (0: none); each free slot holds the next one's.
    free: usize,
    /// The class's current run: its next uncarved slot and its end.
    next: usize,
    end: usize,
}

/// Run `f` with the calling thread's small allocations served from the region. Nested calls
/// are fine; the flag is restored even if `f` panics.
pub(crate) fn run<T>(f: impl FnOnce() -> T) -> T {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            APART.with(|a| a.set(self.0));
        }
    }
    let _restore = Restore(APART.with(|a| a.replace(true)));
    f()
}

/// Bytes of the region held by runs not given back (live slots and free ones kept for reuse).
pub(crate) fn carved() -> usize {
    STATE.lock().map_or(0, |s| {
        let runs = s.carved / RUN;
        s.live[..runs].iter().filter(|&&n| n != EMPTY_RUN).count() * RUN
    })
}

/// Give back the pages of every run whose slots are all free (a walk's transient allocations,
/// freed once sled's epochs move on): they leave their class's free list and any class may take
/// the run again. Walks the free lists under the lock; called with the heap trims.
pub(crate) fn release_empty_runs() {
    let Some(base) = std::num::NonZeroUsize::new(BASE.load(Ordering::Acquire)) else {
        return;
    };
    let base = base.get();
    let Ok(mut s) = STATE.lock() else { return };
    let runs = s.carved / RUN;
    if !s.live[..runs].contains(&0) {
        return;
    }
    let state = &mut *s;
    for c in state.classes.iter_mut() {
        // Keep the free slots of runs still in use, in their order.
        let (mut head, mut tail) = (0usize, 0usize);
        let mut slot = c.free;
        while slot != 0 {
            // SAFETY: a free slot holds the address of the next one.
            let next = unsafe { *(slot as *const usize) };
            if state.live[(slot - base) / RUN] != 0 {
                if tail == 0 {
                    head = slot;
                } else {
                    // SAFETY: `tail` is a free slot of ours.
                    unsafe { *(tail as *mut usize) = slot };
                }
                tail = slot;
            }
            slot = next;
        }
        if tail != 0 {
            // SAFETY: as above.
            unsafe { *(tail as *mut usize) = 0 };
        }
        c.free = head;
        if c.end != 0 && state.live[(c.end - 1 - base) / RUN] == 0 {
            (c.next, c.end) = (0, 0);
        }
    }
    for run in 0..runs {
        if state.live[run] == 0 {
            state.live[run] = EMPTY_RUN;
            // SAFETY: the run lies in our mapping and no slot in it is live or listed.
            unsafe {
                libc::madvise(
                    (base + run * RUN) as *mut libc::c_void,
                    RUN,
                    libc::MADV_DONTNEED,
                )
            };
        }
    }
}

/// Whether `p` was served from the region.
pub(crate) fn holds(p: *const u8) -> bool {
    let base = BASE.load(Ordering::Acquire);
    base != 0 && (p as usize).wrapping_sub(base) < RESERVE
}

fn class_of(layout: Layout) -> Option<usize> {
    (layout.size() <= MAX_SLOT && layout.align() <= GRAIN && layout.size() > 0)
        .then(|| layout.size().div_ceil(GRAIN) - 1)
}

fn base() -> Option<usize> {
    let base = BASE.load(Ordering::Acquire);
    if base != 0 {
        return Some(base);
    }
    // SAFETY: an anonymous private mapping with no address hint; nothing else refers to it.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            RESERVE,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return None;
    }
    match BASE.compare_exchange(0, p as usize, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => Some(p as usize),
        Err(won) => {
            // Another thread reserved first: give ours back.
            // SAFETY: `p` is the mapping made above, unused.
            unsafe { libc::munmap(p, RESERVE) };
            Some(won)
        }
    }
}

fn take(class: usize) -> Option<*mut u8> {
    let base = base()?;
    let mut s = STATE.lock().ok()?;
    let size = (class + 1) * GRAIN;
    let state = &mut *s;
    let c = &mut state.classes[class];
    let p = if c.free != 0 {
        let head = c.free;
        // SAFETY: a free slot of this class holds the address of the next one.
        c.free = unsafe { *(head as *const usize) };
        head
    } else {
        if c.next + size > c.end {
            let runs = state.carved / RUN;
            let run = match state.live[..runs].iter().position(|&n| n == EMPTY_RUN) {
                Some(run) => run,
                None if state.carved + RUN <= RESERVE => {
                    state.carved += RUN;
                    runs
                }
                None => return None,
            };
            state.live[run] = 0;
            (c.next, c.end) = (base + run * RUN, base + (run + 1) * RUN);
        }
        let p = c.next;
        c.next += size;
        p
    };
    state.live[(p - base) / RUN] += 1;
    Some(p as *mut u8)
}

fn give_back(p: *mut u8, class: usize) {
    let base = BASE.load(Ordering::Acquire);
    let mut s = STATE.lock().unwrap_or_else(|e| e.into_inner());
    // SAFETY: the slot is at least 16 bytes, 16-aligned, and ours again.
    unsafe { *(p as *mut usize) = s.classes[class].free };
    s.classes[class].free = p as usize;
    s.live[(p as usize - base) / RUN] -= 1;
}

/// The daemon's allocator: the system's, except inside [`run`] (see the module comment).
pub struct Allocator;

// SAFETY: every pointer handed out is either the system allocator's (and freed by it) or a
// slot of the region big and aligned enough for its layout (and freed into its class's list);
// `holds` tells them apart by address.
unsafe impl GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if APART.with(Cell::get)
            && let Some(p) = class_of(layout).and_then(take)
        {
            return p;
        }
        // SAFETY: forwarded with the caller's layout.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if APART.with(Cell::get)
            && let Some(p) = class_of(layout).and_then(take)
        {
            // SAFETY: the slot holds at least `layout.size()` bytes.
            unsafe { std::ptr::write_bytes(p, 0, layout.size()) };
            return p;
        }
        // SAFETY: forwarded with the caller's layout.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        if holds(p) {
            give_back(
                p,
                class_of(layout).expect("a region slot has a small layout"),
            );
        } else {
            // SAFETY: the system allocator's pointer, with the layout it was allocated with.
            unsafe { System.dealloc(p, layout) }
        }
    }

    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let system_sized = new_size > MAX_SLOT || layout.align() > GRAIN;
        if !holds(p) && (system_sized || !APART.with(Cell::get)) {
            // SAFETY: forwarded; the pointer is the system allocator's.
            return unsafe { System.realloc(p, layout, new_size) };
        }
        if holds(p)
            && class_of(layout)
                == Layout::from_size_align(new_size, layout.align())
                    .ok()
                    .and_then(class_of)
        {
            return p;
        }
        // SAFETY: `new_size` is non-zero and, rounded to `layout.align()`, fits `isize`
        // (GlobalAlloc::realloc's contract).
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        // SAFETY: a valid layout; the copy stays within both blocks.
        unsafe {
            let q = self.alloc(new_layout);
            if !q.is_null() {
                std::ptr::copy_nonoverlapping(p, q, layout.size().min(new_size));
                self.dealloc(p, layout);
            }
            q
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_allocations_inside_run_come_from_the_region_and_outside_from_the_system() {
        let inside = run(|| Box::new([7u8; 100]));
        let outside = Box::new([7u8; 100]);
        assert!(holds(inside.as_ptr()));
        assert!(!holds(outside.as_ptr()));
        let big = run(|| vec![0u8; MAX_SLOT + 1]);
        assert!(
            !holds(big.as_ptr()),
            "large allocations stay with the system allocator"
        );
    }

    #[test]
    fn a_slot_freed_by_another_thread_is_reused() {
        // Two slots of a class no other test uses: the one kept alive keeps their run from being
        // given back by another test's `release_empty_runs` meanwhile.
        let (first, _kept) = run(|| (Box::new([1u64; 20]), Box::new([1u64; 20])));
        let addr = first.as_ptr() as usize;
        std::thread::spawn(move || drop(first)).join().unwrap();
        let again = run(|| Box::new([2u64; 20]));
        assert_eq!(
            again.as_ptr() as usize,
            addr,
            "the freed slot heads its class's list"
        );
        assert!(again.iter().all(|&x| x == 2));
    }

    #[test]
    fn growing_a_region_block_keeps_its_contents_wherever_it_moves() {
        let mut v: Vec<u32> = run(|| {
            let mut v = Vec::with_capacity(4);
            v.extend([1, 2, 3, 4]);
            v
        });
        assert!(holds(v.as_ptr() as *const u8));
        v.extend(5..=2000); // outside `run`: the block moves to the system allocator
        assert!(!holds(v.as_ptr() as *const u8));
        assert_eq!(v[..6], [1, 2, 3, 4, 5, 6]);
        assert_eq!(v.len(), 2000);
        let zeroed = run(|| vec![0u8; 64]);
        assert!(holds(zeroed.as_ptr()) && zeroed.iter().all(|&b| b == 0));
    }

    #[test]
    fn runs_whose_slots_are_all_free_are_given_back_and_taken_again() {
        // 240-byte slots: a class no other test here uses; 600 of them fill more than two runs.
        let boxes: Vec<Box<[u8; 240]>> = run(|| (0..600).map(|_| Box::new([9u8; 240])).collect());
        let first = boxes[0].as_ptr() as usize;
        let run_of = |p: usize| (p - BASE.load(Ordering::Acquire)) / RUN;
        let live = |p: usize| STATE.lock().unwrap().live[run_of(p)];
        assert!(live(first) > 0);
        drop(boxes);
        release_empty_runs();
        assert_eq!(live(first), EMPTY_RUN, "the run's pages were given back");
        let again: Vec<Box<[u8; 240]>> = run(|| (0..10).map(|_| Box::new([3u8; 240])).collect());
        assert!(again.iter().all(|b| b.iter().all(|&x| x == 3)));
        assert!(again.iter().all(|b| live(b.as_ptr() as usize) != EMPTY_RUN));
    }

    #[test]
    fn the_flag_is_restored_after_a_panic() {
        // Unwound without the panic hook: the hook (with RUST_BACKTRACE set) would resolve a
        // backtrace inside `run` and leave its symbol caches in the region for good, in slots
        // of classes other tests count on being free.
        let _ = std::panic::catch_unwind(|| run(|| std::panic::resume_unwind(Box::new("inside"))));
        let after = Box::new([0u8; 32]);
        assert!(!holds(after.as_ptr()));
    }
}
