//! Bindings of the polynomial expansion: the `expand` plugin expression and the functions behind
//! `expand_csr`, `output_width`, `monomial` and `column_of`.

use numpy::PyArray1;
use polars::prelude::*;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3_polars::derive::polars_expr;
use pyo3_polars::PySeries;
use serde::Deserialize;

use super::arrow_io::{
    sparse_chunks, sparse_chunks_from, sparse_dtype, sparse_series, to_polars_error,
};
use super::guard::{guarded, guarded_expr};
use crate::error::PolyError;
use crate::polynomial::{self as expand, ExpansionSpec};
use crate::sparse::{SparseIndex, SparseMatrix, SparseRows, SparseValue};
use crate::with_rows;

/// Options shared by every expansion entry point (parsed from the plugin kwargs or a dict).
#[derive(Deserialize, Clone, Copy)]
struct ExpandOptions {
    min_degree: u32,
    max_degree: u32,
    interaction_only: bool,
    include_bias: bool,
    bits: Option<u32>,
    seed: u32,
    n_features: Option<u64>,
}

impl ExpandOptions {
    fn spec(&self) -> ExpansionSpec {
        ExpansionSpec {
            min_degree: self.min_degree,
            max_degree: self.max_degree,
            interaction_only: self.interaction_only,
            include_bias: self.include_bias,
        }
    }

    fn from_dict(options: &Bound<'_, PyAny>) -> PyResult<Self> {
        let get = |key: &str| options.get_item(key);
        Ok(Self {
            min_degree: get("min_degree")?.extract()?,
            max_degree: get("max_degree")?.extract()?,
            interaction_only: get("interaction_only")?.extract()?,
            include_bias: get("include_bias")?.extract()?,
            bits: get("bits")?.extract()?,
            seed: get("seed")?.extract()?,
            n_features: get("n_features")?.extract()?,
        })
    }
}

fn expanded_output(inputs: &[Field]) -> PolarsResult<Field> {
    let name =
        inputs.first().map_or_else(|| PlSmallStr::from_static("features"), |f| f.name().clone());
    Ok(Field::new(name, sparse_dtype(DataType::UInt64, DataType::Float64)))
}

/// Expands every chunk of a sparse Series; null rows stay null.
fn expand_series_impl(
    series: &Series,
    options: ExpandOptions,
    parallel: bool,
) -> PolarsResult<Series> {
    let spec = options.spec();
    let mut parts = Vec::new();
    for chunk in sparse_chunks_from(series, 0)? {
        let matrix = with_rows!(&chunk.rows, |rows| {
            match (options.bits, options.n_features) {
                (Some(bits), _) => expand::expand_hashed(rows, &spec, bits, options.seed, parallel),
                (None, Some(n_features)) => expand::expand(rows, n_features, &spec, parallel),
                (None, None) => Err(PolyError::InvalidInput(
                    "n_features is required for the exact expansion (or pass bits)".into(),
                )),
            }
        })
        .map_err(to_polars_error)?;
        parts.push(sparse_series(series.name().clone(), matrix, chunk.validity)?);
    }
    let dtype = sparse_dtype(DataType::UInt64, DataType::Float64);
    super::arrow_io::concat_chunks(series.name().clone(), &dtype, parts)
}

/// Below this many rows a chunk is expanded on the calling thread.
const PARALLEL_MIN_ROWS: usize = 1 << 14;

/// Polynomial expansion of a sparse column (elementwise; Polars runs chunks in parallel).
#[polars_expr(output_type_func=expanded_output)]
fn expand(inputs: &[Series], kwargs: ExpandOptions) -> PolarsResult<Series> {
    guarded_expr("expand", inputs, || expand_body(inputs, kwargs))
}

fn expand_body(inputs: &[Series], kwargs: ExpandOptions) -> PolarsResult<Series> {
    // Streaming queries hand us morsels and spread them over Polars' threads; a big in-memory
    // column arrives whole, so its rows are spread over our threads (the caller's thread waits).
    let parallel = inputs[0].len() >= PARALLEL_MIN_ROWS;
    expand_series_impl(&inputs[0], kwargs, parallel)
}

use super::error::py_error;

/// `expand_csr`'s kernel call: a sparse Series in, the expanded sparse Series out.
#[pyfunction]
fn expand_series(
    py: Python<'_>,
    series: PySeries,
    options: &Bound<'_, PyAny>,
    parallel: bool,
) -> PyResult<PySeries> {
    let options = ExpandOptions::from_dict(options)?;
    let series: Series = series.into();
    let out = py.detach(|| {
        guarded(|| {
            expand_series_impl(&series, options, parallel)
                .map_err(|e| PyValueError::new_err(e.to_string()))
        })
    })?;
    Ok(PySeries(out))
}

/// Which integer type scipy gets for indptr and indices: int32 when every column and every
/// offset fits (what scipy itself picks), else int64.
fn csr_fits_int32(width: u64, total: usize) -> bool {
    width <= i32::MAX as u64 && total <= i32::MAX as usize
}

type CsrArrays<'py> = (Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyArray1<f64>>);

