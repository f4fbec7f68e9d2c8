//! Field-aware factorization (FFM, issue 58): a latent vector per feature and *other* field,
//! learned online beside the linear weights, so that a pair of values never seen together is
//! still scored from what each value showed with others (an animal's "diet" and a food's
//! "kind" on eat-rate).
//!
//! Fields are fields of [`ExpandedFeatures`] (a namespace's own features,
//! [`super::features::namespace_field`]); the options list those taking part. Feature `i` of
//! field `f_i` and value `x_i` owns `F` latent vectors `v(i, z)` of `k` values, one per field `z`.
//! The score is the sum over pairs of features `i < j` of `<v(i, f_j), v(j, f_i)> x_i x_j`,
//! computed in `O(n F k)` from the sums `S[f][z] = sum over i in f of x_i v(i, z)`:
//! `sum over fields a < b of <S[a][b], S[b][a]>` plus, within a field,
//! `(|S[f][f]|^2 - sum over i in f of x_i^2 |v(i, f)|^2) / 2` (pairs of features of one field,
//! as fwumious_wabbit counts them; a one-hot field has none). The score's derivative in `v(i, z)`
//! is `x_i (S[z][f_i] - [z = f_i] x_i v(i, f_i))`.
//!
//! A feature's vectors lie together: row `r` of the table (from the feature's weight slot) holds
//! its `F k` latent values, then their `F k` AdaGrad sums, so an example reads one short run of
//! cache lines per feature. Each latent value takes AdaGrad's step,
//! `v -= rate g / G^power_t` after `G += g^2` (`G` starting at `initial_accumulator`), with `g`
//! the loss's derivative times the score's: the rule fwumious_wabbit gives its FFM part, apart
//! from the linear part's. Values start uniform in `±init_scale / sqrt(k)`, the same for a slot
//! whatever the order examples come in (a hash of the value's position and the seed).

use serde::{Deserialize, Serialize};

use super::features::ExpandedFeatures;
use crate::codec::{bad, ByteReader, ByteWriter};
use crate::error::PolyResult;
use crossed::{CrossedPairs, Link};

/// Most latent dimensions.
pub const MAX_K: usize = 128;
/// Most fields taking part.
pub const MAX_FIELDS: usize = 256;
/// Most rows: `2^MAX_FFM_BITS`.
pub const MAX_FFM_BITS: u32 = 30;
/// Above this size the rows of upcoming examples are prefetched (beyond a core's L2 cache, as
/// the weight table's `PREFETCH_TABLE_BYTES`).
const PREFETCH_TABLE_BYTES: usize = 2 << 20;

/// Which pairs of the factorized fields have a term.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FfmPairs {
    /// Every pair of fields, and the pairs of features within a field (fwumious_wabbit's).
    #[default]
    All,
    /// Only the pairs of fields within a cross the model computes (given interactions, or the
    /// crosses field screening finds, as they join): a factorization where screening found a
    /// pair worth crossing, and no cost or noise elsewhere.
    Crosses,
}

/// What a field-aware factorization is (stored with the model by name).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FfmOptions {
    /// Latent dimensions per feature and field.
    pub k: usize,
    /// The table has `2^bits` rows, one per feature (features whose slots hash to one row share
    /// it).
    pub bits: u32,
    /// The fields taking part ([`ExpandedFeatures`]' field ids), each once; features of other
    /// fields (the constant, crosses) are not factorized.
    pub fields: Vec<u32>,
    pub learning_rate: f64,
    pub power_t: f64,
    pub initial_accumulator: f64,
    /// Latent values start uniform in `±init_scale / sqrt(k)`.
    pub init_scale: f64,
    pub seed: u64,
    /// Which pairs of fields have a term (models before it have every pair).
    #[serde(default)]
    pub pairs: FfmPairs,
}

impl Default for FfmOptions {
    /// `k` 4, `bits` 18, no fields (the Python layer names them), fwumious_wabbit's AdaGrad
    /// rule with our rate 0.1.
    fn default() -> Self {
        FfmOptions::new(4, 18, Vec::new())
    }
}

impl FfmOptions {
    /// Options with fwumious_wabbit's defaults for the rule (rate 0.1 is ours: measured on
    /// eat-rate), `k` dimensions over `fields`. The rates are `f64` as the Python layer gives
    /// them (a loaded model reports the numbers it was given); the table computes in `f32`.
    pub fn new(k: usize, bits: u32, fields: Vec<u32>) -> Self {
        FfmOptions {
            k,
            bits,
            fields,
            learning_rate: 0.1,
            power_t: 0.5,
            initial_accumulator: 1.0,
            init_scale: 0.1,
            seed: 0,
            pairs: FfmPairs::All,
        }
    }

