//! Polars expression plugins: thin wrappers that check dtypes, parse options and call the engine.
//! No algorithm lives here.

use polars::prelude::*;
use polars_arrow::array::{Array, ListArray, Utf8ViewArray};
use pyo3_polars::derive::polars_expr;
use serde::Deserialize;

use super::arrow_io::{sparse_dtype, sparse_series, to_polars_error};
use crate::hashing;
use crate::hashing::columns::FeatureColumn;
use crate::sparse::columns_to_sparse;

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

/// The Arrow arrays of an input column of [`hash_features`], resolved once, not per row.
enum ColumnArrays {
    Numeric(Float64Chunked),
    Text(StringChunked),
    /// A bag of tokens (`List(String)`), rechunked into one list array and its token array.
    Tokens(ListArray<i64>, Utf8ViewArray),
}

/// The Arrow list and token arrays of a `List(String)` column, rechunked into one.
fn token_arrays(series: &Series) -> PolarsResult<(ListArray<i64>, Utf8ViewArray)> {
    let lists = series.list()?.rechunk();
    let not_strings = || polars_err!(ComputeError: "hash_features: list items are not strings");
    let array = lists.downcast_iter().next().ok_or_else(not_strings)?;
    let tokens = array.values().as_any().downcast_ref::<Utf8ViewArray>().ok_or_else(not_strings)?;
    Ok((array.clone(), tokens.clone()))
}

fn column_arrays(series: &Series) -> PolarsResult<ColumnArrays> {
    let dtype = series.dtype();
    if dtype.is_primitive_numeric() || dtype.is_bool() {
        let values = series.cast(&DataType::Float64)?.f64()?.rechunk().into_owned();
        Ok(ColumnArrays::Numeric(values))
    } else if matches!(dtype, DataType::String) {
        Ok(ColumnArrays::Text(series.str()?.rechunk().into_owned()))
    } else if matches!(dtype, DataType::List(inner) if **inner == DataType::String) {
        let (lists, tokens) = token_arrays(series)?;
        Ok(ColumnArrays::Tokens(lists, tokens))
    } else {
        polars_bail!(InvalidOperation: "hash_features: column {:?} has dtype {dtype}; expected numeric, boolean, string or list of strings (cast categoricals to pl.String first)", series.name())
    }
}

/// Arbitrary columns -> one sparse column in 2^bits space, Vowpal Wabbit style; the hashing is
/// the engine's [`hashing::columns::hash_columns`].
#[polars_expr(output_type_func=sparse_u32_f64_output)]
fn hash_features(inputs: &[Series], kwargs: HashKwargs) -> PolarsResult<Series> {
    let arrays: Vec<ColumnArrays> =
        inputs.iter().map(column_arrays).collect::<PolarsResult<_>>()?;
    let columns: Vec<FeatureColumn<'_>> = inputs
        .iter()
        .zip(&arrays)
        .map(|(series, arrays)| {
            let name = series.name().as_str();
            match arrays {
                ColumnArrays::Numeric(numbers) => {
                    FeatureColumn::Numeric { name, value: Box::new(move |row| numbers.get(row)) }
                }
                ColumnArrays::Text(texts) => FeatureColumn::Categorical {
                    name,
                    values: Box::new(move |row, visit: &mut dyn FnMut(&str)| {
                        texts.get(row).into_iter().for_each(&mut *visit)
                    }),
                },
                ColumnArrays::Tokens(lists, tokens) => FeatureColumn::Categorical {
                    name,
                    values: Box::new(move |row, visit: &mut dyn FnMut(&str)| {
                        if lists.is_valid(row) {
                            let (start, end) = lists.offsets().start_end(row);
                            (start..end).filter_map(|i| tokens.get(i)).for_each(&mut *visit)
                        }
                    }),
                },
            }
        })
        .collect();
    let n_rows = inputs.first().map_or(0, |s| s.len());
    let matrix = hashing::columns::hash_columns(n_rows, &columns, kwargs.bits, kwargs.seed)
        .map_err(to_polars_error)?;
    sparse_series(first_name_of(inputs), matrix, None)
}
