//! Logistic loss `log(1 + e^{-y p})`, labels in {-1, +1}; scores are margins.
//!
//! A label `y` strictly between -1 and +1 is a soft label, as Vowpal Wabbit reads it: the
//! share `s = (y + 1) / 2` of a positive example and `1 - s` of a negative one, so its loss,
//! gradient and importance-invariant step are those mixtures (`vw --loss_function logistic` on
//! a file of 0/1 labels learns 0 as half of each).

use super::{LossFunction, LossParams};
use crate::error::PolyResult;

/// Logistic predictions are clipped to `[-LOGISTIC_CLIP, LOGISTIC_CLIP]` (Vowpal Wabbit's).
pub const LOGISTIC_CLIP: f64 = 50.0;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Logistic;

impl LossFunction for Logistic {
    const NAME: &'static str = "logistic";
    const CLASSIFICATION: bool = true;

    fn from_params(_: &LossParams) -> PolyResult<Self> {
        Ok(Logistic)
    }

    fn value(&self, p: f64, y: f64) -> f64 {
        match soft_share(y) {
            None => softplus(-y * p),
            Some(s) => s * softplus(-p) + (1.0 - s) * softplus(p),
        }
    }

    fn derivative(&self, p: f64, y: f64) -> f64 {
        match soft_share(y) {
            None => -y * logistic(-y * p),
            Some(s) => -s * logistic(-p) + (1.0 - s) * logistic(p),
        }
    }

    /// One exponential for value, derivative and gate.
    #[inline]
    fn evaluate(&self, p: f64, y: f64) -> (f64, f64, bool) {
        if soft_share(y).is_some() {
            return (self.value(p, y), self.derivative(p, y), true);
        }
        if (y * p).abs() <= 700.0 {
            let e = (-y * p).exp();
            (e.ln_1p(), -y * e / (1.0 + e), 1.0f32 + e as f32 > 1.0)
        } else {
            (self.value(p, y), self.derivative(p, y), self.single_precision_positive(p, y))
        }
    }

    /// `log(1 + e^{-m})` rounds to 0 in f32 once `e^{-m} < 2^-24` (margin m > ~16.6): such
    /// examples are not learned (their gradient is below 6e-8 anyway). Matching this keeps the
    /// per-feature state (and so the progressive loss) equal to Vowpal Wabbit's.
    fn single_precision_positive(&self, p: f64, y: f64) -> bool {
        // A soft label's loss is at least min(s, 1 - s) · log 2.
        // log(x) > 0 exactly when x > 1, so the logarithm itself is not needed.
        soft_share(y).is_some() || 1.0f32 + (-(y * p) as f32).exp() > 1.0
    }

    fn invariant_step(&self, p: f64, y: f64, s: f64, ppu: f64) -> f64 {
        let step = |label: f64| label * logistic_margin_step(label * p, s * ppu) / ppu;
        match soft_share(y) {
            None => step(y),
            Some(share) => share * step(1.0) + (1.0 - share) * step(-1.0),
        }
    }

    fn fixed_range(&self) -> Option<(f64, f64)> {
        Some((-LOGISTIC_CLIP, LOGISTIC_CLIP))
    }

    fn has_probability(&self) -> bool {
        true
    }
}

/// The positive share `(y + 1) / 2` of a soft label (strictly between -1 and +1); `None` for
/// the labels -1 and +1.
#[inline]
fn soft_share(y: f64) -> Option<f64> {
    (y != 1.0 && y != -1.0).then_some((y + 1.0) / 2.0)
}

/// `log(1 + e^t)` without overflow.
#[inline]
pub(super) fn softplus(t: f64) -> f64 {
    if t > 0.0 {
        t + (-t).exp().ln_1p()
    } else {
        t.exp().ln_1p()
    }
}

/// `1 / (1 + e^{-t})`.
#[inline]
pub(crate) fn logistic(t: f64) -> f64 {
    1.0 / (1.0 + (-t).exp())
}

