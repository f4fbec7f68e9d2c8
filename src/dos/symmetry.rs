//! Symmetries of the DoS parameter space (paper §3.2) and the aligned averaging they call for
//! (§3.4).
//!
//! s(z) = zᵀ(UᵀU − VᵀV)z is unchanged by U → ΩU, V → ΛV for orthogonal Ω, Λ (eqs. (11–12)) and
//! by the Lorentz boosts U → U cosh φ − V sinh φ, V → V cosh φ − U sinh φ (eqs. (13–14)). Two
//! models are averaged after (1) boosting each to minimum Frobenius norm, eq. (16), and
//! (2) rotating the second onto the first by orthogonal Procrustes, eqs. (26–27).
//!
//! Note: step (1) makes ⟨U, V⟩ = 0, which independent rotations (Ω ≠ Λ) do not preserve, so this
//! procedure recovers a transformed copy exactly when the copy is a boost followed by a common
//! rotation (Ω = Λ) or by sign flips of U and/or V — the cases the tests check — and only
//! approximately for general independent rotations.

use nalgebra::DMatrix;

use super::example::{ExampleRef, Sign};
use super::model::{DosModel, Real, Step};
use super::online::BinaryLearner;
use crate::error::PolyResult;

/// |2⟨U, V⟩/(‖U‖² + ‖V‖²)| is clipped to this before atanh: the argument is ±1 only when U = ±V
/// (a model whose score is identically 0), where the minimum-norm boost does not exist.
pub const MAX_TANH_2PHI: f64 = 1.0 - 1e-12;

impl<T: Real> DosModel<T> {
    /// (‖U‖²_F, ‖V‖²_F, ⟨U, V⟩) in f64.
    pub fn frobenius(&self) -> (f64, f64, f64) {
        let d = self.rank();
        let (mut uu, mut vv, mut uv) = (0.0, 0.0, 0.0);
        for row in self.params().chunks_exact(2 * d) {
            let (u, v) = row.split_at(d);
            for (&a, &b) in u.iter().zip(v) {
                let (a, b) = (a.to_f64(), b.to_f64());
                uu += a * a;
                vv += b * b;
                uv += a * b;
            }
        }
        (uu, vv, uv)
    }

    /// φ* = ½ atanh(2⟨U, V⟩/(‖U‖²_F + ‖V‖²_F)), eq. (16): the boost giving the equivalent model
    /// of minimum ‖U‖²_F + ‖V‖²_F (argument clipped to ±[`MAX_TANH_2PHI`]; 0 for U = V = 0).
    pub fn min_norm_boost_angle(&self) -> f64 {
        let (uu, vv, uv) = self.frobenius();
        let total = uu + vv;
        if total == 0.0 {
            return 0.0;
        }
        0.5 * (2.0 * uv / total).clamp(-MAX_TANH_2PHI, MAX_TANH_2PHI).atanh()
    }

    /// U → U cosh φ − V sinh φ, V → V cosh φ − U sinh φ, eqs. (13–14).
    pub fn boost(&mut self, phi: f64) {
        let (c, s) = (phi.cosh(), phi.sinh());
        let d = self.rank();
        for row in self.params_mut().chunks_exact_mut(2 * d) {
            let (u, v) = row.split_at_mut(d);
            for (a, b) in u.iter_mut().zip(v) {
                let (x, y) = (a.to_f64(), b.to_f64());
                *a = T::from_f64(x * c - y * s);
                *b = T::from_f64(y * c - x * s);
            }
        }
    }

    /// Boosts to the minimum-norm equivalent model; returns the φ applied.
    pub fn boost_to_min_norm(&mut self) -> f64 {
        let phi = self.min_norm_boost_angle();
        if phi != 0.0 {
            self.boost(phi);
        }
        phi
    }

