//! [`Apple`]: the adaptive polynomial expansion as a feature enumerator of the hashed learner.
//!
//! Per example it emits the base features, every product monomial of S ([`super::walk`]) and the
//! constant feature. After each learned example it counts the example (and its nonzeros, for
//! s̄), remembers it when an expansion is near ([`super::window`]) and, at an expansion point
//! ([`super::schedule`]), adds `s = floor(s̄^alpha)` new parents chosen by
//! [`super::select`]. The monomials that adds then catch up on the last `catch_up` learned
//! examples, which the learner keeps from `catch_up` examples before each expansion point and
//! replays for them alone ([`Expansion::expand_added`]).

use std::cell::RefCell;

use super::categorical::CategoricalNamespaces;
use super::monomial::{mix, Identity};
use super::parents::{Parent, ParentSet};
use super::ranking::{Ranking, SlotWeights};
use super::schedule::{Schedule, ScheduleKind};
use super::select::{choose, Selection};
use super::walk::{walk_children, ChildSink, Node, WalkScratch, MAX_DEGREE};
use super::window::Window;
use crate::error::PolyResult;
use crate::learner::example::FeatureUnion;
use crate::learner::expansion::{
    check_scratch_fits, push_constant, Learned, INTERACTION_PRIME, MAX_EXPANDED_FEATURES,
};
use crate::learner::features::{monomial_field, namespace_field};
use crate::learner::{Example, ExampleShape, ExpandedFeatures, Expansion};

/// Apple's parameters (saved with the model). The serde form is the options the Python layer
/// gives (`polars_poly.Apple`); `constant`, `window` and `budget` take their defaults when
/// absent.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppleConfig {
    /// s = floor(s̄^alpha) parents per expansion; alpha in (0, 2] (1 by default).
    pub alpha: f64,
    /// How candidate parents are ranked ([`super::ranking`]).
    pub ranking: Ranking,
    /// Risk-consistent fall-back: the last of the s parents is the smallest-degree candidate.
    pub fallback: bool,
    /// Canonical monomial identity (default) or Vowpal Wabbit's path-dependent one.
    pub identity: Identity,
    /// Highest degree of a generated monomial, `1..=MAX_DEGREE` (6: the paper's 6 epochs).
    pub max_degree: u8,
    pub schedule: ScheduleKind,
    /// Epochs of the epochs schedule (6) and first point of the doubling schedule (1000).
    pub epochs: u32,
    pub doubling_first: u64,
    /// Add the constant feature (counted in s̄, as Vowpal Wabbit does; never a parent).
    #[serde(default = "default_constant")]
    pub constant: bool,
    /// Most examples remembered before an expansion (the last eighth of the epoch, at least
    /// [`MIN_WINDOW`], at most this), and most monomials enumerated from them when choosing
    /// (newest examples first).
    #[serde(default = "default_window")]
    pub window: usize,
    #[serde(default = "default_budget")]
    pub budget: usize,
    /// The monomials an expansion adds catch up on the last `catch_up` learned examples before
    /// it (2048; 0: none): the learner replays them for those features alone, as it does for a
    /// field cross that joins ([`Expansion::expand_added`]).
    #[serde(default = "default_catch_up")]
    pub catch_up: usize,
}

fn default_catch_up() -> usize {
    AppleConfig::default().catch_up
}

fn default_constant() -> bool {
    AppleConfig::default().constant
}

fn default_window() -> usize {
    AppleConfig::default().window
}

fn default_budget() -> usize {
    AppleConfig::default().budget
}

impl Default for AppleConfig {
    fn default() -> Self {
        AppleConfig {
            alpha: 1.0,
            ranking: Ranking::Typical,
            fallback: false,
            identity: Identity::Canonical,
            max_degree: 6,
            schedule: ScheduleKind::Auto,
            epochs: 6,
            doubling_first: 1000,
            constant: true,
            window: 10_000,
            budget: 4_000_000,
            catch_up: 2048,
        }
    }
}

impl AppleConfig {
    pub fn validate(&self) -> PolyResult<()> {
        if !(self.alpha.is_finite() && self.alpha > 0.0 && self.alpha <= 2.0) {
            return crate::invalid!("alpha must be in (0, 2], got {}", self.alpha);
        }
        if !(1..=MAX_DEGREE as u8).contains(&self.max_degree) {
            return crate::invalid!(
                "max_degree must be in 1..={MAX_DEGREE}, got {}",
                self.max_degree
            );
        }
        if self.window == 0 || self.budget == 0 {
            return crate::invalid!(
                "apple's window and budget must be >= 1, got {} and {}",
                self.window,
                self.budget
            );
        }
        Schedule::new(self.schedule, self.epochs, self.doubling_first).map(|_| ())
    }

