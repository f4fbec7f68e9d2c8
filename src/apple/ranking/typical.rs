//! Magnitude where the monomial occurs: `|w|·rms⁺(m)`, `rms⁺(m)` the root mean square of its
//! value over the remembered examples in which it occurs, with sparse powers last.
//!
//! The default ([`super::Magnitude`], `|w|·rms(m)`, absent counted as 0) scores a binary feature
//! present in a fraction `f` of the rows `|w|·sqrt(f)`: on sparse rows it prefers frequent
//! monomials, whose children are many and, for powers of one frequent word, nearly collinear
//! (`x² = x` for binary `x`): on a text set it climbed such a chain up to degree 5 and collapsed
//! (`notes/apple_experiments.md`, "Sparse text"). Vowpal Wabbit's `|w|·max|x|` ([`super::MaxMagnitude`])
//! does not look at frequency and never built the chains, but one outlier sets `max|x|` on raw
//! dense scales. This ranking is the default on dense rows (every candidate occurs everywhere:
//! `rms⁺ = rms`, powers included) and, on sparse rows, the typical size of the monomial's
//! contribution where it contributes (`|w|` for binary features, as Vowpal Wabbit's), with a
//! power present in fewer than half of the examples ranked after every other candidate.
//!
//! Measured (notes/apple_experiments.md, "A default for sparse rows"): over 10 splits of the 28
//! shared sets against Vowpal Wabbit's `--stage_poly`, 5 significantly better and 2 worse
//! (phishing, svmguide1), where `magnitude` is 6 and 2 (w8a, svmguide1); w8a 12% better than
//! `magnitude`, sector 56% and mnist 36% worse (both still no worse than Vowpal Wabbit); on
//! the text generator no collapse (0.43% against `magnitude`'s 10.2%, Vowpal Wabbit's 0.50%).

use super::{Candidate, RankingRule, SlotWeights};

pub struct Typical;

/// A candidate present in fewer than this share of the examples is sparse, and as a power ranks
/// last. (Not "fewer than all": fried's ten dense features miss in 0.05% of its rows, and
/// `(x_3 - 0.5)²` needs `x_3²`; with powers last whenever a value is missing, apple's error
/// there rose 47%.)
const SPARSE_BELOW: f64 = 0.5;

impl RankingRule for Typical {
    const NAME: &'static str = "typical";
    const NEEDS_OCCURRENCES: bool = true;

    fn score<W: SlotWeights>(c: &Candidate, weights: &W) -> f64 {
        if c.occurrences == 0 {
            return 0.0;
        }
        let presence = c.occurrences as f64 / c.examples.max(1) as f64;
        if c.power && presence < SPARSE_BELOW {
            // Below every candidate of distinct factors or dense (scores are >= 0).
            return -1.0;
        }
        weights.magnitude(c.slot) * (c.sum_squares / c.occurrences as f64).sqrt()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apple::ranking::Magnitude;

    struct Constant(f64);

    impl SlotWeights for Constant {
        fn magnitude(&self, _: u64) -> f64 {
            self.0
        }
        fn normalizer(&self, _: u64) -> f64 {
            1.0
        }
    }

    fn candidate(sum_squares: f64, occurrences: usize, power: bool) -> Candidate {
        Candidate { slot: 3, residual_dot: 0.0, sum_squares, examples: 10, occurrences, power }
    }

    #[test]
    fn on_dense_rows_it_scores_as_the_default_powers_included() {
        let w = Constant(0.7);
        for power in [false, true] {
            let c = candidate(2.5, 10, power);
            assert!((Typical::score(&c, &w) - Magnitude::score(&c, &w)).abs() < 1e-12);
        }
    }

    #[test]
    fn on_sparse_rows_it_scores_the_size_where_present_and_puts_powers_last() {
        let w = Constant(0.5);
        // A binary feature in 1 row of 10 and one in 9: the default prefers the frequent one
        // (0.5·sqrt(0.1) against 0.5·sqrt(0.9)); here both score |w|.
        let rare = candidate(1.0, 1, false);
        let frequent = candidate(9.0, 9, false);
        assert!(Magnitude::score(&rare, &w) < Magnitude::score(&frequent, &w));
        assert_eq!(Typical::score(&rare, &w), 0.5);
        assert_eq!(Typical::score(&frequent, &w), 0.5);
        // Values 0.2 and 0.4 where present: rms⁺ = sqrt((0.04 + 0.16) / 2).
        let tfidf = candidate(0.2, 2, false);
        assert!((Typical::score(&tfidf, &w) - 0.5 * 0.1f64.sqrt()).abs() < 1e-12);
        // A sparse power (in fewer than half of the rows) ranks below any candidate, even one of
        // score 0; one in most rows ranks by its size.
        assert_eq!(Typical::score(&candidate(4.0, 4, true), &w), -1.0);
        assert_eq!(Typical::score(&candidate(9.0, 9, true), &w), 0.5);
        assert_eq!(Typical::score(&candidate(0.0, 0, false), &w), 0.0);
    }
}