    /// U → ΩU, V → ΛV (eqs. (11–12)) for d × d row-major `omega`, `lambda`, which must be
    /// orthogonal (ΩᵀΩ = I to 1e-8) for the scores to be unchanged.
    pub fn rotate(&mut self, omega: &[f64], lambda: &[f64]) -> PolyResult<()> {
        let d = self.rank();
        for (name, matrix) in [("omega", omega), ("lambda", lambda)] {
            check_orthogonal(name, matrix, d)?;
        }
        self.rotate_unchecked(omega, lambda);
        Ok(())
    }

    fn rotate_unchecked(&mut self, omega: &[f64], lambda: &[f64]) {
        let d = self.rank();
        // The matrices transposed, so that each output's sum over k runs across the outputs at
        // once (independent accumulators that vectorize) in the same order k = 0, 1, ... as a
        // dot product per output: the same sums, bit for bit, without a chain of d dependent
        // additions per output (which made averaging a quarter of a digit fit at d = 8).
        let transposed =
            |m: &[f64]| -> Vec<f64> { (0..d * d).map(|at| m[(at % d) * d + at / d]).collect() };
        let matrices = [transposed(omega), transposed(lambda)];
        #[cfg(target_arch = "x86_64")]
        if super::model::use_avx2() {
            // SAFETY: the CPU supports AVX2 (checked just above).
            unsafe { rotate_rows_avx2(self.params_mut(), d, &matrices) };
            return;
        }
        rotate_rows(self.params_mut(), d, &matrices);
    }

    /// The orthogonal Ω = argmin ‖Ω U_source − U_self‖_F and Λ = argmin ‖Λ V_source − V_self‖_F
    /// (eqs. (26–27)), each A Bᵀ from the SVD A Σ Bᵀ of the d × d matrix U_self U_sourceᵀ (resp. V).
    /// Row-major d × d. Cost O(d²(n+1)) for the products plus two d × d SVDs.
    pub fn procrustes(&self, source: &Self) -> PolyResult<(Vec<f64>, Vec<f64>)> {
        check_same_shape(self, source)?;
        Ok(self.procrustes_same_shape(source))
    }

    /// [`DosModel::procrustes`] of two models known to have the same shape.
    fn procrustes_same_shape(&self, source: &Self) -> (Vec<f64>, Vec<f64>) {
        let d = self.rank();
        let mut cross = [vec![0.0; d * d], vec![0.0; d * d]];
        #[cfg(target_arch = "x86_64")]
        if super::model::use_avx2() {
            // SAFETY: the CPU supports AVX2 (checked just above).
            unsafe { cross_products_avx2(self.params(), source.params(), d, &mut cross) };
        } else {
            cross_products(self.params(), source.params(), d, &mut cross);
        }
        #[cfg(not(target_arch = "x86_64"))]
        cross_products(self.params(), source.params(), d, &mut cross);
        let [mu, mv] = cross;
        (orthogonal_factor(&mu, d), orthogonal_factor(&mv, d))
    }

    /// Rotates `self` onto `target` (Procrustes), after which ‖U − U_target‖ and ‖V − V_target‖
    /// are minimal over rotations.
    pub fn align_to(&mut self, target: &Self) -> PolyResult<()> {
        check_same_shape(target, self)?;
        self.align_to_same_shape(target);
        Ok(())
    }

    /// [`DosModel::align_to`] a target known to have this model's shape.
    fn align_to_same_shape(&mut self, target: &Self) {
        let (omega, lambda) = target.procrustes_same_shape(self);
        self.rotate_unchecked(&omega, &lambda);
    }

    /// The aligned average (1 − w)·Θ₁' + w·Θ₂'' of §3.4: both models boosted to minimum norm,
    /// `other` rotated onto `self`, then averaged with weight `weight_other` = w ∈ [0, 1]
    /// (½ for the unweighted average).
    pub fn aligned_average(&self, other: &Self, weight_other: f64) -> PolyResult<Self> {
        check_same_shape(self, other)?;
        if !(0.0..=1.0).contains(&weight_other) {
            return crate::invalid!("averaging weight must be in [0, 1], got {weight_other}");
        }
        let mut first = self.clone();
        first.boost_to_min_norm();
        let mut second = other.clone();
        second.boost_to_min_norm();
        second.align_to(&first)?;
        first.mix(&second, weight_other);
        Ok(first)
    }

