//! The passive-aggressive classifier's section of the model file ([`crate::model::file`]),
//! little-endian ([`crate::codec`]):
//!
//! The options: from format version 10 on, [`PassiveAggressiveOptions`]' serde form as JSON
//! ([`ByteWriter::options`]); before, `rank u64`, `seed u64`, variant name and `c f64`,
//! multiclass name (`ovo`/`ovr`), averaging interval (`u8` flag, `u64`), `n_classes u64`,
//! `n_features u64`. Then examples `seen u64`, the
//! training counts (`examples`, `steps`, `updates`, `degenerate`, `mistakes`, `u64` each), then
//! per binary model its parameters (count `u64`, then `f64`s: DoS `U` then `V`, row-major
//! `rank × (n_features + 1)`; linear the weights, bias last) and its running average (`count
//! u64`, then, when the count is positive, its parameters as the model's).

use super::classifier::{Family, PassiveAggressive, PassiveAggressiveOptions};
use super::linear::LinearPa;
use super::model::DosModel;
use super::multiclass::{Multiclass, Strategy};
use super::online::{BinaryLearner, RunningAverage, TrainStats};
use super::solve::PaVariant;
use crate::codec::{bad, ByteReader, ByteWriter};
use crate::error::PolyResult;
use crate::versions;

/// A binary model's stored parameters (see the module docs), written without a copy.
trait StoredParams {
    fn param_count(&self) -> usize;
    fn write_params(&self, w: &mut ByteWriter);
}

impl StoredParams for DosModel<f32> {
    fn param_count(&self) -> usize {
        2 * self.rank() * (self.n_features() + 1)
    }

    fn write_params(&self, w: &mut ByteWriter) {
        w.len(self.param_count());
        self.matrix_values(0).chain(self.matrix_values(self.rank())).for_each(|v| w.f64(v));
    }
}

impl StoredParams for LinearPa {
    fn param_count(&self) -> usize {
        self.weights().len()
    }

    fn write_params(&self, w: &mut ByteWriter) {
        w.len(self.param_count());
        self.weights().iter().for_each(|&v| w.f64(v));
    }
}

/// Parameters of exactly `expected` values (checked before anything is allocated).
fn read_params(r: &mut ByteReader<'_>, expected: usize) -> PolyResult<Vec<f64>> {
    let n = r.len("model parameter count", r.remaining() / 8)?;
    if n != expected {
        return Err(bad(format!("a binary model has {n} parameters, expected {expected}")));
    }
    (0..n).map(|_| r.f64("model parameter")).collect()
}

impl PassiveAggressive {
    /// Writes the classifier's section (see the module docs).
    pub fn write_section(&self, w: &mut ByteWriter) {
        w.options(&self.options());
        match &self.family {
            Family::Dos(m) => write_multiclass(w, m),
            Family::Linear(m) => write_multiclass(w, m),
        }
    }

    /// Reads a classifier's section of a file of format `version`.
    pub fn read_section(r: &mut ByteReader<'_>, version: u32) -> PolyResult<Self> {
        let options = if version >= versions::SELF_DESCRIBING {
            r.options("passive_aggressive options")?
        } else {
            read_options(r)?
        };
        let PassiveAggressiveOptions { rank, seed, .. } = options;
        let variant =
            PaVariant::parse(&options.variant, options.c).map_err(|e| bad(e.to_string()))?;
        let shape = Shape {
            strategy: Strategy::parse(&options.multiclass).map_err(|e| bad(e.to_string()))?,
            interval: options.averaging,
            n_classes: options.n_classes,
            n_features: options.n_features,
        };
        if shape.n_classes > u32::MAX as usize {
            return Err(bad(format!("{} classes", shape.n_classes)));
        }
        let family = if rank == 0 {
            Family::Linear(read_multiclass(
                r,
                &shape,
                |n| Some(n + 1),
                |p| LinearPa::from_weights(p, variant),
            )?)
        } else {
            let size = |n: usize| rank.checked_mul(n.checked_add(1)?)?.checked_mul(2);
            Family::Dos(read_multiclass(r, &shape, size, |p| {
                let n_features = p.len() / (2 * rank) - 1;
                let (u, v) = p.split_at(p.len() / 2);
                DosModel::from_matrices(n_features, rank, u, v, variant)
            })?)
        };
        Ok(PassiveAggressive { family, variant, rank, seed })
    }
}

