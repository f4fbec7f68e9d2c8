//! Tail averaging (Polyak–Ruppert): the model after a fit is the mean of the weight vectors
//! after each of the fit's last `k` examples, instead of the last of them.
//!
//! One-pass SGD ends wherever its last few noisy steps left it; the mean of the iterates over the
//! end of the run has the same expected position with much less of that noise (for apple, the
//! tail is best kept inside the last epoch, where the monomial set no longer changes).
//!
//! Lazily, as averaged perceptrons do: a slot's weight only changes in examples that contain it,
//! so when an example touches the slot, the weight it held since the slot was last touched is
//! added to the slot's sum once per example in between. The weight table is never scanned: the
//! sums and last-touch counters are zero-allocated (untouched parts cost no memory) and
//! [`TailAverage::finish`] visits only the slots touched in the window. Slots never touched in
//! the window kept one weight throughout, which is their mean.

use super::weights::{zeroed_vec, ZeroBits, W};
use crate::error::{PolyError, PolyResult};

/// One slot's running sum; both fields side by side, so a feature costs one cache line.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
pub(crate) struct SlotSum {
    /// Σ of the slot's weight over the window's examples accounted so far.
    sum: f64,
    /// 1 + the window position of the example that last touched the slot (0: not yet).
    last_touch: u64,
}

// SAFETY: all-zero bits are `SlotSum { sum: 0.0, last_touch: 0 }` (repr(C), no padding).
unsafe impl ZeroBits for SlotSum {}

/// The running sums of one averaging window.
#[derive(Clone, Debug)]
pub(crate) struct TailAverage {
    /// Value of the learner's example counter at the first example of the window.
    start: u64,
    /// One per weight slot.
    slots: Vec<SlotSum>,
    /// The slots touched in the window, each once.
    touched: Vec<u32>,
}

impl TailAverage {
    /// A window over the examples counted from `start` on, for a table of `n_slots` slots.
    pub(crate) fn new(start: u64, n_slots: usize) -> PolyResult<Self> {
        Ok(TailAverage { start, slots: zeroed(n_slots)?, touched: Vec::new() })
    }

    /// Whether a slot has been touched in the window (its sums are then per slot of the table
    /// they began on).
    pub(crate) fn has_begun(&self) -> bool {
        !self.touched.is_empty()
    }

    /// The same window, not begun, for a table of `n_slots` slots.
    pub(crate) fn for_table(&self, n_slots: usize) -> PolyResult<Self> {
        Self::new(self.start, n_slots)
    }

    /// Called with the learner's example counter `example` before example `example` changes any
    /// weight of `slots`; `data` is the weight table (stored weights at offset [`W`]).
    #[inline]
    pub(crate) fn before_update(
        &mut self,
        example: u64,
        slots: &[u32],
        data: &[f32],
        stride: usize,
    ) {
        let Some(position) = example.checked_sub(self.start) else {
            return;
        };
        for &slot in slots {
            let s = slot as usize;
            let w = f64::from(data[s * stride + W]);
            let entry = &mut self.slots[s];
            if entry.last_touch == 0 {
                self.touched.push(slot);
                // The weight held since the window began.
                entry.sum += w * position as f64;
            } else {
                // The weight since its last change, held after examples last-1 .. position-1.
                entry.sum += w * (position + 1 - entry.last_touch) as f64;
            }
            entry.last_touch = position + 1;
        }
    }

    /// Replaces each touched slot's weight by its mean over the window, which ended after the
    /// learner's example counter reached `end`. Does nothing when no example of the window was
    /// learned.
    pub(crate) fn finish(self, end: u64, data: &mut [f32], stride: usize) {
        let Some(length) = end.checked_sub(self.start).filter(|&n| n > 0) else {
            return;
        };
        for &slot in &self.touched {
            let s = slot as usize;
            let w = f64::from(data[s * stride + W]);
            let entry = self.slots[s];
            let held = length + 1 - entry.last_touch;
            data[s * stride + W] = ((entry.sum + w * held as f64) / length as f64) as f32;
        }
    }
}

/// `n` zeroed values, or an error naming what could not be allocated.
fn zeroed<T: ZeroBits>(n: usize) -> PolyResult<Vec<T>> {
    zeroed_vec(n).ok_or_else(|| {
        PolyError::InvalidInput(format!(
            "cannot allocate the averaging sums for {n} weight slots; use fewer bits or turn \
             averaging off"
        ))
    })
}
