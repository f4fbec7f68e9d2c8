//! The model file: round trips of every component's section, corruption, and the version-2
//! reader on files written by polars-poly 0.1 (tests/data/legacy_v2, with the predictions that
//! build made).

use proptest::prelude::*;

use super::*;
use crate::apple::monomial::{key_of, Identity};
use crate::apple::tests::{fit, learn_part, single_monomial, slice, squared_config, test_mse};
use crate::apple::{Apple, AppleConfig, AppleProgress, Monomial, Parent, Ranking};
use crate::dos::{PassiveAggressive, PassiveAggressiveOptions};
use crate::learner::loss::{Logistic, Squared};
use crate::learner::tests::{config, rows_of, stream};
use crate::learner::{
    Batch, BlockRows, Example, ExampleBuffer, ExampleEnd, ExampleShape, ExpandedFeatures,
    Expansion, Interactions, Learned, LearnerConfig, Loss, NamespaceRows, UpdateRule,
};
use crate::sparse::SparseRows;
use crate::versions;

mod model_io {
    //! The online model's file, as the tests use it.
    use super::*;

    pub fn to_bytes(learner: &OnlineModel, estimator: &str) -> Vec<u8> {
        ModelRef::Online(learner).to_bytes(estimator)
    }

    fn online(stored: (Model, String)) -> (OnlineModel, String) {
        match stored {
            (Model::Online(learner), estimator) => (learner, estimator),
            (other, _) => panic!("not an online model: {other:?}"),
        }
    }

    pub fn from_bytes(bytes: &[u8]) -> PolyResult<(OnlineModel, String)> {
        Model::from_bytes(bytes).map(online)
    }

    pub fn load(path: &Path) -> PolyResult<(OnlineModel, String)> {
        Model::load(path).map(online)
    }
}

proptest! {
    /// save -> load -> predict is identical, and continuing training after loading equals
    /// uninterrupted training.
    #[test]
    fn save_load_round_trip(seed in 0u64..1000, degree in 1u8..=2, logistic in any::<bool>()) {
        let loss = if logistic { Loss::Logistic(Logistic) } else { Loss::Squared(Squared) };
        let data = stream(120, seed, logistic);
        let (offsets, indices, values, labels) = rows_of(&data);
        let rows = SparseRows::new(&offsets, &indices, &values).unwrap();
        let ns: [&dyn NamespaceRows; 1] = [&rows];
        let first = Batch::new(&ns, &labels[..], None).unwrap();
        let exp = Interactions { degree, ..Interactions::linear() };
        let mut a = Learner::new(config(loss, UpdateRule::VW_DEFAULT), FeatureSet::from(exp)).unwrap();
        a.learn_batch(&first).unwrap();
        let bytes = model_io::to_bytes(&a, "{\"meta\": 1}");
        let (mut b, meta) = model_io::from_bytes(&bytes).unwrap();
        prop_assert_eq!(meta, "{\"meta\": 1}");
        let (mut pa, mut pb) = (Vec::new(), Vec::new());
        a.predict_batch(&first, &mut pa).unwrap();
        b.predict_batch(&first, &mut pb).unwrap();
        prop_assert_eq!(&pa, &pb);
        prop_assert_eq!(a.progress(), b.progress());
        a.learn_batch(&first).unwrap();
        b.learn_batch(&first).unwrap();
        a.predict_batch(&first, &mut pa).unwrap();
        b.predict_batch(&first, &mut pb).unwrap();
        prop_assert_eq!(pa, pb);
    }

    /// Any single corrupted byte or any truncation is rejected.
    #[test]
    fn corrupted_or_truncated_files_are_rejected(position in 0usize..10_000, flip in 1u8..=255, cut in 0usize..10_000) {
        let data = stream(30, 1, false);
        let (offsets, indices, values, labels) = rows_of(&data);
        let rows = SparseRows::new(&offsets, &indices, &values).unwrap();
        let ns: [&dyn NamespaceRows; 1] = [&rows];
        let batch = Batch::new(&ns, &labels, None).unwrap();
        let mut learner = Learner::new(config(Loss::Squared(Squared), UpdateRule::VW_DEFAULT), FeatureSet::from(Interactions::linear())).unwrap();
        learner.learn_batch(&batch).unwrap();
        let bytes = model_io::to_bytes(&learner, "");
        let mut corrupted = bytes.clone();
        let at = position % bytes.len();
        corrupted[at] ^= flip;
        prop_assert!(model_io::from_bytes(&corrupted).is_err());
        let cut = cut % bytes.len();
        let err = model_io::from_bytes(&bytes[..cut]).unwrap_err().to_string();
        prop_assert!(err.starts_with("invalid model file:"), "{}", err);
    }
}

/// `bytes` with its checksum (the last 4 bytes) made valid again after a mutation.
fn resealed(mut bytes: Vec<u8>) -> Vec<u8> {
    let body = bytes.len() - 4;
    let crc = crc32fast::hash(&bytes[..body]);
    bytes[body..].copy_from_slice(&crc.to_le_bytes());
    bytes
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]
    /// A checksum proves only that the bytes are the ones written: a file mutated by a writer
    /// (a byte changed, or 8 bytes set to a hostile f64) and sealed again is either rejected or
    /// loads to a model that predicts, and trains on, finite numbers without panicking.
    #[test]
    fn resealed_mutated_files_are_rejected_or_usable(
        position in 0usize..10_000,
        flip in 1u8..=255,
        hostile in prop::sample::select(vec![f64::NAN, f64::INFINITY, -1.0, -1e300, 1e300, 0.0]),
        as_f64 in any::<bool>(),
        logistic in any::<bool>(),
    ) {
        let loss = if logistic { Loss::Logistic(Logistic) } else { Loss::Squared(Squared) };
        let data = stream(40, 3, logistic);
        let (offsets, indices, values, labels) = rows_of(&data);
        let rows = SparseRows::new(&offsets, &indices, &values).unwrap();
        let ns: [&dyn NamespaceRows; 1] = [&rows];
        let batch = Batch::new(&ns, &labels, None).unwrap();
        let mut learner = Learner::new(
            config(loss, UpdateRule::VW_DEFAULT),
            FeatureSet::from(Interactions::quadratic()),
        )
        .unwrap();
        learner.learn_batch(&batch).unwrap();
        let mut bytes = model_io::to_bytes(&learner, "");
        let at = position % (bytes.len() - 4);
        if as_f64 && at + 8 <= bytes.len() - 4 {
            bytes[at..at + 8].copy_from_slice(&hostile.to_le_bytes());
        } else {
            bytes[at] ^= flip;
        }
        if let Ok((mut loaded, _)) = model_io::from_bytes(&resealed(bytes)) {
            let mut predictions = Vec::new();
            loaded.predict_batch(&batch, &mut predictions).unwrap();
            prop_assert!(predictions.iter().all(|p| p.is_finite()));
            if loaded.learn_batch(&batch).is_ok() {
                loaded.predict_batch(&batch, &mut predictions).unwrap();
                prop_assert!(predictions.iter().all(|p| p.is_finite()));
                prop_assert!(loaded.weights().data().iter().all(|w| w.is_finite()));
                prop_assert!(loaded.progressive_loss().is_none_or(f64::is_finite));
            }
        }
    }
}

