//! Field-level apple: crosses of whole fields (namespaces: one sparse column each, or one
//! Vowpal Wabbit namespace), found during training and then computed on the fly like
//! `interactions`. The model starts linear; every candidate cross of two fields is screened on
//! the residual within a budget by two judges, a shared factorization ([`screen`], for crosses
//! of low rank) and value-pair cells ([`cells`], for crosses of full rank), and at each check the
//! most surely useful one joins the model (docs/algorithms.md §7). A cross that has joined is
//! then crossed with each further field, up to `max_fields` fields ([`operands`]); with
//! `max_fields` 3 or more, triples of fields of few values are also probed whole, for crosses
//! of three fields no pair of which says anything ([`probes`]).
//!
//! * Budget: screening an example (every racing candidate at once) costs one unit per feature
//!   (a shadow vector update) and a quarter unit per racing candidate; `budget` units are
//!   allowed per feature the model learns, so screening costs about that fraction of linear
//!   training.
//! * Racing: at a check, candidates with enough samples and no positive z-score pause; they
//!   rejoin when a cross joins or every [`PATIENT_CHECKS`] quiet checks.
//! * Checks: every `check_every` learned examples, the candidate with the largest z-score (mean
//!   gain over its standard error, the better judge's) joins if its z-score is at least `z`
//!   (more on few samples: [`z_to_join`]), then every shadow and statistic starts again (the
//!   residual changed). After a run of checks that add nothing (30 before the first cross;
//!   after one, as many as it took to find the last, at least 10), each further one shrinks the
//!   budget in force by 5%, down to a sixteenth of `budget`; a cross joining restores it. At
//!   most `max_crosses` crosses are added; screening stops when that many are in.
//! * Catch-up: the last `catch_up` learned examples are kept while a join is in sight (during
//!   the first 30 checks, and while a racing candidate has half the z-score to join), and a
//!   cross that joins is stepped on them.
//! * Stored: the options, the crosses in the order they were added (their fields, and the
//!   example count at which each joined) and the count of learned examples. Shadows are not
//!   stored: continued training screens afresh.

pub mod cells;
pub mod judges;
pub mod operands;
pub mod probes;
pub mod screen;
pub mod stored;

pub use judges::Judge;
use judges::Judges;
use operands::{JoinedValues, Operands};
use probes::Probes;
use screen::Candidate;

use crate::error::PolyResult;
use crate::learner::expansion::{
    push_constant, push_linear, push_namespace_cross, push_namespace_crosses, Learned,
};
use crate::learner::{
    BlockRows, Example, ExampleEnd, ExampleShape, ExpandedFeatures, Expansion, Interactions,
};

/// Field-level apple's options (saved with the model; the serde form is the Python layer's
/// `polars_poly.FieldApple`).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FieldAppleConfig {
    /// Most crosses added (the Python layer asks >= 1; 0, no screening at all, is the frozen
    /// merge of shards that found none, see [`crate::model::average`]).
    pub max_crosses: usize,
    /// Screening units per learned feature, > 0 (see the module docs; 0.5: screening costs
    /// about half of linear training).
    pub budget: f64,
    /// Learned examples between two checks, >= 1.
    pub check_every: u64,
    /// Least z-score of a cross's gain for it to join, > 0.
    pub z: f64,
    /// The shadow table has `2^shadow_bits` vectors (16 bytes each), 10..=26; the value-pair
    /// cells number `2^(shadow_bits + 1)`, at most `2^25` (16 bytes each).
    pub shadow_bits: u32,
    /// Add the constant feature.
    #[serde(default = "default_constant")]
    pub constant: bool,
    /// A cross that joins catches up on the last `catch_up` learned examples (0: none; see
    /// [`crate::learner::recent`] for the memory bound).
    #[serde(default = "default_catch_up")]
    pub catch_up: usize,
    /// Most fields in a cross, 2..=8: with 3 or more, a cross in the model is crossed further
    /// with each field outside it (see [`operands`]). A file written before the option existed
    /// screened pairs only, and continues so.
    #[serde(default = "pairs_only")]
    pub max_fields: usize,
}

