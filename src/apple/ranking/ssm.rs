//! SSM: largest `|Σ r·m(x)| / sqrt(Σ m(x)²)` over the remembered examples, `r` the residual
//! (minus the loss derivative at the progressive prediction; `y - p` for squared loss): the
//! monomial most correlated with what the model still gets wrong.

use super::{Candidate, RankingRule, SlotWeights};

pub struct Ssm;

impl RankingRule for Ssm {
    const NAME: &'static str = "ssm";
    const NEEDS_OCCURRENCES: bool = true;

    fn score<W: SlotWeights>(c: &Candidate, _: &W) -> f64 {
        if c.sum_squares > 0.0 {
            c.residual_dot.abs() / c.sum_squares.sqrt()
        } else {
            0.0
        }
    }
}
