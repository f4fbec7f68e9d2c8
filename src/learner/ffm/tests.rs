use proptest::prelude::*;

use super::*;

/// Features `(field, hash, value)` pushed in field runs, fields tracked.
fn features(bits: u32, entries: &[(u32, u64, f32)]) -> ExpandedFeatures {
    let mut out = ExpandedFeatures::new(bits);
    out.track_fields(true);
    for &(field, hash, value) in entries {
        out.begin_field(field);
        out.push(hash, value);
    }
    out
}

/// The score by its definition: every pair of factorized features whose fields have a term
/// ([`Ffm::pairs`]), in f64.
fn brute_force(ffm: &Ffm, out: &ExpandedFeatures) -> f64 {
    let pairs = ffm.pairs();
    let mut factorized = Vec::new();
    for (field, range) in out.field_runs() {
        if let Some(z) = ffm.options.fields.iter().position(|&f| f == field) {
            for at in range {
                factorized.push((out.slots()[at], z, f64::from(out.values()[at])));
            }
        }
    }
    let mut score = 0.0;
    for (i, &(slot_i, f_i, x_i)) in factorized.iter().enumerate() {
        for &(slot_j, f_j, x_j) in &factorized[i + 1..] {
            if !pairs.contains(&(f_i.min(f_j), f_i.max(f_j))) {
                continue;
            }
            let (a, b) = (ffm.latent(slot_i, f_j), ffm.latent(slot_j, f_i));
            let dot: f64 = a.iter().zip(b).map(|(x, y)| f64::from(*x) * f64::from(*y)).sum();
            score += dot * x_i * x_j;
        }
    }
    score
}

fn small(k: usize, fields: Vec<u32>) -> Ffm {
    let mut options = FfmOptions::new(k, 6, fields);
    options.init_scale = 1.0;
    Ffm::new(options).unwrap()
}

/// [`small`] over the pairs of fields within `crosses` alone ([`FfmPairs::Crosses`]).
fn crossed(k: usize, fields: Vec<u32>, crosses: &[Vec<u32>]) -> Ffm {
    let mut options = FfmOptions::new(k, 6, fields);
    options.init_scale = 1.0;
    options.pairs = FfmPairs::Crosses;
    let mut ffm = Ffm::new(options).unwrap();
    ffm.follow_crosses(crosses);
    ffm
}

proptest! {
    /// The O(n F k) score is the pairwise sum, with several features in a field, features of
    /// fields not taking part, zeros and features sharing a row.
    #[test]
    fn score_is_the_sum_over_pairs(
        entries in prop::collection::vec((0u32..5, 0u64..40, -2.0f32..2.0), 0..12),
        k in 1usize..5,
        only_crossed in any::<bool>(),
    ) {
        // Crosses name fields not taking part (9) and pairs twice.
        let crosses = [vec![1, 2], vec![4, 2, 9], vec![2, 1]];
        let ffm = if only_crossed {
            crossed(k, vec![1, 2, 4], &crosses)
        } else {
            small(k, vec![1, 2, 4])
        };
        let out = features(10, &entries);
        let mut scratch = FfmScratch::default();
        let score = f64::from(ffm.score(&out, &mut scratch));
        let expected = brute_force(&ffm, &out);
        prop_assert!((score - expected).abs() <= 1e-4 * (1.0 + expected.abs()), "{score} {expected}");
    }

    /// Each latent value moves by AdaGrad's step on the score's derivative, which is the brute
    /// force's (central differences in f64).
    #[test]
    fn the_step_follows_the_scores_derivative(
        entries in prop::collection::vec((1u32..4, 0u64..12, -1.5f32..1.5), 2..8),
        gradient in -2.0f32..2.0,
        only_crossed in any::<bool>(),
    ) {
        let k = 2;
        let ffm = if only_crossed {
            crossed(k, vec![1, 2, 3], &[vec![3, 1], vec![2, 3]])
        } else {
            small(k, vec![1, 2, 3])
        };
        let out = features(10, &entries);
        let mut scratch = FfmScratch::default();
        ffm.score(&out, &mut scratch);
        let mut learned = ffm.clone();
        learned.learn(&mut scratch.clone(), gradient).unwrap();
        let fk = ffm.options.latent_len();
        for row in 0..(1usize << ffm.options.bits) {
            for j in 0..fk {
                let at = row * ffm.options.row_len() + j;
                let h = 1e-3f32;
                let mut up = ffm.clone();
                up.table[at] += h;
                let mut down = ffm.clone();
                down.table[at] -= h;
                let d = (brute_force(&up, &out) - brute_force(&down, &out)) / (2.0 * f64::from(h));
                let g = f64::from(gradient) * d;
                let sum = 1.0 + g * g;
                // A row shared by two features moves by each one's derivative in turn (same
                // total derivative; each its own AdaGrad sum), so compare only rows moved once.
                let moved = f64::from(ffm.table[at] - learned.table[at]);
                let expected = 0.1 * g / sum.sqrt();
                let uses = match &ffm.crossed {
                    Some(crossed) => scratch
                        .entries
                        .iter()
                        .flat_map(|e| crossed.links[e.field as usize].iter().map(|l| ffm.row_of_pair(e.row, l.other)))
                        .filter(|&r| r as usize == row)
                        .count(),
                    None => scratch.entries.iter().filter(|e| e.row as usize == row).count(),
                };
                let shared = uses > 1;
                if !shared {
                    prop_assert!((moved - expected).abs() <= 2e-3 * (1.0 + expected.abs()),
                        "row {row} value {j}: moved {moved}, expected {expected}");
                    let accumulated = f64::from(learned.table[at + fk]);
                    prop_assert!((accumulated - sum).abs() <= 2e-3 * sum);
                }
            }
        }
    }
}

