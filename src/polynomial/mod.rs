//! Polynomial expansion of sparse rows in scikit-learn's `PolynomialFeatures` column order.
//!
//! Output layout: `[bias if include_bias]`, then one block per degree k in
//! `max(min_degree, 1)..=max_degree`, each block in lexicographic order of sorted index tuples
//! (the order [`simplex`] ranks). Only products of a row's stored nonzeros are formed.

pub mod kernel;
pub mod simplex;

pub use kernel::{expand, expand_as, expand_hashed, ExpansionPlan, OutputIndex};

use crate::error::PolyResult;
use simplex::{block_size, overflow, simplex_rank, simplex_unrank};

/// What to expand, mirroring `PolynomialFeatures(degree=(min, max), interaction_only, include_bias)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExpansionSpec {
    pub min_degree: u32,
    pub max_degree: u32,
    pub interaction_only: bool,
    pub include_bias: bool,
}

/// The largest degree an expansion takes. Layouts, monomials and column look-ups hold one
/// entry per degree or per factor, so a degree of a billion (on one feature, where no width
/// overflows) would allocate gigabytes before any check on the data; no floating-point
/// monomial is useful long before this degree.
pub const MAX_DEGREE: u32 = u16::MAX as u32;

impl ExpansionSpec {
    pub fn validate(&self) -> PolyResult<()> {
        if self.max_degree > MAX_DEGREE {
            return crate::invalid!(
                "degree {} is beyond the largest an expansion takes, {MAX_DEGREE}",
                self.max_degree
            );
        }
        if self.min_degree > self.max_degree {
            return crate::invalid!(
                "degree=(min, max) needs min <= max, got ({}, {})",
                self.min_degree,
                self.max_degree
            );
        }
        if self.max_degree == 0 && !self.include_bias {
            return crate::invalid!(
                "degree 0 with include_bias=False would give no output columns"
            );
        }
        Ok(())
    }

    /// The degrees that have a block (degree 0 is the bias, handled by `include_bias`).
    pub fn degrees(&self) -> std::ops::RangeInclusive<u32> {
        self.min_degree.max(1)..=self.max_degree
    }
}

/// Where each degree block starts in the output, and the total width.
#[derive(Clone, Debug)]
pub struct Layout {
    /// `(degree, first column)` for every block, in order.
    pub blocks: Vec<(u32, u64)>,
    pub width: u64,
}

impl Layout {
    /// Fails before any work when the width does not fit u64, suggesting the hashed form.
    pub fn new(n_features: u64, spec: &ExpansionSpec) -> PolyResult<Self> {
        spec.validate()?;
        let mut width = u64::from(spec.include_bias);
        let mut blocks = Vec::new();
        for degree in spec.degrees() {
            let size = block_size(n_features, degree, spec.interaction_only)
                .ok_or_else(|| overflow(n_features, degree))?;
            blocks.push((degree, width));
            width = width.checked_add(size).ok_or_else(|| overflow(n_features, degree))?;
        }
        Ok(Self { blocks, width })
    }
}

/// Number of output columns.
pub fn output_width(n_features: u64, spec: &ExpansionSpec) -> PolyResult<u64> {
    Ok(Layout::new(n_features, spec)?.width)
}

/// The monomial of output column `column` as sorted `(input index, power)` pairs (empty for the
/// bias), computed from the index alone.
pub fn monomial_exponents(
    column: u64,
    n_features: u64,
    spec: &ExpansionSpec,
) -> PolyResult<Vec<(u64, u32)>> {
    let layout = Layout::new(n_features, spec)?;
    if column >= layout.width {
        return crate::invalid!(
            "column {column} is out of range: the expansion has {} columns",
            layout.width
        );
    }
    if spec.include_bias && column == 0 {
        return Ok(Vec::new());
    }
    let (degree, start) =
        layout.blocks.iter().rev().find(|(_, start)| *start <= column).copied().unwrap_or((1, 0));
    let tuple = simplex_unrank(column - start, degree, n_features, spec.interaction_only)?;
    let mut exponents: Vec<(u64, u32)> = Vec::new();
    for index in tuple {
        match exponents.last_mut() {
            Some((last, power)) if *last == index => *power += 1,
            _ => exponents.push((index, 1)),
        }
    }
    Ok(exponents)
}

