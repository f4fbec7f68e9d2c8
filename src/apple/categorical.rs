//! Which namespaces are *categorical* (every learned example has at most one feature there, of
//! value 1: a hashed categorical field), for apple with field crosses.
//!
//! On a categorical field apple's monomials are value-level crosses: a parent is one category
//! value (ranked by its own weight, its main effect) and its children that value times every
//! other feature. When field crosses are screened beside apple, crosses of categorical fields are
//! judged whole on the residual (a cross whose values say nothing alone is found, which no
//! ranking of single values by weight can do), and each of their value pairs gets its own
//! weight; monomial parents taken from such fields only add noisy duplicates of those
//! features, and their walk costs every example (measured on eat-rate and click,
//! notes/benchmarks_log.md). So apple with field crosses takes its parents from the other
//! namespaces only.
//!
//! Nor are a categorical field's values factors of children (model format 8 on): a parent
//! times one category value is a value-level cross too, and the field crosses judge the cross
//! of the parent's namespace with that field whole (a slope per category, `N*A`, is found so).
//! Multiplied into every parent, the values of high-cardinality fields made many rare children
//! per example, each taking a full adaptive step when first seen: beside four noise fields the
//! progressive logloss of apple's monomials rose to 7.5 where the linear model's was 0.57
//! (notes/apple_experiments.md, "Numeric columns beside categorical fields"). Models saved by
//! formats 6 and 7 keep multiplying every feature, as they were trained.

use crate::codec::{bad, ByteReader, ByteWriter};
use crate::error::PolyResult;
use crate::learner::example::FeatureUnion;
use crate::learner::{Example, ExampleShape};

/// Most namespaces a stored model may list (guards allocation).
const MAX_STORED_NAMESPACES: usize = 1 << 20;

/// Per namespace, whether every learned example so far was categorical there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CategoricalNamespaces {
    /// Grown to the example's namespace count on first sight (a namespace not yet seen counts
    /// as categorical).
    categorical: Vec<bool>,
    /// Whether the categorical features are left out of children too (see the module docs);
    /// false in models saved by formats 6 and 7.
    not_factors: bool,
}

impl Default for CategoricalNamespaces {
    fn default() -> Self {
        CategoricalNamespaces { categorical: Vec::new(), not_factors: true }
    }
}

impl CategoricalNamespaces {
    /// As a model saved by format 6 or 7 left them: parents only, children of every feature.
    pub fn parents_only(mut self) -> Self {
        self.not_factors = false;
        self
    }

    /// Whether children multiply the non-categorical features only.
    pub fn not_factors(&self) -> bool {
        self.not_factors
    }

    /// Notes the namespaces of a learned example.
    #[inline]
    pub fn observe(&mut self, example: &Example<'_>) {
        let n = example.n_namespaces();
        if self.categorical.len() < n {
            self.categorical.resize(n, true);
        }
        for (k, categorical) in self.categorical.iter_mut().enumerate().take(n) {
            if *categorical {
                let namespace = example.namespace(k);
                *categorical = match namespace.values {
                    [] => true,
                    [value] => *value == 1.0,
                    _ => false,
                };
            }
        }
    }

    /// Whether noting an example of shape `shape` leaves the notes as they are: it is
    /// categorical, and its namespaces have been seen.
    pub fn unchanged_by(&self, shape: &ExampleShape) -> bool {
        shape.categorical && self.categorical.len() >= shape.n_namespaces
    }

    /// Whether every namespace seen so far is categorical (apple then has no candidate parent).
    pub fn all_categorical(&self) -> bool {
        !self.categorical.is_empty() && self.categorical.iter().all(|&c| c)
    }

    pub fn is_categorical(&self, k: usize) -> bool {
        self.categorical.get(k).copied().unwrap_or(true)
    }

    /// Both models' notes as one: categorical only where both saw it so (a namespace one has
    /// not seen counts as categorical, as in [`CategoricalNamespaces::is_categorical`]). `None`
    /// when one leaves the categorical features out of children and the other does not.
    pub fn merged(&self, other: &Self) -> Option<Self> {
        if self.not_factors != other.not_factors {
            return None;
        }
        let n = self.categorical.len().max(other.categorical.len());
        let categorical =
            (0..n).map(|k| self.is_categorical(k) && other.is_categorical(k)).collect();
        Some(CategoricalNamespaces { categorical, not_factors: self.not_factors })
    }

