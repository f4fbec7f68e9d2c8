//! One training example as the feature enumerators see it: label, importance weight, and one or
//! more namespaces of canonical, hashed base features.
//!
//! A *namespace* is one sparse input (one sparse column, or one Vowpal Wabbit namespace). Its raw
//! row (any order, repeated indices, zeros) is canonicalized with
//! [`crate::sparse::canonicalize_row`] (sorted, duplicates summed, zeros dropped, NaN/inf rejected
//! naming the row), and each index becomes the feature hash `index + seed` (wrapping, u64), the
//! seed being the namespace's hash. That is Vowpal Wabbit's rule for a feature whose name is a
//! number (`hashstring`): in the default namespace (seed 0) the LIBSVM column `i` is the feature
//! hash `i`, so linear and interaction weights land in the same slots as Vowpal Wabbit's.
//!
//! The example's *feature set* ([`Example::features`]) is the union of its namespaces sorted by
//! hash, equal hashes summed (a hash that several namespaces share is one feature). Polynomial
//! expansions enumerate it; namespace-pair interactions read the namespaces themselves.
//! Values are f32, the precision of the learner's inner loops.

use crate::error::PolyResult;
use crate::sparse::{canonicalize_row, SparseIndex, SparseRows, SparseValue};

/// The canonical features of one namespace of an example: hashes strictly increasing when the
/// seed addition did not wrap (it never does for seed 0), values finite and nonzero.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NamespaceFeatures<'a> {
    pub hashes: &'a [u64],
    pub values: &'a [f32],
}

/// A borrowed example (see the module docs). Built by [`ExampleBuffer::finish`].
#[derive(Clone, Copy, Debug)]
pub struct Example<'a> {
    /// The label (-1/+1 for classification losses).
    pub label: f64,
    /// The importance weight, finite and >= 0.
    pub weight: f64,
    hashes: &'a [u64],
    values: &'a [f32],
    spans: &'a [(usize, usize)],
    ns_hashes: &'a [u64],
    ns_values: &'a [f32],
}

impl<'a> Example<'a> {
    /// The feature set: strictly increasing hashes and their nonzero values.
    #[inline]
    pub fn features(&self) -> (&'a [u64], &'a [f32]) {
        (self.hashes, self.values)
    }

    /// Number of features in the feature set (the constant feature is not counted).
    #[inline]
    pub fn n_features(&self) -> usize {
        self.hashes.len()
    }

    pub fn n_namespaces(&self) -> usize {
        self.spans.len()
    }

    /// The features of namespace `k` (in the order namespaces were pushed); empty when `k` is out
    /// of range.
    pub fn namespace(&self, k: usize) -> NamespaceFeatures<'a> {
        match self.spans.get(k) {
            Some(&(start, end)) => NamespaceFeatures {
                hashes: &self.ns_hashes[start..end],
                values: &self.ns_values[start..end],
            },
            None => NamespaceFeatures { hashes: &[], values: &[] },
        }
    }
}

/// Reused storage for building [`Example`]s without per-example allocation.
#[derive(Clone, Debug, Default)]
pub struct ExampleBuffer {
    pairs: Vec<(u64, f64)>,
    spans: Vec<(usize, usize)>,
    ns_hashes: Vec<u64>,
    ns_values: Vec<f32>,
    merged: Vec<(u64, f32)>,
    union_hashes: Vec<u64>,
    union_values: Vec<f32>,
    /// True when the feature set is the first namespace itself (one sorted namespace).
    single: bool,
}

impl ExampleBuffer {
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts a new example.
    pub fn clear(&mut self) {
        self.spans.clear();
        self.ns_hashes.clear();
        self.ns_values.clear();
    }

    /// Adds the next namespace from a raw row: feature hash = `index + seed`. `row` is the user's
    /// row number, for error messages.
    pub fn push_namespace<I: SparseIndex, V: SparseValue>(
        &mut self,
        seed: u64,
        indices: &[I],
        values: &[V],
        row: usize,
    ) -> PolyResult<()> {
        let start = self.ns_hashes.len();
        // One pass for the common canonical row (strictly increasing indices, finite nonzero
        // values within f32); anything else is redone through canonicalize_row.
        let mut previous: Option<u64> = None;
        let mut canonical = true;
        for (&index, &value) in indices.iter().zip(values) {
            let value = value.to_f64();
            let narrowed = value as f32;
            match index.to_u64() {
                Some(index)
                    if previous.is_none_or(|p| index > p)
                        && narrowed.is_finite()
                        && value != 0.0 =>
                {
                    previous = Some(index);
                    self.ns_hashes.push(index.wrapping_add(seed));
                    self.ns_values.push(narrowed);
                }
                _ => {
                    canonical = false;
                    break;
                }
            }
        }
        if !canonical {
            self.ns_hashes.truncate(start);
            self.ns_values.truncate(start);
            canonicalize_row(indices, values, None, row, &mut self.pairs)?;
            for &(index, value) in &self.pairs {
                self.ns_hashes.push(index.wrapping_add(seed));
                self.ns_values.push(to_f32(value, index, row)?);
            }
        }
        self.spans.push((start, self.ns_hashes.len()));
        Ok(())
    }

