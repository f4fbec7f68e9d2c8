//! Squared loss `(p - y)²`.

use super::{LossFunction, LossParams};
use crate::error::PolyResult;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Squared;

impl LossFunction for Squared {
    const NAME: &'static str = "squared";
    const CLASSIFICATION: bool = false;

    fn from_params(_: &LossParams) -> PolyResult<Self> {
        Ok(Squared)
    }

    fn value(&self, p: f64, y: f64) -> f64 {
        (p - y) * (p - y)
    }

    fn derivative(&self, p: f64, y: f64) -> f64 {
        2.0 * (p - y)
    }

    /// dp/dh = 2 ppu (y - p): p(s) = y + (p - y) e^{-2 s ppu}.
    fn invariant_step(&self, p: f64, y: f64, s: f64, ppu: f64) -> f64 {
        (y - p) * -(-2.0 * s * ppu).exp_m1() / ppu
    }
}
