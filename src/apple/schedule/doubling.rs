//! Vowpal Wabbit's schedule for streams: expand after `first`, `2·first`, `4·first`, ... examples.

use super::{Schedule, SchedulePolicy};

pub struct Doubling;

impl SchedulePolicy for Doubling {
    const NAME: &'static str = "doubling";
    const PLANS_RUNS: bool = false;

    fn is_expansion_point(schedule: &Schedule, learned: u64) -> bool {
        schedule.is_doubling_point(learned)
    }

    fn next_point(schedule: &Schedule, learned: u64) -> Option<u64> {
        schedule.next_doubling(learned)
    }
}
