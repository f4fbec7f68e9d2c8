//! The sparse-row data model every part of polars-poly shares.
//!
//! A batch of rows is stored CSR-style: row `r` owns the entries `offsets[r]..offsets[r + 1]` of
//! `indices` and `values` (this is exactly the memory layout of an Arrow
//! `LargeList<Struct{index, value}>` column and of scipy's CSR arrays).
//!
//! **Canonical form** (what [`canonicalize_row`] produces and every kernel consumes): indices
//! strictly increasing, no stored zeros, every value finite. Rows may arrive in any order and with
//! repeated indices; a row means the *sum* of its entries (scipy's rule), so duplicates are added
//! together and entries that cancel to zero are dropped.

use crate::error::{PolyError, PolyResult};
use crate::memory::prefetch;

/// An index type a sparse column may carry (Arrow `UInt32`/`UInt64`, scipy `int32`/`int64`).
pub trait SparseIndex: Copy + Send + Sync + std::fmt::Display + 'static {
    /// The index as u64, or `None` when it is negative.
    fn to_u64(self) -> Option<u64>;
}

impl SparseIndex for u32 {
    #[inline]
    fn to_u64(self) -> Option<u64> {
        Some(u64::from(self))
    }
}
impl SparseIndex for u64 {
    #[inline]
    fn to_u64(self) -> Option<u64> {
        Some(self)
    }
}
impl SparseIndex for i32 {
    #[inline]
    fn to_u64(self) -> Option<u64> {
        u64::try_from(self).ok()
    }
}
impl SparseIndex for i64 {
    #[inline]
    fn to_u64(self) -> Option<u64> {
        u64::try_from(self).ok()
    }
}

/// A value type a sparse column may carry (`Float32`/`Float64`).
pub trait SparseValue: Copy + Send + Sync + 'static {
    fn to_f64(self) -> f64;
}
impl SparseValue for f32 {
    #[inline]
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
}
impl SparseValue for f64 {
    #[inline]
    fn to_f64(self) -> f64 {
        self
    }
}

/// A borrowed batch of sparse rows in CSR layout. Offsets need not start at zero (Arrow slices).
#[derive(Clone, Copy, Debug)]
pub struct SparseRows<'a, I, V> {
    offsets: &'a [i64],
    indices: &'a [I],
    values: &'a [V],
    /// Number of the first row in the whole column, so errors name the user's row, not the chunk's.
    first_row: usize,
}

impl<'a, I: SparseIndex, V: SparseValue> SparseRows<'a, I, V> {
    /// Checks the CSR invariants (non-decreasing offsets inside the entry arrays) once, so that
    /// row access afterwards cannot go out of bounds.
    pub fn new(offsets: &'a [i64], indices: &'a [I], values: &'a [V]) -> PolyResult<Self> {
        if offsets.is_empty() {
            return crate::invalid!(
                "sparse rows need at least one offset (got an empty offsets array)"
            );
        }
        if indices.len() != values.len() {
            return crate::invalid!(
                "sparse rows have {} indices but {} values",
                indices.len(),
                values.len()
            );
        }
        let mut previous = offsets[0];
        if previous < 0 {
            return crate::invalid!("offset 0 is negative ({previous})");
        }
        for (position, &offset) in offsets.iter().enumerate().skip(1) {
            if offset < previous {
                return crate::invalid!(
                    "offsets decrease at row {}: {previous} then {offset}",
                    position - 1
                );
            }
            previous = offset;
        }
        if previous as u64 > indices.len() as u64 {
            return crate::invalid!(
                "last offset {previous} is past the {} stored entries",
                indices.len()
            );
        }
        Ok(Self { offsets, indices, values, first_row: 0 })
    }

    /// Rows over offsets the caller knows to be non-negative and non-decreasing: an Arrow list
    /// array's offsets are, by the format's contract (Polars' offsets buffer type holds them
    /// so). Only what that does not promise is checked: the entry arrays' lengths and the last
    /// offset against them. [`SparseRows::new`]'s pass over every offset is the batch's first
    /// read of them, a cold pass over a gigabyte on a large frame (10% of a fit from memory). A
    /// broken promise can only make a row access panic on its slice bounds, never read outside
    /// the arrays.
    pub fn from_ordered_offsets(
        offsets: &'a [i64],
        indices: &'a [I],
        values: &'a [V],
    ) -> PolyResult<Self> {
        debug_assert!(offsets.windows(2).all(|w| w[0] <= w[1]), "offsets out of order");
        match (offsets.first(), offsets.last()) {
            (Some(&first), Some(&last))
                if first >= 0
                    && indices.len() == values.len()
                    && last as u64 <= indices.len() as u64 =>
            {
                Ok(Self { offsets, indices, values, first_row: 0 })
            }
            // What is wrong fails as the full check fails.
            _ => Self::new(offsets, indices, values),
        }
    }

