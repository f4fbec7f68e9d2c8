//! [`ExpandedFeatures`]: the per-example buffer of (weight slot, value) pairs that feature
//! enumerators fill and the update rule reads. It sits below both, so neither imports the other.

/// The per-example output of a feature enumerator (`super::Expansion`): weight slots (already masked to the table) and
/// values. Slots are private so that every stored slot is `<= mask` by construction, which the
/// learner's inner loops rely on.
#[derive(Clone, Debug)]
pub struct ExpandedFeatures {
    mask: u64,
    slots: Vec<u32>,
    values: Vec<f32>,
}

impl ExpandedFeatures {
    /// An empty buffer for a table of `2^bits` slots (`bits <= 32`).
    pub fn new(bits: u32) -> Self {
        let mask = if bits >= 32 { u64::from(u32::MAX) } else { (1u64 << bits) - 1 };
        Self { mask, slots: Vec::new(), values: Vec::new() }
    }

    pub fn clear(&mut self) {
        self.slots.clear();
        self.values.clear();
    }

    pub fn reserve(&mut self, additional: usize) {
        self.slots.reserve(additional);
        self.values.reserve(additional);
    }

    /// Appends the feature with hash `hash` (masked to a slot) and value `value`.
    #[inline(always)]
    pub fn push(&mut self, hash: u64, value: f32) {
        self.slots.push((hash & self.mask) as u32);
        self.values.push(value);
    }

    /// Removes the features from index `from` on whose value's square single precision cannot
    /// hold, keeping the others in order; returns how many it removed. A max reduction first
    /// (vectorized), so the common case costs one read of the values.
    pub fn drop_overflowing(&mut self, from: usize) -> usize {
        let fits = |x: f32| (x * x).is_finite();
        let largest = self.values[from..].iter().fold(0.0f32, |m, x| m.max(x.abs()));
        if fits(largest) {
            return 0;
        }
        let before = self.values.len();
        let mut kept = from;
        for k in from..before {
            if fits(self.values[k]) {
                self.slots[kept] = self.slots[k];
                self.values[kept] = self.values[k];
                kept += 1;
            }
        }
        self.slots.truncate(kept);
        self.values.truncate(kept);
        before - kept
    }

    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Appends the products `first · x_j` with hashes `first_hash ^ h_j` for every `(h_j, x_j)`
    /// of `hashes` / `values`: the inner loop of every interaction, written as two `extend`s of
    /// exact length (no per-element capacity check; the hashing loop vectorizes).
    #[inline(always)]
    pub fn push_products(&mut self, first_hash: u64, first: f32, hashes: &[u64], values: &[f32]) {
        let mask = self.mask;
        self.slots.extend(hashes.iter().map(|&h| ((first_hash ^ h) & mask) as u32));
        self.values.extend(values.iter().map(|&x| first * x));
    }

    /// The mask every slot is within.
    pub fn mask(&self) -> u64 {
        self.mask
    }

    #[inline]
    pub fn slots(&self) -> &[u32] {
        &self.slots
    }

    #[inline]
    pub fn values(&self) -> &[f32] {
        &self.values
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drop_overflowing_keeps_the_rest_in_order() {
        let mut f = ExpandedFeatures::new(8);
        for (h, x) in [(1, 1e20f32), (2, 3.0), (3, -2e19), (4, 1e19), (5, f32::INFINITY), (6, -1.0)]
        {
            f.push(h, x);
        }
        assert_eq!(f.drop_overflowing(2), 2, "from index 2: -2e19 and inf");
        assert_eq!(f.slots(), &[1, 2, 4, 6]);
        assert_eq!(f.values(), &[1e20, 3.0, 1e19, -1.0]);
        assert_eq!(f.drop_overflowing(0), 1);
        assert_eq!(f.values(), &[3.0, 1e19, -1.0]);
        assert_eq!(f.drop_overflowing(0), 0);
    }
}
