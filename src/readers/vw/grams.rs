//! Vowpal Wabbit's n-grams and skip-grams (`--ngram`, `--skips`) of a namespace's features.
//!
//! Vowpal Wabbit's rules (`kskip_ngram_transformer`), followed here:
//!
//! * The grams of a namespace letter are made from that letter's features in the example, in
//!   file order (every namespace of the letter, `|apple` and `|avocado` alike, as one sequence),
//!   after `ignore`/`keep` and after zero-valued features were dropped; the constant is never
//!   part of them.
//! * `--ngram N` adds the 2-grams, 3-grams, ... N-grams; the features themselves stay. Each gram
//!   is appended after the letter's features, with value 1 whatever the features' values.
//! * `--skips K` lets a gram leave out up to K features in all between its first and last one
//!   (K = 1: `a b c d` gives the 2-grams `ab bc cd ac bd`).
//! * A gram's hash folds its features' hashes left to right: `h = h * 27942141 + next` (Vowpal
//!   Wabbit's quadratic constant), in 64 bits there; here in wrapping 32 bits, which keeps the
//!   low 32 bits and so every table slot (`bits <= 32`).
//! * Order: the lengths 2, 3, ..., N in turn; for each length, the gap patterns depth first,
//!   fewest skips at each position first; for each pattern, every start position in order.
//!   Vowpal Wabbit adds features in this order, which only the rounding of sums can notice.

use crate::error::PolyResult;

use super::{namespace_letter, VwBatch, DEFAULT_NAMESPACE_COLUMN};

/// Vowpal Wabbit's `QUADRATIC_CONSTANT`.
const GRAM_CONSTANT: u32 = 27_942_141;

/// Largest gram length and skip count accepted (a bound on the recursion depth; Vowpal
/// Wabbit's own examples use 2 or 3).
pub(super) const MAX_GRAM: u32 = 64;

/// The gram length and skip count of each namespace letter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Grams {
    ngram: [u32; 256],
    skips: [u32; 256],
}

impl Grams {
    /// The plan of `ngram`/`skips` specifications, or `None` when no namespace has grams.
    pub(super) fn new(ngram: &[String], skips: &[String]) -> PolyResult<Option<Self>> {
        if !skips.is_empty() && ngram.is_empty() {
            return crate::invalid!(
                "skips need ngram: skips are gaps inside n-grams (Vowpal Wabbit: \"skip cannot be \
                 used unless ngram is > 1\")"
            );
        }
        let grams =
            Grams { ngram: per_letter("ngram", ngram)?, skips: per_letter("skips", skips)? };
        Ok(grams.ngram.iter().any(|&n| n > 1).then_some(grams))
    }

    /// Appends the grams of the row whose entries start at `row_start` (whole hashes, in file
    /// order), letter by letter in the order of the letters' first features.
    pub(super) fn append_row(&self, batch: &mut VwBatch, row_start: usize) {
        let mut letters: Vec<u8> = Vec::new();
        for &letter in &batch.namespaces[row_start..] {
            if self.ngram[usize::from(letter)] > 1 && !letters.contains(&letter) {
                letters.push(letter);
            }
        }
        let row_end = batch.indices.len();
        let (mut tokens, mut grams, mut gaps) = (Vec::new(), Vec::new(), Vec::new());
        for letter in letters {
            tokens.clear();
            grams.clear();
            tokens.extend(
                (row_start..row_end)
                    .filter(|&entry| batch.namespaces[entry] == letter)
                    .map(|entry| batch.indices[entry]),
            );
            let skips = self.skips[usize::from(letter)];
            for extra in 1..self.ngram[usize::from(letter)] {
                gaps.clear();
                gaps.push(0);
                add_grams(extra, skips, &tokens, &mut gaps, 0, &mut grams);
            }
            batch.indices.extend_from_slice(&grams);
            batch.values.extend(std::iter::repeat_n(1.0, grams.len()));
            batch.namespaces.extend(std::iter::repeat_n(letter, grams.len()));
        }
    }
}

/// Vowpal Wabbit's `add_grams`: `offsets` holds the positions (relative to the gram's first
/// feature) chosen so far; `extra` more features are to be chosen, with up to `budget` skips in
/// all, the next one `skip` positions further than adjacent.
fn add_grams(
    extra: u32,
    budget: u32,
    tokens: &[u32],
    offsets: &mut Vec<usize>,
    skip: usize,
    out: &mut Vec<u32>,
) {
    // The pattern starts at offset 0; an empty one has no grams.
    let Some(&last) = offsets.last() else { return };
    if last >= tokens.len() {
        // No gram of this pattern fits, nor of any longer one (offsets only grow).
        return;
    }
    if extra == 0 {
        for start in 0..tokens.len() - last {
            let hash = offsets[1..].iter().fold(tokens[start], |hash, &offset| {
                hash.wrapping_mul(GRAM_CONSTANT).wrapping_add(tokens[start + offset])
            });
            out.push(hash);
        }
        return;
    }
    offsets.push(last + 1 + skip);
    add_grams(extra - 1, budget, tokens, offsets, 0, out);
    offsets.pop();
    if budget > 0 {
        add_grams(extra, budget - 1, tokens, offsets, skip + 1, out);
    }
}

