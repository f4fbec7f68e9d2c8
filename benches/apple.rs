//! Criterion bench of apple's per-generated-feature speed against the fixed quadratic expansion
//! on the same rows: (1) enumeration alone (features generated per second), (2) the whole
//! learning step (expand + predict + update, Vowpal Wabbit's default rule, squared loss,
//! b = 24). apple is first trained over a 6-epoch run so that it has its full parent set
//! (5 expansions of s = floor(s̄) parents); the measured passes then keep that set fixed.
//! Throughput is in generated features. Cases: synthetic sparse and dense rows, and a9a from
//! `../shared/data` when present (real one-hot rows). Run: `cargo bench --bench apple`.

use std::path::Path;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use polars_poly::apple::{Apple, AppleConfig};
use polars_poly::learner::{
    Batch, ExampleBuffer, ExpandedFeatures, Expansion, FitOptions, Interactions, Learner,
    LearnerConfig, NamespaceRows,
};
use polars_poly::readers::libsvm::{read_all, LibsvmOptions};
use polars_poly::sparse::SparseRows;

/// Rows of `nnz` distinct indices below `width`, values in (0, 1], labels from a random sparse
/// degree-2 polynomial (so apple has products worth expanding).
fn synthetic(n_rows: usize, nnz: usize, width: u64) -> (Vec<i64>, Vec<u32>, Vec<f32>, Vec<f64>) {
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = || {
        state =
            state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        state >> 33
    };
    let (mut offsets, mut indices, mut values, mut labels) =
        (vec![0i64], Vec::new(), Vec::new(), Vec::new());
    let stride = width / nnz as u64;
    for _ in 0..n_rows {
        let start = indices.len();
        for k in 0..nnz as u64 {
            indices.push((k * stride + next() % stride) as u32);
            values.push((next() % 1000) as f32 / 1000.0 + 0.001);
        }
        let row = &indices[start..];
        let vals = &values[start..];
        let mut y = 0.0f64;
        for a in 0..nnz {
            y += if row[a] % 5 == 0 { f64::from(vals[a]) } else { 0.0 };
            for b in a..nnz.min(a + 4) {
                if (row[a] ^ row[b]) % 7 == 0 {
                    y += f64::from(vals[a] * vals[b]);
                }
            }
        }
        labels.push(y);
        offsets.push(indices.len() as i64);
    }
    (offsets, indices, values, labels)
}

/// CSR offsets, indices, values and labels of a data set.
type Rows = (Vec<i64>, Vec<u32>, Vec<f32>, Vec<f64>);

/// a9a's training file (32,561 one-hot rows of ~14 nonzeros) from the shared data, if present:
/// real rows, where the parents' positions in an example are not those of synthetic ones.
fn a9a() -> Option<Rows> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/a9a/a9a.gz");
    if !path.exists() {
        eprintln!("{} not found: the a9a case is skipped", path.display());
        return None;
    }
    let (batch, _) = read_all(&path, LibsvmOptions::default()).expect("a9a reads");
    let values = batch.values.iter().map(|&v| v as f32).collect();
    Some((batch.offsets, batch.indices, values, batch.labels))
}

/// Features the expansion generates over the rows (the throughput unit).
fn generated<E: Expansion>(expansion: &E, rows: &SparseRows<'_, u32, f32>, seed: u64) -> u64 {
    let mut buffer = ExampleBuffer::new();
    let mut out = ExpandedFeatures::new(24);
    let mut total = 0;
    for row in 0..rows.n_rows() {
        buffer.clear();
        buffer.push_row(seed, rows, row).expect("valid row");
        let example = buffer.finish(0.0, 1.0, row).expect("valid example");
        out.clear();
        expansion.expand(&example, &mut out);
        total += out.len() as u64;
    }
    total
}

fn bench_apple(c: &mut Criterion) {
    let bits = std::env::var("APPLE_BENCH_BITS").ok().and_then(|b| b.parse().ok()).unwrap_or(24);
    let config = LearnerConfig { bits, ..LearnerConfig::default() };
    let seed = config.namespace_seed(0);
    // Sparse rows (nnz of 1000 columns) and dense ones (every column present, like the small
    // UCI sets of the paper's testbed), then a real data set when the shared data is there.
    let mut cases: Vec<(String, Rows)> = [(10usize, 1000u64), (30, 1000), (12, 12), (40, 40)]
        .into_iter()
        .map(|(nnz, width)| {
            let name =
                if width == nnz as u64 { format!("dense{nnz}") } else { format!("nnz{nnz}") };
            (name, synthetic(20_000, nnz, width))
        })
        .collect();
    if let Some(rows) = a9a() {
        cases.push(("a9a".to_string(), rows));
    }
    for (name, (offsets, indices, values, labels)) in cases {
        let n_rows = labels.len();
        let rows = SparseRows::new(&offsets, &indices, &values).expect("valid rows");
        let namespaces: [&dyn NamespaceRows; 1] = [&rows];
        let batch = Batch::new(&namespaces, &labels, None).expect("valid batch");
        let mut apple = Learner::new(config.clone(), Apple::new(AppleConfig::default()).unwrap())
            .expect("valid config");
        let one_pass = FitOptions { passes: 1, ..FitOptions::default() };
        apple.fit(&batch, &one_pass).expect("trains");
        let mut quadratic = Learner::new(config.clone(), Interactions::quadratic()).unwrap();
        quadratic.fit(&batch, &one_pass).expect("trains");
        let n_apple = generated(apple.expansion(), &rows, seed);
        let n_quad = generated(quadratic.expansion(), &rows, seed);
        eprintln!(
            "{name}: apple has {} parents, {:.1} features/example (quadratic {:.1})",
            apple.expansion().parents().len(),
            n_apple as f64 / n_rows as f64,
            n_quad as f64 / n_rows as f64
        );

        let mut group = c.benchmark_group(format!("apple_vs_quadratic_{name}"));
        let mut buffer = ExampleBuffer::new();
        let mut out = ExpandedFeatures::new(24);
        let mut enumerate =
            |expansion: &dyn Fn(&polars_poly::learner::Example<'_>, &mut ExpandedFeatures)| {
                for row in 0..rows.n_rows() {
                    buffer.clear();
                    buffer.push_row(seed, &rows, row).expect("valid row");
                    let example = buffer.finish(0.0, 1.0, row).expect("valid example");
                    out.clear();
                    expansion(&example, &mut out);
                }
                out.len()
            };
        group.throughput(Throughput::Elements(n_apple));
        group.bench_function(BenchmarkId::new("enumerate", "apple"), |b| {
            b.iter(|| enumerate(&|e, o| apple.expansion().expand(e, o)))
        });
        group.throughput(Throughput::Elements(n_quad));
        group.bench_function(BenchmarkId::new("enumerate", "quadratic"), |b| {
            b.iter(|| enumerate(&|e, o| quadratic.expansion().expand(e, o)))
        });
        group.throughput(Throughput::Elements(n_apple));
        group.bench_function(BenchmarkId::new("learn", "apple"), |b| {
            b.iter(|| apple.learn_batch(&batch).expect("learns"))
        });
        group.throughput(Throughput::Elements(n_quad));
        group.bench_function(BenchmarkId::new("learn", "quadratic"), |b| {
            b.iter(|| quadratic.learn_batch(&batch).expect("learns"))
        });
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).measurement_time(std::time::Duration::from_secs(3));
    targets = bench_apple
}
criterion_main!(benches);
