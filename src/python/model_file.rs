//! Reading model files from Python: whichever model a file holds, as its binding class, with
//! the estimator text the Python layer stored beside it (writing is each class's `save`).

use std::path::PathBuf;

use pyo3::prelude::*;

use super::dos::PyPaCore;
use super::error::py_error;
use super::guard::guarded;
use super::learner::PyLearner;
use crate::model::Model;

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
