//! Multiclass reductions over binary online learners: one-vs-one (the paper's 45 pairwise DoS
//! classifiers for 10 digits, majority vote) and one-vs-rest (argmax of the C scores).
//!
//! # Training in parallel, deterministically
//!
//! A batch is processed model by model: the binary models are distributed over the rayon
//! threads, and each model walks the batch's examples that concern it (for one-vs-one: those of
//! its two classes) in stream order. Every model therefore sees exactly the sequence it would
//! see in a sequential pass, so the result does not depend on the number of threads or on how
//! the stream is cut into batches. Running averages are snapshotted when the global example count
//! reaches a multiple of the averaging interval (batches are split there).
//!
//! # Conventions
//!
//! * Classes are integer ids 0..C−1 (the caller maps its labels).
//! * One-vs-one model m is the pair (i, j), i < j, in lexicographic order
//!   ((0,1), (0,2), …, (0,C−1), (1,2), …); class i is its positive side.
//! * One-vs-one vote: s > 0 is a vote for i, s < 0 for j, s = 0 no vote. Among the classes with
//!   the most votes, the one with the largest summed pairwise margin wins (Σ over its C − 1
//!   pairs of the score oriented towards it: +s as i, −s as j), then the smallest class id.
//! * One-vs-rest: model c learns class c against all others; prediction is the argmax of the C
//!   scores, ties to the smallest class id.
//! * Pairwise DoS model m is initialized from ChaCha8 stream m of the seed.

use rayon::prelude::*;

use super::example::{check_n_features, ExampleBatch, Sign};
use super::linear::LinearPa;
use super::model::{DosModel, Real, Step};
use super::online::{
    check_features, check_interval, check_scores, overflow_error, BinaryLearner, RunningAverage,
    TrainStats,
};
use super::solve::PaVariant;
use crate::error::PolyResult;

/// How C classes are reduced to binary problems.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// C(C−1)/2 pairwise models, each trained on its two classes only; majority vote.
    OneVsOne,
    /// C models, class c against the rest; argmax of the scores.
    OneVsRest,
}

impl Strategy {
    /// "one-vs-one" or "one-vs-rest".
    pub fn name(self) -> &'static str {
        match self {
            Strategy::OneVsOne => "one-vs-one",
            Strategy::OneVsRest => "one-vs-rest",
        }
    }
}

/// Examples per parallel work unit: the examples' rows stay in cache while the models walk them.
const CHUNK: usize = 2048;

/// A multiclass online classifier over binary learners `M` (with a running average per model).
#[derive(Clone, Debug)]
pub struct Multiclass<M> {
    n_classes: usize,
    strategy: Strategy,
    models: Vec<M>,
    averages: Vec<RunningAverage<M>>,
    interval: Option<u64>,
    seen: u64,
    stats: TrainStats,
}

impl<T: Real> Multiclass<DosModel<T>> {
    /// One DoS model per binary problem, model m initialized from stream m of `seed`.
    pub fn dos(
        n_classes: usize,
        n_features: usize,
        rank: usize,
        seed: u64,
        variant: PaVariant,
        strategy: Strategy,
        averaging_interval: Option<u64>,
    ) -> PolyResult<Self> {
        check_n_features(n_features)?;
        Self::new(n_classes, strategy, averaging_interval, |m| {
            DosModel::new_stream(n_features, rank, seed, m as u64, variant)
        })
    }
}

impl Multiclass<LinearPa> {
    /// One zero-initialized linear PA model per binary problem.
    pub fn linear(
        n_classes: usize,
        n_features: usize,
        variant: PaVariant,
        strategy: Strategy,
        averaging_interval: Option<u64>,
    ) -> PolyResult<Self> {
        Self::new(n_classes, strategy, averaging_interval, |_| LinearPa::new(n_features, variant))
    }
}

