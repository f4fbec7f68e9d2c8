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
//!   equation to machine precision with Halley's method).
//!
//! All arithmetic here is f64; the per-feature loops of the learner are f32 like Vowpal Wabbit.

//! ## The registry
//! Each loss is a type in its own file implementing [`LossFunction`]; the `losses!` line at the
//! bottom of this file registers it under its name. The registry generates [`Loss`] (an enum
//! with one variant per loss, statically dispatched: no virtual call per example),
//! [`Loss::NAMES`] (what the Python layer offers and validates against) and [`Loss::new`]
//! (parsing a name and the loss parameters). Adding a loss is its file plus one line here.

mod hinge;
mod logistic;
mod quantile;
mod squared;

pub use hinge::Hinge;
pub(crate) use logistic::logistic;
pub use logistic::Logistic;
pub use quantile::Quantile;
pub use squared::Squared;

use crate::error::PolyResult;

/// Below this `s · ppu` the invariant updates use their first-order limit (the plain gradient
/// step): the closed forms would divide tiny numbers.
const SMALL_STEP: f64 = 1e-12;

/// The parameters any loss may take (one field per parameter; a loss reads the ones it needs).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LossParams {
    /// The quantile of the quantile loss, in (0, 1).
    pub quantile_tau: f64,
}

impl Default for LossParams {
    fn default() -> Self {
        LossParams { quantile_tau: 0.5 }
    }
}

/// A loss as its options state it: a name of the registry ([`Loss::NAMES`]) and its parameters.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LossSpec {
    pub name: String,
    #[serde(default)]
    pub params: LossParams,
}

impl TryFrom<LossSpec> for Loss {
    type Error = crate::error::PolyError;
    fn try_from(spec: LossSpec) -> PolyResult<Self> {
        Loss::new(&spec.name, &spec.params)
    }
}

impl From<Loss> for LossSpec {
    fn from(loss: Loss) -> Self {
        LossSpec { name: loss.name().to_owned(), params: loss.params() }
    }
}

/// One loss function (see the module docs for the update conventions).
pub trait LossFunction: Copy + std::fmt::Debug + PartialEq {
    /// The name users give (Vowpal Wabbit's `--loss_function` spelling).
    const NAME: &'static str;
    /// A loss of two classes, -1 and +1 (a classifier maps its classes to them).
    const CLASSIFICATION: bool;

    /// The loss from its parameters, checked.
    fn from_params(params: &LossParams) -> PolyResult<Self>;

    /// Writes the parameters this loss uses into `params`.
    fn params(&self, _params: &mut LossParams) {}

    /// The loss of prediction `p` for label `y`.
    fn value(&self, p: f64, y: f64) -> f64;

    /// `∂ℓ/∂p` (a subgradient at kinks).
    fn derivative(&self, p: f64, y: f64) -> f64;

    /// The importance-invariant update for `step = s · ppu >= SMALL_STEP` (see the module docs).
    fn invariant_step(&self, p: f64, y: f64, s: f64, ppu: f64) -> f64;

    /// Whether the loss is positive when evaluated in f32 as Vowpal Wabbit does (`get_loss > 0`
    /// gates its update).
    fn single_precision_positive(&self, p: f64, y: f64) -> bool {
        self.value(p, y) as f32 > 0.0
    }

    /// Value, derivative and the f32 gate at once (a loss may share work between them).
    #[inline]
    fn evaluate(&self, p: f64, y: f64) -> (f64, f64, bool) {
        (self.value(p, y), self.derivative(p, y), self.single_precision_positive(p, y))
    }

    /// Predictions are clipped to this fixed range instead of the label range seen.
    fn fixed_range(&self) -> Option<(f64, f64)> {
        None
    }

    /// Whether scores are margins with a probability `1 / (1 + e^{-score})`.
    fn has_probability(&self) -> bool {
        false
    }
}

