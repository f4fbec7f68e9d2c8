//! The second judge of candidate crosses: a cell per value pair, for crosses of full rank.
//!
//! The shared factorization ([`super::screen`]) sees crosses of low rank (a kind of animal with a
//! kind of food) from few rows, but not a cross whose every value pair has its own effect (an
//! ad's placement with a site, in click data), which no few numbers per value describe. So every
//! candidate cross (a, b) also keeps, for each value pair (i, j) of its fields, a hashed cell of
//! `S = sum w x r` (x = x_i x_j, r the residual), `Q = sum w x^2` and the samples `n = sum w`,
//! and predicts the residual by the pair's least-squares slope, shrunk by its samples,
//!
//! `p_ab = x S / Q · n / (n + PRIOR)`,
//!
//! a pair seen a few times predicting almost nothing. An example holding several value pairs of
//! the cross (a field crossed with a numeric namespace or a token list) is predicted by the mean
//! of its pairs' predictions: each cell fits the whole residual on its own, and their sum counted
//! it once per pair, so that a split of a joined pair by 13 noise counts, less shrunk than its
//! baseline by 13 times, out-gained it and joined (`A*B*features` in 18 eat-rate fits of 18).
//! On one-hot fields (x = 1, Q = n) the prediction is the shrunk mean `S / (n + PRIOR)`; unlike
//! that mean, it does not depend on the scale of a numeric field's values (a count of hundreds
//! made PRIOR vanish, one of 0.01 made it all: a field x count cross was found only with the
//! counts divided by 100, notes/issue58_plan.md). Before each update the cross records its
//! progressive gain `w (g² - (g - p_ab)²)`: a cross whose frequent value pairs carry residual
//! gains; one that does not only adds the noise of its means and loses. Each cross is judged
//! alone (not jointly, as in the factorization): a mean of one cell needs no others. Its
//! samples do not fade (the cells learn slowly, and their statistics need every sample).
//!
//! A cell keeps the key of the value pair it holds. A pair whose cell holds another pair's sum
//! predicts nothing and takes the cell over (the latest pair wins): its gain is then 0, not the
//! noise of an unrelated mean. Without the key, that noise outweighed the signal early on: a
//! cross's gain comes only from pairs seen again, which at first are few (eat-rate's million
//! animal-food pairs: about 1% of 20k screened rows), while one value pair in seven or so
//! landed on a cell another pair had filled. The right cross then scored about zero at its
//! first few thousand samples, and half the time lost its place in the race there
//! (notes/benchmarks_log.md "Keyed cells").
//!
//! Measured on click (notes/benchmarks_log.md "Field crosses"): with `PRIOR` 5 only the two planted
//! crosses with the fewest value pairs gain; at 200 all four do and every noise cross loses.

use super::operands::Operands;
use super::screen::{Candidate, Role};
use super::Judge;
use crate::memory::prefetch;

/// The count a value pair's mean is shrunk by: a pair seen `PRIOR` times predicts half its mean.
const PRIOR: f32 = 200.0;

/// The probes' part of the cells (see [`PairCells`]): 2^19 cells, 8 MiB.
const PROBE_CELL_BITS: u32 = 19;

/// Value pairs a cross may have in one example for the example to be screened by its cells:
/// beyond it (two text columns, say) the pair is skipped, and left to the factorization.
pub const MAX_PAIRS_PER_EXAMPLE: usize = 16;

/// The hashed cells of every candidate cross (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct PairCells {
    /// `2^bits` cells for the crosses racing, then `2^PROBE_CELL_BITS` for the probes of
    /// triples and their baselines ([`super::probes`]): apart, so that the probes' value
    /// triples, which come back often, do not take cells over from the pairs' (sharing one table,
    /// they held about a sixth of it, and on click the pairs' race stalled after one or two
    /// crosses in two seeds of three).
    cells: Vec<Cell>,
    shift: u32,
    /// Per example: each baseline's joined field and its prediction, if it predicts better
    /// than nothing so far, else 0 (see [`Judge::judge`]).
    baselines: Vec<(usize, f32)>,
}

