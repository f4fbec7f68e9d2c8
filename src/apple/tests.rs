//! apple inside the learner: the paper's single-monomial example, schedule and determinism.

use super::monomial::Identity;
use super::*;
use crate::learner::{
    Batch, Expansion, FitOptions, Interactions, Learner, LearnerConfig, NamespaceRows,
};
use crate::sparse::SparseRows;

/// Rows of `width` binary features (each 1 with probability 1/2, stored sparse) and the target
/// x0·x1·x2 plus Gaussian-ish noise of standard deviation `noise`.
pub(crate) struct Data {
    pub offsets: Vec<i64>,
    pub indices: Vec<u32>,
    pub values: Vec<f32>,
    pub labels: Vec<f64>,
}

pub(crate) fn single_monomial(n: usize, width: u32, noise: f64, seed: u64) -> Data {
    let mut state = seed;
    let mut next = || {
        state =
            state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut data =
        Data { offsets: vec![0], indices: Vec::new(), values: Vec::new(), labels: Vec::new() };
    for _ in 0..n {
        let mut on = [false; 64];
        for (j, bit) in on.iter_mut().enumerate().take(width as usize) {
            *bit = next() < 0.5;
            if *bit {
                data.indices.push(j as u32);
                data.values.push(1.0);
            }
        }
        // Sum of 4 uniforms: mean 2, variance 1/3.
        let gauss = ((0..4).map(|_| next()).sum::<f64>() - 2.0) * 3f64.sqrt();
        let target = f64::from(u8::from(on[0] && on[1] && on[2]));
        data.labels.push(target + noise * gauss);
        data.offsets.push(data.indices.len() as i64);
    }
    data
}

pub(crate) fn squared_config() -> LearnerConfig {
    LearnerConfig { bits: 20, ..LearnerConfig::default() }
}

pub(crate) fn fit<E: Expansion>(expansion: E, data: &Data, passes: usize) -> Learner<E> {
    let rows = SparseRows::new(&data.offsets, &data.indices, &data.values).unwrap();
    let ns: [&dyn NamespaceRows; 1] = [&rows];
    let batch = Batch::new(&ns, &data.labels, None).unwrap();
    let mut learner = Learner::new(squared_config(), expansion).unwrap();
    let options = FitOptions { passes, holdout_period: 0, ..FitOptions::default() };
    learner.fit(&batch, &options).unwrap();
    learner
}

pub(crate) fn test_mse<E: Expansion>(learner: &Learner<E>, data: &Data) -> f64 {
    let rows = SparseRows::new(&data.offsets, &data.indices, &data.values).unwrap();
    let ns: [&dyn NamespaceRows; 1] = [&rows];
    let batch = Batch::new(&ns, &data.labels, None).unwrap();
    let mut out = Vec::new();
    learner.predict_batch(&batch, &mut out).unwrap();
    out.iter().zip(&data.labels).map(|(p, y)| (p - y) * (p - y)).sum::<f64>() / out.len() as f64
}

#[test]
fn apple_discovers_a_single_degree_3_monomial_that_linear_cannot_fit() {
    let noise = 0.1;
    let train = single_monomial(60_000, 10, noise, 1);
    let test = single_monomial(10_000, 10, noise, 2);
    let lin = fit(Interactions::linear(), &train, 1);
    let apple = fit(Apple::new(AppleConfig::default()).unwrap(), &train, 1);
    let (lin_mse, apple_mse) = (test_mse(&lin, &test), test_mse(&apple, &test));
    let noise_var = noise * noise;
    // The best linear fit of x0·x1·x2 leaves a large part of its variance (7/64 ≈ 0.109).
    assert!(lin_mse > noise_var + 0.03, "linear: {lin_mse}");
    assert!(apple_mse < noise_var * 1.5, "apple: {apple_mse} vs noise {noise_var}");
    let found = apple.expansion().parents().iter().any(|p| {
        let f = p.monomial.factors();
        f.len() == 2 && {
            let seed = squared_config().namespace_seed(0);
            let idx: Vec<u64> = f.iter().map(|h| h - seed).collect();
            idx.iter().all(|&i| i < 3)
        }
    });
    assert!(found, "a degree-2 sub-monomial of x0·x1·x2 must be a parent");
}

#[test]
fn a_known_run_gets_five_expansions_of_s_parents() {
    let data = single_monomial(6_000, 10, 0.1, 3);
    let apple = fit(Apple::new(AppleConfig::default()).unwrap(), &data, 2);
    let e = apple.expansion();
    assert_eq!(e.progress().expansions, 5);
    assert_eq!(e.progress().learned, 12_000);
    // s̄ ≈ 5 ones + the constant, s = floor(s̄) per expansion.
    let s_bar = e.average_nonzeros();
    assert!((5.8..6.2).contains(&s_bar), "{s_bar}");
    let s = e.parents_per_expansion();
    assert_eq!(s, s_bar.floor() as usize);
    // (s̄ moves a little between expansions.)
    assert!(e.parents().len() <= 5 * (s + 1) && e.parents().len() >= s, "{}", e.parents().len());
    for p in e.parents() {
        assert!((1..=5).contains(&p.expansion));
        assert!(p.monomial.degree() <= p.expansion as usize, "degree grows by one per epoch");
    }
    // With alpha = 0.5: floor(sqrt(6)) = 2 per expansion.
    let config = AppleConfig { alpha: 0.5, ..AppleConfig::default() };
    let small = fit(Apple::new(config).unwrap(), &data, 1);
    assert!(small.expansion().parents().len() <= 10);
}

#[test]
fn training_is_deterministic() {
    let data = single_monomial(5_000, 12, 0.1, 4);
    for ranking in [Ranking::Magnitude, Ranking::Ssm] {
        let config = AppleConfig { ranking, fallback: true, ..AppleConfig::default() };
        let a = fit(Apple::new(config.clone()).unwrap(), &data, 1);
        let b = fit(Apple::new(config).unwrap(), &data, 1);
        assert_eq!(a.expansion(), b.expansion());
        assert_eq!(a.weights().data(), b.weights().data());
    }
}

#[test]
fn max_degree_one_is_the_linear_learner() {
    let data = single_monomial(3_000, 10, 0.1, 5);
    let config = AppleConfig { max_degree: 1, ..AppleConfig::default() };
    let apple = fit(Apple::new(config).unwrap(), &data, 1);
    let lin = fit(Interactions::linear(), &data, 1);
    assert!(apple.expansion().parents().is_empty());
    assert_eq!(apple.weights().data(), lin.weights().data());
    let config = AppleConfig { max_degree: 2, ..AppleConfig::default() };
    let apple = fit(Apple::new(config).unwrap(), &data, 1);
    assert!(apple.expansion().parents().iter().all(|p| p.monomial.degree() == 1));
}

#[test]
fn streams_without_a_length_use_the_doubling_schedule() {
    let data = single_monomial(9_000, 10, 0.1, 6);
    let rows = SparseRows::new(&data.offsets, &data.indices, &data.values).unwrap();
    let ns: [&dyn NamespaceRows; 1] = [&rows];
    let batch = Batch::new(&ns, &data.labels, None).unwrap();
    let mut learner =
        Learner::new(squared_config(), Apple::new(AppleConfig::default()).unwrap()).unwrap();
    learner.learn_batch(&batch).unwrap();
    // 1000, 2000, 4000, 8000.
    assert_eq!(learner.expansion().progress().expansions, 4);
    let config = AppleConfig { schedule: ScheduleKind::Epochs, ..AppleConfig::default() };
    let mut learner = Learner::new(squared_config(), Apple::new(config).unwrap()).unwrap();
    learner.learn_batch(&batch).unwrap();
    assert_eq!(learner.expansion().progress().expansions, 0, "epochs need a run length");
}

#[test]
fn bad_configurations_are_rejected() {
    let bad = [
        AppleConfig { alpha: 0.0, ..AppleConfig::default() },
        AppleConfig { alpha: f64::NAN, ..AppleConfig::default() },
        AppleConfig { max_degree: 0, ..AppleConfig::default() },
        AppleConfig { max_degree: 9, ..AppleConfig::default() },
        AppleConfig { window: 0, ..AppleConfig::default() },
        AppleConfig { epochs: 0, ..AppleConfig::default() },
    ];
    for config in bad {
        assert!(Apple::new(config.clone()).is_err(), "{config:?}");
    }
}

pub(crate) fn slice(data: &Data, from: usize, to: usize) -> Data {
    let (a, b) = (data.offsets[from] as usize, data.offsets[to] as usize);
    Data {
        offsets: data.offsets[from..=to].iter().map(|&o| o - a as i64).collect(),
        indices: data.indices[a..b].to_vec(),
        values: data.values[a..b].to_vec(),
        labels: data.labels[from..to].to_vec(),
    }
}

pub(crate) fn learn_part<E: Expansion>(learner: &mut Learner<E>, data: &Data) {
    let rows = SparseRows::new(&data.offsets, &data.indices, &data.values).unwrap();
    let ns: [&dyn NamespaceRows; 1] = [&rows];
    let batch = Batch::new(&ns, &data.labels, None).unwrap();
    learner.learn_batch(&batch).unwrap();
}

#[test]
fn path_identity_emits_a_product_once_per_path_like_vowpal_wabbit() {
    use super::parents::ParentSet;
    use super::walk::{walk_children, Node, WalkScratch};
    use crate::learner::expansion::INTERACTION_PRIME as P;
    let mut parents = ParentSet::new();
    parents.insert_keyed(Monomial::new(vec![10]), 10, 1);
    parents.insert_keyed(Monomial::new(vec![20]), 20, 1);
    let (hashes, values) = ([10u64, 20, 30], [1.0f32, 2.0, 3.0]);
    let mut slots = Vec::new();
    let mut sink = |_: &Node, _: usize, _: u64, slot: u64, _: f32| slots.push(slot);
    let mut scratch = WalkScratch::default();
    walk_children(&parents, 6, Identity::Path, &hashes, &values, &mut scratch, &mut sink);
    // From x10: 10·P ^ {10, 20, 30}; from x20: 20·P ^ {10, 20, 30}: x10·x20 twice.
    let mut expected: Vec<u64> =
        [10u64, 20].iter().flat_map(|&a| hashes.iter().map(move |&b| (a * P) ^ b)).collect();
    expected.sort_unstable();
    slots.sort_unstable();
    assert_eq!(slots, expected);
}

/// The learner expands each example one ahead of its turn; parents added in between must reach
/// the next example: batch learning equals learning the rows one at a time.
#[test]
fn batch_learning_equals_one_row_at_a_time_while_apple_grows() {
    let data = single_monomial(9_000, 10, 0.1, 8);
    let rows = SparseRows::new(&data.offsets, &data.indices, &data.values).unwrap();
    let ns: [&dyn NamespaceRows; 1] = [&rows];
    // bits 22: a 64 MiB table, large enough for the learner to look ahead.
    let config = LearnerConfig { bits: 22, ..squared_config() };
    let new = || Learner::new(config.clone(), Apple::new(AppleConfig::default()).unwrap());
    let mut batched = new().unwrap();
    batched.learn_batch(&Batch::new(&ns, &data.labels, None).unwrap()).unwrap();
    assert_eq!(batched.expansion().progress().expansions, 4, "apple grows during the batch");
    let mut single = new().unwrap();
    let mut buffer = crate::learner::ExampleBuffer::new();
    for (row, &label) in data.labels.iter().enumerate() {
        buffer.clear();
        rows.push_into(row, config.namespace_seed(0), &mut buffer).unwrap();
        single.learn(&buffer.finish(label, 1.0, row).unwrap(), row).unwrap();
    }
    assert_eq!(batched.expansion().parents(), single.expansion().parents());
    assert_eq!(batched.weights().data(), single.weights().data());
}
