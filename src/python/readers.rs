//! Python functions and batch iterators over the engine's LIBSVM and Vowpal Wabbit readers.
//! Parsing runs with the GIL released.

use std::path::PathBuf;
use std::sync::Mutex;

use polars::prelude::*;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3_polars::PyDataFrame;

use super::arrow_io::{list_series, sparse_series};
use crate::error::PolyError;
use crate::readers::libsvm::{self, LibsvmBatch, LibsvmOptions, LibsvmReader, ZeroBased};
use crate::readers::vw::{self, VwBatch, VwOptions, VwReader};
use crate::sparse::SparseMatrix;

use super::error::{polars_py_error as polars_to_py, py_error as to_py_error};

fn parse_zero_based(value: &str) -> PyResult<ZeroBased> {
    match value {
        "auto" => Ok(ZeroBased::Auto),
        "true" => Ok(ZeroBased::Yes),
        "false" => Ok(ZeroBased::No),
        other => Err(PyValueError::new_err(format!(
            "zero_based must be True, False or 'auto', got {other:?}"
        ))),
    }
}

fn libsvm_frame(batch: LibsvmBatch) -> PolarsResult<DataFrame> {
    let height = batch.labels.len();
    let mut columns: Vec<Column> = vec![Series::new("label".into(), batch.labels).into()];
    if let Some(qids) = batch.qids {
        columns.push(Series::new("qid".into(), qids).into());
    }
    let features =
        SparseMatrix { offsets: batch.offsets, indices: batch.indices, values: batch.values };
    columns.push(sparse_series("features".into(), features, None)?.into());
    DataFrame::new(height, columns)
}

/// Reads a whole LIBSVM/svmlight file (plain or gzip) into a DataFrame.
#[pyfunction]
#[pyo3(signature = (path, zero_based, n_features))]
fn read_libsvm(
    py: Python<'_>,
    path: PathBuf,
    zero_based: &str,
    n_features: Option<u64>,
) -> PyResult<(PyDataFrame, u64)> {
    let options = LibsvmOptions { zero_based: parse_zero_based(zero_based)?, n_features };
    let (batch, seen) = py.detach(|| libsvm::read_all(&path, options)).map_err(to_py_error)?;
    let frame = libsvm_frame(batch).map_err(polars_to_py)?;
    Ok((PyDataFrame(frame), seen))
}

/// Iterator of DataFrames of at most `batch_rows` rows each, read in bounded memory.
#[pyclass(module = "polars_poly._internal")]
struct LibsvmBatches {
    reader: Mutex<LibsvmReader>,
    batch_rows: usize,
}

#[pymethods]
impl LibsvmBatches {
    #[new]
    #[pyo3(signature = (path, zero_based, n_features, batch_rows))]
    fn new(
        path: PathBuf,
        zero_based: &str,
        n_features: Option<u64>,
        batch_rows: usize,
    ) -> PyResult<Self> {
        if batch_rows == 0 {
            return Err(PyValueError::new_err("batch_size must be at least 1"));
        }
        let options = LibsvmOptions { zero_based: parse_zero_based(zero_based)?, n_features };
        let reader = LibsvmReader::open(&path, options).map_err(to_py_error)?;
        Ok(Self { reader: Mutex::new(reader), batch_rows })
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<PyDataFrame>> {
        let batch = py.detach(|| {
            let mut reader = self
                .reader
                .lock()
                .map_err(|_| PolyError::InvalidInput("reader is poisoned".into()))?;
            reader.next_batch(self.batch_rows)
        });
        match batch.map_err(to_py_error)? {
            Some(batch) => Ok(Some(PyDataFrame(libsvm_frame(batch).map_err(polars_to_py)?))),
            None => Ok(None),
        }
    }

    /// Number of feature columns implied by the largest index read so far.
    #[getter]
    fn n_features_seen(&self) -> PyResult<u64> {
        let reader = self.reader.lock().map_err(|_| PyValueError::new_err("reader is poisoned"))?;
        Ok(reader.n_features_seen())
    }
}

fn vw_frame(batch: VwBatch) -> PolarsResult<DataFrame> {
    let height = batch.labels.len();
    // One namespace letter per stored feature, as a list column aligned with `features`.
    let namespaces = list_series("namespace".into(), batch.offsets.clone(), batch.namespaces)?;
    let features =
        SparseMatrix { offsets: batch.offsets, indices: batch.indices, values: batch.values };
    let columns: Vec<Column> = vec![
        Series::new("label".into(), batch.labels).into(),
        Series::new("weight".into(), batch.importance).into(),
        Series::new("base".into(), batch.base).into(),
        Series::new("tag".into(), batch.tags).into(),
        sparse_series("features".into(), features, None)?.into(),
        namespaces.into(),
    ];
    DataFrame::new(height, columns)
}

/// Reads a whole Vowpal Wabbit text file (plain or gzip) into a DataFrame.
#[pyfunction]
#[pyo3(signature = (path, bits, seed))]
fn read_vw(py: Python<'_>, path: PathBuf, bits: u32, seed: u32) -> PyResult<PyDataFrame> {
    let options = VwOptions { bits, seed };
    let batch = py.detach(|| vw::read_all(&path, options)).map_err(to_py_error)?;
    Ok(PyDataFrame(vw_frame(batch).map_err(polars_to_py)?))
}

#[pyclass(module = "polars_poly._internal")]
struct VwBatches {
    reader: Mutex<VwReader>,
    batch_rows: usize,
}

#[pymethods]
impl VwBatches {
    #[new]
    #[pyo3(signature = (path, bits, seed, batch_rows))]
    fn new(path: PathBuf, bits: u32, seed: u32, batch_rows: usize) -> PyResult<Self> {
        if batch_rows == 0 {
            return Err(PyValueError::new_err("batch_size must be at least 1"));
        }
        let reader = VwReader::open(&path, VwOptions { bits, seed }).map_err(to_py_error)?;
        Ok(Self { reader: Mutex::new(reader), batch_rows })
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<PyDataFrame>> {
        let batch = py.detach(|| {
            let mut reader = self
                .reader
                .lock()
                .map_err(|_| PolyError::InvalidInput("reader is poisoned".into()))?;
            reader.next_batch(self.batch_rows)
        });
        match batch.map_err(to_py_error)? {
            Some(batch) => Ok(Some(PyDataFrame(vw_frame(batch).map_err(polars_to_py)?))),
            None => Ok(None),
        }
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(read_libsvm, m)?)?;
    m.add_function(wrap_pyfunction!(read_vw, m)?)?;
    m.add_class::<LibsvmBatches>()?;
    m.add_class::<VwBatches>()?;
    Ok(())
}
