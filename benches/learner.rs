//! Criterion bench of the learner's per-example loop (expand + predict + sensitivity + update,
//! Vowpal Wabbit's default rule, logistic loss, b = 18): linear and quadratic, nnz per row in
//! {10, 30, 100}, one thread. Throughput is in examples.
//! Run: `cargo bench --bench learner`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use polars_poly::learner::loss::Logistic;
use polars_poly::learner::{Batch, Interactions, Learner, LearnerConfig, Loss, NamespaceRows};
use polars_poly::sparse::SparseRows;

/// Rows of `nnz` distinct sorted indices below 100_000 and ±1 labels, from a fixed LCG.
fn synthetic(n_rows: usize, nnz: usize) -> (Vec<i64>, Vec<u32>, Vec<f32>, Vec<f64>) {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        state =
            state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        state >> 33
    };
    let (mut offsets, mut indices, mut values, mut labels) =
        (vec![0i64], Vec::new(), Vec::new(), Vec::new());
    let stride = 100_000 / nnz as u64;
    for _ in 0..n_rows {
        let mut score = 0.0;
        for k in 0..nnz as u64 {
            let index = k * stride + next() % stride;
            let value = (next() % 1000) as f32 / 1000.0 + 0.001;
            score += if index % 3 == 0 { value } else { -0.4 * value };
            indices.push(index as u32);
            values.push(value);
        }
        offsets.push(indices.len() as i64);
        labels.push(if score > 0.0 { 1.0 } else { -1.0 });
    }
    (offsets, indices, values, labels)
}

fn bench_learn(c: &mut Criterion) {
    let mut group = c.benchmark_group("learn");
    for (name, expansion) in
        [("linear", Interactions::linear()), ("quadratic", Interactions::quadratic())]
    {
        for nnz in [10usize, 30, 100] {
            let n_rows = if name == "quadratic" && nnz == 100 { 500 } else { 5_000 };
            let (offsets, indices, values, labels) = synthetic(n_rows, nnz);
            let rows = SparseRows::new(&offsets, &indices, &values).expect("valid rows");
            let namespaces: [&dyn NamespaceRows; 1] = [&rows];
            let batch = Batch::new(&namespaces, &labels, None).expect("valid batch");
            let config =
                LearnerConfig { loss: Loss::Logistic(Logistic), ..LearnerConfig::default() };
            let mut learner = Learner::new(config, expansion.clone()).expect("valid config");
            group.throughput(Throughput::Elements(n_rows as u64));
            group.bench_with_input(BenchmarkId::new(name, nnz), &nnz, |b, _| {
                b.iter(|| learner.learn_batch(&batch).expect("learns"))
            });
        }
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).measurement_time(std::time::Duration::from_secs(2));
    targets = bench_learn
}
criterion_main!(benches);
