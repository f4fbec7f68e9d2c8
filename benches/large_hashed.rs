//! The learner's step on a large hashed table against the memory-latency floor (issue 21).
//!
//! Data: eat-rate-like rows of 12 one-hot namespaces (two of 1,000 values, ten of 10,000), the
//! cross of the first two (`-q AB`), the constant: 14 features per example; logistic loss, Vowpal
//! Wabbit's default rule, one learning thread, `bits` 18 (4 MiB table: past the L2 cache,
//! within L3), 24 (256 MiB) and 28 (4 GiB).
//!
//! * `step` — `Learner::learn_batch` over 200k rows (the table warm from earlier iterations),
//!   the examples built and expanded on a thread beside the learner (the default on a table this
//!   large, like Vowpal Wabbit's parser thread); `step_one_thread` — the same on one thread;
//! * `floor_uniform` — the memory floor of the issue: per example, 14 slots drawn uniformly from
//!   the same table, each read (the prediction) then written (the update), the next example's
//!   slots prefetched; no learning arithmetic;
//! * `floor_same_slots` — the same loop over the learner's own slots (most of eat-rate's
//!   features have a few thousand values and stay in cache, so this floor is much lower);
//! * `score` — `Learner::predict_batch_with` on one thread (what a streaming `predict_expr`
//!   runs per batch), against `floor_read_uniform`: the same uniform slots, only read, and
//!   `floor_read_same_slots`: the learner's own slots, only read (scoring's floor on this data);
//!   `score_field_scales`, the same with a scale per field (`field_scales`, on by default for
//!   several columns, as in the Python bench);
//! * `score_from_columns` — the least a scorer of these columns can do: each row's slots hashed
//!   straight from the columns' arrays (offsets, value ids, values) as the learner hashes them
//!   (index plus the namespace's seed, the constant, the `A x B` cross), [`FUSED_AHEAD`] rows
//!   ahead, prefetched, then summed; no blocks, no checks, no link function. Against
//!   `floor_read_columns`, the columns' own arrays summed (the input's streams alone): the two
//!   bound what any scorer of this layout can reach (issue 21's 10M rows/s per core is 100 ns
//!   a row, before the query's own cost);
//! * `step_counts` / `score_counts` — `step` and `score` at bits 24 with a 13th namespace of
//!   13 counts (0 to 4, a count of 0 no feature: about 11 features, so the rows are not one-hot
//!   and their blocks are expanded row by row), as click data has counts beside its fields;
//! * `minimal_step` — the step's own arithmetic with nothing around it: a hand-written loop
//!   over the learner's slots, expanded beforehand, with Vowpal Wabbit's default rule (adaptive,
//!   normalized, importance-invariant logistic step, the engine's own loss functions), the
//!   slots two examples ahead prefetched in halves. No reading of columns, no hashing, no
//!   enumerator: what this arithmetic costs on this machine, the bound a full step can approach.
//!
//! Throughput is in examples; step / floor is the ratio the README quotes.
//! Run: `cargo bench --bench large_hashed` (needs about 9 GiB for bits 28).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use polars_poly::hashing::CONSTANT_FEATURE;
use polars_poly::learner::expansion::INTERACTION_PRIME;
use polars_poly::learner::loss::Logistic;
use polars_poly::learner::{
    Batch, BuilderThread, ExampleBuffer, ExpandedFeatures, Expansion, Interactions, Learner,
    LearnerConfig, Loss, NamespaceRows,
};
use polars_poly::memory::prefetch;
use polars_poly::sparse::SparseRows;

const FIELDS: usize = 12;
const ROWS: usize = 200_000;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 =
            self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 17
    }
}

/// Per field: CSR offsets, value ids (hashed apart per field), one-hot values; and labels.
type Columns = Vec<(Vec<i64>, Vec<u32>, Vec<f32>)>;

