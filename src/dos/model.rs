//! The difference-of-squares (DoS) model of the paper, eq. (10): score s(z) = ‖Uz‖² − ‖Vz‖² on
//! the augmented input z = [x; 1], label sign(s), with the passive-aggressive update of
//! eqs. (18–20).
//!
//! # Layout
//!
//! U and V (each d × (n+1)) are stored *feature-major and interleaved*: row k of `params` holds
//! the 2d floats `[U[:, k] | V[:, k]]`, and row n is the bias column (the constant 1 of z). So
//! Uz and Vz are one pass of contiguous 2d-float axpys over the nonzeros of x, and the rank-one
//! update touches only those rows (for d = 8 in f32 one row is 64 bytes, a cache line's size;
//! the storage is not 64-byte aligned, so a row may span two lines: aligning it made no
//! measurable difference in `cargo bench --bench dos` on our 2-core VM).
//!
//! # Precision
//!
//! Parameters are stored as `T` (f32 or f64); the hidden vectors Uz, Vz are accumulated in `T`,
//! while their norms, the step of eq. (18) and the update coefficients are computed in f64. With
//! f64 storage the margin after a step is 1 to ~1e-14; with f32 storage to f32 rounding of the
//! stored parameters (~1e-6 relative to ‖Uz‖² + ‖Vz‖²). The default is f32: on MNIST-sized
//! inputs (nnz ≈ 194) it measured ~1.3–2× faster than f64 for d ≥ 4 and halves the memory.
//!
//! # Speed
//!
//! The fixed widths d ∈ {1, 2, 4, 8, 16} get kernels specialized at compile time; on x86-64 with
//! AVX2 they run an AVX2 build of the same code, chosen at run time (bit-identical results, no
//! FMA contraction). Other d use a generic loop with the same order of operations.

use rand::rngs::ChaCha8Rng;
use rand::SeedableRng;
use rand_distr::{Distribution, Normal};

use super::example::{check_n_features, ExampleRef, Sign};
use super::solve::{dos_step, DosStep, PaVariant};
use crate::error::PolyResult;

/// Storage type of the parameters: f32 or f64.
pub trait Real:
    Copy
    + Default
    + PartialEq
    + Send
    + Sync
    + std::fmt::Debug
    + std::ops::Add<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::AddAssign
    + 'static
{
    fn from_f64(value: f64) -> Self;
    fn to_f64(self) -> f64;
}

impl Real for f32 {
    #[inline(always)]
    fn from_f64(value: f64) -> Self {
        value as f32
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
}

impl Real for f64 {
    #[inline(always)]
    fn from_f64(value: f64) -> Self {
        value
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self
    }
}

/// What one learning step did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Step {
    /// y·s(z) ≥ 1 before the step: nothing changed. `margin` is y·s(z).
    Passive { margin: f64 },
    /// The parameters changed; `margin` is y·s(z) before the step and `step` the step size
    /// (ν of eq. (18) for DoS, τ of eq. (2) for linear PA).
    Updated { margin: f64, step: f64 },
    /// DoS only: the label side's hidden vector was zero, handled as documented in
    /// [`super::solve`] (ν = 1, the label side moves along the first hidden unit).
    Degenerate { margin: f64 },
    /// y·s(z), or the step it asks for, is beyond the parameters' precision: parameters too
    /// large for this example's features (a model file edited by hand). Nothing changed; the
    /// learner stops with an error naming the row ([`super::online::overflow_error`]).
    Overflow,
}

impl Step {
    /// y·s(z) before the step.
    pub fn margin(&self) -> f64 {
        match *self {
            Step::Passive { margin } | Step::Updated { margin, .. } => margin,
            Step::Degenerate { margin } => margin,
            Step::Overflow => f64::NAN,
        }
    }
}

/// A DoS binary classifier: U, V ∈ R^{d×(n+1)} stored as `T`.
#[derive(Clone, Debug, PartialEq)]
pub struct DosModel<T: Real = f32> {
    n_features: usize,
    rank: usize,
    variant: PaVariant,
    params: Vec<T>,
}

