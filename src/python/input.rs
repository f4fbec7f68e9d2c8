//! The one input adapter of the learners' bindings: feature columns (one per namespace), labels
//! and weights, as Polars Series from the Python layer, to the engine's rows. Every estimator's
//! Python side turns whatever the user gave (scipy, numpy, frames) into these columns first
//! (`polars_poly._input`), so there is one conversion path.
//!
//! A feature column is sparse (`List<Struct{index, value}>`), or, for the online learners, a
//! string column (String, Categorical, Enum) or a column of token lists (lists or arrays of
//! them), which the engine hashes as it reads it with the model's `bits`
//! ([`crate::learner::text`]), or a struct of numbers (a frame's numeric columns together),
//! read where they lie ([`crate::learner::numbers`]).

use polars::prelude::*;
use polars_arrow::array::{Array, ListArray, PrimitiveArray, Utf8ViewArray};
use polars_arrow::compute::utils::combine_validities_and;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3_polars::PySeries;

use super::arrow_io::{sparse_chunks_from, sparse_dtypes, to_polars_error, RowsChunk, SparseChunk};
use crate::dos::ExampleBatch;
use crate::error::PolyResult;
use crate::learner::{HashedStrings, InOrderRows, NamespaceRows, NumberRows, Numbers, Strings};
use crate::sparse::SparseRows;
use crate::with_rows;

/// One chunk's rows as the engine's dynamic namespace rows.
fn as_namespace<'a>(rows: &'a RowsChunk<'a>) -> &'a dyn NamespaceRows {
    with_rows!(rows, |r| r as &dyn NamespaceRows)
}

/// Numbers of every width, Decimal included, and booleans: the columns that are values.
pub fn is_number(dtype: &DataType) -> bool {
    dtype.is_numeric() || dtype.is_bool()
}

/// A struct of numbers: a namespace of its fields' values, field `k` the feature of index `k`.
/// The first field of a struct of numbers that is not a number (a struct of some numbers and
/// something else), `None` for any other dtype.
fn numbers_field(dtype: &DataType) -> Option<&Field> {
    match dtype {
        DataType::Struct(fields) if fields.iter().any(|f| is_number(f.dtype())) => {
            fields.iter().find(|f| !is_number(f.dtype()))
        }
        _ => None,
    }
}

pub fn is_numbers(dtype: &DataType) -> bool {
    matches!(dtype, DataType::Struct(fields) if fields.iter().all(|f| is_number(f.dtype())))
}

/// Strings and the dtypes that are strings with a dictionary (Categorical, Enum).
pub fn is_text(dtype: &DataType) -> bool {
    matches!(dtype, DataType::String | DataType::Categorical(..) | DataType::Enum(..))
}

/// A bag of tokens: a list or an array of text.
pub fn is_tokens(dtype: &DataType) -> bool {
    match dtype {
        DataType::List(inner) | DataType::Array(inner, _) => is_text(inner),
        _ => false,
    }
}

/// A feature column as the engine reads it: one chunk, a categorical or enum column as the
/// strings it stands for, and a bag of tokens as a list of strings (cheap when already so).
pub fn feature_series(series: &Series) -> PolarsResult<Series> {
    let dtype = series.dtype();
    let series = if matches!(dtype, DataType::Categorical(..) | DataType::Enum(..)) {
        series.cast(&DataType::String)?
    } else if is_tokens(dtype) && *dtype != DataType::List(Box::new(DataType::String)) {
        series.cast(&DataType::List(Box::new(DataType::String)))?
    } else {
        series.clone()
    };
    Ok(series.rechunk())
}

/// The feature columns as [`feature_series`].
pub fn feature_series_of(features: Vec<PySeries>) -> PolarsResult<Vec<Series>> {
    features.into_iter().map(|s| feature_series(&Series::from(s))).collect()
}

/// One chunk of a string column, read in place.
struct ViewTexts<'a> {
    array: &'a Utf8ViewArray,
    all_valid: bool,
}

impl Strings for ViewTexts<'_> {
    const ONE_A_ROW: bool = true;

    fn n_rows(&self) -> usize {
        self.array.len()
    }

    #[inline]
    fn for_each(&self, row: usize, mut visit: impl FnMut(&str)) {
        if self.all_valid || self.array.is_valid(row) {
            visit(self.array.value(row));
        }
    }
}

