//! The most recent learned examples, kept for an enumerator that grows to *catch up* on them
//! ([`super::Expansion::recent_examples_wanted`]): a feature that joins the model mid-stream
//! (a field cross found after 100k rows) has missed every example before it; replaying the
//! recent ones for it alone gives it the steps it would have taken.
//!
//! Examples are copied (their namespaces' canonical hashes and values, label and importance
//! weight) into chunks of [`CHUNK_EXAMPLES`]; when the chunks after the oldest hold as many as
//! asked, or more than [`MAX_FEATURES`] features are kept, the oldest chunk is dropped (and
//! reused). Only the last examples asked for are visited.

use std::collections::VecDeque;

use super::example::{Example, FeatureUnion, Union};

/// How far ahead of the writing position [`RecentExamples::push`] prefetches each array.
const WRITE_AHEAD_BYTES: usize = 1024;

/// Examples per chunk: the unit in which the oldest examples are forgotten.
pub const CHUNK_EXAMPLES: usize = 4096;

/// Most base features kept (2^22: 48 MiB of hashes and values), whatever the number of examples
/// asked: examples with many features are kept for fewer rows.
pub const MAX_FEATURES: usize = 1 << 22;

/// One chunk of examples, namespaces end to end.
#[derive(Clone, Debug, Default)]
struct Chunk {
    labels: Vec<f64>,
    weights: Vec<f64>,
    /// Per example, its number of namespaces.
    namespaces: Vec<u32>,
    /// Per namespace of each example, its number of features in `hashes` / `values`.
    lengths: Vec<u32>,
    hashes: Vec<u64>,
    values: Vec<f32>,
}

impl Chunk {
    fn len(&self) -> usize {
        self.labels.len()
    }

    fn clear(&mut self) {
        self.labels.clear();
        self.weights.clear();
        self.namespaces.clear();
        self.lengths.clear();
        self.hashes.clear();
        self.values.clear();
    }
}

/// The recent learned examples, oldest first (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct RecentExamples {
    chunks: VecDeque<Chunk>,
    /// A dropped chunk, kept for reuse.
    spare: Option<Chunk>,
    examples: usize,
    features: usize,
    /// The examples asked for at the last push.
    most: usize,
}

