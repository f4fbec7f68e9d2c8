//! Loss functions of the online learner: value, first derivative, and the two update rules
//! Vowpal Wabbit derives from them (its `loss_functions.cc`).
//!
//! Conventions (Vowpal Wabbit's): `p` is the prediction, `y` the label. An *update* `u` is the
//! signed amount by which the learner moves the weights, `w_i += u · x_i · rate_i`, so that the
//! prediction moves by `u · ppu`, where `ppu = Σ_i x_i² · rate_i` (the *pred per update*, which
//! the update rule computes). With step size `s = η · importance`:
//!
//! * the **plain** update is the gradient step `u = -s · ℓ'(p)`;
//! * the **importance-invariant** ("safe") update of Karampatziakis & Langford (2011) follows the
//!   gradient flow `dp/dh = -ppu · ℓ'(p)` for `h` from 0 to `s` and returns `(p(s) - p) / ppu`.
//!   It never overshoots the label and an importance weight of 2 equals the same example twice.
//!   Closed forms: squared `u = (y - p)(1 - e^{-2 s ppu}) / ppu`; hinge
//!   `u = y · min(s, (1 - y p) / ppu)`; quantile `u = τ s` capped at `(y - p) / ppu` (and the
//!   mirror image below the label); logistic solves `z + e^z = z₀ + e^{z₀} + s·ppu` for the new
//!   margin `z = y p` (Vowpal Wabbit approximates the Lambert W function here; we solve the
//!   equation to machine precision with a monotone Newton iteration).
//!
//! All arithmetic here is f64; the per-feature loops of the learner are f32 like Vowpal Wabbit.

use crate::error::PolyResult;

/// Below this `s · ppu` the invariant updates use their first-order limit (the plain gradient
/// step): the closed forms would divide tiny numbers.
const SMALL_STEP: f64 = 1e-12;

/// A loss function. Classification losses take labels in {-1, +1}.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Loss {
    /// `(p - y)²`.
    Squared,
    /// `log(1 + e^{-y p})`, labels in {-1, +1}.
    Logistic,
    /// `max(0, 1 - y p)`, labels in {-1, +1}.
    Hinge,
    /// Pinball loss: `τ (y - p)` above the prediction, `(1 - τ)(p - y)` below; `0 < τ < 1`.
    Quantile { tau: f64 },
}

impl Loss {
    /// Checks the loss's parameter.
    pub fn validate(&self) -> PolyResult<()> {
        if let Loss::Quantile { tau } = *self {
            if !(tau > 0.0 && tau < 1.0) {
                return crate::invalid!("quantile loss needs 0 < tau < 1, got tau={tau}");
            }
        }
        Ok(())
    }

    /// True for the losses whose labels must be -1 or +1.
    pub fn is_classification(&self) -> bool {
        matches!(self, Loss::Logistic | Loss::Hinge)
    }