impl<M: BinaryLearner> Multiclass<M> {
    /// `make_model(m)` builds binary model m (see [`Multiclass::pair`] for one-vs-one).
    /// `averaging_interval`: `Some(k)` snapshots every model into its running average whenever
    /// the number of examples seen reaches a multiple of k; `None` keeps no averages.
    pub fn new(
        n_classes: usize,
        strategy: Strategy,
        averaging_interval: Option<u64>,
        make_model: impl FnMut(usize) -> PolyResult<M>,
    ) -> PolyResult<Self> {
        if n_classes < 2 {
            return crate::invalid!("multiclass needs at least 2 classes, got {n_classes}");
        }
        if n_classes > u32::MAX as usize {
            return crate::invalid!("at most {} classes are supported, got {n_classes}", u32::MAX);
        }
        check_interval(averaging_interval)?;
        let n_models = match strategy {
            Strategy::OneVsOne => n_classes * (n_classes - 1) / 2,
            Strategy::OneVsRest => n_classes,
        };
        let models = (0..n_models).map(make_model).collect::<PolyResult<Vec<M>>>()?;
        let n_features = models[0].n_features();
        if let Some(m) = models.iter().position(|model| model.n_features() != n_features) {
            return crate::invalid!(
                "model {m} has n_features={} but model 0 has {n_features}",
                models[m].n_features()
            );
        }
        Ok(Self {
            n_classes,
            strategy,
            averages: vec![RunningAverage::new(); n_models],
            models,
            interval: averaging_interval,
            seen: 0,
            stats: TrainStats::default(),
        })
    }

    /// A multiclass learner restored from its parts (see the getters), e.g. after unpickling.
    pub fn from_parts(
        n_classes: usize,
        strategy: Strategy,
        averaging_interval: Option<u64>,
        models: Vec<M>,
        averages: Vec<RunningAverage<M>>,
        seen: u64,
        stats: TrainStats,
    ) -> PolyResult<Self> {
        let mut models = models.into_iter();
        let mut restored = Self::new(n_classes, strategy, averaging_interval, |m| {
            models.next().ok_or_else(|| {
                crate::error::PolyError::InvalidInput(format!(
                    "{} strategy with {n_classes} classes needs more than {m} models",
                    strategy.name()
                ))
            })
        })?;
        if models.next().is_some() || averages.len() != restored.models.len() {
            return crate::invalid!(
                "{} strategy with {n_classes} classes needs {} models and averages",
                strategy.name(),
                restored.models.len()
            );
        }
        let n_features = restored.n_features();
        if averages.iter().any(|a| a.get().is_some_and(|m| m.n_features() != n_features)) {
            return crate::invalid!("a running average differs from the models in n_features");
        }
        restored.averages = averages;
        restored.seen = seen;
        restored.stats = stats;
        Ok(restored)
    }

    pub fn averaging_interval(&self) -> Option<u64> {
        self.interval
    }

    pub fn n_classes(&self) -> usize {
        self.n_classes
    }

    pub fn n_features(&self) -> usize {
        self.models[0].n_features()
    }

    pub fn strategy(&self) -> Strategy {
        self.strategy
    }

    /// The binary models (current iterates), in model order.
    pub fn models(&self) -> &[M] {
        &self.models
    }

    /// The binary models, to transform them in tests.
    #[cfg(test)]
    pub(crate) fn models_mut(&mut self) -> &mut [M] {
        &mut self.models
    }

    /// The running average of each binary model.
    pub fn averages(&self) -> &[RunningAverage<M>] {
        &self.averages
    }

    /// Examples learned so far.
    pub fn seen(&self) -> u64 {
        self.seen
    }

    /// Cumulative counts (steps, updates, mistakes are summed over the binary models).
    pub fn stats(&self) -> TrainStats {
        self.stats
    }

    /// The classes (i, j), i < j, of one-vs-one model `m` (positive side i).
    pub fn pair(&self, m: usize) -> (usize, usize) {
        pair_of(m, self.n_classes)
    }

