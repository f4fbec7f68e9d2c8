//! An INFIMNIST-style endless stream of distorted digits: example i is base image i mod N
//! (N = number of base images) warped by a random elastic deformation (Simard, Steinkraus &
//! Platt 2003) composed with a small random affine jitter, with all randomness drawn from an RNG
//! seeded by (seed, i) alone. So any example can be regenerated on its own, and the stream can be
//! split across threads in any way with identical results.
//!
//! # Method (per example)
//!
//! 1. Displacement fields Δx, Δy: one independent uniform [−1, 1] value per pixel each.
//! 2. Each field is smoothed by a Gaussian of std σ (default 4 px; separable, truncated at
//!    ⌈3σ⌉, normalized to sum 1, zero outside the image) and scaled by α (default 24 px). With
//!    the defaults the displacement has a standard deviation of about 1 px.
//! 3. Affine jitter, with each parameter uniform in its range (defaults): rotation θ ∈ ±0.1 rad
//!    (±5.7°), isotropic scale s ∈ 1 ± 0.1, horizontal shear h ∈ ±0.1, translation
//!    t ∈ ±1 px per axis; A = s·R(θ)·[[1, h], [0, 1]].
//! 4. Output pixel p (column x, row y; c = image centre) samples the base image at
//!    A(p − c) + c + t + (Δx, Δy)(p) by bilinear interpolation (zero outside the image), i.e. the
//!    maps act as the backward (sampling) warp.
//!
//! Pixels are f32 in [0, 1] (base bytes / 255).

use rayon::prelude::*;

use super::idx::{read_images, read_labels, IdxImages};
use crate::error::PolyResult;

/// Parameters of the random distortions (see the module docs for their meaning).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Distortion {
    /// Scale α of the smoothed displacement field, in pixels.
    pub alpha: f64,
    /// Std σ of the Gaussian smoothing the displacement field, in pixels (> 0).
    pub sigma: f64,
    /// Rotations are uniform in ±`max_rotation` radians.
    pub max_rotation: f64,
    /// Scale factors are uniform in 1 ± `max_scale` (< 1).
    pub max_scale: f64,
    /// Shear factors are uniform in ±`max_shear`.
    pub max_shear: f64,
    /// Translations are uniform in ±`max_translation` pixels per axis.
    pub max_translation: f64,
}

impl Default for Distortion {
    fn default() -> Self {
        Self {
            alpha: 24.0,
            sigma: 4.0,
            max_rotation: 0.1,
            max_scale: 0.1,
            max_shear: 0.1,
            max_translation: 1.0,
        }
    }
}

impl Distortion {
    /// No distortion at all: the stream repeats the base images exactly.
    pub fn none() -> Self {
        Self {
            alpha: 0.0,
            max_rotation: 0.0,
            max_scale: 0.0,
            max_shear: 0.0,
            max_translation: 0.0,
            ..Self::default()
        }
    }

    fn validate(&self) -> PolyResult<()> {
        let fields = [
            ("alpha", self.alpha),
            ("sigma", self.sigma),
            ("max_rotation", self.max_rotation),
            ("max_scale", self.max_scale),
            ("max_shear", self.max_shear),
            ("max_translation", self.max_translation),
        ];
        for (name, value) in fields {
            if !value.is_finite() || value < 0.0 {
                return crate::invalid!("distortion {name} must be finite and >= 0, got {value}");
            }
        }
        if self.sigma <= 0.0 || self.sigma > 1000.0 {
            return crate::invalid!("distortion sigma must be in (0, 1000], got {}", self.sigma);
        }
        if self.max_scale >= 1.0 {
            return crate::invalid!("distortion max_scale must be < 1, got {}", self.max_scale);
        }
        Ok(())
    }
}

/// A seeded, endless, random-access stream of distorted copies of a set of base images.
#[derive(Clone, Debug)]
pub struct DigitStream {
    rows: usize,
    cols: usize,
    /// Base images as f32 in [0, 1].
    base: Vec<f32>,
    labels: Vec<u8>,
    seed: u64,
    distortion: Distortion,
    /// Banded Gaussian smoothing matrices (rows × rows and cols × cols), α folded into `blur_rows`.
    blur_rows: Vec<f32>,
    blur_cols: Vec<f32>,
}

