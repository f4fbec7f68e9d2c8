use std::path::Path;

use super::report::{Progress, VwReport};
use super::*;
use crate::learner::{Interactions, LearnerConfig, Loss, LossParams};
use crate::readers::vw::OtherNamespaces;

/// A learner of the namespaces `names` with `-q ab`, logistic loss, `bits` 18.
fn learner(names: &[&str]) -> Learner<Interactions> {
    let config = LearnerConfig {
        loss: Loss::new("logistic", &LossParams::default()).unwrap(),
        namespaces: names.iter().map(|name| name.to_string()).collect(),
        ..LearnerConfig::default()
    };
    let crosses = Interactions { namespace_crosses: vec![vec![0, 1]], ..Interactions::linear() };
    Learner::new(config, crosses).unwrap()
}

fn write_file(folder: &Path, rows: usize) -> PathBuf {
    let mut text = String::new();
    for k in 0..rows {
        let label = if (k * 7) % 3 == 0 { 1 } else { -1 };
        let weight = if k % 5 == 0 { " 2" } else { "" };
        text.push_str(&format!("{label}{weight} 'r{k}|a x{} y:0.5 |b z{}\n", k % 11, k % 13));
        if k % 17 == 0 {
            text.push('\n');
        }
    }
    let path = folder.join("data.vw");
    std::fs::write(&path, text).unwrap();
    path
}

fn options(passes: usize, holdout_period: u64, batch_rows: usize) -> RunOptions {
    RunOptions {
        passes,
        holdout_period,
        early_terminate: 3,
        test_only: false,
        classes: None,
        batch_rows,
        scorer: Scorer::default(),
        write_cache: None,
        overflow: OverflowPolicy::PredictZero,
    }
}

fn report(holdout: bool) -> VwReport {
    VwReport::new(
        Loss::new("logistic", &LossParams::default()).unwrap(),
        holdout,
        Progress::default(),
        true,
        true,
    )
}

/// (predictions text, table lines, summary, weights) of a run.
fn run_of(
    source: &Source,
    run_options: &RunOptions,
    names: &[&str],
) -> (String, Vec<String>, Vec<String>, Vec<f32>) {
    let mut model = learner(names);
    let mut printed = Vec::new();
    let mut predictions = Vec::new();
    let mut report = report(run_options.holdout_period > 0);
    run(&mut model, source, run_options, &mut report, Some(&mut predictions), None, &mut |lines| {
        printed.extend_from_slice(lines);
        Ok(())
    })
    .unwrap();
    let weights = (0..1u32 << 18).map(|slot| model.effective_weight(slot) as f32).collect();
    (String::from_utf8(predictions).unwrap(), printed, report.summary(), weights)
}

#[test]
fn a_run_learns_every_row_in_order_whatever_the_batch_size() {
    let folder = tempfile::tempdir().unwrap();
    let path = write_file(folder.path(), 300);
    let source = Source::Text { path, options: VwOptions::default() };
    let (p1, t1, s1, w1) = run_of(&source, &options(1, 0, 1), &["a", "b"]);
    let (p2, t2, s2, w2) = run_of(&source, &options(1, 0, 64), &["a", "b"]);
    assert_eq!((&p1, &t1, &s1), (&p2, &t2, &s2));
    assert_eq!(w1, w2);
    // One prediction per example, each with its tag; table rows at 1, 2, 4, ... of weight.
    assert_eq!(p1.lines().count(), 300);
    assert!(p1.lines().all(|line| line.split(' ').nth(1).is_some_and(|t| t.starts_with('r'))));
    assert!(t1.len() >= 2 + 8, "{t1:?}");
    assert!(s1.contains(&"number of examples = 300".to_owned()), "{s1:?}");
}

