//! Bindings of the difference-of-squares classifier and the linear PA baseline: a thin PyO3
//! class over the engine's [`PaClassifier`]. Inputs arrive as one sparse feature column
//! ([`super::input`], the same adapter as the online learner's); scoring in queries goes through
//! [`super::scoring`]; the model file is the one container of [`crate::model`]. The GIL is
//! released while the engine works.

use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use pyo3_polars::PySeries;

use super::error::{poisoned, polars_py_error, py_error};
use super::guard::guarded;
use super::handles::{Handle, Shared};
use super::input::{feature_series_of, Columns};
use super::model_file::model_bytes;
use super::options::options_from;
use super::scoring::class_ids;
use crate::dos::{PaClassifier, PaOptions, TrainStats};
use crate::model::ModelRef;

fn stats_tuple(stats: TrainStats) -> (u64, u64, u64, u64, u64) {
    (stats.examples, stats.steps, stats.updates, stats.degenerate, stats.mistakes)
}

/// A multiclass DoS or linear PA classifier (classes are ids 0..C-1; Python maps labels).
#[pyclass(module = "polars_poly._internal", name = "PaCore")]
pub struct PyPaCore {
    handle: Handle,
    inner: Arc<RwLock<PaClassifier>>,
}

impl PyPaCore {
    pub(super) fn wrap(classifier: PaClassifier) -> Self {
        let inner = Arc::new(RwLock::new(classifier));
        PyPaCore { handle: Handle::register(&Shared::PassiveAggressive(inner.clone())), inner }
    }

    /// The classifier, shared (for calls that take several models, e.g. averaging).
    pub(super) fn shared(&self) -> Arc<RwLock<PaClassifier>> {
        self.inner.clone()
    }

    /// Runs `f` on the one-column batch of `features` (rows numbered from `first_row`).
    fn with_batch<T: Send>(
        &self,
        py: Python<'_>,
        features: Vec<PySeries>,
        first_row: usize,
        f: impl FnOnce(&mut PaClassifier, &crate::dos::ExampleBatch) -> PyResult<T> + Send,
    ) -> PyResult<T> {
        let series = feature_series_of(features).map_err(polars_py_error)?;
        py.detach(|| {
            guarded(|| {
                let columns = Columns::new(&series, first_row).map_err(polars_py_error)?;
                let mut classifier = self.inner.write().map_err(poisoned)?;
                let batch = columns.example_batch(classifier.n_features()).map_err(py_error)?;
                f(&mut classifier, &batch)
            })
        })
    }
}

#[pymethods]
impl PyPaCore {
    /// A new classifier from its options (the dict form of [`PaOptions`]).
    #[new]
    fn new(options: &Bound<'_, PyAny>) -> PyResult<Self> {
        let options: PaOptions = options_from(options, "classifier options")?;
        Ok(PyPaCore::wrap(PaClassifier::new(&options).map_err(py_error)?))
    }

    /// The options the classifier was built with.
    fn options<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let options = self.inner.read().map_err(poisoned)?.options();
        pythonize::pythonize(py, &options).map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// (examples, steps, updates, degenerate, mistakes) since the model was created.
    fn stats(&self) -> PyResult<(u64, u64, u64, u64, u64)> {
        Ok(stats_tuple(self.inner.read().map_err(poisoned)?.stats()))
    }

    /// Learns a batch (one sparse feature column) in stream order; returns the batch's stats.
    /// `first_row` numbers the batch's rows in error messages.
    fn learn(
        &self,
        py: Python<'_>,
        features: Vec<PySeries>,
        classes: PyReadonlyArray1<'_, u32>,
        first_row: usize,
    ) -> PyResult<(u64, u64, u64, u64, u64)> {
        let classes = classes.as_slice()?.to_vec();
        self.with_batch(py, features, first_row, move |classifier, batch| {
            classifier.learn_batch(batch, &classes).map(stats_tuple).map_err(py_error)
        })
    }

    /// Checks a batch as `learn` would, without learning it: a fit over several batches
    /// checks them all first, so that a bad row leaves the model as it was.
    fn check(&self, py: Python<'_>, features: Vec<PySeries>, first_row: usize) -> PyResult<()> {
        let series = feature_series_of(features).map_err(polars_py_error)?;
        py.detach(|| {
            guarded(|| {
                let columns = Columns::new(&series, first_row).map_err(polars_py_error)?;
                let n_features = self.inner.read().map_err(poisoned)?.n_features();
                columns.check_example_batch(n_features).map_err(py_error)
            })
        })
    }

    /// Class ids of a batch (from the aligned averages where they exist, unless
    /// `use_average` is false), in parallel.
    #[pyo3(signature = (features, use_average=true))]
    fn predict<'py>(
        &self,
        py: Python<'py>,
        features: Vec<PySeries>,
        use_average: bool,
    ) -> PyResult<Bound<'py, PyArray1<u32>>> {
        let series = feature_series_of(features).map_err(polars_py_error)?;
        let ids = py.detach(|| {
            guarded(|| class_ids(&self.inner, &series, use_average).map_err(polars_py_error))
        })?;
        let ids = ids.u32().map_err(polars_py_error)?;
        if ids.null_count() > 0 {
            return Err(PyValueError::new_err("a feature row is null; drop or fill it"));
        }
        Ok(PyArray1::from_iter(py, ids.into_no_null_iter()))
    }

    /// Binary-model scores, row-major (n_rows x n_models).
    fn decision_scores<'py>(
        &self,
        py: Python<'py>,
        features: Vec<PySeries>,
        use_average: bool,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let scores = self.with_batch(py, features, 0, |classifier, batch| {
            classifier.decision_scores(batch, use_average).map_err(py_error)
        })?;
        Ok(PyArray1::from_vec(py, scores))
    }

    /// The model file's bytes, with `estimator` (the Python layer's own state) stored beside.
    fn to_bytes<'py>(&self, py: Python<'py>, estimator: &str) -> PyResult<Bound<'py, PyBytes>> {
        // The lock is taken with the GIL held (a learning thread never waits for the GIL while
        // holding it).
        let classifier = self.inner.read().map_err(poisoned)?;
        model_bytes(py, ModelRef::PassiveAggressive(&classifier), estimator)
    }

    fn save(&self, py: Python<'_>, path: PathBuf, estimator: &str) -> PyResult<()> {
        py.detach(|| {
            guarded(|| {
                let classifier = self.inner.read().map_err(poisoned)?;
                ModelRef::PassiveAggressive(&classifier).save(estimator, &path).map_err(py_error)
            })
        })
    }

    /// The id `model_predict` expressions use to find this model.
    #[getter]
    fn handle(&self) -> u64 {
        self.handle.0
    }

    fn __copy__(&self) -> PyResult<Self> {
        Ok(PyPaCore::wrap(self.inner.read().map_err(poisoned)?.clone()))
    }

    /// Length of the model file without the estimator text (counted, not written).
    #[getter]
    fn nbytes(&self, py: Python<'_>) -> PyResult<usize> {
        py.detach(|| {
            guarded(|| {
                let classifier = self.inner.read().map_err(poisoned)?;
                let length = ModelRef::PassiveAggressive(&classifier).file("").file_len();
                Ok(length)
            })
        })
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyPaCore>()?;
    Ok(())
}
