//! Polars expression plugins: thin wrappers that check dtypes, parse options and call the engine.
//! No algorithm lives here.

use polars::prelude::*;
use polars_arrow::array::{Array, ListArray, Utf8ViewArray};
use pyo3_polars::derive::polars_expr;
use serde::Deserialize;

use super::arrow_io::{sparse_dtype, sparse_series, to_polars_error};
use crate::hashing;
use crate::sparse::{canonicalize_row, columns_to_sparse, SparseMatrix};

fn first_name(inputs: &[Field]) -> PlSmallStr {
    inputs.first().map_or_else(|| PlSmallStr::from_static("features"), |f| f.name().clone())
}

fn sparse_u32_f64_output(inputs: &[Field]) -> PolarsResult<Field> {
    Ok(Field::new(first_name(inputs), sparse_dtype(DataType::UInt32, DataType::Float64)))
}

fn numeric_as_f64(series: &Series) -> PolarsResult<Float64Chunked> {
    let dtype = series.dtype();
    if !(dtype.is_primitive_numeric() || dtype.is_bool()) {
        polars_bail!(
            InvalidOperation: "to_sparse: column {:?} has dtype {dtype}; only numeric and boolean columns can become sparse features (use hash_features for strings)",
            series.name()
        );
    }
    Ok(series.cast(&DataType::Float64)?.f64()?.rechunk().into_owned())
}

/// Numeric columns -> one sparse column: column i becomes index i; zeros and nulls are left out.
#[polars_expr(output_type_func=sparse_u32_f64_output)]
fn to_sparse(inputs: &[Series]) -> PolarsResult<Series> {
    let columns: Vec<Float64Chunked> =
        inputs.iter().map(numeric_as_f64).collect::<PolarsResult<_>>()?;
    let names: Vec<&str> = inputs.iter().map(|s| s.name().as_str()).collect();
    let n_rows = inputs.first().map_or(0, |s| s.len());
    let matrix = columns_to_sparse(n_rows, &names, |col, row| columns[col].get(row))
        .map_err(to_polars_error)?;
    sparse_series(first_name_of(inputs), matrix, None)
}

fn first_name_of(inputs: &[Series]) -> PlSmallStr {
    inputs.first().map_or_else(|| PlSmallStr::from_static("features"), |s| s.name().clone())
}

#[derive(Deserialize)]
struct HashKwargs {
    bits: u32,
    seed: u32,
}

/// One input column of [`hash_features`], resolved to what it contributes per row.
enum HashedColumn {
    /// (hash(column name), value) per row; nulls left out.
    Numeric { name: PlSmallStr, index: u32, values: Float64Chunked },
    /// (hash(value) seeded by hash(column name), 1.0) per row; nulls left out.
    Categorical { namespace: u32, values: StringChunked },
    /// A bag of tokens (`List(String)`): each token as a categorical value of the column, so a
    /// token repeated in a row counts its occurrences; null lists and null tokens left out.
    /// The Arrow arrays are resolved once here, not per row.
    Tokens { namespace: u32, lists: ListArray<i64>, tokens: Utf8ViewArray },
}

/// The Arrow list and token arrays of a `List(String)` column, rechunked into one.
fn token_arrays(series: &Series) -> PolarsResult<(ListArray<i64>, Utf8ViewArray)> {
    let lists = series.list()?.rechunk();
    let not_strings = || polars_err!(ComputeError: "hash_features: list items are not strings");
    let array = lists.downcast_iter().next().ok_or_else(not_strings)?;
    let tokens = array.values().as_any().downcast_ref::<Utf8ViewArray>().ok_or_else(not_strings)?;
    Ok((array.clone(), tokens.clone()))
}

/// Arbitrary columns -> one sparse column in 2^bits space, Vowpal Wabbit style (see `hashing`).
#[polars_expr(output_type_func=sparse_u32_f64_output)]
fn hash_features(inputs: &[Series], kwargs: HashKwargs) -> PolarsResult<Series> {
    if kwargs.bits == 0 || kwargs.bits > hashing::MAX_HASH_BITS {
        polars_bail!(InvalidOperation: "hash_features: bits must be in 1..={}, got {}", hashing::MAX_HASH_BITS, kwargs.bits);
    }
    let columns: Vec<HashedColumn> = inputs
        .iter()
        .map(|s| {
            let name = s.name().as_str();
            let dtype = s.dtype();
            if dtype.is_primitive_numeric() || dtype.is_bool() {
                let index = hashing::numeric_column_index(name, kwargs.seed, kwargs.bits) as u32;
                Ok(HashedColumn::Numeric { name: s.name().clone(), index, values: s.cast(&DataType::Float64)?.f64()?.rechunk().into_owned() })
            } else if matches!(dtype, DataType::String) {
                let namespace = hashing::column_namespace_hash(name, kwargs.seed);
                Ok(HashedColumn::Categorical { namespace, values: s.str()?.rechunk().into_owned() })
            } else if matches!(dtype, DataType::List(inner) if **inner == DataType::String) {
                let namespace = hashing::column_namespace_hash(name, kwargs.seed);
                let (lists, tokens) = token_arrays(s)?;
                Ok(HashedColumn::Tokens { namespace, lists, tokens })
            } else {
                polars_bail!(InvalidOperation: "hash_features: column {name:?} has dtype {dtype}; expected numeric, boolean, string or list of strings (cast categoricals to pl.String first)")
            }
        })
        .collect::<PolarsResult<_>>()?;
    let n_rows = inputs.first().map_or(0, |s| s.len());
    let mut out: SparseMatrix<u32, f64> =
        SparseMatrix::with_capacity(n_rows, n_rows * inputs.len());
    let mut indices: Vec<u64> = Vec::with_capacity(inputs.len());
    let mut values: Vec<f64> = Vec::with_capacity(inputs.len());
    let mut canonical = Vec::with_capacity(inputs.len());
    for row in 0..n_rows {
        indices.clear();
        values.clear();
        for column in &columns {
            match column {
                HashedColumn::Numeric { name, index, values: column_values } => {
                    if let Some(value) = column_values.get(row) {
                        if !value.is_finite() {
                            polars_bail!(ComputeError: "hash_features: column {name:?}, row {row}: non-finite value {value}");
                        }
                        indices.push(u64::from(*index));
                        values.push(value);
                    }
                }
                HashedColumn::Categorical { namespace, values: column_values } => {
                    if let Some(text) = column_values.get(row) {
                        indices.push(hashing::categorical_index(text, *namespace, kwargs.bits));
                        values.push(1.0);
                    }
                }
                HashedColumn::Tokens { namespace, lists, tokens } => {
                    if lists.is_valid(row) {
                        let (start, end) = lists.offsets().start_end(row);
                        for token in (start..end).filter_map(|i| tokens.get(i)) {
                            indices.push(hashing::categorical_index(
                                token,
                                *namespace,
                                kwargs.bits,
                            ));
                            values.push(1.0);
                        }
                    }
                }
            }
        }
        // Colliding hashes are summed, like any duplicate index (the data model's rule).
        canonicalize_row(&indices, &values, None, row, &mut canonical).map_err(to_polars_error)?;
        for &(index, value) in &canonical {
            out.push(index as u32, value);
        }
        out.end_row();
    }
    sparse_series(first_name_of(inputs), out, None)
}