    fn selection(&self) -> Selection {
        Selection {
            ranking: self.ranking,
            identity: self.identity,
            fallback: self.fallback,
            max_degree: usize::from(self.max_degree),
        }
    }
}

/// Fewest examples remembered before an expansion (fewer when the epoch is shorter).
pub const MIN_WINDOW: u64 = 64;

/// Counters saved with the model so that training continues where it stopped.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AppleProgress {
    /// Examples learned (the schedule's clock).
    pub learned: u64,
    /// Σ nonzero base features (plus the constant) over learned examples: s̄ = this / learned.
    pub nonzeros: f64,
    /// Expansions done.
    pub expansions: u32,
}

/// Writes apple's children into the learner's feature buffer, the unconditional run of each
/// parent in bulk.
struct FeatureSink<'a>(&'a mut ExpandedFeatures);

impl ChildSink for FeatureSink<'_> {
    #[inline]
    fn child(&mut self, _parent: &Node, _i: usize, _key: u64, slot: u64, value: f32) {
        self.0.push(slot, value);
    }

    #[inline]
    fn children_from(
        &mut self,
        parent: &Node,
        from: usize,
        hashes: &[u64],
        _mixes: &[u64],
        values: &[f32],
    ) {
        let first = parent.term.wrapping_mul(INTERACTION_PRIME);
        self.0.push_products(first, parent.value, &hashes[from..], &values[from..]);
    }
}

/// Tells the children an expansion added to S from those S had before it. Canonical identity:
/// a product `c = m·x` was in S before iff `c / f` is an earlier parent for some factor `f` of
/// `c` (S is the base features and every parent times a base feature); `f = x` leaves `m`, so a
/// child of an earlier parent was there, and a child of a new parent is new unless removing one
/// of that parent's factors leaves an earlier parent. Path identity: a product is keyed by its
/// path, so exactly the children of new parents are new.
struct NewChildren<'a> {
    parents: &'a ParentSet,
    identity: Identity,
    /// The expansion whose parents are new.
    expansion: u32,
}

impl<'a> NewChildren<'a> {
    fn new(parents: &'a ParentSet, identity: Identity, expansion: u32) -> Self {
        NewChildren { parents, identity, expansion }
    }

    fn is_earlier(&self, parent: u32) -> bool {
        self.parents.parents()[parent as usize].expansion < self.expansion
    }

    /// Whether the child `parent·x` with identity key `key` is new.
    #[inline]
    fn is_new(&self, parent: &Node, key: u64) -> bool {
        if self.is_earlier(parent.parent) {
            return false;
        }
        if self.identity == Identity::Path {
            return true;
        }
        let factors = self.parents.parents()[parent.parent as usize].monomial.factors();
        !factors.iter().enumerate().any(|(k, &f)| {
            (k == 0 || factors[k - 1] != f)
                && self
                    .parents
                    .index_of(key.wrapping_sub(mix(f)))
                    .is_some_and(|earlier| self.is_earlier(earlier))
        })
    }
}

/// Writes only the new children ([`Expansion::expand_added`]).
struct AddedSink<'a, 'b> {
    added: &'a mut ExpandedFeatures,
    new: NewChildren<'b>,
}

impl ChildSink for AddedSink<'_, '_> {
    #[inline]
    fn child(&mut self, parent: &Node, _i: usize, key: u64, slot: u64, value: f32) {
        if self.new.is_new(parent, key) {
            self.added.push(slot, value);
        }
    }
}

/// Writes every child into `all` and the new ones into `added` too (a catch-up replay).
struct BothSinks<'a, 'b> {
    all: &'a mut ExpandedFeatures,
    added: &'a mut ExpandedFeatures,
    new: NewChildren<'b>,
}

impl ChildSink for BothSinks<'_, '_> {
    #[inline]
    fn child(&mut self, parent: &Node, _i: usize, key: u64, slot: u64, value: f32) {
        self.all.push(slot, value);
        if self.new.is_new(parent, key) {
            self.added.push(slot, value);
        }
    }
}

/// The learner's weights as the rankings read them.
impl SlotWeights for Learned<'_> {
    fn magnitude(&self, slot_hash: u64) -> f64 {
        self.weight_magnitude(slot_hash)
    }

    fn normalizer(&self, slot_hash: u64) -> f64 {
        self.feature_normalizer(slot_hash)
    }
}

