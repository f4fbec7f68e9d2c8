//! Criterion bench of the exact expansion kernel: degree 2 and 3, nnz per row in {10, 30, 100},
//! D in {1_000, 100_000}, one thread. Throughput is in output nonzeros.
//! `expand/...` is the whole call (it allocates and faults in fresh output pages each time);
//! `fill/...` writes the same output into buffers reused between iterations, so it times the
//! enumeration alone.
//! Run: `cargo bench --bench expand`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::mem::MaybeUninit;

use polars_poly::polynomial::{expand, output_width, ExpansionPlan, ExpansionSpec};
use polars_poly::sparse::SparseRows;

/// Rows of `nnz` distinct sorted indices below `d`, from a fixed LCG (no RNG dependency).
fn synthetic_rows(n_rows: usize, nnz: usize, d: u64) -> (Vec<i64>, Vec<u32>, Vec<f64>) {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        state =
            state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        state >> 33
    };
    let (mut offsets, mut indices, mut values) = (vec![0i64], Vec::new(), Vec::new());
    let stride = d / nnz as u64;
    for _ in 0..n_rows {
        for k in 0..nnz as u64 {
            indices.push((k * stride + next() % stride) as u32);
            values.push((next() % 1000) as f64 / 100.0 + 0.01);
        }
        offsets.push(indices.len() as i64);
    }
    (offsets, indices, values)
}

fn bench_expand(c: &mut Criterion) {
    let mut group = c.benchmark_group("kernel");
    group.sample_size(10);
    for degree in [2u32, 3] {
        for nnz in [10usize, 30, 100] {
            for d in [1_000u64, 100_000] {
                let spec = ExpansionSpec {
                    min_degree: 0,
                    max_degree: degree,
                    interaction_only: false,
                    include_bias: false,
                };
                // About 2-4 million output nonzeros per iteration.
                let per_row = (1..=degree)
                    .map(|k| {
                        (0..k).fold(1usize, |acc, j| acc * (nnz + j as usize) / (j as usize + 1))
                    })
                    .sum::<usize>();
                let n_rows = (3_000_000 / per_row).max(1);
                let (offsets, indices, values) = synthetic_rows(n_rows, nnz, d);
                let rows = SparseRows::new(&offsets, &indices, &values).expect("valid rows");
                assert!(output_width(d, &spec).is_ok());
                group.throughput(Throughput::Elements((per_row * n_rows) as u64));
                group.bench_with_input(
                    BenchmarkId::new(format!("expand/degree{degree}/nnz{nnz}"), d),
                    &rows,
                    |b, rows| b.iter(|| expand(rows, d, &spec, false).expect("expansion")),
                );
                let plan = ExpansionPlan::new(&rows, d, &spec, false).expect("plan");
                let mut out_indices = vec![MaybeUninit::<u64>::uninit(); plan.total()];
                let mut out_values = vec![MaybeUninit::<f64>::uninit(); plan.total()];
                group.bench_with_input(
                    BenchmarkId::new(format!("fill/degree{degree}/nnz{nnz}"), d),
                    &rows,
                    |b, rows| {
                        b.iter(|| {
                            plan.fill(rows, &mut out_indices, &mut out_values, false).expect("fill")
                        })
                    },
                );
            }
        }
    }
    group.finish();
}

criterion_group!(benches, bench_expand);
criterion_main!(benches);
