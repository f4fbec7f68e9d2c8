//! Per-example enumeration of apple's feature set S: the base features plus `m·x_i` for every
//! parent `m` present in the example and every base feature `x_i`, recursively (a child that is
//! itself a parent is expanded too). Cost: nnz + (parents present)·nnz.
//!
//! ## Each monomial once
//! A child `c` can often be reached from several parents (`x_a·x_b` from `x_a` and from `x_b`
//! when both are parents). With canonical identity that must still be one feature, emitted once.
//! Rule: `c` is emitted from the decomposition `c = m·x_i` whose removed factor `x_i` is the
//! *largest* factor of `c` (by hash; the example is sorted by hash) such that `c / x_i` is a
//! parent. Every parent whose factors are all in the example is itself emitted (it was chosen
//! from S, so one of its divisors is a parent), hence the owning decomposition is always walked.
//!
//! Which children of `m` are owned elsewhere, and which are parents to walk next, depends only on
//! the parent set: [`ParentSet::owned`] and [`ParentSet::grow`] list them, sorted, so a walk
//! merges them with the example's sorted features and makes no lookup per generated feature. For
//! `x_i` at or after `m`'s largest factor nothing is owned elsewhere and the slot hash is one
//! step, `term(m)·P ^ h_i`: that run is written in bulk ([`ChildSink::children_from`]). Before
//! it, a child's slot costs an add and a multiply (`super::monomial` has the slot scheme).

use super::monomial::{mix, spread, Identity};
use super::parents::ParentSet;
use crate::learner::expansion::INTERACTION_PRIME;

/// Highest supported monomial degree.
pub const MAX_DEGREE: usize = 8;

/// A parent present in the current example, being walked: its identity key, slot term
/// ([`super::monomial::term`]; for [`Identity::Path`] its path's slot hash), value in this
/// example, degree and index in [`ParentSet::parents`] (whose monomial holds its sorted factor
/// hashes).
#[derive(Clone, Copy, Debug)]
pub struct Node {
    pub key: u64,
    pub term: u64,
    pub value: f32,
    pub degree: u8,
    pub parent: u32,
    /// Position in the example of the largest factor.
    pub last: u32,
}

impl Node {
    /// Slot hash of `self·x_i` when `x_i` comes at or after every factor: one step.
    #[inline(always)]
    fn slot_after(&self, hash_i: u64) -> u64 {
        self.term.wrapping_mul(INTERACTION_PRIME) ^ hash_i
    }

    /// Sorted factor hashes of the child `self·x` into `out`; returns the child's degree.
    pub fn child_factors(&self, parents: &ParentSet, x: u64, out: &mut [u64; MAX_DEGREE]) -> usize {
        let factors = parents.parents()[self.parent as usize].monomial.factors();
        let at = factors.partition_point(|&f| f <= x);
        out[..at].copy_from_slice(&factors[..at]);
        out[at] = x;
        out[at + 1..=factors.len()].copy_from_slice(&factors[at..]);
        factors.len() + 1
    }
}

/// Reused buffers of a walk.
#[derive(Clone, Debug, Default)]
pub struct WalkScratch {
    mixes: Vec<u64>,
    /// Whether base feature i is a degree-1 parent (which owns its products with larger ones).
    is_root: Vec<bool>,
    stack: Vec<Node>,
}

/// Receives the product monomials of a walk.
pub trait ChildSink {
    /// The child `parent·x_i` with identity `key`, slot hash `slot` and value `value`.
    fn child(&mut self, parent: &Node, i: usize, key: u64, slot: u64, value: f32);

