//! The update rules: plain SGD with a decaying rate, adaptive (AdaGrad), normalized, and Vowpal
//! Wabbit's default adaptive + normalized + importance-invariant rule, following `gd.cc`.
//!
//! For an example with expanded features `(s, x)`, prediction `p` and label `y`, one learning
//! step is two passes over the features (besides the prediction pass):
//!
//! 1. **Sensitivity** (adaptive and/or normalized). With `g² = importance · ℓ'(p)²`, per feature:
//!    `G_s += g² x²` (adaptive); if `|x| > N_s` the feature has a new scale: the weight is
//!    rescaled as if the new scale had always been used (`w_s *= (N_s/|x|)^{2(1-power_t)}`, i.e.
//!    `N_s/|x|` at power_t = 0.5) and `N_s = |x|` (normalized). The feature's rate is
//!    `r_s = G_s^{-power_t} · (N_s²)^{power_t - 1}` (adaptive and normalized; `G_s^{-power_t}`
//!    adaptive only; `N_s^{-2}` normalized only), kept in the slot's spare value for pass 2, and
//!    `ppu = Σ x² r_s` ("prediction per unit update"). Normalized also accumulates
//!    `Σ importance · Σ_s x²/N_s²` over the run and scales `ppu` and the update by the global
//!    multiplier `m = (Σ importance / Σ importance·norm_x)^{1 - power_t}`.
//!    Plain SGD: `r_s = 1`, `ppu = Σ x²`.
//! 2. **Update**: the step size is `η · importance` (times `(t_0/(t_0 + t))^{power_t}` for the
//!    non-adaptive rules, `t` the importance learned so far including this example); the loss turns
//!    it into the scalar update `u` (plain gradient step, or the importance-invariant closed form,
//!    see [`super::loss`]); then `w_s += m · u · r_s · x` for every feature.
//!
//! L1/L2 follow Vowpal Wabbit's lazy scheme: weights are stored divided by a global `contraction`
//! (L2 multiplies it by `1 - λ₂ η̄` per step, `η̄ = -u/ℓ'(p)`), and a global `gravity` (L1 adds
//! `λ₁ η̄` per step) is subtracted from `|w|` (truncated at 0) when predicting; the table is
//! brought back to plain weights when the scales drift too far (`sync_weights`).
//!
//! Our choices where Vowpal Wabbit approximates: `1/sqrt` is exact (VW uses the hardware
//! reciprocal square root estimate); `G_s` is stored minus `initial_t` so a fresh slot is all zero.

use super::features::ExpandedFeatures;
use super::weights::{owner_tag, G2, NORM, RATE, W};

/// Smallest |x| the sensitivity pass uses (Vowpal Wabbit's `X_MIN`): tinier values would make
/// `x²` underflow.
const X_MIN: f32 = 1.084_202e-19;
const X2_MIN: f32 = X_MIN * X_MIN;

/// Which of Vowpal Wabbit's update-rule switches are on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UpdateRule {
    /// Per-coordinate AdaGrad rates (`--adaptive`).
    pub adaptive: bool,
    /// Per-feature scale normalization (`--normalized`).
    pub normalized: bool,
    /// Importance-invariant ("safe") updates (`--invariant`).
    pub invariant: bool,
}

impl UpdateRule {
    /// Vowpal Wabbit's default: adaptive + normalized + invariant.
    pub const VW_DEFAULT: UpdateRule =
        UpdateRule { adaptive: true, normalized: true, invariant: true };
    /// Plain stochastic gradient descent with a `power_t` decay (`--sgd`).
    pub const SGD: UpdateRule = UpdateRule { adaptive: false, normalized: false, invariant: false };
    /// AdaGrad alone.
    pub const ADAGRAD: UpdateRule =
        UpdateRule { adaptive: true, normalized: false, invariant: false };

    /// f32 values per weight slot: the weight alone for plain SGD, `[w, G, N, rate]` otherwise.
    pub fn stride(&self) -> usize {
        if self.adaptive || self.normalized {
            4
        } else {
            1
        }
    }

