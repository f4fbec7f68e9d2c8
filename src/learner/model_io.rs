//! The model file: a documented, versioned binary format with a CRC32 checksum.
//!
//! All numbers little-endian. Layout (version 2):
//!
//! | bytes | content |
//! |---|---|
//! | 8 | magic `b"PPLEARN\0"` |
//! | 4 | format version `u32` (= 2) |
//! | 8 | payload length `u64` |
//! | n | payload (below) |
//! | 4 | CRC32 (IEEE, as zlib's `crc32`) of every byte before it |
//!
//! Payload, in order:
//! * config: `bits u32`, loss `u8` (0 squared, 1 logistic, 2 hinge, 3 quantile), quantile `tau f64`,
//!   update-rule flags `u8` (1 adaptive, 2 normalized, 4 invariant), `learning_rate`, `power_t`,
//!   `initial_t`, `l1`, `l2` (`f64` each), namespace count `u32` then per namespace its UTF-8
//!   name (`u32` length + bytes);
//! * expansion: kind `u8`, then
//!   - kind 1 ([`Interactions`]): `degree u8`, `constant u8`, pair count `u32` then pairs
//!     (`u32`, `u32`);
//!   - kind 2 ([`Apple`]): `alpha f64`, heuristic `u8` (0 magnitude, 1 SSM, 2 max-magnitude), `fallback u8`,
//!     identity `u8` (0 canonical, 1 path), `max_degree u8`, schedule `u8` (0 auto, 1 epochs, 2 doubling), `epochs u32`,
//!     `doubling_first u64`, `constant u8`, `window u64`, `budget u64`; planned expansion points
//!     (count `u32`, then `u64`s); progress `learned u64`, `nonzeros f64`, `expansions u32`;
//!     parents in the order they were added (count `u32`, then per parent `expansion u32`,
//!     identity `key u64`, `degree u8` and its `degree` factor hashes `u64`, increasing);
//! * state: `t`, `total_weight`, `normalized_sum_norm_x` (`f64`), label range `min`, `max`
//!   (`f64`), progress `examples u64`, `weighted_loss f64`, `weight f64`, `feature_updates u64`;
//! * metadata: `u32` length + UTF-8 bytes, opaque to the engine (the Python layer stores its
//!   estimator parameters and classes there as JSON);
//! * weights: `stride u8` (1 or 4), encoding `u8` (0 none: never trained; 1 dense: `stride·2^bits`
//!   `f32`; 2 sparse: count `u64` then per nonzero slot `slot u32` and its `stride` `f32`s).
//!   Stored weights already include the lazy L1/L2 state (it is folded in on writing); the spare
//!   rate value of a slot is scratch and is written as 0.
//!
//! Reading checks the magic, the version, the length and the checksum before anything else, then
//! validates every field, so a truncated, corrupted or foreign file fails with a message that says
//! which.
//!
//! Version 1 had the same layout; its canonical apple monomials of degree >= 3 had other weight
//! slots (a hash chain over the sorted factors, see `crate::apple::monomial`). A version-1 file is
//! read when it cannot hold such weights (no apple, path identity, or no parent of degree >= 2)
//! and refused otherwise, with a message saying so.

use std::io::Write;
use std::path::Path;

use super::expansion::Interactions;
use super::feature_set::FeatureSet;
use super::learner::{LabelRange, Learner, LearnerConfig, Progress};
use super::loss::Loss;
use super::update::{trunc_weight, GdState, UpdateRule};
use super::weights::{WeightTable, RATE};
use crate::apple::monomial::Identity;
use crate::apple::schedule::ScheduleKind;
use crate::apple::{Apple, AppleConfig, AppleProgress, Heuristic, Monomial, Parent};
use crate::error::{PolyError, PolyResult};

pub const MAGIC: &[u8; 8] = b"PPLEARN\0";
pub const FORMAT_VERSION: u32 = 2;
/// The version before canonical apple's degree >= 3 slots changed (see the module docs).
const FORMAT_VERSION_CHAINED_SLOTS: u32 = 1;
const HEADER: usize = 8 + 4 + 8;
const EXPANSION_INTERACTIONS: u8 = 1;
const EXPANSION_APPLE: u8 = 2;

