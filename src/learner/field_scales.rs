//! Field scales: one learned multiplier per field (a namespace, a namespace cross, apple's
//! monomials; see [`super::features`]), so that the model scores
//!
//! ```text
//! s(x) = Σ_f a_f · c_f(x),   c_f(x) = Σ_{i in f} w_i x_i   (the constant's field keeps a = 1)
//! ```
//!
//! Why: on hashed categorical fields one learning rate cannot serve every field. On eat-rate
//! (docs/datasets.md) the animal x food cross has a million values seen about twice each in 2M
//! rows and wants steps 16x the default, while ten noise fields of 10,000 values want smaller
//! ones; the best single rate left the test logloss at 0.34 and the default at 0.62. A scale per
//! field learns that split from the data: the noise fields' scales fall toward 0, the cross's
//! rises until its contributions stop paying.
//!
//! Learning, per example, after the weights' own update (Vowpal Wabbit's rule, unchanged):
//! `a_f ← a_f - β h_f / sqrt(Σ h_f²)` with `h_f = importance · ℓ'(p) · c_f(x)`, the exact
//! gradient of the loss with respect to `a_f` at the progressive prediction (AdaGrad on the
//! scales, `β` = [`SCALE_RATE`]); scales stay in [0, [`MAX_SCALE`]]. The weights' update is the
//! rule's own step `w_i += u r_i x_i`, whose effect on the score is `a_f u r_i x_i²`: the
//! importance-invariant step therefore sees `Σ_f a_f Σ_{i in f} r_i x_i²` as its prediction per
//! unit update, so a large scale never overshoots. A field's scale is thus its rate multiplier
//! in score space, learned by the loss itself (the model's gradient, not a hypergradient: a
//! hypergradient on the rate, tried first, kept rising on eat-rate's cross until capped).

use super::features::{ExampleEnd, ExpandedFeatures, CONSTANT_FIELD};
use super::update::trunc_weight;
use super::weights::{RATE, W};
use crate::codec::{bad, ByteReader, ByteWriter};
use crate::error::PolyResult;

/// β, the scales' AdaGrad rate. At 0.1 eat-rate's test logloss at the default η is 1.5% above
/// the best η of a grid 1/16..8 (`benches/suite/default_rate.py`); a first try at 0.01 let the
/// scales move too slowly to make η irrelevant.
pub const SCALE_RATE: f64 = 0.1;
/// Largest scale: far above what any field reached in the measurements (under 40).
pub const MAX_SCALE: f32 = 1e3;
/// Most fields a model may hold (bounds what a corrupted file can allocate).
const MAX_FIELDS: u32 = 1 << 20;

/// The scales of a model's fields and their AdaGrad sums; `contributions` is the scratch of
/// the example being learned.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FieldScales {
    scales: Vec<f32>,
    sums: Vec<f64>,
    contributions: Vec<(u32, f32)>,
}

impl FieldScales {
    /// The scale of `field` (1 until it has learned).
    #[inline]
    pub fn scale(&self, field: u32) -> f32 {
        self.scales.get(field as usize).copied().unwrap_or(1.0)
    }

    /// Every field's scale, by field id.
    pub fn scales(&self) -> &[f32] {
        &self.scales
    }

    /// Every field's AdaGrad sum of squared gradients, by field id.
    pub fn sums(&self) -> &[f64] {
        &self.sums
    }

    /// The scaled score `Σ_f a_f c_f` of `features` (stored weights, before the contraction;
    /// L1's truncation applied when `gravity > 0`). With `record`, keeps each field's `c_f` for
    /// [`FieldScales::learn`].
    pub fn score(
        &mut self,
        data: &[f32],
        stride: usize,
        features: &ExpandedFeatures,
        gravity: f32,
        record: bool,
    ) -> f32 {
        if record {
            self.contributions.clear();
        }
        let mut score = 0.0f32;
        for (field, range) in features.field_runs() {
            let c = contribution(data, stride, features, range, gravity);
            score += self.scale(field) * c;
            if record && field != CONSTANT_FIELD {
                if field as usize >= self.scales.len() {
                    self.scales.resize(field as usize + 1, 1.0);
                    self.sums.resize(field as usize + 1, 0.0);
                }
                self.contributions.push((field, c));
            }
        }
        score
    }

    /// The same score without recording (prediction).
    pub fn predict(
        &self,
        data: &[f32],
        stride: usize,
        features: &ExpandedFeatures,
        gravity: f32,
    ) -> f32 {
        self.predict_between(data, stride, features, ExampleEnd::default(), features.end(), gravity)
    }

