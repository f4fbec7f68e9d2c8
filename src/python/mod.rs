//! The Python extension module `polars_poly._internal`: plugin expressions ([`exprs`]) and plain
//! functions/classes ([`readers`]). Thin layers over the engine; compiled with `--features python`.

mod allocator;
pub mod arrow_io;
mod averaging;
mod datasets;
mod dos;
pub mod error;
mod expand;
mod exprs;
mod guard;
mod handles;
mod input;
mod learner;
mod model_bytes;
mod model_file;
mod options;
mod readers;
mod scoring;
mod vw_run;

use pyo3::prelude::*;

use allocator::ProcessAllocator;

// Polars' allocator, one heap with the runtime, unless the process asks for the system's.
#[global_allocator]
static ALLOC: ProcessAllocator = ProcessAllocator::new();

#[pymodule]
fn _internal(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    readers::register(m)?;
    expand::register(m)?;
    learner::register(m)?;
    averaging::register(m)?;
    model_file::register(m)?;
    dos::register(m)?;
    datasets::register(m)?;
    guard::register(m)?;
    vw_run::register(m)?;
    Ok(())
}