/// Reused buffers of [`Apple::walk`].
#[derive(Default)]
struct Scratch {
    walk: WalkScratch,
    /// The non-categorical features of the example being walked.
    union: FeatureUnion,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// See the module docs.
#[derive(Clone, Debug)]
pub struct Apple {
    config: AppleConfig,
    schedule: Schedule,
    parents: ParentSet,
    progress: AppleProgress,
    window: Window,
    /// With field crosses beside apple: the namespaces seen categorical, which parents are not
    /// taken from ([`super::categorical`]); `None`: parents from every namespace.
    categorical: Option<CategoricalNamespaces>,
    /// Scratch for the non-categorical features of a remembered example.
    union: FeatureUnion,
    /// Between an expansion that added parents and the next learned example: that expansion's
    /// number, whose parents' new children catch up ([`Expansion::expand_added`]).
    catching_up: Option<u32>,
}

impl PartialEq for Apple {
    fn eq(&self, other: &Self) -> bool {
        self.config == other.config
            && self.schedule == other.schedule
            && self.parents == other.parents
            && self.progress == other.progress
            && self.categorical == other.categorical
    }
}

impl Apple {
    pub fn new(config: AppleConfig) -> PolyResult<Self> {
        config.validate()?;
        let schedule = Schedule::new(config.schedule, config.epochs, config.doubling_first)?;
        Ok(Apple {
            window: Window::new(config.window),
            parents: ParentSet::new(),
            progress: AppleProgress::default(),
            schedule,
            config,
            categorical: None,
            union: FeatureUnion::default(),
            catching_up: None,
        })
    }

    /// Parents are no longer taken from categorical namespaces ([`super::categorical`]), which
    /// the field crosses screened beside apple cover, nor (unless `seen` was read from a model
    /// of format 6 or 7) are their features factors of children; `seen` is what earlier
    /// training noted (empty for a new model).
    pub fn leave_categorical_to_field_crosses(&mut self, seen: CategoricalNamespaces) {
        self.categorical = Some(seen);
    }

    /// The namespaces noted categorical, when parents are not taken from them.
    pub fn categorical(&self) -> Option<&CategoricalNamespaces> {
        self.categorical.as_ref()
    }

    /// Whether an expansion may add parents: not while every namespace seen is left to field
    /// crosses ([`super::categorical`]).
    pub fn may_grow(&self) -> bool {
        self.categorical.as_ref().is_none_or(|c| !c.all_categorical())
    }

    /// The learned-example count at which the next expansion happens (None: the schedule has
    /// no further point, as past the last epoch).
    pub fn next_expansion(&self) -> Option<u64> {
        self.schedule.next_point(self.progress.learned)
    }

    /// Ranks the candidates of later expansions by `ranking`. The ranking is read only when an
    /// expansion selects parents, so a copy of a model given another ranking before its first
    /// expansion is the model that ranking would have trained (a race between rankings forks
    /// there).
    pub fn set_ranking(&mut self, ranking: Ranking) {
        self.config.ranking = ranking;
    }

    /// Makes a model without parents the linear model from here on (`max_degree` 1: no
    /// monomial can be a parent): the linear rival of a race, forked where the other rivals
    /// are. Refused once parents were added.
    pub fn stop_growing(&mut self) -> PolyResult<()> {
        if !self.parents.is_empty() {
            return crate::invalid!(
                "apple has {} parents: it cannot become linear",
                self.parents.len()
            );
        }
        self.config.max_degree = 1;
        Ok(())
    }

    /// Reassembles a saved apple state; parents must be listed in the order they were added.
    pub fn from_parts(
        config: AppleConfig,
        planned: Vec<u64>,
        parents: Vec<Parent>,
        progress: AppleProgress,
    ) -> PolyResult<Self> {
        let mut apple = Apple::new(config)?;
        if planned.windows(2).any(|w| w[0] >= w[1]) {
            return crate::invalid!("apple's planned expansion points are not increasing");
        }
        apple.schedule.planned = planned;
        for parent in &parents {
            let degree = parent.monomial.degree();
            if degree == 0 || degree >= usize::from(apple.config.max_degree) {
                return crate::invalid!(
                    "apple parent of degree {degree} with max_degree {}",
                    apple.config.max_degree
                );
            }
            if apple.config.identity == Identity::Canonical && parent.key != parent.monomial.key() {
                return crate::invalid!("apple parent key does not match its monomial");
            }
        }
        if apple.parents.restore(parents).is_err() {
            return crate::invalid!("apple parent listed twice");
        }
        apple.progress = progress;
        Ok(apple)
    }

    pub fn config(&self) -> &AppleConfig {
        &self.config
    }

    pub fn schedule(&self) -> &Schedule {
        &self.schedule
    }

    pub fn parents(&self) -> &[Parent] {
        self.parents.parents()
    }

