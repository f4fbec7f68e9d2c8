//! apple: adaptive polynomial expansion (docs/algorithms.md §4) on top of the hashed learner.
//!
//! One concept per module:
//! * [`categorical`]: which namespaces are categorical fields (left to field crosses);
//! * [`monomial`]: canonical monomial identity (order-independent key) and names;
//! * [`parents`]: the parent set and its fast membership test;
//! * [`walk`]: per-example enumeration of the current feature set, each monomial once;
//! * [`schedule`]: when to expand (6 epochs over a known run, or doubling for streams);
//! * [`window`]: the recent examples remembered before an expansion;
//! * [`ranking`]: the registry of rankings of candidate parents (|w|·rms, max |w|, SSM);
//! * [`select`]: candidates, the ranking's top `s` and the fall-back;
//! * [`adaptive`]: [`Apple`], the [`crate::learner::Expansion`] that ties them together.

pub mod adaptive;
pub mod categorical;
pub mod monomial;
pub mod parents;
pub mod ranking;
pub mod schedule;
pub mod select;
pub mod stored;
pub mod walk;
pub mod window;

pub use adaptive::{Apple, AppleConfig, AppleProgress};
pub use monomial::Monomial;
pub use parents::Parent;
pub use ranking::Ranking;
pub use schedule::ScheduleKind;

#[cfg(test)]
pub(crate) mod tests;