#[test]
fn model_file_errors_say_what_is_wrong() {
    let learner = Learner::new(
        config(Loss::Squared(Squared), UpdateRule::SGD),
        FeatureSet::from(Interactions::cubic()),
    )
    .unwrap();
    let bytes = model_io::to_bytes(&learner, "");
    let (loaded, _) = model_io::from_bytes(&bytes).unwrap();
    assert_eq!(loaded.config(), learner.config());
    assert_eq!(loaded.expansion(), learner.expansion());
    let err = model_io::from_bytes(b"label 1:2 3:4\n").unwrap_err().to_string();
    assert!(err.contains("not a polars-poly model"), "{err}");
    let err = model_io::from_bytes(&bytes[..bytes.len() - 1]).unwrap_err().to_string();
    assert!(err.contains("truncated"), "{err}");
    let mut corrupted = bytes.clone();
    corrupted[30] ^= 1;
    let err = model_io::from_bytes(&corrupted).unwrap_err().to_string();
    assert!(err.contains("checksum mismatch"), "{err}");
    let future = with_version(&bytes, versions::CURRENT + 1);
    let err = model_io::from_bytes(&future).unwrap_err().to_string();
    assert!(err.contains(&format!("format version {}", versions::CURRENT + 1)), "{err}");
    let dir = std::env::temp_dir().join(format!("pp-model-{}", std::process::id()));
    let err = model_io::load(&dir.join("missing.model")).unwrap_err().to_string();
    assert!(err.contains("missing.model"), "{err}");
}

#[test]
fn sparse_and_dense_weight_encodings_round_trip() {
    // A tiny table is written dense, a big one with few weights sparse; both load back equal.
    for bits in [4u32, 20] {
        let mut learner = Learner::new(
            LearnerConfig { bits, ..LearnerConfig::default() },
            FeatureSet::from(Interactions::linear()),
        )
        .unwrap();
        let mut buffer = ExampleBuffer::new();
        buffer.clear();
        buffer.push_namespace(0, &[1u32, 3], &[1.0f64, 2.0], 0).unwrap();
        let ex = buffer.finish(1.0, 1.0, 0).unwrap();
        learner.learn(&ex, 0).unwrap();
        let bytes = model_io::to_bytes(&learner, "");
        let (loaded, _) = model_io::from_bytes(&bytes).unwrap();
        assert_eq!(
            loaded.weights().data(),
            learner
                .weights()
                .data()
                .iter()
                .enumerate()
                .map(|(i, &v)| if i % 4 == 3 { 0.0 } else { v })
                .collect::<Vec<_>>()
        );
        let dense_size = 4usize << bits << 2;
        assert_eq!(bytes.len() < dense_size / 2, bits == 20, "{} bytes", bytes.len());
    }
}

#[test]
fn save_load_and_continue_equals_uninterrupted_training() {
    let data = single_monomial(6_000, 10, 0.1, 7);
    // The examples a catch-up replays are kept in memory, not in the file: a resumed model's
    // new monomials catch up on the examples learned since it was loaded only.
    let config =
        AppleConfig { window: 100, ranking: Ranking::Ssm, catch_up: 0, ..AppleConfig::default() };
    let new = || {
        let mut learner =
            Learner::new(squared_config(), FeatureSet::from(Apple::new(config.clone()).unwrap()))
                .unwrap();
        learner.expansion_mut().begin_run(6_000);
        learner
    };
    let mut whole = new();
    learn_part(&mut whole, &data);
    let mut first = new();
    learn_part(&mut first, &slice(&data, 0, 2_500));
    let bytes = model_io::to_bytes(&first, "meta");
    let (mut resumed, meta) = model_io::from_bytes(&bytes).unwrap();
    assert_eq!(meta, "meta");
    assert_eq!(resumed.expansion(), first.expansion());
    learn_part(&mut resumed, &slice(&data, 2_500, 6_000));
    let apple = resumed.expansion().apple().unwrap();
    assert_eq!(apple.progress().expansions, 5);
    assert_eq!(resumed.expansion(), whole.expansion());
    assert_eq!(resumed.weights().data(), whole.weights().data());
    // A corrupted parent list is rejected with a clear message.
    let err = Apple::from_parts(
        config.clone(),
        vec![],
        vec![
            Parent { monomial: Monomial::new(vec![1]), expansion: 1, key: key_of(&[1]) },
            Parent { monomial: Monomial::new(vec![1]), expansion: 1, key: key_of(&[1]) },
        ],
        AppleProgress::default(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("twice"), "{err}");
}

/// Saving, loading and training on equals training on without saving, bit for bit, with L1
/// and L2 on (their lazy state is stored since format version 4; folding it into the weights
/// made resumed L1 models drift by up to 0.03).
#[test]
fn resume_with_l1_and_l2_equals_uninterrupted_training() {
    for (l1, l2) in [(1e-3, 0.0), (0.0, 1e-4), (1e-3, 1e-4)] {
        let data = stream(3_000, 11, false);
        let (offsets, indices, values, labels) = rows_of(&data);
        let rows = SparseRows::new(&offsets, &indices, &values).unwrap();
        let ns: [&dyn NamespaceRows; 1] = [&rows];
        let (head, tail) = (1_000, 3_000);
        let part = |from: usize, to: usize| {
            let rows = SparseRows::new(&offsets[from..=to], &indices, &values).unwrap();
            (rows, labels[from..to].to_vec())
        };
        let config =
            LearnerConfig { l1, l2, ..config(Loss::Squared(Squared), UpdateRule::VW_DEFAULT) };
        let new =
            || Learner::new(config.clone(), FeatureSet::from(Interactions::quadratic())).unwrap();
        let mut whole = new();
        whole.learn_batch(&Batch::new(&ns, &labels, None).unwrap()).unwrap();
        let mut first = new();
        let (rows_a, labels_a) = part(0, head);
        let ns_a: [&dyn NamespaceRows; 1] = [&rows_a];
        first.learn_batch(&Batch::new(&ns_a, &labels_a, None).unwrap()).unwrap();
        let (mut resumed, _) = model_io::from_bytes(&model_io::to_bytes(&first, "")).unwrap();
        let (rows_b, labels_b) = part(head, tail);
        let ns_b: [&dyn NamespaceRows; 1] = [&rows_b];
        resumed.learn_batch(&Batch::new(&ns_b, &labels_b, None).unwrap()).unwrap();
        assert_eq!(resumed.state(), whole.state(), "l1={l1} l2={l2}");
        assert_eq!(resumed.weights().data(), whole.weights().data(), "l1={l1} l2={l2}");
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let batch = Batch::new(&ns, &labels, None).unwrap();
        resumed.predict_batch(&batch, &mut a).unwrap();
        whole.predict_batch(&batch, &mut b).unwrap();
        assert_eq!(a, b, "l1={l1} l2={l2}");
    }
}

#[test]
fn path_identity_learns_and_round_trips() {
    let train = single_monomial(20_000, 10, 0.1, 9);
    let config = AppleConfig { identity: Identity::Path, ..AppleConfig::default() };
    let learner = fit(FeatureSet::from(Apple::new(config).unwrap()), &train, 1);
    let apple = learner.expansion().apple().unwrap();
    assert_eq!(apple.progress().expansions, 5);
    assert!(apple.parents().iter().any(|p| p.monomial.degree() >= 2));
    let test = single_monomial(2_000, 10, 0.1, 10);
    assert!(test_mse(&learner, &test) < 0.05, "{}", test_mse(&learner, &test));
    let (loaded, _) = model_io::from_bytes(&model_io::to_bytes(&learner, "")).unwrap();
    assert_eq!(loaded.expansion(), learner.expansion());
}

/// The files polars-poly 0.1 wrote (format version 2) and the predictions it made with them on
/// the first 50 training rows.
fn legacy_file(name: &str) -> Vec<u8> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/legacy_v2");
    std::fs::read(dir.join(format!("{name}.model"))).unwrap()
}

