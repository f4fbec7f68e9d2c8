//! The parent set: monomials that have been expanded, their identity lookup, and the links the
//! per-example walk ([`super::walk`]) follows.
//!
//! ## Lookup
//! The set is small (a few parents per expansion); the lookups need not be: a bit filter (64
//! bits per parent, indexed by the key's low bits; canonical keys are avalanche-mixed, see
//! [`super::monomial::mix`]) answers almost every "no" with one load and a bit test, and an
//! open-addressing table of at most 1/4 load, indexed by the key's top bits with linear probing,
//! confirms the rare "maybe" and gives the parent's index. Both stay in the L1/L2 cache.
//!
//! ## Links (canonical identity)
//! Whether a product `m·x` is itself a parent, and whether it belongs to another decomposition,
//! depends only on the parent set, not on the example. So after each change the set precomputes,
//! for every parent `m` (with factor hashes sorted):
//! * `grow(m)`: the `x` with `m·x` a parent (and that parent's index), sorted by `x`;
//! * `owned(m)`, for `m` of degree >= 2: the `x` such that `m·x` is emitted from another parent:
//!   some distinct factor `f > x` of `m` has `(m/f)·x` in the set (the walk emits a product
//!   from the decomposition that removes its largest factor leaving a parent, see
//!   [`super::walk`]); for a degree-1 `m` these are the smaller degree-1 parents, which the walk
//!   finds per example;
//! * `roots`: the degree-1 parents, sorted.
//!
//! The walk then merges these short sorted lists with the example's sorted features: no lookup
//! per generated feature.

use std::collections::HashMap;

use super::monomial::{key_of, mix, KeyHasher, Monomial};

/// One parent, the expansion (1, 2, ...) that added it, and its identity key (see
/// [`super::monomial::Identity`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parent {
    pub monomial: Monomial,
    pub expansion: u32,
    pub key: u64,
}

/// Per-parent lists of the walk (see the module docs), stored flat.
#[derive(Clone, Debug, Default)]
struct Links {
    roots: Vec<(u64, u32)>,
    /// `grow[grow_start[k]..grow_start[k + 1]]` is parent k's `grow` list.
    grow_start: Vec<u32>,
    grow: Vec<(u64, u32)>,
    owned_start: Vec<u32>,
    owned: Vec<u64>,
}

impl Links {
    fn build(parents: &[Parent]) -> Self {
        // divisors[key(q)] = the (x, index of q·x) over parents q·x of degree >= 2.
        let mut divisors: HashMap<u64, Vec<(u64, u32)>, KeyHasher> = HashMap::default();
        let mut roots = Vec::new();
        for (k, parent) in parents.iter().enumerate() {
            let factors = parent.monomial.factors();
            if factors.len() == 1 {
                roots.push((factors[0], k as u32));
                continue;
            }
            let key = key_of(factors);
            for x in distinct(factors) {
                divisors.entry(key.wrapping_sub(mix(x))).or_default().push((x, k as u32));
            }
        }
        roots.sort_unstable();
        for list in divisors.values_mut() {
            list.sort_unstable();
        }
        let mut links = Links { roots, ..Links::default() };
        let mut owned = Vec::new();
        for parent in parents {
            let factors = parent.monomial.factors();
            let key = key_of(factors);
            links.grow_start.push(links.grow.len() as u32);
            links.grow.extend(divisors.get(&key).into_iter().flatten().copied());
            owned.clear();
            // (A degree-1 parent's rivals are the smaller degree-1 parents: the walk knows
            // them per example.)
            for f in distinct(factors).filter(|_| factors.len() > 1) {
                let rivals = divisors.get(&key.wrapping_sub(mix(f))).into_iter().flatten();
                owned.extend(rivals.map(|&(x, _)| x).filter(|&x| x < f));
            }
            owned.sort_unstable();
            owned.dedup();
            links.owned_start.push(links.owned.len() as u32);
            links.owned.extend_from_slice(&owned);
        }
        links.grow_start.push(links.grow.len() as u32);
        links.owned_start.push(links.owned.len() as u32);
        links
    }
}

/// The distinct values of a sorted slice.
fn distinct(sorted: &[u64]) -> impl Iterator<Item = u64> + '_ {
    sorted.iter().enumerate().filter(|&(i, &x)| i == 0 || sorted[i - 1] != x).map(|(_, &x)| x)
}

