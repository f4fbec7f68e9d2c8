//! Streaming readers for the sparse text formats of the machine-learning world.
//!
//! * [`libsvm`]: LIBSVM / svmlight (`label [qid:N] index:value ...`), read into canonical sparse
//!   rows exactly as scikit-learn's `load_svmlight_file` would interpret the file.
//! * [`vw`]: Vowpal Wabbit's text format (`label weight 'tag |namespace feature:value ...`), with
//!   feature names hashed the way Vowpal Wabbit hashes them.
//!
//! Both read plain or gzip-compressed files through [`lines::LineReader`], either whole
//! (`read_all`) or in batches of bounded size (`next_batch`), and report malformed input as
//! [`PolyError::Parse`] naming the file, the 1-based line number and the offending line.
//!
//! Every reader is a [`RecordReader`]: it owns its format name, its serde options and the
//! [`Table`] layout of its batches, and is added to the [`Format`] registry with one line. The
//! bindings open any registered format by name through [`Format::opener`], so a new reader needs no
//! binding code. This module also holds the few byte-level helpers the formats share.

pub mod libsvm;
pub mod lines;
pub mod table;
pub mod vw;

use std::path::Path;

use serde::de::{DeserializeOwned, Deserializer};

use crate::error::{PolyError, PolyResult};
pub use table::{ColumnData, ColumnKind, Table};

crate::named_registry! {
    /// The file formats the readers understand, by name (`"libsvm"`, `"vw"`).
    pub enum Format: RecordReader, visitor FormatVisitor, option "format" {
        Libsvm => libsvm::LibsvmReader,
        Vw => vw::VwReader,
    }
}

/// What an open reader of any format does: hand out its records as [`Table`]s.
pub trait TableSource: Send {
    /// The next at most `max_rows` records (`max_rows >= 1`), or `None` at the end of the file.
    fn next_table(&mut self, max_rows: usize) -> PolyResult<Option<Table>>;
    /// Every remaining record as one table (a reader may decide things on the whole file, as the
    /// LIBSVM reader's scikit-learn index-base detection does).
    fn read_rest(self: Box<Self>) -> PolyResult<Table>;
    /// What the reader has learned of the file so far (e.g. `("n_features", 124)`).
    fn summary(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }
}

/// A file format: its registry name, its options and how to open a file.
pub trait RecordReader: TableSource + Sized + 'static {
    /// The format's name in the [`Format`] registry.
    const NAME: &'static str;
    /// How to read a file, filled by serde from the caller's options (unknown names refused).
    type Options: DeserializeOwned + Send;
    fn open(path: &Path, options: Self::Options) -> PolyResult<Self>;
    /// The columns every batch has, in order (a batch may carry more, like LIBSVM's `qid`).
    fn schema(options: &Self::Options) -> Vec<(String, ColumnKind)>;
}

/// A format with its options read, ready to open a file. Reading the options may need the
/// caller's lock (Python's); opening may block for long (a FIFO waits for its writer), so the two
/// are apart.
pub type ReaderOpener = Box<dyn FnOnce(&Path) -> PolyResult<Box<dyn TableSource>> + Send>;

impl Format {
    /// Reads the options `options` deserializes to; the returned opener opens a file with them.
    pub fn opener<'de, D: Deserializer<'de>>(self, options: D) -> PolyResult<ReaderOpener> {
        self.visit(Opener { options })
    }

    /// The columns every batch of this format has under `options`.
    pub fn schema<'de, D: Deserializer<'de>>(
        self,
        options: D,
    ) -> PolyResult<Vec<(String, ColumnKind)>> {
        self.visit(SchemaOf { options })
    }
}

fn reader_options<'de, R: RecordReader, D: Deserializer<'de>>(
    options: D,
) -> PolyResult<R::Options> {
    // The path names the option at fault ("n_features: invalid value ...").
    serde_path_to_error::deserialize(options)
        .map_err(|err| PolyError::InvalidInput(format!("{} reader option {err}", R::NAME)))
}

struct Opener<D> {
    options: D,
}