    /// Checks every option; errors say `ffm <option> must be <what it accepts>, got <value>`.
    pub fn validate(&self) -> PolyResult<()> {
        if !(1..=MAX_K).contains(&self.k) {
            return crate::invalid!("ffm k must be an integer in 1..={MAX_K}, got {}", self.k);
        }
        if !(1..=MAX_FFM_BITS).contains(&self.bits) {
            return crate::invalid!(
                "ffm bits must be an integer in 1..={MAX_FFM_BITS}, got {}",
                self.bits
            );
        }
        if self.fields.is_empty() || self.fields.len() > MAX_FIELDS {
            return crate::invalid!(
                "ffm needs between 1 and {MAX_FIELDS} fields; it has {}",
                self.fields.len()
            );
        }
        let mut sorted = self.fields.clone();
        sorted.sort_unstable();
        if let Some(pair) = sorted.windows(2).find(|pair| pair[0] == pair[1]) {
            return crate::invalid!("ffm field {} is listed twice", pair[0]);
        }
        let positive = |name: &str, value: f64| -> PolyResult<()> {
            if value.is_finite() && value > 0.0 {
                Ok(())
            } else {
                crate::invalid!("ffm {name} must be finite and > 0, got {value}")
            }
        };
        positive("learning_rate", self.learning_rate)?;
        positive("initial_accumulator", self.initial_accumulator)?;
        if !(self.power_t.is_finite() && (0.0..=1.0).contains(&self.power_t)) {
            return crate::invalid!("ffm power_t must be in [0, 1], got {}", self.power_t);
        }
        if !(self.init_scale.is_finite() && self.init_scale >= 0.0) {
            return crate::invalid!(
                "ffm init_scale must be finite and >= 0, got {}",
                self.init_scale
            );
        }
        Ok(())
    }

    /// Latent values per row: a vector per factorized field (every pair), or one (crossed
    /// pairs: a row per feature and partner field).
    fn latent_len(&self) -> usize {
        match self.pairs {
            FfmPairs::All => self.fields.len() * self.k,
            FfmPairs::Crosses => self.k,
        }
    }

    /// Floats per row: the latent values, then their AdaGrad sums.
    fn row_len(&self) -> usize {
        2 * self.latent_len()
    }

    /// The table's size in bytes.
    pub fn table_bytes(&self) -> u128 {
        (1u128 << self.bits) * self.row_len() as u128 * 4
    }
}

/// One factorized feature of an example: its row, field (position in the options' fields) and
/// value.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Entry {
    /// The feature's row (every pair), or its weight slot (crossed pairs: a row per partner,
    /// [`Ffm::row_of_pair`]).
    row: u32,
    field: u32,
    value: f32,
}

/// What scoring an example leaves for its update: its factorized features and the sums `S`.
#[derive(Clone, Debug, Default)]
pub struct FfmScratch {
    entries: Vec<Entry>,
    /// `S[f][z][j]` at `(f F + z) k + j`.
    sums: Vec<f32>,
    /// The update's step and squared derivative of each latent value of each factorized
    /// feature (`F k` a feature, in its row's order), all computed before any moves.
    steps: Vec<f32>,
    squares: Vec<f32>,
    /// The score's derivative in the latent values of the feature being stepped.
    derivative: Vec<f32>,
}

/// The latent table and its rule (see the module docs).
#[derive(Clone, Debug)]
pub struct Ffm {
    options: FfmOptions,
    /// Field id -> position in `options.fields` (`u32::MAX`: not taking part).
    position: Vec<u32>,
    table: Vec<f32>,
    /// The pairs with a term under [`FfmPairs::Crosses`] (None: every pair, [`FfmPairs::All`]).
    crossed: Option<CrossedPairs>,
}

