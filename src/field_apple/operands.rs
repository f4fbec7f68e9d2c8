//! What a candidate crosses: an example's fields and, beyond them, the crosses already in the
//! model, each a *joined field* whose values are the combinations of its fields' values.
//!
//! A candidate is a pair of operands. With only fields, it is a cross of two fields; with a
//! joined field `a*b` on one side and a field `c` on the other, it is the cross `a*b*c`, judged
//! by the same judges on the same residual: the joined field's value combinations are to the
//! judges one more field, each combination a feature (hashed from its values' hashes, its value
//! the product of theirs). So a cross of three fields is screened only once a pair of them has
//! joined, at the cost of one field more per joined cross.

use super::Cross;
use crate::learner::example::NamespaceFeatures;
use crate::learner::Example;

/// Value combinations a joined field may have in one example: beyond it (two text columns
/// crossed, say) the joined field is empty in that example, and its candidates are not judged
/// there.
pub const MAX_COMBINATIONS: usize = 64;

/// The value combinations of the crosses in the model, in one example (reused from example to
/// example).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JoinedValues {
    hashes: Vec<u64>,
    values: Vec<f32>,
    /// Each cross's span of `hashes` and `values`, in the order of the model's crosses.
    spans: Vec<(usize, usize)>,
    /// Each probed pair's span ([`super::probes`]), in slot order, and the operand of slot 0.
    probe_spans: Vec<(usize, usize)>,
    probe_base: usize,
}

impl JoinedValues {
    /// The value combinations of `example` for each of `crosses` that `extended` says some
    /// candidate crosses further (the others stay empty).
    pub fn compute(&mut self, example: &Example<'_>, crosses: &[Cross], extended: &[bool]) {
        self.hashes.clear();
        self.values.clear();
        self.spans.clear();
        self.probe_spans.clear();
        for (cross, &wanted) in crosses.iter().zip(extended) {
            let start = self.hashes.len();
            if wanted {
                self.push_combinations(example, &cross.fields);
            }
            self.spans.push((start, self.hashes.len()));
        }
    }

    /// Adds the value combinations of the probed pairs (`None`: an empty slot), operands
    /// `probe_base` on, after [`JoinedValues::compute`].
    pub fn add_probes(
        &mut self,
        example: &Example<'_>,
        pairs: impl Iterator<Item = Option<[usize; 2]>>,
        probe_base: usize,
    ) {
        self.probe_base = probe_base;
        for pair in pairs {
            let start = self.hashes.len();
            if let Some(pair) = pair {
                self.push_combinations(example, &pair);
            }
            self.probe_spans.push((start, self.hashes.len()));
        }
    }

    /// Every combination of one value of each of `fields` (at most [`MAX_COMBINATIONS`]; none
    /// if there would be more, or if a field is empty).
    fn push_combinations(&mut self, example: &Example<'_>, fields: &[usize]) {
        let start = self.hashes.len();
        self.hashes.push(0x2545_F491_4F6C_DD1D);
        self.values.push(1.0);
        for &field in fields {
            let NamespaceFeatures { hashes, values } = example.namespace(field);
            let end = self.hashes.len();
            if hashes.is_empty() || (end - start) * hashes.len() > MAX_COMBINATIONS {
                self.hashes.truncate(start);
                self.values.truncate(start);
                return;
            }
            for i in start..end {
                let (joined, x) = (self.hashes[i], self.values[i]);
                for (&h, &v) in hashes.iter().zip(values) {
                    self.hashes.push(chain(joined, h));
                    self.values.push(x * v);
                }
            }
            self.hashes.drain(start..end);
            self.values.drain(start..end);
        }
    }
}

/// The hash of a combination extended by one value's hash (order matters: the fields of a
/// cross are always in the same order).
#[inline]
fn chain(joined: u64, hash: u64) -> u64 {
    (joined.rotate_left(23) ^ hash).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// The constant operand's one feature (its hash is arbitrary: it is its own operand).
static CONSTANT_HASH: [u64; 1] = [0x5851_F42D_4C95_7F2D];
static ONE: [f32; 1] = [1.0];

/// An example's operands: its fields `0..n_fields`, then the constant (operand `n_fields`, one
/// feature of value 1: crossed with a joined field it is that cross alone, see
/// [`super::screen::Role::Baseline`]), then the model's crosses as joined fields
/// (`n_fields + 1 + j` for cross `j`).
#[derive(Clone, Copy, Debug)]
pub struct Operands<'a> {
    example: &'a Example<'a>,
    joined: &'a JoinedValues,
}

impl<'a> Operands<'a> {
    pub fn new(example: &'a Example<'a>, joined: &'a JoinedValues) -> Self {
        Operands { example, joined }
    }

