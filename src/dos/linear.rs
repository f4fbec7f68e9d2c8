//! The linear passive-aggressive baseline (eq. (2) of the DoS paper; Crammer et al. 2006), on the
//! same augmented input z = [x; 1] so that the bias is learned too.

use super::example::{check_n_features, ExampleRef, Sign};
use super::model::Step;
use super::online::BinaryLearner;
use super::solve::{linear_step, PaVariant};
use crate::error::PolyResult;

/// w ∈ R^{n+1} (last entry: bias); score wᵀz.
#[derive(Clone, Debug, PartialEq)]
pub struct LinearPa {
    variant: PaVariant,
    weights: Vec<f64>,
}

impl LinearPa {
    /// The zero model (the paper initializes the linear model at the origin).
    pub fn new(n_features: usize, variant: PaVariant) -> PolyResult<Self> {
        check_n_features(n_features)?;
        crate::memory::check_fits(
            2 * (n_features as u128 + 1) * 8,
            &format!("a linear model with n_features={n_features} (and its average)"),
            "use fewer features (hash them into fewer bits)",
        )?;
        Ok(Self { variant: variant.validate()?, weights: vec![0.0; n_features + 1] })
    }

    /// A model with the given weights (length n_features + 1, bias last).
    pub fn from_weights(weights: &[f64], variant: PaVariant) -> PolyResult<Self> {
        if weights.len() < 2 {
            return crate::invalid!(
                "weights need n_features + 1 >= 2 values (bias last), got {}",
                weights.len()
            );
        }
        check_n_features(weights.len() - 1)?;
        if let Some(k) = weights.iter().position(|w| !w.is_finite()) {
            return crate::invalid!("weight {k} is not finite ({})", weights[k]);
        }
        Ok(Self { variant: variant.validate()?, weights: weights.to_vec() })
    }

    /// w, bias last.
    pub fn weights(&self) -> &[f64] {
        &self.weights
    }

    pub fn variant(&self) -> PaVariant {
        self.variant
    }
}

impl BinaryLearner for LinearPa {
    fn n_features(&self) -> usize {
        self.weights.len() - 1
    }

    fn score(&self, x: ExampleRef<'_>) -> f64 {
        let bias = self.weights[self.weights.len() - 1];
        x.indices.iter().zip(x.values).fold(bias, |s, (&k, &v)| s + v * self.weights[k as usize])
    }

    /// w ← w + τ y z with τ = max(0, 1 − y wᵀz)/‖z‖² (PA), min(C, ·) (PA-I) or
    /// (1 − y wᵀz)/(‖z‖² + 1/(2C)) (PA-II).
    fn learn(&mut self, x: ExampleRef<'_>, y: Sign) -> Step {
        let margin = y.value() * self.score(x);
        if !margin.is_finite() {
            return Step::Overflow;
        }
        if margin >= 1.0 {
            return Step::Passive { margin };
        }
        let tau = linear_step(1.0 - margin, x.z_sq_norm, self.variant.weighted(x.weight));
        let step = tau * y.value();
        if !(step * x.values.iter().fold(1.0f64, |m, v| m.max(v.abs()))).is_finite() {
            return Step::Overflow;
        }
        for (&k, &v) in x.indices.iter().zip(x.values) {
            self.weights[k as usize] += step * v;
        }
        let bias = self.weights.len() - 1;
        self.weights[bias] += step;
        Step::Updated { margin, step: tau }
    }

    fn same_shape(&self, other: &Self) -> bool {
        self.weights.len() == other.weights.len()
    }

    fn mix_into(&self, average: &mut Self, weight: f64) {
        for (a, &w) in average.weights.iter_mut().zip(&self.weights) {
            *a = (1.0 - weight) * *a + weight * w;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dos::example::ExampleBatch;

    #[test]
    fn pa_step_reaches_margin_one() {
        let mut model = LinearPa::new(3, PaVariant::Pa).unwrap();
        let batch = ExampleBatch::from_dense(&[1.0, 0.0, -2.0], 3).unwrap();
        let x = batch.example(0);
        assert_eq!(model.learn(x, Sign::Negative), Step::Updated { margin: -0.0, step: 1.0 / 6.0 });
        assert!((model.score(x) + 1.0).abs() < 1e-15);
        assert_eq!(model.learn(x, Sign::Negative), Step::Passive { margin: 1.0 });
        // w = −z/6 on the touched coordinates, bias included.
        let expected = [-1.0 / 6.0, 0.0, 2.0 / 6.0, -1.0 / 6.0];
        for (w, e) in model.weights().iter().zip(expected) {
            assert!((w - e).abs() < 1e-15);
        }
    }

    #[test]
    fn pa1_and_pa2_are_smaller_steps() {
        let batch = ExampleBatch::from_dense(&[1.0, 1.0], 2).unwrap();
        let x = batch.example(0);
        let mut pa1 = LinearPa::new(2, PaVariant::PaI { c: 0.1 }).unwrap();
        assert_eq!(pa1.learn(x, Sign::Positive), Step::Updated { margin: 0.0, step: 0.1 });
        assert!((pa1.score(x) - 0.3).abs() < 1e-15);
        let mut pa2 = LinearPa::new(2, PaVariant::PaII { c: 0.5 }).unwrap();
        pa2.learn(x, Sign::Positive);
        assert!((pa2.score(x) - 0.75).abs() < 1e-15, "{}", pa2.score(x));
    }

    #[test]
    fn averaging_is_the_plain_mean() {
        let a = LinearPa::from_weights(&[1.0, 2.0], PaVariant::Pa).unwrap();
        let b = LinearPa::from_weights(&[3.0, -2.0], PaVariant::Pa).unwrap();
        let mut avg = a.clone();
        a.fold_into_average(&mut avg, 1);
        b.fold_into_average(&mut avg, 2);
        assert_eq!(avg.weights(), &[2.0, 0.0]);
    }

    #[test]
    fn bad_weights() {
        let err = LinearPa::from_weights(&[1.0], PaVariant::Pa).unwrap_err().to_string();
        assert_eq!(err, "weights need n_features + 1 >= 2 values (bias last), got 1");
        let err = LinearPa::from_weights(&[1.0, f64::INFINITY], PaVariant::Pa).unwrap_err();
        assert_eq!(err.to_string(), "weight 1 is not finite (inf)");
    }
}
