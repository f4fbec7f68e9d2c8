//! The one-dimensional problems behind the passive-aggressive steps: eq. (18) of the DoS paper
//! (solved to machine precision) and the linear PA step of eq. (2), each with optional PA-I /
//! PA-II caps for noisy labels.
//!
//! # The DoS step
//!
//! For an example (z, y) with `p` = squared norm on the label's side (‖Uz‖² for y = +1, ‖Vz‖²
//! for y = −1) and `q` = squared norm on the other side, the update of eqs. (19–20) multiplies
//! the label-side hidden vector by 1/(1 − ν) and the other side by 1/(1 + ν), so the margin after
//! the step is `p/(1 − ν)² − q/(1 + ν)²`. The step ν* ∈ (0, 1) zeroes the derivative of the
//! convex objective of eq. (18), i.e. it is the unique root of the increasing function
//!
//! ```text
//! G(ν) = p/(1 − ν)² − q/(1 + ν)² − 1 + κν,      G(0) = p − q − 1 < 0,   G(1⁻) = +∞ (p > 0)
//! ```
//!
//! with κ = 0 for plain PA (eq. (25)). After the step the margin is exactly 1 (up to rounding).
//! The root is found by a safeguarded Newton iteration on a bracket (bisection whenever Newton
//! leaves the bracket or stalls), in the variable that is small at the root: ν itself when
//! ν* ≤ ½, else t = 1 − ν, because the update factor ν/(1 − ν) = ν/t would lose all precision
//! if t were computed as 1 − ν near ν = 1. The other variable is then 1 − (small one), which is
//! accurate to one rounding.
//!
//! # Caps for noisy labels (our extension; the paper is silent)
//!
//! Exactly as PA-I / PA-II (Crammer et al. 2006) relax linear PA, relax eq. (17) to
//!
//! ```text
//! PA-I:  min ½(‖U − Uₜ‖²_F + ‖V − Vₜ‖²_F) + Cξ    s.t.  y s(z) ≥ 1 − ξ,  ξ ≥ 0
//! PA-II: min ½(‖U − Uₜ‖²_F + ‖V − Vₜ‖²_F) + Cξ²   s.t.  y s(z) ≥ 1 − ξ
//! ```
//!
//! With the Lagrange multiplier τ of the margin constraint (the same role τ plays in linear PA,
//! w ← w + τyx), stationarity in U, V gives eqs. (22–23) with λ = 2τy, i.e. ν = 2τ‖z‖². Hence
//!
//! * PA-I: τ ≤ C, i.e. **ν = min(ν*, 2C‖z‖²)**; when the cap binds the margin ends below 1.
//! * PA-II: ξ = τ/(2C) = κν with **κ = 1/(4C‖z‖²)**: ν is the root of G above with that κ, and
//!   the margin after the step is 1 − κν.
//!
//! C = +∞ gives plain PA in both cases (the default).
//!
//! # Zero norm on the label's side
//!
//! If p = 0 (e.g. ‖Uz‖ = 0 for y = +1), the multiplicative updates cannot change that norm. The
//! QCQP still has a solution: the other side shrinks by 1/(1 + ν) and, only at ν = 1 (where the
//! Sherman–Morrison inverse of eq. (22) is singular), the label side may move by any vector w:
//! U ← U + w zᵀ/‖z‖². The cost is minimized by ν = 1 and ‖w‖² = 1 + q/4 − κ (margin 1 − κ),
//! unless the cap keeps ν < 1 (then only the other side shrinks). The direction of w is free (any
//! rotation of it is an equally small change); we take the first hidden unit, e₀, so that the
//! result is deterministic. This is the limit of the regular step as p → 0⁺ up to that rotation.
//! See [`DosStep::Degenerate`].

use crate::error::PolyResult;

/// Aggressiveness of a passive-aggressive step: plain PA (C = ∞), PA-I or PA-II with C > 0.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum PaVariant {
    /// Plain passive-aggressive: reach margin 1 exactly (eq. (2) / eqs. (18–20)).
    #[default]
    Pa,
    /// PA-I: the multiplier τ of the margin constraint is capped at C (linear: τ ≤ C; DoS:
    /// ν ≤ 2C‖z‖²).
    PaI { c: f64 },
    /// PA-II: squared slack penalized with weight C (linear: τ = loss/(‖z‖² + 1/(2C)); DoS:
    /// margin after the step 1 − ν/(4C‖z‖²)).
    PaII { c: f64 },
}