    /// The same rows, numbered from `first_row` in error messages (a chunk of a longer column).
    pub fn with_first_row(self, first_row: usize) -> Self {
        Self { first_row, ..self }
    }

    /// Row `row` alone (its offsets' window over the same entries), numbered as here.
    pub fn window(&self, row: usize) -> Self {
        Self { offsets: &self.offsets[row..row + 2], first_row: self.first_row + row, ..*self }
    }

    /// The user-facing number of row `row` of this batch.
    #[inline]
    pub fn row_number(&self, row: usize) -> usize {
        self.first_row + row
    }

    pub fn n_rows(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Whether every entry of the rows is plain: a non-negative index and a value whose square is
    /// finite in single precision (the learners' precision). One vectorizable pass, so that a
    /// learner can refuse a batch before learning any of it; the row at fault is found by the
    /// (slower) row-by-row path only when this says no.
    pub fn entries_are_plain(&self) -> bool {
        const SQRT_F32_MAX: f64 = 1.844_674_3e19;
        let (start, end) = (self.offsets[0] as usize, self.offsets[self.n_rows()] as usize);
        // NaN fails `<=` too.
        let in_range =
            self.values[start..end].iter().filter(|v| v.to_f64().abs() <= SQRT_F32_MAX).count();
        in_range == end - start && self.indices[start..end].iter().all(|i| i.to_u64().is_some())
    }

    /// Whether every stored index is below `n` (negative ones are not). One vectorizable pass.
    pub fn indices_below(&self, n: u64) -> bool {
        let (start, end) = (self.offsets[0] as usize, self.offsets[self.n_rows()] as usize);
        self.indices[start..end].iter().all(|i| i.to_u64().is_some_and(|i| i < n))
    }

    /// Total number of stored entries over all rows.
    pub fn n_entries(&self) -> usize {
        (self.offsets[self.n_rows()] - self.offsets[0]) as usize
    }

    /// The stored (index, value) slices of row `row`.
    #[inline]
    pub fn row(&self, row: usize) -> (&'a [I], &'a [V]) {
        let start = self.offsets[row] as usize;
        let end = self.offsets[row + 1] as usize;
        (&self.indices[start..end], &self.values[start..end])
    }

    /// The offsets (`end - start + 1` of them) and the stored entries of rows `start..end`.
    #[inline]
    pub fn run(&self, start: usize, end: usize) -> (&'a [i64], &'a [I], &'a [V]) {
        let offsets = &self.offsets[start..=end];
        let (first, last) = (offsets[0] as usize, offsets[end - start] as usize);
        (offsets, &self.indices[first..last], &self.values[first..last])
    }

    /// [`SparseRows::row`], also prefetching the arrays [`READ_AHEAD_BYTES`] past the row: a
    /// reader that walks many columns row by row (a learner over a dozen sparse columns) reads
    /// three times as many short streams as the hardware prefetcher follows.
    #[inline]
    pub fn row_reading_ahead(&self, row: usize) -> (&'a [I], &'a [V]) {
        let end = self.offsets[row + 1] as usize;
        let ahead = |bytes_per_entry: usize| READ_AHEAD_BYTES / bytes_per_entry;
        prefetch(self.offsets.as_ptr().wrapping_add(row + ahead(size_of::<i64>())));
        prefetch(self.indices.as_ptr().wrapping_add(end + ahead(size_of::<I>())));
        prefetch(self.values.as_ptr().wrapping_add(end + ahead(size_of::<V>())));
        self.row(row)
    }
}

impl<I: SparseIndex, V: SparseValue> SparseRows<'_, I, V> {
    /// Prefetches every cache line of rows `start..end` (their offsets and entries; rows past
    /// the last are ignored): a reader that will walk a block of rows of a dozen columns reads
    /// three dozen streams, more than the hardware prefetcher follows.
    pub fn prefetch_rows(&self, start: usize, end: usize) {
        let end = end.min(self.n_rows());
        if start >= end {
            return;
        }
        let (first, last) = (self.offsets[start] as usize, self.offsets[end] as usize);
        prefetch_lines(&self.offsets[start..=end]);
        prefetch_lines(&self.indices[first..last]);
        prefetch_lines(&self.values[first..last]);
    }
}

