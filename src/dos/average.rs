//! Averaging classifiers trained apart (distributed training, docs/distributed.md): shards that
//! each learned from one starting classifier become one classifier again.
//!
//! Each binary model is the weighted aligned average of the shards' (§3.4: boosted to minimum
//! norm and rotated onto the average before each term is mixed in), weighted by the examples
//! each shard learned in the round. A linear PA model is plainly averaged. The running averages
//! (what `predict` uses) are averaged the same way, weighted by the terms each added in the
//! round, and their term counts add up. Every shard starts from the same classifier, so the
//! counts (examples seen, steps, updates, mistakes) are the start's plus what each added.
//!
//! The terms are mixed in shard order: the result is deterministic, so a round recomputed
//! after a worker is lost gives the same classifier.

use super::classifier::{Family, PassiveAggressive};
use super::linear::LinearPa;
use super::model::DosModel;
use super::multiclass::Multiclass;
use super::online::{BinaryLearner, RunningAverage, TrainStats};
use crate::error::{PolyError, PolyResult};

fn invalid(message: &str) -> PolyError {
    PolyError::InvalidInput(message.to_owned())
}

/// The weighted (aligned) average of `models` with `weights` (those of weight 0 are skipped);
/// `None` when every weight is 0.
fn weighted<M: BinaryLearner>(models: &[&M], weights: &[u64]) -> Option<M> {
    let mut average: Option<M> = None;
    let mut total = 0u64;
    for (model, &weight) in models.iter().zip(weights) {
        if weight == 0 {
            continue;
        }
        total += weight;
        let share = weight as f64 / total as f64;
        match &mut average {
            Some(average) => model.mix_into(average, share),
            None => {
                let mut first = (*model).clone();
                model.mix_into(&mut first, 1.0);
                average = Some(first);
            }
        }
    }
    average
}

fn stats_added(start: TrainStats, end: TrainStats) -> TrainStats {
    TrainStats {
        examples: end.examples.saturating_sub(start.examples),
        steps: end.steps.saturating_sub(start.steps),
        updates: end.updates.saturating_sub(start.updates),
        degenerate: end.degenerate.saturating_sub(start.degenerate),
        mistakes: end.mistakes.saturating_sub(start.mistakes),
    }
}

impl<M: BinaryLearner> Multiclass<M> {
    /// The average of `shards`, each trained from `start` (`None`: from the same fresh
    /// classifier) for one round; see the module docs.
    pub fn average(start: Option<&Self>, shards: &[&Self]) -> PolyResult<Self> {
        let first = shards.first().ok_or_else(|| invalid("no shard classifiers to average"))?;
        let shape =
            |m: &Self| (m.n_classes(), m.strategy(), m.averaging_interval(), m.n_features());
        if shards.iter().chain(start.as_ref()).any(|m| shape(m) != shape(first)) {
            return Err(invalid("the shards' classifiers differ in classes, strategy or features"));
        }
        let (seen0, stats0) = start.map_or((0, TrainStats::default()), |s| (s.seen(), s.stats()));
        let learned: Vec<u64> = shards.iter().map(|s| s.seen().saturating_sub(seen0)).collect();
        if learned.iter().all(|&n| n == 0) {
            return Err(invalid("no shard learned an example in this round"));
        }
        let n_models = first.models().len();
        let same_models = |m: &Self| {
            m.models().iter().zip(first.models()).all(|(a, b)| a.same_shape(b))
                && m.averages()
                    .iter()
                    .filter_map(|a| a.get())
                    .all(|a| a.same_shape(&first.models()[0]))
        };
        if !shards.iter().chain(start.as_ref()).all(|m| same_models(m)) {
            return Err(invalid("the shards' binary models differ in shape (rank or features)"));
        }
        let mut models = Vec::with_capacity(n_models);
        let mut averages = Vec::with_capacity(n_models);
        for m in 0..n_models {
            let current: Vec<&M> = shards.iter().map(|s| &s.models()[m]).collect();
            models.push(weighted(&current, &learned).unwrap_or_else(|| first.models()[m].clone()));
            averages.push(merged_average(start.map(|s| &s.averages()[m]), shards, m)?);
        }
        let seen = seen0 + learned.iter().sum::<u64>();
        let stats =
            shards.iter().map(|s| stats_added(stats0, s.stats())).fold(stats0, TrainStats::merge);
        Multiclass::from_parts(
            first.n_classes(),
            first.strategy(),
            first.averaging_interval(),
            models,
            averages,
            seen,
            stats,
        )
    }
}

/// Binary model `m`'s running averages of the shards, averaged by the terms each added.
fn merged_average<M: BinaryLearner>(
    start: Option<&RunningAverage<M>>,
    shards: &[&Multiclass<M>],
    m: usize,
) -> PolyResult<RunningAverage<M>> {
    let count0 = start.map_or(0, |a| a.count());
    let terms: Vec<u64> =
        shards.iter().map(|s| s.averages()[m].count().saturating_sub(count0)).collect();
    let present: Vec<&M> = shards.iter().filter_map(|s| s.averages()[m].get()).collect();
    if present.len() != shards.len() || terms.iter().all(|&t| t == 0) {
        // No new term anywhere (or no average at all yet): the start's average stands.
        return match start {
            Some(a) => RunningAverage::from_parts(a.get().cloned(), a.count()),
            None => Ok(RunningAverage::new()),
        };
    }
    let average = weighted(&present, &terms);
    RunningAverage::from_parts(average, count0 + terms.iter().sum::<u64>())
}

impl PassiveAggressive {
    /// The average of `shards`, each trained from `start` for one round (see the module docs).
    pub fn average(start: Option<&Self>, shards: &[&Self]) -> PolyResult<Self> {
        let first = shards.first().ok_or_else(|| invalid("no shard classifiers to average"))?;
        let same =
            |c: &Self| (c.variant, c.rank, c.seed) == (first.variant, first.rank, first.seed);
        if !shards.iter().chain(start.as_ref()).all(|c| same(c)) {
            return Err(invalid("the shards' classifiers were built with other options"));
        }
        let family = match &first.family {
            Family::Dos(_) => {
                let shards = shards.iter().map(|c| dos_of(c)).collect::<PolyResult<Vec<_>>>()?;
                let start = start.map(dos_of).transpose()?;
                Family::Dos(Multiclass::average(start, &shards)?)
            }
            Family::Linear(_) => {
                let shards = shards.iter().map(|c| linear_of(c)).collect::<PolyResult<Vec<_>>>()?;
                let start = start.map(linear_of).transpose()?;
                Family::Linear(Multiclass::average(start, &shards)?)
            }
        };
        Ok(PassiveAggressive { family, variant: first.variant, rank: first.rank, seed: first.seed })
    }
}

fn dos_of(classifier: &PassiveAggressive) -> PolyResult<&Multiclass<DosModel<f32>>> {
    match &classifier.family {
        Family::Dos(m) => Ok(m),
        Family::Linear(_) => Err(invalid("cannot average a DoS and a linear classifier")),
    }
}

fn linear_of(classifier: &PassiveAggressive) -> PolyResult<&Multiclass<LinearPa>> {
    match &classifier.family {
        Family::Linear(m) => Ok(m),
        Family::Dos(_) => Err(invalid("cannot average a DoS and a linear classifier")),
    }
}

#[cfg(test)]
mod tests;