impl PaVariant {
    /// The step of an example of weight `w >= 0`: PA-I and PA-II with aggressiveness C·w. For
    /// linear PA-I that is exactly learning the example w times in a row (integer w): the
    /// steps add up to min(C·w, what reaches margin 1). Plain PA reaches margin 1 whatever the
    /// weight, as repeating the example after such a step changes nothing.
    pub fn weighted(self, w: f64) -> Self {
        match self {
            PaVariant::Pa => PaVariant::Pa,
            PaVariant::PaI { c } => PaVariant::PaI { c: c * w },
            PaVariant::PaII { c } => PaVariant::PaII { c: c * w },
        }
    }

    /// Checks C: it must be > 0 and not NaN (`f64::INFINITY` is allowed and means plain PA).
    pub fn validate(self) -> PolyResult<Self> {
        match self {
            PaVariant::Pa => Ok(self),
            PaVariant::PaI { c } | PaVariant::PaII { c } => {
                if c.is_nan() || c <= 0.0 {
                    crate::invalid!("aggressiveness C must be > 0 (or inf for plain PA), got {c}")
                } else {
                    Ok(self)
                }
            }
        }
    }
}

/// The step of the DoS update for one example, as scale factors of the two hidden vectors.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DosStep {
    /// The margin is already ≥ 1 (or the cap is zero): no change.
    Passive,
    /// Regular step with ν ∈ (0, 1): label side ← label side · (1 + `grow`) i.e. the matrix gets
    /// `grow · (h zᵀ)/‖z‖²` added, other side gets `−shrink · (h' zᵀ)/‖z‖²`, where
    /// `grow = ν/(1 − ν)` and `shrink = ν/(1 + ν)`.
    Regular { nu: f64, grow: f64, shrink: f64 },
    /// p = 0 and ν = 1: the other side is halved (`shrink = ½`) and the label side gets
    /// `w zᵀ/‖z‖²` with `w = sqrt(w_sq_norm) e₀` (see the module docs).
    Degenerate { shrink: f64, w_sq_norm: f64 },
}

/// Solves the DoS step for label-side squared norm `p`, other-side squared norm `q` and input
/// squared norm `z_sq_norm` = ‖z‖² (≥ 1 because of the constant 1 in z).
///
/// Returns [`DosStep::Passive`] when p − q ≥ 1. Inputs must be finite and ≥ 0.
pub fn dos_step(p: f64, q: f64, z_sq_norm: f64, variant: PaVariant) -> DosStep {
    debug_assert!(p >= 0.0 && q >= 0.0 && z_sq_norm > 0.0);
    if p - q >= 1.0 {
        return DosStep::Passive;
    }
    let (kappa, nu_cap) = match variant {
        PaVariant::Pa => (0.0, f64::INFINITY),
        PaVariant::PaI { c } => (0.0, 2.0 * c * z_sq_norm),
        PaVariant::PaII { c } => (1.0 / (4.0 * c * z_sq_norm), f64::INFINITY),
    };
    if p == 0.0 {
        // G(ν) = −q/(1 + ν)² − 1 + κν has a root below 1 only if G(1) = κ − 1 − q/4 > 0.
        let g_at_one = kappa - 1.0 - 0.25 * q;
        if nu_cap < 1.0 || g_at_one > 0.0 {
            let (nu, one_minus_nu) =
                if g_at_one > 0.0 { root_of_g(0.0, q, kappa) } else { (f64::INFINITY, 0.0) };
            let (nu, _) = if nu_cap < nu { (nu_cap, 1.0 - nu_cap) } else { (nu, one_minus_nu) };
            if nu <= 0.0 {
                return DosStep::Passive;
            }
            return DosStep::Regular { nu, grow: 0.0, shrink: nu / (1.0 + nu) };
        }
        return DosStep::Degenerate { shrink: 0.5, w_sq_norm: -g_at_one };
    }
    // PA-I: G is increasing, so G(cap) ≤ 0 means ν* ≥ cap and the cap is the answer.
    if nu_cap < 1.0 {
        let t = 1.0 - nu_cap;
        let g_at_cap = p / (t * t) - q / ((1.0 + nu_cap) * (1.0 + nu_cap)) - 1.0;
        if g_at_cap <= 0.0 {
            return DosStep::Regular {
                nu: nu_cap,
                grow: nu_cap / t,
                shrink: nu_cap / (1.0 + nu_cap),
            };
        }
    }
    let (mut nu, mut one_minus_nu) = root_of_g(p, q, kappa);
    if nu_cap < nu {
        nu = nu_cap;
        one_minus_nu = 1.0 - nu_cap;
    }
    if nu <= 0.0 {
        return DosStep::Passive;
    }
    DosStep::Regular { nu, grow: nu / one_minus_nu, shrink: nu / (1.0 + nu) }
}

