//! The learner's configuration ([`LearnerConfig`]) and what it reports: its progress, label
//! range, a fit's report and a row's record.

use super::*;

/// Largest supported `bits`: slots are u32.
pub const MAX_BITS: u32 = 32;

/// Everything that defines the learning algorithm (saved with the model as this struct's serde
/// form; a field missing from a stored model takes its [`Default`] value).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LearnerConfig {
    /// The table has `2^bits` weights, `1..=MAX_BITS` (18 by default). A growing table's
    /// `bits` is its size now.
    pub bits: u32,
    /// The table grows as it fills, up to `2^max_bits` weights ([`super::growth`]); `None`
    /// (the default, Vowpal Wabbit's model) keeps it at `2^bits`.
    pub max_bits: Option<u32>,
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
    /// A field-aware factorization learned beside the weights ([`crate::learner::ffm`]); its
    /// fields are namespaces' fields ([`namespace_field`]). None by default.
    pub ffm: Option<FfmOptions>,
}

impl Default for LearnerConfig {
    fn default() -> Self {
        LearnerConfig {
            bits: 18,
            max_bits: None,
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
            ffm: None,
        }
    }
}

impl LearnerConfig {
    /// Checks every field; errors name the parameter and its value.
    pub fn validate(&self) -> PolyResult<()> {
        if !(1..=MAX_BITS).contains(&self.bits) {
            return crate::invalid!("bits must be an integer in 1..={MAX_BITS}, got {}", self.bits);
        }
        if let Some(max_bits) = self.max_bits {
            if !(self.bits..=MAX_BITS).contains(&max_bits) {
                return crate::invalid!(
                    "max_bits must be an integer in {}..={MAX_BITS} (at least bits), got {max_bits}",
                    self.bits
                );
            }
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
        if let Some(ffm) = &self.ffm {
            ffm.validate()?;
            let n = self.namespaces.len();
            if let Some(&field) = ffm.fields.iter().find(|&&f| !(1..=n as u32).contains(&f)) {
                return crate::invalid!(
                    "ffm field {field} is not a namespace's field (1..={n} for {n} namespaces)"
                );
            }
        }
        Ok(())
    }

    /// The bits strings are hashed into ([`crate::learner::text`]): a growing table's
    /// `max_bits`, which stays the same as the table grows (a string's feature must too), else
    /// `bits`.
    pub fn string_bits(&self) -> u32 {
        self.max_bits.unwrap_or(self.bits)
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

/// What learning does with a row whose numbers overflow (a feature whose square is beyond
/// single precision, an infinite score, loss or step). Not stored: a run's choice.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OverflowPolicy {
    /// The row is an error naming it, the model as it was before the row.
    #[default]
    Refuse,
    /// Vowpal Wabbit's behaviour, for `polars-poly train`: the row is counted, predicted 0 when
    /// its score is not finite, and no weight moves; each such row is kept for the caller to
    /// warn of ([`super::Learner::take_overflowed_rows`]).
    PredictZero,
}

impl OverflowPolicy {
    /// The policy named as the Python layer and the command line name it: `"refuse"` or
    /// `"vw"`.
    pub fn parse(name: &str) -> crate::error::PolyResult<Self> {
        match name {
            "refuse" => Ok(Self::Refuse),
            "vw" => Ok(Self::PredictZero),
            other => crate::invalid!("overflow={other:?} is not one of vw, refuse"),
        }
    }
}

/// A row learning skipped under [`OverflowPolicy::PredictZero`].
#[derive(Clone, Debug, PartialEq)]
pub struct OverflowedRow {
    pub row: usize,
    pub reason: String,
}
