//! Blocks of rows: up to `BLOCK_ROWS` rows of a batch hashed and checked column by column into
//! one array, each example a view of it; a block expanded whole; and the two blocks filled in
//! turn that serve a run of rows (see the module docs of [`super`]).

use super::*;

/// Up to [`BLOCK_ROWS`] rows of a batch, hashed column by column (see the module docs).
#[derive(Clone, Debug, Default)]
pub(crate) struct ExampleBlock {
    /// All namespaces' entries (the column sink's arrays).
    pub(super) sink: ColumnSink,
    /// Row-major: the span of namespace `k` of the row at `position` is
    /// `spans[position * n_namespaces + k]`.
    pub(super) spans: Vec<(usize, usize)>,
    pub(super) n_namespaces: usize,
    /// The batch rows of the block, in learning order.
    pub(super) rows: Vec<usize>,
    /// The leading rows whose namespaces all built.
    pub(super) built: usize,
    /// Why the row at position `built` did not build (when `built < rows.len()`).
    pub(super) error: Option<PolyError>,
    /// Every built row holds exactly one feature in every namespace.
    pub(super) one_hot: bool,
    /// ... and each of value 1 (hashed categorical fields).
    pub(super) categorical: bool,
    /// Each built row's features over all namespaces, when the block is not one-hot (read by
    /// [`ExampleBlocks::shape`] without touching the row's spans).
    pub(super) row_features: Vec<usize>,
    /// The leading built rows expanded whole ([`ExampleBlocks::expand_block`]), example after
    /// example, as the enumerator of `generation` gave them.
    pub(super) expanded: Option<ExpandedBlock>,
}

/// Rows ahead of the one copied whose expanded features are prefetched (see
/// [`ExampleBlocks::expanded`]): written by the builder thread on another core, they missed the
/// cache when copied, 13% of the learner thread's time in a fit of a large hashed table (10M
/// eat-rate rows, `bits=24`; the fit about 5% faster with the prefetch).
pub(super) const EXPANDED_AHEAD: usize = 8;

/// Rows ahead of the one learned whose label and weight are prefetched (see
/// [`ExampleBlock::label_and_weight`]).
pub(super) const LABELS_AHEAD: usize = 32;

/// A block's leading examples expanded at once (see [`ExampleBlock::expand_whole`]).
#[derive(Clone, Debug)]
pub(super) struct ExpandedBlock {
    pub(super) features: ExpandedFeatures,
    /// Where each example ends in `features`: example `p` runs from `ends[p - 1]` (the start
    /// for `p = 0`) to `ends[p]`.
    pub(super) ends: Vec<ExampleEnd>,
    pub(super) generation: u64,
}

impl ExpandedBlock {
    /// Where the example at `position` starts and ends.
    #[inline]
    pub(super) fn bounds(&self, position: usize) -> (ExampleEnd, ExampleEnd) {
        ExampleEnd::bounds(&self.ends, position)
    }
}

/// The built rows of a block, to expand whole ([`crate::learner::Expansion::expand_block`]).
pub struct BlockRows<'a> {
    pub(super) hashes: &'a [u64],
    pub(super) values: &'a [f32],
    /// Row-major: the span of namespace `k` of row `p` is `spans[p * n_namespaces + k]`.
    pub(super) spans: &'a [(usize, usize)],
    pub(super) n_namespaces: usize,
    pub(super) n_rows: usize,
    pub(super) one_hot: bool,
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
    /// for an enumerator that does not use it, [`crate::learner::Expansion::uses_feature_set`]).
    pub fn example(&self, p: usize) -> Example<'a> {
        let n = self.n_namespaces;
        let spans = &self.spans[p * n..(p + 1) * n];
        Example::assemble(0.0, 1.0, spans, self.hashes, self.values, Union::Skip)
    }
}

