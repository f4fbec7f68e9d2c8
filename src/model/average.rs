//! Averaging online models trained on separate shards from one starting model: the all-reduce
//! step of distributed training (docs/algorithms.md §4, "Parallel version"; docs/distributed.md).
//!
//! Every shard starts a round from the same model, learns its own rows, and the round ends with
//! one model again:
//! * **weights** are averaged slot by slot, either weighted by the importance each shard learned
//!   in the round ([`Weighting::Examples`]) or, as Vowpal Wabbit's `accumulate_weighted_avg`
//!   does, per slot by each shard's AdaGrad sum ([`Weighting::Adaptive`]): a shard that saw a
//!   feature often outweighs one that saw it once. Lazy L1/L2 state is folded into the averaged
//!   weights (each shard's truncation and scale applied first).
//! * the AdaGrad sums are averaged with the same weights (Vowpal Wabbit's "crude max"
//!   `Σ g²ₖ / Σ gₖ` under [`Weighting::Adaptive`]); the normalizers, being maxima of `|x|`, take
//!   the largest;
//! * counters (the learning-rate clock, the normalized rule's sums, the progressive-loss record)
//!   add up what each shard learned since the start: the merged model has the counts a single
//!   machine would have after the same rows;
//! * field scales, when the model has them, are averaged field by field as the weights are, each
//!   shard's crosses renumbered to their place in the merged model (see `merged_scales` for
//!   what averaging scales and weights apart costs);
//! * apple's parent set is the union of the shards' sets, and it is frozen: the merged model
//!   keeps the epochs schedule with no expansion left, so later rounds train a fixed feature set
//!   (the paper's protocol: apple runs locally in the first pass only). Field crosses likewise:
//!   the union of the crosses the shards found, screening no more; beside apple, a field is
//!   categorical where every shard saw it so.
//! * a field-aware factorization's tables (latent values and AdaGrad sums) are averaged by the
//!   examples each shard learned, whatever the weighting of the weights.
//!
//! The result is deterministic in the order of the shards, so a round that is recomputed (a
//! worker lost) gives the same model. Averages compose: the average of partial averages (each
//! counting what its shards learned) is the average of all shards, exactly for
//! [`Weighting::Examples`] up to rounding, and approximately for [`Weighting::Adaptive`] (a
//! partial average keeps `Σg²ₖ/Σgₖ`, not `Σgₖ`), so many shards can be averaged as a tree.

use std::collections::HashSet;

use super::{FeatureSet, OnlineModel};
use crate::apple::categorical::CategoricalNamespaces;
use crate::apple::{Apple, AppleConfig, Parent, ScheduleKind};
use crate::error::{PolyError, PolyResult};
use crate::field_apple::{Cross, FieldApple, FieldAppleConfig};
use crate::learner::features::cross_field;
use crate::learner::ffm::Ffm;
use crate::learner::field_scales::FieldScales;
use crate::learner::learner::Growth;
use crate::learner::update::trunc_weight;
use crate::learner::weights::{tagged_owner, WeightTable, G2, NORM, RATE, W};
use crate::learner::{GdState, LabelRange, Learner, LearnerConfig, Progress};

/// How the shards' weights are weighted in the average (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Weighting {
    /// By the importance (examples times their weights) each shard learned in the round.
    Examples,
    /// Per slot by each shard's AdaGrad sum of squared gradients (needs the adaptive rule).
    Adaptive,
}

impl Weighting {
    /// The names the Python layer uses.
    pub fn from_name(name: &str) -> PolyResult<Self> {
        match name {
            "examples" => Ok(Weighting::Examples),
            "adaptive" => Ok(Weighting::Adaptive),
            other => crate::invalid!("averaging must be 'examples' or 'adaptive', got {other:?}"),
        }
    }
}

