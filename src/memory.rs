//! Output buffers for the big writes (expansions produce many times their input).
//!
//! A fresh allocation of hundreds of megabytes is backed by the kernel one 4 KiB page at a time,
//! on first touch; on virtual machines each of those page faults is expensive enough to dominate
//! a kernel that writes at memory speed. Asking for transparent huge pages (2 MiB) makes faults
//! 512 times rarer; numpy does the same for its large arrays, so this is also what makes our
//! writes comparable with a numpy-allocated buffer.

use crate::error::{PolyError, PolyResult};

/// Below this size huge pages cannot help (they need a 2 MiB aligned span).
const HUGE_PAGE_BYTES: usize = 1 << 21;

/// An empty `Vec` with room for exactly `len` elements, whose memory the kernel is asked to back
/// with transparent huge pages. An allocation failure is an error, not an abort.
pub fn output_buffer<T>(len: usize, what: &str) -> PolyResult<Vec<T>> {
    let mut buffer = Vec::new();
    buffer.try_reserve_exact(len).map_err(|_| {
        PolyError::Overflow(format!(
            "cannot allocate {len} entries ({} bytes) for the {what}",
            len.saturating_mul(size_of::<T>())
        ))
    })?;
    advise_huge_pages(buffer.spare_capacity_mut());
    Ok(buffer)
}

/// Advises the kernel to back `buffer` with transparent huge pages (a hint: failures and
/// unsupported systems are ignored, the memory then simply uses normal pages). Used for output
/// buffers and for the learners' weight tables, whose random accesses otherwise miss the TLB
/// on nearly every feature.
pub fn advise_huge_pages<T>(buffer: &mut [T]) {
    let bytes = size_of_val(buffer);
    if bytes < HUGE_PAGE_BYTES {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        let start = buffer.as_mut_ptr() as usize;
        let aligned = start.next_multiple_of(PAGE);
        let end = (start + bytes) / PAGE * PAGE;
        if end > aligned {
            // SAFETY: madvise only changes how the kernel backs pages of this mapping, which we
            // own (a live allocation of `bytes` bytes); it never reads or writes the memory.
            unsafe {
                libc::madvise(aligned as *mut libc::c_void, end - aligned, libc::MADV_HUGEPAGE);
            }
        }
    }
}

/// Asks the CPU to bring the cache line holding `ptr` into all cache levels ahead of its use: the
/// learners' weight tables are far larger than the cache, and a step that issues its loads early
/// waits for memory once instead of once per feature. A hint only: it never faults, so `ptr` may
/// be any address; nothing happens on targets without the instruction.
#[inline(always)]
pub fn prefetch<T>(ptr: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `prefetcht0` is a hint that never faults and has no architectural effect.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(ptr.cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = ptr;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_buffer_has_exact_capacity_and_no_elements() {
        let buffer = output_buffer::<u64>(3 << 20, "test").unwrap();
        assert!(buffer.is_empty());
        assert!(buffer.capacity() >= 3 << 20);
    }

    #[test]
    fn impossible_sizes_are_errors() {
        let err = output_buffer::<u64>(usize::MAX / 4, "expanded indices").unwrap_err();
        assert!(err.to_string().contains("expanded indices"), "{err}");
    }
}