    pub fn progress(&self) -> &AppleProgress {
        &self.progress
    }

    /// s̄: average nonzero base features per learned example (with the constant).
    pub fn average_nonzeros(&self) -> f64 {
        if self.progress.learned == 0 {
            0.0
        } else {
            self.progress.nonzeros / self.progress.learned as f64
        }
    }

    /// Parents the next expansion adds: floor(s̄^alpha), at least 1.
    pub fn parents_per_expansion(&self) -> usize {
        (self.average_nonzeros().powf(self.config.alpha).floor() as usize).max(1)
    }

    /// Runs one expansion now (normally called by the schedule): chooses up to
    /// [`Apple::parents_per_expansion`] new parents among the remembered examples' monomials.
    /// Returns how many were added.
    pub fn expand_now(&mut self, weights: &impl SlotWeights) -> usize {
        let selection = self.config.selection();
        let chosen = choose(
            &self.parents,
            &self.window,
            &selection,
            self.parents_per_expansion(),
            self.config.budget,
            weights,
        );
        self.progress.expansions += 1;
        let expansion = self.progress.expansions;
        let added = self.parents.extend_keyed(chosen, expansion);
        if added > 0 && self.config.catch_up > 0 {
            self.catching_up = Some(expansion);
        }
        self.window.clear();
        added
    }

    /// Examples remembered before the expansion at `point`: the last eighth of its epoch (at
    /// least [`MIN_WINDOW`], at most the configured window). Choosing enumerates S on each of
    /// them, so this bounds the selection's cost to a fraction of the epoch's.
    pub fn window_before(&self, point: u64) -> u64 {
        let gap = self.schedule.gap_before(point);
        (gap / 8).clamp(MIN_WINDOW, self.config.window as u64).min(gap)
    }

    /// [`Expansion::expand`] into `out`; with `added`, also the monomials the expansion being
    /// caught up added into it ([`NewChildren`]), from the same walk.
    fn expand_with(
        &self,
        example: &Example<'_>,
        out: &mut ExpandedFeatures,
        added: Option<&mut ExpandedFeatures>,
    ) {
        out.reserve(example.n_features() + 1);
        let n = example.n_namespaces();
        if n > 1 {
            // The inputs namespace by namespace (each its own field, as a linear model's); the
            // walk below reads their union.
            for k in 0..n {
                let namespace = example.namespace(k);
                out.begin_field(namespace_field(k));
                out.push_products(0, 1.0, namespace.hashes, namespace.values);
            }
        } else {
            // The namespace itself (its feature set may not be built, see `uses_feature_set`).
            let namespace = example.namespace(0);
            out.begin_field(namespace_field(0));
            out.push_products(0, 1.0, namespace.hashes, namespace.values);
        }
        if !self.parents.is_empty() {
            out.begin_field(monomial_field(n));
            let children = out.len();
            match (added, self.catching_up) {
                (Some(added), Some(expansion)) => {
                    added.begin_field(monomial_field(n));
                    let new = NewChildren::new(&self.parents, self.config.identity, expansion);
                    self.walk(example, &mut BothSinks { all: out, added, new });
                }
                _ => self.walk(example, &mut FeatureSink(out)),
            }
            // A child of an outlier row can exceed what the learner's f32 squares hold even
            // when the selection's bound ([`super::select`]) held on the rows seen so far: it is
            // left out of this row rather than failing the fit.
            out.drop_overflowing(children);
        }
        if self.config.constant {
            push_constant(out);
        }
    }

    /// The walk of S's products over one example's base features. Beside field crosses, the
    /// categorical namespaces' features are not factors ([`super::categorical`]): a parent's
    /// product with one category value is a value-level cross that the field crosses cover whole.
    fn walk(&self, example: &Example<'_>, sink: &mut impl ChildSink) {
        SCRATCH.with(|scratch| {
            let Scratch { walk, union } = &mut *scratch.borrow_mut();
            let (hashes, values) = match &self.categorical {
                Some(categorical) if categorical.not_factors() => {
                    categorical.other_features(example, union)
                }
                _ => example.features(),
            };
            walk_children(
                &self.parents,
                usize::from(self.config.max_degree),
                self.config.identity,
                hashes,
                values,
                walk,
                sink,
            );
        });
    }

    /// Counts a learned example of `n_features` features; returns its number.
    fn count_learned(&mut self, n_features: usize) -> u64 {
        // The last expansion's catch-up is over.
        self.catching_up = None;
        self.progress.learned += 1;
        self.progress.nonzeros += n_features as f64 + if self.config.constant { 1.0 } else { 0.0 };
        self.progress.learned
    }