/// One chunk of a column of token lists, read in place.
struct ListTokens<'a> {
    lists: &'a ListArray<i64>,
    tokens: &'a Utf8ViewArray,
}

impl Strings for ListTokens<'_> {
    const ONE_A_ROW: bool = false;

    fn n_rows(&self) -> usize {
        self.lists.len()
    }

    fn for_each(&self, row: usize, mut visit: impl FnMut(&str)) {
        if self.lists.is_valid(row) {
            let (start, end) = self.lists.offsets().start_end(row);
            (start..end).filter_map(|i| self.tokens.get(i)).for_each(&mut visit);
        }
    }
}

/// A struct column's numeric fields as f64 arrays of one chunk each, the struct's own missing
/// rows folded into each field's (a missing row has no features).
struct StructNumbers {
    fields: Vec<PrimitiveArray<f64>>,
    names: Vec<PlSmallStr>,
    n_rows: usize,
}

impl Numbers for StructNumbers {
    fn n_rows(&self) -> usize {
        self.n_rows
    }

    fn n_columns(&self) -> usize {
        self.fields.len()
    }

    fn name(&self, column: usize) -> &str {
        self.names[column].as_str()
    }

    #[inline]
    fn get(&self, column: usize, row: usize) -> Option<f64> {
        self.fields[column].get(row)
    }

    fn raw_values(&self, column: usize) -> &[f64] {
        self.fields[column].values().as_slice()
    }
}

