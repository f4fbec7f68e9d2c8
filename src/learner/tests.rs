//! Learner-level tests: the engine against an independent f64 reference of the update formulas,
//! learning behaviour, model files, and bad input.

use std::collections::HashMap;

use proptest::prelude::*;

use super::features::namespace_field;
use super::ffm::{FfmOptions, FfmPairs};
use super::loss::{Hinge, Logistic, Quantile, Squared};
use super::*;
use crate::error::PolyResult;
use crate::sparse::SparseRows;

/// Straightforward f64 transcription of the update rules of `gd.cc` (the formulas of
/// `update.rs`'s module docs), over a hash map of weights, with L2 applied explicitly to every
/// weight instead of lazily.
struct Reference {
    rule: UpdateRule,
    loss: Loss,
    eta: f64,
    power_t: f64,
    initial_t: f64,
    l2: f64,
    /// slot -> (w, G, N, rate). The rate is per slot, as in Vowpal Wabbit: when two features of
    /// one example collide, both are updated with the rate computed last.
    w: HashMap<u32, (f64, f64, f64, f64)>,
    t: f64,
    total_weight: f64,
    sum_norm_x: f64,
    min_label: f64,
    max_label: f64,
}

impl Reference {
    fn new(config: &LearnerConfig) -> Self {
        let logistic = matches!(config.loss, Loss::Logistic(Logistic));
        Reference {
            rule: config.rule,
            loss: config.loss,
            eta: config.eta0,
            power_t: config.power_t,
            initial_t: config.initial_t,
            l2: config.l2,
            w: HashMap::new(),
            t: 0.0,
            total_weight: config.initial_t,
            sum_norm_x: config.initial_t,
            min_label: if logistic { -50.0 } else { 0.0 },
            max_label: if logistic { 50.0 } else { 0.0 },
        }
    }

    fn predict(&self, features: &[(u32, f64)]) -> f64 {
        let raw: f64 = features.iter().map(|(s, x)| self.w.get(s).map_or(0.0, |w| w.0) * x).sum();
        raw.clamp(self.min_label, self.max_label)
    }

    fn learn(&mut self, features: &[(u32, f64)], y: f64, importance: f64) -> f64 {
        if !matches!(self.loss, Loss::Logistic(Logistic)) {
            self.min_label = self.min_label.min(y);
            self.max_label = self.max_label.max(y);
        }
        let p = self.predict(features);
        self.t += importance;
        self.step(features, p, y, importance, true);
        p
    }

    /// A catch-up step ([`Learner::catch_up`]): the model as it is predicts the example from
    /// `full`, only `added` takes the update, and the example is not counted again (the
    /// normalized rule's sums and the learned weight are read, not changed).
    fn replay(&mut self, full: &[(u32, f64)], added: &[(u32, f64)], y: f64, importance: f64) {
        let p = self.predict(full);
        self.step(added, p, y, importance, false);
    }

    /// The update of `features` for an example predicted `p`; `count` adds it to the
    /// normalized rule's sums and applies L2.
    fn step(&mut self, features: &[(u32, f64)], p: f64, y: f64, importance: f64, count: bool) {
        // Vowpal Wabbit's gate: the loss evaluated in single precision must be positive.
        let loss_f32 = match self.loss {
            Loss::Logistic(Logistic) => (1.0f32 + ((-y * p) as f32).exp()).ln(),
            _ => self.loss.value(p, y) as f32,
        };
        if loss_f32 <= 0.0 {
            return;
        }
        let d = self.loss.derivative(p, y);
        let g2 = importance * d * d;
        let pt = self.power_t;
        let mut ppu = 0.0;
        let mut multiplier = 1.0;
        if self.rule.adaptive || self.rule.normalized {
            let mut norm_x = 0.0;
            for &(s, x) in features {
                let x2 = (x * x).max(1.084202e-19f64.powi(2));
                let e = self.w.entry(s).or_insert((0.0, 0.0, 0.0, 1.0));
                let mut rate = 1.0;
                if self.rule.adaptive {
                    e.1 += g2 * x2;
                    rate = (e.1 + self.initial_t).powf(-pt);
                }
                if self.rule.normalized {
                    let norm_power = if self.rule.adaptive { 1.0 - pt } else { 1.0 };
                    if x.abs() > e.2 {
                        if e.2 > 0.0 {
                            e.0 *= (e.2 / x.abs()).powf(2.0 * norm_power);
                        }
                        e.2 = x.abs();
                    }
                    norm_x += x2 / (e.2 * e.2);
                    rate *= (e.2 * e.2).powf(-norm_power);
                }
                e.3 = rate;
                ppu += x2 * rate;
            }
            if self.rule.normalized {
                if count {
                    self.sum_norm_x += importance * norm_x;
                    self.total_weight += importance;
                }
                let norm_power = if self.rule.adaptive { 1.0 - pt } else { 1.0 };
                multiplier = (self.total_weight / self.sum_norm_x).powf(norm_power);
            }
            ppu *= multiplier;
        } else {
            ppu = features.iter().map(|(_, x)| x * x).sum();
        }
        let mut scale = self.eta * importance;
        if !self.rule.adaptive {
            scale *= (self.initial_t + self.t).powf(-pt);
            if !self.rule.normalized && self.initial_t > 0.0 {
                scale *= self.initial_t.powf(pt);
            }
        }
        let u = if self.rule.invariant {
            self.loss.invariant_update(p, y, scale, ppu)
        } else {
            -scale * d
        };
        if count && self.l2 > 0.0 && d.abs() > 1e-8 && u.abs() > 1e-8 {
            let shrink = 1.0 - self.l2 * (-u / d);
            for e in self.w.values_mut() {
                e.0 *= shrink;
            }
        }
        for &(s, x) in features {
            let e = self.w.entry(s).or_insert((0.0, 0.0, 0.0, 1.0));
            e.0 += multiplier * u * e.3 * x;
        }
    }
}

/// A deterministic pseudo-random stream of examples: (indices, values, label, importance).
pub(crate) fn stream(
    n: usize,
    seed: u64,
    classification: bool,
) -> Vec<(Vec<u32>, Vec<f64>, f64, f64)> {
    let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    let mut next = move || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 33) as f64 / (1u64 << 31) as f64
    };
    (0..n)
        .map(|_| {
            let nnz = 1 + (next() * 6.0) as usize;
            let mut idx: Vec<u32> = (0..nnz).map(|_| (next() * 40.0) as u32).collect();
            idx.sort_unstable();
            idx.dedup();
            let vals: Vec<f64> = idx
                .iter()
                // Magnitudes within [0.25, 3]: on extreme scales f32 and f64 runs of the same
                // rule drift apart chaotically (a fresh weight's rate is 1/(|g|·x²)).
                .map(|_| {
                    let sign = if next() < 0.5 { -1.0 } else { 1.0 };
                    sign * (0.5 + next()) * 2f64.powi((next() * 3.0) as i32 - 1)
                })
                .collect();
            let score: f64 =
                idx.iter().zip(&vals).map(|(&i, v)| if i % 3 == 0 { *v } else { -0.5 * v }).sum();
            let label = if classification {
                if score + 0.3 * (next() - 0.5) > 0.0 {
                    1.0
                } else {
                    -1.0
                }
            } else {
                score + 0.1 * next()
            };
            let importance = if next() < 0.2 { 0.5 + 3.0 * next() } else { 1.0 };
            (idx, vals, label, importance)
        })
        .collect()
}

fn engine_vs_reference(config: LearnerConfig, expansion: Interactions) {
    let classification = config.loss.is_classification();
    let data = stream(300, 7, classification);
    let mut learner = Learner::new(config.clone(), expansion.clone()).unwrap();
    let mut reference = Reference::new(&config);
    let mut buffer = ExampleBuffer::new();
    let mut features = ExpandedFeatures::new(config.bits);
    for (row, (idx, vals, y, imp)) in data.iter().enumerate() {
        buffer.clear();
        buffer.push_namespace(0, idx, vals, row).unwrap();
        let ex = buffer.finish(*y, *imp, row).unwrap();
        features.clear();
        expansion.expand(&ex, &mut features);
        let pairs: Vec<(u32, f64)> = features
            .slots()
            .iter()
            .zip(features.values())
            .map(|(&s, &x)| (s, f64::from(x)))
            .collect();
        let ours = learner.learn(&ex, row).unwrap();
        let theirs = reference.learn(&pairs, *y, *imp);
        assert!(
            (ours - theirs).abs() <= 2e-3 * (1.0 + theirs.abs()),
            "{config:?}: row {row}: engine {ours} vs reference {theirs}"
        );
    }
}

pub(crate) fn config(loss: Loss, rule: UpdateRule) -> LearnerConfig {
    LearnerConfig { bits: 12, loss, rule, ..LearnerConfig::default() }
}

#[test]
fn default_rule_matches_reference_for_every_loss() {
    for loss in [
        Loss::Squared(Squared),
        Loss::Logistic(Logistic),
        Loss::Hinge(Hinge),
        Loss::Quantile(Quantile { tau: 0.3 }),
    ] {
        engine_vs_reference(config(loss, UpdateRule::VW_DEFAULT), Interactions::linear());
        engine_vs_reference(config(loss, UpdateRule::VW_DEFAULT), Interactions::quadratic());
    }
}

#[test]
fn other_rules_match_reference() {
    let sgd = LearnerConfig {
        initial_t: 1.0,
        eta0: 0.05,
        ..config(Loss::Squared(Squared), UpdateRule::SGD)
    };
    engine_vs_reference(sgd, Interactions::linear());
    let sgd_log =
        LearnerConfig { initial_t: 1.0, ..config(Loss::Logistic(Logistic), UpdateRule::SGD) };
    engine_vs_reference(sgd_log, Interactions::quadratic());
    engine_vs_reference(
        config(Loss::Logistic(Logistic), UpdateRule::ADAGRAD),
        Interactions::linear(),
    );
    let normalized = UpdateRule { adaptive: false, normalized: true, invariant: true };
    engine_vs_reference(config(Loss::Squared(Squared), normalized), Interactions::linear());
    // The general power_t path (no sqrt fast path), with initial_t.
    let general = LearnerConfig {
        power_t: 0.7,
        initial_t: 2.0,
        ..config(Loss::Squared(Squared), UpdateRule::VW_DEFAULT)
    };
    engine_vs_reference(general, Interactions::quadratic());
    let adaptive_invariant = UpdateRule { adaptive: true, normalized: false, invariant: true };
    engine_vs_reference(config(Loss::Hinge(Hinge), adaptive_invariant), Interactions::linear());
}

#[test]
fn lazy_l2_matches_explicit_shrinking() {
    let l2 = LearnerConfig { l2: 1e-3, ..config(Loss::Squared(Squared), UpdateRule::VW_DEFAULT) };
    engine_vs_reference(l2, Interactions::linear());
}

pub(crate) fn rows_of(
    data: &[(Vec<u32>, Vec<f64>, f64, f64)],
) -> (Vec<i64>, Vec<u32>, Vec<f64>, Vec<f64>) {
    let mut offsets = vec![0i64];
    let (mut indices, mut values, mut labels) = (Vec::new(), Vec::new(), Vec::new());
    for (idx, vals, y, _) in data {
        indices.extend_from_slice(idx);
        values.extend_from_slice(vals);
        offsets.push(indices.len() as i64);
        labels.push(*y);
    }
    (offsets, indices, values, labels)
}