impl<'de, D: Deserializer<'de>> FormatVisitor for Opener<D> {
    type Output = PolyResult<ReaderOpener>;
    fn visit<R: RecordReader>(self) -> Self::Output {
        let options = reader_options::<R, D>(self.options)?;
        Ok(Box::new(move |path: &Path| {
            R::open(path, options).map(|reader| Box::new(reader) as Box<dyn TableSource>)
        }))
    }
}

struct SchemaOf<D> {
    options: D,
}

impl<'de, D: Deserializer<'de>> FormatVisitor for SchemaOf<D> {
    type Output = PolyResult<Vec<(String, ColumnKind)>>;
    fn visit<R: RecordReader>(self) -> Self::Output {
        Ok(R::schema(&reader_options::<R, D>(self.options)?))
    }
}

/// Longest excerpt of an offending line quoted in a parse error, in characters.
const EXCERPT_CHARS: usize = 200;

/// Builds the parse error for line `line` (1-based) of `path`, quoting the line (truncated).
pub(crate) fn parse_error(
    path: &str,
    line: u64,
    text: &[u8],
    reason: impl Into<String>,
) -> PolyError {
    PolyError::Parse { path: path.to_owned(), line, reason: reason.into(), text: excerpt(text) }
}

/// The first [`EXCERPT_CHARS`] characters of `text` (invalid UTF-8 shown as U+FFFD), with an
/// ellipsis when something was cut.
fn excerpt(text: &[u8]) -> String {
    // Four bytes per character at most: never convert more of a huge line than can be shown.
    let head = &text[..text.len().min(4 * EXCERPT_CHARS)];
    let decoded = String::from_utf8_lossy(head);
    let mut chars = decoded.chars();
    let mut shown: String = chars.by_ref().take(EXCERPT_CHARS).collect();
    if chars.next().is_some() || head.len() < text.len() {
        shown.push('…');
    }
    shown
}

/// The non-empty pieces of `text` between separator bytes (like `str::split_whitespace`).
pub(crate) fn tokens(text: &[u8], is_separator: fn(u8) -> bool) -> impl Iterator<Item = &[u8]> {
    text.split(move |&byte| is_separator(byte)).filter(|token| !token.is_empty())
}

/// Parses a decimal floating-point number (`1`, `-0.5`, `+1`, `1.5e-3`, also `nan`/`inf`, which
/// callers reject where they must be finite). `None` if the token is not a number.
#[inline]
pub(crate) fn parse_f64(token: &[u8]) -> Option<f64> {
    parse_short_decimal(token).or_else(|| std::str::from_utf8(token).ok()?.parse().ok())
}

/// Exact powers of ten up to 10^15, each exactly representable.
const POWERS_OF_TEN: [f64; 16] =
    [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15];

/// Fast path for the most common values (`1`, `-1`, `42`, `39.0`, `0.125`): an optionally
/// signed decimal of at most 15 digits and no exponent. Its digits make an integer below 2^53
/// and its scale a power of ten up to 10^15, both exact, so their quotient is the correctly
/// rounded value (Clinger's fast path), equal to `str::parse`'s bit for bit.
#[inline]
fn parse_short_decimal(token: &[u8]) -> Option<f64> {
    let (negative, text) = match token.split_first() {
        Some((b'-', rest)) => (true, rest),
        Some((b'+', rest)) => (false, rest),
        _ => (false, token),
    };
    if text.len() > 16 {
        return None;
    }
    let (mut value, mut digits, mut decimals, mut point) = (0u64, 0usize, 0usize, false);
    for &byte in text {
        if byte == b'.' && !point {
            point = true;
            continue;
        }
        let digit = byte.wrapping_sub(b'0');
        if digit > 9 {
            return None;
        }
        value = value * 10 + u64::from(digit);
        digits += 1;
        decimals += usize::from(point);
    }
    if digits == 0 || digits > 15 {
        return None;
    }
    // Trailing zeros after the point change nothing; without them most values (`39.0`) need
    // no division, which costs more than the rest of the parse.
    while decimals > 0 && value % 10 == 0 {
        value /= 10;
        decimals -= 1;
    }
    let value = if decimals == 0 { value as f64 } else { value as f64 / POWERS_OF_TEN[decimals] };
    Some(if negative { -value } else { value })
}

