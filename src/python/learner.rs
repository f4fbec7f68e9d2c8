//! Bindings of the online learner: the `Learner` class (train, predict, save/load) and the
//! `learner_predict` plugin expression. Thin: argument conversion, GIL release, error mapping.
//!
//! The plugin expression finds its model through a *handle*: every `Learner` registers a weak
//! reference under a process-unique id, and the expression's kwargs carry only that id (kwargs
//! are pickled for every batch; the weights are not). A handle whose learner was dropped fails
//! with a clear error.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, RwLock, Weak};

use polars::prelude::*;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use pyo3_polars::derive::polars_expr;
use pyo3_polars::PySeries;
use serde::Deserialize;

use super::arrow_io::{sparse_chunks, to_polars_error, RowsChunk, SparseChunk};
use crate::apple::monomial::Identity;
use crate::apple::{Ranking, ScheduleKind};
use crate::learner::{Batch, Expansion, FitOptions, Loss, NamespaceRows};
use crate::model::{LearnerOptions, Model, ModelRef, OnlineModel};
use crate::sparse::SparseRows;
use crate::with_rows;

type Shared = Arc<RwLock<OnlineModel>>;

static REGISTRY: LazyLock<Mutex<HashMap<u64, Weak<RwLock<OnlineModel>>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));
static NEXT_HANDLE: AtomicU64 = AtomicU64::new(1);

use super::error::{poisoned, polars_py_error as polars_py, py_error};

/// A hashed online learner (the engine's `Learner` with its feature enumerator).
#[pyclass(module = "polars_poly._internal", name = "Learner")]
pub struct PyLearner {
    handle: u64,
    inner: Shared,
}

impl PyLearner {
    fn wrap(learner: OnlineModel) -> Self {
        let inner = Arc::new(RwLock::new(learner));
        let handle = NEXT_HANDLE.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut registry) = REGISTRY.lock() {
            registry.insert(handle, Arc::downgrade(&inner));
        }
        PyLearner { handle, inner }
    }
}

impl Drop for PyLearner {
    fn drop(&mut self) {
        if let Ok(mut registry) = REGISTRY.lock() {
            registry.remove(&self.handle);
        }
    }
}

/// The engine options from the Python layer's dict (see `crate::model::options`).
fn options_from(options: &Bound<'_, PyAny>) -> PyResult<LearnerOptions> {
    pythonize::depythonize(options)
        .map_err(|e| PyValueError::new_err(format!("learner options: {e}")))
}

/// The model and the estimator text of model-file bytes; only online models are learners.
fn online(stored: (Model, String)) -> PyResult<(PyLearner, String)> {
    match stored {
        (Model::Online(learner), estimator) => Ok((PyLearner::wrap(learner), estimator)),
    }
}

/// One chunk's rows as the engine's dynamic namespace rows.
fn as_namespace<'a>(rows: &'a RowsChunk<'a>) -> &'a dyn NamespaceRows {
    with_rows!(rows, |r| r as &dyn NamespaceRows)
}

/// Single-chunk copies of the feature columns (cheap when already one chunk).
fn rechunked(features: Vec<PySeries>) -> Vec<Series> {
    features.into_iter().map(|s| Series::from(s).rechunk()).collect()
}

/// Rows of every namespace, a null-row mask, and the row count; all columns must have the same
/// length.
struct Columns<'a> {
    chunks: Vec<Vec<SparseChunk<'a>>>,
    n_rows: usize,
}

impl<'a> Columns<'a> {
    fn new(series: &'a [Series]) -> PolarsResult<Self> {
        let n_rows = series.first().map_or(0, |s| s.len());
        for s in series {
            if s.len() != n_rows {
                polars_bail!(ShapeMismatch: "feature column {:?} has {} rows but {:?} has {n_rows}", s.name(), s.len(), series[0].name());
            }
        }
        let chunks = series.iter().map(sparse_chunks).collect::<PolarsResult<Vec<_>>>()?;
        Ok(Columns { chunks, n_rows })
    }

    /// `null[r]` is true when row `r` is null in any column.
    fn null_rows(&self) -> Option<Vec<bool>> {
        let mut mask: Option<Vec<bool>> = None;
        for column in &self.chunks {
            if let Some(validity) = column.first().and_then(|c| c.validity.as_ref()) {
                let m = mask.get_or_insert_with(|| vec![false; self.n_rows]);
                for (row, valid) in validity.iter().enumerate() {
                    m[row] |= !valid;
                }
            }
        }
        mask
    }

