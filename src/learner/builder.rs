//! A builder thread beside the learner: blocks of examples are built (their columns read, hashed
//! and checked, [`super::batch`]) and, when the enumerator has a block form, expanded whole, on
//! another core while the learner learns the blocks before them. Vowpal Wabbit runs its parser thread
//! beside its learner the same way.
//!
//! On a table far larger than the cache the learning step waits on memory, and reading a dozen
//! input columns a row competes with it for the core's outstanding misses; on another core the
//! reading overlaps the learning instead. Results are those of building on the learner's thread:
//! the blocks arrive in order, carry their rows' errors with them, and a block the builder
//! expanded with an enumerator that has since grown ([`super::Expansion::generation`]) is
//! expanded again by the learner (the builder is then handed the new block form).

use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Mutex, PoisonError};

use super::batch::{Batch, BlockSource, ExampleBlock, RowBlocks};
use super::expansion::{Expansion, Interactions};
use super::features::TableSlots;

/// Blocks the builder may have out (built and not yet handed back by the learner, which holds
/// two at a time): the builder sleeps when all are out and wakes when the learner hands back
/// [`RETURN_GROUP`] of them, so that it wakes once every many blocks, not every block. Waking
/// a thread is a system call and, on a virtual machine, an interrupt to the other core: a
/// wake-up per block cost 5% of the step, and one per 8 blocks still cost 7% of a 10M-row
/// eat-rate fit (`benches/suite/large_hashed.py`; notes/benchmarks_log.md, run 15). Must exceed
/// `RETURN_GROUP + 1`, or the builder could wait for blocks the learner waits to be built.
/// The blocks out bound the memory between the threads: a block of 256 rows is about 140 KB
/// of eat-rate's 12 one-hot columns, 600 KB of 200-token text rows.
const BLOCKS_OUT: usize = 48;

/// Blocks the learner hands back to the builder at once.
const RETURN_GROUP: usize = 40;

/// Where a weight table's slots are, for the builder to prefetch the slots of the blocks it
/// expands: on a table of gigabytes the learner's own prefetches wait on page walks, and the
/// builder's, on its core, warm the page tables and bring the slots to the shared cache first
/// (criterion `step/28` about -20%; on a 256 MiB table it cost 6%, so the learner asks only
/// for tables of gigabytes, [`super::learner`]). An address only: a prefetch never reads or
/// faults, so a table moved meanwhile (to huge pages) costs nothing but useless prefetches.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SlotAddresses {
    base: usize,
    /// Bytes per slot.
    slot_bytes: usize,
}

impl SlotAddresses {
    /// The slots of `data`, a table of `stride` values a slot (`None` when unallocated).
    pub(crate) fn of(data: &[f32], stride: usize) -> Option<Self> {
        (!data.is_empty())
            .then(|| SlotAddresses { base: data.as_ptr() as usize, slot_bytes: stride * 4 })
    }

    fn prefetch(&self, slots: &[u32]) {
        for &slot in slots {
            let address = self.base.wrapping_add(slot as usize * self.slot_bytes);
            crate::memory::prefetch(address as *const f32);
        }
    }
}

/// The learner the builder builds for: its table size (`bits`), whether it tracks fields, and
/// its table's slots to prefetch, when it wants them prefetched ([`SlotAddresses`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct BuiltFor {
    pub slots: TableSlots,
    pub track_fields: bool,
    pub table: Option<SlotAddresses>,
}

/// The block form the builder expands with and the enumerator generation it is of.
type BlockForm = (u64, Option<Interactions>);

/// A [`BlockSource`] that hears of the enumerator's growth: one that expands blocks ahead needs
/// the enumerator's new block form.
pub(crate) trait FollowsExpansion: BlockSource {
    /// The learner's enumerator is now at `generation`; `block_form` is its block form
    /// ([`super::Expansion::block_expansion`]), asked for only when the source wants it.
    fn expansion_changed(
        &mut self,
        _generation: u64,
        _block_form: &dyn Fn() -> Option<Interactions>,
    ) {
    }
}

/// Blocks built on the learner's own thread expand there too.
impl<R: Iterator<Item = usize>> FollowsExpansion for RowBlocks<'_, '_, R> {}

