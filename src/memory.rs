//! Output buffers for the big writes (expansions produce many times their input).
//!
//! A fresh allocation of hundreds of megabytes is backed by the kernel one 4 KiB page at a time,
//! on first touch; on virtual machines each of those page faults is expensive enough to dominate
//! a kernel that writes at memory speed. Asking for transparent huge pages (2 MiB) makes faults
//! 512 times rarer; numpy does the same for its large arrays, so this is also what makes our
//! writes comparable with a numpy-allocated buffer.
//!
//! Sizes the input decides are checked against the memory the process can still get
//! ([`check_fits`]) before anything is allocated: on Linux an allocation larger than the machine
//! either aborts the process (Rust's allocation failure is not an error) or, worse, is granted
//! and filled until the kernel kills the process. A clear `MemoryError` naming the size is what
//! the caller can act on.

use crate::error::{PolyError, PolyResult};

/// Below this size huge pages cannot help (they need a 2 MiB aligned span).
pub(crate) const HUGE_PAGE_BYTES: usize = 1 << 21;

/// Bytes this process can still allocate, where known: the system's available memory
/// (`MemAvailable`), and no more than what is left under an address-space limit (`ulimit -v`).
pub fn available_bytes() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        let field = |text: &str, name: &str| -> Option<u64> {
            let line = text.lines().find(|l| l.starts_with(name))?;
            let kib: u64 = line[name.len()..].trim().trim_end_matches("kB").trim().parse().ok()?;
            kib.checked_mul(1024)
        };
        let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
        let mut available = field(&meminfo, "MemAvailable:")?;
        let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        // SAFETY: getrlimit writes the limit into the struct we own and reads nothing else.
        let limited = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut limit) } == 0
            && limit.rlim_cur != libc::RLIM_INFINITY;
        if limited {
            let status = std::fs::read_to_string("/proc/self/status").ok()?;
            let used = field(&status, "VmSize:")?;
            available = available.min(limit.rlim_cur.saturating_sub(used));
        }
        Some(available)
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// Fails with [`PolyError::OutOfMemory`] naming `what`, its size and `fix` when `bytes` is more
/// than seven eighths of what the process can still allocate ([`available_bytes`]; no check where
/// that is unknown). The eighth left over is for the rest of the process and the system: an
/// allocation granted up to the last byte available is the one the kernel kills the process for.
pub fn check_fits(bytes: u128, what: &str, fix: &str) -> PolyResult<()> {
    match available_bytes() {
        Some(available) if bytes > u128::from(available) / 8 * 7 => {
            Err(PolyError::OutOfMemory(format!(
                "{what} needs {}, but only {} of memory is available; {fix}",
                human_bytes(bytes),
                human_bytes(u128::from(available))
            )))
        }
        _ => Ok(()),
    }
}

/// [`check_fits`] for `entries` of `bytes_per_entry` bytes (`what` builds the message), asked
/// only from 4M entries up: per-row and per-example buffers are checked this way, where reading
/// the system's free memory for every small row would cost more than the row.
pub fn check_large_fits(
    entries: u64,
    bytes_per_entry: u64,
    what: impl FnOnce() -> String,
    fix: &str,
) -> PolyResult<()> {
    const CHECKED_FROM: u64 = 1 << 22;
    if entries < CHECKED_FROM {
        // The common case, once per row: no message is built (formatting one per row cost
        // 12% of the learner's step).
        return Ok(());
    }
    check_fits(u128::from(entries) * u128::from(bytes_per_entry), &what(), fix)
}

/// `bytes` in GiB, MiB or KiB, whichever reads best.
pub fn human_bytes(bytes: u128) -> String {
    const KIB: f64 = 1024.0;
    let b = bytes as f64;
    if b >= KIB * KIB * KIB {
        format!("{:.1} GiB", b / (KIB * KIB * KIB))
    } else if b >= KIB * KIB {
        format!("{:.1} MiB", b / (KIB * KIB))
    } else {
        format!("{:.1} KiB", b / KIB)
    }
}

/// An empty `Vec` with room for exactly `len` elements, whose memory the kernel is asked to back
/// with transparent huge pages. An allocation failure is an error, not an abort.
pub fn output_buffer<T>(len: usize, what: &str) -> PolyResult<Vec<T>> {
    check_fits(
        len as u128 * size_of::<T>() as u128,
        &format!("the {what} ({len} entries)"),
        "use a lower degree, fewer features or fewer rows at a time",
    )?;
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

/// Prefetches the weight slots `slots` of a table of `stride` values a slot (nothing when the
/// table is not allocated).
#[inline]
pub(crate) fn prefetch_slots(data: &[f32], stride: usize, slots: &[u32]) {
    if data.is_empty() {
        return;
    }
    for &slot in slots {
        // Slots are <= mask, inside the table; a prefetch cannot fault anyway.
        prefetch(data.as_ptr().wrapping_add(slot as usize * stride));
    }
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
    fn sizes_beyond_the_machine_are_memory_errors_naming_the_size() {
        let available = available_bytes().expect("Linux reports MemAvailable");
        assert!(available > 0);
        assert!(check_fits(1 << 20, "a small table", "no fix").is_ok());
        // Nearly all that is available is refused too: the process needs room besides.
        assert!(check_fits(u128::from(available) / 20 * 19, "most of it", "no fix").is_err());
        let err = check_fits(u128::from(available) * 4 + (1 << 40), "a DoS model", "use less")
            .unwrap_err();
        assert!(matches!(err, PolyError::OutOfMemory(_)), "{err:?}");
        let message = err.to_string();
        assert!(message.starts_with("a DoS model needs ") && message.ends_with("; use less"));
        assert!(message.contains("GiB"), "{message}");
    }

    #[test]
    fn impossible_sizes_are_errors() {
        let err = output_buffer::<u64>(usize::MAX / 4, "expanded indices").unwrap_err();
        assert!(err.to_string().contains("expanded indices"), "{err}");
    }
}
