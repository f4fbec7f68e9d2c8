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
use super::features::{ExampleEnd, ExpandedFeatures};
use crate::error::{PolyError, PolyResult};
use crate::sparse::{SparseIndex, SparseRows, SparseValue};

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

/// Up to [`BLOCK_ROWS`] rows of a batch, hashed column by column (see the module docs).
#[derive(Clone, Debug, Default)]
pub(crate) struct ExampleBlock {
    /// All namespaces' entries (the column sink's arrays).
    sink: ColumnSink,
    /// Row-major: the span of namespace `k` of the row at `position` is
    /// `spans[position * n_namespaces + k]`.
    spans: Vec<(usize, usize)>,
    n_namespaces: usize,
    /// The batch rows of the block, in learning order.
    rows: Vec<usize>,
    /// The leading rows whose namespaces all built.
    built: usize,
    /// Why the row at position `built` did not build (when `built < rows.len()`).
    error: Option<PolyError>,
    /// Every built row holds exactly one feature in every namespace.
    one_hot: bool,
    /// ... and each of value 1 (hashed categorical fields).
    categorical: bool,
    /// Each built row's features over all namespaces, when the block is not one-hot (read by
    /// [`ExampleBlocks::shape`] without touching the row's spans).
    row_features: Vec<usize>,
    /// The leading built rows expanded whole ([`ExampleBlocks::expand_block`]), example after
    /// example, as the enumerator of `generation` gave them.
    expanded: Option<ExpandedBlock>,
}

/// Rows ahead of the one copied whose expanded features are prefetched (see
/// [`ExampleBlocks::expanded`]): written by the builder thread on another core, they missed the
/// cache when copied, 13% of the learner thread's time in a fit of a large hashed table (10M
/// eat-rate rows, `bits=24`; the fit about 5% faster with the prefetch).
const EXPANDED_AHEAD: usize = 8;

/// Rows ahead of the one learned whose label and weight are prefetched (see
/// [`ExampleBlock::label_and_weight`]).
const LABELS_AHEAD: usize = 32;

/// A block's leading examples expanded at once (see [`ExampleBlock::expand_whole`]).
#[derive(Clone, Debug)]
struct ExpandedBlock {
    features: ExpandedFeatures,
    /// Where each example ends in `features`: example `p` runs from `ends[p - 1]` (the start
    /// for `p = 0`) to `ends[p]`.
    ends: Vec<ExampleEnd>,
    generation: u64,
}

impl ExpandedBlock {
    /// Where the example at `position` starts and ends.
    #[inline]
    fn bounds(&self, position: usize) -> (ExampleEnd, ExampleEnd) {
        ExampleEnd::bounds(&self.ends, position)
    }
}

/// The built rows of a block, to expand whole ([`super::Expansion::expand_block`]).
pub struct BlockRows<'a> {
    hashes: &'a [u64],
    values: &'a [f32],
    /// Row-major: the span of namespace `k` of row `p` is `spans[p * n_namespaces + k]`.
    spans: &'a [(usize, usize)],
    n_namespaces: usize,
    n_rows: usize,
    one_hot: bool,
}

impl<'a> BlockRows<'a> {
    pub fn n_rows(&self) -> usize {
        self.n_rows
    }

    pub fn n_namespaces(&self) -> usize {
        self.n_namespaces
    }

    /// The rows column by column, when every row holds exactly one feature in every namespace.
    pub fn one_hot_columns(&self) -> Option<OneHotColumns<'a>> {
        self.one_hot.then(|| OneHotColumns {
            hashes: self.hashes,
            values: self.values,
            first_row: &self.spans[..self.n_namespaces],
            n_rows: self.n_rows,
        })
    }

    /// Row `p`'s namespaces as an example (label 0, weight 1; the feature set not built, as
    /// for an enumerator that does not use it, [`super::Expansion::uses_feature_set`]).
    pub fn example(&self, p: usize) -> Example<'a> {
        let n = self.n_namespaces;
        let spans = &self.spans[p * n..(p + 1) * n];
        Example::assemble(0.0, 1.0, spans, self.hashes, self.values, Union::Skip)
    }
}

