//! Rows whose entries are features in the order given: Vowpal Wabbit's rows, as its text and our
//! cache of it hold them (`crate::vw_run`).
//!
//! A sparse column is made canonical before learning (sorted, repeats summed; see
//! [`super::example`]). Vowpal Wabbit does neither: `|t a a` is two features `a` of value 1, not
//! one of value 2, and features are learned in file order. Both matter to the adaptive and
//! normalized update whenever two features of one example land on one slot (a repeated feature,
//! or a hash collision, common at small `-b`): the second sees the slot's sensitivity after the
//! first. [`InOrderRows`] keeps the rows as given, so a run on Vowpal Wabbit's text gives its
//! numbers at any `-b`; zeros are dropped and values checked as everywhere else.

use super::batch::{ColumnSink, NamespaceRows};
use super::example::ExampleBuffer;
use crate::error::{PolyError, PolyResult};
use crate::sparse::{SparseIndex, SparseRows, SparseValue};

/// A namespace's rows whose entries are features in the order given (see the module docs).
pub struct InOrderRows<'a, I, V>(pub SparseRows<'a, I, V>);

impl<I: SparseIndex, V: SparseValue> NamespaceRows for InOrderRows<'_, I, V> {
    fn n_rows(&self) -> usize {
        self.0.n_rows()
    }

    fn push_into(&self, row: usize, seed: u64, out: &mut ExampleBuffer) -> PolyResult<()> {
        let (indices, values) = self.0.row(row);
        out.push_namespace_in_order(seed, indices, values, self.0.row_number(row))
    }

    fn entries_are_plain(&self) -> bool {
        self.0.entries_are_plain()
    }

    fn prefetch_rows(&self, start: usize, end: usize) {
        self.0.prefetch_rows(start, end);
    }

    fn fill_block(
        &self,
        rows: &[usize],
        consecutive: bool,
        seed: u64,
        out: &mut ColumnSink,
    ) -> Result<(), (usize, PolyError)> {
        out.fill_in_order(&self.0, rows, consecutive, seed)
    }
}