    /// Learns from the examples in stream order (see the module docs for how the work is
    /// parallelized). `classes[r]` is the class id of example r, < `n_classes`; everything is
    /// checked before any step. Returns the counts for this batch.
    pub fn learn_batch(&mut self, batch: &ExampleBatch, classes: &[u32]) -> PolyResult<TrainStats> {
        self.learn_weighted(batch, classes, None)
    }

    /// [`Self::learn_batch`] with example `r` of weight `weights[r]` (finite, >= 0): its step
    /// is [`PaVariant::weighted`], and an example of weight 0 is skipped as if it were not in
    /// the batch (not counted towards the averaging interval either).
    pub fn learn_weighted(
        &mut self,
        batch: &ExampleBatch,
        classes: &[u32],
        weights: Option<&[f64]>,
    ) -> PolyResult<TrainStats> {
        check_features(self.n_features(), batch)?;
        batch.check_labels_len(classes.len())?;
        if let Some(row) = classes.iter().position(|&c| c as usize >= self.n_classes) {
            return crate::invalid!(
                "row {row}: class id {} is out of range for n_classes={}",
                classes[row],
                self.n_classes
            );
        }
        if let Some(weights) = weights {
            if weights.len() != batch.len() {
                let n = batch.len();
                return crate::invalid!("{} sample weights for {n} examples", weights.len());
            }
            if let Some(r) = weights.iter().position(|w| !(w.is_finite() && *w >= 0.0)) {
                return crate::invalid!(
                    "row {}: sample_weight is {}; weights must be finite and >= 0",
                    batch.row_number(r),
                    weights[r]
                );
            }
        }
        let kept = |r: usize| weights.is_none_or(|w| w[r] > 0.0);
        let n_kept = (0..batch.len()).filter(|&r| kept(r)).count();
        let mut stats = TrainStats { examples: n_kept as u64, ..TrainStats::default() };
        let mut by_class = vec![Vec::new(); self.n_classes];
        let mut start = 0;
        while start < batch.len() {
            // Interrupted, the models keep the chunks learned so far (see crate::interrupt).
            crate::interrupt::check()?;
            let mut end = batch.len().min(start + CHUNK);
            if let Some(k) = self.interval {
                // The chunk ends at the kept example that completes the interval.
                let mut to_snapshot = k - self.seen % k;
                let mut r = start;
                while r < end && to_snapshot > 0 {
                    to_snapshot -= u64::from(kept(r));
                    r += 1;
                }
                end = r;
            }
            for list in &mut by_class {
                list.clear();
            }
            for (r, &c) in classes.iter().enumerate().take(end).skip(start) {
                if kept(r) {
                    by_class[c as usize].push(r as u32);
                }
            }
            let (chunk, overflow) =
                self.learn_chunk(batch, classes, weights, &by_class, start, end);
            stats = stats.merge(chunk);
            if let Some(row) = overflow {
                self.stats = self.stats.merge(stats);
                return Err(overflow_error(batch.row_number(row)));
            }
            self.seen += (start..end).filter(|&r| kept(r)).count() as u64;
            if self.interval.is_some_and(|k| self.seen % k == 0) {
                self.snapshot();
            }
            start = end;
        }
        self.stats = self.stats.merge(stats);
        Ok(stats)
    }

