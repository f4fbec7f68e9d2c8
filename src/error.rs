//! The engine's one error type. Every message names what was wrong and where (row, line, column,
//! value), because the Python layer shows it to the user verbatim. Each variant maps to one
//! Python exception class (`crate::python::error`), so the kind of failure decides the class, not
//! the entry point that met it.

use thiserror::Error;

#[derive(Debug, Error, Clone, PartialEq)]
pub enum PolyError {
    /// A value the caller gave is not allowed (bad option, bad index, non-finite number, ...).
    #[error("{0}")]
    InvalidInput(String),
    /// A value of the wrong kind (a string where a number belongs, an unsupported dtype, ...).
    #[error("{0}")]
    WrongType(String),
    /// A line of a text file could not be parsed. `line` is 1-based.
    #[error("{path}: line {line}: {reason}: {text:?}")]
    Parse { path: String, line: u64, reason: String, text: String },
    /// A size computation (output width, offsets) does not fit the integer type.
    #[error("{0}")]
    Overflow(String),
    /// More memory than the process can get (checked before allocating, see
    /// [`crate::memory::check_fits`]).
    #[error("{0}")]
    OutOfMemory(String),
    /// The caller asked the operation to stop (Ctrl-C, see [`crate::interrupt`]).
    #[error("interrupted")]
    Interrupted,
    /// The operating system refused a file operation.
    #[error("{path}: {reason}")]
    Io { path: String, reason: String, kind: IoKind },
}

/// What kind of file failure an [`PolyError::Io`] is (Python raises `FileNotFoundError`,
/// `PermissionError` or `OSError` accordingly).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoKind {
    NotFound,
    PermissionDenied,
    Other,
}

impl PolyError {
    /// The error for `error`, met while doing `context` (e.g. "cannot open") on `path`.
    pub fn io(path: impl std::fmt::Display, context: &str, error: &std::io::Error) -> Self {
        let kind = match error.kind() {
            std::io::ErrorKind::NotFound => IoKind::NotFound,
            std::io::ErrorKind::PermissionDenied => IoKind::PermissionDenied,
            _ => IoKind::Other,
        };
        let reason =
            if context.is_empty() { error.to_string() } else { format!("{context}: {error}") };
        PolyError::Io { path: path.to_string(), reason, kind }
    }
}

pub type PolyResult<T> = Result<T, PolyError>;

/// Shorthand for `Err(PolyError::InvalidInput(format!(...)))`.
#[macro_export]
macro_rules! invalid {
    ($($arg:tt)*) => { Err($crate::error::PolyError::InvalidInput(format!($($arg)*))) };
}
