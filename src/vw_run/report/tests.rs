use super::*;
use crate::learner::LossParams;

fn squared() -> Loss {
    Loss::new("squared", &LossParams::default()).unwrap()
}

fn row(label: Option<f64>, weight: f64, prediction: f64, holdout: bool) -> ReportedRow {
    let loss = label.map_or(0.0, |y| (prediction - y) * (prediction - y) * weight);
    ReportedRow {
        label,
        weight,
        record: RowRecord { prediction, weighted_loss: loss, features: 3, held_out: holdout },
        holdout,
    }
}

#[test]
fn rows_are_printed_at_doubling_weights_in_vowpal_wabbits_layout() {
    let mut report = VwReport::new(squared(), false, Progress::default(), true, true);
    let mut lines = Vec::new();
    for k in 0..10 {
        report.add(&row(Some(1.0), 1.0, 0.5 * f64::from(k % 2), false), &mut lines);
    }
    // Title, then rows at weights 1, 2, 4, 8.
    assert_eq!(lines.len(), 2 + 4, "{lines:?}");
    assert_eq!(
        lines[0],
        "average  since         example        example        current        current  current"
    );
    assert_eq!(
        lines[1],
        "loss     last          counter         weight          label        predict features"
    );
    assert_eq!(
        lines[2],
        "1.000000 1.000000            1            1.0         1.0000         0.0000        3"
    );
    assert_eq!(
        lines[3],
        "0.625000 0.250000            2            2.0         1.0000         0.5000        3"
    );
    let weights: Vec<f64> = report.rows().iter().map(|r| r.weight).collect();
    assert_eq!(weights, [1.0, 2.0, 4.0, 8.0]);
    let summary = report.summary().join("\n");
    assert!(summary.contains("number of examples = 10\n"), "{summary}");
    assert!(summary.contains("weighted label sum = 10.000000\n"), "{summary}");
    assert!(summary.contains("average loss = 0.625000\n"), "{summary}");
    assert!(summary.ends_with("total feature number = 30"), "{summary}");
}

#[test]
fn progress_adds_or_multiplies_as_its_text_says() {
    assert_eq!(Progress::parse("10").unwrap(), Progress::Every(10.0));
    assert_eq!(Progress::parse("0.5").unwrap(), Progress::Times(1.5));
    assert_eq!(Progress::parse("3.0").unwrap(), Progress::Times(3.0));
    assert!(Progress::parse("x").unwrap_err().to_string().contains("--progress"));
    let mut report = VwReport::new(squared(), false, Progress::Every(3.0), false, true);
    let mut lines = Vec::new();
    for _ in 0..10 {
        report.add(&row(Some(0.0), 1.0, 0.0, false), &mut lines);
    }
    assert!(lines.is_empty(), "not printing: {lines:?}");
    let counts: Vec<u64> = report.rows().iter().map(|r| r.examples).collect();
    assert_eq!(counts, [3, 6, 9]);
}

#[test]
fn held_out_rows_make_the_holdout_loss_and_the_best_pass() {
    let mut report = VwReport::new(squared(), true, Progress::default(), true, false);
    let mut lines = Vec::new();
    for pass in 0..3 {
        for k in 0..20u32 {
            let error = if pass == 1 { 0.1 } else { 0.5 };
            report.add(&row(Some(1.0), 1.0, 1.0 - error, k % 10 == 9), &mut lines);
        }
        let best = report.end_pass();
        assert_eq!(best, pass != 2, "pass {pass}");
    }
    let summary = report.summary().join("\n");
    assert!(summary.contains("number of examples per pass = 18\npasses used = 3"), "{summary}");
    assert!(summary.contains("average loss = 0.010000 h"), "{summary}");
    assert!(lines.iter().any(|line| line.ends_with(" h")), "{lines:?}");
}

#[test]
fn the_best_constant_is_vowpal_wabbits() {
    let mut report = VwReport::new(squared(), false, Progress::default(), false, false);
    let mut lines = Vec::new();
    for label in [1.0, 3.0, 3.0, 1.0, 3.0] {
        report.add(&row(Some(label), 1.0, 0.0, false), &mut lines);
    }
    let (constant, loss) = report.best_constant().unwrap();
    assert!((constant - 2.2).abs() < 1e-12);
    // Mean squared deviation of 1, 3, 3, 1, 3 around 2.2.
    assert!((loss.unwrap() - 0.96).abs() < 1e-12);
    let logistic = Loss::new("logistic", &LossParams::default()).unwrap();
    let mut report = VwReport::new(logistic, false, Progress::default(), false, false);
    for label in [1.0, -1.0, 1.0, 1.0] {
        report.add(&row(Some(label), 1.0, 0.0, false), &mut lines);
    }
    let (constant, _) = report.best_constant().unwrap();
    assert!((constant - 3f64.ln()).abs() < 1e-12);
}
