//! Bindings of the polynomial expansion: the `expand` plugin expression and the functions behind
//! `expand_csr`, `output_width`, `monomial` and `column_of`.

use polars::prelude::*;
use pyo3::exceptions::{PyOverflowError, PyValueError};
use pyo3::prelude::*;
use pyo3_polars::derive::polars_expr;
use pyo3_polars::PySeries;
use serde::Deserialize;

use super::arrow_io::{sparse_chunks, sparse_dtype, sparse_series, to_polars_error};
use crate::error::PolyError;
use crate::polynomial::{self as expand, ExpansionSpec};
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
    let mut first_row = 0usize;
    for chunk in sparse_chunks(series)? {
        let n_rows = with_rows!(&chunk.rows, |rows| rows.n_rows());
        let matrix = with_rows!(&chunk.rows, |rows| {
            let rows = rows.with_first_row(first_row);
            match (options.bits, options.n_features) {
                (Some(bits), _) => {
                    expand::expand_hashed(&rows, &spec, bits, options.seed, parallel)
                }
                (None, Some(n_features)) => expand::expand(&rows, n_features, &spec, parallel),
                (None, None) => Err(PolyError::InvalidInput(
                    "n_features is required for the exact expansion (or pass bits)".into(),
                )),
            }
        })
        .map_err(to_polars_error)?;
        parts.push(sparse_series(series.name().clone(), matrix, chunk.validity)?);
        first_row += n_rows;
    }
    let dtype = sparse_dtype(DataType::UInt64, DataType::Float64);
    super::arrow_io::concat_chunks(series.name().clone(), &dtype, parts)
}

/// Polynomial expansion of a sparse column (elementwise; Polars runs chunks in parallel).
#[polars_expr(output_type_func=expanded_output)]
fn expand(inputs: &[Series], kwargs: ExpandOptions) -> PolarsResult<Series> {
    // Inside a query Polars already spreads batches over its threads: stay on this one.
    expand_series_impl(&inputs[0], kwargs, false)
}

fn py_error(err: PolyError) -> PyErr {
    match err {
        PolyError::Overflow(message) => PyOverflowError::new_err(message),
        other => PyValueError::new_err(other.to_string()),
    }
}

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
    let out = py
        .detach(|| expand_series_impl(&series, options, parallel))
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(PySeries(out))
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
    m.add_function(wrap_pyfunction!(expansion_width, m)?)?;
    m.add_function(wrap_pyfunction!(expansion_monomial, m)?)?;
    m.add_function(wrap_pyfunction!(expansion_column, m)?)?;
    Ok(())
}