/// The options of a file of format version 9 or older, stored positionally (see the module
/// docs).
fn read_options(r: &mut ByteReader<'_>) -> PolyResult<PassiveAggressiveOptions> {
    let rank = usize::try_from(r.u64("rank")?).map_err(|_| bad("rank too large"))?;
    let seed = r.u64("seed")?;
    let variant = r.string("variant")?;
    let c = r.f64("C")?;
    let multiclass = r.string("multiclass")?;
    let has_interval = r.flag("averaging flag")?;
    let interval = r.u64("averaging interval")?;
    let n_classes = r.len("class count", u32::MAX as usize)?;
    let n_features = r.len("feature count", usize::MAX)?;
    Ok(PassiveAggressiveOptions {
        n_classes,
        n_features,
        rank,
        seed,
        variant,
        c,
        multiclass,
        averaging: has_interval.then_some(interval),
    })
}

/// What the options say of the multiclass models' layout.
struct Shape {
    strategy: Strategy,
    interval: Option<u64>,
    n_classes: usize,
    n_features: usize,
}

fn write_multiclass<M: BinaryLearner + StoredParams>(w: &mut ByteWriter, m: &Multiclass<M>) {
    w.u64(m.seen());
    let s = m.stats();
    for v in [s.examples, s.steps, s.updates, s.degenerate, s.mistakes] {
        w.u64(v);
    }
    // The parameters are nearly all of the section: room for them at once, not by doubling.
    let stored = m.models().len() + m.averages().iter().filter(|a| a.get().is_some()).count();
    w.reserve(stored * (8 + 8 * m.models().first().map_or(0, StoredParams::param_count)));
    for (model, average) in m.models().iter().zip(m.averages()) {
        model.write_params(w);
        w.u64(average.count());
        if let Some(average) = average.get() {
            average.write_params(w);
        }
    }
}

/// A multiclass classifier of `shape` whose binary models have `size(n_features)` parameters
/// each, built by `build`.
fn read_multiclass<M: BinaryLearner>(
    r: &mut ByteReader<'_>,
    shape: &Shape,
    size: impl Fn(usize) -> Option<usize>,
    build: impl Fn(&[f64]) -> PolyResult<M>,
) -> PolyResult<Multiclass<M>> {
    let &Shape { strategy, interval, n_classes, n_features } = shape;
    let seen = r.u64("examples seen")?;
    let mut counts = [0u64; 5];
    for v in &mut counts {
        *v = r.u64("training count")?;
    }
    let [examples, steps, updates, degenerate, mistakes] = counts;
    let stats = TrainStats { examples, steps, updates, degenerate, mistakes };
    let n_models = match strategy {
        Strategy::OneVsOne => n_classes.checked_mul(n_classes.saturating_sub(1)).map(|n| n / 2),
        Strategy::OneVsRest => Some(n_classes),
    }
    .ok_or_else(|| bad(format!("{n_classes} classes")))?;
    let expected = size(n_features).ok_or_else(|| bad(format!("{n_features} features")))?;
    let (mut models, mut averages) = (Vec::new(), Vec::new());
    for _ in 0..n_models {
        let built = |r: &mut ByteReader<'_>| -> PolyResult<M> {
            build(&read_params(r, expected)?).map_err(|e| bad(e.to_string()))
        };
        models.push(built(r)?);
        let count = r.u64("average count")?;
        let average = if count > 0 { Some(built(r)?) } else { None };
        averages.push(RunningAverage::from_parts(average, count).map_err(|e| bad(e.to_string()))?);
    }
    Multiclass::from_parts(n_classes, strategy, interval, models, averages, seen, stats)
        .map_err(|e| bad(e.to_string()))
}
