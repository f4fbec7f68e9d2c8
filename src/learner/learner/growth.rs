//! A weight table that grows as it fills ([`LearnerConfig::max_bits`]).
//!
//! Hashing n features into m slots makes about `1 - e^(-n/m)` of them share a slot with
//! another, and shared weights blur what the features say: on eat-rate (a million value pairs
//! of two fields) a fixed `bits=18` reached test logloss 0.65 where `bits=24` reached 0.17.
//! Nobody knows n before the data is read (apple's crosses make most of it), so a growing table
//! starts at `2^bits` slots and, between blocks of rows, doubles itself as often as the features
//! seen need ([`Learner::grow_if_crowded`]), up to `2^max_bits`.
//!
//! Growing hands each slot's state to the slot its last feature has in the larger table
//! ([`WeightTable::replicated`]; the update notes the feature in the slot's rate,
//! [`super::super::update::note_owners`]): that feature predicts and learns on as before, and the
//! features that shared the slot, or come later, start afresh in slots of their own rather than
//! from another feature's weight and AdaGrad sum (copied to every replica, those cost eat-rate
//! 0.07 logloss). The share of slots touched since the growth, or holding a state carried over
//! it, counts the features in the larger table ([`Learner::crowding`]). A slot whose feature is
//! not known (untouched since the model was loaded; plain SGD, which keeps no rate) is copied to
//! every slot it could go to; without a rate the share of the slots free at the growth that are
//! in use now stands in for the count.

use super::*;

/// Rows learned between two looks at the table, at most (a look samples [`LOOK_SAMPLES`]
/// slots: well under a millisecond against tens of milliseconds of learning). Early in a run
/// the looks come at doublings of the examples learned, from [`FIRST_LOOK_ROWS`] on: features
/// learned on a crowded table start from shared weights and shared AdaGrad sums, so the
/// sooner it grows the better.
pub(super) const GROWTH_LOOK_ROWS: usize = 65_536;
const FIRST_LOOK_ROWS: usize = 4_096;

/// Slots sampled by a look (the crowding's standard error is under 0.4%).
const LOOK_SAMPLES: usize = 16_384;

/// The table grows once more than this share of the features seen since the last growth share
/// a slot; to the size at which the features seen so far, twice over, would share at most
/// [`ROOMY`] (the data goes on bringing new ones).
const CROWDED: f64 = 0.05;
const ROOMY: f64 = 0.02;

/// What [`Learner::grow_if_crowded`] keeps between looks.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Growth {
    /// The share of slots in use right after the last growth (its replicas'); 0 before any
    /// (a table grows only once it holds features).
    pub(crate) load_at_growth: f64,
}

impl Growth {
    fn grown(&self) -> bool {
        self.load_at_growth > 0.0
    }

    /// Without a rate: the share of features touched since the last growth whose slot another
    /// feature holds, from the share of slots in use now (`load`): `(load - l0) / (1 - l0)` of
    /// the slots free at the growth (`l0` in use) are in use now. A table full at its growth
    /// reads as crowded (it can tell nothing).
    fn crowding_without_rate(&self, load: f64) -> f64 {
        let free = 1.0 - self.load_at_growth;
        if free <= 0.0 {
            return 1.0;
        }
        ((load - self.load_at_growth) / free).clamp(0.0, 1.0)
    }
}

/// The fewest bits in `bits..=max_bits` for which `features` share slots at most `share` of the
/// time (`n / 2^b <= -ln(1 - share)`).
fn bits_holding(features: f64, share: f64, bits: u32, max_bits: u32) -> u32 {
    let wanted = (features / -(-share).ln_1p()).log2().ceil();
    if wanted.is_finite() {
        (wanted as u32).clamp(bits, max_bits)
    } else {
        bits
    }
}

impl<E: Expansion> Learner<E> {
    /// Rows to learn before the next look at the table (see [`GROWTH_LOOK_ROWS`]).
    pub(super) fn rows_to_next_look(&self) -> usize {
        let learned = usize::try_from(self.progress.examples).unwrap_or(usize::MAX);
        learned.clamp(FIRST_LOOK_ROWS, GROWTH_LOOK_ROWS)
    }

