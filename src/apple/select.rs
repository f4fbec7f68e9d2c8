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
//!
//! Cost: the magnitude score of a monomial is a function of its weight slot, so the enumeration
//! streams into a top-`s` list and most monomials cost one weight load and one comparison; only
//! SSM, whose score sums over occurrences, accumulates per monomial (in a map keyed by the
//! already mixed identity key).

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

use super::monomial::{Identity, KeyHasher, Monomial};
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

/// A candidate monomial: identity key, sorted factor hashes and a score.
#[derive(Clone, Copy, Debug)]
struct Ranked {
    score: f64,
    key: u64,
    degree: u8,
    factors: [u64; MAX_DEGREE],
}

impl Ranked {
    fn new(score: f64, key: u64, factors: &[u64]) -> Self {
        let mut f = [0u64; MAX_DEGREE];
        f[..factors.len()].copy_from_slice(factors);
        // A NaN score (possible only from a diverged model) ranks last, not first.
        let score = if score.is_nan() { 0.0 } else { score };
        Ranked { score, key, degree: factors.len() as u8, factors: f }
    }

    fn factors(&self) -> &[u64] {
        &self.factors[..usize::from(self.degree)]
    }

    fn monomial(&self) -> Monomial {
        Monomial::new(self.factors().to_vec())
    }
}

/// The fixed tie order: smaller degree first, then factor hashes lexicographically.
fn order(degree: u8, factors: &[u64], other: &Ranked) -> Ordering {
    degree.cmp(&other.degree).then_with(|| factors.cmp(other.factors()))
}

/// The `k` best candidates seen so far (higher score first, ties by [`order`]), each key once.
struct Best {
    k: usize,
    /// Sorted best first.
    items: Vec<Ranked>,
    keys: HashSet<u64, KeyHasher>,
}

impl Best {
    fn new(k: usize) -> Self {
        Best { k, items: Vec::with_capacity(k + 1), keys: HashSet::default() }
    }

    /// Whether (score, degree, factors) would rank before `other`.
    fn before(score: f64, degree: u8, factors: &[u64], other: &Ranked) -> bool {
        match score.total_cmp(&other.score) {
            Ordering::Greater => true,
            Ordering::Less => false,
            Ordering::Equal => order(degree, factors, other) == Ordering::Less,
        }
    }

    /// Whether a candidate with this score can still enter (the cheap test before `offer`).
    #[inline]
    fn admits_score(&self, score: f64) -> bool {
        self.items.len() < self.k || self.items.last().is_some_and(|last| score >= last.score)
    }

    fn offer(&mut self, candidate: Ranked) {
        if self.k == 0 {
            return;
        }
        let (score, degree, factors) = (candidate.score, candidate.degree, candidate.factors());
        if self.items.len() == self.k {
            match self.items.last() {
                Some(last) if !Self::before(score, degree, factors, last) => return,
                _ => {}
            }
        }
        if !self.keys.insert(candidate.key) {
            return;
        }
        let at = self.items.partition_point(|r| !Self::before(score, degree, factors, r));
        self.items.insert(at, candidate);
        if self.items.len() > self.k {
            if let Some(dropped) = self.items.pop() {
                self.keys.remove(&dropped.key);
            }
        }
    }
}

/// Σ r·m(x), Σ m(x)² and the factors of one monomial (SSM).
#[derive(Clone, Copy, Debug)]
struct Correlation {
    residual_dot: f64,
    sum_squares: f64,
    first: Ranked,
}

/// Enumerates the monomials of S on the remembered examples, newest first, stopping after
/// `budget` enumerated monomials (at least one example is always used), and gives `visit` each
/// non-parent candidate as `(key, slot hash, sorted factor hashes, value, residual)`.
fn for_each_candidate(
    parents: &ParentSet,
    window: &Window,
    selection: &Selection,
    budget: usize,
    mut visit: impl FnMut(u64, u64, &[u64], f32, f32),
) {
    let mut scratch = WalkScratch::default();
    let mut enumerated = 0usize;
    for (hashes, values, residual) in window.newest_first() {
        if enumerated >= budget {
            break;
        }
        enumerated += hashes.len();
        for (&h, &v) in hashes.iter().zip(values) {
            let key = selection.identity.base_key(h);
            if selection.max_degree > 1 && !parents.contains(key) {
                visit(key, h, &[h], v, residual);
            }
        }
        walk_children(
            parents,
            selection.max_degree,
            selection.identity,
            hashes,
            values,
            &mut scratch,
            &mut |node: &Node, i: usize, key: u64, slot: u64, value: f32| {
                enumerated += 1;
                if usize::from(node.degree) + 1 >= selection.max_degree || parents.contains(key) {
                    return;
                }
                let mut factors = [0u64; MAX_DEGREE];
                let n = node.child_factors(parents, hashes[i], &mut factors);
                visit(key, slot, &factors[..n], value, residual);
            },
        );
    }
}

