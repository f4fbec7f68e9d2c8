//! Per-example enumeration of apple's feature set S: the base features plus `m·x_i` for every
//! parent `m` present in the example and every base feature `x_i`, recursively (a child that is
//! itself a parent is expanded too). Cost: nnz + (parents present)·nnz.
//!
//! ## Each monomial once
//! A child `c` can often be reached from several parents (`x_a·x_b` from `x_a` and from `x_b`
//! when both are parents). With canonical identity that must still be one feature, emitted once.
//! Rule: `c` is emitted from the decomposition `c = m·x_i` whose removed factor `x_i` is the
//! *largest* (by position in the example) factor of `c` such that `c / x_i` is a parent. Walking
//! parent `m` with base feature `x_i`, the child is emitted unless some distinct factor `x_j` of
//! `m` with `j > i` has `c / x_j` in the parent set; for `i` at or after `m`'s last factor no
//! check is needed, so the common case is a plain loop. Every parent whose factors are all in the
//! example is itself emitted (it was chosen from S, so one of its divisors is a parent), hence
//! the owning decomposition is always walked.

use super::monomial::{mix, Identity};
use super::parents::ParentSet;
use crate::learner::expansion::INTERACTION_PRIME;

/// Highest supported monomial degree.
pub const MAX_DEGREE: usize = 8;

/// A monomial of the current example: identity key, slot hash (`super::monomial::slot_hash`),
/// value, degree and factor positions (indices into the example's feature set, ascending; the
/// feature set is sorted by hash, so this is also increasing hash order).
#[derive(Clone, Copy, Debug)]
pub struct Node {
    pub key: u64,
    pub slot: u64,
    pub value: f32,
    pub degree: u8,
    pub factors: [u32; MAX_DEGREE],
}

impl Node {
    fn base(i: usize, key: u64, hash: u64, value: f32) -> Self {
        let mut factors = [0; MAX_DEGREE];
        factors[0] = i as u32;
        Node { key, slot: hash, value, degree: 1, factors }
    }

    /// Factor positions, ascending.
    pub fn positions(&self) -> &[u32] {
        &self.factors[..usize::from(self.degree)]
    }

    /// The node `self·x_i`, given its key, slot hash and value.
    fn child(&self, i: usize, key: u64, slot: u64, value: f32) -> Self {
        let d = usize::from(self.degree);
        let mut factors = self.factors;
        let at = self.positions().partition_point(|&p| p <= i as u32);
        factors.copy_within(at..d, at + 1);
        factors[at] = i as u32;
        Node { key, slot, value, degree: self.degree + 1, factors }
    }

    /// Slot hash of `self·x_i` when `x_i` comes at or after every factor: one step.
    #[inline(always)]
    fn slot_after(&self, hash_i: u64) -> u64 {
        self.slot.wrapping_mul(INTERACTION_PRIME) ^ hash_i
    }

    /// Slot hash of `self·x_i` for any `i`: the chain over the merged, sorted factors.
    fn slot_with(&self, i: usize, hashes: &[u64]) -> u64 {
        let mut inserted = false;
        let mut chain: Option<u64> = None;
        let mut step = |h: u64| {
            chain = Some(chain.map_or(h, |c| c.wrapping_mul(INTERACTION_PRIME) ^ h));
        };
        for &p in self.positions() {
            if !inserted && i as u32 <= p {
                step(hashes[i]);
                inserted = true;
            }
            step(hashes[p as usize]);
        }
        if !inserted {
            step(hashes[i]);
        }
        chain.unwrap_or(0)
    }
}

/// Reused buffers of a walk.
#[derive(Clone, Debug, Default)]
pub struct WalkScratch {
    mixes: Vec<u64>,
    base_is_parent: Vec<bool>,
    stack: Vec<Node>,
}

/// Receives the product monomials of a walk.
pub trait ChildSink {
    /// The child `parent·x_i` with identity `key`, slot hash `slot` and value `value`.
    fn child(&mut self, parent: &Node, i: usize, key: u64, slot: u64, value: f32);

    /// The children `parent·x_i` for every `i >= from` (all emitted, in order): a hook for
    /// sinks that can write them in bulk. `hashes[i]` / `mixes[i]` are base feature `i`'s hash
    /// and key term; such a child's slot hash is `parent.slot · P ^ hashes[i]`.
    fn children_from(
        &mut self,
        parent: &Node,
        from: usize,
        hashes: &[u64],
        mixes: &[u64],
        values: &[f32],
    ) {
        for i in from..mixes.len() {
            let key = parent.key.wrapping_add(mixes[i]);
            self.child(parent, i, key, parent.slot_after(hashes[i]), parent.value * values[i]);
        }
    }
}

