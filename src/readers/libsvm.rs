//! LIBSVM / svmlight text reader, whole-file or in batches of bounded size.
//!
//! # Format
//!
//! One example per line: `label [qid:N] index:value index:value ... [# comment]`, fields separated
//! by spaces or tabs. Files may be gzip-compressed and may have CRLF line endings.
//!
//! # Interpretation
//!
//! The reader gives the answer scikit-learn's `load_svmlight_file` gives, with the differences
//! marked *(differs)*:
//!
//! * Text after `#` is a comment. Blank lines and comment-only lines are skipped.
//! * Numbers are spelled as Python's `float()` (labels, values) and `int()` (indices, qids) read
//!   them, as scikit-learn does: `+3`, `.5`, `1e-3`, underscores between digits (`1_000`).
//! * The label is a number (`+1`, `-1`, `2`, `1.5e0`). A comma-separated multilabel (`1,3`) is an
//!   error: multilabel files are not supported. *(differs)* A NaN or infinite label is an error.
//! * `qid:N` (an integer, right after the label; a whole number such as `0.0` is read as that
//!   integer, where scikit-learn ignores the value unless asked for qids and then refuses it)
//!   is the query id of learning-to-rank files. A batch has `qids` as soon as any line read so
//!   far had one; a line without `qid` then gets 0, as in Joachims' svmlight. *(differs: scikit-learn silently returns a shorter qid array that
//!   no longer lines up with the rows.)*
//! * Rows come out canonical (see [`crate::sparse`]): sorted by index, entries with the same
//!   index summed (scipy's rule for duplicates), zeros dropped. *(differs: scikit-learn rejects
//!   unsorted rows and keeps explicit zeros in the matrix.)* An entry with value 0 still counts
//!   for the number of features: `123:0` makes the file 123 features wide, as in scikit-learn.
//! * Indices are decimal integers from 0 (`-0` included) to 4294967295 as written. [`ZeroBased`]
//!   says whether they count from 0 or 1; the default, [`ZeroBased::Auto`], is scikit-learn's rule.
//! * With [`LibsvmOptions::n_features`], an index at or past it is an error.
//! * Values are numbers; NaN or infinite values are errors (also when duplicates sum to
//!   infinity).
//!
//! Every malformed line is a [`PolyError::Parse`] with the
//! 1-based line number, the reason and the line itself; the reader never guesses past an error.
//! After an error the reader should be dropped.

use std::path::Path;

use super::lines::{LineReader, TextSource};
use super::{
    parse_error, parse_f64, show, tokens, ColumnData, ColumnKind, RecordReader, Table, TableSource,
};
use crate::error::{PolyError, PolyResult};
use crate::sparse::SparseMatrix;

/// How the feature indices of a file are numbered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ZeroBased {
    /// scikit-learn's rule: one-based unless an index 0 appears. [`read_all`] looks at the whole
    /// file, exactly like scikit-learn. A batch reader decides on the first batch that has any
    /// index, and fails (rather than answer wrongly) if a later batch then has an index 0.
    #[default]
    Auto,
    /// Indices are used as written.
    Yes,
    /// Indices count from 1: 1 is subtracted, and an index 0 is an error.
    No,
}

/// How to read a LIBSVM file (from the caller's options by serde; absent fields take defaults).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LibsvmOptions {
    pub zero_based: ZeroBased,
    /// The number of features, if known: an index at or past it (after the one-based shift) is an
    /// error, and [`read_all`] reports this width instead of the one seen in the file.
    pub n_features: Option<u64>,
}

/// A batch of examples: labels, optional query ids and canonical sparse rows in CSR layout.
#[derive(Clone, Debug, PartialEq)]
pub struct LibsvmBatch {
    pub labels: Vec<f64>,
    /// Query ids, present once any line read so far had a `qid:` (0 for lines without one).
    pub qids: Option<Vec<i64>>,
    /// Row `r` owns entries `offsets[r]..offsets[r + 1]`; starts at 0, one more than the rows.
    pub offsets: Vec<i64>,
    /// Feature indices, zero-based after the [`ZeroBased`] resolution.
    pub indices: Vec<u32>,
    pub values: Vec<f64>,
    /// The 1-based line number of the first row (0 for a batch without rows).
    pub first_line: u64,
}

impl LibsvmBatch {
    fn new(with_qids: bool) -> Self {
        Self {
            labels: Vec::new(),
            qids: with_qids.then(Vec::new),
            offsets: vec![0],
            indices: Vec::new(),
            values: Vec::new(),
            first_line: 0,
        }
    }