/// The parents in the order they were added (see the module docs).
#[derive(Clone, Debug)]
pub struct ParentSet {
    parents: Vec<Parent>,
    /// Open-addressing key table; `EMPTY` marks a free cell (a parent whose key is `EMPTY`
    /// is recorded in `empty_key_index` instead). `index[c]` is the parent in cell `c`.
    table: Vec<u64>,
    index: Vec<u32>,
    /// `key >> shift` is a key's home cell.
    shift: u32,
    /// Bit `key & (64·filter.len() - 1)` is set for every parent key.
    filter: Vec<u64>,
    empty_key_index: Option<u32>,
    /// Number of parents of each degree (index = degree).
    by_degree: Vec<usize>,
    links: Links,
}

const EMPTY: u64 = 0;

impl Default for ParentSet {
    fn default() -> Self {
        ParentSet::new()
    }
}

impl PartialEq for ParentSet {
    fn eq(&self, other: &Self) -> bool {
        self.parents == other.parents
    }
}

impl ParentSet {
    pub fn new() -> Self {
        let mut set = ParentSet {
            parents: Vec::new(),
            table: Vec::new(),
            index: Vec::new(),
            shift: 0,
            filter: Vec::new(),
            empty_key_index: None,
            by_degree: Vec::new(),
            links: Links::default(),
        };
        set.rebuild();
        set
    }

    pub fn len(&self) -> usize {
        self.parents.len()
    }

    pub fn is_empty(&self) -> bool {
        self.parents.is_empty()
    }

    pub fn parents(&self) -> &[Parent] {
        &self.parents
    }

    /// Adds `monomial` by its canonical key (added by expansion `expansion`); false if it is a
    /// parent already.
    pub fn insert(&mut self, monomial: Monomial, expansion: u32) -> bool {
        let key = monomial.key();
        self.insert_keyed(monomial, key, expansion)
    }

    /// Adds `monomial` under identity key `key`; false if that key is a parent already.
    pub fn insert_keyed(&mut self, monomial: Monomial, key: u64, expansion: u32) -> bool {
        let added = self.add(monomial, key, expansion);
        if added {
            self.links = Links::build(&self.parents);
        }
        added
    }

    /// Adds several `(monomial, key)` at once (links are rebuilt once); returns how many were
    /// new.
    pub fn extend_keyed(
        &mut self,
        parents: impl IntoIterator<Item = (Monomial, u64)>,
        expansion: u32,
    ) -> usize {
        let added = parents.into_iter().filter(|(m, key)| self.add(m.clone(), *key, expansion));
        let added = added.count();
        if added > 0 {
            self.links = Links::build(&self.parents);
        }
        added
    }

    /// Adds saved parents (each with its own expansion and key), relinking once; fails on the
    /// first key listed twice.
    pub fn restore(&mut self, parents: impl IntoIterator<Item = Parent>) -> Result<(), Parent> {
        let mut result = Ok(());
        for parent in parents {
            if !self.add(parent.monomial.clone(), parent.key, parent.expansion) {
                result = Err(parent);
                break;
            }
        }
        self.links = Links::build(&self.parents);
        result
    }

    fn add(&mut self, monomial: Monomial, key: u64, expansion: u32) -> bool {
        if self.contains(key) {
            return false;
        }
        let degree = monomial.degree();
        if self.by_degree.len() <= degree {
            self.by_degree.resize(degree + 1, 0);
        }
        self.by_degree[degree] += 1;
        self.parents.push(Parent { monomial, expansion, key });
        if 4 * self.parents.len() > self.table.len() {
            self.rebuild();
        } else {
            self.place(key, self.parents.len() as u32 - 1);
        }
        true
    }

    /// Whether some parent has degree `degree` (walks skip lookups that cannot succeed).
    #[inline]
    pub fn has_degree(&self, degree: usize) -> bool {
        self.by_degree.get(degree).is_some_and(|&n| n > 0)
    }

    /// Whether the monomial with identity `key` is a parent.
    #[inline(always)]
    pub fn contains(&self, key: u64) -> bool {
        self.index_of(key).is_some()
    }