impl<F: FnMut(&Node, usize, u64, u64, f32)> ChildSink for F {
    fn child(&mut self, parent: &Node, i: usize, key: u64, slot: u64, value: f32) {
        self(parent, i, key, slot, value)
    }
}

/// Walks the children of one example (see the module docs): gives `sink` every product
/// monomial of S once, as `parent·x_i`. Base features are not passed to `sink` (callers take
/// them from `hashes` / `values`). `max_degree` caps the degree of emitted monomials
/// (<= [`MAX_DEGREE`]).
pub fn walk_children<S: ChildSink>(
    parents: &ParentSet,
    max_degree: usize,
    identity: Identity,
    hashes: &[u64],
    values: &[f32],
    scratch: &mut WalkScratch,
    sink: &mut S,
) {
    let max_degree = max_degree.min(MAX_DEGREE);
    if parents.is_empty() || max_degree < 2 {
        return;
    }
    if identity == Identity::Path {
        walk_paths(parents, max_degree, hashes, values, scratch, sink);
        return;
    }
    let n = hashes.len();
    let WalkScratch { mixes, base_is_parent, stack } = scratch;
    mixes.clear();
    mixes.extend(hashes.iter().map(|&h| mix(h)));
    base_is_parent.clear();
    base_is_parent.extend(mixes.iter().map(|&key| parents.contains(key)));
    stack.clear();
    for i in (0..n).rev() {
        if base_is_parent[i] {
            stack.push(Node::base(i, mixes[i], hashes[i], values[i]));
        }
    }
    while let Some(node) = stack.pop() {
        let degree = usize::from(node.degree);
        let child_can_be_parent = degree + 1 < max_degree && parents.has_degree(degree + 1);
        let last = node.factors[degree - 1] as usize;
        // Before the node's last factor a child may belong to another parent.
        for i in 0..last {
            let key = node.key.wrapping_add(mixes[i]);
            let owned = if degree == 1 {
                // The only other decomposition is x_i · (this node's factor).
                base_is_parent[i]
            } else {
                owned_elsewhere(parents, &node, i, key, mixes)
            };
            if owned {
                continue;
            }
            let value = node.value * values[i];
            let slot = if degree == 1 {
                hashes[i].wrapping_mul(INTERACTION_PRIME) ^ node.slot
            } else {
                node.slot_with(i, hashes)
            };
            sink.child(&node, i, key, slot, value);
            if child_can_be_parent && parents.contains(key) {
                stack.push(node.child(i, key, slot, value));
            }
        }
        // From it on every child is this node's.
        sink.children_from(&node, last, hashes, mixes, values);
        if child_can_be_parent {
            for i in last..n {
                let key = node.key.wrapping_add(mixes[i]);
                if parents.contains(key) {
                    let slot = node.slot_after(hashes[i]);
                    stack.push(node.child(i, key, slot, node.value * values[i]));
                }
            }
        }
    }
}

/// [`Identity::Path`]: every parent present times every base feature, keyed and slotted by the
/// path's hash chain `slot(m)·P ^ h_i` (Vowpal Wabbit's `--stage_poly`); a monomial reachable
/// along several paths is emitted once per path.
fn walk_paths<S: ChildSink>(
    parents: &ParentSet,
    max_degree: usize,
    hashes: &[u64],
    values: &[f32],
    scratch: &mut WalkScratch,
    sink: &mut S,
) {
    let n = hashes.len();
    let stack = &mut scratch.stack;
    stack.clear();
    for i in (0..n).rev() {
        if parents.contains(hashes[i]) {
            stack.push(Node::base(i, hashes[i], hashes[i], values[i]));
        }
    }
    while let Some(node) = stack.pop() {
        let degree = usize::from(node.degree);
        let child_can_be_parent = degree + 1 < max_degree && parents.has_degree(degree + 1);
        for i in 0..n {
            let slot = node.slot_after(hashes[i]);
            let value = node.value * values[i];
            sink.child(&node, i, slot, slot, value);
            if child_can_be_parent && parents.contains(slot) {
                stack.push(node.child(i, slot, slot, value));
            }
        }
    }
}