    /// self ← (1 − w)·self + w·other, elementwise.
    fn mix(&mut self, other: &Self, w: f64) {
        for (a, &b) in self.params_mut().iter_mut().zip(other.params()) {
            *a = T::from_f64((1.0 - w) * a.to_f64() + w * b.to_f64());
        }
    }
}

impl<T: Real> BinaryLearner for DosModel<T> {
    fn n_features(&self) -> usize {
        DosModel::n_features(self)
    }

    fn score(&self, x: ExampleRef<'_>) -> f64 {
        DosModel::score(self, x)
    }

    fn learn(&mut self, x: ExampleRef<'_>, y: Sign) -> Step {
        DosModel::learn(self, x, y)
    }

    fn same_shape(&self, other: &Self) -> bool {
        (self.n_features(), self.rank()) == (other.n_features(), other.rank())
    }

    /// The aligned weighted average of §3.4 (the running average's step, eq. (28), and the
    /// average of models trained apart): the average is boosted to minimum norm, the new term
    /// is boosted to minimum norm and rotated onto it, then mixed in with `weight`.
    fn mix_into(&self, average: &mut Self, weight: f64) {
        if weight >= 1.0 {
            average.clone_from(self);
            average.boost_to_min_norm();
            return;
        }
        average.boost_to_min_norm();
        let mut term = self.clone();
        term.boost_to_min_norm();
        // Same shape: the callers check `same_shape` (the trait's contract).
        debug_assert!(check_same_shape(&term, average).is_ok());
        term.align_to_same_shape(average);
        average.mix(&term, weight);
    }
}

/// Each row's U and V halves rotated by the transposed matrices `[Ωᵀ, Λᵀ]` (row-major d × d):
/// h ← M h (see [`DosModel::rotate_unchecked`]). The AVX2 build computes the same sums in the
/// same order per lane (no FMA contraction): bit-identical, twice as wide.
#[inline(always)]
fn rotate_rows_body<T: Real>(params: &mut [T], d: usize, transposed: &[Vec<f64>; 2]) {
    let (mut column, mut out) = (vec![0.0; d], vec![0.0; d]);
    for row in params.chunks_exact_mut(2 * d) {
        for (half, matrix) in row.chunks_exact_mut(d).zip(transposed) {
            for (c, h) in column.iter_mut().zip(half.iter()) {
                *c = h.to_f64();
            }
            out.fill(0.0);
            for (k, &c) in column.iter().enumerate() {
                for (o, &m) in out.iter_mut().zip(&matrix[k * d..(k + 1) * d]) {
                    *o += m * c;
                }
            }
            for (h, &o) in half.iter_mut().zip(&out) {
                *h = T::from_f64(o);
            }
        }
    }
}

