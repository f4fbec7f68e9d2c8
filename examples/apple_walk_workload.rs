//! A fixed workload for counting the instructions of apple's walk, which timings on a shared VM
//! cannot resolve: trains apple (defaults, b = 24, one pass) on a LIBSVM file, then enumerates
//! every example's feature set three times in `enumerate`, and prints the number of features.
//!
//! ```text
//! cargo build --release --example apple_walk_workload
//! valgrind --tool=callgrind --toggle-collect='apple_walk_workload::enumerate' \
//!     target/release/examples/apple_walk_workload ../shared/data/a9a/a9a.gz
//! ```
use polars_poly::apple::{Apple, AppleConfig};
use polars_poly::learner::{
    Batch, ExampleBuffer, ExpandedFeatures, Expansion, FitOptions, Learner, LearnerConfig,
    NamespaceRows,
};
use polars_poly::readers::libsvm::{read_all, LibsvmOptions};
use polars_poly::sparse::SparseRows;
use std::path::Path;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: apple_walk_workload FILE.libsvm[.gz]");
        std::process::exit(2);
    };
    let (b, _) = read_all(Path::new(&path), LibsvmOptions::default())?;
    let values: Vec<f32> = b.values.iter().map(|&v| v as f32).collect();
    let rows = SparseRows::new(&b.offsets, &b.indices, &values)?;
    let namespaces: [&dyn NamespaceRows; 1] = [&rows];
    let batch = Batch::new(&namespaces, &b.labels, None)?;
    let config = LearnerConfig { bits: 24, ..LearnerConfig::default() };
    let seed = config.namespace_seed(0);
    let mut apple = Learner::new(config, Apple::new(AppleConfig::default())?)?;
    apple.fit(&batch, &FitOptions { passes: 1, ..FitOptions::default() })?;
    let mut buffer = ExampleBuffer::new();
    let mut out = ExpandedFeatures::new(24);
    let mut total = 0usize;
    for _ in 0..3 {
        for row in 0..rows.n_rows() {
            buffer.clear();
            buffer.push_row(seed, &rows, row)?;
            let example = buffer.finish(0.0, 1.0, row)?;
            out.clear();
            enumerate(apple.expansion(), &example, &mut out);
            total += out.len();
        }
    }
    println!("{total}");
    Ok(())
}

#[inline(never)]
fn enumerate(e: &Apple, x: &polars_poly::learner::Example<'_>, out: &mut ExpandedFeatures) {
    e.expand(x, out);
}