impl RecentExamples {
    /// The examples kept and asked for (those [`RecentExamples::try_for_each`] visits).
    pub fn len(&self) -> usize {
        self.examples.min(self.most)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many examples the last push asked to keep.
    pub fn most(&self) -> usize {
        self.most
    }

    /// Forgets every example and frees the memory.
    pub fn clear(&mut self) {
        *self = RecentExamples::default();
    }

    /// Keeps a copy of `example` among the last `most`, then drops the oldest chunks while the
    /// others hold `most` examples or more than [`MAX_FEATURES`] features are kept.
    pub fn push(&mut self, example: &Example<'_>, most: usize) {
        self.most = most;
        if self.chunks.back().is_none_or(|c| c.len() >= CHUNK_EXAMPLES) {
            let mut chunk = self.spare.take().unwrap_or_default();
            chunk.clear();
            self.chunks.push_back(chunk);
        }
        let Some(chunk) = self.chunks.back_mut() else { return };
        chunk.labels.push(example.label);
        chunk.weights.push(example.weight);
        let n = example.n_namespaces();
        chunk.namespaces.push(n as u32);
        for k in 0..n {
            let namespace = example.namespace(k);
            chunk.lengths.push(namespace.hashes.len() as u32);
            // Element by element: a namespace is often one feature (a categorical field), where
            // a `memcpy` call per slice costs more than the copy.
            for (&hash, &value) in namespace.hashes.iter().zip(namespace.values) {
                chunk.hashes.push(hash);
                chunk.values.push(value);
            }
            self.features += namespace.hashes.len();
        }
        // The chunks are larger than the cache: the lines a few examples ahead are fetched
        // now, so that writing them does not wait on memory (measured: without this, keeping
        // eat-rate's examples cost 20% of the fit).
        let ahead = |len: usize| len + WRITE_AHEAD_BYTES;
        crate::memory::prefetch(
            chunk.hashes.as_ptr().wrapping_byte_add(ahead(8 * chunk.hashes.len())),
        );
        crate::memory::prefetch(
            chunk.values.as_ptr().wrapping_byte_add(ahead(4 * chunk.values.len())),
        );
        crate::memory::prefetch(
            chunk.lengths.as_ptr().wrapping_byte_add(ahead(4 * chunk.lengths.len())),
        );
        self.examples += 1;
        // The newest chunk is never dropped; an older one is once the chunks after it hold the
        // `most` asked (or the features are too many).
        while self.chunks.len() > 1 {
            let oldest = self.chunks.front().map_or(0, Chunk::len);
            if self.examples - oldest < most && self.features <= MAX_FEATURES {
                break;
            }
            if let Some(oldest) = self.chunks.pop_front() {
                self.examples -= oldest.len();
                self.features -= oldest.hashes.len();
                self.spare = Some(oldest);
            }
        }
    }

    /// Calls `visit` on each of the last [`RecentExamples::len`] examples, oldest first, building
    /// its feature set into `union` when `with_union` (see
    /// [`super::Expansion::uses_feature_set`]); stops at the first error.
    pub(crate) fn try_for_each<Err>(
        &self,
        with_union: bool,
        union: &mut FeatureUnion,
        mut visit: impl FnMut(&Example<'_>) -> Result<(), Err>,
    ) -> Result<(), Err> {
        let mut spans = Vec::new();
        let mut skip = self.examples - self.len();
        for chunk in &self.chunks {
            let (mut namespace, mut feature) = (0, 0);
            for (i, &n) in chunk.namespaces.iter().enumerate() {
                if skip > 0 {
                    skip -= 1;
                    namespace += n as usize;
                    feature += chunk.lengths[namespace - n as usize..namespace]
                        .iter()
                        .map(|&l| l as usize)
                        .sum::<usize>();
                    continue;
                }
                spans.clear();
                for &length in &chunk.lengths[namespace..namespace + n as usize] {
                    spans.push((feature, feature + length as usize));
                    feature += length as usize;
                }
                namespace += n as usize;
                let union = if with_union { Union::Build(union) } else { Union::Skip };
                let example = Example::assemble(
                    chunk.labels[i],
                    chunk.weights[i],
                    &spans,
                    &chunk.hashes,
                    &chunk.values,
                    union,
                );
                visit(&example)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learner::ExampleBuffer;

    fn example_of(buffer: &mut ExampleBuffer, i: u32, namespaces: usize) -> Example<'_> {
        buffer.clear();
        for k in 0..namespaces {
            let values = [1.0, f32::from(k as u8) + 0.5];
            buffer.push_namespace(k as u64 * 1000, &[i, i + 1], &values, 0).unwrap();
        }
        buffer.finish(f64::from(i), 1.0 + f64::from(i % 3), 0).unwrap()
    }

    #[test]
    fn keeps_the_most_recent_examples_in_order_within_whole_chunks() {
        let mut recent = RecentExamples::default();
        let mut buffer = ExampleBuffer::new();
        let n = 3 * CHUNK_EXAMPLES as u32 + 5;
        for i in 0..n {
            let example = example_of(&mut buffer, i, 2);
            recent.push(&example, CHUNK_EXAMPLES + 1);
        }
        // Two chunks are kept (CHUNK_EXAMPLES + 1 rounded up): the last full one and the partial
        // one; the last CHUNK_EXAMPLES + 1 examples are visited.
        assert_eq!(recent.examples, CHUNK_EXAMPLES + 5);
        assert_eq!(recent.len(), CHUNK_EXAMPLES + 1);
        let mut seen = Vec::new();
        let mut union = FeatureUnion::default();
        recent
            .try_for_each(true, &mut union, |example| {
                let i = example.label as u32;
                assert_eq!(example.weight, 1.0 + f64::from(i % 3));
                assert_eq!(example.n_namespaces(), 2);
                assert_eq!(
                    example.namespace(1).hashes,
                    &[1000 + u64::from(i), 1001 + u64::from(i)]
                );
                assert_eq!(example.namespace(1).values, &[1.0, 1.5]);
                assert_eq!(example.features().0.len(), 4);
                seen.push(i);
                Ok::<(), ()>(())
            })
            .unwrap();
        let expected: Vec<u32> = (n - recent.len() as u32..n).collect();
        assert_eq!(seen, expected);
    }

    /// Whatever the count asked and however the stream falls into chunks, the last `most`
    /// examples (all of them while fewer came) are kept, in at most one chunk more than needed.
    /// (Dropping by whole chunks counted from the newest, partial one kept as few as 1 of 4,096
    /// asked.)
    #[test]
    fn keeps_exactly_the_last_examples_asked() {
        let mut buffer = ExampleBuffer::new();
        for most in [1, 100, CHUNK_EXAMPLES - 1, CHUNK_EXAMPLES, CHUNK_EXAMPLES + 1, 7_000] {
            let mut recent = RecentExamples::default();
            for i in 0..(3 * CHUNK_EXAMPLES + 17) as u32 {
                recent.push(&example_of(&mut buffer, i, 1), most);
                let seen = i as usize + 1;
                assert_eq!(recent.len(), seen.min(most), "most {most}, after {seen}");
                assert!(recent.chunks.len() <= most.div_ceil(CHUNK_EXAMPLES) + 1);
            }
            let mut last = None;
            let mut union = FeatureUnion::default();
            recent
                .try_for_each(false, &mut union, |example| {
                    last = Some(example.label);
                    Ok::<(), ()>(())
                })
                .unwrap();
            assert_eq!(last, Some((3 * CHUNK_EXAMPLES + 16) as f64));
        }
    }

    #[test]
    fn keeps_at_most_the_feature_limit() {
        let mut recent = RecentExamples::default();
        let mut buffer = ExampleBuffer::new();
        let wide: Vec<u32> = (0..1024).collect();
        let ones = vec![1.0f32; wide.len()];
        for i in 0..(2 * MAX_FEATURES / wide.len()) {
            buffer.clear();
            buffer.push_namespace(0, &wide, &ones, 0).unwrap();
            let example = buffer.finish(i as f64, 1.0, 0).unwrap();
            recent.push(&example, usize::MAX);
        }
        assert!(recent.features <= MAX_FEATURES);
        assert!(recent.features > MAX_FEATURES - CHUNK_EXAMPLES * wide.len());
        assert_eq!(recent.len() * wide.len(), recent.features);
    }

    #[test]
    fn stops_at_the_first_error() {
        let mut recent = RecentExamples::default();
        let mut buffer = ExampleBuffer::new();
        for i in 0..10 {
            let example = example_of(&mut buffer, i, 1);
            recent.push(&example, 100);
        }
        let mut visited = 0;
        let result = recent.try_for_each(false, &mut FeatureUnion::default(), |example| {
            visited += 1;
            if example.label == 3.0 {
                Err("stop")
            } else {
                Ok(())
            }
        });
        assert_eq!((result, visited), (Err("stop"), 4));
    }
}
