//! DoS classifier throughput on MNIST-sized inputs (n = 784, ~150–190 nonzeros per digit).
//!
//! `cargo bench --bench dos` (add `-- pairwise` etc. to filter). Groups:
//! * `digits/fill`: the elastic-distortion generator, images/s with 1 and 2 threads.
//! * `pairwise/{f32,f64}/…/d`: one pairwise DoS model (digits 4 vs 9), examples/s: `learn`
//!   (plain PA from a fresh model, ~35% of the examples update), `update-every-example` (every
//!   example takes the full step: forward pass, solve, rank-one update) and `score` (the forward
//!   pass alone, the floor: one read of the d·nnz touched parameters).
//! * `pairwise/f32-hashed/…/d=8`: the same three on text-like rows over 2^22 hashed columns
//!   (a 256 MiB model): the rows a step touches come from memory, not from the caches.
//! * `ovo/{dos-d8,linear}/threads`: 10-class one-vs-one training (45 models), examples/s.
//! * `ovo-predict/d8`: 10-class prediction (all 45 models per example), examples/s.
//! * `memory/{read,random-lines}`: one core's read bandwidth over 256 MiB (8x the L3), bytes/s,
//!   streaming and one random 64-byte line at a time: the floors for a step's 2d·(nnz+1)
//!   parameters read from memory (notes/benchmarks_log.md, DoS speed).
//!
//! Base images: the MNIST test set from /work/shared/data/mnist_t10k when present, else a
//! synthetic stand-in with the same size and sparsity.

use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use polars_poly::datasets::{DigitStream, Distortion, IdxImages};
use polars_poly::dos::{
    BinaryLearner, DosModel, ExampleBatch, Multiclass, PaVariant, Real, Sign, Strategy,
};

const MNIST: &str = "/work/shared/data/mnist_t10k";

fn stream() -> DigitStream {
    let dir = Path::new(MNIST);
    if dir.exists() {
        return DigitStream::from_idx_files(
            dir.join("t10k-images-idx3-ubyte.gz"),
            dir.join("t10k-labels-idx1-ubyte.gz"),
            1,
            Distortion::default(),
        )
        .expect("MNIST test set");
    }
    // Synthetic digits: class c is a thick stroke at an angle depending on c.
    let mut pixels = vec![0u8; 10 * 784];
    for c in 0..10 {
        let angle = c as f64 * std::f64::consts::PI / 10.0;
        for t in -10..=10 {
            for w in -1..=1 {
                let x = 13.5 + t as f64 * angle.cos() - w as f64 * angle.sin();
                let y = 13.5 + t as f64 * angle.sin() + w as f64 * angle.cos();
                pixels[c * 784 + (y as usize).min(27) * 28 + (x as usize).min(27)] = 255;
            }
        }
    }
    let images = IdxImages { rows: 28, cols: 28, pixels };
    DigitStream::new(&images, &(0..10).collect::<Vec<u8>>(), 1, Distortion::default()).unwrap()
}

/// `count` distorted digits starting at example `start` (skipping the base images' first pass).
fn digits(stream: &DigitStream, start: u64, count: usize) -> (ExampleBatch, Vec<u32>) {
    let mut pixels = vec![0.0f32; count * stream.image_len()];
    let mut labels = vec![0u8; count];
    stream.fill(start, &mut pixels, &mut labels).unwrap();
    let batch = ExampleBatch::from_dense(&pixels, stream.image_len()).unwrap();
    (batch, labels.iter().map(|&l| u32::from(l)).collect())
}

fn bench_generator(c: &mut Criterion) {
    let stream = stream();
    let count = 4096;
    let mut group = c.benchmark_group("digits");
    group.throughput(Throughput::Elements(count as u64));
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let mut pixels = vec![0.0f32; count * stream.image_len()];
        let mut labels = vec![0u8; count];
        group.bench_function(format!("fill/threads={threads}"), |b| {
            b.iter(|| pool.install(|| stream.fill(12_345, &mut pixels, &mut labels).unwrap()))
        });
    }
    group.finish();
}