fn legacy_rows() -> (Vec<i64>, Vec<u32>, Vec<f32>) {
    // The generator of those files: 8 binary features, LCG seed 7 (as `single_monomial`).
    let data = single_monomial(50, 8, 0.1, 7);
    (data.offsets, data.indices, data.values)
}

const LEGACY: [&str; 5] =
    ["linear_squared", "quadratic_logistic", "cubic_quantile", "apple_canonical", "apple_path"];

#[test]
fn version_2_files_load_and_predict_as_the_build_that_wrote_them() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/legacy_v2");
    let text = std::fs::read_to_string(dir.join("expected_predictions.json")).unwrap();
    let expected: std::collections::HashMap<String, Vec<f64>> =
        serde_json::from_str(&text).unwrap();
    let (offsets, indices, values) = legacy_rows();
    let rows = SparseRows::new(&offsets, &indices, &values).unwrap();
    let ns: [&dyn NamespaceRows; 1] = [&rows];
    let batch = Batch::new(&ns, &[], None).unwrap();
    for name in LEGACY {
        let (learner, metadata) = model_io::from_bytes(&legacy_file(name)).unwrap();
        let mut out = Vec::new();
        learner.predict_batch(&batch, &mut out).unwrap();
        assert_eq!(out, expected[name], "{name}");
        assert_eq!(learner.config().bits, 12, "{name}");
        assert_eq!(
            metadata.contains("SGDRegressor"),
            name == "linear_squared" || name.starts_with("apple")
        );
        // Re-saved in the current format, the model is unchanged.
        let (again, _) = model_io::from_bytes(&model_io::to_bytes(&learner, &metadata)).unwrap();
        assert_eq!(again.expansion(), learner.expansion(), "{name}");
        assert_eq!(again.weights().data(), learner.weights().data(), "{name}");
    }
    let (quantile, _) = model_io::from_bytes(&legacy_file("cubic_quantile")).unwrap();
    assert_eq!(quantile.config().loss.name(), "quantile");
    assert_eq!(quantile.config().loss.params().quantile_tau, 0.3);
    let (apple, _) = model_io::from_bytes(&legacy_file("apple_path")).unwrap();
    assert_eq!(apple.expansion().apple().unwrap().config().identity, Identity::Path);
}

/// `bytes` with its format version replaced and the checksum recomputed.
fn with_version(bytes: &[u8], version: u32) -> Vec<u8> {
    let mut out = bytes.to_vec();
    out[8..12].copy_from_slice(&version.to_le_bytes());
    let body = out.len() - 4;
    let crc = crc32fast::hash(&out[..body]);
    out[body..].copy_from_slice(&crc.to_le_bytes());
    out
}

#[test]
fn version_1_files_load_unless_their_degree_3_slots_moved() {
    for name in LEGACY {
        let current = model_io::from_bytes(&legacy_file(name));
        let old = model_io::from_bytes(&with_version(&legacy_file(name), 1));
        if name == "apple_canonical" {
            let message = old.unwrap_err().to_string();
            assert!(
                message.contains("format version 1") && message.contains("retrain"),
                "{message}"
            );
        } else {
            assert_eq!(old.unwrap().0.expansion(), current.unwrap().0.expansion(), "{name}");
        }
    }
}

#[test]
fn legacy_files_with_unknown_codes_are_refused() {
    // The loss code is the byte after `bits` in the version-2 payload.
    let mut bytes = legacy_file("linear_squared");
    bytes[20 + 4] = 9;
    let err = model_io::from_bytes(&with_version(&bytes, 2)).unwrap_err().to_string();
    assert!(err.contains("unknown loss code 9"), "{err}");
}

#[test]
fn unknown_component_names_are_refused_not_mapped() {
    let config = AppleConfig { ranking: Ranking::Magnitude, ..AppleConfig::default() };
    let learner =
        fit(FeatureSet::from(Apple::new(config).unwrap()), &single_monomial(500, 6, 0.1, 3), 1);
    let bytes = model_io::to_bytes(&learner, "");
    // Rename the stored ranking "magnitude" to a name no build registers, same length.
    let at = bytes.windows(9).position(|w| w == b"magnitude").unwrap();
    let mut renamed = bytes.clone();
    renamed[at..at + 9].copy_from_slice(b"magnetude");
    let err = model_io::from_bytes(&with_version(&renamed, versions::CURRENT));
    let err = err.unwrap_err().to_string();
    assert!(err.contains("ranking") && err.contains("magnetude"), "{err}");
}

#[test]
fn options_build_the_model_and_round_trip() {
    let options = LearnerOptions {
        bits: 10,
        max_bits: Some(12),
        loss: "quantile".into(),
        quantile_tau: 0.2,
        adaptive: true,
        normalized: false,
        invariant: true,
        eta0: 0.3,
        power_t: 0.5,
        initial_t: 0.0,
        l1: 0.0,
        l2: 1e-6,
        constant: false,
        namespaces: vec!["a".into(), "b".into()],
        features: FeatureSetOptions::Interactions {
            degree: 2,
            namespace_crosses: vec![vec![0, 1], vec![1, 0, 1], vec![0, 0, 0]],
        },
        field_scales: true,
        initial_weight: 0.25,
        ffm: None,
    };
    let learner = options.clone().build().unwrap();
    // Vowpal Wabbit's rules: a cross repeating a namespace beside another is sorted.
    let canonical = LearnerOptions {
        features: FeatureSetOptions::Interactions {
            degree: 2,
            namespace_crosses: vec![vec![0, 1], vec![0, 1, 1], vec![0, 0, 0]],
        },
        ..options.clone()
    };
    assert_eq!(LearnerOptions::of(&learner), canonical);
    assert_eq!(learner.weights().weight(123), 0.25);
    let apple = LearnerOptions {
        features: FeatureSetOptions::Apple(AppleConfig {
            ranking: Ranking::Ssm,
            ..AppleConfig::default()
        }),
        ..options.clone()
    };
    let learner = apple.clone().build().unwrap();
    let FeatureSetOptions::Apple(stored) = LearnerOptions::of(&learner).features else {
        panic!("not apple")
    };
    // The estimator's `constant` decides apple's constant feature.
    assert!(!stored.constant);
    assert_eq!(stored.ranking, Ranking::Ssm);
    let bad = LearnerOptions { loss: "huber".into(), ..options.clone() };
    let err = bad.build().unwrap_err().to_string();
    assert!(err.contains("huber") && err.contains("squared"), "{err}");
    let bad = LearnerOptions { bits: 40, ..options };
    assert!(bad.build().unwrap_err().to_string().contains("bits"));
}

