//! The [`Learner`]: one weight table, one update rule, one feature enumerator.
//!
//! Learning an example: expand its features into the scratch buffer, predict (the *progressive*
//! prediction, made before the example is learned), add its loss to the progressive validation
//! loss, then take the update step of [`super::update`]. Predictions are clipped to the label range
//! seen so far (`[-50, 50]` for the logistic loss), as Vowpal Wabbit's `finalize_prediction` does;
//! an example's own label counts as seen before it is predicted.
//!
//! Batches come as one [`super::NamespaceRows`] per namespace plus labels (and optional importance
//! weights); [`Learner::fit`] runs several passes over in-memory data with an optional seeded
//! shuffle and a holdout set for early stopping.

use std::collections::VecDeque;

use rayon::prelude::*;

use super::averaging::TailAverage;
use super::batch::{Batch, BlockPosition, ExampleBlocks, RowBlocks};
use super::builder::{self, BuiltFor, FollowsExpansion, SlotAddresses};
use super::example::{Example, ExampleBuffer, ExampleShape, FeatureUnion, Union};
use super::expansion::{ExpandedFeatures, Expansion, Interactions, Learned};
use super::features::{namespace_field, ExampleEnd, TableSlots};
use super::ffm::{Ffm, FfmOptions, FfmScratch};
use super::field_scales::FieldScales;
use super::fit_options::FitOptions;
use super::loss::{Loss, Squared};
use super::recent::RecentExamples;
use super::update::{self, GdState, Powers, UpdateRule};
use super::weights::{WeightTable, W};
use crate::error::{PolyError, PolyResult};
use crate::hashing::hash_feature_name;
use crate::hashing::CONSTANT_FEATURE;

mod checks;
mod config;
mod fit;
mod growth;
mod pipeline;
mod predict;
mod step;

pub use config::{
    FitReport, LabelRange, LearnerConfig, OverflowPolicy, OverflowedRow, Progress, RowRecord,
    MAX_BITS,
};
pub(crate) use growth::Growth;

/// The largest magnitude among `values` when its square overflows f32 (the learners' precision),
/// else `None`. A max reduction, which vectorizes.
fn overflowing_square(values: &[f32]) -> Option<f32> {
    let largest = values.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    (!(largest * largest).is_finite()).then_some(largest)
}

/// What is wrong with a feature of magnitude `largest` ([`overflowing_square`]), after "a
/// feature" or "an expanded feature": an infinity is a value Vowpal Wabbit's text gave beyond
/// single precision (`1e39`).
fn overflow_of(largest: f32) -> String {
    if largest.is_infinite() {
        format!("has a value beyond single precision (above {:e} in magnitude)", f32::MAX)
    } else {
        format!("has value {largest:e} in magnitude, whose square overflows single precision")
    }
}

/// Above this size the learner and the scorer prefetch slots ahead ([`Learner::prefetches`]): a
/// table beyond a core's L2 cache (1 MiB on the benchmark machine) is read from L3 or memory.
/// Hashed crosses spread their features over the whole table, and on eat-rate-like rows a 4 MiB
/// table (`bits` 18) learned 1.5x faster with prefetching (criterion `step/18`, 69.4 against
/// 47.0 ms), while the `learn/*` benchmarks, whose few features stay in the cache, did not move.
const PREFETCH_TABLE_BYTES: u128 = 2 << 20;

/// Above this size the builder thread also prefetches the slots of the blocks it expands
/// ([`super::builder::SlotAddresses`]). Measured on eat-rate-like rows against the builder
/// not prefetching, alternating: `step/28` (4 GiB) 57-72 against 74-95 ms (7 rounds);
/// `step/26` (1 GiB) no gain (53-85 against 56-60 ms, 3 rounds); `step/24` (256 MiB) 6% slower
/// when it prefetched there too.
const BUILDER_PREFETCH_TABLE_BYTES: u128 = 2 << 30;

/// At most this many slots of an upcoming example are prefetched. An example's expansion comes
/// after its base features: at 16, eat-rate's 12 fields with 13 counts beside them left the
/// `A x B` cross, the one slot certain to miss, unprefetched (`raw_score` 15% of the profile);
/// at 32 the 10M-row fit took 0.83x the time (`benches/fit_ab.py --counts 13`; 64 did no
/// better, and scoring a quadratic model's ~90 slots an example lost a few % more to the burst).
const PREFETCH_SLOTS: usize = 32;

