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
//! an error, not an abort. A table with an initial weight (Vowpal Wabbit's `--initial_weight`:
//! every slot's `w` starts there, its other values at 0) is allocated at once and written whole.
//!
//! Page size follows the run (`WeightTable::touch`). A short run touches a few thousand slots
//! scattered over a table of up to 2^24 slots (256 MiB): backed by 2 MiB huge pages, each touch
//! makes the kernel zero a whole 2 MiB page, which costs more than the run itself; backed by
//! 4 KiB pages it zeroes only what is touched. A long run touches most of the table, and then
//! huge pages win: nearly every feature is a TLB miss with 4 KiB pages. So the table starts on
//! 4 KiB pages, counts the 4 KiB pages it has touched, and asks for huge pages once an eighth of
//! the table is touched (untouched 2 MiB spans are then backed by huge pages on first touch).

use std::alloc::{alloc_zeroed, Layout};

use rayon::prelude::*;

use crate::error::{PolyError, PolyResult};

/// Slot offsets inside a stride-4 slot.
pub(crate) const W: usize = 0;
pub(crate) const G2: usize = 1;
pub(crate) const NORM: usize = 2;
pub(crate) const RATE: usize = 3;

/// Slots per 4 KiB page at stride 4 (16 bytes a slot); at stride 1 a "page" is 4 pages, which
/// only makes the density estimate coarser.
const SLOTS_PER_PAGE_SHIFT: u32 = 8;

/// Above this size a table outgrows the cache and the reach of the TLB's few thousand 4 KiB
/// entries (`bits` 18 is 4 MiB at 16 bytes a slot): see [`WeightTable::is_large`].
const LARGE_TABLE_BYTES: u128 = 16 << 20;

/// The rate value that says "last touched by a feature of owner bits `owner`": `-(owner + 1)`,
/// exact in single precision for owners of up to 23 bits (scoring kernels multiply whole slots,
/// so the tag must be a finite number).
#[inline(always)]
pub(crate) fn owner_tag(owner: u32) -> f32 {
    -((owner + 1) as f32)
}

/// The owner bits of a rate value [`owner_tag`] wrote (`None` for a rate or 0).
#[inline]
pub(crate) fn tagged_owner(rate: f32) -> Option<u32> {
    (rate < 0.0).then(|| (-rate) as u32 - 1)
}

/// Plain data for which the all-zero bit pattern is a valid value (zero).
///
/// # Safety
/// Implement only for types where every field is valid when all its bytes are 0.
pub(crate) unsafe trait ZeroBits: Copy {}
// SAFETY: 0.0f32 is all-zero bits.
unsafe impl ZeroBits for f32 {}

/// `len` zeros from `alloc_zeroed` (the operating system backs them lazily, so untouched parts
/// cost no memory); `None` when the allocation fails or its size overflows (not an abort).
pub(crate) fn zeroed_vec<T: ZeroBits>(len: usize) -> Option<Vec<T>> {
    let layout = Layout::array::<T>(len).ok()?;
    if layout.size() == 0 {
        // Nothing to allocate (and `alloc_zeroed` must not be called with size 0).
        return (len == 0).then(Vec::new);
    }
    // SAFETY: `layout` has nonzero size. A non-null result is a zeroed block of `len` values of
    // `T` (all-zero bits are zero for `ZeroBits` types) allocated by the global allocator with
    // exactly the layout `Vec<T>` uses for capacity `len`, so `Vec::from_raw_parts` may own it.
    unsafe {
        let ptr = alloc_zeroed(layout) as *mut T;
        if ptr.is_null() {
            return None;
        }
        Some(Vec::from_raw_parts(ptr, len, len))
    }
}

