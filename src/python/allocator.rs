//! The extension's global allocator. By default Polars' own (pyo3-polars relays to the allocator
//! Python Polars exposes), so that the engine and the Polars runtime share one heap. A process
//! that sets `POLARS_POLY_ALLOCATOR=own` before the extension loads gets mimalloc, linked in: the
//! command line's runs on Vowpal Wabbit text never use Polars, and importing it only to find its
//! allocator costs 0.13 s of a 0.4 s run (the system's allocator instead returned each batch's
//! buffers to the kernel and had them zeroed again: 5.0 s against 4.4 s on eat-rate 10M from the
//! cache). Either is safe beside a Polars loaded later: buffers cross between the two over the
//! Arrow C Data Interface, whose release callbacks free each buffer with the allocator that made
//! it.

use std::alloc::{GlobalAlloc, Layout};
use std::ffi::CStr;
use std::sync::atomic::{AtomicU8, Ordering};

use mimalloc::MiMalloc;
use pyo3_polars::PolarsAllocator;

/// The environment variable that chooses the extension's own allocator (value `own`).
const CHOICE_VARIABLE: &CStr = c"POLARS_POLY_ALLOCATOR";

const UNDECIDED: u8 = 0;
const POLARS: u8 = 1;
const OWN: u8 = 2;

/// Polars' allocator or our own, chosen once, at the first allocation.
pub struct ProcessAllocator {
    polars: PolarsAllocator,
    choice: AtomicU8,
}

impl ProcessAllocator {
    pub const fn new() -> Self {
        ProcessAllocator { polars: PolarsAllocator::new(), choice: AtomicU8::new(UNDECIDED) }
    }

    /// The allocator every call goes to.
    #[inline]
    fn chosen(&self) -> &dyn GlobalAlloc {
        if self.own() {
            &MiMalloc
        } else {
            &self.polars
        }
    }

    /// Whether allocations go to our own allocator. Deciding must not allocate (it runs inside
    /// the first allocation): the variable is read with libc's `getenv`. Threads racing at the
    /// first allocation read the same variable and decide alike.
    #[inline]
    fn own(&self) -> bool {
        match self.choice.load(Ordering::Relaxed) {
            POLARS => false,
            OWN => true,
            _ => {
                // SAFETY: getenv takes a NUL-terminated name; the value it returns, when not
                // null, is a NUL-terminated string that lives until the variable changes, and
                // it is read at once.
                let value = unsafe { libc::getenv(CHOICE_VARIABLE.as_ptr()) };
                let own = !value.is_null() && unsafe { CStr::from_ptr(value) } == c"own";
                self.choice.store(if own { OWN } else { POLARS }, Ordering::Relaxed);
                own
            }
        }
    }
}

impl Default for ProcessAllocator {
    fn default() -> Self {
        Self::new()
    }
}

// SAFETY: every call goes to one of two allocators, the same one for the process's life (the
// choice is made before the first allocation and never changes), so a block is always freed
// or resized by the allocator that made it.
unsafe impl GlobalAlloc for ProcessAllocator {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        unsafe { self.chosen().alloc(layout) }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { self.chosen().dealloc(ptr, layout) }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        unsafe { self.chosen().alloc_zeroed(layout) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        unsafe { self.chosen().realloc(ptr, layout, new_size) }
    }
}
