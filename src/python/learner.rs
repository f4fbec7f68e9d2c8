//! Bindings of the online learner: the `Learner` class (train, predict, save/load). Thin:
//! argument conversion, GIL release, error mapping; inputs through [`super::input`], scoring in
//! queries through [`super::scoring`].

use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use polars::prelude::{Float64Chunked, IntoSeries, UInt64Chunked};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use pyo3_polars::PySeries;

use super::error::{poisoned, polars_py_error as polars_py, py_error};
use super::guard::guarded;
use super::handles::{Handle, Shared};
use super::input::{
    column_names, empty_rows, feature_series_of, labels_of, reject_null_rows, Columns,
    NamespaceView,
};
use super::model_bytes::model_bytes;
use super::options::options_from;
use super::scoring::{online_ffm_pair_terms, online_predict};
use crate::apple::monomial::Identity;
use crate::apple::AppleConfig;
use crate::apple::{Ranking, ScheduleKind};
use crate::field_apple::FieldAppleConfig;
use crate::learner::features::{monomial_field, namespace_field};
use crate::learner::ffm::FfmOptions;
use crate::learner::{
    shuffled_order, Batch, FitOptions, Loss, NamespaceRows, OverflowPolicy, RowRecord,
};
use crate::model::{LearnerOptions, ModelRef, OnlineModel};

/// `fit`'s report for Python: passes run, pass losses, holdout losses, stopped early, and the
/// learning curve as (examples, Σ weight·loss, Σ weight, feature updates).
type FitResult = (usize, Vec<f64>, Vec<f64>, bool, Vec<(u64, f64, f64, u64)>);

/// A FieldApple candidate for Python: its fields (in increasing order), the factorization's
/// and the cells' z-scores, gain samples, still racing.
type CandidateRow = (Vec<usize>, f64, f64, u64, bool);

/// A hashed online learner (the engine's `Learner` with its feature enumerator).
#[pyclass(module = "polars_poly._internal", name = "Learner")]
pub struct PyLearner {
    handle: Handle,
    inner: Arc<RwLock<OnlineModel>>,
}

impl PyLearner {
    pub(super) fn wrap(learner: OnlineModel) -> Self {
        let inner = Arc::new(RwLock::new(learner));
        PyLearner { handle: Handle::register(&Shared::Online(inner.clone())), inner }
    }

    /// The model, shared (for calls that take several models, e.g. averaging).
    pub(super) fn shared(&self) -> Arc<RwLock<OnlineModel>> {
        self.inner.clone()
    }

    /// Runs `train` on the model and the batch of `input`, without the GIL and guarded
    /// (Ctrl-C, panics).
    fn with_batch<T: Send>(
        &self,
        py: Python<'_>,
        input: BatchInput,
        train: impl FnOnce(&mut OnlineModel, &Batch<'_>) -> PyResult<T> + Send,
    ) -> PyResult<T> {
        let BatchInput { features, labels, weights, first_row, in_order } = input;
        let series = feature_series_of(features).map_err(polars_py)?;
        let labels = labels_of(labels, "labels").map_err(polars_py)?;
        let weights =
            weights.map(|w| labels_of(w, "sample_weight")).transpose().map_err(polars_py)?;
        py.detach(|| {
            guarded(|| {
                let bits = self.inner.read().map_err(poisoned)?.config().string_bits();
                let columns =
                    Columns::hashing_text(&series, first_row, Some(bits)).map_err(polars_py)?;
                reject_null_rows(&columns, &series, first_row)?;
                let offsets = [0i64];
                let empty = empty_rows(&offsets).map_err(polars_py)?;
                let views = columns.namespace_views(&empty, in_order);
                let namespaces: Vec<&dyn NamespaceRows> =
                    views.iter().map(NamespaceView::rows).collect();
                let labels = labels.cont_slice().map_err(polars_py)?;
                let weights =
                    weights.as_ref().map(|w| w.cont_slice()).transpose().map_err(polars_py)?;
                let names = column_names(&series);
                let batch = Batch::new(&namespaces, labels, weights)
                    .map_err(py_error)?
                    .with_first_row(first_row)
                    .with_names(&names);
                let mut learner = self.inner.write().map_err(poisoned)?;
                train(&mut learner, &batch)
            })
        })
    }
}

/// A batch as the Python layer hands it over: the feature columns, `labels` and `weights`, its
/// rows numbered from `first_row`; `in_order`: a sparse column's entries are features in the
/// order given (`crate::learner::InOrderRows`), not made canonical.
struct BatchInput {
    features: Vec<PySeries>,
    labels: PySeries,
    weights: Option<PySeries>,
    first_row: usize,
    in_order: bool,
}

impl BatchInput {
    fn new(
        features: Vec<PySeries>,
        labels: PySeries,
        weights: Option<PySeries>,
        first_row: usize,
    ) -> Self {
        BatchInput { features, labels, weights, first_row, in_order: false }
    }
}

/// The engine options from the Python layer's dict (see `crate::model::options`).
fn learner_options(options: &Bound<'_, PyAny>) -> PyResult<LearnerOptions> {
    options_from(options, "learner options")
}

#[pymethods]
impl PyLearner {
    #[new]
    fn new(options: &Bound<'_, PyAny>) -> PyResult<Self> {
        let learner = learner_options(options)?.build().map_err(py_error)?;
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
        self.with_batch(
            py,
            BatchInput::new(features, labels, weights, first_row),
            |learner, batch| learner.learn_batch(batch).map_err(py_error),
        )
    }

