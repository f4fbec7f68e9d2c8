//! The hashed weight table: `2^bits` slots, each holding the interleaved per-weight state of the
//! update rule, stored as f32 like Vowpal Wabbit.
//!
//! Layout of one slot (stride 4, 16 bytes, one aligned quarter of a cache line) for the adaptive
//! and/or normalized rules: `[w, g2, norm, rate]`
//!
//! * `w` — the stored weight (see [`super::update::GdState`] for the lazy L1/L2 scaling on top);
//! * `g2` — the sum of squared gradients `Σ g² x²` (adaptive), *minus* `initial_t` (so that a
//!   fresh slot is all zeros and the table can come from zeroed pages);
//! * `norm` — the largest `|x|` seen for the feature (normalized);
//! * `rate` — scratch written by the sensitivity pass and read by the update pass of the same
//!   example (Vowpal Wabbit's "spare" slot); never saved.
//!
//! Plain SGD needs only `w`: stride 1.
//!
//! The table is allocated on first use with `alloc_zeroed` (the operating system hands out zero
//! pages lazily, so untouched parts of a large table cost no memory), and an allocation failure is
//! an error, not an abort.

use std::alloc::{alloc_zeroed, Layout};

use crate::error::{PolyError, PolyResult};

/// Slot offsets inside a stride-4 slot.
pub(crate) const W: usize = 0;
pub(crate) const G2: usize = 1;
pub(crate) const NORM: usize = 2;
pub(crate) const RATE: usize = 3;

/// A table of `2^bits` weight slots.
#[derive(Clone, Debug)]
pub struct WeightTable {
    bits: u32,
    stride: usize,
    /// Empty until allocated; then exactly `stride << bits` values.
    data: Vec<f32>,
}

impl WeightTable {
    /// An unallocated table; `stride` is 1 or 4, `bits` in `1..=MAX_BITS` (checked by the
    /// learner's configuration).
    pub(crate) fn new(bits: u32, stride: usize) -> Self {
        debug_assert!(stride == 1 || stride == 4);
        Self { bits, stride, data: Vec::new() }
    }

    pub fn bits(&self) -> u32 {
        self.bits
    }

    /// Number of weight slots, `2^bits`.
    pub fn n_slots(&self) -> usize {
        1usize << self.bits
    }

    /// `index & mask()` is a valid slot index.
    pub fn mask(&self) -> u64 {
        (1u64 << self.bits) - 1
    }

    /// f32 values per slot (1 or 4).
    pub fn stride(&self) -> usize {
        self.stride
    }

    pub fn is_allocated(&self) -> bool {
        !self.data.is_empty()
    }

    /// Bytes the table takes once allocated.
    pub fn size_bytes(&self) -> u128 {
        (self.stride as u128) << self.bits << 2
    }

    /// Allocates the zeroed table if it is not allocated yet.
    pub(crate) fn ensure_allocated(&mut self) -> PolyResult<()> {
        if self.is_allocated() {
            return Ok(());
        }
        let fail = |why: &str| {
            PolyError::InvalidInput(format!(
                "cannot allocate the weight table for bits={} ({} slots x {} bytes = {:.1} MiB): \
                 {why}; use fewer bits",
                self.bits,
                self.n_slots(),
                4 * self.stride,
                self.size_bytes() as f64 / (1024.0 * 1024.0)
            ))
        };
        let len = 1usize
            .checked_shl(self.bits)
            .and_then(|slots| slots.checked_mul(self.stride))
            .ok_or_else(|| fail("size overflows"))?;
        let layout = Layout::array::<f32>(len).map_err(|_| fail("size overflows"))?;
        // SAFETY: `layout` has nonzero size (len >= 2). A non-null result is a zeroed block of
        // `len` f32 (all-zero bits are 0.0f32) allocated by the global allocator with exactly the
        // layout `Vec<f32>` uses for capacity `len`, so `Vec::from_raw_parts` may own it.
        let data = unsafe {
            let ptr = alloc_zeroed(layout) as *mut f32;
            if ptr.is_null() {
                return Err(fail("out of memory"));
            }
            Vec::from_raw_parts(ptr, len, len)
        };
        self.data = data;
        // Hashed slots are spread over the whole table: with 4 KiB pages nearly every feature
        // is a TLB miss once the table outgrows the TLB's reach.
        crate::memory::advise_huge_pages(&mut self.data);
        Ok(())
    }

    /// The whole allocated table (empty if unallocated).
    #[inline]
    pub(crate) fn data(&self) -> &[f32] {
        &self.data
    }

    #[inline]
    pub(crate) fn data_mut(&mut self) -> &mut [f32] {
        &mut self.data
    }

    /// Stored weight of slot `index & mask` (0 when unallocated). This is the raw stored value:
    /// the effective weight also applies the lazy L1/L2 state, see
    /// [`super::Learner::effective_weight`].
    pub fn weight(&self, index: u32) -> f32 {
        self.value(index, W)
    }

    /// Sum of squared gradients of the slot minus `initial_t` (0 when not adaptive).
    pub fn adaptive_sum(&self, index: u32) -> f32 {
        if self.stride == 4 {
            self.value(index, G2)
        } else {
            0.0
        }
    }

    /// Largest `|x|` seen for the slot (0 when not normalized or never seen).
    pub fn normalizer(&self, index: u32) -> f32 {
        if self.stride == 4 {
            self.value(index, NORM)
        } else {
            0.0
        }
    }

    fn value(&self, index: u32, offset: usize) -> f32 {
        if self.data.is_empty() {
            return 0.0;
        }
        self.data[((u64::from(index) & self.mask()) as usize) * self.stride + offset]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lazily_allocates_zeroed_slots() {
        let mut t = WeightTable::new(10, 4);
        assert!(!t.is_allocated());
        assert_eq!(t.weight(5), 0.0);
        t.ensure_allocated().unwrap();
        assert_eq!(t.data().len(), 4096);
        assert!(t.data().iter().all(|&v| v == 0.0));
        t.data_mut()[4 * 7] = 2.5;
        assert_eq!(t.weight(7 + 1024), 2.5);
        assert_eq!(t.mask(), 1023u64);
        assert_eq!(t.size_bytes(), 16384);
    }

    #[test]
    fn huge_table_fails_cleanly() {
        // 2^62 slots of 16 bytes cannot be described by a Layout on any machine.
        let mut t = WeightTable::new(62, 4);
        let err = t.ensure_allocated().unwrap_err();
        assert!(err.to_string().contains("cannot allocate the weight table"), "{err}");
    }
}