    fn namespaces<'b>(&'b self, empty: &'b SparseRows<'b, u32, f32>) -> Vec<&'b dyn NamespaceRows> {
        self.chunks
            .iter()
            .map(|c| match c.first() {
                Some(chunk) => as_namespace(&chunk.rows),
                None => empty as &dyn NamespaceRows,
            })
            .collect()
    }
}

fn labels_of(labels: PySeries, what: &str) -> PolarsResult<Float64Chunked> {
    let labels = Series::from(labels).cast(&DataType::Float64)?;
    let labels = labels.f64()?.rechunk().into_owned();
    if labels.null_count() > 0 {
        let row = (0..labels.len()).find(|&i| labels.get(i).is_none()).unwrap_or(0);
        polars_bail!(ComputeError: "{what}: row {row} is null");
    }
    Ok(labels)
}

fn reject_null_rows(columns: &Columns<'_>, series: &[Series], first_row: usize) -> PyResult<()> {
    if let Some(mask) = columns.null_rows() {
        if let Some(row) = mask.iter().position(|&null| null) {
            let name = series
                .iter()
                .find(|s| s.is_null().get(row) == Some(true))
                .map_or_else(String::new, |s| s.name().to_string());
            return Err(PyValueError::new_err(format!(
                "feature column {name:?}: row {} is null; drop or fill missing rows before training",
                first_row + row
            )));
        }
    }
    Ok(())
}

#[pymethods]
impl PyLearner {
    #[new]
    fn new(options: &Bound<'_, PyAny>) -> PyResult<Self> {
        let learner = options_from(options)?.build().map_err(py_error)?;
        Ok(PyLearner::wrap(learner))
    }

    /// The options the model was built with (the dict `new` takes).
    fn options<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let options = LearnerOptions::of(&*self.inner.read().map_err(poisoned)?);
        pythonize::pythonize(py, &options).map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// One online pass over a batch (progressive). Returns (Σ weight·loss, Σ weight).
    #[pyo3(signature = (features, labels, weights=None, first_row=0))]
    fn learn(
        &self,
        py: Python<'_>,
        features: Vec<PySeries>,
        labels: PySeries,
        weights: Option<PySeries>,
        first_row: usize,
    ) -> PyResult<(f64, f64)> {
        let series = rechunked(features);
        let labels = labels_of(labels, "labels").map_err(polars_py)?;
        let weights =
            weights.map(|w| labels_of(w, "sample_weight")).transpose().map_err(polars_py)?;
        py.detach(|| {
            let columns = Columns::new(&series).map_err(polars_py)?;
            reject_null_rows(&columns, &series, first_row)?;
            let empty_offsets = [0i64];
            let empty = SparseRows::<u32, f32>::new(&empty_offsets, &[], &[]).map_err(py_error)?;
            let namespaces = columns.namespaces(&empty);
            let labels = labels.cont_slice().map_err(polars_py)?;
            let weights =
                weights.as_ref().map(|w| w.cont_slice()).transpose().map_err(polars_py)?;
            let batch = Batch::new(&namespaces, labels, weights)
                .map_err(py_error)?
                .with_first_row(first_row);
            let mut learner = self.inner.write().map_err(poisoned)?;
            learner.learn_batch(&batch).map_err(py_error)
        })
    }

