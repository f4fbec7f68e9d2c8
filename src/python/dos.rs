//! Bindings of the difference-of-squares classifier and the linear PA baseline: a thin PyO3
//! class over the engine's [`Multiclass`] (training, scoring, and the parts the Python layer
//! saves). Inputs arrive as the three CSR arrays of a scipy matrix or as a dense matrix; the GIL
//! is released while the engine works.

use numpy::{PyArray1, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::dos::{
    DosModel, ExampleBatch, LinearPa, Multiclass, PaVariant, RunningAverage, Strategy, TrainStats,
};
use crate::error::PolyResult;
use crate::sparse::SparseRows;

use super::error::py_error;

/// The two model families behind one Python class.
#[derive(Clone)]
enum Core {
    Dos(Multiclass<DosModel<f32>>),
    Linear(Multiclass<LinearPa>),
}

/// Runs `$body` with `$m` bound to the [`Multiclass`] of either family.
macro_rules! with_core {
    ($core:expr, |$m:ident| $body:expr) => {
        match $core {
            Core::Dos($m) => $body,
            Core::Linear($m) => $body,
        }
    };
}

fn parse_variant(variant: &str, c: f64) -> PyResult<PaVariant> {
    let parsed = match variant {
        "pa" => PaVariant::Pa,
        "pa1" => PaVariant::PaI { c },
        "pa2" => PaVariant::PaII { c },
        other => {
            return Err(PyValueError::new_err(format!(
                "variant must be 'pa', 'pa1' or 'pa2', got {other:?}"
            )))
        }
    };
    parsed.validate().map_err(py_error)?;
    Ok(parsed)
}

fn parse_strategy(strategy: &str) -> PyResult<Strategy> {
    match strategy {
        "ovo" => Ok(Strategy::OneVsOne),
        "ovr" => Ok(Strategy::OneVsRest),
        other => {
            Err(PyValueError::new_err(format!("multiclass must be 'ovo' or 'ovr', got {other:?}")))
        }
    }
}

/// A batch of examples as the Python layer passes it: the three arrays of a scipy CSR matrix
/// (int64 indptr and indices, float64 data), or a C-contiguous dense float32/float64 matrix, read
/// in place (no CSR round trip for dense inputs such as images).
#[derive(FromPyObject)]
enum Examples<'py> {
    Csr(PyReadonlyArray1<'py, i64>, PyReadonlyArray1<'py, i64>, PyReadonlyArray1<'py, f64>),
    DenseF32(PyReadonlyArray2<'py, f32>),
    DenseF64(PyReadonlyArray2<'py, f64>),
}

/// Engine examples from a batch whose first row is row `first_row` of the caller's input
/// (error messages name rows in the caller's numbering).
fn batch_of(
    examples: &Examples<'_>,
    n_features: usize,
    first_row: usize,
) -> PyResult<ExampleBatch> {
    match examples {
        Examples::Csr(indptr, indices, data) => {
            let (indptr, indices, data) =
                (indptr.as_slice()?, indices.as_slice()?, data.as_slice()?);
            let rows = SparseRows::new(indptr, indices, data).map_err(py_error)?;
            ExampleBatch::from_sparse(&rows.with_first_row(first_row), n_features).map_err(py_error)
        }
        Examples::DenseF32(x) => dense_batch(x, n_features, first_row),
        Examples::DenseF64(x) => dense_batch(x, n_features, first_row),
    }
}

fn dense_batch<T: numpy::Element + crate::sparse::SparseValue>(
    x: &PyReadonlyArray2<'_, T>,
    n_features: usize,
    first_row: usize,
) -> PyResult<ExampleBatch> {
    let columns = x.shape()[1];
    if columns != n_features {
        return Err(PyValueError::new_err(format!(
            "X has {columns} features, the model has {n_features}"
        )));
    }
    ExampleBatch::from_dense_at(x.as_slice()?, n_features, first_row).map_err(py_error)
}

fn stats_tuple(stats: TrainStats) -> (u64, u64, u64, u64, u64) {
    (stats.examples, stats.steps, stats.updates, stats.degenerate, stats.mistakes)
}

/// The multiclass state saved next to the binary models.
struct Parts {
    n_classes: usize,
    strategy: Strategy,
    averaging_interval: Option<u64>,
    seen: u64,
    stats: TrainStats,
}

impl Parts {
    /// A multiclass classifier from its binary models' and averages' parameters.
    fn rebuild<M: crate::dos::BinaryLearner>(
        self,
        models: &[Vec<f64>],
        averages: &[(Option<Vec<f64>>, u64)],
        build: impl Fn(&Vec<f64>) -> PolyResult<M>,
    ) -> PolyResult<Multiclass<M>> {
        let models = models.iter().map(&build).collect::<PolyResult<Vec<M>>>()?;
        let averages = averages
            .iter()
            .map(|(a, count)| {
                RunningAverage::from_parts(a.as_ref().map(&build).transpose()?, *count)
            })
            .collect::<PolyResult<Vec<_>>>()?;
        Multiclass::from_parts(
            self.n_classes,
            self.strategy,
            self.averaging_interval,
            models,
            averages,
            self.seen,
            self.stats,
        )
    }
}

/// A multiclass DoS or linear PA classifier (classes are ids 0..C-1; Python maps labels).
#[pyclass(module = "polars_poly._internal", name = "PaCore")]
pub struct PyPaCore {
    core: Core,
    variant: PaVariant,
    rank: usize,
}

#[pymethods]
impl PyPaCore {
    /// `rank = 0` builds the linear PA baseline, `rank >= 1` the DoS classifier.
    #[new]
    #[pyo3(signature = (n_classes, n_features, rank, seed, variant, c, strategy, averaging_interval))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        n_classes: usize,
        n_features: usize,
        rank: usize,
        seed: u64,
        variant: &str,
        c: f64,
        strategy: &str,
        averaging_interval: Option<u64>,
    ) -> PyResult<Self> {
        let variant = parse_variant(variant, c)?;
        let strategy = parse_strategy(strategy)?;
        let core = if rank == 0 {
            Core::Linear(
                Multiclass::linear(n_classes, n_features, variant, strategy, averaging_interval)
                    .map_err(py_error)?,
            )
        } else {
            Core::Dos(
                Multiclass::dos(
                    n_classes,
                    n_features,
                    rank,
                    seed,
                    variant,
                    strategy,
                    averaging_interval,
                )
                .map_err(py_error)?,
            )
        };
        Ok(Self { core, variant, rank })
    }

    #[getter]
    fn n_features(&self) -> usize {
        with_core!(&self.core, |m| m.n_features())
    }

    #[getter]
    fn n_classes(&self) -> usize {
        with_core!(&self.core, |m| m.n_classes())
    }

    /// (examples, steps, updates, degenerate, mistakes) since the model was created.
    fn stats(&self) -> (u64, u64, u64, u64, u64) {
        stats_tuple(with_core!(&self.core, |m| m.stats()))
    }

    /// Learns a batch in stream order; returns the batch's stats. `first_row` numbers the
    /// batch's rows in error messages.
    fn learn(
        &mut self,
        py: Python<'_>,
        examples: Examples<'_>,
        classes: PyReadonlyArray1<'_, u32>,
        first_row: usize,
    ) -> PyResult<(u64, u64, u64, u64, u64)> {
        let batch = batch_of(&examples, self.n_features(), first_row)?;
        let classes = classes.as_slice()?;
        let core = &mut self.core;
        let stats = py.detach(|| with_core!(core, |m| m.learn_batch(&batch, classes)));
        Ok(stats_tuple(stats.map_err(py_error)?))
    }

    /// Class ids of a batch (averaged models when `use_average` and an average exists).
    fn predict<'py>(
        &self,
        py: Python<'py>,
        examples: Examples<'py>,
        use_average: bool,
    ) -> PyResult<Bound<'py, PyArray1<u32>>> {
        let batch = batch_of(&examples, self.n_features(), 0)?;
        let core = &self.core;
        let ids = py.detach(|| with_core!(core, |m| m.predict(&batch, use_average)));
        Ok(PyArray1::from_vec(py, ids.map_err(py_error)?))
    }

    /// Binary-model scores, row-major (n_rows x n_models).
    fn decision_scores<'py>(
        &self,
        py: Python<'py>,
        examples: Examples<'py>,
        use_average: bool,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let batch = batch_of(&examples, self.n_features(), 0)?;
        let core = &self.core;
        let scores = py.detach(|| with_core!(core, |m| m.decision_scores(&batch, use_average)));
        Ok(PyArray1::from_vec(py, scores.map_err(py_error)?))
    }

    /// Everything needed to rebuild the classifier: (strategy, n_classes, n_features, rank,
    /// averaging interval, seen, stats, model parameters, (average parameters or None, count)).
    /// DoS parameters are U then V (row-major d x (n+1)); linear ones the weights (n+1).
    #[allow(clippy::type_complexity)]
    fn export(
        &self,
    ) -> (
        &'static str,
        usize,
        usize,
        usize,
        Option<u64>,
        u64,
        (u64, u64, u64, u64, u64),
        Vec<Vec<f64>>,
        Vec<(Option<Vec<f64>>, u64)>,
    ) {
        fn dos_params(model: &DosModel<f32>) -> Vec<f64> {
            let mut params = model.u_matrix();
            params.extend(model.v_matrix());
            params
        }
        fn linear_params(model: &LinearPa) -> Vec<f64> {
            model.weights().to_vec()
        }
        macro_rules! parts {
            ($m:expr, $params:ident) => {{
                let m = $m;
                let strategy = match m.strategy() {
                    Strategy::OneVsOne => "ovo",
                    Strategy::OneVsRest => "ovr",
                };
                let models = m.models().iter().map($params).collect();
                let averages =
                    m.averages().iter().map(|a| (a.get().map($params), a.count())).collect();
                (
                    strategy,
                    m.n_classes(),
                    m.n_features(),
                    self.rank,
                    m.averaging_interval(),
                    m.seen(),
                    stats_tuple(m.stats()),
                    models,
                    averages,
                )
            }};
        }
        match &self.core {
            Core::Dos(m) => parts!(m, dos_params),
            Core::Linear(m) => parts!(m, linear_params),
        }
    }

    /// Rebuilds a classifier from [`Self::export`]'s parts (every part is checked).
    #[staticmethod]
    #[allow(clippy::too_many_arguments)]
    fn restore(
        strategy: &str,
        n_classes: usize,
        n_features: usize,
        rank: usize,
        averaging_interval: Option<u64>,
        seen: u64,
        stats: (u64, u64, u64, u64, u64),
        models: Vec<Vec<f64>>,
        averages: Vec<(Option<Vec<f64>>, u64)>,
        variant: &str,
        c: f64,
    ) -> PyResult<Self> {
        let variant = parse_variant(variant, c)?;
        let strategy = parse_strategy(strategy)?;
        let (examples, steps, updates, degenerate, mistakes) = stats;
        let stats = TrainStats { examples, steps, updates, degenerate, mistakes };
        let parts = Parts { n_classes, strategy, averaging_interval, seen, stats };
        let core = if rank == 0 {
            let build = |w: &Vec<f64>| {
                if w.len() != n_features + 1 {
                    return crate::invalid!(
                        "linear model of {} weights, expected n_features + 1 = {}",
                        w.len(),
                        n_features + 1
                    );
                }
                LinearPa::from_weights(w, variant)
            };
            Core::Linear(parts.rebuild(&models, &averages, build).map_err(py_error)?)
        } else {
            let size = rank * (n_features + 1);
            let build = |p: &Vec<f64>| {
                if p.len() != 2 * size {
                    return crate::invalid!(
                        "DoS model of {} parameters, expected 2 x rank x (n_features + 1) = {}",
                        p.len(),
                        2 * size
                    );
                }
                DosModel::from_matrices(n_features, rank, &p[..size], &p[size..], variant)
            };
            Core::Dos(parts.rebuild(&models, &averages, build).map_err(py_error)?)
        };
        Ok(Self { core, variant, rank })
    }

    fn __copy__(&self) -> Self {
        Self { core: self.core.clone(), variant: self.variant, rank: self.rank }
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyPaCore>()?;
    Ok(())
}