fn bad(reason: impl std::fmt::Display) -> PolyError {
    PolyError::InvalidInput(format!("invalid model file: {reason}"))
}

/// Serializes a learner and its metadata (see the module docs).
pub fn to_bytes(learner: &Learner<FeatureSet>, metadata: &str) -> Vec<u8> {
    let mut p = Vec::new();
    let config = learner.config();
    p.extend_from_slice(&config.bits.to_le_bytes());
    let (kind, tau) = match config.loss {
        Loss::Squared => (0u8, 0.0),
        Loss::Logistic => (1, 0.0),
        Loss::Hinge => (2, 0.0),
        Loss::Quantile { tau } => (3, tau),
    };
    p.push(kind);
    put_f64(&mut p, tau);
    p.push(config.rule.flags());
    for v in [config.learning_rate, config.power_t, config.initial_t, config.l1, config.l2] {
        put_f64(&mut p, v);
    }
    p.extend_from_slice(&(config.namespaces.len() as u32).to_le_bytes());
    for name in &config.namespaces {
        put_bytes(&mut p, name.as_bytes());
    }
    match learner.expansion() {
        FeatureSet::Fixed(fixed) => write_interactions(&mut p, fixed),
        FeatureSet::Apple(apple) => write_apple(&mut p, apple),
    }
    let state = learner.state();
    for v in [state.t, state.total_weight, state.normalized_sum_norm_x] {
        put_f64(&mut p, v);
    }
    let labels = learner.label_range();
    put_f64(&mut p, labels.min);
    put_f64(&mut p, labels.max);
    let progress = learner.progress();
    p.extend_from_slice(&progress.examples.to_le_bytes());
    put_f64(&mut p, progress.weighted_loss);
    put_f64(&mut p, progress.weight);
    p.extend_from_slice(&progress.feature_updates.to_le_bytes());
    put_bytes(&mut p, metadata.as_bytes());
    write_weights(&mut p, learner.weights(), state);

    let mut out = Vec::with_capacity(HEADER + p.len() + 4);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&(p.len() as u64).to_le_bytes());
    out.extend_from_slice(&p);
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

fn write_interactions(p: &mut Vec<u8>, fixed: &Interactions) {
    p.push(EXPANSION_INTERACTIONS);
    p.push(fixed.degree);
    p.push(u8::from(fixed.constant));
    p.extend_from_slice(&(fixed.namespace_pairs.len() as u32).to_le_bytes());
    for &(a, b) in &fixed.namespace_pairs {
        p.extend_from_slice(&(a as u32).to_le_bytes());
        p.extend_from_slice(&(b as u32).to_le_bytes());
    }
}

fn write_apple(p: &mut Vec<u8>, apple: &Apple) {
    let c = apple.config();
    p.push(EXPANSION_APPLE);
    put_f64(p, c.alpha);
    p.push(match c.heuristic {
        Heuristic::Magnitude => 0,
        Heuristic::Ssm => 1,
        Heuristic::MaxMagnitude => 2,
    });
    p.push(u8::from(c.fallback));
    p.push(match c.identity {
        Identity::Canonical => 0,
        Identity::Path => 1,
    });
    p.push(c.max_degree);
    p.push(match c.schedule {
        ScheduleKind::Auto => 0,
        ScheduleKind::Epochs => 1,
        ScheduleKind::Doubling => 2,
    });
    p.extend_from_slice(&c.epochs.to_le_bytes());
    p.extend_from_slice(&c.doubling_first.to_le_bytes());
    p.push(u8::from(c.constant));
    p.extend_from_slice(&(c.window as u64).to_le_bytes());
    p.extend_from_slice(&(c.budget as u64).to_le_bytes());
    let planned = &apple.schedule().planned;
    p.extend_from_slice(&(planned.len() as u32).to_le_bytes());
    for point in planned {
        p.extend_from_slice(&point.to_le_bytes());
    }
    let progress = apple.progress();
    p.extend_from_slice(&progress.learned.to_le_bytes());
    put_f64(p, progress.nonzeros);
    p.extend_from_slice(&progress.expansions.to_le_bytes());
    p.extend_from_slice(&(apple.parents().len() as u32).to_le_bytes());
    for parent in apple.parents() {
        p.extend_from_slice(&parent.expansion.to_le_bytes());
        p.extend_from_slice(&parent.key.to_le_bytes());
        p.push(parent.monomial.degree() as u8);
        for h in parent.monomial.factors() {
            p.extend_from_slice(&h.to_le_bytes());
        }
    }
}

