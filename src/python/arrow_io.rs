//! Between Polars sparse columns (`List<Struct{index, value}>`) and the engine's
//! [`SparseRows`] / [`SparseMatrix`]. Reading borrows the Arrow buffers (no copy); writing moves
//! the engine's vectors into Arrow arrays (no copy).

use polars::prelude::*;
use polars_arrow::array::{Array, ListArray, PrimitiveArray, StructArray};
use polars_arrow::bitmap::Bitmap;
use polars_arrow::datatypes::{ArrowDataType, Field as ArrowField};
use polars_arrow::offset::OffsetsBuffer;
use polars_arrow::types::NativeType;

use crate::error::PolyError;
use crate::sparse::{SparseMatrix, SparseRows};

/// One Arrow chunk of a sparse column, typed by its (index, value) physical types.
#[derive(Clone, Copy)]
pub enum RowsChunk<'a> {
    U32F32(SparseRows<'a, u32, f32>),
    U32F64(SparseRows<'a, u32, f64>),
    U64F32(SparseRows<'a, u64, f32>),
    U64F64(SparseRows<'a, u64, f64>),
    I32F64(SparseRows<'a, i32, f64>),
    I64F64(SparseRows<'a, i64, f64>),
}

impl RowsChunk<'_> {
    /// The same rows, numbered from `first_row` in error messages.
    pub fn with_first_row(self, first_row: usize) -> Self {
        match self {
            RowsChunk::U32F32(rows) => RowsChunk::U32F32(rows.with_first_row(first_row)),
            RowsChunk::U32F64(rows) => RowsChunk::U32F64(rows.with_first_row(first_row)),
            RowsChunk::U64F32(rows) => RowsChunk::U64F32(rows.with_first_row(first_row)),
            RowsChunk::U64F64(rows) => RowsChunk::U64F64(rows.with_first_row(first_row)),
            RowsChunk::I32F64(rows) => RowsChunk::I32F64(rows.with_first_row(first_row)),
            RowsChunk::I64F64(rows) => RowsChunk::I64F64(rows.with_first_row(first_row)),
        }
    }
}

/// Runs `$body` with `$rows` bound to the concrete `SparseRows` of a [`RowsChunk`].
#[macro_export]
macro_rules! with_rows {
    ($chunk:expr, |$rows:ident| $body:expr) => {
        match $chunk {
            $crate::python::arrow_io::RowsChunk::U32F32($rows) => $body,
            $crate::python::arrow_io::RowsChunk::U32F64($rows) => $body,
            $crate::python::arrow_io::RowsChunk::U64F32($rows) => $body,
            $crate::python::arrow_io::RowsChunk::U64F64($rows) => $body,
            $crate::python::arrow_io::RowsChunk::I32F64($rows) => $body,
            $crate::python::arrow_io::RowsChunk::I64F64($rows) => $body,
        }
    };
}

/// A chunk's rows plus which rows are null (a null row stays null through every expression).
pub struct SparseChunk<'a> {
    pub rows: RowsChunk<'a>,
    pub validity: Option<Bitmap>,
}

pub fn to_polars_error(err: PolyError) -> PolarsError {
    PolarsError::ComputeError(err.to_string().into())
}

/// A dtype written out with its struct fields (Polars' own display hides them).
fn describe_dtype(dtype: &DataType) -> String {
    match dtype {
        DataType::List(inner) => format!("List({})", describe_dtype(inner)),
        DataType::Struct(fields) => {
            let fields: Vec<String> = fields
                .iter()
                .map(|f| format!("{}: {}", f.name(), describe_dtype(f.dtype())))
                .collect();
            format!("Struct{{{}}}", fields.join(", "))
        }
        other => format!("{other:?}"),
    }
}

/// Checks that `field` is a sparse column and returns (index dtype, value dtype).
pub fn sparse_dtypes(field: &Field) -> PolarsResult<(DataType, DataType)> {
    let bad = || {
        polars_err!(
            SchemaMismatch: "column {:?} is not a sparse column: expected List(Struct{{index: UInt32|UInt64, value: Float32|Float64}}) (or Int32|Int64 indices with Float64 values), got {}",
            field.name(), describe_dtype(field.dtype())
        )
    };
    let DataType::List(inner) = field.dtype() else { return Err(bad()) };
    let DataType::Struct(fields) = inner.as_ref() else { return Err(bad()) };
    let find =
        |name: &str| fields.iter().find(|f| f.name().as_str() == name).map(|f| f.dtype().clone());
    let (Some(index), Some(value)) = (find("index"), find("value")) else { return Err(bad()) };
    if fields.len() != 2 {
        return Err(bad());
    }
    let index_ok =
        matches!(index, DataType::UInt32 | DataType::UInt64 | DataType::Int32 | DataType::Int64);
    let value_ok = matches!(value, DataType::Float32 | DataType::Float64);
    let int_f32 = matches!(index, DataType::Int32 | DataType::Int64) && value == DataType::Float32;
    if !index_ok || !value_ok || int_f32 {
        return Err(bad());
    }
    Ok((index, value))
}

/// The first row of a chunk whose entries (positions `offsets[0]..offsets[n]` of the flat
/// arrays) hold a position `validity` marks null, numbered from `first_row`; entries outside
/// the chunk's window (a sliced column) are not its business.
fn first_null_row(validity: Option<&Bitmap>, offsets: &[i64], first_row: usize) -> Option<usize> {
    let validity = validity.filter(|v| v.unset_bits() > 0)?;
    let (start, end) = (offsets[0] as usize, offsets[offsets.len() - 1] as usize);
    let position = (start..end).find(|&p| !validity.get_bit(p))?;
    Some(first_row + offsets.partition_point(|&o| o as usize <= position) - 1)
}

fn primitive<'a, T: NativeType>(
    array: &'a dyn Array,
    offsets: &[i64],
    (column, first_row): (&str, usize),
    what: &str,
) -> PolarsResult<&'a [T]> {
    let array = array.as_any().downcast_ref::<PrimitiveArray<T>>().ok_or_else(
        || polars_err!(ComputeError: "column {column:?}: unexpected {what} array type"),
    )?;
    if let Some(row) = first_null_row(array.validity(), offsets, first_row) {
        polars_bail!(ComputeError: "column {column:?}, row {row}: sparse entries must not have a \
            null {what} (a null row is a missing row; drop or fill the entry)");
    }
    Ok(array.values().as_slice())
}

/// Borrows every chunk of a sparse column as engine rows.
/// The chunks of a sparse Series, their rows numbered from `first_row` in error messages (the
/// Series' row 0 is the caller's row `first_row`, e.g. a batch of a longer stream).
pub fn sparse_chunks_from(series: &Series, first_row: usize) -> PolarsResult<Vec<SparseChunk<'_>>> {
    let (index_dtype, value_dtype) = sparse_dtypes(series.field().as_ref())?;
    let name = series.name().as_str();
    let list = series.list()?;
    let mut chunks = Vec::with_capacity(list.chunks().len());
    let mut next = first_row;
    for array in list.downcast_iter() {
        let entries = array.values().as_any().downcast_ref::<StructArray>().ok_or_else(
            || polars_err!(ComputeError: "column {name:?}: list items are not structs"),
        )?;
        let offsets: &[i64] = array.offsets().buffer().as_slice();
        if let Some(row) = first_null_row(entries.validity(), offsets, next) {
            polars_bail!(ComputeError: "column {name:?}, row {row}: a sparse row contains a null \
                entry (null struct); drop or fill it first");
        }
        let position = |field: &str| {
            entries.fields().iter().position(|f| f.name.as_str() == field).ok_or_else(
                || polars_err!(ComputeError: "column {name:?}: struct field {field:?} missing"),
            )
        };
        let index_array = entries.values()[position("index")?].as_ref();
        let value_array = entries.values()[position("value")?].as_ref();
        let at = (name, next);
        macro_rules! rows {
            ($variant:ident, $i:ty, $v:ty) => {
                RowsChunk::$variant(
                    SparseRows::from_ordered_offsets(
                        offsets,
                        primitive::<$i>(index_array, offsets, at, "index")?,
                        primitive::<$v>(value_array, offsets, at, "value")?,
                    )
                    .map_err(to_polars_error)?,
                )
            };
        }
        let rows = match (&index_dtype, &value_dtype) {
            (DataType::UInt32, DataType::Float32) => rows!(U32F32, u32, f32),
            (DataType::UInt32, DataType::Float64) => rows!(U32F64, u32, f64),
            (DataType::UInt64, DataType::Float32) => rows!(U64F32, u64, f32),
            (DataType::UInt64, DataType::Float64) => rows!(U64F64, u64, f64),
            (DataType::Int32, DataType::Float64) => rows!(I32F64, i32, f64),
            (DataType::Int64, DataType::Float64) => rows!(I64F64, i64, f64),
            _ => unreachable!("sparse_dtypes admits only the listed pairs"),
        };
        let n_rows = with_rows!(&rows, |rows| rows.n_rows());
        let rows = rows.with_first_row(next);
        next += n_rows;
        let validity = array.validity().filter(|v| v.unset_bits() > 0).cloned();
        chunks.push(SparseChunk { rows, validity });
    }
    Ok(chunks)
}