/// The average of `shards`, each trained from `start` (`None`: from a fresh model) for one
/// round (see the module docs). Fails when the shards were not trained from one configuration,
/// when none learned an example, or for a feature set that cannot be merged.
pub fn average(
    start: Option<&OnlineModel>,
    shards: &[&OnlineModel],
    weighting: Weighting,
) -> PolyResult<OnlineModel> {
    let first = shards.first().ok_or_else(|| invalid("no shard models to average"))?;
    // Growing tables may have grown apart: the average has the largest, the smaller ones read
    // as their replicas (see `WeightTable::replicated`).
    let bits = shards.iter().chain(start.iter()).map(|s| s.config().bits).max().unwrap_or(0);
    let at_bits = |model: &OnlineModel| LearnerConfig { bits, ..model.config().clone() };
    let config = &at_bits(first);
    for (k, shard) in shards.iter().enumerate() {
        if &at_bits(shard) != config {
            return Err(invalid(&format!(
                "shard {k}'s model was trained with other options than shard 0's"
            )));
        }
    }
    if start.is_some_and(|s| &at_bits(s) != config) {
        return Err(invalid("the shards were not trained from the starting model's options"));
    }
    if weighting == Weighting::Adaptive && !config.rule.adaptive {
        return Err(invalid("averaging='adaptive' needs adaptive=True (AdaGrad sums to weigh by)"));
    }
    let start_progress = start.map(|s| s.progress().clone()).unwrap_or_default();
    let learned: Vec<f64> =
        shards.iter().map(|s| s.progress().weight - start_progress.weight).collect();
    if learned.iter().any(|w| w.is_nan() || *w < 0.0) {
        return Err(invalid("a shard model was not trained from the starting model"));
    }
    let total: f64 = learned.iter().sum();
    if total.is_nan() || total <= 0.0 {
        return Err(invalid("no shard learned an example in this round"));
    }
    let shares: Vec<f64> = learned.iter().map(|w| w / total).collect();

    let weights = averaged_table(shards, &shares, weighting, bits)?;
    let start_state = start.map_or_else(|| GdState::new(config.initial_t), |s| s.state().clone());
    let state = summed_state(&start_state, shards);
    let progress = summed_progress(&start_progress, shards);
    let labels = shards.iter().map(|s| s.label_range()).chain(start.map(|s| s.label_range())).fold(
        first.label_range(),
        |a, b| LabelRange { min: a.min.min(b.min), max: a.max.max(b.max) },
    );
    let expansion = merged_features(start, shards)?;
    let scales = merged_scales(shards, &shares, weighting, &expansion);
    // The factorization's tables, weighted by the examples each shard learned.
    let ffm = match shards.iter().map(|s| s.ffm()).collect::<Option<Vec<_>>>() {
        Some(parts) if config.ffm.is_some() => Some(Ffm::averaged(&parts, &shares)?),
        _ => None,
    };
    let mut model =
        Learner::from_parts(config.clone(), expansion, weights, state, labels, progress, ffm)?;
    if let Some(scales) = scales {
        model.set_field_scales(scales);
    }
    // The share of slots that were in use when the average's table was last grown, as far as
    // the shards tell: a shard of the same size knows its own, a smaller one is all replicas.
    let load_at_growth = shards
        .iter()
        .map(|s| {
            if s.config().bits == bits {
                s.growth().load_at_growth
            } else {
                s.weights().load(1 << 14)
            }
        })
        .fold(0.0, f64::max);
    model.set_growth(Growth { load_at_growth });
    Ok(model)
}

/// The shards' field scales averaged as their weights are ([`FieldScales::averaged`]), each
/// shard's crosses renumbered to their place in the merged model's (`None` without scales).
///
/// The weights and the scales are averaged apart, so a slot's merged contribution
/// `mean(a) mean(w)` is not `mean(a w)`: exact for shards with equal scales, and otherwise off
/// by the covariance of the shards' scales and weights. Shards of one distribution trained from
/// one model learn close scales; measured in docs/distributed.md ("Field crosses on hashed
/// fields").
fn merged_scales(
    shards: &[&OnlineModel],
    shares: &[f64],
    weighting: Weighting,
    merged: &FeatureSet,
) -> Option<FieldScales> {
    let scales: Vec<&FieldScales> =
        shards.iter().map(|s| s.field_scales()).collect::<Option<_>>()?;
    let n = shards[0].config().namespaces.len();
    let first_cross = cross_field(n, 0);
    let merged_crosses = merged.field_apple().map(FieldApple::crosses).unwrap_or_default();
    let renumber = |k: usize, field: u32| -> u32 {
        let Some(fields) = shards[k].expansion().field_apple() else { return field };
        let Some(p) = field.checked_sub(first_cross) else { return field };
        let pair = fields.crosses().get(p as usize).map(|cross| &cross.fields);
        let q = merged_crosses.iter().position(|cross| Some(&cross.fields) == pair);
        // Every shard's cross is in the union (`frozen_crosses`).
        q.map_or(field, |q| cross_field(n, q))
    };
    Some(FieldScales::averaged(&scales, shares, weighting == Weighting::Adaptive, renumber))
}

