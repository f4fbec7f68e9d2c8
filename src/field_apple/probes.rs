//! Probing crosses of three fields that no pair of them announces (a *pure* triple: its effect
//! averages out over every value pair, so no pair joins and no joined pair is ever split).
//!
//! Such a cross is seen only by cells of value triples. Every triple of fields is far too many
//! to screen at once (4,060 on click's 30 fields), and a triple of large fields has too many
//! value triples for its cells to learn anyway, so the probes go through the triples of fields
//! whose value triples are few ([`MAX_TRIPLE_CELLS`], by the distinct values of the first
//! examples screened), fewest first, [`PROBE_SLOTS`] at a time. A probe is the unjoined pair of
//! its first two fields as an operand (its value combinations, like a joined field's,
//! [`super::operands`]) crossed with the third field, judged by the cells alone against the
//! pair's own cells (a baseline, as a split of a joined cross is); it gives its slot to the next
//! triple once it has lost ([`super::SAMPLES_TO_DECIDE`] samples and no gain) or has had
//! [`PROBE_SAMPLES`] samples without joining, and goes to the back of the queue. Once every
//! triple of the queue has had its turn without one joining, the probes rest until a cross
//! joins (the residual is then another one): on data without such a triple they cost one pass
//! over the queue per cross found, not a share of the whole screening.
//!
//! Measured first on click3's residual given the planted pairs (a one-off numpy trial): the
//! planted triple's cells reached z 10 at 50k samples and 15 at 100k, the 59 other triples of
//! at most 10,000 value triples were below 1.3 from 10k samples on and fell below 0 by 50k.

use std::collections::{HashSet, VecDeque};

use super::screen::{Candidate, Role};
use super::{Cross, FieldApple, SAMPLES_TO_DECIDE};

/// Triples probed at once (each a probe and its pair's baseline: two cells an example screened,
/// and one value combination).
pub const PROBE_SLOTS: usize = 16;

/// Most value triples a probed triple of fields may have (the product of its fields' distinct
/// values among the first [`COUNT_EXAMPLES`] screened).
pub const MAX_TRIPLE_CELLS: u64 = 20_000;

/// Screened examples whose distinct values per field decide which triples are probed.
pub const COUNT_EXAMPLES: u64 = 2_000;

/// Samples after which a probe that has not joined gives its slot to the next triple.
pub const PROBE_SAMPLES: u64 = 60_000;

/// The probes' state: distinct values counted, then the queue of triples and the slots.
#[derive(Clone, Debug, Default)]
pub struct Probes {
    /// Per field, its distinct value hashes (at most [`MAX_TRIPLE_CELLS`] each) while counting.
    distinct: Vec<HashSet<u64>>,
    /// Per field, whether a counted example held several of its values (a numeric namespace, a
    /// token list): no category, and probes cross categories only (see `cells`).
    several: Vec<bool>,
    counted: u64,
    /// Whether the queue was built (counting is over).
    started: bool,
    /// Triples waiting for a slot, fewest value triples first.
    queue: VecDeque<[usize; 3]>,
    /// Each slot's triple.
    slots: [Option<[usize; 3]>; PROBE_SLOTS],
    /// Triples still to have their turn before the probes rest.
    turns_left: usize,
}

impl Probes {
    /// Whether the distinct values of the example being screened are wanted.
    pub fn counting(&self) -> bool {
        !self.started
    }

