//! A stop request (Ctrl-C, see `polars_poly::interrupt`) stops every long loop with
//! `PolyError::Interrupted`, and a cleared request lets them run again. One test in a process of
//! its own: a request reaches every loop of the process, so it must not run beside other tests.

use polars_poly::error::PolyError;
use polars_poly::interrupt;
use polars_poly::learner::{Batch, Interactions, Learner, LearnerConfig, NamespaceRows};
use polars_poly::polynomial::{expand, expand_hashed};
use polars_poly::readers::{libsvm, vw};
use polars_poly::sparse::{SparseMatrix, SparseRows};

#[test]
fn a_stop_request_stops_training_scoring_expansion_and_reading() {
    let n = 10_000;
    let offsets: Vec<i64> = (0..=n as i64).map(|r| 2 * r).collect();
    let indices: Vec<u32> = (0..n).flat_map(|r| [r as u32 % 7, 7 + r as u32 % 5]).collect();
    let values = vec![1.0f64; 2 * n];
    let labels: Vec<f64> = (0..n).map(|r| (r % 3) as f64).collect();
    let rows = SparseRows::new(&offsets, &indices, &values).unwrap();
    let namespaces: [&dyn NamespaceRows; 1] = [&rows];
    let batch = Batch::new(&namespaces, &labels, None).unwrap();
    let spec = polars_poly::polynomial::ExpansionSpec {
        min_degree: 0,
        max_degree: 2,
        interaction_only: false,
        include_bias: true,
    };
    let dir = std::env::temp_dir().join(format!("pp-interrupt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (svm, vw_file) = (dir.join("a.svm"), dir.join("a.vw"));
    std::fs::write(&svm, "1 1:2 3:4\n-1 2:1\n".repeat(1000)).unwrap();
    std::fs::write(&vw_file, "1 |a x y:2\n-1 |b z\n".repeat(1000)).unwrap();

    let mut learner = Learner::new(LearnerConfig::default(), Interactions::quadratic()).unwrap();
    let mut scores = Vec::new();
    interrupt::request();
    assert_eq!(learner.learn_batch(&batch), Err(PolyError::Interrupted));
    assert_eq!(learner.progress().examples, 0, "nothing learned after the request");
    assert_eq!(learner.predict_batch(&batch, &mut scores), Err(PolyError::Interrupted));
    for parallel in [false, true] {
        assert_eq!(expand(&rows, 12, &spec, parallel).unwrap_err(), PolyError::Interrupted);
        assert_eq!(
            expand_hashed(&rows, &spec, 18, 0, parallel).unwrap_err(),
            PolyError::Interrupted
        );
    }
    assert_eq!(libsvm::read_all(&svm, Default::default()).unwrap_err(), PolyError::Interrupted);
    assert_eq!(vw::read_all(&vw_file, Default::default()).unwrap_err(), PolyError::Interrupted);
    // The readers' assembly of the pieces they parsed (a 10M-line file's takes a second).
    let mut part = SparseMatrix::<u32, f32>::with_capacity(1, 1);
    part.push(3, 1.0);
    part.end_row();
    let parts = [part.clone(), part];
    assert_eq!(SparseMatrix::concat(&parts).unwrap_err(), PolyError::Interrupted);

    interrupt::clear();
    assert_eq!(SparseMatrix::concat(&parts).unwrap().n_rows(), 2);
    learner.learn_batch(&batch).unwrap();
    assert_eq!(learner.progress().examples, n as u64);
    learner.predict_batch(&batch, &mut scores).unwrap();
    assert_eq!(scores.len(), n);
    assert!(expand(&rows, 12, &spec, true).is_ok());
    assert_eq!(libsvm::read_all(&svm, Default::default()).unwrap().0.labels.len(), 2000);
    assert_eq!(vw::read_all(&vw_file, Default::default()).unwrap().n_rows(), 2000);
    std::fs::remove_dir_all(&dir).unwrap();
}