    fn learn_chunk(
        &mut self,
        batch: &ExampleBatch,
        classes: &[u32],
        weights: Option<&[f64]>,
        by_class: &[Vec<u32>],
        start: usize,
        end: usize,
    ) -> (TrainStats, Option<usize>) {
        let (n_classes, strategy) = (self.n_classes, self.strategy);
        let kept = |r: usize| weights.is_none_or(|w| w[r] > 0.0);
        self.models
            .par_iter_mut()
            .enumerate()
            .map(|(m, model)| {
                let mut stats = TrainStats::default();
                // Learns row r; false (the row kept) when it overflows, which stops this model.
                let mut learn = |r: usize, y: Sign| {
                    let mut x = batch.example(r);
                    x.weight = weights.map_or(1.0, |w| w[r]);
                    let step = model.learn(x, y);
                    stats.record(step);
                    (step != Step::Overflow).then_some(()).ok_or(r)
                };
                let overflow = match strategy {
                    Strategy::OneVsOne => {
                        let (i, j) = pair_of(m, n_classes);
                        let (a, b) = (by_class[i].as_slice(), by_class[j].as_slice());
                        // The two classes' positions merged back into stream order.
                        let (mut a, mut b) = (a.iter().peekable(), b.iter().peekable());
                        std::iter::from_fn(|| match (a.peek(), b.peek()) {
                            (Some(&&ra), Some(&&rb)) if ra < rb => a.next().map(|&r| (r, true)),
                            (Some(_), Some(_)) | (None, Some(_)) => b.next().map(|&r| (r, false)),
                            (Some(_), None) => a.next().map(|&r| (r, true)),
                            (None, None) => None,
                        })
                        .try_for_each(|(r, positive)| {
                            learn(
                                r as usize,
                                if positive { Sign::Positive } else { Sign::Negative },
                            )
                        })
                    }
                    Strategy::OneVsRest => (start..end).filter(|&r| kept(r)).try_for_each(|r| {
                        learn(
                            r,
                            if classes[r] as usize == m { Sign::Positive } else { Sign::Negative },
                        )
                    }),
                };
                (stats, overflow.err())
            })
            .reduce(
                || (TrainStats::default(), None),
                |(a, first), (b, second)| (a.merge(b), first.into_iter().chain(second).min()),
            )
    }

    /// Folds every current model into its running average now (e.g. at the end of training).
    pub fn snapshot(&mut self) {
        self.averages.par_iter_mut().zip(&self.models).for_each(|(average, model)| {
            average.add(model);
        });
    }

    /// The binary model m used for prediction: its running average if `use_average` and one
    /// exists, else the current model.
    pub fn predictor(&self, m: usize, use_average: bool) -> &M {
        match (use_average, self.averages[m].get()) {
            (true, Some(average)) => average,
            _ => &self.models[m],
        }
    }

    /// The binary scores, row-major: examples × models (model order as in [`Multiclass::pair`]
    /// for one-vs-one, class order for one-vs-rest). Parallel over examples.
    pub fn decision_scores(&self, batch: &ExampleBatch, use_average: bool) -> PolyResult<Vec<f64>> {
        check_features(self.n_features(), batch)?;
        let n_models = self.models.len();
        let predictors: Vec<&M> = (0..n_models).map(|m| self.predictor(m, use_average)).collect();
        let mut out = vec![0.0; batch.len() * n_models];
        // Models outer, examples inner within a block: each model's rows stay cached.
        const BLOCK: usize = 64;
        out.par_chunks_mut(BLOCK * n_models).enumerate().for_each(|(block, scores)| {
            let first = block * BLOCK;
            let rows = scores.len() / n_models;
            for (m, model) in predictors.iter().enumerate() {
                for r in 0..rows {
                    scores[r * n_models + m] = model.score(batch.example(first + r));
                }
            }
        });
        check_scores(&out, n_models, batch)?;
        Ok(out)
    }

    /// The predicted class of every example (votes / argmax as in the module docs).
    pub fn predict(&self, batch: &ExampleBatch, use_average: bool) -> PolyResult<Vec<u32>> {
        let scores = self.decision_scores(batch, use_average)?;
        let n_models = self.models.len();
        if batch.is_empty() {
            return Ok(Vec::new());
        }
        Ok(scores
            .par_chunks(n_models)
            .map(|row| match self.strategy {
                Strategy::OneVsOne => ovo_vote(row, self.n_classes),
                Strategy::OneVsRest => argmax(row),
            })
            .collect())
    }
}

/// (i, j) of one-vs-one model m in lexicographic order.
fn pair_of(m: usize, n_classes: usize) -> (usize, usize) {
    let mut m = m;
    for i in 0..n_classes {
        let row = n_classes - 1 - i;
        if m < row {
            return (i, i + 1 + m);
        }
        m -= row;
    }
    unreachable!("model index out of range")
}