/// Increase `d ≥ 0` of the margin `z = y p` under the logistic gradient flow
/// `dz/dh = ppu / (1 + e^z)` for a total flow time `c = s · ppu`, i.e. the root of
/// `g(d) = d + a (e^d - 1) - c`, `a = e^{z₀}`. `g` is increasing and convex with `g(0) = -c < 0`.
///
/// Halley's method, started from the root of the quadratic model `(1 + a) d + a d²/2 = c` (as
/// `e^d - 1 ≥ d + d²/2`, an upper bound of the root, within a few % for the steps of typical
/// rows; tighter for large steps, `ln(1 + c / a)`), refined by a Newton step on the cubic model
/// (relative error about `d³/24` rather than `d²/6`). A Halley step costs one exponential, like
/// a Newton step, and cubes the error instead of squaring it; the solve is on the learner's
/// serial chain from one example to the next, where one exponential fewer shows (issue 21). As
/// `g''/g' = g'''/g' = a e^d / (1 + a e^d) < 1`, the error after a Halley step is at most a
/// quarter of the cube of the error before it, which the step itself measures to first order:
/// once a step's cube is below `1e-12 · min(d, 1)` the root is known to `2.5e-13` relative
/// precision (for `d ≤ 1`; absolute beyond), so one step usually suffices. Should the steps not
/// shrink (a start far off), Newton's monotone iteration from an upper bound finishes, which
/// always converges.
pub(super) fn logistic_margin_step(z0: f64, c: f64) -> f64 {
    if z0 > 35.0 {
        // e^{z0} > 1.5e15: the gradient is below 1e-15 and d = c / (1 + e^{z0}) to f64 precision.
        return c / (1.0 + z0.exp());
    }
    let a = z0.exp();
    let b = 1.0 + a;
    // The quadratic model's positive root, in the form without cancellation, then one Newton
    // step on the cubic model `(1 + a) d + a d²/2 + a d³/6 = c` (no exponential): convex and
    // above the quadratic, so the step stays above its root, itself above ours.
    let mut d = 2.0 * c / (b + (b * b + 2.0 * a * c).sqrt());
    d -= a * d * d * d / (6.0 * (b + a * d * (1.0 + 0.5 * d)));
    if d > 0.5 {
        d = d.min((c / a).ln_1p());
    }
    let upper = d;
    for _ in 0..4 {
        let growth = d.exp_m1();
        let g = d + a * growth - c;
        let curvature = a * (growth + 1.0);
        let slope = 1.0 + curvature;
        let next = d - 2.0 * g * slope / (2.0 * slope * slope - g * curvature);
        if !(next > 0.0 && next <= upper) {
            break;
        }
        let change = (d - next).abs();
        d = next;
        // The error left is at most a quarter of the step's cube (above).
        if change * change * change <= 1e-12 * d.min(1.0) {
            return d;
        }
    }
    newton_from_above(a, c, upper)
}

/// Newton's method on `g(d) = d + a (e^d - 1) - c` from `d`, an upper bound of the root: it
/// decreases monotonically onto the root, with an error after a step of at most half the step's
/// square (`g''/g' < 1`), and stops once a step is below `1e-6 · min(d, 1)`.
fn newton_from_above(a: f64, c: f64, mut d: f64) -> f64 {
    for _ in 0..60 {
        let growth = d.exp_m1();
        let g = d + a * growth - c;
        let slope = 1.0 + a * (growth + 1.0);
        let next = d - g / slope;
        let decreasing = next < d; // false for NaN too
        if !decreasing || next <= 0.0 {
            // Monotone convergence ended (or rounding pushed below the root's sign change).
            return if next > 0.0 && next < d { next } else { d.max(0.0) };
        }
        if d - next <= 1e-6 * d.min(1.0) {
            return next;
        }
        d = next;
    }
    d
}
