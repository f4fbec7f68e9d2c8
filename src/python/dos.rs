//! Bindings of the difference-of-squares classifier and the linear PA baseline: a thin PyO3
//! class over the engine's [`PassiveAggressive`]. Inputs arrive as one sparse feature column
//! ([`super::input`], the same adapter as the online learner's); scoring in queries goes through
//! [`super::scoring`]; the model file is the one container of [`crate::model`]. The GIL is
//! released while the engine works.

use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use numpy::{PyArray1, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use pyo3_polars::PySeries;

use super::error::{poisoned, polars_py_error, py_error};
use super::guard::guarded;
use super::handles::{Handle, Shared};
use super::input::{feature_series_of, Columns};
use super::model_bytes::model_bytes;
use super::options::options_from;
use super::scoring::class_ids;
use crate::dos::{ExampleBatch, PassiveAggressive, PassiveAggressiveOptions, TrainStats};
use crate::model::ModelRef;

fn stats_tuple(stats: TrainStats) -> (u64, u64, u64, u64, u64) {
    (stats.examples, stats.steps, stats.updates, stats.degenerate, stats.mistakes)
}

/// A multiclass DoS or linear PA classifier (classes are ids 0..C-1; Python maps labels).
#[pyclass(module = "polars_poly._internal", name = "PassiveAggressive")]
pub struct PyPassiveAggressive {
    handle: Handle,
    inner: Arc<RwLock<PassiveAggressive>>,
}

impl PyPassiveAggressive {
    pub(super) fn wrap(classifier: PassiveAggressive) -> Self {
        let inner = Arc::new(RwLock::new(classifier));
        PyPassiveAggressive {
            handle: Handle::register(&Shared::PassiveAggressive(inner.clone())),
            inner,
        }
    }

    /// The classifier, shared (for calls that take several models, e.g. averaging).
    pub(super) fn shared(&self) -> Arc<RwLock<PassiveAggressive>> {
        self.inner.clone()
    }

    /// Runs `f` on the batch of `features` (rows numbered from `first_row`).
    fn with_batch<T: Send>(
        &self,
        py: Python<'_>,
        features: Features<'_>,
        first_row: usize,
        f: impl FnOnce(&mut PassiveAggressive, &ExampleBatch) -> PyResult<T> + Send,
    ) -> PyResult<T> {
        let input = features.input()?;
        py.detach(|| {
            guarded(|| {
                let mut classifier = self.inner.write().map_err(poisoned)?;
                let batch = input.batch(classifier.n_features(), first_row)?;
                f(&mut classifier, &batch)
            })
        })
    }
}

/// A batch of the classifier's input as Python hands it over: the one sparse feature column of
/// the shared adapter ([`super::input`]), or a dense C-contiguous matrix read in place (a
/// digit stream of 784 dense values a row went through scipy and a sparse column at 3-4x the
/// cost of learning it).
#[derive(FromPyObject)]
enum Features<'py> {
    Dense64(PyReadonlyArray2<'py, f64>),
    Dense32(PyReadonlyArray2<'py, f32>),
    Columns(Vec<PySeries>),
}

/// [`Features`]' data, borrowed for use without the GIL.
enum Input<'a> {
    Dense64(&'a [f64], usize),
    Dense32(&'a [f32], usize),
    Columns(Vec<polars::prelude::Series>),
}

impl<'py> Features<'py> {
    fn input(&self) -> PyResult<Input<'_>> {
        let dense = |shape: &[usize]| shape[1];
        Ok(match self {
            Features::Dense64(x) => Input::Dense64(x.as_slice()?, dense(x.shape())),
            Features::Dense32(x) => Input::Dense32(x.as_slice()?, dense(x.shape())),
            Features::Columns(series) => {
                Input::Columns(feature_series_of(series.clone()).map_err(polars_py_error)?)
            }
        })
    }
}

impl Input<'_> {
    /// Checks the examples as [`Self::batch`] would, without building them when it can.
    fn check(&self, n_features: usize, first_row: usize) -> PyResult<()> {
        match self {
            Input::Dense64(x, width) if *width == n_features => {
                ExampleBatch::check_dense(x, n_features, first_row).map_err(py_error)
            }
            Input::Dense32(x, width) if *width == n_features => {
                ExampleBatch::check_dense(x, n_features, first_row).map_err(py_error)
            }
            Input::Columns(series) => {
                let columns = Columns::new(series, first_row).map_err(polars_py_error)?;
                columns.check_example_batch(n_features).map_err(py_error)
            }
            // A dense matrix of another width: the error building gives.
            _ => self.batch(n_features, first_row).map(drop),
        }
    }

    /// The examples, checked for a model of `n_features` inputs.
    fn batch(&self, n_features: usize, first_row: usize) -> PyResult<ExampleBatch> {
        let dense = |width: usize| -> PyResult<()> {
            if width != n_features {
                return Err(PyValueError::new_err(format!(
                    "X has {width} features, but the model is fitted on {n_features}"
                )));
            }
            Ok(())
        };
        match self {
            Input::Dense64(x, width) => {
                dense(*width)?;
                ExampleBatch::from_dense_at(x, n_features, first_row).map_err(py_error)
            }
            Input::Dense32(x, width) => {
                dense(*width)?;
                ExampleBatch::from_dense_at(x, n_features, first_row).map_err(py_error)
            }
            Input::Columns(series) => {
                let columns = Columns::new(series, first_row).map_err(polars_py_error)?;
                columns.example_batch(n_features).map_err(py_error)
            }
        }
    }
}

#[pymethods]
impl PyPassiveAggressive {
    /// A new classifier from its options (the dict form of [`PassiveAggressiveOptions`]).
    #[new]
    fn new(options: &Bound<'_, PyAny>) -> PyResult<Self> {
        let options: PassiveAggressiveOptions = options_from(options, "classifier options")?;
        Ok(PyPassiveAggressive::wrap(PassiveAggressive::new(&options).map_err(py_error)?))
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

    /// Learns a batch (one sparse feature column) in stream order, each row weighted by
    /// `weights` when given; returns the batch's stats. `first_row` numbers the batch's rows in
    /// error messages.
    #[pyo3(signature = (features, classes, first_row, weights=None))]
    fn learn(
        &self,
        py: Python<'_>,
        features: Features<'_>,
        classes: PyReadonlyArray1<'_, u32>,
        first_row: usize,
        weights: Option<PyReadonlyArray1<'_, f64>>,
    ) -> PyResult<(u64, u64, u64, u64, u64)> {
        let classes = classes.as_slice()?.to_vec();
        let weights = weights.map(|w| w.as_slice().map(<[f64]>::to_vec)).transpose()?;
        self.with_batch(py, features, first_row, move |classifier, batch| {
            let learned = classifier.learn_weighted(batch, &classes, weights.as_deref());
            learned.map(stats_tuple).map_err(py_error)
        })
    }

    /// Checks a batch as `learn` would, without learning it: a fit over several batches
    /// checks them all first, so that a bad row leaves the model as it was.
    fn check(&self, py: Python<'_>, features: Features<'_>, first_row: usize) -> PyResult<()> {
        let input = features.input()?;
        py.detach(|| {
            guarded(|| {
                let n_features = self.inner.read().map_err(poisoned)?.n_features();
                input.check(n_features, first_row)
            })
        })
    }

    /// Class ids of a batch (from the aligned averages where they exist, unless
    /// `use_average` is false), in parallel.
    #[pyo3(signature = (features, use_average=true))]
    fn predict<'py>(
        &self,
        py: Python<'py>,
        features: Features<'_>,
        use_average: bool,
    ) -> PyResult<Bound<'py, PyArray1<u32>>> {
        let series = match features {
            Features::Columns(series) => feature_series_of(series).map_err(polars_py_error)?,
            dense => {
                let ids = self.with_batch(py, dense, 0, |classifier, batch| {
                    classifier.predict(batch, use_average).map_err(py_error)
                })?;
                return Ok(PyArray1::from_vec(py, ids));
            }
        };
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
        features: Features<'_>,
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
        Ok(PyPassiveAggressive::wrap(self.inner.read().map_err(poisoned)?.clone()))
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
    m.add_class::<PyPassiveAggressive>()?;
    // The widest input a DoS/PA model takes, for the Python layer's messages.
    m.add("DOS_MAX_FEATURES", crate::dos::example::MAX_FEATURES)?;
    Ok(())
}
