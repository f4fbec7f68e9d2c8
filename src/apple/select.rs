//! Choosing the next parents: candidates, the ranking, and the fall-back.
//!
//! Candidates are the non-parent monomials of S (of degree below the maximum) that occur in the
//! recent examples apple remembered before the expansion (see [`super::window`]): enumerating S
//! on them gives each candidate's identity, weight slot and, for SSM, its residual correlation.
//! A monomial with a large weight that occurs in none of the remembered examples is rare, and
//! expanding it would add little.
//!
//! * the [`Ranking`] scores each candidate (one file per ranking in [`super::ranking`]);
//! * fall-back ([`Selection::fallback`]): `s - 1` by the ranking plus the non-parent candidate
//!   of smallest degree, so that every monomial is eventually reached (risk consistency).
//!
//! Ties break on (degree, factor hashes) ascending, so the choice is deterministic.
//!
//! A candidate whose children could overflow ([`Magnitudes`]) is never chosen: on raw-scale
//! features (adult's weights near 1.5e6, australian's 1e5) high powers would otherwise reach
//! values whose squares single precision cannot hold, and the learner refuses such rows.
//!
//! Cost: a ranking that scores by the weight slot alone (max-magnitude) streams the enumeration
//! into a top-`s` list, and most monomials cost one weight load and one comparison; rankings
//! that need occurrences (magnitude, SSM) accumulate per monomial (in a map keyed by the already
//! mixed identity key). The window is a small part of the epoch (see
//! [`super::adaptive::Apple::window_before`]), so either costs a fraction of the epoch's training.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

use super::monomial::{Identity, KeyHasher, Monomial};
use super::parents::ParentSet;
use super::ranking::{Candidate, Ranking, RankingRule, RankingVisitor, SlotWeights};
use super::walk::{walk_children, Node, WalkScratch, MAX_DEGREE};
use super::window::Window;

/// The largest bound on a parent's children: a factor ~180 below `sqrt(f32::MAX)` ≈ 1.8e19,
/// room for rows larger than any seen so far.
pub const CHILD_LIMIT: f64 = 1e17;

/// Bounds on the values of candidates and their children: per base feature the largest `|x|`
/// seen (the learner's normalizer, which covers every learned example, or the remembered
/// examples when the rule keeps none), and the largest of these over the remembered features.
struct Magnitudes<'a, W: SlotWeights> {
    remembered: HashMap<u64, f64, KeyHasher>,
    largest: f64,
    weights: &'a W,
}

impl<'a, W: SlotWeights> Magnitudes<'a, W> {
    fn of(window: &Window, weights: &'a W) -> Self {
        let mut remembered: HashMap<u64, f64, KeyHasher> = HashMap::default();
        for (hashes, values, _) in window.newest_first() {
            for (&h, &v) in hashes.iter().zip(values) {
                let seen = remembered.entry(h).or_insert(0.0);
                *seen = seen.max(f64::from(v.abs()));
            }
        }
        let mut bounds = Magnitudes { remembered, largest: 0.0, weights };
        bounds.largest = bounds.remembered.keys().map(|&h| bounds.factor(h)).fold(0.0, f64::max);
        bounds
    }

    fn factor(&self, hash: u64) -> f64 {
        let remembered = self.remembered.get(&hash).copied().unwrap_or(0.0);
        remembered.max(self.weights.normalizer(hash))
    }

    /// Whether every child `m·x_j` of the monomial stays below [`CHILD_LIMIT`].
    fn children_fit(&self, factors: &[u64]) -> bool {
        factors.iter().map(|&f| self.factor(f)).product::<f64>() * self.largest <= CHILD_LIMIT
    }
}

/// How many and which parents an expansion picks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Selection {
    pub ranking: Ranking,
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

/// Σ r·m(x), Σ m(x)² over the remembered examples, the slot hash and the factors of one
/// monomial (magnitude and SSM).
#[derive(Clone, Copy, Debug)]
struct Occurrences {
    residual_dot: f64,
    sum_squares: f64,
    occurrences: usize,
    slot: u64,
    first: Ranked,
}

