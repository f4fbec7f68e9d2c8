//! A batch checked before any of it is learned: its namespaces, entries and labels, each error
//! naming the row in the caller's numbering.

use super::*;

impl<E: Expansion> Learner<E> {
    /// The checks every learning call makes before learning a row (labels, weights, entries),
    /// so that a bad batch is refused whole; public for a caller that learns a batch in pieces.
    pub fn check_batch(&self, batch: &Batch<'_>) -> PolyResult<()> {
        self.check_batch_namespaces(batch)?;
        self.check_batch_labels(batch)?;
        self.check_batch_entries(batch)
    }

    /// A batch has one column per namespace of the model: a column more would be left out of
    /// every example, one fewer would shift the others' seeds.
    pub(super) fn check_batch_namespaces(&self, batch: &Batch<'_>) -> PolyResult<()> {
        let (got, namespaces) = (batch.namespaces.len(), &self.config.namespaces);
        if got != namespaces.len() {
            return crate::invalid!(
                "the batch has {got} feature column(s) but the model has {} namespace(s) \
                 ({namespaces:?})",
                namespaces.len()
            );
        }
        Ok(())
    }

    /// Feature values and indices checked before any row is learned (NaN, infinity, a value
    /// beyond single precision, a negative index), so that a bad entry does not leave a
    /// half-learned batch; the error is the one learning would have met, naming the row.
    pub(super) fn check_batch_entries(&self, batch: &Batch<'_>) -> PolyResult<()> {
        // Vowpal Wabbit's policy learns such a row as vw does (`learn_overflowed`).
        let vw = self.overflow == OverflowPolicy::PredictZero;
        if vw || batch.namespaces.iter().all(|ns| ns.entries_are_plain()) {
            return Ok(());
        }
        let mut buffer = ExampleBuffer::new();
        for row in 0..batch.n_rows() {
            let example = batch.example(row, &self.seeds, &mut buffer)?;
            if let Some(largest) = overflowing_square(example.features().1) {
                let error = PolyError::InvalidInput(format!(
                    "row {}: a feature {}; scale the features down",
                    batch.first_row + row,
                    overflow_of(largest)
                ));
                // The namespace holding it, for the error to name its column.
                let holds = |k: &usize| {
                    overflowing_square(example.namespace(*k).values).is_some_and(|v| v == largest)
                };
                return Err(match (0..example.n_namespaces()).find(holds) {
                    Some(k) => batch.in_column(k, error),
                    None => error,
                });
            }
        }
        Ok(())
    }

    /// Labels and weights checked before any row is learned, so that a bad label does not leave
    /// a half-trained model.
    pub(super) fn check_batch_labels(&self, batch: &Batch<'_>) -> PolyResult<()> {
        if batch.labels.len() != batch.n_rows() {
            return crate::invalid!(
                "features have {} rows but labels have {}",
                batch.n_rows(),
                batch.labels.len()
            );
        }
        for (row, &label) in batch.labels.iter().enumerate() {
            self.check_label(label, batch.first_row + row)?;
        }
        if let Some(weights) = batch.weights {
            for (row, &w) in weights.iter().enumerate() {
                if !(w.is_finite() && w >= 0.0) {
                    return crate::invalid!(
                        "row {}: importance weight is {w}; weights must be finite and >= 0",
                        batch.first_row + row
                    );
                }
            }
        }
        Ok(())
    }
}