fn read_flag(r: &mut Reader<'_>, what: &str) -> PolyResult<bool> {
    match r.u8(what)? {
        0 => Ok(false),
        1 => Ok(true),
        other => Err(bad(format!("{what} must be 0 or 1, got {other}"))),
    }
}

fn read_interactions(r: &mut Reader<'_>) -> PolyResult<Interactions> {
    let degree = r.u8("expansion degree")?;
    let constant = read_flag(r, "constant flag")?;
    let n_pairs = r.u32("namespace pair count")?;
    let mut namespace_pairs = Vec::new();
    for _ in 0..n_pairs {
        namespace_pairs
            .push((r.u32("namespace pair")? as usize, r.u32("namespace pair")? as usize));
    }
    Ok(Interactions { degree, namespace_pairs, constant })
}

fn read_apple(r: &mut Reader<'_>) -> PolyResult<Apple> {
    let alpha = r.f64("apple alpha")?;
    let heuristic = match r.u8("apple heuristic")? {
        0 => Heuristic::Magnitude,
        1 => Heuristic::Ssm,
        2 => Heuristic::MaxMagnitude,
        other => return Err(bad(format!("unknown apple heuristic code {other}"))),
    };
    let fallback = read_flag(r, "apple fallback flag")?;
    let identity = match r.u8("apple identity")? {
        0 => Identity::Canonical,
        1 => Identity::Path,
        other => return Err(bad(format!("unknown apple identity code {other}"))),
    };
    let max_degree = r.u8("apple max_degree")?;
    let schedule = match r.u8("apple schedule")? {
        0 => ScheduleKind::Auto,
        1 => ScheduleKind::Epochs,
        2 => ScheduleKind::Doubling,
        other => return Err(bad(format!("unknown apple schedule code {other}"))),
    };
    let epochs = r.u32("apple epochs")?;
    let doubling_first = r.u64("apple doubling_first")?;
    let constant = read_flag(r, "apple constant flag")?;
    let window =
        usize::try_from(r.u64("apple window")?).map_err(|_| bad("apple window too large"))?;
    let budget =
        usize::try_from(r.u64("apple budget")?).map_err(|_| bad("apple budget too large"))?;
    let config = AppleConfig {
        alpha,
        heuristic,
        fallback,
        identity,
        max_degree,
        schedule,
        epochs,
        doubling_first,
        constant,
        window,
        budget,
    };
    let n_planned = r.u32("apple planned count")?;
    let planned =
        (0..n_planned).map(|_| r.u64("apple planned point")).collect::<PolyResult<Vec<_>>>()?;
    let progress = AppleProgress {
        learned: r.u64("apple learned")?,
        nonzeros: r.f64("apple nonzeros")?,
        expansions: r.u32("apple expansions")?,
    };
    let n_parents = r.u32("apple parent count")?;
    let mut parents = Vec::new();
    for _ in 0..n_parents {
        let expansion = r.u32("apple parent expansion")?;
        let key = r.u64("apple parent key")?;
        let degree = r.u8("apple parent degree")?;
        let factors =
            (0..degree).map(|_| r.u64("apple parent factor")).collect::<PolyResult<Vec<_>>>()?;
        if factors.windows(2).any(|w| w[0] > w[1]) {
            return Err(bad("apple parent factors are not sorted"));
        }
        parents.push(Parent { monomial: Monomial::new(factors), expansion, key });
    }
    Apple::from_parts(config, planned, parents, progress).map_err(|e| bad(e.to_string()))
}

/// Whether a canonical apple model can have trained monomials of degree >= 3: those are children
/// of parents of degree >= 2.
fn has_degree_3_weights(apple: &Apple) -> bool {
    apple.config().identity == Identity::Canonical
        && apple.config().max_degree >= 3
        && apple.parents().iter().any(|p| p.monomial.degree() >= 2)
}

