//! Validated inputs for the online learners: a batch of examples in canonical sparse form, with
//! the squared norm of the augmented input z = [x; 1] precomputed.
//!
//! Dense rows are stored sparse too (zeros dropped), so every kernel costs O(d·nnz). Hashed text
//! features need nothing special here: the caller hashes into `n_features` buckets beforehand and
//! `n_features` is then just the table size.

use rayon::prelude::*;

use crate::error::PolyResult;
use crate::sparse::{canonicalize_row, SparseIndex, SparseRows, SparseValue};

/// Largest supported `n_features`: the bias row is stored at index `n_features`, a u32.
pub const MAX_FEATURES: usize = (u32::MAX - 1) as usize;

/// A binary label.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sign {
    Negative,
    Positive,
}

impl Sign {
    /// ±1.0.
    #[inline]
    pub fn value(self) -> f64 {
        match self {
            Sign::Negative => -1.0,
            Sign::Positive => 1.0,
        }
    }

    /// Parses a label that must be −1 or +1; `row` names it in the error.
    pub fn from_i8(label: i8, row: usize) -> PolyResult<Self> {
        match label {
            1 => Ok(Sign::Positive),
            -1 => Ok(Sign::Negative),
            other => crate::invalid!("row {row}: binary label must be -1 or +1, got {other}"),
        }
    }
}

/// One example: the nonzeros of x (indices strictly increasing, each < `n_features`) and ‖z‖² =
/// 1 + ‖x‖² of the augmented input.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ExampleRef<'a> {
    pub indices: &'a [u32],
    pub values: &'a [f64],
    pub z_sq_norm: f64,
    /// The example's weight (1 unless the caller gave weights): it scales the aggressiveness
    /// of a capped step ([`super::PaVariant::weighted`]).
    pub weight: f64,
}

impl ExampleRef<'_> {
    /// Number of stored nonzeros of x (the constant 1 of z not counted).
    pub fn nnz(&self) -> usize {
        self.indices.len()
    }
}

/// A batch of validated examples in CSR layout.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ExampleBatch {
    n_features: usize,
    offsets: Vec<usize>,
    indices: Vec<u32>,
    values: Vec<f64>,
    z_sq_norms: Vec<f64>,
    /// The number of the batch's first row in the caller's input, for error messages.
    first_row: usize,
}

impl ExampleBatch {
    /// An empty batch for inputs of `n_features` features (1 ≤ n_features ≤ [`MAX_FEATURES`]).
    pub fn new(n_features: usize) -> PolyResult<Self> {
        check_n_features(n_features)?;
        Ok(Self { n_features, offsets: vec![0], ..Self::default() })
    }

    /// Rows of a row-major dense matrix with `n_features` columns (`data.len()` must be a multiple
    /// of it). Zeros are dropped; NaN/inf fail naming row and column.
    pub fn from_dense<V: SparseValue>(data: &[V], n_features: usize) -> PolyResult<Self> {
        Self::from_dense_at(data, n_features, 0)
    }

    /// [`Self::from_dense`] for a chunk of a longer input: rows are numbered from `first_row` in
    /// error messages.
    pub fn from_dense_at<V: SparseValue>(
        data: &[V],
        n_features: usize,
        first_row: usize,
    ) -> PolyResult<Self> {
        check_n_features(n_features)?;
        if data.len() % n_features != 0 {
            return crate::invalid!(
                "dense input has {} values, not a multiple of n_features={n_features}",
                data.len()
            );
        }
        // Blocks of rows scanned in parallel, then joined in row order: finding the nonzeros of
        // a dense row costs about as much as a linear PA step on it.
        const BLOCK_ROWS: usize = 256;
        let parts: Vec<PolyResult<Self>> = data
            .par_chunks(BLOCK_ROWS * n_features)
            .enumerate()
            .map(|(block, chunk)| {
                let mut part = Self::new(n_features)?;
                let first = first_row + block * BLOCK_ROWS;
                for (row, x) in chunk.chunks_exact(n_features).enumerate() {
                    part.push_dense_row(x, first + row)?;
                }
                Ok(part)
            })
            .collect();
        let mut batch = Self { first_row, ..Self::new(n_features)? };
        let n_values = parts.iter().map(|p| p.as_ref().map_or(0, |p| p.nnz())).sum();
        batch.indices.reserve(n_values);
        batch.values.reserve(n_values);
        for part in parts {
            batch.append(part?);
        }
        Ok(batch)
    }

