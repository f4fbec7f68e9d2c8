//! The two judges of candidate crosses, screened and reset together: the shared factorization
//! ([`super::screen`]) and the value-pair cells ([`super::cells`]).

use super::cells::{LocatedCells, PairCells};
#[cfg(test)]
use super::operands::JoinedValues;
use super::operands::Operands;
use super::screen::{Candidate, LocatedVectors, Shadow};
#[cfg(test)]
use crate::learner::Example;

/// The value-pair cells ([`super::cells`]) number `2^(shadow_bits + 1)`, at most `2^25` (16
/// bytes each: twice the shadow's bytes).
const CELL_BITS_OVER_SHADOW: u32 = 1;

/// A judge of candidate crosses ([`super::screen`]'s shared factorization, [`super::cells`]'
/// value-pair cells): an example's operands (its fields and joined fields,
/// [`super::operands`]) are located in the judge's tables first (their memory asked for
/// ahead), then judged: every candidate records its gain on it, and the judge learns from it.
pub trait Judge {
    /// Where an example's data is in the judge's tables.
    type Located: Default;

    /// Locates the `operands` of an example for `candidates` into `out`.
    fn locate(&self, operands: &Operands<'_>, candidates: &[Candidate], out: &mut Self::Located);

    /// Judges the example `located` (for the same `candidates`) with residual `residual` and
    /// importance weight `weight`.
    fn judge(
        &mut self,
        located: &Self::Located,
        candidates: &mut [Candidate],
        residual: f32,
        weight: f32,
    );

    /// Forgets the judge's tables and its statistics of every candidate (after a cross joins,
    /// the residual is another one).
    fn reset(&mut self, candidates: &mut [Candidate]);
}

/// One judge alone locates `example`, then judges it (the judges' own tests); returns what it
/// located.
#[cfg(test)]
pub(crate) fn screen_with<J: Judge>(
    judge: &mut J,
    example: &Example<'_>,
    candidates: &mut [Candidate],
    residual: f32,
    weight: f32,
) -> J::Located {
    let mut located = J::Located::default();
    let joined = JoinedValues::default();
    judge.locate(&Operands::new(example, &joined), candidates, &mut located);
    judge.judge(&located, candidates, residual, weight);
    located
}

/// Both judges of the candidates ([`super::screen`] and [`super::cells`]), screened and reset
/// together.
///
/// An example is judged one screening late: screening locates its vectors and cells (asking
/// for them ahead), then judges the example screened before, whose memory has arrived while
/// the learner went on (waiting for it on the spot was most of the screening's time on
/// eat-rate). Each example is still judged in its turn, with the residual it had when learned;
/// [`Judges::judge_waiting`] judges the last one before anything reads the candidates' statistics or
/// changes the candidates.
#[derive(Clone, Debug)]
pub(super) struct Judges {
    shadow: Shadow,
    cells: PairCells,
    /// The example screened last, waiting to be judged, and the buffer the next is located in.
    waiting: Option<Located>,
    spare: Located,
}

/// An example located by both judges, with its residual and weight.
#[derive(Clone, Debug, Default)]
struct Located {
    vectors: LocatedVectors,
    cells: LocatedCells,
    residual: f32,
    weight: f32,
}

impl Judges {
    pub(super) fn new(shadow_bits: u32) -> Self {
        let cell_bits = (shadow_bits + CELL_BITS_OVER_SHADOW).min(25);
        Judges {
            shadow: Shadow::new(shadow_bits),
            cells: PairCells::new(cell_bits),
            waiting: None,
            spare: Located::default(),
        }
    }

    /// Locates an example's `operands` for both judges, then judges the example screened
    /// before.
    pub(super) fn screen(
        &mut self,
        operands: &Operands<'_>,
        candidates: &mut [Candidate],
        residual: f32,
        weight: f32,
    ) {
        let mut next = std::mem::take(&mut self.spare);
        self.shadow.locate(operands, candidates, &mut next.vectors);
        self.cells.locate(operands, candidates, &mut next.cells);
        (next.residual, next.weight) = (residual, weight);
        self.judge_waiting(candidates);
        self.waiting = Some(next);
    }

    /// Judges the example waiting, if any: both judges record every candidate's gain on it,
    /// then learn from it.
    pub(super) fn judge_waiting(&mut self, candidates: &mut [Candidate]) {
        if let Some(located) = self.waiting.take() {
            let (residual, weight) = (located.residual, located.weight);
            self.shadow.judge(&located.vectors, candidates, residual, weight);
            self.cells.judge(&located.cells, candidates, residual, weight);
            self.spare = located;
        }
    }

    /// Both judges forget their tables and the candidates' statistics.
    pub(super) fn reset(&mut self, candidates: &mut [Candidate]) {
        self.waiting = None;
        self.shadow.reset(candidates);
        self.cells.reset(candidates);
    }
}