    /// The checks `learn` makes before learning any row of a batch, alone: a batch learned in
    /// pieces (apple's ranking race) is refused whole.
    #[pyo3(signature = (features, labels, weights=None, first_row=0))]
    fn check_batch(
        &self,
        py: Python<'_>,
        features: Vec<PySeries>,
        labels: PySeries,
        weights: Option<PySeries>,
        first_row: usize,
    ) -> PyResult<()> {
        self.with_batch(
            py,
            BatchInput::new(features, labels, weights, first_row),
            |learner, batch| learner.check_batch(batch).map_err(py_error),
        )
    }

    /// `learn`, also returning each row's progressive prediction (made before learning it).
    /// `in_order`: a sparse column's entries are features in the order given, as Vowpal
    /// Wabbit learns its text (`crate::learner::InOrderRows`), not made canonical. `overflow`:
    /// `"refuse"` (an overflowing row is an error naming it) or `"vw"` (predicted 0 and not
    /// learned, as Vowpal Wabbit does; [`Self::take_overflowed_rows`] names them), for this
    /// batch only.
    #[pyo3(signature = (features, labels, weights=None, first_row=0, in_order=false, overflow="refuse"))]
    #[allow(clippy::too_many_arguments)] // the Python signature's keywords
    fn learn_recording(
        &self,
        py: Python<'_>,
        features: Vec<PySeries>,
        labels: PySeries,
        weights: Option<PySeries>,
        first_row: usize,
        in_order: bool,
        overflow: &str,
    ) -> PyResult<(f64, f64, PySeries)> {
        let policy = OverflowPolicy::parse(overflow).map_err(py_error)?;
        let mut predictions = Vec::new();
        let (loss, weight) = self.with_batch(
            py,
            BatchInput { in_order, ..BatchInput::new(features, labels, weights, first_row) },
            |l, b| {
                let before = l.set_overflow_policy(policy);
                let learned = l.learn_batch_recording(b, &mut predictions);
                l.set_overflow_policy(before);
                learned.map_err(py_error)
            },
        )?;
        let predictions = Float64Chunked::from_vec("progressive".into(), predictions);
        Ok((loss, weight, PySeries(predictions.into_series())))
    }

    /// The rows learning under `overflow="vw"` predicted 0 and did not learn since the last
    /// call: (row, why), in order.
    fn take_overflowed_rows(&self) -> PyResult<Vec<(usize, String)>> {
        let mut learner = self.inner.write().map_err(poisoned)?;
        Ok(learner.take_overflowed_rows().into_iter().map(|r| (r.row, r.reason)).collect())
    }

    /// One pass that learns every row but those `held_out` marks (scored only), reporting each
    /// row: (its progressive prediction, its loss times its weight, its features) as Series.
    #[pyo3(signature = (features, labels, weights=None, first_row=0, held_out=None))]
    fn learn_scored(
        &self,
        py: Python<'_>,
        features: Vec<PySeries>,
        labels: PySeries,
        weights: Option<PySeries>,
        first_row: usize,
        held_out: Option<Vec<bool>>,
    ) -> PyResult<(PySeries, PySeries, PySeries)> {
        let mut records = Vec::new();
        self.with_batch(
            py,
            BatchInput::new(features, labels, weights, first_row),
            |learner, batch| {
                let held_out = held_out.unwrap_or_else(|| vec![false; batch.n_rows()]);
                learner.learn_batch_scored(batch, &held_out, &mut records).map_err(py_error)
            },
        )?;
        let column = |name: &str, value: fn(&RowRecord) -> f64| {
            let values = records.iter().map(value).collect::<Vec<f64>>();
            PySeries(Float64Chunked::from_vec(name.into(), values).into_series())
        };
        Ok((
            column("prediction", |r| r.prediction),
            column("weighted_loss", |r| r.weighted_loss),
            column("features", |r| r.features as f64),
        ))
    }