/// Blocks built ahead by the builder thread of [`with_builder`], in row order.
pub(crate) struct BuiltBlocks<'s> {
    built: Receiver<ExampleBlock>,
    /// Blocks the learner is done with, handed back to the builder for reuse a group at a time.
    spent: Vec<ExampleBlock>,
    returned: Sender<Vec<ExampleBlock>>,
    form: &'s Mutex<BlockForm>,
    generation: u64,
}

impl BlockSource for BuiltBlocks<'_> {
    fn fill(&mut self, block: &mut ExampleBlock) -> bool {
        // Without a next block, `block` stays as it is: the learner's staged examples may still
        // be in it (the last block of the rows can be shorter than the look-ahead).
        let Ok(next) = self.built.recv() else { return false };
        self.spent.push(std::mem::replace(block, next));
        if self.spent.len() >= RETURN_GROUP {
            // The builder may have finished: then the blocks are simply dropped.
            let _ = self.returned.send(std::mem::take(&mut self.spent));
        }
        true
    }
}

impl FollowsExpansion for BuiltBlocks<'_> {
    fn expansion_changed(
        &mut self,
        generation: u64,
        block_form: &dyn Fn() -> Option<Interactions>,
    ) {
        if generation != self.generation {
            self.generation = generation;
            *self.form.lock().unwrap_or_else(PoisonError::into_inner) = (generation, block_form());
        }
    }
}

/// Runs `learn` on the blocks of `rows` of `batch` (hashed with `seeds`), built by a thread of
/// their own; blocks are expanded there with `form` (the block form of the enumerator
/// at a generation, see [`super::Expansion::block_expansion`]) into features of the learner's
/// `bits`, fields tracked and slots prefetched as `built_for` says. The builder stops when
/// `learn` returns (whether it learned every row or stopped at an error).
pub(crate) fn with_builder<T>(
    batch: Batch<'_>,
    rows: impl Iterator<Item = usize> + Send,
    seeds: &[u64],
    form: BlockForm,
    built_for: BuiltFor,
    learn: impl FnOnce(&mut BuiltBlocks<'_>) -> T,
) -> T {
    let generation = form.0;
    let shared = Mutex::new(form);
    std::thread::scope(|scope| {
        let (to_learner, built) = channel::<ExampleBlock>();
        let (returned, from_learner) = channel::<Vec<ExampleBlock>>();
        let shared = &shared;
        scope.spawn(move || {
            let mut rows = rows;
            let mut form = shared.lock().unwrap_or_else(PoisonError::into_inner).clone();
            let (mut free, mut outstanding) = (Vec::new(), 0usize);
            loop {
                let group = if outstanding >= BLOCKS_OUT {
                    from_learner.recv().ok()
                } else {
                    from_learner.try_recv().ok()
                };
                if let Some(group) = group {
                    // The learner also hands back the blocks it started with, never sent here.
                    outstanding = outstanding.saturating_sub(group.len());
                    free.extend(group);
                } else if outstanding >= BLOCKS_OUT {
                    // The learner stopped (an error, an interrupt).
                    break;
                }
                let mut block = free.pop().unwrap_or_default();
                if !block.fill(&batch, &mut rows, seeds) {
                    break;
                }
                {
                    let latest = shared.lock().unwrap_or_else(PoisonError::into_inner);
                    if latest.0 != form.0 {
                        form = latest.clone();
                    }
                }
                if let Some(expansion) = &form.1 {
                    let BuiltFor { slots, track_fields, .. } = built_for;
                    block.expand_whole(form.0, slots, track_fields, |rows, out, ends| {
                        expansion.expand_block(rows, out, ends)
                    });
                }
                if let (Some(table), Some(slots)) = (built_for.table, block.expanded_slots()) {
                    table.prefetch(slots);
                }
                // Counted before it is sent: the learner may take it and hand it back before
                // this thread runs again (counted after, the count underflowed under load, and a
                // wrapped count would have left this thread asleep while the learner waited).
                outstanding += 1;
                if to_learner.send(block).is_err() {
                    break;
                }
            }
        });
        let mut source =
            BuiltBlocks { built, spent: Vec::new(), returned, form: shared, generation };
        learn(&mut source)
    })
}
