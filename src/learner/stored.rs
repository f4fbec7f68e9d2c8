//! The learner's stored bytes: its section of the model file ([`crate::model::file`]), and
//! the section of its own feature enumerator, [`Interactions`]. All numbers little-endian
//! ([`crate::codec`]).
//!
//! Learner section, in order:
//! * options: from format version 10 on, [`LearnerConfig`]'s serde form as JSON
//!   ([`ByteWriter::options`]: a field an older file lacks takes its default). Up to version 9,
//!   positional: `bits u32`, loss name (`u32` length + UTF-8, a name of the loss registry
//!   [`Loss::NAMES`]) and its parameters (`quantile_tau f64`), update-rule flags `u8`
//!   (1 adaptive, 2 normalized, 4 invariant), `eta0`, `power_t`, `initial_t`, `l1`, `l2`
//!   (`f64` each), namespace count `u32` then each name (`u32` length + UTF-8);
//! * training state: `t`, `total_weight`, `normalized_sum_norm_x` (`f64`), label range `min`,
//!   `max` (`f64`), progress `examples u64`, `weighted_loss f64`, `weight f64`,
//!   `feature_updates u64`;
//! * weights: `stride u8` (1 or 4), encoding `u8` (0 none: never trained; 1 dense:
//!   `stride·2^bits` `f32`; 2 sparse: count `u64` then per nonzero slot `slot u32` and its
//!   `stride` `f32`s). The spare rate value of a slot is scratch and is written as 0;
//! * (format version 4 on) the lazy L1/L2 state: `gravity`, `contraction` (`f64`), with the
//!   weights above stored as the learner holds them. Version 3 and older folded that state into
//!   the weights on writing, which loses what L1 truncation hides: a weight held at 0 by the
//!   truncation forgot how far below the threshold it was, and training on after loading drifted
//!   from training on without saving;
//! * (format version 5 on) field scales: `u8` 1 when the model learns them
//!   ([`LearnerConfig::field_scales`]), then their bytes ([`FieldScales::write`]); 0 otherwise;
//! * (format version 10 on, when the options have `ffm`) the factorization's table
//!   ([`Ffm::write`]);
//! * (format version 12 on) the growing table's share of slots in use at its last growth
//!   (`f64`; 0 when it never grew: [`super::learner`]'s `growth`);
//! * (format version 9 only) the initial weight `f64` ([`LearnerConfig::initial_weight`]; 0 in
//!   older files; in the options from version 10 on).
//!
//! Interactions section: from format version 10 on, [`Interactions`]' serde form as JSON.
//! Before, `degree u8`, `constant u8`, then the namespace crosses: in version 9, their count
//! `u32`, then each cross's length `u32` and its namespaces (`u32` each); up to version 8
//! (crosses of two namespaces only), the pair count `u32` then the pairs (`u32`, `u32`).
//!
//! The training state and weight encodings are those of format version 2, whose reader
//! ([`crate::model::legacy`]) shares them.

use super::expansion::{Expansion, Interactions};
use super::ffm::Ffm;
use super::field_scales::FieldScales;
use super::learner::{Growth, LabelRange, Learner, LearnerConfig, Progress};
use super::loss::{Loss, LossParams};
use super::update::{GdState, UpdateRule};
use super::weights::{WeightTable, G2, NORM, RATE};
use crate::codec::{bad, ByteReader, ByteWriter};
use crate::error::PolyResult;
use crate::versions;

/// Most namespaces, namespace crosses or namespaces in one cross a stored model may declare (far
/// above any real model; bounds what a corrupted count can allocate).
const MAX_STORED_COUNT: u32 = 1 << 20;

impl<E: Expansion> Learner<E> {
    /// Writes the learner's section (see the module docs; the current format version).
    pub fn write_section(&self, w: &mut ByteWriter) {
        w.options(self.config());
        self.write_state_and_weights(w);
        w.f64(self.growth().load_at_growth);
    }

    /// The section in the layout of format version 9 (positional options, the initial weight
    /// last), to test the reader of older files.
    #[cfg(test)]
    pub(crate) fn write_section_v9(&self, w: &mut ByteWriter) {
        let config = self.config();
        w.u32(config.bits);
        w.str(config.loss.name());
        w.f64(config.loss.params().quantile_tau);
        let rule = config.rule;
        w.u8(u8::from(rule.adaptive)
            | u8::from(rule.normalized) << 1
            | u8::from(rule.invariant) << 2);
        for v in [config.eta0, config.power_t, config.initial_t, config.l1, config.l2] {
            w.f64(v);
        }
        w.u32(config.namespaces.len() as u32);
        for name in &config.namespaces {
            w.str(name);
        }
        self.write_state_and_weights(w);
        w.f64(config.initial_weight);
    }