fn pa_options(rank: usize, multiclass: &str, averaging: Option<u64>) -> PassiveAggressiveOptions {
    PassiveAggressiveOptions {
        n_classes: 3,
        n_features: 5,
        rank,
        seed: 11,
        variant: "pa1".into(),
        c: 0.5,
        multiclass: multiclass.into(),
        averaging,
    }
}

#[test]
fn passive_aggressive_classifiers_round_trip_and_reject_damage() {
    use crate::dos::ExampleBatch;
    let rows: Vec<f64> = (0..60).map(|i| f64::from((i * 7 % 11) as u8) / 10.0 - 0.4).collect();
    let batch = ExampleBatch::from_dense(&rows, 5).unwrap();
    let classes: Vec<u32> = (0..12).map(|i| (i % 3) as u32).collect();
    for (rank, multiclass, averaging) in
        [(0, "ovr", Some(4)), (2, "ovo", Some(5)), (3, "ovr", None)]
    {
        let options = pa_options(rank, multiclass, averaging);
        let mut classifier = PassiveAggressive::new(&options).unwrap();
        classifier.learn_batch(&batch, &classes).unwrap();
        let bytes = ModelRef::PassiveAggressive(&classifier).to_bytes("text");
        let (Model::PassiveAggressive(loaded), text) = Model::from_bytes(&bytes).unwrap() else {
            panic!("not a PA model")
        };
        assert_eq!(text, "text");
        assert_eq!(loaded.options(), options);
        assert_eq!(loaded.stats(), classifier.stats());
        for average in [false, true] {
            assert_eq!(
                loaded.decision_scores(&batch, average).unwrap(),
                classifier.decision_scores(&batch, average).unwrap()
            );
        }
        // Training continues identically.
        let mut again = loaded.clone();
        again.learn_batch(&batch, &classes).unwrap();
        classifier.learn_batch(&batch, &classes).unwrap();
        assert_eq!(
            again.decision_scores(&batch, false).unwrap(),
            classifier.decision_scores(&batch, false).unwrap()
        );
        for cut in [bytes.len() / 3, bytes.len() - 5] {
            let err = Model::from_bytes(&bytes[..cut]).unwrap_err().to_string();
            assert!(err.starts_with("invalid model file:"), "{err}");
        }
    }
    let bad = PassiveAggressiveOptions { variant: "pa3".into(), ..pa_options(1, "ovo", None) };
    assert!(PassiveAggressive::new(&bad).unwrap_err().to_string().contains("pa3"));
    let bad = PassiveAggressiveOptions { multiclass: "all".into(), ..pa_options(1, "ovo", None) };
    assert!(PassiveAggressive::new(&bad).unwrap_err().to_string().contains("multiclass"));
}

