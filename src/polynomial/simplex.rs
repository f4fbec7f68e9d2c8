//! K-simplex numbers: the bijection between sorted index tuples and positions inside a degree
//! block of scikit-learn's `PolynomialFeatures` layout (docs/algorithms.md §2).
//!
//! For the polynomial block of degree k over D inputs, the tuple i1 <= ... <= ik has rank
//!
//! ```text
//! rank = sum_{p=1..k} [ C(D - i_{p-1} + k - p, k - p + 1) - C(D - i_p + k - p, k - p + 1) ],  i_0 = 0
//! ```
//!
//! and for the interaction-only block (i1 < ... < ik)
//!
//! ```text
//! rank = sum_{p=1..k} [ C(D - s_p, k - p + 1) - C(D - i_p, k - p + 1) ],  s_1 = 0, s_p = i_{p-1} + 1.
//! ```
//!
//! Term p depends only on (i_{p-1}, i_p): the expansion kernel keeps the running prefix, and the
//! last term closes to `i_k - i_{k-1}` (minus one for interactions), so the innermost step is an add.

use crate::error::{PolyError, PolyResult};

/// C(n, k) exactly, or `None` when it does not fit u64. Called per row entry by the kernel, so
/// small k have closed forms and the general loop stays in u64 while it can (u128 division is slow).
#[inline]
pub fn binomial(n: u64, k: u64) -> Option<u64> {
    if k > n {
        return Some(0);
    }
    match k.min(n - k) {
        0 => Some(1),
        1 => Some(n),
        2 => u64::try_from(u128::from(n) * u128::from(n - 1) / 2).ok(),
        // n(n-1)/2 is exact and (n-2) times it stays divisible by 3; below 2^21 nothing overflows.
        3 if n < 1 << 21 => Some(n * (n - 1) / 2 * (n - 2) / 3),
        k => binomial_loop(n, k),
    }
}

fn binomial_loop(n: u64, k: u64) -> Option<u64> {
    let mut result: u64 = 1;
    for i in 1..=k {
        // result = C(n - k + i - 1, i - 1) <= C(n, k): if the final value fits u64 so does this.
        let factor = n - k + i;
        result = match result.checked_mul(factor) {
            Some(product) => product / i,
            None => u64::try_from(u128::from(result) * u128::from(factor) / u128::from(i)).ok()?,
        };
    }
    Some(result)
}

/// Number of degree-`degree` monomials over `n_features` inputs, `None` on u64 overflow.
pub fn block_size(n_features: u64, degree: u32, interaction_only: bool) -> Option<u64> {
    let k = u64::from(degree);
    if interaction_only {
        binomial(n_features, k)
    } else if n_features == 0 {
        Some(u64::from(degree == 0))
    } else {
        binomial(n_features.checked_add(k - 1)?, k)
    }
}

/// The two binomials of term p, as functions of one index (see the module docs):
/// `start(i)` is the term's first binomial when i is the previous index, `end(i)` its second.
#[derive(Clone, Copy)]
pub struct Term {
    n_features: u64,
    /// k - p + 1: how many indices remain including this one.
    remaining: u64,
    interaction_only: bool,
}

impl Term {
    pub fn new(n_features: u64, degree: u32, position: u32, interaction_only: bool) -> Self {
        Self { n_features, remaining: u64::from(degree - position + 1), interaction_only }
    }

    /// C(D - i_p + k - p, k - p + 1) (polynomial) or C(D - i_p, k - p + 1) (interaction).
    #[inline]
    pub fn end(&self, index: u64) -> u64 {
        let top = self.n_features - index;
        let top = if self.interaction_only { top } else { top + self.remaining - 1 };
        binomial(top, self.remaining).unwrap_or(u64::MAX)
    }

    /// The term's first binomial given the previous index i_{p-1}.
    #[inline]
    pub fn start(&self, previous: u64) -> u64 {
        if self.interaction_only {
            binomial(self.n_features - previous - 1, self.remaining).unwrap_or(u64::MAX)
        } else {
            self.end(previous)
        }
    }