    /// Everything after the options up to the factorization (see the module docs).
    fn write_state_and_weights(&self, w: &mut ByteWriter) {
        write_training(w, self);
        write_weights(w, self.weights());
        w.f64(self.state().gravity);
        w.f64(self.state().contraction);
        match self.field_scales() {
            Some(scales) => {
                w.u8(1);
                scales.write(w);
            }
            None => w.u8(0),
        }
        if let Some(ffm) = self.ffm() {
            ffm.write(w);
        }
    }

    /// Reads a learner's section of a file of format `version` (3 or later), with `expansion`
    /// as its feature enumerator.
    pub fn read_section(r: &mut ByteReader<'_>, expansion: E, version: u32) -> PolyResult<Self> {
        let mut config = if version >= versions::SELF_DESCRIBING {
            let config: LearnerConfig = r.options("learner options")?;
            config.validate().map_err(|e| bad(e.to_string()))?;
            config
        } else {
            read_config(r)?
        };
        let (mut state, labels, progress) = read_training(r, config.initial_t)?;
        let table = read_weights(r, config.bits, config.rule)?;
        if version >= versions::LAZY_SCALES {
            (state.gravity, state.contraction) = (r.f64("gravity")?, r.f64("contraction")?);
            if !(state.gravity.is_finite() && state.gravity >= 0.0) {
                return Err(bad(format!(
                    "gravity is {}; it must be finite and >= 0",
                    state.gravity
                )));
            }
            if !(state.contraction.is_finite() && state.contraction > 0.0) {
                return Err(bad(format!(
                    "contraction is {}; it must be finite and > 0",
                    state.contraction
                )));
            }
        }
        let scales = if version >= versions::FIELD_SCALES && r.u8("field scales flag")? == 1 {
            Some(FieldScales::read(r)?)
        } else {
            None
        };
        config.field_scales = scales.is_some();
        if (versions::CROSSES..versions::SELF_DESCRIBING).contains(&version) {
            config.initial_weight = r.f64("initial weight")?;
            config.validate().map_err(|e| bad(e.to_string()))?;
        }
        let ffm = match &config.ffm {
            Some(options) if version >= versions::SELF_DESCRIBING => {
                Some(Ffm::read(r, options.clone())?)
            }
            _ => None,
        };
        let mut learner =
            Learner::from_parts(config, expansion, table, state, labels, progress, ffm)
                .map_err(|e| bad(e.to_string()))?;
        if let Some(scales) = scales {
            learner.set_field_scales(scales);
        }
        if version >= versions::GROWING_TABLE {
            let load_at_growth = r.f64("load at growth")?;
            if !(0.0..=1.0).contains(&load_at_growth) {
                return Err(bad(format!(
                    "load at growth is {load_at_growth}; it must be in [0, 1]"
                )));
            }
            learner.set_growth(Growth { load_at_growth });
        }
        Ok(learner)
    }
}

/// The options of a file of format version 9 or older (see the module docs).
fn read_config(r: &mut ByteReader<'_>) -> PolyResult<LearnerConfig> {
    let bits = r.u32("bits")?;
    let name = r.string("loss")?;
    let params = LossParams { quantile_tau: r.f64("quantile_tau")? };
    let loss = Loss::new(&name, &params).map_err(|e| bad(e.to_string()))?;
    let rule = read_rule(r)?;
    let [eta0, power_t, initial_t, l1, l2] = read_rates(r)?;
    let namespaces = read_names(r)?;
    let config = LearnerConfig {
        bits,
        max_bits: None,
        loss,
        rule,
        eta0,
        power_t,
        initial_t,
        l1,
        l2,
        namespaces,
        field_scales: false,
        initial_weight: 0.0,
        ffm: None,
    };
    config.validate().map_err(|e| bad(e.to_string()))?;
    Ok(config)
}

/// eta0, power_t, initial_t, l1 and l2, in that order (every format version).
pub(crate) fn read_rates(r: &mut ByteReader<'_>) -> PolyResult<[f64; 5]> {
    Ok([r.f64("eta0")?, r.f64("power_t")?, r.f64("initial_t")?, r.f64("l1")?, r.f64("l2")?])
}

/// The update rule's flags byte.
pub(crate) fn read_rule(r: &mut ByteReader<'_>) -> PolyResult<UpdateRule> {
    let flags = r.u8("update rule")?;
    UpdateRule::from_flags(flags)
        .ok_or_else(|| bad(format!("unknown update-rule flags {flags:#04x}")))
}

