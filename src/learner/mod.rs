//! Hashed online learning: Vowpal Wabbit's core learning loop (docs/algorithms.md §3).
//!
//! One concept per module:
//! * [`weights`]: the table of `2^bits` weight slots and their per-weight update state;
//! * [`loss`]: squared, logistic, hinge and quantile losses, their derivatives and the
//!   importance-invariant updates;
//! * [`update`]: the update rules (plain SGD, adaptive, normalized, Vowpal Wabbit's default);
//! * [`example`]: a canonical, hashed example with namespaces;
//! * [`expansion`]: feature enumerators (linear / quadratic / cubic / namespace crosses) and the
//!   [`Expansion`] interface further enumerators (apple) implement;
//! * [`feature_set`]: [`FeatureSet`], a fixed expansion or apple (what model files hold);
//! * [`learner`]: the [`Learner`] (learn, predict, batches, passes, holdout, progressive loss);
//! * `averaging`: tail averaging of the weights over the end of a fit;
//! * [`model_io`]: the versioned, checksummed model file.
//!
//! No PyO3 or Polars types here; the Python layer is `crate::python::learner`.

pub(crate) mod averaging;
pub mod example;
pub mod expansion;
pub mod feature_set;
#[allow(clippy::module_inception)]
pub mod learner;
pub mod loss;
pub mod model_io;
pub mod update;
pub mod weights;

pub use example::{Example, ExampleBuffer};
pub use expansion::{ExpandedFeatures, Expansion, Interactions, Learned};
pub use feature_set::FeatureSet;
pub use learner::{
    Batch, FitOptions, FitReport, LabelRange, Learner, LearnerConfig, NamespaceRows, Progress,
    MAX_BITS,
};
pub use loss::Loss;
pub use update::{GdState, UpdateRule};

#[cfg(test)]
mod tests;
