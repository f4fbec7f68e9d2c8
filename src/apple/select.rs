//! Choosing the next parents: candidates, heuristics, and the fall-back.
//!
//! Candidates are the non-parent monomials of S (of degree below the maximum) that occur in the
//! recent examples apple remembered before the expansion (see [`super::window`]): enumerating S
//! on them gives each candidate's identity, weight slot and, for SSM, its residual correlation.
//! A monomial with a large weight that occurs in none of the remembered examples is rare, and
//! expanding it would add little.
//!
//! * [`Heuristic::Magnitude`] (default): largest `|w|`, times the slot's normalizer (largest
//!   `|x|` seen) under the normalized update rule, as Vowpal Wabbit ranks features;
//! * [`Heuristic::Ssm`]: largest `|Σ r·m(x)| / sqrt(Σ m(x)²)` over the remembered examples, `r`
//!   the residual (minus the loss derivative at the progressive prediction; `y - p` for squared
//!   loss);
//! * fall-back ([`Selection::fallback`]): `s - 1` by the heuristic plus the non-parent candidate
//!   of smallest degree, so that every monomial is eventually reached (risk consistency).
//!
//! Ties break on (degree, factor hashes) ascending, so the choice is deterministic.

use std::collections::HashMap;

use super::monomial::{Identity, Monomial};
use super::parents::ParentSet;
use super::walk::{walk_children, Node, WalkScratch, MAX_DEGREE};
use super::window::Window;
use crate::error::PolyResult;

/// See the module docs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Heuristic {
    Magnitude,
    Ssm,
}

impl Heuristic {
    pub fn parse(name: &str) -> PolyResult<Self> {
        match name {
            "magnitude" => Ok(Heuristic::Magnitude),
            "ssm" => Ok(Heuristic::Ssm),
            other => crate::invalid!("heuristic must be 'magnitude' or 'ssm', got {other:?}"),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Heuristic::Magnitude => "magnitude",
            Heuristic::Ssm => "ssm",
        }
    }
}

/// How many and which parents an expansion picks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Selection {
    pub heuristic: Heuristic,
    pub identity: Identity,
    pub fallback: bool,
    /// Monomials of this degree or more are never parents (their children would exceed it).
    pub max_degree: usize,
}

/// One candidate and its statistics over the remembered examples.
#[derive(Clone, Debug)]
pub struct Candidate {
    pub key: u64,
    pub factors: [u64; MAX_DEGREE],
    pub degree: u8,
    pub slot_hash: u64,
    /// Σ r·m(x) and Σ m(x)² (SSM).
    pub residual_dot: f64,
    pub sum_squares: f64,
}

impl Candidate {
    pub fn monomial(&self) -> Monomial {
        Monomial::new(self.factors[..usize::from(self.degree)].to_vec())
    }

    fn order(&self) -> (u8, &[u64]) {
        (self.degree, &self.factors[..usize::from(self.degree)])
    }
}

type CandidateMap = HashMap<u64, Candidate>;

/// Collects the candidates of the remembered examples, newest first, stopping after `budget`
/// enumerated monomials (at least one example is always used).
pub fn collect_candidates(
    parents: &ParentSet,
    window: &Window,
    selection: &Selection,
    budget: usize,
) -> Vec<Candidate> {
    let mut map = CandidateMap::default();
    let mut scratch = WalkScratch::default();
    let mut enumerated = 0usize;
    for (hashes, values, residual) in window.newest_first() {
        if enumerated >= budget && !map.is_empty() {
            break;
        }
        let residual = f64::from(residual);
        let mut note = |factors: &[u64], key: u64, slot: u64, value: f32| {
            enumerated += 1;
            let degree = factors.len();
            if degree >= selection.max_degree || parents.contains(key) {
                return;
            }
            let entry = map.entry(key).or_insert_with(|| {
                let mut f = [0u64; MAX_DEGREE];
                f[..degree].copy_from_slice(factors);
                f[..degree].sort_unstable();
                Candidate {
                    key,
                    factors: f,
                    degree: degree as u8,
                    slot_hash: slot,
                    residual_dot: 0.0,
                    sum_squares: 0.0,
                }
            });
            let v = f64::from(value);
            entry.residual_dot += residual * v;
            entry.sum_squares += v * v;
        };
        for (&h, &v) in hashes.iter().zip(values) {
            note(&[h], selection.identity.base_key(h), h, v);
        }
        let mut factors = [0u64; MAX_DEGREE];
        walk_children(
            parents,
            selection.max_degree,
            selection.identity,
            hashes,
            values,
            &mut scratch,
            &mut |node: &Node, i: usize, key: u64, slot: u64, value: f32| {
                let d = usize::from(node.degree);
                for (slot, &p) in factors.iter_mut().zip(node.positions()) {
                    *slot = hashes[p as usize];
                }
                factors[d] = hashes[i];
                note(&factors[..=d], key, slot, value);
            },
        );
    }
    map.into_values().collect()
}

