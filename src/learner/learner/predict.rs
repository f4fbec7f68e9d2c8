//! Scoring a batch in parallel, one example ahead of its cache misses, with or without field
//! scales.

use super::*;

impl<E: Expansion> Learner<E> {
    /// Predictions for every row of `batch` into `out` (resized), in parallel over row blocks.
    pub fn predict_batch(&self, batch: &Batch<'_>, out: &mut Vec<f64>) -> PolyResult<()> {
        self.predict_batch_with(batch, out, true)
    }

    /// [`Learner::predict_batch`], on this thread only when `parallel` is false (inside a Polars
    /// query, which already runs batches on its own threads). The first failing row is reported
    /// whatever the thread order.
    pub fn predict_batch_with(
        &self,
        batch: &Batch<'_>,
        out: &mut Vec<f64>,
        parallel: bool,
    ) -> PolyResult<()> {
        self.check_batch_namespaces(batch)?;
        let n = batch.n_rows();
        out.clear();
        out.resize(n, 0.0);
        const BLOCK: usize = 4096;
        // Scores do not change the table, so a row can be staged (expanded, its slots
        // prefetched) well before it is scored: a ring of staged rows, `SCORE_AHEAD` deep.
        let depth = if self.prefetches() { SCORE_AHEAD } else { 1 };
        let run = |(block, chunk): (usize, &mut [f64])| -> PolyResult<()> {
            crate::interrupt::check()?;
            let mut ring: Vec<Staged> =
                (0..depth.min(chunk.len())).map(|_| Staged::new(self.table_slots())).collect();
            let rows = block * BLOCK..block * BLOCK + chunk.len();
            let mut source = RowBlocks { batch, rows, seeds: &self.seeds };
            let mut blocks = ExampleBlocks::default();
            let mut more = blocks.start(&mut source);
            let mut done = 0;
            while more {
                self.expand_block(&mut blocks, &mut source);
                let scores = &mut chunk[done..done + blocks.block_len()];
                match blocks.block_expanded(self.expansion.generation()) {
                    Some((features, ends)) => self.score_expanded(features, ends, scores),
                    None => self.score_block_rows(batch, &blocks, scores, &mut ring)?,
                }
                done += scores.len();
                more = blocks.next_block(&mut source);
            }
            Ok(())
        };
        if parallel && n > BLOCK {
            let results: Vec<PolyResult<()>> =
                out.par_chunks_mut(BLOCK).enumerate().map(run).collect();
            results.into_iter().collect()
        } else {
            out.chunks_mut(BLOCK).enumerate().try_for_each(run)
        }
    }

    /// Scores the examples of a block expanded whole (example `p` ending at `ends[p]`), each
    /// where it lies, into `scores`, the slots `SCORE_AHEAD` examples ahead prefetched.
    pub(super) fn score_expanded(
        &self,
        block: &ExpandedFeatures,
        ends: &[ExampleEnd],
        scores: &mut [f64],
    ) {
        if self.ffm.is_some() {
            // The factorization reads an example's field runs: each example copied out.
            let mut example = ExpandedFeatures::new(self.config.bits);
            for (p, score) in scores.iter_mut().enumerate() {
                let (from, to) = ExampleEnd::bounds(ends, p);
                self.empty_features(&mut example);
                example.extend_from_example(block, from, to);
                *score = self.finalize(self.raw_score(&example));
            }
            return;
        }
        let slots = block.slots();
        let ahead = if self.prefetches() { SCORE_AHEAD } else { 0 };
        let prefetch_example = |p: usize| {
            let (from, to) = ExampleEnd::bounds(ends, p);
            self.prefetch_slots(
                &slots[from.features..to.features.min(from.features + PREFETCH_SLOTS)],
            );
        };
        (0..ahead.min(scores.len())).for_each(prefetch_example);
        let in_place = self.scoring_in_place(block, ends);
        let n = scores.len();
        for (p, score) in scores.iter_mut().enumerate() {
            if ahead > 0 && p + ahead < n {
                prefetch_example(p + ahead);
            }
            let (from, to) = ExampleEnd::bounds(ends, p);
            let raw = match &in_place {
                InPlace::ByFeature(scales) => {
                    self.raw_score_in_place(block, from.features..to.features, scales)
                }
                InPlace::ByFieldRun(field_scales) => {
                    self.raw_score_by_field_runs(field_scales, block, from, to)
                }
            };
            *score = self.finalize(raw);
        }
    }