    /// Multi-pass training over in-memory data. Returns (passes run, per-pass progressive loss,
    /// per-pass holdout loss, stopped early).
    #[pyo3(signature = (features, labels, weights, passes, shuffle_seed, holdout_period, early_stopping, average_tail = 0.0))]
    #[allow(clippy::too_many_arguments)]
    fn fit(
        &self,
        py: Python<'_>,
        features: Vec<PySeries>,
        labels: PySeries,
        weights: Option<PySeries>,
        passes: usize,
        shuffle_seed: Option<u64>,
        holdout_period: usize,
        early_stopping: usize,
        average_tail: f64,
    ) -> PyResult<(usize, Vec<f64>, Vec<f64>, bool)> {
        let series = rechunked(features);
        let labels = labels_of(labels, "labels").map_err(polars_py)?;
        let weights =
            weights.map(|w| labels_of(w, "sample_weight")).transpose().map_err(polars_py)?;
        let options =
            FitOptions { passes, shuffle_seed, holdout_period, early_stopping, average_tail };
        py.detach(|| {
            let columns = Columns::new(&series).map_err(polars_py)?;
            reject_null_rows(&columns, &series, 0)?;
            let empty_offsets = [0i64];
            let empty = SparseRows::<u32, f32>::new(&empty_offsets, &[], &[]).map_err(py_error)?;
            let namespaces = columns.namespaces(&empty);
            let labels = labels.cont_slice().map_err(polars_py)?;
            let weights =
                weights.as_ref().map(|w| w.cont_slice()).transpose().map_err(polars_py)?;
            let batch = Batch::new(&namespaces, labels, weights).map_err(py_error)?;
            let mut learner = self.inner.write().map_err(poisoned)?;
            let report = learner.fit(&batch, &options).map_err(py_error)?;
            Ok((report.passes_run, report.pass_loss, report.holdout_loss, report.stopped_early))
        })
    }

    /// Scores (clipped predictions; margins for the logistic loss) of every row, in parallel.
    /// Null rows give null.
    fn predict(&self, py: Python<'_>, features: Vec<PySeries>) -> PyResult<PySeries> {
        let series = rechunked(features);
        let out =
            py.detach(|| predict_series(&self.inner, &series, "score", true)).map_err(polars_py)?;
        Ok(PySeries(out))
    }

    /// The model file's bytes, with `estimator` (the Python layer's own state) stored beside.
    fn to_bytes<'py>(&self, py: Python<'py>, estimator: &str) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = py.detach(|| -> PyResult<Vec<u8>> {
            let learner = self.inner.read().map_err(poisoned)?;
            Ok(ModelRef::Online(&learner).to_bytes(estimator))
        })?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// (learner, estimator text) from model-file bytes.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<(PyLearner, String)> {
        online(py.detach(|| Model::from_bytes(data)).map_err(py_error)?)
    }

    fn save(&self, py: Python<'_>, path: PathBuf, estimator: &str) -> PyResult<()> {
        py.detach(|| {
            let learner = self.inner.read().map_err(poisoned)?;
            ModelRef::Online(&learner).save(estimator, &path).map_err(py_error)
        })
    }

    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<(PyLearner, String)> {
        online(py.detach(|| Model::load(&path)).map_err(py_error)?)
    }

    /// The id `learner_predict` expressions use to find this model.
    #[getter]
    fn handle(&self) -> u64 {
        self.handle
    }

    /// (examples learned, Σ weight·loss, Σ weight, feature updates).
    #[getter]
    fn progress(&self) -> PyResult<(u64, f64, f64, u64)> {
        let learner = self.inner.read().map_err(poisoned)?;
        let p = learner.progress();
        Ok((p.examples, p.weighted_loss, p.weight, p.feature_updates))
    }

    /// Whether any example was learned (the weight table exists).
    #[getter]
    fn is_trained(&self) -> PyResult<bool> {
        Ok(self.inner.read().map_err(poisoned)?.weights().is_allocated())
    }

    /// The effective weight of each slot (L1/L2 state applied).
    fn weights_at(&self, slots: Vec<u32>) -> PyResult<Vec<f64>> {
        let learner = self.inner.read().map_err(poisoned)?;
        Ok(slots.iter().map(|&s| learner.effective_weight(s)).collect())
    }

    /// Hash seed of namespace `k` (feature hash = index + seed).
    fn namespace_seed(&self, k: usize) -> PyResult<u64> {
        Ok(self.inner.read().map_err(poisoned)?.config().namespace_seed(k))
    }

    /// Tells a growing feature set (apple) that `examples` learned examples follow, so that it
    /// can place its epochs; a no-op for fixed expansions.
    fn begin_run(&self, examples: u64) -> PyResult<()> {
        self.inner.write().map_err(poisoned)?.expansion_mut().begin_run(examples);
        Ok(())
    }

    /// apple's parents in the order they were added: (factor hashes, expansion number, effective
    /// weight of the monomial's own slot). Empty for fixed expansions.
    fn apple_parents(&self) -> PyResult<Vec<(Vec<u64>, u32, f64)>> {
        let learner = self.inner.read().map_err(poisoned)?;
        let Some(apple) = learner.expansion().apple() else { return Ok(Vec::new()) };
        let mask = learner.weights().mask();
        Ok(apple
            .parents()
            .iter()
            .map(|p| {
                let slot = (p.monomial.slot_hash() & mask) as u32;
                (p.monomial.factors().to_vec(), p.expansion, learner.effective_weight(slot))
            })
            .collect())
    }

    /// apple's state: (expansions done, examples learned, s̄, parents the next expansion adds);
    /// None for fixed expansions.
    fn apple_state(&self) -> PyResult<Option<(u32, u64, f64, usize)>> {
        let learner = self.inner.read().map_err(poisoned)?;
        Ok(learner.expansion().apple().map(|a| {
            let p = a.progress();
            (p.expansions, p.learned, a.average_nonzeros(), a.parents_per_expansion())
        }))
    }
}