/// Picks up to `s` new parents from `candidates`, as (monomial, identity key);
/// `weight_score(slot_hash)` is the magnitude heuristic's score of a slot.
pub fn select(
    mut candidates: Vec<Candidate>,
    s: usize,
    selection: &Selection,
    weight_score: impl Fn(u64) -> f64,
) -> Vec<(Monomial, u64)> {
    if s == 0 || candidates.is_empty() {
        return Vec::new();
    }
    let score = |c: &Candidate| -> f64 {
        let value = match selection.heuristic {
            Heuristic::Magnitude => weight_score(c.slot_hash),
            Heuristic::Ssm if c.sum_squares > 0.0 => c.residual_dot.abs() / c.sum_squares.sqrt(),
            Heuristic::Ssm => 0.0,
        };
        if value.is_nan() {
            0.0
        } else {
            value
        }
    };
    let mut scored: Vec<(f64, Candidate)> = candidates.drain(..).map(|c| (score(&c), c)).collect();
    scored.sort_by(|(sa, a), (sb, b)| sb.total_cmp(sa).then_with(|| a.order().cmp(&b.order())));
    let by_heuristic = if selection.fallback { s - 1 } else { s };
    let mut chosen: Vec<(Monomial, u64)> =
        scored.iter().take(by_heuristic).map(|(_, c)| (c.monomial(), c.key)).collect();
    if selection.fallback {
        let smallest = scored
            .iter()
            .map(|(_, c)| c)
            .filter(|c| !chosen.iter().any(|(_, key)| *key == c.key))
            .min_by(|a, b| a.order().cmp(&b.order()).then(a.key.cmp(&b.key)));
        if let Some(c) = smallest {
            chosen.push((c.monomial(), c.key));
        }
    }
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window_of(rows: &[(&[u64], &[f32], f32)]) -> Window {
        let mut w = Window::new(100);
        for (h, v, r) in rows {
            w.remember(h, v, *r);
        }
        w
    }

    const MAG: Selection = Selection {
        heuristic: Heuristic::Magnitude,
        identity: Identity::Canonical,
        fallback: false,
        max_degree: 6,
    };

    #[test]
    fn magnitude_picks_the_largest_weights_with_deterministic_ties() {
        let parents = ParentSet::new();
        let w = window_of(&[(&[1, 2, 3], &[1.0, 1.0, 1.0], 0.0), (&[3, 4], &[1.0, 1.0], 0.0)]);
        let cands = collect_candidates(&parents, &w, &MAG, 1000);
        assert_eq!(cands.len(), 4, "duplicates across examples are one candidate");
        // slot hash of a base feature is its hash: score 4 -> 1.0, 2 and 3 tie at 0.5.
        let score = |h: u64| match h {
            4 => 1.0,
            2 | 3 => 0.5,
            _ => 0.1,
        };
        let got = select(cands.clone(), 3, &MAG, score);
        let names: Vec<Vec<u64>> = got.iter().map(|m| m.0.factors().to_vec()).collect();
        assert_eq!(names, vec![vec![4], vec![2], vec![3]]);
        let fb = Selection { fallback: true, ..MAG };
        let got = select(cands, 2, &fb, score);
        let names: Vec<Vec<u64>> = got.iter().map(|m| m.0.factors().to_vec()).collect();
        assert_eq!(names, vec![vec![4], vec![1]], "fall-back adds the smallest-degree, first");
    }

    #[test]
    fn parents_and_max_degree_monomials_are_not_candidates() {
        let mut parents = ParentSet::new();
        parents.insert(Monomial::new(vec![1]), 1);
        let w = window_of(&[(&[1, 2], &[2.0, 3.0], 1.0)]);
        let cands = collect_candidates(&parents, &w, &MAG, 1000);
        let mut got: Vec<Vec<u64>> =
            cands.iter().map(|c| c.monomial().factors().to_vec()).collect();
        got.sort();
        assert_eq!(got, vec![vec![1, 1], vec![1, 2], vec![2]]);
        let low = Selection { max_degree: 2, ..MAG };
        let cands = collect_candidates(&parents, &w, &low, 1000);
        assert_eq!(cands.len(), 1, "degree-2 monomials cannot be parents at max_degree 2");
    }

    #[test]
    fn ssm_ranks_by_residual_correlation() {
        // Residuals follow feature 2 exactly; feature 1 is uncorrelated noise.
        let rows: Vec<(Vec<u64>, Vec<f32>, f32)> = (0..40)
            .map(|k| {
                let x2 = if k % 2 == 0 { 1.0 } else { -1.0 };
                let x1 = if k % 4 < 2 { 1.0 } else { -1.0 };
                (vec![1, 2], vec![x1, x2], 3.0 * x2)
            })
            .collect();
        let mut w = Window::new(100);
        for (h, v, r) in &rows {
            w.remember(h, v, *r);
        }
        let ssm = Selection { heuristic: Heuristic::Ssm, ..MAG };
        let cands = collect_candidates(&ParentSet::new(), &w, &ssm, 1000);
        let got = select(cands, 1, &ssm, |_| 0.0);
        assert_eq!(got[0].0.factors(), &[2]);
    }
}