fn pairs_only() -> usize {
    2
}

/// Most fields a cross may have (the `max_fields` option's upper bound).
pub const MAX_FIELDS: usize = 8;

fn default_catch_up() -> usize {
    FieldAppleConfig::default().catch_up
}

fn default_constant() -> bool {
    true
}

impl Default for FieldAppleConfig {
    fn default() -> Self {
        FieldAppleConfig {
            max_crosses: 8,
            budget: 0.5,
            check_every: 10_000,
            z: 5.0,
            shadow_bits: 20,
            constant: true,
            catch_up: 131_072,
            max_fields: 3,
        }
    }
}

impl FieldAppleConfig {
    pub fn validate(&self) -> PolyResult<()> {
        if !(self.budget.is_finite() && self.budget > 0.0) {
            return crate::invalid!("budget must be a number > 0, got {}", self.budget);
        }
        if self.check_every == 0 {
            return crate::invalid!("check_every must be >= 1, got 0");
        }
        if !(self.z.is_finite() && self.z > 0.0) {
            return crate::invalid!("z must be a number > 0, got {}", self.z);
        }
        if !(10..=26).contains(&self.shadow_bits) {
            return crate::invalid!("shadow_bits must be in 10..=26, got {}", self.shadow_bits);
        }
        if !(2..=MAX_FIELDS).contains(&self.max_fields) {
            return crate::invalid!(
                "max_fields must be in 2..={MAX_FIELDS}, got {}",
                self.max_fields
            );
        }
        Ok(())
    }
}

/// After [`FieldApple::patience`] checks in a row that add no cross, each further one shrinks
/// the budget in force by this factor, down to [`QUIET_FLOOR`] of `budget`: a long stream whose
/// crosses are found stops paying full price for screening, and still screens (a sixteenth of
/// the budget: eat-rate's screening after its one cross cost 0.4x the fit at a quarter).
const QUIET_DECAY: f64 = 0.95;
const QUIET_FLOOR: f64 = 1.0 / 16.0;

/// Quiet checks after which paused candidates rejoin the race (and, before the first cross,
/// after which the budget starts to shrink).
const PATIENT_CHECKS: u32 = 30;

/// Least patience after a cross has joined (see [`FieldApple::patience`]).
const MIN_PATIENCE: u32 = 10;

/// The share of `z` a racing candidate's z-score must reach for a join to be in sight (see
/// `FieldApple::in_sight`).
const IN_SIGHT: f64 = 0.5;

/// A candidate's standing (see [`FieldApple::candidate_scores`]).
#[derive(Clone, Debug, PartialEq)]
pub struct CandidateScore {
    /// The fields the cross would have, in increasing order.
    pub fields: Vec<usize>,
    pub z_factors: f64,
    pub z_cells: f64,
    pub samples: u64,
    /// Still in the race (not paused).
    pub active: bool,
}

/// Gain samples after which a candidate's z-score alone decides (see [`z_to_join`]). At a
/// check, a candidate with this many samples whose z-score is not above zero stops being
/// screened until the next cross joins or the next [`PATIENT_CHECKS`] quiet checks pass
/// (racing: the budget goes to the crosses still in the race; a useless cross's mean gain is
/// negative, so each falls below zero sooner or later, and one whose value pairs have not come
/// back is exactly zero by its cells).
const SAMPLES_TO_DECIDE: u64 = 5_000;

/// Least gain samples for a candidate to join at all: a z-score of a few hundred samples of a
/// skewed gain is not evidence.
const SAMPLES_TO_JOIN: u64 = 1_000;

/// The z-score a candidate of `samples` gain samples needs to join: `z` from
/// [`SAMPLES_TO_DECIDE`] samples on, and before that `z * sqrt(SAMPLES_TO_DECIDE / samples)`:
/// its summed gain must be as sure as a z-score of `z` at [`SAMPLES_TO_DECIDE`] samples. Early
/// z-scores run high on fields whose own effects the model is still learning (on click, with
/// 435 candidates, crosses of such fields reached z 5.0-5.5 at 2,000-3,500 samples, and fell
/// to 3.5 by 5,000), while a cross that predicts shows far more (eat-rate in small: `A*B`'s
/// cells at z 20 after 3,000 samples). Infinite below [`SAMPLES_TO_JOIN`].
fn z_to_join(z: f64, samples: u64) -> f64 {
    if samples < SAMPLES_TO_JOIN {
        return f64::INFINITY;
    }
    z * (SAMPLES_TO_DECIDE as f64 / samples as f64).sqrt().max(1.0)
}