    /// Checks a dense matrix as [`Self::from_dense_at`] would, without keeping a batch: when
    /// every value is finite and small enough that no row's squared norm can leave f32 (one
    /// vectorizable pass), nothing can fail; otherwise the batch is built, which finds the row
    /// at fault. (Building costs 10x the pass on a digit stream, and a fit checks every batch
    /// before it learns any.)
    pub fn check_dense<V: SparseValue>(
        data: &[V],
        n_features: usize,
        first_row: usize,
    ) -> PolyResult<()> {
        check_n_features(n_features)?;
        // Written as compares and selects, which vectorize (f64::max does not). A NaN is
        // never larger, so it is looked for apart: only a finite |v| is <= f64::MAX.
        let (mut largest, mut finite) = (0.0f64, true);
        for v in data {
            let v = v.to_f64().abs();
            largest = if v > largest { v } else { largest };
            finite &= v <= f64::MAX;
        }
        let bound = 1.0 + n_features as f64 * largest * largest;
        if finite && data.len() % n_features == 0 && bound <= f64::from(f32::MAX) {
            return Ok(());
        }
        Self::from_dense_at(data, n_features, first_row).map(drop)
    }

    /// Appends the examples of `other` (same `n_features`).
    fn append(&mut self, other: Self) {
        let base = self.indices.len();
        self.offsets.extend(other.offsets[1..].iter().map(|end| base + end));
        self.indices.extend_from_slice(&other.indices);
        self.values.extend_from_slice(&other.values);
        self.z_sq_norms.extend_from_slice(&other.z_sq_norms);
    }

    /// Rows of a CSR batch, canonicalized (sorted, duplicates summed, zeros dropped); negative,
    /// out-of-range indices and NaN/inf values fail naming the row.
    pub fn from_sparse<I: SparseIndex, V: SparseValue>(
        rows: &SparseRows<'_, I, V>,
        n_features: usize,
    ) -> PolyResult<Self> {
        let mut batch = Self { first_row: rows.row_number(0), ..Self::new(n_features)? };
        let mut canonical = Vec::new();
        batch.indices.reserve(rows.n_entries());
        batch.values.reserve(rows.n_entries());
        for row in 0..rows.n_rows() {
            let (indices, values) = rows.row(row);
            let number = rows.row_number(row);
            canonicalize_row(indices, values, Some(n_features as u64), number, &mut canonical)?;
            batch.push_canonical(&canonical, number)?;
        }
        Ok(batch)
    }

    /// Checks `rows` as [`Self::from_sparse`] would, without keeping a batch: when every entry
    /// is plain and in range nothing can fail (no value, sum or squared norm can overflow), which
    /// two vectorizable passes show; otherwise the batch is built, which finds the row at fault.
    pub fn check_sparse<I: SparseIndex, V: SparseValue>(
        rows: &SparseRows<'_, I, V>,
        n_features: usize,
    ) -> PolyResult<()> {
        Self::new(n_features)?;
        if rows.entries_are_plain() && rows.indices_below(n_features as u64) {
            return Ok(());
        }
        Self::from_sparse(rows, n_features).map(drop)
    }

