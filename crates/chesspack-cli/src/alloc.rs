//! The allocator: the system's, with large allocations asking the kernel
//! for huge pages where it gives them on request (Linux's transparent huge
//! pages in `madvise` mode, the default of many distributions).
//!
//! A query reads and unpacks tens of megabytes of a search section into
//! fresh memory, once a process. Faulting those pages in 4 KiB at a time
//! was a fifth of the CPU time of an explorer query on the masters file
//! (13,200 page faults). With huge pages for allocations of 128 KiB and
//! more (9,200 faults), a query that decodes one game took 55.0 instead of
//! 58.7 ms (the median of 31 processes, Xeon, two threads; glibc's own
//! `glibc.malloc.hugetlb=1` tunable, which a program cannot set for
//! itself, 54.2), and compressing and decompressing took the same time and
//! memory. Issue 68.

use std::alloc::{GlobalAlloc, Layout, System};

/// The system allocator, advising huge pages for allocations of at least
/// [`LARGE`] bytes.
pub struct HugeLarge;

/// glibc's threshold for giving an allocation a mapping of its own.
/// Adjacent mappings with the same advice merge, so that columns of a few
/// hundred kilobytes, each smaller than a huge page, share them: 2 MiB
/// took 55.5 ms against 55.0.
const LARGE: usize = 128 << 10;

/// Asks for huge pages in the pages of `size` bytes at `at` (the kernel
/// gives them for the aligned 2 MiB stretches within, and ignores the
/// advice where it has none to give). The first page is the one that holds
/// `at`: a large allocation is a mapping of its own whose first bytes are
/// the allocator's, and a mapping's first stretch is huge only where all of
/// it is advised. Advice on a page shared with other allocations changes
/// nothing they hold.
fn advise(at: *mut u8, size: usize) {
    const PAGE: usize = 4096;
    let start = at as usize & !(PAGE - 1);
    let end = (at as usize).saturating_add(size).next_multiple_of(PAGE);
    // SAFETY: the range covers an allocation just made (and at most the
    // rest of its first and last pages); the advice changes how pages are
    // backed, never their contents, and its failure changes nothing.
    unsafe {
        libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
    }
}

// SAFETY: every call is the system allocator's; `advise` only adds advice
// on memory that it has just given.
unsafe impl GlobalAlloc for HugeLarge {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let at = unsafe { System.alloc(layout) };
        if layout.size() >= LARGE && !at.is_null() {
            advise(at, layout.size());
        }
        at
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let at = unsafe { System.alloc_zeroed(layout) };
        if layout.size() >= LARGE && !at.is_null() {
            advise(at, layout.size());
        }
        at
    }

    unsafe fn dealloc(&self, at: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(at, layout) }
    }

    unsafe fn realloc(&self, at: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let moved = unsafe { System.realloc(at, layout, new_size) };
        if new_size >= LARGE && !moved.is_null() {
            advise(moved, new_size);
        }
        moved
    }
}