/// Generates [`Loss`] and its dispatch from the registry lines (see the module docs).
macro_rules! losses {
    ($($variant:ident),* $(,)?) => {
        /// A loss function. Classification losses take labels in {-1, +1}. Its serde form is
        /// its name and parameters ([`LossSpec`]).
        #[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
        #[serde(try_from = "LossSpec", into = "LossSpec")]
        pub enum Loss {
            $($variant($variant),)*
        }

        $(impl From<$variant> for Loss {
            fn from(loss: $variant) -> Self {
                Loss::$variant(loss)
            }
        })*

        impl Loss {
            /// Every registered loss's name.
            pub const NAMES: &'static [&'static str] = &[$(<$variant as LossFunction>::NAME),*];

            /// The loss called `name`, with its parameters from `params`.
            pub fn new(name: &str, params: &LossParams) -> PolyResult<Self> {
                $(if name == <$variant as LossFunction>::NAME {
                    return Ok(Loss::$variant(<$variant as LossFunction>::from_params(params)?));
                })*
                crate::invalid!("loss must be one of {:?}, got {name:?}", Self::NAMES)
            }

            /// Short name, as Vowpal Wabbit's `--loss_function` spells it.
            pub fn name(&self) -> &'static str {
                match self {
                    $(Loss::$variant(_) => <$variant as LossFunction>::NAME,)*
                }
            }

            /// The loss's parameters (defaults for the ones it does not use).
            pub fn params(&self) -> LossParams {
                let mut params = LossParams::default();
                match self {
                    $(Loss::$variant(loss) => loss.params(&mut params),)*
                }
                params
            }

            /// Checks the loss's parameters (a loss built by [`Loss::new`] is valid).
            pub fn validate(&self) -> PolyResult<()> {
                Loss::new(self.name(), &self.params()).map(|_| ())
            }

            /// True for the losses of two classes, -1 and +1.
            pub fn is_classification(&self) -> bool {
                match self {
                    $(Loss::$variant(_) => <$variant as LossFunction>::CLASSIFICATION,)*
                }
            }

            /// The loss of prediction `p` for label `y`.
            pub fn value(&self, p: f64, y: f64) -> f64 {
                match self {
                    $(Loss::$variant(loss) => loss.value(p, y),)*
                }
            }

            /// `∂ℓ/∂p`. Hinge and quantile use the subgradient 0 at their kinks.
            pub fn derivative(&self, p: f64, y: f64) -> f64 {
                match self {
                    $(Loss::$variant(loss) => loss.derivative(p, y),)*
                }
            }

            /// Value, derivative and [`Loss::single_precision_positive`] at once: the
            /// per-example hot path.
            #[inline]
            pub fn evaluate(&self, p: f64, y: f64) -> (f64, f64, bool) {
                match self {
                    $(Loss::$variant(loss) => loss.evaluate(p, y),)*
                }
            }

            /// See [`LossFunction::single_precision_positive`].
            pub fn single_precision_positive(&self, p: f64, y: f64) -> bool {
                match self {
                    $(Loss::$variant(loss) => loss.single_precision_positive(p, y),)*
                }
            }

            /// See [`LossFunction::fixed_range`].
            pub fn fixed_range(&self) -> Option<(f64, f64)> {
                match self {
                    $(Loss::$variant(loss) => loss.fixed_range(),)*
                }
            }

            /// See [`LossFunction::has_probability`].
            pub fn has_probability(&self) -> bool {
                match self {
                    $(Loss::$variant(loss) => loss.has_probability(),)*
                }
            }

            /// The importance-invariant update for step size `s = η · importance` and
            /// pred-per-update `ppu > 0` (Vowpal Wabbit's `get_update`). Tends to
            /// [`Loss::plain_update`] as `s · ppu → 0`.
            pub fn invariant_update(&self, p: f64, y: f64, s: f64, ppu: f64) -> f64 {
                if s * ppu < SMALL_STEP || ppu.is_nan() {
                    return self.plain_update(p, y, s);
                }
                match self {
                    $(Loss::$variant(loss) => loss.invariant_step(p, y, s, ppu),)*
                }
            }
        }
    };
}