/// Reusable buffers for one thread of generation.
#[derive(Clone, Debug, Default)]
pub struct Scratch {
    dx: Vec<f32>,
    dy: Vec<f32>,
    tmp: Vec<f32>,
}

impl DigitStream {
    /// A stream over `images` with `labels` (one per image).
    pub fn new(
        images: &IdxImages,
        labels: &[u8],
        seed: u64,
        distortion: Distortion,
    ) -> PolyResult<Self> {
        distortion.validate()?;
        if images.is_empty() {
            return crate::invalid!("a digit stream needs at least one base image");
        }
        if images.len() != labels.len() {
            return crate::invalid!("{} base images but {} labels", images.len(), labels.len());
        }
        let base = images.pixels.iter().map(|&p| f32::from(p) / 255.0).collect();
        let blur_rows = blur_matrix(images.rows, distortion.sigma, distortion.alpha);
        let blur_cols = blur_matrix(images.cols, distortion.sigma, 1.0);
        Ok(Self {
            rows: images.rows,
            cols: images.cols,
            base,
            labels: labels.to_vec(),
            seed,
            distortion,
            blur_rows,
            blur_cols,
        })
    }

    /// A stream over the images and labels of two MNIST IDX files (gzip or plain).
    pub fn from_idx_files(
        images: impl AsRef<std::path::Path>,
        labels: impl AsRef<std::path::Path>,
        seed: u64,
        distortion: Distortion,
    ) -> PolyResult<Self> {
        Self::new(&read_images(images)?, &read_labels(labels)?, seed, distortion)
    }

    /// Pixels per image (rows · cols; 784 for MNIST).
    pub fn image_len(&self) -> usize {
        self.rows * self.cols
    }

    pub fn shape(&self) -> (usize, usize) {
        (self.rows, self.cols)
    }

    /// Number of base images N.
    pub fn n_base(&self) -> usize {
        self.labels.len()
    }

    /// Base image k as f32 in [0, 1].
    pub fn base_image(&self, k: usize) -> &[f32] {
        &self.base[k * self.image_len()..(k + 1) * self.image_len()]
    }

    pub fn base_labels(&self) -> &[u8] {
        &self.labels
    }

    /// The label of example i (that of base image i mod N).
    pub fn label(&self, i: u64) -> u8 {
        self.labels[(i % self.n_base() as u64) as usize]
    }

    /// Writes example i into `out` (`image_len()` pixels) and returns its label.
    pub fn example(&self, i: u64, out: &mut [f32], scratch: &mut Scratch) -> u8 {
        let (rows, cols) = (self.rows, self.cols);
        let size = rows * cols;
        assert_eq!(out.len(), size, "output buffer must hold one image");
        let k = (i % self.n_base() as u64) as usize;
        let base = self.base_image(k);
        let mut rng = SplitMix64::for_example(self.seed, i);
        let Scratch { dx, dy, tmp } = scratch;
        for field in [&mut *dx, &mut *dy] {
            field.resize(size, 0.0);
            if self.distortion.alpha == 0.0 {
                field.fill(0.0);
            } else {
                rng.fill_symmetric(field);
                self.smooth(field, tmp);
            }
        }
        let dist = &self.distortion;
        let theta = dist.max_rotation * rng.symmetric();
        let scale = 1.0 + dist.max_scale * rng.symmetric();
        let shear = dist.max_shear * rng.symmetric();
        let tx = dist.max_translation * rng.symmetric();
        let ty = dist.max_translation * rng.symmetric();
        let (sin, cos) = theta.sin_cos();
        // s·R(θ)·[[1, h], [0, 1]]
        let a00 = (scale * cos) as f32;
        let a01 = (scale * (cos * shear - sin)) as f32;
        let a10 = (scale * sin) as f32;
        let a11 = (scale * (sin * shear + cos)) as f32;
        let (cx, cy) = ((cols as f32 - 1.0) / 2.0, (rows as f32 - 1.0) / 2.0);
        let (ox, oy) = (cx + tx as f32, cy + ty as f32);
        for y in 0..rows {
            let py = y as f32 - cy;
            for x in 0..cols {
                let px = x as f32 - cx;
                let p = y * cols + x;
                let sx = a00 * px + a01 * py + ox + dx[p];
                let sy = a10 * px + a11 * py + oy + dy[p];
                out[p] = bilinear(base, rows, cols, sx, sy);
            }
        }
        self.labels[k]
    }

