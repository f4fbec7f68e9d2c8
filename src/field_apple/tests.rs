//! Field-level apple inside the learner: a planted cross found, nothing found in noise, the
//! budget respected, determinism, and the model-file section.

use super::*;
use crate::codec::{ByteReader, ByteWriter};
use crate::learner::loss::Logistic;
use crate::learner::{Batch, Expansion, FitOptions, Learner, LearnerConfig, Loss, NamespaceRows};
use crate::sparse::SparseRows;
use crate::versions;

/// One namespace per field, one feature per row (the value id), like hashed categorical data.
pub(crate) struct Fields {
    pub columns: Vec<(Vec<i64>, Vec<u32>, Vec<f32>)>,
    pub labels: Vec<f64>,
}

/// `n` rows of eat-rate in small: field 0 (animals) and field 1 (foods) of `varieties` values,
/// `noise_fields` fields of 1000 values; the label is +1 when the parities of the animal and the
/// food agree (a pure cross: neither field says anything alone), flipped with probability `flip`.
pub(crate) fn eat_rate(
    n: usize,
    varieties: u32,
    noise_fields: usize,
    flip: f64,
    seed: u64,
) -> Fields {
    let mut state = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut next = || {
        state =
            state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        state >> 33
    };
    let n_fields = 2 + noise_fields;
    let mut columns = vec![(vec![0i64], Vec::new(), Vec::new()); n_fields];
    let mut labels = Vec::with_capacity(n);
    for _ in 0..n {
        let mut ids = Vec::with_capacity(n_fields);
        for (field, column) in columns.iter_mut().enumerate() {
            let id = (next() % u64::from(if field < 2 { varieties } else { 1000 })) as u32;
            ids.push(id);
            column.1.push(id);
            column.2.push(1.0);
            column.0.push(column.1.len() as i64);
        }
        let agree = ids[0] % 2 == ids[1] % 2;
        let flipped = (next() % 1_000_000) as f64 / 1e6 < flip;
        labels.push(if agree != flipped { 1.0 } else { -1.0 });
    }
    Fields { columns, labels }
}

pub(crate) fn config(n_fields: usize) -> LearnerConfig {
    LearnerConfig {
        bits: 22,
        loss: Loss::Logistic(Logistic),
        namespaces: (0..n_fields).map(|k| format!("f{k}")).collect(),
        ..LearnerConfig::default()
    }
}

/// One sparse column per field.
pub(crate) fn sparse_rows(data: &Fields) -> Vec<SparseRows<'_, u32, f32>> {
    let rows = data.columns.iter();
    rows.map(|(offsets, indices, values)| SparseRows::new(offsets, indices, values).unwrap())
        .collect()
}

fn fit(data: &Fields, field_config: FieldAppleConfig) -> Learner<FieldApple> {
    let rows = sparse_rows(data);
    let namespaces: Vec<&dyn NamespaceRows> =
        rows.iter().map(|r| r as &dyn NamespaceRows).collect();
    let batch = Batch::new(&namespaces, &data.labels, None).unwrap();
    let mut learner =
        Learner::new(config(data.columns.len()), FieldApple::new(field_config).unwrap()).unwrap();
    let options = FitOptions { holdout: 0, ..FitOptions::default() };
    learner.fit(&batch, &options).unwrap();
    learner
}

#[test]
fn finds_the_planted_cross_whose_fields_say_nothing_alone() {
    let data = eat_rate(120_000, 100, 8, 0.0, 1);
    let learner = fit(&data, FieldAppleConfig::default());
    let crosses = learner.expansion().crosses();
    assert_eq!(crosses.first().map(|c| c.fields.clone()), Some(vec![0, 1]), "{crosses:?}");
    // Found within a bounded number of examples, and no noise cross joined.
    assert!(crosses[0].added_at <= 40_000, "{crosses:?}");
    assert_eq!(crosses.len(), 1, "{crosses:?}");
}

/// Like [`eat_rate`], but the label's log-odds are a random ±`effect` per value pair of fields 0
/// and 1 (a cross of full rank: no few numbers per value describe it), 4 noise fields.
fn pair_effects(n: usize, varieties: u32, effect: f64, seed: u64) -> Fields {
    let mut data = eat_rate(n, varieties, 4, 0.0, seed);
    let mut state = seed ^ 0xABCD;
    for (row, label) in data.labels.iter_mut().enumerate() {
        let (a, b) = (data.columns[0].1[row], data.columns[1].1[row]);
        let sign = if crate::hashing::fmix32(a * 7919 + b) % 2 == 0 { 1.0 } else { -1.0 };
        let p = 1.0 / (1.0 + (-sign * effect).exp());
        state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        *label = if ((state >> 11) as f64 / (1u64 << 53) as f64) < p { 1.0 } else { -1.0 };
    }
    data
}