/// Picks up to `s` new parents among the candidates of the remembered examples (see the module
/// docs), as (monomial, identity key), best first; `weight_score(slot_hash)` is the magnitude
/// heuristic's score of a weight slot.
pub fn choose(
    parents: &ParentSet,
    window: &Window,
    selection: &Selection,
    s: usize,
    budget: usize,
    weight_score: impl Fn(u64) -> f64,
) -> Vec<(Monomial, u64)> {
    if s == 0 {
        return Vec::new();
    }
    let by_heuristic = if selection.fallback { s - 1 } else { s };
    let mut best = Best::new(by_heuristic);
    // The fall-back's pick is the smallest candidate by order not already chosen: keep the s
    // smallest (score 0 for all, so that `Best` ranks by order alone).
    let mut smallest = Best::new(if selection.fallback { s } else { 0 });
    match selection.heuristic {
        Heuristic::Magnitude => {
            for_each_candidate(parents, window, selection, budget, |key, slot, factors, _, _| {
                let score = weight_score(slot);
                if best.admits_score(score) {
                    best.offer(Ranked::new(score, key, factors));
                }
                if smallest.k > 0 {
                    smallest.offer(Ranked::new(0.0, key, factors));
                }
            });
        }
        Heuristic::Ssm => {
            let mut stats: HashMap<u64, Correlation, KeyHasher> = HashMap::default();
            for_each_candidate(parents, window, selection, budget, |key, _, factors, v, r| {
                let (v, r) = (f64::from(v), f64::from(r));
                let entry = stats.entry(key).or_insert_with(|| Correlation {
                    residual_dot: 0.0,
                    sum_squares: 0.0,
                    first: Ranked::new(0.0, key, factors),
                });
                entry.residual_dot += r * v;
                entry.sum_squares += v * v;
            });
            for c in stats.into_values() {
                let score = if c.sum_squares > 0.0 {
                    c.residual_dot.abs() / c.sum_squares.sqrt()
                } else {
                    0.0
                };
                best.offer(Ranked { score, ..c.first });
                if smallest.k > 0 {
                    smallest.offer(c.first);
                }
            }
        }
    }
    let mut chosen: Vec<(Monomial, u64)> =
        best.items.iter().map(|r| (r.monomial(), r.key)).collect();
    if let Some(r) = smallest.items.iter().find(|r| !best.keys.contains(&r.key)) {
        chosen.push((r.monomial(), r.key));
    }
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apple::monomial::key_of;
    use proptest::prelude::*;

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

    fn factors(chosen: &[(Monomial, u64)]) -> Vec<Vec<u64>> {
        chosen.iter().map(|m| m.0.factors().to_vec()).collect()
    }

    #[test]
    fn magnitude_picks_the_largest_weights_with_deterministic_ties() {
        let parents = ParentSet::new();
        // Feature 3 occurs twice: one candidate.
        let w = window_of(&[(&[1, 2, 3], &[1.0, 1.0, 1.0], 0.0), (&[3, 4], &[1.0, 1.0], 0.0)]);
        // slot hash of a base feature is its hash: score 4 -> 1.0, 2 and 3 tie at 0.5.
        let score = |h: u64| match h {
            4 => 1.0,
            2 | 3 => 0.5,
            _ => 0.1,
        };
        let got = choose(&parents, &w, &MAG, 3, 1000, score);
        assert_eq!(factors(&got), vec![vec![4], vec![2], vec![3]]);
        let all = choose(&parents, &w, &MAG, 10, 1000, score);
        assert_eq!(factors(&all), vec![vec![4], vec![2], vec![3], vec![1]], "each once");
        let fb = Selection { fallback: true, ..MAG };
        let got = choose(&parents, &w, &fb, 2, 1000, score);
        assert_eq!(factors(&got), vec![vec![4], vec![1]], "fall-back adds the smallest-degree");
        // The fall-back's candidate is never one the heuristic chose.
        let got = choose(&parents, &w, &fb, 2, 1000, |h| if h == 1 { 9.0 } else { 0.0 });
        assert_eq!(factors(&got), vec![vec![1], vec![2]]);
    }

    #[test]
    fn nan_scores_rank_last() {
        let w = window_of(&[(&[1, 2], &[1.0, 1.0], 0.0)]);
        let got =
            choose(&ParentSet::new(), &w, &MAG, 1, 1000, |h| if h == 1 { f64::NAN } else { 0.5 });
        assert_eq!(factors(&got), vec![vec![2]]);
    }

    #[test]
    fn parents_and_max_degree_monomials_are_not_candidates() {
        let mut parents = ParentSet::new();
        parents.insert(Monomial::new(vec![1]), 1);
        let w = window_of(&[(&[1, 2], &[2.0, 3.0], 1.0)]);
        let mut got = factors(&choose(&parents, &w, &MAG, 10, 1000, |_| 1.0));
        got.sort();
        assert_eq!(got, vec![vec![1, 1], vec![1, 2], vec![2]]);
        let low = Selection { max_degree: 2, ..MAG };
        let got = choose(&parents, &w, &low, 10, 1000, |_| 1.0);
        assert_eq!(factors(&got), vec![vec![2]], "degree-2 monomials cannot be parents");
        let one = Selection { max_degree: 1, ..MAG };
        assert!(choose(&parents, &w, &one, 10, 1000, |_| 1.0).is_empty());
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
        let got = choose(&ParentSet::new(), &w, &ssm, 1, 1000, |_| 0.0);
        assert_eq!(factors(&got), vec![vec![2]]);
        let fb = Selection { fallback: true, ..ssm };
        let got = choose(&ParentSet::new(), &w, &fb, 2, 1000, |_| 0.0);
        assert_eq!(factors(&got), vec![vec![2], vec![1]]);
    }

    /// Brute force of the magnitude choice: every candidate once, sorted by (score desc, order).
    fn brute_force(
        parents: &ParentSet,
        rows: &[Vec<u64>],
        max_degree: usize,
        s: usize,
        score: impl Fn(u64) -> f64,
    ) -> Vec<Vec<u64>> {
        let mut all: HashMap<u64, Vec<u64>> = HashMap::new();
        let mut scratch = WalkScratch::default();
        for hashes in rows {
            let values = vec![1.0f32; hashes.len()];
            for &h in hashes {
                all.insert(key_of(&[h]), vec![h]);
            }
            walk_children(
                parents,
                max_degree,
                Identity::Canonical,
                hashes,
                &values,
                &mut scratch,
                &mut |node: &Node, i: usize, key: u64, _: u64, _: f32| {
                    let mut f = [0u64; MAX_DEGREE];
                    let d = node.child_factors(parents, hashes[i], &mut f);
                    all.insert(key, f[..d].to_vec());
                },
            );
        }
        let mut ranked: Vec<(f64, Vec<u64>)> = all
            .into_iter()
            .filter(|(key, f)| f.len() < max_degree && !parents.contains(*key))
            .map(|(_, f)| (score(Monomial::new(f.clone()).slot_hash()), f))
            .collect();
        ranked.sort_by(|a, b| {
            b.0.total_cmp(&a.0).then(a.1.len().cmp(&b.1.len())).then(a.1.cmp(&b.1))
        });
        ranked.into_iter().take(s).map(|(_, f)| f).collect()
    }

    proptest! {
        /// The streaming top-s equals sorting every distinct candidate, with repeated
        /// monomials across rows, parents of several degrees and tied scores.
        #[test]
        fn streaming_choice_equals_brute_force(
            rows in proptest::collection::vec(
                proptest::collection::btree_set(0u64..10, 1..6), 1..6),
            parent_bases in proptest::collection::btree_set(0u64..10, 0..4),
            s in 1usize..12,
            max_degree in 2usize..5,
        ) {
            let rows: Vec<Vec<u64>> = rows.into_iter().map(|r| r.into_iter().collect()).collect();
            let mut parents = ParentSet::new();
            for &b in &parent_bases {
                parents.insert(Monomial::new(vec![b]), 1);
            }
            if let Some(&b) = parent_bases.iter().next() {
                parents.insert(Monomial::new(vec![b, b]), 2);
            }
            let mut window = Window::new(100);
            for r in &rows {
                window.remember(r, &vec![1.0; r.len()], 0.0);
            }
            // Few distinct scores, so ties are common.
            let score = |slot: u64| (slot % 3) as f64;
            let selection = Selection { max_degree, ..MAG };
            let got = factors(&choose(&parents, &window, &selection, s, usize::MAX, score));
            prop_assert_eq!(got, brute_force(&parents, &rows, max_degree, s, score));
        }
    }
}
