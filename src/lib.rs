//! polars-poly: sparse polynomial expansion and nonlinear online learning.
//!
//! The engine modules below use only plain Rust slices and vectors: no PyO3, no Polars. They are
//! tested and benchmarked by `cargo test` / `cargo bench` alone. The Python extension (PyO3 +
//! pyo3-polars plugin expressions) lives in the `python` module, compiled only with the `python` feature.

pub mod apple;
pub mod codec;
pub mod datasets;
pub mod dos;
pub mod error;
pub mod field_apple;
pub mod hashing;
pub mod interrupt;
pub mod learner;
pub mod memory;
pub mod model;
pub mod polynomial;
pub mod readers;
pub mod registry;
pub mod sparse;
pub mod versions;
pub mod vw_run;

#[cfg(feature = "python")]
mod python;