#[test]
fn apple_with_field_crosses_emits_each_feature_once_and_round_trips() {
    use crate::codec::{ByteReader, ByteWriter};
    use crate::field_apple::{Cross, FieldApple, FieldAppleConfig};
    use crate::learner::ExpandedFeatures;
    use std::collections::BTreeMap;

    let options = FeatureSetOptions::AppleFields {
        apple: AppleConfig::default(),
        fields: FieldAppleConfig::default(),
    };
    let built = FeatureSet::new(options, true).unwrap();
    let (FeatureSetOptions::AppleFields { apple, fields }, constant) = built.options() else {
        panic!("not apple with field crosses")
    };
    // apple emits the constant; the crosses' component never does.
    assert!(constant && apple.constant && !fields.constant);

    // With the cross (0, 1) found and no apple parent yet, the features are exactly those of
    // interactions=[(0, 1)]: linear, the cross, the constant, each once.
    let crosses = vec![Cross { fields: vec![0, 1], added_at: 5 }];
    let found = FieldApple::from_parts(fields, crosses, 9).unwrap();
    let set = FeatureSet::AppleFields(
        Box::new(Apple::new(apple.clone()).unwrap()),
        Box::new(found.clone()),
    );
    let mut buffer = ExampleBuffer::new();
    buffer.push_namespace(0, &[3, 4], &[1.0f32, 0.5], 0).unwrap();
    buffer.push_namespace(0, &[7], &[2.0f32], 0).unwrap();
    buffer.push_namespace(0, &[9], &[1.0f32], 0).unwrap();
    let example = buffer.finish(0.0, 1.0, 0).unwrap();
    let expand = |e: &dyn Fn(&mut ExpandedFeatures)| {
        let mut out = ExpandedFeatures::new(18);
        e(&mut out);
        let mut map = BTreeMap::new();
        for (&s, &v) in out.slots().iter().zip(out.values()) {
            *map.entry(s).or_insert(0.0f64) += f64::from(v);
        }
        (out.slots().len(), map)
    };
    let given = Interactions { degree: 1, namespace_crosses: vec![vec![0, 1]], constant: true };
    let ours = expand(&|out| set.expand(&example, out));
    assert_eq!(ours, expand(&|out| given.expand(&example, out)));
    assert_eq!(ours.0, 4 + 2 + 1);
    // ... in the same order: the learner expands blocks with those interactions.
    let ordered = |e: &dyn Expansion| {
        let mut out = ExpandedFeatures::new(18);
        e.expand(&example, &mut out);
        (out.slots().to_vec(), out.values().to_vec())
    };
    assert_eq!(ordered(&set), ordered(&given));
    assert_eq!(set.block_expansion(), Some(given.clone()));
    // Outside a catch-up neither part gives added features (the cross joined long ago).
    assert_eq!(expand(&|out| set.expand_added(&example, out)).0, 0);

    let mut w = ByteWriter::new();
    set.write_section(&mut w);
    let bytes = w.into_bytes();
    let read = FeatureSet::read_section(
        "apple_fields",
        &mut ByteReader::new(&bytes, 0, "f"),
        versions::CURRENT,
    )
    .unwrap();
    assert_eq!(read, set);
    assert_eq!(read.kind(), "apple_fields");
    assert!(read.apple().is_some() && read.field_apple().unwrap().crosses().len() == 1);
    let cut = &bytes[..bytes.len() - 3];
    let mut cut_reader = ByteReader::new(cut, 0, "f");
    assert!(FeatureSet::read_section("apple_fields", &mut cut_reader, versions::CURRENT).is_err());
    // A section of format 5: apple's options without catch_up (the 8 bytes of its distinctive
    // value), the crosses' options without catch_up (8 bytes after their first 37), no flag of
    // apple's categorical namespaces at the end; read as a model in which neither catches up.
    let distinct = 0x0BAD_CAFE_F00D_u64.to_le_bytes();
    let marked = Apple::new(AppleConfig { catch_up: 0x0BAD_CAFE_F00D, ..apple.clone() }).unwrap();
    let marked = FeatureSet::AppleFields(Box::new(marked), Box::new(found.clone()));
    let mut w = ByteWriter::new();
    marked.apple().unwrap().write_section_v9(&mut w);
    let apple_bytes = w.into_bytes();
    let apple_catch_up = apple_bytes.windows(8).position(|b| b == distinct).unwrap();
    let mut w = ByteWriter::new();
    marked.field_apple().unwrap().write_section_v9(&mut w);
    let field_bytes = w.into_bytes();
    let old = [
        &apple_bytes[..apple_catch_up],
        &apple_bytes[apple_catch_up + 8..],
        &field_bytes[..37],
        &field_bytes[45..],
    ]
    .concat();
    let read = FeatureSet::read_section("apple_fields", &mut ByteReader::new(&old, 0, "f"), 5);
    let read = read.unwrap();
    assert_eq!(read.apple().unwrap().config(), &AppleConfig { catch_up: 0, ..apple.clone() });
    assert_eq!(read.field_apple().unwrap().config().catch_up, 0);
    assert_eq!(read.field_apple().unwrap().crosses(), set.field_apple().unwrap().crosses());

    // Built as a new model is, apple leaves the categorical namespaces to the crosses; what it
    // noted of them is stored.
    let mut noting = Apple::new(apple).unwrap();
    let mut seen = crate::apple::categorical::CategoricalNamespaces::default();
    seen.observe(&example);
    noting.leave_categorical_to_field_crosses(seen);
    assert!(!noting.categorical().unwrap().is_categorical(0)); // two features; 1: value 2
    assert!(noting.categorical().unwrap().is_categorical(2));
    assert!(!noting.categorical().unwrap().all_categorical());
    // Only one-hot namespaces: apple can take no parent (and keeps no examples to catch up).
    let mut one_hot = ExampleBuffer::new();
    one_hot.push_namespace(0, &[3], &[1.0f32], 0).unwrap();
    one_hot.push_namespace(0, &[7], &[1.0f32], 0).unwrap();
    let mut only = crate::apple::categorical::CategoricalNamespaces::default();
    assert!(!only.all_categorical(), "nothing seen yet");
    only.observe(&one_hot.finish(0.0, 1.0, 0).unwrap());
    assert!(only.all_categorical());
    let noting = FeatureSet::AppleFields(Box::new(noting), Box::new(found));
    let mut w = ByteWriter::new();
    noting.write_section(&mut w);
    let bytes = w.into_bytes();
    let mut reader = ByteReader::new(&bytes, 0, "f");
    let read = FeatureSet::read_section("apple_fields", &mut reader, versions::CURRENT);
    assert_eq!(read.unwrap(), noting);
    // The byte before the flags tells whether the categorical features are factors of children
    // too: a model first saved by format 7 (byte 1) keeps multiplying them and is written back
    // as it was read; a byte beyond 2 is refused.
    let mut w = ByteWriter::new();
    noting.apple().unwrap().categorical().unwrap().write(&mut w);
    let flag_at = bytes.len() - w.into_bytes().len() - 1;
    assert_eq!(bytes[flag_at], 2);
    assert!(noting.apple().unwrap().categorical().unwrap().not_factors());
    let mut older = bytes.clone();
    older[flag_at] = 1;
    let mut reader = ByteReader::new(&older, 0, "f");
    let read = FeatureSet::read_section("apple_fields", &mut reader, versions::CURRENT).unwrap();
    assert!(!read.apple().unwrap().categorical().unwrap().not_factors());
    let mut w = ByteWriter::new();
    read.write_section(&mut w);
    assert_eq!(w.into_bytes(), older);
    older[flag_at] = 3;
    let mut reader = ByteReader::new(&older, 0, "f");
    let read = FeatureSet::read_section("apple_fields", &mut reader, versions::CURRENT);
    assert!(read.unwrap_err().to_string().contains("apple categorical flag 3 is not 0, 1 or 2"));
}

/// While apple has no parent (always, when every field is categorical), apple with field
/// crosses is linear plus the crosses: the learner expands one-hot blocks at once, and learns
/// what it learns one row at a time while a cross joins.
#[test]
fn apple_with_field_crosses_of_categorical_fields_learns_by_blocks_as_row_by_row() {
    let new = || {
        let options = FeatureSetOptions::AppleFields {
            apple: AppleConfig::default(),
            fields: crate::field_apple::FieldAppleConfig::default(),
        };
        FeatureSet::new(options, true).unwrap()
    };
    assert!(new().block_expansion().is_some());
    let (batched, single) = crate::field_apple::tests::batch_and_rows(new);
    let crosses = batched.expansion().field_apple().unwrap().crosses();
    assert!(!crosses.is_empty(), "a cross joins during the batch");
    assert!(batched.expansion().apple().unwrap().parents().is_empty());
    assert_eq!(crosses, single.expansion().field_apple().unwrap().crosses());
    assert_eq!(batched.weights().data(), single.weights().data());
}

/// An enumerator that counts how the learner tells it of learned examples: read or not
/// ([`Expansion::reads_example`]).
#[derive(Debug)]
struct CountingReads {
    inner: FeatureSet,
    read: usize,
    unread: usize,
}

impl Expansion for CountingReads {
    fn expand(&self, example: &Example<'_>, out: &mut ExpandedFeatures) {
        self.inner.expand(example, out);
    }
    fn uses_feature_set(&self) -> bool {
        self.inner.uses_feature_set()
    }
    fn validate(&self, n_namespaces: usize) -> crate::error::PolyResult<()> {
        self.inner.validate(n_namespaces)
    }
    fn check(&self, example: &Example<'_>, row: usize) -> crate::error::PolyResult<()> {
        self.inner.check(example, row)
    }
    fn begin_run(&mut self, examples: u64) {
        self.inner.begin_run(examples);
    }
    fn after_learn(&mut self, example: &Example<'_>, learned: &Learned<'_>) {
        self.read += 1;
        self.inner.after_learn(example, learned);
    }
    fn reads_example(&self, shape: &ExampleShape) -> bool {
        self.inner.reads_example(shape)
    }
    fn after_learn_unread(&mut self, shape: &ExampleShape, learned: &Learned<'_>) {
        self.unread += 1;
        self.inner.after_learn_unread(shape, learned);
    }
    fn generation(&self) -> u64 {
        self.inner.generation()
    }
    fn recent_examples_wanted(&self) -> usize {
        self.inner.recent_examples_wanted()
    }
    fn catch_up_due(&self) -> bool {
        self.inner.catch_up_due()
    }
    fn expand_added(&self, example: &Example<'_>, out: &mut ExpandedFeatures) {
        self.inner.expand_added(example, out);
    }
    fn expand_for_catch_up(
        &self,
        example: &Example<'_>,
        added: &mut ExpandedFeatures,
        all: &mut ExpandedFeatures,
    ) {
        self.inner.expand_for_catch_up(example, added, all);
    }
    fn expand_block(
        &self,
        rows: &BlockRows<'_>,
        out: &mut ExpandedFeatures,
        ends: &mut Vec<ExampleEnd>,
    ) {
        self.inner.expand_block(rows, out, ends);
    }
    fn block_expansion(&self) -> Option<Interactions> {
        self.inner.block_expansion()
    }
}