fn bench_pairwise_for<T: Real>(
    c: &mut Criterion,
    name: &str,
    pair: &(ExampleBatch, Vec<Sign>),
    ranks: &[usize],
) {
    let (batch, signs) = pair;
    let n = batch.n_features();
    let mut group = c.benchmark_group(format!("pairwise/{name}"));
    group.throughput(Throughput::Elements(batch.len() as u64));
    for &d in ranks {
        let fresh = DosModel::<T>::new(n, d, 3, PaVariant::Pa).unwrap();
        group.bench_function(format!("learn/d={d}"), |b| {
            b.iter_batched_ref(
                || fresh.clone(),
                |model| {
                    for (i, &y) in signs.iter().enumerate() {
                        black_box(model.learn(batch.example(i), y));
                    }
                },
                BatchSize::LargeInput,
            )
        });
        // PA-I with a tiny C never reaches margin 1: every example takes the full step (forward
        // pass, solve, rank-one update), the worst case per example.
        let always = DosModel::<T>::new(n, d, 3, PaVariant::PaI { c: 1e-9 }).unwrap();
        group.bench_function(format!("update-every-example/d={d}"), |b| {
            b.iter_batched_ref(
                || always.clone(),
                |model| {
                    for (i, &y) in signs.iter().enumerate() {
                        black_box(model.learn(batch.example(i), y));
                    }
                },
                BatchSize::LargeInput,
            )
        });
        group.bench_function(format!("score/d={d}"), |b| {
            b.iter(|| {
                let mut total = 0.0;
                for i in 0..batch.len() {
                    total += fresh.score(batch.example(i));
                }
                black_box(total)
            })
        });
    }
    group.finish();
}

fn bench_pairwise(c: &mut Criterion) {
    let stream = stream();
    let (batch, classes) = digits(&stream, 20_000, 20_000);
    // The examples of digits 4 and 9, in stream order (class 4 is the positive side).
    let mut pair = ExampleBatch::new(784).unwrap();
    let mut signs = Vec::new();
    for (i, &class) in classes.iter().enumerate() {
        if class == 4 || class == 9 {
            let e = batch.example(i);
            pair.push_sparse_row(e.indices, e.values, i).unwrap();
            signs.push(if class == 4 { Sign::Positive } else { Sign::Negative });
        }
    }
    eprintln!(
        "pairwise 4 vs 9: {} examples, {:.1} nonzeros per example",
        pair.len(),
        pair.nnz() as f64 / pair.len() as f64
    );
    let pair = (pair, signs);
    bench_pairwise_for::<f32>(c, "f32", &pair, &[1, 2, 4, 8, 16]);
    bench_pairwise_for::<f64>(c, "f64", &pair, &[1, 2, 4, 8, 16]);
    bench_pairwise_for::<f32>(c, "f32-hashed", &hashed_rows(&pair.0), &[8]);
}

/// A seeded stream of pseudo-random 53-bit words (a 64-bit LCG's high bits): enough for picking
/// columns and lines in benches, and the same on every machine.
fn random_words(seed: u64) -> impl FnMut() -> u64 {
    let mut state = seed;
    move || {
        state =
            state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        state >> 11
    }
}

/// Text-like rows for the out-of-cache case: as many examples and nonzeros per example as the
/// digit pair, but at random columns of 2^22 (hashed features of a large vocabulary), so that a
/// d = 8 model (2^22 rows of 64 bytes, 256 MiB) is far larger than the caches and nearly every
/// row a step touches comes from memory. Random labels: most examples update.
fn hashed_rows(digits: &ExampleBatch) -> (ExampleBatch, Vec<Sign>) {
    const N: u64 = 1 << 22;
    let mut next = random_words(0x9e37_79b9_7f4a_7c15);
    let mut batch = ExampleBatch::new(N as usize).unwrap();
    let mut signs = Vec::new();
    for i in 0..digits.len() {
        let example = digits.example(i);
        let mut indices: Vec<u32> = example.indices.iter().map(|_| (next() % N) as u32).collect();
        indices.sort_unstable();
        indices.dedup();
        let values = &example.values[..indices.len()];
        batch.push_sparse_row(&indices, values, i).unwrap();
        signs.push(if next() % 2 == 0 { Sign::Positive } else { Sign::Negative });
    }
    (batch, signs)
}