fn put_f64(out: &mut Vec<u8>, v: f64) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(bytes);
}

/// Weights with the lazy L1/L2 state folded in, dense or sparse, whichever is smaller.
fn write_weights(out: &mut Vec<u8>, table: &WeightTable, state: &GdState) {
    let stride = table.stride();
    out.push(stride as u8);
    if !table.is_allocated() {
        out.push(0);
        return;
    }
    let (gravity, contraction) = (state.gravity as f32, state.contraction as f32);
    let slot_values = |slot: &[f32]| -> [f32; 4] {
        let mut v = [0.0f32; 4];
        v[..stride].copy_from_slice(slot);
        v[0] = trunc_weight(v[0], gravity) * contraction;
        if stride == 4 {
            v[RATE] = 0.0;
        }
        v
    };
    let data = table.data();
    let nonzero =
        data.chunks_exact(stride).filter(|s| slot_values(s).iter().any(|&x| x != 0.0)).count();
    let dense_bytes = data.len() * 4;
    let sparse_bytes = 8 + nonzero * (4 + 4 * stride);
    if sparse_bytes < dense_bytes {
        out.push(2);
        out.extend_from_slice(&(nonzero as u64).to_le_bytes());
        for (slot, values) in data.chunks_exact(stride).enumerate() {
            let v = slot_values(values);
            if v.iter().any(|&x| x != 0.0) {
                out.extend_from_slice(&(slot as u32).to_le_bytes());
                for x in &v[..stride] {
                    out.extend_from_slice(&x.to_le_bytes());
                }
            }
        }
    } else {
        out.push(1);
        out.reserve(dense_bytes);
        for values in data.chunks_exact(stride) {
            for x in &slot_values(values)[..stride] {
                out.extend_from_slice(&x.to_le_bytes());
            }
        }
    }
}

/// A bounds-checked little-endian cursor whose errors name the field and byte offset.
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &str) -> PolyResult<&'a [u8]> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.bytes.len()).ok_or_else(|| {
            bad(format!(
                "truncated: {what} needs {n} bytes at offset {} but the payload ends at {}",
                self.pos + HEADER,
                self.bytes.len() + HEADER
            ))
        })?;
        let out = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(out)
    }

    fn array<const N: usize>(&mut self, what: &str) -> PolyResult<[u8; N]> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N, what)?);
        Ok(out)
    }

    fn u8(&mut self, what: &str) -> PolyResult<u8> {
        Ok(self.array::<1>(what)?[0])
    }

    fn u32(&mut self, what: &str) -> PolyResult<u32> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }

    fn u64(&mut self, what: &str) -> PolyResult<u64> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }

    fn f64(&mut self, what: &str) -> PolyResult<f64> {
        Ok(f64::from_le_bytes(self.array(what)?))
    }

    fn f32(&mut self, what: &str) -> PolyResult<f32> {
        Ok(f32::from_le_bytes(self.array(what)?))
    }

    fn string(&mut self, what: &str) -> PolyResult<String> {
        let n = self.u32(what)? as usize;
        let bytes = self.take(n, what)?;
        String::from_utf8(bytes.to_vec()).map_err(|_| bad(format!("{what} is not UTF-8")))
    }
}