    /// The rule of a format-9-or-older model file's flags byte (1 adaptive, 2 normalized, 4
    /// invariant).
    pub(crate) fn from_flags(flags: u8) -> Option<Self> {
        (flags < 8).then_some(UpdateRule {
            adaptive: flags & 1 != 0,
            normalized: flags & 2 != 0,
            invariant: flags & 4 != 0,
        })
    }
}

/// The run-level scalars of the update (Vowpal Wabbit's `shared_data` / `gd` fields).
#[derive(Clone, Debug, PartialEq)]
pub struct GdState {
    /// Importance weight learned so far (`sd->t` without its initial value).
    pub t: f64,
    /// Normalized rule: `Σ importance` and `Σ importance · Σ x²/N²` (both start at `initial_t`).
    pub total_weight: f64,
    pub normalized_sum_norm_x: f64,
    /// Lazy L2 scale of the stored weights (1 = none).
    pub contraction: f64,
    /// Lazy L1 truncation applied when predicting (0 = none).
    pub gravity: f64,
}

impl GdState {
    pub fn new(initial_t: f64) -> Self {
        GdState {
            t: 0.0,
            total_weight: initial_t,
            normalized_sum_norm_x: initial_t,
            contraction: 1.0,
            gravity: 0.0,
        }
    }
}

/// Exponents of the per-feature rate, precomputed from `power_t`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Powers {
    /// `-power_t`.
    pub minus_power_t: f32,
    /// `power_t - 1` (adaptive) or `-1`: exponent of `N²`.
    pub neg_norm_power: f32,
    /// `initial_t`, added to the stored `G` (stored minus `initial_t`).
    pub initial_t: f32,
}

impl Powers {
    pub fn new(rule: UpdateRule, power_t: f64, initial_t: f64) -> Self {
        Powers {
            minus_power_t: -power_t as f32,
            neg_norm_power: if rule.adaptive { power_t as f32 - 1.0 } else { -1.0 },
            initial_t: if rule.adaptive { initial_t as f32 } else { 0.0 },
        }
    }
}

/// `max(|w| - gravity, 0) · sign(w)`: the L1-truncated weight.
#[inline(always)]
pub fn trunc_weight(w: f32, gravity: f32) -> f32 {
    if gravity < w.abs() {
        w - gravity.copysign(w)
    } else {
        0.0
    }
}

/// Checks once per example that every slot of `features` indexes inside `data`, which makes the
/// unchecked accesses of the passes below sound.
#[inline(always)]
fn check_table(data: &[f32], stride: usize, features: &ExpandedFeatures) {
    let slots = features.mask() as usize + 1;
    assert!(data.len() >= slots * stride, "weight table smaller than the feature mask");
}

/// `Σ w_s x` over the features (stored weights, before the contraction).
#[inline]
pub(crate) fn dot(data: &[f32], stride: usize, features: &ExpandedFeatures) -> f32 {
    check_table(data, stride, features);
    let mut sum = 0.0f32;
    for (&slot, &x) in features.slots().iter().zip(features.values()) {
        // SAFETY: slot <= mask (ExpandedFeatures invariant) and check_table above.
        let w = unsafe { *data.get_unchecked(slot as usize * stride + W) };
        sum += w * x;
    }
    sum
}

/// `Σ trunc(w_s, gravity) x` (L1 prediction).
#[inline]
pub(crate) fn dot_truncated(
    data: &[f32],
    stride: usize,
    features: &ExpandedFeatures,
    gravity: f32,
) -> f32 {
    check_table(data, stride, features);
    let mut sum = 0.0f32;
    for (&slot, &x) in features.slots().iter().zip(features.values()) {
        // SAFETY: as in `dot`.
        let w = unsafe { *data.get_unchecked(slot as usize * stride + W) };
        sum += trunc_weight(w, gravity) * x;
    }
    sum
}

/// `Σ x²` (plain SGD's pred-per-update).
#[inline]
pub(crate) fn sum_squares(features: &ExpandedFeatures) -> f32 {
    features.values().iter().map(|&x| x * x).sum()
}

/// Features per chunk of [`sensitivity`]: a chunk's rates are computed together, so that the
/// square roots and divisions of a typical example run as a few vector instructions.
const SENSITIVITY_CHUNK: usize = 16;