/// Prefetches each cache line of `items`.
fn prefetch_lines<T>(items: &[T]) {
    const LINE: usize = 64;
    let bytes = size_of_val(items);
    let start = items.as_ptr().cast::<u8>();
    for offset in (0..bytes).step_by(LINE) {
        prefetch(start.wrapping_add(offset));
    }
}

/// How far ahead [`SparseRows::row_reading_ahead`] prefetches: 8 cache lines, some 10 examples
/// of a dozen one-hot columns.
const READ_AHEAD_BYTES: usize = 512;

/// Appends `sorted` (pairs sorted by key) to `keys` and `values` in canonical form: the values
/// of equal keys summed in order, sums that are exactly zero dropped.
pub fn push_summed<K, V>(
    sorted: impl IntoIterator<Item = (K, V)>,
    keys: &mut Vec<K>,
    values: &mut Vec<V>,
) where
    K: Copy + PartialEq,
    V: Copy + PartialEq + Default + std::ops::AddAssign,
{
    let mut entries = sorted.into_iter().peekable();
    while let Some((key, mut sum)) = entries.next() {
        while let Some((_, value)) = entries.next_if(|&(next, _)| next == key) {
            sum += value;
        }
        if sum != V::default() {
            keys.push(key);
            values.push(sum);
        }
    }
}

/// Writes row `row` in canonical form into `out` (cleared first): sorted, duplicates summed,
/// zeros dropped. Fails on negative or out-of-range indices and on NaN/infinite values, naming
/// the row (as numbered by the caller) and the offending entry.
pub fn canonicalize_row<I: SparseIndex, V: SparseValue>(
    indices: &[I],
    values: &[V],
    n_features: Option<u64>,
    row: usize,
    out: &mut Vec<(u64, f64)>,
) -> PolyResult<()> {
    out.clear();
    let mut sorted_unique = true;
    let mut previous: Option<u64> = None;
    for (&raw_index, &raw_value) in indices.iter().zip(values) {
        let value = raw_value.to_f64();
        let index = match raw_index.to_u64() {
            Some(index) => index,
            None => return crate::invalid!("row {row}: negative feature index {raw_index}"),
        };
        if !value.is_finite() {
            return crate::invalid!("row {row}: feature {index} has non-finite value {value}");
        }
        if let Some(n) = n_features {
            if index >= n {
                return crate::invalid!(
                    "row {row}: feature index {index} is out of range for n_features={n}"
                );
            }
        }
        if previous.is_some_and(|p| p >= index) {
            sorted_unique = false;
        }
        previous = Some(index);
        out.push((index, value));
    }
    if !sorted_unique {
        out.sort_unstable_by_key(|&(index, _)| index);
        sum_duplicates(out);
    }
    out.retain(|&(_, value)| value != 0.0);
    Ok(())
}

/// True when a row is already canonical (strictly increasing, in range, finite, nonzero): the
/// common case, which kernels then read without sorting or copying through a pair buffer.
#[inline]
pub fn is_canonical<I: SparseIndex, V: SparseValue>(
    indices: &[I],
    values: &[V],
    n_features: Option<u64>,
) -> bool {
    let limit = n_features.unwrap_or(u64::MAX);
    let mut next_allowed = 0u64;
    indices
        .iter()
        .zip(values)
        .all(|(&index, &value)| canonical_entry(index, value, &mut next_allowed, limit).is_some())
}

/// One entry of a canonical row, converted: its index is at least `next_allowed` (advanced past
/// it) and below `limit`, its value finite and nonzero. None if the row is not canonical here.
#[inline(always)]
pub fn canonical_entry<I: SparseIndex, V: SparseValue>(
    raw_index: I,
    raw_value: V,
    next_allowed: &mut u64,
    limit: u64,
) -> Option<(u64, f64)> {
    let value = raw_value.to_f64();
    let index = raw_index.to_u64()?;
    if index >= *next_allowed && index < limit && value.is_finite() && value != 0.0 {
        *next_allowed = index + 1;
        Some((index, value))
    } else {
        None
    }
}

/// Adds up the values of equal consecutive indices in a sorted row, in place.
fn sum_duplicates(row: &mut Vec<(u64, f64)>) {
    let mut write = 0;
    for read in 0..row.len() {
        if write > 0 && row[write - 1].0 == row[read].0 {
            row[write - 1].1 += row[read].1;
        } else {
            row[write] = row[read];
            write += 1;
        }
    }
    row.truncate(write);
}