/// A cross in the model: its fields (two or more, in increasing order) and the learned-example
/// count at which it joined.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cross {
    pub fields: Vec<usize>,
    pub added_at: u64,
}

/// The field-level apple enumerator (see the module docs).
#[derive(Clone, Debug)]
pub struct FieldApple {
    config: FieldAppleConfig,
    /// Linear features, the constant and the crosses added so far.
    features: Interactions,
    crosses: Vec<Cross>,
    learned: u64,
    /// Every cross not in the model and still in the race; built at the first learned example
    /// (which names the fields), empty once screening is over. A candidate's pair is of
    /// operands ([`operands`]): fields below `n_fields`, the constant at `n_fields`, the
    /// model's crosses after it; the baselines of joined fields come first.
    candidates: Vec<Candidate>,
    /// Fields of the examples screened (0 before the first).
    n_fields: usize,
    /// The joined fields' values of the example being screened.
    joined: JoinedValues,
    /// Per cross: whether a racing candidate crosses it further; how many do (for the budget).
    extended: Vec<bool>,
    n_extended: usize,
    /// Crosses out of the race until it restarts (see [`SAMPLES_TO_DECIDE`]).
    paused: Vec<Candidate>,
    /// The triples of fields probed whole (with `max_fields` >= 3), see [`probes`].
    probes: Probes,
    /// The two judges' tables while screening (none before the first example and after the
    /// last cross).
    judges: Option<Judges>,
    /// Screening units the budget still allows.
    allowance: f64,
    /// The share of `budget` in force: 1 after a cross joins, shrinking after many checks that
    /// add none (see [`QUIET_DECAY`]).
    budget_share: f64,
    /// Checks in a row that added no cross.
    quiet_checks: u32,
    /// From a cross joining (with `catch_up` > 0) to the next learned example: the recent
    /// examples catch up on it, and [`Expansion::expand_added`] gives that cross.
    catching_up: bool,
    /// Whether a join is in sight: during the first [`PATIENT_CHECKS`] checks (a first cross may
    /// come at any of them), then from a check that finds a racing candidate with at least
    /// [`IN_SIGHT`] of the z-score to join to the next that finds none. Recent examples are
    /// kept for the catch-up only then (keeping them cost eat-rate 0.15x of its fit after its
    /// one cross had joined).
    in_sight: bool,
}

impl PartialEq for FieldApple {
    /// Models are equal when they compute the same features (screening state aside).
    fn eq(&self, other: &Self) -> bool {
        self.config == other.config
            && self.crosses == other.crosses
            && self.learned == other.learned
    }
}

impl FieldApple {
    pub fn new(config: FieldAppleConfig) -> PolyResult<Self> {
        config.validate()?;
        let features =
            Interactions { degree: 1, namespace_crosses: Vec::new(), constant: config.constant };
        Ok(FieldApple {
            config,
            features,
            crosses: Vec::new(),
            learned: 0,
            candidates: Vec::new(),
            n_fields: 0,
            joined: JoinedValues::default(),
            extended: Vec::new(),
            n_extended: 0,
            paused: Vec::new(),
            probes: Probes::default(),
            judges: None,
            allowance: 0.0,
            budget_share: 1.0,
            quiet_checks: 0,
            catching_up: false,
            in_sight: true,
        })
    }