    /// Number of rows (examples) in the batch.
    pub fn n_rows(&self) -> usize {
        self.labels.len()
    }
}

/// Reads a LIBSVM file batch by batch, in memory bounded by the batch size.
pub struct LibsvmReader {
    lines: LineReader,
    parser: RowParser,
}

impl LibsvmReader {
    /// Opens the (plain or gzip) file at `path`.
    pub fn open(path: &Path, options: LibsvmOptions) -> PolyResult<Self> {
        Ok(Self::new(LineReader::open(path)?, options))
    }

    /// Reads from `source` (plain or gzip bytes); `name` stands for the file in error messages.
    pub fn from_reader(name: &str, source: TextSource, options: LibsvmOptions) -> PolyResult<Self> {
        Ok(Self::new(LineReader::from_reader(name, source)?, options))
    }

    fn new(lines: LineReader, options: LibsvmOptions) -> Self {
        let parser = RowParser::new(lines.name().to_owned(), options);
        Self { lines, parser }
    }

    /// The next batch of at most `max_rows` examples, or `None` when the file is exhausted.
    pub fn next_batch(&mut self, max_rows: usize) -> PolyResult<Option<LibsvmBatch>> {
        if max_rows == 0 {
            return crate::invalid!("max_rows must be at least 1");
        }
        let batch = self.read_rows(max_rows)?;
        Ok((batch.n_rows() > 0).then_some(batch))
    }

    /// All remaining examples as one batch, and the number of features: `n_features` if it was
    /// given, else [`LibsvmReader::n_features_seen`]. With [`ZeroBased::Auto`] on a fresh reader
    /// this is scikit-learn's whole-file detection.
    pub fn read_to_end(mut self) -> PolyResult<(LibsvmBatch, u64)> {
        let batch = self.read_rows(usize::MAX)?;
        let n_features = self.parser.options.n_features.unwrap_or(self.n_features_seen());
        Ok((batch, n_features))
    }

    /// One more than the largest index (after the one-based shift) over all lines read so far,
    /// counting entries whose value is 0; 0 before any index was read.
    pub fn n_features_seen(&self) -> u64 {
        let shift = self.parser.shift.unwrap_or(0);
        self.parser.max_raw_index.map_or(0, |max| u64::from(max) + 1 - u64::from(shift))
    }

    /// Whether indices are read as zero-based: fixed by [`ZeroBased::Yes`]/[`ZeroBased::No`];
    /// for [`ZeroBased::Auto`], `None` until a batch with an index has been read.
    pub fn zero_based(&self) -> Option<bool> {
        self.parser.shift.map(|shift| shift == 0)
    }

    fn read_rows(&mut self, max_rows: usize) -> PolyResult<LibsvmBatch> {
        let mut batch = LibsvmBatch::new(self.parser.any_qid);
        let mut last_line = 0;
        while batch.n_rows() < max_rows {
            crate::interrupt::check()?;
            let Some(line) = self.lines.next_line()? else { break };
            last_line = line.number;
            self.parser.parse_line(line.number, line.text, &mut batch)?;
        }
        self.parser.finish_batch(&mut batch, last_line)?;
        Ok(batch)
    }
}

/// Reads the whole LIBSVM file at `path` into one batch; returns it with the number of features
/// (`n_features` if given, else one more than the largest index).
/// See [`LibsvmReader::read_to_end`].
pub fn read_all(path: &Path, options: LibsvmOptions) -> PolyResult<(LibsvmBatch, u64)> {
    LibsvmReader::open(path, options)?.read_to_end()
}

/// Options say `zero_based` as `true`, `false` or `"auto"`, as scikit-learn does.
impl<'de> serde::Deserialize<'de> for ZeroBased {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Spelling;
        impl serde::de::Visitor<'_> for Spelling {
            type Value = ZeroBased;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("True, False or 'auto'")
            }
            fn visit_bool<E: serde::de::Error>(self, value: bool) -> Result<ZeroBased, E> {
                Ok(if value { ZeroBased::Yes } else { ZeroBased::No })
            }
            fn visit_str<E: serde::de::Error>(self, value: &str) -> Result<ZeroBased, E> {
                match value {
                    "auto" => Ok(ZeroBased::Auto),
                    other => Err(E::invalid_value(serde::de::Unexpected::Str(other), &self)),
                }
            }
        }
        deserializer.deserialize_any(Spelling)
    }
}