impl Ffm {
    /// A fresh table (its values drawn from the seed), checked against the memory available.
    pub fn new(options: FfmOptions) -> PolyResult<Self> {
        options.validate()?;
        crate::memory::check_fits(
            options.table_bytes(),
            "the ffm table",
            "lower its bits, k or its fields",
        )?;
        let mut ffm = Ffm::with_table(options.clone(), Vec::new())?;
        let (fk, row_len) = (options.latent_len(), options.row_len());
        let scale = (options.init_scale / (options.k as f64).sqrt()) as f32;
        let mut table = vec![0.0f32; (1usize << options.bits) * row_len];
        crate::memory::advise_huge_pages(&mut table);
        for (r, row) in table.chunks_exact_mut(row_len).enumerate() {
            let (latent, sums) = row.split_at_mut(fk);
            for (j, v) in latent.iter_mut().enumerate() {
                *v = scale * uniform_sym(options.seed, (r * fk + j) as u64);
            }
            sums.fill(options.initial_accumulator as f32);
        }
        ffm.table = table;
        Ok(ffm)
    }

    /// A factorization over a given table (model loading): `table` must hold `2^bits` rows.
    pub fn with_table(options: FfmOptions, table: Vec<f32>) -> PolyResult<Self> {
        options.validate()?;
        let expected = (1usize << options.bits) * options.row_len();
        if !table.is_empty() && table.len() != expected {
            return crate::invalid!(
                "the ffm table holds {} values where its options make {expected}",
                table.len()
            );
        }
        let largest = options.fields.iter().copied().max().unwrap_or(0) as usize;
        let mut position = vec![u32::MAX; largest + 1];
        for (p, &field) in options.fields.iter().enumerate() {
            position[field as usize] = p as u32;
        }
        let crossed = (options.pairs == FfmPairs::Crosses).then(|| CrossedPairs {
            pairs: Vec::new(),
            links: vec![Vec::new(); options.fields.len()],
        });
        Ok(Ffm { options, position, table, crossed })
    }

    /// Under [`FfmPairs::Crosses`], gives a term to every pair of distinct factorized fields
    /// within one of `crosses` (each a list of field ids); pairs with a term keep it. Nothing
    /// under [`FfmPairs::All`].
    pub fn follow_crosses(&mut self, crosses: &[Vec<u32>]) {
        let Some(crossed) = self.crossed.as_mut() else { return };
        let position =
            |field: u32| self.position.get(field as usize).copied().filter(|&p| p != u32::MAX);
        for cross in crosses {
            for (i, &a) in cross.iter().enumerate() {
                for &b in &cross[i + 1..] {
                    let (Some(pa), Some(pb)) = (position(a), position(b)) else { continue };
                    let pair = (pa.min(pb), pa.max(pb));
                    if pa == pb || crossed.pairs.contains(&pair) {
                        continue;
                    }
                    let sum = 2 * crossed.pairs.len() as u32;
                    crossed.pairs.push(pair);
                    crossed.links[pair.0 as usize].push(Link { sum, other: pair.1 });
                    crossed.links[pair.1 as usize].push(Link { sum: sum + 1, other: pair.0 });
                }
            }
        }
    }

    /// The pairs of positions with a term (every pair `a <= b` under [`FfmPairs::All`]).
    pub fn pairs(&self) -> Vec<(usize, usize)> {
        match &self.crossed {
            Some(crossed) => crossed.pairs.iter().map(|&(a, b)| (a as usize, b as usize)).collect(),
            None => {
                let n = self.options.fields.len();
                (0..n).flat_map(|a| (a..n).map(move |b| (a, b))).collect()
            }
        }
    }

    pub fn options(&self) -> &FfmOptions {
        &self.options
    }

    pub fn table(&self) -> &[f32] {
        &self.table
    }

    /// The row of the feature in weight slot `slot`.
    #[inline]
    fn row_of(&self, slot: u32) -> u32 {
        // Fibonacci hashing: the slot's bits spread over the row's.
        ((u64::from(slot) ^ self.options.seed).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            >> (64 - self.options.bits)) as u32
    }