/// The root ν* ∈ (0, 1) of G(ν) = p/(1 − ν)² − q/(1 + ν)² − 1 + κν, returned as (ν, 1 − ν)
/// with the smaller of the two computed directly. Requires G(0) < 0 and a root below 1.
fn root_of_g(p: f64, q: f64, kappa: f64) -> (f64, f64) {
    // G(½) decides which half holds the root.
    let g_half = 4.0 * p - q / 2.25 - 1.0 + 0.5 * kappa;
    if g_half >= 0.0 {
        let g = |nu: f64| {
            let a = 1.0 / (1.0 - nu);
            let b = 1.0 / (1.0 + nu);
            let value = p * a * a - q * b * b - 1.0 + kappa * nu;
            let slope = 2.0 * p * a * a * a + 2.0 * q * b * b * b + kappa;
            (value, slope)
        };
        let loss = -g(0.0).0;
        let first_newton = loss / (2.0 * (p + q) + kappa);
        let nu = bracketed_newton(g, 0.0, 0.5, first_newton.clamp(0.0, 0.5));
        (nu, 1.0 - nu)
    } else {
        // In t = 1 − ν: −H(t) = R(t) − p/t² with R(t) = 1 + q/(2 − t)² − κ(1 − t), increasing in
        // t. R increases with t, so on (0, ½] the root satisfies p/R(½) ≤ t² (≤ p/R(0) if R(0) > 0).
        let r = |t: f64| 1.0 + q / ((2.0 - t) * (2.0 - t)) - kappa * (1.0 - t);
        let minus_h = |t: f64| {
            let s = 1.0 / (2.0 - t);
            let inv_t = 1.0 / t;
            // p = 0 (degenerate case, root where R(t) = 0) must not evaluate 0 · ∞ at t = 0.
            let (pt2, pt3) =
                if p == 0.0 { (0.0, 0.0) } else { (p * inv_t * inv_t, p * inv_t * inv_t * inv_t) };
            let value = 1.0 + q * s * s - kappa * (1.0 - t) - pt2;
            let slope = 2.0 * q * s * s * s + kappa + 2.0 * pt3;
            (value, slope)
        };
        let lo = (p / r(0.5)).sqrt().min(0.5);
        let r0 = r(0.0);
        let hi = if r0 > 0.0 { (p / r0).sqrt().clamp(lo, 0.5) } else { 0.5 };
        let t = bracketed_newton(minus_h, lo, hi, lo);
        (1.0 - t, t)
    }
}

/// Root of an increasing function `f` (returning value and derivative) on [lo, hi], where
/// f(lo) ≤ 0 ≤ f(hi) (up to rounding), to machine precision: Newton steps, replaced by a
/// bisection (geometric when the bracket spans orders of magnitude) whenever Newton leaves the
/// bracket or does not halve the step (the safeguard of `rtsafe`, Numerical Recipes §9.4).
fn bracketed_newton(f: impl Fn(f64) -> (f64, f64), mut lo: f64, mut hi: f64, start: f64) -> f64 {
    let mut x = start.clamp(lo, hi);
    let mut previous_step = hi - lo;
    let mut step = previous_step;
    for _ in 0..200 {
        let (value, slope) = f(x);
        if value == 0.0 {
            return x;
        }
        if value < 0.0 {
            lo = x;
        } else {
            hi = x;
        }
        let newton = x - value / slope;
        let stalled = (2.0 * value).abs() > (previous_step * slope).abs();
        previous_step = step;
        if newton.is_finite() && newton > lo && newton < hi && !stalled {
            step = (newton - x).abs();
            // Quadratic convergence: a Newton step below 1e-9 relative leaves an error of order
            // (curvature · step²) ≈ 1e-18 relative for these functions, so no further check.
            if step <= 1e-9 * newton.abs() {
                return newton;
            }
            x = newton;
        } else {
            let next =
                if lo > 0.0 && hi > 4.0 * lo { (lo * hi).sqrt() } else { lo + 0.5 * (hi - lo) };
            step = (next - x).abs();
            if step <= 2.0 * f64::EPSILON * next.abs() || hi - lo <= 2.0 * f64::EPSILON * hi.abs() {
                return next;
            }
            x = next;
        }
    }
    x
}