    /// What the learner's expansion buffers are for: this table, noting owners while it may
    /// still grow (and keeps rates to hold them in).
    pub(super) fn table_slots(&self) -> TableSlots {
        TableSlots { bits: self.config.bits, owners: self.grows() && self.weights.stride() == 4 }
    }

    /// Whether the table may still grow.
    pub(super) fn grows(&self) -> bool {
        self.config.max_bits.is_some_and(|max| max > self.config.bits)
    }

    /// The share of the features seen since the last growth (all, for a table that never grew)
    /// whose slot another feature shares: what a hashed model loses to collisions.
    pub fn crowding(&self) -> f64 {
        let load = || self.weights.load(LOOK_SAMPLES);
        if !self.growth.grown() {
            return load();
        }
        self.weights
            .touched_share(LOOK_SAMPLES)
            .unwrap_or_else(|| self.growth.crowding_without_rate(load()))
    }

    /// Grows the table when more than [`CROWDED`] of the features seen since the last growth
    /// share a slot (see the module docs); returns whether it grew. Call between blocks: the
    /// staged examples' slots are for the table they were expanded for.
    pub(super) fn grow_if_crowded(&mut self) -> PolyResult<bool> {
        let Some(max_bits) = self.config.max_bits.filter(|&max| max > self.config.bits) else {
            return Ok(false);
        };
        // A tail average's window that has begun sums per slot of this table: the table
        // stays as it is to the end of the fit.
        if self.average.as_ref().is_some_and(TailAverage::has_begun) {
            return Ok(false);
        }
        if !self.weights.is_allocated() {
            return Ok(false);
        }
        let crowding = self.crowding();
        if crowding <= CROWDED {
            return Ok(false);
        }
        let bits = self.config.bits;
        // A full table says only that it holds at least `m ln m` features (the inverse at its
        // last free slot).
        let slots = (1u64 << bits) as f64;
        let features = -slots * (-crowding.min(1.0 - 1.0 / slots)).ln_1p();
        let grown = bits_holding(2.0 * features, ROOMY, bits + 1, max_bits);
        if let Some(average) = &self.average {
            self.average = Some(average.for_table(1 << grown)?);
        }
        let load = self.weights.load(LOOK_SAMPLES);
        self.grow_to(grown, load)?;
        Ok(true)
    }