    /// Appends one dense row (length `n_features`); `row` names it in errors.
    pub fn push_dense_row<V: SparseValue>(&mut self, x: &[V], row: usize) -> PolyResult<()> {
        if x.len() != self.n_features {
            return crate::invalid!(
                "row {row}: dense row has {} values but n_features={}",
                x.len(),
                self.n_features
            );
        }
        // Every value is written and the next slot taken only past a nonzero: no branch on
        // the data (a digit's zeros and nonzeros alternate in runs the predictor misses; the
        // branching loop cost 4x). Zeros add nothing to the norm, so it is the sparse form's.
        let start = self.indices.len();
        self.indices.resize(start + x.len(), 0);
        self.values.resize(start + x.len(), 0.0);
        let (indices, values) = (&mut self.indices[start..], &mut self.values[start..]);
        let mut kept = 0;
        for (column, value) in x.iter().enumerate() {
            let value = value.to_f64();
            indices[kept] = column as u32;
            values[kept] = value;
            kept += usize::from(value != 0.0);
        }
        self.indices.truncate(start + kept);
        self.values.truncate(start + kept);
        // Summed over the nonzeros kept (a chain of additions over every value cost more than
        // the rest of the row); in column order, as the sparse form sums them.
        let sq_norm = self.values[start..].iter().fold(1.0, |sum, v| sum + v * v);
        if !sq_norm.is_finite() {
            if let Some((column, value)) =
                x.iter().map(|v| v.to_f64()).enumerate().find(|(_, v)| !v.is_finite())
            {
                self.indices.truncate(start);
                self.values.truncate(start);
                return crate::invalid!("row {row}, column {column}: non-finite value {value}");
            }
        }
        self.finish_row(sq_norm, row)
    }

    /// Appends one sparse row given as (index, value) pairs in any order (canonicalized here).
    pub fn push_sparse_row<I: SparseIndex, V: SparseValue>(
        &mut self,
        indices: &[I],
        values: &[V],
        row: usize,
    ) -> PolyResult<()> {
        if indices.len() != values.len() {
            return crate::invalid!(
                "row {row}: {} indices but {} values",
                indices.len(),
                values.len()
            );
        }
        let mut canonical = Vec::with_capacity(indices.len());
        canonicalize_row(indices, values, Some(self.n_features as u64), row, &mut canonical)?;
        self.push_canonical(&canonical, row)
    }

    fn push_canonical(&mut self, canonical: &[(u64, f64)], row: usize) -> PolyResult<()> {
        let mut sq_norm = 1.0;
        for &(index, value) in canonical {
            // canonicalize_row checked index < n_features ≤ MAX_FEATURES.
            self.indices.push(index as u32);
            self.values.push(value);
            sq_norm += value * value;
        }
        self.finish_row(sq_norm, row)
    }

    /// Closes the row. Finite values can still overflow when squared, and the model keeps its
    /// hidden vectors (whose squares scale with ‖z‖²) in single precision: a row whose squared
    /// norm is beyond f32 would make them infinite and every later score NaN, so it fails here,
    /// naming its largest value.
    fn finish_row(&mut self, z_sq_norm: f64, row: usize) -> PolyResult<()> {
        if z_sq_norm.is_nan() || z_sq_norm > f64::from(f32::MAX) {
            let start = self.offsets[self.len()];
            let (column, value) = (self.indices[start..].iter())
                .zip(&self.values[start..])
                .max_by(|a, b| a.1.abs().total_cmp(&b.1.abs()))
                .map_or((0, 0.0), |(&column, &value)| (column, value));
            self.indices.truncate(start);
            self.values.truncate(start);
            return crate::invalid!(
                "row {row}: the squared norm of the row ({z_sq_norm:.3e}) is beyond the f32 range \
                 of the model's parameters (largest value {value:e} at column {column}); scale \
                 the features"
            );
        }
        self.offsets.push(self.indices.len());
        self.z_sq_norms.push(z_sq_norm);
        Ok(())
    }

    pub fn n_features(&self) -> usize {
        self.n_features
    }

    /// Example `i`'s row number in the caller's input (for error messages).
    pub fn row_number(&self, i: usize) -> usize {
        self.first_row + i
    }

    /// Number of examples.
    pub fn len(&self) -> usize {
        self.z_sq_norms.len()
    }

    pub fn is_empty(&self) -> bool {
        self.z_sq_norms.is_empty()
    }