/// The chunks of a sparse Series, its rows numbered from 0.
pub fn sparse_chunks(series: &Series) -> PolarsResult<Vec<SparseChunk<'_>>> {
    sparse_chunks_from(series, 0)
}

/// The Polars dtype of a sparse column with the given index and value types.
pub fn sparse_dtype(index: DataType, value: DataType) -> DataType {
    DataType::List(Box::new(DataType::Struct(vec![
        Field::new("index".into(), index),
        Field::new("value".into(), value),
    ])))
}

/// Moves an engine matrix into a one-chunk sparse Series (rows flagged in `validity` are null).
pub fn sparse_series<I: NativeType, V: NativeType>(
    name: PlSmallStr,
    matrix: SparseMatrix<I, V>,
    validity: Option<Bitmap>,
) -> PolarsResult<Series> {
    let index = PrimitiveArray::<I>::from_vec(matrix.indices);
    let value = PrimitiveArray::<V>::from_vec(matrix.values);
    let entry_dtype = ArrowDataType::Struct(vec![
        ArrowField::new("index".into(), index.dtype().clone(), true),
        ArrowField::new("value".into(), value.dtype().clone(), true),
    ]);
    let n_entries = index.len();
    let entries = StructArray::try_new(
        entry_dtype.clone(),
        n_entries,
        vec![index.boxed(), value.boxed()],
        None,
    )?;
    let offsets: OffsetsBuffer<i64> =
        polars_arrow::offset::Offsets::try_from(matrix.offsets)?.into();
    let list = ListArray::<i64>::try_new(
        ListArray::<i64>::default_datatype(entry_dtype),
        offsets,
        entries.boxed(),
        validity,
    )?;
    Series::from_arrow(name, list.boxed())
}

/// A `List<T>` Series from CSR-style offsets and flat values (moved, not copied).
pub fn list_series<T: NativeType>(
    name: PlSmallStr,
    offsets: Vec<i64>,
    values: Vec<T>,
) -> PolarsResult<Series> {
    let values = PrimitiveArray::<T>::from_vec(values);
    let dtype = ListArray::<i64>::default_datatype(values.dtype().clone());
    let offsets: OffsetsBuffer<i64> = polars_arrow::offset::Offsets::try_from(offsets)?.into();
    Series::from_arrow(
        name,
        ListArray::<i64>::try_new(dtype, offsets, values.boxed(), None)?.boxed(),
    )
}

/// Concatenates per-chunk outputs into one Series (chunks are appended, not copied).
pub fn concat_chunks(
    name: PlSmallStr,
    dtype: &DataType,
    parts: Vec<Series>,
) -> PolarsResult<Series> {
    let mut parts = parts.into_iter();
    let Some(mut out) = parts.next() else { return Ok(Series::new_empty(name, dtype)) };
    for part in parts {
        out.append(&part)?;
    }
    Ok(out)
}