impl<T: Real> DosModel<T> {
    /// A model for `n_features` inputs with hidden dimension `rank` (d ≥ 1), initialized with
    /// i.i.d. N(0, σ²) entries, σ² = 1/(d·(n+1)): "variance inversely proportional to the number
    /// of elements" (paper §4) read as the number of elements of one matrix, U or V. The draws
    /// come from ChaCha8 seeded with `seed`, in storage order (column k of U, then column k of V,
    /// for k = 0..=n), so the model is a pure function of (n_features, rank, seed).
    pub fn new(n_features: usize, rank: usize, seed: u64, variant: PaVariant) -> PolyResult<Self> {
        Self::new_stream(n_features, rank, seed, 0, variant)
    }

    /// As [`DosModel::new`], drawing from ChaCha8 stream `stream` of `seed` (multiclass learners
    /// give pairwise model m stream m).
    pub fn new_stream(
        n_features: usize,
        rank: usize,
        seed: u64,
        stream: u64,
        variant: PaVariant,
    ) -> PolyResult<Self> {
        let mut model = Self::zeros(n_features, rank, variant)?;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(stream);
        let std = (1.0 / (rank as f64 * (n_features as f64 + 1.0))).sqrt();
        let Ok(normal) = Normal::new(0.0, std) else {
            return crate::invalid!("DoS initial spread {std} is not a finite positive number");
        };
        for value in &mut model.params {
            *value = T::from_f64(normal.sample(&mut rng));
        }
        Ok(model)
    }

    /// The all-zero model (score 0 everywhere; PA steps on it are all degenerate).
    pub fn zeros(n_features: usize, rank: usize, variant: PaVariant) -> PolyResult<Self> {
        check_n_features(n_features)?;
        if rank == 0 {
            return crate::invalid!("rank must be >= 1, got 0");
        }
        let variant = variant.validate()?;
        let len = (n_features + 1)
            .checked_mul(2 * rank)
            .filter(|&len| len <= isize::MAX as usize / std::mem::size_of::<T>())
            .ok_or_else(|| {
                crate::error::PolyError::Overflow(format!(
                    "a DoS model with n_features={n_features} and rank={rank} does not fit memory"
                ))
            })?;
        // The model and, once training starts, its running average.
        crate::memory::check_fits(
            2 * len as u128 * std::mem::size_of::<T>() as u128,
            &format!("a DoS model with n_features={n_features} and rank={rank} (and its average)"),
            "use fewer features (hash them into fewer bits) or a lower rank",
        )?;
        Ok(Self { n_features, rank, variant, params: vec![T::default(); len] })
    }

    /// A model from U and V given as row-major d × (n_features + 1) matrices (last column: bias).
    pub fn from_matrices(
        n_features: usize,
        rank: usize,
        u: &[f64],
        v: &[f64],
        variant: PaVariant,
    ) -> PolyResult<Self> {
        let mut model = Self::zeros(n_features, rank, variant)?;
        let cols = n_features + 1;
        for (name, matrix, offset) in [("U", u, 0), ("V", v, rank)] {
            if matrix.len() != rank * cols {
                return crate::invalid!(
                    "{name} has {} values, expected rank × (n_features + 1) = {rank} × {cols}",
                    matrix.len()
                );
            }
            for (i, &value) in matrix.iter().enumerate() {
                // Finite in the storage type too: 1e39 is finite in f64, infinite in f32.
                if !T::from_f64(value).to_f64().is_finite() {
                    return crate::invalid!(
                        "{name}[{}, {}] is not finite in the model's precision ({value})",
                        i / cols,
                        i % cols
                    );
                }
                let (row, col) = (i / cols, i % cols);
                model.params[col * 2 * rank + offset + row] = T::from_f64(value);
            }
        }
        Ok(model)
    }

    /// U as a row-major d × (n_features + 1) matrix.
    pub fn u_matrix(&self) -> Vec<f64> {
        self.matrix(0)
    }

    /// V as a row-major d × (n_features + 1) matrix.
    pub fn v_matrix(&self) -> Vec<f64> {
        self.matrix(self.rank)
    }

    fn matrix(&self, offset: usize) -> Vec<f64> {
        self.matrix_values(offset).collect()
    }