/// Parses a model file's bytes (see the module docs); returns the learner and the metadata.
pub fn from_bytes(bytes: &[u8]) -> PolyResult<(Learner<FeatureSet>, String)> {
    if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
        return Err(bad(format!(
            "not a polars-poly model (the file does not start with the magic bytes {:?})",
            String::from_utf8_lossy(&MAGIC[..7])
        )));
    }
    if bytes.len() < HEADER + 4 {
        return Err(bad(format!("truncated: {} bytes, shorter than the header", bytes.len())));
    }
    let version = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
    if version != FORMAT_VERSION && version != FORMAT_VERSION_CHAINED_SLOTS {
        return Err(bad(format!(
            "format version {version} is not supported (this build reads versions \
             {FORMAT_VERSION_CHAINED_SLOTS} and {FORMAT_VERSION})"
        )));
    }
    let mut len = [0u8; 8];
    len.copy_from_slice(&bytes[12..20]);
    let payload_len = u64::from_le_bytes(len);
    let expected = (HEADER as u64).checked_add(payload_len).and_then(|n| n.checked_add(4));
    if expected != Some(bytes.len() as u64) {
        return Err(bad(format!(
            "truncated or extended: the header announces {payload_len} payload bytes ({} in \
             total) but the file has {} bytes",
            expected.map_or_else(|| "overflow".to_owned(), |n| n.to_string()),
            bytes.len()
        )));
    }
    let body = bytes.len() - 4;
    let stored =
        u32::from_le_bytes([bytes[body], bytes[body + 1], bytes[body + 2], bytes[body + 3]]);
    let actual = crc32fast::hash(&bytes[..body]);
    if stored != actual {
        return Err(bad(format!(
            "checksum mismatch (stored {stored:#010x}, computed {actual:#010x}): the file is corrupted"
        )));
    }
    let mut r = Reader { bytes: &bytes[HEADER..body], pos: 0 };
    let bits = r.u32("bits")?;
    let loss_kind = r.u8("loss")?;
    let tau = r.f64("quantile tau")?;
    let loss = match loss_kind {
        0 => Loss::Squared,
        1 => Loss::Logistic,
        2 => Loss::Hinge,
        3 => Loss::Quantile { tau },
        other => return Err(bad(format!("unknown loss code {other}"))),
    };
    let flags = r.u8("update rule")?;
    let rule = UpdateRule::from_flags(flags)
        .ok_or_else(|| bad(format!("unknown update-rule flags {flags:#04x}")))?;
    let learning_rate = r.f64("learning_rate")?;
    let power_t = r.f64("power_t")?;
    let initial_t = r.f64("initial_t")?;
    let l1 = r.f64("l1")?;
    let l2 = r.f64("l2")?;
    let n_namespaces = r.u32("namespace count")?;
    let mut namespaces = Vec::new();
    for _ in 0..n_namespaces {
        namespaces.push(r.string("namespace name")?);
    }
    let config =
        LearnerConfig { bits, loss, rule, learning_rate, power_t, initial_t, l1, l2, namespaces };
    config.validate().map_err(|e| bad(e.to_string()))?;
    let expansion = match r.u8("expansion kind")? {
        EXPANSION_INTERACTIONS => FeatureSet::Fixed(read_interactions(&mut r)?),
        EXPANSION_APPLE => {
            let apple = read_apple(&mut r)?;
            if version == FORMAT_VERSION_CHAINED_SLOTS && has_degree_3_weights(&apple) {
                return Err(bad(format!(
                    "format version {version} stored this apple model's monomials of degree >= 3 \
                     in weight slots this build no longer uses; retrain the model (this build \
                     writes version {FORMAT_VERSION})"
                )));
            }
            FeatureSet::from(apple)
        }
        kind => return Err(bad(format!("unknown expansion kind {kind}"))),
    };
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
    let metadata = r.string("metadata")?;
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
    if r.pos != r.bytes.len() {
        return Err(bad(format!("{} unexpected bytes after the weights", r.bytes.len() - r.pos)));
    }
    if table.data().iter().any(|v| !v.is_finite()) {
        return Err(bad("a stored weight is not finite"));
    }
    let learner = Learner::from_parts(config, expansion, table, state, labels, progress)
        .map_err(|e| bad(e.to_string()))?;
    Ok((learner, metadata))
}

/// Writes a model file.
pub fn save(learner: &Learner<FeatureSet>, metadata: &str, path: &Path) -> PolyResult<()> {
    let io = |e: std::io::Error| PolyError::io(path.display(), "cannot write", &e);
    let bytes = to_bytes(learner, metadata);
    let mut file = std::fs::File::create(path).map_err(io)?;
    file.write_all(&bytes).map_err(io)?;
    file.sync_all().map_err(io)
}

/// Reads a model file.
pub fn load(path: &Path) -> PolyResult<(Learner<FeatureSet>, String)> {
    let bytes =
        std::fs::read(path).map_err(|e| PolyError::io(path.display(), "cannot read", &e))?;
    from_bytes(&bytes).map_err(|e| match e {
        PolyError::InvalidInput(m) => PolyError::InvalidInput(format!("{}: {m}", path.display())),
        other => other,
    })
}
