//! The factorization over the crossed pairs of fields alone ([`super::FfmPairs::Crosses`]).
//!
//! A feature's vector for a partner field lies in a row of its own, hashed from the feature's
//! weight slot and the partner (`2 k` floats: the vector, then its AdaGrad sums): the table
//! holds only the vectors crossed fields use, whatever the number of fields.
//!
//! Pair `p = (a, b)` has two sums, `S_ab = sum over i in a of x_i v(i, b)` at `2 p` and `S_ba`
//! at `2 p + 1`; the score is `sum over pairs of <S_ab, S_ba>` and the derivative in `v(i, b)`
//! of a feature of `a` is `x_i S_ba`. A feature reads and moves only the vectors of the fields
//! it is paired with, so an example costs `O(n P k)` for `P` pairs per field: on a table of 30
//! fields where screening crossed four pairs, a few vectors per feature rather than 30. The
//! pairs are of distinct fields: a cross never repeats one, so there are no pairs within a field.

use super::{dot, non_finite, Ffm, FfmScratch};

/// The pairs of fields with a term, and for each field the sums its features add to.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct CrossedPairs {
    /// Pair `p` of positions `(a, b)`, `a < b`: its sums `S_ab` at `2 p` and `S_ba` at `2 p + 1`.
    pub(super) pairs: Vec<(u32, u32)>,
    /// Per position: the sums its features add to.
    pub(super) links: Vec<Vec<Link>>,
}

/// A feature of a field adds `x v(i, other)` to sum `sum`; its derivative there is the other
/// side's sum.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Link {
    pub(super) sum: u32,
    pub(super) other: u32,
}

impl Link {
    fn partner_sum(self) -> usize {
        (self.sum ^ 1) as usize
    }
}

impl CrossedPairs {
    /// Adds `|<S_ab, S_ba>|` of each pair to `totals[a F + b]` (the sums just computed).
    pub(super) fn add_pair_terms(
        &self,
        scratch: &FfmScratch,
        k: usize,
        n_fields: usize,
        totals: &mut [f64],
    ) {
        for (p, &(a, b)) in self.pairs.iter().enumerate() {
            let term = dot(&scratch.sums[2 * p * k..][..k], &scratch.sums[(2 * p + 1) * k..][..k]);
            totals[a as usize * n_fields + b as usize] += f64::from(term.abs());
        }
    }
}

impl Ffm {
    /// [`Ffm::score`] over the crossed pairs (`scratch.entries` collected).
    pub(super) fn score_crossed(&self, crossed: &CrossedPairs, scratch: &mut FfmScratch) -> f32 {
        let k = self.options.k;
        scratch.sums.clear();
        scratch.sums.resize(2 * crossed.pairs.len() * k, 0.0);
        for e in &scratch.entries {
            for link in &crossed.links[e.field as usize] {
                let row = self.row_of_pair(e.row, link.other) as usize * 2 * k;
                let sum = &mut scratch.sums[link.sum as usize * k..][..k];
                for (s, v) in sum.iter_mut().zip(&self.table[row..][..k]) {
                    *s += e.value * v;
                }
            }
        }
        scratch.sums.chunks_exact(2 * k).map(|pair| dot(&pair[..k], &pair[k..])).sum()
    }

    /// [`Ffm::prepare_step`] over the crossed pairs: each entry's steps are `k` per link of its
    /// field, in the links' order.
    pub(super) fn prepare_crossed(
        &self,
        crossed: &CrossedPairs,
        scratch: &mut FfmScratch,
        gradient: f32,
    ) -> Result<(), f32> {
        let k = self.options.k;
        let (rate, power_t) = (self.options.learning_rate as f32, self.options.power_t as f32);
        let sqrt_rule = power_t == 0.5;
        let mut not_finite = 0u32;
        for e in &scratch.entries {
            let xg = gradient * e.value;
            for link in &crossed.links[e.field as usize] {
                let partner = &scratch.sums[link.partner_sum() * k..][..k];
                let row = self.row_of_pair(e.row, link.other) as usize * 2 * k;
                let sums = &self.table[row + k..][..k];
                for (&d, &sum) in partner.iter().zip(sums) {
                    let g = xg * d;
                    let step = if sqrt_rule {
                        rate * g / (sum + g * g).sqrt()
                    } else {
                        rate * g * (sum + g * g).powf(-power_t)
                    };
                    not_finite |= u32::from(non_finite(step) | non_finite(g * g));
                    scratch.steps.push(step);
                    scratch.squares.push(g * g);
                }
            }
        }
        if not_finite != 0 {
            let bad = scratch.steps.iter().chain(&scratch.squares).find(|v| !v.is_finite());
            let bad = bad.copied().unwrap_or(f32::NAN);
            scratch.steps.clear();
            scratch.squares.clear();
            return Err(bad);
        }
        Ok(())
    }

    /// [`Ffm::apply_step`] over the crossed pairs.
    pub(super) fn apply_crossed(&mut self, crossed: &CrossedPairs, scratch: &mut FfmScratch) {
        let k = self.options.k;
        let mut at = 0;
        for e in &scratch.entries {
            for link in &crossed.links[e.field as usize] {
                let row = self.row_of_pair(e.row, link.other) as usize * 2 * k;
                let (latent, sums) = self.table[row..][..2 * k].split_at_mut(k);
                let (steps, squares) = (&scratch.steps[at..][..k], &scratch.squares[at..][..k]);
                for (v, step) in latent.iter_mut().zip(steps) {
                    *v -= step;
                }
                for (g2_sum, g2) in sums.iter_mut().zip(squares) {
                    *g2_sum += g2;
                }
                at += k;
            }
        }
        scratch.steps.clear();
        scratch.squares.clear();
    }
}