    /// Multi-pass training over in-memory data. Returns (passes run, per-pass progressive loss,
    /// per-pass holdout loss, stopped early, the progress record (examples, Σ weight·loss,
    /// Σ weight, feature updates) at 1, 2, 4, ... examples and at each pass's end).
    /// `options`: the estimator's fit options by name (`crate::learner::FitOptions`).
    fn fit(
        &self,
        py: Python<'_>,
        features: Vec<PySeries>,
        labels: PySeries,
        weights: Option<PySeries>,
        options: &Bound<'_, PyAny>,
    ) -> PyResult<FitResult> {
        let options: FitOptions = options_from(options, "fit options")?;
        self.with_batch(py, BatchInput::new(features, labels, weights, 0), |learner, batch| {
            let report = learner.fit(batch, &options).map_err(py_error)?;
            let curve = report
                .progress
                .iter()
                .map(|p| (p.examples, p.weighted_loss, p.weight, p.feature_updates))
                .collect();
            Ok((
                report.passes_run,
                report.pass_loss,
                report.holdout_loss,
                report.stopped_early,
                curve,
            ))
        })
    }

    /// Scores (clipped predictions; margins for the logistic loss) of every row, in parallel,
    /// or with `output="probability"` the logistic link of them (the expressions' own, so the
    /// two agree to the bit). Null rows give null.
    #[pyo3(signature = (features, output = "score"))]
    fn predict(&self, py: Python<'_>, features: Vec<PySeries>, output: &str) -> PyResult<PySeries> {
        if !matches!(output, "score" | "probability") {
            return Err(PyValueError::new_err(format!(
                "output must be 'score' or 'probability', got {output:?}"
            )));
        }
        let series = feature_series_of(features).map_err(polars_py)?;
        let out = py.detach(|| {
            guarded(|| online_predict(&self.inner, &series, output, true).map_err(polars_py))
        })?;
        Ok(PySeries(out))
    }

    /// The mean `|term|` of each pair of the factorization's fields over the rows of
    /// `features` (`F * F`, row-major, pairs `a <= b`).
    fn ffm_pair_terms(&self, py: Python<'_>, features: Vec<PySeries>) -> PyResult<Vec<f64>> {
        let series = feature_series_of(features).map_err(polars_py)?;
        py.detach(|| guarded(|| online_ffm_pair_terms(&self.inner, &series).map_err(polars_py)))
    }

    /// The pairs of the factorization's fields (positions) that have a term: every `a <= b`, or
    /// those of the crosses the model computes ([`crate::learner::ffm::FfmPairs`]).
    fn ffm_term_pairs(&self) -> PyResult<Vec<(usize, usize)>> {
        let learner = self.inner.read().map_err(poisoned)?;
        Ok(learner.ffm().map(|ffm| ffm.pairs()).unwrap_or_default())
    }

