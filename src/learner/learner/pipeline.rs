//! Learning a batch: its rows built into blocks (on a thread beside the learner for large
//! tables), expanded, their weight slots prefetched ahead of the step, and learned in order.

use super::*;

impl<E: Expansion> Learner<E> {
    /// One online pass over a batch in row order; returns the progressive predictions' losses
    /// summed with their importance weights (`Σ w·loss`, `Σ w`). Labels, weights and feature
    /// entries are checked first: a batch with a bad one is refused whole. Errors that only
    /// learning meets (an example too large to expand, an update that overflows) stop the batch
    /// at that row, the rows before it learned.
    pub fn learn_batch(&mut self, batch: &Batch<'_>) -> PolyResult<(f64, f64)> {
        self.check_batch(batch)?;
        let before = (self.progress.weighted_loss, self.progress.weight);
        self.learn_rows(batch, 0..batch.n_rows(), |_| false, |_| {})?;
        Ok((self.progress.weighted_loss - before.0, self.progress.weight - before.1))
    }

    /// [`Learner::learn_batch`], also appending each row's progressive prediction (made before
    /// learning it) to `predictions`: what a caller combining several models' predictions of
    /// the same examples needs (one-against-all's progressive multiclass error).
    pub fn learn_batch_recording(
        &mut self,
        batch: &Batch<'_>,
        predictions: &mut Vec<f64>,
    ) -> PolyResult<(f64, f64)> {
        self.check_batch(batch)?;
        let before = (self.progress.weighted_loss, self.progress.weight);
        predictions.reserve(batch.n_rows());
        self.learn_rows(
            batch,
            0..batch.n_rows(),
            |_| false,
            |row| {
                if let Visited::Learned { prediction, .. } = row {
                    predictions.push(prediction);
                }
            },
        )?;
        Ok((self.progress.weighted_loss - before.0, self.progress.weight - before.1))
    }

    /// One pass over a batch in row order that learns every row but those `held_out` marks,
    /// which it only scores (Vowpal Wabbit's test-only and holdout examples), and records what
    /// happened to each row in `records`, in row order: what a progressive report of every
    /// example needs (Vowpal Wabbit's table, its `-p` predictions, its holdout loss). A held-out
    /// row is scored with the label range as it is (it does not widen it, as in `vw -t`).
    pub fn learn_batch_scored(
        &mut self,
        batch: &Batch<'_>,
        held_out: &[bool],
        records: &mut Vec<RowRecord>,
    ) -> PolyResult<()> {
        if held_out.len() != batch.n_rows() {
            return crate::invalid!(
                "held_out has {} entries for a batch of {} rows",
                held_out.len(),
                batch.n_rows()
            );
        }
        self.check_batch(batch)?;
        records.reserve(batch.n_rows());
        let mut last = self.progress.clone();
        self.learn_rows(
            batch,
            0..batch.n_rows(),
            |row| held_out[row],
            |row| match row {
                Visited::Learned { prediction, progress } => {
                    records.push(RowRecord {
                        prediction,
                        weighted_loss: progress.weighted_loss - last.weighted_loss,
                        features: progress.feature_updates - last.feature_updates,
                        held_out: false,
                    });
                    last = progress.clone();
                }
                Visited::HeldOut { prediction, weighted_loss, features } => {
                    records.push(RowRecord { prediction, weighted_loss, features, held_out: true });
                }
            },
        )?;
        Ok(())
    }