    /// Short name, as Vowpal Wabbit's `--loss_function` spells it.
    pub fn name(&self) -> &'static str {
        match self {
            Loss::Squared => "squared",
            Loss::Logistic => "logistic",
            Loss::Hinge => "hinge",
            Loss::Quantile { .. } => "quantile",
        }
    }

    /// The loss of prediction `p` for label `y`.
    pub fn value(&self, p: f64, y: f64) -> f64 {
        match *self {
            Loss::Squared => (p - y) * (p - y),
            Loss::Logistic => softplus(-y * p),
            Loss::Hinge => (1.0 - y * p).max(0.0),
            Loss::Quantile { tau } => {
                let e = y - p;
                if e > 0.0 {
                    tau * e
                } else {
                    -(1.0 - tau) * e
                }
            }
        }
    }

    /// Value, derivative and [`Loss::single_precision_positive`] at once (one exponential for
    /// the logistic loss): the per-example hot path.
    #[inline]
    pub fn evaluate(&self, p: f64, y: f64) -> (f64, f64, bool) {
        match *self {
            Loss::Logistic if (y * p).abs() <= 700.0 => {
                let e = (-y * p).exp();
                let value = e.ln_1p();
                let derivative = -y * e / (1.0 + e);
                (value, derivative, 1.0f32 + e as f32 > 1.0)
            }
            _ => (self.value(p, y), self.derivative(p, y), self.single_precision_positive(p, y)),
        }
    }

    /// Whether the loss is positive when evaluated in f32 as Vowpal Wabbit does (`get_loss > 0`
    /// gates its update). The difference with f64 is the logistic loss of a confident, correct
    /// prediction: `log(1 + e^{-m})` rounds to 0 in f32 once `e^{-m} < 2^-24` (margin m > ~16.6),
    /// and such examples are not learned (their gradient is below 6e-8 anyway). Matching this
    /// keeps the per-feature state (and so the progressive loss) equal to Vowpal Wabbit's.
    pub fn single_precision_positive(&self, p: f64, y: f64) -> bool {
        match *self {
            // log(x) > 0 exactly when x > 1, so the logarithm itself is not needed.
            Loss::Logistic => 1.0f32 + (-(y * p) as f32).exp() > 1.0,
            _ => self.value(p, y) as f32 > 0.0,
        }
    }

    /// `∂ℓ/∂p`. Hinge and quantile use the subgradient 0 at their kinks.
    pub fn derivative(&self, p: f64, y: f64) -> f64 {
        match *self {
            Loss::Squared => 2.0 * (p - y),
            Loss::Logistic => -y * logistic(-y * p),
            Loss::Hinge => {
                if y * p >= 1.0 {
                    0.0
                } else {
                    -y
                }
            }
            Loss::Quantile { tau } => {
                let e = y - p;
                if e > 0.0 {
                    -tau
                } else if e < 0.0 {
                    1.0 - tau
                } else {
                    0.0
                }
            }
        }
    }

    /// The plain gradient-step update `-s · ℓ'(p)` (Vowpal Wabbit's `get_unsafe_update`).
    pub fn plain_update(&self, p: f64, y: f64, s: f64) -> f64 {
        -s * self.derivative(p, y)
    }

    /// The importance-invariant update for step size `s = η · importance` and pred-per-update
    /// `ppu > 0` (Vowpal Wabbit's `get_update`). Tends to [`Loss::plain_update`] as `s · ppu → 0`.
    pub fn invariant_update(&self, p: f64, y: f64, s: f64, ppu: f64) -> f64 {
        let step = s * ppu;
        if step < SMALL_STEP || ppu.is_nan() {
            return self.plain_update(p, y, s);
        }
        match *self {
            // dp/dh = 2 ppu (y - p): p(s) = y + (p - y) e^{-2 s ppu}.
            Loss::Squared => (y - p) * -(-2.0 * step).exp_m1() / ppu,
            Loss::Logistic => y * logistic_margin_step(y * p, step) / ppu,
            // Linear descent until the margin reaches 1, then the gradient vanishes.
            Loss::Hinge => {
                let err = 1.0 - y * p;
                if err <= 0.0 {
                    0.0
                } else {
                    y * s.min(err / ppu)
                }
            }
            // Linear descent until the prediction reaches the label.
            Loss::Quantile { tau } => {
                let err = y - p;
                if err > 0.0 {
                    (tau * s).min(err / ppu)
                } else if err < 0.0 {
                    (-(1.0 - tau) * s).max(err / ppu)
                } else {
                    0.0
                }
            }
        }
    }
}