    /// Reassembles a saved model: its crosses in the order they were added.
    pub fn from_parts(
        config: FieldAppleConfig,
        crosses: Vec<Cross>,
        learned: u64,
    ) -> PolyResult<Self> {
        let mut model = FieldApple::new(config)?;
        for cross in crosses {
            let fields = &cross.fields;
            let ordered = fields.windows(2).all(|w| w[0] < w[1]);
            let sized = (2..=model.config.max_fields).contains(&fields.len());
            if !ordered || !sized || model.crosses.iter().any(|c| c.fields == *fields) {
                return crate::invalid!(
                    "field cross {fields:?} is not a new cross of 2..={} fields in increasing \
                     order",
                    model.config.max_fields
                );
            }
            model.add(cross);
        }
        if model.crosses.len() > model.config.max_crosses {
            return crate::invalid!("more field crosses than max_crosses");
        }
        model.learned = learned;
        Ok(model)
    }

    pub fn config(&self) -> &FieldAppleConfig {
        &self.config
    }

    /// The crosses in the model, in the order they were added.
    pub fn crosses(&self) -> &[Cross] {
        &self.crosses
    }

    /// The candidates screened, then the paused ones: fields, both judges' z-scores and gain
    /// samples since the last reset (the last screened is judged at the next, see `Judges`).
    pub fn candidate_scores(&self) -> Vec<CandidateScore> {
        let score = |c: &Candidate, active: bool| CandidateScore {
            fields: self.fields_of(c.pair),
            z_factors: c.factors.z_score(),
            z_cells: c.cells.z_score(),
            samples: c.count(),
            active,
        };
        let active = self.candidates.iter().map(|c| (c, true));
        let all = active.chain(self.paused.iter().map(|c| (c, false)));
        all.filter(|(c, _)| !c.is_baseline()).map(|(c, active)| score(c, active)).collect()
    }

    /// Only the crosses' features (apple with field crosses emits the linear ones, the constant).
    pub fn expand_crosses(&self, example: &Example<'_>, out: &mut ExpandedFeatures) {
        push_namespace_crosses(example, &self.features.namespace_crosses, out);
    }

    /// The linear features, the crosses and, with `constant`, the constant: apple with field
    /// crosses while apple has no parents, in the order of [`FieldApple::linear_form`]'s.
    pub fn expand_linear(&self, example: &Example<'_>, out: &mut ExpandedFeatures, constant: bool) {
        if constant && !self.features.constant {
            push_linear(example, out);
            push_constant(out);
            push_namespace_crosses(example, &self.features.namespace_crosses, out);
        } else {
            self.features.expand(example, out);
        }
    }

    /// [`FieldApple::expand_linear`] as fixed interactions (for the learner's block path).
    pub fn linear_form(&self, constant: bool) -> Interactions {
        Interactions { constant, ..self.features.clone() }
    }

    /// Learned examples seen.
    pub fn learned(&self) -> u64 {
        self.learned
    }

    fn add(&mut self, cross: Cross) {
        self.features.namespace_crosses.push(cross.fields.clone());
        self.crosses.push(cross);
    }

    fn screening(&self) -> bool {
        self.crosses.len() < self.config.max_crosses
    }

    /// The operand of the model's cross `j` (see [`operands`]).
    fn joined_operand(&self, j: usize) -> usize {
        self.n_fields + 1 + j
    }

    /// The model's cross an operand is, if it is one.
    fn joined_cross(&self, operand: usize) -> Option<usize> {
        operand.checked_sub(self.n_fields + 1).filter(|_| operand < self.probe_base())
    }

    /// The operand of probe slot 0 (the probed pairs come after every cross the model may have,
    /// so that a cross joining does not move them).
    fn probe_base(&self) -> usize {
        (self.n_fields + 1).saturating_add(self.config.max_crosses)
    }

    /// The probe slot an operand is, if it is one.
    fn probe_slot(&self, operand: usize) -> Option<usize> {
        operand.checked_sub(self.probe_base())
    }

    /// The fields of the cross a candidate's pair of operands makes, in increasing order.
    fn fields_of(&self, (left, right): (usize, usize)) -> Vec<usize> {
        let mut fields = match (self.joined_cross(left), self.probe_slot(left)) {
            (Some(j), _) => self.crosses.get(j).map_or_else(Vec::new, |c| c.fields.clone()),
            (None, Some(slot)) => {
                self.probes.triple(slot).map_or_else(Vec::new, |t| t[..2].to_vec())
            }
            (None, None) => vec![left],
        };
        fields.push(right);
        fields.sort_unstable();
        fields
    }

