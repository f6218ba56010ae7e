//! Memory hints for the big arrays of crowds: prefetches and huge pages.
//! Hints only: nothing here changes a result. With the bus index's calls
//! of its SSE4.1 builds, the core's only `unsafe`.

/// Hints the processor to load the cache lines of `*v`; no effect on results.
#[inline]
pub(crate) fn prefetch_lines<T: ?Sized>(v: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let p = (v as *const T).cast::<i8>();
        for off in (0..std::mem::size_of_val(v)).step_by(64) {
            // SAFETY: a prefetch is a hint that never faults and reads
            // nothing into the program; SSE is part of every x86_64 target.
            // The address is formed with wrapping_add, without a dereference.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(off)) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = v;
}

/// An empty vector with room for `n` items, whose memory the kernel is
/// asked to back with huge pages (Linux, where they are given on request):
/// a crowd's arrays span gigabytes, read at random, and with small pages
/// most reads would first miss the address translation cache. Only a
/// hint; no effect on results.
pub(crate) fn huge_vec<T>(n: usize) -> Vec<T> {
    let v = Vec::with_capacity(n);
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let start = v.as_ptr() as usize;
        let end = start + v.capacity() * std::mem::size_of::<T>();
        let (lo, hi) = (start.next_multiple_of(HUGE), end / HUGE * HUGE);
        if hi > lo {
            // SAFETY: the range lies inside the vector's own allocation, not
            // yet touched; MADV_HUGEPAGE changes how pages are backed, never
            // their contents. A failure (no huge pages here) is harmless.
            unsafe {
                libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_HUGEPAGE);
            }
        }
    }
    v
}

/// [`huge_vec`] holding `n` copies of `value`.
pub(crate) fn huge_filled<T: Clone>(n: usize, value: T) -> Vec<T> {
    let mut v = huge_vec(n);
    v.resize(n, value);
    v
}

/// Gives the memory freed so far back to the system, where the allocator
/// keeps it otherwise (glibc keeps what a thread's arena freed, for its
/// next allocations): a crowd's run state, freed before its results are
/// built, would still count in the process's peak memory beside them.
/// Only a hint; no effect on results.
pub(crate) fn give_back_freed() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free memory of the allocator's own
    // to the system; it touches no live allocation.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Asks the allocator to map every block of at least 1 MiB on its own and
/// to unmap it when freed (glibc otherwise raises that size as large
/// blocks are freed, up to 32 MiB, and then carves such blocks from its
/// arenas, which keep their memory once freed): a crowd's signal chunks
/// and its large temporaries then give their memory back as they go.
/// Only a hint; no effect on results.
pub(crate) fn map_large_blocks() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt sets a tuning parameter of the allocator; it
    // changes where future blocks come from, never a live allocation.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 18);
    }
}
