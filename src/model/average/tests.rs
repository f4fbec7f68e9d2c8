//! Averaging shard models: identities a correct average must satisfy, a brute-force average of
//! the weights, and apple's union of parents.

use proptest::prelude::*;

use super::*;
use crate::apple::tests::{learn_part, single_monomial, slice, squared_config, Data};
use crate::apple::AppleConfig;
use crate::learner::{Batch, Expansion, Interactions, NamespaceRows};
use crate::sparse::SparseRows;

fn linear(config: crate::learner::LearnerConfig) -> OnlineModel {
    Learner::new(config, FeatureSet::from(Interactions::linear())).unwrap()
}

fn trained(mut model: OnlineModel, data: &Data) -> OnlineModel {
    learn_part(&mut model, data);
    model
}

fn predictions(model: &OnlineModel, data: &Data) -> Vec<f64> {
    let rows = SparseRows::new(&data.offsets, &data.indices, &data.values).unwrap();
    let ns: [&dyn NamespaceRows; 1] = [&rows];
    let batch = Batch::new(&ns, &data.labels, None).unwrap();
    let mut out = Vec::new();
    model.predict_batch(&batch, &mut out).unwrap();
    out
}

#[test]
fn the_average_of_one_shard_is_that_shard() {
    let data = single_monomial(2_000, 10, 0.1, 1);
    let shard = trained(linear(squared_config()), &data);
    for weighting in [Weighting::Examples, Weighting::Adaptive] {
        let merged = average(None, &[&shard], weighting).unwrap();
        assert_eq!(predictions(&merged, &data), predictions(&shard, &data));
        assert_eq!(merged.progress(), shard.progress());
        assert_eq!(merged.state(), shard.state());
    }
}

#[test]
fn a_shard_that_learned_nothing_in_the_round_has_no_say_by_examples() {
    let data = single_monomial(4_000, 10, 0.1, 2);
    let start = trained(linear(squared_config()), &slice(&data, 0, 1_000));
    let idle = start.clone();
    let busy = trained(start.clone(), &slice(&data, 1_000, 4_000));
    let merged = average(Some(&start), &[&idle, &busy], Weighting::Examples).unwrap();
    assert_eq!(predictions(&merged, &data), predictions(&busy, &data));
    assert_eq!(merged.progress(), busy.progress());
}

#[test]
fn counters_add_up_what_each_shard_learned() {
    let data = single_monomial(3_000, 10, 0.1, 3);
    let start = trained(linear(squared_config()), &slice(&data, 0, 1_000));
    let a = trained(start.clone(), &slice(&data, 1_000, 2_000));
    let b = trained(start.clone(), &slice(&data, 2_000, 3_000));
    let merged = average(Some(&start), &[&a, &b], Weighting::Examples).unwrap();
    assert_eq!(merged.progress().examples, 3_000);
    let expected_loss =
        a.progress().weighted_loss + b.progress().weighted_loss - start.progress().weighted_loss;
    assert!((merged.progress().weighted_loss - expected_loss).abs() < 1e-9);
    let expected_t = a.state().t + b.state().t - start.state().t;
    assert!((merged.state().t - expected_t).abs() < 1e-9);
}

proptest! {
    /// Every slot against a brute-force average (as the module docs define it), for both
    /// weightings, with L1 folded in.
    #[test]
    fn slots_are_the_weighted_averages(seed in 0u64..200, split in 100usize..900, l1 in prop::bool::ANY) {
        let data = single_monomial(1_000, 12, 0.2, seed);
        let config = crate::learner::LearnerConfig {
            bits: 8,
            l1: if l1 { 1e-4 } else { 0.0 },
            ..squared_config()
        };
        let a = trained(linear(config.clone()), &slice(&data, 0, split));
        let b = trained(linear(config), &slice(&data, split, 1_000));
        let shares = [split as f64 / 1_000.0, (1_000 - split) as f64 / 1_000.0];
        for weighting in [Weighting::Examples, Weighting::Adaptive] {
            let merged = average(None, &[&a, &b], weighting).unwrap();
            for slot in 0..merged.weights().n_slots() as u32 {
                let w = [a.effective_weight(slot), b.effective_weight(slot)];
                let g = [f64::from(a.weights().adaptive_sum(slot)), f64::from(b.weights().adaptive_sum(slot))];
                let (expected_w, expected_g) = if weighting == Weighting::Adaptive && g[0] + g[1] > 0.0 {
                    ((g[0] * w[0] + g[1] * w[1]) / (g[0] + g[1]), (g[0] * g[0] + g[1] * g[1]) / (g[0] + g[1]))
                } else {
                    (shares[0] * w[0] + shares[1] * w[1], shares[0] * g[0] + shares[1] * g[1])
                };
                let tolerance = 1e-5 * (1.0 + expected_w.abs());
                prop_assert!((merged.effective_weight(slot) - expected_w).abs() <= tolerance,
                    "slot {slot}: {} vs {expected_w}", merged.effective_weight(slot));
                prop_assert!((f64::from(merged.weights().adaptive_sum(slot)) - expected_g).abs() <= 1e-4 * (1.0 + expected_g));
                let norm = a.weights().normalizer(slot).max(b.weights().normalizer(slot));
                prop_assert_eq!(merged.weights().normalizer(slot), norm);
            }
        }
    }
}