fn rotate_rows<T: Real>(params: &mut [T], d: usize, transposed: &[Vec<f64>; 2]) {
    rotate_rows_body(params, d, transposed);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn rotate_rows_avx2<T: Real>(params: &mut [T], d: usize, transposed: &[Vec<f64>; 2]) {
    rotate_rows_body(params, d, transposed);
}

/// The d × d products Σ_rows t_half s_halfᵀ of a target's and a source's U (`cross[0]`) and V
/// (`cross[1]`) halves, in row order (see [`DosModel::procrustes`]); the source row converted
/// to f64 once, so that the inner loop vectorizes.
#[inline(always)]
fn cross_products_body<T: Real>(target: &[T], source: &[T], d: usize, cross: &mut [Vec<f64>; 2]) {
    let mut s = vec![0.0; d];
    for (target_row, source_row) in target.chunks_exact(2 * d).zip(source.chunks_exact(2 * d)) {
        for (half, m) in cross.iter_mut().enumerate() {
            for (s, &value) in s.iter_mut().zip(&source_row[half * d..(half + 1) * d]) {
                *s = value.to_f64();
            }
            for (i, &ti) in target_row[half * d..(half + 1) * d].iter().enumerate() {
                let ti = ti.to_f64();
                for (m, &sj) in m[i * d..(i + 1) * d].iter_mut().zip(&s) {
                    *m += ti * sj;
                }
            }
        }
    }
}

fn cross_products<T: Real>(target: &[T], source: &[T], d: usize, cross: &mut [Vec<f64>; 2]) {
    cross_products_body(target, source, d, cross);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn cross_products_avx2<T: Real>(
    target: &[T],
    source: &[T],
    d: usize,
    cross: &mut [Vec<f64>; 2],
) {
    cross_products_body(target, source, d, cross);
}

fn check_same_shape<T: Real>(a: &DosModel<T>, b: &DosModel<T>) -> PolyResult<()> {
    if (a.n_features(), a.rank()) != (b.n_features(), b.rank()) {
        return crate::invalid!(
            "models differ in shape: n_features={}, rank={} vs n_features={}, rank={}",
            a.n_features(),
            a.rank(),
            b.n_features(),
            b.rank()
        );
    }
    Ok(())
}

fn check_orthogonal(name: &str, matrix: &[f64], d: usize) -> PolyResult<()> {
    if matrix.len() != d * d {
        return crate::invalid!("{name} has {} values, expected {d} × {d}", matrix.len());
    }
    for i in 0..d {
        for j in 0..d {
            let dot: f64 = (0..d).map(|k| matrix[k * d + i] * matrix[k * d + j]).sum();
            let expected = if i == j { 1.0 } else { 0.0 };
            if (dot - expected).abs() > 1e-8 || !dot.is_finite() {
                return crate::invalid!(
                    "{name} is not orthogonal: ({name}ᵀ{name})[{i}, {j}] = {dot}, expected {expected}"
                );
            }
        }
    }
    Ok(())
}

/// A Bᵀ for the SVD M = A Σ Bᵀ of a row-major d × d matrix: the orthogonal Q maximizing
/// tr(Qᵀ M).
fn orthogonal_factor(m: &[f64], d: usize) -> Vec<f64> {
    let svd = DMatrix::from_row_slice(d, d, m).svd(true, true);
    let (Some(a), Some(b_t)) = (svd.u, svd.v_t) else {
        unreachable!("SVD was asked for both factors")
    };
    let q = a * b_t;
    let mut out = Vec::with_capacity(d * d);
    for i in 0..d {
        for j in 0..d {
            out.push(q[(i, j)]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dos::example::ExampleBatch;
    use crate::dos::solve::PaVariant;
    use proptest::prelude::*;
    use rand::rngs::ChaCha8Rng;
    use rand::SeedableRng;
    use rand_distr::{Distribution, StandardNormal};

    #[test]
    fn rotation_and_cross_products_are_the_dot_products_bit_for_bit_in_every_build() {
        for (d, seed) in [(1, 0), (3, 1), (8, 2), (16, 3)] {
            let n = 37;
            let model = DosModel::<f32>::new(n, d, seed, PaVariant::Pa).unwrap();
            let other = DosModel::<f32>::new(n, d, seed + 9, PaVariant::Pa).unwrap();
            let (omega, lambda) = (random_orthogonal(d, seed), random_orthogonal(d, seed + 1));
            // The reference: each output a dot product summed in k order from 0.0.
            let mut reference = model.params().to_vec();
            for row in reference.chunks_exact_mut(2 * d) {
                for (half, matrix) in row.chunks_exact_mut(d).zip([&omega, &lambda]) {
                    let column: Vec<f64> = half.iter().map(|h| f64::from(*h)).collect();
                    for (i, h) in half.iter_mut().enumerate() {
                        let mut sum = 0.0;
                        for (k, c) in column.iter().enumerate() {
                            sum += matrix[i * d + k] * c;
                        }
                        *h = sum as f32;
                    }
                }
            }
            let mut rotated = model.clone();
            rotated.rotate_unchecked(&omega, &lambda);
            assert_eq!(rotated.params(), &reference[..], "d = {d}");
            let transposed = [omega.clone(), lambda.clone()]
                .map(|m| (0..d * d).map(|at| m[(at % d) * d + at / d]).collect::<Vec<f64>>());
            let mut baseline = model.params().to_vec();
            rotate_rows(&mut baseline, d, &transposed);
            assert_eq!(baseline, reference, "d = {d}");
            let mut cross = [vec![0.0; d * d], vec![0.0; d * d]];
            cross_products(model.params(), other.params(), d, &mut cross);
            #[cfg(target_arch = "x86_64")]
            if crate::dos::model::use_avx2() {
                let mut wide = model.params().to_vec();
                // SAFETY: the CPU supports AVX2 (checked just above).
                unsafe { rotate_rows_avx2(&mut wide, d, &transposed) };
                assert_eq!(wide, reference, "d = {d}");
                let mut wide_cross = [vec![0.0; d * d], vec![0.0; d * d]];
                // SAFETY: as above.
                unsafe { cross_products_avx2(model.params(), other.params(), d, &mut wide_cross) };
                assert_eq!(wide_cross, cross, "d = {d}");
            }
        }
    }

    /// A random orthogonal d × d matrix (QR of a Gaussian matrix, signs fixed).
    fn random_orthogonal(d: usize, seed: u64) -> Vec<f64> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let g = DMatrix::from_fn(d, d, |_, _| StandardNormal.sample(&mut rng));
        let q = g.qr().q();
        (0..d * d).map(|k| q[(k / d, k % d)]).collect()
    }

    fn random_batch(n: usize, rows: usize, seed: u64) -> ExampleBatch {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let data: Vec<f64> = (0..n * rows).map(|_| StandardNormal.sample(&mut rng)).collect();
        ExampleBatch::from_dense(&data, n).unwrap()
    }

    fn scores<T: Real>(model: &DosModel<T>, batch: &ExampleBatch) -> Vec<f64> {
        (0..batch.len()).map(|i| model.score(batch.example(i))).collect()
    }

    fn assert_same_scores(a: &[f64], b: &[f64], tol: f64) {
        let scale = a.iter().map(|s| s.abs()).fold(1.0, f64::max);
        for (x, y) in a.iter().zip(b) {
            assert!((x - y).abs() <= tol * scale, "{x} vs {y} (scale {scale})");
        }
    }

    fn identity(d: usize) -> Vec<f64> {
        (0..d * d).map(|k| if k / d == k % d { 1.0 } else { 0.0 }).collect()
    }

    #[test]
    fn min_norm_boost_minimizes_the_norm() {
        let model = DosModel::<f64>::new(20, 3, 5, PaVariant::Pa).unwrap();
        let mut boosted = model.clone();
        boosted.boost(0.7);
        let phi = boosted.min_norm_boost_angle();
        let norm = |m: &DosModel<f64>| {
            let (uu, vv, _) = m.frobenius();
            uu + vv
        };
        let mut best = boosted.clone();
        best.boost(phi);
        for delta in [-1e-3, 1e-3] {
            let mut nearby = boosted.clone();
            nearby.boost(phi + delta);
            assert!(norm(&nearby) > norm(&best));
        }
        assert!(best.frobenius().2.abs() < 1e-12, "<U, V> = 0 at the minimum");
        // Boosts compose additively, so the minimum is the same point as for the original.
        let mut from_original = model.clone();
        from_original.boost_to_min_norm();
        for (a, b) in best.params().iter().zip(from_original.params()) {
            assert!((a - b).abs() < 1e-12);
        }
    }

    #[test]
    fn boost_angle_is_clipped_for_u_equal_v() {
        let u = [1.0, 2.0, 3.0];
        let model = DosModel::<f64>::from_matrices(2, 1, &u, &u, PaVariant::Pa).unwrap();
        let phi = model.min_norm_boost_angle();
        assert!(phi.is_finite() && phi > 5.0, "{phi}");
        let zero = DosModel::<f64>::zeros(2, 1, PaVariant::Pa).unwrap();
        assert_eq!(zero.min_norm_boost_angle(), 0.0);
    }

    #[test]
    fn naive_average_of_sign_flipped_copy_fails_but_aligned_average_recovers() {
        let model = DosModel::<f64>::new(6, 3, 11, PaVariant::Pa).unwrap();
        let u: Vec<f64> = model.u_matrix().iter().map(|x| -x).collect();
        let v: Vec<f64> = model.v_matrix().iter().map(|x| -x).collect();
        let flipped = DosModel::<f64>::from_matrices(6, 3, &u, &v, PaVariant::Pa).unwrap();
        let batch = random_batch(6, 50, 1);
        let original = scores(&model, &batch);
        // (−U, −V) is the same classifier ...
        assert_same_scores(&scores(&flipped, &batch), &original, 1e-15);
        // ... whose naive average with (U, V) is (0, 0): every score 0.
        let mean = |a: Vec<f64>, b: Vec<f64>| -> Vec<f64> {
            a.iter().zip(&b).map(|(x, y)| 0.5 * (x + y)).collect()
        };
        let naive_u = mean(model.u_matrix(), flipped.u_matrix());
        let naive_v = mean(model.v_matrix(), flipped.v_matrix());
        assert!(naive_u.iter().chain(&naive_v).all(|&p| p == 0.0));
        let naive =
            DosModel::<f64>::from_matrices(6, 3, &naive_u, &naive_v, PaVariant::Pa).unwrap();
        assert!(scores(&naive, &batch).iter().all(|&s| s == 0.0));
        // The aligned average is the classifier itself.
        let aligned = model.aligned_average(&flipped, 0.5).unwrap();
        assert_same_scores(&scores(&aligned, &batch), &original, 1e-12);
    }

    #[test]
    fn aligned_average_of_boosted_and_rotated_copy_is_the_same_classifier() {
        for (d, seed) in [(1, 1), (2, 2), (4, 3), (8, 4)] {
            let model = DosModel::<f64>::new(10, d, seed, PaVariant::Pa).unwrap();
            let batch = random_batch(10, 40, seed);
            let original = scores(&model, &batch);
            let omega = random_orthogonal(d, seed + 100);
            // Boost then a common rotation; also boost then sign flips of V alone.
            let mut copy = model.clone();
            copy.boost(-1.3);
            copy.rotate(&omega, &omega).unwrap();
            let mut flip_v = identity(d);
            flip_v.iter_mut().for_each(|x| *x = -*x);
            let mut copy2 = model.clone();
            copy2.boost(0.4);
            copy2.rotate(&identity(d), &flip_v).unwrap();
            for other in [copy, copy2] {
                assert_same_scores(&scores(&other, &batch), &original, 1e-12);
                let average = model.aligned_average(&other, 0.5).unwrap();
                assert_same_scores(&scores(&average, &batch), &original, 1e-10);
                let weighted = model.aligned_average(&other, 0.9).unwrap();
                assert_same_scores(&scores(&weighted, &batch), &original, 1e-10);
            }
        }
    }

    #[test]
    fn running_average_of_equivalent_models_is_the_same_classifier() {
        let model = DosModel::<f64>::new(10, 4, 9, PaVariant::Pa).unwrap();
        let batch = random_batch(10, 30, 2);
        let original = scores(&model, &batch);
        let mut average = model.clone();
        for m in 1..=5u64 {
            let mut term = model.clone();
            term.boost(0.3 * m as f64 - 0.8);
            let omega = random_orthogonal(4, m);
            term.rotate(&omega, &omega).unwrap();
            term.fold_into_average(&mut average, m);
        }
        assert_same_scores(&scores(&average, &batch), &original, 1e-10);
    }

    #[test]
    fn independent_rotations_are_only_approximately_recovered() {
        // Documented limitation of the paper's procedure: Ω ≠ Λ changes ⟨U, V⟩, so the copy's
        // minimum-norm boost differs and Procrustes cannot undo it exactly.
        let model = DosModel::<f64>::new(30, 4, 3, PaVariant::Pa).unwrap();
        let mut copy = model.clone();
        copy.rotate(&random_orthogonal(4, 5), &identity(4)).unwrap();
        let batch = random_batch(30, 100, 4);
        let original = scores(&model, &batch);
        let average = scores(&model.aligned_average(&copy, 0.5).unwrap(), &batch);
        let scale = original.iter().map(|s| s.abs()).fold(0.0, f64::max);
        let worst = original.iter().zip(&average).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        assert!(worst > 1e-8 * scale && worst < 1e-2 * scale, "{worst} vs {scale}");
    }

    #[test]
    fn procrustes_recovers_independent_rotations_without_boost() {
        // Procrustes alone undoes any (Ω, Λ): the boost step is what restricts exactness.
        let model = DosModel::<f64>::new(12, 3, 21, PaVariant::Pa).unwrap();
        let (omega, lambda) = (random_orthogonal(3, 1), random_orthogonal(3, 2));
        let mut copy = model.clone();
        copy.rotate(&omega, &lambda).unwrap();
        copy.align_to(&model).unwrap();
        for (a, b) in copy.params().iter().zip(model.params()) {
            assert!((a - b).abs() < 1e-12);
        }
    }

    #[test]
    fn shape_and_orthogonality_errors() {
        let mut a = DosModel::<f64>::new(5, 2, 1, PaVariant::Pa).unwrap();
        let b = DosModel::<f64>::new(5, 3, 1, PaVariant::Pa).unwrap();
        let err = a.aligned_average(&b, 0.5).unwrap_err().to_string();
        assert_eq!(err, "models differ in shape: n_features=5, rank=2 vs n_features=5, rank=3");
        let err = a.rotate(&[1.0, 0.0, 0.0, 2.0], &identity(2)).unwrap_err().to_string();
        assert_eq!(err, "omega is not orthogonal: (omegaᵀomega)[1, 1] = 4, expected 1");
        let err = a.rotate(&identity(2), &[1.0]).unwrap_err().to_string();
        assert_eq!(err, "lambda has 1 values, expected 2 × 2");
        let err = a.aligned_average(&a.clone(), 1.5).unwrap_err().to_string();
        assert_eq!(err, "averaging weight must be in [0, 1], got 1.5");
    }

    proptest! {
        #[test]
        fn boosts_and_rotations_leave_scores_unchanged(
            d in 1usize..9, seed in 0u64..10_000, phi in -2.0f64..2.0,
        ) {
            let model = DosModel::<f64>::new(7, d, seed, PaVariant::Pa).unwrap();
            let batch = random_batch(7, 10, seed ^ 77);
            let original = scores(&model, &batch);
            let mut transformed = model.clone();
            transformed.boost(phi);
            transformed
                .rotate(&random_orthogonal(d, seed + 1), &random_orthogonal(d, seed + 2))
                .unwrap();
            transformed.boost(-0.5 * phi);
            let after = scores(&transformed, &batch);
            let scale = original.iter().map(|s| s.abs()).fold(1.0, f64::max) * (2.0 * phi).cosh();
            for (x, y) in original.iter().zip(&after) {
                prop_assert!((x - y).abs() <= 1e-12 * scale, "{} vs {}", x, y);
            }
        }
    }
}
