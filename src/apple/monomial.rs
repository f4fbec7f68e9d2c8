//! Canonical monomial identity: a monomial is the multiset of its factors' feature hashes, and
//! its identity key is order-independent, so `x_a·x_b` is one weight however it was reached.
//!
//! Key of a monomial = Σ mix(h_f) over its factors (with multiplicity), wrapping u64, with `mix`
//! a bijective 64-bit avalanche (the SplitMix64 / Stafford "Mix13" finalizer). A sum of
//! well-mixed terms is a standard incremental multiset hash: the key of a child `m·x_i` is
//! `key(m) + mix(h_i)`, one add per generated feature, and every ordering of the same factors
//! gives the same key. Vowpal Wabbit's `--stage_poly` instead hashes `atom ^ P·parent`, so
//! `x_a·x_b` reached from `a` and from `b` lands in two different weights.
//!
//! Weight slot of a monomial with sorted factors `f1 <= ... <= fk`: `term(f1..f(k-1))·P ^ fk`,
//! where the term of one factor is its hash and the term of several is [`spread`] of their
//! identity key ([`slot_hash`]). A base feature keeps its own hash, and a degree-2 monomial
//! lands in Vowpal Wabbit's quadratic slot `f1·P ^ f2`. Two properties make the walk cheap:
//! * locality where it matters: the children `m·x_i` of one parent with `x_i` after all of
//!   `m`'s factors (the bulk of a walk) share the term of `m` and differ only in `^ h_i`, so
//!   they fall close together in the table, as Vowpal Wabbit's do (the identity key alone, a sum
//!   of mixed terms, would scatter them: a cache and TLB miss per feature);
//! * a child `m·x_i` with `x_i` before `m`'s largest factor `fk` has slot `h_i·P ^ fk` when `m`
//!   is the base feature `fk`, else `spread(key(m) - mix(fk) + mix(h_i))·P ^ fk`: an add and a
//!   multiply, where a hash chain over the sorted factors (`((f1·P ^ f2)·P ^ f3)...`, the slots
//!   before model format version 2) had to be recomputed from the inserted factor on.

use crate::learner::expansion::INTERACTION_PRIME;

/// How a monomial is identified (which parent it is, which weight it has).
///
/// * `Canonical` (default): by its factor multiset (see the module docs); one weight per
///   monomial, each monomial emitted once per example.
/// * `Path`: Vowpal Wabbit's `--stage_poly` rule, for comparison: a child `m·x_i` is
///   identified by the hash chain of the path that reached it, `slot(m)·P ^ h_i`, so the same
///   monomial reached from two parents is two features with two weights.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum Identity {
    Canonical,
    Path,
}

impl Identity {
    /// The names users give, in variant order.
    pub const NAMES: &'static [&'static str] = &["canonical", "path"];

    pub fn parse(name: &str) -> crate::error::PolyResult<Self> {
        match name {
            "canonical" => Ok(Identity::Canonical),
            "path" => Ok(Identity::Path),
            other => crate::invalid!("identity must be one of {:?}, got {other:?}", Self::NAMES),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Identity::Canonical => "canonical",
            Identity::Path => "path",
        }
    }

    /// Identity key of the base feature with hash `h`.
    #[inline(always)]
    pub fn base_key(self, h: u64) -> u64 {
        match self {
            Identity::Canonical => mix(h),
            Identity::Path => h,
        }
    }
}

impl TryFrom<String> for Identity {
    type Error = crate::error::PolyError;
    fn try_from(name: String) -> Result<Self, Self::Error> {
        Self::parse(&name)
    }
}

impl From<Identity> for String {
    fn from(identity: Identity) -> String {
        identity.name().to_owned()
    }
}

/// Bijective 64-bit mixer (Stafford's Mix13, the SplitMix64 output function).
#[inline(always)]
pub fn mix(h: u64) -> u64 {
    let mut z = h ^ 0x9e37_79b9_7f4a_7c15;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Hasher for maps and sets keyed by identity keys. Canonical keys are already avalanche-mixed;
/// path keys are raw feature hashes, whose entropy sits in the low bits: one multiply-xorshift
/// spreads it to the high bits the hash table also uses (SipHash would cost more than the walk).
#[derive(Clone, Copy, Debug, Default)]
pub struct KeyHasher(u64);

impl std::hash::Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        let z = self.0.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        z ^ (z >> 32)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, key: u64) {
        self.0 = key;
    }
}

impl std::hash::BuildHasher for KeyHasher {
    type Hasher = KeyHasher;

    fn build_hasher(&self) -> KeyHasher {
        KeyHasher(0)
    }
}

/// Identity key of the monomial with factor hashes `factors` (any order, repeats = powers).
pub fn key_of(factors: &[u64]) -> u64 {
    factors.iter().fold(0u64, |acc, &h| acc.wrapping_add(mix(h)))
}

