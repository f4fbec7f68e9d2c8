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
    let options = FitOptions { passes, holdout: 0, ..FitOptions::default() };
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

#[test]
fn a_copy_given_another_ranking_before_the_first_expansion_is_that_rankings_model() {
    // The race of `ranking="auto"` (Python's `RankingRace`) relies on this: the ranking is
    // read only when an expansion selects parents.
    let data = single_monomial(6_000, 12, 0.1, 9);
    let rows = SparseRows::new(&data.offsets, &data.indices, &data.values).unwrap();
    let new = |ranking| {
        let config = AppleConfig { ranking, ..AppleConfig::default() };
        let mut learner = Learner::new(squared_config(), Apple::new(config).unwrap()).unwrap();
        learner.expansion_mut().begin_run(6_000);
        learner
    };
    let mut buffer = crate::learner::ExampleBuffer::new();
    let mut learn = |learner: &mut Learner<Apple>, range: std::ops::Range<usize>| {
        for row in range {
            buffer.clear();
            rows.push_into(row, squared_config().namespace_seed(0), &mut buffer).unwrap();
            learner.learn(&buffer.finish(data.labels[row], 1.0, row).unwrap(), row).unwrap();
        }
    };
    let mut forked = new(Ranking::Typical);
    assert_eq!(forked.expansion().next_expansion(), Some(1_000));
    assert!(forked.expansion().may_grow());
    learn(&mut forked, 0..999);
    assert!(forked.expansion().parents().is_empty());
    forked.expansion_mut().set_ranking(Ranking::MaxMagnitude);
    learn(&mut forked, 999..6_000);
    let (mut alone, mut typical) = (new(Ranking::MaxMagnitude), new(Ranking::Typical));
    learn(&mut alone, 0..6_000);
    learn(&mut typical, 0..6_000);
    assert_eq!(forked.expansion().parents(), alone.expansion().parents());
    assert_eq!(forked.weights().data(), alone.weights().data());
    // The rankings do choose differently here (else the test would prove nothing).
    assert_ne!(typical.expansion().parents(), alone.expansion().parents());
    assert_eq!(forked.expansion().next_expansion(), None, "past the last of five");
}

/// The features `fill` writes, as a sorted multiset of (slot, value bits).
fn sorted_features(fill: impl FnOnce(&mut crate::learner::ExpandedFeatures)) -> Vec<(u32, u32)> {
    let mut out = crate::learner::ExpandedFeatures::new(squared_config().bits);
    fill(&mut out);
    let mut features: Vec<(u32, u32)> =
        out.slots().iter().zip(out.values()).map(|(&s, v)| (s, v.to_bits())).collect();
    features.sort_unstable();
    features
}

fn expanded(apple: &Apple, example: &crate::learner::Example<'_>) -> Vec<(u32, u32)> {
    sorted_features(|out| apple.expand(example, out))
}

fn added_by(apple: &Apple, example: &crate::learner::Example<'_>) -> Vec<(u32, u32)> {
    sorted_features(|out| apple.expand_added(example, out))
}