/// Apple with field crosses learns most examples of categorical blocks without reading them
/// (only those it screens, keeps for a catch-up or remembers), and learns exactly what it
/// learns reading every example one row at a time: on categorical fields, and beside a field
/// whose values are not all 1 (apple notes it as not categorical and may take parents there).
#[test]
fn apple_with_field_crosses_reads_only_the_examples_it_needs() {
    use crate::field_apple::tests::{batch_and_rows_of, eat_rate};
    let new = || CountingReads {
        inner: FeatureSet::new(
            FeatureSetOptions::AppleFields {
                apple: AppleConfig::default(),
                fields: crate::field_apple::FieldAppleConfig::default(),
            },
            true,
        )
        .unwrap(),
        read: 0,
        unread: 0,
    };
    let categorical = eat_rate(60_000, 100, 4, 0.0, 3);
    let mut scaled = eat_rate(60_000, 100, 4, 0.0, 3);
    let (_, ids, values) = &mut scaled.columns[2];
    for (id, value) in ids.iter().zip(values.iter_mut()) {
        if id % 500 == 0 {
            *value = 2.0;
        }
    }
    for (data, name) in [(&categorical, "categorical"), (&scaled, "scaled")] {
        let (batched, single) = batch_and_rows_of(data, new);
        let (b, s) = (&batched.expansion(), &single.expansion());
        assert_eq!(b.inner, s.inner, "{name}");
        let (b_apple, s_apple) = (b.inner.apple().unwrap(), s.inner.apple().unwrap());
        assert_eq!(b_apple.progress(), s_apple.progress(), "{name}");
        assert_eq!(b_apple.categorical(), s_apple.categorical(), "{name}");
        let notes = b_apple.categorical().unwrap();
        assert_eq!(notes.is_categorical(2), name == "categorical", "{notes:?}");
        assert!(notes.is_categorical(3));
        let (b_fields, s_fields) = (b.inner.field_apple().unwrap(), s.inner.field_apple().unwrap());
        assert!(!b_fields.crosses().is_empty(), "{name}: a cross joins");
        assert_eq!(b_fields.candidate_scores(), s_fields.candidate_scores(), "{name}");
        assert_eq!(batched.weights().data(), single.weights().data(), "{name}");
        assert_eq!((s.read, s.unread), (60_000, 0), "{name}: one row at a time reads all");
        assert_eq!(b.read + b.unread, 60_000, "{name}");
        // Recent examples are kept while a join is in sight (the first 30 checks); after
        // that only the screened ones (about one in four at the whole budget) are read. (Beside
        // the scaled field apple takes parents, and then reads every example.)
        if name == "categorical" {
            assert!(b.unread > 60_000 / 10, "{} read, {} not", b.read, b.unread);
        }
    }
}

/// The counted length of a model file (what pickling allocates and Dask reports) is the length
/// written, for weights stored sparse, dense and not at all.
#[test]
fn counted_file_length_equals_the_bytes_written() {
    let data = stream(300, 7, false);
    let (offsets, indices, values, labels) = rows_of(&data);
    let rows = SparseRows::new(&offsets, &indices, &values).unwrap();
    let ns: [&dyn NamespaceRows; 1] = [&rows];
    let batch = Batch::new(&ns, &labels, None).unwrap();
    for (bits, rule) in
        [(4, UpdateRule::VW_DEFAULT), (16, UpdateRule::VW_DEFAULT), (4, UpdateRule::SGD)]
    {
        let config = LearnerConfig { bits, ..config(Loss::Squared(Squared), rule) };
        let mut learner = Learner::new(config, FeatureSet::from(Interactions::linear())).unwrap();
        let untrained = ModelRef::Online(&learner);
        assert_eq!(untrained.file("e").file_len(), untrained.to_bytes("e").len());
        learner.learn_batch(&batch).unwrap();
        let trained = ModelRef::Online(&learner);
        assert_eq!(trained.file("e").file_len(), trained.to_bytes("e").len(), "bits {bits}");
    }
}

/// A one-against-all file holds each class's model (different enumerators included) and reads
/// back to models that predict as the written ones; a damaged class count is refused.
#[test]
fn one_against_all_models_round_trip() {
    let data = stream(200, 7, true);
    let (offsets, indices, values, labels) = rows_of(&data);
    let rows = SparseRows::new(&offsets, &indices, &values).unwrap();
    let ns: [&dyn NamespaceRows; 1] = [&rows];
    let batch = Batch::new(&ns, &labels, None).unwrap();
    let flipped: Vec<f64> = labels.iter().map(|y| -y).collect();
    let flipped_batch = Batch::new(&ns, &flipped, None).unwrap();
    let logistic = || config(Loss::Logistic(Logistic), UpdateRule::VW_DEFAULT);
    let mut heads = [
        Learner::new(logistic(), FeatureSet::from(Interactions::linear())).unwrap(),
        Learner::new(logistic(), FeatureSet::from(Interactions::quadratic())).unwrap(),
        Learner::new(logistic(), FeatureSet::from(Interactions::linear())).unwrap(),
    ];
    heads[0].learn_batch(&batch).unwrap();
    heads[1].learn_batch(&flipped_batch).unwrap();
    let borrowed: Vec<&OnlineModel> = heads.iter().collect();
    let bytes = ModelRef::OneAgainstAll(&borrowed).to_bytes("{\"classes\": 3}");
    let (Model::OneAgainstAll(loaded), text) = Model::from_bytes(&bytes).unwrap() else {
        panic!("not a one-against-all model")
    };
    assert_eq!(text, "{\"classes\": 3}");
    assert_eq!(loaded.len(), 3);
    for (written, read) in heads.iter().zip(&loaded) {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        written.predict_batch(&batch, &mut a).unwrap();
        read.predict_batch(&batch, &mut b).unwrap();
        assert_eq!(a, b);
        assert_eq!(written.progress(), read.progress());
    }
    assert_eq!(Model::OneAgainstAll(loaded).to_bytes("{\"classes\": 3}"), bytes);
    // The class count is the first word of the section's bytes: make it 1, then 2^20.
    let at = bytes.windows(15).position(|w| w == b"one_against_all").unwrap() + 15 + 8;
    for count in [1u32, 1 << 20] {
        let mut damaged = bytes.clone();
        damaged[at..at + 4].copy_from_slice(&count.to_le_bytes());
        let err = Model::from_bytes(&resealed(damaged)).unwrap_err().to_string();
        assert!(err.contains(&format!("{count} classes")), "{err}");
    }
}

