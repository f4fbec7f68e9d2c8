//! When apple expands its feature set: one file per schedule, registered by one line below.
//!
//! * `epochs`: the run (all passes) is cut into `epochs` equal parts and the set grows at each
//!   boundary (`epochs - 1` expansions; the paper's 6 epochs, 5 expansions). Needs the run
//!   length, given by [`Schedule::begin_run`].
//! * `doubling`: Vowpal Wabbit's variant for streams of unknown length: expand after `first`,
//!   `2·first`, `4·first`, ... learned examples.
//! * `auto`: epochs when the run length is known, doubling otherwise.
//!
//! Counts are learned examples (holdout rows are not learned), counted from the model's first
//! example. A schedule reads the shared [`Schedule`] state (its parameters and the planned
//! points of the current run) through the helpers here; adding one is a file with a unit type
//! implementing [`SchedulePolicy`] and its line in the registry.

mod auto;
mod doubling;
mod epochs;

use crate::error::PolyResult;

/// One expansion schedule (see the module docs).
pub trait SchedulePolicy {
    /// The name users give (`Apple(schedule=...)`).
    const NAME: &'static str;
    /// Whether [`Schedule::begin_run`] plans the run's epochs for this schedule.
    const PLANS_RUNS: bool;
    /// Whether to expand now that `learned` examples (this one included) have been learned.
    fn is_expansion_point(schedule: &Schedule, learned: u64) -> bool;
    /// The next expansion point after `learned` examples, if one is known.
    fn next_point(schedule: &Schedule, learned: u64) -> Option<u64>;
}

crate::named_registry! {
    /// An expansion schedule (see the module docs).
    pub enum ScheduleKind: SchedulePolicy, visitor ScheduleVisitor, option "schedule" {
        Auto => auto::Auto,
        Epochs => epochs::Epochs,
        Doubling => doubling::Doubling,
    }
}

/// The schedule's parameters and position (saved with the model).
#[derive(Clone, Debug, PartialEq)]
pub struct Schedule {
    pub kind: ScheduleKind,
    /// Epochs per run (6).
    pub epochs: u32,
    /// First expansion of the doubling schedule (1000).
    pub first: u64,
    /// Planned expansion points (learned-example counts) of the current epochs run, increasing;
    /// empty when no run length is known.
    pub planned: Vec<u64>,
}

struct IsPoint<'a>(&'a Schedule, u64);

impl ScheduleVisitor for IsPoint<'_> {
    type Output = bool;
    #[inline]
    fn visit<C: SchedulePolicy>(self) -> bool {
        C::is_expansion_point(self.0, self.1)
    }
}

struct NextPoint<'a>(&'a Schedule, u64);

impl ScheduleVisitor for NextPoint<'_> {
    type Output = Option<u64>;
    fn visit<C: SchedulePolicy>(self) -> Option<u64> {
        C::next_point(self.0, self.1)
    }
}

struct PlansRuns;

impl ScheduleVisitor for PlansRuns {
    type Output = bool;
    fn visit<C: SchedulePolicy>(self) -> bool {
        C::PLANS_RUNS
    }
}

impl Schedule {
    pub fn new(kind: ScheduleKind, epochs: u32, first: u64) -> PolyResult<Self> {
        if !(1..=1000).contains(&epochs) {
            return crate::invalid!("epochs must be in 1..=1000, got {epochs}");
        }
        if first == 0 {
            return crate::invalid!(
                "doubling_first (the doubling schedule's first expansion) must be >= 1 example"
            );
        }
        Ok(Schedule { kind, epochs, first, planned: Vec::new() })
    }

    /// A run of `run_length` examples starts after `learned` examples: plans its epochs (for
    /// the schedules that plan runs). Points already passed are dropped.
    pub fn begin_run(&mut self, learned: u64, run_length: u64) {
        if !self.kind.visit(PlansRuns) {
            return;
        }
        let epochs = u64::from(self.epochs);
        self.planned = (1..epochs)
            .map(|k| {
                learned + ((u128::from(run_length) * u128::from(k)) / u128::from(epochs)) as u64
            })
            .filter(|&point| point > learned)
            .collect();
        self.planned.dedup();
    }