/// Right after each expansion, `expand_added` gives exactly the monomials it added to S (what
/// `expand` gives with the parents now, less what it gave with the parents before, for both
/// identities; from the second expansion on some products of new parents were in S already),
/// and nothing once the next example is learned. The first catch-up moved the weights of the
/// added monomials only and counted no example twice.
#[test]
fn an_expansion_catches_up_on_exactly_the_monomials_it_added() {
    use super::parents::ParentSet;
    use super::walk::{walk_children, Node, WalkScratch};
    let data = single_monomial(2_400, 10, 0.1, 9);
    let rows = SparseRows::new(&data.offsets, &data.indices, &data.values).unwrap();
    let seed = squared_config().namespace_seed(0);
    let mut buffer = crate::learner::ExampleBuffer::new();
    let example_at = |row: usize, buffer: &mut crate::learner::ExampleBuffer| {
        buffer.clear();
        rows.push_into(row, seed, buffer).unwrap();
    };
    for identity in [Identity::Canonical, Identity::Path] {
        let new = |catch_up| {
            let config = AppleConfig { identity, catch_up, ..AppleConfig::default() };
            let mut learner = Learner::new(squared_config(), Apple::new(config).unwrap()).unwrap();
            learner.expansion_mut().begin_run(2_400);
            learner
        };
        let (mut caught_up, mut plain) = (new(300), new(0));
        let mut already_in_s = 0;
        for (row, &label) in data.labels.iter().enumerate() {
            example_at(row, &mut buffer);
            let example = buffer.finish(label, 1.0, row).unwrap();
            let expansions = caught_up.expansion().progress().expansions;
            caught_up.learn(&example, row).unwrap();
            let apple = caught_up.expansion();
            if apple.progress().expansions == expansions {
                // Between expansions nothing is added.
                assert!(added_by(apple, &example).is_empty(), "row {row}");
                continue;
            }
            let newest = apple.progress().expansions;
            let earlier = apple.parents().iter().filter(|p| p.expansion < newest).cloned();
            let before = Apple::from_parts(
                apple.config().clone(),
                Vec::new(),
                earlier.collect(),
                AppleProgress::default(),
            )
            .unwrap();
            let mut set = ParentSet::new();
            set.restore(apple.parents().iter().cloned()).unwrap();
            let mut added_slots = std::collections::HashSet::new();
            for kept in row.saturating_sub(299)..=row {
                example_at(kept, &mut buffer);
                let example = buffer.finish(data.labels[kept], 1.0, kept).unwrap();
                let (now, then) = (expanded(apple, &example), expanded(&before, &example));
                let mut expected = now.clone();
                for feature in &then {
                    let at = expected.iter().position(|f| f == feature).unwrap();
                    expected.remove(at);
                }
                let given = added_by(apple, &example);
                assert_eq!(given, expected, "{identity:?}, expansion {newest}, row {kept}");
                // Products of the new parents that S had before (through an earlier parent).
                let mut of_new = 0;
                let (hashes, values) = example.features();
                walk_children(
                    &set,
                    usize::from(apple.config().max_degree),
                    identity,
                    hashes,
                    values,
                    &mut WalkScratch::default(),
                    &mut |node: &Node, _: usize, _: u64, _: u64, _: f32| {
                        of_new +=
                            usize::from(set.parents()[node.parent as usize].expansion == newest);
                    },
                );
                already_in_s += of_new - given.len();
                added_slots.extend(given.iter().map(|&(slot, _)| slot));
            }
            if newest > 1 {
                continue;
            }
            // The first expansion: the models were equal before it, so only the added
            // monomials' weights differ, most of them (the last 300 rows replayed).
            for (row, &label) in data.labels.iter().enumerate().take(row + 1) {
                example_at(row, &mut buffer);
                plain.learn(&buffer.finish(label, 1.0, row).unwrap(), row).unwrap();
            }
            assert_eq!(plain.expansion().parents(), caught_up.expansion().parents());
            assert_eq!(caught_up.progress(), plain.progress());
            assert_eq!(caught_up.state(), plain.state());
            let stride = caught_up.weights().stride();
            let (ours, theirs) = (caught_up.weights().data(), plain.weights().data());
            let mut moved = 0;
            for slot in 0..ours.len() / stride {
                let range = slot * stride..(slot + 1) * stride;
                if added_slots.contains(&(slot as u32)) {
                    moved += usize::from(ours[range.clone()] != theirs[range]);
                } else {
                    assert_eq!(ours[range.clone()], theirs[range], "{identity:?}: slot {slot}");
                }
            }
            assert!(moved > added_slots.len() / 2, "{moved} of {} slots", added_slots.len());
        }
        assert_eq!(caught_up.expansion().progress().expansions, 5);
        if identity == Identity::Canonical {
            assert!(already_in_s > 0, "the test must see products that S had before");
        }
    }
}

/// Beside field crosses, a categorical namespace's features are neither parents nor factors of
/// children; a model read from format 6 or 7 keeps multiplying them, as it was trained.
#[test]
fn categorical_features_are_not_factors_of_children() {
    use super::categorical::CategoricalNamespaces;
    use super::monomial::{key_of, Monomial};
    use super::parents::Parent;
    let mut buffer = crate::learner::ExampleBuffer::new();
    buffer.push_namespace(0, &[3], &[1.0f32], 0).unwrap(); // one-hot: hash 3
    buffer.push_namespace(100, &[5, 6], &[0.5f32, 2.0], 0).unwrap(); // hashes 105, 106
    let example = buffer.finish(1.0, 1.0, 0).unwrap();
    let mut seen = CategoricalNamespaces::default();
    seen.observe(&example);
    assert!(seen.is_categorical(0) && !seen.is_categorical(1));
    let parent = Parent { monomial: Monomial::new(vec![105]), expansion: 1, key: key_of(&[105]) };
    let apple = |seen: Option<CategoricalNamespaces>| {
        let progress = AppleProgress::default();
        let config = AppleConfig::default();
        let apple = Apple::from_parts(config, Vec::new(), vec![parent.clone()], progress);
        let mut apple = apple.unwrap();
        if let Some(seen) = seen {
            apple.leave_categorical_to_field_crosses(seen);
        }
        expanded(&apple, &example)
    };
    let (now, before, every) =
        (apple(Some(seen.clone())), apple(Some(seen.parents_only())), apple(None));
    assert_eq!(before, every, "format 6 and 7: children of every feature");
    // x105 times x3 (value 0.5) is the one feature left out; x105², x105·x106 stay.
    let mut left_out = before.clone();
    for feature in &now {
        left_out.remove(left_out.iter().position(|f| f == feature).unwrap());
    }
    assert_eq!(left_out.len(), 1);
    assert_eq!(f32::from_bits(left_out[0].1), 0.5);
    assert_eq!(now.len(), 3 + 2 + usize::from(AppleConfig::default().constant));
}