    /// Grows the table to `2^bits` slots (see the module docs); `load` is the share of slots in
    /// use now, kept for the count without a rate.
    pub(crate) fn grow_to(&mut self, bits: u32, load: f64) -> PolyResult<()> {
        self.weights = self.weights.replicated(bits)?;
        self.config.bits = bits;
        self.scratch = Scratch::new(self.table_slots());
        self.growth = Growth { load_at_growth: load };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{ByteReader, ByteWriter};
    use crate::learner::tests::{config, rows_of, stream};
    use crate::learner::{NamespaceRows, UpdateRule};
    use crate::sparse::SparseRows;
    use crate::versions;

    type Data = Vec<(Vec<u32>, Vec<f64>, f64, f64)>;

    /// Rows of up to 6 of 40 features, quadratic: about 800 features.
    fn learner(bits: u32, max_bits: Option<u32>) -> Learner {
        let config = LearnerConfig {
            bits,
            max_bits,
            ..config(Loss::Squared(Squared), UpdateRule::VW_DEFAULT)
        };
        Learner::new(config, Interactions::quadratic()).unwrap()
    }

    fn run<T>(data: &Data, f: impl FnOnce(&Batch<'_>) -> T) -> T {
        let (offsets, indices, values, labels) = rows_of(data);
        let rows = SparseRows::new(&offsets, &indices, &values).unwrap();
        let ns: [&dyn NamespaceRows; 1] = [&rows];
        f(&Batch::new(&ns, &labels, None).unwrap())
    }

    fn predictions(learner: &Learner, data: &Data) -> Vec<f64> {
        let mut out = Vec::new();
        run(data, |batch| learner.predict_batch(batch, &mut out)).unwrap();
        out
    }

    fn loss_on(learner: &mut Learner, data: &Data) -> f64 {
        let (loss, weight) = run(data, |batch| learner.learn_batch(batch)).unwrap();
        loss / weight
    }

    #[test]
    fn a_grown_table_predicts_as_before_and_then_learns_better() {
        let data = stream(6_000, 11, false);
        let mut fixed = learner(7, None);
        loss_on(&mut fixed, &data[..2_000].to_vec());
        let mut grown = fixed.clone();
        let load = grown.weights().load(1 << 7);
        grown.grow_to(12, load).unwrap();
        assert_eq!(grown.config().bits, 12);
        assert_eq!(predictions(&grown, &data), predictions(&fixed, &data));
        assert!(fixed.crowding() > 0.9, "{}", fixed.crowding());
        assert_eq!(grown.crowding(), 0.0, "nothing touched since the growth");
        let rest = data[2_000..].to_vec();
        let (on_grown, on_fixed) = (loss_on(&mut grown, &rest), loss_on(&mut fixed, &rest));
        assert!(on_grown < 0.85 * on_fixed, "{on_grown} against {on_fixed}");
        // The ~861 features touched since, in 2^12 slots: 1 - e^(-861/4096) = 19%.
        assert!((grown.crowding() - 0.19).abs() < 0.04, "{}", grown.crowding());
    }

    #[test]
    fn a_growing_table_hands_each_slot_to_its_last_feature_alone() {
        let data = stream(2_000, 16, false);
        let mut growing = learner(8, Some(12));
        loss_on(&mut growing, &data);
        assert_eq!(growing.config().bits, 8, "no look before 4,096 rows");
        let in_use =
            |l: &Learner| l.weights().data().chunks_exact(4).filter(|s| s[W] != 0.0).count();
        let before = in_use(&growing);
        growing.grow_to(12, growing.weights().load(1 << 8)).unwrap();
        // No copies: a feature that comes later starts afresh, not from another's state.
        assert_eq!(in_use(&growing), before);
        assert!(growing.weights().touched_share(1 << 12).unwrap() > 0.0);
        // A fixed table's slots have no known owner: grown, it copies every slot everywhere.
        let mut fixed = learner(8, None);
        loss_on(&mut fixed, &data);
        let before = in_use(&fixed);
        fixed.grow_to(12, fixed.weights().load(1 << 8)).unwrap();
        assert_eq!(in_use(&fixed), 16 * before);
    }

    #[test]
    fn without_collisions_a_grown_table_learns_as_one_of_its_size_from_the_start() {
        let data = stream(3_000, 15, true);
        let linear = |bits| {
            let config = LearnerConfig {
                bits,
                ..config(
                    Loss::Logistic(super::super::super::loss::Logistic),
                    UpdateRule::VW_DEFAULT,
                )
            };
            Learner::new(config, Interactions::linear()).unwrap()
        };
        let mut large = linear(20);
        let mut grown = linear(16);
        loss_on(&mut large, &data[..1_000].to_vec());
        loss_on(&mut grown, &data[..1_000].to_vec());
        grown.grow_to(20, 0.5).unwrap();
        loss_on(&mut large, &data[1_000..].to_vec());
        loss_on(&mut grown, &data[1_000..].to_vec());
        assert_eq!(predictions(&grown, &data), predictions(&large, &data));
    }

    #[test]
    fn a_growing_table_grows_with_the_features_and_stops_at_max_bits() {
        let data = stream(4 * GROWTH_LOOK_ROWS, 12, false);
        let mut growing = learner(6, Some(14));
        let mut capped = learner(6, Some(8));
        loss_on(&mut growing, &data);
        loss_on(&mut capped, &data);
        // ~800 features at 2% want 2^16: capped at 14.
        assert_eq!(growing.config().bits, 14);
        assert_eq!(capped.config().bits, 8);
        // 861 features in 2^14 slots share at about 1 - e^(-861/16384) = 5.1%; in 2^8, 97%.
        assert!((growing.crowding() - 0.051).abs() < 0.015, "{}", growing.crowding());
        assert!(capped.crowding() > 0.9, "{}", capped.crowding());
        assert_eq!(growing.config().max_bits, Some(14));
        // A fixed table never grows; a growing one learned this data better than it.
        let mut fixed = learner(6, None);
        let on_fixed = loss_on(&mut fixed, &data);
        assert_eq!(fixed.config().bits, 6);
        let mut again = learner(6, Some(14));
        let on_growing = loss_on(&mut again, &data);
        assert!(on_growing < on_fixed, "{on_growing} against {on_fixed}");
    }

    #[test]
    fn a_grown_table_round_trips_with_what_it_keeps() {
        let data = stream(3 * GROWTH_LOOK_ROWS, 13, false);
        let mut grown = learner(6, Some(10));
        loss_on(&mut grown, &data);
        assert!(grown.config().bits > 6);
        let mut w = ByteWriter::new();
        grown.write_section(&mut w);
        let bytes = w.into_bytes();
        let mut r = ByteReader::new(&bytes, 0, "learner");
        let read =
            Learner::read_section(&mut r, Interactions::quadratic(), versions::CURRENT).unwrap();
        assert_eq!(read.config(), grown.config());
        assert_eq!(read.growth(), grown.growth());
        assert!(read.growth().load_at_growth > 0.0);
        assert_eq!(
            predictions(&read, &data[..500].to_vec()),
            predictions(&grown, &data[..500].to_vec())
        );
    }

    #[test]
    fn a_tail_average_that_began_keeps_the_table() {
        let data = stream(2 * GROWTH_LOOK_ROWS, 14, false);
        let (offsets, indices, values, labels) = rows_of(&data);
        let rows = SparseRows::new(&offsets, &indices, &values).unwrap();
        let ns: [&dyn NamespaceRows; 1] = [&rows];
        let batch = Batch::new(&ns, &labels, None).unwrap();
        // The window is the whole run: it begins before the first look.
        let options = FitOptions { average_tail: 1.0, ..FitOptions::default() };
        let mut averaged = learner(6, Some(12));
        averaged.fit(&batch, &options).unwrap();
        assert_eq!(averaged.config().bits, 6);
        // A window over the last tenth begins after the looks that grow the table.
        let options = FitOptions { average_tail: 0.1, ..FitOptions::default() };
        let mut late = learner(6, Some(12));
        late.fit(&batch, &options).unwrap();
        assert!(late.config().bits > 6);
        assert_eq!(predictions(&late, &data).len(), data.len());
    }

    #[test]
    fn without_a_rate_crowding_counts_the_slots_free_at_the_growth() {
        let grown = Growth { load_at_growth: 0.5 };
        assert_eq!(grown.crowding_without_rate(0.5), 0.0);
        assert!((grown.crowding_without_rate(0.6) - 0.2).abs() < 1e-12);
        assert_eq!(grown.crowding_without_rate(0.4), 0.0, "never below 0 (sampling noise)");
        assert_eq!(Growth { load_at_growth: 1.0 }.crowding_without_rate(1.0), 1.0);
    }

    #[test]
    fn the_bits_chosen_hold_the_features_roomily_within_the_bounds() {
        // 2^20 features at 2%: 2^20 / 0.0202 = 2^25.7.
        assert_eq!(bits_holding((1u64 << 20) as f64, 0.02, 19, 30), 26);
        assert_eq!(bits_holding((1u64 << 20) as f64, 0.02, 19, 24), 24);
        assert_eq!(bits_holding(10.0, 0.02, 19, 24), 19);
        assert_eq!(bits_holding(0.0, 0.02, 19, 24), 19);
    }
}