/// The namespaces of a block of one-hot rows: the only feature of namespace `k` in the block's
/// row `p` is `(hash(k, p), value(k, p))`.
pub struct OneHotColumns<'a> {
    hashes: &'a [u64],
    values: &'a [f32],
    /// The first row's spans: namespace `k`'s rows follow one another from `first_row[k].0`.
    first_row: &'a [(usize, usize)],
    n_rows: usize,
}

impl OneHotColumns<'_> {
    pub fn n_namespaces(&self) -> usize {
        self.first_row.len()
    }

    pub fn n_rows(&self) -> usize {
        self.n_rows
    }

    #[inline]
    pub fn hash(&self, k: usize, p: usize) -> u64 {
        self.hashes[self.first_row[k].0 + p]
    }

    #[inline]
    pub fn value(&self, k: usize, p: usize) -> f32 {
        self.values[self.first_row[k].0 + p]
    }

    /// Namespace `k`'s hashes and values, one per row.
    pub fn column(&self, k: usize) -> (&[u64], &[f32]) {
        let start = self.first_row[k].0;
        let range = start..start + self.n_rows;
        (&self.hashes[range.clone()], &self.values[range])
    }
}

impl ExampleBlock {
    /// Fills the block with the next rows of `rows` (at most [`BLOCK_ROWS`]); false when there
    /// are none.
    pub(crate) fn fill(
        &mut self,
        batch: &Batch<'_>,
        rows: &mut impl Iterator<Item = usize>,
        seeds: &[u64],
    ) -> bool {
        self.rows.clear();
        self.rows.extend(rows.take(BLOCK_ROWS));
        let n = batch.namespaces.len();
        self.n_namespaces = n;
        self.spans.clear();
        self.spans.resize(self.rows.len() * n, (0, 0));
        self.sink.hashes.clear();
        self.sink.values.clear();
        self.built = self.rows.len();
        self.error = None;
        let consecutive = self.rows.windows(2).all(|w| w[1] == w[0] + 1);
        if let (true, Some(&last)) = (consecutive, self.rows.last()) {
            // The next block is most likely the next rows: their column arrays are fetched
            // while this block is learned.
            for column in batch.namespaces {
                column.prefetch_rows(last + 1, last + 1 + BLOCK_ROWS);
            }
        }
        for (k, (column, &seed)) in batch.namespaces.iter().zip(seeds).enumerate() {
            let start = self.sink.hashes.len();
            // Rows from the first failure on are never served: build only those before it, so
            // that the earliest failure wins (and, within a row, the first namespace's).
            let rows = &self.rows[..self.built];
            if let Err((position, error)) =
                column.fill_block(rows, consecutive, seed, &mut self.sink)
            {
                self.built = position;
                self.error = Some(batch.in_column(k, error));
            }
            let mut previous = start;
            for (position, &end) in self.sink.ends.iter().enumerate().take(self.built) {
                self.spans[position * n + k] = (previous, end);
                previous = end;
            }
        }
        self.expanded = None;
        self.one_hot = self.spans[..self.built * n].iter().all(|&(start, end)| end == start + 1);
        self.categorical = self.one_hot && self.sink.values.iter().all(|&value| value == 1.0);
        self.row_features.clear();
        if !self.one_hot {
            let rows = self.spans[..self.built * n].chunks_exact(n.max(1));
            self.row_features.extend(
                rows.map(|spans| spans.iter().map(|&(start, end)| end - start).sum::<usize>()),
            );
        }
        // A row's namespaces first, then its label and weight (the order of building row by row).
        for position in 0..self.built {
            let row = self.rows[position];
            let (label, weight) = label_and_weight(batch, row);
            if let Err(error) = check_label_and_weight(label, weight, batch.first_row + row) {
                self.built = position;
                self.error = Some(error);
                break;
            }
        }
        !self.rows.is_empty()
    }

    /// The block expanded whole, if the enumerator of `generation` expanded it.
    fn expanded_by(&self, generation: u64) -> Option<&ExpandedBlock> {
        self.expanded.as_ref().filter(|expanded| expanded.generation == generation)
    }