    /// The first binomial of term 1 (no previous index): the block size.
    #[inline]
    pub fn first(&self) -> u64 {
        if self.interaction_only {
            binomial(self.n_features, self.remaining).unwrap_or(u64::MAX)
        } else {
            self.end(0)
        }
    }
}

fn check_tuple(tuple: &[u64], n_features: u64, interaction_only: bool) -> PolyResult<()> {
    for (p, &index) in tuple.iter().enumerate() {
        if index >= n_features {
            return crate::invalid!("index {index} is out of range for n_features={n_features}");
        }
        if p > 0 {
            let previous = tuple[p - 1];
            let ordered = if interaction_only { previous < index } else { previous <= index };
            if !ordered {
                let rule = if interaction_only { "strictly increasing" } else { "non-decreasing" };
                return crate::invalid!("monomial indices must be {rule}, got {tuple:?}");
            }
        }
    }
    Ok(())
}

/// Position of a sorted tuple inside its degree block (degree = `tuple.len()` >= 1).
pub fn simplex_rank(tuple: &[u64], n_features: u64, interaction_only: bool) -> PolyResult<u64> {
    check_tuple(tuple, n_features, interaction_only)?;
    let degree = tuple.len() as u32;
    if block_size(n_features, degree, interaction_only).is_none() {
        return Err(overflow(n_features, degree));
    }
    let mut rank = 0u64;
    for (p, &index) in tuple.iter().enumerate() {
        let term = Term::new(n_features, degree, p as u32 + 1, interaction_only);
        let start = if p == 0 { term.first() } else { term.start(tuple[p - 1]) };
        rank = rank.wrapping_add(start.wrapping_sub(term.end(index)));
    }
    Ok(rank)
}

/// Inverse of [`simplex_rank`]: the sorted tuple at position `rank` of the degree block.
pub fn simplex_unrank(
    rank: u64,
    degree: u32,
    n_features: u64,
    interaction_only: bool,
) -> PolyResult<Vec<u64>> {
    let size = block_size(n_features, degree, interaction_only)
        .ok_or_else(|| overflow(n_features, degree))?;
    if rank >= size {
        return crate::invalid!(
            "rank {rank} is past the degree-{degree} block of {size} monomials"
        );
    }
    let mut tuple = Vec::with_capacity(degree as usize);
    let mut left = rank;
    for p in 1..=degree {
        let term = Term::new(n_features, degree, p, interaction_only);
        let (start, mut low) = match tuple.last() {
            None => (term.first(), 0),
            Some(&previous) => (term.start(previous), previous + u64::from(interaction_only)),
        };
        // Largest index whose term does not exceed what is left; the term grows with the index.
        let mut high =
            if interaction_only { n_features - u64::from(degree - p) - 1 } else { n_features - 1 };
        while low < high {
            let middle = low + (high - low).div_ceil(2);
            if start - term.end(middle) <= left {
                low = middle;
            } else {
                high = middle - 1;
            }
        }
        left -= start - term.end(low);
        tuple.push(low);
    }
    Ok(tuple)
}