/// Pass 1 of the adaptive/normalized rules (see the module docs) on a stride-4 table. Returns
/// `(Σ x² r_s, Σ x²/N_s²)`. `SQRT` is the `power_t = 0.5` fast path. Not inlined: inside the
/// learner's step its loop compiled about 10% slower on long examples (criterion `learn`).
///
/// Three loops per chunk of features, with the results of one loop after another feature by
/// feature: the slots' states move in order (a slot held twice sees its first visit), the rates
/// come from those states without touching the table (the divider's work, vectorized), and the
/// rates are stored and summed in order. A square root or division of a vector lane is the
/// scalar one's correctly rounded result, so this equals the one-feature-at-a-time pass bit for
/// bit (tested against it).
#[inline(never)]
pub(crate) fn sensitivity<const ADAPTIVE: bool, const NORMALIZED: bool, const SQRT: bool>(
    data: &mut [f32],
    features: &ExpandedFeatures,
    grad_squared: f32,
    powers: Powers,
) -> (f32, f32) {
    check_table(data, 4, features);
    let mut pred_per_update = 0.0f32;
    let mut norm_x = 0.0f32;
    // Lanes past a short chunk's end keep harmless finite values and are not read back.
    let mut squares = [1.0f32; SENSITIVITY_CHUNK];
    let mut accumulated = [1.0f32; SENSITIVITY_CHUNK];
    let mut scales = [1.0f32; SENSITIVITY_CHUNK];
    let mut rates = [1.0f32; SENSITIVITY_CHUNK];
    let mut norms = [0.0f32; SENSITIVITY_CHUNK];
    let slots = features.slots().chunks(SENSITIVITY_CHUNK);
    for (slots, values) in slots.zip(features.values().chunks(SENSITIVITY_CHUNK)) {
        for (k, (&slot, &x)) in slots.iter().zip(values).enumerate() {
            // SAFETY: slot <= mask and the table has 4 values per slot (check_table).
            let w = unsafe { &mut *(data.as_mut_ptr().add(slot as usize * 4) as *mut [f32; 4]) };
            let (x, x2) = clamp_tiny(x);
            squares[k] = x2;
            if ADAPTIVE {
                w[G2] += grad_squared * x2;
                accumulated[k] = w[G2] + powers.initial_t;
            }
            if NORMALIZED {
                rescale_to_new_scale::<ADAPTIVE, SQRT>(w, x.abs(), powers);
                scales[k] = w[NORM];
            }
        }
        for k in 0..SENSITIVITY_CHUNK {
            let mut rate = 1.0f32;
            if ADAPTIVE {
                let g = accumulated[k];
                rate = if SQRT { 1.0 / g.sqrt() } else { g.powf(powers.minus_power_t) };
            }
            if NORMALIZED {
                // N = 1 (categorical and binary features) gives exactly 1.
                let inv_norm = 1.0 / scales[k];
                let x2 = squares[k];
                // Vowpal Wabbit counts a feature whose square overflows as 1 (inf/inf
                // otherwise); only a row learned under `OverflowPolicy::PredictZero` has one.
                norms[k] = if x2 == f32::INFINITY { 1.0 } else { x2 * inv_norm * inv_norm };
                rate *= if SQRT {
                    if ADAPTIVE {
                        inv_norm
                    } else {
                        inv_norm * inv_norm
                    }
                } else {
                    (scales[k] * scales[k]).powf(powers.neg_norm_power)
                };
            }
            // A tiny |x| first seen on a small gradient gives 1/(sqrt(G)·N) beyond single
            // precision (G = g²x², N = |x|); x²·r stays below 1/|g|, so the largest finite rate
            // keeps the step finite where infinity would make it NaN. (A compare, not
            // `f32::min`: its NaN handling costs a few % of the pass.)
            rates[k] = if rate > f32::MAX { f32::MAX } else { rate };
        }
        for (k, &slot) in slots.iter().enumerate() {
            // SAFETY: as above.
            unsafe { *data.as_mut_ptr().add(slot as usize * 4 + RATE) = rates[k] };
            pred_per_update += squares[k] * rates[k];
            if NORMALIZED {
                norm_x += norms[k];
            }
        }
    }
    (pred_per_update, norm_x)
}