    /// The slots of the block's examples when it was expanded whole (see
    /// [`ExampleBlock::expand_whole`]).
    pub(crate) fn expanded_slots(&self) -> Option<&[u32]> {
        self.expanded.as_ref().map(|expanded| expanded.features.slots())
    }

    /// Expands the block's built rows at once with `expand` (see
    /// [`super::Expansion::expand_block`]), as many of them as it does; `generation` stamps the
    /// result, `bits` and `track_fields` are the learner's.
    pub(crate) fn expand_whole(
        &mut self,
        generation: u64,
        bits: u32,
        track_fields: bool,
        expand: impl FnOnce(&BlockRows<'_>, &mut ExpandedFeatures, &mut Vec<ExampleEnd>),
    ) {
        let (mut features, mut ends) = match self.expanded.take() {
            Some(old) if old.features.mask() == ExpandedFeatures::new(bits).mask() => {
                (old.features, old.ends)
            }
            _ => (ExpandedFeatures::new(bits), Vec::new()),
        };
        if self.built == 0 {
            return;
        }
        let rows = BlockRows {
            hashes: &self.sink.hashes,
            values: &self.sink.values,
            spans: &self.spans[..self.built * self.n_namespaces],
            n_namespaces: self.n_namespaces,
            n_rows: self.built,
            one_hot: self.one_hot,
        };
        features.clear();
        features.track_fields(track_fields);
        ends.clear();
        expand(&rows, &mut features, &mut ends);
        debug_assert!(ends.len() <= self.built && ends.last().is_none_or(|e| *e == features.end()));
        if !ends.is_empty() {
            self.expanded = Some(ExpandedBlock { features, ends, generation });
        }
    }

    /// The label and importance weight of the example at `position`; the error of an invalid
    /// row.
    #[inline]
    fn label_and_weight(&self, position: usize, batch: &Batch<'_>) -> PolyResult<(f64, f64)> {
        if position >= self.built {
            return Err(self.unbuilt_row_error(position, batch));
        }
        if let Some(&ahead) = self.rows.get(position + LABELS_AHEAD) {
            crate::memory::prefetch(batch.labels.as_ptr().wrapping_add(ahead));
            if let Some(weights) = batch.weights {
                crate::memory::prefetch(weights.as_ptr().wrapping_add(ahead));
            }
        }
        Ok(label_and_weight(batch, self.rows[position]))
    }

    /// The error of the row at `position`, which was not built (out of line: the learner's
    /// per-example path stays small enough to inline).
    #[cold]
    fn unbuilt_row_error(&self, position: usize, batch: &Batch<'_>) -> PolyError {
        let row = batch.first_row + self.rows[position];
        self.error
            .clone()
            .unwrap_or_else(|| PolyError::InvalidInput(format!("row {row} was not built")))
    }

    /// The example at `position` (its feature set as `union` says, see
    /// [`Example::assemble`]); the error of an invalid row.
    fn example<'a>(
        &'a self,
        position: usize,
        batch: &Batch<'_>,
        union: Union<'a>,
    ) -> PolyResult<Example<'a>> {
        let (label, weight) = self.label_and_weight(position, batch)?;
        let n = self.n_namespaces;
        let spans = &self.spans[position * n..(position + 1) * n];
        Ok(Example::assemble(label, weight, spans, &self.sink.hashes, &self.sink.values, union))
    }
}

/// The label (0 when the batch has none) and importance weight (1 when it has none) of `row`.
fn label_and_weight(batch: &Batch<'_>, row: usize) -> (f64, f64) {
    let label = batch.labels.get(row).copied().unwrap_or(0.0);
    (label, batch.weights.map_or(1.0, |w| w[row]))
}

/// Where [`ExampleBlocks`] gets its blocks: built here from a batch's rows ([`RowBlocks`]), or
/// built ahead by another thread ([`super::builder`]).
pub(crate) trait BlockSource {
    /// Fills `block` with the next rows (whatever it held before); false when there are none.
    fn fill(&mut self, block: &mut ExampleBlock) -> bool;
}