impl From<LibsvmBatch> for Table {
    /// Columns `label`, `qid` (only when the file has query ids so far) and `features`.
    fn from(batch: LibsvmBatch) -> Table {
        let mut columns = vec![("label".to_owned(), ColumnData::Float64(batch.labels))];
        if let Some(qids) = batch.qids {
            columns.push(("qid".to_owned(), ColumnData::Int64(qids)));
        }
        let features =
            SparseMatrix { offsets: batch.offsets, indices: batch.indices, values: batch.values };
        columns.push(("features".to_owned(), ColumnData::Sparse(features)));
        Table { columns, notes: Vec::new() }
    }
}

impl TableSource for LibsvmReader {
    fn next_table(&mut self, max_rows: usize) -> PolyResult<Option<Table>> {
        Ok(self.next_batch(max_rows)?.map(Table::from))
    }

    fn read_rest(self: Box<Self>) -> PolyResult<Table> {
        Ok(Table::from(self.read_to_end()?.0))
    }

    fn summary(&self) -> Vec<(&'static str, u64)> {
        vec![("n_features", self.n_features_seen())]
    }
}

impl RecordReader for LibsvmReader {
    const NAME: &'static str = "libsvm";
    type Options = LibsvmOptions;

    fn open(path: &Path, options: LibsvmOptions) -> PolyResult<Self> {
        LibsvmReader::open(path, options)
    }

    fn schema(_: &LibsvmOptions) -> Vec<(String, ColumnKind)> {
        vec![("label".to_owned(), ColumnKind::Float64), ("features".to_owned(), ColumnKind::Sparse)]
    }
}

/// Parses lines into a batch and carries what must persist between batches.
struct RowParser {
    path: String,
    options: LibsvmOptions,
    /// Subtracted from indices as written: 0 (zero-based) or 1 (one-based); `None` while
    /// [`ZeroBased::Auto`] has not seen any index yet. Undecided batches store indices as written
    /// and are shifted in [`RowParser::finish_batch`].
    shift: Option<u32>,
    /// Largest index as written, over every entry read (zero values included).
    max_raw_index: Option<u32>,
    /// Whether an index 0 was written (only tracked while undecided).
    saw_raw_zero: bool,
    /// Undecided, with `n_features`: the error for the first index equal to `n_features` as
    /// written, which is out of range only if the file turns out zero-based.
    error_if_zero_based: Option<PolyError>,
    /// Lines of the batch on which [`ZeroBased::Auto`] decided, for the conflict message.
    decided_on: (u64, u64),
    any_qid: bool,
    scratch: Vec<(u32, f64)>,
}

impl RowParser {
    fn new(path: String, options: LibsvmOptions) -> Self {
        let shift = match options.zero_based {
            ZeroBased::Auto => None,
            ZeroBased::Yes => Some(0),
            ZeroBased::No => Some(1),
        };
        Self {
            path,
            options,
            shift,
            max_raw_index: None,
            saw_raw_zero: false,
            error_if_zero_based: None,
            decided_on: (0, 0),
            any_qid: false,
            scratch: Vec::new(),
        }
    }

    /// Appends the example on line `number` to `batch`; blank and comment lines add nothing.
    fn parse_line(&mut self, number: u64, text: &[u8], batch: &mut LibsvmBatch) -> PolyResult<()> {
        self.parse_row(number, text, batch)
            .map_err(|reason| parse_error(&self.path, number, text, reason))
    }

    fn parse_row(
        &mut self,
        number: u64,
        text: &[u8],
        batch: &mut LibsvmBatch,
    ) -> Result<(), String> {
        let content = text.iter().position(|&b| b == b'#').map_or(text, |hash| &text[..hash]);
        let mut fields = tokens(content, is_space);
        let Some(label_field) = fields.next() else { return Ok(()) };
        let label = parse_label(label_field)?;
        let mut field = fields.next();
        let qid = match field.and_then(|f| f.strip_prefix(b"qid:")) {
            Some(digits) => {
                field = fields.next();
                Some(parse_qid(digits)?)
            }
            None => None,
        };

        let row_start = batch.indices.len();
        let mut in_order = true;
        while let Some(entry) = field {
            let (written, value) = parse_entry(entry)?;
            let index = self.resolve_index(written, number, text)?;
            if value != 0.0 {
                in_order &= batch.indices.len() == row_start
                    || batch.indices[batch.indices.len() - 1] < index;
                batch.indices.push(index);
                batch.values.push(value);
            }
            field = fields.next();
        }
        if !in_order {
            let shift = self.shift.unwrap_or(0);
            canonicalize_tail(&mut batch.indices, &mut batch.values, row_start, &mut self.scratch)
                .map_err(|index| {
                    format!(
                        "the entries of feature index {} sum to a non-finite value",
                        u64::from(index) + u64::from(shift)
                    )
                })?;
        }

        match (qid, &mut batch.qids) {
            (Some(qid), Some(qids)) => qids.push(qid),
            (Some(qid), None) => {
                // First qid of the reader: earlier rows of this batch had none.
                let mut qids = vec![0; batch.labels.len()];
                qids.push(qid);
                batch.qids = Some(qids);
                self.any_qid = true;
            }
            (None, Some(qids)) => qids.push(0),
            (None, None) => {}
        }
        if batch.labels.is_empty() {
            batch.first_line = number;
        }
        batch.labels.push(label);
        batch.offsets.push(batch.indices.len() as i64);
        Ok(())
    }