    /// Learns `rows` of `batch` in order (rows where `is_holdout` holds are only evaluated; each
    /// learned row's progressive prediction goes to `learned`, with the progress record after
    /// it);
    /// returns the holdout rows' `(Σ w·loss, Σ w)`. Stops at the first invalid row, the rows
    /// before it learned. Labels are checked by the caller ([`Learner::check_batch_labels`]).
    ///
    /// Looking ahead: on a table larger than the cache the next [`LEARN_AHEAD`] examples are
    /// built and expanded before the current one is learned, and the furthest one's weight
    /// slots prefetched during its step, so that the cache misses of the table overlap the
    /// learning instead of stalling it. An enumerator that grew in between
    /// ([`Expansion::generation`]) expands an example again when its turn comes. There, too,
    /// the blocks of a long batch are built on a thread beside the learner
    /// ([`Learner::builds_ahead`], [`super::builder`]).
    ///
    /// A growing table ([`super::growth`]) looks at itself every 65,536 rows
    /// (more often early in a run), and grows there, between blocks.
    pub(super) fn learn_rows(
        &mut self,
        batch: &Batch<'_>,
        rows: impl Iterator<Item = usize> + Send,
        is_holdout: impl Fn(usize) -> bool,
        mut visited: impl FnMut(Visited<'_>),
    ) -> PolyResult<(f64, f64)> {
        if !self.grows() {
            return self.learn_rows_on_table(batch, rows, is_holdout, visited);
        }
        let mut rows = rows.peekable();
        let mut holdout = (0.0, 0.0);
        while rows.peek().is_some() {
            self.grow_if_crowded()?;
            let part = if self.grows() {
                let part = rows.by_ref().take(self.rows_to_next_look());
                self.learn_rows_on_table(batch, part, &is_holdout, &mut visited)?
            } else {
                self.learn_rows_on_table(batch, rows.by_ref(), &is_holdout, &mut visited)?
            };
            holdout = (holdout.0 + part.0, holdout.1 + part.1);
        }
        Ok(holdout)
    }

    /// [`Learner::learn_rows`] on the table as it is.
    fn learn_rows_on_table(
        &mut self,
        batch: &Batch<'_>,
        rows: impl Iterator<Item = usize> + Send,
        is_holdout: impl Fn(usize) -> bool,
        visited: impl FnMut(Visited<'_>),
    ) -> PolyResult<(f64, f64)> {
        let seeds = self.seeds.clone();
        if self.builds_ahead(rows.size_hint().0) {
            let form = (self.expansion.generation(), self.expansion.block_expansion());
            let (slots, track) = (self.table_slots(), self.tracks_fields());
            let table = SlotAddresses::of(self.weights.data(), self.weights.stride())
                .filter(|_| self.weights.size_bytes() > BUILDER_PREFETCH_TABLE_BYTES);
            let built_for = BuiltFor { slots, track_fields: track, table };
            builder::with_builder(*batch, rows, &seeds, form, built_for, |source| {
                self.learn_from(batch, source, is_holdout, visited)
            })
        } else {
            let mut source = RowBlocks { batch, rows, seeds: &seeds };
            self.learn_from(batch, &mut source, is_holdout, visited)
        }
    }

    /// Whether [`Learner::learn_rows`] builds the blocks of `rows` rows on a builder thread
    /// ([`super::builder`]): as [`Learner::set_builder_thread`] says; by default only where it
    /// pays, on a table larger than the cache, for batches of thousands of rows, when the
    /// thread pool has a second thread and the learner is not itself running on one of them
    /// (learners trained in parallel already use the cores).
    pub(super) fn builds_ahead(&self, rows: usize) -> bool {
        match self.builder_thread {
            BuilderThread::Never => false,
            BuilderThread::Always => true,
            BuilderThread::Auto => {
                self.prefetches()
                    && rows >= BUILDER_MIN_ROWS
                    && rayon::current_thread_index().is_none()
                    && rayon::current_num_threads() >= 2
            }
        }
    }

    /// Whether batches are built on a thread beside the learner (see [`BuilderThread`]); the
    /// results are the same either way.
    pub fn set_builder_thread(&mut self, builder_thread: BuilderThread) {
        self.builder_thread = builder_thread;
    }

    /// The rows of `source` learned as [`Learner::learn_rows`] says.
    pub(super) fn learn_from(
        &mut self,
        batch: &Batch<'_>,
        source: &mut impl FollowsExpansion,
        is_holdout: impl Fn(usize) -> bool,
        mut visited: impl FnMut(Visited<'_>),
    ) -> PolyResult<(f64, f64)> {
        let mut ring = std::mem::take(&mut self.scratch.staged);
        let mut blocks = std::mem::take(&mut self.scratch.blocks);
        let result = (|| {
            let (mut holdout_loss, mut holdout_weight) = (0.0, 0.0);
            if !blocks.start(source) {
                return Ok((0.0, 0.0));
            }
            self.expand_block(&mut blocks, source);
            // Without prefetching, looking ahead gains nothing and costs cache room.
            let depth = if self.prefetches() { LEARN_AHEAD + 1 } else { 1 };
            ring.resize_with(depth, || Staged::new(self.table_slots()));
            // ring[(head + k) % depth] is the k-th example from the current one; `staged` of
            // them are; the blocks' cursor is on the row to stage next (if `more`).
            let (mut head, mut staged, mut more) = (0, 0, true);
            while staged < depth && more {
                self.stage(batch, &blocks, &mut ring[staged]);
                staged += 1;
                more = self.advance(&mut blocks, source);
            }
            while staged > 0 {
                crate::interrupt::check()?;
                let current = &mut ring[head];
                if let Some(error) = current.error.take() {
                    return Err(error);
                }
                if current.generation != self.expansion.generation() {
                    self.expand_staged(batch, &blocks, current)?;
                }
                let current = &ring[head];
                let upcoming = if staged == depth && depth > 1 {
                    let furthest = &ring[(head + depth - 1) % depth].features;
                    &furthest.slots()[..furthest.len().min(PREFETCH_SLOTS)]
                } else {
                    &[]
                };
                let (label, weight) = blocks.label_and_weight(current.at, batch)?;
                let row = blocks.batch_row(current.at);
                if is_holdout(row) {
                    let p = self.finalize(self.raw_score(&current.features));
                    let weighted_loss = self.config.loss.value(p, label) * weight;
                    holdout_loss += weighted_loss;
                    holdout_weight += weight;
                    let features = current.features.len() as u64;
                    visited(Visited::HeldOut { prediction: p, weighted_loss, features });
                } else {
                    let row = batch.first_row + row;
                    let p = if self.expansion.learns_from_examples() {
                        // Staging built the feature set, if the enumerator reads it (whose
                        // count, then, only the example knows).
                        let with_set = self.expansion.uses_feature_set();
                        let shape = if with_set { None } else { blocks.shape(current.at) };
                        let example = || {
                            let union =
                                if with_set { Union::Built(&current.union) } else { Union::Skip };
                            blocks.example(current.at, batch, union)
                        };
                        let features = &current.features;
                        self.learn_example(shape, example, label, weight, features, row, upcoming)?
                    } else {
                        self.learn_checked(&current.features, label, weight, row, upcoming)?
                    };
                    visited(Visited::Learned { prediction: p, progress: &self.progress });
                }
                // The current example's place takes the next row.
                if more {
                    self.stage(batch, &blocks, &mut ring[head]);
                    more = self.advance(&mut blocks, source);
                } else {
                    staged -= 1;
                }
                head = (head + 1) % depth;
            }
            Ok((holdout_loss, holdout_weight))
        })();
        self.scratch.staged = ring;
        self.scratch.blocks = blocks;
        result
    }

    /// Moves `blocks` to the next row (false when there is none), expanding a block it enters
    /// whole when it can ([`Learner::expand_block`]).
    pub(super) fn advance(
        &self,
        blocks: &mut ExampleBlocks,
        source: &mut impl FollowsExpansion,
    ) -> bool {
        let more = blocks.advance(source);
        if more {
            self.expand_block(blocks, source);
        }
        more
    }

    /// Expands the block the cursor of `blocks` has just entered at once, if the enumerator
    /// has a block form ([`Expansion::expand_block`]) and `source` did not expand it with the
    /// enumerator as it is now (`source` then learns of the enumerator's change).
    pub(super) fn expand_block(
        &self,
        blocks: &mut ExampleBlocks,
        source: &mut impl FollowsExpansion,
    ) {
        let generation = self.expansion.generation();
        if !blocks.entered_unexpanded(generation) {
            return;
        }
        let track = self.tracks_fields();
        blocks.expand_block(generation, self.table_slots(), track, |rows, out, ends| {
            self.expansion.expand_block(rows, out, ends)
        });
        source.expansion_changed(generation, &|| self.expansion.block_expansion());
    }

    /// Stages the current example of `blocks`: checks and expands it; an error is kept in it.
    pub(super) fn stage(&self, batch: &Batch<'_>, blocks: &ExampleBlocks, staged: &mut Staged) {
        staged.at = blocks.cursor();
        staged.error = self.expand_staged(batch, blocks, staged).err();
    }

    /// Prefetches the weight slots `slots` will touch (on a table larger than the cache).
    #[inline]
    pub(super) fn prefetch_slots(&self, slots: &[u32]) {
        crate::memory::prefetch_slots(self.weights.data(), self.weights.stride(), slots);
    }

    /// Whether examples are staged ahead and their slots prefetched: for tables larger than a
    /// core's L2 cache ([`PREFETCH_TABLE_BYTES`]; one that fits gains nothing, and prefetching
    /// costs).
    pub(super) fn prefetches(&self) -> bool {
        self.weights.size_bytes() > PREFETCH_TABLE_BYTES
    }

    /// (Re-)expands a staged example with the enumerator as it is now, checking it first (or
    /// copies its features from its block, expanded whole by the same enumerator).
    pub(super) fn expand_staged(
        &self,
        batch: &Batch<'_>,
        blocks: &ExampleBlocks,
        staged: &mut Staged,
    ) -> PolyResult<()> {
        self.empty_features(&mut staged.features);
        let generation = self.expansion.generation();
        // Prefetching the rows ahead pays where the slots are prefetched: a large table, the
        // blocks built on the other core.
        let prefetch_ahead = self.prefetches();
        if blocks.expanded(staged.at, generation, prefetch_ahead, &mut staged.features) {
            staged.generation = generation;
            return Ok(());
        }
        let union = if self.expansion.uses_feature_set() {
            Union::Build(&mut staged.union)
        } else {
            Union::Skip
        };
        let example = blocks.example(staged.at, batch, union)?;
        self.expansion.check(&example, batch.first_row + blocks.batch_row(staged.at))?;
        self.expansion.expand(&example, &mut staged.features);
        staged.generation = generation;
        Ok(())
    }
}