/// `log(1 + e^t)` without overflow.
#[inline]
fn softplus(t: f64) -> f64 {
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
/// `g(d) = d + e^{z₀} (e^d - 1) - c`. `g` is increasing and convex with `g(0) = -c < 0`, so
/// Newton's method started from any upper bound of the root decreases monotonically onto it.
/// Both `c / (1 + e^{z₀})` (the tangent at 0) and `ln(1 + c e^{-z₀})` bound the root from above.
fn logistic_margin_step(z0: f64, c: f64) -> f64 {
    if z0 > 35.0 {
        // e^{z0} > 1.5e15: the gradient is below 1e-15 and d = c / (1 + e^{z0}) to f64 precision.
        return c / (1.0 + z0.exp());
    }
    let ez0 = z0.exp();
    let tangent = c / (1.0 + ez0);
    // Both bound the root from above; the logarithmic one is much tighter for large steps.
    let mut d = if tangent > 0.5 { tangent.min((c / ez0).ln_1p()) } else { tangent };
    for _ in 0..60 {
        let growth = d.exp_m1();
        let g = d + ez0 * growth - c;
        let slope = 1.0 + ez0 * (growth + 1.0);
        let next = d - g / slope;
        let decreasing = next < d; // false for NaN too
        if !decreasing || next <= 0.0 {
            // Monotone convergence ended (or rounding pushed below the root's sign change).
            return if next > 0.0 && next < d { next } else { d.max(0.0) };
        }
        // Newton's error squares every step, so once a step is below 1e-9·d the next error is
        // ~1e-18·d: converged to f64 precision.
        if d - next <= 1e-9 * d {
            return next;
        }
        d = next;
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const LOSSES: [Loss; 5] = [
        Loss::Squared,
        Loss::Logistic,
        Loss::Hinge,
        Loss::Quantile { tau: 0.3 },
        Loss::Quantile { tau: 0.9 },
    ];

    fn labels_for(loss: &Loss) -> Vec<f64> {
        if loss.is_classification() {
            vec![-1.0, 1.0]
        } else {
            vec![-2.5, 0.0, 0.7, 3.0]
        }
    }

    #[test]
    fn derivatives_match_finite_differences() {
        let h = 1e-6;
        for loss in LOSSES {
            for y in labels_for(&loss) {
                for k in -40..=40 {
                    let p = f64::from(k) * 0.173 + 0.011;
                    // Stay away from the kinks of hinge and quantile.
                    if matches!(loss, Loss::Hinge) && (1.0 - y * p).abs() < 1e-3 {
                        continue;
                    }
                    if matches!(loss, Loss::Quantile { .. }) && (y - p).abs() < 1e-3 {
                        continue;
                    }
                    let numeric = (loss.value(p + h, y) - loss.value(p - h, y)) / (2.0 * h);
                    let analytic = loss.derivative(p, y);
                    assert!(
                        (numeric - analytic).abs() < 1e-6 * (1.0 + analytic.abs()),
                        "{loss:?} y={y} p={p}: numeric {numeric} vs analytic {analytic}"
                    );
                }
            }
        }
    }

    #[test]
    fn values_are_the_textbook_losses() {
        assert_eq!(Loss::Squared.value(0.5, 2.0), 2.25);
        assert!((Loss::Logistic.value(0.0, 1.0) - 2f64.ln()).abs() < 1e-15);
        assert!((Loss::Logistic.value(-800.0, 1.0) - 800.0).abs() < 1e-9);
        assert_eq!(Loss::Logistic.value(800.0, 1.0), 0.0);
        assert_eq!(Loss::Hinge.value(0.25, -1.0), 1.25);
        assert_eq!(Loss::Hinge.value(3.0, 1.0), 0.0);
        assert!((Loss::Quantile { tau: 0.2 }.value(1.0, 3.0) - 0.4).abs() < 1e-15);
        assert!((Loss::Quantile { tau: 0.2 }.value(3.0, 1.0) - 1.6).abs() < 1e-15);
    }

    #[test]
    fn invariant_update_tends_to_plain_gradient_step() {
        for loss in LOSSES {
            for y in labels_for(&loss) {
                for p in [-1.7, -0.2, 0.3, 0.95, 2.2] {
                    let ppu = 1.3;
                    let plain = loss.plain_update(p, y, 1.0);
                    for s in [1e-4, 1e-6, 1e-9] {
                        let invariant = loss.invariant_update(p, y, s, ppu) / s;
                        assert!(
                            (invariant - plain).abs() <= 1e-3 * plain.abs().max(1e-12) + s * 10.0,
                            "{loss:?} y={y} p={p} s={s}: {invariant} vs {plain}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn invariant_update_never_overshoots() {
        for s in [0.1, 1.0, 10.0, 1e6] {
            let u = Loss::Squared.invariant_update(0.0, 1.0, s, 2.0);
            assert!(u * 2.0 <= 1.0 + 1e-12 && u > 0.0);
            let u = Loss::Hinge.invariant_update(0.0, 1.0, s, 2.0);
            assert!(u * 2.0 <= 1.0 + 1e-12);
            let u = Loss::Quantile { tau: 0.5 }.invariant_update(0.0, -1.0, s, 2.0);
            assert!(u * 2.0 >= -1.0 - 1e-12);
        }
        // The logistic margin keeps growing but ever more slowly (no overshoot to infinity).
        let u = Loss::Logistic.invariant_update(0.0, 1.0, 1e6, 1.0);
        assert!(u > 0.0 && u < 15.0, "{u}");
    }

    #[test]
    fn logistic_step_solves_its_equation() {
        for z0 in [-60.0, -5.0, -0.5, 0.0, 0.7, 4.0, 20.0, 34.0] {
            for c in [1e-10, 1e-3, 0.5, 3.0, 1e3, 1e8] {
                let d = logistic_margin_step(z0, c);
                let g = d + f64::exp(z0) * d.exp_m1() - c;
                assert!(d >= 0.0);
                assert!(g.abs() <= 1e-12 * c.max(f64::exp(z0 + d)), "z0={z0} c={c} d={d} g={g}");
            }
        }
    }

    proptest! {
        /// For the exact invariant updates, importance 2 equals the example learned twice (ppu
        /// held fixed, as it is within one Vowpal Wabbit update).
        #[test]
        fn importance_two_equals_two_steps(
            which in 0usize..5, p in -3.0f64..3.0, label_pick in 0usize..4,
            s in 0.001f64..3.0, ppu in 0.05f64..4.0,
        ) {
            let loss = LOSSES[which];
            let labels = labels_for(&loss);
            let y = labels[label_pick % labels.len()];
            let once = p + ppu * loss.invariant_update(p, y, 2.0 * s, ppu);
            let half = p + ppu * loss.invariant_update(p, y, s, ppu);
            let twice = half + ppu * loss.invariant_update(half, y, s, ppu);
            prop_assert!((once - twice).abs() < 1e-9 * (1.0 + once.abs()), "{} vs {}", once, twice);
        }
    }

    #[test]
    fn evaluate_equals_value_derivative_and_gate() {
        for loss in LOSSES {
            for y in labels_for(&loss) {
                for k in -60..=60 {
                    let p = f64::from(k) * 0.37;
                    let (value, derivative, gate) = loss.evaluate(p, y);
                    assert!((value - loss.value(p, y)).abs() <= 1e-12 * (1.0 + value.abs()));
                    assert!((derivative - loss.derivative(p, y)).abs() <= 1e-12);
                    assert_eq!(gate, loss.single_precision_positive(p, y), "{loss:?} {p} {y}");
                }
            }
        }
    }

    #[test]
    fn single_precision_gate_drops_only_confident_logistic_examples() {
        assert!(Loss::Logistic.single_precision_positive(16.0, 1.0));
        assert!(!Loss::Logistic.single_precision_positive(17.0, 1.0));
        assert!(Loss::Logistic.single_precision_positive(17.0, -1.0));
        assert!(Loss::Logistic.value(17.0, 1.0) > 0.0);
        assert!(Loss::Squared.single_precision_positive(0.5, 0.4));
        assert!(!Loss::Squared.single_precision_positive(0.5, 0.5));
        assert!(!Loss::Hinge.single_precision_positive(1.5, 1.0));
    }

    #[test]
    fn quantile_tau_is_validated() {
        assert!(Loss::Quantile { tau: 0.0 }.validate().is_err());
        assert!(Loss::Quantile { tau: f64::NAN }.validate().is_err());
        assert!(Loss::Quantile { tau: 0.5 }.validate().is_ok());
        assert!(Loss::Squared.validate().is_ok());
    }
}