#[test]
fn crossed_pairs_follow_the_crosses_as_they_join() {
    let mut ffm = crossed(2, vec![1, 2, 3, 4], &[]);
    assert!(ffm.pairs().is_empty());
    let out = features(10, &[(1, 3, 1.0), (2, 5, 1.0), (3, 7, 1.0), (4, 9, 1.0)]);
    let mut scratch = FfmScratch::default();
    assert_eq!(ffm.score(&out, &mut scratch), 0.0);
    assert!(scratch.entries.is_empty(), "no field is in a pair yet");
    ffm.follow_crosses(&[vec![1, 2]]);
    ffm.follow_crosses(&[vec![1, 2], vec![2, 3, 4]]);
    assert_eq!(ffm.pairs(), [(0, 1), (1, 2), (1, 3), (2, 3)]);
    assert!(ffm.learn(&mut scratch, 1.0).is_ok());
    let every = small(2, vec![1, 2, 3, 4]);
    assert_eq!(every.pairs().len(), 10, "every pair, and each field with itself");
}

/// Over crossed pairs the table holds a row of `2 k` floats per (value, partner field): its
/// size does not grow with the fields.
#[test]
fn a_crossed_table_has_a_row_per_value_and_partner() {
    let few = crossed(4, vec![1, 2], &[vec![1, 2]]);
    let many = crossed(4, (1..=30).collect(), &[vec![1, 2]]);
    assert_eq!(few.table().len(), (1 << 6) * 8);
    assert_eq!(many.table().len(), few.table().len());
    assert_eq!(many.options().table_bytes(), (1 << 6) * 8 * 4);
}

#[test]
fn the_initial_table_depends_on_the_seed_only() {
    let options = FfmOptions::new(4, 8, vec![1, 2]);
    let a = Ffm::new(options.clone()).unwrap();
    let b = Ffm::new(options.clone()).unwrap();
    assert_eq!(a.table(), b.table());
    let other = Ffm::new(FfmOptions { seed: 7, ..options.clone() }).unwrap();
    assert_ne!(a.table(), other.table());
    let bound = (options.init_scale / 2.0) as f32;
    let row_len = 2 * 2 * 4;
    for row in a.table().chunks_exact(row_len) {
        assert!(row[..8].iter().all(|v| v.abs() <= bound));
        assert!(row[8..].iter().all(|&g| g == 1.0));
    }
    let spread = a.table().chunks_exact(row_len).map(|r| r[0]).fold(0.0f32, |m, v| m.max(v));
    assert!(spread > bound * 0.9, "draws cover the range");
}

#[test]
fn options_are_checked() {
    let good = FfmOptions::new(4, 10, vec![1, 2]);
    assert!(good.validate().is_ok());
    let bad = [
        (FfmOptions { k: 0, ..good.clone() }, "ffm k must be an integer in 1..=128, got 0"),
        (FfmOptions { k: MAX_K + 1, ..good.clone() }, "got 129"),
        (FfmOptions { bits: 0, ..good.clone() }, "ffm bits must be an integer in 1..=30, got 0"),
        (FfmOptions { bits: 31, ..good.clone() }, "got 31"),
        (FfmOptions { fields: vec![], ..good.clone() }, "it has 0"),
        (FfmOptions { fields: vec![1, 3, 1], ..good.clone() }, "field 1 is listed twice"),
        (
            FfmOptions { learning_rate: f64::NAN, ..good.clone() },
            "learning_rate must be finite and > 0, got NaN",
        ),
        (
            FfmOptions { initial_accumulator: 0.0, ..good.clone() },
            "initial_accumulator must be finite and > 0, got 0",
        ),
        (FfmOptions { power_t: 2.0, ..good.clone() }, "power_t must be in [0, 1], got 2"),
        (
            FfmOptions { init_scale: -1.0, ..good.clone() },
            "init_scale must be finite and >= 0, got -1",
        ),
    ];
    for (options, message) in bad {
        let error = Ffm::new(options).unwrap_err().to_string();
        assert!(error.contains(message), "{error}");
    }
    let error = Ffm::with_table(good, vec![0.0; 3]).unwrap_err().to_string();
    assert!(error.contains("holds 3 values"), "{error}");
}