fn invalid(message: &str) -> PolyError {
    PolyError::InvalidInput(message.to_owned())
}

/// The averaged weight table of `2^bits` slots (see the module docs), a shard's smaller table
/// grown to it first ([`WeightTable::replicated`]); unallocated when no shard trained.
fn averaged_table(
    shards: &[&OnlineModel],
    shares: &[f64],
    weighting: Weighting,
    bits: u32,
) -> PolyResult<WeightTable> {
    let first = shards[0].weights();
    let mut out = WeightTable::new(bits, first.stride());
    let trained: Vec<(&OnlineModel, f64)> = shards
        .iter()
        .zip(shares)
        .filter(|(s, _)| s.weights().is_allocated())
        .map(|(s, &share)| (*s, share))
        .collect();
    if trained.is_empty() {
        return Ok(out);
    }
    out.ensure_allocated()?;
    // Every slot is written: huge pages from the start (see `WeightTable::use_huge_pages`).
    out.use_huge_pages();
    let stride = out.stride();
    // Each shard's lazy L1 truncation and L2 scale, applied to its stored weights.
    let folds: Vec<(f32, f32)> = trained
        .iter()
        .map(|(s, _)| (s.state().gravity as f32, s.state().contraction as f32))
        .collect();
    // A smaller table is read grown to this size, as the shard would have grown it.
    let grown: Vec<Option<WeightTable>> = trained
        .iter()
        .map(|(s, _)| (s.weights().bits() < bits).then(|| s.weights().replicated(bits)).transpose())
        .collect::<PolyResult<_>>()?;
    let tables: Vec<&[f32]> = trained
        .iter()
        .zip(&grown)
        .map(|((s, _), g)| g.as_ref().map_or(s.weights().data(), WeightTable::data))
        .collect();
    // The weight, AdaGrad sum and normalizer (the rate is scratch).
    let kept = stride.min(RATE);
    let data = out.data_mut();
    for (slot, merged) in data.chunks_exact_mut(stride).enumerate() {
        let range = slot * stride..slot * stride + kept;
        // Most slots of a large table are empty in every shard, and stay 0.
        if tables.iter().all(|t| t[range.clone()].iter().all(|&x| x == 0.0)) {
            continue;
        }
        let mut by_share = 0.0f64;
        let mut g2_by_share = 0.0f64;
        let mut g2_sum = 0.0f64;
        let mut w_by_g2 = 0.0f64;
        let mut g2_squares = 0.0f64;
        let mut norm = 0.0f32;
        for (((_, share), &(gravity, contraction)), table) in
            trained.iter().zip(&folds).zip(&tables)
        {
            let values = &table[slot * stride..(slot + 1) * stride];
            let w = f64::from(trunc_weight(values[W], gravity) * contraction);
            by_share += share * w;
            if stride > 1 {
                let g2 = f64::from(values[G2]);
                g2_by_share += share * g2;
                g2_sum += g2;
                w_by_g2 += g2 * w;
                g2_squares += g2 * g2;
                norm = norm.max(values[NORM]);
            }
        }
        let (w, g2) = match weighting {
            Weighting::Adaptive if g2_sum > 0.0 => (w_by_g2 / g2_sum, g2_squares / g2_sum),
            _ => (by_share, g2_by_share),
        };
        merged[W] = w as f32;
        if stride > 1 {
            merged[G2] = g2 as f32;
            merged[NORM] = norm;
            // The slot's owner, as one shard knows it (a growing table's: see
            // `update::note_owners`); else 0, the rate being scratch.
            let mut rates = tables.iter().map(|t| t[slot * stride + RATE]);
            let tag = rates.find(|&r| tagged_owner(r).is_some());
            merged[RATE] = tag.unwrap_or(0.0);
        }
    }
    Ok(out)
}