    fn start_screening(&mut self, n_fields: usize) {
        self.n_fields = n_fields;
        self.candidates = (0..n_fields)
            .flat_map(|a| (a + 1..n_fields).map(move |b| (a, b)))
            .filter(|&(a, b)| self.crosses.iter().all(|c| c.fields != [a, b]))
            .map(Candidate::new)
            .collect();
        for j in 0..self.crosses.len() {
            self.extend_cross(j);
        }
        self.mark_extended();
        self.judges = Some(Judges::new(self.config.shadow_bits));
    }

    /// Candidates crossing the model's cross `j` with each field outside it, while its fields
    /// number fewer than `max_fields` (a set of fields already in the model or racing is left
    /// out), and the cross's baseline before every candidate.
    fn extend_cross(&mut self, j: usize) {
        let Some(cross) = self.crosses.get(j) else { return };
        if cross.fields.len() >= self.config.max_fields {
            return;
        }
        let joined = self.joined_operand(j);
        let mut known: Vec<Vec<usize>> = self.crosses.iter().map(|c| c.fields.clone()).collect();
        let racing = self.candidates.iter().chain(&self.paused).filter(|c| !c.is_baseline());
        known.extend(racing.map(|c| self.fields_of(c.pair)));
        let mut added = false;
        for field in (0..self.n_fields).filter(|f| !cross.fields.contains(f)) {
            let fields = self.fields_of((joined, field));
            if !known.contains(&fields) {
                self.candidates.push(Candidate::split(joined, field));
                added = true;
            }
        }
        if added {
            self.candidates.insert(0, Candidate::baseline(joined, self.n_fields));
        }
    }

    /// Which crosses of the model a racing candidate crosses further (their joined values are
    /// computed for the examples screened).
    fn mark_extended(&mut self) {
        self.extended.clear();
        self.extended.resize(self.crosses.len(), false);
        for candidate in self.candidates.iter().filter(|c| !c.is_baseline()) {
            if let Some(j) = self.joined_cross(candidate.pair.0) {
                if let Some(extended) = self.extended.get_mut(j) {
                    *extended = true;
                }
            }
        }
        self.n_extended = self.extended.iter().filter(|&&e| e).count();
    }

    /// The allowance once an example of `n_features` features has added its share of the
    /// budget, and the cost of screening it; `None` while nothing is screened.
    fn allowance_for(&self, n_features: usize) -> Option<(f64, f64)> {
        if self.judges.is_none() || self.candidates.is_empty() {
            return None;
        }
        let learned_features = n_features + usize::from(self.config.constant);
        // Each feature costs a shadow vector update; each candidate racing a factorization term
        // and a cell, together about a quarter of a learned feature's update (measured on
        // eat-rate, notes/benchmarks_log.md); a joined field crossed further, about one
        // feature's (one value combination on one-hot fields). The probes (a probe and its
        // pair's baseline per slot, two cells) are not counted: the examples screened, and so
        // the pairs' race, are those of screening without them (on click, counting them left
        // the pairs too few samples before the budget shrank, and one cross joined of five).
        let racing = self.candidates.len().saturating_sub(2 * self.probes.active());
        let cost = ((n_features + self.n_extended) as f64 + racing as f64 / 4.0).max(1.0);
        // Unused allowance carries over, but never more than one screening's worth.
        let budget = self.config.budget * self.budget_share;
        let allowance = (self.allowance + budget * learned_features as f64).min(2.0 * cost);
        Some((allowance, cost))
    }

    /// Adds a learned example's share of the budget to the allowance; whether the allowance
    /// pays for screening it (and has paid).
    fn budget_allows(&mut self, n_features: usize) -> bool {
        let Some((allowance, cost)) = self.allowance_for(n_features) else { return false };
        self.allowance = allowance;
        if cost > allowance {
            return false;
        }
        self.allowance -= cost;
        true
    }