    /// Whether to expand now that `learned` examples (this one included) have been learned.
    #[inline]
    pub fn is_expansion_point(&self, learned: u64) -> bool {
        self.kind.visit(IsPoint(self, learned))
    }

    /// The next expansion point after `learned` examples, if one is known (used to decide when
    /// to start remembering examples for the selection).
    pub fn next_point(&self, learned: u64) -> Option<u64> {
        self.kind.visit(NextPoint(self, learned))
    }

    /// Examples between `point` (an expansion point) and the expansion before it (or the start
    /// of its run): the epoch that ends at `point`.
    pub fn gap_before(&self, point: u64) -> u64 {
        if let Ok(k) = self.planned.binary_search(&point) {
            return match k {
                0 => self.planned.get(1).map_or(point, |next| next - point),
                k => point - self.planned[k - 1],
            };
        }
        if point > self.first {
            point - point / 2
        } else {
            point
        }
    }

    /// Whether `learned` is a planned point of the current run.
    fn is_planned(&self, learned: u64) -> bool {
        self.planned.binary_search(&learned).is_ok()
    }

    /// The first planned point after `learned`.
    fn next_planned(&self, learned: u64) -> Option<u64> {
        self.planned.iter().copied().find(|&p| p > learned)
    }

    /// Whether `learned` is `first · 2^k`.
    fn is_doubling_point(&self, learned: u64) -> bool {
        learned >= self.first
            && (learned / self.first).is_power_of_two()
            && learned % self.first == 0
    }

    /// The first `first · 2^k` after `learned`.
    fn next_doubling(&self, learned: u64) -> Option<u64> {
        let mut p = self.first;
        while p <= learned {
            p = p.checked_mul(2)?;
        }
        Some(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn points(s: &Schedule, upto: u64) -> Vec<u64> {
        (1..=upto).filter(|&n| s.is_expansion_point(n)).collect()
    }

    #[test]
    fn epochs_split_the_run_equally() {
        let mut s = Schedule::new(ScheduleKind::Epochs, 6, 1000).unwrap();
        assert!(points(&s, 100).is_empty(), "no run length, no expansion");
        s.begin_run(0, 600);
        assert_eq!(points(&s, 700), vec![100, 200, 300, 400, 500]);
        assert_eq!(s.next_point(0), Some(100));
        assert_eq!(s.next_point(100), Some(200));
        assert_eq!(s.next_point(500), None);
        assert_eq!((s.gap_before(100), s.gap_before(300)), (100, 100));
        // Uneven lengths round down; a second run continues from the count learned.
        s.begin_run(600, 10);
        assert_eq!(s.planned, vec![601, 603, 605, 606, 608]);
        // A run shorter than the epoch count has fewer (distinct) points.
        s.begin_run(0, 3);
        assert_eq!(s.planned, vec![1, 2]);
    }

    #[test]
    fn doubling_matches_vowpal_wabbit() {
        let s = Schedule::new(ScheduleKind::Doubling, 6, 1000).unwrap();
        assert_eq!(points(&s, 20_000), vec![1000, 2000, 4000, 8000, 16000]);
        assert_eq!(s.next_point(0), Some(1000));
        assert_eq!(s.next_point(1000), Some(2000));
        assert_eq!(s.next_point(5000), Some(8000));
        assert_eq!(
            (s.gap_before(1000), s.gap_before(2000), s.gap_before(8000)),
            (1000, 1000, 4000)
        );
    }

    #[test]
    fn auto_uses_epochs_only_with_a_known_length() {
        let mut s = Schedule::new(ScheduleKind::Auto, 6, 10).unwrap();
        assert_eq!(points(&s, 100), vec![10, 20, 40, 80]);
        s.begin_run(0, 60);
        assert_eq!(points(&s, 100), vec![10, 20, 30, 40, 50]);
    }

    #[test]
    fn bad_parameters_are_rejected() {
        assert!(Schedule::new(ScheduleKind::Auto, 0, 10).is_err());
        assert!(Schedule::new(ScheduleKind::Auto, 6, 0).is_err());
        let err = ScheduleKind::parse("weekly").unwrap_err();
        assert!(err.to_string().contains("weekly"), "{err}");
    }
}
