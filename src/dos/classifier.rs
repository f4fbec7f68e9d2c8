//! [`PassiveAggressive`]: the multiclass passive-aggressive classifier the estimators train — the
//! difference-of-squares model of rank `d >= 1`, or the linear PA baseline (`rank = 0`) — built
//! from its typed options ([`PassiveAggressiveOptions`], what the Python layer gives).

use super::example::ExampleBatch;
use super::linear::LinearPa;
use super::model::DosModel;
use super::multiclass::{Multiclass, Strategy};
use super::online::TrainStats;
use super::solve::PaVariant;
use crate::error::PolyResult;

/// See the module docs. Names: `variant` is `"pa"`, `"pa1"` or `"pa2"` (with `c`),
/// `multiclass` `"ovo"` or `"ovr"`; `averaging` is the snapshot interval of the aligned average
/// (None: no average).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PassiveAggressiveOptions {
    pub n_classes: usize,
    pub n_features: usize,
    /// 0: the linear PA baseline; d >= 1: the DoS model of rank d.
    pub rank: usize,
    /// Seeds the DoS model's N(0, 1/#elements) initialization.
    pub seed: u64,
    pub variant: String,
    pub c: f64,
    pub multiclass: String,
    pub averaging: Option<u64>,
}

/// The two model families.
#[derive(Clone, Debug)]
pub(crate) enum Family {
    Dos(Multiclass<DosModel<f32>>),
    Linear(Multiclass<LinearPa>),
}

/// See the module docs.
#[derive(Clone, Debug)]
pub struct PassiveAggressive {
    pub(crate) family: Family,
    pub(crate) variant: PaVariant,
    pub(crate) rank: usize,
    pub(crate) seed: u64,
}

/// Runs `$body` with `$m` bound to the [`Multiclass`] of either family.
macro_rules! with_family {
    ($family:expr, |$m:ident| $body:expr) => {
        match $family {
            Family::Dos($m) => $body,
            Family::Linear($m) => $body,
        }
    };
}

impl PaVariant {
    /// The variant called `name` (`"pa"`, `"pa1"`, `"pa2"`) with aggressiveness `c`. `c` is
    /// checked for every variant: plain PA ignores it, but a C of 0, -1 or NaN is a mistake to
    /// report, not to drop silently.
    pub fn parse(name: &str, c: f64) -> PolyResult<Self> {
        PaVariant::PaI { c }.validate()?;
        let variant = match name {
            "pa" => PaVariant::Pa,
            "pa1" => PaVariant::PaI { c },
            "pa2" => PaVariant::PaII { c },
            other => return crate::invalid!("variant must be 'pa', 'pa1' or 'pa2', got {other:?}"),
        };
        variant.validate()
    }

    /// The name and C (1 for plain PA, which has none).
    pub fn parts(self) -> (&'static str, f64) {
        match self {
            PaVariant::Pa => ("pa", 1.0),
            PaVariant::PaI { c } => ("pa1", c),
            PaVariant::PaII { c } => ("pa2", c),
        }
    }
}

impl Strategy {
    /// `"ovo"` or `"ovr"`.
    pub fn parse(name: &str) -> PolyResult<Self> {
        match name {
            "ovo" => Ok(Strategy::OneVsOne),
            "ovr" => Ok(Strategy::OneVsRest),
            other => crate::invalid!("multiclass must be 'ovo' or 'ovr', got {other:?}"),
        }
    }

    /// `"ovo"` or `"ovr"`.
    pub fn short_name(self) -> &'static str {
        match self {
            Strategy::OneVsOne => "ovo",
            Strategy::OneVsRest => "ovr",
        }
    }
}

impl PassiveAggressive {
    /// A new classifier (see [`PassiveAggressiveOptions`]).
    pub fn new(options: &PassiveAggressiveOptions) -> PolyResult<Self> {
        let variant = PaVariant::parse(&options.variant, options.c)?;
        let strategy = Strategy::parse(&options.multiclass)?;
        let (n_classes, n_features) = (options.n_classes, options.n_features);
        let family = if options.rank == 0 {
            Family::Linear(Multiclass::linear(
                n_classes,
                n_features,
                variant,
                strategy,
                options.averaging,
            )?)
        } else {
            Family::Dos(Multiclass::dos(
                n_classes,
                n_features,
                options.rank,
                options.seed,
                variant,
                strategy,
                options.averaging,
            )?)
        };
        Ok(Self { family, variant, rank: options.rank, seed: options.seed })
    }

    /// The options this classifier was built with.
    pub fn options(&self) -> PassiveAggressiveOptions {
        let (variant, c) = self.variant.parts();
        with_family!(&self.family, |m| PassiveAggressiveOptions {
            n_classes: m.n_classes(),
            n_features: m.n_features(),
            rank: self.rank,
            seed: self.seed,
            variant: variant.to_owned(),
            c,
            multiclass: m.strategy().short_name().to_owned(),
            averaging: m.averaging_interval(),
        })
    }

    pub fn n_features(&self) -> usize {
        with_family!(&self.family, |m| m.n_features())
    }

    pub fn n_classes(&self) -> usize {
        with_family!(&self.family, |m| m.n_classes())
    }

    /// Training counts since the model was created.
    pub fn stats(&self) -> TrainStats {
        with_family!(&self.family, |m| m.stats())
    }

    /// Learns a batch in stream order (`classes`: ids 0..C-1); returns the batch's counts.
    pub fn learn_batch(&mut self, batch: &ExampleBatch, classes: &[u32]) -> PolyResult<TrainStats> {
        with_family!(&mut self.family, |m| m.learn_batch(batch, classes))
    }

    /// [`Self::learn_batch`] with a weight per example ([`Multiclass::learn_weighted`]).
    pub fn learn_weighted(
        &mut self,
        batch: &ExampleBatch,
        classes: &[u32],
        weights: Option<&[f64]>,
    ) -> PolyResult<TrainStats> {
        with_family!(&mut self.family, |m| m.learn_weighted(batch, classes, weights))
    }

    /// Class ids (from the aligned averages when `use_average` and an average exists).
    pub fn predict(&self, batch: &ExampleBatch, use_average: bool) -> PolyResult<Vec<u32>> {
        with_family!(&self.family, |m| m.predict(batch, use_average))
    }

    /// Binary-model scores, row-major (n_rows x n_models).
    pub fn decision_scores(&self, batch: &ExampleBatch, use_average: bool) -> PolyResult<Vec<f64>> {
        with_family!(&self.family, |m| m.decision_scores(batch, use_average))
    }
}