/// A feature column's rows: a sparse column's chunks, a string or token-list column hashed
/// as it is read, or a struct of numbers.
enum ColumnRows<'a> {
    Sparse(Vec<SparseChunk<'a>>),
    Text(HashedStrings<ViewTexts<'a>>),
    Tokens(HashedStrings<ListTokens<'a>>),
    Numbers(NumberRows<StructNumbers>),
}

/// The feature columns' names, one per namespace (errors of invalid entries name them).
pub fn column_names(series: &[Series]) -> Vec<String> {
    series.iter().map(|s| s.name().to_string()).collect()
}

/// Rows of every namespace and the row count; all columns must have the same length.
pub struct Columns<'a> {
    columns: Vec<ColumnRows<'a>>,
    pub n_rows: usize,
}

impl<'a> Columns<'a> {
    /// The sparse columns' rows, numbered from `first_row` in error messages (the series hold a
    /// batch of a longer input whose row `first_row` is their row 0).
    pub fn new(series: &'a [Series], first_row: usize) -> PolarsResult<Self> {
        Self::hashing_text(series, first_row, None)
    }

    /// The columns' rows as [`Columns::new`], string and token-list columns hashed into `bits`
    /// bits when `bits` is given (a model's; else they are refused as not sparse).
    pub fn hashing_text(
        series: &'a [Series],
        first_row: usize,
        bits: Option<u32>,
    ) -> PolarsResult<Self> {
        let n_rows = series.first().map_or(0, |s| s.len());
        for s in series {
            if s.len() != n_rows {
                polars_bail!(ShapeMismatch: "feature column {:?} has {} rows but {:?} has {n_rows}", s.name(), s.len(), series[0].name());
            }
        }
        let columns = series
            .iter()
            .map(|s| match bits {
                Some(bits) if s.dtype() == &DataType::String => text_rows(s, bits),
                Some(bits) if is_tokens(s.dtype()) => token_rows(s, bits),
                Some(_) if is_numbers(s.dtype()) => number_rows(s, first_row),
                Some(_) if numbers_field(s.dtype()).is_some() => {
                    // The numeric columns' struct (`features`) with a field that is not a number:
                    // name the column the user gave.
                    let (name, dtype) =
                        numbers_field(s.dtype()).map_or(("", &DataType::Null), |f| (f.name().as_str(), f.dtype()));
                    polars_bail!(SchemaMismatch: "numeric feature column {:?} has dtype {}: the numeric columns must hold numbers or booleans (cast it, or train with it as a string column)", name, dtype)
                }
                Some(_) if sparse_dtypes(s.field().as_ref()).is_err() => {
                    polars_bail!(SchemaMismatch: "column {:?} has dtype {}: a feature column is sparse (List(Struct{{index, value}})), a string, categorical or enum column, a list of strings or a struct of numbers", s.name(), s.dtype())
                }
                _ => Ok(ColumnRows::Sparse(sparse_chunks_from(s, first_row)?)),
            })
            .collect::<PolarsResult<Vec<_>>>()?;
        Ok(Columns { columns, n_rows })
    }

    /// `null[r]` is true when row `r` is null in any sparse column (a missing string is no
    /// feature, not a null row).
    pub fn null_rows(&self) -> Option<Vec<bool>> {
        let mut mask: Option<Vec<bool>> = None;
        for column in &self.columns {
            let ColumnRows::Sparse(column) = column else { continue };
            if let Some(validity) = column.first().and_then(|c| c.validity.as_ref()) {
                let m = mask.get_or_insert_with(|| vec![false; self.n_rows]);
                for (row, valid) in validity.iter().enumerate() {
                    m[row] |= !valid;
                }
            }
        }
        mask
    }

    /// Each column's rows (`empty` for a column of no chunk).
    pub fn namespaces<'b>(
        &'b self,
        empty: &'b SparseRows<'b, u32, f32>,
    ) -> Vec<&'b dyn NamespaceRows> {
        self.columns
            .iter()
            .map(|column| match column {
                ColumnRows::Sparse(chunks) => match chunks.first() {
                    Some(chunk) => as_namespace(&chunk.rows),
                    None => empty as &dyn NamespaceRows,
                },
                ColumnRows::Text(rows) => rows as &dyn NamespaceRows,
                ColumnRows::Tokens(rows) => rows as &dyn NamespaceRows,
                ColumnRows::Numbers(rows) => rows as &dyn NamespaceRows,
            })
            .collect()
    }

    /// Each column's rows as [`Columns::namespaces`]; with `in_order`, a sparse column's
    /// entries kept as features in the order given ([`InOrderRows`]: a repeated feature is two,
    /// learned in turn), as Vowpal Wabbit learns its text (the command line's one-against-all).
    pub fn namespace_views<'b>(
        &'b self,
        empty: &'b SparseRows<'b, u32, f32>,
        in_order: bool,
    ) -> Vec<NamespaceView<'b>> {
        self.namespaces(empty)
            .into_iter()
            .zip(&self.columns)
            .map(|(rows, column)| match (in_order, column) {
                (true, ColumnRows::Sparse(chunks)) if !chunks.is_empty() => {
                    NamespaceView::InOrder(with_rows!(&chunks[0].rows, |r| {
                        Box::new(InOrderRows(*r)) as Box<dyn NamespaceRows + 'b>
                    }))
                }
                _ => NamespaceView::Own(rows),
            })
            .collect()
    }

    /// The one column's rows as a passive-aggressive batch of width `n_features`.
    pub fn example_batch(&self, n_features: usize) -> PolyResult<ExampleBatch> {
        match self.single_chunk()? {
            Some(chunk) => {
                with_rows!(&chunk.rows, |rows| ExampleBatch::from_sparse(rows, n_features))
            }
            None => ExampleBatch::new(n_features),
        }
    }

    /// Checks the one column's rows as [`Self::example_batch`] would, without building it.
    pub fn check_example_batch(&self, n_features: usize) -> PolyResult<()> {
        match self.single_chunk()? {
            Some(chunk) => {
                with_rows!(&chunk.rows, |rows| ExampleBatch::check_sparse(rows, n_features))
            }
            None => ExampleBatch::new(n_features).map(drop),
        }
    }

    fn single_chunk(&self) -> PolyResult<Option<&SparseChunk<'a>>> {
        match self.columns.as_slice() {
            [ColumnRows::Sparse(chunks)] => Ok(chunks.first()),
            columns => crate::invalid!(
                "the classifier takes one sparse feature column, got {} column(s)",
                columns.len()
            ),
        }
    }
}

/// A namespace's rows as [`Columns::namespace_views`] gives them: the column's own, or a
/// sparse column's read in order.
pub enum NamespaceView<'b> {
    Own(&'b dyn NamespaceRows),
    InOrder(Box<dyn NamespaceRows + 'b>),
}

impl NamespaceView<'_> {
    pub fn rows(&self) -> &dyn NamespaceRows {
        match self {
            NamespaceView::Own(rows) => *rows,
            NamespaceView::InOrder(rows) => rows.as_ref(),
        }
    }
}

