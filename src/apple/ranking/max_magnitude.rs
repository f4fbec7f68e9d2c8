//! Vowpal Wabbit's ranking (`--stage_poly`): largest `|w|`, times the slot's normalizer (largest
//! `|x|` seen) under the normalized update rule.

use super::{Candidate, RankingRule, SlotWeights};

pub struct MaxMagnitude;

impl RankingRule for MaxMagnitude {
    const NAME: &'static str = "max_magnitude";
    const NEEDS_OCCURRENCES: bool = false;

    #[inline]
    fn score<W: SlotWeights>(c: &Candidate, weights: &W) -> f64 {
        weights.magnitude(c.slot) * weights.normalizer(c.slot)
    }
}