    /// Total number of stored nonzeros.
    pub fn nnz(&self) -> usize {
        self.indices.len()
    }

    /// Example `i` (panics if out of range).
    #[inline]
    pub fn example(&self, i: usize) -> ExampleRef<'_> {
        let (start, end) = (self.offsets[i], self.offsets[i + 1]);
        ExampleRef {
            indices: &self.indices[start..end],
            values: &self.values[start..end],
            z_sq_norm: self.z_sq_norms[i],
            weight: 1.0,
        }
    }

    /// Checks that `n_labels` labels go with this batch.
    pub(crate) fn check_labels_len(&self, n_labels: usize) -> PolyResult<()> {
        if n_labels != self.len() {
            return crate::invalid!("{} labels for {} examples", n_labels, self.len());
        }
        Ok(())
    }
}

pub(crate) fn check_n_features(n_features: usize) -> PolyResult<()> {
    if n_features == 0 || n_features > MAX_FEATURES {
        return crate::invalid!("n_features must be in 1..={MAX_FEATURES}, got {n_features}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_rows_drop_zeros_and_keep_norms() {
        let batch = ExampleBatch::from_dense(&[0.0, 2.0, 0.0, 1.0, 0.0, -1.0], 3).unwrap();
        assert_eq!(batch.len(), 2);
        let e = batch.example(0);
        assert_eq!((e.indices, e.values, e.z_sq_norm), (&[1u32][..], &[2.0][..], 5.0));
        let e = batch.example(1);
        assert_eq!((e.indices, e.values, e.z_sq_norm), (&[0u32, 2][..], &[1.0, -1.0][..], 3.0));
        assert_eq!(batch.nnz(), 3);
    }

    #[test]
    fn dense_blocks_join_in_row_order() {
        // More rows than one parallel block: the joined batch equals rows pushed one by one.
        let n_features = 3;
        let data: Vec<f64> = (0..1000 * n_features).map(|i| ((i * 7) % 5) as f64 - 1.0).collect();
        let batch = ExampleBatch::from_dense(&data, n_features).unwrap();
        let mut one_by_one = ExampleBatch::new(n_features).unwrap();
        for (row, x) in data.chunks_exact(n_features).enumerate() {
            one_by_one.push_dense_row(x, row).unwrap();
        }
        assert_eq!(batch, one_by_one);
        let mut bad = data.clone();
        bad[700 * n_features + 2] = f64::NAN;
        let err = ExampleBatch::from_dense_at(&bad, n_features, 5).unwrap_err().to_string();
        assert_eq!(err, "row 705, column 2: non-finite value NaN");
    }

    #[test]
    fn sparse_rows_are_canonicalized() {
        let rows = SparseRows::new(&[0, 3, 3], &[4u32, 1, 4], &[1.0f32, 2.0, 2.0]).unwrap();
        let batch = ExampleBatch::from_sparse(&rows, 5).unwrap();
        let e = batch.example(0);
        assert_eq!((e.indices, e.values, e.z_sq_norm), (&[1u32, 4][..], &[2.0, 3.0][..], 14.0));
        assert_eq!(batch.example(1).nnz(), 0);
        assert_eq!(batch.example(1).z_sq_norm, 1.0);
    }

    proptest::proptest! {
        /// The check without a build says exactly what building says: the same error, or none.
        #[test]
        fn checking_rows_agrees_with_building_them(
            rows in proptest::collection::vec(
                proptest::collection::vec(
                    (
                        -1i64..12,
                        proptest::sample::select(vec![0.0, 1.0, -2.5, 1e30, 1e200, f64::NAN]),
                    ),
                    0..5,
                ),
                0..6,
            ),
            first_row in 0usize..100,
        ) {
            let mut offsets = vec![0i64];
            let (mut indices, mut values) = (Vec::new(), Vec::new());
            for row in &rows {
                for &(index, value) in row {
                    indices.push(index);
                    values.push(value);
                }
                offsets.push(indices.len() as i64);
            }
            let rows = SparseRows::new(&offsets, &indices, &values).unwrap().with_first_row(first_row);
            let built = ExampleBatch::from_sparse(&rows, 10).map(drop).map_err(|e| e.to_string());
            let checked = ExampleBatch::check_sparse(&rows, 10).map_err(|e| e.to_string());
            proptest::prop_assert_eq!(checked, built);
        }
    }

    #[test]
    fn bad_inputs_fail_with_precise_messages() {
        let err = ExampleBatch::from_dense(&[1.0, f64::NAN], 2).unwrap_err().to_string();
        assert_eq!(err, "row 0, column 1: non-finite value NaN");
        let err = ExampleBatch::from_dense_at(&[1.0, 2.0, 3.0, f64::INFINITY], 2, 7)
            .unwrap_err()
            .to_string();
        assert!(err.contains("row 8, column 1"), "{err}");
        let err = ExampleBatch::from_dense(&[1.0, 2.0, 3.0], 2).unwrap_err().to_string();
        assert_eq!(err, "dense input has 3 values, not a multiple of n_features=2");
        let err = ExampleBatch::from_dense(&[1.0f64], 0).unwrap_err().to_string();
        assert!(err.starts_with("n_features must be in 1..="), "{err}");
        let rows = SparseRows::new(&[0, 1], &[7u32], &[1.0]).unwrap();
        let err = ExampleBatch::from_sparse(&rows.with_first_row(10), 5).unwrap_err().to_string();
        assert_eq!(err, "row 10: feature index 7 is out of range for n_features=5");
        let mut batch = ExampleBatch::new(3).unwrap();
        let err = batch.push_sparse_row(&[0u32, 1], &[1.0], 4).unwrap_err().to_string();
        assert_eq!(err, "row 4: 2 indices but 1 values");
        let err = batch.push_sparse_row(&[0u32], &[f64::INFINITY], 4).unwrap_err().to_string();
        assert_eq!(err, "row 4: feature 0 has non-finite value inf");
        let err = batch.push_dense_row(&[1.0, 2.0], 9).unwrap_err().to_string();
        assert_eq!(err, "row 9: dense row has 2 values but n_features=3");
        let err = batch.push_dense_row(&[1e200, 0.0, 0.0], 2).unwrap_err().to_string();
        assert!(err.starts_with("row 2: the squared norm of the row (inf) is beyond"), "{err}");
        // Finite in f64, but beyond the f32 parameters: refused naming the value and column.
        let err = batch.push_dense_row(&[0.0, 1e39, 0.0], 5).unwrap_err().to_string();
        assert!(err.contains("row 5: the squared norm of the row (1.000e78)"), "{err}");
        assert!(err.contains("largest value 1e39 at column 1"), "{err}");
        // The dense check finds what building finds, by its fast pass or by building.
        for (data, row) in [(vec![1.0, f64::NAN, 0.0, 0.0], 0), (vec![0.0, 0.0, 3e19, 1.0], 1)] {
            let built = ExampleBatch::from_dense_at(&data, 2, 7).unwrap_err().to_string();
            let checked = ExampleBatch::check_dense(&data, 2, 7).unwrap_err().to_string();
            assert_eq!(checked, built);
            assert!(checked.starts_with(&format!("row {}", 7 + row)), "{checked}");
        }
        ExampleBatch::check_dense(&[1e18f32, -1e18, 0.0, 5.0], 2, 0).unwrap();
        let err = batch.push_sparse_row(&[2u32], &[2e19], 6).unwrap_err().to_string();
        assert!(err.contains("row 6: ") && err.contains("2e19 at column 2"), "{err}");
        assert!(batch.is_empty());
        assert_eq!(batch.check_labels_len(1).unwrap_err().to_string(), "1 labels for 0 examples");
        assert_eq!(
            Sign::from_i8(0, 3).unwrap_err().to_string(),
            "row 3: binary label must be -1 or +1, got 0"
        );
    }
}