    /// The values of U (`offset` 0) or V (`offset` rank), row-major, without building the
    /// matrix (saving a large model streams them).
    pub(crate) fn matrix_values(&self, offset: usize) -> impl Iterator<Item = f64> + '_ {
        let stride = 2 * self.rank;
        (0..self.rank).flat_map(move |r| {
            self.params.iter().skip(offset + r).step_by(stride).map(|v| v.to_f64())
        })
    }

    pub fn n_features(&self) -> usize {
        self.n_features
    }

    /// d, the dimension of the hidden vectors Uz and Vz.
    pub fn rank(&self) -> usize {
        self.rank
    }

    pub fn variant(&self) -> PaVariant {
        self.variant
    }

    pub fn set_variant(&mut self, variant: PaVariant) -> PolyResult<()> {
        self.variant = variant.validate()?;
        Ok(())
    }

    /// The raw interleaved storage (see the module docs): (n+1) rows of `[U[:, k] | V[:, k]]`.
    pub fn params(&self) -> &[T] {
        &self.params
    }

    pub(crate) fn params_mut(&mut self) -> &mut [T] {
        &mut self.params
    }

    /// The hidden vectors (Uz, Vz).
    pub fn hidden(&self, x: ExampleRef<'_>) -> (Vec<f64>, Vec<f64>) {
        let mut acc = vec![T::default(); 2 * self.rank];
        accumulate_dyn(&self.params, self.n_features, x, &mut acc);
        let (u, v) = acc.split_at(self.rank);
        (u.iter().map(|h| h.to_f64()).collect(), v.iter().map(|h| h.to_f64()).collect())
    }

    /// s(z) = ‖Uz‖² − ‖Vz‖², eq. (10).
    pub fn score(&self, x: ExampleRef<'_>) -> f64 {
        debug_assert!(x.indices.last().is_none_or(|&k| (k as usize) < self.n_features));
        macro_rules! fixed {
            ($w:literal) => {{
                let acc = accumulate::<T, $w>(&self.params, self.n_features, x);
                let (a, b) = sq_norms(&acc);
                a - b
            }};
        }
        match self.rank {
            1 => fixed!(2),
            2 => fixed!(4),
            4 => fixed!(8),
            8 => fixed!(16),
            16 => fixed!(32),
            _ => {
                let mut acc = vec![T::default(); 2 * self.rank];
                accumulate_dyn(&self.params, self.n_features, x, &mut acc);
                let (a, b) = sq_norms(&acc);
                a - b
            }
        }
    }

    /// One passive-aggressive step on (z, y), eqs. (18–20) (with the PA-I/PA-II caps and the
    /// zero-norm rule of [`super::solve`]). Cost O(d·nnz).
    pub fn learn(&mut self, x: ExampleRef<'_>, y: Sign) -> Step {
        debug_assert!(x.indices.last().is_none_or(|&k| (k as usize) < self.n_features));
        let (n, variant) = (self.n_features, self.variant.weighted(x.weight));
        macro_rules! fixed {
            ($w:literal) => {{
                let acc = accumulate::<T, $w>(&self.params, n, x);
                let mut delta = [T::default(); $w];
                let step = pa_delta(&acc, &mut delta, x.z_sq_norm, y, variant);
                if !matches!(step, Step::Passive { .. }) {
                    apply::<T, $w>(&mut self.params, n, x, &delta);
                }
                step
            }};
        }
        match self.rank {
            1 => fixed!(2),
            2 => fixed!(4),
            4 => fixed!(8),
            8 => fixed!(16),
            16 => fixed!(32),
            _ => {
                let mut acc = vec![T::default(); 2 * self.rank];
                accumulate_dyn(&self.params, n, x, &mut acc);
                let mut delta = vec![T::default(); 2 * self.rank];
                let step = pa_delta(&acc, &mut delta, x.z_sq_norm, y, variant);
                if !matches!(step, Step::Passive { .. }) {
                    apply_dyn(&mut self.params, n, x, &delta);
                }
                step
            }
        }
    }
}

/// (‖Uz‖², ‖Vz‖²) from the accumulated `[Uz | Vz]`, in f64.
#[inline(always)]
fn sq_norms<T: Real>(acc: &[T]) -> (f64, f64) {
    let (u, v) = acc.split_at(acc.len() / 2);
    let a = u.iter().map(|h| h.to_f64() * h.to_f64()).sum();
    let b = v.iter().map(|h| h.to_f64() * h.to_f64()).sum();
    (a, b)
}