    /// Expands at the schedule's points (`count`: the example just learned).
    fn expand_if_due(&mut self, count: u64, learned: &Learned<'_>) {
        if self.schedule.is_expansion_point(count) {
            self.expand_now(learned);
        }
    }

    /// Whether the example about to be counted as number `learned` should be remembered.
    fn remember_now(&self, learned: u64) -> bool {
        self.schedule
            .next_point(learned - 1)
            .is_some_and(|point| point - learned < self.window_before(point))
    }
}

impl Expansion for Apple {
    fn expand(&self, example: &Example<'_>, out: &mut ExpandedFeatures) {
        self.expand_with(example, out, None);
    }

    /// The walk reads the feature set; without parents there is no walk, and only a model
    /// that takes parents from some namespaces only reads its namespaces alone.
    fn uses_feature_set(&self) -> bool {
        self.categorical.is_none() || !self.parents.is_empty()
    }

    fn validate(&self, _n_namespaces: usize) -> PolyResult<()> {
        self.config.validate()
    }

    /// Each parent present adds at most nnz children: bound the total before expanding.
    fn check(&self, example: &Example<'_>, row: usize) -> PolyResult<()> {
        let n = example.n_features() as u64;
        let bound = n.saturating_mul(1 + self.parents.len() as u64);
        if bound > MAX_EXPANDED_FEATURES {
            return crate::invalid!(
                "row {row}: {n} features with {} apple parents may expand to more than \
                 {MAX_EXPANDED_FEATURES} terms per example; use a smaller alpha or max_degree",
                self.parents.len()
            );
        }
        check_scratch_fits(bound, row)
    }

    fn begin_run(&mut self, examples: u64) {
        self.schedule.begin_run(self.progress.learned, examples);
    }

    /// The parents change only in [`Apple::expand_now`], which counts expansions.
    fn generation(&self) -> u64 {
        u64::from(self.progress.expansions)
    }

    /// The last `catch_up` learned examples before each expansion point: asked for from
    /// `catch_up` examples before it (none while every namespace is left to field crosses: no
    /// parent can come).
    fn recent_examples_wanted(&self) -> usize {
        if !self.may_grow() {
            return 0;
        }
        let learned = self.progress.learned;
        match self.schedule.next_point(learned) {
            Some(point) if point - learned < self.config.catch_up as u64 => self.config.catch_up,
            _ => 0,
        }
    }

    fn catch_up_due(&self) -> bool {
        self.catching_up.is_some()
    }

    /// Right after an expansion that added parents, the monomials of S it added
    /// ([`NewChildren`]); nothing at other times.
    fn expand_added(&self, example: &Example<'_>, out: &mut ExpandedFeatures) {
        let Some(expansion) = self.catching_up else { return };
        out.begin_field(monomial_field(example.n_namespaces()));
        let new = NewChildren::new(&self.parents, self.config.identity, expansion);
        self.walk(example, &mut AddedSink { added: out, new });
    }

    /// One walk gives both.
    fn expand_for_catch_up(
        &self,
        example: &Example<'_>,
        added: &mut ExpandedFeatures,
        all: &mut ExpandedFeatures,
    ) {
        self.expand_with(example, all, Some(added));
    }

    fn after_learn(&mut self, example: &Example<'_>, learned: &Learned<'_>) {
        let count = self.count_learned(example.n_features());
        if let Some(categorical) = &mut self.categorical {
            categorical.observe(example);
        }
        if self.remember_now(count) {
            let (hashes, values) = match &self.categorical {
                Some(categorical) => categorical.other_features(example, &mut self.union),
                None => example.features(),
            };
            // An example with no candidate parent is not worth remembering.
            if !hashes.is_empty() || self.categorical.is_none() {
                self.window.remember(hashes, values, learned.residual() as f32);
            }
        }
        self.expand_if_due(count, learned);
    }

    /// The example is read to note its namespaces (unless it leaves the notes as they are) and
    /// to remember it for the next expansion (unless it has no candidate parent).
    fn reads_example(&self, shape: &ExampleShape) -> bool {
        let remembered = || self.remember_now(self.progress.learned + 1);
        match &self.categorical {
            None => remembered(),
            // The schedule last: on all-categorical fields (no candidate parent, so nothing
            // to remember) it is never asked.
            Some(categorical) => {
                !categorical.unchanged_by(shape) || (self.may_grow() && remembered())
            }
        }
    }

    fn after_learn_unread(&mut self, shape: &ExampleShape, learned: &Learned<'_>) {
        let count = self.count_learned(shape.n_features);
        self.expand_if_due(count, learned);
    }
}
