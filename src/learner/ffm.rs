//! Field-aware factorization (FFM, issue 58): a latent vector per feature and *other* field,
//! learned online beside the linear weights, so that a pair of values never seen together is
//! still scored from what each value showed with others (an animal's "diet" and a food's
//! "kind" on eat-rate).
//!
//! Fields are fields of [`ExpandedFeatures`] (a namespace's own features,
//! [`super::features::namespace_field`]); the options list those taking part. Feature `i` of
//! field `f_i` and value `x_i` owns `F` latent vectors `v(i, z)` of `k` values, one per field `z`.
//! The score is the sum over pairs of features `i < j` of `<v(i, f_j), v(j, f_i)> x_i x_j`,
//! computed in `O(n F k)` from the sums `S[f][z] = sum over i in f of x_i v(i, z)`:
//! `sum over fields a < b of <S[a][b], S[b][a]>` plus, within a field,
//! `(|S[f][f]|^2 - sum over i in f of x_i^2 |v(i, f)|^2) / 2` (pairs of features of one field,
//! as fwumious_wabbit counts them; a one-hot field has none). The score's derivative in `v(i, z)`
//! is `x_i (S[z][f_i] - [z = f_i] x_i v(i, f_i))`.
//!
//! A feature's vectors lie together: row `r` of the table (from the feature's weight slot) holds
//! its `F k` latent values, then their `F k` AdaGrad sums, so an example reads one short run of
//! cache lines per feature. Each latent value takes AdaGrad's step,
//! `v -= rate g / G^power_t` after `G += g^2` (`G` starting at `initial_accumulator`), with `g`
//! the loss's derivative times the score's: the rule fwumious_wabbit gives its FFM part, apart
//! from the linear part's. Values start uniform in `±init_scale / sqrt(k)`, the same for a slot
//! whatever the order examples come in (a hash of the value's position and the seed).

use serde::{Deserialize, Serialize};

use super::features::ExpandedFeatures;
use crate::codec::{bad, ByteReader, ByteWriter};
use crate::error::PolyResult;

/// Most latent dimensions.
pub const MAX_K: usize = 128;
/// Most fields taking part.
pub const MAX_FIELDS: usize = 256;
/// Most rows: `2^MAX_FFM_BITS`.
pub const MAX_FFM_BITS: u32 = 30;

/// What a field-aware factorization is (stored with the model by name).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FfmOptions {
    /// Latent dimensions per feature and field.
    pub k: usize,
    /// The table has `2^bits` rows, one per feature (features whose slots hash to one row share
    /// it).
    pub bits: u32,
    /// The fields taking part ([`ExpandedFeatures`]' field ids), each once; features of other
    /// fields (the constant, crosses) are not factorized.
    pub fields: Vec<u32>,
    pub learning_rate: f32,
    pub power_t: f32,
    pub initial_accumulator: f32,
    /// Latent values start uniform in `±init_scale / sqrt(k)`.
    pub init_scale: f32,
    pub seed: u64,
}

impl FfmOptions {
    /// Options with fwumious_wabbit's defaults for the rule (rate 0.1 is ours: measured on
    /// eat-rate), `k` dimensions over `fields`.
    pub fn new(k: usize, bits: u32, fields: Vec<u32>) -> Self {
        FfmOptions {
            k,
            bits,
            fields,
            learning_rate: 0.1,
            power_t: 0.5,
            initial_accumulator: 1.0,
            init_scale: 0.1,
            seed: 0,
        }
    }

    pub fn validate(&self) -> PolyResult<()> {
        if !(1..=MAX_K).contains(&self.k) {
            return crate::invalid!("ffm k is {}; it must be between 1 and {MAX_K}", self.k);
        }
        if !(1..=MAX_FFM_BITS).contains(&self.bits) {
            return crate::invalid!(
                "ffm bits is {}; it must be between 1 and {MAX_FFM_BITS}",
                self.bits
            );
        }
        if self.fields.is_empty() || self.fields.len() > MAX_FIELDS {
            return crate::invalid!(
                "ffm needs between 1 and {MAX_FIELDS} fields; it has {}",
                self.fields.len()
            );
        }
        let mut sorted = self.fields.clone();
        sorted.sort_unstable();
        if let Some(pair) = sorted.windows(2).find(|pair| pair[0] == pair[1]) {
            return crate::invalid!("ffm field {} is listed twice", pair[0]);
        }
        let positive = |name: &str, value: f32| -> PolyResult<()> {
            if value.is_finite() && value > 0.0 {
                Ok(())
            } else {
                crate::invalid!("ffm {name} is {value}; it must be finite and > 0")
            }
        };
        positive("learning_rate", self.learning_rate)?;
        positive("initial_accumulator", self.initial_accumulator)?;
        if !(self.power_t.is_finite() && (0.0..=1.0).contains(&self.power_t)) {
            return crate::invalid!("ffm power_t is {}; it must be in [0, 1]", self.power_t);
        }
        if !(self.init_scale.is_finite() && self.init_scale >= 0.0) {
            return crate::invalid!(
                "ffm init_scale is {}; it must be finite and >= 0",
                self.init_scale
            );
        }
        Ok(())
    }