/// Whether the AVX2 builds of the fixed-width kernels can run (x86-64; checked once by std and
/// cached). They compute exactly what the baseline builds compute (same operations in the same
/// order per lane, no FMA contraction), only with wider vectors, so results are bit-identical.
#[inline(always)]
pub(super) fn use_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// [`accumulate_body`], dispatched to the AVX2 build when the CPU has it. Each build is its own
/// non-inlined function: inlined into callers that then reduce the result, LLVM's SLP
/// vectorizer produced shuffle-heavy code 3x slower.
#[inline(always)]
fn accumulate<T: Real, const W: usize>(params: &[T], n: usize, x: ExampleRef<'_>) -> [T; W] {
    #[cfg(target_arch = "x86_64")]
    if use_avx2() {
        // SAFETY: the CPU supports AVX2 (checked just above).
        return unsafe { accumulate_avx2::<T, W>(params, n, x) };
    }
    accumulate_baseline::<T, W>(params, n, x)
}

#[inline(never)]
fn accumulate_baseline<T: Real, const W: usize>(
    params: &[T],
    n: usize,
    x: ExampleRef<'_>,
) -> [T; W] {
    accumulate_body::<T, W>(params, n, x)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline(never)]
unsafe fn accumulate_avx2<T: Real, const W: usize>(
    params: &[T],
    n: usize,
    x: ExampleRef<'_>,
) -> [T; W] {
    accumulate_body::<T, W>(params, n, x)
}

/// [`apply_body`], dispatched like [`accumulate`].
#[inline(always)]
fn apply<T: Real, const W: usize>(params: &mut [T], n: usize, x: ExampleRef<'_>, delta: &[T; W]) {
    #[cfg(target_arch = "x86_64")]
    if use_avx2() {
        // SAFETY: the CPU supports AVX2 (checked just above).
        return unsafe { apply_avx2::<T, W>(params, n, x, delta) };
    }
    apply_baseline::<T, W>(params, n, x, delta)
}

#[inline(never)]
fn apply_baseline<T: Real, const W: usize>(
    params: &mut [T],
    n: usize,
    x: ExampleRef<'_>,
    delta: &[T; W],
) {
    apply_body::<T, W>(params, n, x, delta)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline(never)]
unsafe fn apply_avx2<T: Real, const W: usize>(
    params: &mut [T],
    n: usize,
    x: ExampleRef<'_>,
    delta: &[T; W],
) {
    apply_body::<T, W>(params, n, x, delta)
}

/// Row `k` of a row-major table of rows `W` wide, as an array (the slice's bounds check is the
/// only one: indices were checked against the feature count when the batch was built).
#[inline(always)]
fn row_of<T, const W: usize>(params: &[T], k: usize) -> &[T; W] {
    let row = &params[k * W..(k + 1) * W];
    // SAFETY: `row` holds exactly W contiguous values, the layout of [T; W].
    unsafe { &*row.as_ptr().cast::<[T; W]>() }
}

/// [`row_of`], mutable.
#[inline(always)]
fn row_of_mut<T, const W: usize>(params: &mut [T], k: usize) -> &mut [T; W] {
    let row = &mut params[k * W..(k + 1) * W];
    // SAFETY: as in `row_of`.
    unsafe { &mut *row.as_mut_ptr().cast::<[T; W]>() }
}

/// `[Uz | Vz]` = bias row + Σ x_k · row_k, with the row width `W` = 2d known at compile time.
/// Two accumulators (even / odd nonzeros, added at the end) halve the chain of dependent adds.
#[inline(always)]
fn accumulate_body<T: Real, const W: usize>(params: &[T], n: usize, x: ExampleRef<'_>) -> [T; W] {
    let row = |k: u32| -> &[T; W] { row_of(params, k as usize) };
    let mut even: [T; W] = *row_of(params, n);
    let mut odd = [T::default(); W];
    let mut indices = x.indices.chunks_exact(2);
    let mut values = x.values.chunks_exact(2);
    for (k, v) in (&mut indices).zip(&mut values) {
        let (row_a, row_b) = (row(k[0]), row(k[1]));
        let (va, vb) = (T::from_f64(v[0]), T::from_f64(v[1]));
        for j in 0..W {
            even[j] += va * row_a[j];
            odd[j] += vb * row_b[j];
        }
    }
    if let (&[k], &[v]) = (indices.remainder(), values.remainder()) {
        let (row_a, va) = (row(k), T::from_f64(v));
        for j in 0..W {
            even[j] += va * row_a[j];
        }
    }
    for j in 0..W {
        even[j] += odd[j];
    }
    even
}