fn eat_rate_like(rows: usize) -> (Columns, Vec<f64>) {
    let mut rng = Rng(7);
    let mut columns: Columns = vec![(vec![0i64], Vec::new(), Vec::new()); FIELDS];
    let mut labels = Vec::with_capacity(rows);
    for _ in 0..rows {
        let mut kinds = [0u64; 2];
        for (field, column) in columns.iter_mut().enumerate() {
            let id = rng.next() % if field < 2 { 1_000 } else { 10_000 };
            if field < 2 {
                kinds[field] = id % 2;
            }
            column.1.push((id as u32).wrapping_mul(2_654_435_761) >> 8);
            column.2.push(1.0);
            column.0.push(column.1.len() as i64);
        }
        labels.push(if kinds[0] == kinds[1] { 1.0 } else { -1.0 });
    }
    (columns, labels)
}

/// A namespace of 13 counts a row (0 to 4, a uniform draw: 0 is no feature), CSR.
fn counts(rows: usize) -> (Vec<i64>, Vec<u32>, Vec<f32>) {
    let mut rng = Rng(13);
    let mut column = (vec![0i64], Vec::new(), Vec::new());
    for _ in 0..rows {
        for k in 0..13u32 {
            let count = rng.next() % 5;
            if count > 0 {
                column.1.push(k);
                column.2.push(count as f32);
            }
        }
        column.0.push(column.1.len() as i64);
    }
    column
}

fn config(bits: u32) -> LearnerConfig {
    LearnerConfig {
        bits,
        loss: Loss::Logistic(Logistic),
        namespaces: (0..FIELDS).map(|k| ((b'A' + k as u8) as char).to_string()).collect(),
        ..LearnerConfig::default()
    }
}

fn expansion() -> Interactions {
    Interactions { namespace_crosses: vec![vec![0, 1]], ..Interactions::linear() }
}

/// Reads then updates every example's slots (stride 4 like the learner's table), the next
/// example's slots prefetched; returns a checksum so nothing is optimized away.
fn touch(table: &mut [f32], slots: &[u32], per_example: usize) -> f32 {
    let mut checksum = 0.0f32;
    let examples = slots.len() / per_example;
    for e in 0..examples {
        prefetch_next(table, slots, e, per_example);
        let mine = &slots[e * per_example..(e + 1) * per_example];
        let sum: f32 = mine.iter().map(|&s| table[s as usize * 4]).sum();
        let step = 1e-3 - 1e-6 * sum;
        for &slot in mine {
            table[slot as usize * 4] += step;
        }
        checksum += sum;
    }
    checksum
}

/// Prefetches the slots of the example after example `e` (stride 4 like the learner's table).
fn prefetch_next(table: &[f32], slots: &[u32], e: usize, per_example: usize) {
    let examples = slots.len() / per_example;
    let next = (e + 1).min(examples - 1) * per_example;
    for &slot in &slots[next..next + per_example] {
        prefetch(table.as_ptr().wrapping_add(slot as usize * 4));
    }
}

/// Sums every example's slots, the next example's slots prefetched: the floor of scoring.
fn read(table: &[f32], slots: &[u32], per_example: usize) -> f32 {
    let mut checksum = 0.0f32;
    let examples = slots.len() / per_example;
    for e in 0..examples {
        prefetch_next(table, slots, e, per_example);
        let mine = &slots[e * per_example..(e + 1) * per_example];
        checksum += mine.iter().map(|&s| table[s as usize * 4]).sum::<f32>();
    }
    checksum
}

/// Rows ahead whose slots `score_from_columns` prefetches (in a trial 4 and 16 were within 3%
/// of 8, 2 was 10% slower and 1 60%).
const FUSED_AHEAD: usize = 8;

/// Features per example: the fields, the constant, their cross.
const PER_EXAMPLE: usize = FIELDS + 2;