/// Examples staged ahead of the one being learned on a table larger than the cache. The slots
/// of the furthest are prefetched in two halves during the current example's step, not all at
/// once: on a table far beyond the TLB's reach each prefetch waits for its page walk, and a burst
/// of them stalls the step. Each half goes just before one of the step's two chains of
/// arithmetic that need no memory (the loss after the score, the update's size), whose work
/// the walks overlap (criterion `step/24`, notes/benchmarks_log.md).
const LEARN_AHEAD: usize = 2;

/// Examples the catch-up expands ahead of the one it replays, on a table larger than the cache
/// ([`Learner::catch_up`]).
const CATCH_UP_AHEAD: usize = 4;

/// A kept example expanded for the catch-up: the added features and the whole model's.
struct Replay {
    added: ExpandedFeatures,
    full: ExpandedFeatures,
    label: f64,
    weight: f64,
}

impl Replay {
    fn new(table: TableSlots) -> Self {
        let empty = ExpandedFeatures::for_table(table);
        Replay { added: empty.clone(), full: empty, label: 0.0, weight: 0.0 }
    }

    fn expand<E: Expansion>(&mut self, expansion: &E, example: &Example<'_>, track: bool) {
        for features in [&mut self.added, &mut self.full] {
            features.clear();
            features.track_fields(track);
        }
        expansion.expand_for_catch_up(example, &mut self.added, &mut self.full);
        (self.label, self.weight) = (example.label, example.weight);
    }
}

/// Which visit of an example an update step is ([`Learner::step`]).
#[derive(Clone, Copy)]
enum Visit<'a> {
    /// Its first: the state of the update rule moves too; the slots of an upcoming example
    /// are prefetched before the step's size is computed (see [`LEARN_AHEAD`]).
    First { upcoming: &'a [u32] },
    /// A replay by the catch-up: only the weights move.
    Replay,
    /// A row whose numbers overflow, under [`OverflowPolicy::PredictZero`]: as in Vowpal
    /// Wabbit, the rule's state moves (pass 1) but no weight does.
    Overflowed,
}

thread_local! {
    /// Scoring's factorized features and sums ([`Learner::raw_score`] takes `&self`, and
    /// scores batches on several threads).
    static FFM_SCRATCH: std::cell::RefCell<FfmScratch> = std::cell::RefCell::default();
}

/// Rows staged ahead when scoring a table larger than the cache (1: the row being scored only).
const SCORE_AHEAD: usize = 4;

/// Batches of fewer rows are built on the learner's thread (see [`Learner::builds_ahead`]):
/// starting a thread costs some tens of microseconds.
const BUILDER_MIN_ROWS: usize = 4096;

/// Whether a learner builds its batches' examples on a thread beside it (`src/learner/builder.rs`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BuilderThread {
    /// Where it pays: tables larger than the cache, batches of thousands of rows, a second
    /// thread in the pool (`RAYON_NUM_THREADS=1` turns it off).
    #[default]
    Auto,
    Never,
    Always,
}

/// A row as [`Learner::learn_rows`] leaves it: learned (its prediction and the progress record
/// after it), or held out (scored only).
enum Visited<'a> {
    Learned { prediction: f64, progress: &'a Progress },
    HeldOut { prediction: f64, weighted_loss: f64, features: u64 },
}

/// Reused buffers for learning.
#[derive(Clone, Debug)]
struct Scratch {
    /// The expansion of [`Learner::learn`]'s example.
    features: ExpandedFeatures,
    /// The example being learned and those staged after it, of [`Learner::learn_rows`].
    staged: Vec<Staged>,
    /// The rows [`Learner::learn_rows`] builds examples from.
    blocks: ExampleBlocks,
    /// The factorized features and sums of the example being learned.
    ffm: FfmScratch,
}

impl Scratch {
    fn new(table: TableSlots) -> Self {
        Scratch {
            features: ExpandedFeatures::for_table(table),
            staged: Vec::new(),
            blocks: ExampleBlocks::default(),
            ffm: FfmScratch::default(),
        }
    }
}

/// How [`Learner::score_expanded`] scores a block's examples where they lie (see
/// [`Learner::scoring_in_place`]).
enum InPlace<'a> {
    /// Feature by feature, each position's field scale given.
    ByFeature(Vec<f32>),
    /// Field run by field run, with the model's field scales.
    ByFieldRun(&'a FieldScales),
}