/// [`accumulate`] for any row width, with the same order of operations.
fn accumulate_dyn<T: Real>(params: &[T], n: usize, x: ExampleRef<'_>, acc: &mut [T]) {
    let w = acc.len();
    let row = |k: u32| &params[k as usize * w..(k as usize + 1) * w];
    acc.copy_from_slice(&params[n * w..(n + 1) * w]);
    let mut odd = vec![T::default(); w];
    let mut indices = x.indices.chunks_exact(2);
    let mut values = x.values.chunks_exact(2);
    for (k, v) in (&mut indices).zip(&mut values) {
        let (row_a, row_b) = (row(k[0]), row(k[1]));
        let (va, vb) = (T::from_f64(v[0]), T::from_f64(v[1]));
        for j in 0..w {
            acc[j] += va * row_a[j];
            odd[j] += vb * row_b[j];
        }
    }
    if let (&[k], &[v]) = (indices.remainder(), values.remainder()) {
        let (row_a, va) = (row(k), T::from_f64(v));
        for (a, &r) in acc.iter_mut().zip(row_a) {
            *a += va * r;
        }
    }
    for (a, o) in acc.iter_mut().zip(odd) {
        *a += o;
    }
}

/// row_k += x_k · delta for every nonzero k, and bias row += delta: the rank-one update
/// (δ zᵀ) restricted to the rows z touches.
#[inline(always)]
fn apply_body<T: Real, const W: usize>(
    params: &mut [T],
    n: usize,
    x: ExampleRef<'_>,
    delta: &[T; W],
) {
    let bias: &mut [T; W] = row_of_mut(params, n);
    for j in 0..W {
        bias[j] += delta[j];
    }
    for (&k, &value) in x.indices.iter().zip(x.values) {
        let row: &mut [T; W] = row_of_mut(params, k as usize);
        let value = T::from_f64(value);
        for j in 0..W {
            row[j] += value * delta[j];
        }
    }
}

fn apply_dyn<T: Real>(params: &mut [T], n: usize, x: ExampleRef<'_>, delta: &[T]) {
    let w = delta.len();
    for (b, &d) in params[n * w..(n + 1) * w].iter_mut().zip(delta) {
        *b += d;
    }
    for (&k, &value) in x.indices.iter().zip(x.values) {
        let row = &mut params[k as usize * w..(k as usize + 1) * w];
        let value = T::from_f64(value);
        for (r, &d) in row.iter_mut().zip(delta) {
            *r += value * d;
        }
    }
}