/// Weight-slot hash (before masking) of the monomial with factor hashes `sorted` (increasing):
/// see the module docs.
pub fn slot_hash(sorted: &[u64]) -> u64 {
    match sorted {
        [] => 0,
        [only] => *only,
        [rest @ .., last] => term(rest).wrapping_mul(INTERACTION_PRIME) ^ last,
    }
}

/// The slot term of a factor multiset (sorted, non-empty): the hash of a single factor, else
/// [`spread`] of the identity key. A child `m·x_i` with `x_i` at or after every factor of `m`
/// has slot `term(m)·P ^ h_i`.
pub fn term(sorted: &[u64]) -> u64 {
    match sorted {
        [only] => *only,
        factors => spread(key_of(factors)),
    }
}

/// Folds a key's high half into its low half, which the table mask keeps: a key that is a sum
/// of repeated terms (`2·mix(h)` for `x_h^2`) would otherwise have a zero low bit.
#[inline(always)]
pub fn spread(key: u64) -> u64 {
    key ^ (key >> 32)
}

/// A monomial: its factor hashes sorted increasingly (repeats are powers).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Monomial {
    factors: Vec<u64>,
}

impl Monomial {
    /// The monomial of `factors` (sorted here; must be non-empty to be meaningful).
    pub fn new(mut factors: Vec<u64>) -> Self {
        factors.sort_unstable();
        Monomial { factors }
    }

    pub fn factors(&self) -> &[u64] {
        &self.factors
    }

    pub fn degree(&self) -> usize {
        self.factors.len()
    }

    pub fn key(&self) -> u64 {
        key_of(&self.factors)
    }

    /// Weight-slot hash (mask it with the table's mask).
    pub fn slot_hash(&self) -> u64 {
        slot_hash(&self.factors)
    }

    /// `(factor hash, power)` pairs in increasing hash order.
    pub fn powers(&self) -> Vec<(u64, u32)> {
        let mut out: Vec<(u64, u32)> = Vec::new();
        for &h in &self.factors {
            match out.last_mut() {
                Some((last, power)) if *last == h => *power += 1,
                _ => out.push((h, 1)),
            }
        }
        out
    }

    /// A readable name, `name(h)` for each factor: `a*b^2`.
    pub fn name(&self, name: impl Fn(u64) -> String) -> String {
        let parts: Vec<String> = self
            .powers()
            .into_iter()
            .map(|(h, p)| if p == 1 { name(h) } else { format!("{}^{p}", name(h)) })
            .collect();
        parts.join("*")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn key_is_order_independent(mut factors in proptest::collection::vec(0u64..50, 1..7),
                                    seed in any::<u64>()) {
            let k = key_of(&factors);
            // any permutation
            let n = factors.len();
            let rot = (seed as usize) % n;
            factors.rotate_left(rot);
            factors.reverse();
            prop_assert_eq!(key_of(&factors), k);
            prop_assert_eq!(Monomial::new(factors.clone()).key(), k);
        }

        #[test]
        fn child_key_is_parent_key_plus_factor(factors in proptest::collection::vec(0u64..50, 1..6),
                                                extra in 0u64..50) {
            let mut child = factors.clone();
            child.push(extra);
            prop_assert_eq!(key_of(&child), key_of(&factors).wrapping_add(mix(extra)));
        }
    }

    #[test]
    fn distinct_small_monomials_have_distinct_keys() {
        // Every monomial of degree <= 3 over 40 features: no two share a key.
        let mut keys = std::collections::HashSet::new();
        let mut count = 0;
        for a in 0..40u64 {
            keys.insert(key_of(&[a]));
            count += 1;
            for b in a..40 {
                keys.insert(key_of(&[a, b]));
                count += 1;
                for c in b..40 {
                    keys.insert(key_of(&[a, b, c]));
                    count += 1;
                }
            }
        }
        assert_eq!(keys.len(), count);
    }

    #[test]
    fn names_show_powers() {
        let m = Monomial::new(vec![7, 3, 7]);
        assert_eq!(m.degree(), 3);
        assert_eq!(m.powers(), vec![(3, 1), (7, 2)]);
        assert_eq!(m.name(|h| format!("x{h}")), "x3*x7^2");
        assert_eq!(Monomial::new(vec![5]).slot_hash(), 5);
        let p = crate::learner::expansion::INTERACTION_PRIME;
        assert_eq!(Monomial::new(vec![6, 5]).slot_hash(), (5 * p) ^ 6);
        // Degree 3: the term of the two smallest factors (their spread key), then the largest.
        let term = spread(mix(5).wrapping_add(mix(6)));
        assert_eq!(Monomial::new(vec![6, 5, 9]).slot_hash(), term.wrapping_mul(p) ^ 9);
    }
}
