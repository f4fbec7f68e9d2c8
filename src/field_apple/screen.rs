//! Screening candidate field crosses on the residual, before any of them costs a weight.
//!
//! The *shadow* is a factorization machine of the main model's progressive residual `g` (minus
//! the loss derivative at its prediction): every feature i of every field has a small vector
//! `u_i` ([`RANK`] numbers, in a hashed table), each field a sums `U_a = Σ x_i u_i` over its
//! features, each candidate cross (a, b) contributes `c_ab = <U_a, U_b>`, and the shadow predicts
//! `s = Σ c_ab` over the candidates. It is trained by normalized gradient steps on `(g - s)²`.
//! Before each step every candidate records its progressive drop-one gain
//!
//! `gain_ab = w · (r² - e²)`, `e = g - s`, `r = e + c_ab` (the error without the cross),
//!
//! `w` the importance weight: what the cross adds to the others. A cross that carries signal the
//! model lacks has a positive mean gain; a useless one has a negative one (its `c_ab` only adds
//! noise: `E[r² - e²] = -E[c²]`). This judges each cross itself, so it finds crosses whose fields
//! say nothing alone (eat-rate's animal x food), which no ranking of single features by their
//! weights can.
//!
//! Why a shared factorization: a cross of two fields of 1,000 values each has a million value
//! pairs, each seen about twice in two million rows, so a shadow with one number per pair has
//! almost nothing to go on; a vector per value learns from every row holding the value (about two
//! thousand each), every pair is scored on every screened example, and the common crosses (a kind
//! of animal with a kind of food, a user segment with an ad category) are of low rank.

use super::operands::Operands;
use super::Judge;
use crate::memory::prefetch;

/// Numbers per feature vector of the shadow.
pub const RANK: usize = 4;

/// Shadow learning rate: the fraction of the error a step removes (normalized step).
const SHADOW_RATE: f32 = 0.2;

/// Spread of the initial vectors (they must not start at zero: a zero factorization never
/// moves).
const INITIAL_SCALE: f32 = 0.1;

/// Samples a candidate's gain statistics remember: older samples weigh less, by
/// `1 - 1/MEMORY` per sample, so the statistics judge the shadow as it is now, not as it was
/// while it was still learning. (Letting the memory grow with the samples, to gather power for
/// weak signals, found eat-rate's cross later and no click cross: not kept.)
const MEMORY: f64 = 4096.0;

/// Gain statistics of one judge of one cross since the last reset: sums of the gains, their
/// squares and the weights, older samples fading by `keep` per sample (1: none fade).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Gains {
    pub count: u64,
    pub gain: f64,
    pub gain_squares: f64,
    pub weight: f64,
}

impl Gains {
    /// Adds one gain sample, older ones weighing `keep` times less.
    pub fn record(&mut self, gain: f64, keep: f64) {
        self.count += 1;
        self.gain = keep * self.gain + gain;
        self.gain_squares = keep * self.gain_squares + gain * gain;
        self.weight = keep * self.weight + 1.0;
    }

    /// The weighted mean gain over its standard error (the weights' effective sample size):
    /// how surely the cross helps; 0 before two samples.
    pub fn z_score(&self) -> f64 {
        if self.count < 2 || self.weight <= 1.0 {
            return 0.0;
        }
        let n = self.weight;
        let mean = self.gain / n;
        let variance = (self.gain_squares / n - mean * mean).max(0.0) * n / (n - 1.0);
        if variance == 0.0 {
            return 0.0;
        }
        mean / (variance / n).sqrt()
    }

    pub fn reset(&mut self) {
        *self = Gains::default();
    }
}

/// A cross being screened: its fields and what each judge has seen of it since the last reset:
/// the shared factorization ([`Shadow`], recent samples, see [`MEMORY`]) and its own value-pair
/// cells ([`super::cells::PairCells`], every sample since the reset).
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    /// Its two operands ([`super::operands`]).
    pub pair: (usize, usize),
    pub role: Role,
    /// A probe of a triple or its pair's baseline ([`super::probes`]): its cells are in the
    /// probes' part of the table.
    pub probed: bool,
    pub factors: Gains,
    pub cells: Gains,
}