/// `start` plus what each shard added to it.
fn summed_state(start: &GdState, shards: &[&OnlineModel]) -> GdState {
    let mut state = start.clone();
    for shard in shards {
        let s = shard.state();
        state.t += s.t - start.t;
        state.total_weight += s.total_weight - start.total_weight;
        state.normalized_sum_norm_x += s.normalized_sum_norm_x - start.normalized_sum_norm_x;
    }
    // The shards' lazy L1/L2 state is folded into the averaged weights.
    state.gravity = 0.0;
    state.contraction = 1.0;
    state
}

fn summed_progress(start: &Progress, shards: &[&OnlineModel]) -> Progress {
    let mut progress = start.clone();
    for shard in shards {
        let p = shard.progress();
        progress.examples += p.examples.saturating_sub(start.examples);
        progress.weighted_loss += p.weighted_loss - start.weighted_loss;
        progress.weight += p.weight - start.weight;
        progress.feature_updates += p.feature_updates.saturating_sub(start.feature_updates);
    }
    progress
}

/// The shards' common feature set; for apple, the union of their parents, frozen.
fn merged_features(start: Option<&OnlineModel>, shards: &[&OnlineModel]) -> PolyResult<FeatureSet> {
    match shards[0].expansion() {
        FeatureSet::Interactions(fixed) => {
            if shards
                .iter()
                .any(|s| !matches!(s.expansion(), FeatureSet::Interactions(f) if f == fixed))
            {
                return Err(invalid("the shards' models have different feature sets"));
            }
            Ok(FeatureSet::Interactions(fixed.clone()))
        }
        FeatureSet::Apple(_) => {
            let apples = each_shard_part(shards, |set| match set {
                FeatureSet::Apple(apple) => Some(apple.as_ref()),
                _ => None,
            })?;
            let start_apple = start.and_then(|s| s.expansion().apple());
            Ok(FeatureSet::from(frozen_union(start_apple, &apples)?))
        }
        FeatureSet::FieldApple(_) => {
            let fields = each_shard_part(shards, |set| match set {
                FeatureSet::FieldApple(fields) => Some(fields.as_ref()),
                _ => None,
            })?;
            let start_fields = start.and_then(|s| s.expansion().field_apple());
            Ok(FeatureSet::FieldApple(Box::new(frozen_crosses(start_fields, &fields)?)))
        }
        FeatureSet::AppleFields(..) => {
            let both = each_shard_part(shards, |set| match set {
                FeatureSet::AppleFields(apple, fields) => Some((apple.as_ref(), fields.as_ref())),
                _ => None,
            })?;
            let apples: Vec<&Apple> = both.iter().map(|&(apple, _)| apple).collect();
            let fields: Vec<&FieldApple> = both.iter().map(|&(_, fields)| fields).collect();
            let start_apple = start.and_then(|s| s.expansion().apple());
            let start_fields = start.and_then(|s| s.expansion().field_apple());
            let mut apple = frozen_union(start_apple, &apples)?;
            if let Some(categorical) = merged_categorical(&apples)? {
                apple.leave_categorical_to_field_crosses(categorical);
            }
            let fields = frozen_crosses(start_fields, &fields)?;
            Ok(FeatureSet::AppleFields(Box::new(apple), Box::new(fields)))
        }
    }
}

