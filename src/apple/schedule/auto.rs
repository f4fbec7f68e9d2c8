//! Epochs when the run length is known (a plan exists), doubling otherwise.

use super::{Schedule, SchedulePolicy};

pub struct Auto;

impl SchedulePolicy for Auto {
    const NAME: &'static str = "auto";
    const PLANS_RUNS: bool = true;

    fn is_expansion_point(schedule: &Schedule, learned: u64) -> bool {
        if schedule.planned.is_empty() {
            schedule.is_doubling_point(learned)
        } else {
            schedule.is_planned(learned)
        }
    }

    fn next_point(schedule: &Schedule, learned: u64) -> Option<u64> {
        if schedule.planned.is_empty() {
            schedule.next_doubling(learned)
        } else {
            schedule.next_planned(learned)
        }
    }
}