/// What a candidate is to the race.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// A cross of two fields that may join.
    Cross,
    /// A cross of a joined field (`pair.0`) with a further field that may join. Judged by the
    /// cells alone: in the factorization, a joined field crossed with a field of few values
    /// has that many directions to fit the joined field's own values with, where its baseline
    /// has one, so every such split of a young cross gained (click: a noise field of few
    /// values joined a planted pair 60k rows after it).
    Split,
    /// A joined field with the constant, in the cells: never joins (the cross is in the model
    /// already), but learns what the cross's own weights have not learned yet, so that a split
    /// is judged on what its further field adds (see [`super::cells`]; without it, every split
    /// of a young cross gains that cross's own lag, and a noise field joins).
    Baseline,
    /// A cross of three fields no pair of which is in the model: an unjoined pair of fields
    /// (`pair.0`, a probed pair's operand, [`super::probes`]) with a third field. Judged by the
    /// cells alone against its pair's baseline; joins only while no pair of its three fields
    /// gains as a cross of two (it is a cross only the triple carries).
    Probe,
}

impl Candidate {
    pub fn new(pair: (usize, usize)) -> Self {
        let (factors, cells) = (Gains::default(), Gains::default());
        Candidate { pair, role: Role::Cross, probed: false, factors, cells }
    }

    /// The baseline of joined field `joined`, the constant being operand `constant`.
    pub fn baseline(joined: usize, constant: usize) -> Self {
        Candidate { role: Role::Baseline, ..Candidate::new((joined, constant)) }
    }

    /// The cross of joined field `joined` with field `field`.
    pub fn split(joined: usize, field: usize) -> Self {
        Candidate { role: Role::Split, ..Candidate::new((joined, field)) }
    }

    /// The probe of probed pair `operand` with field `field`.
    pub fn probe(operand: usize, field: usize) -> Self {
        Candidate { role: Role::Probe, probed: true, ..Candidate::new((operand, field)) }
    }

    /// The baseline of probed pair `operand` (the constant being operand `constant`).
    pub fn probe_baseline(operand: usize, constant: usize) -> Self {
        Candidate { probed: true, ..Candidate::baseline(operand, constant) }
    }

    pub fn is_probe(&self) -> bool {
        self.role == Role::Probe
    }

    /// Whether the factorization judges it (see [`Role`]).
    pub fn factorized(&self) -> bool {
        self.role == Role::Cross
    }

    pub fn is_baseline(&self) -> bool {
        self.role == Role::Baseline
    }

    /// Adds one gain sample of the factorization judge (see [`MEMORY`]).
    pub fn record(&mut self, gain: f64) {
        self.factors.record(gain, 1.0 - 1.0 / MEMORY);
    }

    /// How surely the cross helps: the larger of its two judges' z-scores, of those that have
    /// judged it (0 if neither has).
    pub fn z_score(&self) -> f64 {
        let judged = [&self.factors, &self.cells].into_iter().filter(|g| g.count >= 2);
        judged.map(Gains::z_score).reduce(f64::max).unwrap_or(0.0)
    }

    /// Gain samples since the last reset (of the judge with more).
    pub fn count(&self) -> u64 {
        self.factors.count.max(self.cells.count)
    }

    pub fn reset(&mut self) {
        self.factors.reset();
        self.cells.reset();
    }
}

type Vector = [f32; RANK];

fn dot(a: &Vector, b: &Vector) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The shadow factorization machine (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct Shadow {
    /// `2^bits` vectors of [`RANK`] numbers.
    table: Vec<f32>,
    shift: u32,
    /// Reused per example: each field's sum and direction, each candidate's contribution.
    sums: Vec<Vector>,
    norms: Vec<f32>,
    contributions: Vec<f32>,
    directions: Vec<Vector>,
}

/// An example's feature vectors, located in the shadow's table (and fetched ahead) before the
/// example is judged ([`Judge::locate`], [`Judge::judge`]): each feature's slot and value,
/// each field's span of them. Only the fields some candidate crosses: another field's sum
/// enters no prediction, and its vectors' step is zero (most candidates pause once a cross is
/// found).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LocatedVectors {
    slots: Vec<usize>,
    values: Vec<f32>,
    spans: Vec<(usize, usize)>,
    crossed: Vec<bool>,
}