/// The output column of the monomial with the given `(input index, power)` pairs (inverse of
/// [`monomial_exponents`]); an empty list is the bias.
pub fn column_of_exponents(
    exponents: &[(u64, u32)],
    n_features: u64,
    spec: &ExpansionSpec,
) -> PolyResult<u64> {
    let layout = Layout::new(n_features, spec)?;
    // The monomial's degree first: its factors are listed one by one below.
    let degree = exponents.iter().try_fold(0u32, |sum, &(_, power)| sum.checked_add(power));
    if degree.is_none_or(|degree| degree > spec.max_degree) {
        let total: u64 = exponents.iter().map(|&(_, power)| u64::from(power)).sum();
        return crate::invalid!("degree {total} is not part of this expansion");
    }
    let mut tuple = Vec::new();
    for &(index, power) in exponents {
        if spec.interaction_only && power > 1 {
            return crate::invalid!(
                "interaction_only expansions have no power {power} of x{index}"
            );
        }
        tuple.extend(std::iter::repeat_n(index, power as usize));
    }
    tuple.sort_unstable();
    if tuple.is_empty() {
        return if spec.include_bias {
            Ok(0)
        } else {
            crate::invalid!("this expansion has no bias column")
        };
    }
    let degree = tuple.len() as u32;
    let Some(&(_, start)) = layout.blocks.iter().find(|(d, _)| *d == degree) else {
        return crate::invalid!("degree {degree} is not part of this expansion");
    };
    Ok(start + simplex_rank(&tuple, n_features, spec.interaction_only)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(min: u32, max: u32, io: bool, bias: bool) -> ExpansionSpec {
        ExpansionSpec { min_degree: min, max_degree: max, interaction_only: io, include_bias: bias }
    }

    #[test]
    fn layout_matches_sklearn_widths() {
        // PolynomialFeatures(degree=(2, 3), include_bias=True) on 3 features has 17 columns.
        assert_eq!(output_width(3, &spec(2, 3, false, true)).unwrap(), 17);
        assert_eq!(output_width(3, &spec(0, 2, false, false)).unwrap(), 9);
        assert_eq!(output_width(3, &spec(0, 0, false, true)).unwrap(), 1);
        assert_eq!(output_width(4, &spec(0, 3, true, true)).unwrap(), 1 + 4 + 6 + 4);
        assert!(output_width(3, &spec(0, 0, false, false)).is_err());
        assert!(output_width(3, &spec(3, 2, false, false)).is_err());
    }

    #[test]
    fn degrees_beyond_the_largest_are_errors_before_any_allocation() {
        // One feature: no width overflows, but a layout of a billion blocks would be 16 GB.
        let huge = spec(0, 1_000_000_000, false, false);
        let message = output_width(1, &huge).unwrap_err().to_string();
        assert!(message.contains("degree 1000000000 is beyond the largest"), "{message}");
        assert!(monomial_exponents(5, 1, &huge).is_err());
        let small = spec(0, 3, false, true);
        let message = column_of_exponents(&[(0, 1_000_000_000)], 1, &small).unwrap_err();
        assert!(message.to_string().contains("degree 1000000000 is not part"), "{message}");
        let message = column_of_exponents(&[(0, u32::MAX), (1, 2)], 2, &small).unwrap_err();
        assert!(message.to_string().contains("degree 4294967297 is not part"), "{message}");
        // The largest degree works on one feature.
        let most = spec(0, MAX_DEGREE, false, false);
        assert_eq!(output_width(1, &most).unwrap(), u64::from(MAX_DEGREE));
        let last = monomial_exponents(u64::from(MAX_DEGREE) - 1, 1, &most).unwrap();
        assert_eq!(last, vec![(0, MAX_DEGREE)]);
        assert_eq!(column_of_exponents(&last, 1, &most).unwrap(), u64::from(MAX_DEGREE) - 1);
    }

    #[test]
    fn every_column_round_trips_through_its_monomial() {
        for s in [spec(0, 4, false, true), spec(2, 3, true, false), spec(1, 1, false, true)] {
            let width = output_width(6, &s).unwrap();
            for column in 0..width {
                let exponents = monomial_exponents(column, 6, &s).unwrap();
                assert_eq!(column_of_exponents(&exponents, 6, &s).unwrap(), column);
            }
            assert!(monomial_exponents(width, 6, &s).is_err());
        }
    }

    #[test]
    fn names_follow_sklearn_order() {
        // sklearn: ['1' 'x0^2' 'x0 x1' 'x0 x2' 'x1^2' 'x1 x2' 'x2^2' 'x0^3' 'x0^2 x1' ...]
        let s = spec(2, 3, false, true);
        assert_eq!(monomial_exponents(1, 3, &s).unwrap(), vec![(0, 2)]);
        assert_eq!(monomial_exponents(2, 3, &s).unwrap(), vec![(0, 1), (1, 1)]);
        assert_eq!(monomial_exponents(8, 3, &s).unwrap(), vec![(0, 2), (1, 1)]);
        assert_eq!(monomial_exponents(16, 3, &s).unwrap(), vec![(2, 3)]);
    }
}