/// Faults in the pages of fresh zeroed memory on the thread pool, one write of zero per huge
/// page: the kernel zeroes each page it hands out, and a table being moved to huge pages is
/// about to have nearly all of them faulted (its touched pages are spread over every 2 MiB
/// span), which on one thread is most of a short run's time (256 MiB of fresh memory: 0.57 s
/// on one thread, 0.32 s on two, on the 2-core VM of notes/benchmarks_log.md).
fn fault_in_parallel(fresh: &mut [f32]) {
    use rayon::prelude::*;
    let per_page = crate::memory::HUGE_PAGE_BYTES / size_of::<f32>();
    fresh.par_chunks_mut(per_page).with_min_len(8).for_each(|page| page[0] = 0.0);
}

/// A table of `2^bits` weight slots.
#[derive(Debug)]
pub struct WeightTable {
    bits: u32,
    stride: usize,
    /// Empty until allocated; then exactly `stride << bits` values.
    data: Vec<f32>,
    /// One bit per 4 KiB page touched so far, until huge pages are requested (then empty).
    touched: Vec<u64>,
    n_touched: usize,
    huge_pages: bool,
    /// Every slot's `w` when the table is allocated ([`WeightTable::set_initial_weight`]).
    initial_weight: f32,
}

/// A copy of a table still on 4 KiB pages copies only the pages touched so far (the others are
/// zero) into a fresh zeroed allocation, whose untouched pages the kernel maps on first use: a
/// race between apple's rankings copies a model of a few thousand rows on a 2^24-slot table
/// (256 MiB) at its first expansion, and a whole copy cost more than its training.
impl Clone for WeightTable {
    fn clone(&self) -> Self {
        let sparse = !self.huge_pages && !self.touched.is_empty();
        let data = if sparse {
            zeroed_vec::<f32>(self.data.len()).map(|mut fresh| {
                self.copy_pages(&self.touched, &mut fresh);
                fresh
            })
        } else {
            None
        };
        Self {
            bits: self.bits,
            stride: self.stride,
            data: data.unwrap_or_else(|| self.data.clone()),
            touched: self.touched.clone(),
            n_touched: self.n_touched,
            huge_pages: self.huge_pages,
            initial_weight: self.initial_weight,
        }
    }
}

impl WeightTable {
    /// An unallocated table; `stride` is 1 or 4, `bits` in `1..=MAX_BITS` (checked by the
    /// learner's configuration).
    pub(crate) fn new(bits: u32, stride: usize) -> Self {
        debug_assert!(stride == 1 || stride == 4);
        Self {
            bits,
            stride,
            data: Vec::new(),
            touched: Vec::new(),
            n_touched: 0,
            huge_pages: false,
            initial_weight: 0.0,
        }
    }

    /// Sets the weight every slot starts at; a nonzero one allocates the table now (if it is
    /// not allocated yet) with every slot's `w` at it, so that a model that has learned nothing
    /// scores with it too. An allocated table keeps its values.
    pub(crate) fn set_initial_weight(&mut self, initial_weight: f32) -> PolyResult<()> {
        self.initial_weight = initial_weight;
        if initial_weight != 0.0 {
            self.ensure_allocated()?;
        }
        Ok(())
    }

