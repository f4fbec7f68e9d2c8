//! Hinge loss `max(0, 1 - y p)`: labels -1 and +1 are the classes; as in Vowpal Wabbit, any
//! other label is taken as it is (`vw --loss_function hinge` on real-valued labels).

use super::{LossFunction, LossParams};
use crate::error::PolyResult;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hinge;

impl LossFunction for Hinge {
    const NAME: &'static str = "hinge";
    const CLASSIFICATION: bool = true;

    fn from_params(_: &LossParams) -> PolyResult<Self> {
        Ok(Hinge)
    }

    fn value(&self, p: f64, y: f64) -> f64 {
        (1.0 - y * p).max(0.0)
    }

    fn derivative(&self, p: f64, y: f64) -> f64 {
        if y * p >= 1.0 {
            0.0
        } else {
            -y
        }
    }

    /// Linear descent until the margin reaches 1, then the gradient vanishes.
    fn invariant_step(&self, p: f64, y: f64, s: f64, ppu: f64) -> f64 {
        let err = 1.0 - y * p;
        if err <= 0.0 {
            0.0
        } else {
            y * s.min(err / ppu)
        }
    }
}
