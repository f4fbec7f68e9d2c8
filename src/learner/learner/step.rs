//! Learning one example: its progressive prediction, the update step, and the catch-up an
//! expansion that grew asks for.

use super::*;

impl<E: Expansion> Learner<E> {
    /// Learns one example; returns its progressive prediction (made before learning it).
    pub fn learn(&mut self, example: &Example<'_>, row: usize) -> PolyResult<f64> {
        self.check_label(example.label, row)?;
        self.expansion.check(example, row)?;
        let mut features = std::mem::replace(&mut self.scratch.features, ExpandedFeatures::new(0));
        self.empty_features(&mut features);
        self.expansion.expand(example, &mut features);
        let (label, weight) = (example.label, example.weight);
        let result = self.learn_example(None, || Ok(*example), label, weight, &features, row, &[]);
        self.scratch.features = features;
        result
    }

    /// Learns an example from its expanded `features` (label and expansion checked by the
    /// caller) and tells the enumerator; `upcoming`: slots to prefetch meanwhile. `example`
    /// assembles the example, called only when the enumerator reads it
    /// ([`Expansion::reads_example`], asked when the caller knows its `shape`) or the learner
    /// keeps it for a catch-up.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn learn_example<'e>(
        &mut self,
        shape: Option<ExampleShape>,
        example: impl Fn() -> PolyResult<Example<'e>>,
        label: f64,
        weight: f64,
        features: &ExpandedFeatures,
        row: usize,
        upcoming: &[u32],
    ) -> PolyResult<f64> {
        let p = self.learn_checked(features, label, weight, row, upcoming)?;
        let learned = Learned {
            prediction: p,
            label,
            loss: self.config.loss,
            weights: &self.weights,
            state: &self.state,
            normalized: self.config.rule.normalized,
        };
        let read = match shape.filter(|shape| !self.expansion.reads_example(shape)) {
            Some(shape) => {
                self.expansion.after_learn_unread(&shape, &learned);
                None
            }
            None => {
                let example = example()?;
                self.expansion.after_learn(&example, &learned);
                Some(example)
            }
        };
        if self.ffm.is_some() && self.expansion.generation() != self.ffm_followed {
            self.ffm_follow_crosses();
        }
        let catching_up = self.expansion.catch_up_due();
        let wanted = self.expansion.recent_examples_wanted();
        if wanted > 0 || catching_up {
            // The example that made features join is replayed too; when the enumerator stops
            // wanting examples as it grows (its last cross), the kept ones are replayed first.
            let most = if wanted > 0 { wanted } else { self.recent.most() };
            let example = read.map_or_else(&example, Ok)?;
            self.recent.push(&example, most);
        }
        if catching_up {
            self.catch_up()?;
        }
        if wanted == 0 && !self.recent.is_empty() {
            self.recent.clear();
        }
        Ok(p)
    }

    /// Replays the kept recent examples ([`super::recent`]) for the features the enumerator
    /// just added: each example is predicted by the whole model as it is now, and only the
    /// added features take its update step. An example counts once: the progress record, the
    /// normalized rule's sums, the lazy L1/L2 state and the field scales stay as its first
    /// visit left them. An example the added features cannot be learned from (too large to
    /// expand, a value or step that overflows) is skipped: it was learned without them.
    pub(super) fn catch_up(&mut self) -> PolyResult<()> {
        let recent = std::mem::take(&mut self.recent);
        let track = self.tracks_fields();
        // Examples are expanded CATCH_UP_AHEAD ahead of their replay, their slots prefetched
        // meanwhile (on a large table each replay otherwise waits on memory per feature). The
        // expansions do not change during the catch-up, and the replays keep their order.
        let ahead = if self.prefetches() { CATCH_UP_AHEAD } else { 0 };
        let mut waiting: VecDeque<Replay> = VecDeque::with_capacity(ahead + 1);
        let mut spare: Vec<Replay> = Vec::new();
        let mut union = FeatureUnion::default();
        let mut replayed = 0usize;
        let with_union = self.expansion.uses_feature_set();
        let result = recent.try_for_each(with_union, &mut union, |example| {
            replayed += 1;
            if replayed % 4096 == 0 {
                crate::interrupt::check()?;
            }
            if example.weight <= 0.0 || self.expansion.check(example, 0).is_err() {
                return Ok(());
            }
            let mut replay = spare.pop().unwrap_or_else(|| Replay::new(self.table_slots()));
            replay.expand(&self.expansion, example, track);
            if replay.added.is_empty() {
                spare.push(replay);
                return Ok(());
            }
            if ahead > 0 {
                let slots = replay.full.slots();
                self.prefetch_slots(&slots[..slots.len().min(PREFETCH_SLOTS)]);
            }
            waiting.push_back(replay);
            if waiting.len() > ahead {
                if let Some(replay) = waiting.pop_front() {
                    self.replay(&replay);
                    spare.push(replay);
                }
            }
            Ok(())
        });
        if result.is_ok() {
            while let Some(replay) = waiting.pop_front() {
                self.replay(&replay);
            }
        }
        self.recent = recent;
        result
    }

    /// One example of the catch-up: predicted by the whole model, a step for the added
    /// features. An example they cannot be learned from (a value or step that overflows) is
    /// skipped: it was learned without them.
    pub(super) fn replay(&mut self, replay: &Replay) {
        if overflowing_square(replay.added.values()).is_some() {
            return;
        }
        let raw = self.raw_score(&replay.full);
        if !raw.is_finite() {
            return;
        }
        let p = self.finalize(raw);
        let (_, derivative, positive) = self.config.loss.evaluate(p, replay.label);
        if positive {
            self.weights.touch(replay.added.slots());
            // An overflowing step is not taken (`step` moves no weight then).
            let _ =
                self.step(&replay.added, p, replay.label, replay.weight, derivative, Visit::Replay);
        }
    }

    /// Learns expanded features (the enumerator-independent core; see [`super::update`]), for
    /// callers that enumerate features themselves. `features` must be made for this model's
    /// `bits`; the label and weight are checked like [`Learner::learn`]'s.
    pub fn learn_expanded(
        &mut self,
        features: &ExpandedFeatures,
        label: f64,
        weight: f64,
    ) -> PolyResult<f64> {
        self.check_label(label, 0)?;
        if !(weight.is_finite() && weight >= 0.0) {
            return crate::invalid!("importance weight is {weight}; it must be finite and >= 0");
        }
        if features.mask() != self.weights.mask() {
            return crate::invalid!(
                "features were expanded for mask {:#x} but the model has bits={}",
                features.mask(),
                self.config.bits
            );
        }
        self.learn_checked(features, label, weight, 0, &[])
    }

    /// [`Learner::learn_expanded`] after its checks. `row` numbers the example in errors.
    ///
    /// Numbers that overflow (a feature whose square is beyond f32, a label or importance weight
    /// whose loss or gradient is infinite) are errors naming the row, checked before the model
    /// changes: left alone they turn the weights into NaN, and every later prediction into a
    /// silent 0.
    pub(super) fn learn_checked(
        &mut self,
        features: &ExpandedFeatures,
        label: f64,
        weight: f64,
        row: usize,
        upcoming: &[u32],
    ) -> PolyResult<f64> {
        let (upcoming_now, upcoming_later) = upcoming.split_at(upcoming.len() / 2);
        let labels_before = self.labels;
        if self.config.loss.fixed_range().is_none() {
            self.labels.min = self.labels.min.min(label);
            self.labels.max = self.labels.max.max(label);
        }
        let raw = match &mut self.field_scales {
            Some(scales) if !self.weights.data().is_empty() => {
                let (data, stride) = (self.weights.data(), self.weights.stride());
                let score = scales.score(data, stride, features, self.state.gravity as f32, true);
                f64::from(score) * self.state.contraction
            }
            Some(scales) => {
                scales.forget_contributions();
                self.linear_score(features)
            }
            None => self.linear_score(features),
        };
        let raw = match &self.ffm {
            Some(ffm) => {
                ffm.prefetch(upcoming);
                raw + f64::from(ffm.score(features, &mut self.scratch.ffm))
            }
            None => raw,
        };
        self.prefetch_slots(upcoming_now);
        let p = self.finalize(raw);
        let (loss, derivative, positive) = self.config.loss.evaluate(p, label);
        let grad_squared = (weight * derivative * derivative) as f32;
        let overflow = if !raw.is_finite() || !loss.is_finite() || !grad_squared.is_finite() {
            Some(format!(
                "learning overflows (score {raw:e}, loss {loss:e}, squared gradient \
                 {grad_squared:e} with label {label:e} and importance weight {weight:e}); scale \
                 the labels, weights or features down"
            ))
        } else {
            overflowing_square(features.values()).map(|largest| {
                format!(
                    "an expanded feature {}; scale the features down (or use a lower degree)",
                    overflow_of(largest)
                )
            })
        };
        if let Some(reason) = overflow {
            if self.overflow == OverflowPolicy::PredictZero {
                return self.learn_overflowed(features, (raw, p), label, weight, row, reason);
            }
            self.labels = labels_before;
            return crate::invalid!("row {row}: {reason}");
        }
        self.weights.ensure_allocated()?;
        self.weights.touch(features.slots());
        if let Some(average) = &mut self.average {
            let stride = self.weights.stride();
            average.before_update(
                self.progress.examples,
                features.slots(),
                self.weights.data(),
                stride,
            );
        }
        self.count_example(loss, weight, features.len());
        if weight <= 0.0 || !positive || features.is_empty() {
            // No step to issue the second half's prefetches.
            self.prefetch_slots(upcoming_later);
            return Ok(p);
        }
        // The factorization's step is computed and checked before the weights move, so that a
        // row whose step overflows leaves the whole model as it was.
        if let Some(ffm) = &self.ffm {
            if let Err(step) = ffm.prepare_step(&mut self.scratch.ffm, (weight * derivative) as f32)
            {
                let reason = format!(
                    "the factorization's step overflows ({step:e}); scale the labels, weights \
                     or features down"
                );
                return self.refuse_or_skip(row, reason, p);
            }
        }
        let visit = Visit::First { upcoming: upcoming_later };
        if let Err(step) = self.step(features, p, label, weight, derivative, visit) {
            let reason = format!(
                "the update step overflows ({step:e}); scale the labels, weights or features down"
            );
            return self.refuse_or_skip(row, reason, p);
        }
        if let Some(ffm) = &mut self.ffm {
            ffm.apply_step(&mut self.scratch.ffm);
        }
        Ok(p)
    }

    /// Counts a learned (or, under [`OverflowPolicy::PredictZero`], skipped) example.
    fn count_example(&mut self, loss: f64, weight: f64, features: usize) {
        self.progress.examples += 1;
        self.progress.weighted_loss += loss * weight;
        self.progress.weight += weight;
        self.progress.feature_updates += features as u64;
        if weight > 0.0 {
            self.state.t += weight;
        }
    }

    /// Row `row`, whose numbers overflow for `reason`, as Vowpal Wabbit learns it: a score
    /// `raw` that is not finite is forced to 0 (the prediction `p` otherwise), the example is
    /// counted with that prediction, the update rule's state moves (pass 1, where vw counts a
    /// feature whose square overflows as 1 in the normalizer's sum) and no weight does (vw's
    /// NaN update replaced by 0). Kept for the caller's warning.
    fn learn_overflowed(
        &mut self,
        features: &ExpandedFeatures,
        (raw, p): (f64, f64),
        label: f64,
        weight: f64,
        row: usize,
        reason: String,
    ) -> PolyResult<f64> {
        let p = if raw.is_finite() { p } else { self.finalize(0.0) };
        let (loss, derivative, positive) = self.config.loss.evaluate(p, label);
        self.weights.ensure_allocated()?;
        self.weights.touch(features.slots());
        self.count_example(loss, weight, features.len());
        if weight > 0.0 && positive && !features.is_empty() {
            let _ = self.step(features, p, label, weight, derivative, Visit::Overflowed);
        }
        self.overflowed.push(OverflowedRow { row, reason });
        Ok(p)
    }

    /// A step that overflowed after the row was counted: an error naming the row, or, under
    /// [`OverflowPolicy::PredictZero`], the row's prediction `p` with no weight moved.
    fn refuse_or_skip(&mut self, row: usize, reason: String, p: f64) -> PolyResult<f64> {
        match self.overflow {
            OverflowPolicy::Refuse => crate::invalid!("row {row}: {reason}"),
            OverflowPolicy::PredictZero => {
                self.overflowed.push(OverflowedRow { row, reason });
                Ok(p)
            }
        }
    }

    /// The update step of an example of progressive prediction `p` on `features` (passes 1 and
    /// 2 of [`super::update`]); `Err` with the step when it overflows (no weight moved; pass 1's
    /// sums and normalizers are).
    /// A [`Visit::Replay`] ([`Learner::catch_up`]) moves only the weights of `features`: the
    /// state the examples' first visit keeps (the normalized rule's sums, the lazy L1/L2 state,
    /// the field scales) is read, not changed.
    #[inline]
    pub(super) fn step(
        &mut self,
        features: &ExpandedFeatures,
        p: f64,
        label: f64,
        weight: f64,
        derivative: f64,
        visit: Visit<'_>,
    ) -> Result<(), f32> {
        let (replay, upcoming) = match visit {
            Visit::First { upcoming } => (false, upcoming),
            Visit::Replay => (true, &[][..]),
            Visit::Overflowed => (false, &[][..]),
        };
        let grad_squared = (weight * derivative * derivative) as f32;
        let config = &self.config;
        let rule = config.rule;
        let stride = self.weights.stride();
        let data = self.weights.data_mut();
        let mut multiplier = 1.0f32;
        let pred_per_update = if rule.adaptive || rule.normalized {
            if grad_squared == 0.0 {
                1.0
            } else {
                let sqrt = config.power_t == 0.5;
                let g = grad_squared;
                let pw = self.powers;
                let (ppu, norm_x) = match (rule.adaptive, rule.normalized, sqrt) {
                    (true, true, true) => {
                        update::sensitivity::<true, true, true>(data, features, g, pw)
                    }
                    (true, true, false) => {
                        update::sensitivity::<true, true, false>(data, features, g, pw)
                    }
                    (true, false, true) => {
                        update::sensitivity::<true, false, true>(data, features, g, pw)
                    }
                    (true, false, false) => {
                        update::sensitivity::<true, false, false>(data, features, g, pw)
                    }
                    (false, true, true) => {
                        update::sensitivity::<false, true, true>(data, features, g, pw)
                    }
                    (false, true, false) => {
                        update::sensitivity::<false, true, false>(data, features, g, pw)
                    }
                    (false, false, _) => (update::sum_squares(features), 0.0),
                };
                let ppu = match &self.field_scales {
                    Some(scales) => scales.pred_per_update(data, stride, features),
                    None => ppu,
                };
                if rule.normalized {
                    if !replay {
                        self.state.normalized_sum_norm_x += weight * f64::from(norm_x);
                        self.state.total_weight += weight;
                    }
                    multiplier = update::average_update(
                        self.state.total_weight,
                        self.state.normalized_sum_norm_x,
                        self.powers,
                    );
                }
                f64::from(ppu) * f64::from(multiplier)
            }
        } else {
            match &self.field_scales {
                Some(scales) => f64::from(scales.pred_per_update(data, stride, features)),
                None => f64::from(update::sum_squares(features)),
            }
        };
        let mut scale = config.eta0 * weight;
        if !rule.adaptive {
            let t = config.initial_t + self.state.t;
            scale *= t.powf(-config.power_t);
            if !rule.normalized && config.initial_t > 0.0 {
                scale *= config.initial_t.powf(config.power_t);
            }
        }
        crate::memory::prefetch_slots(data, stride, upcoming);
        let mut step = if rule.invariant {
            config.loss.invariant_update(p, label, scale, pred_per_update)
        } else {
            config.loss.plain_update(p, label, scale)
        };
        if replay {
            step /= self.state.contraction;
        } else if (config.l1 > 0.0 || config.l2 > 0.0) && step.abs() > 1e-8 {
            let eta_bar = if derivative.abs() > 1e-8 { -step / derivative } else { 0.0 };
            if derivative.abs() > 1e-8 {
                self.state.contraction *= 1.0 - config.l2 * eta_bar;
            }
            step /= self.state.contraction;
            self.state.gravity += eta_bar * config.l1;
        }
        let step = (step as f32) * multiplier;
        if !step.is_finite() || matches!(visit, Visit::Overflowed) {
            return Err(step);
        }
        if step != 0.0 {
            if let Some(average) = self.average.as_mut().filter(|_| replay) {
                // After the update of the example just counted (see `learn_checked`).
                let example = self.progress.examples.saturating_sub(1);
                average.before_update(example, features.slots(), data, stride);
            }
            update::apply_update(data, stride, features, step);
        } else if stride == 4 && !features.owners().is_empty() {
            // No step, but the features touched their slots: a growing table's owners.
            update::note_owners(data, features, |_, _| {});
        }
        if replay {
            return Ok(());
        }
        if let Some(scales) = &mut self.field_scales {
            // The recorded contributions are before the contraction.
            scales.learn(weight * derivative * self.state.contraction);
        }
        if self.state.contraction < 1e-9 || self.state.gravity > 1e3 {
            update::sync_weights(data, stride, &mut self.state);
        }
        Ok(())
    }
}