/// A namespace count and the names.
pub(crate) fn read_names(r: &mut ByteReader<'_>) -> PolyResult<Vec<String>> {
    let n = r.u32("namespace count")?;
    if n > MAX_STORED_COUNT {
        return Err(bad(format!("{n} namespaces")));
    }
    (0..n).map(|_| r.string("namespace name")).collect()
}

fn write_training<E: Expansion>(w: &mut ByteWriter, learner: &Learner<E>) {
    let state = learner.state();
    for v in [state.t, state.total_weight, state.normalized_sum_norm_x] {
        w.f64(v);
    }
    let labels = learner.label_range();
    w.f64(labels.min);
    w.f64(labels.max);
    let progress = learner.progress();
    w.u64(progress.examples);
    w.f64(progress.weighted_loss);
    w.f64(progress.weight);
    w.u64(progress.feature_updates);
}

/// The training state (see the module docs), shared with the version-2 reader.
pub(crate) fn read_training(
    r: &mut ByteReader<'_>,
    initial_t: f64,
) -> PolyResult<(GdState, LabelRange, Progress)> {
    let mut state = GdState::new(initial_t);
    state.t = r.f64("t")?;
    state.total_weight = r.f64("total_weight")?;
    state.normalized_sum_norm_x = r.f64("normalized_sum_norm_x")?;
    let labels = LabelRange { min: r.f64("label min")?, max: r.f64("label max")? };
    let progress = Progress {
        examples: r.u64("examples")?,
        weighted_loss: r.f64("weighted loss")?,
        weight: r.f64("loss weight")?,
        feature_updates: r.u64("feature updates")?,
    };
    // A checksum proves the bytes are the ones written, not that a writer wrote sane values: a
    // loaded model must predict finite numbers and train on.
    for (name, value) in [
        ("t", state.t),
        ("total_weight", state.total_weight),
        ("normalized_sum_norm_x", state.normalized_sum_norm_x),
        ("loss weight", progress.weight),
    ] {
        if !(value.is_finite() && value >= 0.0) {
            return Err(bad(format!("{name} is {value}; it must be finite and >= 0")));
        }
    }
    if !progress.weighted_loss.is_finite() {
        return Err(bad(format!("the weighted loss is {}", progress.weighted_loss)));
    }
    if !(labels.min.is_finite() && labels.max.is_finite() && labels.min <= labels.max) {
        return Err(bad(format!(
            "the label range [{}, {}] is not a finite interval",
            labels.min, labels.max
        )));
    }
    Ok((state, labels, progress))
}

/// Weights with the lazy L1/L2 state `state` folded in (none: the state is written beside
/// them), dense or sparse, whichever is smaller.
fn write_weights(w: &mut ByteWriter, table: &WeightTable) {
    let stride = table.stride();
    w.u8(stride as u8);
    if !table.is_allocated() {
        w.u8(0);
        return;
    }
    // The weight, AdaGrad sum and normalizer are kept; the rate is scratch, written as 0.
    let kept = stride.min(RATE);
    let is_stored = |slot: &[f32]| slot[..kept].iter().any(|&x| x != 0.0);
    let write_slot = |w: &mut ByteWriter, slot: &[f32]| {
        for (k, &x) in slot.iter().enumerate() {
            w.f32(if k < kept { x } else { 0.0 });
        }
    };
    let data = table.data();
    // Plain scans the compiler vectorizes: most slots of a large table are empty.
    let nonzero = data.chunks_exact(stride).filter(|s| is_stored(s)).count();
    let dense_bytes = data.len() * 4;
    let sparse_bytes = 8 + nonzero * (4 + 4 * stride);
    if w.counted_only(1 + sparse_bytes.min(dense_bytes)) {
        return;
    }
    if sparse_bytes < dense_bytes {
        w.u8(2);
        w.u64(nonzero as u64);
        w.reserve(sparse_bytes);
        for (slot, values) in data.chunks_exact(stride).enumerate() {
            if is_stored(values) {
                w.u32(slot as u32);
                write_slot(w, values);
            }
        }
    } else {
        w.u8(1);
        w.reserve(dense_bytes);
        for values in data.chunks_exact(stride) {
            write_slot(w, values);
        }
    }
}

