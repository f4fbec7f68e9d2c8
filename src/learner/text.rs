//! Columns of strings as namespaces, hashed as `hash_features` hashes them with the model's
//! `bits` ([`crate::hashing::columns`]): each string `s` of column `c` is the feature of index
//! `mask(h(s, h(c)), bits)` and value 1, then seeded like any sparse column's index. A string
//! column holds one string a row; a column of token lists a bag of them, a repeated token
//! counting its occurrences ([`HashedStrings`] over either [`Strings`] source). A model learns from raw categorical and
//! text columns with no sparse column in between, and always with its own `bits`. A missing
//! string, list or token is no feature (as in `hash_features`).
//!
//! Hashing here, on the thread that builds the examples, saves building the sparse columns:
//! 20 bytes a row a field of fresh memory written by the query and read back by the learner
//! (issue 21's end-to-end fit from parquet: 2.89 s against 3.52 s, `benches/string_columns.py`).

use super::batch::{ColumnSink, NamespaceRows};
use super::example::ExampleBuffer;
use crate::error::{PolyError, PolyResult};
use crate::hashing::columns::check_bits;
use crate::hashing::{categorical_index, column_namespace_hash};

/// The strings of a column, row by row (the binding's view of an Arrow string or list array).
pub trait Strings: Sync {
    /// At most one string a row (a string column): its rows are written straight, with no bag
    /// of features to sort and sum.
    const ONE_A_ROW: bool;
    fn n_rows(&self) -> usize;
    /// Calls `visit` with each string of row `row` in order (none when the row is missing; a
    /// missing token is skipped).
    fn for_each(&self, row: usize, visit: impl FnMut(&str));
}

/// A column of strings hashed into a table of `2^bits` slots.
pub struct HashedStrings<S> {
    strings: S,
    namespace: u32,
    bits: u32,
}

impl<S: Strings> HashedStrings<S> {
    /// The column `name`'s strings, hashed into `bits` bits (seed 0, as `hash_features`'
    /// default).
    pub fn new(name: &str, strings: S, bits: u32) -> PolyResult<Self> {
        check_bits(bits)?;
        Ok(Self { strings, namespace: column_namespace_hash(name, 0), bits })
    }

    /// Row `row`'s only feature index (a column of one string a row), `None` when missing.
    #[inline]
    fn single(&self, row: usize) -> Option<u64> {
        let mut index = None;
        self.strings.for_each(row, |text| {
            index = Some(categorical_index(text, self.namespace, self.bits));
        });
        index
    }

    /// Row `row`'s feature indices, in order (repeats kept), into `out`.
    fn bag(&self, row: usize, out: &mut Vec<u64>) {
        out.clear();
        self.strings.for_each(row, |text| {
            out.push(categorical_index(text, self.namespace, self.bits));
        });
    }
}

impl<S: Strings> NamespaceRows for HashedStrings<S> {
    fn n_rows(&self) -> usize {
        self.strings.n_rows()
    }

    fn push_into(&self, row: usize, seed: u64, out: &mut ExampleBuffer) -> PolyResult<()> {
        if S::ONE_A_ROW {
            let index = self.single(row);
            let n = usize::from(index.is_some());
            return out.push_namespace(seed, &[index.unwrap_or(0)][..n], &[1.0f32][..n], row);
        }
        let mut indices = Vec::new();
        self.bag(row, &mut indices);
        out.push_namespace(seed, &indices, &vec![1.0f32; indices.len()], row)
    }

    fn entries_are_plain(&self) -> bool {
        true
    }