/// The namespaces of a block of one-hot rows: the only feature of namespace `k` in the block's
/// row `p` is `(hash(k, p), value(k, p))`.
pub struct OneHotColumns<'a> {
    pub(super) hashes: &'a [u64],
    pub(super) values: &'a [f32],
    /// The first row's spans: namespace `k`'s rows follow one another from `first_row[k].0`.
    pub(super) first_row: &'a [(usize, usize)],
    pub(super) n_rows: usize,
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
    pub(super) fn expanded_by(&self, generation: u64) -> Option<&ExpandedBlock> {
        self.expanded.as_ref().filter(|expanded| expanded.generation == generation)
    }

    /// The slots of the block's examples when it was expanded whole (see
    /// [`ExampleBlock::expand_whole`]).
    pub(crate) fn expanded_slots(&self) -> Option<&[u32]> {
        self.expanded.as_ref().map(|expanded| expanded.features.slots())
    }

    /// Expands the block's built rows at once with `expand` (see
    /// [`crate::learner::Expansion::expand_block`]), as many of them as it does; `generation` stamps the
    /// result, `bits` and `track_fields` are the learner's.
    pub(crate) fn expand_whole(
        &mut self,
        generation: u64,
        table: TableSlots,
        track_fields: bool,
        expand: impl FnOnce(&BlockRows<'_>, &mut ExpandedFeatures, &mut Vec<ExampleEnd>),
    ) {
        let (mut features, mut ends) = match self.expanded.take() {
            Some(old)
                if old.features.mask() == ExpandedFeatures::new(table.bits).mask()
                    && old.features.notes_owners() == table.owners =>
            {
                (old.features, old.ends)
            }
            _ => (ExpandedFeatures::for_table(table), Vec::new()),
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
    pub(super) fn label_and_weight(
        &self,
        position: usize,
        batch: &Batch<'_>,
    ) -> PolyResult<(f64, f64)> {
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
    pub(super) fn unbuilt_row_error(&self, position: usize, batch: &Batch<'_>) -> PolyError {
        let row = self.rows.get(position).map_or(position, |&r| batch.first_row + r);
        self.error
            .clone()
            .unwrap_or_else(|| PolyError::InvalidInput(format!("row {row} was not built")))
    }

    /// The example at `position` (its feature set as `union` says, see
    /// [`Example::assemble`]); the error of an invalid row.
    pub(super) fn example<'a>(
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
pub(super) fn label_and_weight(batch: &Batch<'_>, row: usize) -> (f64, f64) {
    let label = batch.labels.get(row).copied().unwrap_or(0.0);
    (label, batch.weights.map_or(1.0, |w| w[row]))
}

/// Where [`ExampleBlocks`] gets its blocks: built here from a batch's rows ([`RowBlocks`]), or
/// built ahead by another thread ([`crate::learner::builder`]).
pub(crate) trait BlockSource {
    /// Fills `block` with the next rows (whatever it held before); false when there are none,
    /// `block` then left as it was.
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
        // Without a next row, `block` stays as it is: the learner's staged examples may still be
        // in it (the last block of the rows can be shorter than the look-ahead).
        let Some(first) = self.rows.next() else { return false };
        block.fill(self.batch, &mut std::iter::once(first).chain(&mut self.rows), self.seeds)
    }
}

/// Where an example is in [`ExampleBlocks`]: which block, which position.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct BlockPosition {
    pub(super) block: usize,
    pub(super) position: usize,
}

/// The rows of an iterator served one at a time from two blocks filled in turn (see the module
/// docs): an example stays valid until the cursor has moved a whole block past it.
#[derive(Clone, Debug, Default)]
pub(crate) struct ExampleBlocks {
    pub(super) blocks: [ExampleBlock; 2],
    pub(super) cursor: BlockPosition,
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
        table: TableSlots,
        track_fields: bool,
        expand: impl FnOnce(&BlockRows<'_>, &mut ExpandedFeatures, &mut Vec<ExampleEnd>),
    ) {
        self.blocks[self.cursor.block].expand_whole(generation, table, track_fields, expand);
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