/// `token` as text for an error message.
pub(crate) fn show(token: &[u8]) -> String {
    String::from_utf8_lossy(token).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpt_truncates_long_lines_on_character_boundaries() {
        assert_eq!(excerpt(b"short line"), "short line");
        let long = "é".repeat(300);
        let shown = excerpt(long.as_bytes());
        assert_eq!(shown.chars().count(), EXCERPT_CHARS + 1);
        assert!(shown.ends_with('…'));
        assert_eq!(excerpt(b"bad \xff byte"), "bad \u{fffd} byte");
        assert!(excerpt(&[0xff; 250]).ends_with('…'));
    }

    #[test]
    fn parse_error_carries_path_line_and_text() {
        let err = parse_error("f.txt", 7, b"1 x:2", "bad feature");
        assert_eq!(
            err,
            PolyError::Parse {
                path: "f.txt".into(),
                line: 7,
                reason: "bad feature".into(),
                text: "1 x:2".into()
            }
        );
        assert_eq!(err.to_string(), "f.txt: line 7: bad feature: \"1 x:2\"");
    }

    #[test]
    fn tokens_skip_runs_of_separators() {
        let split: Vec<&[u8]> = tokens(b"  a\t\tb  c ", |b| b == b' ' || b == b'\t').collect();
        assert_eq!(split, vec![&b"a"[..], b"b", b"c"]);
        assert_eq!(tokens(b"   ", |b| b == b' ').count(), 0);
    }

    #[test]
    fn parse_f64_accepts_the_usual_spellings() {
        assert_eq!(parse_f64(b"+1"), Some(1.0));
        assert_eq!(parse_f64(b"-1"), Some(-1.0));
        assert_eq!(parse_f64(b"1.5e0"), Some(1.5));
        assert_eq!(parse_f64(b".25"), Some(0.25));
        assert!(parse_f64(b"nan").is_some_and(f64::is_nan));
        assert_eq!(parse_f64(b"1,5"), None);
        assert_eq!(parse_f64(b""), None);
        assert_eq!(parse_f64(b"\xff"), None);
    }

    fn same_as_std(token: &str) -> bool {
        let ours = parse_f64(token.as_bytes()).map(f64::to_bits);
        ours == token.parse::<f64>().ok().map(f64::to_bits)
    }

    #[test]
    fn decimal_fast_path_agrees_with_std_bit_for_bit() {
        let tokens = [
            "0",
            "-0",
            "+0",
            "+7",
            "-1",
            "0012",
            "999999999999999",
            "-999999999999999",
            "1234567890123456",
            "98765432109876543210",
            "+",
            "-",
            "+-1",
            "1.0",
            "1e3",
            "1 ",
            "39.0",
            "-0.0",
            "5.",
            ".5",
            ".",
            "-.",
            "1..2",
            "0.1",
            "0.30000000000001",
            "123456789.012345",
            "1234567890.1234567",
            "0.000000000000001",
            "9007199254740993.0",
            "39.000",
            "0.10",
            "100.00",
            "-0.000",
            "10.",
        ];
        for token in tokens {
            assert!(same_as_std(token), "{token}");
        }
    }

    proptest::proptest! {
        #[test]
        fn decimal_fast_path_agrees_with_std_on_any_integer(value: i64) {
            proptest::prop_assert!(same_as_std(&value.to_string()));
            let explicit_plus = format!("+{}", value.unsigned_abs());
            proptest::prop_assert!(same_as_std(&explicit_plus));
        }

        #[test]
        fn decimal_fast_path_agrees_with_std_on_any_decimal(
            whole in 0u64..10_000_000_000,
            fraction in "[0-9]{0,9}",
            negative: bool,
        ) {
            let token = format!("{}{whole}.{fraction}", if negative { "-" } else { "" });
            proptest::prop_assert!(same_as_std(&token), "{}", token);
        }

        #[test]
        fn decimal_fast_path_agrees_with_std_on_any_float(value: f64) {
            // Rust's shortest round-trip spelling, and a fixed 6 decimals.
            proptest::prop_assert!(same_as_std(&value.to_string()));
            let fixed = format!("{:.6}", value);
            proptest::prop_assert!(same_as_std(&fixed));
        }
    }
}