#[test]
fn l1_shrinks_weights_and_predictions() {
    let data = stream(400, 3, false);
    let (offsets, indices, values, labels) = rows_of(&data);
    let rows = SparseRows::new(&offsets, &indices, &values).unwrap();
    let ns: [&dyn NamespaceRows; 1] = [&rows];
    let batch = Batch::new(&ns, &labels, None).unwrap();
    let mut plain = Learner::new(
        config(Loss::Squared(Squared), UpdateRule::VW_DEFAULT),
        Interactions::linear(),
    )
    .unwrap();
    plain.learn_batch(&batch).unwrap();
    let strong =
        LearnerConfig { l1: 0.05, ..config(Loss::Squared(Squared), UpdateRule::VW_DEFAULT) };
    let mut sparse = Learner::new(strong, Interactions::linear()).unwrap();
    sparse.learn_batch(&batch).unwrap();
    let count = |l: &Learner| (0..4096u32).filter(|&s| l.effective_weight(s) != 0.0).count();
    assert!(count(&sparse) < count(&plain) / 2, "{} vs {}", count(&sparse), count(&plain));
}

#[test]
fn quadratic_learns_xor_and_linear_cannot() {
    // y = x0 * x1 with x in {-1, 1}: not linearly separable.
    let mut data = Vec::new();
    for k in 0..4000u32 {
        let a = if k % 2 == 0 { 1.0 } else { -1.0 };
        let b = if (k / 2) % 2 == 0 { 1.0 } else { -1.0 };
        data.push((vec![0u32, 1], vec![a, b], a * b, 1.0));
    }
    let (offsets, indices, values, labels) = rows_of(&data);
    let rows = SparseRows::new(&offsets, &indices, &values).unwrap();
    let ns: [&dyn NamespaceRows; 1] = [&rows];
    let batch = Batch::new(&ns, &labels, None).unwrap();
    let mut lin = Learner::new(
        config(Loss::Logistic(Logistic), UpdateRule::VW_DEFAULT),
        Interactions::linear(),
    )
    .unwrap();
    lin.learn_batch(&batch).unwrap();
    let mut quad = Learner::new(
        config(Loss::Logistic(Logistic), UpdateRule::VW_DEFAULT),
        Interactions::quadratic(),
    )
    .unwrap();
    quad.learn_batch(&batch).unwrap();
    let (l, q) = (lin.progressive_loss().unwrap(), quad.progressive_loss().unwrap());
    assert!(l > 0.6, "linear cannot learn xor: {l}");
    assert!(q < 0.1, "quadratic learns xor: {q}");
    let mut out = Vec::new();
    quad.predict_batch(&batch, &mut out).unwrap();
    for (p, y) in out.iter().zip(&labels) {
        assert!(p * y > 0.0);
    }
}

proptest! {
    /// Squared loss, invariant update: an example of any importance moves the prediction towards
    /// its label and never past it.
    #[test]
    fn invariant_update_never_overshoots_the_label(
        importance in 0.01f64..1000.0,
        label in -5.0f64..5.0,
        values in proptest::collection::vec(0.1f64..3.0, 1..6),
        warmup in 0usize..3,
    ) {
        let mut learner = Learner::new(config(Loss::Squared(Squared), UpdateRule::VW_DEFAULT), Interactions::quadratic()).unwrap();
        let idx: Vec<u32> = (0..values.len() as u32).collect();
        let mut buffer = ExampleBuffer::new();
        for k in 0..warmup {
            buffer.clear();
            buffer.push_namespace(0, &idx, &values, k).unwrap();
            let ex = buffer.finish(-label, 1.0, k).unwrap();
            learner.learn(&ex, k).unwrap();
        }
        buffer.clear();
        buffer.push_namespace(0, &idx, &values, 9).unwrap();
        let ex = buffer.finish(label, importance, 9).unwrap();
        let before = learner.learn(&ex, 9).unwrap();
        let mut features = ExpandedFeatures::new(12);
        let after = learner.predict_with(&ex, &mut features);
        let (lo, hi) = if before <= label { (before, label) } else { (label, before) };
        let slack = 1e-4 * (1.0 + label.abs());
        prop_assert!(after >= lo - slack && after <= hi + slack, "before {} after {} label {}", before, after, label);
    }
}