#[test]
fn a_step_that_overflows_moves_nothing() {
    let ffm = small(2, vec![1, 2]);
    let out = features(10, &[(1, 3, 1e30), (2, 5, 1e30)]);
    let mut scratch = FfmScratch::default();
    ffm.score(&out, &mut scratch);
    let mut learned = ffm.clone();
    assert!(learned.learn(&mut scratch, 1e30).is_err());
    assert_eq!(learned.table(), ffm.table());
}

/// Eat-rate in small: an animal eats a food when its diet is the food's kind. Pairs held out
/// of training are scored from what each value showed with the others: the factorization
/// separates them, which no table of seen pairs can.
#[test]
fn unseen_pairs_are_scored_from_each_values_latent_vector() {
    let (animals, foods) = (40u64, 40u64);
    let diet = |a: u64| (a * 7 + 3) % 2;
    let kind = |b: u64| (b * 5 + 1) % 2;
    let label = |a: u64, b: u64| if diet(a) == kind(b) { 1.0f32 } else { -1.0 };
    let held_out = |a: u64, b: u64| (a * 31 + b * 17) % 5 == 0;
    let mut options = FfmOptions::new(4, 12, vec![1, 2]);
    options.learning_rate = 0.2;
    let mut ffm = Ffm::new(options).unwrap();
    let mut scratch = FfmScratch::default();
    let example = |a: u64, b: u64| features(16, &[(1, a, 1.0), (2, 1000 + b, 1.0)]);
    for _ in 0..30 {
        for a in 0..animals {
            for b in 0..foods {
                if held_out(a, b) {
                    continue;
                }
                let out = example(a, b);
                let (y, s) = (label(a, b), ffm.score(&out, &mut scratch));
                // The logistic loss's derivative in the score.
                let gradient = -y / (1.0 + (y * s).exp());
                ffm.learn(&mut scratch, gradient).unwrap();
            }
        }
    }
    let (mut right, mut total) = (0, 0);
    for a in 0..animals {
        for b in 0..foods {
            if held_out(a, b) {
                total += 1;
                let s = ffm.score(&example(a, b), &mut scratch);
                right += usize::from(s * label(a, b) > 0.0);
            }
        }
    }
    assert!(total > 250);
    assert!(right as f64 >= 0.97 * total as f64, "{right} of {total} unseen pairs right");
}

#[test]
fn averaged_tables_are_the_weighted_means() {
    let a = small(2, vec![1, 2]);
    let moved: Vec<f32> = a.table().iter().enumerate().map(|(i, v)| v + i as f32 * 0.01).collect();
    let b = Ffm::with_table(a.options.clone(), moved).unwrap();
    let mean = Ffm::averaged(&[&a, &b], &[0.25, 0.75]).unwrap();
    for ((m, x), y) in mean.table().iter().zip(a.table()).zip(b.table()) {
        assert!((m - (0.25 * x + 0.75 * y)).abs() <= 1e-6 * (1.0 + m.abs()));
    }
    let other = Ffm::new(FfmOptions { k: 3, ..a.options.clone() }).unwrap();
    let error = Ffm::averaged(&[&a, &other], &[0.5, 0.5]).unwrap_err().to_string();
    assert!(error.contains("differ in their options"), "{error}");
}

proptest! {
    /// The pairs' terms: at most the score's magnitude in total by the triangle inequality,
    /// exactly it with one feature in each of two fields; nothing within a one-hot field.
    #[test]
    fn pair_terms_add_up_to_the_score(
        entries in prop::collection::vec((1u32..4, 0u64..40, -2.0f32..2.0), 0..10),
        a in 0u64..40,
        b in 0u64..40,
    ) {
        let ffm = small(2, vec![1, 2, 3]);
        let mut scratch = FfmScratch::default();
        let out = features(10, &entries);
        let mut totals = vec![0.0; 9];
        ffm.add_pair_terms(&out, &mut scratch, &mut totals);
        let score = f64::from(ffm.score(&out, &mut scratch));
        prop_assert!(totals.iter().sum::<f64>() >= score.abs() - 1e-4 * (1.0 + score.abs()));
        let pair = features(10, &[(1, a, 1.5), (3, 1000 + b, -0.5)]);
        let mut totals = vec![0.0; 9];
        ffm.add_pair_terms(&pair, &mut scratch, &mut totals);
        let score = f64::from(ffm.score(&pair, &mut scratch)).abs();
        prop_assert!((totals[2] - score).abs() <= 1e-6 * (1.0 + score));
        prop_assert_eq!(totals.iter().filter(|&&t| t != 0.0).count(), usize::from(score != 0.0));
    }
}