    /// The children `parent·x_i` for every `i >= from` (all emitted, in order): a hook for
    /// sinks that can write them in bulk. `hashes[i]` / `mixes[i]` are base feature `i`'s hash
    /// and key term; such a child's slot hash is `parent.term · P ^ hashes[i]`.
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
/// them from `hashes` / `values`). `hashes` must be sorted and distinct. `max_degree` caps the
/// degree of emitted monomials (<= [`MAX_DEGREE`]).
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
    let WalkScratch { mixes, is_root, stack } = scratch;
    mixes.clear();
    mixes.extend(hashes.iter().map(|&h| mix(h)));
    stack.clear();
    // The degree-1 parents present (one merge of two sorted lists), pushed so that they pop in
    // increasing order.
    is_root.clear();
    is_root.resize(hashes.len(), false);
    for_each_common(hashes, parents.roots(), |i, parent| {
        is_root[i] = true;
        let (key, term, value, last) = (mixes[i], hashes[i], values[i], i as u32);
        stack.push(Node { key, term, value, degree: 1, parent, last });
    });
    stack.reverse();
    while let Some(node) = stack.pop() {
        let degree = usize::from(node.degree);
        if degree + 1 > max_degree {
            continue;
        }
        let (grow, owned) = (parents.grow(node.parent), parents.owned(node.parent));
        let split = node.last as usize;
        let mut grow_cursor = Cursor::new(grow, |&(x, _)| x);
        // Before the largest factor: skip children owned elsewhere; x_i joins the slot term.
        // Zipped slices of the same length: no bounds check per child. The two loops differ in
        // the ownership test and the term only; one loop with those as branches or closures
        // cost 10-21% more walk instructions (callgrind, a9a / mushrooms / splice).
        let before = hashes[..split].iter().zip(&mixes[..split]).zip(&values[..split]);
        if degree == 1 {
            // x_i·x_a with i < a: owned by x_i when it is a parent; slot h_i·P ^ h_a.
            for (i, (((&h, &mix), &x), &root)) in before.zip(&is_root[..split]).enumerate() {
                if root {
                    continue;
                }
                let key = node.key.wrapping_add(mix);
                let slot = h.wrapping_mul(INTERACTION_PRIME) ^ node.term;
                let value = node.value * x;
                sink.child(&node, i, key, slot, value);
                if let Some(&(_, parent)) = grow_cursor.find(h) {
                    let (term, degree, last) = (spread(key), 2, node.last);
                    stack.push(Node { key, term, value, degree, parent, last });
                }
            }
        } else {
            // x_i·(the factors but the largest) has the slot term, the largest the last step.
            let (largest, others) = (hashes[split], node.key.wrapping_sub(mixes[split]));
            let mut owned_cursor = Cursor::new(owned, |&x| x);
            for (i, ((&h, &mix), &x)) in before.enumerate() {
                if owned_cursor.find(h).is_some() {
                    continue;
                }
                let slot =
                    spread(others.wrapping_add(mix)).wrapping_mul(INTERACTION_PRIME) ^ largest;
                let key = node.key.wrapping_add(mix);
                let value = node.value * x;
                sink.child(&node, i, key, slot, value);
                if let Some(&(_, parent)) = grow_cursor.find(h) {
                    let (term, degree, last) = (spread(key), node.degree + 1, node.last);
                    stack.push(Node { key, term, value, degree, parent, last });
                }
            }
        }
        // From it on every child is this node's.
        sink.children_from(&node, split, hashes, mixes, values);
        let largest = hashes[split];
        let g = seek(grow, grow_cursor.at, |&(x, _)| x < largest);
        for_each_common(&hashes[split..], &grow[g..], |j, parent| {
            let i = split + j;
            let key = node.key.wrapping_add(mixes[i]);
            stack.push(Node {
                key,
                term: spread(key),
                value: node.value * values[i],
                degree: node.degree + 1,
                parent,
                last: i as u32,
            });
        });
    }
}

/// A position in a sorted list, looked up with increasing keys: a key below the next entry's
/// (the common case: most features are not in the list) costs one comparison.
struct Cursor<'a, T, K: Fn(&T) -> u64> {
    list: &'a [T],
    key: K,
    at: usize,
    next: u64,
}

impl<'a, T, K: Fn(&T) -> u64> Cursor<'a, T, K> {
    #[inline(always)]
    fn new(list: &'a [T], key: K) -> Self {
        let next = list.first().map_or(u64::MAX, &key);
        Cursor { list, key, at: 0, next }
    }

    /// The entry with key `h`, if any; `h` must not decrease between calls.
    #[inline(always)]
    fn find(&mut self, h: u64) -> Option<&'a T> {
        if h < self.next {
            return None;
        }
        let key = &self.key;
        self.at = seek(self.list, self.at, |x| key(x) < h);
        let entry = self.list.get(self.at);
        self.next = entry.map_or(u64::MAX, key);
        entry.filter(|_| self.next == h)
    }
}