/// The linear PA step size τ for loss `1 − y wᵀz > 0` (eq. (2) and its PA-I/PA-II variants).
pub fn linear_step(loss: f64, z_sq_norm: f64, variant: PaVariant) -> f64 {
    match variant {
        PaVariant::Pa => loss / z_sq_norm,
        PaVariant::PaI { c } => (loss / z_sq_norm).min(c),
        PaVariant::PaII { c } => loss / (z_sq_norm + 0.5 / c),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Margin after a regular step: p/(1 − ν)² − q/(1 + ν)² = p(1 + grow)² − q(1 − shrink)².
    fn margin_after(p: f64, q: f64, step: DosStep) -> f64 {
        match step {
            DosStep::Passive => p - q,
            DosStep::Regular { grow, shrink, .. } => {
                p * (1.0 + grow) * (1.0 + grow) - q * (1.0 - shrink) * (1.0 - shrink)
            }
            DosStep::Degenerate { shrink, w_sq_norm } => {
                w_sq_norm - q * (1.0 - shrink) * (1.0 - shrink)
            }
        }
    }

    #[test]
    fn passive_when_margin_reached() {
        assert_eq!(dos_step(3.0, 1.5, 2.0, PaVariant::Pa), DosStep::Passive);
        assert_eq!(dos_step(2.0, 1.0, 2.0, PaVariant::Pa), DosStep::Passive);
    }

    #[test]
    fn step_reaches_margin_one_in_both_branches() {
        for &(p, q) in &[(0.5, 0.2), (1e-3, 4.0), (1e-30, 1e-30), (0.9, 0.0), (1e-300, 7.0)] {
            let step = dos_step(p, q, 3.0, PaVariant::Pa);
            let m = margin_after(p, q, step);
            assert!((m - 1.0).abs() < 1e-14 * (1.0 + q), "p={p} q={q} {step:?} margin {m}");
        }
    }

    #[test]
    fn nu_near_one_keeps_relative_precision_of_one_minus_nu() {
        // p tiny: t = 1 − ν ≈ sqrt(p/(1 + q/4)); computing it as 1 − ν would give 0.
        let DosStep::Regular { nu, grow, .. } = dos_step(1e-40, 0.0, 1.0, PaVariant::Pa) else {
            panic!("expected a regular step")
        };
        assert_eq!(nu, 1.0);
        assert!((grow - 1e20).abs() < 1e6, "grow = {grow}");
    }

    #[test]
    fn pa1_caps_nu() {
        let z_sq = 2.0;
        let c = 0.01;
        let DosStep::Regular { nu, .. } = dos_step(0.1, 0.3, z_sq, PaVariant::PaI { c }) else {
            panic!()
        };
        assert_eq!(nu, 2.0 * c * z_sq);
        // A large C does not bind.
        let free = dos_step(0.1, 0.3, z_sq, PaVariant::Pa);
        assert_eq!(dos_step(0.1, 0.3, z_sq, PaVariant::PaI { c: 1e9 }), free);
        let infinite = dos_step(0.1, 0.3, z_sq, PaVariant::PaI { c: f64::INFINITY });
        assert_eq!(infinite, free);
    }

    #[test]
    fn pa2_margin_is_one_minus_kappa_nu() {
        for &(p, q, c) in &[(0.1, 0.3, 0.05), (1e-9, 2.0, 10.0), (0.2, 0.0, 1e-4)] {
            let z_sq = 1.5;
            let step = dos_step(p, q, z_sq, PaVariant::PaII { c });
            let DosStep::Regular { nu, .. } = step else { panic!("{step:?}") };
            let kappa = 1.0 / (4.0 * c * z_sq);
            let m = margin_after(p, q, step);
            assert!((m - (1.0 - kappa * nu)).abs() < 1e-13 * (1.0 + q + kappa), "{m} {nu}");
        }
    }

    #[test]
    fn zero_label_side_norm() {
        // Plain PA: ν = 1, the other side halves, ‖w‖² = 1 + q/4 so the margin is exactly 1.
        let step = dos_step(0.0, 2.0, 1.0, PaVariant::Pa);
        assert_eq!(step, DosStep::Degenerate { shrink: 0.5, w_sq_norm: 1.5 });
        assert_eq!(margin_after(0.0, 2.0, step), 1.0);
        // PA-I cap below 1: only the other side shrinks, by ν = 2C‖z‖².
        let step = dos_step(0.0, 2.0, 1.0, PaVariant::PaI { c: 0.1 });
        let DosStep::Regular { nu, grow, .. } = step else { panic!("{step:?}") };
        assert_eq!((nu, grow), (0.2, 0.0));
        // PA-II with a strong penalty: root below 1, margin 1 − κν.
        let step = dos_step(0.0, 2.0, 1.0, PaVariant::PaII { c: 0.05 });
        let DosStep::Regular { nu, .. } = step else { panic!("{step:?}") };
        assert!((margin_after(0.0, 2.0, step) - (1.0 - 5.0 * nu)).abs() < 1e-14);
        // PA-II with a weak penalty: degenerate with ‖w‖² = 1 + q/4 − κ.
        let step = dos_step(0.0, 2.0, 1.0, PaVariant::PaII { c: 10.0 });
        assert_eq!(step, DosStep::Degenerate { shrink: 0.5, w_sq_norm: 1.5 - 0.025 });
    }

    #[test]
    fn variant_validation() {
        assert!(PaVariant::PaI { c: 0.0 }.validate().is_err());
        assert!(PaVariant::PaII { c: f64::NAN }.validate().is_err());
        let err = PaVariant::PaI { c: -1.0 }.validate().unwrap_err().to_string();
        assert_eq!(err, "aggressiveness C must be > 0 (or inf for plain PA), got -1");
        assert!(PaVariant::PaI { c: f64::INFINITY }.validate().is_ok());
    }

    #[test]
    fn linear_steps() {
        assert_eq!(linear_step(0.5, 2.0, PaVariant::Pa), 0.25);
        assert_eq!(linear_step(0.5, 2.0, PaVariant::PaI { c: 0.1 }), 0.1);
        assert_eq!(linear_step(0.5, 2.0, PaVariant::PaII { c: 0.25 }), 0.125);
    }

    proptest! {
        #[test]
        fn margin_is_one_after_step(log_p in -30.0f64..3.0, log_q in -30.0f64..6.0, z in 1.0f64..1e4) {
            let (p, q) = (10f64.powf(log_p), 10f64.powf(log_q));
            let step = dos_step(p, q, z, PaVariant::Pa);
            if p - q >= 1.0 {
                prop_assert_eq!(step, DosStep::Passive);
            } else {
                let m = margin_after(p, q, step);
                // The margin is a difference of two terms of size ~q after the step.
                prop_assert!((m - 1.0).abs() <= 4e-16 * (8.0 + 4.0 * q), "m={} {:?}", m, step);
            }
        }

        #[test]
        fn pa1_is_the_capped_pa_step(log_p in -8.0f64..0.5, q in 0.0f64..5.0, log_c in -4.0f64..1.0) {
            let (p, c, z) = (10f64.powf(log_p), 10f64.powf(log_c), 3.0);
            prop_assume!(p - q < 1.0);
            let DosStep::Regular { nu: free, .. } = dos_step(p, q, z, PaVariant::Pa) else { panic!() };
            let DosStep::Regular { nu, grow, shrink } = dos_step(p, q, z, PaVariant::PaI { c }) else {
                panic!()
            };
            let expected = free.min(2.0 * c * z);
            prop_assert!((nu - expected).abs() <= 1e-12 * expected, "{} vs {}", nu, expected);
            prop_assert!((grow - nu / (1.0 - nu)).abs() <= 1e-12 * grow);
            prop_assert!((shrink - nu / (1.0 + nu)).abs() <= 1e-15);
        }

        #[test]
        fn pa2_root_is_exact(log_p in -20.0f64..1.0, q in 0.0f64..10.0, log_c in -4.0f64..4.0) {
            let (p, c, z) = (10f64.powf(log_p), 10f64.powf(log_c), 2.0);
            prop_assume!(p - q < 1.0);
            let step = dos_step(p, q, z, PaVariant::PaII { c });
            let DosStep::Regular { nu, .. } = step else { panic!("{step:?}") };
            let kappa = 1.0 / (4.0 * c * z);
            let m = margin_after(p, q, step);
            prop_assert!((m - (1.0 - kappa * nu)).abs() <= 1e-14 * (2.0 + q + kappa), "{} {}", m, nu);
        }
    }
}