    /// How the examples of a block expanded whole are scored where they lie: feature by feature
    /// when every field's contribution is one feature's (no field scales, or one-hot namespaces
    /// and their crosses, the same layout in every example; with each position's scale, as many
    /// as the longest example has), else field run by field run.
    pub(super) fn scoring_in_place(
        &self,
        block: &ExpandedFeatures,
        ends: &[ExampleEnd],
    ) -> InPlace<'_> {
        let Some(field_scales) = &self.field_scales else {
            let length = |p| {
                let (from, to) = ExampleEnd::bounds(ends, p);
                to.features - from.features
            };
            let longest = (0..ends.len()).map(length).max().unwrap_or(0);
            return InPlace::ByFeature(vec![1.0; longest]);
        };
        let per_example = ends.first().map_or(0, |end| end.features);
        let uniform = ends.iter().enumerate().all(|(p, end)| end.features == (p + 1) * per_example);
        let runs: Vec<_> = block.field_runs().take(per_example).collect();
        let one_each = runs.len() == per_example && runs.iter().all(|(_, r)| r.len() == 1);
        if uniform && one_each {
            InPlace::ByFeature(runs.iter().map(|&(field, _)| field_scales.scale(field)).collect())
        } else {
            InPlace::ByFieldRun(field_scales)
        }
    }

    /// [`Learner::raw_score`] with `field_scales` of the example from `from` to `to` of `block`
    /// (a block expanded whole, see [`ExampleEnd`]), where it lies: the same sums in the same
    /// order as of its copy.
    pub(super) fn raw_score_by_field_runs(
        &self,
        field_scales: &FieldScales,
        block: &ExpandedFeatures,
        from: ExampleEnd,
        to: ExampleEnd,
    ) -> f64 {
        let data = self.weights.data();
        if data.is_empty() {
            return 0.0;
        }
        let (stride, gravity) = (self.weights.stride(), self.state.gravity as f32);
        let score = field_scales.predict_between(data, stride, block, from, to, gravity);
        f64::from(score) * self.state.contraction
    }

    /// [`Learner::raw_score`] of the features `range` of `block`, each of its own field, whose
    /// scales are `scales`: the same sums in the same order (a field's contribution is its one
    /// feature's `w x`), without copying the example out of the block.
    pub(super) fn raw_score_in_place(
        &self,
        block: &ExpandedFeatures,
        range: std::ops::Range<usize>,
        scales: &[f32],
    ) -> f64 {
        let data = self.weights.data();
        if data.is_empty() {
            return 0.0;
        }
        let stride = self.weights.stride();
        let gravity = self.state.gravity as f32;
        let (slots, values) = (&block.slots()[range.clone()], &block.values()[range]);
        let weight = |slot: u32| {
            let w = data[slot as usize * stride + W];
            if gravity > 0.0 {
                update::trunc_weight(w, gravity)
            } else {
                w
            }
        };
        // Without field scales every scale is 1, and `1 * c` is `c` exactly.
        let terms = slots.iter().zip(values).zip(scales);
        let sum: f32 = terms.map(|((&slot, &x), &scale)| scale * (weight(slot) * x)).sum();
        f64::from(sum) * self.state.contraction
    }

    /// Scores the rows of the cursor's block of `blocks` one by one into `scores`, each
    /// staged (checked, expanded, its slots prefetched) `ring.len()` rows ahead; the first
    /// invalid row's error.
    pub(super) fn score_block_rows(
        &self,
        batch: &Batch<'_>,
        blocks: &ExampleBlocks,
        scores: &mut [f64],
        ring: &mut [Staged],
    ) -> PolyResult<()> {
        let depth = ring.len().min(scores.len());
        let prefetch = ring.len() > 1;
        let stage = |staged: &mut Staged, position: usize| -> PolyResult<()> {
            staged.at = blocks.in_block(position);
            self.expand_staged(batch, blocks, staged)?;
            if prefetch {
                let slots = staged.features.slots();
                self.prefetch_slots(&slots[..slots.len().min(PREFETCH_SLOTS)]);
            }
            Ok(())
        };
        for (position, staged) in ring[..depth].iter_mut().enumerate() {
            stage(staged, position)?;
        }
        let n = scores.len();
        // The ring's slots in turn (a cycle, not `position % depth`: a division a row).
        let turns = scores.iter_mut().enumerate().zip((0..depth).cycle());
        for ((position, score), k) in turns {
            let staged = &mut ring[k];
            *score = self.finalize(self.raw_score(&staged.features));
            if position + depth < n {
                stage(staged, position + depth)?;
            }
        }
        Ok(())
    }

    /// What each pair of the factorization's fields carries over `batch`: the mean over its
    /// rows of `|term|` by pair ([`Ffm::add_pair_terms`]; `F * F`, row-major, `a <= b`).
    pub fn ffm_pair_terms(&self, batch: &Batch<'_>) -> PolyResult<Vec<f64>> {
        let Some(ffm) = &self.ffm else {
            return crate::invalid!("the model has no field-aware factorization (ffm)");
        };
        self.check_batch_namespaces(batch)?;
        let n_fields = ffm.options().fields.len();
        let mut totals = vec![0.0; n_fields * n_fields];
        let (mut buffer, mut scratch) = (ExampleBuffer::new(), FfmScratch::default());
        let mut features = ExpandedFeatures::new(self.config.bits);
        for row in 0..batch.n_rows() {
            if row % 4096 == 0 {
                crate::interrupt::check()?;
            }
            let example = batch.example(row, &self.seeds, &mut buffer)?;
            self.expansion.check(&example, row)?;
            self.empty_features(&mut features);
            self.expansion.expand(&example, &mut features);
            ffm.add_pair_terms(&features, &mut scratch, &mut totals);
        }
        let rows = batch.n_rows().max(1) as f64;
        Ok(totals.into_iter().map(|t| t / rows).collect())
    }

    /// `P(y = +1)` for a logistic-loss margin.
    pub fn probability(margin: f64) -> f64 {
        crate::learner::loss::logistic(margin)
    }
}