/// The first index `>= from` at which `before` is false (`list` must be partitioned by
/// `before`): a few linear steps, then a binary search, so a seek far along a long list costs
/// O(log) rather than its length.
#[inline(always)]
fn seek<T>(list: &[T], from: usize, before: impl Fn(&T) -> bool) -> usize {
    let end = list.len().min(from + 4);
    if let Some(step) = list[from..end].iter().position(|x| !before(x)) {
        return from + step;
    }
    end + list[end..].partition_point(before)
}

/// Calls `found(i, index)`, in increasing `i`, for every `hashes[i]` that is the hash of an
/// entry `(hash, index)` of `entries` (both sorted). Lists of similar length are merged in one
/// step per element; when one is much longer (a sparse example against many parents, or a dense
/// one against a short list) the shorter is walked and the longer searched.
#[inline]
fn for_each_common(hashes: &[u64], entries: &[(u64, u32)], mut found: impl FnMut(usize, u32)) {
    /// Length ratio beyond which searching beats merging.
    const SEARCH_RATIO: usize = 8;
    if entries.len() > SEARCH_RATIO * hashes.len() {
        let mut e = 0;
        for (i, &h) in hashes.iter().enumerate() {
            e = seek(entries, e, |&(x, _)| x < h);
            match entries.get(e) {
                Some(&(x, index)) if x == h => found(i, index),
                Some(_) => {}
                None => return,
            }
        }
    } else if hashes.len() > SEARCH_RATIO * entries.len() {
        let mut i = 0;
        for &(x, index) in entries {
            i = seek(hashes, i, |&h| h < x);
            match hashes.get(i) {
                Some(&h) if h == x => found(i, index),
                Some(_) => {}
                None => return,
            }
        }
    } else {
        let mut rest = entries.iter().peekable();
        for (i, &h) in hashes.iter().enumerate() {
            while rest.next_if(|&&(x, _)| x < h).is_some() {}
            match rest.peek() {
                Some(&&(x, index)) if x == h => found(i, index),
                Some(_) => {}
                None => return,
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
        if let Some(parent) = parents.index_of(hashes[i]) {
            let (key, term, value, last) = (hashes[i], hashes[i], values[i], i as u32);
            stack.push(Node { key, term, value, degree: 1, parent, last });
        }
    }
    while let Some(node) = stack.pop() {
        let degree = usize::from(node.degree);
        if degree + 1 > max_degree {
            continue;
        }
        let child_can_be_parent = degree + 1 < max_degree && parents.has_degree(degree + 1);
        for i in 0..n {
            let slot = node.slot_after(hashes[i]);
            let value = node.value * values[i];
            sink.child(&node, i, slot, slot, value);
            if child_can_be_parent {
                if let Some(parent) = parents.index_of(slot) {
                    let (degree, last) = (node.degree + 1, node.last.max(i as u32));
                    stack.push(Node { key: slot, term: slot, value, degree, parent, last });
                }
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
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

    /// The walk over one example (base features `hashes`), checked entry by entry against the
    /// monomial's key, slot and value: each monomial's factors with the times it was emitted.
    pub(crate) fn walk(
        parents: &ParentSet,
        hashes: &[u64],
        max_degree: usize,
    ) -> BTreeMap<Vec<u64>, usize> {
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
                let mut buffer = [0u64; MAX_DEGREE];
                let d = node.child_factors(parents, hashes[i], &mut buffer);
                let factors = buffer[..d].to_vec();
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

    proptest! {
        /// The merge and both searching branches find exactly the common hashes, in order.
        #[test]
        fn common_entries_equal_brute_force(
            hashes in proptest::collection::btree_set(0u64..400, 0..60),
            entries in proptest::collection::btree_set(0u64..400, 0..60),
        ) {
            let hashes: Vec<u64> = hashes.into_iter().collect();
            let entries: Vec<(u64, u32)> = entries.into_iter().map(|x| (x, x as u32 + 1)).collect();
            let mut found = Vec::new();
            for_each_common(&hashes, &entries, |i, index| found.push((i, index)));
            let expected: Vec<(usize, u32)> = hashes
                .iter()
                .enumerate()
                .filter_map(|(i, &h)| entries.iter().find(|e| e.0 == h).map(|e| (i, e.1)))
                .collect();
            prop_assert_eq!(found, expected);
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