/// One value pair's sums (16 bytes, aligned: one cache line never splits a cell).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C, align(16))]
struct Cell {
    /// `sum w x r`.
    sum: f32,
    /// `sum w x^2`.
    squares: f32,
    /// `sum w`.
    samples: f32,
    /// The low 32 bits of the pair's key ([`key`]; its top bits are the cell); 0 while empty (a
    /// pair tagged 0 finds the empty cell its own). Two pairs on one cell share a tag once in
    /// 2^32.
    tag: u32,
}

impl Cell {
    /// The residual the cell's pair predicts at `x` (see the module docs).
    #[inline]
    fn predict(&self, x: f32) -> f32 {
        if self.squares > 0.0 {
            x * self.sum * self.samples / (self.squares * (self.samples + PRIOR))
        } else {
            0.0
        }
    }
}

/// The tag of a pair's key in its cell.
#[inline]
fn tag(key: u64) -> u32 {
    key as u32
}

/// The cells of an example's value pairs, located (and fetched ahead) before the example is
/// judged ([`Judge::locate`], [`Judge::judge`]): each pair's key (its cell is the key's top
/// bits) and product `x_i x_j`, and each candidate's span of them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LocatedCells {
    /// Each value pair's key, cell and product `x_i x_j`.
    slots: Vec<(u64, usize, f32)>,
    spans: Vec<(usize, usize)>,
}

impl LocatedCells {
    /// Cells located.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }
}

/// Whether `candidate` is screened on an example whose further field holds `values` values: a
/// cross of two fields always; one that crosses a joined cross or a probed pair further (a
/// split, a probe) only by a field of one value, a category. Split by a numeric namespace or a
/// token list, the value triples are several an example and each rarely seen (eat-rate's `A*B`
/// by 13 noise counts: 13 weights per animal-food pair), and their cells learn the linear
/// model's lag on those numbers rather than a cross: `A*B*features` joined in 18 fits of 18,
/// test logloss 0.386 against the cross alone's 0.328.
#[inline]
fn splits_by_one_value(candidate: &Candidate, values: usize) -> bool {
    candidate.role == Role::Cross || candidate.role == Role::Baseline || values == 1
}