    /// The weight every slot starts at (0 unless [`WeightTable::set_initial_weight`]).
    pub fn initial_weight(&self) -> f32 {
        self.initial_weight
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

    /// The share of slots in use (a weight moved off its start, or an adaptive sum or normalizer
    /// set), counted on `samples` slots spread evenly over the table (all of them when it has
    /// no more). Features hash uniformly, so this is also about the share of the model's
    /// features whose slot another feature shares: with n features in m slots, both are
    /// 1 - e^(-n/m). 0 before anything is learned.
    pub fn load(&self, samples: usize) -> f64 {
        self.sampled_share(samples, |slot| self.in_use(slot))
    }

    /// Whether a slot's weight moved off its start or its adaptive sum or normalizer is set.
    fn in_use(&self, slot: &[f32]) -> bool {
        slot[W] != self.initial_weight
            || slot[W + 1..self.stride.min(RATE)].iter().any(|&x| x != 0.0)
    }

    /// The share of `samples` slots spread evenly over the table (all of them when it has no
    /// more) for which `holds`; 0 before the table is allocated.
    fn sampled_share(&self, samples: usize, holds: impl Fn(&[f32]) -> bool) -> f64 {
        if !self.is_allocated() {
            return 0.0;
        }
        let step = (self.n_slots() / samples.max(1)).max(1);
        let picked = self.data.chunks_exact(self.stride).step_by(step);
        let (used, seen) =
            picked.fold((0usize, 0usize), |(u, n), s| (u + usize::from(holds(s)), n + 1));
        used as f64 / seen as f64
    }

    /// The table grown to `2^bits` slots. Slot `s` of `2^b` becomes the `2^(bits - b)` slots
    /// `s + j 2^b` of the new table, and a feature of hash `h` finds its state where `h`'s bits
    /// `b..bits` say (`h & mask` keeps the low bits). A slot whose last feature is known (its
    /// rate holds that feature's owner bits: [`super::update::note_owners`]) goes to that feature's
    /// slot alone, the others start fresh: a feature that arrives later must not inherit
    /// another's weight and AdaGrad sum (on eat-rate such copies cost 0.07 logloss). A slot of
    /// unknown owner (stride 1, or untouched since the table was read) goes to every one of
    /// its slots. An unallocated table stays unallocated.
    pub(crate) fn replicated(&self, bits: u32) -> PolyResult<WeightTable> {
        debug_assert!(bits >= self.bits);
        let mut out = WeightTable::new(bits, self.stride);
        out.initial_weight = self.initial_weight;
        if !self.is_allocated() {
            return Ok(out);
        }
        out.ensure_allocated()?;
        // Every slot is written: huge pages from the start.
        out.use_huge_pages();
        let copy = self.data.len();
        let (stride, shift) = (self.stride, bits - self.bits);
        let replicas = (1u32 << shift) - 1;
        out.data.par_chunks_mut(copy).enumerate().for_each(|(j, replica)| {
            if stride == 1 {
                replica.copy_from_slice(&self.data);
                return;
            }
            for (new, old) in replica.chunks_exact_mut(4).zip(self.data.chunks_exact(4)) {
                match tagged_owner(old[RATE]) {
                    Some(owner) if owner & replicas == j as u32 => {
                        new[..RATE].copy_from_slice(&old[..RATE]);
                        new[RATE] = owner_tag(owner >> shift);
                    }
                    Some(_) => {}
                    None if self.in_use(old) => {
                        new[..RATE].copy_from_slice(&old[..RATE]);
                        // Scratch, 0: the slots touched since tell [`touched_share`].
                        new[RATE] = 0.0;
                    }
                    None => {}
                }
            }
        });
        Ok(out)
    }

    /// The share of slots touched since the table was made or read, or holding the state of a
    /// feature carried over a growth ([`WeightTable::replicated`]), counted on `samples` slots
    /// spread evenly over it: the update writes a slot's rate (nonzero, or a feature's owner
    /// tag), and nothing else does. `None` at stride 1 (no rate kept).
    pub fn touched_share(&self, samples: usize) -> Option<f64> {
        (self.stride == 4).then(|| self.sampled_share(samples, |slot| slot[RATE] != 0.0))
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
        let data = zeroed_vec::<f32>(len).ok_or_else(|| fail("out of memory"))?;
        self.data = data;
        let pages = (self.n_slots() >> SLOTS_PER_PAGE_SHIFT).max(1);
        self.touched = vec![0; pages.div_ceil(64)];
        self.n_touched = 0;
        self.huge_pages = false;
        if self.initial_weight != 0.0 {
            // Every slot is written: huge pages from the start (no touched page to move), and
            // no page left for `touch` to track.
            self.use_huge_pages();
            let w0 = self.initial_weight;
            self.data.chunks_exact_mut(self.stride).for_each(|slot| slot[W] = w0);
        }
        Ok(())
    }

    /// Records that `slots` are about to be written, and switches the table to huge pages once
    /// an eighth of its 4 KiB pages have been touched (see the module docs).
    #[inline]
    pub(crate) fn touch(&mut self, slots: &[u32]) {
        if self.huge_pages || self.touched.is_empty() {
            return;
        }
        for &slot in slots {
            let page = (slot >> SLOTS_PER_PAGE_SHIFT) as usize;
            let (word, bit) = (page >> 6, 1u64 << (page & 63));
            if let Some(w) = self.touched.get_mut(word) {
                if *w & bit == 0 {
                    *w |= bit;
                    self.n_touched += 1;
                }
            }
        }
        if 8 * self.n_touched >= 64 * self.touched.len() {
            self.use_huge_pages();
        }
    }

    /// Prepares the table for a run of `examples` examples: a large table that a run this long
    /// will move to huge pages anyway (one example per 8 slots touches far more than an eighth
    /// of its 4 KiB pages unless nearly every feature repeats) starts on them, faulted in on the
    /// thread pool, instead of faulting an eighth of it in 4 KiB pages first and then moving.
    ///
    /// A table the memory available could not back whole is left to grow as it is touched:
    /// faulting it in would ask the kernel for more than it has (on a 24 GB machine a 64 GiB
    /// table spent 30 s in failed huge-page allocations).
    pub(crate) fn prepare_for(&mut self, examples: u64) -> PolyResult<()> {
        let long = u128::from(examples) * 8 >= self.n_slots() as u128;
        if !long || !self.is_large() || self.huge_pages || self.n_touched > 0 {
            return Ok(());
        }
        let fits = crate::memory::check_fits(self.size_bytes(), "the weight table", "").is_ok();
        if !fits {
            return Ok(());
        }
        self.ensure_allocated()?;
        // Untouched, the table is advised in place (nothing to move).
        self.use_huge_pages();
        fault_in_parallel(&mut self.data);
        Ok(())
    }

    /// Asks for huge pages now (also for a table about to be filled densely, e.g. read from a
    /// file).
    ///
    /// A 2 MiB span of which some 4 KiB page is already mapped cannot get a huge page when it is
    /// next touched, and random access touches a page in nearly every span long before an eighth
    /// of the pages: advising the table in place would leave it on 4 KiB pages. So a touched
    /// table moves to a fresh allocation advised before its first touch, copying only the pages
    /// touched so far (an eighth of the table). Without memory for the copy it stays in place,
    /// and so does a table that is not [`WeightTable::is_large`] (4 KiB pages already cover it;
    /// the move cost 5% of a short apple run on a 4 MiB table).
    pub(crate) fn use_huge_pages(&mut self) {
        if self.huge_pages || !self.is_allocated() {
            return;
        }
        self.huge_pages = true;
        let touched = std::mem::take(&mut self.touched);
        match self.moved_to_fresh_pages(&touched) {
            Some(fresh) => self.data = fresh,
            None => crate::memory::advise_huge_pages(&mut self.data),
        }
    }

    /// A copy of the table's `touched` pages in a fresh allocation advised for huge pages before
    /// its first touch; `None` when moving does not pay or there is no memory for it.
    fn moved_to_fresh_pages(&self, touched: &[u64]) -> Option<Vec<f32>> {
        if self.n_touched == 0 || !self.is_large() {
            return None;
        }
        let mut fresh = zeroed_vec::<f32>(self.data.len())?;
        crate::memory::advise_huge_pages(&mut fresh);
        fault_in_parallel(&mut fresh);
        self.copy_pages(touched, &mut fresh);
        Some(fresh)
    }

    /// Copies the pages `touched` marks from the table into `fresh` (zeroed, of the same size).
    fn copy_pages(&self, touched: &[u64], fresh: &mut [f32]) {
        let page_len = self.stride << SLOTS_PER_PAGE_SHIFT;
        for (k, &word) in touched.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let start = (64 * k + bits.trailing_zeros() as usize) * page_len;
                let end = (start + page_len).min(self.data.len());
                fresh[start..end].copy_from_slice(&self.data[start..end]);
                bits &= bits - 1;
            }
        }
    }

    /// Whether the table is larger than the cache and the 4 KiB TLB's reach: then each feature
    /// is a likely TLB miss, and its pages are worth moving to huge ones.
    pub fn is_large(&self) -> bool {
        self.size_bytes() > LARGE_TABLE_BYTES
    }

    /// Whether the table has asked for huge pages (see `WeightTable::touch`).
    pub fn uses_huge_pages(&self) -> bool {
        self.huge_pages
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

    /// The load counts slots in use, and is about the share of features whose slot another
    /// feature shares: checked by brute force on uniformly hashed features.
    #[test]
    fn the_load_is_the_share_of_features_that_share_a_slot() {
        use rand::{rngs::ChaCha8Rng, RngExt, SeedableRng};
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for (stride, initial, n) in [(4, 0.0, 3_000usize), (1, 0.25, 20_000), (4, 0.0, 60_000)] {
            let mut t = WeightTable::new(14, stride);
            assert_eq!(t.load(1 << 14), 0.0);
            t.set_initial_weight(initial).unwrap();
            t.ensure_allocated().unwrap();
            let slots: Vec<usize> = (0..n).map(|_| rng.random_range(0..1usize << 14)).collect();
            let mut count = vec![0usize; 1 << 14];
            for &slot in &slots {
                count[slot] += 1;
                // Adaptive tables: the sum moves; plain ones: the weight.
                let at = slot * stride + usize::from(stride > 1);
                t.data_mut()[at] = 1.0;
            }
            let used = count.iter().filter(|&&c| c > 0).count() as f64 / (1 << 14) as f64;
            assert_eq!(t.load(1 << 14), used);
            assert_eq!(t.load(1 << 20), used, "more samples than slots: all of them");
            assert!((t.load(4096) - used).abs() < 0.03, "{} vs {used}", t.load(4096));
            let shared = slots.iter().filter(|&&s| count[s] > 1).count() as f64 / n as f64;
            let expected = 1.0 - (-(n as f64) / (1 << 14) as f64).exp();
            assert!((used - expected).abs() < 0.02 && (shared - used).abs() < 0.1 * used + 0.02);
        }
    }

    #[test]
    fn an_initial_weight_fills_every_slot_and_survives_copies() {
        for stride in [1, 4] {
            let mut t = WeightTable::new(12, stride);
            t.set_initial_weight(0.5).unwrap();
            assert!(t.is_allocated());
            for slot in [0, 7, 4095] {
                assert_eq!(
                    (t.weight(slot), t.adaptive_sum(slot), t.normalizer(slot)),
                    (0.5, 0.0, 0.0)
                );
            }
            t.touch(&[3]);
            t.prepare_for(1 << 20).unwrap();
            let copy = t.clone();
            assert!(copy.data().chunks_exact(stride).all(|s| s[W] == 0.5), "stride {stride}");
            assert_eq!(copy.initial_weight(), 0.5);
        }
        // An allocated table (one read from a file) keeps its values.
        let mut read = WeightTable::new(4, 1);
        read.ensure_allocated().unwrap();
        read.set_initial_weight(2.0).unwrap();
        assert!(read.data().iter().all(|&w| w == 0.0));
    }

    #[test]
    fn switches_to_huge_pages_once_an_eighth_is_touched() {
        // 2^16 slots = 256 pages of 256 slots: the switch comes with the 32nd distinct page.
        let mut t = WeightTable::new(16, 4);
        t.ensure_allocated().unwrap();
        let slots: Vec<u32> = (0..31).map(|page| page << 8).collect();
        t.touch(&slots);
        t.touch(&slots);
        t.touch(&[5, 7, 255]);
        assert!(!t.uses_huge_pages(), "31 distinct pages, touched repeatedly");
        t.touch(&[31 << 8 | 9]);
        assert!(t.uses_huge_pages());
        t.touch(&[u32::MAX]);
        assert!(t.uses_huge_pages());
    }

    #[test]
    fn moving_to_huge_pages_keeps_every_value() {
        // 2^23 slots: 32 MiB at stride 1, above the size that moves.
        for stride in [1, 4] {
            let mut t = WeightTable::new(23, stride);
            t.ensure_allocated().unwrap();
            // Written slots on a few pages (recorded by touch, as the learner does).
            let slots: Vec<u32> = (0..20).map(|k| k * 300_007 % (1 << 23)).collect();
            t.touch(&slots);
            for &slot in &slots {
                t.data_mut()[slot as usize * stride] = slot as f32 + 0.5;
            }
            let before = t.data().to_vec();
            t.use_huge_pages();
            assert!(t.uses_huge_pages());
            assert_eq!(t.data(), &before[..], "stride {stride}");
        }
    }

    #[test]
    fn a_long_run_starts_a_large_table_on_huge_pages() {
        // 2^21 slots at stride 4: 32 MiB, a large table; a run of 2^18 examples fills it.
        let mut t = WeightTable::new(21, 4);
        t.prepare_for((1 << 18) - 1).unwrap();
        assert!(!t.is_allocated(), "a shorter run leaves the table to grow as it is touched");
        t.prepare_for(1 << 18).unwrap();
        assert!(t.is_allocated() && t.uses_huge_pages());
        assert!(t.data().iter().all(|&v| v == 0.0), "faulted in, still zero");
        t.touch(&[7, 1 << 20]);
        t.data_mut()[7 * 4] = 1.5;
        assert_eq!(t.weight(7), 1.5);
        assert_eq!(t.clone().data(), t.data());

        // A table larger than the memory available is not faulted in (2^32 slots: 64 GiB).
        let mut beyond = WeightTable::new(32, 4);
        let available = crate::memory::available_bytes().map_or(u128::MAX, u128::from);
        if available < beyond.size_bytes() {
            beyond.prepare_for(1 << 40).unwrap();
            assert!(!beyond.is_allocated(), "left to grow as it is touched");
        }

        // A small table (4 MiB) stays on 4 KiB pages, and so does one already touched.
        let mut small = WeightTable::new(18, 4);
        small.prepare_for(1 << 30).unwrap();
        assert!(!small.uses_huge_pages());
        let mut touched = WeightTable::new(21, 4);
        touched.ensure_allocated().unwrap();
        touched.touch(&[3]);
        touched.data_mut()[3 * 4] = 2.0;
        touched.prepare_for(1 << 30).unwrap();
        assert!(!touched.uses_huge_pages());
        assert_eq!(touched.weight(3), 2.0);
    }

    #[test]
    fn a_copy_on_small_pages_holds_every_value_and_stays_independent() {
        for stride in [1, 4] {
            let mut t = WeightTable::new(20, stride);
            t.ensure_allocated().unwrap();
            let slots: Vec<u32> = (0..40).map(|k| k * 26_107 % (1 << 20)).collect();
            t.touch(&slots);
            for &slot in &slots {
                t.data_mut()[slot as usize * stride] = slot as f32 + 0.25;
            }
            assert!(!t.uses_huge_pages(), "few pages touched: the copy takes only those");
            let mut copy = t.clone();
            assert_eq!(copy.data(), t.data(), "stride {stride}");
            // Writes to the copy (touched first, as the learner does) leave the original alone.
            copy.touch(&[3]);
            copy.data_mut()[3 * stride] = 9.0;
            assert_eq!(t.weight(3), 0.0);
            assert_eq!(copy.weight(3), 9.0);
            let mut huge = t.clone();
            huge.use_huge_pages();
            assert_eq!(huge.clone().data(), t.data());
        }
    }

    #[test]
    fn huge_table_fails_cleanly() {
        // 2^62 slots of 16 bytes cannot be described by a Layout on any machine.
        let mut t = WeightTable::new(62, 4);
        let err = t.ensure_allocated().unwrap_err();
        assert!(err.to_string().contains("cannot allocate the weight table"), "{err}");
    }
}