    /// Counts one screened example's values of each field (`field(k)`: field k's hashes).
    pub fn count<'a>(&mut self, n_fields: usize, field: impl Fn(usize) -> &'a [u64]) {
        self.distinct.resize_with(n_fields, HashSet::new);
        self.several.resize(n_fields, false);
        for (k, seen) in self.distinct.iter_mut().enumerate() {
            self.several[k] |= field(k).len() > 1;
            for &hash in field(k) {
                if seen.len() as u64 >= MAX_TRIPLE_CELLS {
                    break;
                }
                seen.insert(hash);
            }
        }
        self.counted += 1;
    }

    /// Whether enough examples were counted for the queue to be built.
    pub fn ready(&self) -> bool {
        !self.started && self.counted >= COUNT_EXAMPLES
    }

    /// Builds the queue: every triple of categories (fields of one value an example) of at most
    /// [`MAX_TRIPLE_CELLS`] value triples that `allowed` accepts, fewest first (ties in field
    /// order). A numeric namespace's few distinct features would put its triples first, and a
    /// probe of it is never screened: it would hold its slot for good.
    pub fn start(&mut self, allowed: impl Fn(&[usize; 3]) -> bool) {
        let several = std::mem::take(&mut self.several);
        let category = |k: usize| !several.get(k).copied().unwrap_or(false);
        let sizes: Vec<u64> = self.distinct.iter().map(|s| s.len().max(1) as u64).collect();
        self.distinct = Vec::new();
        self.started = true;
        let n = sizes.len();
        let mut triples: Vec<(u64, [usize; 3])> = Vec::new();
        for a in 0..n {
            for b in a + 1..n {
                for c in b + 1..n {
                    let cells = sizes[a].saturating_mul(sizes[b]).saturating_mul(sizes[c]);
                    let categories = category(a) && category(b) && category(c);
                    if cells <= MAX_TRIPLE_CELLS && categories && allowed(&[a, b, c]) {
                        triples.push((cells, [a, b, c]));
                    }
                }
            }
        }
        triples.sort_by_key(|&(cells, triple)| (cells, triple));
        self.queue = triples.into_iter().map(|(_, triple)| triple).collect();
        self.turns_left = self.queue.len();
    }

    /// A cross joined: every triple of the queue has a turn again.
    pub fn wake(&mut self) {
        self.turns_left = self.queue.len() + self.active();
    }

    /// The triple in slot `slot`.
    pub fn triple(&self, slot: usize) -> Option<[usize; 3]> {
        self.slots.get(slot).copied().flatten()
    }

    /// Each slot's probed pair (the first two fields of its triple), for the value
    /// combinations; `None` for an empty slot.
    pub fn pairs(&self) -> impl Iterator<Item = Option<[usize; 2]>> + '_ {
        self.slots.iter().map(|t| t.map(|[a, b, _]| [a, b]))
    }

    /// Slots in use.
    pub fn active(&self) -> usize {
        self.slots.iter().filter(|t| t.is_some()).count()
    }

    /// Empties slot `slot`; with `requeue`, its triple (which has had its turn) goes to the
    /// back of the queue.
    pub fn free(&mut self, slot: usize, requeue: bool) {
        if let Some(triple) = self.slots.get_mut(slot).and_then(Option::take) {
            self.turns_left = self.turns_left.saturating_sub(1);
            if requeue {
                self.queue.push_back(triple);
            }
        }
    }

    /// Fills empty slots from the queue with triples `allowed` accepts (others leave the
    /// queue for good) while triples have a turn left; returns the slots filled.
    pub fn fill(&mut self, allowed: impl Fn(&[usize; 3]) -> bool) -> Vec<usize> {
        let mut filled = Vec::new();
        for slot in 0..PROBE_SLOTS {
            if self.slots[slot].is_some() || self.active() >= self.turns_left {
                continue;
            }
            while let Some(triple) = self.queue.pop_front() {
                if allowed(&triple) && !self.slots.contains(&Some(triple)) {
                    self.slots[slot] = Some(triple);
                    filled.push(slot);
                    break;
                }
            }
        }
        filled
    }
}

/// Whether no cross of `crosses` has all its fields in `triple`.
fn no_cross_within(crosses: &[Cross], triple: &[usize; 3]) -> bool {
    crosses.iter().all(|c| !c.fields.iter().all(|f| triple.contains(f)))
}

/// The probes inside the screening ([`FieldApple`]'s candidates and checks).
impl FieldApple {
    /// Whether a triple of fields may be probed: no cross in the model lies within it (a joined
    /// pair's own splits screen it).
    pub(super) fn probe_allowed(&self, triple: &[usize; 3]) -> bool {
        no_cross_within(&self.crosses, triple)
    }

    /// Whether no pair of `fields` gains as a cross of two (a pair racing with a z-score above
    /// 0 says the triple's effect may be that pair's): a probe joins only then.
    pub(super) fn pairs_quiet(&self, fields: &[usize]) -> bool {
        self.candidates.iter().filter(|c| c.role == Role::Cross).all(|c| {
            let (a, b) = c.pair;
            !(fields.contains(&a) && fields.contains(&b)) || c.z_score() <= 0.0
        })
    }