pub fn overflow(n_features: u64, degree: u32) -> PolyError {
    PolyError::Overflow(format!(
        "the degree-{degree} expansion of {n_features} features has more columns than fit in 64 \
         bits; use the hashed form (bits=...) instead"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// All sorted tuples of a degree block in lexicographic order, by brute force.
    fn enumerate(n: u64, k: usize, interaction_only: bool) -> Vec<Vec<u64>> {
        let mut out = Vec::new();
        let mut tuple = Vec::new();
        fn go(
            n: u64,
            k: usize,
            io: bool,
            from: u64,
            tuple: &mut Vec<u64>,
            out: &mut Vec<Vec<u64>>,
        ) {
            if tuple.len() == k {
                out.push(tuple.clone());
                return;
            }
            for i in from..n {
                tuple.push(i);
                go(n, k, io, if io { i + 1 } else { i }, tuple, out);
                tuple.pop();
            }
        }
        go(n, k, interaction_only, 0, &mut tuple, &mut out);
        out
    }

    #[test]
    fn rank_and_unrank_match_brute_force_enumeration() {
        for interaction_only in [false, true] {
            for n in 1..=8u64 {
                for k in 1..=5usize {
                    let tuples = enumerate(n, k, interaction_only);
                    let size = block_size(n, k as u32, interaction_only).unwrap();
                    assert_eq!(tuples.len() as u64, size, "n={n} k={k} io={interaction_only}");
                    for (position, tuple) in tuples.iter().enumerate() {
                        assert_eq!(
                            simplex_rank(tuple, n, interaction_only).unwrap(),
                            position as u64
                        );
                        assert_eq!(
                            &simplex_unrank(position as u64, k as u32, n, interaction_only)
                                .unwrap(),
                            tuple
                        );
                    }
                    assert!(simplex_unrank(size, k as u32, n, interaction_only).is_err());
                }
            }
        }
    }

    #[test]
    fn degree_two_closes_to_the_slides_formula() {
        let d = 1000u64;
        for (i, j) in [(0, 0), (3, 7), (999, 999), (500, 999)] {
            assert_eq!(simplex_rank(&[i, j], d, false).unwrap(), i * d - i * (i + 1) / 2 + j);
        }
    }

    #[test]
    fn binomial_fits_or_reports_overflow() {
        assert_eq!(binomial(5, 2), Some(10));
        assert_eq!(binomial(67, 33), Some(14_226_520_737_620_288_370));
        assert_eq!(binomial(68, 34), None);
        assert_eq!(binomial(3, 5), Some(0));
        // Degree 2 over D features: C(D + 1, 2) = D(D+1)/2 fits u64 up to D = 6_074_000_999.
        assert!(block_size(6_074_000_999, 2, false).is_some());
        assert!(block_size(6_074_001_000, 2, false).is_none());
    }

    #[test]
    fn last_index_of_each_block_is_size_minus_one() {
        for (n, k, io) in
            [(10u64, 3u32, false), (10, 3, true), (1 << 21, 3, false), (6_074_000_999, 2, false)]
        {
            let size = block_size(n, k, io).unwrap();
            let last: Vec<u64> =
                if io { (n - u64::from(k)..n).collect() } else { vec![n - 1; k as usize] };
            assert_eq!(simplex_rank(&last, n, io).unwrap(), size - 1);
            assert_eq!(simplex_unrank(size - 1, k, n, io).unwrap(), last);
        }
    }

    #[test]
    fn rank_errors_are_precise() {
        assert!(simplex_rank(&[2, 1], 5, false)
            .unwrap_err()
            .to_string()
            .contains("non-decreasing"));
        assert!(simplex_rank(&[1, 1], 5, true).unwrap_err().to_string().contains("strictly"));
        assert!(simplex_rank(&[5], 5, false).unwrap_err().to_string().contains("out of range"));
        // C(10^6 + 3, 4) ~ 4.2e22 does not fit u64; C(10^5 + 3, 4) ~ 4.2e18 does.
        assert!(simplex_rank(&[0; 4], 1_000_000, false)
            .unwrap_err()
            .to_string()
            .contains("hashed"));
        assert!(simplex_rank(&[0; 4], 100_000, false).is_ok());
    }

    proptest! {
        #[test]
        fn unrank_inverts_rank_for_large_d(n in 1u64..100_000, raw in proptest::collection::vec(any::<u64>(), 1..5), io in any::<bool>()) {
            let mut tuple: Vec<u64> = raw.iter().map(|r| r % n).collect();
            tuple.sort_unstable();
            if io { tuple.dedup(); }
            let degree = tuple.len() as u32;
            let rank = simplex_rank(&tuple, n, io).unwrap();
            prop_assert!(rank < block_size(n, degree, io).unwrap());
            prop_assert_eq!(simplex_unrank(rank, degree, n, io).unwrap(), tuple);
        }
    }
}
