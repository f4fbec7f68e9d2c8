//! A model's file as a Python `bytes` object (pickling, `to_bytes`): below the binding classes,
//! which call it, and [`super::model_file`], which wraps them.

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use super::error::py_error;
use super::guard::guarded;
use crate::model::ModelRef;

/// The model file's bytes, written straight into a `bytes` object of the file's length (counted
/// first), so that no second copy is made. The caller holds the model's lock throughout.
pub fn model_bytes<'py>(
    py: Python<'py>,
    model: ModelRef<'_>,
    estimator: &str,
) -> PyResult<Bound<'py, PyBytes>> {
    let file = model.file(estimator);
    let length = py.detach(|| guarded(|| Ok(file.file_len())))?;
    PyBytes::new_with(py, length, |out| {
        py.detach(|| guarded(|| file.write_into(out).map_err(py_error)))
    })
}
