//! How apple ranks candidate parents: one file per ranking, registered by one line below.
//!
//! A ranking scores a [`Candidate`] (a non-parent monomial met in the remembered examples) from
//! its weight slot and, if it needs them, its occurrences in those examples. The selection
//! ([`super::select`]) keeps the best `s`; ties break on (degree, factor hashes).
//!
//! Adding a ranking: a file with a unit type implementing [`RankingRule`], and its line in the
//! registry below.

mod distinct;
mod magnitude;
mod max_magnitude;
mod per_child;
mod ssm;
mod typical;

pub use distinct::Distinct;
pub use magnitude::Magnitude;
pub use max_magnitude::MaxMagnitude;
pub use per_child::PerChild;
pub use ssm::Ssm;
pub use typical::Typical;

/// The learned weight of a slot, as the rankings see it.
pub trait SlotWeights {
    /// `|w|` of the slot with (unmasked) hash `slot_hash`, regularization applied.
    fn magnitude(&self, slot_hash: u64) -> f64;
    /// The slot's normalizer (largest `|x|` seen) under the normalized update rule, else 1.
    fn normalizer(&self, slot_hash: u64) -> f64;
}

/// What a ranking knows of a candidate. With [`RankingRule::NEEDS_OCCURRENCES`] false only
/// `slot` is filled (the rest is 0) and candidates are scored as they stream by.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Candidate {
    /// The (unmasked) hash of the candidate's weight slot.
    pub slot: u64,
    /// `Σ r·m(x)` over the remembered examples, `r` the residual (minus the loss derivative at
    /// the progressive prediction).
    pub residual_dot: f64,
    /// `Σ m(x)²` over the remembered examples.
    pub sum_squares: f64,
    /// Remembered examples enumerated.
    pub examples: usize,
    /// Remembered examples in which the candidate occurs (its value nonzero).
    pub occurrences: usize,
    /// Whether a factor repeats (a power, as `x_1²·x_2`).
    pub power: bool,
}

/// One ranking of candidate parents (see the module docs).
pub trait RankingRule {
    /// The name users give (`Apple(ranking=...)`).
    const NAME: &'static str;
    /// Whether the score needs the candidate's occurrences (accumulated per monomial) or only
    /// its weight slot (streamed: one weight load per enumerated monomial).
    const NEEDS_OCCURRENCES: bool;
    /// The candidate's score: higher ranks first.
    fn score<W: SlotWeights>(candidate: &Candidate, weights: &W) -> f64;
}

crate::named_registry! {
    /// A ranking of candidate parents (see the module docs).
    pub enum Ranking: RankingRule, visitor RankingVisitor, option "ranking" {
        Magnitude => magnitude::Magnitude,
        MaxMagnitude => max_magnitude::MaxMagnitude,
        Ssm => ssm::Ssm,
        PerChild => per_child::PerChild,
        Distinct => distinct::Distinct,
        Typical => typical::Typical,
    }
}