#[test]
fn finds_a_planted_cross_of_full_rank_by_its_cells() {
    let data = pair_effects(150_000, 20, 1.5, 5);
    let learner = fit(&data, FieldAppleConfig::default());
    let crosses = learner.expansion().crosses();
    assert_eq!(
        crosses.iter().map(|c| c.fields.clone()).collect::<Vec<_>>(),
        [vec![0, 1]],
        "{crosses:?}"
    );
}

/// A candidate with `n` cell gain samples alternating around `mean`.
fn judged(pair: (usize, usize), n: usize, mean: f64) -> Candidate {
    let mut candidate = Candidate::new(pair);
    (0..n).for_each(|k| candidate.cells.record(mean + if k % 2 == 0 { 1.0 } else { -1.0 }, 1.0));
    candidate
}

#[test]
fn losing_candidates_pause_and_rejoin_when_a_cross_joins_or_the_race_restarts() {
    let mut model = FieldApple::new(FieldAppleConfig::default()).unwrap();
    model.candidates = vec![
        judged((0, 1), 6_000, -0.01), // enough samples, losing: pauses
        judged((0, 2), 6_000, 0.01),  // winning, not surely enough to join
        judged((1, 2), 100, -0.5),    // losing, too few samples to judge
    ];
    model.judge();
    let active = |m: &FieldApple| m.candidates.iter().map(|c| c.pair).collect::<Vec<_>>();
    assert_eq!(active(&model), [(0, 2), (1, 2)]);
    assert_eq!(model.paused.iter().map(|c| c.pair).collect::<Vec<_>>(), [(0, 1)]);
    let scores = model.candidate_scores();
    assert_eq!(scores.iter().map(|c| c.active).collect::<Vec<_>>(), [true, true, false]);

    // A sure winner with too few samples waits; with enough it joins, and the paused return.
    model.candidates[0] = judged((0, 2), SAMPLES_TO_JOIN as usize - 2, 1.0);
    model.judge();
    assert!(model.crosses().is_empty());
    model.candidates[0] = judged((0, 2), SAMPLES_TO_JOIN as usize, 1.0);
    model.judge();
    assert_eq!(model.crosses().iter().map(|c| c.fields.clone()).collect::<Vec<_>>(), [vec![0, 2]]);
    assert!(model.paused.is_empty());
    assert_eq!(active(&model).len(), 2);

    // Quiet checks pause the loser again; the race restarts after PATIENT_CHECKS of them, the
    // returning candidates with fresh statistics.
    model.candidates = vec![judged((0, 1), 6_000, -0.01), judged((1, 2), 10, 0.0)];
    model.quiet_checks = 0;
    model.judge();
    assert_eq!(model.paused.len(), 1);
    for _ in 1..PATIENT_CHECKS {
        model.judge();
    }
    assert!(model.paused.is_empty());
    let returned = model.candidates.iter().find(|c| c.pair == (0, 1)).unwrap();
    assert_eq!(returned.count(), 0);
}

#[test]
fn fewer_samples_need_a_surer_z_score_to_join() {
    // Gains of mean m and standard deviation 1 over n samples: z = m * sqrt(n).
    let z_of = |candidate: &Candidate| candidate.z_score();
    let with_z = |n: usize, z: f64| judged((0, 1), n, z / (n as f64).sqrt());
    let joins = |candidate: Candidate| {
        let mut model = FieldApple::new(FieldAppleConfig::default()).unwrap();
        model.candidates = vec![candidate];
        model.judge();
        !model.crosses().is_empty()
    };
    // From SAMPLES_TO_DECIDE on, z itself; at 2,000 samples z * sqrt(5/2), about 7.9.
    assert_eq!(z_to_join(5.0, SAMPLES_TO_DECIDE), 5.0);
    assert_eq!(z_to_join(5.0, 4 * SAMPLES_TO_DECIDE), 5.0);
    assert!((z_to_join(5.0, 2_000) - 5.0 * 2.5f64.sqrt()).abs() < 1e-12);
    assert_eq!(z_to_join(5.0, SAMPLES_TO_JOIN - 1), f64::INFINITY);
    let (doubtful, sure) = (with_z(2_000, 6.0), with_z(2_000, 9.0));
    assert!((z_of(&doubtful) - 6.0).abs() < 0.01 && (z_of(&sure) - 9.0).abs() < 0.01);
    assert!(!joins(doubtful));
    assert!(joins(sure));
    assert!(joins(with_z(SAMPLES_TO_DECIDE as usize, 5.1)));
    assert!(!joins(with_z(SAMPLES_TO_JOIN as usize - 2, 100.0)));
}

