//! One binding for every registered file reader ([`crate::readers::Format`]): `read` (a whole
//! file), `Batches` (an iterator of frames in bounded memory) and `reader_schema` (the columns a
//! scan declares). The engine's [`Table`]s become frames by one conversion; parsing runs with the
//! GIL released. A new reader needs nothing here. One function is the Vowpal Wabbit reader's
//! own: `vw_namespaces`, the whole-file namespace scan behind `namespaces="auto"`.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use polars::prelude::*;
use pyo3::exceptions::{PyUserWarning, PyValueError};
use pyo3::prelude::*;
use pyo3_polars::PyDataFrame;

use super::arrow_io::{list_series, sparse_series};
use super::error::{polars_py_error, py_error};
use super::guard::guarded;
use crate::error::PolyError;
use crate::readers::{vw, ColumnData, Format, Table, TableSource};

/// A frame with the table's columns, moving (not copying) its buffers.
fn table_frame(table: Table) -> PolarsResult<DataFrame> {
    let height = table.n_rows();
    let columns = table
        .columns
        .into_iter()
        .map(|(name, data)| column_series(name.into(), data).map(Column::from))
        .collect::<PolarsResult<Vec<_>>>()?;
    DataFrame::new(height, columns)
}

fn column_series(name: PlSmallStr, data: ColumnData) -> PolarsResult<Series> {
    Ok(match data {
        ColumnData::Float64(values) => Series::new(name, values),
        ColumnData::NullableFloat64(values) => Series::new(name, values),
        ColumnData::Int64(values) => Series::new(name, values),
        ColumnData::NullableText(values) => Series::new(name, values),
        ColumnData::Sparse(matrix) => sparse_series(name, matrix, None)?,
        ColumnData::ByteList { offsets, values } => list_series(name, offsets, values)?,
    })
}

/// Gives the table's notes as Python warnings.
fn warn_notes(py: Python<'_>, table: &Table) -> PyResult<()> {
    let category = py.get_type::<PyUserWarning>();
    for note in &table.notes {
        PyErr::warn(py, &category, &std::ffi::CString::new(note.replace('\0', " "))?, 1)?;
    }
    Ok(())
}

fn poisoned_reader() -> PolyError {
    PolyError::InvalidInput("the reader is unusable: a thread panicked while reading".into())
}

fn format_of(name: &str) -> PyResult<Format> {
    Format::parse(name).map_err(py_error)
}

/// Opens `path` as `format` with the options in the dict `options`: the options are read with
/// the GIL, the file is opened without it (opening a FIFO waits for its writer, and Ctrl-C and
/// the writer's own Python thread must run meanwhile).
fn open(
    py: Python<'_>,
    format: &str,
    path: &Path,
    options: &Bound<'_, PyAny>,
) -> PyResult<Box<dyn TableSource>> {
    let mut options = pythonize::Depythonizer::from_object(options);
    let opener = format_of(format)?.opener(&mut options).map_err(py_error)?;
    py.detach(|| guarded(|| opener(path).map_err(py_error)))
}

/// Reads the whole file at `path` (plain or gzip) as `format` into a DataFrame.
#[pyfunction]
#[pyo3(signature = (format, path, options))]
fn read(
    py: Python<'_>,
    format: &str,
    path: PathBuf,
    options: &Bound<'_, PyAny>,
) -> PyResult<PyDataFrame> {
    let reader = open(py, format, &path, options)?;
    let table = py.detach(|| guarded(|| reader.read_rest().map_err(py_error)))?;
    warn_notes(py, &table)?;
    Ok(PyDataFrame(table_frame(table).map_err(polars_py_error)?))
}

/// An empty frame with the columns every batch of `format` has under `options`.
#[pyfunction]
#[pyo3(signature = (format, options))]
fn reader_schema(format: &str, options: &Bound<'_, PyAny>) -> PyResult<PyDataFrame> {
    let mut options = pythonize::Depythonizer::from_object(options);
    let schema = format_of(format)?.schema(&mut options).map_err(py_error)?;
    Ok(PyDataFrame(table_frame(Table::empty(&schema)).map_err(polars_py_error)?))
}

/// Iterator of DataFrames of at most `batch_rows` rows each, read in bounded memory.
#[pyclass(module = "polars_poly._internal")]
struct Batches {
    reader: Mutex<Box<dyn TableSource>>,
    batch_rows: usize,
    /// Whether a batch's notes were given as warnings (once per reader, not per batch).
    warned: std::sync::atomic::AtomicBool,
}

#[pymethods]
impl Batches {
    #[new]
    #[pyo3(signature = (format, path, options, batch_rows))]
    fn new(
        py: Python<'_>,
        format: &str,
        path: PathBuf,
        options: &Bound<'_, PyAny>,
        batch_rows: usize,
    ) -> PyResult<Self> {
        if batch_rows == 0 {
            return Err(PyValueError::new_err("batch_size must be at least 1"));
        }
        let reader = Mutex::new(open(py, format, &path, options)?);
        Ok(Self { reader, batch_rows, warned: Default::default() })
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<PyDataFrame>> {
        // The lock is taken without the GIL: a thread holding it may be waiting for the GIL.
        let table = py.detach(|| {
            guarded(|| {
                let mut reader = self.reader.lock().map_err(|_| py_error(poisoned_reader()))?;
                reader.next_table(self.batch_rows).map_err(py_error)
            })
        })?;
        if let Some(table) = &table {
            use std::sync::atomic::Ordering;
            if !table.notes.is_empty() && !self.warned.swap(true, Ordering::Relaxed) {
                warn_notes(py, table)?;
            }
        }
        table.map(|table| table_frame(table).map(PyDataFrame).map_err(polars_py_error)).transpose()
    }

    /// What the reader has learned of the file so far (LIBSVM: `{"n_features": ...}`).
    #[getter]
    fn summary(&self, py: Python<'_>) -> PyResult<Vec<(&'static str, u64)>> {
        py.detach(|| Ok(self.reader.lock().map_err(|_| poisoned_reader())?.summary()))
            .map_err(py_error)
    }
}

/// The column names of the namespaces of the Vowpal Wabbit file at `path` (plain or gzip), in
/// order of first appearance, under the reader options `options` (`ignore`/`keep` leave
/// namespaces out): a fast scan of the whole file, no feature hashed.
#[pyfunction]
#[pyo3(signature = (path, options))]
fn vw_namespaces(
    py: Python<'_>,
    path: PathBuf,
    options: &Bound<'_, PyAny>,
) -> PyResult<Vec<String>> {
    let options =
        vw::options(&mut pythonize::Depythonizer::from_object(options)).map_err(py_error)?;
    py.detach(|| guarded(|| vw::scan_namespaces(&path, &options).map_err(py_error)))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(read, m)?)?;
    m.add_function(wrap_pyfunction!(vw_namespaces, m)?)?;
    m.add_function(wrap_pyfunction!(reader_schema, m)?)?;
    m.add_class::<Batches>()?;
    m.add("FORMATS", Format::NAMES.to_vec())?;
    Ok(())
}
