//! Vowpal Wabbit's `--audit`: for each example, before it is learned, its prediction (as `-p`
//! writes it) and, on the next line, every feature the learner sees, tab-separated, as
//! `name:slot:value:weight` (`@G`, the slot's sum of squared gradients, with the adaptive rule),
//! the largest `|w x|` first (a stable sort, so ties keep the learner's order). Names are the
//! text's (`ns^word`, crosses `a^x*b^y`, `Constant`); rows read from a cache have none
//! (`:slot:...`), as in Vowpal Wabbit.

use super::invert_hash::for_each_product;
use super::readable::g;
use crate::error::PolyResult;
use crate::hashing::CONSTANT_FEATURE;
use crate::learner::update::trunc_weight;
use crate::learner::{Expansion, Interactions, Learner};
use crate::readers::vw::VwColumns;

/// The audit of fixed interactions (`expansion`'s block form: linear terms, constant, crosses).
pub struct Auditor {
    interactions: Interactions,
    seeds: Vec<u64>,
}

impl Auditor {
    /// The auditor of `learner`'s features; an error when they are not fixed interactions.
    pub fn new<E: Expansion>(learner: &Learner<E>) -> PolyResult<Self> {
        let Some(interactions) = learner.expansion().block_expansion() else {
            return crate::invalid!(
                "--audit lists linear features, the constant and namespace crosses: not this \
                 model's features"
            );
        };
        let config = learner.config();
        let seeds = (0..config.namespaces.len()).map(|k| config.namespace_seed(k)).collect();
        Ok(Auditor { interactions, seeds })
    }

    /// The features line of row `row` of `batch` (without the leading prediction line) for
    /// `learner` as it is now.
    pub fn features<E: Expansion>(
        &self,
        learner: &Learner<E>,
        batch: &VwColumns,
        row: usize,
    ) -> String {
        let columns: Vec<Vec<(u64, &str)>> = batch
            .columns
            .iter()
            .enumerate()
            .map(|(k, column)| {
                let (start, end) = (column.offsets[row] as usize, column.offsets[row + 1] as usize);
                let names = batch.names.get(k);
                (start..end)
                    .map(|e| {
                        let hash = u64::from(column.indices[e]).wrapping_add(self.seeds[k]);
                        (hash, names.map_or("", |names| names[e].as_str()))
                    })
                    .collect()
            })
            .collect();
        let values = |k: usize| {
            let column = &batch.columns[k];
            let (start, end) = (column.offsets[row] as usize, column.offsets[row + 1] as usize);
            column.values[start..end].iter().map(|&x| x as f32).collect::<Vec<f32>>()
        };
        let values: Vec<Vec<f32>> = (0..columns.len()).map(values).collect();
        let mut features: Vec<(f32, String)> = Vec::new();
        let mut push = |hash: u64, x: f32, name: &str| {
            features.push(self.describe(learner, hash, x, name));
        };
        for (column, xs) in columns.iter().zip(&values) {
            for (&(hash, name), &x) in column.iter().zip(xs) {
                if x != 0.0 {
                    push(hash, x, name);
                }
            }
        }
        if self.interactions.constant {
            push(u64::from(CONSTANT_FEATURE), 1.0, "Constant");
        }
        // Crosses take the nonzero entries (zeros are not features), values by position.
        let kept: Vec<Vec<(u64, &str)>> = columns
            .iter()
            .zip(&values)
            .map(|(column, xs)| {
                column.iter().zip(xs).filter(|(_, &x)| x != 0.0).map(|(&entry, _)| entry).collect()
            })
            .collect();
        let kept_values: Vec<Vec<f32>> =
            values.iter().map(|xs| xs.iter().copied().filter(|&x| x != 0.0).collect()).collect();
        for cross in &self.interactions.namespace_crosses {
            let mut positions: Vec<f32> = Vec::new();
            let mut products: Vec<(u64, String)> = Vec::new();
            for_each_product(&kept, cross, &mut |hash, parts: &[&str]| {
                // Read from a cache, features have no names, and vw's products none either.
                let named = parts.iter().any(|part| !part.is_empty());
                products.push((hash, if named { parts.join("*") } else { String::new() }));
            });
            // The products' values, in the same order (the same walk over positions).
            product_values(&kept_values, cross, 0, 0, 1.0, &mut positions);
            for ((hash, name), x) in products.iter().zip(positions) {
                push(*hash, x, name);
            }
        }
        // Largest |w x| first; stable, as vw's sort.
        features.sort_by(|a, b| b.0.abs().total_cmp(&a.0.abs()));
        let mut line = String::new();
        for (_, text) in &features {
            line.push('\t');
            line.push_str(text);
        }
        line
    }

    /// (raw `w · x`, `name:slot:x:w[@G]`) of the feature of hash `hash` and value `x`.
    fn describe<E: Expansion>(
        &self,
        learner: &Learner<E>,
        hash: u64,
        x: f32,
        name: &str,
    ) -> (f32, String) {
        let weights = learner.weights();
        let slot = (hash & weights.mask()) as u32;
        let state = learner.state();
        let raw = weights.weight(slot);
        let shown = trunc_weight(raw, state.gravity as f32) * state.contraction as f32;
        let mut text = format!("{name}:{slot}:{}:{}", g(f64::from(x)), g(f64::from(shown)));
        if learner.config().rule.adaptive {
            let sum = weights.adaptive_sum(slot) + learner.config().initial_t as f32;
            text.push_str(&format!("@{}", g(f64::from(sum))));
        }
        (raw * x, text)
    }
}

/// The values of a cross's products in [`for_each_product`]'s order: the product of the
/// factors' values, left to right in single precision.
fn product_values(
    values: &[Vec<f32>],
    cross: &[usize],
    depth: usize,
    previous: usize,
    x: f32,
    out: &mut Vec<f32>,
) {
    if depth == cross.len() {
        out.push(x);
        return;
    }
    let start = if depth > 0 && cross[depth] == cross[depth - 1] { previous } else { 0 };
    for (i, &v) in values[cross[depth]].iter().enumerate().skip(start) {
        let x = if depth == 0 { v } else { x * v };
        product_values(values, cross, depth + 1, i, x, out);
    }
}