#[test]
fn shards_whose_tables_grew_apart_average_as_their_replicas() {
    let data = single_monomial(2_000, 12, 0.2, 9);
    let config = crate::learner::LearnerConfig { bits: 8, max_bits: Some(12), ..squared_config() };
    let a = trained(linear(config.clone()), &slice(&data, 0, 1_000));
    let b = trained(linear(config), &slice(&data, 1_000, 2_000));
    let mut grown = a.clone();
    grown.grow_to(10, grown.weights().load(1 << 8)).unwrap();
    assert_eq!(predictions(&grown, &data), predictions(&a, &data));
    for weighting in [Weighting::Examples, Weighting::Adaptive] {
        let merged = average(None, &[&grown, &b], weighting).unwrap();
        let mut lifted = b.clone();
        lifted.grow_to(10, 0.0).unwrap();
        let expected = average(None, &[&grown, &lifted], weighting).unwrap();
        assert_eq!(merged.config().bits, 10);
        assert_eq!(merged.weights().data(), expected.weights().data());
        // And as the average of the tables before growing, replicated.
        let small = average(None, &[&a, &b], weighting).unwrap();
        assert_eq!(predictions(&merged, &data), predictions(&small, &data));
    }
}

fn apple_model(epochs: u32) -> OnlineModel {
    let config = AppleConfig { epochs, ..AppleConfig::default() };
    Learner::new(squared_config(), FeatureSet::from(Apple::new(config).unwrap())).unwrap()
}

#[test]
fn apple_parents_are_the_union_and_stay_frozen() {
    let data = single_monomial(40_000, 10, 0.1, 4);
    let shard = |from: usize, to: usize| {
        let mut model = apple_model(6);
        model.expansion_mut().begin_run((to - from) as u64);
        trained(model, &slice(&data, from, to))
    };
    let (a, b) = (shard(0, 20_000), shard(20_000, 40_000));
    let keys = |m: &OnlineModel| -> Vec<u64> {
        m.expansion().apple().unwrap().parents().iter().map(|p| p.key).collect()
    };
    let merged = average(None, &[&a, &b], Weighting::Examples).unwrap();
    let union: HashSet<u64> = keys(&a).into_iter().chain(keys(&b)).collect();
    let merged_keys = keys(&merged);
    assert_eq!(merged_keys.len(), union.len(), "each parent once");
    assert_eq!(merged_keys.iter().copied().collect::<HashSet<_>>(), union);
    assert!(!merged_keys.is_empty());
    // Frozen: training on adds no parent, and the merged model saves and loads.
    let mut more = merged.clone();
    learn_part(&mut more, &data);
    assert_eq!(keys(&more), merged_keys);
    let bytes = crate::model::ModelRef::Online(&merged).to_bytes("{}");
    let (loaded, _) = crate::model::Model::from_bytes(&bytes).unwrap();
    match loaded {
        crate::model::Model::Online(loaded) => assert_eq!(keys(&loaded), merged_keys),
        other => panic!("not an online model: {other:?}"),
    }
}