#[test]
fn bad_input_errors_name_row_and_value() {
    let err =
        Learner::new(LearnerConfig { bits: 0, ..LearnerConfig::default() }, Interactions::linear())
            .unwrap_err();
    assert!(err.to_string().contains("bits must be an integer in 1..=32, got 0"), "{err}");
    let err = Learner::new(
        LearnerConfig { bits: 33, ..LearnerConfig::default() },
        Interactions::linear(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("got 33"), "{err}");
    let err = Learner::new(
        LearnerConfig { eta0: f64::NAN, ..LearnerConfig::default() },
        Interactions::linear(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("eta0"), "{err}");

    let offsets = [0i64, 1, 2, 3];
    let indices = [0u32, 1, 2];
    let values = [1.0f64, f64::INFINITY, 1.0];
    let rows = SparseRows::new(&offsets, &indices, &values).unwrap();
    let ns: [&dyn NamespaceRows; 1] = [&rows];
    let labels = [1.0, -1.0, 2.0];
    let mut clf = Learner::new(
        LearnerConfig { loss: Loss::Logistic(Logistic), ..LearnerConfig::default() },
        Interactions::linear(),
    )
    .unwrap();
    let batch = Batch::new(&ns, &labels, None).unwrap().with_first_row(100);
    let err = clf.learn_batch(&batch).unwrap_err().to_string();
    assert!(err.contains("row 102: label 2 is outside [-1, +1] (logistic loss"), "{err}");
    assert_eq!(clf.progress().examples, 0, "labels are checked before learning");
    let labels = [1.0, -1.0, 1.0];
    let batch = Batch::new(&ns, &labels, None).unwrap();
    let err = clf.learn_batch(&batch).unwrap_err().to_string();
    assert!(err.contains("row 1") && err.contains("inf"), "{err}");
    assert_eq!(clf.progress().examples, 0, "a batch with a bad entry is refused whole");
    let nan_labels = [1.0, f64::NAN, 1.0];
    let mut reg = Learner::new(LearnerConfig::default(), Interactions::linear()).unwrap();
    let err =
        reg.learn_batch(&Batch::new(&ns, &nan_labels, None).unwrap()).unwrap_err().to_string();
    assert!(err.contains("row 1: label is NaN"), "{err}");
    let err = Batch::new(&ns, &labels[..2], None).err().unwrap().to_string();
    assert!(err.contains("3 rows but labels have 2"), "{err}");
    let weights = [1.0, -1.0, 1.0];
    let err = reg
        .learn_batch(&Batch::new(&ns, &labels, Some(&weights)).unwrap())
        .unwrap_err()
        .to_string();
    assert!(err.contains("row 1: importance weight is -1"), "{err}");
    let err = reg
        .fit(
            &Batch::new(&ns, &labels, None).unwrap(),
            &FitOptions { passes: 0, ..FitOptions::default() },
        )
        .unwrap_err();
    assert!(err.to_string().contains("passes"), "{err}");
}

/// Numbers that overflow are errors naming the row, and the model is as it was before that
/// example (the audit found NaN weights and predictions of exactly 0 everywhere instead).
#[test]
fn overflowing_examples_are_errors_that_leave_the_model_unchanged() {
    let huge = [2e19f64, 1e30, 1.0];
    for (case, rule, degree, loss, value, label, weight) in [
        ("feature square", UpdateRule::VW_DEFAULT, 1, Loss::Squared(Squared), 1e30, 1.0, 1.0),
        ("cubic term", UpdateRule::VW_DEFAULT, 3, Loss::Squared(Squared), 1e8, 1.0, 1.0),
        ("label", UpdateRule::VW_DEFAULT, 1, Loss::Squared(Squared), 1.0, 1e300, 1.0),
        ("weight", UpdateRule::VW_DEFAULT, 1, Loss::Squared(Squared), 1.0, 1.0, 1e300),
        ("logistic", UpdateRule::VW_DEFAULT, 1, Loss::Logistic(Logistic), huge[1], 1.0, 1.0),
        ("plain sgd", UpdateRule::SGD, 1, Loss::Squared(Squared), huge[0], 1.0, 1.0),
    ] {
        let config = LearnerConfig { loss, rule, ..LearnerConfig::default() };
        let mut learner =
            Learner::new(config, Interactions { degree, ..Interactions::linear() }).unwrap();
        let good = ([0i64, 2], [0u32, 1], [1.0f64, -0.5]);
        let rows = SparseRows::new(&good.0, &good.1, &good.2).unwrap();
        let ns: [&dyn NamespaceRows; 1] = [&rows];
        let one = [1.0];
        learner.learn_batch(&Batch::new(&ns, &one, None).unwrap()).unwrap();
        let before = learner.clone();
        let bad = ([0i64, 2], [0u32, 1], [value, 1.0]);
        let rows = SparseRows::new(&bad.0, &bad.1, &bad.2).unwrap();
        let ns: [&dyn NamespaceRows; 1] = [&rows];
        let (labels, weights) = ([label], [weight]);
        let batch = Batch::new(&ns, &labels, Some(&weights)).unwrap().with_first_row(7);
        let err = learner.learn_batch(&batch).unwrap_err().to_string();
        assert!(err.starts_with("row 7: ") && err.contains("overflow"), "{case}: {err}");
        assert_eq!(learner.weights().data(), before.weights().data(), "{case}");
        assert_eq!(learner.progress(), before.progress(), "{case}");
        assert_eq!(learner.label_range(), before.label_range(), "{case}");
    }
}

#[test]
fn fit_runs_passes_with_holdout_and_seeded_shuffle() {
    let data = stream(500, 11, true);
    let (offsets, indices, values, labels) = rows_of(&data);
    let rows = SparseRows::new(&offsets, &indices, &values).unwrap();
    let ns: [&dyn NamespaceRows; 1] = [&rows];
    let batch = Batch::new(&ns, &labels, None).unwrap();
    let options = FitOptions {
        passes: 4,
        shuffle: true,
        random_state: Some(5),
        holdout: 10,
        n_iter_no_change: 0,
        ..FitOptions::default()
    };
    let run = |options: &FitOptions| {
        let mut l = Learner::new(
            config(Loss::Logistic(Logistic), UpdateRule::VW_DEFAULT),
            Interactions::linear(),
        )
        .unwrap();
        let report = l.fit(&batch, options).unwrap();
        let mut out = Vec::new();
        l.predict_batch(&batch, &mut out).unwrap();
        (report, out, l.progress().examples)
    };
    let (report, first, examples) = run(&options);
    assert_eq!(report.passes_run, 4);
    assert_eq!(report.holdout_loss.len(), 4);
    assert_eq!(examples, 4 * 450, "every 10th row is held out");
    assert!(report.pass_loss[3] < report.pass_loss[0], "{:?}", report.pass_loss);
    assert_eq!(run(&options).1, first, "same seed, same model");
    let other = FitOptions { shuffle: true, random_state: Some(6), ..options.clone() };
    assert_ne!(run(&other).1, first, "another seed, another order");
    // Early stopping: on labels that are pure noise the holdout loss cannot keep improving.
    let noise: Vec<f64> = (0..500u64)
        .map(|r| if (r.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40) & 1 == 0 { 1.0 } else { -1.0 })
        .collect();
    let noisy = Batch::new(&ns, &noise, None).unwrap();
    let patient = FitOptions {
        passes: 30,
        shuffle: false,
        holdout: 5,
        n_iter_no_change: 2,
        ..FitOptions::default()
    };
    let mut l = Learner::new(
        config(Loss::Logistic(Logistic), UpdateRule::VW_DEFAULT),
        Interactions::quadratic(),
    )
    .unwrap();
    let report = l.fit(&noisy, &patient).unwrap();
    assert!(report.stopped_early && report.passes_run < 30, "{report:?}");
    // One pass: no holdout, every row learned.
    let (report, _, examples) = run(&FitOptions { passes: 1, ..options });
    assert!(report.holdout_loss.is_empty());
    assert_eq!(examples, 500);
}

#[test]
fn predict_batch_equals_one_by_one_and_unfitted_predicts_zero() {
    let data = stream(50, 2, false);
    let (offsets, indices, values, labels) = rows_of(&data);
    let rows = SparseRows::new(&offsets, &indices, &values).unwrap();
    let ns: [&dyn NamespaceRows; 1] = [&rows];
    let batch = Batch::new(&ns, &labels, None).unwrap();
    let mut learner = Learner::new(
        config(Loss::Squared(Squared), UpdateRule::VW_DEFAULT),
        Interactions::quadratic(),
    )
    .unwrap();
    let mut out = Vec::new();
    learner.predict_batch(&batch, &mut out).unwrap();
    assert!(out.iter().all(|&p| p == 0.0));
    learner.learn_batch(&batch).unwrap();
    learner.predict_batch(&batch, &mut out).unwrap();
    let mut buffer = ExampleBuffer::new();
    let mut features = ExpandedFeatures::new(12);
    let seed = learner.config().namespace_seed(0);
    for (row, (idx, vals, _, _)) in data.iter().enumerate() {
        buffer.clear();
        buffer.push_namespace(seed, idx, vals, row).unwrap();
        let ex = buffer.finish(0.0, 1.0, row).unwrap();
        assert_eq!(learner.predict_with(&ex, &mut features), out[row]);
    }
    assert!(learner.progressive_loss().unwrap() > 0.0);
}

#[test]
fn namespaces_are_hashed_apart_and_crossed() {
    let offsets = [0i64, 1];
    let a_idx = [3u32];
    let vals = [2.0f64];
    let a = SparseRows::new(&offsets, &a_idx, &vals).unwrap();
    let b = SparseRows::new(&offsets, &a_idx, &vals).unwrap();
    let ns: [&dyn NamespaceRows; 2] = [&a, &b];
    let labels = [1.0];
    let config =
        LearnerConfig { namespaces: vec!["a".into(), "b".into()], ..LearnerConfig::default() };
    let exp = Interactions { degree: 1, namespace_crosses: vec![vec![0, 1]], constant: false };
    let mut learner = Learner::new(config.clone(), exp).unwrap();
    learner.learn_batch(&Batch::new(&ns, &labels, None).unwrap()).unwrap();
    let seed_a = config.namespace_seed(0);
    let seed_b = config.namespace_seed(1);
    assert_ne!(seed_a, seed_b);
    let mask = (1u64 << 18) - 1;
    let slots = [
        (3 + seed_a) & mask,
        (3 + seed_b) & mask,
        (((3 + seed_a).wrapping_mul(16_777_619)) ^ (3 + seed_b)) & mask,
    ];
    for s in slots {
        assert!(learner.effective_weight(s as u32) != 0.0, "slot {s} was learned");
    }
    let err = Learner::new(
        config,
        Interactions { namespace_crosses: vec![vec![0, 2]], ..Interactions::linear() },
    )
    .unwrap_err();
    assert!(err.to_string().contains("[0, 2]"), "{err}");
}

#[test]
fn learn_expanded_checks_its_inputs_and_predict_with_adapts_the_buffer() {
    let mut learner = Learner::new(
        config(Loss::Logistic(Logistic), UpdateRule::VW_DEFAULT),
        Interactions::linear(),
    )
    .unwrap();
    let mut features = ExpandedFeatures::new(12);
    features.push(5, 1.0);
    let err = learner.learn_expanded(&features, -3.0, 1.0).unwrap_err();
    assert!(err.to_string().contains("label -3 is outside [-1, +1]"), "{err}");
    let err = learner.learn_expanded(&features, 1.0, f64::NAN).unwrap_err();
    assert!(err.to_string().contains("importance weight is NaN"), "{err}");
    let wide = ExpandedFeatures::new(20);
    let err = learner.learn_expanded(&wide, 1.0, 1.0).unwrap_err();
    assert!(err.to_string().contains("bits=12"), "{err}");
    assert_eq!(learner.learn_expanded(&features, 1.0, 1.0).unwrap(), 0.0);
    // A scratch buffer made for another table size is replaced, not trusted.
    let mut buffer = ExampleBuffer::new();
    buffer.clear();
    buffer.push_namespace(0, &[5u32], &[1.0f64], 0).unwrap();
    let ex = buffer.finish(1.0, 1.0, 0).unwrap();
    let mut other = ExpandedFeatures::new(30);
    let p = learner.predict_with(&ex, &mut other);
    assert_eq!(other.mask(), (1 << 12) - 1);
    assert!(p > 0.0);
}

#[test]
fn oversized_expansions_are_errors_not_aborts() {
    // 2000 features up to degree 3: 2000 + 2001000 + 1335334000 + 1 terms, over the limit.
    let indices: Vec<u32> = (0..2000).collect();
    let values = vec![1.0f64; 2000];
    let offsets = [0i64, 2000];
    let rows = SparseRows::new(&offsets, &indices, &values).unwrap();
    let ns: [&dyn NamespaceRows; 1] = [&rows];
    let labels = [1.0];
    let batch = Batch::new(&ns, &labels, None).unwrap().with_first_row(7);
    let mut cubic = Learner::new(LearnerConfig::default(), Interactions::cubic()).unwrap();
    let err = cubic.learn_batch(&batch).unwrap_err().to_string();
    assert!(err.contains("row 7: 2000 features expand to 1337337001 terms (degree 3)"), "{err}");
    let mut out = Vec::new();
    assert!(cubic.predict_batch(&batch, &mut out).is_err());
    let mut quadratic = Learner::new(LearnerConfig::default(), Interactions::quadratic()).unwrap();
    quadratic.learn_batch(&batch).unwrap();
    let huge = Interactions { degree: 3, ..Interactions::linear() };
    assert_eq!(huge.checked_count(u64::MAX / 2, |_| 0), None);
}

#[test]
fn sync_folds_the_lazy_regularization_without_changing_predictions() {
    let data = stream(200, 9, false);
    let (offsets, indices, values, labels) = rows_of(&data);
    let rows = SparseRows::new(&offsets, &indices, &values).unwrap();
    let ns: [&dyn NamespaceRows; 1] = [&rows];
    let batch = Batch::new(&ns, &labels, None).unwrap();
    let config = LearnerConfig {
        l1: 1e-3,
        l2: 1e-3,
        ..config(Loss::Squared(Squared), UpdateRule::VW_DEFAULT)
    };
    let mut learner = Learner::new(config, Interactions::linear()).unwrap();
    learner.learn_batch(&batch).unwrap();
    assert!(learner.state().contraction < 1.0 && learner.state().gravity > 0.0);
    let (mut before, mut after) = (Vec::new(), Vec::new());
    learner.predict_batch(&batch, &mut before).unwrap();
    learner.sync();
    assert_eq!((learner.state().contraction, learner.state().gravity), (1.0, 0.0));
    learner.predict_batch(&batch, &mut after).unwrap();
    for (b, a) in before.iter().zip(&after) {
        assert!((b - a).abs() <= 1e-5 * (1.0 + b.abs()), "{b} vs {a}");
    }
}

/// Brute force for tail averaging: learns `data` one row at a time with `rule` and returns the
/// mean, over the last `window` rows, of every slot's weight after each of those rows.
fn mean_of_last_iterates(
    data: &[(Vec<u32>, Vec<f64>, f64, f64)],
    rule: UpdateRule,
    window: usize,
) -> Vec<f64> {
    let (offsets, indices, values, labels) = rows_of(data);
    let config = LearnerConfig { bits: 6, ..config(Loss::Squared(Squared), rule) };
    let mut learner = Learner::new(config, Interactions::quadratic()).unwrap();
    let n_slots = learner.weights().n_slots();
    let mut sums = vec![0.0f64; n_slots];
    for row in 0..data.len() {
        let (a, b) = (offsets[row] as usize, offsets[row + 1] as usize);
        let one = [0i64, (b - a) as i64];
        let rows = SparseRows::new(&one, &indices[a..b], &values[a..b]).unwrap();
        let ns: [&dyn NamespaceRows; 1] = [&rows];
        learner.learn_batch(&Batch::new(&ns, &labels[row..=row], None).unwrap()).unwrap();
        if row + window >= data.len() {
            for (slot, sum) in sums.iter_mut().enumerate() {
                *sum += f64::from(learner.weights().weight(slot as u32));
            }
        }
    }
    sums.iter().map(|s| s / window as f64).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// The averaged model is the mean of the last iterates (6 bits and quadratic features, so
    /// slots collide and one example can touch a slot twice).
    #[test]
    fn tail_average_is_the_mean_of_the_last_iterates(
        seed in 0u64..1000,
        n in 1usize..120,
        tail in 0.01f64..=1.0,
        rule in prop::sample::select(vec![
            UpdateRule::VW_DEFAULT, UpdateRule::SGD, UpdateRule::ADAGRAD,
        ]),
    ) {
        let data = stream(n, seed, false);
        let window = ((n as f64 * tail).ceil() as usize).min(n);
        let expected = mean_of_last_iterates(&data, rule, window);
        let (offsets, indices, values, labels) = rows_of(&data);
        let rows = SparseRows::new(&offsets, &indices, &values).unwrap();
        let ns: [&dyn NamespaceRows; 1] = [&rows];
        let config = LearnerConfig { bits: 6, ..config(Loss::Squared(Squared), rule) };
        let mut learner = Learner::new(config, Interactions::quadratic()).unwrap();
        let options = FitOptions { average_tail: tail, ..FitOptions::default() };
        learner.fit(&Batch::new(&ns, &labels, None).unwrap(), &options).unwrap();
        for (slot, want) in expected.iter().enumerate() {
            let got = f64::from(learner.weights().weight(slot as u32));
            prop_assert!(
                (got - want).abs() <= 1e-5 * want.abs().max(1.0),
                "slot {}: {} vs {}", slot, got, want
            );
        }
    }
}

#[test]
fn tail_averaging_changes_only_the_fitted_weights_and_checks_its_options() {
    let data = stream(400, 3, false);
    let (offsets, indices, values, labels) = rows_of(&data);
    let rows = SparseRows::new(&offsets, &indices, &values).unwrap();
    let ns: [&dyn NamespaceRows; 1] = [&rows];
    let batch = Batch::new(&ns, &labels, None).unwrap();
    let fit = |tail: f64, l2: f64| {
        let config = LearnerConfig { l2, ..config(Loss::Squared(Squared), UpdateRule::VW_DEFAULT) };
        let mut learner = Learner::new(config, Interactions::quadratic()).unwrap();
        let options = FitOptions { average_tail: tail, ..FitOptions::default() };
        learner.fit(&batch, &options).map(|_| learner)
    };
    let last = fit(0.0, 0.0).unwrap();
    let averaged = fit(0.25, 0.0).unwrap();
    // Same run (same progressive loss), different end point.
    assert_eq!(last.progressive_loss(), averaged.progressive_loss());
    assert_ne!(last.weights().data(), averaged.weights().data());
    // And it is a working model: it explains most of the label variance.
    let mut out = Vec::new();
    averaged.predict_batch(&batch, &mut out).unwrap();
    let mse = out.iter().zip(&labels).map(|(p, y)| (p - y).powi(2)).sum::<f64>() / 400.0;
    let var = {
        let mean = labels.iter().sum::<f64>() / 400.0;
        labels.iter().map(|y| (y - mean).powi(2)).sum::<f64>() / 400.0
    };
    assert!(mse < 0.5 * var, "averaged model mse {mse} vs label variance {var}");
    for bad in [-0.1, 1.5, f64::NAN] {
        let err = fit(bad, 0.0).expect_err("rejected").to_string();
        assert!(err.contains("average_tail must be in [0, 1]"), "{err}");
    }
    let err = fit(0.5, 0.01).expect_err("rejected").to_string();
    assert!(err.contains("cannot be combined with l1/l2"), "{err}");
}

/// Learning a batch (examples built a block of rows at a time, one example staged ahead on a
/// table larger than the cache) equals learning its examples one by one, bit for bit: with
/// three namespaces, a cross, polynomial terms (which read the union of the namespaces), and
/// importance weights, over several blocks; predictions of the batch too.
#[test]
fn learning_a_batch_equals_learning_its_examples_one_by_one() {
    let streams = [stream(700, 3, true), stream(700, 4, true), stream(700, 5, true)];
    let arrays: Vec<_> = streams.iter().map(|s| rows_of(s)).collect();
    let rows: Vec<SparseRows<'_, u32, f64>> =
        arrays.iter().map(|(o, i, v, _)| SparseRows::new(o, i, v).unwrap()).collect();
    let ns: Vec<&dyn NamespaceRows> = rows.iter().map(|r| r as &dyn NamespaceRows).collect();
    let labels = &arrays[0].3;
    let weights: Vec<f64> = streams[1].iter().map(|e| e.3).collect();
    let batch = Batch::new(&ns, labels, Some(&weights)).unwrap();
    let expansions = [
        Interactions { namespace_crosses: vec![vec![0, 1], vec![2, 2]], ..Interactions::linear() },
        Interactions { namespace_crosses: vec![vec![1, 2]], ..Interactions::quadratic() },
    ];
    for bits in [12, 22] {
        for expansion in &expansions {
            let config = LearnerConfig {
                bits,
                loss: Loss::Logistic(Logistic),
                namespaces: vec!["a".into(), "b".into(), "c".into()],
                ..LearnerConfig::default()
            };
            let mut batched = Learner::new(config.clone(), expansion.clone()).unwrap();
            assert_eq!(batched.weights().is_large(), bits == 22);
            batched.learn_batch(&batch).unwrap();
            let mut single = Learner::new(config.clone(), expansion.clone()).unwrap();
            let mut buffer = ExampleBuffer::new();
            let mut features = ExpandedFeatures::new(bits);
            let mut expected = Vec::new();
            for row in 0..labels.len() {
                buffer.clear();
                for (k, s) in streams.iter().enumerate() {
                    buffer
                        .push_namespace(config.namespace_seed(k), &s[row].0, &s[row].1, row)
                        .unwrap();
                }
                let example = buffer.finish(labels[row], weights[row], row).unwrap();
                single.learn(&example, row).unwrap();
                expected.push(batched.predict_with(&example, &mut features));
            }
            assert_eq!(batched.progress(), single.progress(), "bits {bits}, {expansion:?}");
            assert_eq!(batched.weights().data(), single.weights().data());
            let mut predicted = Vec::new();
            batched.predict_batch(&batch, &mut predicted).unwrap();
            assert_eq!(predicted, expected);
        }
    }
}

/// The progressive predictions `learn_batch_recording` reports are the model's predictions of
/// each row just before learning it (checked one row at a time), and recording changes nothing
/// the model learns.
#[test]
fn recorded_predictions_are_made_before_learning_each_row() {
    let data = stream(300, 5, true);
    let (offsets, indices, values, labels) = rows_of(&data);
    let rows = SparseRows::new(&offsets, &indices, &values).unwrap();
    let ns: [&dyn NamespaceRows; 1] = [&rows];
    let batch = Batch::new(&ns, &labels, None).unwrap();
    let loss = Loss::Logistic(Logistic);
    let mut recording =
        Learner::new(config(loss, UpdateRule::VW_DEFAULT), Interactions::quadratic()).unwrap();
    let mut plain = recording.clone();
    let mut by_row = recording.clone();
    let mut recorded = Vec::new();
    let sums = recording.learn_batch_recording(&batch, &mut recorded).unwrap();
    assert_eq!(sums, plain.learn_batch(&batch).unwrap());
    assert_eq!(recording.progress(), plain.progress());
    assert_eq!(recorded.len(), data.len());
    for (i, row) in data.iter().enumerate() {
        let (o, ix, v, y) = rows_of(std::slice::from_ref(row));
        let one = SparseRows::new(&o, &ix, &v).unwrap();
        let ns: [&dyn NamespaceRows; 1] = [&one];
        let single = Batch::new(&ns, &y, None).unwrap();
        let mut before = Vec::new();
        by_row.predict_batch(&single, &mut before).unwrap();
        assert_eq!(before[0], recorded[i], "row {i}");
        by_row.learn_batch(&single).unwrap();
    }
}

/// Linear terms of two namespaces and, from the `join_at`-th learned example on, their cross
/// (as field-level apple adds one), asking the learner to keep the last `keep` examples until
/// then and to catch them up on the cross when it joins.
#[derive(Clone, Debug)]
struct CrossJoinsLate {
    join_at: u64,
    keep: usize,
    learned: u64,
}

impl CrossJoinsLate {
    fn new(join_at: u64, keep: usize) -> Self {
        CrossJoinsLate { join_at, keep, learned: 0 }
    }

    fn joined(&self) -> bool {
        self.learned >= self.join_at
    }

    fn now(&self) -> Interactions {
        let crosses = if self.joined() { vec![vec![0, 1]] } else { Vec::new() };
        Interactions { namespace_crosses: crosses, ..Interactions::linear() }
    }
}

impl Expansion for CrossJoinsLate {
    fn expand(&self, example: &Example<'_>, out: &mut ExpandedFeatures) {
        self.now().expand(example, out);
    }

    fn uses_feature_set(&self) -> bool {
        false
    }

    fn validate(&self, n_namespaces: usize) -> PolyResult<()> {
        Interactions { namespace_crosses: vec![vec![0, 1]], ..Interactions::linear() }
            .validate(n_namespaces)
    }

    fn after_learn(&mut self, _example: &Example<'_>, _learned: &Learned<'_>) {
        self.learned += 1;
    }

    fn generation(&self) -> u64 {
        u64::from(self.joined())
    }

    fn crossed_namespaces(&self) -> Vec<Vec<usize>> {
        self.now().namespace_crosses
    }

    /// Like field-level apple's last cross: once it joined, no more examples are wanted.
    fn recent_examples_wanted(&self) -> usize {
        if self.joined() {
            0
        } else {
            self.keep
        }
    }

    fn catch_up_due(&self) -> bool {
        self.learned == self.join_at && self.keep > 0
    }

    fn expand_added(&self, example: &Example<'_>, out: &mut ExpandedFeatures) {
        expansion::push_namespace_cross(example, 0, &[0, 1], out);
    }

    /// The interactions of now, as field-level apple's crosses.
    fn expand_block(
        &self,
        rows: &BlockRows<'_>,
        out: &mut ExpandedFeatures,
        ends: &mut Vec<ExampleEnd>,
    ) {
        self.now().expand_block(rows, out, ends);
    }

    fn block_expansion(&self) -> Option<Interactions> {
        self.now().block_expansion()
    }
}

/// An example of two namespaces: the indices and values of each, the label, the importance.
type TwoNamespaces = (Vec<u32>, Vec<f64>, Vec<u32>, Vec<f64>, f64, f64);

/// Two namespaces of `stream` rows (the second from another seed), as examples.
fn two_namespace_rows(n: usize, seed: u64) -> Vec<TwoNamespaces> {
    let first = stream(n, seed, true);
    let second = stream(n, seed + 1, true);
    first
        .into_iter()
        .zip(second)
        .map(|((i0, v0, y, w), (i1, v1, _, _))| (i0, v0, i1, v1, y, w))
        .collect()
}

fn slots_and_values(features: &ExpandedFeatures) -> Vec<(u32, f64)> {
    features.slots().iter().zip(features.values()).map(|(&s, &x)| (s, f64::from(x))).collect()
}

/// A cross that joins late catches up on the kept examples exactly as the f64 reference replays
/// them (each predicted by the whole model as it is when the cross joins, only the cross's
/// weights stepped), for every update rule; the model's predictions agree on the rows after.
#[test]
fn a_joining_cross_catches_up_as_the_reference_replays() {
    let (join_at, keep) = (150usize, 100usize);
    let data = two_namespace_rows(400, 11);
    let rules = [
        UpdateRule::VW_DEFAULT,
        UpdateRule { normalized: false, ..UpdateRule::VW_DEFAULT },
        UpdateRule { adaptive: false, ..UpdateRule::VW_DEFAULT },
        UpdateRule { invariant: false, ..UpdateRule::VW_DEFAULT },
    ];
    for rule in rules {
        for loss in [Loss::Logistic(Logistic), Loss::Squared(Squared)] {
            let config =
                LearnerConfig { namespaces: vec!["a".into(), "b".into()], ..config(loss, rule) };
            let mut learner =
                Learner::new(config.clone(), CrossJoinsLate::new(join_at as u64, keep)).unwrap();
            let mut reference = Reference::new(&config);
            let mut buffer = ExampleBuffer::new();
            let mut features = ExpandedFeatures::new(config.bits);
            let mut added = ExpandedFeatures::new(config.bits);
            // Per row before the join: its features with the cross, the cross's, label, weight.
            type Kept = (Vec<(u32, f64)>, Vec<(u32, f64)>, f64, f64);
            let mut kept: Vec<Kept> = Vec::new();
            for (row, (i0, v0, i1, v1, y, w)) in data.iter().enumerate() {
                buffer.clear();
                buffer.push_namespace(config.namespace_seed(0), i0, v0, row).unwrap();
                buffer.push_namespace(config.namespace_seed(1), i1, v1, row).unwrap();
                let example = buffer.finish(*y, *w, row).unwrap();
                features.clear();
                learner.expansion().expand(&example, &mut features);
                let full = slots_and_values(&features);
                let ours = learner.learn(&example, row).unwrap();
                let theirs = reference.learn(&full, *y, *w);
                assert!(
                    (ours - theirs).abs() <= 2e-3 * (1.0 + theirs.abs()),
                    "{rule:?} {loss:?}: row {row}: engine {ours} vs reference {theirs}"
                );
                if row < join_at {
                    // What the cross will be on this example, and its features with it.
                    added.clear();
                    learner.expansion().expand_added(&example, &mut added);
                    let mut with_cross = full.clone();
                    with_cross.extend(slots_and_values(&added));
                    kept.push((with_cross, slots_and_values(&added), *y, *w));
                }
                if row + 1 == join_at {
                    for (with_cross, cross, y, w) in &kept[join_at - keep..] {
                        reference.replay(with_cross, cross, *y, *w);
                    }
                }
            }
        }
    }
}

/// A catch-up counts no example twice and moves only the added features' weights: right after
/// the cross joins, the model equals one that did not catch up but for the cross's slots, with
/// and without field scales, and a later fit is deterministic.
#[test]
fn a_catch_up_moves_only_the_added_weights() {
    let data = two_namespace_rows(300, 21);
    let rows: Vec<_> = [0, 1]
        .iter()
        .map(|&k| {
            let mut offsets = vec![0i64];
            let (mut indices, mut values) = (Vec::new(), Vec::new());
            for row in &data {
                let (i, v) = if k == 0 { (&row.0, &row.1) } else { (&row.2, &row.3) };
                indices.extend_from_slice(i);
                values.extend_from_slice(v);
                offsets.push(indices.len() as i64);
            }
            (offsets, indices, values)
        })
        .collect();
    let sparse: Vec<SparseRows<'_, u32, f64>> =
        rows.iter().map(|(o, i, v)| SparseRows::new(o, i, v).unwrap()).collect();
    let ns: Vec<&dyn NamespaceRows> = sparse.iter().map(|r| r as &dyn NamespaceRows).collect();
    let labels: Vec<f64> = data.iter().map(|r| r.4).collect();
    let batch = Batch::new(&ns, &labels, None).unwrap();
    for field_scales in [false, true] {
        let config = LearnerConfig {
            namespaces: vec!["a".into(), "b".into()],
            field_scales,
            ..config(Loss::Logistic(Logistic), UpdateRule::VW_DEFAULT)
        };
        let mut caught_up = Learner::new(config.clone(), CrossJoinsLate::new(300, 200)).unwrap();
        let mut plain = Learner::new(config.clone(), CrossJoinsLate::new(300, 0)).unwrap();
        caught_up.learn_batch(&batch).unwrap();
        plain.learn_batch(&batch).unwrap();
        assert_eq!(caught_up.progress(), plain.progress());
        assert_eq!(caught_up.state(), plain.state());
        assert_eq!(caught_up.field_scales(), plain.field_scales());
        // The cross's slots on the kept rows.
        let mut cross_slots = std::collections::HashSet::new();
        let mut buffer = ExampleBuffer::new();
        let mut added = ExpandedFeatures::new(config.bits);
        for (row, (i0, v0, i1, v1, y, w)) in data.iter().enumerate() {
            buffer.clear();
            buffer.push_namespace(config.namespace_seed(0), i0, v0, row).unwrap();
            buffer.push_namespace(config.namespace_seed(1), i1, v1, row).unwrap();
            let example = buffer.finish(*y, *w, row).unwrap();
            added.clear();
            caught_up.expansion().expand_added(&example, &mut added);
            cross_slots.extend(added.slots().iter().copied());
        }
        let stride = caught_up.weights().stride();
        let (ours, theirs) = (caught_up.weights().data(), plain.weights().data());
        let mut moved = 0;
        for slot in 0..ours.len() / stride {
            let range = slot * stride..(slot + 1) * stride;
            if cross_slots.contains(&(slot as u32)) {
                moved += usize::from(ours[range.clone()] != theirs[range]);
            } else {
                assert_eq!(ours[range.clone()], theirs[range], "slot {slot}");
            }
        }
        assert!(moved > cross_slots.len() / 2, "{moved} of {} cross slots", cross_slots.len());
        // Deterministic.
        let mut again = Learner::new(config, CrossJoinsLate::new(300, 200)).unwrap();
        again.learn_batch(&batch).unwrap();
        assert_eq!(again.weights().data(), caught_up.weights().data());
    }
}

/// A feature of tiny value first seen on a small gradient has a rate `1/(sqrt(G)·N)` beyond
/// single precision (G = g²x², N = |x|): the rate is held at the largest finite value instead
/// of turning the logistic step into NaN (apple's degree-5 products of values near 0, on a
/// confident model, made such features).
#[test]
fn tiny_values_on_small_gradients_learn_without_overflow() {
    let rules =
        [UpdateRule::VW_DEFAULT, UpdateRule { normalized: false, ..UpdateRule::VW_DEFAULT }];
    for rule in rules {
        let loss = Loss::Logistic(Logistic);
        let mut learner = Learner::new(config(loss, rule), Interactions::linear()).unwrap();
        let mut buffer = ExampleBuffer::new();
        for row in 0..210 {
            // A confident model first (a margin above 4.5: gradients under 0.01), then the
            // tiny feature joins.
            let (indices, values): (&[u32], &[f64]) =
                if row < 200 { (&[1], &[1.0]) } else { (&[1, 2], &[1.0, 3e-19]) };
            buffer.clear();
            buffer.push_namespace(0, indices, values, row).unwrap();
            let example = buffer.finish(1.0, 1.0, row).unwrap();
            learner.learn(&example, row).unwrap();
        }
        let data = learner.weights().data();
        assert!(data.iter().all(|v| v.is_finite()), "{rule:?}");
    }
}

/// Fixed interactions whose `check` refuses examples of one label, like an example too large
/// to expand.
#[derive(Clone, Debug)]
struct RefusesLabel(f64);

impl Expansion for RefusesLabel {
    fn expand(&self, example: &Example<'_>, out: &mut ExpandedFeatures) {
        Interactions::linear().expand(example, out);
    }

    fn uses_feature_set(&self) -> bool {
        false
    }

    fn validate(&self, _n_namespaces: usize) -> PolyResult<()> {
        Ok(())
    }

    fn check(&self, example: &Example<'_>, row: usize) -> PolyResult<()> {
        if example.label == self.0 {
            return crate::invalid!("row {row}: refused");
        }
        Ok(())
    }
}

/// An example that cannot be staged (expanded ahead of its turn) stops learning at its row, the
/// rows before it learned, whether the learner looks ahead (a table larger than the cache) or
/// not.
#[test]
fn an_example_refused_ahead_of_its_turn_stops_learning_at_its_row() {
    for bits in [12, 22] {
        let learner =
            refused_at_its_row(700, &[500], bits, BuilderThread::Auto, "row 510: refused");
        assert_eq!(learner.weights().is_large(), bits == 22);
        assert_eq!(learner.progress().examples, 500);
    }
}

/// Learns `n` rows of `stream` (numbered from 10) whose rows `refused` have a label the
/// enumerator refuses, expecting the error `expected`; the learner as it stopped.
fn refused_at_its_row(
    n: usize,
    refused: &[usize],
    bits: u32,
    builder: BuilderThread,
    expected: &str,
) -> Learner<RefusesLabel> {
    let data = stream(n, 9, false);
    let (offsets, indices, values, mut labels) = rows_of(&data);
    for &row in refused {
        labels[row] = 99.0;
    }
    let rows = SparseRows::new(&offsets, &indices, &values).unwrap();
    let ns: [&dyn NamespaceRows; 1] = [&rows];
    let batch = Batch::new(&ns, &labels, None).unwrap().with_first_row(10);
    let config = LearnerConfig { bits, ..config(Loss::Squared(Squared), UpdateRule::VW_DEFAULT) };
    let mut learner = Learner::new(config, RefusesLabel(99.0)).unwrap();
    learner.set_builder_thread(builder);
    let err = learner.learn_batch(&batch).unwrap_err().to_string();
    assert_eq!(err, expected);
    learner
}

/// A seeded pseudo-random draw below its argument (a linear congruential generator's high bits).
fn below(seed: u64) -> impl FnMut(u64) -> u64 {
    let mut state = seed;
    move |modulus| {
        state =
            state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) % modulus
    }
}

/// CSR columns (offsets, indices, values), one a namespace.
type CsrColumns = Vec<(Vec<i64>, Vec<u32>, Vec<f64>)>;

/// CSR columns (offsets, indices, values) of `n` rows of `n_namespaces` namespaces, namespace
/// `k` of row `r` holding the entries `entries(r, k, next)` gives, and each row's label (±1)
/// and importance weight (2.5 one time in 5), all drawn from `below(seed)`.
fn random_rows(
    n: usize,
    n_namespaces: usize,
    seed: u64,
    mut entries: impl FnMut(usize, usize, &mut dyn FnMut(u64) -> u64) -> Vec<(u32, f64)>,
) -> (CsrColumns, Vec<f64>, Vec<f64>) {
    let mut next = below(seed);
    let mut columns = vec![(vec![0i64], Vec::new(), Vec::new()); n_namespaces];
    let (mut labels, mut weights) = (Vec::new(), Vec::new());
    for row in 0..n {
        for (k, column) in columns.iter_mut().enumerate() {
            for (index, value) in entries(row, k, &mut next) {
                column.1.push(index);
                column.2.push(value);
            }
            column.0.push(column.1.len() as i64);
        }
        labels.push(if next(2) == 0 { 1.0 } else { -1.0 });
        weights.push(if next(5) == 0 { 2.5 } else { 1.0 });
    }
    (columns, labels, weights)
}

/// Learns `columns` (CSR: offsets, indices, values) with `expansion` as one batch, a block at a
/// time, and one example at a time, with and without field scales and L1, on a small and a
/// large table, building blocks on the learner's thread and on the builder thread: the
/// progress, weights, field scales and batch scores must be equal bit for bit.
fn assert_blocks_learn_and_score_as_examples(
    columns: &CsrColumns,
    labels: &[f64],
    weights: &[f64],
    expansion: &Interactions,
) {
    let n = labels.len();
    let rows: Vec<SparseRows<'_, u32, f64>> =
        columns.iter().map(|(o, i, v)| SparseRows::new(o, i, v).unwrap()).collect();
    let ns: Vec<&dyn NamespaceRows> = rows.iter().map(|r| r as &dyn NamespaceRows).collect();
    let batch = Batch::new(&ns, labels, Some(weights)).unwrap();
    let names: Vec<String> = (0..columns.len()).map(|k| format!("n{k}")).collect();
    let cases = [12, 22].into_iter().flat_map(|bits| {
        [(false, 0.0, false), (true, 0.0, false), (false, 1e-4, false), (true, 1e-4, false)]
            .into_iter()
            .chain([(false, 0.0, true), (true, 1e-4, true)])
            .map(move |(scales, l1, ffm)| (bits, scales, l1, ffm))
    });
    for (bits, field_scales, l1, ffm) in cases {
        // The factorization over every namespace (it reads each example's field runs).
        let fields = (0..columns.len()).map(namespace_field).collect();
        let config = LearnerConfig {
            bits,
            loss: Loss::Logistic(Logistic),
            namespaces: names.clone(),
            field_scales,
            l1,
            ffm: ffm.then(|| FfmOptions::new(3, 8, fields)),
            ..LearnerConfig::default()
        };
        let mut single = Learner::new(config.clone(), expansion.clone()).unwrap();
        let mut buffer = ExampleBuffer::new();
        let seeds: Vec<u64> = (0..columns.len()).map(|k| config.namespace_seed(k)).collect();
        for row in 0..n {
            let example = batch.example(row, &seeds, &mut buffer).unwrap();
            single.learn(&example, row).unwrap();
        }
        for builder in [BuilderThread::Never, BuilderThread::Always] {
            let mut batched = Learner::new(config.clone(), expansion.clone()).unwrap();
            batched.set_builder_thread(builder);
            batched.learn_batch(&batch).unwrap();
            let case = format!(
                "bits {bits}, field scales {field_scales}, l1 {l1}, ffm {ffm}, {builder:?}"
            );
            assert_eq!(batched.progress(), single.progress(), "{case}");
            assert_eq!(batched.weights().data(), single.weights().data(), "{case}");
            assert_eq!(batched.field_scales(), single.field_scales(), "{case}");
            let table = |l: &Learner<Interactions>| l.ffm().map(|f| f.table().to_vec());
            assert_eq!(table(&batched), table(&single), "{case}");
            assert_eq!(table(&batched).is_some(), ffm, "{case}");
            let mut features = ExpandedFeatures::new(bits);
            let expected: Vec<f64> = (0..n)
                .map(|row| {
                    let example = batch.example(row, &seeds, &mut buffer).unwrap();
                    batched.predict_with(&example, &mut features)
                })
                .collect();
            let mut predicted = Vec::new();
            batched.predict_batch(&batch, &mut predicted).unwrap();
            assert_eq!(predicted, expected, "{case}");
        }
    }
}

/// One-hot rows (one feature in every namespace, like hashed categorical fields) are expanded a
/// block at a time, column by column ([`Expansion::expand_block`]): learning and scoring a
/// batch of them equal doing it one example at a time, bit for bit, with crosses (one of a
/// namespace with itself), importance weights, with and without field scales and L1 (a one-hot
/// block is scored where it lies, field by field as an example's copy would be), on small and
/// large tables; a block with a row of two features in some namespace is expanded row by row.
#[test]
fn one_hot_blocks_learn_and_score_as_examples_one_by_one() {
    let (columns, labels, weights) = random_rows(700, 3, 3, |row, k, next| {
        let value = if k == 2 { 0.5 + next(4) as f64 } else { 1.0 };
        let mut entries = vec![(next(50) as u32, value)];
        // Row 600 has two features in namespace 1: its block is not one-hot.
        if row == 600 && k == 1 {
            entries.push((77, 1.0));
        }
        entries
    });
    for crosses in [vec![vec![0, 1], vec![2, 2]], vec![vec![0, 1, 2], vec![2, 2, 2, 1], vec![1, 0]]]
    {
        let expansion = Interactions { namespace_crosses: crosses, ..Interactions::linear() };
        assert_blocks_learn_and_score_as_examples(&columns, &labels, &weights, &expansion);
    }
}

/// Rows of any shape (a one-hot field beside counts: no feature in some rows, several in
/// others, empty namespaces at either end of a row) are expanded a block at a time, row by
/// row, and learned and scored as one example at a time, bit for bit (the field runs of an
/// empty namespace included); so are blocks where the first namespace is the empty one.
#[test]
fn ragged_blocks_learn_and_score_as_examples_one_by_one() {
    let (columns, labels, weights) = random_rows(1_100, 3, 7, |row, k, next| {
        // Namespace 0 is one-hot after row 300 (empty or not before); 1 is one-hot; 2 holds 0
        // to 3 counts.
        let width = match k {
            0 if row < 300 => next(2) as u32,
            2 => next(4) as u32,
            _ => 1,
        };
        let value =
            |next: &mut dyn FnMut(u64) -> u64| if k == 2 { 1.0 + next(5) as f64 } else { 1.0 };
        (0..width).map(|j| (next(40) as u32 * 4 + j, value(&mut *next))).collect()
    });
    let pairs = vec![vec![0, 1], vec![1, 2], vec![2, 2]];
    let higher = vec![vec![0, 1], vec![1, 0, 2], vec![2, 2, 2], vec![1, 1, 2, 0], vec![0, 1, 0]];
    for crosses in [pairs, higher, vec![]] {
        let expansion = Interactions { namespace_crosses: crosses, ..Interactions::linear() };
        assert_blocks_learn_and_score_as_examples(&columns, &labels, &weights, &expansion);
    }
}

/// A block expanded only in part (rows of a namespace crossed with itself, thousands of
/// features each, past the block's budget after a few rows) learns and scores as one example at
/// a time: the rows past the budget are expanded one by one.
#[test]
fn a_block_expanded_in_part_learns_and_scores_as_examples_one_by_one() {
    let (columns, labels, weights) = random_rows(40, 2, 11, |_, k, next| match k {
        0 => vec![(next(9) as u32, 1.0)],
        _ => (0..100 + next(40) as u32)
            .map(|j| (j * 5 + next(5) as u32, 0.5 + next(3) as f64))
            .collect(),
    });
    let expansion =
        Interactions { namespace_crosses: vec![vec![1, 1], vec![0, 1]], ..Interactions::linear() };
    assert_blocks_learn_and_score_as_examples(&columns, &labels, &weights, &expansion);
}

/// Scoring a batch whose block holds an invalid row (a NaN value) reports that row, whether
/// the other blocks are one-hot (scored from the block expanded whole) or not, on one thread
/// and in parallel, and the first invalid row when there are two.
#[test]
fn scoring_reports_the_first_invalid_row_of_any_block() {
    let n = 5_000usize;
    for one_hot in [true, false] {
        for bad in [[300usize, 4_500], [4_500, 4_600]] {
            let mut offsets = vec![0i64];
            let (mut indices, mut values, mut good) = (Vec::new(), Vec::new(), Vec::new());
            for row in 0..n {
                let width = if one_hot { 1 } else { 1 + row % 3 };
                for k in 0..width {
                    indices.push((row * 7 + k) as u32 % 1_000 + k as u32);
                    values.push(if bad.contains(&row) { f64::NAN } else { 1.0 });
                    good.push(1.0);
                }
                offsets.push(indices.len() as i64);
            }
            let rows = SparseRows::new(&offsets, &indices, &values).unwrap();
            let other = SparseRows::new(&offsets, &indices, &values).unwrap();
            let ns: [&dyn NamespaceRows; 2] = [&rows, &other];
            let labels = vec![1.0; n];
            let batch = Batch::new(&ns, &labels, None).unwrap();
            let valid = SparseRows::new(&offsets, &indices, &good).unwrap();
            let valid_ns: [&dyn NamespaceRows; 2] = [&valid, &valid];
            let training = Batch::new(&valid_ns, &labels, None).unwrap();
            let expansion =
                Interactions { degree: 1, namespace_crosses: vec![vec![0, 1]], constant: true };
            for bits in [12, 25] {
                let namespaces = vec!["a".into(), "b".into()];
                let config = LearnerConfig { bits, namespaces, ..LearnerConfig::default() };
                let mut learner = Learner::new(config, expansion.clone()).unwrap();
                learner.learn_batch(&training).unwrap();
                for parallel in [false, true] {
                    let mut out = Vec::new();
                    let err = learner.predict_batch_with(&batch, &mut out, parallel).unwrap_err();
                    let message = err.to_string();
                    assert!(
                        message.starts_with(&format!("row {}:", bad[0])),
                        "one-hot {one_hot}, bits {bits}, parallel {parallel}: {message}"
                    );
                }
            }
        }
    }
}

/// Two namespaces of `n` rows: one-hot (one feature each, of `values` distinct ones) but for
/// rows `wide` (three features in the first namespace), labels of the pair's parity, importance
/// weights now and then.
fn two_field_batch_parts(n: usize, values: u64, wide: &[usize]) -> TwoFieldParts {
    let mut next = below(17);
    let mut columns: Vec<(Vec<i64>, Vec<u32>, Vec<f64>)> =
        vec![(vec![0], Vec::new(), Vec::new()); 2];
    let (mut labels, mut weights) = (Vec::new(), Vec::new());
    for row in 0..n {
        let ids = [next(values), next(values)];
        for (k, column) in columns.iter_mut().enumerate() {
            let width = if k == 0 && wide.contains(&row) { 3 } else { 1 };
            for j in 0..width {
                column.1.push(ids[k] as u32 * 4 + j);
                column.2.push(1.0);
            }
            column.0.push(column.1.len() as i64);
        }
        labels.push(if (ids[0] + ids[1]) % 2 == 0 { 1.0 } else { -1.0 });
        weights.push(if next(7) == 0 { 2.0 } else { 1.0 });
    }
    (columns, labels, weights)
}

type TwoFieldParts = (Vec<(Vec<i64>, Vec<u32>, Vec<f64>)>, Vec<f64>, Vec<f64>);

/// Learning with the blocks built on a thread beside the learner gives what learning with them
/// built on the learner's thread gives, bit for bit: one-hot blocks expanded by the builder,
/// a block that is not one-hot, a cross that joins mid-batch (blocks the builder expanded
/// before are expanded again), the catch-up it triggers, passes over shuffled rows with a
/// holdout, recorded progressive predictions, small and large tables.
#[test]
fn a_builder_thread_learns_what_the_learner_alone_learns() {
    let n = 6_000;
    let (columns, labels, weights) = two_field_batch_parts(n, 40, &[1_000, 1_001, 4_321]);
    let rows: Vec<SparseRows<'_, u32, f64>> =
        columns.iter().map(|(o, i, v)| SparseRows::new(o, i, v).unwrap()).collect();
    let ns: Vec<&dyn NamespaceRows> = rows.iter().map(|r| r as &dyn NamespaceRows).collect();
    let batch = Batch::new(&ns, &labels, Some(&weights)).unwrap();
    let options = FitOptions {
        passes: 3,
        shuffle: true,
        random_state: Some(4),
        holdout: 9,
        n_iter_no_change: 0,
        ..FitOptions::default()
    };
    for bits in [12, 22] {
        let config = LearnerConfig {
            bits,
            loss: Loss::Logistic(Logistic),
            namespaces: vec!["a".into(), "b".into()],
            ..LearnerConfig::default()
        };
        let run = |builder: BuilderThread, join_at: u64| {
            let expansion = CrossJoinsLate::new(join_at, 50);
            let mut learner = Learner::new(config.clone(), expansion.clone()).unwrap();
            learner.set_builder_thread(builder);
            let mut recorded = Vec::new();
            learner.learn_batch_recording(&batch, &mut recorded).unwrap();
            let mut fitted = Learner::new(config.clone(), expansion).unwrap();
            fitted.set_builder_thread(builder);
            let report = fitted.fit(&batch, &options).unwrap();
            (learner, recorded, fitted, report)
        };
        for join_at in [0, 2_500] {
            let (alone, alone_recorded, alone_fitted, alone_report) =
                run(BuilderThread::Never, join_at);
            let (built, built_recorded, built_fitted, built_report) =
                run(BuilderThread::Always, join_at);
            let case = format!("bits {bits}, cross joins at {join_at}");
            assert_eq!(built.progress(), alone.progress(), "{case}");
            assert_eq!(built.weights().data(), alone.weights().data(), "{case}");
            assert_eq!(built_recorded, alone_recorded, "{case}");
            assert_eq!(built_fitted.weights().data(), alone_fitted.weights().data(), "{case}");
            assert_eq!(built_report.pass_loss, alone_report.pass_loss, "{case}");
            assert_eq!(built_report.holdout_loss, alone_report.holdout_loss, "{case}");
            assert_eq!(built.expansion().joined(), join_at < n as u64, "{case}");
        }
    }
}

/// `test` run on a batch of `n` rows of [`two_field_batch_parts`] (40 values a field, three wide
/// rows).
fn with_two_field_batch<T>(n: usize, test: impl FnOnce(&Batch<'_>) -> T) -> T {
    let (columns, labels, weights) = two_field_batch_parts(n, 40, &[1_000, 1_001, 4_321]);
    let rows: Vec<SparseRows<'_, u32, f64>> =
        columns.iter().map(|(o, i, v)| SparseRows::new(o, i, v).unwrap()).collect();
    let ns: Vec<&dyn NamespaceRows> = rows.iter().map(|r| r as &dyn NamespaceRows).collect();
    test(&Batch::new(&ns, &labels, Some(&weights)).unwrap())
}

/// A logistic learner of a `2^bits` table crossing the two fields of [`two_field_batch_parts`].
fn two_field_cross_learner(bits: u32) -> Learner<Interactions> {
    let config = LearnerConfig {
        bits,
        loss: Loss::Logistic(Logistic),
        namespaces: vec!["a".into(), "b".into()],
        ..LearnerConfig::default()
    };
    let expansion = Interactions { namespace_crosses: vec![vec![0, 1]], ..Interactions::linear() };
    Learner::new(config, expansion).unwrap()
}

/// On a table of gigabytes the builder also prefetches the slots it expands
/// (`SlotAddresses`); learning is unchanged, bit for bit (the second batch finds the table
/// allocated, so its builder prefetches). Predictions are compared, not the 4 GiB tables.
#[test]
fn a_builder_prefetching_a_huge_table_learns_what_the_learner_alone_learns() {
    let n = 5_000;
    with_two_field_batch(n, |batch| {
        let run = |builder: BuilderThread| {
            let mut learner = two_field_cross_learner(28);
            learner.set_builder_thread(builder);
            let mut recorded = Vec::new();
            learner.learn_batch_recording(batch, &mut recorded).unwrap();
            learner.learn_batch_recording(batch, &mut recorded).unwrap();
            (learner.progress().clone(), recorded)
        };
        let (alone, built) = (run(BuilderThread::Never), run(BuilderThread::Always));
        assert_eq!(built, alone);
        assert_eq!(alone.1.len(), 2 * n);
    });
}

/// A batch whose last block holds fewer rows than the learner stages ahead (on a table large
/// enough to look ahead) is learned whole, with the builder thread or without: the block after
/// the last is not there, and the one before it, whose rows are still staged, stays as it was
/// (it was emptied, and learning stopped at an "internal error").
#[test]
fn a_last_block_shorter_than_the_look_ahead_is_learned_whole() {
    for n in [257, 258, 513, 700] {
        with_two_field_batch(n, |batch| {
            let run = |builder: BuilderThread| {
                let mut learner = two_field_cross_learner(22);
                assert!(learner.weights().is_large());
                learner.set_builder_thread(builder);
                let mut recorded = Vec::new();
                learner.learn_batch_recording(batch, &mut recorded).unwrap();
                assert_eq!(recorded.len(), n);
                (learner.progress().clone(), recorded)
            };
            assert_eq!(run(BuilderThread::Always), run(BuilderThread::Never), "{n} rows");
        });
    }
}

/// A growing table learns in pieces between its looks (here it never grows: 2^20 slots hold
/// the features): the same model as one fixed table, with the builder thread or without, for
/// batches cut anywhere (the pieces' last blocks are partial).
#[test]
fn learning_between_looks_at_a_growing_table_is_learning_at_once() {
    let n = 9_000;
    with_two_field_batch(n, |batch| {
        let run = |builder: BuilderThread, max_bits: Option<u32>| {
            let config = LearnerConfig {
                bits: 20,
                max_bits,
                loss: Loss::Logistic(Logistic),
                namespaces: vec!["a".into(), "b".into()],
                ..LearnerConfig::default()
            };
            let cross =
                Interactions { namespace_crosses: vec![vec![0, 1]], ..Interactions::linear() };
            let mut learner = Learner::new(config, cross).unwrap();
            learner.set_builder_thread(builder);
            let mut recorded = Vec::new();
            learner.learn_batch_recording(batch, &mut recorded).unwrap();
            learner.learn_batch_recording(batch, &mut recorded).unwrap();
            let options = FitOptions { passes: 2, holdout: 10, ..FitOptions::default() };
            learner.fit(batch, &options).unwrap();
            assert_eq!(learner.config().bits, 20);
            (learner.progress().clone(), recorded)
        };
        let fixed = run(BuilderThread::Never, None);
        for builder in [BuilderThread::Never, BuilderThread::Always] {
            assert_eq!(run(builder, Some(24)), fixed, "{builder:?}");
        }
    });
}

/// With a builder thread, an example refused at its turn still stops learning at its row, the
/// rows before it learned, and the builder stops with the learner.
#[test]
fn a_builder_thread_stops_at_the_first_refused_row() {
    for bits in [12, 22] {
        let learner = refused_at_its_row(
            9_000,
            &[5_000, 7_000],
            bits,
            BuilderThread::Always,
            "row 5010: refused",
        );
        assert_eq!(learner.progress().examples, 5_000);
    }
}

#[test]
fn invalid_entries_name_their_column_when_there_are_several() {
    // Row 1 holds a bad value in the second namespace, "num".
    let a = ([0i64, 1, 2], [0u32, 1], [1.0f64, 1.0]);
    let a = SparseRows::new(&a.0, &a.1, &a.2).unwrap();
    let names = ["A".to_string(), "num".to_string()];
    for (value, expected) in [
        (1e300, "row 1: feature 3 has value 1e300, beyond the f32 range"),
        (1e30, "row 1: a feature has value 1e30 in magnitude, whose square overflows"),
        (f64::NAN, "row 1: feature 3 has non-finite value NaN"),
    ] {
        let num = ([0i64, 1, 2], [2u32, 3], [0.5f64, value]);
        let num = SparseRows::new(&num.0, &num.1, &num.2).unwrap();
        let ns: [&dyn NamespaceRows; 2] = [&a, &num];
        let labels = [1.0, -1.0];
        let config = LearnerConfig {
            namespaces: names.to_vec(),
            ..config(Loss::Squared(Squared), UpdateRule::VW_DEFAULT)
        };
        let mut learner = Learner::new(config.clone(), Interactions::linear()).unwrap();
        let batch = Batch::new(&ns, &labels, None).unwrap();
        let named = batch.with_names(&names);
        let err = learner.learn_batch(&named).unwrap_err().to_string();
        assert!(err.starts_with(&format!("column \"num\", {expected}")), "{err}");
        // Unnamed batches, and a batch of one named column, say the row only.
        let err = learner.learn_batch(&batch).unwrap_err().to_string();
        assert!(err.starts_with(expected), "{err}");
        let one: [&dyn NamespaceRows; 1] = [&num];
        let single = Batch::new(&one, &labels, None).unwrap();
        let config = LearnerConfig { namespaces: names[1..].to_vec(), ..config.clone() };
        let mut alone = Learner::new(config, Interactions::linear()).unwrap();
        let err = alone.learn_batch(&single.with_names(&names[1..])).unwrap_err().to_string();
        assert!(err.starts_with(expected), "{err}");
        // A batch of more (or fewer) columns than the model's namespaces is refused.
        let err = alone.learn_batch(&named).unwrap_err().to_string();
        assert!(err.starts_with("the batch has 2 feature column(s) but the model has 1"), "{err}");
        let err = alone.predict_batch_with(&named, &mut Vec::new(), false).unwrap_err();
        assert!(err.to_string().starts_with("the batch has 2 feature column(s)"), "{err}");
        // Scoring builds blocks of rows, not examples one by one: the same error.
        let mut scores = Vec::new();
        if value.abs() > 1e38 || value.is_nan() {
            let err = learner.predict_batch_with(&named, &mut scores, false).unwrap_err();
            assert!(err.to_string().starts_with(&format!("column \"num\", {expected}")), "{err}");
        }
    }
}

/// A run announced with `begin_run` starts a large table on huge pages; it learns what the
/// same run unannounced learns (whose table moves to huge pages on the way), bit for bit.
#[test]
fn an_announced_run_learns_what_an_unannounced_one_learns() {
    with_two_field_batch(6_000, |batch| {
        let run = |announced: Option<u64>| {
            // 2^21 slots at stride 4: 32 MiB, a large table.
            let mut learner = two_field_cross_learner(21);
            if let Some(examples) = announced {
                learner.begin_run(examples).unwrap();
                assert!(learner.weights().uses_huge_pages());
            }
            learner.learn_batch(batch).unwrap();
            learner
        };
        let (plain, announced) = (run(None), run(Some(1 << 18)));
        assert_eq!(announced.progress(), plain.progress());
        assert_eq!(announced.weights().data(), plain.weights().data());
    });
}

/// Rows learned as given ([`InOrderRows`], Vowpal Wabbit's): with features repeated and reversed
/// and a table of 32 slots (collisions in most rows), each progressive prediction is the
/// reference's given the features in file order (then the constant), one feature per entry.
#[test]
fn in_order_rows_learn_each_entry_in_file_order_as_the_reference() {
    for loss in [Loss::Squared(Squared), Loss::Logistic(Logistic)] {
        let config = LearnerConfig {
            bits: 5,
            namespaces: vec!["a".into()],
            ..config(loss, UpdateRule::VW_DEFAULT)
        };
        let seed = config.namespace_seed(0);
        let data = stream(200, 11, loss.is_classification());
        let (mut offsets, mut indices, mut values) =
            (vec![0i64], Vec::<u32>::new(), Vec::<f64>::new());
        let (mut labels, mut weights) = (Vec::new(), Vec::new());
        for (idx, vals, y, imp) in &data {
            // Reversed, and the (new) first entry repeated with another value.
            indices.extend(idx.iter().rev());
            values.extend(vals.iter().rev());
            indices.push(*idx.last().unwrap());
            values.push(0.75);
            offsets.push(indices.len() as i64);
            labels.push(*y);
            weights.push(*imp);
        }
        let rows = InOrderRows(SparseRows::new(&offsets, &indices, &values).unwrap());
        let namespaces: [&dyn NamespaceRows; 1] = [&rows];
        let batch = Batch::new(&namespaces, &labels, Some(&weights)).unwrap();
        let mut learner = Learner::new(config.clone(), Interactions::linear()).unwrap();
        let mut records = Vec::new();
        learner.learn_batch_scored(&batch, &vec![false; data.len()], &mut records).unwrap();

        // Sorted and summed, as a sparse column is, the rows learn another model.
        let canonical = SparseRows::new(&offsets, &indices, &values).unwrap();
        let canonical: [&dyn NamespaceRows; 1] = [&canonical];
        let canonical = Batch::new(&canonical, &labels, Some(&weights)).unwrap();
        let mut sorted = Learner::new(config.clone(), Interactions::linear()).unwrap();
        let mut sorted_records = Vec::new();
        sorted
            .learn_batch_scored(&canonical, &vec![false; data.len()], &mut sorted_records)
            .unwrap();
        assert!(records.iter().zip(&sorted_records).any(|(a, b)| a.prediction != b.prediction));

        let mut reference = Reference::new(&config);
        let slot = |hash: u64, x: f64| ((hash & 31) as u32, x);
        let constant = slot(u64::from(crate::hashing::CONSTANT_FEATURE), 1.0);
        for (row, record) in records.iter().enumerate() {
            let (start, end) = (offsets[row] as usize, offsets[row + 1] as usize);
            let mut pairs: Vec<(u32, f64)> = (start..end)
                .map(|e| slot(u64::from(indices[e]) + seed, f64::from(values[e] as f32)))
                .collect();
            pairs.push(constant);
            assert_eq!(record.features, pairs.len() as u64, "row {row}");
            let theirs = reference.learn(&pairs, labels[row], weights[row]);
            assert!(
                (record.prediction - theirs).abs() <= 2e-3 * (1.0 + theirs.abs()),
                "{loss:?}: row {row}: engine {} vs reference {theirs}",
                record.prediction
            );
        }
    }
}

/// Two one-hot fields whose label is the parity of the pair (a value's parity is a latent
/// "kind"): no weight of a single value says anything, and without the cross a linear model
/// stays at chance; the factorization learns each value's kind and scores the pairs.
#[test]
fn a_factorization_learns_what_the_fields_say_together() {
    let progressive_tail = |ffm: Option<FfmOptions>| {
        with_two_field_batch(20_000, |batch| {
            let config = LearnerConfig {
                bits: 16,
                loss: Loss::Logistic(Logistic),
                namespaces: vec!["a".into(), "b".into()],
                ffm,
                ..LearnerConfig::default()
            };
            let mut learner = Learner::new(config, Interactions::linear()).unwrap();
            let mut recorded = Vec::new();
            learner.learn_batch_recording(batch, &mut recorded).unwrap();
            let tail = &recorded[15_000..];
            let wrong = tail.iter().zip(&batch.labels[15_000..]).filter(|(p, y)| **p * **y <= 0.0);
            wrong.count() as f64 / tail.len() as f64
        })
    };
    let linear = progressive_tail(None);
    let mut options = FfmOptions::new(4, 10, vec![namespace_field(0), namespace_field(1)]);
    options.learning_rate = 0.2;
    let factorized = progressive_tail(Some(options));
    assert!(linear > 0.35, "linear progressive error {linear}");
    assert!(factorized < 0.05, "factorized progressive error {factorized}");
}

#[test]
fn ffm_fields_must_be_namespaces() {
    let config = |fields: Vec<u32>| LearnerConfig {
        namespaces: vec!["a".into(), "b".into()],
        ffm: Some(FfmOptions::new(2, 4, fields)),
        ..LearnerConfig::default()
    };
    assert!(config(vec![1, 2]).validate().is_ok());
    let error = config(vec![1, 3]).validate().unwrap_err().to_string();
    assert!(error.contains("ffm field 3 is not a namespace's field (1..=2"), "{error}");
    let error = Learner::new(config(vec![0]), Interactions::linear()).err().unwrap().to_string();
    assert!(error.contains("ffm field 0"), "{error}");
}

/// What each pair of fields carries: on two one-hot fields, the pair only; a model without a
/// factorization says it has none.
#[test]
fn ffm_pair_terms_name_the_pair_that_carries_the_score() {
    with_two_field_batch(3_000, |batch| {
        let fields = vec![namespace_field(0), namespace_field(1)];
        let config = LearnerConfig {
            bits: 14,
            loss: Loss::Logistic(Logistic),
            namespaces: vec!["a".into(), "b".into()],
            ffm: Some(FfmOptions::new(4, 10, fields)),
            ..LearnerConfig::default()
        };
        let mut learner = Learner::new(config.clone(), Interactions::linear()).unwrap();
        learner.learn_batch(batch).unwrap();
        let terms = learner.ffm_pair_terms(batch).unwrap();
        assert_eq!(terms.len(), 4);
        assert!(terms[1] > 0.05, "{terms:?}");
        // Rows 1,000, 1,001 and 4,321 hold three features in field a: the only pairs within.
        assert!(terms[0] < 0.01 * terms[1] && terms[3] == 0.0, "{terms:?}");
        let plain = Learner::new(LearnerConfig { ffm: None, ..config }, Interactions::linear());
        let error = plain.unwrap().ffm_pair_terms(batch).unwrap_err().to_string();
        assert!(error.contains("no field-aware factorization"), "{error}");
    });
}

/// A factorization over crossed pairs alone follows the enumerator's crosses: without one it
/// has no term (the model is the linear one, bit for bit); given the cross, its pair alone
/// carries the score; a cross that joins late gives its pair a term from then on.
#[test]
fn a_crossed_factorization_follows_the_enumerators_crosses() {
    with_two_field_batch(3_000, |batch| {
        let mut ffm = FfmOptions::new(4, 10, vec![namespace_field(0), namespace_field(1)]);
        ffm.pairs = FfmPairs::Crosses;
        let config = LearnerConfig {
            bits: 14,
            loss: Loss::Logistic(Logistic),
            namespaces: vec!["a".into(), "b".into()],
            ffm: Some(ffm),
            ..LearnerConfig::default()
        };
        let crossing =
            Interactions { namespace_crosses: vec![vec![0, 1]], ..Interactions::linear() };
        let mut given = Learner::new(config.clone(), crossing).unwrap();
        assert_eq!(given.ffm().unwrap().pairs(), [(0, 1)]);
        given.learn_batch(batch).unwrap();
        let terms = given.ffm_pair_terms(batch).unwrap();
        assert!(terms[1] > 0.05 && terms[0] == 0.0 && terms[3] == 0.0, "{terms:?}");

        let mut alone = Learner::new(config.clone(), Interactions::linear()).unwrap();
        let plain = LearnerConfig { ffm: None, ..config.clone() };
        let mut plain = Learner::new(plain, Interactions::linear()).unwrap();
        alone.learn_batch(batch).unwrap();
        plain.learn_batch(batch).unwrap();
        assert!(alone.ffm().unwrap().pairs().is_empty());
        assert_eq!(alone.weights().data(), plain.weights().data());

        let mut never = Learner::new(config.clone(), CrossJoinsLate::new(10_000, 0)).unwrap();
        let start = never.ffm().unwrap().table().to_vec();
        never.learn_batch(batch).unwrap();
        assert!(never.ffm().unwrap().pairs().is_empty());
        assert_eq!(never.ffm().unwrap().table(), &start[..], "no pair, no step");
        let mut late = Learner::new(config, CrossJoinsLate::new(1_000, 0)).unwrap();
        late.learn_batch(batch).unwrap();
        assert_eq!(late.ffm().unwrap().pairs(), [(0, 1)]);
        assert_ne!(late.ffm().unwrap().table(), &start[..]);
    });
}

/// A row whose factorization step overflows (its score and the weights' step do not) is
/// refused before anything moves: the weights and the latent table are as they were.
#[test]
fn a_factorization_step_that_overflows_moves_no_weight() {
    let config = LearnerConfig {
        bits: 12,
        loss: Loss::Logistic(Logistic),
        namespaces: vec!["a".into(), "b".into()],
        ffm: Some(FfmOptions::new(4, 8, vec![namespace_field(0), namespace_field(1)])),
        ..LearnerConfig::default()
    };
    let mut learner = Learner::new(config, Interactions::linear()).unwrap();
    let mut buffer = ExampleBuffer::new();
    let mut learn = |learner: &mut Learner<Interactions>, value: f64| {
        buffer.clear();
        for ns in 0..2 {
            let seed = learner.config().namespace_seed(ns);
            buffer.push_namespace(seed, &[3u32 + ns as u32], &[value], 0).unwrap();
        }
        let example = buffer.finish(1.0, 1.0, 0).unwrap();
        learner.learn(&example, 0).map_err(|e| e.to_string())
    };
    learn(&mut learner, 1.0).unwrap();
    let weights = learner.weights().data().to_vec();
    let latent = learner.ffm().unwrap().table().to_vec();
    let error = learn(&mut learner, 1e15).unwrap_err();
    assert!(error.contains("the factorization's step overflows"), "{error}");
    assert_eq!(learner.weights().data(), &weights[..]);
    assert_eq!(learner.ffm().unwrap().table(), &latent[..]);
}

/// Under Vowpal Wabbit's policy a row whose feature's square overflows is counted, predicted
/// as vw predicts it, moves no weight (every weight stays finite) and is reported; the rows
/// after it learn. The default policy refuses it, naming it.
#[test]
fn the_vw_overflow_policy_predicts_zero_and_learns_on() {
    let offsets = [0i64, 2, 4, 6, 8];
    let indices = [0u32, 1, 0, 2, 0, 1, 0, 1];
    let values = [1.0f64, 0.5, 1.0, 1e30, 1.0, 0.5, 1.0, 0.5];
    let rows = SparseRows::new(&offsets, &indices, &values).unwrap();
    let ns: [&dyn NamespaceRows; 1] = [&rows];
    let labels = [1.0, 2.0, 1.0, 1.0];
    let batch = Batch::new(&ns, &labels, None).unwrap();
    let config = config(Loss::Squared(Squared), UpdateRule::VW_DEFAULT);

    let mut refusing = Learner::new(config.clone(), Interactions::linear()).unwrap();
    let err = refusing.learn_batch(&batch).unwrap_err().to_string();
    assert!(err.starts_with("row 1: a feature has value 1e30 in magnitude"), "{err}");

    let mut learner = Learner::new(config, Interactions::linear()).unwrap();
    assert_eq!(learner.set_overflow_policy(OverflowPolicy::PredictZero), OverflowPolicy::Refuse);
    let mut records = Vec::new();
    learner.learn_batch_scored(&batch, &[false; 4], &mut records).unwrap();
    assert_eq!(learner.progress().examples, 4);
    assert!(records.iter().all(|r| r.prediction.is_finite() && r.weighted_loss.is_finite()));
    let skipped = learner.take_overflowed_rows();
    assert_eq!(skipped.len(), 1);
    assert_eq!(skipped[0].row, 1);
    assert!(skipped[0].reason.contains("overflows single precision"), "{}", skipped[0].reason);
    assert!(learner.take_overflowed_rows().is_empty());
    let data = learner.weights().data();
    assert!(data.iter().step_by(learner.weights().stride()).all(|w| w.is_finite()));
    // Rows 2 and 3 (the same as row 0) are predicted with what rows 0 and 2 taught.
    assert!(records[3].prediction > records[2].prediction && records[2].prediction > 0.0);
}
