//! Model files from Python: reading whichever model a file holds, as its binding class, with
//! the estimator text the Python layer stored beside it; and the bytes of a model (pickling).
//! Saving to a path is each class's `save`.

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use super::dos::PyPaCore;
use super::error::py_error;
use super::guard::guarded;
use super::learner::PyLearner;
use crate::model::{Model, ModelRef};

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

fn wrap(py: Python<'_>, (model, estimator): (Model, String)) -> PyResult<(Py<PyAny>, String)> {
    let object = match model {
        Model::Online(learner) => Py::new(py, PyLearner::wrap(learner))?.into_any(),
        Model::PassiveAggressive(classifier) => Py::new(py, PyPaCore::wrap(classifier))?.into_any(),
    };
    Ok((object, estimator))
}

/// (model, estimator text) of the model file at `path`.
#[pyfunction]
fn load_model(py: Python<'_>, path: PathBuf) -> PyResult<(Py<PyAny>, String)> {
    let stored = py.detach(|| guarded(|| Model::load(&path).map_err(py_error)))?;
    wrap(py, stored)
}

/// (model, estimator text) of model-file bytes.
#[pyfunction]
fn model_from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<(Py<PyAny>, String)> {
    let stored = py.detach(|| guarded(|| Model::from_bytes(data).map_err(py_error)))?;
    wrap(py, stored)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(load_model, m)?)?;
    m.add_function(wrap_pyfunction!(model_from_bytes, m)?)?;
    Ok(())
}