/// The part `pick` takes from each shard's feature set; an error when some shard's set is of
/// another kind than the one `pick` takes.
fn each_shard_part<'a, T>(
    shards: &[&'a OnlineModel],
    pick: impl Fn(&'a FeatureSet) -> Option<T>,
) -> PolyResult<Vec<T>> {
    let different = || invalid("the shards' models have different feature sets");
    shards.iter().map(|s| pick(s.expansion()).ok_or_else(different)).collect()
}

/// The items of the shards' `lists`, each `key` once: in the order they joined (`joined`), then
/// of the shards, then of the lists (the merged crosses and parents of [`frozen_crosses`] and
/// [`frozen_union`]).
fn union_in_join_order<'a, T, K: Eq + std::hash::Hash>(
    lists: impl Iterator<Item = &'a [T]>,
    joined: impl Fn(&T) -> u64,
    key: impl Fn(&T) -> K,
) -> Vec<&'a T> {
    let mut candidates: Vec<(u64, usize, usize, &T)> = Vec::new();
    for (k, list) in lists.enumerate() {
        for (position, item) in list.iter().enumerate() {
            candidates.push((joined(item), k, position, item));
        }
    }
    candidates.sort_by_key(|&(at, k, position, _)| (at, k, position));
    let mut seen = HashSet::new();
    candidates.into_iter().filter(|&(_, _, _, item)| seen.insert(key(item))).map(|c| c.3).collect()
}

/// Field-level apple with the union of the shards' crosses (in the order they joined, then of
/// the shards), screening no more: `max_crosses` becomes the union's size, so later rounds
/// train a fixed set of crosses as they do apple's parents.
fn frozen_crosses(start: Option<&FieldApple>, shards: &[&FieldApple]) -> PolyResult<FieldApple> {
    // A partial average is frozen already: its max_crosses may differ.
    let unbounded = |f: &FieldApple| FieldAppleConfig { max_crosses: 0, ..f.config().clone() };
    let config = unbounded(shards[0]);
    if shards.iter().any(|f| unbounded(f) != config) {
        return Err(invalid("the shards' field cross options differ"));
    }
    let lists = shards.iter().map(|f| f.crosses());
    let union =
        union_in_join_order(lists, |cross: &Cross| cross.added_at, |cross| cross.fields.clone());
    let crosses: Vec<Cross> = union.into_iter().cloned().collect();
    let base = start.map_or(0, FieldApple::learned);
    let learned = base + shards.iter().map(|f| f.learned().saturating_sub(base)).sum::<u64>();
    let config = FieldAppleConfig { max_crosses: crosses.len(), ..config };
    FieldApple::from_parts(config, crosses, learned)
}

/// The categorical namespaces of apple beside field crosses over the shards: a namespace is
/// categorical only where it was in every shard (a shard that saw two features there has seen
/// it is not).
fn merged_categorical(apples: &[&Apple]) -> PolyResult<Option<CategoricalNamespaces>> {
    let mut seen = apples.iter().map(|a| a.categorical());
    let Some(first) = seen.next().flatten() else {
        if apples.iter().any(|a| a.categorical().is_some()) {
            return Err(invalid("the shards' apple options differ"));
        }
        return Ok(None);
    };
    let mut merged = first.clone();
    for categorical in seen {
        let categorical = categorical.ok_or_else(|| invalid("the shards' apple options differ"))?;
        merged = merged.merged(categorical).ok_or_else(|| {
            invalid("the shards' models leave categorical fields to the crosses differently")
        })?;
    }
    Ok(Some(merged))
}

/// apple with the union of the shards' parents (in the order of their expansions, then of the
/// shards) and no expansion left (see the module docs).
fn frozen_union(start: Option<&Apple>, apples: &[&Apple]) -> PolyResult<Apple> {
    // A partial average (a tree of averages) is frozen already: the schedule may differ.
    let frozen =
        |apple: &Apple| AppleConfig { schedule: ScheduleKind::Epochs, ..apple.config().clone() };
    let config = frozen(apples[0]);
    if apples.iter().any(|a| frozen(a) != config) {
        return Err(invalid("the shards' apple options differ"));
    }
    let lists = apples.iter().map(|a| a.parents());
    let joined = |parent: &Parent| u64::from(parent.expansion);
    let union = union_in_join_order(lists, joined, |parent| parent.key);
    let parents: Vec<Parent> = union.into_iter().cloned().collect();
    let base = start.map(|a| a.progress().clone()).unwrap_or_default();
    let mut progress = base.clone();
    for apple in apples {
        let p = apple.progress();
        progress.learned += p.learned.saturating_sub(base.learned);
        progress.nonzeros += p.nonzeros - base.nonzeros;
        progress.expansions = progress.expansions.max(p.expansions);
    }
    Apple::from_parts(config, Vec::new(), parents, progress)
}

#[cfg(test)]
mod tests;