/// A string column's rows (one chunk: see [`feature_series`]), hashed into `bits` bits.
fn text_rows(series: &Series, bits: u32) -> PolarsResult<ColumnRows<'_>> {
    let texts = series.str()?;
    let [array] = texts.downcast_iter().collect::<Vec<_>>()[..] else {
        polars_bail!(ComputeError: "column {:?}: a string column of {} chunks (one expected)", series.name(), texts.chunks().len());
    };
    let texts = ViewTexts { array, all_valid: array.null_count() == 0 };
    let rows = HashedStrings::new(series.name().as_str(), texts, bits).map_err(to_polars_error)?;
    Ok(ColumnRows::Text(rows))
}

/// A token-list column's rows (one chunk of `List(String)`: see [`feature_series`]), hashed
/// into `bits` bits.
fn token_rows(series: &Series, bits: u32) -> PolarsResult<ColumnRows<'_>> {
    let name = series.name();
    let lists = series.list()?;
    let [lists] = lists.downcast_iter().collect::<Vec<_>>()[..] else {
        polars_bail!(ComputeError: "column {name:?}: a token-list column of {} chunks (one expected)", lists.chunks().len());
    };
    let Some(tokens) = lists.values().as_any().downcast_ref::<Utf8ViewArray>() else {
        polars_bail!(ComputeError: "column {name:?}: list items are not strings");
    };
    let rows = HashedStrings::new(name.as_str(), ListTokens { lists, tokens }, bits)
        .map_err(to_polars_error)?;
    Ok(ColumnRows::Tokens(rows))
}

/// A struct column of numbers' rows (numbered from `first_row`; a NaN, infinite or
/// out-of-range value is an error naming its field and row: [`NumberRows::new`]).
fn number_rows(series: &Series, first_row: usize) -> PolarsResult<ColumnRows<'static>> {
    let numbers = series.struct_()?.rechunk();
    let rows = numbers.downcast_iter().next().and_then(|array| array.validity().cloned());
    let names = numbers.struct_fields().iter().map(|f| f.name().clone()).collect::<Vec<_>>();
    if u32::try_from(names.len()).is_err() {
        polars_bail!(ComputeError: "column {:?}: {} fields do not fit UInt32 indices", series.name(), names.len());
    }
    let fields = numbers
        .fields_as_series()
        .iter()
        .map(|field| {
            let field = field.cast(&DataType::Float64)?.rechunk();
            let array = field.f64()?.downcast_iter().next().cloned();
            let array = array.unwrap_or_else(|| PrimitiveArray::new_empty(ArrowDataType::Float64));
            // Once here, rather than a check of the struct's validity per value read.
            let valid = combine_validities_and(array.validity(), rows.as_ref());
            Ok(array.with_validity(valid))
        })
        .collect::<PolarsResult<Vec<_>>>()?;
    let numbers = StructNumbers { fields, names, n_rows: series.len() };
    let rows = NumberRows::new(numbers, first_row).map_err(to_polars_error)?;
    Ok(ColumnRows::Numbers(rows))
}

/// Labels (or weights) as one contiguous f64 chunk; a null is an error naming its row.
pub fn labels_of(labels: PySeries, what: &str) -> PolarsResult<Float64Chunked> {
    let labels = Series::from(labels).cast(&DataType::Float64)?;
    let labels = labels.f64()?.rechunk().into_owned();
    if labels.null_count() > 0 {
        let row = (0..labels.len()).find(|&i| labels.get(i).is_none()).unwrap_or(0);
        polars_bail!(ComputeError: "{what}: row {row} is null");
    }
    Ok(labels)
}

/// Refuses a null row of any feature column, naming the column and row.
pub fn reject_null_rows(
    columns: &Columns<'_>,
    series: &[Series],
    first_row: usize,
) -> PyResult<()> {
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

/// Sets null rows of `out` (one value per row) to null in the result column.
pub fn with_nulls<T>(columns: &Columns<'_>, name: PlSmallStr, out: Vec<T::Native>) -> Series
where
    T: PolarsNumericType,
    ChunkedArray<T>: IntoSeries,
{
    let result: ChunkedArray<T> = match columns.null_rows() {
        Some(mask) => out
            .into_iter()
            .zip(mask)
            .map(|(p, null)| (!null).then_some(p))
            .collect::<ChunkedArray<T>>()
            .with_name(name),
        None => ChunkedArray::<T>::from_vec(name, out),
    };
    result.into_series()
}

pub fn empty_rows(offsets: &[i64; 1]) -> PolarsResult<SparseRows<'_, u32, f32>> {
    SparseRows::<u32, f32>::new(offsets, &[], &[]).map_err(to_polars_error)
}
