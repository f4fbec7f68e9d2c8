//! A batch of examples (one [`NamespaceRows`] column per namespace, labels, importance weights)
//! and how examples are built from it: a block of rows at a time, column by column.
//!
//! Building an example row by row walks every namespace column once per row: a dozen one-hot
//! columns are a dozen indirect calls, a dozen small copies and three dozen short memory streams
//! per example, which cost as much as learning it (issue 21's profile: a third of the step on
//! eat-rate). An `ExampleBlock` instead hashes and checks up to `BLOCK_ROWS` rows of one
//! column at a time (one call per column, the loop specialised to the column's index and value
//! types, its arrays read in order and, for consecutive rows, in one vectorized sweep), into one
//! array from which each example is a borrowed view: no copies.
//!
//! Rows are any sequence of batch rows (in order, or shuffled by [`super::Learner::fit`]). Errors
//! keep row order: when a row is invalid (a negative index, a NaN, a label that is not finite),
//! the rows before it are served and the error comes with that row, exactly as building row by
//! row (`Batch::example`) would have met it.
//!
//! `ExampleBlocks` serves the rows of an iterator one at a time from two blocks filled in
//! turn, so that the example being learned stays valid while the next ones, perhaps in the next
//! block, are built ahead of it.
//!
//! A block can also be expanded whole ([`BlockRows`], [`super::Expansion::expand_block`]), on the
//! builder thread when there is one: the learner then copies each example's features from the
//! block instead of assembling and expanding it. Rows that hold exactly one feature in every
//! namespace (hashed categorical fields) are expanded column by column ([`OneHotColumns`]);
//! others (counts beside the fields, text) row by row.

use super::example::{
    check_label_and_weight, push_canonical, push_in_order, Example, ExampleBuffer, ExampleShape,
    Union,
};
use super::features::{ExampleEnd, ExpandedFeatures, TableSlots};
use crate::error::{PolyError, PolyResult};
use crate::sparse::{SparseIndex, SparseRows, SparseValue};

mod blocks;
#[cfg(test)]
mod tests;

pub use blocks::*;

/// Rows per block: a dozen one-hot columns of 256 rows are some 40 KiB of hashes, values and
/// spans, which stay in the cache until learned.
pub(crate) const BLOCK_ROWS: usize = 256;

/// Most features a block expanded row by row holds ([`super::Expansion::expand_block`]; rows
/// past it are expanded one by one): 512 KiB of slots and values, which bounds the memory of
/// the blocks the builder thread has out (a text column crossed with itself is thousands of
/// features a row).
pub(crate) const BLOCK_FEATURES: usize = 1 << 16;

/// The rows of one namespace of a batch, whatever their index and value types.
pub trait NamespaceRows: Sync {
    fn n_rows(&self) -> usize;
    /// Adds row `row` to `out` as the next namespace, hashed with `seed`.
    fn push_into(&self, row: usize, seed: u64, out: &mut ExampleBuffer) -> PolyResult<()>;
    /// See [`SparseRows::entries_are_plain`].
    fn entries_are_plain(&self) -> bool;
    /// Prefetches rows `start..end` (a block the reader will build soon). None by default: a
    /// source read in order (one array a column) is followed by the hardware prefetcher.
    fn prefetch_rows(&self, _start: usize, _end: usize) {}
    /// Hashes rows `rows` into `out` (see `ColumnSink::fill`).
    fn fill_block(
        &self,
        rows: &[usize],
        consecutive: bool,
        seed: u64,
        out: &mut ColumnSink,
    ) -> Result<(), (usize, PolyError)>;
}

impl<I: SparseIndex, V: SparseValue> NamespaceRows for SparseRows<'_, I, V> {
    fn n_rows(&self) -> usize {
        SparseRows::n_rows(self)
    }

    fn push_into(&self, row: usize, seed: u64, out: &mut ExampleBuffer) -> PolyResult<()> {
        out.push_row(seed, self, row)
    }

    fn entries_are_plain(&self) -> bool {
        SparseRows::entries_are_plain(self)
    }

    fn prefetch_rows(&self, start: usize, end: usize) {
        SparseRows::prefetch_rows(self, start, end);
    }

    fn fill_block(
        &self,
        rows: &[usize],
        consecutive: bool,
        seed: u64,
        out: &mut ColumnSink,
    ) -> Result<(), (usize, PolyError)> {
        out.fill(self, rows, consecutive, seed)
    }
}

/// A batch of examples: one [`NamespaceRows`] per namespace, labels (empty when only
/// predicting), optional importance weights. `first_row` numbers the rows in error messages;
/// `names`, the namespaces' column names (empty: unnamed), name the column of an invalid entry
/// in them when there are two or more (with one, the row says it all).
#[derive(Clone, Copy)]
pub struct Batch<'a> {
    pub namespaces: &'a [&'a dyn NamespaceRows],
    pub labels: &'a [f64],
    pub weights: Option<&'a [f64]>,
    pub first_row: usize,
    pub names: &'a [String],
}

