//! [`LearnerOptions`]: the one typed description of an online model's options, as the Python
//! layer gives them (a dict turned into this struct by serde, so every name is checked against
//! these fields and an unknown or missing one is an error naming it) and as a loaded model
//! reports them back. Ranges are checked once, by the engine types the options build.

use super::feature_set::{FeatureSet, FeatureSetOptions};
use crate::error::PolyResult;
use crate::learner::ffm::FfmOptions;
use crate::learner::{Learner, LearnerConfig, Loss, LossParams, UpdateRule};

/// See the module docs. Field meanings: [`LearnerConfig`], [`UpdateRule`], [`FeatureSet`].
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LearnerOptions {
    pub bits: u32,
    /// The table grows up to `2^max_bits` slots ([`LearnerConfig::max_bits`]; fixed when not
    /// given).
    #[serde(default)]
    pub max_bits: Option<u32>,
    /// A name of the loss registry ([`Loss::NAMES`]).
    pub loss: String,
    pub quantile_tau: f64,
    pub adaptive: bool,
    pub normalized: bool,
    pub invariant: bool,
    pub eta0: f64,
    pub power_t: f64,
    pub initial_t: f64,
    pub l1: f64,
    pub l2: f64,
    /// Add the constant (bias) feature.
    pub constant: bool,
    /// One name per sparse input (namespace).
    pub namespaces: Vec<String>,
    pub features: FeatureSetOptions,
    /// A learned scale per field ([`crate::learner::field_scales`]).
    pub field_scales: bool,
    /// The weight every slot starts at ([`LearnerConfig::initial_weight`]; 0 when not given).
    #[serde(default)]
    pub initial_weight: f64,
    /// A field-aware factorization beside the weights ([`LearnerConfig::ffm`]; none when not
    /// given).
    #[serde(default)]
    pub ffm: Option<FfmOptions>,
}

impl LearnerOptions {
    /// The engine's defaults ([`LearnerConfig::default`], the inputs alone, the constant): what
    /// the Python layer's declared defaults are held to by a test.
    pub fn defaults() -> Self {
        let linear = FeatureSetOptions::Interactions { degree: 1, namespace_crosses: Vec::new() };
        Self::from_config(&LearnerConfig::default(), linear, true)
    }

    /// A new, untrained model with these options.
    pub fn build(self) -> PolyResult<Learner<FeatureSet>> {
        let loss = Loss::new(&self.loss, &LossParams { quantile_tau: self.quantile_tau })?;
        let config = LearnerConfig {
            bits: self.bits,
            max_bits: self.max_bits,
            loss,
            rule: UpdateRule {
                adaptive: self.adaptive,
                normalized: self.normalized,
                invariant: self.invariant,
            },
            eta0: self.eta0,
            power_t: self.power_t,
            initial_t: self.initial_t,
            l1: self.l1,
            l2: self.l2,
            namespaces: self.namespaces,
            field_scales: self.field_scales,
            initial_weight: self.initial_weight,
            ffm: self.ffm,
        };
        Learner::new(config, FeatureSet::new(self.features, self.constant)?)
    }

    /// The options `learner` was built with.
    pub fn of(learner: &Learner<FeatureSet>) -> Self {
        let (features, constant) = learner.expansion().options();
        Self::from_config(learner.config(), features, constant)
    }

    fn from_config(config: &LearnerConfig, features: FeatureSetOptions, constant: bool) -> Self {
        LearnerOptions {
            bits: config.bits,
            max_bits: config.max_bits,
            loss: config.loss.name().to_owned(),
            quantile_tau: config.loss.params().quantile_tau,
            adaptive: config.rule.adaptive,
            normalized: config.rule.normalized,
            invariant: config.rule.invariant,
            eta0: config.eta0,
            power_t: config.power_t,
            initial_t: config.initial_t,
            l1: config.l1,
            l2: config.l2,
            constant,
            namespaces: config.namespaces.clone(),
            features,
            field_scales: config.field_scales,
            initial_weight: config.initial_weight,
            ffm: config.ffm.clone(),
        }
    }
}
