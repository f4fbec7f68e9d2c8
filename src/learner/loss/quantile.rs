//! Pinball (quantile) loss: `τ (y - p)` above the prediction, `(1 - τ)(p - y)` below.

use super::{LossFunction, LossParams};
use crate::error::PolyResult;

/// The quantile loss of quantile `tau`, `0 < tau < 1`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Quantile {
    pub tau: f64,
}

impl LossFunction for Quantile {
    const NAME: &'static str = "quantile";
    const CLASSIFICATION: bool = false;

    fn from_params(params: &LossParams) -> PolyResult<Self> {
        let tau = params.quantile_tau;
        if !(tau > 0.0 && tau < 1.0) {
            return crate::invalid!("quantile loss needs 0 < quantile_tau < 1, got {tau}");
        }
        Ok(Quantile { tau })
    }

    fn params(&self, params: &mut LossParams) {
        params.quantile_tau = self.tau;
    }

    fn value(&self, p: f64, y: f64) -> f64 {
        let e = y - p;
        if e > 0.0 {
            self.tau * e
        } else {
            -(1.0 - self.tau) * e
        }
    }

    fn derivative(&self, p: f64, y: f64) -> f64 {
        let e = y - p;
        if e > 0.0 {
            -self.tau
        } else if e < 0.0 {
            1.0 - self.tau
        } else {
            0.0
        }
    }

    /// Linear descent until the prediction reaches the label.
    fn invariant_step(&self, p: f64, y: f64, s: f64, ppu: f64) -> f64 {
        let err = y - p;
        if err > 0.0 {
            (self.tau * s).min(err / ppu)
        } else if err < 0.0 {
            (-(1.0 - self.tau) * s).max(err / ppu)
        } else {
            0.0
        }
    }
}
