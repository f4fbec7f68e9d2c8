//! Hashed online learning: Vowpal Wabbit's core learning loop (docs/algorithms.md §3).
//!
//! One concept per module:
//! * [`weights`]: the table of `2^bits` weight slots and their per-weight update state;
//! * [`loss`]: squared, logistic, hinge and quantile losses, their derivatives and the
//!   importance-invariant updates;
//! * [`update`]: the update rules (plain SGD, adaptive, normalized, Vowpal Wabbit's default);
//! * [`example`]: a canonical, hashed example with namespaces;
//! * [`batch`]: batches of examples and how examples are built from them, a block of rows at a
//!   time, column by column;
//! * [`in_order`]: rows learned as given, neither sorted nor summed (Vowpal Wabbit's);
//! * `builder`: a thread beside the learner that builds (and expands) the blocks ahead of it;
//! * [`features`]: [`ExpandedFeatures`], the per-example buffer enumerators fill, and the
//!   fields its features come from;
//! * [`field_scales`]: a learned scale per field (opt-in; Vowpal Wabbit has none);
//! * [`ffm`]: field-aware factorization, latent vectors per feature and other field;
//! * [`expansion`]: the [`Expansion`] interface every feature enumerator implements, and the
//!   fixed one (linear / quadratic / cubic / namespace crosses); further enumerators (apple)
//!   live above this module and are named only by `crate::model`;
//! * [`learner`]: the [`Learner`] (learn, predict, batches, passes, holdout, progressive loss);
//! * `averaging`: tail averaging of the weights over the end of a fit;
//! * [`recent`]: the recent learned examples, replayed for features an enumerator adds;
//! * [`stored`]: the learner's section of the model file (`crate::model::file`);
//! * [`text`]: a column of strings as a namespace, hashed as it is read.
//!
//! No PyO3 or Polars types here; the Python layer is `crate::python::learner`.

pub(crate) mod averaging;
pub mod batch;
mod builder;
pub mod example;
pub mod expansion;
pub mod features;
pub mod ffm;
pub mod field_scales;
pub mod fit_options;
pub mod in_order;
#[allow(clippy::module_inception)]
pub mod learner;
pub mod loss;
pub mod numbers;
pub mod recent;
pub mod stored;
pub mod text;
pub mod update;
pub mod weights;

pub use batch::{Batch, BlockRows, NamespaceRows, OneHotColumns};
pub use example::{Example, ExampleBuffer, ExampleShape};
pub use expansion::{Expansion, Interactions, Learned};
pub use features::{ExampleEnd, ExpandedFeatures};
pub use fit_options::{shuffled_order, FitOptions};
pub use in_order::InOrderRows;
pub use learner::{
    BuilderThread, FitReport, LabelRange, Learner, LearnerConfig, OverflowPolicy, OverflowedRow,
    Progress, RowRecord, MAX_BITS,
};
pub use loss::{Loss, LossParams};
pub use numbers::{NumberRows, Numbers};
pub use text::{HashedStrings, Strings};
pub use update::{GdState, UpdateRule};

#[cfg(test)]
pub(crate) mod tests;