/// Blocks built on the calling thread from `rows` of `batch`, hashed with `seeds`.
pub(crate) struct RowBlocks<'s, 'a, R> {
    pub batch: &'s Batch<'a>,
    pub rows: R,
    pub seeds: &'s [u64],
}

impl<R: Iterator<Item = usize>> BlockSource for RowBlocks<'_, '_, R> {
    fn fill(&mut self, block: &mut ExampleBlock) -> bool {
        block.fill(self.batch, &mut self.rows, self.seeds)
    }
}

/// Where an example is in [`ExampleBlocks`]: which block, which position.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct BlockPosition {
    block: usize,
    position: usize,
}

/// The rows of an iterator served one at a time from two blocks filled in turn (see the module
/// docs): an example stays valid until the cursor has moved a whole block past it.
#[derive(Clone, Debug, Default)]
pub(crate) struct ExampleBlocks {
    blocks: [ExampleBlock; 2],
    cursor: BlockPosition,
}

impl ExampleBlocks {
    /// Starts on the first row `source` gives; false when there is none.
    pub(crate) fn start(&mut self, source: &mut impl BlockSource) -> bool {
        self.cursor = BlockPosition::default();
        source.fill(&mut self.blocks[0])
    }

    /// Moves to the next row, filling the other block from `source` when this one is used up;
    /// false when there is none.
    pub(crate) fn advance(&mut self, source: &mut impl BlockSource) -> bool {
        self.cursor.position += 1;
        if self.cursor.position < self.blocks[self.cursor.block].rows.len() {
            return true;
        }
        self.next_block(source)
    }

    /// The current row's position (valid until the cursor has moved a block past it).
    pub(crate) fn cursor(&self) -> BlockPosition {
        self.cursor
    }

    /// Moves to the first row of the next block, filled from `source`; false when there is none.
    pub(crate) fn next_block(&mut self, source: &mut impl BlockSource) -> bool {
        self.cursor = BlockPosition { block: 1 - self.cursor.block, position: 0 };
        source.fill(&mut self.blocks[self.cursor.block])
    }

    /// How many rows the cursor's block holds.
    pub(crate) fn block_len(&self) -> usize {
        self.blocks[self.cursor.block].rows.len()
    }

    /// The position of row `position` of the cursor's block.
    pub(crate) fn in_block(&self, position: usize) -> BlockPosition {
        BlockPosition { block: self.cursor.block, position }
    }

    /// The cursor's block expanded whole by the enumerator of `generation` (see
    /// [`ExampleBlocks::expand_block`]), every row of it: its features, example after example,
    /// and where each example ends.
    pub(crate) fn block_expanded(
        &self,
        generation: u64,
    ) -> Option<(&ExpandedFeatures, &[ExampleEnd])> {
        let block = &self.blocks[self.cursor.block];
        let expanded = block.expanded_by(generation)?;
        (expanded.ends.len() == block.rows.len()).then_some((&expanded.features, &expanded.ends))
    }

    /// The batch row at `at`.
    pub(crate) fn batch_row(&self, at: BlockPosition) -> usize {
        self.blocks[at.block].rows[at.position]
    }

    /// Whether the cursor has just entered a block (its first row) not expanded whole by the
    /// enumerator of `generation`.
    pub(crate) fn entered_unexpanded(&self, generation: u64) -> bool {
        let block = &self.blocks[self.cursor.block];
        self.cursor.position == 0 && block.expanded_by(generation).is_none()
    }