#[test]
fn a_candidate_no_judge_sees_gain_in_pauses_once_it_has_its_samples() {
    // Keyed cells give a cross whose value pairs never came back a gain of exactly 0, and a
    // z-score of 0: not evidence that it helps, so it leaves the race like a losing one.
    let silent = |n: usize| {
        let mut candidate = Candidate::new((0, 1));
        (0..n).for_each(|_| candidate.cells.record(0.0, 1.0));
        candidate
    };
    let mut model = FieldApple::new(FieldAppleConfig::default()).unwrap();
    model.candidates = vec![silent(SAMPLES_TO_DECIDE as usize - 1)];
    model.judge();
    assert_eq!(model.candidates.len(), 1);
    model.candidates = vec![silent(SAMPLES_TO_DECIDE as usize)];
    assert_eq!(model.candidates[0].z_score(), 0.0);
    model.judge();
    assert!(model.candidates.is_empty());
    assert_eq!(model.paused.len(), 1);
}

#[test]
fn finds_the_planted_cross_early_on_every_seed() {
    // A million value pairs, each seldom seen twice: the cross must not depend on which
    // examples happened to be screened first. With cells that mixed other pairs' sums into a
    // pair's mean, one seed of these six found nothing in 100k rows and the others found the
    // cross at 50k-70k rows.
    let rows = rows_the_planted_cross_joins_at(60_000, 1000, 6, 10..16);
    assert!(rows.iter().all(|&row| row <= 40_000), "{rows:?}");
}

/// On each seed of `seeds` of an eat-rate of `n` rows (`varieties` animals and foods,
/// `noise_fields`), the row at which `A x B` joined; no other cross may join.
fn rows_the_planted_cross_joins_at(
    n: usize,
    varieties: u32,
    noise_fields: usize,
    seeds: std::ops::Range<u64>,
) -> Vec<u64> {
    let joined = |seed| {
        let data = eat_rate(n, varieties, noise_fields, 0.0, seed);
        let learner = fit(&data, FieldAppleConfig::default());
        let crosses = learner.expansion().crosses();
        assert_eq!(
            crosses.iter().map(|c| c.fields.clone()).collect::<Vec<_>>(),
            [vec![0, 1]],
            "seed {seed}"
        );
        crosses[0].added_at
    };
    seeds.map(joined).collect()
}

#[test]
fn a_cross_of_few_value_pairs_joins_at_the_first_check() {
    // 100 animals by 100 foods: the pairs come back within the first few thousand screened
    // examples and the cells' z-score is far above `z` by the first check (10k rows, some 2,500
    // samples at this budget). With a flat floor of 5,000 samples the cross waited for the
    // second check on every seed.
    assert_eq!(rows_the_planted_cross_joins_at(30_000, 100, 4, 20..24), [10_000; 4]);
}

#[test]
fn finds_nothing_where_there_is_nothing() {
    let mut data = eat_rate(60_000, 100, 6, 0.0, 2);
    // Labels independent of every field.
    let mut state = 7u64;
    for label in &mut data.labels {
        state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        *label = if (state >> 40) % 2 == 0 { 1.0 } else { -1.0 };
    }
    let learner = fit(&data, FieldAppleConfig::default());
    assert!(learner.expansion().crosses().is_empty(), "{:?}", learner.expansion().crosses());
}