    /// The index to store for `written`, after checking it against the base and `n_features`.
    fn resolve_index(&mut self, written: u32, number: u64, text: &[u8]) -> Result<u32, String> {
        let limit = self.options.n_features;
        let index = match self.shift {
            Some(1) if written == 0 => return Err(self.index_zero_message()),
            Some(shift) => {
                let index = written - shift;
                if let Some(n) = limit.filter(|&n| u64::from(index) >= n) {
                    return Err(out_of_range(index, written, n));
                }
                index
            }
            None => {
                // Undecided: stored as written. The shift will be 0 or 1, so written > n is out
                // of range either way and written == n only if the file is zero-based.
                self.saw_raw_zero |= written == 0;
                if let Some(n) = limit {
                    if u64::from(written) > n {
                        return Err(out_of_range(written - 1, written, n));
                    }
                    if u64::from(written) == n && self.error_if_zero_based.is_none() {
                        let reason = format!(
                            "{} (the file has an index 0, so it is read as zero-based)",
                            out_of_range(written, written, n)
                        );
                        self.error_if_zero_based =
                            Some(parse_error(&self.path, number, text, reason));
                    }
                }
                written
            }
        };
        self.max_raw_index = self.max_raw_index.max(Some(written));
        Ok(index)
    }

    fn index_zero_message(&self) -> String {
        if self.options.zero_based == ZeroBased::No {
            return "feature index 0 in a file read as one-based (zero_based=false)".into();
        }
        let (first, last) = self.decided_on;
        format!(
            "feature index 0, but zero_based auto-detection already chose one-based indices from \
             lines {first}-{last} (the first batch with any index, which has no index 0); pass \
             zero_based explicitly"
        )
    }

    /// Ends a batch: with [`ZeroBased::Auto`] still undecided and some index read, decides now
    /// (zero-based iff an index 0 was written) and shifts the batch accordingly.
    fn finish_batch(&mut self, batch: &mut LibsvmBatch, last_line: u64) -> PolyResult<()> {
        if self.shift.is_some() || self.max_raw_index.is_none() {
            return Ok(());
        }
        self.decided_on = (batch.first_line, last_line);
        let pending_error = self.error_if_zero_based.take();
        if self.saw_raw_zero {
            self.shift = Some(0);
            if let Some(error) = pending_error {
                return Err(error);
            }
        } else {
            // No index 0 was written, so every stored index is at least 1.
            self.shift = Some(1);
            for index in &mut batch.indices {
                *index -= 1;
            }
        }
        Ok(())
    }
}

/// LIBSVM field separators: Python's `bytes.split()` whitespace, as scikit-learn uses.
fn is_space(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\r' | b'\x0b' | b'\x0c')
}

fn parse_label(field: &[u8]) -> Result<f64, String> {
    if field.contains(&b',') {
        return Err(format!("multilabel label {:?} is not supported", show(field)));
    }
    match parse_number(field) {
        Some(label) if label.is_finite() => Ok(label),
        Some(label) => Err(format!("non-finite label {label}")),
        None => Err(format!("label {:?} is not a number", show(field))),
    }
}

/// A query id: an integer (`7`, `+7`, `1_000`), or a number with no fractional part (`7.0`).
fn parse_qid(digits: &[u8]) -> Result<i64, String> {
    let integer = without_digit_underscores(digits)
        .and_then(|text| std::str::from_utf8(&text).ok()?.parse().ok());
    // 2^63 is exact in f64; anything from there up does not fit i64.
    let integral = || parse_number(digits).filter(|v| v.fract() == 0.0 && v.abs() < 2f64.powi(63));
    integer
        .or_else(|| integral().map(|v| v as i64))
        .ok_or_else(|| format!("qid {:?} is not an integer", show(digits)))
}