// The registry: one line per loss.
losses!(Squared, Logistic, Hinge, Quantile);

impl Loss {
    /// The plain gradient-step update `-s · ℓ'(p)` (Vowpal Wabbit's `get_unsafe_update`).
    pub fn plain_update(&self, p: f64, y: f64, s: f64) -> f64 {
        -s * self.derivative(p, y)
    }
}

#[cfg(test)]
mod tests {
    use super::logistic::logistic_margin_step;
    use super::*;
    use proptest::prelude::*;

    const LOSSES: [Loss; 5] = [
        Loss::Squared(Squared),
        Loss::Logistic(Logistic),
        Loss::Hinge(Hinge),
        Loss::Quantile(Quantile { tau: 0.3 }),
        Loss::Quantile(Quantile { tau: 0.9 }),
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
                    if matches!(loss, Loss::Hinge(Hinge)) && (1.0 - y * p).abs() < 1e-3 {
                        continue;
                    }
                    if matches!(loss, Loss::Quantile(_)) && (y - p).abs() < 1e-3 {
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
        assert_eq!(Loss::Squared(Squared).value(0.5, 2.0), 2.25);
        assert!((Loss::Logistic(Logistic).value(0.0, 1.0) - 2f64.ln()).abs() < 1e-15);
        assert!((Loss::Logistic(Logistic).value(-800.0, 1.0) - 800.0).abs() < 1e-9);
        assert_eq!(Loss::Logistic(Logistic).value(800.0, 1.0), 0.0);
        assert_eq!(Loss::Hinge(Hinge).value(0.25, -1.0), 1.25);
        assert_eq!(Loss::Hinge(Hinge).value(3.0, 1.0), 0.0);
        assert!((Loss::Quantile(Quantile { tau: 0.2 }).value(1.0, 3.0) - 0.4).abs() < 1e-15);
        assert!((Loss::Quantile(Quantile { tau: 0.2 }).value(3.0, 1.0) - 1.6).abs() < 1e-15);
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
    fn a_soft_logistic_label_mixes_the_two_classes() {
        // Vowpal Wabbit's reading of a logistic label y in (-1, 1): the share (y + 1) / 2 of a
        // positive example, the rest a negative one.
        let loss = Loss::Logistic(Logistic);
        let h = 1e-6;
        for y in [0.0, 0.5, -0.3] {
            let share = (y + 1.0) / 2.0;
            for p in [-4.0, -0.7, 0.0, 0.2, 3.1] {
                let mixed = share * loss.value(p, 1.0) + (1.0 - share) * loss.value(p, -1.0);
                assert!((loss.value(p, y) - mixed).abs() < 1e-12, "y={y} p={p}");
                let numeric = (loss.value(p + h, y) - loss.value(p - h, y)) / (2.0 * h);
                assert!((numeric - loss.derivative(p, y)).abs() < 1e-6, "y={y} p={p}");
                let step = |label: f64| loss.invariant_update(p, label, 0.7, 1.3);
                let mixed_step = share * step(1.0) + (1.0 - share) * step(-1.0);
                assert!((loss.invariant_update(p, y, 0.7, 1.3) - mixed_step).abs() < 1e-12);
                let plain = loss.plain_update(p, y, 1.0);
                let small = loss.invariant_update(p, y, 1e-7, 1.3) / 1e-7;
                assert!((small - plain).abs() <= 1e-3 * plain.abs().max(1e-9), "y={y} p={p}");
                let (value, derivative, gate) = loss.evaluate(p, y);
                assert_eq!(
                    (value, derivative, gate),
                    (loss.value(p, y), loss.derivative(p, y), true)
                );
            }
        }
        // At y = 0 the loss is symmetric, smallest at p = 0 (log 2) with no gradient.
        assert!((loss.value(0.0, 0.0) - std::f64::consts::LN_2).abs() < 1e-15);
        assert!(loss.derivative(0.0, 0.0).abs() < 1e-15);
    }

    #[test]
    fn invariant_update_never_overshoots() {
        for s in [0.1, 1.0, 10.0, 1e6] {
            let u = Loss::Squared(Squared).invariant_update(0.0, 1.0, s, 2.0);
            assert!(u * 2.0 <= 1.0 + 1e-12 && u > 0.0);
            let u = Loss::Hinge(Hinge).invariant_update(0.0, 1.0, s, 2.0);
            assert!(u * 2.0 <= 1.0 + 1e-12);
            let u = Loss::Quantile(Quantile { tau: 0.5 }).invariant_update(0.0, -1.0, s, 2.0);
            assert!(u * 2.0 >= -1.0 - 1e-12);
        }
        // The logistic margin keeps growing but ever more slowly (no overshoot to infinity).
        let u = Loss::Logistic(Logistic).invariant_update(0.0, 1.0, 1e6, 1.0);
        assert!(u > 0.0 && u < 15.0, "{u}");
    }

    #[test]
    fn logistic_step_solves_its_equation() {
        for z0 in [-60.0, -5.0, -0.5, 0.0, 0.7, 4.0, 20.0, 34.0] {
            for c in [1e-10f64, 1e-3, 0.5, 3.0, 1e3, 1e8] {
                let d = logistic_margin_step(z0, c);
                let g = d + f64::exp(z0) * d.exp_m1() - c;
                assert!(d >= 0.0);
                assert!(g.abs() <= 1e-12 * c.max(f64::exp(z0 + d)), "z0={z0} c={c} d={d} g={g}");
            }
        }
    }

    proptest! {
        /// The logistic step solves its equation to f64 precision over the whole range of
        /// margins and flow times.
        #[test]
        fn logistic_step_solves_its_equation_anywhere(z0 in -80.0f64..35.0, log_c in -12.0f64..10.0) {
            let c = 10f64.powf(log_c);
            let d = logistic_margin_step(z0, c);
            let g = d + f64::exp(z0) * d.exp_m1() - c;
            prop_assert!(d >= 0.0);
            prop_assert!(g.abs() <= 1e-12 * c.max(f64::exp(z0 + d)), "z0={} c={} d={} g={}", z0, c, d, g);
        }

        /// The logistic step is the root bisection finds (`g` increases, and its tangent at 0
        /// bounds the root by `c / (1 + e^{z0})`), to 1e-12 relative.
        #[test]
        fn logistic_step_is_the_root_bisection_finds(z0 in -80.0f64..35.0, log_c in -12.0f64..10.0) {
            let c = 10f64.powf(log_c);
            let a = f64::exp(z0);
            let (mut low, mut high) = (0.0f64, c / (1.0 + a));
            for _ in 0..200 {
                let mid = 0.5 * (low + high);
                if mid + a * mid.exp_m1() < c { low = mid } else { high = mid }
            }
            let d = logistic_margin_step(z0, c);
            prop_assert!((d - low).abs() <= 1e-12 * low, "z0={} c={}: {} against {}", z0, c, d, low);
        }

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
        assert!(Loss::Logistic(Logistic).single_precision_positive(16.0, 1.0));
        assert!(!Loss::Logistic(Logistic).single_precision_positive(17.0, 1.0));
        assert!(Loss::Logistic(Logistic).single_precision_positive(17.0, -1.0));
        assert!(Loss::Logistic(Logistic).value(17.0, 1.0) > 0.0);
        assert!(Loss::Squared(Squared).single_precision_positive(0.5, 0.4));
        assert!(!Loss::Squared(Squared).single_precision_positive(0.5, 0.5));
        assert!(!Loss::Hinge(Hinge).single_precision_positive(1.5, 1.0));
    }

    #[test]
    fn quantile_tau_is_validated() {
        assert!(Loss::Quantile(Quantile { tau: 0.0 }).validate().is_err());
        assert!(Loss::Quantile(Quantile { tau: f64::NAN }).validate().is_err());
        assert!(Loss::Quantile(Quantile { tau: 0.5 }).validate().is_ok());
        assert!(Loss::Squared(Squared).validate().is_ok());
    }
}