#[test]
fn shards_of_other_options_or_no_examples_are_refused() {
    let data = single_monomial(500, 10, 0.1, 5);
    let a = trained(linear(squared_config()), &data);
    let other =
        trained(linear(crate::learner::LearnerConfig { eta0: 0.1, ..squared_config() }), &data);
    let err = average(None, &[&a, &other], Weighting::Examples).unwrap_err().to_string();
    assert!(err.contains("shard 1"), "{err}");
    let fresh = linear(squared_config());
    let err = average(None, &[&fresh], Weighting::Examples).unwrap_err().to_string();
    assert!(err.contains("no shard learned"), "{err}");
    let sgd =
        crate::learner::LearnerConfig { rule: crate::learner::UpdateRule::SGD, ..squared_config() };
    let plain = trained(linear(sgd), &data);
    let err = average(None, &[&plain], Weighting::Adaptive).unwrap_err().to_string();
    assert!(err.contains("adaptive=True"), "{err}");
}

#[test]
fn averages_compose_into_a_tree() {
    let data = single_monomial(8_000, 10, 0.1, 6);
    let start = trained(linear(squared_config()), &slice(&data, 0, 1_000));
    let shards: Vec<OnlineModel> = (0..4)
        .map(|k| trained(start.clone(), &slice(&data, 1_000 + k * 1_750, 1_000 + (k + 1) * 1_750)))
        .collect();
    let refs: Vec<&OnlineModel> = shards.iter().collect();
    let flat = average(Some(&start), &refs, Weighting::Examples).unwrap();
    let left = average(Some(&start), &refs[..2], Weighting::Examples).unwrap();
    let right = average(Some(&start), &refs[2..], Weighting::Examples).unwrap();
    let tree = average(Some(&start), &[&left, &right], Weighting::Examples).unwrap();
    for (a, b) in predictions(&flat, &data).iter().zip(predictions(&tree, &data)) {
        assert!((a - b).abs() <= 1e-5 * (1.0 + a.abs()), "{a} vs {b}");
    }
    assert_eq!(flat.progress().examples, tree.progress().examples);
    // apple: a frozen partial average merges with shards not yet averaged.
    let apple = |from: usize, to: usize| {
        let mut model = apple_model(6);
        model.expansion_mut().begin_run((to - from) as u64);
        trained(model, &slice(&data, from, to))
    };
    let (a, b, c) = (apple(0, 2_000), apple(2_000, 4_000), apple(4_000, 6_000));
    let ab = average(None, &[&a, &b], Weighting::Examples).unwrap();
    let abc = average(None, &[&ab, &c], Weighting::Examples).unwrap();
    let flat = average(None, &[&a, &b, &c], Weighting::Examples).unwrap();
    let keys = |m: &OnlineModel| -> HashSet<u64> {
        m.expansion().apple().unwrap().parents().iter().map(|p| p.key).collect()
    };
    assert_eq!(keys(&abc), keys(&flat));
}

/// Learns `data`'s rows `from..to` (one sparse column per field, one value per row) into
/// `model`.
fn learn_fields(
    model: &mut OnlineModel,
    data: &crate::field_apple::tests::Fields,
    (from, to): (usize, usize),
) {
    let columns: Vec<(Vec<i64>, Vec<u32>, Vec<f32>)> = data
        .columns
        .iter()
        .map(|(_, ids, values)| {
            ((0..=(to - from) as i64).collect(), ids[from..to].to_vec(), values[from..to].to_vec())
        })
        .collect();
    let part =
        crate::field_apple::tests::Fields { columns, labels: data.labels[from..to].to_vec() };
    let rows = crate::field_apple::tests::sparse_rows(&part);
    let namespaces: Vec<&dyn NamespaceRows> =
        rows.iter().map(|r| r as &dyn NamespaceRows).collect();
    model.learn_batch(&Batch::new(&namespaces, &part.labels, None).unwrap()).unwrap();
}

/// Predictions of every row of `data`.
fn predictions_of_fields(
    model: &OnlineModel,
    data: &crate::field_apple::tests::Fields,
) -> Vec<f64> {
    let rows = crate::field_apple::tests::sparse_rows(data);
    let namespaces: Vec<&dyn NamespaceRows> =
        rows.iter().map(|r| r as &dyn NamespaceRows).collect();
    let mut out = Vec::new();
    model.predict_batch(&Batch::new(&namespaces, &data.labels, None).unwrap(), &mut out).unwrap();
    out
}

