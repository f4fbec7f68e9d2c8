//! The engine's one error type. Every message names what was wrong and where (row, line, column,
//! value), because the Python layer shows it to the user verbatim.

use thiserror::Error;

#[derive(Debug, Error, Clone, PartialEq)]
pub enum PolyError {
    /// A value the caller gave is not allowed (bad option, bad index, non-finite number, ...).
    #[error("{0}")]
    InvalidInput(String),
    /// A line of a text file could not be parsed. `line` is 1-based.
    #[error("{path}: line {line}: {reason}: {text:?}")]
    Parse { path: String, line: u64, reason: String, text: String },
    /// A size computation (output width, offsets) does not fit the integer type.
    #[error("{0}")]
    Overflow(String),
    #[error("{path}: {reason}")]
    Io { path: String, reason: String },
}

pub type PolyResult<T> = Result<T, PolyError>;

/// Shorthand for `Err(PolyError::InvalidInput(format!(...)))`.
#[macro_export]
macro_rules! invalid {
    ($($arg:tt)*) => { Err($crate::error::PolyError::InvalidInput(format!($($arg)*))) };
}