/// Only fixed interactions let the learner skip handing it each learned example (it then takes
/// the label and weight alone, see `Expansion::learns_from_examples`): apple and its field
/// crosses count and grow on the examples, whichever form they are in.
#[test]
fn only_fixed_interactions_learn_without_their_examples() {
    use crate::field_apple::{FieldApple, FieldAppleConfig};

    let fixed = Interactions { namespace_crosses: vec![vec![0, 1]], ..Interactions::linear() };
    assert!(!FeatureSet::Interactions(fixed).learns_from_examples());
    let apple = || Box::new(Apple::new(AppleConfig::default()).unwrap());
    let fields = || Box::new(FieldApple::new(FieldAppleConfig::default()).unwrap());
    assert!(FeatureSet::Apple(apple()).learns_from_examples());
    assert!(FeatureSet::FieldApple(fields()).learns_from_examples());
    assert!(FeatureSet::AppleFields(apple(), fields()).learns_from_examples());
}

/// A model with crosses of two to four namespaces and an initial weight saves, loads, predicts
/// and trains on exactly as before; a file of format 8 (crosses of two namespaces as pairs, no
/// initial weight) still reads, as the crosses it stored.
#[test]
fn crosses_of_any_order_and_the_initial_weight_round_trip() {
    let data: Vec<_> = (0..3).map(|seed| stream(150, 11 + seed, false)).collect();
    let parts: Vec<_> = data.iter().map(|d| rows_of(d)).collect();
    let rows: Vec<SparseRows<'_, u32, f64>> =
        parts.iter().map(|(o, i, v, _)| SparseRows::new(o, i, v).unwrap()).collect();
    let ns: Vec<&dyn NamespaceRows> = rows.iter().map(|r| r as &dyn NamespaceRows).collect();
    let batch = Batch::new(&ns, &parts[0].3, None).unwrap();
    let config = LearnerConfig {
        namespaces: vec!["a".into(), "b".into(), "c".into()],
        initial_weight: 0.125,
        ..config(Loss::Squared(Squared), UpdateRule::VW_DEFAULT)
    };
    let crosses = vec![vec![0, 1], vec![2, 2], vec![0, 1, 2], vec![1, 1, 1], vec![2, 0, 0, 1]];
    let fixed = Interactions { namespace_crosses: crosses, ..Interactions::linear() };
    let mut learner = Learner::new(config.clone(), FeatureSet::from(fixed.clone())).unwrap();
    // Untrained, every slot holds the initial weight, and the table survives a round trip.
    assert_eq!(learner.weights().weight(77), 0.125);
    let (fresh, _) = model_io::from_bytes(&model_io::to_bytes(&learner, "")).unwrap();
    assert_eq!(fresh.weights().weight(77), 0.125);
    learner.learn_batch(&batch).unwrap();
    let (mut loaded, _) = model_io::from_bytes(&model_io::to_bytes(&learner, "")).unwrap();
    assert_eq!(loaded.expansion(), &FeatureSet::from(fixed));
    assert_eq!(loaded.config().initial_weight, 0.125);
    assert!(same_kept_weights(&loaded, &learner));
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    learner.learn_batch_recording(&batch, &mut ours).unwrap();
    loaded.learn_batch_recording(&batch, &mut theirs).unwrap();
    assert_eq!(ours, theirs);

    // Format 9: positional options, the crosses with their lengths, the initial weight last.
    let FeatureSet::Interactions(stored) = learner.expansion() else { unreachable!() };
    let mut sections = file::Sections::new();
    sections.add(FEATURES, |w| {
        w.str("interactions");
        stored.write_section_v9(w);
    });
    sections.add(LEARNER, |w| learner.write_section_v9(w));
    sections.add(ESTIMATOR, |w| w.str("v9"));
    let (read, _) = model_io::from_bytes(&with_version(&sections.to_bytes(), 9)).unwrap();
    assert_eq!((read.config(), read.expansion()), (learner.config(), learner.expansion()));
    assert!(same_kept_weights(&read, &learner));

    // Format 8: the learner section without the initial weight, the pairs without lengths.
    let pairs =
        Interactions { namespace_crosses: vec![vec![0, 1], vec![2, 2]], ..Interactions::linear() };
    let config = LearnerConfig { initial_weight: 0.0, ..config };
    let mut old = Learner::new(config, FeatureSet::from(pairs.clone())).unwrap();
    old.learn_batch(&batch).unwrap();
    let mut learner_bytes = crate::codec::ByteWriter::new();
    old.write_section_v9(&mut learner_bytes);
    let mut learner_bytes = learner_bytes.into_bytes();
    learner_bytes.truncate(learner_bytes.len() - 8);
    let mut sections = file::Sections::new();
    sections.add(FEATURES, |w| {
        w.str("interactions");
        w.u8(1);
        w.flag(true);
        w.u32(2);
        for k in [0, 1, 2, 2] {
            w.u32(k);
        }
    });
    sections.add(LEARNER, |w| w.raw(&learner_bytes));
    sections.add(ESTIMATOR, |w| w.str("v8"));
    let (read, estimator) = model_io::from_bytes(&with_version(&sections.to_bytes(), 8)).unwrap();
    assert_eq!(estimator, "v8");
    assert_eq!(read.expansion(), &FeatureSet::from(pairs));
    assert_eq!(read.config().initial_weight, 0.0);
    assert!(same_kept_weights(&read, &old));
    // The same bytes as format 9 are refused: the crosses need their lengths there.
    assert!(model_io::from_bytes(&with_version(&sections.to_bytes(), 9)).is_err());
}

/// Whether two models' tables hold the same weights, sums and normalizers (the rate is scratch,
/// not saved).
fn same_kept_weights(a: &OnlineModel, b: &OnlineModel) -> bool {
    let kept = |m: &OnlineModel| -> Vec<f32> {
        m.weights().data().chunks_exact(4).flat_map(|s| s[..3].to_vec()).collect()
    };
    kept(a) == kept(b)
}

/// A section's leading options (JSON, `u32` length first) with `edit` applied, the rest as is.
fn with_edited_options(section: &[u8], edit: impl Fn(&mut serde_json::Value)) -> Vec<u8> {
    let n = u32::from_le_bytes(section[..4].try_into().unwrap()) as usize;
    let mut options: serde_json::Value = serde_json::from_slice(&section[4..4 + n]).unwrap();
    edit(&mut options);
    let text = options.to_string();
    [&(text.len() as u32).to_le_bytes()[..], text.as_bytes(), &section[4 + n..]].concat()
}