#[test]
fn training_is_deterministic_and_the_section_round_trips() {
    let data = eat_rate(40_000, 50, 4, 0.1, 3);
    let settings = FieldAppleConfig { check_every: 5_000, ..FieldAppleConfig::default() };
    let first = fit(&data, settings.clone());
    let second = fit(&data, settings);
    assert_eq!(first.expansion(), second.expansion());
    assert!(!first.expansion().crosses().is_empty());

    let mut w = ByteWriter::new();
    first.expansion().write_section(&mut w);
    let bytes = w.into_bytes();
    let read =
        FieldApple::read_section(&mut ByteReader::new(&bytes, 0, "features"), versions::CURRENT)
            .unwrap();
    assert_eq!(&read, first.expansion());
    // The layout of format 9 (positional options, crosses of two fields) reads as the same
    // model, screening pairs only as it did.
    let mut w = ByteWriter::new();
    first.expansion().write_section_v9(&mut w);
    let older = w.into_bytes();
    let read = FieldApple::read_section(&mut ByteReader::new(&older, 0, "features"), 9).unwrap();
    assert_eq!(
        read.config(),
        &FieldAppleConfig { max_fields: 2, ..first.expansion().config().clone() }
    );
    assert_eq!(read.crosses(), first.expansion().crosses());
    // A truncated section is refused, never misread.
    for cut in [0, 5, bytes.len() - 1] {
        assert!(FieldApple::read_section(
            &mut ByteReader::new(&bytes[..cut], 0, "features"),
            versions::FIELD_CATCH_UP
        )
        .is_err());
    }
    // A section of format 5 has no catch_up (8 bytes after the 37 of the options before it):
    // such a model reads as one that does not catch up.
    let old = [&older[..37], &older[45..]].concat();
    let read = FieldApple::read_section(&mut ByteReader::new(&old, 0, "features"), 5).unwrap();
    assert_eq!(read.config().catch_up, 0);
    assert_eq!(read.crosses(), first.expansion().crosses());
}

#[test]
fn max_crosses_caps_what_is_added() {
    // With a threshold this low, noise crosses join too, until the cap.
    let data = eat_rate(60_000, 50, 4, 0.0, 4);
    let lax = FieldAppleConfig { z: 0.01, check_every: 2_000, ..FieldAppleConfig::default() };
    let uncapped = fit(&data, FieldAppleConfig { max_crosses: 100, ..lax.clone() });
    assert!(uncapped.expansion().crosses().len() > 2, "{:?}", uncapped.expansion().crosses());
    let capped = fit(&data, FieldAppleConfig { max_crosses: 2, ..lax });
    assert_eq!(capped.expansion().crosses().len(), 2);
}

#[test]
fn options_are_checked() {
    let good = FieldAppleConfig::default();
    for bad in [
        FieldAppleConfig { budget: 0.0, ..good.clone() },
        FieldAppleConfig { budget: f64::NAN, ..good.clone() },
        FieldAppleConfig { check_every: 0, ..good.clone() },
        FieldAppleConfig { z: -1.0, ..good.clone() },
        FieldAppleConfig { shadow_bits: 31, ..good.clone() },
    ] {
        assert!(FieldApple::new(bad).is_err());
    }
    let crosses = vec![Cross { fields: vec![1, 0], added_at: 0 }];
    assert!(FieldApple::from_parts(good.clone(), crosses, 0).is_err());
    let twice = vec![Cross { fields: vec![0, 1], added_at: 0 }; 2];
    assert!(FieldApple::from_parts(good, twice, 0).is_err());
}

/// Learns small eat-rate rows (one one-hot namespace per field) with `expansion` twice: as one
/// batch (whose one-hot blocks the learner expands at once when the enumerator has a block form,
/// a row ahead of its turn) and one row at a time; returns both learners.
pub(crate) fn batch_and_rows<E: Expansion>(expansion: impl Fn() -> E) -> (Learner<E>, Learner<E>) {
    batch_and_rows_of(&eat_rate(60_000, 100, 4, 0.0, 3), expansion)
}

/// [`batch_and_rows`] on `data`.
pub(crate) fn batch_and_rows_of<E: Expansion>(
    data: &Fields,
    expansion: impl Fn() -> E,
) -> (Learner<E>, Learner<E>) {
    // config's bits 22 (a 64 MiB table) is large enough for the learner to look ahead.
    let rows = sparse_rows(data);
    let namespaces: Vec<&dyn NamespaceRows> =
        rows.iter().map(|r| r as &dyn NamespaceRows).collect();
    let new = || Learner::new(config(data.columns.len()), expansion()).unwrap();
    let mut batched = new();
    batched.learn_batch(&Batch::new(&namespaces, &data.labels, None).unwrap()).unwrap();
    let mut single = new();
    let seeds: Vec<u64> =
        (0..data.columns.len()).map(|k| config(data.columns.len()).namespace_seed(k)).collect();
    let mut buffer = crate::learner::ExampleBuffer::new();
    for (row, &label) in data.labels.iter().enumerate() {
        buffer.clear();
        for (ns, &seed) in namespaces.iter().zip(&seeds) {
            ns.push_into(row, seed, &mut buffer).unwrap();
        }
        single.learn(&buffer.finish(label, 1.0, row).unwrap(), row).unwrap();
    }
    (batched, single)
}

