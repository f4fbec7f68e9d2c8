//! Numeric columns as one namespace, read where they lie: column `k`'s value in a row is the
//! feature of index `k` (a missing value or a zero is no feature), as `to_sparse` would make
//! them ([`crate::sparse::columns_to_sparse`]). A frame's numbers beside its string columns
//! (click data's counts) train with no sparse column in between: on 2M rows of 13 numbers that
//! column is 0.5 GB written and read back.

use super::batch::{ColumnSink, NamespaceRows};
use super::example::ExampleBuffer;
use crate::error::{PolyError, PolyResult};

/// Columns of numbers, read by position (the binding's view of Arrow arrays).
pub trait Numbers: Sync {
    fn n_rows(&self) -> usize;
    fn n_columns(&self) -> usize;
    /// Column `column`'s name, for errors.
    fn name(&self, column: usize) -> &str;
    /// Column `column`'s value in row `row`; `None` when it is missing.
    fn get(&self, column: usize, row: usize) -> Option<f64>;
    /// Column `column`'s values in every row, what the missing ones hold included.
    fn raw_values(&self, column: usize) -> &[f64];
}

/// Numeric columns as a namespace; errors name rows from `first_row`.
pub struct NumberRows<N> {
    numbers: N,
    first_row: usize,
    /// Every value's square is finite in single precision (see
    /// [`crate::sparse::SparseRows::entries_are_plain`]).
    plain: bool,
}

impl<N: Numbers> NumberRows<N> {
    /// The columns' rows, checked in one pass: a NaN, an infinite value or one beyond single
    /// precision is an error naming its column and row (the first in row order), where a
    /// sparse column's error could only name the namespace and the feature's index.
    pub fn new(numbers: N, first_row: usize) -> PolyResult<Self> {
        const SQRT_F32_MAX: f64 = 1.844_674_3e19;
        // One vectorizable pass over the raw values (NaN fails `<=`); the exact one below only
        // when some value, perhaps a missing one's, is not plain.
        let plain_raw = |column: usize| {
            let values = numbers.raw_values(column);
            values.iter().filter(|v| v.abs() <= SQRT_F32_MAX).count() == values.len()
        };
        if (0..numbers.n_columns()).all(plain_raw) {
            return Ok(Self { numbers, first_row, plain: true });
        }
        let (mut plain, mut bad) = (true, None::<(usize, usize)>);
        for column in 0..numbers.n_columns() {
            // A later column's bad value counts only in an earlier row.
            let rows = bad.map_or(numbers.n_rows(), |(row, _)| row);
            for row in 0..rows {
                let Some(value) = numbers.get(column, row) else { continue };
                if value.is_nan() || value.abs() > f64::from(f32::MAX) {
                    bad = Some((row, column));
                    break;
                }
                plain &= value.abs() <= SQRT_F32_MAX;
            }
        }
        if let Some((row, column)) = bad {
            let value = numbers.get(column, row).unwrap_or(f64::NAN);
            let (name, row) = (numbers.name(column), first_row + row);
            if value.is_finite() {
                return crate::invalid!(
                    "column {name:?}, row {row}: value {value:e}, beyond the f32 range"
                );
            }
            return crate::invalid!("column {name:?}, row {row}: non-finite value {value}");
        }
        Ok(Self { numbers, first_row, plain })
    }

    /// Row `row`'s (column, value) entries, zeros and missing values left out, into `indices`
    /// and `values`.
    fn entries(&self, row: usize, indices: &mut Vec<u32>, values: &mut Vec<f64>) {
        indices.clear();
        values.clear();
        for column in 0..self.numbers.n_columns() {
            match self.numbers.get(column, row) {
                Some(value) if value != 0.0 => {
                    // The binding refuses more columns than u32 indices hold.
                    indices.push(column as u32);
                    values.push(value);
                }
                _ => {}
            }
        }
    }
}

impl<N: Numbers> NamespaceRows for NumberRows<N> {
    fn n_rows(&self) -> usize {
        self.numbers.n_rows()
    }

    fn push_into(&self, row: usize, seed: u64, out: &mut ExampleBuffer) -> PolyResult<()> {
        let (mut indices, mut values) = (Vec::new(), Vec::new());
        self.entries(row, &mut indices, &mut values);
        out.push_namespace(seed, &indices, &values, self.first_row + row)
    }

    fn entries_are_plain(&self) -> bool {
        self.plain
    }