/// `(x, x²)` with `|x|` raised to Vowpal Wabbit's `X_MIN` (keeping its sign) where `x²` would
/// underflow.
#[inline(always)]
fn clamp_tiny(x: f32) -> (f32, f32) {
    let x2 = x * x;
    if x2 < X2_MIN {
        (X_MIN.copysign(x), X2_MIN)
    } else {
        (x, x2)
    }
}

/// The normalized rule meeting `|x|` in a slot `w`: beyond the slot's scale `N`, the weight is
/// rescaled as if `|x|` had always been the scale, and `N = |x|`.
#[inline(always)]
fn rescale_to_new_scale<const ADAPTIVE: bool, const SQRT: bool>(
    w: &mut [f32; 4],
    x_abs: f32,
    powers: Powers,
) {
    if x_abs > w[NORM] {
        if w[NORM] > 0.0 {
            let rescale = w[NORM] / x_abs;
            w[W] *= if SQRT {
                if ADAPTIVE {
                    rescale
                } else {
                    rescale * rescale
                }
            } else {
                (rescale * rescale).powf(-powers.neg_norm_power)
            };
        }
        w[NORM] = x_abs;
    }
}

/// Pass 2: `w_s += update · r_s · x` (stride 4, rate from pass 1) or `w_s += update · x`
/// (`stride == 1`).
#[inline]
pub(crate) fn apply_update(
    data: &mut [f32],
    stride: usize,
    features: &ExpandedFeatures,
    update: f32,
) {
    check_table(data, stride, features);
    if stride == 4 && !features.owners().is_empty() {
        note_owners(data, features, |w, x| w[W] += update * w[RATE] * x);
    } else if stride == 4 {
        for (&slot, &x) in features.slots().iter().zip(features.values()) {
            let base = slot as usize * 4;
            // SAFETY: as in `sensitivity`.
            let w = unsafe { &mut *(data.as_mut_ptr().add(base) as *mut [f32; 4]) };
            w[W] += update * w[RATE] * x;
        }
    } else {
        for (&slot, &x) in features.slots().iter().zip(features.values()) {
            // SAFETY: slot <= mask and check_table with stride 1.
            let w = unsafe { data.get_unchecked_mut(slot as usize) };
            *w += update * x;
        }
    }
}

/// Runs `step` on each feature's slot (stride 4) and its value, then leaves the feature's
/// owner bits in the slot's rate ([`owner_tag`]): a growing table hands a slot's state to the
/// slot of the feature that touched it last (`crate::learner::learner::growth`). The rate is
/// scratch of one example's two passes; a tag is negative, which no rate is.
#[inline]
pub(crate) fn note_owners(
    data: &mut [f32],
    features: &ExpandedFeatures,
    mut step: impl FnMut(&mut [f32; 4], f32),
) {
    check_table(data, 4, features);
    let owners = features.owners();
    assert_eq!(owners.len(), features.len(), "an owner per feature");
    for (&slot, &x) in features.slots().iter().zip(features.values()) {
        let base = slot as usize * 4;
        // SAFETY: as in `sensitivity`.
        let w = unsafe { &mut *(data.as_mut_ptr().add(base) as *mut [f32; 4]) };
        step(w, x);
    }
    // After every step: a slot the example holds twice reads its rate again (the lines are in
    // the cache now).
    for (&slot, &owner) in features.slots().iter().zip(owners) {
        // SAFETY: as in `sensitivity`.
        unsafe { *data.as_mut_ptr().add(slot as usize * 4 + RATE) = owner_tag(owner) };
    }
}

/// Folds the lazy L1/L2 state into the stored weights (`w = trunc(w, gravity) · contraction`)
/// and resets it, as Vowpal Wabbit's `sync_weights`.
pub(crate) fn sync_weights(data: &mut [f32], stride: usize, state: &mut GdState) {
    if state.gravity == 0.0 && state.contraction == 1.0 {
        return;
    }
    let (gravity, contraction) = (state.gravity as f32, state.contraction as f32);
    for w in data.iter_mut().step_by(stride) {
        *w = trunc_weight(*w, gravity) * contraction;
    }
    state.gravity = 0.0;
    state.contraction = 1.0;
}

