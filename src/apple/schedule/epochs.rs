//! The paper's schedule: `epochs - 1` expansions at equal fractions of the run (needs its length).

use super::{Schedule, SchedulePolicy};

pub struct Epochs;

impl SchedulePolicy for Epochs {
    const NAME: &'static str = "epochs";
    const PLANS_RUNS: bool = true;

    fn is_expansion_point(schedule: &Schedule, learned: u64) -> bool {
        schedule.is_planned(learned)
    }

    fn next_point(schedule: &Schedule, learned: u64) -> Option<u64> {
        schedule.next_planned(learned)
    }
}