    /// The row of the vector `v(feature in weight slot slot, partner field other)` over crossed
    /// pairs: one row per (value, partner), so that a table of a few MiB serves any number of
    /// fields, only the crossed ones taking rows.
    #[inline]
    fn row_of_pair(&self, slot: u32, other: u32) -> u32 {
        let mixed = (u64::from(slot) ^ self.options.seed).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ (u64::from(other) + 1).wrapping_mul(0xD6E8_FEB8_6659_FD93);
        (mixed.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - self.options.bits)) as u32
    }

    /// Prefetches the rows of the features in weight slots `slots` (an upcoming example's), on a
    /// table larger than the caches: each row is read whole by the score and written by the
    /// step, and a row a feature drew at random is in no cache. Not over crossed pairs alone.
    pub fn prefetch(&self, slots: &[u32]) {
        if self.table.len() * 4 <= PREFETCH_TABLE_BYTES {
            return;
        }
        if self.crossed.is_some() {
            // A feature reads only its partners' vectors, where it has any, and a slot does not
            // say its field: prefetching whole rows cost 15% of apple's fit with them (click-like
            // data, 30 fields).
            return;
        }
        let row_len = self.options.row_len();
        for &slot in slots {
            let row = &self.table[self.row_of(slot) as usize * row_len..][..row_len];
            for line in row.chunks(16) {
                crate::memory::prefetch(line.as_ptr());
            }
        }
    }

    /// The factorized part of the score of `features` (whose fields must be tracked), leaving
    /// in `scratch` what [`Ffm::learn`] needs.
    pub fn score(&self, features: &ExpandedFeatures, scratch: &mut FfmScratch) -> f32 {
        self.collect_entries(features, scratch);
        if let Some(crossed) = &self.crossed {
            return self.score_crossed(crossed, scratch);
        }
        let (n_fields, k) = (self.options.fields.len(), self.options.k);
        let fk = n_fields * k;
        let row_len = self.options.row_len();
        scratch.sums.clear();
        scratch.sums.resize(n_fields * fk, 0.0);
        let mut within = 0.0f32;
        for e in &scratch.entries {
            let latent = &self.table[e.row as usize * row_len..][..fk];
            let sums = &mut scratch.sums[e.field as usize * fk..][..fk];
            for (s, v) in sums.iter_mut().zip(latent) {
                *s += e.value * v;
            }
            let own = &latent[e.field as usize * k..][..k];
            within -= e.value * e.value * dot(own, own);
        }
        let mut score = 0.5 * within;
        for a in 0..n_fields {
            let s_aa = &scratch.sums[(a * n_fields + a) * k..][..k];
            score += 0.5 * dot(s_aa, s_aa);
            for b in a + 1..n_fields {
                let s_ab = &scratch.sums[(a * n_fields + b) * k..][..k];
                let s_ba = &scratch.sums[(b * n_fields + a) * k..][..k];
                score += dot(s_ab, s_ba);
            }
        }
        score
    }

    /// The factorized features of `features` into `scratch.entries`: nonzero values of fields
    /// taking part (under [`FfmPairs::Crosses`], of fields in a pair with a term).
    fn collect_entries(&self, features: &ExpandedFeatures, scratch: &mut FfmScratch) {
        scratch.entries.clear();
        let (slots, values) = (features.slots(), features.values());
        for (field, range) in features.field_runs() {
            let Some(&p) = self.position.get(field as usize).filter(|&&p| p != u32::MAX) else {
                continue;
            };
            if self.crossed.as_ref().is_some_and(|c| c.links[p as usize].is_empty()) {
                continue;
            }
            for at in range {
                if values[at] != 0.0 {
                    let row =
                        if self.crossed.is_some() { slots[at] } else { self.row_of(slots[at]) };
                    scratch.entries.push(Entry { row, field: p, value: values[at] });
                }
            }
        }
    }

    /// Adds to `totals` (`F * F`, row-major) the magnitude of each pair of fields' term in the
    /// factorized score of `features`: `|<S_ab, S_ba>|` at `(a, b)`, `a < b`, and at `(a, a)`
    /// the term of the pairs within field `a`. What each pair of fields carries, for
    /// inspection; the terms sum to the score.
    pub fn add_pair_terms(
        &self,
        features: &ExpandedFeatures,
        scratch: &mut FfmScratch,
        totals: &mut [f64],
    ) {
        let (n_fields, k) = (self.options.fields.len(), self.options.k);
        self.score(features, scratch);
        if let Some(crossed) = &self.crossed {
            return crossed.add_pair_terms(scratch, k, n_fields, totals);
        }
        // A field's own pairs: none with one feature (the formula's rounding is not a term).
        let (mut within, mut count) = (vec![0.0f32; n_fields], vec![0usize; n_fields]);
        for e in &scratch.entries {
            let row = e.row as usize * self.options.row_len();
            let own = &self.table[row + e.field as usize * k..][..k];
            within[e.field as usize] += e.value * e.value * dot(own, own);
            count[e.field as usize] += 1;
        }
        let sums = |a: usize, b: usize| &scratch.sums[(a * n_fields + b) * k..][..k];
        for a in 0..n_fields {
            if count[a] >= 2 {
                let inside = 0.5 * (dot(sums(a, a), sums(a, a)) - within[a]);
                totals[a * n_fields + a] += f64::from(inside.abs());
            }
            for b in a + 1..n_fields {
                totals[a * n_fields + b] += f64::from(dot(sums(a, b), sums(b, a)).abs());
            }
        }
    }

    /// Takes the step of the example [`Ffm::score`] last scored into `scratch`, whose loss has
    /// derivative `gradient` in the score (importance weight included). `Err` with the first
    /// value that would not be finite, nothing moved.
    pub fn learn(&mut self, scratch: &mut FfmScratch, gradient: f32) -> Result<(), f32> {
        self.prepare_step(scratch, gradient)?;
        self.apply_step(scratch);
        Ok(())
    }

    /// The first half of [`Ffm::learn`]: computes the step of every latent value into
    /// `scratch` and checks it, moving nothing (so that a learner can check every part's step
    /// before any part moves). `Err` with the first value that would not be finite.
    pub fn prepare_step(&self, scratch: &mut FfmScratch, gradient: f32) -> Result<(), f32> {
        scratch.steps.clear();
        scratch.squares.clear();
        if gradient == 0.0 || scratch.entries.is_empty() {
            return Ok(());
        }
        if let Some(crossed) = &self.crossed {
            return self.prepare_crossed(crossed, scratch, gradient);
        }
        let (n_fields, k) = (self.options.fields.len(), self.options.k);
        let fk = n_fields * k;
        let row_len = self.options.row_len();
        let (rate, power_t) = (self.options.learning_rate as f32, self.options.power_t as f32);
        // Every derivative from the values before the update (rows shared by two features of
        // the example move twice, each time by its own derivative): all steps first, in runs
        // of k the compiler vectorizes, then the moves.
        let n = scratch.entries.len() * fk;
        let (steps, squares) = (&mut scratch.steps, &mut scratch.squares);
        steps.resize(n, 0.0);
        squares.resize(n, 0.0);
        let sqrt_rule = power_t == 0.5;
        // Whether a step or square is infinite or NaN, as an OR of integers (which vectorizes).
        let mut not_finite = 0u32;
        for (p, e) in scratch.entries.iter().enumerate() {
            let row = &self.table[e.row as usize * row_len..][..row_len];
            let (latent, sums) = row.split_at(fk);
            let f = e.field as usize;
            // The score's derivative in each of the feature's latent values, gathered into one
            // run: S[z][f] for each field z, less the feature's pair with itself.
            let derivative = &mut scratch.derivative;
            derivative.clear();
            for z in 0..n_fields {
                derivative.extend_from_slice(&scratch.sums[(z * n_fields + f) * k..][..k]);
            }
            for (d, v) in derivative[f * k..][..k].iter_mut().zip(&latent[f * k..][..k]) {
                *d -= e.value * v;
            }
            let xg = gradient * e.value;
            let (out, out_squares) = (&mut steps[p * fk..][..fk], &mut squares[p * fk..][..fk]);
            let terms = out.iter_mut().zip(out_squares.iter_mut()).zip(derivative.iter().zip(sums));
            // Plain loops over the run, which the compiler vectorizes.
            if sqrt_rule {
                for ((step, square), (&d, &sum)) in terms {
                    let g = xg * d;
                    *square = g * g;
                    *step = rate * g / (sum + g * g).sqrt();
                    not_finite |= u32::from(non_finite(*step) | non_finite(*square));
                }
            } else {
                for ((step, square), (&d, &sum)) in terms {
                    let g = xg * d;
                    *square = g * g;
                    *step = rate * g * (sum + g * g).powf(-power_t);
                    not_finite |= u32::from(non_finite(*step) | non_finite(*square));
                }
            }
        }
        if not_finite != 0 {
            let bad = steps.iter().chain(squares.iter()).find(|v| !v.is_finite());
            let bad = bad.copied().unwrap_or(f32::NAN);
            steps.clear();
            squares.clear();
            return Err(bad);
        }
        Ok(())
    }

    /// The second half of [`Ffm::learn`]: moves the latent values and their sums by the step
    /// [`Ffm::prepare_step`] computed into `scratch` (nothing if it computed none).
    pub fn apply_step(&mut self, scratch: &mut FfmScratch) {
        if scratch.steps.is_empty() {
            return;
        }
        if let Some(crossed) = self.crossed.take() {
            self.apply_crossed(&crossed, scratch);
            self.crossed = Some(crossed);
            return;
        }
        let fk = self.options.fields.len() * self.options.k;
        let row_len = self.options.row_len();
        let (steps, squares) = (&scratch.steps, &scratch.squares);
        for (p, e) in scratch.entries.iter().enumerate() {
            let row = &mut self.table[e.row as usize * row_len..][..row_len];
            let (latent, sums) = row.split_at_mut(fk);
            let (moves, squares) = (&steps[p * fk..][..fk], &squares[p * fk..][..fk]);
            for ((v, m), (g2_sum, g2)) in
                latent.iter_mut().zip(moves).zip(sums.iter_mut().zip(squares))
            {
                *v -= m;
                *g2_sum += g2;
            }
        }
        scratch.steps.clear();
        scratch.squares.clear();
    }

    /// Writes the table: `2^bits` rows of `F k` latent values then their `F k` AdaGrad sums,
    /// `f32` each (the options are the learner's).
    pub fn write(&self, w: &mut ByteWriter) {
        if w.counted_only(self.table.len() * 4) {
            return;
        }
        w.reserve(self.table.len() * 4);
        for &v in &self.table {
            w.f32(v);
        }
    }

    /// Reads a table written by [`Ffm::write`] for `options`: every latent value finite, every
    /// AdaGrad sum finite and positive (a file edited by hand must not train into NaN).
    pub fn read(r: &mut ByteReader<'_>, options: FfmOptions) -> PolyResult<Self> {
        options.validate().map_err(|e| bad(e.to_string()))?;
        let n = (1usize << options.bits) * options.row_len();
        let bytes =
            r.take(n.checked_mul(4).ok_or_else(|| bad("ffm table too large"))?, "ffm table")?;
        let table: Vec<f32> =
            bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
        let fk = options.latent_len();
        for (r, row) in table.chunks_exact(options.row_len()).enumerate() {
            let (latent, sums) = row.split_at(fk);
            if let Some(v) = latent.iter().find(|v| !v.is_finite()) {
                return Err(bad(format!("ffm row {r} holds the latent value {v}")));
            }
            if let Some(g) = sums.iter().find(|g| !(g.is_finite() && **g > 0.0)) {
                return Err(bad(format!("ffm row {r} holds the AdaGrad sum {g}")));
            }
        }
        Ffm::with_table(options, table).map_err(|e| bad(e.to_string()))
    }

    /// The average of `parts` (factorizations of one model's options trained on separate shards
    /// from one start, the all-reduce step of distributed training), part `p` weighted by
    /// `shares[p]` (summing to 1): the latent values and the AdaGrad sums alike.
    pub fn averaged(parts: &[&Ffm], shares: &[f64]) -> PolyResult<Ffm> {
        let Some(first) = parts.first() else {
            return crate::invalid!("no factorizations to average");
        };
        if parts.len() != shares.len() || parts.iter().any(|p| p.options != first.options) {
            return crate::invalid!("the factorizations to average differ in their options");
        }
        let mut table = vec![0.0f64; first.table.len()];
        for (part, &share) in parts.iter().zip(shares) {
            for (sum, &v) in table.iter_mut().zip(&part.table) {
                *sum += share * f64::from(v);
            }
        }
        let table = table.into_iter().map(|v| v as f32).collect();
        Ffm::with_table(first.options.clone(), table)
    }

    /// The latent vector `v(feature in slot, field z)` (`z` a position in the options' fields).
    pub fn latent(&self, slot: u32, z: usize) -> &[f32] {
        let k = self.options.k;
        if self.crossed.is_some() {
            return &self.table[self.row_of_pair(slot, z as u32) as usize * 2 * k..][..k];
        }
        let base = self.row_of(slot) as usize * self.options.row_len();
        &self.table[base + z * k..][..k]
    }
}

#[inline]
fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Whether `v` is infinite or NaN, from its exponent bits (a test the compiler vectorizes).
#[inline]
fn non_finite(v: f32) -> bool {
    const EXPONENT: u32 = 0x7f80_0000;
    v.to_bits() & EXPONENT == EXPONENT
}

/// A uniform draw in [-1, 1) from `(seed, index)` (splitmix64).
fn uniform_sym(seed: u64, index: u64) -> f32 {
    let mut z = seed.wrapping_add(index.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    ((z >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
}

mod crossed;
#[cfg(test)]
mod tests;