/// The weight table (see the module docs), shared with the version-2 reader.
pub(crate) fn read_weights(
    r: &mut ByteReader<'_>,
    bits: u32,
    rule: UpdateRule,
) -> PolyResult<WeightTable> {
    let stride = r.u8("stride")? as usize;
    if stride != rule.stride() {
        return Err(bad(format!(
            "weight stride {stride} does not match the update rule (expected {})",
            rule.stride()
        )));
    }
    let mut table = WeightTable::new(bits, stride);
    let n_values = (stride as u64) << bits;
    match r.u8("weight encoding")? {
        0 => {}
        1 => {
            let n = usize::try_from(n_values).map_err(|_| bad("weight table too large"))?;
            let raw = r.take(
                n.checked_mul(4).ok_or_else(|| bad("weight table too large"))?,
                "dense weights",
            )?;
            table.ensure_allocated()?;
            table.use_huge_pages();
            for (dst, src) in table.data_mut().iter_mut().zip(raw.chunks_exact(4)) {
                *dst = f32::from_le_bytes([src[0], src[1], src[2], src[3]]);
            }
        }
        2 => {
            let count = r.u64("sparse weight count")?;
            if count > (1u64 << bits) {
                return Err(bad(format!("{count} sparse slots for a table of 2^{bits}")));
            }
            table.ensure_allocated()?;
            // Enough slots to touch an eighth of the 4 KiB pages (the table's own switch point,
            // see `WeightTable::touch`): ask for huge pages before the first touch, which spares
            // most page faults (0.5 s of reading a 256 MiB table) and the later move.
            if u128::from(count) >= table.size_bytes() / 4096 / 8 {
                table.use_huge_pages();
            }
            for _ in 0..count {
                let slot = u64::from(r.u32("sparse slot")?);
                if slot > table.mask() {
                    return Err(bad(format!(
                        "sparse slot {slot} is outside the table of 2^{bits}"
                    )));
                }
                table.touch(&[slot as u32]);
                let base = slot as usize * stride;
                for k in 0..stride {
                    let v = r.f32("sparse weight")?;
                    table.data_mut()[base + k] = v;
                }
            }
        }
        other => return Err(bad(format!("unknown weight encoding {other}"))),
    }
    if table.data().iter().any(|v| !v.is_finite()) {
        return Err(bad("a stored weight is not finite"));
    }
    if stride == 4 {
        // Squared-gradient sums (stored minus initial_t, so 0 when fresh, see weights.rs) only
        // grow and normalizers are magnitudes: a negative one would make rates NaN.
        if let Some(slot) = table.data().chunks_exact(4).position(|s| s[G2] < 0.0 || s[NORM] < 0.0)
        {
            return Err(bad(format!(
                "slot {slot} has a negative squared-gradient sum or normalizer"
            )));
        }
    }
    Ok(table)
}

impl Interactions {
    /// Writes this enumerator's section (see the module docs; the current format version).
    pub fn write_section(&self, w: &mut ByteWriter) {
        w.options(self);
    }

    /// The section in the layout of format version 9, to test the reader of older files.
    #[cfg(test)]
    pub(crate) fn write_section_v9(&self, w: &mut ByteWriter) {
        w.u8(self.degree);
        w.flag(self.constant);
        w.u32(self.namespace_crosses.len() as u32);
        for cross in &self.namespace_crosses {
            w.u32(cross.len() as u32);
            cross.iter().for_each(|&k| w.u32(k as u32));
        }
    }

    /// Reads an enumerator's section from a file of format `version`.
    pub fn read_section(r: &mut ByteReader<'_>, version: u32) -> PolyResult<Self> {
        if version >= versions::SELF_DESCRIBING {
            let stored: Self = r.options("interactions options")?;
            let longest = stored.namespace_crosses.iter().map(Vec::len).max().unwrap_or(2);
            if stored.namespace_crosses.iter().any(|cross| cross.len() < 2) {
                return Err(bad("a namespace cross of fewer than 2 namespaces"));
            }
            if longest > MAX_STORED_COUNT as usize {
                return Err(bad(format!("a namespace cross of {longest} namespaces")));
            }
            return Ok(stored);
        }
        let degree = r.u8("expansion degree")?;
        let constant = r.flag("constant flag")?;
        let n_crosses = r.u32("namespace cross count")?;
        if n_crosses > MAX_STORED_COUNT {
            return Err(bad(format!("{n_crosses} namespace crosses")));
        }
        let mut namespace_crosses = Vec::new();
        for _ in 0..n_crosses {
            let length =
                if version >= versions::CROSSES { r.u32("namespace cross length")? } else { 2 };
            if !(2..=MAX_STORED_COUNT).contains(&length) {
                return Err(bad(format!("a namespace cross of {length} namespaces")));
            }
            let cross = (0..length)
                .map(|_| r.u32("namespace cross").map(|k| k as usize))
                .collect::<PolyResult<Vec<usize>>>()?;
            namespace_crosses.push(cross);
        }
        Ok(Interactions { degree, namespace_crosses, constant })
    }
}