fn bench_ovo(c: &mut Criterion) {
    let stream = stream();
    let (batch, classes) = digits(&stream, 10_000, 30_000);
    let mut group = c.benchmark_group("ovo");
    group.throughput(Throughput::Elements(batch.len() as u64));
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let fresh = Multiclass::<DosModel<f32>>::dos(
            10,
            784,
            8,
            1,
            PaVariant::Pa,
            Strategy::OneVsOne,
            Some(2000),
        )
        .unwrap();
        group.bench_function(format!("dos-d8/threads={threads}"), |b| {
            b.iter_batched_ref(
                || fresh.clone(),
                |model| pool.install(|| model.learn_batch(&batch, &classes).unwrap()),
                BatchSize::LargeInput,
            )
        });
        let linear =
            Multiclass::linear(10, 784, PaVariant::Pa, Strategy::OneVsOne, Some(2000)).unwrap();
        group.bench_function(format!("linear/threads={threads}"), |b| {
            b.iter_batched_ref(
                || linear.clone(),
                |model| pool.install(|| model.learn_batch(&batch, &classes).unwrap()),
                BatchSize::LargeInput,
            )
        });
    }
    group.finish();

    let mut trained = Multiclass::<DosModel<f32>>::dos(
        10,
        784,
        8,
        1,
        PaVariant::Pa,
        Strategy::OneVsOne,
        Some(2000),
    )
    .unwrap();
    trained.learn_batch(&batch, &classes).unwrap();
    let stats = trained.stats();
    eprintln!(
        "ovo d=8 on {} digits: {} pairwise steps, {:.1}% updates, {:.2}% pairwise mistakes",
        stats.examples,
        stats.steps,
        100.0 * stats.updates as f64 / stats.steps as f64,
        100.0 * stats.mistakes as f64 / stats.steps as f64
    );
    let (test, _) = digits(&stream, 0, 5_000);
    let mut group = c.benchmark_group("ovo-predict");
    group.throughput(Throughput::Elements(test.len() as u64));
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        group.bench_function(format!("d8/threads={threads}"), |b| {
            b.iter(|| pool.install(|| black_box(trained.predict(&test, true).unwrap())))
        });
    }
    group.finish();
    // Keep the trait in scope for readers of this file: the OvO learner is generic over it.
    fn _uses<M: BinaryLearner>(_: &Multiclass<M>) {}
}

/// Streaming read bandwidth of one core: a sum over an array far larger than the caches, with
/// 32 independent lanes so that the adds never wait on each other.
fn bench_memory(c: &mut Criterion) {
    const LANES: usize = 32;
    let len = 64usize << 20; // f32s: 256 MiB
    let data: Vec<f32> = (0..len).map(|i| (i % 7) as f32).collect();
    let mut group = c.benchmark_group("memory");
    group.throughput(Throughput::Bytes((len * std::mem::size_of::<f32>()) as u64));
    group.bench_function("read", |b| {
        b.iter(|| {
            let mut lanes = [0.0f32; LANES];
            for chunk in data.chunks_exact(LANES) {
                for (lane, &x) in lanes.iter_mut().zip(chunk) {
                    *lane += x;
                }
            }
            black_box(lanes)
        })
    });
    // The same array read one 64-byte line at a time at random lines (a d = 8 f32 row is one
    // line): the floor of a forward pass whose rows are not in the caches.
    const LINE: usize = 16;
    let lines = 1usize << 20;
    let mut next = random_words(0x2545_f491_4f6c_dd1d);
    let picks: Vec<u32> = (0..lines).map(|_| (next() % (len / LINE) as u64) as u32).collect();
    group.throughput(Throughput::Bytes((lines * LINE * std::mem::size_of::<f32>()) as u64));
    group.bench_function("random-lines", |b| {
        b.iter(|| {
            let mut lanes = [0.0f32; LINE];
            for &line in &picks {
                let start = line as usize * LINE;
                for (lane, &x) in lanes.iter_mut().zip(&data[start..start + LINE]) {
                    *lane += x;
                }
            }
            black_box(lanes)
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    targets = bench_generator, bench_pairwise, bench_ovo, bench_memory
}
criterion_main!(benches);
