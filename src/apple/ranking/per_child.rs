//! Magnitude per generated feature: `|w|·rms(m) / f(m)`, `f(m)` the fraction of the remembered
//! examples in which the monomial occurs. Expanding `m` adds about `f(m)·nnz` children to every
//! example (each with a fresh weight to learn), for a gain bounded by the size of `m`'s own
//! contribution, `|w|·rms(m)` (the default ranking, [`super::Magnitude`]): this ranks that gain per
//! child generated. On dense rows (`f = 1` for every candidate) it ranks as the default; on
//! sparse rows it stops the default's preference for frequent monomials (for binary features the
//! default's score is `|w|·sqrt(f)`, this one's `|w| / sqrt(f)`).

use super::{Candidate, RankingRule, SlotWeights};

pub struct PerChild;

impl RankingRule for PerChild {
    const NAME: &'static str = "per_child";
    const NEEDS_OCCURRENCES: bool = true;

    fn score<W: SlotWeights>(c: &Candidate, weights: &W) -> f64 {
        if c.occurrences == 0 {
            return 0.0;
        }
        let examples = c.examples.max(1) as f64;
        let rms = (c.sum_squares / examples).sqrt();
        weights.magnitude(c.slot) * rms * examples / c.occurrences as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apple::monomial::Identity;
    use crate::apple::parents::ParentSet;
    use crate::apple::ranking::Ranking;
    use crate::apple::select::{choose, Selection};
    use crate::apple::window::Window;

    /// `|w|` by slot hash (a base feature's slot hash is its hash), normalizer 1.
    struct Weights(fn(u64) -> f64);

    impl SlotWeights for Weights {
        fn magnitude(&self, slot_hash: u64) -> f64 {
            self.0(slot_hash)
        }
        fn normalizer(&self, _: u64) -> f64 {
            1.0
        }
    }

    const PER_CHILD: Selection = Selection {
        ranking: Ranking::PerChild,
        identity: Identity::Canonical,
        fallback: false,
        max_degree: 6,
    };

    /// The definition, by brute force over the rows: `|w| · sqrt(Σ x² / n) / (present / n)`.
    fn brute_force(rows: &[(Vec<u64>, Vec<f32>)], h: u64, w: f64) -> f64 {
        let n = rows.len() as f64;
        let values: Vec<f64> = rows
            .iter()
            .filter_map(|(hs, vs)| hs.iter().position(|&x| x == h).map(|i| f64::from(vs[i])))
            .collect();
        let rms = (values.iter().map(|v| v * v).sum::<f64>() / n).sqrt();
        w * rms / (values.len() as f64 / n)
    }

    #[test]
    fn picks_the_parent_the_definition_ranks_first() {
        // Feature 1 occurs in every row (|w| 1), 2 in one row of 8 (|w| 0.6), 3 in half the rows
        // with value 0.5 (|w| 1.5). Default scores: 1, 0.6·sqrt(1/8) = 0.21, 1.5·0.5·sqrt(1/2)
        // = 0.53, so the default picks 1, then 3, then 2. Per child: 1, 0.6·sqrt(8) = 1.70,
        // 0.53·2 = 1.06: 2 first, then 3, then 1.
        let rows: Vec<(Vec<u64>, Vec<f32>)> = (0..8)
            .map(|k| {
                let mut hs = vec![1u64];
                let mut vs = vec![1.0f32];
                if k == 0 {
                    hs.push(2);
                    vs.push(1.0);
                }
                if k % 2 == 0 {
                    hs.push(3);
                    vs.push(0.5);
                }
                (hs, vs)
            })
            .collect();
        let mut window = Window::new(100);
        for (hs, vs) in &rows {
            window.remember(hs, vs, 0.0);
        }
        let weights = Weights(|h| [0.0, 1.0, 0.6, 1.5][h as usize]);
        let got = choose(&ParentSet::new(), &window, &PER_CHILD, 3, 1000, &weights);
        let got: Vec<u64> = got.iter().map(|(m, _)| m.factors()[0]).collect();
        let mut expected: Vec<(f64, u64)> =
            (1..=3).map(|h| (brute_force(&rows, h, weights.magnitude(h)), h)).collect();
        expected.sort_by(|a, b| b.0.total_cmp(&a.0));
        assert_eq!(got, expected.iter().map(|e| e.1).collect::<Vec<_>>());
        assert_eq!(got, vec![2, 3, 1]);
        let default = Selection { ranking: Ranking::Magnitude, ..PER_CHILD };
        let got = choose(&ParentSet::new(), &window, &default, 3, 1000, &weights);
        let got: Vec<u64> = got.iter().map(|(m, _)| m.factors()[0]).collect();
        assert_eq!(got, vec![1, 3, 2], "the default prefers the frequent feature");
    }

    #[test]
    fn on_dense_rows_it_scores_as_the_default() {
        let c = Candidate {
            slot: 7,
            residual_dot: 0.3,
            sum_squares: 2.5,
            examples: 10,
            occurrences: 10,
            power: false,
        };
        let weights = Weights(|_| 0.7);
        let ours = PerChild::score(&c, &weights);
        let default = super::super::Magnitude::score(&c, &weights);
        assert!((ours - default).abs() < 1e-12, "{ours} {default}");
        let absent = Candidate { occurrences: 0, sum_squares: 0.0, ..c };
        assert_eq!(PerChild::score(&absent, &weights), 0.0);
    }
}