/// Row `row`'s slots, hashed from the columns' arrays as the learner hashes them.
/// (Inlined: as a call it cost a fifth of the row.)
#[inline(always)]
fn slots_from_columns(columns: &Columns, seeds: &[u64], mask: u64, row: usize) -> Slots {
    let mut hashes = [0u64; FIELDS];
    let mut slots = [0u32; PER_EXAMPLE];
    for (k, (offsets, ids, _)) in columns.iter().enumerate() {
        hashes[k] = u64::from(ids[offsets[row] as usize]).wrapping_add(seeds[k]);
        slots[k] = (hashes[k] & mask) as u32;
    }
    // The learner's order: the namespaces, the constant, then the crosses.
    slots[FIELDS] = (u64::from(CONSTANT_FEATURE) & mask) as u32;
    slots[FIELDS + 1] = ((hashes[0].wrapping_mul(INTERACTION_PRIME) ^ hashes[1]) & mask) as u32;
    slots
}

type Slots = [u32; PER_EXAMPLE];

/// Scores every row straight from the columns (see the module docs) into `out`: the slots
/// `FUSED_AHEAD` rows ahead hashed and prefetched, each value read when its row is scored (its
/// line is in the cache since the row's slots were hashed).
fn score_from_columns(table: &[f32], columns: &Columns, seeds: &[u64], mask: u64, out: &mut [f32]) {
    let prefetch_row = |slots: &Slots| {
        for &slot in slots {
            prefetch(table.as_ptr().wrapping_add(slot as usize * 4));
        }
    };
    let n = out.len();
    let mut ring = [[0u32; PER_EXAMPLE]; FUSED_AHEAD];
    for (row, staged) in ring.iter_mut().enumerate().take(n) {
        *staged = slots_from_columns(columns, seeds, mask, row);
        prefetch_row(staged);
    }
    for (row, score) in out.iter_mut().enumerate() {
        let staged = &mut ring[row % FUSED_AHEAD];
        let value = |k: usize| columns[k].2[columns[k].0[row] as usize];
        let mut sum = 0.0f32;
        for (k, &slot) in staged.iter().enumerate() {
            let x = match k {
                k if k < FIELDS => value(k),
                FIELDS => 1.0,
                _ => value(0) * value(1),
            };
            sum += table[slot as usize * 4] * x;
        }
        *score = sum;
        if row + FUSED_AHEAD < n {
            *staged = slots_from_columns(columns, seeds, mask, row + FUSED_AHEAD);
            prefetch_row(staged);
        }
    }
}

/// Sums the columns' value ids and values through their offsets: reading the input alone.
fn read_columns(columns: &Columns) -> f32 {
    let (mut ids_sum, mut values_sum) = ([0u32; FIELDS], [0.0f32; FIELDS]);
    for row in 0..columns[0].0.len() - 1 {
        for (k, (offsets, ids, values)) in columns.iter().enumerate() {
            let at = offsets[row] as usize;
            ids_sum[k] = ids_sum[k].wrapping_add(ids[at]);
            values_sum[k] += values[at];
        }
    }
    ids_sum.iter().map(|&i| i as f32).sum::<f32>() + values_sum.iter().sum::<f32>()
}

/// Vowpal Wabbit's default update over one-hot examples of `per_example` slots each (stride-4
/// slots `[w, g2, norm, rate]`, every value 1), the slots two examples ahead prefetched in two
/// halves; returns the progressive loss so nothing is optimized away.
fn minimal_step(table: &mut [f32], slots: &[u32], labels: &[f64], per_example: usize) -> f64 {
    let loss = Loss::Logistic(Logistic);
    let (mut total_weight, mut sum_norm_x, mut progressive) = (0.0f64, 0.0f64, 0.0f64);
    let examples = slots.len() / per_example;
    let mut rates = vec![0.0f32; per_example];
    for e in 0..examples {
        let ahead = (e + 2).min(examples - 1) * per_example;
        let (first, second) = slots[ahead..ahead + per_example].split_at(per_example / 2);
        let prefetch_all = |part: &[u32], table: &[f32]| {
            for &slot in part {
                prefetch(table.as_ptr().wrapping_add(slot as usize * 4));
            }
        };
        prefetch_all(first, table);
        let mine = &slots[e * per_example..(e + 1) * per_example];
        let dot: f32 = mine.iter().map(|&s| table[s as usize * 4]).sum();
        let (p, y) = (f64::from(dot).clamp(-50.0, 50.0), labels[e]);
        let (value, derivative, positive) = loss.evaluate(p, y);
        progressive += value;
        prefetch_all(second, table);
        if !positive {
            continue;
        }
        let g2 = (derivative * derivative) as f32;
        let (mut ppu, mut norm_x) = (0.0f32, 0.0f32);
        for (k, &slot) in mine.iter().enumerate() {
            let w = &mut table[slot as usize * 4..slot as usize * 4 + 4];
            w[1] += g2;
            if w[2] < 1.0 {
                if w[2] > 0.0 {
                    w[0] *= w[2];
                }
                w[2] = 1.0;
            }
            let inv_norm = 1.0 / w[2];
            norm_x += inv_norm * inv_norm;
            rates[k] = inv_norm / w[1].sqrt();
            ppu += rates[k];
        }
        total_weight += 1.0;
        sum_norm_x += f64::from(norm_x);
        let multiplier = (total_weight / sum_norm_x).sqrt();
        let step = loss.invariant_update(p, y, 0.5, f64::from(ppu) * multiplier);
        let step = (step * multiplier) as f32;
        for (k, &slot) in mine.iter().enumerate() {
            table[slot as usize * 4] += step * rates[k];
        }
    }
    progressive
}

