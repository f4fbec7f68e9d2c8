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
use crate::sparse::{canonicalize_row, push_summed, SparseIndex, SparseRows, SparseValue};

/// The canonical features of one namespace of an example: hashes strictly increasing when the
/// seed addition did not wrap (it never does for seed 0), values finite and nonzero.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NamespaceFeatures<'a> {
    pub hashes: &'a [u64],
    pub values: &'a [f32],
}

/// A borrowed example (see the module docs). Built by [`ExampleBuffer::finish`] (or by the
/// learner from a block of rows, see [`super::batch`]).
#[derive(Clone, Copy, Debug)]
pub struct Example<'a> {
    /// The label (-1/+1 for classification losses).
    pub label: f64,
    /// The importance weight, finite and >= 0.
    pub weight: f64,
    /// The feature set; empty when it was not built (see [`Example::features`]).
    hashes: &'a [u64],
    values: &'a [f32],
    n_features: usize,
    spans: &'a [(usize, usize)],
    ns_hashes: &'a [u64],
    ns_values: &'a [f32],
}

impl<'a> Example<'a> {
    /// An example of the namespaces `spans` (ranges of `ns_hashes` / `ns_values`, canonical and
    /// seeded). Its feature set is the namespace itself when there is one, sorted; else the
    /// union, as `union` says.
    pub(crate) fn assemble(
        label: f64,
        weight: f64,
        spans: &'a [(usize, usize)],
        ns_hashes: &'a [u64],
        ns_values: &'a [f32],
        union: Union<'a>,
    ) -> Self {
        let total = spans.iter().map(|&(start, end)| end - start).sum();
        let mut example = Example {
            label,
            weight,
            hashes: &[],
            values: &[],
            n_features: total,
            spans,
            ns_hashes,
            ns_values,
        };
        if let [(start, end)] = *spans {
            let hashes = &ns_hashes[start..end];
            if hashes.windows(2).all(|w| w[0] < w[1]) {
                (example.hashes, example.values) = (hashes, &ns_values[start..end]);
                return example;
            }
        }
        let union = match union {
            Union::Skip => return example,
            Union::Build(union) => {
                union.build(&example);
                union
            }
            Union::Built(union) => union,
        };
        (example.hashes, example.values) = (&union.hashes, &union.values);
        example.n_features = union.hashes.len();
        example
    }

    /// The feature set: the union of the namespaces, hashes strictly increasing (equal hashes
    /// summed, zeros dropped). Empty when the example was built without it, which the learner
    /// does only for enumerators that never call this
    /// ([`super::Expansion::uses_feature_set`]).
    #[inline]
    pub fn features(&self) -> (&'a [u64], &'a [f32]) {
        debug_assert!(
            self.hashes.len() == self.n_features,
            "the feature set of this example was not built"
        );
        (self.hashes, self.values)
    }