    /// The union of `example`'s non-categorical namespaces (sorted, equal hashes summed),
    /// built in `union`; the example's own feature set when none is categorical.
    pub(crate) fn other_features<'u, 'a: 'u>(
        &self,
        example: &Example<'a>,
        union: &'u mut FeatureUnion,
    ) -> (&'u [u64], &'u [f32]) {
        if (0..example.n_namespaces()).all(|k| !self.is_categorical(k)) {
            return example.features();
        }
        union.build_of(example, |k| !self.is_categorical(k));
        union.features()
    }

    /// Count `u32`, then one flag byte per namespace.
    pub fn write(&self, w: &mut ByteWriter) {
        w.u32(self.categorical.len() as u32);
        for &categorical in &self.categorical {
            w.flag(categorical);
        }
    }

    /// The flags [`CategoricalNamespaces::write`] stored; `not_factors` is told by the caller.
    pub fn read(r: &mut ByteReader<'_>) -> PolyResult<Self> {
        let n = r.u32("apple categorical namespace count")? as usize;
        if n > MAX_STORED_NAMESPACES.min(r.remaining()) {
            return Err(bad(format!("apple categorical namespace count {n} is too large")));
        }
        let categorical =
            (0..n).map(|_| r.flag("apple categorical flag")).collect::<PolyResult<Vec<_>>>()?;
        Ok(CategoricalNamespaces { categorical, not_factors: true })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learner::ExampleBuffer;

    fn example<'a>(buffer: &'a mut ExampleBuffer, namespaces: &[(&[u32], &[f32])]) -> Example<'a> {
        buffer.clear();
        for (k, (indices, values)) in namespaces.iter().enumerate() {
            buffer.push_namespace(100 * k as u64, indices, values, 0).unwrap();
        }
        buffer.finish(1.0, 1.0, 0).unwrap()
    }

    #[test]
    fn a_namespace_stays_categorical_until_a_row_has_two_features_or_another_value() {
        let mut seen = CategoricalNamespaces::default();
        let mut buffer = ExampleBuffer::new();
        seen.observe(&example(&mut buffer, &[(&[3], &[1.0]), (&[4], &[1.0]), (&[], &[])]));
        assert!((0..4).all(|k| seen.is_categorical(k)));
        seen.observe(&example(
            &mut buffer,
            &[(&[5], &[1.0]), (&[4, 7], &[1.0, 1.0]), (&[1], &[0.5])],
        ));
        assert!(seen.is_categorical(0));
        assert!(!seen.is_categorical(1) && !seen.is_categorical(2));
        // Once not categorical, always.
        seen.observe(&example(&mut buffer, &[(&[5], &[1.0]), (&[4], &[1.0]), (&[1], &[1.0])]));
        assert!(!seen.is_categorical(1) && !seen.is_categorical(2));
    }

    #[test]
    fn other_features_are_the_sorted_union_of_the_other_namespaces() {
        let mut seen = CategoricalNamespaces::default();
        let mut buffer = ExampleBuffer::new();
        let ex =
            example(&mut buffer, &[(&[9], &[1.0]), (&[7, 2], &[0.5, 2.0]), (&[3, 1], &[1.0, 4.0])]);
        seen.observe(&ex);
        let mut union = FeatureUnion::default();
        let (hashes, values) = seen.other_features(&ex, &mut union);
        // Namespace 0 (seed 0) is categorical; 1 has seed 100, 2 seed 200.
        assert_eq!(hashes, &[102, 107, 201, 203]);
        assert_eq!(values, &[2.0, 0.5, 4.0, 1.0]);
        // With no namespace categorical, the example's own feature set.
        let mut none = CategoricalNamespaces::default();
        let pairs: [(&[u32], &[f32]); 3] =
            [(&[9, 1], &[1.0, 1.0]), (&[7, 2], &[0.5, 2.0]), (&[3, 1], &[1.0, 4.0])];
        none.observe(&example(&mut buffer, &pairs));
        let ex =
            example(&mut buffer, &[(&[9], &[1.0]), (&[7, 2], &[0.5, 2.0]), (&[3, 1], &[1.0, 4.0])]);
        assert_eq!(none.other_features(&ex, &mut union), ex.features());
        assert_eq!(none.other_features(&ex, &mut union).0, &[9, 102, 107, 201, 203]);
    }

    #[test]
    fn round_trips_and_refuses_a_huge_count() {
        let mut seen = CategoricalNamespaces::default();
        let mut buffer = ExampleBuffer::new();
        seen.observe(&example(&mut buffer, &[(&[3], &[1.0]), (&[4, 5], &[1.0, 1.0])]));
        let mut w = ByteWriter::new();
        seen.write(&mut w);
        let bytes = w.into_bytes();
        let read = CategoricalNamespaces::read(&mut ByteReader::new(&bytes, 0, "t")).unwrap();
        assert_eq!(read, seen);
        let mut w = ByteWriter::new();
        w.u32(u32::MAX);
        let bytes = w.into_bytes();
        assert!(CategoricalNamespaces::read(&mut ByteReader::new(&bytes, 0, "t")).is_err());
    }
}