/// The key of value pair (`hash_a`, `hash_b`) of the cross of fields `pair`; its top bits
/// are its cell.
#[inline]
fn key(hash_a: u64, hash_b: u64, pair: (usize, usize)) -> u64 {
    let salt = ((pair.0 as u64) << 32 | pair.1 as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mixed = hash_a.wrapping_mul(0xC2B2_AE3D_27D4_EB4F) ^ hash_b.rotate_left(29) ^ salt;
    mixed.wrapping_mul(0xD6E8_FEB8_6659_FD93)
}

impl PairCells {
    /// The cell of a pair's key.
    #[inline]
    fn slot(&self, key: u64) -> usize {
        (key >> self.shift) as usize
    }

    /// The cell of a key of a probe or its baseline (in the probes' part of the table).
    #[inline]
    fn probe_slot(&self, key: u64) -> usize {
        (1usize << (64 - self.shift)) + (key >> (64 - PROBE_CELL_BITS)) as usize
    }

    /// `2^bits` cells (16 bytes each), all empty.
    pub fn new(bits: u32) -> Self {
        let mut cells = vec![Cell::default(); (1 << bits) + (1 << PROBE_CELL_BITS)];
        // Random reads: on normal pages nearly each would miss the TLB too.
        crate::memory::advise_huge_pages(&mut cells);
        PairCells { cells, shift: 64 - bits, baselines: Vec::new() }
    }
}

impl Judge for PairCells {
    type Located = LocatedCells;

    /// Locates the cells of every candidate's value pairs in `operands` into `out`, asking for
    /// each ahead of its use: they are random reads in a large table.
    fn locate(&self, operands: &Operands<'_>, candidates: &[Candidate], out: &mut LocatedCells) {
        out.slots.clear();
        out.spans.clear();
        for candidate in candidates {
            let (a, b) = candidate.pair;
            let (field_a, field_b) = (operands.get(a), operands.get(b));
            let start = out.slots.len();
            let n_pairs = field_a.hashes.len() * field_b.hashes.len();
            if n_pairs > 0
                && n_pairs <= MAX_PAIRS_PER_EXAMPLE
                && splits_by_one_value(candidate, field_b.hashes.len())
            {
                for (&ha, &xa) in field_a.hashes.iter().zip(field_a.values) {
                    for (&hb, &xb) in field_b.hashes.iter().zip(field_b.values) {
                        let key = key(ha, hb, candidate.pair);
                        let cell =
                            if candidate.probed { self.probe_slot(key) } else { self.slot(key) };
                        prefetch(self.cells.as_ptr().wrapping_add(cell));
                        out.slots.push((key, cell, xa * xb));
                    }
                }
            }
            out.spans.push((start, out.slots.len()));
        }
    }

    /// Records every candidate's progressive gain on the example `located` (for the same
    /// `candidates`) for residual `residual`, then adds the residual to its cells.
    ///
    /// A cross of a joined field with a further field is judged against the better of its
    /// joined field's baseline (the baselines come first in `candidates`) and predicting
    /// nothing, as the baseline's gain so far says: its cells split the baseline's by the
    /// further field's values, and gain only if the split predicts better than both. Judged
    /// against nothing alone, a split by a noise field gained what the cross's own weights had
    /// not learned yet; against the baseline alone, once the cross had learned that, it gained
    /// by predicting less noise than the baseline (its cells hold fewer samples, so they are
    /// shrunk more).
    fn judge(
        &mut self,
        located: &LocatedCells,
        candidates: &mut [Candidate],
        residual: f32,
        weight: f32,
    ) {
        let w = f64::from(weight);
        self.baselines.clear();
        for (candidate, &(start, end)) in candidates.iter_mut().zip(&located.spans) {
            if start == end {
                continue;
            }
            let parent = self.baselines.iter().find(|(joined, _)| *joined == candidate.pair.0);
            let before = f64::from(residual - parent.map_or(0.0, |&(_, p)| p));
            let slots = &located.slots[start..end];
            // Each pair's cell predicts the whole residual: an example of several pairs (a
            // numeric namespace, a token list) takes their mean, not their sum, which counted
            // the residual once per pair (see the module docs).
            let prediction = slots
                .iter()
                .map(|&(key, cell, x)| {
                    let cell = &self.cells[cell];
                    if cell.tag == tag(key) {
                        cell.predict(x)
                    } else {
                        0.0
                    }
                })
                .sum::<f32>()
                / slots.len() as f32;
            let error = f64::from(residual - prediction);
            if !error.is_finite() {
                continue;
            }
            if candidate.is_baseline() {
                let useful = candidate.cells.gain > 0.0;
                self.baselines.push((candidate.pair.0, if useful { prediction } else { 0.0 }));
            }
            candidate.cells.record(w * (before * before - error * error), 1.0);
            for &(key, cell, x) in slots {
                let cell = &mut self.cells[cell];
                if cell.tag != tag(key) {
                    *cell = Cell { tag: tag(key), ..Cell::default() };
                }
                cell.sum += weight * x * residual;
                cell.squares += weight * x * x;
                cell.samples += weight;
            }
        }
    }

    /// Empties every cell and forgets every candidate's cell statistics (after a cross joins,
    /// the residual is another one).
    fn reset(&mut self, candidates: &mut [Candidate]) {
        self.cells.iter_mut().for_each(|c| *c = Cell::default());
        candidates.iter_mut().for_each(|c| c.cells.reset());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field_apple::judges::screen_with;
    use crate::learner::example::ExampleBuffer;

    /// Screens the crosses of three one-hot fields of 31 values on `n` rows whose residual is
    /// ±0.5 per value pair of fields 0 and 1 by a Hadamard matrix (a cross of full rank, no
    /// field mattering alone: its rows and columns nearly sum to zero), plus noise. Returns the
    /// cell z-scores of (0, 1), (0, 2), (1, 2).
    fn screen_full_rank(n: usize) -> Vec<f64> {
        let mut cells = PairCells::new(16);
        let mut candidates: Vec<Candidate> =
            [(0, 1), (0, 2), (1, 2)].into_iter().map(Candidate::new).collect();
        let mut buffer = ExampleBuffer::new();
        // SplitMix64: successive draws independent (a plain LCG's are not, and the noise
        // field would then carry a little of the others).
        let mut state = 99u64;
        let mut next = || {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        for _ in 0..n {
            let ids: [u32; 3] = std::array::from_fn(|_| 1 + (next() % 31) as u32);
            let effect = if (ids[0] & ids[1]).count_ones() % 2 == 0 { 0.5 } else { -0.5 };
            let noise = (next() >> 11) as f32 / (1u64 << 53) as f32 - 0.5;
            buffer.clear();
            for id in ids {
                buffer.push_namespace(0, &[id], &[1.0f32], 0).unwrap();
            }
            let example = buffer.finish(0.0, 1.0, 0).unwrap();
            assert_eq!(
                screen_with(&mut cells, &example, &mut candidates, effect + noise, 1.0).len(),
                3
            );
        }
        candidates.iter().map(|c| c.cells.z_score()).collect()
    }

    #[test]
    fn the_cross_whose_value_pairs_carry_the_residual_gains_and_the_others_lose() {
        let z = screen_full_rank(60_000);
        assert!(z[0] > 20.0, "{z:?}");
        assert!(z[1] < 0.0 && z[2] < 0.0, "{z:?}");
    }

    #[test]
    fn the_gains_do_not_depend_on_the_scale_of_a_fields_values() {
        // Field 1's values scaled by 1, 100 and 0.01: each pair's slope scales inversely, its
        // prediction and so the cross's gains stay the same.
        let gains: Vec<f64> = [1.0f32, 100.0, 0.01]
            .into_iter()
            .map(|scale| {
                let mut cells = PairCells::new(12);
                let mut candidates = vec![Candidate::new((0, 1))];
                let mut buffer = ExampleBuffer::new();
                for n in 0..3_000u32 {
                    let (a, b) = (n % 7, n % 5);
                    let value = scale * (1.0 + (n % 3) as f32);
                    let residual = if (a + b) % 2 == 0 { 0.3 } else { -0.2 } * value / scale;
                    buffer.clear();
                    buffer.push_namespace(0, &[a], &[1.0f32], 0).unwrap();
                    buffer.push_namespace(0, &[b], &[value], 0).unwrap();
                    let example = buffer.finish(0.0, 1.0, 0).unwrap();
                    screen_with(&mut cells, &example, &mut candidates, residual, 1.0);
                }
                candidates[0].cells.gain
            })
            .collect();
        assert!(gains[0] > 0.0, "{gains:?}");
        for gain in &gains[1..] {
            assert!((gain - gains[0]).abs() < 1e-4 * gains[0], "{gains:?}");
        }
    }

    #[test]
    fn a_field_split_by_several_noise_values_gains_no_more_than_the_field_alone() {
        // The residual is a mean per value of field 0. Crossed with a constant (one pair an
        // example), its cells learn those means; crossed with 8 noise counts (8 pairs), each
        // cell learns them too: summed, the 8 predicted 8 times the shrunk mean and gained far
        // more than the field alone (a noise split joining); averaged, they gain no more.
        let mut cells = PairCells::new(16);
        let mut candidates = vec![Candidate::new((0, 1)), Candidate::new((0, 2))];
        let mut buffer = ExampleBuffer::new();
        let mut state = 7u64;
        let mut next = || {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let z = (state ^ (state >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB)
        };
        let counts: Vec<u32> = (0..8).collect();
        for _ in 0..4_000 {
            let value = (next() % 50) as u32;
            let effect = if value % 2 == 0 { 0.5 } else { -0.5 };
            let noise = (next() >> 11) as f32 / (1u64 << 53) as f32 - 0.5;
            let levels: Vec<f32> = counts.iter().map(|_| 1.0 + (next() % 4) as f32).collect();
            buffer.clear();
            buffer.push_namespace(0, &[value], &[1.0f32], 0).unwrap();
            buffer.push_namespace(0, &[0], &[1.0f32], 0).unwrap();
            buffer.push_namespace(0, &counts, &levels, 0).unwrap();
            let example = buffer.finish(0.0, 1.0, 0).unwrap();
            screen_with(&mut cells, &example, &mut candidates, effect + noise, 1.0);
        }
        let (alone, split) = (candidates[0].cells.gain, candidates[1].cells.gain);
        assert!(alone > 0.0, "{alone} {split}");
        assert!(split < 1.1 * alone, "the split gained {split}, the field alone {alone}");
    }

    #[test]
    fn a_pair_seen_rarely_predicts_little() {
        // One cell, seen once with residual 1: its shrunk mean is 1 / (1 + PRIOR).
        let mut cells = PairCells::new(10);
        let mut candidates = vec![Candidate::new((0, 1))];
        let mut buffer = ExampleBuffer::new();
        for _ in 0..2 {
            buffer.clear();
            buffer.push_namespace(0, &[3], &[1.0f32], 0).unwrap();
            buffer.push_namespace(0, &[4], &[1.0f32], 0).unwrap();
            let example = buffer.finish(0.0, 1.0, 0).unwrap();
            screen_with(&mut cells, &example, &mut candidates, 1.0, 1.0);
        }
        // Second gain: 1 - (1 - 1/(1 + PRIOR))^2.
        let p = f64::from(1.0 / (1.0 + PRIOR));
        assert!((candidates[0].cells.gain - (1.0 - (1.0 - p).powi(2))).abs() < 1e-6);
        cells.reset(&mut candidates);
        assert_eq!(candidates[0].cells.count, 0);
        assert!(cells.cells.iter().all(|c| *c == Cell::default()));
    }

    #[test]
    fn a_pair_on_another_pairs_cell_predicts_nothing_and_takes_it_over() {
        let mut cells = PairCells::new(1); // two cells
        let mut candidates = vec![Candidate::new((0, 1))];
        let mut buffer = ExampleBuffer::new();
        // Screens the pair (3, b) with residual 1; its gain, cell and key.
        let mut screen = |cells: &mut PairCells, b: u32, candidates: &mut Vec<Candidate>| {
            buffer.clear();
            buffer.push_namespace(0, &[3u32], &[1.0f32], 0).unwrap();
            buffer.push_namespace(0, &[b], &[1.0f32], 0).unwrap();
            let example = buffer.finish(0.0, 1.0, 0).unwrap();
            let gain_before = candidates[0].cells.gain;
            let located = screen_with(cells, &example, candidates, 1.0, 1.0);
            let (key, _, _) = located.slots[0];
            (candidates[0].cells.gain - gain_before, cells.slot(key), key)
        };
        let (gain, slot, first) = screen(&mut cells, 4, &mut candidates);
        assert_eq!(gain, 0.0);
        assert!(screen(&mut cells, 4, &mut candidates).0 > 0.0);
        // Another pair whose cell is the same: it finds the cell taken, predicts nothing and
        // gains nothing (an unrelated mean would have added its noise), and holds the cell after.
        let mut scratch = PairCells::new(1);
        let mut spare = vec![Candidate::new((0, 1))];
        let other = (5..)
            .find(|&b| {
                let (_, s, k) = screen(&mut scratch, b, &mut spare);
                s == slot && k != first
            })
            .unwrap();
        let (gain, _, key) = screen(&mut cells, other, &mut candidates);
        assert_eq!(gain, 0.0);
        assert_eq!(cells.cells[slot], Cell { sum: 1.0, squares: 1.0, samples: 1.0, tag: tag(key) });
        assert_eq!(screen(&mut cells, 4, &mut candidates).0, 0.0);
    }

    #[test]
    fn crosses_with_too_many_value_pairs_are_left_to_the_factorization() {
        let mut cells = PairCells::new(10);
        let mut candidates = vec![Candidate::new((0, 1))];
        let mut buffer = ExampleBuffer::new();
        let many: Vec<u32> = (0..5).collect();
        let ones = vec![1.0f32; 5];
        buffer.push_namespace(0, &many, &ones, 0).unwrap();
        buffer.push_namespace(0, &many, &ones, 0).unwrap();
        assert_eq!(
            screen_with(
                &mut cells,
                &buffer.finish(0.0, 1.0, 0).unwrap(),
                &mut candidates,
                1.0,
                1.0
            )
            .len(),
            0
        );
        assert_eq!(candidates[0].cells.count, 0);
    }
}