impl<'a> Batch<'a> {
    /// A batch, checking that every part has the same number of rows.
    pub fn new(
        namespaces: &'a [&'a dyn NamespaceRows],
        labels: &'a [f64],
        weights: Option<&'a [f64]>,
    ) -> PolyResult<Self> {
        let Some(first) = namespaces.first() else {
            return crate::invalid!("a batch needs at least one feature column");
        };
        let n = first.n_rows();
        for (k, ns) in namespaces.iter().enumerate() {
            if ns.n_rows() != n {
                return crate::invalid!(
                    "feature column 0 has {n} rows but feature column {k} has {}",
                    ns.n_rows()
                );
            }
        }
        if !labels.is_empty() && labels.len() != n {
            return crate::invalid!("features have {n} rows but labels have {}", labels.len());
        }
        if let Some(w) = weights {
            if w.len() != n {
                return crate::invalid!(
                    "features have {n} rows but sample weights have {}",
                    w.len()
                );
            }
        }
        Ok(Batch { namespaces, labels, weights, first_row: 0, names: &[] })
    }

    /// The same batch, its rows numbered from `first_row` in error messages.
    pub fn with_first_row(self, first_row: usize) -> Self {
        Batch { first_row, ..self }
    }

    /// The same batch, its namespaces' column names `names` (one per namespace) named in the
    /// errors of invalid entries.
    pub fn with_names(self, names: &'a [String]) -> Self {
        Batch { names, ..self }
    }

    /// `error`, met reading namespace `k`, naming its column when the batch has two or more
    /// named ones: `column "tokens", row 7: ...`.
    pub(crate) fn in_column(&self, k: usize, error: PolyError) -> PolyError {
        match (error, self.names.get(k)) {
            (PolyError::InvalidInput(message), Some(name)) if self.names.len() > 1 => {
                PolyError::InvalidInput(format!("column {name:?}, {message}"))
            }
            (error, _) => error,
        }
    }

    pub fn n_rows(&self) -> usize {
        self.namespaces.first().map_or(0, |ns| ns.n_rows())
    }

    /// Builds example `row` into `buffer` (label 0 when the batch has no labels); `seeds` are
    /// the namespaces' hash seeds.
    pub(crate) fn example<'b>(
        &self,
        row: usize,
        seeds: &[u64],
        buffer: &'b mut ExampleBuffer,
    ) -> PolyResult<Example<'b>> {
        buffer.clear();
        for (k, (ns, &seed)) in self.namespaces.iter().zip(seeds).enumerate() {
            ns.push_into(row, seed, buffer).map_err(|error| self.in_column(k, error))?;
        }
        let label = self.labels.get(row).copied().unwrap_or(0.0);
        let weight = self.weights.map_or(1.0, |w| w[row]);
        buffer.finish(label, weight, self.first_row + row)
    }
}

/// Where [`NamespaceRows::fill_block`] writes one column's
/// rows of a block: hashes and values appended, the end of each row's entries in `ends`.
#[derive(Clone, Debug, Default)]
pub struct ColumnSink {
    hashes: Vec<u64>,
    values: Vec<f32>,
    ends: Vec<usize>,
    /// Scratch for rows that are not canonical.
    pairs: Vec<(u64, f64)>,
}

impl ColumnSink {
    /// Hashes rows `rows` of `column` (seed `seed`) in order, made canonical; on an invalid row
    /// returns its position in `rows` and the error (the rows before it are written).
    /// `consecutive`: the rows are `rows[0], rows[0] + 1, ...`.
    pub(crate) fn fill<I: SparseIndex, V: SparseValue>(
        &mut self,
        column: &SparseRows<'_, I, V>,
        rows: &[usize],
        consecutive: bool,
        seed: u64,
    ) -> Result<(), (usize, PolyError)> {
        self.fill_rows_of(column, rows, consecutive, seed, true)
    }

    /// As [`ColumnSink::fill`], the entries kept as features in the order given
    /// ([`super::example::push_in_order`]).
    pub(crate) fn fill_in_order<I: SparseIndex, V: SparseValue>(
        &mut self,
        column: &SparseRows<'_, I, V>,
        rows: &[usize],
        consecutive: bool,
        seed: u64,
    ) -> Result<(), (usize, PolyError)> {
        self.fill_rows_of(column, rows, consecutive, seed, false)
    }

    fn fill_rows_of<I: SparseIndex, V: SparseValue>(
        &mut self,
        column: &SparseRows<'_, I, V>,
        rows: &[usize],
        consecutive: bool,
        seed: u64,
        canonical: bool,
    ) -> Result<(), (usize, PolyError)> {
        self.ends.clear();
        if consecutive && self.fill_plain_run(column, rows, seed, canonical) {
            return Ok(());
        }
        for (position, &row) in rows.iter().enumerate() {
            let (indices, values) = column.row(row);
            let number = column.row_number(row);
            let pushed = if canonical {
                self.push_row(seed, indices, values, number)
            } else {
                push_in_order(seed, indices, values, number, &mut self.hashes, &mut self.values)
                    .map(|()| self.ends.push(self.hashes.len()))
            };
            pushed.map_err(|error| (position, error))?;
        }
        Ok(())
    }

