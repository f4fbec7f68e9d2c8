//! Vowpal Wabbit's `--invert_hash`: the name of the feature behind each weight slot, for the
//! readable model ([`super::readable`]). The text is read again with names kept
//! ([`VwReader::with_names`]) and every line's features enumerated as the learner enumerates
//! them: the linear ones (`ns^word`), the constant (`Constant`) and each namespace cross's
//! products (`a^x*b^y`), in the learner's order, with the learner's hash chain. A slot takes the
//! first name that lands on it.

use std::collections::HashMap;
use std::path::Path;

use crate::error::PolyResult;
use crate::hashing::CONSTANT_FEATURE;
use crate::learner::expansion::INTERACTION_PRIME;
use crate::readers::vw::{namespace_letter, VwOptions, VwReader};

/// What a model is made of, for naming its slots.
#[derive(Clone, Debug)]
pub struct NamedModel<'a> {
    /// The learner's namespace columns, in its order.
    pub namespaces: &'a [String],
    /// Its namespace crosses, as column numbers.
    pub crosses: &'a [Vec<usize>],
    pub constant: bool,
    pub bits: u32,
}

/// Slot -> name for every feature of the Vowpal Wabbit text at `path` (read with `options`, its
/// namespaces those of `model`).
pub fn feature_names(
    path: &Path,
    options: &VwOptions,
    model: &NamedModel<'_>,
) -> PolyResult<HashMap<u32, String>> {
    let options = VwOptions { namespaces: Some(model.namespaces.to_vec()), ..options.clone() };
    let mut reader = VwReader::open(path, options)?.with_names()?;
    let mut column_of = [None; 256];
    for (k, name) in model.namespaces.iter().enumerate() {
        column_of[usize::from(namespace_letter(name))] = Some(k);
    }
    let mask = (1u64 << model.bits) - 1;
    let mut names = HashMap::new();
    if model.constant {
        names.insert((u64::from(CONSTANT_FEATURE) & mask) as u32, "Constant".to_owned());
    }
    while let Some(batch) = reader.next_batch(4096)? {
        let mut row: Vec<Vec<(u64, &str)>> = vec![Vec::new(); model.namespaces.len()];
        for r in 0..batch.n_rows() {
            row.iter_mut().for_each(Vec::clear);
            let (start, end) = (batch.offsets[r] as usize, batch.offsets[r + 1] as usize);
            for e in start..end {
                if let Some(k) = column_of[usize::from(batch.namespaces[e])] {
                    row[k].push((u64::from(batch.indices[e]), batch.names[e].as_str()));
                }
            }
            let mut name = |hash: u64, parts: &[&str]| {
                names.entry((hash & mask) as u32).or_insert_with(|| parts.join("*"));
            };
            for column in &row {
                for &(hash, feature) in column {
                    name(hash, &[feature]);
                }
            }
            for cross in model.crosses {
                for_each_product(&row, cross, &mut name);
            }
        }
    }
    Ok(names)
}

/// Calls `visit(hash, factor names)` for each product of the namespace cross `cross` of one
/// example's `columns`, in the order and with the hashes the learner's crosses have
/// (`learner::expansion::push_namespace_cross`): one feature of each namespace in the cross's
/// order, a namespace following itself taken from the position its previous factor took
/// (combinations with repetition), the hash chained as `(h · P) ^ h'`.
pub fn for_each_product<'n>(
    columns: &[Vec<(u64, &'n str)>],
    cross: &[usize],
    visit: &mut impl FnMut(u64, &[&'n str]),
) {
    fn from<'n>(
        columns: &[Vec<(u64, &'n str)>],
        cross: &[usize],
        depth: usize,
        previous: usize,
        hash: u64,
        parts: &mut Vec<&'n str>,
        visit: &mut impl FnMut(u64, &[&'n str]),
    ) {
        if depth == cross.len() {
            visit(hash, parts);
            return;
        }
        let start = if depth > 0 && cross[depth] == cross[depth - 1] { previous } else { 0 };
        for (i, &(h, name)) in columns[cross[depth]].iter().enumerate().skip(start) {
            let hash = if depth == 0 { h } else { hash.wrapping_mul(INTERACTION_PRIME) ^ h };
            parts.push(name);
            from(columns, cross, depth + 1, i, hash, parts, visit);
            parts.pop();
        }
    }
    if cross.len() >= 2 {
        from(columns, cross, 0, 0, 0, &mut Vec::with_capacity(cross.len()), visit);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learner::expansion::push_namespace_cross;
    use crate::learner::{ExampleBuffer, ExpandedFeatures};
    use proptest::prelude::*;

    proptest! {
        /// The products named are the learner's: the same slots in the same order.
        #[test]
        fn products_are_the_learners_crosses(
            hashes in proptest::collection::vec(
                proptest::collection::vec(0u64..5_000, 0..5), 1..4),
            cross in proptest::collection::vec(0usize..3, 2..=4),
        ) {
            let cross: Vec<usize> = cross.iter().map(|&k| k % hashes.len()).collect();
            let names: Vec<Vec<String>> = hashes
                .iter()
                .enumerate()
                .map(|(k, column)| column.iter().map(|h| format!("{k}^{h}")).collect())
                .collect();
            let columns: Vec<Vec<(u64, &str)>> = hashes
                .iter()
                .zip(&names)
                .map(|(column, names)| column.iter().copied().zip(names.iter().map(String::as_str)).collect())
                .collect();
            let mut named = Vec::new();
            for_each_product(&columns, &cross, &mut |hash, parts: &[&str]| {
                named.push(((hash & ((1 << 18) - 1)) as u32, parts.join("*")));
            });
            let mut buffer = ExampleBuffer::new();
            for column in &hashes {
                buffer.push_namespace_in_order(0, column, &vec![1.0f32; column.len()], 0).unwrap();
            }
            let example = buffer.finish(0.0, 1.0, 0).unwrap();
            let mut out = ExpandedFeatures::new(18);
            push_namespace_cross(&example, 0, &cross, &mut out);
            let slots: Vec<u32> = named.iter().map(|(slot, _)| *slot).collect();
            prop_assert_eq!(slots, out.slots().to_vec());
            // Each name lists one feature of each namespace of the cross, in its order.
            for (_, name) in &named {
                let spaces: Vec<usize> =
                    name.split('*').map(|part| part.split('^').next().unwrap().parse().unwrap()).collect();
                prop_assert_eq!(&spaces, &cross);
            }
        }
    }
}