/// From the hidden vectors `acc = [Uz | Vz]`, the PA step and the row update `delta` with
/// U ← U + δ_U zᵀ, V ← V + δ_V zᵀ (eqs. (19–20)):
///   δ_label = +ν/(1 − ν) · h_label/‖z‖²,  δ_other = −ν/(1 + ν) · h_other/‖z‖²
/// where "label" is U for y = +1 and V for y = −1 (for y = −1, eq. (19)'s ν/(y − ν) is
/// −ν/(1 + ν) and eq. (20)'s −ν/(y + ν) is +ν/(1 − ν)).
#[inline(always)]
fn pa_delta<T: Real>(
    acc: &[T],
    delta: &mut [T],
    z_sq_norm: f64,
    y: Sign,
    variant: PaVariant,
) -> Step {
    let d = acc.len() / 2;
    let (a, b) = sq_norms(acc);
    let (label, other, p, q) = match y {
        Sign::Positive => (0, d, a, b),
        Sign::Negative => (d, 0, b, a),
    };
    let margin = p - q;
    if !margin.is_finite() {
        return Step::Overflow;
    }
    let inv_z = 1.0 / z_sq_norm;
    let (grow, shrink, result) = match dos_step(p, q, z_sq_norm, variant) {
        DosStep::Passive => return Step::Passive { margin },
        DosStep::Regular { nu, grow, shrink } => (grow, shrink, Step::Updated { margin, step: nu }),
        DosStep::Degenerate { shrink, w_sq_norm } => {
            // h_label = 0, so the label side's delta is the new hidden vector w itself.
            for value in &mut delta[label..label + d] {
                *value = T::default();
            }
            delta[label] = T::from_f64(w_sq_norm.sqrt() * inv_z);
            (0.0, shrink, Step::Degenerate { margin })
        }
    };
    if grow != 0.0 {
        let scale = grow * inv_z;
        for j in 0..d {
            delta[label + j] = T::from_f64(scale * acc[label + j].to_f64());
        }
    }
    let scale = -shrink * inv_z;
    for j in 0..d {
        delta[other + j] = T::from_f64(scale * acc[other + j].to_f64());
    }
    if delta.iter().any(|value| !value.to_f64().is_finite()) {
        return Step::Overflow;
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dos::example::ExampleBatch;
    use proptest::prelude::*;

    fn dense_example(x: &[f64]) -> ExampleBatch {
        ExampleBatch::from_dense(x, x.len()).unwrap()
    }

    #[test]
    fn score_matches_matrix_definition() {
        // d = 2, n = 2: U = [[1, 2, 0.5], [0, 1, 0]], V = [[1, 0, 0], [0, 0, 1]].
        let u = [1.0, 2.0, 0.5, 0.0, 1.0, 0.0];
        let v = [1.0, 0.0, 0.0, 0.0, 0.0, 1.0];
        let model = DosModel::<f64>::from_matrices(2, 2, &u, &v, PaVariant::Pa).unwrap();
        assert_eq!(model.u_matrix(), u.to_vec());
        assert_eq!(model.v_matrix(), v.to_vec());
        let batch = dense_example(&[3.0, -1.0]);
        // Uz = [3 − 2 + 0.5, −1] = [1.5, −1]; Vz = [3, 1].
        assert_eq!(model.hidden(batch.example(0)), (vec![1.5, -1.0], vec![3.0, 1.0]));
        assert_eq!(model.score(batch.example(0)), 3.25 - 10.0);
    }

    #[test]
    fn init_is_seeded_with_documented_variance() {
        let a = DosModel::<f64>::new(999, 4, 7, PaVariant::Pa).unwrap();
        let b = DosModel::<f64>::new(999, 4, 7, PaVariant::Pa).unwrap();
        let c = DosModel::<f64>::new(999, 4, 8, PaVariant::Pa).unwrap();
        let s = DosModel::<f64>::new_stream(999, 4, 7, 1, PaVariant::Pa).unwrap();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, s);
        let values = a.params();
        let mean = values.iter().sum::<f64>() / values.len() as f64;
        let var = values.iter().map(|v| v * v).sum::<f64>() / values.len() as f64;
        let expected = 1.0 / (4.0 * 1000.0);
        assert!(mean.abs() < 4.0 * (expected / values.len() as f64).sqrt(), "{mean}");
        assert!((var / expected - 1.0).abs() < 0.05, "variance {var} vs {expected}");
        let f32_model = DosModel::<f32>::new(999, 4, 7, PaVariant::Pa).unwrap();
        assert_eq!(f32_model.params()[5], a.params()[5] as f32);
    }

    #[test]
    fn constructor_errors() {
        let err = DosModel::<f32>::new(10, 0, 1, PaVariant::Pa).unwrap_err().to_string();
        assert_eq!(err, "rank must be >= 1, got 0");
        let err = DosModel::<f32>::new(10, 2, 1, PaVariant::PaI { c: 0.0 }).unwrap_err();
        assert!(err.to_string().contains("aggressiveness C must be > 0"), "{err}");
        let err = DosModel::<f32>::from_matrices(1, 1, &[1.0], &[1.0, 2.0], PaVariant::Pa);
        let err = err.unwrap_err().to_string();
        assert_eq!(err, "U has 1 values, expected rank × (n_features + 1) = 1 × 2");
        let err =
            DosModel::<f32>::from_matrices(1, 1, &[1.0, 2.0], &[1.0, f64::NAN], PaVariant::Pa);
        assert_eq!(
            err.unwrap_err().to_string(),
            "V[0, 1] is not finite in the model's precision (NaN)"
        );
        assert!(DosModel::<f32>::new(usize::MAX / 4, 16, 1, PaVariant::Pa).is_err());
        // Finite in f64, infinite in the f32 storage.
        let err = DosModel::<f32>::from_matrices(1, 1, &[1e39, 0.0], &[1.0, 1.0], PaVariant::Pa);
        assert!(err.unwrap_err().to_string().starts_with("U[0, 0] is not finite"));
    }

    #[test]
    fn parameters_too_large_for_an_example_overflow_without_changing() {
        // Each parameter fits f32, but ‖Uz‖² of z = (1e10, 1) does not fit f64's accumulation
        // of f32 hidden values: the step is refused and the model left as it was.
        let big = 3e38;
        let mut model =
            DosModel::<f32>::from_matrices(1, 1, &[big, big], &[1.0, 1.0], PaVariant::Pa).unwrap();
        let before = model.params().to_vec();
        let batch = ExampleBatch::from_dense(&[1e10], 1).unwrap();
        assert_eq!(model.learn(batch.example(0), Sign::Negative), Step::Overflow);
        assert_eq!(model.params(), &before[..]);
        assert!(!model.score(batch.example(0)).is_finite());
    }

    #[test]
    fn zero_label_side_is_degenerate_and_still_reaches_margin_one() {
        // U = 0, so ‖Uz‖ = 0 for every z; a positive example needs the degenerate step.
        let v = [0.3, -0.2, 0.1, 0.0, 0.5, 0.4];
        let mut model = DosModel::<f64>::from_matrices(2, 2, &[0.0; 6], &v, PaVariant::Pa).unwrap();
        let batch = dense_example(&[1.0, 2.0]);
        let x = batch.example(0);
        let before = model.score(x);
        let step = model.learn(x, Sign::Positive);
        assert_eq!(step, Step::Degenerate { margin: before });
        assert!((model.score(x) - 1.0).abs() < 1e-14, "{}", model.score(x));
        // The label side moved along the first hidden unit only.
        let (uz, _) = model.hidden(x);
        assert!(uz[0] > 0.0 && uz[1] == 0.0, "{uz:?}");
        // A negative example on the same model is regular (‖Vz‖ > 0).
        let mut other = DosModel::<f64>::from_matrices(2, 2, &[0.0; 6], &v, PaVariant::Pa).unwrap();
        assert!(matches!(
            other.learn(x, Sign::Negative),
            Step::Updated { .. } | Step::Passive { .. }
        ));
    }

    #[test]
    fn caps_stop_short_of_margin_one() {
        let mut model = DosModel::<f64>::new(3, 2, 1, PaVariant::PaI { c: 1e-3 }).unwrap();
        let batch = dense_example(&[0.5, -1.0, 2.0]);
        let x = batch.example(0);
        let before = model.score(x);
        let Step::Updated { step, .. } = model.learn(x, Sign::Positive) else { panic!() };
        assert_eq!(step, 2.0 * 1e-3 * x.z_sq_norm);
        let after = model.score(x);
        assert!(after > before && after < 1.0, "{before} -> {after}");
    }

    #[cfg(target_arch = "x86_64")]
    fn check_builds_agree<T: Real, const W: usize>(seed: u64) {
        let (model64, batch) = model_and_example(W / 2, 37, seed, 1.0);
        let (u, v) = (model64.u_matrix(), model64.v_matrix());
        let model = DosModel::<T>::from_matrices(37, W / 2, &u, &v, PaVariant::Pa).unwrap();
        let x = batch.example(0);
        let baseline = accumulate_baseline::<T, W>(model.params(), 37, x);
        // SAFETY: only called when the CPU supports AVX2.
        let avx2 = unsafe { accumulate_avx2::<T, W>(model.params(), 37, x) };
        assert_eq!(baseline, avx2);
        let mut delta = [T::default(); W];
        for (j, value) in delta.iter_mut().enumerate() {
            *value = T::from_f64(0.1 * j as f64 - 0.7);
        }
        let (mut a, mut b) = (model.clone(), model);
        apply_baseline::<T, W>(a.params_mut(), 37, x, &delta);
        // SAFETY: as above.
        unsafe { apply_avx2::<T, W>(b.params_mut(), 37, x, &delta) };
        assert_eq!(a, b);
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx2_and_baseline_builds_are_bit_identical() {
        if !use_avx2() {
            return;
        }
        for seed in 0..20 {
            check_builds_agree::<f32, 2>(seed);
            check_builds_agree::<f32, 4>(seed);
            check_builds_agree::<f32, 8>(seed);
            check_builds_agree::<f32, 16>(seed);
            check_builds_agree::<f32, 32>(seed);
            check_builds_agree::<f64, 8>(seed);
            check_builds_agree::<f64, 16>(seed);
            check_builds_agree::<f64, 32>(seed);
        }
    }

    fn model_and_example(
        d: usize,
        n: usize,
        seed: u64,
        scale: f64,
    ) -> (DosModel<f64>, ExampleBatch) {
        let mut model = DosModel::<f64>::new(n, d, seed, PaVariant::Pa).unwrap();
        for p in model.params_mut() {
            *p *= scale;
        }
        // Deterministic pseudo-random sparse row from the seed.
        let mut batch = ExampleBatch::new(n).unwrap();
        let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut indices = Vec::new();
        let mut values = Vec::new();
        for k in 0..n {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            if state % 3 == 0 {
                indices.push(k as u32);
                values.push((state >> 11) as f64 / (1u64 << 53) as f64 * 4.0 - 2.0);
            }
        }
        batch.push_sparse_row(&indices, &values, 0).unwrap();
        (model, batch)
    }

    proptest! {
        #[test]
        fn margin_is_one_after_a_step(
            d in 1usize..10, n in 1usize..40, seed in 0u64..1_000_000,
            log_scale in -3.0f64..1.5, positive in any::<bool>(),
        ) {
            let (mut model, batch) = model_and_example(d, n, seed, 10f64.powf(log_scale));
            let x = batch.example(0);
            let y = if positive { Sign::Positive } else { Sign::Negative };
            let before = y.value() * model.score(x);
            let step = model.learn(x, y);
            let after = y.value() * model.score(x);
            let (uz, vz) = model.hidden(x);
            let size: f64 = uz.iter().chain(&vz).map(|h| h * h).sum();
            if before >= 1.0 {
                let passive = matches!(step, Step::Passive { .. });
                prop_assert!(passive, "{:?}", step);
                prop_assert_eq!(after, before);
            } else {
                prop_assert!((after - 1.0).abs() <= 1e-13 * (1.0 + size), "{} -> {} ({:?})", before, after, step);
            }
        }

        #[test]
        fn f32_storage_reaches_margin_one_to_f32_precision(
            d in 1usize..10, n in 1usize..40, seed in 0u64..1_000_000, positive in any::<bool>(),
        ) {
            let (model64, batch) = model_and_example(d, n, seed, 1.0);
            let u = model64.u_matrix();
            let v = model64.v_matrix();
            let mut model = DosModel::<f32>::from_matrices(n, d, &u, &v, PaVariant::Pa).unwrap();
            let x = batch.example(0);
            let y = if positive { Sign::Positive } else { Sign::Negative };
            let before = y.value() * model.score(x);
            model.learn(x, y);
            let after = y.value() * model.score(x);
            let (uz, vz) = model.hidden(x);
            let size: f64 = uz.iter().chain(&vz).map(|h| h * h).sum();
            if before < 1.0 {
                prop_assert!((after - 1.0).abs() <= 1e-5 * (1.0 + size), "{} -> {}", before, after);
            }
        }

        #[test]
        fn fixed_and_dynamic_kernels_agree(d in 1usize..18, seed in 0u64..1000) {
            let (mut model, batch) = model_and_example(d, 30, seed, 1.0);
            let x = batch.example(0);
            let mut acc = vec![0.0; 2 * d];
            accumulate_dyn(model.params(), 30, x, &mut acc);
            let (a, b) = sq_norms(&acc);
            prop_assert_eq!(model.score(x), a - b);
            let mut reference = model.clone();
            model.learn(x, Sign::Positive);
            // The dynamic path, by hand.
            let mut delta = vec![0.0; 2 * d];
            let step = pa_delta(&acc, &mut delta, x.z_sq_norm, Sign::Positive, PaVariant::Pa);
            if !matches!(step, Step::Passive { .. }) {
                apply_dyn(reference.params_mut(), 30, x, &delta);
            }
            prop_assert_eq!(model, reference);
        }
    }
}
