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
use super::features::{namespace_field, ExampleEnd};
use super::field_scales::FieldScales;
use super::fit_options::FitOptions;
use super::loss::{Loss, Squared};
use super::recent::RecentExamples;
use super::update::{self, GdState, Powers, UpdateRule};
use super::weights::{WeightTable, W};
use crate::error::{PolyError, PolyResult};
use crate::hashing::hash_feature_name;
use crate::hashing::CONSTANT_FEATURE;

/// The largest magnitude among `values` when its square overflows f32 (the learners' precision),
/// else `None`. A max reduction, which vectorizes.
fn overflowing_square(values: &[f32]) -> Option<f32> {
    let largest = values.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    (!(largest * largest).is_finite()).then_some(largest)
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
/// the walks overlap (criterion `step/24`, docs/benchmarks.md).
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
    fn new(bits: u32) -> Self {
        let empty = ExpandedFeatures::new(bits);
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

/// Largest supported `bits`: slots are u32.
pub const MAX_BITS: u32 = 32;

/// Everything that defines the learning algorithm (saved with the model).
#[derive(Clone, Debug, PartialEq)]
pub struct LearnerConfig {
    /// The table has `2^bits` weights, `1..=MAX_BITS` (18 by default).
    pub bits: u32,
    pub loss: Loss,
    pub rule: UpdateRule,
    /// η (0.5 by default, Vowpal Wabbit's default for its default rule).
    pub eta0: f64,
    /// Exponent of the rate decay (0.5).
    pub power_t: f64,
    /// Initial "time" (0 for the adaptive/normalized rules; Vowpal Wabbit uses 1 for plain SGD).
    pub initial_t: f64,
    /// L1 and L2 regularization strengths (0 = off).
    pub l1: f64,
    pub l2: f64,
    /// Names of the example namespaces (one per sparse input), in order. Feature hash =
    /// index + seed, seed = [`hash_feature_name`] of the name: Vowpal Wabbit's hash of feature
    /// `index` in namespace `name` (`|name index:value`).
    pub namespaces: Vec<String>,
    /// Learn a scale per field ([`super::field_scales`]); off is Vowpal Wabbit's model.
    pub field_scales: bool,
    /// The weight every slot starts at (Vowpal Wabbit's `--initial_weight`: the weight of all
    /// `2^bits` slots, the constant's too; the adaptive sums and normalizers start at 0 as
    /// always). 0 by default; a nonzero one allocates the table when the learner is made.
    pub initial_weight: f64,
}

impl Default for LearnerConfig {
    fn default() -> Self {
        LearnerConfig {
            bits: 18,
            loss: Loss::Squared(Squared),
            rule: UpdateRule::VW_DEFAULT,
            eta0: 0.5,
            power_t: 0.5,
            initial_t: 0.0,
            l1: 0.0,
            l2: 0.0,
            namespaces: vec!["features".to_owned()],
            field_scales: false,
            initial_weight: 0.0,
        }
    }
}

impl LearnerConfig {
    /// Checks every field; errors name the parameter and its value.
    pub fn validate(&self) -> PolyResult<()> {
        if !(1..=MAX_BITS).contains(&self.bits) {
            return crate::invalid!("bits must be an integer in 1..={MAX_BITS}, got {}", self.bits);
        }
        self.loss.validate()?;
        let finite_nonneg = |name: &str, v: f64| -> PolyResult<()> {
            if v.is_finite() && v >= 0.0 {
                Ok(())
            } else {
                crate::invalid!("{name} must be finite and >= 0, got {v}")
            }
        };
        if !(self.eta0.is_finite() && self.eta0 > 0.0) {
            return crate::invalid!("eta0 must be finite and > 0, got {}", self.eta0);
        }
        finite_nonneg("power_t", self.power_t)?;
        finite_nonneg("initial_t", self.initial_t)?;
        finite_nonneg("l1", self.l1)?;
        finite_nonneg("l2", self.l2)?;
        if !(self.initial_weight as f32).is_finite() {
            let single = if self.initial_weight.is_finite() {
                " (weights are single precision, at most 3.4e38 in magnitude)"
            } else {
                ""
            };
            return crate::invalid!(
                "initial_weight must be finite, got {}{single}",
                self.initial_weight
            );
        }
        if self.namespaces.is_empty() {
            return crate::invalid!("at least one namespace (sparse input) is required");
        }
        for (k, name) in self.namespaces.iter().enumerate() {
            if self.namespaces[..k].contains(name) {
                return crate::invalid!("namespace {name:?} is given twice");
            }
        }
        Ok(())
    }

    /// The hash seed of namespace `k`.
    ///
    /// Nonzero in practice (unless a name is "0"), which matters: in the interaction step
    /// `(h_i · P) ^ h_j` a first factor with hash 0 mod 2^bits would put every x_i·x_j on the
    /// slot of x_j (as happens to column 0 in Vowpal Wabbit's default namespace).
    pub fn namespace_seed(&self, k: usize) -> u64 {
        self.namespaces.get(k).map_or(0, |name| u64::from(hash_feature_name(name.as_bytes(), 0)))
    }
}

/// The progressive validation record: loss of every learned example before it was learned.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Progress {
    /// Examples learned.
    pub examples: u64,
    /// Σ importance · loss and Σ importance over learned examples.
    pub weighted_loss: f64,
    pub weight: f64,
    /// Expanded features updated (the feature-updates/s numerator).
    pub feature_updates: u64,
}

impl Progress {
    /// Average progressive loss, `None` before any example.
    pub fn average_loss(&self) -> Option<f64> {
        (self.weight > 0.0).then(|| self.weighted_loss / self.weight)
    }
}

/// Label range seen so far, for clipping predictions.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LabelRange {
    pub min: f64,
    pub max: f64,
}