    /// Floats per row: the latent values, then their AdaGrad sums.
    fn row_len(&self) -> usize {
        2 * self.fields.len() * self.k
    }

    /// The table's size in bytes.
    pub fn table_bytes(&self) -> u128 {
        (1u128 << self.bits) * self.row_len() as u128 * 4
    }
}

/// One factorized feature of an example: its row, field (position in the options' fields) and
/// value.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Entry {
    row: u32,
    field: u32,
    value: f32,
}

/// What scoring an example leaves for its update: its factorized features and the sums `S`.
#[derive(Clone, Debug, Default)]
pub struct FfmScratch {
    entries: Vec<Entry>,
    /// `S[f][z][j]` at `(f F + z) k + j`.
    sums: Vec<f32>,
    /// The update's (position, step, squared derivative) of each latent value, all computed
    /// before any moves.
    steps: Vec<(usize, f32, f32)>,
}

/// The latent table and its rule (see the module docs).
#[derive(Clone, Debug)]
pub struct Ffm {
    options: FfmOptions,
    /// Field id -> position in `options.fields` (`u32::MAX`: not taking part).
    position: Vec<u32>,
    table: Vec<f32>,
}

impl Ffm {
    /// A fresh table (its values drawn from the seed), checked against the memory available.
    pub fn new(options: FfmOptions) -> PolyResult<Self> {
        options.validate()?;
        crate::memory::check_fits(
            options.table_bytes(),
            "the ffm table",
            "lower its bits, k or its fields",
        )?;
        let mut ffm = Ffm::with_table(options.clone(), Vec::new())?;
        let (fk, row_len) = (options.fields.len() * options.k, options.row_len());
        let scale = options.init_scale / (options.k as f32).sqrt();
        let mut table = vec![0.0f32; (1usize << options.bits) * row_len];
        crate::memory::advise_huge_pages(&mut table);
        for (r, row) in table.chunks_exact_mut(row_len).enumerate() {
            let (latent, sums) = row.split_at_mut(fk);
            for (j, v) in latent.iter_mut().enumerate() {
                *v = scale * uniform_sym(options.seed, (r * fk + j) as u64);
            }
            sums.fill(options.initial_accumulator);
        }
        ffm.table = table;
        Ok(ffm)
    }

    /// A factorization over a given table (model loading): `table` must hold `2^bits` rows.
    pub fn with_table(options: FfmOptions, table: Vec<f32>) -> PolyResult<Self> {
        options.validate()?;
        let expected = (1usize << options.bits) * options.row_len();
        if !table.is_empty() && table.len() != expected {
            return crate::invalid!(
                "the ffm table holds {} values where its options make {expected}",
                table.len()
            );
        }
        let largest = options.fields.iter().copied().max().unwrap_or(0) as usize;
        let mut position = vec![u32::MAX; largest + 1];
        for (p, &field) in options.fields.iter().enumerate() {
            position[field as usize] = p as u32;
        }
        Ok(Ffm { options, position, table })
    }

    pub fn options(&self) -> &FfmOptions {
        &self.options
    }

    pub fn table(&self) -> &[f32] {
        &self.table
    }

    /// The row of the feature in weight slot `slot`.
    #[inline]
    fn row_of(&self, slot: u32) -> u32 {
        // Fibonacci hashing: the slot's bits spread over the row's.
        ((u64::from(slot) ^ self.options.seed).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            >> (64 - self.options.bits)) as u32
    }

    /// The factorized part of the score of `features` (whose fields must be tracked), leaving
    /// in `scratch` what [`Ffm::learn`] needs.
    pub fn score(&self, features: &ExpandedFeatures, scratch: &mut FfmScratch) -> f32 {
        let (n_fields, k) = (self.options.fields.len(), self.options.k);
        let fk = n_fields * k;
        let row_len = self.options.row_len();
        scratch.entries.clear();
        let (slots, values) = (features.slots(), features.values());
        for (field, range) in features.field_runs() {
            let Some(&p) = self.position.get(field as usize).filter(|&&p| p != u32::MAX) else {
                continue;
            };
            for at in range {
                if values[at] != 0.0 {
                    let row = self.row_of(slots[at]);
                    scratch.entries.push(Entry { row, field: p, value: values[at] });
                }
            }
        }
        scratch.sums.clear();
        scratch.sums.resize(n_fields * fk, 0.0);
        let mut within = 0.0f32;
        for e in &scratch.entries {
            let latent = &self.table[e.row as usize * row_len..][..fk];
            let sums = &mut scratch.sums[e.field as usize * fk..][..fk];
            for (s, v) in sums.iter_mut().zip(latent) {
                *s += e.value * v;
            }
            let own = &latent[e.field as usize * k..][..k];
            within -= e.value * e.value * dot(own, own);
        }
        let mut score = 0.5 * within;
        for a in 0..n_fields {
            let s_aa = &scratch.sums[(a * n_fields + a) * k..][..k];
            score += 0.5 * dot(s_aa, s_aa);
            for b in a + 1..n_fields {
                let s_ab = &scratch.sums[(a * n_fields + b) * k..][..k];
                let s_ba = &scratch.sums[(b * n_fields + a) * k..][..k];
                score += dot(s_ab, s_ba);
            }
        }
        score
    }