    /// Appends one raw row, canonical and seeded ([`push_canonical`]), and its end; `row` is
    /// the user's row number, for error messages.
    fn push_row<I: SparseIndex, V: SparseValue>(
        &mut self,
        seed: u64,
        indices: &[I],
        values: &[V],
        row: usize,
    ) -> PolyResult<()> {
        push_canonical(
            seed,
            indices,
            values,
            row,
            &mut self.pairs,
            &mut self.hashes,
            &mut self.values,
        )?;
        self.ends.push(self.hashes.len());
        Ok(())
    }

    /// Rows of at most one feature of value 1 each (a string column's): `index(row)` is row
    /// `row`'s index, `None` for no feature; feature hash = `index + seed`.
    pub(crate) fn fill_single(
        &mut self,
        rows: &[usize],
        seed: u64,
        mut index: impl FnMut(usize) -> Option<u64>,
    ) {
        self.fill_plain(rows, |row, hashes, values| {
            if let Some(index) = index(row) {
                hashes.push(index.wrapping_add(seed));
                values.push(1.0);
            }
        });
    }

    /// Rows whose entries are plain and canonical as they come (hashes of strictly increasing
    /// indices, values finite and nonzero before narrowing): `append(row, hashes, values)`
    /// appends row `row`'s entries, seeded.
    pub(crate) fn fill_plain(
        &mut self,
        rows: &[usize],
        mut append: impl FnMut(usize, &mut Vec<u64>, &mut Vec<f32>),
    ) {
        self.ends.clear();
        for &row in rows {
            append(row, &mut self.hashes, &mut self.values);
            self.ends.push(self.hashes.len());
        }
    }

    /// Rows of bags of features of value 1 each (a column of token lists): `indices(row, out)`
    /// writes row `row`'s indices into `out`, repeats summed here as the canonical row does
    /// them; feature hash = `index + seed`.
    pub(crate) fn fill_bags(
        &mut self,
        rows: &[usize],
        seed: u64,
        mut indices: impl FnMut(usize, &mut Vec<u64>),
    ) -> Result<(), (usize, PolyError)> {
        self.fill_rows(rows, seed, 0, |row, bag, ones: &mut Vec<f32>| {
            indices(row, bag);
            ones.resize(bag.len(), 1.0);
        })
    }

    /// Raw rows, made canonical here: `entries(row, indices, values)` writes row `row`'s
    /// entries; errors name rows from `first_row`.
    pub(crate) fn fill_rows<I: SparseIndex, V: SparseValue>(
        &mut self,
        rows: &[usize],
        seed: u64,
        first_row: usize,
        mut entries: impl FnMut(usize, &mut Vec<I>, &mut Vec<V>),
    ) -> Result<(), (usize, PolyError)> {
        self.ends.clear();
        let (mut indices, mut values) = (Vec::new(), Vec::new());
        for (position, &row) in rows.iter().enumerate() {
            entries(row, &mut indices, &mut values);
            self.push_row(seed, &indices, &values, first_row + row)
                .map_err(|error| (position, error))?;
        }
        Ok(())
    }

    /// The (hash, value) entries and row ends written since the last clear.
    #[cfg(test)]
    pub(crate) fn entries(&self) -> (&[u64], &[f32], &[usize]) {
        (&self.hashes, &self.values, &self.ends)
    }

    /// Consecutive rows whose entries are all plain (non-negative indices, strictly increasing
    /// within each row when `increasing`, values finite and nonzero in single precision) in one
    /// sweep over their entry arrays; false, and nothing written, when some entry is not.
    fn fill_plain_run<I: SparseIndex, V: SparseValue>(
        &mut self,
        column: &SparseRows<'_, I, V>,
        rows: &[usize],
        seed: u64,
        increasing: bool,
    ) -> bool {
        let (Some(&first), Some(&last)) = (rows.first(), rows.last()) else {
            return true;
        };
        let (offsets, indices, values) = column.run(first, last + 1);
        // Folds without early exit, so that the checks vectorize (the common answer is yes).
        let plain_values = values.iter().fold(true, |plain, v| {
            let narrowed = v.to_f64() as f32;
            plain & narrowed.is_finite() & (narrowed != 0.0)
        });
        let plain_indices = indices.iter().fold(true, |plain, i| plain & i.to_u64().is_some());
        if !(plain_values && plain_indices) {
            return false;
        }
        let base = offsets[0];
        // Rows of at most one entry (one-hot fields) are increasing; check the others.
        let short = offsets.windows(2).fold(true, |short, w| short & (w[1] - w[0] <= 1));
        if increasing
            && !short
            && !offsets.windows(2).all(|w| {
                let row = &indices[(w[0] - base) as usize..(w[1] - base) as usize];
                row.windows(2).all(|pair| pair[0].to_u64() < pair[1].to_u64())
            })
        {
            return false;
        }
        let start = self.hashes.len();
        self.hashes.extend(indices.iter().map(|i| i.to_u64().unwrap_or(0).wrapping_add(seed)));
        self.values.extend(values.iter().map(|v| v.to_f64() as f32));
        self.ends.extend(offsets[1..].iter().map(|&end| start + (end - base) as usize));
        true
    }
}