    /// Fills `labels.len()` consecutive examples starting at example `start`, in parallel
    /// (rayon); `images` holds `labels.len() · image_len()` pixels. Same result for any thread
    /// count.
    pub fn fill(&self, start: u64, images: &mut [f32], labels: &mut [u8]) -> PolyResult<()> {
        let size = self.image_len();
        if images.len() != labels.len() * size {
            return crate::invalid!(
                "image buffer has {} pixels, expected {} labels × {size}",
                images.len(),
                labels.len()
            );
        }
        images.par_chunks_mut(size).zip(labels.par_iter_mut()).enumerate().for_each_init(
            Scratch::default,
            |scratch, (offset, (image, label))| {
                *label = self.example(start + offset as u64, image, scratch);
            },
        );
        Ok(())
    }

    /// field ← B_rows · field · B_colsᵀ (separable Gaussian blur; α is folded into B_rows), in
    /// the AVX2 build when the CPU has it (same operations per lane: identical results).
    fn smooth(&self, field: &mut [f32], tmp: &mut Vec<f32>) {
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above).
            return unsafe { self.smooth_avx2(field, tmp) };
        }
        self.smooth_body(field, tmp);
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn smooth_avx2(&self, field: &mut [f32], tmp: &mut Vec<f32>) {
        self.smooth_body(field, tmp);
    }

    #[inline(always)]
    fn smooth_body(&self, field: &mut [f32], tmp: &mut Vec<f32>) {
        let (rows, cols) = (self.rows, self.cols);
        tmp.clear();
        tmp.resize(rows * cols, 0.0);
        // Along each row: tmp[y, :] = Σ_x' field[y, x'] · B_cols[x', :] (B symmetric).
        for y in 0..rows {
            let out = &mut tmp[y * cols..(y + 1) * cols];
            for x2 in 0..cols {
                let f = field[y * cols + x2];
                let weights = &self.blur_cols[x2 * cols..(x2 + 1) * cols];
                for (o, &w) in out.iter_mut().zip(weights) {
                    *o += f * w;
                }
            }
        }
        // Along each column: field[y, :] = Σ_y' B_rows[y, y'] · tmp[y', :].
        field.fill(0.0);
        for y in 0..rows {
            let out = &mut field[y * cols..(y + 1) * cols];
            for y2 in 0..rows {
                let w = self.blur_rows[y * rows + y2];
                if w == 0.0 {
                    continue;
                }
                for (o, &t) in out.iter_mut().zip(&tmp[y2 * cols..(y2 + 1) * cols]) {
                    *o += w * t;
                }
            }
        }
    }
}

/// The len × len matrix of a 1-D Gaussian blur (std `sigma`, truncated at ⌈3σ⌉, weights summing
/// to `scale`, zero padding).
fn blur_matrix(len: usize, sigma: f64, scale: f64) -> Vec<f32> {
    let radius = (3.0 * sigma).ceil() as usize;
    let weights: Vec<f64> =
        (0..=radius).map(|k| (-(k as f64).powi(2) / (2.0 * sigma * sigma)).exp()).collect();
    let total = weights[0] + 2.0 * weights[1..].iter().sum::<f64>();
    let mut out = vec![0.0f32; len * len];
    for i in 0..len {
        for j in 0..len {
            let k = i.abs_diff(j);
            if k <= radius {
                out[i * len + j] = (scale * weights[k] / total) as f32;
            }
        }
    }
    out
}

