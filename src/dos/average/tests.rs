//! Averaging classifiers trained apart: identities, a brute-force linear average, and the
//! aligned average recovering a DoS classifier that naive averaging would break.

use super::*;
use crate::dos::{ExampleBatch, PassiveAggressiveOptions};

/// Three Gaussian blobs in 6 dimensions (dense rows), their class ids.
fn blobs(n: usize, seed: u64) -> (Vec<f64>, Vec<u32>) {
    let mut state = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
    let mut next = move || {
        state =
            state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    };
    let (mut rows, mut classes) = (Vec::new(), Vec::new());
    for r in 0..n {
        let class = (r % 3) as u32;
        for j in 0..6 {
            let centre = if j == class as usize { 2.0 } else { 0.0 };
            rows.push(centre + next());
        }
        classes.push(class);
    }
    (rows, classes)
}

fn options(rank: usize) -> PassiveAggressiveOptions {
    PassiveAggressiveOptions {
        n_classes: 3,
        n_features: 6,
        rank,
        seed: 7,
        variant: "pa1".to_owned(),
        c: 1.0,
        multiclass: "ovo".to_owned(),
        averaging: Some(50),
    }
}

fn trained(mut classifier: PassiveAggressive, rows: &[f64], classes: &[u32]) -> PassiveAggressive {
    let batch = ExampleBatch::from_dense(rows, 6).unwrap();
    classifier.learn_batch(&batch, classes).unwrap();
    classifier
}

fn scores(classifier: &PassiveAggressive, rows: &[f64], use_average: bool) -> Vec<f64> {
    let batch = ExampleBatch::from_dense(rows, 6).unwrap();
    classifier.decision_scores(&batch, use_average).unwrap()
}

fn close(a: &[f64], b: &[f64], tolerance: f64) {
    for (x, y) in a.iter().zip(b) {
        assert!((x - y).abs() <= tolerance * (1.0 + x.abs()), "{x} vs {y}");
    }
}

#[test]
fn the_average_of_one_shard_is_that_shard() {
    let (rows, classes) = blobs(600, 1);
    for rank in [0, 2] {
        let shard = trained(PassiveAggressive::new(&options(rank)).unwrap(), &rows, &classes);
        let merged = PassiveAggressive::average(None, &[&shard]).unwrap();
        for use_average in [false, true] {
            close(&scores(&merged, &rows, use_average), &scores(&shard, &rows, use_average), 1e-5);
        }
        assert_eq!(merged.stats(), shard.stats());
    }
}

#[test]
fn twins_average_to_the_same_classifier_and_counts_add_up() {
    let (rows, classes) = blobs(900, 2);
    for rank in [0, 3] {
        let start = trained(
            PassiveAggressive::new(&options(rank)).unwrap(),
            &rows[..1800],
            &classes[..300],
        );
        let a = trained(start.clone(), &rows[1800..], &classes[300..]);
        let merged = PassiveAggressive::average(Some(&start), &[&a, &a.clone()]).unwrap();
        close(&scores(&merged, &rows, false), &scores(&a, &rows, false), 1e-4);
        close(&scores(&merged, &rows, true), &scores(&a, &rows, true), 1e-4);
        let added = a.stats().examples - start.stats().examples;
        assert_eq!(merged.stats().examples, start.stats().examples + 2 * added);
    }
}

#[test]
fn linear_models_are_averaged_by_the_examples_each_learned() {
    let (rows, classes) = blobs(900, 3);
    let a = trained(PassiveAggressive::new(&options(0)).unwrap(), &rows[..600], &classes[..100]);
    let b = trained(PassiveAggressive::new(&options(0)).unwrap(), &rows[600..], &classes[100..]);
    let merged = PassiveAggressive::average(None, &[&a, &b]).unwrap();
    // Scores are linear in the weights: the merged score is the weighted mean of the scores.
    let (sa, sb) = (scores(&a, &rows, false), scores(&b, &rows, false));
    let expected: Vec<f64> =
        sa.iter().zip(&sb).map(|(x, y)| (100.0 * x + 800.0 * y) / 900.0).collect();
    close(&scores(&merged, &rows, false), &expected, 1e-9);
}

#[test]
fn a_dos_shard_and_its_rotated_copy_average_to_the_same_classifier() {
    let (rows, classes) = blobs(600, 4);
    let shard = trained(PassiveAggressive::new(&options(2)).unwrap(), &rows, &classes);
    let mut copy = shard.clone();
    if let Family::Dos(m) = &mut copy.family {
        for model in m.models_mut() {
            model.boost(0.4);
            model.rotate(&[0.0, 1.0, -1.0, 0.0], &[0.0, -1.0, 1.0, 0.0]).unwrap();
        }
    }
    // The copy is the same classifier...
    close(&scores(&copy, &rows, false), &scores(&shard, &rows, false), 1e-3);
    // ...and the aligned average of the two is too.
    let merged = PassiveAggressive::average(None, &[&shard, &copy]).unwrap();
    close(&scores(&merged, &rows, false), &scores(&shard, &rows, false), 1e-3);
}

#[test]
fn classifiers_of_other_options_are_refused() {
    let (rows, classes) = blobs(300, 5);
    let a = trained(PassiveAggressive::new(&options(2)).unwrap(), &rows, &classes);
    let b = trained(PassiveAggressive::new(&options(3)).unwrap(), &rows, &classes);
    assert!(PassiveAggressive::average(None, &[&a, &b]).is_err());
    // The multiclass layer checks the shapes itself (no Procrustes step on mismatched ranks).
    if let (Family::Dos(ma), Family::Dos(mb)) = (&a.family, &b.family) {
        let err = Multiclass::average(None, &[ma, mb]).unwrap_err().to_string();
        assert!(err.contains("differ in shape"), "{err}");
    } else {
        panic!("rank 2 and 3 are DoS classifiers");
    }
    let fresh = PassiveAggressive::new(&options(2)).unwrap();
    let err = PassiveAggressive::average(None, &[&fresh]).unwrap_err().to_string();
    assert!(err.contains("no shard learned"), "{err}");
}
