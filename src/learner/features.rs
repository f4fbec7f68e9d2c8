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