/// Predictions of `series` (one per namespace) with the learner; `output` is "score" or
/// "probability".
fn predict_series(
    inner: &Shared,
    series: &[Series],
    output: &str,
    parallel: bool,
) -> PolarsResult<Series> {
    let name =
        series.first().map_or_else(|| PlSmallStr::from_static("prediction"), |s| s.name().clone());
    let columns = Columns::new(series)?;
    let empty_offsets = [0i64];
    let empty = SparseRows::<u32, f32>::new(&empty_offsets, &[], &[]).map_err(to_polars_error)?;
    let namespaces = columns.namespaces(&empty);
    let learner = inner.read().map_err(
        |_| polars_err!(ComputeError: "the model is unusable: a thread panicked while holding it"),
    )?;
    if namespaces.len() != learner.config().namespaces.len() {
        polars_bail!(ComputeError: "the model was trained on {} feature column(s) ({:?}) but got {}", learner.config().namespaces.len(), learner.config().namespaces, namespaces.len());
    }
    let batch = Batch::new(&namespaces, &[], None).map_err(to_polars_error)?;
    let mut out = Vec::new();
    learner.predict_batch_with(&batch, &mut out, parallel).map_err(to_polars_error)?;
    if output == "probability" {
        for p in &mut out {
            *p = OnlineModel::probability(*p);
        }
    }
    let result = match columns.null_rows() {
        Some(mask) => out
            .iter()
            .zip(mask)
            .map(|(&p, null)| (!null).then_some(p))
            .collect::<Float64Chunked>()
            .with_name(name),
        None => Float64Chunked::from_vec(name, out),
    };
    Ok(result.into_series())
}

#[derive(Deserialize)]
struct PredictKwargs {
    handle: u64,
    output: String,
}

fn prediction_output(inputs: &[Field]) -> PolarsResult<Field> {
    let name =
        inputs.first().map_or_else(|| PlSmallStr::from_static("prediction"), |f| f.name().clone());
    Ok(Field::new(name, DataType::Float64))
}

/// The model's predictions of sparse feature columns (one per namespace), elementwise.
#[polars_expr(output_type_func=prediction_output)]
fn learner_predict(inputs: &[Series], kwargs: PredictKwargs) -> PolarsResult<Series> {
    let inner = REGISTRY
        .lock()
        .ok()
        .and_then(|registry| registry.get(&kwargs.handle).and_then(Weak::upgrade))
        .ok_or_else(|| {
            polars_err!(ComputeError: "model handle {} is no longer alive: the estimator was garbage-collected or refitted; build the expression again from the fitted model", kwargs.handle)
        })?;
    if !matches!(kwargs.output.as_str(), "score" | "probability") {
        polars_bail!(InvalidOperation: "learner_predict: output must be 'score' or 'probability', got {:?}", kwargs.output);
    }
    let series: Vec<Series> = inputs.iter().map(|s| s.rechunk()).collect();
    // Inside a query Polars already spreads batches over its threads: stay on this one.
    predict_series(&inner, &series, &kwargs.output, false)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyLearner>()?;
    // The registries' names: what the Python layer offers, validates against and documents.
    m.add("LOSSES", Loss::NAMES.to_vec())?;
    m.add("RANKINGS", Ranking::NAMES.to_vec())?;
    m.add("SCHEDULES", ScheduleKind::NAMES.to_vec())?;
    m.add("IDENTITIES", Identity::NAMES.to_vec())?;
    Ok(())
}