/// An example built and expanded ahead of its turn (see [`Learner::learn_rows`]).
#[derive(Clone, Debug)]
struct Staged {
    /// Where its namespaces are.
    at: BlockPosition,
    /// Its feature set, when the enumerator reads it.
    union: FeatureUnion,
    features: ExpandedFeatures,
    /// [`Expansion::generation`] when it was expanded.
    generation: u64,
    /// Why it could not be staged (reported when its turn comes).
    error: Option<PolyError>,
}

impl Staged {
    fn new(table: TableSlots) -> Self {
        Staged {
            at: BlockPosition::default(),
            union: FeatureUnion::default(),
            features: ExpandedFeatures::for_table(table),
            generation: 0,
            error: None,
        }
    }
}

/// The hashed online learner (see the module docs). `E` enumerates the features.
#[derive(Clone, Debug)]
pub struct Learner<E: Expansion = Interactions> {
    config: LearnerConfig,
    expansion: E,
    weights: WeightTable,
    state: GdState,
    labels: LabelRange,
    progress: Progress,
    powers: Powers,
    /// The namespaces' hash seeds ([`LearnerConfig::namespace_seed`]), computed once.
    seeds: Vec<u64>,
    scratch: Scratch,
    /// The averaging window of the running [`Learner::fit`], if it averages.
    average: Option<TailAverage>,
    /// The fields' scales, when [`LearnerConfig::field_scales`].
    field_scales: Option<FieldScales>,
    /// The field-aware factorization, when [`LearnerConfig::ffm`].
    ffm: Option<Ffm>,
    /// The enumerator's generation whose crosses the factorization last followed
    /// ([`Ffm::follow_crosses`]).
    ffm_followed: u64,
    /// The recent learned examples, while the enumerator wants them
    /// ([`Expansion::recent_examples_wanted`]).
    recent: RecentExamples,
    builder_thread: BuilderThread,
    /// What the growing table ([`LearnerConfig::max_bits`]) keeps between looks.
    growth: Growth,
    overflow: OverflowPolicy,
    /// The rows [`OverflowPolicy::PredictZero`] skipped since the caller last took them.
    overflowed: Vec<OverflowedRow>,
}

impl<E: Expansion> Learner<E> {
    /// A fresh learner; the weight table is allocated on the first example.
    pub fn new(config: LearnerConfig, expansion: E) -> PolyResult<Self> {
        config.validate()?;
        let ffm = config.ffm.clone().map(Ffm::new).transpose()?;
        Self::with_ffm(config, expansion, ffm)
    }

    /// A fresh learner of a validated `config` whose factorization is `ffm` (drawn afresh by
    /// [`Learner::new`], read by model loading): refused unless its options are the config's.
    fn with_ffm(config: LearnerConfig, expansion: E, ffm: Option<Ffm>) -> PolyResult<Self> {
        if config.ffm.as_ref() != ffm.as_ref().map(Ffm::options) {
            return crate::invalid!("the ffm table's options are not the model's");
        }
        expansion.validate(config.namespaces.len())?;
        let mut weights = WeightTable::new(config.bits, config.rule.stride());
        weights.set_initial_weight(config.initial_weight as f32)?;
        let (min, max) = config.loss.fixed_range().unwrap_or((0.0, 0.0));
        let labels = LabelRange { min, max };
        let mut learner = Learner {
            powers: Powers::new(config.rule, config.power_t, config.initial_t),
            seeds: (0..config.namespaces.len()).map(|k| config.namespace_seed(k)).collect(),
            state: GdState::new(config.initial_t),
            scratch: Scratch::new(TableSlots {
                bits: config.bits,
                owners: config.max_bits.is_some_and(|max| max > config.bits)
                    && config.rule.stride() == 4,
            }),
            weights,
            labels,
            progress: Progress::default(),
            expansion,
            field_scales: config.field_scales.then(FieldScales::default),
            ffm,
            ffm_followed: 0,
            config,
            average: None,
            recent: RecentExamples::default(),
            builder_thread: BuilderThread::default(),
            growth: Growth::default(),
            overflow: OverflowPolicy::default(),
            overflowed: Vec::new(),
        };
        learner.ffm_follow_crosses();
        Ok(learner)
    }

    /// Hands the factorization the crosses the enumerator computes now (it gives their pairs
    /// of fields a term under [`super::ffm::FfmPairs::Crosses`]).
    fn ffm_follow_crosses(&mut self) {
        let Some(ffm) = &mut self.ffm else { return };
        let crosses: Vec<Vec<u32>> = self
            .expansion
            .crossed_namespaces()
            .iter()
            .map(|cross| cross.iter().map(|&k| namespace_field(k)).collect())
            .collect();
        ffm.follow_crosses(&crosses);
        self.ffm_followed = self.expansion.generation();
    }