/// Bilinear interpolation of `image` at column `sx`, row `sy`; pixels outside are 0.
#[inline]
fn bilinear(image: &[f32], rows: usize, cols: usize, sx: f32, sy: f32) -> f32 {
    // Also rejects NaN. Inside the range, +1 makes the truncating cast a floor (no libm call).
    if !(sx > -1.0 && sy > -1.0 && sx < cols as f32 && sy < rows as f32) {
        return 0.0;
    }
    let (x0, y0) = ((sx + 1.0) as isize - 1, (sy + 1.0) as isize - 1);
    let (wx, wy) = (sx - x0 as f32, sy - y0 as f32);
    let at = |x: isize, y: isize| -> f32 {
        if x >= 0 && y >= 0 && (x as usize) < cols && (y as usize) < rows {
            image[y as usize * cols + x as usize]
        } else {
            0.0
        }
    };
    let top = at(x0, y0) * (1.0 - wx) + at(x0 + 1, y0) * wx;
    let bottom = at(x0, y0 + 1) * (1.0 - wx) + at(x0 + 1, y0 + 1) * wx;
    (top * (1.0 - wy) + bottom * wy).clamp(0.0, 1.0)
}

/// SplitMix64 (Steele, Lea & Flood 2014): a tiny, fast generator with good statistical quality,
/// seeded per example from (seed, i) so that examples are independent of each other.
struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    fn for_example(seed: u64, i: u64) -> Self {
        let mut mixer = Self { state: seed };
        let a = mixer.next_u64();
        Self { state: a ^ i.wrapping_mul(0xD1B5_4A32_D192_ED03) }
    }

    #[inline]
    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [−1, 1) with 53 random bits.
    fn symmetric(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (2.0 / (1u64 << 53) as f64) - 1.0
    }

    /// Uniform f32 values in [−1, 1) (24 random bits each, two per draw).
    fn fill_symmetric(&mut self, out: &mut [f32]) {
        const SCALE: f32 = 2.0 / (1u32 << 24) as f32;
        let mut pairs = out.chunks_exact_mut(2);
        for pair in &mut pairs {
            let bits = self.next_u64();
            pair[0] = (bits >> 40) as f32 * SCALE - 1.0;
            pair[1] = ((bits >> 8) & 0xFF_FFFF) as f32 * SCALE - 1.0;
        }
        for last in pairs.into_remainder() {
            *last = (self.next_u64() >> 40) as f32 * SCALE - 1.0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two synthetic 28×28 "digits": a bar and a ring.
    fn synthetic() -> (IdxImages, Vec<u8>) {
        let mut pixels = vec![0u8; 2 * 784];
        for y in 4..24 {
            for x in 12..16 {
                pixels[y * 28 + x] = 255;
            }
        }
        for y in 0..28 {
            for x in 0..28 {
                let r = ((x as f64 - 13.5).powi(2) + (y as f64 - 13.5).powi(2)).sqrt();
                if (6.0..9.0).contains(&r) {
                    pixels[784 + y * 28 + x] = 200;
                }
            }
        }
        (IdxImages { rows: 28, cols: 28, pixels }, vec![1, 0])
    }

    fn correlation(a: &[f32], b: &[f32]) -> f64 {
        let mean = |v: &[f32]| v.iter().map(|&x| f64::from(x)).sum::<f64>() / v.len() as f64;
        let (ma, mb) = (mean(a), mean(b));
        let mut sab = 0.0;
        let mut saa = 0.0;
        let mut sbb = 0.0;
        for (&x, &y) in a.iter().zip(b) {
            let (x, y) = (f64::from(x) - ma, f64::from(y) - mb);
            sab += x * y;
            saa += x * x;
            sbb += y * y;
        }
        sab / (saa * sbb).sqrt()
    }

    #[test]
    fn examples_are_deterministic_distorted_copies() {
        let (images, labels) = synthetic();
        let stream = DigitStream::new(&images, &labels, 7, Distortion::default()).unwrap();
        let mut scratch = Scratch::default();
        let mut a = vec![0.0; 784];
        let mut b = vec![0.0; 784];
        for i in [0u64, 1, 2, 3, 1_000_001] {
            let label = stream.example(i, &mut a, &mut scratch);
            assert_eq!(label, labels[(i % 2) as usize]);
            assert_eq!(stream.label(i), label);
            stream.example(i, &mut b, &mut Scratch::default());
            assert_eq!(a, b, "example {i} is a pure function of (seed, i)");
            assert!(a.iter().all(|&p| (0.0..=1.0).contains(&p)));
            let base = stream.base_image((i % 2) as usize);
            let r = correlation(&a, base);
            assert!(a != base && r > 0.5, "example {i}: correlation with its base {r}");
        }
        // Different examples of the same base differ; another seed gives another stream.
        stream.example(0, &mut a, &mut scratch);
        stream.example(2, &mut b, &mut scratch);
        assert_ne!(a, b);
        let other = DigitStream::new(&images, &labels, 8, Distortion::default()).unwrap();
        other.example(0, &mut b, &mut scratch);
        assert_ne!(a, b);
    }

    #[test]
    fn no_distortion_reproduces_the_base_images() {
        let (images, labels) = synthetic();
        let stream = DigitStream::new(&images, &labels, 1, Distortion::none()).unwrap();
        let mut out = vec![0.0; 784];
        stream.example(5, &mut out, &mut Scratch::default());
        let base = stream.base_image(1);
        for (o, b) in out.iter().zip(base) {
            assert!((o - b).abs() < 1e-6);
        }
    }

    #[test]
    fn displacement_has_about_one_pixel_std_with_defaults() {
        let (images, labels) = synthetic();
        let stream = DigitStream::new(&images, &labels, 3, Distortion::default()).unwrap();
        let mut field = vec![0.0f32; 784];
        let mut tmp = Vec::new();
        let mut sum_sq = 0.0;
        let mut count = 0;
        for i in 0..50 {
            SplitMix64::for_example(3, i).fill_symmetric(&mut field);
            stream.smooth(&mut field, &mut tmp);
            // The centre, away from the zero-padded border.
            for y in 10..18 {
                for x in 10..18 {
                    sum_sq += f64::from(field[y * 28 + x]).powi(2);
                    count += 1;
                }
            }
        }
        let std = (sum_sq / count as f64).sqrt();
        assert!((0.6..1.5).contains(&std), "displacement std {std} px");
    }

    #[test]
    fn fill_matches_single_examples_for_any_thread_count() {
        let (images, labels) = synthetic();
        let stream = DigitStream::new(&images, &labels, 11, Distortion::default()).unwrap();
        let n = 37;
        let run = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let mut pixels = vec![0.0; n * 784];
            let mut out_labels = vec![0u8; n];
            pool.install(|| stream.fill(100, &mut pixels, &mut out_labels)).unwrap();
            (pixels, out_labels)
        };
        let (one, one_labels) = run(1);
        assert_eq!(run(3), (one.clone(), one_labels.clone()));
        let mut single = vec![0.0; 784];
        stream.example(100 + 20, &mut single, &mut Scratch::default());
        assert_eq!(&one[20 * 784..21 * 784], single.as_slice());
        assert_eq!(one_labels[20], labels[0]);
        let err = stream.fill(0, &mut [0.0; 10], &mut [0u8; 1]).unwrap_err().to_string();
        assert_eq!(err, "image buffer has 10 pixels, expected 1 labels × 784");
    }

    #[test]
    fn bad_parameters() {
        let (images, labels) = synthetic();
        let bad = Distortion { sigma: 0.0, ..Distortion::default() };
        let err = DigitStream::new(&images, &labels, 0, bad).unwrap_err().to_string();
        assert_eq!(err, "distortion sigma must be in (0, 1000], got 0");
        let bad = Distortion { alpha: f64::NAN, ..Distortion::default() };
        let err = DigitStream::new(&images, &labels, 0, bad).unwrap_err().to_string();
        assert_eq!(err, "distortion alpha must be finite and >= 0, got NaN");
        let bad = Distortion { max_scale: 1.0, ..Distortion::default() };
        let err = DigitStream::new(&images, &labels, 0, bad).unwrap_err().to_string();
        assert_eq!(err, "distortion max_scale must be < 1, got 1");
        let err = DigitStream::new(&images, &labels[..1], 0, Distortion::default()).unwrap_err();
        assert_eq!(err.to_string(), "2 base images but 1 labels");
    }
}