/// Enumerates the monomials of S on the remembered examples, newest first, stopping after
/// `budget` enumerated monomials (at least one example is always used), and gives `visit` each
/// non-parent candidate as `(key, slot hash, sorted factor hashes, value, residual)`. Returns
/// the number of examples enumerated.
fn for_each_candidate(
    parents: &ParentSet,
    window: &Window,
    selection: &Selection,
    budget: usize,
    mut visit: impl FnMut(u64, u64, &[u64], f32, f32),
) -> usize {
    let mut scratch = WalkScratch::default();
    let (mut enumerated, mut examples) = (0usize, 0usize);
    for (hashes, values, residual) in window.newest_first() {
        if enumerated >= budget {
            break;
        }
        examples += 1;
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
    examples
}

/// Picks up to `s` new parents among the candidates of the remembered examples (see the module
/// docs), as (monomial, identity key), best first.
pub fn choose(
    parents: &ParentSet,
    window: &Window,
    selection: &Selection,
    s: usize,
    budget: usize,
    weights: &impl SlotWeights,
) -> Vec<(Monomial, u64)> {
    if s == 0 {
        return Vec::new();
    }
    selection.ranking.visit(Choose { parents, window, selection, s, budget, weights })
}

/// [`choose`]'s arguments, run with the selection's ranking type.
struct Choose<'a, W: SlotWeights> {
    parents: &'a ParentSet,
    window: &'a Window,
    selection: &'a Selection,
    s: usize,
    budget: usize,
    weights: &'a W,
}