    fn fill_block(
        &self,
        rows: &[usize],
        _consecutive: bool,
        seed: u64,
        out: &mut ColumnSink,
    ) -> Result<(), (usize, PolyError)> {
        if S::ONE_A_ROW {
            out.fill_single(rows, seed, |row| self.single(row));
            return Ok(());
        }
        out.fill_bags(rows, seed, |row, indices| self.bag(row, indices))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hashing::columns::{hash_columns, hash_one_categorical, FeatureColumn};
    use crate::learner::{Batch, ExampleShape};
    use crate::sparse::{SparseMatrix, SparseRows};

    impl Strings for Vec<Option<String>> {
        const ONE_A_ROW: bool = true;

        fn n_rows(&self) -> usize {
            self.len()
        }

        fn for_each(&self, row: usize, mut visit: impl FnMut(&str)) {
            if let Some(text) = &self[row] {
                visit(text);
            }
        }
    }

    /// Rows of token lists, a missing token as `None`.
    type Bags = Vec<Option<Vec<Option<String>>>>;

    impl Strings for Bags {
        const ONE_A_ROW: bool = false;

        fn n_rows(&self) -> usize {
            self.len()
        }

        fn for_each(&self, row: usize, mut visit: impl FnMut(&str)) {
            self[row].iter().flatten().flatten().for_each(|token| visit(token));
        }
    }

    /// Row by row and block by block (rows in reverse), `rows` build the examples `hashed`'s
    /// rows build.
    fn builds_as_hashed(
        rows: &dyn NamespaceRows,
        hashed: &SparseMatrix<u32, f64>,
        seed: u64,
    ) -> Result<(), proptest::test_runner::TestCaseError> {
        let sparse = SparseRows::new(&hashed.offsets, &hashed.indices, &hashed.values).unwrap();
        let n = sparse.n_rows();
        proptest::prop_assert_eq!(rows.n_rows(), n);
        let (mut a, mut b) = (ExampleBuffer::new(), ExampleBuffer::new());
        let labels = vec![1.0; n];
        let (of_rows, of_sparse): ([&dyn NamespaceRows; 1], [&dyn NamespaceRows; 1]) =
            ([rows], [&sparse]);
        let batch = Batch::new(&of_rows, &labels, None).unwrap();
        let sparse_batch = Batch::new(&of_sparse, &labels, None).unwrap();
        for row in 0..n {
            let x = batch.example(row, &[seed], &mut a).unwrap();
            let y = sparse_batch.example(row, &[seed], &mut b).unwrap();
            proptest::prop_assert_eq!(x.features(), y.features());
            proptest::prop_assert_eq!(ExampleShape::of(&x), ExampleShape::of(&y));
        }
        let order: Vec<usize> = (0..n).rev().collect();
        let (mut from_rows, mut from_sparse) = (ColumnSink::default(), ColumnSink::default());
        rows.fill_block(&order, false, seed, &mut from_rows).unwrap();
        sparse.fill_block(&order, false, seed, &mut from_sparse).unwrap();
        proptest::prop_assert_eq!(from_rows.entries(), from_sparse.entries());
        Ok(())
    }

    proptest::proptest! {
        /// A string column builds the examples its `hash_features` column builds.
        #[test]
        fn a_string_column_is_its_hashed_column(
            texts in proptest::collection::vec(proptest::option::of("[ a-c0-9]{0,5}"), 1..300),
            bits in 1u32..=32,
            seed: u64,
        ) {
            let hashed = hash_one_categorical("kind", texts.iter().map(Option::as_deref), bits, 0)
                .unwrap();
            builds_as_hashed(&HashedStrings::new("kind", texts, bits).unwrap(), &hashed, seed)?;
        }

        /// A column of token lists (repeats, missing lists and tokens) builds the examples its
        /// `hash_features` column builds.
        #[test]
        fn a_token_list_column_is_its_hashed_column(
            bags in proptest::collection::vec(
                proptest::option::of(proptest::collection::vec(
                    proptest::option::of("[a-d]{0,2}"), 0..6)),
                1..200),
            bits in 1u32..=32,
            seed: u64,
        ) {
            let column = FeatureColumn::Categorical {
                name: "words",
                values: Box::new(|row: usize, visit: &mut dyn FnMut(&str)| {
                    bags[row].iter().flatten().flatten().for_each(|token| visit(token))
                }),
            };
            let hashed = hash_columns(bags.len(), &[column], bits, 0).unwrap();
            builds_as_hashed(&HashedStrings::new("words", bags.clone(), bits).unwrap(), &hashed, seed)?;
        }
    }

    #[test]
    fn bits_out_of_range_are_refused() {
        for bits in [0, 33] {
            let error = HashedStrings::new("kind", Bags::new(), bits).err().unwrap();
            assert!(error.to_string().contains("bits must be in 1..=32"), "{error}");
        }
    }
}