/// The value of each letter under specifications `"N"` (every letter) or `"aN"` (letter `a`;
/// `"defaultN"` or `" N"` for the default namespace), applied in order.
fn per_letter(option: &str, specs: &[String]) -> PolyResult<[u32; 256]> {
    let mut values = [0; 256];
    for spec in specs {
        let (letter, number) = match spec.as_bytes().first() {
            None => return crate::invalid!("{option}: an empty specification"),
            Some(first) if first.is_ascii_digit() => (None, spec.as_str()),
            Some(_) => match spec.strip_prefix(DEFAULT_NAMESPACE_COLUMN) {
                Some(number) if number.parse::<u32>().is_ok() => (Some(b' '), number),
                _ => {
                    let split = spec.chars().next().map_or(0, char::len_utf8);
                    let (name, number) = spec.split_at(split);
                    if name.len() != 1 {
                        return crate::invalid!(
                            "{option}: {spec:?} does not start with a one-letter namespace name"
                        );
                    }
                    (Some(if name == " " { b' ' } else { namespace_letter(name) }), number)
                }
            },
        };
        let value = match number.parse::<u32>() {
            Ok(value) if value <= MAX_GRAM => value,
            Ok(_) => {
                return crate::invalid!("{option}: {spec:?} is more than {MAX_GRAM}");
            }
            Err(_) => {
                return crate::invalid!(
                    "{option}: {spec:?} is not \"N\" (every namespace) or a namespace letter and N \
                     (\"a2\"; \"{DEFAULT_NAMESPACE_COLUMN}2\" for the default namespace)"
                );
            }
        };
        match letter {
            None => values = [value; 256],
            Some(letter) => values[usize::from(letter)] = value,
        }
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grams_of(n: u32, skips: u32, tokens: &[u32]) -> Vec<Vec<u32>> {
        // Tokens 1, 2, 3, ... and GRAM_CONSTANT-based hashes decoded back to their tokens by
        // recomputing every candidate: the patterns, as lists of tokens, in Vowpal Wabbit's order.
        let mut out = Vec::new();
        for extra in 1..n {
            let mut offsets = vec![0];
            add_grams(extra, skips, tokens, &mut offsets, 0, &mut out);
        }
        let fold = |gram: &[u32]| {
            gram[1..].iter().fold(gram[0], |h, &t| h.wrapping_mul(GRAM_CONSTANT).wrapping_add(t))
        };
        let mut candidates: Vec<Vec<u32>> = Vec::new();
        let len = tokens.len();
        for a in 0..len {
            for b in a + 1..len {
                candidates.push(vec![tokens[a], tokens[b]]);
                for c in b + 1..len {
                    candidates.push(vec![tokens[a], tokens[b], tokens[c]]);
                }
            }
        }
        out.iter()
            .map(|&hash| candidates.iter().find(|gram| fold(gram) == hash).unwrap().clone())
            .collect()
    }

    #[test]
    fn bigrams_trigrams_and_skips_in_vowpal_wabbits_order() {
        let (a, b, c, d) = (1, 2, 3, 4);
        assert_eq!(grams_of(2, 0, &[a, b, c, d]), [vec![a, b], vec![b, c], vec![c, d]]);
        assert_eq!(
            grams_of(2, 1, &[a, b, c, d]),
            [vec![a, b], vec![b, c], vec![c, d], vec![a, c], vec![b, d]]
        );
        // 1-skip-3-grams: one skip in all (abd, acd), not one per gap (the header comment of
        // Vowpal Wabbit's transformer lists ace, which its code does not make).
        assert_eq!(
            grams_of(3, 1, &[a, b, c, d]),
            [
                vec![a, b],
                vec![b, c],
                vec![c, d],
                vec![a, c],
                vec![b, d],
                vec![a, b, c],
                vec![b, c, d],
                vec![a, b, d],
                vec![a, c, d]
            ]
        );
        assert!(grams_of(3, 2, &[a]).is_empty());
        assert!(grams_of(2, 0, &[]).is_empty());
    }

    #[test]
    fn a_long_gram_over_a_short_row_stops_early() {
        let mut out = Vec::new();
        add_grams(MAX_GRAM, MAX_GRAM, &[1, 2], &mut vec![0], 0, &mut out);
        assert!(out.is_empty());
        add_grams(1, MAX_GRAM, &[1, 2, 3], &mut vec![0], 0, &mut out);
        assert_eq!(out.len(), 3, "ab bc ac");
    }

    #[test]
    fn specifications_per_namespace_later_ones_win() {
        let specs = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let values = per_letter("ngram", &specs(&["2", "a3", "default4", "b0"])).unwrap();
        assert_eq!((values[usize::from(b'a')], values[usize::from(b' ')]), (3, 4));
        assert_eq!((values[usize::from(b'b')], values[usize::from(b'z')]), (0, 2));
        let values = per_letter("ngram", &specs(&["a3", "2", " 5"])).unwrap();
        assert_eq!((values[usize::from(b'a')], values[usize::from(b' ')]), (2, 5));
        for (spec, message) in [
            ("", "empty"),
            ("a", "is not \"N\""),
            ("ab2", "is not \"N\""),
            ("2x", "is not \"N\""),
            ("é2", "one-letter"),
            ("65", "more than 64"),
        ] {
            let err = per_letter("ngram", &specs(&[spec])).unwrap_err().to_string();
            assert!(err.contains("ngram") && err.contains(message), "{spec:?}: {err}");
        }
        assert!(Grams::new(&[], &specs(&["1"])).unwrap_err().to_string().contains("skips need"));
        assert_eq!(Grams::new(&specs(&["1"]), &[]).unwrap(), None);
        assert!(Grams::new(&specs(&["a2"]), &specs(&["1"])).unwrap().is_some());
    }
}