/// The learner expands each example one ahead of its turn; a cross that joins in between must
/// reach the next example: batch learning equals learning the rows one at a time.
#[test]
fn batch_learning_equals_one_row_at_a_time_while_crosses_join() {
    let (batched, single) =
        batch_and_rows(|| FieldApple::new(FieldAppleConfig::default()).unwrap());
    assert!(!batched.expansion().crosses().is_empty(), "a cross joins during the batch");
    assert_eq!(batched.expansion().crosses(), single.expansion().crosses());
    // The examples the batch did not read (see Expansion::reads_example) were screened alike.
    assert_eq!(batched.expansion().candidate_scores(), single.expansion().candidate_scores());
    assert_eq!(batched.weights().data(), single.weights().data());
}

/// Mean logistic loss of `learner` on `data` (labels ±1).
fn test_logloss(learner: &Learner<FieldApple>, data: &Fields) -> f64 {
    let rows = sparse_rows(data);
    let namespaces: Vec<&dyn NamespaceRows> =
        rows.iter().map(|r| r as &dyn NamespaceRows).collect();
    let batch = Batch::new(&namespaces, &data.labels, None).unwrap();
    let mut margins = Vec::new();
    learner.predict_batch(&batch, &mut margins).unwrap();
    let total: f64 = margins.iter().zip(&data.labels).map(|(m, y)| (-y * m).exp().ln_1p()).sum();
    total / data.labels.len() as f64
}

/// A cross that joins takes the steps it missed on the kept examples: found at the same row as
/// without catching up, it predicts fresh rows better (on this small eat-rate the cross joins
/// after a sizeable share of the rows, whose value pairs it would otherwise never learn).
#[test]
fn a_joining_cross_catches_up_on_the_examples_before_it() {
    let data = eat_rate(60_000, 200, 6, 0.05, 8);
    let fresh = eat_rate(20_000, 200, 6, 0.05, 9);
    let caught_up = fit(&data, FieldAppleConfig::default());
    let plain = fit(&data, FieldAppleConfig { catch_up: 0, ..FieldAppleConfig::default() });
    let crosses = caught_up.expansion().crosses();
    assert_eq!(crosses, plain.expansion().crosses());
    assert_eq!(crosses.first().map(|c| c.fields.clone()), Some(vec![0, 1]), "{crosses:?}");
    let (with, without) = (test_logloss(&caught_up, &fresh), test_logloss(&plain, &fresh));
    assert!(with < without - 0.005, "caught up {with}, not {without}, cross {crosses:?}");
}

/// After a cross joins the budget stays whole for as many quiet checks as the cross took to be
/// found (at least MIN_PATIENCE), then shrinks by QUIET_DECAY per check down to QUIET_FLOOR; a
/// cross joining restores it.
#[test]
fn the_budget_shrinks_after_as_many_quiet_checks_as_the_last_cross_took() {
    let quiet = || vec![judged((1, 2), 10, 0.0)];
    for (added_at, patience) in [(150_000, 15), (20_000, MIN_PATIENCE)] {
        let config = FieldAppleConfig { check_every: 10_000, ..FieldAppleConfig::default() };
        let crosses = vec![Cross { fields: vec![0, 1], added_at }];
        let mut model = FieldApple::from_parts(config, crosses, added_at).unwrap();
        assert_eq!(model.patience(), patience);
        for check in 1..=patience {
            model.candidates = quiet();
            model.judge();
            assert_eq!(model.budget_share, 1.0, "check {check}");
        }
        model.candidates = quiet();
        model.judge();
        assert_eq!(model.budget_share, QUIET_DECAY);
        for _ in 0..200 {
            model.candidates = quiet();
            model.judge();
        }
        assert_eq!(model.budget_share, QUIET_FLOOR);
        model.candidates = vec![judged((0, 2), SAMPLES_TO_DECIDE as usize, 1.0)];
        model.judge();
        assert_eq!((model.crosses().len(), model.budget_share), (2, 1.0));
    }
    let fresh = FieldApple::new(FieldAppleConfig::default()).unwrap();
    assert_eq!(fresh.patience(), PATIENT_CHECKS);
}