    /// Adds row `row` of `rows` as the next namespace (see [`ExampleBuffer::push_namespace`]).
    pub fn push_row<I: SparseIndex, V: SparseValue>(
        &mut self,
        seed: u64,
        rows: &SparseRows<'_, I, V>,
        row: usize,
    ) -> PolyResult<()> {
        let (indices, values) = rows.row_reading_ahead(row);
        self.push_namespace(seed, indices, values, rows.row_number(row))
    }

    /// Closes the example: checks label and weight (errors name `row` and the value) and builds
    /// the feature set.
    pub fn finish(&mut self, label: f64, weight: f64, row: usize) -> PolyResult<Example<'_>> {
        if !label.is_finite() {
            return crate::invalid!("row {row}: label is {label}; labels must be finite");
        }
        if !(weight.is_finite() && weight >= 0.0) {
            return crate::invalid!(
                "row {row}: importance weight is {weight}; weights must be finite and >= 0"
            );
        }
        let sorted = self.ns_hashes.windows(2).all(|w| w[0] < w[1]);
        self.single = sorted && self.spans.len() <= 1;
        if !self.single {
            // Several namespaces (or a seed that wrapped): sort by hash, sum equal hashes.
            self.merged.clear();
            self.merged.extend(self.ns_hashes.iter().copied().zip(self.ns_values.iter().copied()));
            self.merged.sort_unstable_by_key(|&(hash, _)| hash);
            self.union_hashes.clear();
            self.union_values.clear();
            for &(hash, value) in &self.merged {
                if self.union_hashes.last() == Some(&hash) {
                    if let Some(last) = self.union_values.last_mut() {
                        *last += value;
                    }
                } else {
                    self.union_hashes.push(hash);
                    self.union_values.push(value);
                }
            }
            let (mut write, n) = (0, self.union_hashes.len());
            for read in 0..n {
                if self.union_values[read] != 0.0 {
                    self.union_hashes[write] = self.union_hashes[read];
                    self.union_values[write] = self.union_values[read];
                    write += 1;
                }
            }
            self.union_hashes.truncate(write);
            self.union_values.truncate(write);
        }
        Ok(self.example(label, weight))
    }

    /// The example [`ExampleBuffer::finish`] built last, again (with its label and weight).
    pub fn view(&self, label: f64, weight: f64) -> Example<'_> {
        self.example(label, weight)
    }

    /// The view of the finished example.
    fn example(&self, label: f64, weight: f64) -> Example<'_> {
        let (hashes, values) = if self.single {
            (&self.ns_hashes[..], &self.ns_values[..])
        } else {
            (&self.union_hashes[..], &self.union_values[..])
        };
        Example {
            label,
            weight,
            hashes,
            values,
            spans: &self.spans,
            ns_hashes: &self.ns_hashes,
            ns_values: &self.ns_values,
        }
    }
}

/// The f32 value of a finite feature value, or an error when it overflows f32.
#[inline]
fn to_f32(value: f64, index: u64, row: usize) -> PolyResult<f32> {
    let narrowed = value as f32;
    if narrowed.is_finite() {
        Ok(narrowed)
    } else {
        crate::invalid!("row {row}: feature {index} has value {value}, beyond the f32 range")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_namespace_is_canonicalized() {
        let mut buf = ExampleBuffer::new();
        buf.clear();
        buf.push_namespace(0, &[5u32, 1, 5, 3], &[1.0f64, 2.0, 1.0, 0.0], 0).unwrap();
        let ex = buf.finish(1.0, 2.0, 0).unwrap();
        assert_eq!(ex.features(), (&[1u64, 5][..], &[2.0f32, 2.0][..]));
        assert_eq!(ex.n_namespaces(), 1);
        assert_eq!(ex.weight, 2.0);
    }

    #[test]
    fn namespaces_are_seeded_and_united() {
        let mut buf = ExampleBuffer::new();
        buf.clear();
        buf.push_namespace(100, &[7u64, 2], &[1.0f32, 3.0], 4).unwrap();
        buf.push_namespace(0, &[102u64, 9], &[-3.0f32, 0.5], 4).unwrap();
        let ex = buf.finish(0.0, 1.0, 4).unwrap();
        // Hash 102 = 2 + 100 from the first namespace cancels with 102 of the second.
        assert_eq!(ex.features(), (&[9u64, 107][..], &[0.5f32, 1.0][..]));
        assert_eq!(ex.namespace(0).hashes, &[102, 107]);
        assert_eq!(ex.namespace(1).values, &[0.5, -3.0]);
        assert!(ex.namespace(2).hashes.is_empty());
    }

    #[test]
    fn errors_name_the_row_and_value() {
        let mut buf = ExampleBuffer::new();
        let err = buf.push_namespace(0, &[1u32], &[f64::NAN], 17).unwrap_err();
        assert!(err.to_string().contains("row 17"), "{err}");
        let err = buf.push_namespace(0, &[-1i64], &[1.0f64], 3).unwrap_err();
        assert!(err.to_string().contains("row 3") && err.to_string().contains("negative"));
        let err = buf.push_namespace(0, &[1u32], &[1e300f64], 8).unwrap_err();
        assert!(err.to_string().contains("row 8") && err.to_string().contains("f32"), "{err}");
        buf.clear();
        let err = buf.finish(f64::INFINITY, 1.0, 5).unwrap_err();
        assert!(err.to_string().contains("row 5: label is inf"), "{err}");
        let err = buf.finish(1.0, -2.0, 6).unwrap_err();
        assert!(err.to_string().contains("row 6: importance weight is -2"), "{err}");
    }
}