    /// Expands the cursor's block whole (see [`ExampleBlock::expand_whole`]).
    pub(crate) fn expand_block(
        &mut self,
        generation: u64,
        bits: u32,
        track_fields: bool,
        expand: impl FnOnce(&BlockRows<'_>, &mut ExpandedFeatures, &mut Vec<ExampleEnd>),
    ) {
        self.blocks[self.cursor.block].expand_whole(generation, bits, track_fields, expand);
    }

    /// The features of the example at `at` when its block was expanded whole by the enumerator
    /// of `generation` (see [`ExampleBlocks::expand_block`]), appended to `out`; false (nothing
    /// appended) otherwise. With `prefetch_ahead`, the features [`EXPANDED_AHEAD`] rows on are
    /// prefetched.
    pub(crate) fn expanded(
        &self,
        at: BlockPosition,
        generation: u64,
        prefetch_ahead: bool,
        out: &mut ExpandedFeatures,
    ) -> bool {
        let block = &self.blocks[at.block];
        match block.expanded_by(generation) {
            Some(expanded) if at.position < expanded.ends.len() => {
                let ahead = at.position + EXPANDED_AHEAD;
                if prefetch_ahead && ahead < expanded.ends.len() {
                    let (from, to) = expanded.bounds(ahead);
                    expanded.features.prefetch_range(from.features..to.features);
                }
                let (from, to) = expanded.bounds(at.position);
                out.extend_from_example(&expanded.features, from, to);
                true
            }
            _ => false,
        }
    }

    /// The label and importance weight of the example at `at` (the error of an invalid row, as
    /// [`ExampleBlocks::example`]'s), without reading its namespaces.
    #[inline]
    pub(crate) fn label_and_weight(
        &self,
        at: BlockPosition,
        batch: &Batch<'_>,
    ) -> PolyResult<(f64, f64)> {
        self.blocks[at.block].label_and_weight(at.position, batch)
    }

    /// The shape of the example at `at` without reading its namespaces (`None` for a row not
    /// built).
    #[inline]
    pub(crate) fn shape(&self, at: BlockPosition) -> Option<ExampleShape> {
        let block = &self.blocks[at.block];
        (at.position < block.built).then(|| ExampleShape {
            n_namespaces: block.n_namespaces,
            n_features: if block.one_hot {
                block.n_namespaces
            } else {
                block.row_features[at.position]
            },
            categorical: block.categorical,
        })
    }

    /// The example at `at` (see [`ExampleBlock::example`]).
    pub(crate) fn example<'a>(
        &'a self,
        at: BlockPosition,
        batch: &Batch<'_>,
        union: Union<'a>,
    ) -> PolyResult<Example<'a>> {
        self.blocks[at.block].example(at.position, batch, union)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learner::example::FeatureUnion;
    use crate::learner::{Expansion, Interactions};
    use proptest::prelude::*;

    /// CSR arrays of rows given as (index, value) lists.
    fn csr(rows: &[Vec<(i64, f64)>]) -> (Vec<i64>, Vec<i64>, Vec<f64>) {
        let mut offsets = vec![0i64];
        let (mut indices, mut values) = (Vec::new(), Vec::new());
        for row in rows {
            for &(i, v) in row {
                indices.push(i);
                values.push(v);
            }
            offsets.push(indices.len() as i64);
        }
        (offsets, indices, values)
    }