    /// Number of features in the feature set (without it: in the namespaces); the constant
    /// feature is not counted.
    #[inline]
    pub fn n_features(&self) -> usize {
        self.n_features
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

/// What the learner knows of a learned example without reading its namespaces: from its block
/// (see [`super::Expansion::reads_example`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExampleShape {
    pub n_namespaces: usize,
    /// Features over all namespaces (the constant not counted).
    pub n_features: usize,
    /// Every namespace holds one feature of value 1 (a hashed categorical field); false when
    /// that is not known (the learner tells it for a whole block: a row with another value
    /// makes it false for every row of the block).
    pub categorical: bool,
}

impl ExampleShape {
    /// The shape of `example` (reading its namespaces), which the blocks' must agree with.
    #[cfg(test)]
    pub(crate) fn of(example: &Example<'_>) -> Self {
        let n_namespaces = example.n_namespaces();
        let categorical = (0..n_namespaces)
            .all(|k| matches!(example.namespace(k).values, [value] if *value == 1.0));
        ExampleShape { n_namespaces, n_features: example.n_features(), categorical }
    }
}

/// What [`Example::assemble`] does about the feature set of several namespaces.
pub(crate) enum Union<'a> {
    /// Nothing: the enumerator reads only the namespaces
    /// ([`super::Expansion::uses_feature_set`]).
    Skip,
    /// Builds it in this scratch.
    Build(&'a mut FeatureUnion),
    /// It is in this scratch already (built for the same example).
    Built(&'a FeatureUnion),
}

/// Reused storage for the union of an example's namespaces (its feature set).
#[derive(Clone, Debug, Default)]
pub(crate) struct FeatureUnion {
    merged: Vec<(u64, f32)>,
    hashes: Vec<u64>,
    values: Vec<f32>,
}

impl FeatureUnion {
    /// The union of `example`'s namespaces: sorted by hash, equal hashes summed, zeros dropped.
    fn build(&mut self, example: &Example<'_>) {
        self.build_of(example, |_| true);
    }

    /// The union of the namespaces `k` of `example` for which `keep(k)` holds (as
    /// [`FeatureUnion::build`]); read it with [`FeatureUnion::features`].
    pub(crate) fn build_of(&mut self, example: &Example<'_>, keep: impl Fn(usize) -> bool) {
        self.merged.clear();
        for k in (0..example.n_namespaces()).filter(|&k| keep(k)) {
            let namespace = example.namespace(k);
            self.merged
                .extend(namespace.hashes.iter().copied().zip(namespace.values.iter().copied()));
        }
        self.merged.sort_unstable_by_key(|&(hash, _)| hash);
        self.hashes.clear();
        self.values.clear();
        push_summed(self.merged.iter().copied(), &mut self.hashes, &mut self.values);
    }

    pub(crate) fn features(&self) -> (&[u64], &[f32]) {
        (&self.hashes, &self.values)
    }
}

/// Reused storage for building [`Example`]s without per-example allocation.
#[derive(Clone, Debug, Default)]
pub struct ExampleBuffer {
    pairs: Vec<(u64, f64)>,
    spans: Vec<(usize, usize)>,
    ns_hashes: Vec<u64>,
    ns_values: Vec<f32>,
    union: FeatureUnion,
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
        push_canonical(
            seed,
            indices,
            values,
            row,
            &mut self.pairs,
            &mut self.ns_hashes,
            &mut self.ns_values,
        )?;
        self.spans.push((start, self.ns_hashes.len()));
        Ok(())
    }

    /// Adds the next namespace from a row whose entries are features in the order given
    /// ([`push_in_order`]).
    pub fn push_namespace_in_order<I: SparseIndex, V: SparseValue>(
        &mut self,
        seed: u64,
        indices: &[I],
        values: &[V],
        row: usize,
    ) -> PolyResult<()> {
        let start = self.ns_hashes.len();
        push_in_order(seed, indices, values, row, &mut self.ns_hashes, &mut self.ns_values)?;
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
        check_label_and_weight(label, weight, row)?;
        Ok(Example::assemble(
            label,
            weight,
            &self.spans,
            &self.ns_hashes,
            &self.ns_values,
            Union::Build(&mut self.union),
        ))
    }
}

/// An example's label must be finite, its importance weight finite and >= 0 (errors name `row`
/// and the value).
pub(crate) fn check_label_and_weight(label: f64, weight: f64, row: usize) -> PolyResult<()> {
    if !label.is_finite() {
        return crate::invalid!("row {row}: label is {label}; labels must be finite");
    }
    if !(weight.is_finite() && weight >= 0.0) {
        return crate::invalid!(
            "row {row}: importance weight is {weight}; weights must be finite and >= 0"
        );
    }
    Ok(())
}

/// Appends one namespace's raw row, canonical ([`canonicalize_row`]) and seeded (feature hash =
/// `index + seed`), to `hashes` / `values`; `pairs` is scratch. `row` is the user's row number,
/// for error messages.
pub(crate) fn push_canonical<I: SparseIndex, V: SparseValue>(
    seed: u64,
    indices: &[I],
    values: &[V],
    row: usize,
    pairs: &mut Vec<(u64, f64)>,
    hashes: &mut Vec<u64>,
    out_values: &mut Vec<f32>,
) -> PolyResult<()> {
    let start = hashes.len();
    // One pass for the common canonical row (strictly increasing indices, finite nonzero values
    // within f32); anything else is redone through canonicalize_row.
    let mut previous: Option<u64> = None;
    for (&index, &value) in indices.iter().zip(values) {
        let value = value.to_f64();
        let narrowed = value as f32;
        match index.to_u64() {
            Some(index)
                if previous.is_none_or(|p| index > p) && narrowed.is_finite() && value != 0.0 =>
            {
                previous = Some(index);
                hashes.push(index.wrapping_add(seed));
                out_values.push(narrowed);
            }
            _ => {
                hashes.truncate(start);
                out_values.truncate(start);
                canonicalize_row(indices, values, None, row, pairs)?;
                for &(index, value) in pairs.iter() {
                    match to_f32(value, index, row) {
                        Ok(value) => {
                            hashes.push(index.wrapping_add(seed));
                            out_values.push(value);
                        }
                        Err(error) => {
                            // Nothing of a failed row stays (a block goes on with other columns).
                            hashes.truncate(start);
                            out_values.truncate(start);
                            return Err(error);
                        }
                    }
                }
                return Ok(());
            }
        }
    }
    Ok(())
}

/// Appends one namespace's row with its entries in the order given, seeded (feature hash =
/// `index + seed`): Vowpal Wabbit's rows ([`super::InOrderRows`]), where a repeated feature and
/// two features on one slot are separate features, learned in file order. Zeros are dropped (as
/// Vowpal Wabbit's parser drops them). A finite value beyond f32 is kept as an infinity of its
/// sign, as Vowpal Wabbit's single-precision parser reads it: the learner's overflow policy
/// then refuses the row or, under Vowpal Wabbit's, predicts it 0 and learns nothing from it
/// (`crate::learner::OverflowPolicy`); NaN and infinite input are errors naming `row`.
pub(crate) fn push_in_order<I: SparseIndex, V: SparseValue>(
    seed: u64,
    indices: &[I],
    values: &[V],
    row: usize,
    hashes: &mut Vec<u64>,
    out_values: &mut Vec<f32>,
) -> PolyResult<()> {
    let start = hashes.len();
    for (&raw_index, &raw_value) in indices.iter().zip(values) {
        let value = raw_value.to_f64();
        if value == 0.0 {
            continue;
        }
        let checked = match raw_index.to_u64() {
            None => crate::invalid!("row {row}: negative feature index {raw_index}"),
            Some(index) if !value.is_finite() => {
                crate::invalid!("row {row}: feature {index} has non-finite value {value}")
            }
            Some(index) => Ok((index, value as f32)),
        };
        match checked {
            Ok((index, value)) => {
                hashes.push(index.wrapping_add(seed));
                out_values.push(value);
            }
            Err(error) => {
                // Nothing of a failed row stays.
                hashes.truncate(start);
                out_values.truncate(start);
                return Err(error);
            }
        }
    }
    Ok(())
}

/// The f32 value of a finite feature value, or an error when it overflows f32.
#[inline]
fn to_f32(value: f64, index: u64, row: usize) -> PolyResult<f32> {
    let narrowed = value as f32;
    if narrowed.is_finite() {
        Ok(narrowed)
    } else {
        // In scientific notation: 1e300 printed in full is 301 digits.
        crate::invalid!("row {row}: feature {index} has value {value:e}, beyond the f32 range")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_beyond_f32_is_named_in_scientific_notation() {
        let mut buf = ExampleBuffer::new();
        let err = buf.push_namespace(0, &[3u32], &[1e300f64], 7).unwrap_err().to_string();
        assert!(err.contains("row 7: feature 3 has value 1e300, beyond the f32 range"), "{err}");
    }

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
