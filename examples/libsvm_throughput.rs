//! Single-thread LIBSVM parse speed: a9a decompressed in memory and repeated 20 times, parsed 5
//! times (best reported), then `read_all` of the gzip file with its decompression.
//!
//! Run: `cargo run --release --example libsvm_throughput` (reads `$POLARS_POLY_DATA/a9a/a9a.gz`,
//! `POLARS_POLY_DATA` defaulting to `../shared/data`).

use std::io::Read;
use std::path::PathBuf;
use std::time::Instant;

use polars_poly::readers::libsvm::{read_all, LibsvmOptions, LibsvmReader};

fn main() {
    let data = std::env::var_os("POLARS_POLY_DATA").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data"),
        PathBuf::from,
    );
    let path = data.join("a9a/a9a.gz");
    if !path.exists() {
        eprintln!(
            "{} is absent: set POLARS_POLY_DATA to the benchmark data folder",
            path.display()
        );
        std::process::exit(2);
    }
    let mut text = Vec::new();
    let file = std::fs::File::open(&path).expect("open a9a.gz");
    flate2::read::MultiGzDecoder::new(file).read_to_end(&mut text).expect("decompress a9a.gz");
    let text = text.repeat(20);
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        let started = Instant::now();
        let source = Box::new(std::io::Cursor::new(text.clone()));
        let reader = LibsvmReader::from_reader("a9a x20", source, LibsvmOptions::default());
        let (batch, _) = reader.expect("reader").read_to_end().expect("parse");
        best = best.min(started.elapsed().as_secs_f64());
        assert_eq!(batch.n_rows(), 32561 * 20);
    }
    let megabytes = text.len() as f64 / 1e6;
    println!("a9a x20: {megabytes:.1} MB in {best:.3} s = {:.0} MB/s", megabytes / best);
    let started = Instant::now();
    read_all(&path, LibsvmOptions::default()).expect("read a9a.gz");
    println!("read_all(a9a.gz), with decompression: {:.3} s", started.elapsed().as_secs_f64());
}