/// The shards' field crosses merge as apple's parents do: their union, each once, in the order
/// they joined, and screening no more (none joins in later rounds, even where the data has a
/// cross to find, and a merge of shards that found none stays without); apple beside them keeps
/// a field categorical only where every shard saw it so.
#[test]
fn field_crosses_are_the_union_and_stay_frozen() {
    use crate::apple::categorical::CategoricalNamespaces;
    use crate::field_apple::tests::{config, eat_rate};
    use crate::field_apple::{Cross, FieldApple, FieldAppleConfig};
    // Fields 0 and 1 cross (eat-rate's planted pair); 2..6 are noise.
    let data = eat_rate(60_000, 100, 4, 0.0, 12);
    let shard = |crosses: &[(usize, usize, u64)], rows: (usize, usize)| {
        let crosses = crosses.iter().map(|&(a, b, at)| Cross { fields: vec![a, b], added_at: at });
        let fields =
            FieldApple::from_parts(FieldAppleConfig::default(), crosses.collect(), 0).unwrap();
        let mut model = Learner::new(config(6), FeatureSet::FieldApple(Box::new(fields))).unwrap();
        learn_fields(&mut model, &data, rows);
        model
    };
    let pairs = |m: &OnlineModel| -> Vec<(usize, usize)> {
        let crosses = m.expansion().field_apple().unwrap().crosses().iter();
        crosses.map(|c| (c.fields[0], c.fields[1])).collect()
    };
    // Short shards: none finds a cross of its own in 200 rows.
    let a = shard(&[(2, 3, 50), (0, 1, 900)], (0, 200));
    let b = shard(&[(0, 1, 10), (4, 5, 700)], (200, 400));
    assert_eq!((pairs(&a), pairs(&b)), (vec![(2, 3), (0, 1)], vec![(0, 1), (4, 5)]));
    let merged = average(None, &[&a, &b], Weighting::Examples).unwrap();
    assert_eq!(pairs(&merged), vec![(0, 1), (2, 3), (4, 5)]);
    let mut more = merged.clone();
    learn_fields(&mut more, &data, (400, 60_000));
    assert_eq!(pairs(&more), pairs(&merged), "frozen");
    // Shards that found nothing: no cross, and still none after the rows that hold one.
    let (a, b) = (shard(&[], (0, 200)), shard(&[], (200, 400)));
    let mut merged = average(None, &[&a, &b], Weighting::Examples).unwrap();
    learn_fields(&mut merged, &data, (400, 60_000));
    assert!(pairs(&merged).is_empty());
    // The same shards unmerged find the planted cross in those rows (so freezing is tested).
    let mut alone = shard(&[], (0, 400));
    learn_fields(&mut alone, &data, (400, 60_000));
    assert_eq!(pairs(&alone).first(), Some(&(0, 1)));
    // The merged model saves and loads with its crosses and its freeze.
    let bytes = crate::model::ModelRef::Online(&more).to_bytes("{}");
    match crate::model::Model::from_bytes(&bytes).unwrap().0 {
        crate::model::Model::Online(loaded) => assert_eq!(loaded.expansion(), more.expansion()),
        other => panic!("not an online model: {other:?}"),
    }

    // apple beside the crosses: a field is categorical where both shards saw it so.
    let mut seen = [CategoricalNamespaces::default(), CategoricalNamespaces::default()];
    let mut buffer = crate::learner::ExampleBuffer::new();
    for (k, values) in [[1.0f32, 1.0], [1.0, 0.5]].iter().enumerate() {
        buffer.clear();
        buffer.push_namespace(0, &[3], &values[..1], 0).unwrap();
        buffer.push_namespace(100, &[4], &values[1..], 0).unwrap();
        seen[k].observe(&buffer.finish(1.0, 1.0, 0).unwrap());
    }
    let merged = seen[0].merged(&seen[1]).unwrap();
    assert!(merged.is_categorical(0) && !merged.is_categorical(1));
    assert!(seen[0].merged(&seen[1].clone().parents_only()).is_none());
}