/// A number as Python's `float()` reads it, which is what scikit-learn's reader uses: Rust's
/// spellings (`+1`, `1.5e0`, `.5`, `inf`, `nan`) plus underscores between digits (`1_000`).
fn parse_number(token: &[u8]) -> Option<f64> {
    parse_f64(token).or_else(|| {
        if token.contains(&b'_') {
            parse_f64(&without_digit_underscores(token)?)
        } else {
            None
        }
    })
}

/// `token` without the underscores Python allows between two digits (`1_000`); `None` when an
/// underscore stands anywhere else (`_1`, `1__0`, `1_`), which Python refuses too.
fn without_digit_underscores(token: &[u8]) -> Option<Vec<u8>> {
    let mut kept = Vec::with_capacity(token.len());
    for (at, &byte) in token.iter().enumerate() {
        if byte != b'_' {
            kept.push(byte);
            continue;
        }
        let digit_before = at > 0 && token[at - 1].is_ascii_digit();
        let digit_after = token.get(at + 1).is_some_and(u8::is_ascii_digit);
        if !(digit_before && digit_after) {
            return None;
        }
    }
    Some(kept)
}

/// Splits and parses one `index:value` field.
fn parse_entry(entry: &[u8]) -> Result<(u32, f64), String> {
    let Some(colon) = entry.iter().position(|&b| b == b':') else {
        return Err(format!("feature {:?} is not of the form index:value", show(entry)));
    };
    let (digits, value) = (&entry[..colon], &entry[colon + 1..]);
    let index = parse_index(digits).map_err(|reason| {
        if entry.starts_with(b"qid:") {
            format!("{:?} must come right after the label", show(entry))
        } else {
            reason
        }
    })?;
    match parse_number(value) {
        Some(value) if value.is_finite() => Ok((index, value)),
        Some(value) => Err(format!("feature index {index} has a non-finite value {value}")),
        None => Err(format!("feature value {:?} is not a number", show(value))),
    }
}

/// A decimal index that fits u32, as Python's `int()` spells it: `+` allowed, `-` only on zero
/// (`-0`), underscores between digits (`1_000`).
fn parse_index(written: &[u8]) -> Result<u32, String> {
    let not_an_index = || format!("feature index {:?} is not an unsigned integer", show(written));
    let (negative, unsigned) = match written.split_first() {
        Some((b'+', rest)) => (false, rest),
        Some((b'-', rest)) => (true, rest),
        _ => (false, written),
    };
    if unsigned.is_empty() {
        return Err(if written.is_empty() { "empty feature index".into() } else { not_an_index() });
    }
    let digits = if unsigned.contains(&b'_') {
        std::borrow::Cow::Owned(without_digit_underscores(unsigned).ok_or_else(not_an_index)?)
    } else {
        std::borrow::Cow::Borrowed(unsigned)
    };
    if negative && digits.iter().any(|&b| b != b'0') {
        return Err(format!("feature index {} is negative", show(written)));
    }
    let mut index: u64 = 0;
    for &byte in digits.iter() {
        let digit = byte.wrapping_sub(b'0');
        if digit > 9 {
            return Err(not_an_index());
        }
        index = index * 10 + u64::from(digit);
        if index > u64::from(u32::MAX) {
            return Err(format!(
                "feature index {} is larger than the largest supported index {}",
                show(written),
                u32::MAX
            ));
        }
    }
    Ok(index as u32)
}

fn out_of_range(index: u32, written: u32, n_features: u64) -> String {
    let written_note =
        if index == written { String::new() } else { format!(" (written {written})") };
    format!("feature index {index}{written_note} is out of range for n_features={n_features}")
}

/// Puts the entries from `start` on into canonical order: sorted by index, equal indices summed
/// in file order, zero sums dropped. Fails with the index whose entries sum to a non-finite value.
fn canonicalize_tail(
    indices: &mut Vec<u32>,
    values: &mut Vec<f64>,
    start: usize,
    scratch: &mut Vec<(u32, f64)>,
) -> Result<(), u32> {
    scratch.clear();
    scratch.extend(indices[start..].iter().copied().zip(values[start..].iter().copied()));
    // Stable, so duplicates are added up in the order they were written.
    scratch.sort_by_key(|&(index, _)| index);
    indices.truncate(start);
    values.truncate(start);
    let mut entries = scratch.iter().copied().peekable();
    while let Some((index, mut sum)) = entries.next() {
        while let Some((_, value)) = entries.next_if(|&(next, _)| next == index) {
            sum += value;
        }
        if !sum.is_finite() {
            return Err(index);
        }
        if sum != 0.0 {
            indices.push(index);
            values.push(sum);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