/// What [`Learner::fit`] did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FitReport {
    pub passes_run: usize,
    /// Average progressive loss of each pass (over the examples learned in it).
    pub pass_loss: Vec<f64>,
    /// Average holdout loss after each pass (empty without a holdout).
    pub holdout_loss: Vec<f64>,
    pub stopped_early: bool,
    /// The progress record at 1, 2, 4, ... learned examples and at the end of each pass (the
    /// learning curve).
    pub progress: Vec<Progress>,
}

/// What a pass did with one row ([`Learner::learn_batch_scored`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RowRecord {
    /// The progressive prediction: made before the row was learned.
    pub prediction: f64,
    /// Its loss times its importance weight.
    pub weighted_loss: f64,
    /// The expanded features it was scored (and learned) on.
    pub features: u64,
    /// Scored only, not learned.
    pub held_out: bool,
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
}

impl Scratch {
    fn new(bits: u32) -> Self {
        Scratch {
            features: ExpandedFeatures::new(bits),
            staged: Vec::new(),
            blocks: ExampleBlocks::default(),
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
    fn new(bits: u32) -> Self {
        Staged {
            at: BlockPosition::default(),
            union: FeatureUnion::default(),
            features: ExpandedFeatures::new(bits),
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
    /// The recent learned examples, while the enumerator wants them
    /// ([`Expansion::recent_examples_wanted`]).
    recent: RecentExamples,
    builder_thread: BuilderThread,
}

impl<E: Expansion> Learner<E> {
    /// A fresh learner; the weight table is allocated on the first example.
    pub fn new(config: LearnerConfig, expansion: E) -> PolyResult<Self> {
        config.validate()?;
        expansion.validate(config.namespaces.len())?;
        let mut weights = WeightTable::new(config.bits, config.rule.stride());
        weights.set_initial_weight(config.initial_weight as f32)?;
        let (min, max) = config.loss.fixed_range().unwrap_or((0.0, 0.0));
        let labels = LabelRange { min, max };
        Ok(Learner {
            powers: Powers::new(config.rule, config.power_t, config.initial_t),
            seeds: (0..config.namespaces.len()).map(|k| config.namespace_seed(k)).collect(),
            state: GdState::new(config.initial_t),
            scratch: Scratch::new(config.bits),
            weights,
            labels,
            progress: Progress::default(),
            expansion,
            field_scales: config.field_scales.then(FieldScales::default),
            config,
            average: None,
            recent: RecentExamples::default(),
            builder_thread: BuilderThread::default(),
        })
    }

    /// Reassembles a learner from saved parts (model loading).
    pub(crate) fn from_parts(
        config: LearnerConfig,
        expansion: E,
        weights: WeightTable,
        state: GdState,
        labels: LabelRange,
        progress: Progress,
    ) -> PolyResult<Self> {
        // The table is the saved one (filled with the initial weight only if never trained).
        let initial_weight = config.initial_weight;
        let mut learner = Learner::new(LearnerConfig { initial_weight: 0.0, ..config }, expansion)?;
        learner.config.initial_weight = initial_weight;
        learner.weights = weights;
        learner.weights.set_initial_weight(initial_weight as f32)?;
        learner.state = state;
        learner.labels = labels;
        learner.progress = progress;
        Ok(learner)
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

    /// The raw score of the expanded features in `features` (before clipping).
    fn raw_score(&self, features: &ExpandedFeatures) -> f64 {
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
        features.track_fields(self.field_scales.is_some());
    }

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
    fn learn_example<'e>(
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
    fn catch_up(&mut self) -> PolyResult<()> {
        let recent = std::mem::take(&mut self.recent);
        let track = self.field_scales.is_some();
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
            let mut replay = spare.pop().unwrap_or_else(|| Replay::new(self.config.bits));
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
    fn replay(&mut self, replay: &Replay) {
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
    fn learn_checked(
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
                self.raw_score(features)
            }
            None => self.raw_score(features),
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
                    "an expanded feature has value {largest:e} in magnitude, whose square \
                     overflows single precision; scale the features down (or use a lower degree)"
                )
            })
        };
        if let Some(reason) = overflow {
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
        self.progress.examples += 1;
        self.progress.weighted_loss += loss * weight;
        self.progress.weight += weight;
        self.progress.feature_updates += features.len() as u64;
        if weight > 0.0 {
            self.state.t += weight;
        }
        if weight <= 0.0 || !positive || features.is_empty() {
            // No step to issue the second half's prefetches.
            self.prefetch_slots(upcoming_later);
            return Ok(p);
        }
        let visit = Visit::First { upcoming: upcoming_later };
        if let Err(step) = self.step(features, p, label, weight, derivative, visit) {
            return crate::invalid!(
                "row {row}: the update step overflows ({step:e}); scale the labels, weights or \
                 features down"
            );
        }
        Ok(p)
    }

    /// The update step of an example of progressive prediction `p` on `features` (passes 1 and
    /// 2 of [`super::update`]); `Err` with the step when it overflows (no weight moved; pass 1's
    /// sums and normalizers are).
    /// A [`Visit::Replay`] ([`Learner::catch_up`]) moves only the weights of `features`: the
    /// state the examples' first visit keeps (the normalized rule's sums, the lazy L1/L2 state,
    /// the field scales) is read, not changed.
    #[inline]
    fn step(
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
        if !step.is_finite() {
            return Err(step);
        }
        if step != 0.0 {
            if let Some(average) = self.average.as_mut().filter(|_| replay) {
                // After the update of the example just counted (see `learn_checked`).
                let example = self.progress.examples.saturating_sub(1);
                average.before_update(example, features.slots(), data, stride);
            }
            update::apply_update(data, stride, features, step);
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
    fn learn_rows(
        &mut self,
        batch: &Batch<'_>,
        rows: impl Iterator<Item = usize> + Send,
        is_holdout: impl Fn(usize) -> bool,
        visited: impl FnMut(Visited<'_>),
    ) -> PolyResult<(f64, f64)> {
        let seeds = self.seeds.clone();
        if self.builds_ahead(rows.size_hint().0) {
            let form = (self.expansion.generation(), self.expansion.block_expansion());
            let (bits, track) = (self.config.bits, self.field_scales.is_some());
            let table = SlotAddresses::of(self.weights.data(), self.weights.stride())
                .filter(|_| self.weights.size_bytes() > BUILDER_PREFETCH_TABLE_BYTES);
            let built_for = BuiltFor { bits, track_fields: track, table };
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
    fn builds_ahead(&self, rows: usize) -> bool {
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
    fn learn_from(
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
            ring.resize_with(depth, || Staged::new(self.config.bits));
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
    fn advance(&self, blocks: &mut ExampleBlocks, source: &mut impl FollowsExpansion) -> bool {
        let more = blocks.advance(source);
        if more {
            self.expand_block(blocks, source);
        }
        more
    }

    /// Expands the block the cursor of `blocks` has just entered at once, if the enumerator
    /// has a block form ([`Expansion::expand_block`]) and `source` did not expand it with the
    /// enumerator as it is now (`source` then learns of the enumerator's change).
    fn expand_block(&self, blocks: &mut ExampleBlocks, source: &mut impl FollowsExpansion) {
        let generation = self.expansion.generation();
        if !blocks.entered_unexpanded(generation) {
            return;
        }
        let track = self.field_scales.is_some();
        blocks.expand_block(generation, self.config.bits, track, |rows, out, ends| {
            self.expansion.expand_block(rows, out, ends)
        });
        source.expansion_changed(generation, &|| self.expansion.block_expansion());
    }

    /// Stages the current example of `blocks`: checks and expands it; an error is kept in it.
    fn stage(&self, batch: &Batch<'_>, blocks: &ExampleBlocks, staged: &mut Staged) {
        staged.at = blocks.cursor();
        staged.error = self.expand_staged(batch, blocks, staged).err();
    }

    /// Prefetches the weight slots `slots` will touch (on a table larger than the cache).
    #[inline]
    fn prefetch_slots(&self, slots: &[u32]) {
        crate::memory::prefetch_slots(self.weights.data(), self.weights.stride(), slots);
    }

    /// Whether examples are staged ahead and their slots prefetched: for tables larger than a
    /// core's L2 cache ([`PREFETCH_TABLE_BYTES`]; one that fits gains nothing, and prefetching
    /// costs).
    fn prefetches(&self) -> bool {
        self.weights.size_bytes() > PREFETCH_TABLE_BYTES
    }

    /// (Re-)expands a staged example with the enumerator as it is now, checking it first (or
    /// copies its features from its block, expanded whole by the same enumerator).
    fn expand_staged(
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

    /// The checks every learning call makes before learning a row (labels, weights, entries),
    /// so that a bad batch is refused whole; public for a caller that learns a batch in pieces.
    pub fn check_batch(&self, batch: &Batch<'_>) -> PolyResult<()> {
        self.check_batch_namespaces(batch)?;
        self.check_batch_labels(batch)?;
        self.check_batch_entries(batch)
    }

    /// A batch has one column per namespace of the model: a column more would be left out of
    /// every example, one fewer would shift the others' seeds.
    fn check_batch_namespaces(&self, batch: &Batch<'_>) -> PolyResult<()> {
        let (got, namespaces) = (batch.namespaces.len(), &self.config.namespaces);
        if got != namespaces.len() {
            return crate::invalid!(
                "the batch has {got} feature column(s) but the model has {} namespace(s) \
                 ({namespaces:?})",
                namespaces.len()
            );
        }
        Ok(())
    }

    /// Feature values and indices checked before any row is learned (NaN, infinity, a value
    /// beyond single precision, a negative index), so that a bad entry does not leave a
    /// half-learned batch; the error is the one learning would have met, naming the row.
    fn check_batch_entries(&self, batch: &Batch<'_>) -> PolyResult<()> {
        if batch.namespaces.iter().all(|ns| ns.entries_are_plain()) {
            return Ok(());
        }
        let mut buffer = ExampleBuffer::new();
        for row in 0..batch.n_rows() {
            let example = batch.example(row, &self.seeds, &mut buffer)?;
            if let Some(largest) = overflowing_square(example.features().1) {
                let error = PolyError::InvalidInput(format!(
                    "row {}: a feature has value {largest:e} in magnitude, whose square \
                     overflows single precision; scale the features down",
                    batch.first_row + row
                ));
                // The namespace holding it, for the error to name its column.
                let holds = |k: &usize| {
                    overflowing_square(example.namespace(*k).values).is_some_and(|v| v == largest)
                };
                return Err(match (0..example.n_namespaces()).find(holds) {
                    Some(k) => batch.in_column(k, error),
                    None => error,
                });
            }
        }
        Ok(())
    }

    /// Labels and weights checked before any row is learned, so that a bad label does not leave
    /// a half-trained model.
    fn check_batch_labels(&self, batch: &Batch<'_>) -> PolyResult<()> {
        if batch.labels.len() != batch.n_rows() {
            return crate::invalid!(
                "features have {} rows but labels have {}",
                batch.n_rows(),
                batch.labels.len()
            );
        }
        for (row, &label) in batch.labels.iter().enumerate() {
            self.check_label(label, batch.first_row + row)?;
        }
        if let Some(weights) = batch.weights {
            for (row, &w) in weights.iter().enumerate() {
                if !(w.is_finite() && w >= 0.0) {
                    return crate::invalid!(
                        "row {}: importance weight is {w}; weights must be finite and >= 0",
                        batch.first_row + row
                    );
                }
            }
        }
        Ok(())
    }

    /// Multi-pass training over in-memory data (see [`FitOptions`]).
    pub fn fit(&mut self, batch: &Batch<'_>, options: &FitOptions) -> PolyResult<FitReport> {
        if options.passes == 0 {
            return crate::invalid!("passes must be at least 1, got 0");
        }
        let tail = options.average_tail;
        if !(0.0..=1.0).contains(&tail) {
            return crate::invalid!("average_tail must be in [0, 1], got {tail}");
        }
        if tail > 0.0 && (self.config.l1 > 0.0 || self.config.l2 > 0.0) {
            return crate::invalid!(
                "average_tail cannot be combined with l1/l2 (their lazy scaling rewrites the \
                 whole table); set average_tail=0 or l1=l2=0"
            );
        }
        self.check_batch(batch)?;
        let n = batch.n_rows();
        let period = if options.passes > 1 { options.holdout } else { 0 };
        let is_holdout = |row: usize| period > 0 && row % period == period - 1;
        let learned_per_pass = (0..n).filter(|&row| !is_holdout(row)).count() as u64;
        let run_length = learned_per_pass * options.passes as u64;
        self.begin_run(run_length)?;
        self.average = None;
        if tail > 0.0 {
            let window = ((run_length as f64 * tail).ceil() as u64).min(run_length);
            let start = self.progress.examples + run_length - window;
            self.average = Some(TailAverage::new(start, self.weights.n_slots())?);
        }
        let mut order: Vec<usize> = (0..n).collect();
        let mut rng = options.rng();
        let mut report = FitReport::default();
        let mut best = f64::INFINITY;
        let mut since_best = 0;
        let result = (|| {
            for _ in 0..options.passes {
                if options.shuffle {
                    rng.shuffle(&mut order);
                }
                let before = (self.progress.weighted_loss, self.progress.weight);
                let record = |row: Visited<'_>| {
                    if let Visited::Learned { progress, .. } = row {
                        if progress.examples.is_power_of_two() {
                            report.progress.push(progress.clone());
                        }
                    }
                };
                let (holdout_loss, holdout_weight) =
                    self.learn_rows(batch, order.iter().copied(), is_holdout, record)?;
                if report.progress.last() != Some(&self.progress) {
                    report.progress.push(self.progress.clone());
                }
                report.passes_run += 1;
                let learned = self.progress.weight - before.1;
                report.pass_loss.push(if learned > 0.0 {
                    (self.progress.weighted_loss - before.0) / learned
                } else {
                    f64::NAN
                });
                if period > 0 && holdout_weight > 0.0 {
                    let loss = holdout_loss / holdout_weight;
                    report.holdout_loss.push(loss);
                    if loss < best {
                        best = loss;
                        since_best = 0;
                    } else {
                        since_best += 1;
                        if options.n_iter_no_change > 0 && since_best >= options.n_iter_no_change {
                            report.stopped_early = true;
                            break;
                        }
                    }
                }
            }
            Ok(())
        })();
        if let Some(average) = self.average.take() {
            if result.is_ok() && self.weights.is_allocated() {
                let stride = self.weights.stride();
                average.finish(self.progress.examples, self.weights.data_mut(), stride);
            }
        }
        result.map(|()| report)
    }

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
                (0..depth.min(chunk.len())).map(|_| Staged::new(self.config.bits)).collect();
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
    fn score_expanded(&self, block: &ExpandedFeatures, ends: &[ExampleEnd], scores: &mut [f64]) {
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
    fn scoring_in_place(&self, block: &ExpandedFeatures, ends: &[ExampleEnd]) -> InPlace<'_> {
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
    fn raw_score_by_field_runs(
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
    fn raw_score_in_place(
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
    fn score_block_rows(
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

    /// `P(y = +1)` for a logistic-loss margin.
    pub fn probability(margin: f64) -> f64 {
        super::loss::logistic(margin)
    }

    /// Folds the lazy L1/L2 state into the weights (done before saving).
    pub fn sync(&mut self) {
        let stride = self.weights.stride();
        if self.weights.is_allocated() {
            update::sync_weights(self.weights.data_mut(), stride, &mut self.state);
        }
    }
}