    /// [`FieldScales::predict`] of the example from `from` to `to` in a buffer of many (a block
    /// expanded whole), where it lies: the same sums in the same order as of its copy.
    pub(crate) fn predict_between(
        &self,
        data: &[f32],
        stride: usize,
        features: &ExpandedFeatures,
        from: ExampleEnd,
        to: ExampleEnd,
        gravity: f32,
    ) -> f32 {
        features
            .field_runs_between(from, to)
            .map(|(field, range)| {
                self.scale(field) * contribution(data, stride, features, range, gravity)
            })
            .sum()
    }

    /// `Σ_f a_f Σ_{i in f} r_i x_i²` (see the module docs): the rates of pass 1 of a stride-4
    /// table, or 1 on a stride-1 table.
    pub fn pred_per_update(&self, data: &[f32], stride: usize, features: &ExpandedFeatures) -> f32 {
        let (slots, values) = (features.slots(), features.values());
        features
            .field_runs()
            .map(|(field, range)| {
                let part: f32 = range
                    .map(|k| {
                        let rate =
                            if stride == 4 { data[slots[k] as usize * 4 + RATE] } else { 1.0 };
                        values[k] * values[k] * rate
                    })
                    .sum();
                self.scale(field) * part
            })
            .sum()
    }

    /// Drops the recorded contributions (an example scored before the table existed records
    /// none, and must not learn from the previous one's).
    pub fn forget_contributions(&mut self) {
        self.contributions.clear();
    }

    /// One AdaGrad step of the recorded fields' scales, `gradient = importance · ℓ'(p)` (times
    /// the contraction the recorded contributions were taken without).
    pub fn learn(&mut self, gradient: f64) {
        // Recorded fields are within the vectors (sized when recorded).
        for &(field, c) in &self.contributions {
            // A field contributing nothing has a zero gradient: nothing to learn (and no sqrt).
            if c == 0.0 {
                continue;
            }
            let f = field as usize;
            let h = gradient * f64::from(c);
            let sum = self.sums[f] + h * h;
            self.sums[f] = sum;
            if sum > 0.0 {
                // The step in single precision (the sums stay double, to keep counting).
                let step = (SCALE_RATE * h) as f32 / (sum as f32).sqrt();
                self.scales[f] = (self.scales[f] - step).clamp(0.0, MAX_SCALE);
            }
        }
    }

    /// The average of shards' scales (the all-reduce of distributed training, see
    /// [`crate::model::average`]): field `f` of the result is, over the shards, `scale` weighted
    /// by `shares`, or with `by_sums` by each shard's AdaGrad sum of the field (Vowpal Wabbit's
    /// adaptive average, as for the weights), and its sum averaged the same way (`Σ h² / Σ h`
    /// with `by_sums`). `renumber(k, f)` is shard `k`'s field `f` in the result's numbering
    /// (crosses found in another order than the merged model's). A field a shard never learned
    /// counts as its untrained scale, 1 with a sum of 0.
    pub(crate) fn averaged(
        shards: &[&FieldScales],
        shares: &[f64],
        by_sums: bool,
        renumber: impl Fn(usize, u32) -> u32,
    ) -> FieldScales {
        // Per merged field: each shard's (scale, sum), untrained where it has none.
        let mut fields: Vec<Vec<(f32, f64)>> = Vec::new();
        for (k, shard) in shards.iter().enumerate() {
            for (field, (&scale, &sum)) in shard.scales.iter().zip(&shard.sums).enumerate() {
                let merged = renumber(k, field as u32) as usize;
                if merged >= fields.len() {
                    fields.resize(merged + 1, vec![(1.0, 0.0); shards.len()]);
                }
                fields[merged][k] = (scale, sum);
            }
        }
        let mut out = FieldScales::default();
        for per_shard in &fields {
            let sum_of_sums: f64 = per_shard.iter().map(|&(_, h)| h).sum();
            // Each shard's weight in the field's average, and what the weighted sums divide by.
            let (weights, divisor): (Vec<f64>, f64) = if by_sums && sum_of_sums > 0.0 {
                (per_shard.iter().map(|&(_, h)| h).collect(), sum_of_sums)
            } else {
                (shares.to_vec(), 1.0)
            };
            let average = |value: fn((f32, f64)) -> f64| -> f64 {
                per_shard.iter().zip(&weights).map(|(&p, w)| w * value(p)).sum::<f64>() / divisor
            };
            let scale = average(|(a, _)| f64::from(a));
            out.scales.push((scale as f32).clamp(0.0, MAX_SCALE));
            out.sums.push(average(|(_, h)| h));
        }
        out
    }

    /// Writes the scales: count `u32`, then per field `scale f32`, `sum f64`.
    pub fn write(&self, w: &mut ByteWriter) {
        w.u32(self.scales.len() as u32);
        for (&scale, &sum) in self.scales.iter().zip(&self.sums) {
            w.f32(scale);
            w.f64(sum);
        }
    }