    /// Takes the step of the example [`Ffm::score`] last scored into `scratch`, whose loss has
    /// derivative `gradient` in the score (importance weight included). `Err` with the first
    /// value that would not be finite, nothing moved.
    pub fn learn(&mut self, scratch: &mut FfmScratch, gradient: f32) -> Result<(), f32> {
        if gradient == 0.0 || scratch.entries.is_empty() {
            return Ok(());
        }
        let (n_fields, k) = (self.options.fields.len(), self.options.k);
        let fk = n_fields * k;
        let row_len = self.options.row_len();
        let (rate, power_t) = (self.options.learning_rate, self.options.power_t);
        // Every derivative from the values before the update (rows shared by two features of
        // the example move twice, each time by its own derivative).
        let steps = &mut scratch.steps;
        steps.clear();
        for e in &scratch.entries {
            let base = e.row as usize * row_len;
            let f = e.field as usize;
            for z in 0..n_fields {
                let other = &scratch.sums[(z * n_fields + f) * k..][..k];
                for (j, &s) in other.iter().enumerate() {
                    let at = base + z * k + j;
                    let mut d = s;
                    if z == f {
                        d -= e.value * self.table[at];
                    }
                    let g = gradient * e.value * d;
                    let sum = self.table[at + fk] + g * g;
                    let step = rate * g * adagrad_scale(sum, power_t);
                    if !(step.is_finite() && sum.is_finite()) {
                        return Err(step);
                    }
                    steps.push((at, step, g * g));
                }
            }
        }
        for &(at, step, g2) in steps.iter() {
            self.table[at] -= step;
            self.table[at + fk] += g2;
        }
        Ok(())
    }

    /// Writes the table: `2^bits` rows of `F k` latent values then their `F k` AdaGrad sums,
    /// `f32` each (the options are the learner's).
    pub fn write(&self, w: &mut ByteWriter) {
        if w.counted_only(self.table.len() * 4) {
            return;
        }
        w.reserve(self.table.len() * 4);
        for &v in &self.table {
            w.f32(v);
        }
    }

    /// Reads a table written by [`Ffm::write`] for `options`: every latent value finite, every
    /// AdaGrad sum finite and positive (a file edited by hand must not train into NaN).
    pub fn read(r: &mut ByteReader<'_>, options: FfmOptions) -> PolyResult<Self> {
        options.validate().map_err(|e| bad(e.to_string()))?;
        let n = (1usize << options.bits) * options.row_len();
        let bytes =
            r.take(n.checked_mul(4).ok_or_else(|| bad("ffm table too large"))?, "ffm table")?;
        let table: Vec<f32> =
            bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
        let fk = options.fields.len() * options.k;
        for (r, row) in table.chunks_exact(options.row_len()).enumerate() {
            let (latent, sums) = row.split_at(fk);
            if let Some(v) = latent.iter().find(|v| !v.is_finite()) {
                return Err(bad(format!("ffm row {r} holds the latent value {v}")));
            }
            if let Some(g) = sums.iter().find(|g| !(g.is_finite() && **g > 0.0)) {
                return Err(bad(format!("ffm row {r} holds the AdaGrad sum {g}")));
            }
        }
        Ffm::with_table(options, table).map_err(|e| bad(e.to_string()))
    }

    /// The latent vector `v(feature in slot, field z)` (`z` a position in the options' fields).
    pub fn latent(&self, slot: u32, z: usize) -> &[f32] {
        let k = self.options.k;
        let base = self.row_of(slot) as usize * self.options.row_len();
        &self.table[base + z * k..][..k]
    }
}

#[inline]
fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// `sum^-power_t`, its square root's reciprocal when `power_t` is a half.
#[inline]
fn adagrad_scale(sum: f32, power_t: f32) -> f32 {
    if power_t == 0.5 {
        1.0 / sum.sqrt()
    } else {
        sum.powf(-power_t)
    }
}

/// A uniform draw in [-1, 1) from `(seed, index)` (splitmix64).
fn uniform_sym(seed: u64, index: u64) -> f32 {
    let mut z = seed.wrapping_add(index.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    ((z >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
}

#[cfg(test)]
mod tests;
