//! The recent examples apple remembers before an expansion: their features and the residual of
//! their progressive prediction. Candidates and their SSM statistics come from these (see
//! [`super::select`]). Apple only remembers the last `capacity` examples before a known
//! expansion point, so most of the run pays nothing for it.

use std::collections::VecDeque;

#[derive(Clone, Debug, Default)]
struct Remembered {
    hashes: Vec<u64>,
    values: Vec<f32>,
    residual: f32,
}

/// A ring of at most `capacity` examples (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct Window {
    capacity: usize,
    examples: VecDeque<Remembered>,
}

impl Window {
    pub fn new(capacity: usize) -> Self {
        Window { capacity, examples: VecDeque::new() }
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    pub fn len(&self) -> usize {
        self.examples.len()
    }

    pub fn is_empty(&self) -> bool {
        self.examples.is_empty()
    }

    /// Remembers one example, forgetting the oldest when full (its buffers are reused).
    pub fn remember(&mut self, hashes: &[u64], values: &[f32], residual: f32) {
        if self.capacity == 0 {
            return;
        }
        let mut slot = if self.examples.len() >= self.capacity {
            self.examples.pop_front().unwrap_or_default()
        } else {
            Remembered::default()
        };
        slot.hashes.clear();
        slot.hashes.extend_from_slice(hashes);
        slot.values.clear();
        slot.values.extend_from_slice(values);
        slot.residual = residual;
        self.examples.push_back(slot);
    }

    pub fn clear(&mut self) {
        self.examples.clear();
    }

    /// `(hashes, values, residual)` of the remembered examples, newest first.
    pub fn newest_first(&self) -> impl Iterator<Item = (&[u64], &[f32], f32)> {
        self.examples.iter().rev().map(|e| (&e.hashes[..], &e.values[..], e.residual))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_newest_examples() {
        let mut w = Window::new(2);
        for k in 0..5u64 {
            w.remember(&[k], &[k as f32], k as f32);
        }
        let got: Vec<u64> = w.newest_first().map(|(h, _, _)| h[0]).collect();
        assert_eq!(got, vec![4, 3]);
        let mut none = Window::new(0);
        none.remember(&[1], &[1.0], 0.0);
        assert!(none.is_empty());
    }
}