#[test]
fn field_scales_average_by_field_with_crosses_renumbered() {
    use crate::field_apple::tests::{config, eat_rate};
    use crate::field_apple::{Cross, FieldApple, FieldAppleConfig};
    use crate::learner::features::{cross_field, namespace_field};
    let data = eat_rate(4_000, 100, 4, 0.0, 13);
    let scaled = crate::learner::LearnerConfig { field_scales: true, bits: 18, ..config(6) };
    let shard = |crosses: &[(usize, usize)], rows: (usize, usize)| {
        let crosses = crosses.iter().map(|&(a, b)| Cross { fields: vec![a, b], added_at: 1 });
        let fields =
            FieldApple::from_parts(FieldAppleConfig::default(), crosses.collect(), 0).unwrap();
        let mut model =
            Learner::new(scaled.clone(), FeatureSet::FieldApple(Box::new(fields))).unwrap();
        learn_fields(&mut model, &data, rows);
        model
    };
    // Shard b learns twice the rows of shard a, and holds the cross (0, 1) at another place.
    let a = shard(&[(2, 3), (0, 1)], (0, 1_000));
    let b = shard(&[(0, 1), (4, 5)], (1_000, 3_000));
    let scale = |m: &OnlineModel, field: u32| f64::from(m.field_scale(field) as f32);
    let n = 6;
    for weighting in [Weighting::Examples, Weighting::Adaptive] {
        let merged = average(None, &[&a, &b], weighting).unwrap();
        let sums = |m: &OnlineModel, field: u32| {
            let scales = m.field_scales().unwrap();
            scales.sums().get(field as usize).copied().unwrap_or(0.0)
        };
        // (shard, its field) pairs that are one merged field, and the merged field.
        let cases = [
            ([(&a, namespace_field(0)), (&b, namespace_field(0))], namespace_field(0)),
            // The union's order: a's (2, 3) and (0, 1), then b's (4, 5).
            ([(&a, cross_field(n, 1)), (&b, cross_field(n, 0))], cross_field(n, 1)),
        ];
        for (parts, field) in cases {
            let expected = match weighting {
                Weighting::Examples => parts
                    .iter()
                    .zip([1.0 / 3.0, 2.0 / 3.0])
                    .map(|(&(m, f), share)| share * scale(m, f))
                    .sum::<f64>(),
                Weighting::Adaptive => {
                    let total: f64 = parts.iter().map(|&(m, f)| sums(m, f)).sum();
                    parts.iter().map(|&(m, f)| sums(m, f) * scale(m, f)).sum::<f64>() / total
                }
            };
            assert!(scale(&a, parts[0].1) != scale(&b, parts[1].1), "the shards differ");
            let got = scale(&merged, field);
            assert!((got - expected).abs() < 1e-6, "{weighting:?} field {field}: {got} {expected}");
        }
        // A cross only shard a has: b counts as untrained (1).
        let only_a = scale(&merged, cross_field(n, 0));
        let expected = match weighting {
            Weighting::Examples => scale(&a, cross_field(n, 0)) / 3.0 + 2.0 / 3.0,
            Weighting::Adaptive => scale(&a, cross_field(n, 0)),
        };
        assert!((only_a - expected).abs() < 1e-6, "{weighting:?}: {only_a} {expected}");
    }
    // One shard averages to itself, scales included.
    let alone = average(None, &[&a], Weighting::Examples).unwrap();
    let (merged, shard) = (alone.field_scales().unwrap(), a.field_scales().unwrap());
    assert_eq!((merged.scales(), merged.sums()), (shard.scales(), shard.sums()));
    assert_eq!(predictions_of_fields(&alone, &data), predictions_of_fields(&a, &data));
}

/// A model with a factorization averages its tables by the examples each shard learned, under
/// either weighting of the weights; one shard's average is that shard, table included.
#[test]
fn factorization_tables_average_by_examples() {
    let data = single_monomial(3_000, 10, 0.1, 5);
    let config = crate::learner::LearnerConfig {
        ffm: Some(crate::learner::ffm::FfmOptions::new(2, 6, vec![1])),
        ..squared_config()
    };
    let start = trained(linear(config), &slice(&data, 0, 1_000));
    let a = trained(start.clone(), &slice(&data, 1_000, 1_500));
    let b = trained(start.clone(), &slice(&data, 1_500, 3_000));
    let table = |m: &OnlineModel| m.ffm().unwrap().table().to_vec();
    for weighting in [Weighting::Examples, Weighting::Adaptive] {
        let alone = average(Some(&start), &[&a], weighting).unwrap();
        assert_eq!(table(&alone), table(&a));
        let merged = average(Some(&start), &[&a, &b], weighting).unwrap();
        for ((m, x), y) in table(&merged).iter().zip(table(&a)).zip(table(&b)) {
            let expected = (500.0 * x + 1500.0 * y) / 2000.0;
            assert!((m - expected).abs() <= 1e-6 * (1.0 + expected.abs()), "{m} {expected}");
        }
        assert_ne!(table(&merged), table(&start), "the shards learned");
    }
}
