//! [`FitOptions`]: how [`super::Learner::fit`] runs over in-memory data, under the names the
//! Python estimators give these options (one typed structure, read from their dict by serde, so
//! an unknown or missing name is an error naming it), and the seeded order `shuffle` learns in.

/// Options of [`super::Learner::fit`].
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FitOptions {
    /// Passes over the data (1 = a single online pass, like Vowpal Wabbit).
    pub passes: usize,
    /// Shuffle the example order of every pass (seed `random_state`); `false` keeps the order.
    pub shuffle: bool,
    /// The shuffling seed (0 when `None`).
    pub random_state: Option<u64>,
    /// With more than one pass, every `holdout`-th row (rows `holdout-1, 2·holdout-1, ...`) is
    /// held out: never learned, its loss measured after each pass (0 = no holdout).
    pub holdout: usize,
    /// Stop after this many passes without a better holdout loss (0 = never stop early).
    pub n_iter_no_change: usize,
    /// Tail averaging (module `learner::averaging`): the fitted weights are the mean of the weights
    /// after each of the last `ceil(average_tail · n)` of the `n` examples this fit learns
    /// (over the part of that tail learned when early stopping ends the fit sooner). In `[0, 1]`;
    /// 0 = off, the last iterate. Not combinable with L1/L2.
    pub average_tail: f64,
}

impl Default for FitOptions {
    fn default() -> Self {
        FitOptions {
            passes: 1,
            shuffle: false,
            random_state: None,
            holdout: 10,
            n_iter_no_change: 3,
            average_tail: 0.0,
        }
    }
}

impl FitOptions {
    /// The shuffling generator of a fit (the first pass's order is [`shuffled_order`]'s).
    pub(super) fn rng(&self) -> SplitMix64 {
        SplitMix64(self.random_state.unwrap_or(0))
    }
}

/// The order `shuffle` learns `n` rows in on its first pass with `seed`: what a caller that
/// streams the rows itself (the Python estimators' one-pass fit) follows, so that both paths
/// learn the same model.
pub fn shuffled_order(n: usize, seed: u64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    SplitMix64(seed).shuffle(&mut order);
    order
}

/// SplitMix64 (Steele, Lea & Flood 2014): a small seeded generator for shuffling.
pub(super) struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Fisher–Yates.
    pub(super) fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = (self.next() % (i as u64 + 1)) as usize;
            items.swap(i, j);
        }
    }
}
