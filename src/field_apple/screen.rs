//! Screening candidate field crosses on the residual, before any of them costs a weight.
//!
//! A candidate cross (a, b) of two namespaces gets a *shadow*: a hashed table of corrections,
//! one per (feature of a, feature of b) product, trained by normalized least squares on the main
//! model's progressive residual `g` (minus the loss derivative at its prediction). Before each
//! shadow update the candidate's progressive gain is recorded:
//!
//! `gain = w · (g² - (g - s)²)`, with `s` the shadow's prediction and `w` the importance weight,
//!
//! the drop in squared residual the cross would have given had it been in the model. A cross
//! that carries signal the model lacks has a positive mean gain; a useless one has a mean gain at
//! or below zero (its shadow fits noise, or never sees a product twice). This judges the cross
//! itself, so it finds crosses whose fields say nothing alone (eat-rate's animal x food), which no
//! ranking of single features by their weights can.
//!
//! All candidates share one table; a candidate's salt keeps its slots apart from the others'.

/// Shadow learning rate (normalized least squares: a product seen again predicts this fraction
/// of the residual it saw).
const SHADOW_RATE: f32 = 0.5;

/// A cross being screened: its namespaces, salt and gain statistics since the last reset.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    pub pair: (usize, usize),
    salt: u64,
    pub count: u64,
    pub gain: f64,
    pub gain_squares: f64,
}

impl Candidate {
    pub fn new(pair: (usize, usize)) -> Self {
        // Distinct odd multipliers of the pair keep candidates' slots apart.
        let salt = ((pair.0 as u64) << 32 | pair.1 as u64)
            .wrapping_add(1)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15);
        Candidate { pair, salt, count: 0, gain: 0.0, gain_squares: 0.0 }
    }

    /// The mean gain over its standard error: how surely the cross helps (0 before two samples).
    pub fn z_score(&self) -> f64 {
        if self.count < 2 {
            return 0.0;
        }
        let n = self.count as f64;
        let mean = self.gain / n;
        let variance = (self.gain_squares / n - mean * mean).max(0.0) * n / (n - 1.0);
        if variance == 0.0 {
            return 0.0;
        }
        mean / (variance / n).sqrt()
    }

    fn reset(&mut self) {
        self.count = 0;
        self.gain = 0.0;
        self.gain_squares = 0.0;
    }
}

/// The shared shadow table of every candidate.
#[derive(Clone, Debug, PartialEq)]
pub struct Shadow {
    table: Vec<f32>,
    shift: u32,
    /// Reused (slot, product) pairs of the candidate being screened.
    products: Vec<(usize, f32)>,
}

impl Shadow {
    /// A table of `2^bits` corrections (`bits` in 1..=30, checked by the caller).
    pub fn new(bits: u32) -> Self {
        Shadow { table: vec![0.0; 1 << bits], shift: 64 - bits, products: Vec::new() }
    }

    #[inline]
    fn slot(&self, salt: u64, first: u64, second: u64) -> usize {
        // Multiplicative hashing of the product's hash (Vowpal Wabbit's cross step) mixed with
        // the candidate's salt; the top bits are the best mixed.
        let cross = first.wrapping_mul(super::INTERACTION_PRIME) ^ second;
        ((cross ^ salt).wrapping_mul(0xD6E8_FEB8_6659_FD93) >> self.shift) as usize
    }

    /// Records `candidate`'s progressive gain on residual `residual` (importance `weight`) for
    /// the products of `first` x `second` (hashes and values), then trains its shadow.
    pub fn screen(
        &mut self,
        candidate: &mut Candidate,
        first: (&[u64], &[f32]),
        second: (&[u64], &[f32]),
        residual: f32,
        weight: f32,
    ) {
        self.products.clear();
        let mut prediction = 0.0f32;
        let mut norm = 0.0f32;
        for (&h1, &x1) in first.0.iter().zip(first.1) {
            for (&h2, &x2) in second.0.iter().zip(second.1) {
                let slot = self.slot(candidate.salt, h1, h2);
                let x = x1 * x2;
                prediction += self.table[slot] * x;
                norm += x * x;
                self.products.push((slot, x));
            }
        }
        if self.products.is_empty() || norm == 0.0 || !norm.is_finite() {
            return;
        }
        let error = residual - prediction;
        let gain = f64::from(weight) * (f64::from(residual).powi(2) - f64::from(error).powi(2));
        candidate.count += 1;
        candidate.gain += gain;
        candidate.gain_squares += gain * gain;
        let step = SHADOW_RATE * weight.min(1.0) * error / norm;
        for &(slot, x) in &self.products {
            self.table[slot] += step * x;
        }
    }