    /// Screens every candidate on this example (the budget paid for it).
    fn screen(&mut self, example: &Example<'_>, learned: &Learned<'_>) {
        let probe_base = self.probe_base();
        let Some(judges) = self.judges.as_mut() else { return };
        // The residual only now: most examples are not screened once the budget has shrunk.
        let residual = learned.residual() as f32;
        let weight = example.weight as f32;
        if self.probes.counting() && self.config.max_fields >= 3 {
            let n_fields = example.n_namespaces().min(self.n_fields);
            self.probes.count(n_fields, |k| example.namespace(k).hashes);
        }
        if residual != 0.0 && weight != 0.0 {
            self.joined.compute(example, &self.crosses, &self.extended);
            if self.probes.active() > 0 {
                self.joined.add_probes(example, self.probes.pairs(), probe_base);
            }
            let operands = Operands::new(example, &self.joined);
            judges.screen(&operands, &mut self.candidates, residual, weight);
        }
    }

    /// Counts a learned example of `n_namespaces` namespaces (starting the screening at the
    /// first); whether the budget pays for screening it.
    fn count_learned(&mut self, n_namespaces: usize, n_features: usize) -> bool {
        self.catching_up = false;
        self.learned += 1;
        if !self.screening() {
            return false;
        }
        if self.judges.is_none() {
            self.start_screening(n_namespaces);
        }
        self.budget_allows(n_features)
    }

    /// Judges the candidates every `check_every` learned examples.
    fn judge_if_due(&mut self) {
        if self.screening() && self.learned % self.config.check_every == 0 {
            self.judge();
        }
    }

    /// At a check: the best candidate joins if it is sure enough; the losing ones pause.
    fn judge(&mut self) {
        if let Some(judges) = self.judges.as_mut() {
            judges.judge_waiting(&mut self.candidates);
        }
        let sight = self.config.z * IN_SIGHT;
        let young = self.crosses.is_empty() && self.quiet_checks + 1 < PATIENT_CHECKS;
        // Probes aside: they are often halfway to a join and seldom join (their own catch-up
        // comes with the next cross in sight).
        let racing = self.candidates.iter().filter(|c| !c.is_baseline() && !c.is_probe());
        self.in_sight = young || racing.into_iter().any(|c| c.z_score() >= sight);
        let best = self
            .candidates
            .iter()
            .enumerate()
            .filter(|(_, c)| !c.is_baseline())
            .filter(|(_, c)| !c.is_probe() || self.pairs_quiet(&self.fields_of(c.pair)))
            .filter_map(|(i, c)| {
                let z = c.z_score();
                (z >= z_to_join(self.config.z, c.count())).then_some((i, z))
            })
            .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)));
        let Some((index, _)) = best else {
            self.quiet_checks += 1;
            if self.quiet_checks > self.patience() {
                self.budget_share = (self.budget_share * QUIET_DECAY).max(QUIET_FLOOR);
            }
            if self.quiet_checks % PATIENT_CHECKS == 0 {
                self.restart_race();
            } else {
                self.pause_losers();
            }
            self.rotate_probes();
            self.mark_extended();
            return;
        };
        self.budget_share = 1.0;
        self.quiet_checks = 0;
        let joined = self.candidates.remove(index);
        self.add(Cross { fields: self.fields_of(joined.pair), added_at: self.learned });
        // A probe that joined (and any other within the new cross) leaves its slot; the
        // residual is another one: every triple has a turn again.
        self.probes.wake();
        self.rotate_probes();
        self.catching_up = self.config.catch_up > 0;
        // The statistics start again: the next cross is out of sight until a check sees it.
        self.in_sight = false;
        if self.screening() {
            self.candidates.append(&mut self.paused);
            self.extend_cross(self.crosses.len() - 1);
            self.mark_extended();
            if let Some(judges) = self.judges.as_mut() {
                judges.reset(&mut self.candidates);
            }
        } else {
            self.candidates = Vec::new();
            self.paused = Vec::new();
            self.extended = Vec::new();
            self.n_extended = 0;
            self.judges = None;
        }
    }

    /// Quiet checks before the budget starts to shrink: before the first cross,
    /// [`PATIENT_CHECKS`]; after one, as many checks as it took to find the last cross (the
    /// next is as likely to need as long; click's crosses join 150k to 240k rows apart, later
    /// ones later), at least [`MIN_PATIENCE`].
    fn patience(&self) -> u32 {
        match self.crosses.last() {
            None => PATIENT_CHECKS,
            Some(last) => {
                let checks = last.added_at / self.config.check_every;
                u32::try_from(checks).unwrap_or(u32::MAX).max(MIN_PATIENCE)
            }
        }
    }

    /// Candidates with enough samples and no positive z-score leave the race.
    fn pause_losers(&mut self) {
        let (losing, racing): (Vec<_>, Vec<_>) =
            std::mem::take(&mut self.candidates).into_iter().partition(|c| {
                matches!(c.role, screen::Role::Cross | screen::Role::Split)
                    && c.count() >= SAMPLES_TO_DECIDE
                    && c.z_score() <= 0.0
            });
        self.candidates = racing;
        self.paused.extend(losing);
    }

    /// The paused candidates rejoin the race with fresh statistics (a cross that lost while the
    /// model was younger may win now).
    fn restart_race(&mut self) {
        let mut rejoining = std::mem::take(&mut self.paused);
        rejoining.iter_mut().for_each(Candidate::reset);
        self.candidates.append(&mut rejoining);
    }
}

