//! The default ranking ([`super::Magnitude`], `|w|·rms(m)`), with powers last: a monomial with
//! a repeated factor (`x_1²`, `x_1³·x_2`, ...) becomes a parent only when fewer than `s`
//! candidates of distinct factors remain. On sparse binary or tf-idf rows a power
//! of a word is (nearly) the word itself (`x² = x` for binary `x`), so expanding powers builds
//! chains of nearly collinear features; on a text set the default climbed such a chain around one
//! frequent word up to degree 5, its weights grew to ~10^4 and the progressive loss rose for
//! the last two epochs (`notes/apple_experiments.md`, "Sparse text"). Powers remain features (a
//! parent's children include its square), they are only not expanded further.

use super::{Candidate, Magnitude, RankingRule, SlotWeights};

pub struct Distinct;

impl RankingRule for Distinct {
    const NAME: &'static str = "distinct";
    const NEEDS_OCCURRENCES: bool = true;

    fn score<W: SlotWeights>(c: &Candidate, weights: &W) -> f64 {
        if c.power {
            // Below every candidate of distinct factors (scores are >= 0).
            -1.0
        } else {
            Magnitude::score(c, weights)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apple::monomial::{Identity, Monomial};
    use crate::apple::parents::ParentSet;
    use crate::apple::ranking::Ranking;
    use crate::apple::select::{choose, Selection};
    use crate::apple::window::Window;

    /// Every slot's `|w|` is 1: the default ranks by rms alone.
    struct Ones;

    impl SlotWeights for Ones {
        fn magnitude(&self, _: u64) -> f64 {
            1.0
        }
        fn normalizer(&self, _: u64) -> f64 {
            1.0
        }
    }

    #[test]
    fn powers_rank_after_every_monomial_of_distinct_factors() {
        // Parent x1 (value 3), base x2 (value 2): candidates x1² (rms 9), x1·x2 (6), x2 (2).
        let mut parents = ParentSet::new();
        parents.insert(Monomial::new(vec![1]), 1);
        let mut window = Window::new(10);
        window.remember(&[1, 2], &[3.0, 2.0], 0.0);
        let distinct = Selection {
            ranking: Ranking::Distinct,
            identity: Identity::Canonical,
            fallback: false,
            max_degree: 6,
        };
        let factors = |s: &Selection, k: usize| -> Vec<Vec<u64>> {
            let got = choose(&parents, &window, s, k, 1000, &Ones);
            got.iter().map(|(m, _)| m.factors().to_vec()).collect()
        };
        let default = Selection { ranking: Ranking::Magnitude, ..distinct };
        assert_eq!(factors(&default, 3), vec![vec![1, 1], vec![1, 2], vec![2]]);
        // By the definition: the distinct-factor candidates by |w|·rms, then the power.
        assert_eq!(factors(&distinct, 2), vec![vec![1, 2], vec![2]]);
        assert_eq!(factors(&distinct, 3), vec![vec![1, 2], vec![2], vec![1, 1]]);
    }
}