/// Recent examples are kept for a catch-up while a join is in sight: during the first
/// PATIENT_CHECKS checks, then (and after a cross joins) only from a check that sees a candidate
/// with half the z-score to join to one that sees none.
#[test]
fn recent_examples_are_kept_while_a_join_is_in_sight() {
    let config = FieldAppleConfig::default();
    let kept = |m: &FieldApple| m.recent_examples_wanted();
    let nothing_near = || vec![judged((0, 1), 6_000, 0.0), judged((1, 2), 6_000, 0.01)];
    // Nothing near, no cross yet: kept through the first PATIENT_CHECKS checks, then not.
    let mut quiet = FieldApple::new(config.clone()).unwrap();
    for check in 1..PATIENT_CHECKS {
        quiet.candidates = nothing_near();
        quiet.judge();
        assert_eq!(kept(&quiet), config.catch_up, "check {check}");
    }
    quiet.candidates = nothing_near();
    quiet.judge();
    assert_eq!(kept(&quiet), 0);

    let mut model = FieldApple::new(config.clone()).unwrap();
    assert_eq!(kept(&model), config.catch_up);
    model.candidates = nothing_near();
    model.judge();
    assert_eq!(kept(&model), config.catch_up);
    model.candidates = vec![judged((0, 2), SAMPLES_TO_DECIDE as usize, 1.0)];
    model.judge();
    assert_eq!(model.crosses().len(), 1);
    assert_eq!(kept(&model), 0, "the next cross is out of sight");
    // z of about 3 (mean 0.04 over a spread of 1, 6,000 samples): half of z = 5 is reached.
    let near = judged((1, 2), 6_000, 0.04);
    assert!(near.z_score() >= config.z * IN_SIGHT && near.z_score() < config.z);
    model.candidates = vec![near, judged((0, 1), 6_000, 0.01)];
    model.judge();
    assert_eq!(kept(&model), config.catch_up);
    model.candidates = vec![judged((0, 1), 6_000, 0.01)];
    model.judge();
    assert_eq!(kept(&model), 0);
    // No longer screening (max_crosses reached): nothing kept.
    let full = FieldApple::from_parts(
        FieldAppleConfig { max_crosses: 1, ..config },
        vec![Cross { fields: vec![0, 1], added_at: 0 }],
        0,
    )
    .unwrap();
    assert_eq!(kept(&full), 0);
}

/// Fields 0, 1 and 2 of 10 values, 4 noise fields of 1000: the label's log-odds are `pair` times
/// a random sign per value pair of fields 0 and 1, plus `triple` times a random sign per value
/// triple of fields 0, 1 and 2.
fn triple_effects(n: usize, pair: f64, triple: f64, seed: u64) -> Fields {
    let mut data = eat_rate(n, 10, 5, 0.0, seed);
    let mut state = seed ^ 0x5EED;
    let sign = |key: u32| if crate::hashing::fmix32(key) % 2 == 0 { 1.0 } else { -1.0 };
    for (row, label) in data.labels.iter_mut().enumerate() {
        let (a, b) = (data.columns[0].1[row], data.columns[1].1[row]);
        let c = data.columns[2].1[row] % 10;
        data.columns[2].1[row] = c;
        let margin = pair * sign(a * 31 + b) + triple * sign(0x10000 + (a * 31 + b) * 37 + c);
        let p = 1.0 / (1.0 + (-margin).exp());
        state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        *label = if ((state >> 11) as f64 / (1u64 << 53) as f64) < p { 1.0 } else { -1.0 };
    }
    data
}

