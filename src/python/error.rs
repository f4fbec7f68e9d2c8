//! The one map from engine errors to Python exceptions, used by every binding:
//!
//! | engine | Python |
//! |---|---|
//! | [`PolyError::InvalidInput`], [`PolyError::Parse`] | `ValueError` |
//! | [`PolyError::WrongType`] | `TypeError` |
//! | [`PolyError::Overflow`] | `OverflowError` |
//! | [`PolyError::OutOfMemory`] | `MemoryError` |
//! | [`PolyError::Interrupted`] | `KeyboardInterrupt` |
//! | [`PolyError::Io`] | `FileNotFoundError`, `PermissionError` or `OSError` by its kind |
//!
//! Polars errors met while reading a caller's columns are value errors of that input.

use polars::prelude::PolarsError;
use pyo3::exceptions::{
    PyFileNotFoundError, PyKeyboardInterrupt, PyMemoryError, PyOSError, PyOverflowError,
    PyPermissionError, PyTypeError, PyValueError,
};
use pyo3::PyErr;

use crate::error::{IoKind, PolyError};

/// The Python exception for an engine error (see the module docs).
pub fn py_error(err: PolyError) -> PyErr {
    let message = err.to_string();
    match err {
        PolyError::InvalidInput(_) | PolyError::Parse { .. } => PyValueError::new_err(message),
        PolyError::WrongType(_) => PyTypeError::new_err(message),
        PolyError::Overflow(_) => PyOverflowError::new_err(message),
        PolyError::OutOfMemory(_) => PyMemoryError::new_err(message),
        PolyError::Interrupted => PyKeyboardInterrupt::new_err(message),
        PolyError::Io { kind: IoKind::NotFound, .. } => PyFileNotFoundError::new_err(message),
        PolyError::Io { kind: IoKind::PermissionDenied, .. } => PyPermissionError::new_err(message),
        PolyError::Io { kind: IoKind::Other, .. } => PyOSError::new_err(message),
    }
}

/// The Python exception for a Polars error met on a caller's input: a `TypeError` for a column
/// of the wrong dtype, else a `ValueError`.
pub fn polars_py_error(err: PolarsError) -> PyErr {
    match err {
        PolarsError::SchemaMismatch(_) => PyTypeError::new_err(err.to_string()),
        other => PyValueError::new_err(other.to_string()),
    }
}

/// The error of a model whose lock a panicking thread poisoned.
pub fn poisoned<T>(_: T) -> PyErr {
    PyValueError::new_err("the model is unusable: a thread panicked while holding it")
}