    /// The index (in [`ParentSet::parents`]) of the parent with identity `key`.
    #[inline(always)]
    pub fn index_of(&self, key: u64) -> Option<u32> {
        let bit = (key as usize) & (64 * self.filter.len() - 1);
        if self.filter[bit >> 6] & (1u64 << (bit & 63)) == 0 {
            return None;
        }
        if key == EMPTY {
            return self.empty_key_index;
        }
        let mask = self.table.len() - 1;
        let mut cell = (key >> self.shift) as usize;
        loop {
            let stored = self.table[cell];
            if stored == key {
                return Some(self.index[cell]);
            }
            if stored == EMPTY {
                return None;
            }
            cell = (cell + 1) & mask;
        }
    }

    /// The degree-1 parents as (factor hash, index), sorted by hash.
    #[inline]
    pub fn roots(&self) -> &[(u64, u32)] {
        &self.links.roots
    }

    /// Parent `k`'s `grow` list: the `(x, index)` with `parent·x` the parent `index`, sorted.
    #[inline]
    pub fn grow(&self, k: u32) -> &[(u64, u32)] {
        let k = k as usize;
        let (from, to) = (self.links.grow_start[k], self.links.grow_start[k + 1]);
        &self.links.grow[from as usize..to as usize]
    }

    /// Parent `k`'s `owned` list: the `x` whose product with it is emitted from another parent.
    #[inline]
    pub fn owned(&self, k: u32) -> &[u64] {
        let k = k as usize;
        let (from, to) = (self.links.owned_start[k], self.links.owned_start[k + 1]);
        &self.links.owned[from as usize..to as usize]
    }

    fn place(&mut self, key: u64, index: u32) {
        let bit = (key as usize) & (64 * self.filter.len() - 1);
        self.filter[bit >> 6] |= 1u64 << (bit & 63);
        if key == EMPTY {
            self.empty_key_index = Some(index);
            return;
        }
        let mask = self.table.len() - 1;
        let mut cell = (key >> self.shift) as usize;
        while self.table[cell] != EMPTY {
            cell = (cell + 1) & mask;
        }
        self.table[cell] = key;
        self.index[cell] = index;
    }

    /// Resizes the table to >= 4 cells and the filter to >= 64 bits per parent and refills them.
    fn rebuild(&mut self) {
        let cells = (4 * self.parents.len()).next_power_of_two().max(256);
        self.shift = 64 - cells.trailing_zeros();
        self.table = vec![EMPTY; cells];
        self.index = vec![0; cells];
        self.filter = vec![0; cells * 16 / 64];
        self.empty_key_index = None;
        for k in 0..self.parents.len() {
            let key = self.parents[k].key;
            self.place(key, k as u32);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn membership_is_exact_and_grows() {
        let mut set = ParentSet::new();
        assert!(!set.contains(key_of(&[1])));
        let added = set.extend_keyed(
            (0..500u64).map(|a| {
                let m = Monomial::new(vec![a, a + 1]);
                let key = m.key();
                (m, key)
            }),
            1,
        );
        assert_eq!(added, 500);
        assert!(!set.insert(Monomial::new(vec![3, 2]), 2), "x2*x3 is a parent already");
        assert_eq!(set.len(), 500);
        for a in 0..500u64 {
            assert_eq!(set.index_of(key_of(&[a + 1, a])), Some(a as u32));
            assert!(!set.contains(key_of(&[a])));
            assert!(!set.contains(key_of(&[a, a + 2])));
        }
        assert_eq!(set.parents()[0].monomial.factors(), &[0, 1]);
    }

    #[test]
    fn links_list_parent_children_and_rival_owners() {
        let mut set = ParentSet::new();
        for m in [vec![2], vec![5], vec![2, 5], vec![2, 2], vec![2, 5, 7]] {
            set.insert(Monomial::new(m), 1);
        }
        assert_eq!(set.roots(), &[(2, 0), (5, 1)]);
        // x2 grows into x2^2 and x2*x5; x5 into x2*x5 (whose owner is x2: 5 is the largest
        // factor leaving a parent).
        assert_eq!(set.grow(0), &[(2, 3), (5, 2)]);
        assert_eq!(set.grow(1), &[(2, 2)]);
        assert_eq!(set.grow(2), &[(7, 4)]);
        assert!(set.owned(0).is_empty());
        assert!(set.owned(1).is_empty(), "degree 1: the walk knows x5*x2 is x2's");
        // x2*x5 times x2: removing 5 leaves x2*x2, a parent: owned by x2^2.
        assert_eq!(set.owned(2), &[2]);
        assert!(set.grow(4).is_empty() && set.owned(4).is_empty());
        assert!(ParentSet::new().roots().is_empty());
    }
}