/// Builds and expands every row as the learner does, handing each expansion to `sink`.
fn expand_all(
    namespaces: &[&dyn NamespaceRows],
    labels: &[f64],
    bits: u32,
    mut sink: impl FnMut(&ExpandedFeatures),
) {
    let mut buffer = ExampleBuffer::new();
    let mut features = ExpandedFeatures::new(bits);
    let seeds: Vec<u64> = (0..FIELDS).map(|k| config(bits).namespace_seed(k)).collect();
    for (row, &label) in labels.iter().enumerate() {
        buffer.clear();
        for (ns, &seed) in namespaces.iter().zip(&seeds) {
            ns.push_into(row, seed, &mut buffer).expect("valid row");
        }
        let example = buffer.finish(label, 1.0, row).expect("valid example");
        features.clear();
        expansion().expand(&example, &mut features);
        sink(&features);
    }
}

fn bench(c: &mut Criterion) {
    let (columns, labels) = eat_rate_like(ROWS);
    let rows: Vec<SparseRows<'_, u32, f32>> = columns
        .iter()
        .map(|(offsets, ids, values)| SparseRows::new(offsets, ids, values).expect("valid rows"))
        .collect();
    let namespaces: Vec<&dyn NamespaceRows> =
        rows.iter().map(|r| r as &dyn NamespaceRows).collect();
    let batch = Batch::new(&namespaces, &labels, None).expect("valid batch");
    let counts = counts(ROWS);
    let mut group = c.benchmark_group("large_hashed");
    group.throughput(Throughput::Elements(ROWS as u64));
    for bits in [18u32, 24, 28] {
        let mut learner = Learner::new(config(bits), expansion()).expect("valid config");
        learner.learn_batch(&batch).expect("learns");
        group.bench_with_input(BenchmarkId::new("step", bits), &bits, |b, _| {
            b.iter(|| learner.learn_batch(&batch).expect("learns"))
        });
        // The same without the builder thread (the examples built on the learner's thread).
        learner.set_builder_thread(BuilderThread::Never);
        group.bench_with_input(BenchmarkId::new("step_one_thread", bits), &bits, |b, _| {
            b.iter(|| learner.learn_batch(&batch).expect("learns"))
        });
        learner.set_builder_thread(BuilderThread::Auto);
        if bits == 24 {
            // The same step with a learned scale per field (`field_scales`, ours).
            let scaled = LearnerConfig { field_scales: true, ..config(bits) };
            let mut scaled = Learner::new(scaled, expansion()).expect("valid config");
            scaled.learn_batch(&batch).expect("learns");
            group.bench_with_input(BenchmarkId::new("step_field_scales", bits), &bits, |b, _| {
                b.iter(|| scaled.learn_batch(&batch).expect("learns"))
            });
            // Scoring with field scales (what a model of several columns scores by default).
            let mut scores = Vec::new();
            group.bench_with_input(BenchmarkId::new("score_field_scales", bits), &bits, |b, _| {
                b.iter(|| scaled.predict_batch_with(&batch, &mut scores, false).expect("scores"))
            });
            // The same rows with 13 counts beside the fields.
            let counted = SparseRows::new(&counts.0, &counts.1, &counts.2).expect("valid rows");
            let mut with_counts = namespaces.clone();
            with_counts.push(&counted);
            let batch = Batch::new(&with_counts, &labels, None).expect("valid batch");
            let mut names = config(bits).namespaces;
            names.push("features".into());
            let config = LearnerConfig { namespaces: names, ..config(bits) };
            let mut counting = Learner::new(config, expansion()).expect("valid config");
            counting.learn_batch(&batch).expect("learns");
            group.bench_with_input(BenchmarkId::new("step_counts", bits), &bits, |b, _| {
                b.iter(|| counting.learn_batch(&batch).expect("learns"))
            });
            group.bench_with_input(BenchmarkId::new("score_counts", bits), &bits, |b, _| {
                b.iter(|| counting.predict_batch_with(&batch, &mut scores, false).expect("scores"))
            });
        }
        let mut scores = Vec::new();
        group.bench_with_input(BenchmarkId::new("score", bits), &bits, |b, _| {
            b.iter(|| learner.predict_batch_with(&batch, &mut scores, false).expect("scores"))
        });
        group.bench_with_input(BenchmarkId::new("build_and_expand_only", bits), &bits, |b, _| {
            b.iter(|| {
                let mut total = 0usize;
                expand_all(&namespaces, &labels, bits, |features| total += features.len());
                total
            })
        });
        // The learner's own slots, in order.
        let mut same = Vec::new();
        expand_all(&namespaces, &labels, bits, |features| same.extend_from_slice(features.slots()));
        let per_example = same.len() / ROWS;
        assert_eq!(per_example * ROWS, same.len(), "every example has the same count");
        drop(learner);
        let mut table = vec![0.0f32; 4usize << bits];
        polars_poly::memory::advise_huge_pages(&mut table);
        table.iter_mut().step_by(1 << 10).for_each(|v| *v = 1e-9);
        let mut rng = Rng(11);
        let uniform: Vec<u32> =
            (0..same.len()).map(|_| (rng.next() & ((1 << bits) - 1)) as u32).collect();
        group.bench_with_input(BenchmarkId::new("floor_uniform", bits), &bits, |b, _| {
            b.iter(|| touch(&mut table, &uniform, per_example))
        });
        table.iter_mut().for_each(|v| *v = 0.0);
        group.bench_with_input(BenchmarkId::new("minimal_step", bits), &bits, |b, _| {
            b.iter(|| minimal_step(&mut table, &same, &labels, per_example))
        });
        group.bench_with_input(BenchmarkId::new("floor_same_slots", bits), &bits, |b, _| {
            b.iter(|| touch(&mut table, &same, per_example))
        });
        group.bench_with_input(BenchmarkId::new("floor_read_uniform", bits), &bits, |b, _| {
            b.iter(|| read(&table, &uniform, per_example))
        });
        group.bench_with_input(BenchmarkId::new("floor_read_same_slots", bits), &bits, |b, _| {
            b.iter(|| read(&table, &same, per_example))
        });
        let seeds: Vec<u64> = (0..FIELDS).map(|k| config(bits).namespace_seed(k)).collect();
        let mut scores = vec![0.0f32; ROWS];
        let mask = (1u64 << bits) - 1;
        let seventh = slots_from_columns(&columns, &seeds, mask, 7);
        assert_eq!(seventh, same[7 * per_example..8 * per_example], "hashed as the learner hashes");
        group.bench_with_input(BenchmarkId::new("score_from_columns", bits), &bits, |b, _| {
            b.iter(|| score_from_columns(&table, &columns, &seeds, mask, &mut scores))
        });
        group.bench_with_input(BenchmarkId::new("floor_read_columns", bits), &bits, |b, _| {
            b.iter(|| read_columns(&columns))
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).measurement_time(std::time::Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