#[test]
fn the_cache_gives_the_same_run_as_the_text_and_later_passes_read_it() {
    let folder = tempfile::tempdir().unwrap();
    let path = write_file(folder.path(), 500);
    let cache = folder.path().join("data.vw.cache");
    let text = Source::Text { path, options: VwOptions::default() };
    let scan = VwScan {
        namespaces: vec!["a".into(), "b".into()],
        labels: vec![1.0, -1.0],
        more_labels: false,
    };
    let writing = RunOptions { write_cache: Some((cache.clone(), scan)), ..options(1, 0, 100) };
    let from_text = run_of(&text, &writing, &["a", "b"]);
    assert!(cache.exists());
    let cached = Source::Cache { path: cache.clone(), options: VwOptions::default() };
    assert_eq!(run_of(&cached, &options(1, 0, 100), &["a", "b"]), from_text);
    // Three passes from text writing the cache equal three passes from the cache.
    std::fs::remove_file(&cache).unwrap();
    let writing = RunOptions { passes: 3, holdout_period: 10, ..writing };
    let three = run_of(&text, &writing, &["a", "b"]);
    assert_eq!(run_of(&cached, &options(3, 10, 100), &["a", "b"]), three);
    assert!(three.2.iter().any(|line| line.starts_with("average loss") && line.ends_with(" h")));
    // Other reader options: the cache is refused by name.
    let other = Source::Cache {
        path: cache.clone(),
        options: VwOptions { ignore: vec!["b".into()], ..VwOptions::default() },
    };
    let mut model = learner(&["a", "b"]);
    let error =
        run(&mut model, &other, &options(1, 0, 100), &mut report(false), None, None, &mut |_| {
            Ok(())
        })
        .unwrap_err()
        .to_string();
    assert!(error.contains("data.vw.cache") && error.contains("-k"), "{error}");
}

#[test]
fn a_namespace_the_learner_lacks_is_dropped_and_one_the_cache_lacks_is_empty() {
    let folder = tempfile::tempdir().unwrap();
    let path = write_file(folder.path(), 200);
    let cache = folder.path().join("c");
    let scan = VwScan { namespaces: vec!["a".into(), "b".into()], ..VwScan::default() };
    let text = Source::Text {
        path,
        options: VwOptions { other_namespaces: OtherNamespaces::Drop, ..VwOptions::default() },
    };
    let writing = RunOptions { write_cache: Some((cache.clone(), scan)), ..options(1, 0, 50) };
    // The learner of namespaces a and z: b is dropped from the text, z is empty.
    let from_text = run_of(&text, &writing, &["a", "z"]);
    let cached = Source::Cache { path: cache, options: VwOptions::default() };
    assert_eq!(run_of(&cached, &options(1, 0, 50), &["a", "z"]), from_text);
}

#[test]
fn labels_as_classes_and_their_errors() {
    assert_eq!(engine_label(Some(2.0), Some((1.0, 2.0)), 0).unwrap(), 1.0);
    assert_eq!(engine_label(Some(1.0), Some((1.0, 2.0)), 0).unwrap(), -1.0);
    assert_eq!(engine_label(None, Some((1.0, 2.0)), 0).unwrap(), -1.0);
    assert_eq!(engine_label(Some(0.25), None, 0).unwrap(), 0.25);
    let error = engine_label(Some(3.0), Some((1.0, 2.0)), 41).unwrap_err().to_string();
    assert!(error.contains("row 41") && error.contains("label 3"), "{error}");
}

#[test]
fn predictions_as_vowpal_wabbit_writes_them() {
    let mut text = String::new();
    push_prediction(&mut text, 1.0, Some("t"));
    push_prediction(&mut text, -0.123_456_789, None);
    push_prediction(&mut text, 0.1, Some(""));
    assert_eq!(text, "1 t\n-0.123457\n0.100000\n");
}

#[test]
fn a_nonzero_base_is_an_error_naming_its_line() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("based.vw");
    std::fs::write(&path, "1 |a x\n-1 1 0.5 |a y\n").unwrap();
    let source = Source::Text { path, options: VwOptions::default() };
    let mut model = learner(&["a", "b"]);
    let error =
        run(&mut model, &source, &options(1, 0, 10), &mut report(false), None, None, &mut |_| {
            Ok(())
        })
        .unwrap_err()
        .to_string();
    assert!(error.contains("line 2") && error.contains("base (initial prediction) 0.5"), "{error}");
}