    /// Fields, the constant, then joined fields (not the probed pairs: only the cells judge
    /// them).
    pub fn len(&self) -> usize {
        self.example.n_namespaces() + 1 + self.joined.spans.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Operand `k`'s features (empty beyond the operands); probed pairs' operands
    /// ([`JoinedValues::add_probes`]) lie beyond [`Operands::len`].
    pub fn get(&self, k: usize) -> NamespaceFeatures<'a> {
        let n_fields = self.example.n_namespaces();
        if !self.joined.probe_spans.is_empty() && k >= self.joined.probe_base {
            return match self.joined.probe_spans.get(k - self.joined.probe_base) {
                Some(&(start, end)) => NamespaceFeatures {
                    hashes: &self.joined.hashes[start..end],
                    values: &self.joined.values[start..end],
                },
                None => NamespaceFeatures { hashes: &[], values: &[] },
            };
        }
        match k.checked_sub(n_fields) {
            None => self.example.namespace(k),
            Some(0) => NamespaceFeatures { hashes: &CONSTANT_HASH, values: &ONE },
            Some(j) => match self.joined.spans.get(j - 1) {
                Some(&(start, end)) => NamespaceFeatures {
                    hashes: &self.joined.hashes[start..end],
                    values: &self.joined.values[start..end],
                },
                None => NamespaceFeatures { hashes: &[], values: &[] },
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learner::example::ExampleBuffer;

    #[test]
    fn a_joined_field_holds_every_combination_of_its_fields_values() {
        let mut buffer = ExampleBuffer::new();
        buffer.push_namespace(0, &[1u32, 2], &[2.0f32, 3.0], 0).unwrap();
        buffer.push_namespace(0, &[7u32], &[5.0f32], 0).unwrap();
        buffer.push_namespace(0, &[4u32, 5, 6], &[1.0f32, 1.0, 0.5], 0).unwrap();
        let example = buffer.finish(0.0, 1.0, 0).unwrap();
        let crosses = [
            Cross { fields: vec![0, 1], added_at: 0 },
            Cross { fields: vec![0, 2], added_at: 0 },
            Cross { fields: vec![1, 2], added_at: 0 },
        ];
        let mut joined = JoinedValues::default();
        joined.compute(&example, &crosses, &[true, true, false]);
        let operands = Operands::new(&example, &joined);
        assert_eq!(operands.len(), 7);
        assert_eq!(operands.get(1).hashes, example.namespace(1).hashes);
        assert_eq!(operands.get(3).values, [1.0]);
        assert_eq!(operands.get(4).values, [10.0, 15.0]);
        let pairs = operands.get(5);
        assert_eq!(pairs.values, [2.0, 2.0, 1.0, 3.0, 3.0, 1.5]);
        let distinct: std::collections::HashSet<_> = pairs.hashes.iter().collect();
        assert_eq!(distinct.len(), 6);
        // Not extended: empty; beyond the operands: empty.
        assert!(operands.get(6).hashes.is_empty() && operands.get(9).hashes.is_empty());
        // The same values in another order of examples hash the same.
        let again = operands.get(4).hashes.to_vec();
        joined.compute(&example, &crosses, &[true, false, false]);
        assert_eq!(Operands::new(&example, &joined).get(4).hashes, &again[..]);
    }

    #[test]
    fn probed_pairs_are_operands_beyond_the_others() {
        let mut buffer = ExampleBuffer::new();
        buffer.push_namespace(0, &[1u32, 2], &[2.0f32, 3.0], 0).unwrap();
        buffer.push_namespace(0, &[7u32], &[5.0f32], 0).unwrap();
        buffer.push_namespace(0, &[4u32], &[1.0f32], 0).unwrap();
        let example = buffer.finish(0.0, 1.0, 0).unwrap();
        let crosses = [Cross { fields: vec![0, 1], added_at: 0 }];
        let mut joined = JoinedValues::default();
        joined.compute(&example, &crosses, &[true]);
        joined.add_probes(&example, [Some([0, 2]), None, Some([1, 2])].into_iter(), 20);
        let operands = Operands::new(&example, &joined);
        assert_eq!(operands.len(), 5, "fields, the constant, one cross; not the probes");
        assert_eq!(operands.get(4).values, [10.0, 15.0]);
        assert_eq!(operands.get(20).values, [2.0, 3.0]);
        assert!(operands.get(21).hashes.is_empty(), "an empty slot");
        assert_eq!(operands.get(22).values, [5.0]);
        assert!(operands.get(23).hashes.is_empty());
        // The same pair's combinations hash as a joined field's would.
        joined.compute(&example, &[Cross { fields: vec![1, 2], added_at: 0 }], &[true]);
        let again = Operands::new(&example, &joined).get(4).hashes.to_vec();
        joined.compute(&example, &crosses, &[true]);
        joined.add_probes(&example, [None, None, Some([1, 2])].into_iter(), 20);
        assert_eq!(Operands::new(&example, &joined).get(22).hashes, &again[..]);
    }

    #[test]
    fn too_many_combinations_leave_the_joined_field_empty() {
        let mut buffer = ExampleBuffer::new();
        let many: Vec<u32> = (0..9).collect();
        let ones = vec![1.0f32; 9];
        buffer.push_namespace(0, &many, &ones, 0).unwrap();
        buffer.push_namespace(0, &many, &ones, 0).unwrap();
        buffer.push_namespace(0, &[3u32], &[1.0f32], 0).unwrap();
        let example = buffer.finish(0.0, 1.0, 0).unwrap();
        let crosses =
            [Cross { fields: vec![0, 1], added_at: 0 }, Cross { fields: vec![0, 2], added_at: 0 }];
        let mut joined = JoinedValues::default();
        joined.compute(&example, &crosses, &[true, true]);
        let operands = Operands::new(&example, &joined);
        assert!(operands.get(4).hashes.is_empty(), "81 > {MAX_COMBINATIONS}");
        assert_eq!(operands.get(5).hashes.len(), 9);
    }
}
