//! Difference-of-squares (DoS) classification with passive-aggressive updates (paper:
//! difference-of-squares-passive-aggressive; docs/algorithms.md §5), the linear PA baseline, aligned
//! averaging over time and one-vs-one / one-vs-rest multiclass reductions.
//!
//! * [`example`] — validated inputs ([`ExampleBatch`], dense or sparse, z = [x; 1]).
//! * [`solve`] — the step of eq. (18) to machine precision, PA-I/PA-II caps, the zero-norm rule.
//! * [`model`] — [`DosModel`] (storage layout, score, update).
//! * [`linear`] — [`LinearPa`].
//! * [`symmetry`] — boosts, rotations, Procrustes alignment, aligned averages.
//! * [`online`] — the [`BinaryLearner`] contract, [`RunningAverage`], [`OnlineBinary`].
//! * [`multiclass`] — [`Multiclass`] (parallel, deterministic).
//! * [`classifier`] — [`PassiveAggressive`], the DoS or linear multiclass classifier built from its
//!   options ([`PassiveAggressiveOptions`]); [`stored`] — its section of the model file.

pub mod average;
pub mod classifier;
pub mod example;
pub mod linear;
pub mod model;
pub mod multiclass;
pub mod online;
pub mod solve;
pub mod stored;
pub mod symmetry;

pub use classifier::{PassiveAggressive, PassiveAggressiveOptions};
pub use example::{ExampleBatch, ExampleRef, Sign};
pub use linear::LinearPa;
pub use model::{DosModel, Real, Step};
pub use multiclass::{Multiclass, Strategy};
pub use online::{BinaryLearner, OnlineBinary, RunningAverage, TrainStats};
pub use solve::PaVariant;