    /// A block of wide rows (a namespace of 100-139 features crossed with itself, thousands of
    /// features a row) is expanded only as far as [`BLOCK_FEATURES`] allows, each expanded
    /// example as `Interactions::expand` gives it alone; the rows past it are left unexpanded.
    #[test]
    fn a_block_of_wide_rows_is_expanded_up_to_its_budget() {
        let rows: Vec<Vec<(i64, f64)>> = (0..60)
            .map(|row| (0..100 + row % 40).map(|j| (j * 3 + row, 1.0 + (j % 3) as f64)).collect())
            .collect();
        let one_hot: Vec<Vec<(i64, f64)>> = (0..60).map(|row| vec![(row % 7, 1.0)]).collect();
        let arrays = [csr(&one_hot), csr(&rows)];
        let columns = sparse_rows(&arrays);
        let namespaces: Vec<&dyn NamespaceRows> =
            columns.iter().map(|r| r as &dyn NamespaceRows).collect();
        let labels = vec![1.0; 60];
        let batch = Batch::new(&namespaces, &labels, None).unwrap();
        let expansion = Interactions {
            namespace_crosses: vec![vec![1, 1], vec![0, 1]],
            ..Interactions::linear()
        };
        let mut block = ExampleBlock::default();
        assert!(block.fill(&batch, &mut (0..60), &[11, 12]));
        block.expand_whole(7, 20, true, |rows, out, ends| expansion.expand_block(rows, out, ends));
        let expanded = block.expanded.as_ref().unwrap();
        let n = expanded.ends.len();
        assert!(n > 1 && n < 60, "{n} rows expanded");
        assert!(expanded.features.len() <= BLOCK_FEATURES);
        let next = expansion.count(1 + rows[n].len(), &[1, rows[n].len()]);
        assert!(expanded.features.len() + next > BLOCK_FEATURES, "row {n} would not have fit");
        for p in 0..n {
            let example = block.example(p, &batch, Union::Skip).unwrap();
            let mut alone = ExpandedFeatures::new(20);
            alone.track_fields(true);
            expansion.expand(&example, &mut alone);
            let (from, to) = expanded.bounds(p);
            let mut copied = ExpandedFeatures::new(20);
            copied.track_fields(true);
            copied.extend_from_example(&expanded.features, from, to);
            assert_eq!((copied.slots(), copied.values()), (alone.slots(), alone.values()));
            assert!(copied.field_runs().eq(alone.field_runs()));
        }
    }

    /// An example as (its namespaces, its feature set).
    type View = (Vec<Vec<(u64, f32)>>, Vec<(u64, f32)>);
    /// Every example the blocks serve, in order, or the error.
    type Served = Vec<Result<View, String>>;

