//! The default ranking: largest `|w|·rms(m)`, `rms(m)` the root mean square of the monomial's
//! value over the remembered examples (absent = 0): the typical size of its contribution
//! `w·m(x)` to a prediction, i.e. the weight's magnitude once the monomial is standardized,
//! whatever its scale and frequency.

use super::{Candidate, RankingRule, SlotWeights};

pub struct Magnitude;

impl RankingRule for Magnitude {
    const NAME: &'static str = "magnitude";
    const NEEDS_OCCURRENCES: bool = true;

    fn score<W: SlotWeights>(c: &Candidate, weights: &W) -> f64 {
        weights.magnitude(c.slot) * (c.sum_squares / c.examples.max(1) as f64).sqrt()
    }
}