    /// The model file's bytes, with `estimator` (the Python layer's own state) stored beside.
    fn to_bytes<'py>(&self, py: Python<'py>, estimator: &str) -> PyResult<Bound<'py, PyBytes>> {
        // The lock is taken with the GIL held (a learning thread never waits for the GIL while
        // holding it).
        let learner = self.inner.read().map_err(poisoned)?;
        model_bytes(py, ModelRef::Online(&learner), estimator)
    }

    /// Length of the model file without the estimator text (counted, not written): what a
    /// copy of the model costs to move or store.
    #[getter]
    fn nbytes(&self, py: Python<'_>) -> PyResult<usize> {
        py.detach(|| {
            guarded(|| {
                let learner = self.inner.read().map_err(poisoned)?;
                let length = ModelRef::Online(&learner).file("").file_len();
                Ok(length)
            })
        })
    }

    fn save(&self, py: Python<'_>, path: PathBuf, estimator: &str) -> PyResult<()> {
        py.detach(|| {
            guarded(|| {
                let learner = self.inner.read().map_err(poisoned)?;
                ModelRef::Online(&learner).save(estimator, &path).map_err(py_error)
            })
        })
    }

    /// An independent copy of the model (the engine's clone: the weight table copied, not
    /// serialized).
    fn __copy__(&self, py: Python<'_>) -> PyResult<Self> {
        let inner = self.inner.clone();
        let copy = py.detach(|| guarded(|| Ok(inner.read().map_err(poisoned)?.clone())))?;
        Ok(PyLearner::wrap(copy))
    }

    /// A copy of the model whose apple ranks later expansions' candidates by `ranking` (see
    /// `Apple::set_ranking`), or, with `linear`, never grows (`Apple::stop_growing`): the
    /// rivals of a race between rankings.
    #[pyo3(signature = (ranking, linear = false))]
    fn fork(&self, py: Python<'_>, ranking: &str, linear: bool) -> PyResult<Self> {
        let ranking = Ranking::parse(ranking).map_err(py_error)?;
        let inner = self.inner.clone();
        let copy = py.detach(|| {
            guarded(|| {
                let model = inner.read().map_err(poisoned)?;
                // A copy the machine cannot hold would abort the process (allocation failure
                // is not an error in Rust): refuse it while it can be refused.
                let bytes =
                    if model.weights().is_allocated() { model.weights().size_bytes() } else { 0 };
                crate::memory::check_fits(
                    bytes,
                    "a copy of the model",
                    "rank by one ranking (ranking='typical') or use fewer bits",
                )
                .map_err(py_error)?;
                let mut copy = model.clone();
                drop(model);
                let Some(apple) = copy.expansion_mut().apple_mut() else {
                    return Err(PyValueError::new_err("only a model with apple has a ranking"));
                };
                apple.set_ranking(ranking);
                if linear {
                    apple.stop_growing().map_err(py_error)?;
                }
                Ok(copy)
            })
        })?;
        Ok(PyLearner::wrap(copy))
    }

    /// apple's next expansion: (the learned-example count at which it happens, whether it may
    /// add parents as things stand: not while every namespace seen is left to field crosses);
    /// None without apple or past its last expansion.
    fn apple_next_expansion(&self) -> PyResult<Option<(u64, bool)>> {
        let learner = self.inner.read().map_err(poisoned)?;
        let apple = learner.expansion().apple();
        Ok(apple.and_then(|a| a.next_expansion().map(|point| (point, a.may_grow()))))
    }

    /// The id `model_predict` expressions use to find this model.
    #[getter]
    fn handle(&self) -> u64 {
        self.handle.0
    }

    /// The share of the features whose weight slot another feature shares (those seen since
    /// a growing table last grew): [`crate::learner::Learner::crowding`].
    fn table_load(&self) -> PyResult<f64> {
        Ok(self.inner.read().map_err(poisoned)?.crowding())
    }

    /// (examples learned, Σ weight·loss, Σ weight, feature updates).
    #[getter]
    fn progress(&self) -> PyResult<(u64, f64, f64, u64)> {
        let learner = self.inner.read().map_err(poisoned)?;
        let p = learner.progress();
        Ok((p.examples, p.weighted_loss, p.weight, p.feature_updates))
    }

    /// Whether any example was learned (the weight table exists; with an initial weight it
    /// exists from the start, and the examples count).
    #[getter]
    fn is_trained(&self) -> PyResult<bool> {
        let learner = self.inner.read().map_err(poisoned)?;
        let initial = learner.config().initial_weight != 0.0;
        Ok(learner.weights().is_allocated() && (!initial || learner.progress().examples > 0))
    }

    /// The effective weight of each slot (L1/L2 state applied).
    fn weights_at(&self, slots: Vec<u32>) -> PyResult<Vec<f64>> {
        let learner = self.inner.read().map_err(poisoned)?;
        Ok(slots.iter().map(|&s| learner.effective_weight(s)).collect())
    }

    /// (coefficients, intercept) of a linear model on `n` numbered features of namespace `k`,
    /// or None when two of them share a weight slot.
    fn linear_coefficients(
        &self,
        k: usize,
        n: usize,
        constant: bool,
    ) -> PyResult<Option<(Vec<f64>, f64)>> {
        Ok(self.inner.read().map_err(poisoned)?.linear_coefficients(k, n, constant))
    }

    /// The learned scale of each field, by field id (`crate::learner::features`), or None
    /// when the model has no field scales.
    fn field_scales(&self) -> PyResult<Option<Vec<f32>>> {
        let learner = self.inner.read().map_err(poisoned)?;
        Ok(learner.field_scales().map(|s| s.scales().to_vec()))
    }

    /// Hash seed of namespace `k` (feature hash = index + seed).
    fn namespace_seed(&self, k: usize) -> PyResult<u64> {
        Ok(self.inner.read().map_err(poisoned)?.config().namespace_seed(k))
    }

    /// Tells the model that `examples` learned examples follow: a growing feature set (apple)
    /// places its epochs, a large weight table the run will fill starts on huge pages.
    fn begin_run(&self, examples: u64) -> PyResult<()> {
        self.inner.write().map_err(poisoned)?.begin_run(examples).map_err(py_error)
    }

    /// apple's parents in the order they were added: (factor hashes, expansion number, effective
    /// weight of the monomial's own slot, times its field's scale). Empty for fixed expansions.
    fn apple_parents(&self) -> PyResult<Vec<(Vec<u64>, u32, f64)>> {
        let learner = self.inner.read().map_err(poisoned)?;
        let Some(apple) = learner.expansion().apple() else { return Ok(Vec::new()) };
        let mask = learner.weights().mask();
        Ok(apple
            .parents()
            .iter()
            .map(|p| {
                let slot = (p.monomial.slot_hash() & mask) as u32;
                let factors = p.monomial.factors();
                let field = if factors.len() == 1 {
                    namespace_field(namespace_of(learner.config(), factors[0]))
                } else {
                    monomial_field(learner.config().namespaces.len())
                };
                let weight = learner.effective_weight(slot) * learner.field_scale(field);
                (p.monomial.factors().to_vec(), p.expansion, weight)
            })
            .collect())
    }

    /// field-level apple's crosses in the order they were added: (fields in increasing order,
    /// learned examples when it joined). Empty for other feature sets.
    fn field_crosses(&self) -> PyResult<Vec<(Vec<usize>, u64)>> {
        let learner = self.inner.read().map_err(poisoned)?;
        let Some(fields) = learner.expansion().field_apple() else { return Ok(Vec::new()) };
        Ok(fields.crosses().iter().map(|c| (c.fields.clone(), c.added_at)).collect())
    }

    /// field-level apple's candidates, racing then paused (see [`CandidateRow`]). Empty for
    /// feature sets without field crosses, or once screening ended.
    fn field_candidates(&self) -> PyResult<Vec<CandidateRow>> {
        let learner = self.inner.read().map_err(poisoned)?;
        let Some(fields) = learner.expansion().field_apple() else { return Ok(Vec::new()) };
        Ok(fields
            .candidate_scores()
            .into_iter()
            .map(|c| (c.fields, c.z_factors, c.z_cells, c.samples, c.active))
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

/// The order `shuffle` learns `n` in-memory rows in with `seed` (the first pass of `fit`'s), as
/// a UInt64 Series: the estimators' one-pass fit streams its batches in it.
#[pyfunction]
fn shuffled_rows(n: usize, seed: u64) -> PySeries {
    let order: Vec<u64> = shuffled_order(n, seed).into_iter().map(|row| row as u64).collect();
    PySeries(UInt64Chunked::from_vec("order".into(), order).into_series())
}

/// The engine's defaults of every option the Python layer declares too, by owner (`learner`,
/// `fit`, `apple`, `field_apple`): a test holds the Python defaults to them.
#[pyfunction]
fn engine_defaults(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    #[derive(serde::Serialize)]
    struct Defaults {
        learner: LearnerOptions,
        fit: FitOptions,
        apple: AppleConfig,
        field_apple: FieldAppleConfig,
        ffm: FfmOptions,
    }
    let defaults = Defaults {
        learner: LearnerOptions::defaults(),
        fit: FitOptions::default(),
        apple: AppleConfig::default(),
        field_apple: FieldAppleConfig::default(),
        ffm: FfmOptions::default(),
    };
    pythonize::pythonize(py, &defaults).map_err(|e| PyValueError::new_err(e.to_string()))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyLearner>()?;
    m.add_function(wrap_pyfunction!(shuffled_rows, m)?)?;
    m.add_function(wrap_pyfunction!(engine_defaults, m)?)?;
    // The registries' names: what the Python layer offers, validates against and documents.
    m.add("LOSSES", Loss::NAMES.to_vec())?;
    m.add("RANKINGS", Ranking::NAMES.to_vec())?;
    m.add("SCHEDULES", ScheduleKind::NAMES.to_vec())?;
    m.add("IDENTITIES", Identity::NAMES.to_vec())?;
    Ok(())
}

/// The namespace a base feature's hash comes from: the one whose seed it is the smallest index
/// above (feature hash = index + seed).
fn namespace_of(config: &crate::learner::LearnerConfig, hash: u64) -> usize {
    (0..config.namespaces.len())
        .min_by_key(|&k| hash.wrapping_sub(config.namespace_seed(k)))
        .unwrap_or(0)
}