/// Options are stored by name: a file whose options lack a field (one added after the file was
/// written) reads it as its default, with no new format version; a field this build does not
/// know, or a value out of range, is refused naming the field. Format 9's positional options
/// still read as the same model.
#[test]
fn options_are_stored_by_name_and_a_new_field_takes_its_default() {
    let apple = AppleConfig { catch_up: 7, ranking: Ranking::Magnitude, ..AppleConfig::default() };
    let data = single_monomial(400, 5, 0.1, 2);
    let rows = SparseRows::new(&data.offsets, &data.indices, &data.values).unwrap();
    let ns: [&dyn NamespaceRows; 1] = [&rows];
    let batch = Batch::new(&ns, &data.labels, None).unwrap();
    let config = LearnerConfig { initial_weight: 0.25, ..squared_config() };
    let mut learner =
        Learner::new(config, FeatureSet::from(Apple::new(apple.clone()).unwrap())).unwrap();
    learner.learn_batch(&batch).unwrap();
    let sections_with = |learner_bytes: &[u8], features_bytes: &[u8], version: u32| {
        let mut sections = file::Sections::new();
        sections.add(FEATURES, |w| {
            w.str("apple");
            w.raw(features_bytes);
        });
        sections.add(LEARNER, |w| w.raw(learner_bytes));
        sections.add(ESTIMATOR, |w| w.str(""));
        with_version(&sections.to_bytes(), version)
    };
    let section = |write: &dyn Fn(&mut crate::codec::ByteWriter)| {
        let mut w = crate::codec::ByteWriter::new();
        write(&mut w);
        w.into_bytes()
    };
    let learner_bytes = section(&|w| learner.write_section(w));
    let apple_bytes = section(&|w| learner.expansion().write_section(w));
    let text = String::from_utf8_lossy(&learner_bytes[4..]);
    assert!(text.starts_with("{\"bits\":") && text.contains("\"initial_weight\":0.25"), "{text}");

    // Without the fields added last (the learner's initial weight, apple's catch-up): defaults.
    let older_learner = with_edited_options(&learner_bytes, |o| {
        _ = o.as_object_mut().unwrap().remove("initial_weight")
    });
    let older_apple =
        with_edited_options(&apple_bytes, |o| _ = o.as_object_mut().unwrap().remove("catch_up"));
    let (read, _) =
        model_io::from_bytes(&sections_with(&older_learner, &older_apple, versions::CURRENT))
            .unwrap();
    assert_eq!(read.config(), &LearnerConfig { initial_weight: 0.0, ..learner.config().clone() });
    let expected = AppleConfig { catch_up: AppleConfig::default().catch_up, ..apple.clone() };
    assert_eq!(read.expansion().apple().unwrap().config(), &expected);
    assert!(same_kept_weights(&read, &learner));

    // A field no build knows, a value out of range and a wrong type name the field.
    for (edit, words) in [
        (
            Box::new(|o: &mut serde_json::Value| o["shiny"] = true.into())
                as Box<dyn Fn(&mut serde_json::Value)>,
            ["unknown field", "shiny"],
        ),
        (Box::new(|o: &mut serde_json::Value| o["bits"] = 99.into()), ["bits", "99"]),
        (Box::new(|o: &mut serde_json::Value| o["eta0"] = "fast".into()), ["eta0", "fast"]),
        (
            Box::new(|o: &mut serde_json::Value| o["loss"]["name"] = "hinge2".into()),
            ["loss", "hinge2"],
        ),
    ] {
        let edited = with_edited_options(&learner_bytes, edit);
        let err = model_io::from_bytes(&sections_with(&edited, &apple_bytes, versions::CURRENT));
        let err = err.unwrap_err().to_string();
        assert!(words.iter().all(|w| err.contains(w)), "{err}");
    }

    // The same model in format 9's layout reads as the same model.
    let v9_learner = section(&|w| learner.write_section_v9(w));
    let v9_apple = section(&|w| learner.expansion().apple().unwrap().write_section_v9(w));
    let (read, _) = model_io::from_bytes(&sections_with(&v9_learner, &v9_apple, 9)).unwrap();
    assert_eq!(read.config(), learner.config());
    assert_eq!(read.expansion(), learner.expansion());
    assert!(same_kept_weights(&read, &learner));
}

/// A model with a field-aware factorization saves its table and options: the loaded model
/// predicts and trains on as the saved one, bit for bit; a table edited to hold a NaN or a
/// non-positive AdaGrad sum is refused at load.
#[test]
fn a_factorization_round_trips_and_refuses_damage() {
    let data = stream(200, 3, true);
    let (offsets, indices, values, labels) = rows_of(&data);
    let rows = SparseRows::new(&offsets, &indices, &values).unwrap();
    let ns: [&dyn NamespaceRows; 1] = [&rows];
    let batch = Batch::new(&ns, &labels, None).unwrap();
    let config = LearnerConfig {
        ffm: Some(crate::learner::ffm::FfmOptions::new(3, 6, vec![1])),
        ..config(Loss::Logistic(Logistic), UpdateRule::VW_DEFAULT)
    };
    let mut a = Learner::new(config, FeatureSet::from(Interactions::linear())).unwrap();
    a.learn_batch(&batch).unwrap();
    let bytes = model_io::to_bytes(&a, "");
    let (mut b, _) = model_io::from_bytes(&bytes).unwrap();
    assert_eq!(b.config(), a.config());
    assert_eq!(b.ffm().unwrap().table(), a.ffm().unwrap().table());
    let (mut pa, mut pb) = (Vec::new(), Vec::new());
    a.predict_batch(&batch, &mut pa).unwrap();
    b.predict_batch(&batch, &mut pb).unwrap();
    assert_eq!(pa, pb);
    a.learn_batch(&batch).unwrap();
    b.learn_batch(&batch).unwrap();
    assert_eq!(b.ffm().unwrap().table(), a.ffm().unwrap().table());
    let table = a.ffm().unwrap().table().to_vec();
    let bytes = model_io::to_bytes(&a, "");
    let find = |value: f32| {
        let pattern = value.to_le_bytes();
        bytes.windows(4).position(|w| w == pattern).expect("the table's bytes are in the file")
    };
    // A row a feature moved: its 3 latent values, then their 3 AdaGrad sums (above 1).
    let row = (0..64).find(|r| table[r * 6 + 3] != 1.0).unwrap();
    let (latent, sum) = (find(table[row * 6]), find(table[row * 6 + 3]));
    for (at, hostile, message) in [
        (latent, f32::NAN, format!("ffm row {row} holds the latent value NaN")),
        (latent, f32::INFINITY, format!("ffm row {row} holds the latent value inf")),
        (sum, 0.0, format!("ffm row {row} holds the AdaGrad sum 0")),
    ] {
        let mut damaged = bytes.clone();
        damaged[at..at + 4].copy_from_slice(&hostile.to_le_bytes());
        let Err(err) = model_io::from_bytes(&resealed(damaged)) else {
            panic!("loaded with {message:?}");
        };
        let err = err.to_string();
        assert!(err.contains(&message), "{err}");
    }
}