    /// Reassembles a learner from saved parts (model loading, averaging): `ffm` must be
    /// present exactly when the config has one.
    pub(crate) fn from_parts(
        config: LearnerConfig,
        expansion: E,
        weights: WeightTable,
        state: GdState,
        labels: LabelRange,
        progress: Progress,
        ffm: Option<Ffm>,
    ) -> PolyResult<Self> {
        // The table is the saved one (filled with the initial weight only if never trained).
        let initial_weight = config.initial_weight;
        let config = LearnerConfig { initial_weight: 0.0, ..config };
        config.validate()?;
        if weights.bits() != config.bits {
            return crate::invalid!(
                "the weight table has {} bits, the model's options {}",
                weights.bits(),
                config.bits
            );
        }
        let mut learner = Learner::with_ffm(config, expansion, ffm)?;
        learner.config.initial_weight = initial_weight;
        learner.weights = weights;
        learner.weights.set_initial_weight(initial_weight as f32)?;
        learner.state = state;
        learner.labels = labels;
        learner.progress = progress;
        Ok(learner)
    }

    /// What the growing table keeps between looks (stored with the model).
    pub(crate) fn growth(&self) -> Growth {
        self.growth
    }

    /// Restores [`Learner::growth`] (model loading, averaging).
    pub(crate) fn set_growth(&mut self, growth: Growth) {
        self.growth = growth;
    }

    /// The fields' learned scales, when the model has them ([`LearnerConfig::field_scales`]).
    pub fn field_scales(&self) -> Option<&FieldScales> {
        self.field_scales.as_ref()
    }

    /// Replaces the fields' scales (model loading); `None` unless the config has them.
    pub(crate) fn set_field_scales(&mut self, scales: FieldScales) {
        if self.config.field_scales {
            self.field_scales = Some(scales);
        }
    }

    /// The field-aware factorization, when the model has one ([`LearnerConfig::ffm`]).
    pub fn ffm(&self) -> Option<&Ffm> {
        self.ffm.as_ref()
    }

    /// Whether expanded features mark their fields: the field scales and the factorization
    /// read them.
    fn tracks_fields(&self) -> bool {
        self.field_scales.is_some() || self.ffm.is_some()
    }

    /// The multiplier of `field`'s weights in the score: its scale, or 1 without field scales.
    pub fn field_scale(&self, field: u32) -> f64 {
        self.field_scales.as_ref().map_or(1.0, |s| f64::from(s.scale(field)))
    }

    pub fn config(&self) -> &LearnerConfig {
        &self.config
    }

    pub fn expansion(&self) -> &E {
        &self.expansion
    }

    /// The enumerator, for enumerators that change over a run (apple's parent set).
    pub fn expansion_mut(&mut self) -> &mut E {
        &mut self.expansion
    }

    /// A run of `examples` learned examples starts: a growing feature set places its epochs
    /// ([`Expansion::begin_run`]) and a large table that the run will fill starts on huge
    /// pages ([`WeightTable::prepare_for`]).
    pub fn begin_run(&mut self, examples: u64) -> PolyResult<()> {
        self.expansion.begin_run(examples);
        self.weights.prepare_for(examples)
    }

    /// Sets what learning does with a row whose numbers overflow; returns the policy before.
    pub fn set_overflow_policy(&mut self, policy: OverflowPolicy) -> OverflowPolicy {
        std::mem::replace(&mut self.overflow, policy)
    }

    /// The rows [`OverflowPolicy::PredictZero`] skipped since the last call, in order.
    pub fn take_overflowed_rows(&mut self) -> Vec<OverflowedRow> {
        std::mem::take(&mut self.overflowed)
    }

    pub fn weights(&self) -> &WeightTable {
        &self.weights
    }

    pub fn state(&self) -> &GdState {
        &self.state
    }

    pub fn label_range(&self) -> LabelRange {
        self.labels
    }

    pub fn progress(&self) -> &Progress {
        &self.progress
    }

    /// Average progressive validation loss so far (`None` before any example).
    pub fn progressive_loss(&self) -> Option<f64> {
        self.progress.average_loss()
    }

    /// The weight the model uses for slot `slot`: the stored weight with the lazy L1/L2 state
    /// applied.
    pub fn effective_weight(&self, slot: u32) -> f64 {
        let w = update::trunc_weight(self.weights.weight(slot), self.state.gravity as f32);
        f64::from(w) * self.state.contraction
    }