    fn fill_block(
        &self,
        rows: &[usize],
        _consecutive: bool,
        seed: u64,
        out: &mut ColumnSink,
    ) -> Result<(), (usize, PolyError)> {
        if !self.plain {
            return out.fill_rows(rows, seed, self.first_row, |row, indices, values| {
                self.entries(row, indices, values)
            });
        }
        // Written as the canonical row's one pass would: increasing indices, each nonzero
        // value narrowed (finite: the values are plain).
        let n_columns = self.numbers.n_columns();
        out.fill_plain(rows, |row, hashes, values| {
            for column in 0..n_columns {
                match self.numbers.get(column, row) {
                    Some(value) if value != 0.0 => {
                        hashes.push((column as u64).wrapping_add(seed));
                        values.push(value as f32);
                    }
                    _ => {}
                }
            }
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learner::{Batch, ExampleShape};
    use crate::sparse::{columns_to_sparse, SparseRows};
    use proptest::prelude::*;

    /// Columns of optional values, one `Vec` each, and their raw values (a missing one NaN or
    /// 0 by turns, as Arrow may hold anything there).
    struct Table(Vec<Vec<Option<f64>>>, Vec<Vec<f64>>);

    impl Table {
        fn new(columns: Vec<Vec<Option<f64>>>) -> Self {
            let raw = |column: &Vec<Option<f64>>| {
                let hidden = |row: usize| if row % 2 == 0 { f64::NAN } else { 0.0 };
                column.iter().enumerate().map(|(row, v)| v.unwrap_or(hidden(row))).collect()
            };
            Table(columns.clone(), columns.iter().map(raw).collect())
        }
    }

    impl Numbers for Table {
        fn n_rows(&self) -> usize {
            self.0.first().map_or(0, Vec::len)
        }

        fn n_columns(&self) -> usize {
            self.0.len()
        }

        fn name(&self, column: usize) -> &str {
            ["c0", "c1", "c2", "c3", "c4"][column]
        }

        fn get(&self, column: usize, row: usize) -> Option<f64> {
            self.0[column][row]
        }

        fn raw_values(&self, column: usize) -> &[f64] {
            &self.1[column]
        }
    }

    fn value() -> impl Strategy<Value = Option<f64>> {
        prop_oneof![
            2 => Just(None),
            1 => Just(Some(0.0)),
            1 => Just(Some(-0.0)),
            12 => (-1e6f64..1e6).prop_map(Some),
            // Beyond single precision: an error; below it: a zero after narrowing.
            1 => prop_oneof![Just(1e300), Just(-1e-300), Just(1e-50)].prop_map(Some),
        ]
    }

    /// Mostly finite values, sometimes not.
    fn finite_or_not() -> impl Strategy<Value = Option<f64>> {
        prop_oneof![
            40 => value(),
            1 => prop_oneof![Just(f64::NAN), Just(f64::INFINITY), Just(f64::NEG_INFINITY)]
                .prop_map(Some),
        ]
    }

    proptest::proptest! {
        /// Numeric columns build the examples (and errors) their `to_sparse` column builds, row
        /// by row and block by block (rows in reverse).
        #[test]
        fn numeric_columns_are_their_sparse_column(
            table in (1usize..5, 1usize..60).prop_flat_map(|(columns, rows)| {
                proptest::collection::vec(proptest::collection::vec(finite_or_not(), rows), columns)
            }),
            seed: u64,
            first_row in 0usize..1000,
        ) {
            let names = &["c0", "c1", "c2", "c3", "c4"][..table.len()];
            let n = table[0].len();
            let get = |column: usize, row: usize| table[column][row];
            // The first value in row order that is not finite in single precision.
            let bad = (0..n).find_map(|row| {
                (0..table.len()).find_map(|column| {
                    let value = get(column, row)?;
                    let finite_in_f32 = value.is_finite() && value.abs() <= f64::from(f32::MAX);
                    (!finite_in_f32).then_some((row, column, value))
                })
            });
            let numbers = match (NumberRows::new(Table::new(table.clone()), first_row), bad) {
                (Ok(numbers), None) => numbers,
                (Err(error), Some((row, column, value))) => {
                    let (name, row) = (names[column], first_row + row);
                    let expected = if value.is_finite() {
                        format!("column {name:?}, row {row}: value {value:e}, beyond the f32 range")
                    } else {
                        format!("column {name:?}, row {row}: non-finite value {value}")
                    };
                    prop_assert_eq!(error.to_string(), expected);
                    return Ok(());
                }
                (ours, bad) => {
                    prop_assert!(false, "{:?} against {:?}", ours.err(), bad);
                    unreachable!()
                }
            };
            let sparse = columns_to_sparse(n, names, 0, get).unwrap();
            let rows = SparseRows::new(&sparse.offsets, &sparse.indices, &sparse.values)
                .unwrap()
                .with_first_row(first_row);
            prop_assert_eq!(numbers.entries_are_plain(), rows.entries_are_plain());
            let labels = vec![1.0; n];
            let (ours, theirs): ([&dyn NamespaceRows; 1], [&dyn NamespaceRows; 1]) =
                ([&numbers], [&rows]);
            let (ours, theirs) =
                (Batch::new(&ours, &labels, None).unwrap(), Batch::new(&theirs, &labels, None).unwrap());
            let (mut a, mut b) = (ExampleBuffer::new(), ExampleBuffer::new());
            for row in 0..n {
                match (ours.example(row, &[seed], &mut a), theirs.example(row, &[seed], &mut b)) {
                    (Ok(x), Ok(y)) => {
                        prop_assert_eq!(x.features(), y.features());
                        prop_assert_eq!(ExampleShape::of(&x), ExampleShape::of(&y));
                    }
                    (Err(x), Err(y)) => prop_assert_eq!(x.to_string(), y.to_string()),
                    (x, y) => prop_assert!(false, "{:?} against {:?}", x.err(), y.err()),
                }
            }
            let order: Vec<usize> = (0..n).rev().collect();
            let (mut from_numbers, mut from_sparse) = (ColumnSink::default(), ColumnSink::default());
            let built = numbers.fill_block(&order, false, seed, &mut from_numbers);
            let expected = rows.fill_block(&order, false, seed, &mut from_sparse);
            match (built, expected) {
                (Ok(()), Ok(())) => prop_assert_eq!(from_numbers.entries(), from_sparse.entries()),
                (Err((p, x)), Err((q, y))) => {
                    prop_assert_eq!(p, q);
                    prop_assert_eq!(x.to_string(), y.to_string());
                }
                (x, y) => prop_assert!(false, "{:?} against {:?}", x.err(), y.err()),
            }
        }
    }
}