/// `expand_csr`'s kernel call: the sparse Series (one chunk) expanded straight into the
/// `(indptr, indices, data)` numpy arrays of a scipy CSR matrix. The exact form writes int32
/// (or int64) column indices directly; nothing is copied on the way to numpy.
#[pyfunction]
fn expand_to_csr<'py>(
    py: Python<'py>,
    series: PySeries,
    options: &Bound<'py, PyAny>,
    parallel: bool,
) -> PyResult<CsrArrays<'py>> {
    let options = ExpandOptions::from_dict(options)?;
    let series: Series = series.into();
    let series = series.rechunk();
    let expanded = py.detach(|| -> Result<_, PyErr> {
        guarded(|| {
            let chunks =
                sparse_chunks(&series).map_err(|e| PyValueError::new_err(e.to_string()))?;
            let Some(chunk) = chunks.first() else {
                return Ok(Expanded::Int64(SparseMatrix {
                    offsets: vec![0],
                    ..Default::default()
                }));
            };
            with_rows!(&chunk.rows, |rows| expand_rows_to_csr(rows, options, parallel))
                .map_err(py_error)
        })
    })?;
    Ok(expanded.into_numpy(py))
}

fn expand_rows_to_csr<I: SparseIndex, V: SparseValue>(
    rows: &SparseRows<'_, I, V>,
    options: ExpandOptions,
    parallel: bool,
) -> Result<Expanded, PolyError> {
    let spec = options.spec();
    match (options.bits, options.n_features) {
        (Some(bits), _) => expand::expand_hashed(rows, &spec, bits, options.seed, parallel)
            .map(|m| Expanded::from_hashed(m, bits)),
        (None, Some(n_features)) => {
            let plan = expand::ExpansionPlan::optimistic(rows, n_features, &spec)?;
            if csr_fits_int32(plan.layout.width, plan.total()) {
                plan.execute(rows, parallel).map(Expanded::Int32)
            } else {
                plan.execute(rows, parallel).map(Expanded::Int64)
            }
        }
        (None, None) => Err(PolyError::InvalidInput(
            "n_features is required for the exact expansion (or pass bits)".into(),
        )),
    }
}

/// An expansion in scipy's index types.
enum Expanded {
    Int32(SparseMatrix<i32, f64>),
    Int64(SparseMatrix<i64, f64>),
}

impl Expanded {
    /// Hashed columns are below 2^bits <= 2^32: int32 when they fit, else int64.
    fn from_hashed(matrix: SparseMatrix<u64, f64>, bits: u32) -> Self {
        let SparseMatrix { offsets, indices, values } = matrix;
        if csr_fits_int32(1u64 << bits, indices.len()) {
            let indices = indices.into_iter().map(|i| i as i32).collect();
            Expanded::Int32(SparseMatrix { offsets, indices, values })
        } else {
            let indices = indices.into_iter().map(|i| i as i64).collect();
            Expanded::Int64(SparseMatrix { offsets, indices, values })
        }
    }

    fn into_numpy(self, py: Python<'_>) -> CsrArrays<'_> {
        match self {
            Expanded::Int32(m) => {
                // Every offset fits: the total does (checked when choosing Int32).
                let indptr: Vec<i32> = m.offsets.iter().map(|&o| o as i32).collect();
                (
                    PyArray1::from_vec(py, indptr).into_any(),
                    PyArray1::from_vec(py, m.indices).into_any(),
                    PyArray1::from_vec(py, m.values),
                )
            }
            Expanded::Int64(m) => (
                PyArray1::from_vec(py, m.offsets).into_any(),
                PyArray1::from_vec(py, m.indices).into_any(),
                PyArray1::from_vec(py, m.values),
            ),
        }
    }
}

#[pyfunction]
fn expansion_width(n_features: u64, options: &Bound<'_, PyAny>) -> PyResult<u64> {
    let options = ExpandOptions::from_dict(options)?;
    expand::output_width(n_features, &options.spec()).map_err(py_error)
}

/// The (index, power) pairs of an output column.
#[pyfunction]
fn expansion_monomial(column: u64, options: &Bound<'_, PyAny>) -> PyResult<Vec<(u64, u32)>> {
    let options = ExpandOptions::from_dict(options)?;
    let n_features =
        options.n_features.ok_or_else(|| PyValueError::new_err("n_features is required"))?;
    expand::monomial_exponents(column, n_features, &options.spec()).map_err(py_error)
}

/// The output column of a monomial given as sorted (index, power) pairs.
#[pyfunction]
fn expansion_column(exponents: Vec<(u64, u32)>, options: &Bound<'_, PyAny>) -> PyResult<u64> {
    let options = ExpandOptions::from_dict(options)?;
    let n_features =
        options.n_features.ok_or_else(|| PyValueError::new_err("n_features is required"))?;
    expand::column_of_exponents(&exponents, n_features, &options.spec()).map_err(py_error)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(expand_series, m)?)?;
    m.add_function(wrap_pyfunction!(expand_to_csr, m)?)?;
    m.add_function(wrap_pyfunction!(expansion_width, m)?)?;
    m.add_function(wrap_pyfunction!(expansion_monomial, m)?)?;
    m.add_function(wrap_pyfunction!(expansion_column, m)?)?;
    Ok(())
}