    /// A linear model's coefficients on the `n` numbered features of namespace `k` (feature i
    /// is hash `seed_k + i`) and, with `constant`, its intercept (the constant feature's
    /// weight): the effective weights of their slots. `None` when two of them share a slot
    /// (more features than slots, or the constant's slot is a feature's), where no such
    /// coefficients describe the model.
    pub fn linear_coefficients(
        &self,
        k: usize,
        n: usize,
        constant: bool,
    ) -> Option<(Vec<f64>, f64)> {
        let mask = self.weights.mask();
        let seed = self.config.namespace_seed(k);
        let slots: Vec<u32> = (0..n as u64).map(|i| (seed.wrapping_add(i) & mask) as u32).collect();
        let constant_slot = (u64::from(CONSTANT_FEATURE) & mask) as u32;
        if n as u64 > mask + 1 || (constant && slots.contains(&constant_slot)) {
            return None;
        }
        let scale = self.field_scale(namespace_field(k));
        let coefficients = slots.iter().map(|&s| self.effective_weight(s) * scale).collect();
        let intercept = if constant { self.effective_weight(constant_slot) } else { 0.0 };
        Some((coefficients, intercept))
    }

    /// Checks a label against the loss (classification losses take -1/+1).
    fn check_label(&self, label: f64, row: usize) -> PolyResult<()> {
        if !label.is_finite() {
            return crate::invalid!("row {row}: label is {label}; labels must be finite");
        }
        // -1 and +1 are the classes; as in Vowpal Wabbit, a logistic label between them is a
        // soft label, and the hinge loss takes any label (max(0, 1 - y p)).
        if matches!(self.config.loss, Loss::Logistic(_)) && !(-1.0..=1.0).contains(&label) {
            return crate::invalid!(
                "row {row}: label {label} is outside [-1, +1] (logistic loss takes labels in \
                 [-1, +1]: -1 and +1 are the classes, a label between them a soft label)"
            );
        }
        Ok(())
    }

    /// The raw score of the expanded features in `features` (before clipping): the weights'
    /// and, with a factorization, its part.
    fn raw_score(&self, features: &ExpandedFeatures) -> f64 {
        let linear = self.linear_score(features);
        match &self.ffm {
            Some(ffm) => {
                let factorized = FFM_SCRATCH.with(|s| ffm.score(features, &mut s.borrow_mut()));
                linear + f64::from(factorized)
            }
            None => linear,
        }
    }

    /// The weights' part of [`Learner::raw_score`].
    fn linear_score(&self, features: &ExpandedFeatures) -> f64 {
        let data = self.weights.data();
        if data.is_empty() {
            return 0.0;
        }
        let stride = self.weights.stride();
        if let Some(scales) = &self.field_scales {
            let gravity = self.state.gravity as f32;
            return f64::from(scales.predict(data, stride, features, gravity))
                * self.state.contraction;
        }
        let dot = if self.state.gravity > 0.0 {
            update::dot_truncated(data, stride, features, self.state.gravity as f32)
        } else {
            update::dot(data, stride, features)
        };
        f64::from(dot) * self.state.contraction
    }

    /// Vowpal Wabbit's `finalize_prediction`: NaN becomes 0, then clip to the label range.
    fn finalize(&self, raw: f64) -> f64 {
        if raw.is_nan() {
            return 0.0;
        }
        raw.clamp(self.labels.min, self.labels.max)
    }

    /// The model's prediction (clipped score; for the logistic loss a margin, see
    /// [`Learner::probability`]) for one example, using `features` as scratch. Unlike the
    /// batch functions it does not call [`Expansion::check`] first.
    pub fn predict_with(&self, example: &Example<'_>, features: &mut ExpandedFeatures) -> f64 {
        self.empty_features(features);
        self.expansion.expand(example, features);
        self.finalize(self.raw_score(features))
    }

    /// Empties `features` for this model's next example: its table size, its field tracking.
    #[inline]
    fn empty_features(&self, features: &mut ExpandedFeatures) {
        if features.mask() != self.weights.mask() {
            *features = ExpandedFeatures::new(self.config.bits);
        }
        features.clear();
        features.track_fields(self.tracks_fields());
    }

    /// Folds the lazy L1/L2 state into the weights (done before saving).
    pub fn sync(&mut self) {
        let stride = self.weights.stride();
        if self.weights.is_allocated() {
            update::sync_weights(self.weights.data_mut(), stride, &mut self.state);
        }
    }
}