impl<W: SlotWeights> RankingVisitor for Choose<'_, W> {
    type Output = Vec<(Monomial, u64)>;

    fn visit<R: RankingRule>(self) -> Self::Output {
        let Choose { parents, window, selection, s, budget, weights } = self;
        let by_ranking = if selection.fallback { s - 1 } else { s };
        let mut best = Best::new(by_ranking);
        // The fall-back's pick is the smallest candidate by order not already chosen: keep the
        // s smallest (score 0 for all, so that `Best` ranks by order alone).
        let mut smallest = Best::new(if selection.fallback { s } else { 0 });
        let magnitudes = Magnitudes::of(window, weights);
        if R::NEEDS_OCCURRENCES {
            let mut stats: HashMap<u64, Occurrences, KeyHasher> = HashMap::default();
            let visit = |key: u64, slot: u64, factors: &[u64], v: f32, r: f32| {
                let (v, r) = (f64::from(v), f64::from(r));
                let entry = stats.entry(key).or_insert_with(|| Occurrences {
                    residual_dot: 0.0,
                    sum_squares: 0.0,
                    occurrences: 0,
                    slot,
                    first: Ranked::new(0.0, key, factors),
                });
                entry.residual_dot += r * v;
                entry.sum_squares += v * v;
                entry.occurrences += 1;
            };
            let examples = for_each_candidate(parents, window, selection, budget, visit);
            for c in stats.into_values().filter(|c| magnitudes.children_fit(c.first.factors())) {
                let candidate = Candidate {
                    slot: c.slot,
                    residual_dot: c.residual_dot,
                    sum_squares: c.sum_squares,
                    examples,
                    occurrences: c.occurrences,
                    power: c.first.factors().windows(2).any(|w| w[0] == w[1]),
                };
                let score = R::score(&candidate, weights);
                best.offer(Ranked::new(score, c.first.key, c.first.factors()));
                if smallest.k > 0 {
                    smallest.offer(c.first);
                }
            }
        } else {
            for_each_candidate(parents, window, selection, budget, |key, slot, factors, _, _| {
                let score = R::score(&Candidate { slot, ..Candidate::default() }, weights);
                let admitted = best.admits_score(score);
                if !(admitted || smallest.k > 0) || !magnitudes.children_fit(factors) {
                    return;
                }
                if admitted {
                    best.offer(Ranked::new(score, key, factors));
                }
                if smallest.k > 0 {
                    smallest.offer(Ranked::new(0.0, key, factors));
                }
            });
        }
        let mut chosen: Vec<(Monomial, u64)> =
            best.items.iter().map(|r| (r.monomial(), r.key)).collect();
        if let Some(r) = smallest.items.iter().find(|r| !best.keys.contains(&r.key)) {
            chosen.push((r.monomial(), r.key));
        }
        chosen
    }
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
        ranking: Ranking::Magnitude,
        identity: Identity::Canonical,
        fallback: false,
        max_degree: 6,
    };
    const MAX: Selection = Selection { ranking: Ranking::MaxMagnitude, ..MAG };

    /// Weights `|w| = magnitude(slot)`, normalizer `normalizer(slot)`.
    struct Weights<M, N>(M, N);

    impl<M: Fn(u64) -> f64, N: Fn(u64) -> f64> SlotWeights for Weights<M, N> {
        fn magnitude(&self, slot_hash: u64) -> f64 {
            self.0(slot_hash)
        }
        fn normalizer(&self, slot_hash: u64) -> f64 {
            self.1(slot_hash)
        }
    }

    fn unit(magnitude: impl Fn(u64) -> f64) -> Weights<impl Fn(u64) -> f64, impl Fn(u64) -> f64> {
        Weights(magnitude, |_| 1.0)
    }

    fn factors(chosen: &[(Monomial, u64)]) -> Vec<Vec<u64>> {
        chosen.iter().map(|m| m.0.factors().to_vec()).collect()
    }

    #[test]
    fn max_magnitude_picks_the_largest_weights_with_deterministic_ties() {
        let parents = ParentSet::new();
        // Feature 3 occurs twice: one candidate.
        let w = window_of(&[(&[1, 2, 3], &[1.0, 1.0, 1.0], 0.0), (&[3, 4], &[1.0, 1.0], 0.0)]);
        // slot hash of a base feature is its hash: score 4 -> 1.0, 2 and 3 tie at 0.5.
        let score = unit(|h: u64| match h {
            4 => 1.0,
            2 | 3 => 0.5,
            _ => 0.1,
        });
        let got = choose(&parents, &w, &MAX, 3, 1000, &score);
        assert_eq!(factors(&got), vec![vec![4], vec![2], vec![3]]);
        let all = choose(&parents, &w, &MAX, 10, 1000, &score);
        assert_eq!(factors(&all), vec![vec![4], vec![2], vec![3], vec![1]], "each once");
        let fb = Selection { fallback: true, ..MAX };
        let got = choose(&parents, &w, &fb, 2, 1000, &score);
        assert_eq!(factors(&got), vec![vec![4], vec![1]], "fall-back adds the smallest-degree");
        // The fall-back's candidate is never one the ranking chose.
        let got = choose(&parents, &w, &fb, 2, 1000, &unit(|h| if h == 1 { 9.0 } else { 0.0 }));
        assert_eq!(factors(&got), vec![vec![1], vec![2]]);
    }

    #[test]
    fn magnitude_weighs_the_weight_by_the_monomials_rms() {
        // Over 4 examples: x1 = 1 always (|w| 0.5: score 0.5), x2 = 1 once (|w| 0.8, rms 1/2:
        // 0.4), x3 = 0.1 always (|w| 3, rms 0.1: 0.3). Vowpal Wabbit's |w|·max|x| ranks the
        // rare x2 first and the small-valued x3 (0.3) as high as its weight says.
        let rows: [(&[u64], &[f32], f32); 4] = [
            (&[1, 2, 3], &[1.0, 1.0, 0.1], 0.0),
            (&[1, 3], &[1.0, 0.1], 0.0),
            (&[1, 3], &[1.0, 0.1], 0.0),
            (&[1, 3], &[-1.0, -0.1], 0.0),
        ];
        let w = window_of(&rows);
        let magnitude = |h: u64| [0.0, 0.5, 0.8, 3.0][h as usize];
        let max_abs = |h: u64| if h == 3 { 0.1 } else { 1.0 };
        let weights = Weights(magnitude, max_abs);
        let got = choose(&ParentSet::new(), &w, &MAG, 3, 1000, &weights);
        assert_eq!(factors(&got), vec![vec![1], vec![2], vec![3]]);
        let got = choose(&ParentSet::new(), &w, &MAX, 3, 1000, &weights);
        assert_eq!(factors(&got), vec![vec![2], vec![1], vec![3]]);
        // Only the newest 2 examples within the budget: x2 is not among them.
        let got = choose(&ParentSet::new(), &w, &MAG, 3, 3, &weights);
        assert_eq!(factors(&got), vec![vec![1], vec![3]]);
    }

    #[test]
    fn nan_scores_rank_last() {
        let w = window_of(&[(&[1, 2], &[1.0, 1.0], 0.0)]);
        let weights = unit(|h| if h == 1 { f64::NAN } else { 0.5 });
        for selection in [MAG, MAX] {
            let got = choose(&ParentSet::new(), &w, &selection, 1, 1000, &weights);
            assert_eq!(factors(&got), vec![vec![2]]);
        }
    }

    #[test]
    fn candidates_whose_children_could_overflow_are_never_chosen() {
        let parents = ParentSet::new();
        // Largest |x| 1e9 (feature 1): feature 1's children reach 1e18 and feature 2's
        // (3e8) 3e17, both beyond CHILD_LIMIT; features 3 (1) and 4 (2) stay candidates.
        let w = window_of(&[(&[1, 4], &[1.0, 2.0], 0.5), (&[1, 2, 3], &[1e9, 3e8, 1.0], 0.5)]);
        let by_hash = unit(|h: u64| h as f64);
        // The learner's normalizer (largest |x| over every learned example) counts too:
        // feature 4 once had 1e9 though the remembered examples show 2.
        let normalized = Weights(|h: u64| h as f64, |h: u64| if h == 4 { 1e9 } else { 1.0 });
        for ranking in [Ranking::MaxMagnitude, Ranking::Magnitude, Ranking::Typical] {
            for fallback in [false, true] {
                let selection = Selection { ranking, fallback, ..MAG };
                let mut got = factors(&choose(&parents, &w, &selection, 4, 1000, &by_hash));
                got.sort();
                assert_eq!(got, vec![vec![3], vec![4]], "{ranking:?}, fall-back {fallback}");
                let got = factors(&choose(&parents, &w, &selection, 4, 1000, &normalized));
                assert_eq!(got, vec![vec![3]], "{ranking:?}, fall-back {fallback}");
            }
        }
    }

    #[test]
    fn parents_and_max_degree_monomials_are_not_candidates() {
        let mut parents = ParentSet::new();
        parents.insert(Monomial::new(vec![1]), 1);
        let w = window_of(&[(&[1, 2], &[2.0, 3.0], 1.0)]);
        let ones = unit(|_| 1.0);
        let mut got = factors(&choose(&parents, &w, &MAG, 10, 1000, &ones));
        got.sort();
        assert_eq!(got, vec![vec![1, 1], vec![1, 2], vec![2]]);
        let low = Selection { max_degree: 2, ..MAG };
        let got = choose(&parents, &w, &low, 10, 1000, &ones);
        assert_eq!(factors(&got), vec![vec![2]], "degree-2 monomials cannot be parents");
        let one = Selection { max_degree: 1, ..MAG };
        assert!(choose(&parents, &w, &one, 10, 1000, &ones).is_empty());
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
        let ssm = Selection { ranking: Ranking::Ssm, ..MAG };
        let got = choose(&ParentSet::new(), &w, &ssm, 1, 1000, &unit(|_| 0.0));
        assert_eq!(factors(&got), vec![vec![2]]);
        let fb = Selection { fallback: true, ..ssm };
        let got = choose(&ParentSet::new(), &w, &fb, 2, 1000, &unit(|_| 0.0));
        assert_eq!(factors(&got), vec![vec![2], vec![1]]);
    }

    /// Brute force of the magnitude choices (all values 1): every candidate once, scored by
    /// `score(slot)` (times sqrt(rows containing it / rows) for the RMS-weighted magnitude),
    /// sorted by (score desc, order).
    fn brute_force(
        parents: &ParentSet,
        rows: &[Vec<u64>],
        max_degree: usize,
        s: usize,
        score: impl Fn(u64) -> f64,
        rms: bool,
    ) -> Vec<Vec<u64>> {
        // Rows containing each monomial (the walk emits each once per row).
        let mut all: HashMap<u64, (Vec<u64>, usize)> = HashMap::new();
        for hashes in rows {
            for factors in crate::apple::walk::tests::walk(parents, hashes, max_degree).into_keys()
            {
                all.entry(key_of(&factors)).or_insert((factors, 0)).1 += 1;
            }
        }
        let mut ranked: Vec<(f64, Vec<u64>)> = all
            .into_iter()
            .filter(|(key, (f, _))| f.len() < max_degree && !parents.contains(*key))
            .map(|(_, (f, count))| {
                let w = score(Monomial::new(f.clone()).slot_hash());
                let scale = if rms { (count as f64 / rows.len() as f64).sqrt() } else { 1.0 };
                (w * scale, f)
            })
            .collect();
        ranked.sort_by(|a, b| {
            b.0.total_cmp(&a.0).then(a.1.len().cmp(&b.1.len())).then(a.1.cmp(&b.1))
        });
        ranked.into_iter().take(s).map(|(_, f)| f).collect()
    }

    proptest! {
        /// Both magnitude rankings equal sorting every distinct candidate, with repeated
        /// monomials across rows, parents of several degrees and tied scores.
        #[test]
        fn choice_equals_brute_force(
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
            for (ranking, rms) in [(Ranking::MaxMagnitude, false), (Ranking::Magnitude, true)] {
                let selection = Selection { max_degree, ranking, ..MAG };
                let got = choose(&parents, &window, &selection, s, usize::MAX, &unit(score));
                prop_assert_eq!(factors(&got), brute_force(&parents, &rows, max_degree, s, score, rms));
            }
        }
    }
}