impl Expansion for FieldApple {
    #[inline]
    fn expand(&self, example: &Example<'_>, out: &mut ExpandedFeatures) {
        self.features.expand(example, out);
    }

    fn uses_feature_set(&self) -> bool {
        self.features.uses_feature_set()
    }

    fn validate(&self, n_namespaces: usize) -> PolyResult<()> {
        self.features.validate(n_namespaces)
    }

    fn check(&self, example: &Example<'_>, row: usize) -> PolyResult<()> {
        self.features.check(example, row)
    }

    /// Crosses only join (in `add`), never leave.
    fn generation(&self) -> u64 {
        self.crosses.len() as u64
    }

    fn crossed_namespaces(&self) -> Vec<Vec<usize>> {
        self.features.crossed_namespaces()
    }

    /// While screening with a join in sight, the last `catch_up` examples (a new cross's steps).
    fn recent_examples_wanted(&self) -> usize {
        if self.screening() && self.in_sight {
            self.config.catch_up
        } else {
            0
        }
    }

    fn catch_up_due(&self) -> bool {
        self.catching_up
    }

    /// The crosses in the model now, as fixed interactions (a cross that joins later changes
    /// [`Expansion::generation`]).
    fn expand_block(
        &self,
        rows: &BlockRows<'_>,
        out: &mut ExpandedFeatures,
        ends: &mut Vec<ExampleEnd>,
    ) {
        self.features.expand_block(rows, out, ends);
    }

    fn block_expansion(&self) -> Option<Interactions> {
        self.features.block_expansion()
    }

    /// During the catch-up of the cross that just joined, that cross; nothing at other times.
    fn expand_added(&self, example: &Example<'_>, out: &mut ExpandedFeatures) {
        if !self.catching_up {
            return;
        }
        let crosses = &self.features.namespace_crosses;
        if let Some(last) = crosses.last() {
            push_namespace_cross(example, crosses.len() - 1, last, out);
        }
    }

    fn after_learn(&mut self, example: &Example<'_>, learned: &Learned<'_>) {
        if self.count_learned(example.n_namespaces(), example.n_features()) {
            self.screen(example, learned);
        }
        self.judge_if_due();
    }

    /// Only the examples screened are read (and the first, which names the fields).
    fn reads_example(&self, shape: &ExampleShape) -> bool {
        if !self.screening() {
            return false;
        }
        match self.allowance_for(shape.n_features) {
            Some((allowance, cost)) => cost <= allowance,
            None => self.judges.is_none(),
        }
    }

    fn after_learn_unread(&mut self, shape: &ExampleShape, _learned: &Learned<'_>) {
        let screens = self.count_learned(shape.n_namespaces, shape.n_features);
        debug_assert!(!screens, "an example to screen was not read");
        self.judge_if_due();
    }
}

#[cfg(test)]
pub(crate) mod tests;