/// Whether `node·x_i` (identity `key`) is emitted from another parent: some distinct factor
/// `x_j` of `node` with `j > i` leaves a parent when removed.
#[inline]
fn owned_elsewhere(parents: &ParentSet, node: &Node, i: usize, key: u64, mixes: &[u64]) -> bool {
    let mut previous = u32::MAX;
    for &j in node.positions().iter().rev() {
        if (j as usize) <= i {
            break;
        }
        if j != previous && parents.contains(key.wrapping_sub(mixes[j as usize])) {
            return true;
        }
        previous = j;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apple::monomial::{key_of, slot_hash, Monomial};
    use proptest::prelude::*;
    use std::collections::{BTreeMap, BTreeSet};

    /// Brute force of S: closure of the base features under "parent times base feature".
    fn brute_force(parents: &[Vec<u64>], hashes: &[u64], max_degree: usize) -> BTreeSet<Vec<u64>> {
        let parent_set: BTreeSet<Vec<u64>> =
            parents.iter().map(|p| Monomial::new(p.clone()).factors().to_vec()).collect();
        let mut s: BTreeSet<Vec<u64>> = hashes.iter().map(|&h| vec![h]).collect();
        loop {
            let mut grown = s.clone();
            for m in &s {
                if parent_set.contains(m) && m.len() < max_degree {
                    for &h in hashes {
                        let mut c = m.clone();
                        c.push(h);
                        c.sort_unstable();
                        grown.insert(c);
                    }
                }
            }
            if grown.len() == s.len() {
                return s;
            }
            s = grown;
        }
    }

    fn walk(parents: &ParentSet, hashes: &[u64], max_degree: usize) -> BTreeMap<Vec<u64>, usize> {
        let values: Vec<f32> = hashes.iter().map(|&h| (h % 7 + 1) as f32).collect();
        let mut seen = BTreeMap::new();
        for &h in hashes {
            *seen.entry(vec![h]).or_insert(0) += 1;
        }
        let mut scratch = WalkScratch::default();
        walk_children(
            parents,
            max_degree,
            Identity::Canonical,
            hashes,
            &values,
            &mut scratch,
            &mut |node: &Node, i: usize, key: u64, slot: u64, value: f32| {
                let mut factors: Vec<u64> =
                    node.positions().iter().map(|&p| hashes[p as usize]).collect();
                factors.push(hashes[i]);
                factors.sort_unstable();
                assert_eq!(key, key_of(&factors));
                assert_eq!(slot, slot_hash(&factors));
                let expected: f32 = factors.iter().map(|&h| (h % 7 + 1) as f32).product();
                assert_eq!(value, expected);
                *seen.entry(factors).or_insert(0) += 1;
            },
        );
        seen
    }

    proptest! {
        /// Every monomial of S exactly once, for random parent sets closed the way apple builds
        /// them (each parent of degree >= 2 has a parent divisor).
        #[test]
        fn walk_emits_each_monomial_of_s_once(
            base in proptest::collection::btree_set(0u64..12, 1..9),
            picks in proptest::collection::vec((0usize..64, 0usize..12), 0..12),
            max_degree in 2usize..6,
        ) {
            let hashes: Vec<u64> = base.iter().copied().collect();
            let mut set = ParentSet::new();
            let mut chosen: Vec<Vec<u64>> = Vec::new();
            for (pick, extra) in picks {
                // Either a base feature or a child of an existing parent (as apple grows).
                let candidate = if chosen.is_empty() || pick % 3 == 0 {
                    vec![hashes[pick % hashes.len()]]
                } else {
                    let mut c = chosen[pick % chosen.len()].clone();
                    c.push(hashes[extra % hashes.len()]);
                    c
                };
                if candidate.len() < max_degree {
                    let m = Monomial::new(candidate);
                    if set.insert(m.clone(), 1) {
                        chosen.push(m.factors().to_vec());
                    }
                }
            }
            let seen = walk(&set, &hashes, max_degree);
            let expected = brute_force(&chosen, &hashes, max_degree);
            prop_assert!(seen.values().all(|&c| c == 1), "a monomial emitted twice: {:?}", seen);
            prop_assert_eq!(seen.keys().cloned().collect::<BTreeSet<_>>(), expected);
        }
    }

    #[test]
    fn two_parents_share_their_product() {
        let mut set = ParentSet::new();
        set.insert(Monomial::new(vec![10]), 1);
        set.insert(Monomial::new(vec![20]), 1);
        let seen = walk(&set, &[10, 20, 30], 6);
        assert_eq!(seen.get(&vec![10, 20]), Some(&1));
        assert_eq!(seen.len(), 3 + 3 + 3 - 1);
    }

    #[test]
    fn max_degree_stops_the_recursion() {
        let mut set = ParentSet::new();
        set.insert(Monomial::new(vec![1]), 1);
        set.insert(Monomial::new(vec![1, 1]), 2);
        assert!(walk(&set, &[1, 2], 2).keys().all(|m| m.len() <= 2));
        assert!(walk(&set, &[1, 2], 3).contains_key(&vec![1, 1, 2]));
    }
}