/// The global multiplier of the normalized rule, `(Σ importance / Σ importance·norm_x)^{1-pt}`.
pub(crate) fn average_update(total_weight: f64, normalized_sum_norm_x: f64, powers: Powers) -> f32 {
    if normalized_sum_norm_x <= 0.0 {
        return 1.0;
    }
    let ratio = (normalized_sum_norm_x / total_weight) as f32;
    if powers.neg_norm_power == -0.5 {
        1.0 / ratio.sqrt()
    } else if powers.neg_norm_power == -1.0 {
        1.0 / ratio
    } else {
        ratio.powf(powers.neg_norm_power)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_name_each_switch() {
        for flags in 0u8..8 {
            let rule = UpdateRule::from_flags(flags).unwrap();
            let bits = [rule.adaptive, rule.normalized, rule.invariant];
            assert!(bits.iter().enumerate().all(|(k, &on)| on == (flags >> k & 1 == 1)));
        }
        assert!(UpdateRule::from_flags(8).is_none());
        assert_eq!(UpdateRule::SGD.stride(), 1);
        assert_eq!(UpdateRule::VW_DEFAULT.stride(), 4);
    }

    #[test]
    fn trunc_weight_shrinks_towards_zero() {
        assert_eq!(trunc_weight(1.5, 0.5), 1.0);
        assert_eq!(trunc_weight(-1.5, 0.5), -1.0);
        assert_eq!(trunc_weight(0.25, 0.5), 0.0);
        assert_eq!(trunc_weight(-0.25, 0.0), -0.25);
    }

    #[test]
    fn sync_folds_lazy_state() {
        let mut data = vec![2.0f32, 9.0, 9.0, 9.0, -0.1, 9.0, 9.0, 9.0];
        let mut state = GdState { contraction: 0.5, gravity: 0.5, ..GdState::new(0.0) };
        sync_weights(&mut data, 4, &mut state);
        assert_eq!(data, vec![0.75, 9.0, 9.0, 9.0, 0.0, 9.0, 9.0, 9.0]);
        assert_eq!((state.contraction, state.gravity), (1.0, 0.0));
    }

    /// Pass 1 one feature at a time, as Vowpal Wabbit writes it: the reference of the chunked
    /// [`sensitivity`].
    fn sensitivity_one_at_a_time<const ADAPTIVE: bool, const NORMALIZED: bool, const SQRT: bool>(
        data: &mut [f32],
        features: &ExpandedFeatures,
        grad_squared: f32,
        powers: Powers,
    ) -> (f32, f32) {
        let (mut pred_per_update, mut norm_x) = (0.0f32, 0.0f32);
        for (&slot, &x) in features.slots().iter().zip(features.values()) {
            let w: &mut [f32; 4] = (&mut data[slot as usize * 4..][..4]).try_into().unwrap();
            let (x, x2) = clamp_tiny(x);
            let mut rate = 1.0f32;
            if ADAPTIVE {
                w[G2] += grad_squared * x2;
                let g = w[G2] + powers.initial_t;
                rate = if SQRT { 1.0 / g.sqrt() } else { g.powf(powers.minus_power_t) };
            }
            if NORMALIZED {
                rescale_to_new_scale::<ADAPTIVE, SQRT>(w, x.abs(), powers);
                let inv_norm = if w[NORM] == 1.0 { 1.0 } else { 1.0 / w[NORM] };
                norm_x += if x2 == f32::INFINITY { 1.0 } else { x2 * inv_norm * inv_norm };
                rate *= match (SQRT, ADAPTIVE) {
                    (true, true) => inv_norm,
                    (true, false) => inv_norm * inv_norm,
                    (false, _) => (w[NORM] * w[NORM]).powf(powers.neg_norm_power),
                };
            }
            let rate = if rate > f32::MAX { f32::MAX } else { rate };
            w[RATE] = rate;
            pred_per_update += x2 * rate;
        }
        (pred_per_update, norm_x)
    }

    /// Runs both passes of one rule on copies of `table` and compares every bit.
    fn same_bits<const A: bool, const N: bool, const S: bool>(
        table: &[f32],
        features: &ExpandedFeatures,
        grad_squared: f32,
        powers: Powers,
    ) -> Result<(), proptest::test_runner::TestCaseError> {
        let (mut chunked, mut reference) = (table.to_vec(), table.to_vec());
        let a = sensitivity::<A, N, S>(&mut chunked, features, grad_squared, powers);
        let b =
            sensitivity_one_at_a_time::<A, N, S>(&mut reference, features, grad_squared, powers);
        proptest::prop_assert_eq!((a.0.to_bits(), a.1.to_bits()), (b.0.to_bits(), b.1.to_bits()));
        let bits = |t: &[f32]| t.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        proptest::prop_assert_eq!(bits(&chunked), bits(&reference));
        Ok(())
    }

    proptest::proptest! {
        /// The chunked pass equals the one-feature-at-a-time pass bit for bit under every rule,
        /// on examples shorter and longer than a chunk, with slots held twice (bits=4 makes
        /// collisions common), tiny, huge and overflowing values, and slots of any state.
        #[test]
        fn chunked_sensitivity_equals_one_at_a_time(
            features in proptest::collection::vec(
                (0u64..16, proptest::prop_oneof![
                    -4.0f32..4.0,
                    proptest::sample::select(vec![1.0f32, -1.0, 1e-25, -3e-20, 1e19, 2e20]),
                ]),
                0..40,
            ),
            state in proptest::collection::vec(
                (-2.0f32..2.0, 0.0f32..50.0, proptest::sample::select(vec![0.0f32, 1.0, 0.3, 7.0])),
                16,
            ),
            grad_squared in proptest::prop_oneof![0.0f32..5.0, proptest::sample::select(vec![1e-30f32, 1e30])],
            power_t in proptest::sample::select(vec![0.5f64, 0.25]),
            initial_t in proptest::sample::select(vec![0.0f64, 1.0]),
        ) {
            let mut expanded = ExpandedFeatures::new(4);
            for &(hash, value) in &features {
                expanded.push(hash, value);
            }
            let table: Vec<f32> =
                state.iter().flat_map(|&(w, g, n)| [w, g, n, 0.5]).collect();
            let rule = UpdateRule::VW_DEFAULT;
            let p = Powers::new(rule, power_t, initial_t);
            let q = Powers::new(UpdateRule::ADAGRAD, power_t, initial_t);
            let r = Powers::new(UpdateRule { adaptive: false, ..rule }, power_t, initial_t);
            same_bits::<true, true, true>(&table, &expanded, grad_squared, p)?;
            same_bits::<true, true, false>(&table, &expanded, grad_squared, p)?;
            same_bits::<true, false, true>(&table, &expanded, grad_squared, q)?;
            same_bits::<true, false, false>(&table, &expanded, grad_squared, q)?;
            same_bits::<false, true, true>(&table, &expanded, grad_squared, r)?;
            same_bits::<false, true, false>(&table, &expanded, grad_squared, r)?;
        }
    }

    #[test]
    fn sqrt_fast_path_equals_general_power() {
        let powers = Powers::new(UpdateRule::VW_DEFAULT, 0.5, 0.0);
        let mut features = ExpandedFeatures::new(4);
        features.push(3, 0.5);
        features.push(7, -2.0);
        features.push(3, 4.0);
        let mut fast = vec![0.0f32; 64];
        fast[3 * 4 + NORM] = 1.0;
        fast[3 * 4] = 0.8;
        let mut general = fast.clone();
        let a = sensitivity::<true, true, true>(&mut fast, &features, 0.7, powers);
        let b = sensitivity::<true, true, false>(&mut general, &features, 0.7, powers);
        assert!((a.0 - b.0).abs() < 1e-5 * a.0 && (a.1 - b.1).abs() < 1e-6, "{a:?} {b:?}");
        for (x, y) in fast.iter().zip(&general) {
            assert!((x - y).abs() <= 1e-6 * x.abs().max(1.0), "{x} vs {y}");
        }
        // Slot 3 saw a new scale 4 > 1: its weight was rescaled by 1/4.
        assert!((fast[12] - 0.2).abs() < 1e-7);
    }
}