    /// Forgets every shadow and every candidate's statistics: after a cross joins the model the
    /// residual changes, and what was learned of the old one would mislead.
    pub fn reset(&mut self, candidates: &mut [Candidate]) {
        self.table.fill(0.0);
        candidates.iter_mut().for_each(Candidate::reset);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Screens a candidate on `rows` of (first value id, second value id, residual).
    fn screen_rows(rows: &[(u64, u64, f32)]) -> Candidate {
        let mut shadow = Shadow::new(16);
        let mut candidate = Candidate::new((0, 1));
        for &(a, b, g) in rows {
            shadow.screen(&mut candidate, (&[a], &[1.0]), (&[b], &[1.0]), g, 1.0);
        }
        candidate
    }

    #[test]
    fn a_cross_that_predicts_the_residual_gains_and_noise_does_not() {
        // The residual is the product of two ±1 attributes of 20 x 20 values: a pure cross.
        let sign = |v: u64| if v % 2 == 0 { 1.0 } else { -1.0 };
        let mut state = 12345u64;
        let mut next = || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            state >> 33
        };
        let crossed: Vec<(u64, u64, f32)> = (0..4000)
            .map(|_| {
                let (a, b) = (next() % 20, next() % 20);
                (a, b, 0.5 * sign(a) * sign(b))
            })
            .collect();
        let noise: Vec<(u64, u64, f32)> = (0..4000)
            .map(|_| (next() % 20, next() % 20, if next() % 2 == 0 { 0.5 } else { -0.5 }))
            .collect();
        let useful = screen_rows(&crossed);
        let useless = screen_rows(&noise);
        assert_eq!(useful.count, 4000);
        assert!(useful.z_score() > 20.0, "{}", useful.z_score());
        assert!(useless.z_score() < 3.0, "{}", useless.z_score());
        assert!(useful.gain > 0.0 && useless.gain < useful.gain / 10.0);
    }

    #[test]
    fn z_score_is_mean_over_standard_error() {
        let mut candidate = Candidate::new((0, 1));
        for gain in [1.0, 2.0, 3.0] {
            candidate.count += 1;
            candidate.gain += gain;
            candidate.gain_squares += gain * gain;
        }
        // mean 2, sample sd 1, n 3: z = 2 / (1 / sqrt 3).
        assert!((candidate.z_score() - 2.0 * 3f64.sqrt()).abs() < 1e-12);
        assert_eq!(Candidate::new((0, 1)).z_score(), 0.0);
    }

    #[test]
    fn reset_forgets_shadows_and_statistics() {
        let mut shadow = Shadow::new(8);
        let mut candidates = vec![Candidate::new((0, 1))];
        shadow.screen(&mut candidates[0], (&[1], &[1.0]), (&[2], &[1.0]), 1.0, 1.0);
        shadow.screen(&mut candidates[0], (&[1], &[1.0]), (&[2], &[1.0]), 1.0, 1.0);
        assert!(candidates[0].gain > 0.0);
        shadow.reset(&mut candidates);
        assert_eq!(candidates[0].count, 0);
        assert!(shadow.table.iter().all(|&v| v == 0.0));
    }

    #[test]
    fn empty_namespaces_record_nothing() {
        let mut shadow = Shadow::new(8);
        let mut candidate = Candidate::new((0, 1));
        shadow.screen(&mut candidate, (&[], &[]), (&[2], &[1.0]), 1.0, 1.0);
        assert_eq!(candidate.count, 0);
    }

    #[test]
    fn candidates_of_different_pairs_use_different_slots() {
        let shadow = Shadow::new(20);
        let a = Candidate::new((0, 1));
        let b = Candidate::new((1, 2));
        let differ =
            (0..100u64).filter(|&h| shadow.slot(a.salt, h, h + 7) != shadow.slot(b.salt, h, h + 7));
        assert!(differ.count() >= 99);
    }
}