    /// One `SparseRows` per CSR triple of [`csr`].
    fn sparse_rows(arrays: &[(Vec<i64>, Vec<i64>, Vec<f64>)]) -> Vec<SparseRows<'_, i64, f64>> {
        arrays.iter().map(|(o, i, v)| SparseRows::new(o, i, v).unwrap()).collect()
    }

    fn pairs(hashes: &[u64], values: &[f32]) -> Vec<(u64, f32)> {
        hashes.iter().copied().zip(values.iter().copied()).collect()
    }

    fn view(example: &Example<'_>) -> View {
        let namespaces = (0..example.n_namespaces())
            .map(|k| pairs(example.namespace(k).hashes, example.namespace(k).values))
            .collect();
        let (hashes, values) = example.features();
        (namespaces, pairs(hashes, values))
    }

    fn served_by_blocks(batch: &Batch<'_>, order: &[usize], seeds: &[u64]) -> Served {
        let mut blocks = ExampleBlocks::default();
        let mut source = RowBlocks { batch, rows: order.iter().copied(), seeds };
        let mut out = Vec::new();
        let mut more = blocks.start(&mut source);
        let mut union = FeatureUnion::default();
        while more {
            match blocks.example(blocks.cursor(), batch, Union::Build(&mut union)) {
                Ok(example) => out.push(Ok(view(&example))),
                Err(error) => {
                    out.push(Err(error.to_string()));
                    break;
                }
            }
            more = blocks.advance(&mut source);
        }
        out
    }

    fn served_row_by_row(batch: &Batch<'_>, order: &[usize], seeds: &[u64]) -> Served {
        let mut buffer = ExampleBuffer::new();
        let mut out = Vec::new();
        for &row in order {
            match batch.example(row, seeds, &mut buffer) {
                Ok(example) => out.push(Ok(view(&example))),
                Err(error) => {
                    out.push(Err(error.to_string()));
                    break;
                }
            }
        }
        out
    }

    fn entry() -> impl Strategy<Value = (i64, f64)> {
        // Any order, repeated indices, some zeros (the bad entries come from `bad_entry`).
        (0i64..12, prop_oneof![8 => -3.0f64..3.0, 1 => Just(0.0), 1 => Just(1.0)])
    }

    fn bad_entry() -> impl Strategy<Value = (i64, f64)> {
        prop_oneof![Just((-1i64, 1.0)), Just((2, f64::NAN)), Just((3, 1e300))]
    }

    proptest! {
        /// Blocks serve exactly the examples building row by row gives, in any row order, with
        /// unsorted, repeated and zero entries, and stop at the same first error.
        #[test]
        fn blocks_serve_what_building_row_by_row_gives(
            columns in prop::collection::vec(
                prop::collection::vec(prop::collection::vec(entry(), 0..4), 600), 1..4),
            bad in prop::option::of((0usize..3, 0usize..600, bad_entry())),
            bad_label in prop::option::of(0usize..600),
            shuffle in any::<bool>(),
            seed in any::<u64>(),
        ) {
            let mut columns = columns;
            if let Some((k, row, entry)) = bad {
                if let Some(column) = columns.get_mut(k) {
                    column[row].push(entry);
                }
            }
            let arrays: Vec<_> = columns.iter().map(|rows| csr(rows)).collect();
            let rows = sparse_rows(&arrays);
            let namespaces: Vec<&dyn NamespaceRows> =
                rows.iter().map(|r| r as &dyn NamespaceRows).collect();
            let mut labels = vec![1.0; 600];
            if let Some(row) = bad_label {
                labels[row] = f64::INFINITY;
            }
            let batch = Batch::new(&namespaces, &labels, None).unwrap().with_first_row(1000);
            let seeds: Vec<u64> = (0..namespaces.len() as u64).map(|k| seed.wrapping_add(k * 977)).collect();
            let mut order: Vec<usize> = (0..600).collect();
            if shuffle {
                let mut state = seed | 1;
                for i in (1..order.len()).rev() {
                    state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
                    order.swap(i, (state >> 33) as usize % (i + 1));
                }
            }
            prop_assert_eq!(
                served_by_blocks(&batch, &order, &seeds),
                served_row_by_row(&batch, &order, &seeds)
            );
        }

        /// The shape the blocks tell without reading a row is the shape of its example,
        /// categorical where every row of the block is one feature of value 1 per namespace (a
        /// block with another value, or a row with no feature in some namespace, does not tell).
        #[test]
        fn a_blocks_shape_is_its_examples_shape(
            n_namespaces in 1usize..4,
            scaled in prop::option::of(0usize..600),
            empty in prop::option::of(0usize..600),
            seed in any::<u64>(),
        ) {
            let columns: Vec<Vec<Vec<(i64, f64)>>> = (0..n_namespaces)
                .map(|k| {
                    (0..600)
                        .map(|row| match (k, row) {
                            (0, row) if Some(row) == empty => vec![],
                            (0, row) if Some(row) == scaled => vec![(3, 2.0)],
                            _ => vec![(((row * 7 + k) % 12) as i64, 1.0)],
                        })
                        .collect()
                })
                .collect();
            let arrays: Vec<_> = columns.iter().map(|rows| csr(rows)).collect();
            let rows = sparse_rows(&arrays);
            let namespaces: Vec<&dyn NamespaceRows> =
                rows.iter().map(|r| r as &dyn NamespaceRows).collect();
            let labels = vec![1.0; 600];
            let batch = Batch::new(&namespaces, &labels, None).unwrap();
            let seeds: Vec<u64> = (0..n_namespaces as u64).map(|k| seed.wrapping_add(k)).collect();
            let mut blocks = ExampleBlocks::default();
            let mut source = RowBlocks { batch: &batch, rows: 0..600, seeds: &seeds };
            let (mut more, mut row) = (blocks.start(&mut source), 0);
            let block_of = |row: Option<usize>| row.map(|r| r / BLOCK_ROWS);
            while more {
                let at = blocks.cursor();
                let example = blocks.example(at, &batch, Union::Skip).unwrap();
                let block = Some(row / BLOCK_ROWS);
                let shape = blocks.shape(at).unwrap();
                let read = ExampleShape::of(&example);
                prop_assert_eq!(shape, ExampleShape { categorical: shape.categorical, ..read });
                prop_assert!(!shape.categorical || read.categorical);
                let one_value_each = block != block_of(empty) && block != block_of(scaled);
                prop_assert_eq!(shape.categorical, one_value_each);
                more = blocks.advance(&mut source);
                row += 1;
            }
            prop_assert_eq!(row, 600);
        }
    }
}
