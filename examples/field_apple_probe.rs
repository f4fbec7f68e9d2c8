//! How field-level apple's screening evolves: the three best candidates' z-scores every 10,000
//! examples on eat-rate-like data (fields 0 and 1 of 1,000 values whose hidden kinds decide the
//! label, ten noise fields of 10,000 values), until a cross joins.
//!
//!     cargo run --release --example field_apple_probe [rows]

use polars_poly::field_apple::{FieldApple, FieldAppleConfig};
use polars_poly::hashing::fmix32;
use polars_poly::learner::loss::Logistic;
use polars_poly::learner::{Batch, FitOptions, Learner, LearnerConfig, Loss, NamespaceRows};
use polars_poly::sparse::SparseRows;

const FIELDS: usize = 12;
const CHUNK: usize = 10_000;

fn main() {
    let rows: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(400_000);
    let mut state = 1u64;
    let mut next = || {
        state =
            state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        state >> 33
    };
    // Per field: CSR offsets, value ids, values (one-hot).
    let mut columns = vec![(vec![0i64], Vec::<u32>::new(), Vec::<f32>::new()); FIELDS];
    let mut labels = Vec::with_capacity(rows);
    let kind = |field: u32, id: u32| fmix32(id ^ field.wrapping_mul(7919)) & 1;
    for _ in 0..rows {
        let mut ids = [0u32; FIELDS];
        for (field, column) in columns.iter_mut().enumerate() {
            let id = (next() % if field < 2 { 1_000 } else { 10_000 }) as u32;
            ids[field] = id;
            column.1.push(id);
            column.2.push(1.0);
            column.0.push(column.1.len() as i64);
        }
        labels.push(if kind(0, ids[0]) == kind(1, ids[1]) { 1.0 } else { -1.0 });
    }
    let config = LearnerConfig {
        bits: 24,
        loss: Loss::Logistic(Logistic),
        namespaces: (0..FIELDS).map(|k| format!("f{k}")).collect(),
        ..LearnerConfig::default()
    };
    let fields =
        FieldApple::new(FieldAppleConfig { max_crosses: 1, ..FieldAppleConfig::default() });
    let mut learner = Learner::new(config, fields.expect("valid options")).expect("valid config");
    let options = FitOptions { holdout: 0, ..FitOptions::default() };
    for start in (0..rows).step_by(CHUNK) {
        let end = (start + CHUNK).min(rows);
        let chunk: Vec<SparseRows<'_, u32, f32>> = columns
            .iter()
            .map(|(offsets, ids, values)| {
                SparseRows::new(&offsets[start..=end], ids, values).expect("valid rows")
            })
            .collect();
        let namespaces: Vec<&dyn NamespaceRows> =
            chunk.iter().map(|rows| rows as &dyn NamespaceRows).collect();
        let batch = Batch::new(&namespaces, &labels[start..end], None).expect("valid batch");
        learner.fit(&batch, &options).expect("learns");
        let screening = learner.expansion();
        let mut scores = screening.candidate_scores();
        scores.sort_by(|a, b| b.z_factors.max(b.z_cells).total_cmp(&a.z_factors.max(a.z_cells)));
        let best: Vec<String> = scores
            .iter()
            .take(3)
            .map(|c| {
                let (pair, n) = (&c.fields, c.samples);
                format!("{pair:?} z={:.2}/{:.2} n={n}", c.z_factors, c.z_cells)
            })
            .collect();
        let crosses: Vec<_> = screening.crosses().iter().map(|c| c.fields.clone()).collect();
        println!("{end:>8} crosses {crosses:?} best {best:?}");
        if !crosses.is_empty() {
            break;
        }
    }
}
