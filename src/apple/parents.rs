//! The parent set: monomials that have been expanded, looked up by identity key once per
//! generated feature.
//!
//! The set is small (a few parents per expansion), the lookups are not: every generated feature
//! asks "is this a parent?", and nearly always the answer is no. A bit filter (64 bits per
//! parent, indexed by the key's low bits; keys are avalanche-mixed, see
//! [`super::monomial::mix`]) answers almost every "no" with one load and a bit test; an
//! open-addressing table of at most 1/4 load, indexed by the key's top bits with linear probing,
//! confirms the rare "maybe". Both stay in the L1/L2 cache.

use super::monomial::Monomial;

/// One parent, the expansion (1, 2, ...) that added it, and its identity key (see
/// [`super::monomial::Identity`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parent {
    pub monomial: Monomial,
    pub expansion: u32,
    pub key: u64,
}

/// The parents in the order they were added (see the module docs).
#[derive(Clone, Debug)]
pub struct ParentSet {
    parents: Vec<Parent>,
    /// Open-addressing key table; `EMPTY` marks a free cell (a parent whose key is `EMPTY`
    /// is recorded in `has_empty_key` instead).
    table: Vec<u64>,
    /// `key >> shift` is a key's home cell.
    shift: u32,
    /// Bit `key & (64·filter.len() - 1)` is set for every parent key.
    filter: Vec<u64>,
    has_empty_key: bool,
    /// Number of parents of each degree (index = degree).
    by_degree: Vec<usize>,
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
            shift: 0,
            filter: Vec::new(),
            has_empty_key: false,
            by_degree: Vec::new(),
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
            self.place(key);
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
        let bit = (key as usize) & (64 * self.filter.len() - 1);
        if self.filter[bit >> 6] & (1u64 << (bit & 63)) == 0 {
            return false;
        }
        if key == EMPTY {
            return self.has_empty_key;
        }
        let mask = self.table.len() - 1;
        let mut cell = (key >> self.shift) as usize;
        loop {
            let stored = self.table[cell];
            if stored == key {
                return true;
            }
            if stored == EMPTY {
                return false;
            }
            cell = (cell + 1) & mask;
        }
    }

    fn place(&mut self, key: u64) {
        let bit = (key as usize) & (64 * self.filter.len() - 1);
        self.filter[bit >> 6] |= 1u64 << (bit & 63);
        if key == EMPTY {
            self.has_empty_key = true;
            return;
        }
        let mask = self.table.len() - 1;
        let mut cell = (key >> self.shift) as usize;
        while self.table[cell] != EMPTY {
            cell = (cell + 1) & mask;
        }
        self.table[cell] = key;
    }

    /// Resizes the table to >= 4 cells and the filter to >= 64 bits per parent and refills them.
    fn rebuild(&mut self) {
        let cells = (4 * self.parents.len()).next_power_of_two().max(256);
        self.shift = 64 - cells.trailing_zeros();
        self.table = vec![EMPTY; cells];
        self.filter = vec![0; cells * 16 / 64];
        self.has_empty_key = false;
        for k in 0..self.parents.len() {
            let key = self.parents[k].key;
            self.place(key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apple::monomial::key_of;

    #[test]
    fn membership_is_exact_and_grows() {
        let mut set = ParentSet::new();
        assert!(!set.contains(key_of(&[1])));
        for a in 0..500u64 {
            assert!(set.insert(Monomial::new(vec![a, a + 1]), 1));
        }
        assert!(!set.insert(Monomial::new(vec![3, 2]), 2), "x2*x3 is a parent already");
        assert_eq!(set.len(), 500);
        for a in 0..500u64 {
            assert!(set.contains(key_of(&[a + 1, a])));
            assert!(!set.contains(key_of(&[a])));
            assert!(!set.contains(key_of(&[a, a + 2])));
        }
        assert_eq!(set.parents()[0].monomial.factors(), &[0, 1]);
    }
}