/// An owned batch of canonical sparse rows, the output of every kernel.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SparseMatrix<I = u64, V = f64> {
    pub offsets: Vec<i64>,
    pub indices: Vec<I>,
    pub values: Vec<V>,
}

impl<I: Copy, V: Copy> SparseMatrix<I, V> {
    pub fn with_capacity(rows: usize, entries: usize) -> Self {
        let mut offsets = Vec::with_capacity(rows + 1);
        offsets.push(0);
        Self { offsets, indices: Vec::with_capacity(entries), values: Vec::with_capacity(entries) }
    }

    pub fn n_rows(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// The rows of `parts` (each with offsets from 0) in order, allocated once at their total
    /// size; Ctrl-C stops it between parts.
    pub fn concat(parts: &[Self]) -> PolyResult<Self> {
        let rows = parts.iter().map(Self::n_rows).sum();
        let entries = parts.iter().map(|part| part.indices.len()).sum();
        let mut all = Self::with_capacity(rows, entries);
        for part in parts {
            crate::interrupt::check()?;
            let shift = all.indices.len() as i64;
            all.offsets.extend(part.offsets[1..].iter().map(|&offset| offset + shift));
            all.indices.extend_from_slice(&part.indices);
            all.values.extend_from_slice(&part.values);
        }
        Ok(all)
    }

    pub fn push(&mut self, index: I, value: V) {
        self.indices.push(index);
        self.values.push(value);
    }

    /// Closes the current row.
    pub fn end_row(&mut self) {
        self.offsets.push(self.indices.len() as i64);
    }
}

/// Numeric columns to canonical sparse rows: column `c` becomes index `c`, zeros and missing
/// values (`get` returns `None`, e.g. a null) are left out, NaN/inf fail naming column and row
/// (row 0 being the caller's row `first_row`).
pub fn columns_to_sparse<F>(
    n_rows: usize,
    column_names: &[&str],
    first_row: usize,
    get: F,
) -> PolyResult<SparseMatrix<u32, f64>>
where
    F: Fn(usize, usize) -> Option<f64>,
{
    if u32::try_from(column_names.len()).is_err() {
        return Err(PolyError::Overflow(format!(
            "{} columns do not fit UInt32 indices",
            column_names.len()
        )));
    }
    let mut out = SparseMatrix::with_capacity(n_rows, 0);
    for row in 0..n_rows {
        for (col, name) in column_names.iter().enumerate() {
            let Some(value) = get(col, row) else { continue };
            if !value.is_finite() {
                let row = first_row + row;
                return crate::invalid!("column {name:?}, row {row}: non-finite value {value}");
            }
            if value != 0.0 {
                out.push(col as u32, value);
            }
        }
        out.end_row();
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn canonical_row_sorts_sums_and_drops_zeros() {
        let mut out = Vec::new();
        canonicalize_row(&[5u32, 1, 5, 3, 2], &[1.0, 2.0, -1.0, 0.0, 4.0], None, 0, &mut out)
            .unwrap();
        assert_eq!(out, vec![(1, 2.0), (2, 4.0)]);
    }

    #[test]
    fn canonical_row_errors_name_row_and_value() {
        let mut out = Vec::new();
        let err = canonicalize_row(&[1u32], &[f64::NAN], None, 7, &mut out).unwrap_err();
        assert!(err.to_string().contains("row 7"), "{err}");
        let err = canonicalize_row(&[9u32], &[1.0f64], Some(5), 3, &mut out).unwrap_err();
        assert!(err.to_string().contains("out of range for n_features=5"), "{err}");
        let err = canonicalize_row(&[-1i32], &[1.0f64], None, 0, &mut out).unwrap_err();
        assert!(err.to_string().contains("negative"), "{err}");
    }

    #[test]
    fn concatenated_matrices_hold_the_parts_rows_in_order() {
        let part = |rows: &[&[(u32, f32)]]| {
            let mut matrix = SparseMatrix::with_capacity(rows.len(), 0);
            for row in rows {
                row.iter().for_each(|&(index, value)| matrix.push(index, value));
                matrix.end_row();
            }
            matrix
        };
        let rows: [&[(u32, f32)]; 5] = [&[(1, 0.5)], &[], &[(2, 1.0), (7, -2.0)], &[(0, 3.0)], &[]];
        let parts = [part(&rows[..2]), part(&[]), part(&rows[2..4]), part(&rows[4..])];
        assert_eq!(SparseMatrix::concat(&parts).unwrap(), part(&rows));
        assert_eq!(SparseMatrix::<u32, f32>::concat(&[]).unwrap(), part(&[]));
    }

    #[test]
    fn rows_validate_offsets() {
        let error = |offsets: &[i64]| {
            let values = [1.0; 4];
            SparseRows::<u32, f64>::new(offsets, &[0, 1, 2, 3], &values).unwrap_err().to_string()
        };
        assert!(error(&[0, 2, 1]).contains("offsets decrease at row 1: 2 then 1"));
        assert!(error(&[0, 1, 3, 3, 2, 4]).contains("offsets decrease at row 3: 3 then 2"));
        assert!(error(&[-1, 2]).contains("offset 0 is negative (-1)"));
        assert!(error(&[0, 2, 5]).contains("last offset 5 is past the 4 stored entries"));
        assert!(SparseRows::<u32, f64>::new(&[0, 3], &[0, 1], &[1.0, 1.0]).is_err());
        assert!(SparseRows::<u32, f64>::new(&[], &[], &[]).is_err());
        let rows = SparseRows::<u32, f64>::new(&[1, 2, 2], &[9, 4], &[1.0, 2.0]).unwrap();
        assert_eq!(rows.n_rows(), 2);
        assert_eq!(rows.row(0), (&[4u32][..], &[2.0][..]));
        assert_eq!(rows.row(1).0.len(), 0);
    }

    #[test]
    fn ordered_offsets_check_what_order_does_not_promise() {
        let ordered = |offsets: &[i64], entries: usize| {
            let (indices, values) = (vec![0u32; entries], vec![1.0f64; entries]);
            let rows = SparseRows::from_ordered_offsets(offsets, &indices, &values);
            let checked = SparseRows::new(offsets, &indices, &values);
            assert_eq!(rows.is_ok(), checked.is_ok(), "{offsets:?}");
            rows.map(|r| r.n_rows()).map_err(|e| e.to_string())
        };
        assert_eq!(ordered(&[1, 2, 2, 4], 4), Ok(3));
        assert_eq!(ordered(&[0], 0), Ok(0));
        assert!(ordered(&[-1, 2], 4).unwrap_err().contains("offset 0 is negative (-1)"));
        assert!(ordered(&[0, 2, 5], 4).unwrap_err().contains("last offset 5 is past the 4"));
        assert!(ordered(&[], 0).unwrap_err().contains("at least one offset"));
        let mismatched = SparseRows::<u32, f64>::from_ordered_offsets(&[0, 1], &[0, 1], &[1.0]);
        assert!(mismatched.unwrap_err().to_string().contains("2 indices but 1 values"));
    }

    #[test]
    fn columns_to_sparse_skips_missing_and_zeros() {
        let a = [1.0, 0.0, 2.0];
        let b = [f64::NAN, 3.0, 0.0];
        let get = |c: usize, r: usize| -> Option<f64> {
            if c == 1 && r == 0 {
                None
            } else {
                Some(if c == 0 { a[r] } else { b[r] })
            }
        };
        let m = columns_to_sparse(3, &["a", "b"], 0, get).unwrap();
        assert_eq!(m.offsets, vec![0, 1, 2, 3]);
        assert_eq!(m.indices, vec![0, 1, 0]);
        assert_eq!(m.values, vec![1.0, 3.0, 2.0]);
        let err = columns_to_sparse(1, &["a", "b"], 10, |c, _| {
            Some(if c == 1 { f64::INFINITY } else { 1.0 })
        })
        .unwrap_err();
        assert!(err.to_string().contains("column \"b\", row 10"), "{err}");
    }

    proptest! {
        #[test]
        fn canonical_row_equals_dense_sum(entries in proptest::collection::vec((0u32..20, -3i32..4), 0..30)) {
            let indices: Vec<u32> = entries.iter().map(|e| e.0).collect();
            let values: Vec<f64> = entries.iter().map(|e| f64::from(e.1)).collect();
            let mut dense = [0.0f64; 20];
            for (&i, &v) in indices.iter().zip(&values) { dense[i as usize] += v; }
            let mut out = Vec::new();
            canonicalize_row(&indices, &values, Some(20), 0, &mut out).unwrap();
            let expected: Vec<(u64, f64)> = dense.iter().enumerate()
                .filter(|(_, &v)| v != 0.0).map(|(i, &v)| (i as u64, v)).collect();
            prop_assert_eq!(out, expected);
        }
    }
}