impl LocatedVectors {
    /// Feature vectors located.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }
}

/// A feature's slot: its hash mixed with its field's number (the same feature in two fields is
/// two vectors), multiplicative hashing's top bits.
#[inline]
fn slot(hash: u64, field: usize, shift: u32) -> usize {
    let salt = (field as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    ((hash ^ salt).wrapping_mul(0xD6E8_FEB8_6659_FD93) >> shift) as usize
}

impl Shadow {
    /// A table of `2^bits` vectors (`bits` in 10..=26, checked by the caller), each number
    /// starting at a small deterministic pseudo-random value.
    pub fn new(bits: u32) -> Self {
        let mut table = vec![0.0f32; RANK << bits];
        // Its vectors are random reads: on normal pages nearly each would miss the TLB too.
        crate::memory::advise_huge_pages(&mut table);
        Self::initialize(&mut table);
        Shadow {
            table,
            shift: 64 - bits,
            sums: Vec::new(),
            norms: Vec::new(),
            contributions: Vec::new(),
            directions: Vec::new(),
        }
    }

    fn initialize(table: &mut [f32]) {
        for (k, v) in table.iter_mut().enumerate() {
            let bits = crate::hashing::fmix32(k as u32 ^ 0x2545_F491);
            // Uniform in [-scale, scale).
            *v = INITIAL_SCALE * ((bits as f32 / u32::MAX as f32) * 2.0 - 1.0);
        }
    }

    fn vector(&self, slot: usize) -> &Vector {
        let start = slot * RANK;
        self.table[start..start + RANK].try_into().unwrap_or(&[0.0; RANK])
    }
}

impl Judge for Shadow {
    type Located = LocatedVectors;

    /// Locates the vectors of the operands `candidates` cross into `out`, asking for each
    /// ahead of its use: they are random reads in a large table.
    fn locate(&self, operands: &Operands<'_>, candidates: &[Candidate], out: &mut LocatedVectors) {
        let n_fields = operands.len();
        out.slots.clear();
        out.values.clear();
        out.spans.clear();
        out.crossed.clear();
        out.crossed.resize(n_fields, false);
        for candidate in candidates.iter().filter(|c| c.factorized()) {
            out.crossed[candidate.pair.0] = true;
            out.crossed[candidate.pair.1] = true;
        }
        for field in 0..n_fields {
            let start = out.slots.len();
            if out.crossed[field] {
                let features = operands.get(field);
                for &h in features.hashes {
                    let slot = slot(h, field, self.shift);
                    prefetch(self.table.as_ptr().wrapping_add(slot * RANK));
                    out.slots.push(slot);
                }
                out.values.extend_from_slice(features.values);
            }
            out.spans.push((start, out.slots.len()));
        }
    }

    /// Records every candidate's progressive drop-one gain on the example `located` (for the
    /// same `candidates`) for residual `residual`, then trains the shadow.
    fn judge(
        &mut self,
        located: &LocatedVectors,
        candidates: &mut [Candidate],
        residual: f32,
        weight: f32,
    ) {
        let n_fields = located.spans.len();
        self.sums.clear();
        self.norms.clear();
        for &(start, end) in &located.spans {
            let mut sum = [0.0f32; RANK];
            let mut norm = 0.0f32;
            for (&slot, &x) in located.slots[start..end].iter().zip(&located.values[start..end]) {
                let vector = self.vector(slot);
                sum.iter_mut().zip(vector).for_each(|(s, v)| *s += x * v);
                norm += x * x;
            }
            self.sums.push(sum);
            self.norms.push(norm);
        }
        let sums = &self.sums;
        self.contributions.clear();
        self.contributions.extend(candidates.iter().map(|c| {
            if c.factorized() {
                dot(&sums[c.pair.0], &sums[c.pair.1])
            } else {
                0.0
            }
        }));
        let error = residual - self.contributions.iter().sum::<f32>();
        if !error.is_finite() {
            return;
        }
        let w = f64::from(weight);
        for (candidate, &c) in candidates.iter_mut().zip(&self.contributions) {
            if !candidate.factorized() {
                continue;
            }
            let without = f64::from(error + c);
            candidate.record(w * (without * without - f64::from(error) * f64::from(error)));
        }
        // d s / d u_i = x_i · (Σ of the sums of the fields field(i) is crossed with).
        self.directions.clear();
        self.directions.resize(n_fields, [0.0; RANK]);
        for candidate in candidates.iter().filter(|c| c.factorized()) {
            let (a, b) = candidate.pair;
            let (sum_a, sum_b) = (self.sums[a], self.sums[b]);
            self.directions[a].iter_mut().zip(&sum_b).for_each(|(d, v)| *d += v);
            self.directions[b].iter_mut().zip(&sum_a).for_each(|(d, v)| *d += v);
        }
        let curvature: f32 =
            self.norms.iter().zip(&self.directions).map(|(norm, d)| norm * dot(d, d)).sum();
        let step = SHADOW_RATE * weight.min(1.0) * error / curvature.max(1.0);
        for (&(start, end), direction) in located.spans.iter().zip(&self.directions) {
            for (&slot, &x) in located.slots[start..end].iter().zip(&located.values[start..end]) {
                let vector = &mut self.table[slot * RANK..(slot + 1) * RANK];
                vector.iter_mut().zip(direction).for_each(|(v, d)| *v += step * x * d);
            }
        }
    }

    /// Forgets the shadow and every candidate's statistics: after a cross joins the model the
    /// residual changes, and what was learned of the old one would mislead.
    fn reset(&mut self, candidates: &mut [Candidate]) {
        Self::initialize(&mut self.table);
        candidates.iter_mut().for_each(|c| c.factors.reset());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field_apple::judges::screen_with;
    use crate::learner::example::ExampleBuffer;

    /// Screens the crosses of three one-hot fields on `rows` of (value ids, residual).
    fn screen_rows(rows: &[([u32; 3], f32)]) -> Vec<Candidate> {
        let mut shadow = Shadow::new(16);
        let mut candidates: Vec<Candidate> =
            [(0, 1), (0, 2), (1, 2)].into_iter().map(Candidate::new).collect();
        let mut buffer = ExampleBuffer::new();
        for (ids, g) in rows {
            buffer.clear();
            for &id in ids {
                buffer.push_namespace(0, &[id], &[1.0f32], 0).unwrap();
            }
            let example = buffer.finish(0.0, 1.0, 0).unwrap();
            assert_eq!(screen_with(&mut shadow, &example, &mut candidates, *g, 1.0).len(), 3);
        }
        candidates
    }

    #[test]
    fn the_cross_that_predicts_the_residual_gains_and_the_others_do_not() {
        // The residual is the product of two ±1 attributes of fields 0 and 1 (20 values each);
        // field 2 is noise.
        let sign = |v: u32| if v % 2 == 0 { 1.0 } else { -1.0 };
        let mut state = 12345u64;
        let mut next = || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 33) as u32
        };
        let rows: Vec<([u32; 3], f32)> = (0..6000)
            .map(|_| {
                let ids = [next() % 20, next() % 20, next() % 20];
                (ids, 0.5 * sign(ids[0]) * sign(ids[1]))
            })
            .collect();
        let candidates = screen_rows(&rows);
        assert_eq!(candidates[0].factors.count, 6000);
        assert!(candidates[0].z_score() > 20.0, "{:?}", candidates[0]);
        for noise in &candidates[1..] {
            assert!(noise.z_score() < 3.0, "{noise:?}");
        }
    }

    #[test]
    fn fields_no_candidate_crosses_are_not_read() {
        // Candidate (0, 1) judged on three fields, and on the same rows without field 2.
        let mut judged = Vec::new();
        for n_fields in [3, 2] {
            let mut shadow = Shadow::new(12);
            let mut candidates = vec![Candidate::new((0, 1))];
            let mut buffer = ExampleBuffer::new();
            for row in 0..500u32 {
                buffer.clear();
                for k in 0..n_fields {
                    buffer.push_namespace(0, &[(row * (k + 3)) % 17], &[1.0f32], 0).unwrap();
                }
                let g = if row % 3 == 0 { 0.5 } else { -0.25 };
                let example = buffer.finish(0.0, 1.0, 0).unwrap();
                assert_eq!(screen_with(&mut shadow, &example, &mut candidates, g, 1.0).len(), 2);
            }
            judged.push(candidates[0].factors.clone());
        }
        assert!(judged[0].count == 500 && judged[0].gain != 0.0);
        assert_eq!(judged[0], judged[1]);
    }

    #[test]
    fn z_score_is_mean_over_standard_error_of_recent_gains() {
        let mut candidate = Candidate::new((0, 1));
        for gain in [1.0, 2.0, 3.0] {
            candidate.record(gain);
        }
        // Nearly equal weights: mean ~2, sample sd ~1, n ~3: z ~ 2 / (1 / sqrt 3).
        assert!((candidate.z_score() - 2.0 * 3f64.sqrt()).abs() < 2e-3, "{}", candidate.z_score());
        assert_eq!(Candidate::new((0, 1)).z_score(), 0.0);
        // Old samples fade: after many negative gains, a long run of positive ones wins.
        let mut fading = Candidate::new((0, 1));
        (0..20_000).for_each(|k| fading.record(if k % 2 == 0 { -1.5 } else { 0.5 }));
        assert!(fading.factors.z_score() < -5.0);
        // A candidate's z-score is its better judge's, of those that judged it.
        assert_eq!(fading.z_score(), fading.factors.z_score());
        fading.cells.record(1.0, 1.0);
        fading.cells.record(1.5, 1.0);
        assert!(fading.z_score() > 1.0);
        (0..20_000).for_each(|k| fading.record(if k % 2 == 0 { 1.5 } else { -0.5 }));
        assert!(fading.factors.z_score() > 5.0, "{}", fading.z_score());
        // Cell samples never fade: the same sequence leaves the mean negative.
        let mut lasting = Gains::default();
        (0..20_000).for_each(|k| lasting.record(if k % 2 == 0 { -1.5 } else { 0.5 }, 1.0));
        (0..20_000).for_each(|k| lasting.record(if k % 2 == 0 { 1.5 } else { -0.5 }, 1.0));
        assert!(lasting.z_score().abs() < 1e-9, "{}", lasting.z_score());
    }

    #[test]
    fn reset_forgets_the_shadow_and_the_statistics() {
        let rows = [([1, 2, 3], 1.0f32), ([1, 2, 3], 1.0)];
        let mut shadow = Shadow::new(10);
        let mut candidates = vec![Candidate::new((0, 1))];
        let mut buffer = ExampleBuffer::new();
        for (ids, g) in rows {
            buffer.clear();
            for id in ids {
                buffer.push_namespace(0, &[id], &[1.0f32], 0).unwrap();
            }
            let example = buffer.finish(0.0, 1.0, 0).unwrap();
            screen_with(&mut shadow, &example, &mut candidates, g, 1.0);
        }
        assert!(candidates[0].factors.gain > 0.0);
        assert!(shadow.table != Shadow::new(10).table);
        shadow.reset(&mut candidates);
        assert_eq!(candidates[0].factors.count, 0);
        assert!(shadow.table == Shadow::new(10).table);
    }

    #[test]
    fn the_same_feature_in_two_fields_has_two_vectors() {
        let differ = (0..100u64).filter(|&h| slot(h, 0, 44) != slot(h, 1, 44)).count();
        assert!(differ >= 99);
    }
}