    /// Reads what [`FieldScales::write`] wrote, checking every number.
    pub fn read(r: &mut ByteReader<'_>) -> PolyResult<Self> {
        let n = r.u32("field count")?;
        if n > MAX_FIELDS {
            return Err(bad(format!("{n} field scales (at most {MAX_FIELDS})")));
        }
        let mut scales = FieldScales::default();
        for field in 0..n {
            let (scale, sum) = (r.f32("field scale")?, r.f64("field scale sum")?);
            if !((0.0..=MAX_SCALE).contains(&scale) && sum.is_finite() && sum >= 0.0) {
                return Err(bad(format!("field {field} has scale {scale} and sum {sum}")));
            }
            scales.scales.push(scale);
            scales.sums.push(sum);
        }
        Ok(scales)
    }
}

/// `c_f = Σ_{i in range} w_i x_i` (truncated weights when `gravity > 0`).
#[inline]
fn contribution(
    data: &[f32],
    stride: usize,
    features: &ExpandedFeatures,
    range: std::ops::Range<usize>,
    gravity: f32,
) -> f32 {
    let (slots, values) = (&features.slots()[range.clone()], &features.values()[range]);
    let weight = |slot: u32| data[slot as usize * stride + W];
    if gravity > 0.0 {
        slots.iter().zip(values).map(|(&s, &x)| trunc_weight(weight(s), gravity) * x).sum()
    } else {
        slots.iter().zip(values).map(|(&s, &x)| weight(s) * x).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn features() -> ExpandedFeatures {
        let mut f = ExpandedFeatures::new(4);
        f.track_fields(true);
        f.begin_field(1);
        f.push(1, 2.0);
        f.push(2, 1.0);
        f.begin_field(3);
        f.push(3, -1.0);
        f.begin_field(CONSTANT_FIELD);
        f.push(0, 1.0);
        f
    }

    /// Stride-1 table: weights 0.5, 1, 2, 3 on slots 0..4 (others 0).
    fn table() -> Vec<f32> {
        let mut data = vec![0.0f32; 16];
        data[..4].copy_from_slice(&[0.5, 1.0, 2.0, 3.0]);
        data
    }

    #[test]
    fn score_is_the_scaled_sum_of_field_contributions() {
        let (f, data) = (features(), table());
        let mut scales = FieldScales::default();
        // c_1 = 1·2 + 2·1 = 4, c_3 = 3·(-1) = -3, constant 0.5.
        assert_eq!(scales.score(&data, 1, &f, 0.0, true), 4.0 - 3.0 + 0.5);
        scales.scales = vec![1.0, 2.0, 1.0, 0.5];
        assert_eq!(scales.predict(&data, 1, &f, 0.0), 2.0 * 4.0 - 0.5 * 3.0 + 0.5);
        assert_eq!(scales.pred_per_update(&data, 1, &f), 2.0 * 5.0 + 0.5 * 1.0 + 1.0);
    }

    #[test]
    fn learning_moves_each_scale_against_its_gradient_and_never_the_constants() {
        let (f, data) = (features(), table());
        let mut scales = FieldScales::default();
        scales.score(&data, 1, &f, 0.0, true);
        // ℓ' = -1 (the score should rise): field 1 (c = 4) grows, field 3 (c = -3) shrinks,
        // each by β at its first step (AdaGrad).
        scales.learn(-1.0);
        assert!((scales.scale(1) - (1.0 + SCALE_RATE as f32)).abs() < 1e-6);
        assert!((scales.scale(3) - (1.0 - SCALE_RATE as f32)).abs() < 1e-6);
        assert_eq!(scales.scale(CONSTANT_FIELD), 1.0);
        assert_eq!(scales.scale(2), 1.0, "a field never seen keeps 1");
    }

    #[test]
    fn scales_round_trip_and_corrupt_ones_are_refused() {
        let scales = FieldScales {
            scales: vec![1.0, 0.25, 7.5],
            sums: vec![0.0, 3.0, 0.5],
            ..FieldScales::default()
        };
        let mut w = ByteWriter::default();
        scales.write(&mut w);
        let bytes = w.into_bytes();
        let back = FieldScales::read(&mut ByteReader::new(&bytes, 0, "test")).unwrap();
        assert_eq!(back, scales);
        let mut bad_scale = scales.clone();
        bad_scale.scales[1] = -1.0;
        let mut w = ByteWriter::default();
        bad_scale.write(&mut w);
        let err = FieldScales::read(&mut ByteReader::new(&w.into_bytes(), 0, "test")).unwrap_err();
        assert!(err.to_string().contains("field 1 has scale -1"), "{err}");
    }
}