/// Majority vote of the pairwise scores, ties to the larger summed margin, then the smaller id.
pub fn ovo_vote(scores: &[f64], n_classes: usize) -> u32 {
    let mut votes = vec![0u32; n_classes];
    let mut margins = vec![0.0f64; n_classes];
    let mut m = 0;
    for i in 0..n_classes {
        for j in i + 1..n_classes {
            let s = scores[m];
            if s > 0.0 {
                votes[i] += 1;
            } else if s < 0.0 {
                votes[j] += 1;
            }
            margins[i] += s;
            margins[j] -= s;
            m += 1;
        }
    }
    let mut best = 0;
    for c in 1..n_classes {
        if votes[c] > votes[best] || (votes[c] == votes[best] && margins[c] > margins[best]) {
            best = c;
        }
    }
    best as u32
}

/// Index of the largest score, ties (and NaN) to the smallest index.
fn argmax(scores: &[f64]) -> u32 {
    let mut best = 0;
    for (c, &s) in scores.iter().enumerate().skip(1) {
        if s > scores[best] {
            best = c;
        }
    }
    best as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::ChaCha8Rng;
    use rand::{RngExt, SeedableRng};

    #[test]
    fn pairs_are_lexicographic() {
        let model = Multiclass::linear(4, 2, PaVariant::Pa, Strategy::OneVsOne, None).unwrap();
        let pairs: Vec<_> = (0..6).map(|m| model.pair(m)).collect();
        assert_eq!(pairs, vec![(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]);
        assert_eq!(model.models().len(), 6);
        let dos = Multiclass::<DosModel>::dos(10, 5, 2, 0, PaVariant::Pa, Strategy::OneVsOne, None);
        assert_eq!(dos.unwrap().models().len(), 45);
    }

    #[test]
    fn vote_tie_breaks() {
        // 3 classes, pairs (0,1), (0,2), (1,2): a cycle 0>1, 2>0, 1>2 gives one vote each.
        // Summed margins: 0: 1 − 3 = −2, 1: −1 + 0.5 = −0.5, 2: 3 − 0.5 = 2.5 → class 2.
        assert_eq!(ovo_vote(&[1.0, -3.0, 0.5], 3), 2);
        // Equal votes and margins → the smallest id.
        assert_eq!(ovo_vote(&[1.0, -1.0, 1.0], 3), 0);
        // All scores 0: no votes, margins 0 → class 0.
        assert_eq!(ovo_vote(&[0.0, 0.0, 0.0], 3), 0);
        // A plain majority.
        assert_eq!(ovo_vote(&[-1.0, 1.0, 1.0], 3), 1);
        assert_eq!(argmax(&[0.5, 2.0, 2.0]), 1);
    }

    #[test]
    fn errors() {
        let err = Multiclass::linear(1, 2, PaVariant::Pa, Strategy::OneVsOne, None).unwrap_err();
        assert_eq!(err.to_string(), "multiclass needs at least 2 classes, got 1");
        let err =
            Multiclass::linear(3, 2, PaVariant::Pa, Strategy::OneVsRest, Some(0)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "averaging interval must be >= 1 example (or None for no averaging)"
        );
        let err = Multiclass::<DosModel>::dos(3, 2, 0, 1, PaVariant::Pa, Strategy::OneVsOne, None);
        assert_eq!(err.unwrap_err().to_string(), "rank must be >= 1, got 0");
        let mut model = Multiclass::linear(3, 2, PaVariant::Pa, Strategy::OneVsOne, None).unwrap();
        let batch = ExampleBatch::from_dense(&[1.0, 2.0, 3.0, 4.0], 2).unwrap();
        let err = model.learn_batch(&batch, &[0]).unwrap_err().to_string();
        assert_eq!(err, "1 labels for 2 examples");
        let err = model.learn_batch(&batch, &[0, 3]).unwrap_err().to_string();
        assert_eq!(err, "row 1: class id 3 is out of range for n_classes=3");
        let other = ExampleBatch::from_dense(&[1.0, 2.0, 3.0], 3).unwrap();
        let err = model.predict(&other, false).unwrap_err().to_string();
        assert_eq!(err, "examples have n_features=3 but the model was built for n_features=2");
        assert_eq!(model.seen(), 0, "nothing was learned from the rejected batches");
    }

    /// Sample weights: all ones are no weights; a weight of 0 is the row removed (averaging
    /// included), for both families; for linear PA-I a weight w is the row learned w times in
    /// a row; a weight that is negative or not finite is refused naming its row.
    #[test]
    fn sample_weights_scale_the_step_and_a_zero_weight_removes_the_row() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let (n, nf) = (300, 3);
        let data: Vec<f64> = (0..n * nf).map(|_| rng.random_range(-1.0..1.0)).collect();
        let row = |r: usize| &data[r * nf..(r + 1) * nf];
        let classes: Vec<u32> = (0..n)
            .map(|r| {
                u32::from(row(r)[0] + row(r)[1] * row(r)[2] > 0.0) + u32::from(row(r)[2] > 0.5)
            })
            .collect();
        let weights: Vec<f64> = (0..n).map(|_| f64::from(rng.random_range(0..4u32))).collect();
        let batch = ExampleBatch::from_dense(&data, nf).unwrap();
        // The rows of positive weight, once each and `weight` times each.
        let (mut kept, mut kept_classes, mut kept_weights) = (Vec::new(), Vec::new(), Vec::new());
        let (mut repeated, mut repeated_classes) = (Vec::new(), Vec::new());
        for r in (0..n).filter(|&r| weights[r] > 0.0) {
            kept.extend_from_slice(row(r));
            kept_classes.push(classes[r]);
            kept_weights.push(weights[r]);
            for _ in 0..weights[r] as usize {
                repeated.extend_from_slice(row(r));
                repeated_classes.push(classes[r]);
            }
        }
        let kept = ExampleBatch::from_dense(&kept, nf).unwrap();
        let repeated = ExampleBatch::from_dense(&repeated, nf).unwrap();
        let variant = PaVariant::PaI { c: 0.05 };
        for strategy in [Strategy::OneVsOne, Strategy::OneVsRest] {
            let linear = |interval| Multiclass::linear(3, nf, variant, strategy, interval).unwrap();
            let dos = || Multiclass::<DosModel>::dos(3, nf, 2, 9, variant, strategy, Some(7));
            let mut plain = linear(Some(7));
            plain.learn_batch(&batch, &classes).unwrap();
            let mut ones = linear(Some(7));
            ones.learn_weighted(&batch, &classes, Some(&vec![1.0; n])).unwrap();
            assert_eq!((ones.models(), ones.averages()), (plain.models(), plain.averages()));

            let mut with_zeros = linear(Some(7));
            let stats = with_zeros.learn_weighted(&batch, &classes, Some(&weights)).unwrap();
            let mut without = linear(Some(7));
            without.learn_weighted(&kept, &kept_classes, Some(&kept_weights)).unwrap();
            assert_eq!(with_zeros.models(), without.models());
            assert_eq!(with_zeros.averages(), without.averages());
            assert_eq!((stats.examples, with_zeros.seen()), (kept.len() as u64, kept.len() as u64));
            let mut with_zeros = dos().unwrap();
            with_zeros.learn_weighted(&batch, &classes, Some(&weights)).unwrap();
            let mut without = dos().unwrap();
            without.learn_weighted(&kept, &kept_classes, Some(&kept_weights)).unwrap();
            assert_eq!(with_zeros.models(), without.models());
            assert_eq!(with_zeros.averages(), without.averages());

            let mut weighted = linear(None);
            weighted.learn_weighted(&batch, &classes, Some(&weights)).unwrap();
            let mut again = linear(None);
            again.learn_batch(&repeated, &repeated_classes).unwrap();
            for (a, b) in weighted.models().iter().zip(again.models()) {
                let close = a.weights().iter().zip(b.weights()).all(|(x, y)| (x - y).abs() < 1e-12);
                assert!(close, "{:?} != {:?}", a.weights(), b.weights());
            }
            // A model trained without weights differs: the weights were used.
            assert_ne!(weighted.models(), plain.models());
        }
        let mut model = Multiclass::linear(3, nf, variant, Strategy::OneVsOne, None).unwrap();
        for (bad, text) in [(-1.0, "-1"), (f64::NAN, "NaN"), (f64::INFINITY, "inf")] {
            let mut given = weights.clone();
            given[17] = bad;
            let err = model.learn_weighted(&batch, &classes, Some(&given)).unwrap_err();
            let expected =
                format!("row 17: sample_weight is {text}; weights must be finite and >= 0");
            assert_eq!(err.to_string(), expected);
        }
        let err = model.learn_weighted(&batch, &classes, Some(&weights[1..])).unwrap_err();
        assert_eq!(err.to_string(), "299 sample weights for 300 examples");
        assert_eq!(model.seen(), 0);
    }

    /// Three Gaussian blobs in 2-D plus a ring class: needs a quadratic boundary for class 3.
    fn blobs(n: usize, seed: u64) -> (ExampleBatch, Vec<u32>) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let centers = [(2.0, 0.0), (-1.0, 1.7), (-1.0, -1.7)];
        let mut data = Vec::new();
        let mut classes = Vec::new();
        for _ in 0..n {
            let c = rng.random_range(0..4u32);
            let (x, y) = if c < 3 {
                let (cx, cy) = centers[c as usize];
                (cx + rng.random_range(-0.4..0.4), cy + rng.random_range(-0.4..0.4))
            } else {
                let angle: f64 = rng.random_range(0.0..std::f64::consts::TAU);
                let radius = rng.random_range(3.5..4.0);
                (radius * angle.cos(), radius * angle.sin())
            };
            data.extend([x, y]);
            classes.push(c);
        }
        (ExampleBatch::from_dense(&data, 2).unwrap(), classes)
    }

    fn accuracy(predicted: &[u32], truth: &[u32]) -> f64 {
        predicted.iter().zip(truth).filter(|(a, b)| a == b).count() as f64 / truth.len() as f64
    }

    #[test]
    fn dos_one_vs_one_and_one_vs_rest_learn_blobs_and_ring() {
        let (train, train_classes) = blobs(4000, 1);
        let (test, test_classes) = blobs(1000, 2);
        for strategy in [Strategy::OneVsOne, Strategy::OneVsRest] {
            let mut model =
                Multiclass::<DosModel<f64>>::dos(4, 2, 2, 3, PaVariant::Pa, strategy, Some(500))
                    .unwrap();
            model.learn_batch(&train, &train_classes).unwrap();
            assert_eq!(model.averages()[0].count(), 8);
            let current = accuracy(&model.predict(&test, false).unwrap(), &test_classes);
            let averaged = accuracy(&model.predict(&test, true).unwrap(), &test_classes);
            assert!(averaged > 0.97, "{strategy:?}: averaged accuracy {averaged}");
            assert!(current > 0.9, "{strategy:?}: current accuracy {current}");
        }
    }

    #[test]
    fn training_is_deterministic_across_threads_and_batching() {
        let (train, classes) = blobs(3000, 5);
        let run = |threads: usize, cut: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| {
                let mut model = Multiclass::<DosModel<f32>>::dos(
                    4,
                    2,
                    3,
                    42,
                    PaVariant::Pa,
                    Strategy::OneVsOne,
                    Some(700),
                )
                .unwrap();
                let (first, second) = split(&train, cut);
                model.learn_batch(&first, &classes[..cut]).unwrap();
                model.learn_batch(&second, &classes[cut..]).unwrap();
                model
            })
        };
        let reference = run(1, 3000);
        for (threads, cut) in [(2, 3000), (2, 1234), (1, 10), (3, 2999)] {
            let other = run(threads, cut);
            assert_eq!(other.models(), reference.models(), "threads={threads} cut={cut}");
            assert_eq!(other.averages(), reference.averages());
            assert_eq!(other.stats(), reference.stats());
        }
        assert_eq!(reference.seen(), 3000);
        assert_eq!(reference.averages()[0].count(), 4);
    }

    fn split(batch: &ExampleBatch, cut: usize) -> (ExampleBatch, ExampleBatch) {
        let mut first = ExampleBatch::new(batch.n_features()).unwrap();
        let mut second = ExampleBatch::new(batch.n_features()).unwrap();
        for i in 0..batch.len() {
            let e = batch.example(i);
            let target = if i < cut { &mut first } else { &mut second };
            target.push_sparse_row(e.indices, e.values, i).unwrap();
        }
        (first, second)
    }

    #[test]
    fn multiclass_round_trips_through_its_parts() {
        let (train, classes) = blobs(600, 3);
        let mut model =
            Multiclass::<DosModel>::dos(4, 2, 2, 1, PaVariant::Pa, Strategy::OneVsOne, Some(250))
                .unwrap();
        model.learn_batch(&train, &classes).unwrap();
        let mut restored = Multiclass::from_parts(
            4,
            Strategy::OneVsOne,
            model.averaging_interval(),
            model.models().to_vec(),
            model.averages().to_vec(),
            model.seen(),
            model.stats(),
        )
        .unwrap();
        model.learn_batch(&train, &classes).unwrap();
        restored.learn_batch(&train, &classes).unwrap();
        assert_eq!(restored.models(), model.models());
        assert_eq!(restored.averages(), model.averages());
        assert_eq!(restored.stats(), model.stats());
        let err = Multiclass::from_parts(
            4,
            Strategy::OneVsOne,
            None,
            model.models()[..5].to_vec(),
            Vec::new(),
            0,
            TrainStats::default(),
        )
        .unwrap_err();
        assert_eq!(err.to_string(), "one-vs-one strategy with 4 classes needs more than 5 models");
    }

    #[test]
    fn an_overflowing_row_is_an_error_naming_it_not_a_panic() {
        let (train, classes) = blobs(50, 3);
        for strategy in [Strategy::OneVsOne, Strategy::OneVsRest] {
            let mut model =
                Multiclass::<DosModel<f32>>::dos(4, 2, 2, 0, PaVariant::Pa, strategy, None)
                    .unwrap();
            model.learn_batch(&train, &classes).unwrap();
            // Parameters near f32's largest, as a hand-edited file may hold.
            let u = vec![3e38; 2 * 3];
            let huge = DosModel::from_matrices(2, 2, &u, &u, PaVariant::Pa).unwrap();
            model.models_mut()[1] = huge;
            let err = model.learn_batch(&train, &classes).unwrap_err().to_string();
            assert!(err.starts_with("row ") && err.contains("overflows"), "{err}");
            let err = model.decision_scores(&train, false).unwrap_err().to_string();
            assert!(err.starts_with("row 0: the model's score overflows"), "{err}");
        }
    }

    #[test]
    fn one_vs_one_models_only_see_their_classes() {
        let (train, classes) = blobs(500, 9);
        let mut model = Multiclass::linear(4, 2, PaVariant::Pa, Strategy::OneVsOne, None).unwrap();
        let stats = model.learn_batch(&train, &classes).unwrap();
        // Each example is seen by the C − 1 = 3 models of its class.
        assert_eq!(stats.steps, 3 * 500);
        assert_eq!(stats.examples, 500);
        let mut ovr = Multiclass::linear(4, 2, PaVariant::Pa, Strategy::OneVsRest, None).unwrap();
        assert_eq!(ovr.learn_batch(&train, &classes).unwrap().steps, 4 * 500);
    }
}
