//! A column of strings as a namespace: each row's string is one feature of value 1, hashed as
//! `hash_features` hashes a string column
//! ([`hash_one_categorical`](crate::hashing::columns::hash_one_categorical) with the model's
//! `bits`): index `mask(h(value, h(column name)), bits)`, then seeded like any sparse column's
//! index. A model learns from raw categorical columns with no sparse column in between, and
//! always with its own `bits`. A missing string is no feature (as in `hash_features`).
//!
//! Hashing here, on the thread that builds the examples, saves building the sparse column:
//! 20 bytes a row of fresh memory written by the query and read back by the learner (issue 21's
//! end-to-end fit from parquet).

use super::batch::{ColumnSink, NamespaceRows};
use super::example::ExampleBuffer;
use crate::error::{PolyError, PolyResult};
use crate::hashing::{categorical_index, column_namespace_hash, MAX_HASH_BITS};

/// The strings of a column, row by row (the binding's view of an Arrow string array).
pub trait Texts: Sync {
    fn n_rows(&self) -> usize;
    /// Row `row`'s string, `None` when missing.
    fn get(&self, row: usize) -> Option<&str>;
    /// Prefetches what rows `start..end` will read (a block the builder reads soon).
    fn prefetch(&self, _start: usize, _end: usize) {}
}

/// A string column hashed into a table of `2^bits` slots.
pub struct TextRows<T> {
    texts: T,
    namespace: u32,
    bits: u32,
}

impl<T: Texts> TextRows<T> {
    /// The column `name`'s strings `texts`, hashed into `bits` bits (seed 0, as
    /// `hash_features`' default).
    pub fn new(name: &str, texts: T, bits: u32) -> PolyResult<Self> {
        if !(1..=MAX_HASH_BITS).contains(&bits) {
            return crate::invalid!("bits must be in 1..={MAX_HASH_BITS}, got {bits}");
        }
        Ok(Self { texts, namespace: column_namespace_hash(name, 0), bits })
    }

    /// Row `row`'s feature index, `None` when its string is missing.
    #[inline]
    fn index(&self, row: usize) -> Option<u64> {
        self.texts.get(row).map(|text| categorical_index(text, self.namespace, self.bits))
    }
}

impl<T: Texts> NamespaceRows for TextRows<T> {
    fn n_rows(&self) -> usize {
        self.texts.n_rows()
    }

    fn push_into(&self, row: usize, seed: u64, out: &mut ExampleBuffer) -> PolyResult<()> {
        let index = self.index(row);
        let n = usize::from(index.is_some());
        out.push_namespace(seed, &[index.unwrap_or(0)][..n], &[1.0f32][..n], row)
    }

    fn entries_are_plain(&self) -> bool {
        true
    }

    fn prefetch_rows(&self, start: usize, end: usize) {
        self.texts.prefetch(start, end.min(self.texts.n_rows()));
    }

    fn fill_block(
        &self,
        rows: &[usize],
        _consecutive: bool,
        seed: u64,
        out: &mut ColumnSink,
    ) -> Result<(), (usize, PolyError)> {
        out.fill_single(rows, seed, |row| self.index(row));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hashing::columns::hash_one_categorical;
    use crate::learner::{Batch, ExampleShape};
    use crate::sparse::SparseRows;

    impl Texts for Vec<Option<String>> {
        fn n_rows(&self) -> usize {
            self.len()
        }

        fn get(&self, row: usize) -> Option<&str> {
            self[row].as_deref()
        }
    }

    proptest::proptest! {
        /// Row by row and block by block, a string column builds the examples its
        /// `hash_features` column builds.
        #[test]
        fn a_string_column_is_its_hashed_column(
            texts in proptest::collection::vec(proptest::option::of("[ a-c0-9]{0,5}"), 1..300),
            bits in 1u32..=32,
            seed: u64,
        ) {
            let hashed = hash_one_categorical("kind", texts.iter().map(Option::as_deref), bits, 0)
                .unwrap();
            let sparse = SparseRows::new(&hashed.offsets, &hashed.indices, &hashed.values).unwrap();
            let text = TextRows::new("kind", texts.clone(), bits).unwrap();
            let (mut a, mut b) = (ExampleBuffer::new(), ExampleBuffer::new());
            let labels = vec![1.0; texts.len()];
            for row in 0..texts.len() {
                let of_text: [&dyn NamespaceRows; 1] = [&text];
                let of_sparse: [&dyn NamespaceRows; 1] = [&sparse];
                let text_batch = Batch::new(&of_text, &labels, None).unwrap();
                let sparse_batch = Batch::new(&of_sparse, &labels, None).unwrap();
                let x = text_batch.example(row, &[seed], &mut a).unwrap();
                let y = sparse_batch.example(row, &[seed], &mut b).unwrap();
                proptest::prop_assert_eq!(x.features(), y.features());
                proptest::prop_assert_eq!(ExampleShape::of(&x), ExampleShape::of(&y));
            }
            let rows: Vec<usize> = (0..texts.len()).rev().collect();
            let (mut from_text, mut from_sparse) = (ColumnSink::default(), ColumnSink::default());
            text.fill_block(&rows, false, seed, &mut from_text).unwrap();
            sparse.fill_block(&rows, false, seed, &mut from_sparse).unwrap();
            proptest::prop_assert_eq!(from_text.entries(), from_sparse.entries());
        }
    }

    #[test]
    fn bits_out_of_range_are_refused() {
        for bits in [0, 33] {
            let error = TextRows::new("kind", vec![Some("a".to_string())], bits).err().unwrap();
            assert!(error.to_string().contains("bits must be in 1..=32"), "{error}");
        }
    }
}
