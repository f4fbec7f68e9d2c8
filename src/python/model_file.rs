//! Model files from Python: reading whichever model a file holds, as its binding class, with
//! the estimator text the Python layer stored beside it. Saving to a path is each class's
//! `save`; a model's bytes (pickling) are [`super::model_bytes`]'s, which the classes use.

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

use super::dos::PyPassiveAggressive;
use super::error::poisoned;
use super::error::py_error;
use super::guard::guarded;
use super::learner::PyLearner;
use super::model_bytes::model_bytes;
use crate::model::{Model, ModelRef, OnlineModel};

fn wrap(py: Python<'_>, (model, estimator): (Model, String)) -> PyResult<(Py<PyAny>, String)> {
    let object = match model {
        Model::Online(learner) => Py::new(py, PyLearner::wrap(learner))?.into_any(),
        Model::OneAgainstAll(heads) => {
            let heads: Vec<PyLearner> = heads.into_iter().map(PyLearner::wrap).collect();
            PyList::new(py, heads)?.into_any().unbind()
        }
        Model::PassiveAggressive(classifier) => {
            Py::new(py, PyPassiveAggressive::wrap(classifier))?.into_any()
        }
    };
    Ok((object, estimator))
}

/// Runs `write` on the one-against-all model of `heads` (each read-locked meanwhile).
fn with_heads<T>(
    heads: &[PyRef<'_, PyLearner>],
    write: impl FnOnce(ModelRef<'_>) -> PyResult<T>,
) -> PyResult<T> {
    let shared: Vec<_> = heads.iter().map(|h| h.shared()).collect();
    let guards = shared.iter().map(|m| m.read().map_err(poisoned)).collect::<PyResult<Vec<_>>>()?;
    let models: Vec<&OnlineModel> = guards.iter().map(|g| &**g).collect();
    write(ModelRef::OneAgainstAll(&models))
}

/// The model-file bytes of a one-against-all model: one learner per class, in class order.
#[pyfunction]
fn heads_to_bytes<'py>(
    py: Python<'py>,
    heads: Vec<PyRef<'py, PyLearner>>,
    estimator: &str,
) -> PyResult<Bound<'py, PyBytes>> {
    with_heads(&heads, |model| model_bytes(py, model, estimator))
}

/// Saves a one-against-all model (one learner per class, in class order) to `path`.
#[pyfunction]
fn save_heads(
    py: Python<'_>,
    heads: Vec<PyRef<'_, PyLearner>>,
    path: PathBuf,
    estimator: &str,
) -> PyResult<()> {
    with_heads(&heads, |model| {
        py.detach(|| guarded(|| model.save(estimator, &path).map_err(py_error)))
    })
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
    m.add_function(wrap_pyfunction!(heads_to_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(save_heads, m)?)?;
    Ok(())
}