#[test]
fn a_cross_that_joined_is_crossed_with_a_third_field() {
    let data = triple_effects(200_000, 1.0, 1.5, 8);
    let learner = fit(&data, FieldAppleConfig::default());
    let fields: Vec<_> = learner.expansion().crosses().iter().map(|c| c.fields.clone()).collect();
    let crosses = learner.expansion().crosses();
    assert_eq!(fields[..2], [vec![0, 1], vec![0, 1, 2]], "{crosses:?}");
    // Later, only the triple's own pairs (which carry a little of it); no noise field.
    assert!(fields.iter().flatten().all(|&f| f <= 2), "{crosses:?}");
    // Within a bounded number of rows of the pair.
    assert!(crosses[1].added_at - crosses[0].added_at <= 60_000, "{crosses:?}");
    // Pairs only: the triple is never screened.
    let pairs = fit(&data, FieldAppleConfig { max_fields: 2, ..FieldAppleConfig::default() });
    assert!(pairs.expansion().crosses().iter().all(|c| c.fields.len() == 2));
    // Without the triple's effect, no cross of three fields joins.
    let data = triple_effects(200_000, 1.0, 0.0, 8);
    let learner = fit(&data, FieldAppleConfig::default());
    let crosses = learner.expansion().crosses();
    assert!(crosses.iter().all(|c| c.fields.len() == 2), "{crosses:?}");
}

#[test]
fn a_cross_of_three_fields_round_trips_and_a_malformed_one_is_refused() {
    let crosses = vec![
        Cross { fields: vec![0, 2], added_at: 10 },
        Cross { fields: vec![0, 1, 2], added_at: 20 },
    ];
    let model = FieldApple::from_parts(FieldAppleConfig::default(), crosses.clone(), 30).unwrap();
    let mut w = ByteWriter::new();
    model.write_section(&mut w);
    let bytes = w.into_bytes();
    let read =
        FieldApple::read_section(&mut ByteReader::new(&bytes, 0, "features"), versions::CURRENT);
    assert_eq!(read.unwrap().crosses(), &crosses[..]);
    for bad in [vec![2, 1, 3], vec![1, 1, 2], vec![4], vec![0, 1, 2, 3]] {
        let crosses = vec![Cross { fields: bad.clone(), added_at: 0 }];
        let error = FieldApple::from_parts(FieldAppleConfig::default(), crosses, 0).unwrap_err();
        assert!(
            error.to_string().contains("is not a new cross of 2..=3 fields"),
            "{bad:?}: {error}"
        );
    }
    // The cross's features are the fixed interaction of its three fields.
    assert_eq!(model.linear_form(true).namespace_crosses, [vec![0, 2], vec![0, 1, 2]]);
}

/// Fields 0, 1 and 2 of 10 values, 5 noise fields of 1000: the label's log-odds are `effect`
/// times the product of the three values' parities as signs (each value uniform, so each sign
/// has mean 0: no field and no pair of the three carries anything of it, as click3's planted
/// triple).
fn pure_triple(n: usize, effect: f64, seed: u64) -> Fields {
    let mut data = eat_rate(n, 10, 6, 0.0, seed);
    let mut state = seed ^ 0x7121;
    let sign = |v: u32| if v % 2 == 0 { 1.0 } else { -1.0 };
    for (row, label) in data.labels.iter_mut().enumerate() {
        let c = data.columns[2].1[row] % 10;
        data.columns[2].1[row] = c;
        let (a, b) = (data.columns[0].1[row], data.columns[1].1[row]);
        let p = 1.0 / (1.0 + (-effect * sign(a) * sign(b) * sign(c)).exp());
        state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        *label = if ((state >> 11) as f64 / (1u64 << 53) as f64) < p { 1.0 } else { -1.0 };
    }
    data
}

#[test]
fn a_cross_of_three_fields_no_pair_of_which_says_anything_is_found_by_its_probe() {
    let data = pure_triple(300_000, 1.0, 9);
    let learner = fit(&data, FieldAppleConfig::default());
    let crosses = learner.expansion().crosses();
    let fields: Vec<_> = crosses.iter().map(|c| c.fields.clone()).collect();
    assert_eq!(fields.first(), Some(&vec![0, 1, 2]), "{crosses:?}");
    assert!(crosses[0].added_at <= 60_000, "{crosses:?}");
    assert!(fields.iter().flatten().all(|&f| f <= 2), "a noise field joined: {crosses:?}");
    // Pairs only: no probe.
    let pairs = fit(&data, FieldAppleConfig { max_fields: 2, ..FieldAppleConfig::default() });
    assert!(pairs.expansion().crosses().iter().all(|c| c.fields.len() == 2));
    // Without the triple's effect, nothing joins.
    let data = pure_triple(300_000, 0.0, 9);
    let learner = fit(&data, FieldAppleConfig::default());
    assert!(learner.expansion().crosses().is_empty(), "{:?}", learner.expansion().crosses());
}
