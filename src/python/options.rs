//! Engine options from the dicts the Python layer builds: an error names the option at fault
//! by its path (`expansion.epochs`) and says what it must be in plain words.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use serde::de::DeserializeOwned;

/// `options` as `T`; `what` names the option set in errors ("learner options").
pub fn options_from<T: DeserializeOwned>(options: &Bound<'_, PyAny>, what: &str) -> PyResult<T> {
    let mut source = pythonize::Depythonizer::from_object(options);
    serde_path_to_error::deserialize(&mut source).map_err(|err| {
        let reason = plain_words(&err.inner().to_string());
        PyValueError::new_err(format!("{what}: {}: {reason}", err.path()))
    })
}

/// serde's Rust type names ("expected u32") and Python's integer conversion errors as ranges.
fn plain_words(reason: &str) -> String {
    const RANGES: [(&str, &str); 4] = [
        ("u8", "an integer in [0, 255]"),
        ("u32", "an integer in [0, 4294967295]"),
        ("u64", "an integer in [0, 2**64 - 1]"),
        ("usize", "an integer in [0, 2**64 - 1]"),
    ];
    let mut text = reason.to_owned();
    for (rust, words) in RANGES {
        text = text.replace(&format!("expected {rust}"), &format!("expected {words}"));
    }
    if text.contains("OverflowError") {
        text = format!("{text} (a negative or too large integer)");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::plain_words;

    #[test]
    fn rust_integer_types_read_as_ranges() {
        assert_eq!(
            plain_words("invalid value: integer `-1`, expected u32"),
            "invalid value: integer `-1`, expected an integer in [0, 4294967295]"
        );
        assert!(plain_words("OverflowError: can't convert").ends_with("too large integer)"));
    }
}