    /// Probes of the triples the queue has for the empty slots (each after its pair's baseline,
    /// which the cells judge it against); the queue is built once enough examples were counted.
    pub(super) fn fill_probes(&mut self) {
        if self.config.max_fields < 3 {
            return;
        }
        let crosses = &self.crosses;
        if self.probes.ready() {
            self.probes.start(|t| no_cross_within(crosses, t));
        }
        for slot in self.probes.fill(|t| no_cross_within(crosses, t)) {
            let Some(triple) = self.probes.triple(slot) else { continue };
            let operand = self.probe_base() + slot;
            self.candidates.insert(0, Candidate::probe_baseline(operand, self.n_fields));
            self.candidates.push(Candidate::probe(operand, triple[2]));
        }
    }

    /// Frees the slots of probes that lost ([`SAMPLES_TO_DECIDE`] samples and no gain), had
    /// [`PROBE_SAMPLES`] samples without joining, or (`stale`) probe a triple a cross in the
    /// model now lies within; their triples go to the back of the queue (not the stale ones),
    /// and the next ones take the slots.
    pub(super) fn rotate_probes(&mut self) {
        let base = self.probe_base();
        let mut freed = Vec::new();
        for slot in 0..PROBE_SLOTS {
            let Some(triple) = self.probes.triple(slot) else { continue };
            let operand = base + slot;
            let probe = self.candidates.iter().find(|c| c.is_probe() && c.pair.0 == operand);
            // A probe that joined is no longer a candidate: its triple is in the model.
            let stale = probe.is_none() || !self.probe_allowed(&triple);
            let done = probe.is_some_and(|c| {
                let lost = c.count() >= SAMPLES_TO_DECIDE && c.z_score() <= 0.0;
                lost || c.count() >= PROBE_SAMPLES
            });
            if stale || done {
                freed.push((slot, !stale));
            }
        }
        for &(slot, requeue) in &freed {
            self.probes.free(slot, requeue);
        }
        self.candidates.retain(|c| freed.iter().all(|&(slot, _)| c.pair.0 != base + slot));
        self.fill_probes();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn triples_of_few_value_triples_are_probed_fewest_first_a_slot_at_a_time() {
        let mut probes = Probes::default();
        // Fields of 2, 3, 100 and 1000 distinct values.
        let values: Vec<Vec<u64>> = [2u64, 3, 100, 1000]
            .iter()
            .map(|&n| (0..COUNT_EXAMPLES).map(|i| i % n).collect())
            .collect();
        assert!(probes.counting());
        for i in 0..COUNT_EXAMPLES as usize {
            let row: Vec<[u64; 1]> = values.iter().map(|v| [v[i]]).collect();
            probes.count(4, |k| &row[k][..]);
        }
        assert!(probes.ready());
        probes.start(|t| t != &[0, 1, 3]);
        // 2*3*100, 2*100*1000 = 200,000 > the cap; [0, 1, 3] refused.
        assert_eq!(probes.queue, [[0, 1, 2]]);
        assert!(!probes.counting() && !probes.ready());
        assert_eq!(probes.fill(|_| true), [0]);
        assert_eq!(probes.triple(0), Some([0, 1, 2]));
        assert_eq!(probes.pairs().next(), Some(Some([0, 1])));
        assert_eq!(probes.active(), 1);
        probes.free(0, true);
        assert_eq!(probes.active(), 0);
        // Its turn was the queue's one: the probes rest until a cross joins.
        assert_eq!(probes.fill(|_| true), Vec::<usize>::new());
        probes.wake();
        assert_eq!(probes.fill(|_| false), Vec::<usize>::new());
        assert!(probes.queue.is_empty(), "a refused triple leaves the queue");
    }

    #[test]
    fn a_field_of_several_values_an_example_is_in_no_triple() {
        let mut probes = Probes::default();
        // Fields 0-2 categories of 2, 3 and 5 values; field 3 a numeric namespace of 4
        // features, each example holding 2 of them.
        for i in 0..COUNT_EXAMPLES {
            let row = [vec![i % 2], vec![i % 3], vec![i % 5], vec![i % 4, (i + 1) % 4]];
            probes.count(4, |k| &row[k][..]);
        }
        probes.start(|_| true);
        assert_eq!(probes.queue, [[0, 1, 2]]);
    }
}
