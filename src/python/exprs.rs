//! Polars expression plugins: thin wrappers that check dtypes, parse options and call the engine.
//! No algorithm lives here.

use polars::prelude::*;
use polars_arrow::array::{Array, ListArray, Utf8ViewArray};
use pyo3_polars::derive::polars_expr;
use serde::Deserialize;

use super::arrow_io::{sparse_dtype, sparse_series, to_polars_error};
use super::guard::guarded_expr;
use super::input::{is_number, is_text, is_tokens};
use crate::hashing;
use crate::hashing::columns::FeatureColumn;
use crate::sparse::columns_to_sparse;

fn first_name(inputs: &[Field]) -> PlSmallStr {
    inputs.first().map_or_else(|| PlSmallStr::from_static("features"), |f| f.name().clone())
}

/// The plan-time check of every input column's dtype (before any batch runs): the error names
/// the expression, the column and its dtype.
fn check_dtypes(
    inputs: &[Field],
    expression: &str,
    accepts: fn(&DataType) -> bool,
    expected: &str,
) -> PolarsResult<()> {
    for field in inputs {
        let dtype = field.dtype();
        if !accepts(dtype) {
            polars_bail!(
                SchemaMismatch: "{expression}: column {:?} has dtype {dtype}; {expected}",
                field.name()
            );
        }
    }
    Ok(())
}

const TO_SPARSE_TAKES: &str = "to_sparse takes numeric, decimal and boolean columns (use \
                               hash_features for strings, categoricals and token lists)";
const HASH_FEATURES_TAKES: &str = "hash_features takes numeric, decimal, boolean, string, \
                                   categorical and enum columns, and lists or arrays of strings";

fn to_sparse_output(inputs: &[Field]) -> PolarsResult<Field> {
    check_dtypes(inputs, "to_sparse", is_number, TO_SPARSE_TAKES)?;
    Ok(Field::new(first_name(inputs), sparse_dtype(DataType::UInt32, DataType::Float64)))
}

fn hash_features_output(inputs: &[Field]) -> PolarsResult<Field> {
    check_dtypes(
        inputs,
        "hash_features",
        |dtype| is_number(dtype) || is_text(dtype) || is_tokens(dtype),
        HASH_FEATURES_TAKES,
    )?;
    Ok(Field::new(first_name(inputs), sparse_dtype(DataType::UInt32, DataType::Float64)))
}

fn numeric_as_f64(series: &Series) -> PolarsResult<Float64Chunked> {
    let dtype = series.dtype();
    if !is_number(dtype) {
        polars_bail!(
            SchemaMismatch: "to_sparse: column {:?} has dtype {dtype}; {TO_SPARSE_TAKES}",
            series.name()
        );
    }
    Ok(series.cast(&DataType::Float64)?.f64()?.rechunk().into_owned())
}

/// Numeric columns -> one sparse column: column i becomes index i; zeros and nulls are left out.
#[polars_expr(output_type_func=to_sparse_output)]
fn to_sparse(inputs: &[Series]) -> PolarsResult<Series> {
    guarded_expr("to_sparse", inputs, || to_sparse_body(inputs))
}

/// `to_sparse` of `inputs` (rows numbered from 0: a batch's).
fn to_sparse_body(inputs: &[Series]) -> PolarsResult<Series> {
    let columns: Vec<Float64Chunked> =
        inputs.iter().map(numeric_as_f64).collect::<PolarsResult<_>>()?;
    let names: Vec<&str> = inputs.iter().map(|s| s.name().as_str()).collect();
    let n_rows = inputs.first().map_or(0, |s| s.len());
    let matrix = columns_to_sparse(n_rows, &names, 0, |col, row| columns[col].get(row))
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

/// Categoricals and enums hash as the strings they stand for, arrays of strings as lists.
fn column_arrays(series: &Series) -> PolarsResult<ColumnArrays> {
    let dtype = series.dtype();
    if is_number(dtype) {
        let values = series.cast(&DataType::Float64)?.f64()?.rechunk().into_owned();
        Ok(ColumnArrays::Numeric(values))
    } else if is_text(dtype) {
        let texts = series.cast(&DataType::String)?;
        Ok(ColumnArrays::Text(texts.str()?.rechunk().into_owned()))
    } else if is_tokens(dtype) {
        let lists = series.cast(&DataType::List(Box::new(DataType::String)))?;
        let (lists, tokens) = token_arrays(&lists)?;
        Ok(ColumnArrays::Tokens(lists, tokens))
    } else {
        polars_bail!(SchemaMismatch: "hash_features: column {:?} has dtype {dtype}; {HASH_FEATURES_TAKES}", series.name())
    }
}

/// One string field (hashed categorical data, a field per call): the straight paths, chunk by
/// chunk (no copy into one chunk).
fn hash_one_text_column(series: &Series, kwargs: HashKwargs) -> PolarsResult<Series> {
    let texts = series.cast(&DataType::String)?;
    let texts = texts.str()?;
    let (name, bits, seed) = (series.name().as_str(), kwargs.bits, kwargs.seed);
    let matrix = if texts.null_count() == 0 {
        let chunks = texts.downcast_iter().map(|chunk| chunk.values_iter());
        hashing::columns::hash_one_full_categorical(name, texts.len(), chunks, bits, seed)
    } else {
        hashing::columns::hash_one_categorical(name, texts.iter(), bits, seed)
    };
    sparse_series(series.name().clone(), matrix.map_err(to_polars_error)?, None)
}

/// Arbitrary columns -> one sparse column in 2^bits space, Vowpal Wabbit style; the hashing is
/// the engine's [`hashing::columns::hash_columns`].
#[polars_expr(output_type_func=hash_features_output)]
fn hash_features(inputs: &[Series], kwargs: HashKwargs) -> PolarsResult<Series> {
    guarded_expr("hash_features", inputs, || hash_features_body(inputs, kwargs))
}

fn hash_features_body(inputs: &[Series], kwargs: HashKwargs) -> PolarsResult<Series> {
    if let [series] = inputs {
        if is_text(series.dtype()) {
            return hash_one_text_column(series, kwargs);
        }
    }
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
