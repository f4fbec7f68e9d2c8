//! The parent set: monomials that have been expanded, looked up by identity key once per
//! generated feature.
//!
//! The set is small (a few parents per expansion), the lookups are not: every generated feature
//! asks "is this a parent?". A bit filter indexed by the key's top bits, at least 64 bits per
//! parent and small enough to stay in cache, answers almost every "no" with one load; the hash
//! set behind it confirms the rare "maybe".

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

use super::monomial::Monomial;

/// Keys are already avalanche-mixed ([`super::monomial::mix`]): hash them as they are.
#[derive(Default)]
pub struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, key: u64) {
        self.0 = key;
    }
}

pub type KeySet = HashSet<u64, BuildHasherDefault<KeyHasher>>;

/// One parent and the expansion (1, 2, ...) that added it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parent {
    pub monomial: Monomial,
    pub expansion: u32,
}

/// The parents in the order they were added (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct ParentSet {
    parents: Vec<Parent>,
    keys: KeySet,
    filter: Vec<u64>,
    /// `key >> shift` is the filter bit of `key`.
    shift: u32,
}

impl PartialEq for ParentSet {
    fn eq(&self, other: &Self) -> bool {
        self.parents == other.parents
    }
}

impl ParentSet {
    pub fn new() -> Self {
        let mut set = ParentSet::default();
        set.rebuild_filter();
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

    /// Adds `monomial` (added by expansion `expansion`); false if it is a parent already.
    pub fn insert(&mut self, monomial: Monomial, expansion: u32) -> bool {
        if !self.keys.insert(monomial.key()) {
            return false;
        }
        self.parents.push(Parent { monomial, expansion });
        if self.filter.len() < self.parents.len() {
            self.rebuild_filter();
        } else {
            let key = self.parents[self.parents.len() - 1].monomial.key();
            self.set_bit(key);
        }
        true
    }

    /// Whether the monomial with identity `key` is a parent.
    #[inline(always)]
    pub fn contains(&self, key: u64) -> bool {
        let bit = (key >> self.shift) as usize;
        // The filter has exactly 2^(64 - shift) bits, so bit / 64 < filter.len().
        let word = self.filter[bit >> 6];
        word & (1u64 << (bit & 63)) != 0 && self.keys.contains(&key)
    }

    fn set_bit(&mut self, key: u64) {
        let bit = (key >> self.shift) as usize;
        self.filter[bit >> 6] |= 1u64 << (bit & 63);
    }

    /// Resizes the filter to >= 64 bits per parent (at least 2^12 bits) and refills it.
    fn rebuild_filter(&mut self) {
        let bits = (64 * self.parents.len()).next_power_of_two().max(1 << 12);
        self.shift = 64 - bits.trailing_zeros();
        self.filter = vec![0; bits / 64];
        for k in 0..self.parents.len() {
            let key = self.parents[k].monomial.key();
            self.set_bit(key);
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
