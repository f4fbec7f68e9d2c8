//! Vowpal Wabbit text-format reader, whole-file or in batches of bounded size.
//!
//! # Format
//!
//! One example per line:
//! `[label [importance [base]]] ['tag] |ns[:scale] feature[:value] ... |ns2 ...`.
//!
//! * **Header** (everything before the first `|`, separated by spaces or tabs): up to three
//!   numbers, the label, the importance weight (default 1, must be finite and >= 0) and the base
//!   prediction (default 0); then optionally a tag, which is the last header field: either
//!   `'text` (the apostrophe is stripped) or any field that is not a number. The label may be
//!   missing (`labels` holds `None`). Only Vowpal Wabbit's simple label is supported: a field
//!   with a `:` (as in multiclass, cost-sensitive or contextual-bandit labels) is an error unless
//!   written as a `'`-quoted tag.
//! * **Namespaces**: each `|` starts one. The text right after `|` up to whitespace is its name,
//!   optionally `name:scale` (every value in the namespace is multiplied by `scale`). A `|`
//!   followed by whitespace or the end of the line opens the default namespace, whose name is
//!   empty. A namespace is identified by its *letter*, the first byte of its name (`b' '` for the
//!   default namespace), which is how Vowpal Wabbit names namespaces in `-q`/`--interactions`.
//! * **Features**: `name` (value 1) or `name:value`; the value must be a finite number
//!   (Vowpal Wabbit's `name:string` chained features are not supported and are an error).
//!   Features whose value (after scaling) is 0 are dropped. A feature with an empty name
//!   (`:value`) is an *anonymous* feature, numbered within its namespace as Vowpal Wabbit does.
//! * Blank lines (only spaces/tabs) are skipped. Vowpal Wabbit has no comment syntax.
//!
//! # Hashing
//!
//! With [`crate::hashing`], exactly as Vowpal Wabbit's default `--hash strings`: a namespace's
//! hash is `hash_feature_name(name, seed)` (for the default namespace the empty name, which gives
//! `seed == 0 ? 0 : murmur3("", seed)`, Vowpal Wabbit's rule); a feature's index is
//! `mask(hash_feature_name(feature, namespace_hash), bits)`; the `k`-th anonymous feature of a
//! namespace (from 0) has index `mask(namespace_hash + k, bits)`.
//!
//! # Rows are not canonical
//!
//! Unlike LIBSVM rows, Vowpal Wabbit rows keep the features in file order, one entry per feature
//! occurrence, each with its namespace letter in `namespaces`: entries are neither sorted nor
//! merged, because namespaces must stay apart for interactions, and two features landing on the
//! same index (a hash collision, or a repeated feature) are separate entries, as in Vowpal Wabbit.
//!
//! # One column per namespace
//!
//! With `namespaces`, each listed namespace letter gets its own sparse column instead, named by
//! the letter (`"default"` for the default namespace), so that a learner's namespace crosses
//! (`interactions=[("A", "B")]`) are Vowpal Wabbit's `-q AB`. A learner hashes entry `index` of a
//! column named `name` to `index + hash_feature_name(name, 0)` (see
//! `LearnerConfig::namespace_seed`), so the column stores Vowpal Wabbit's whole 32-bit feature
//! hash minus that seed (wrapping): the learner then lands every feature, and every cross of two
//! features, on Vowpal Wabbit's slot. A numbered feature `|A 5` of a namespace named `A` has index
//! 5. A feature of a namespace that is not listed is an error naming the line. Within a column the
//! entries keep file order as above.
//!
//! Malformed lines are [`PolyError::Parse`](crate::error::PolyError::Parse) errors with the
//! 1-based line number, the reason and the line itself. After an error the reader should be
//! dropped.

use std::path::Path;

use rayon::prelude::*;

use super::lines::{LineReader, TextSource};
use super::{
    parse_error, parse_f64, show, tokens, ColumnData, ColumnKind, RecordReader, Table, TableSource,
};
use crate::error::PolyResult;
use crate::hashing::{hash_feature_name, mask, MAX_HASH_BITS};
use crate::sparse::SparseMatrix;

/// Vowpal Wabbit's default table size exponent (`-b 18`).
pub const DEFAULT_BITS: u32 = 18;

/// How to hash the features of a Vowpal Wabbit file and lay them out (from the caller's options
/// by serde; absent fields take defaults).
#[derive(Clone, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct VwOptions {
    /// Indices keep the low `bits` bits of the hash (1..=32; Vowpal Wabbit's `-b`). Not used
    /// with `namespaces`, whose columns keep the whole hash.
    pub bits: u32,
    /// Hash seed (Vowpal Wabbit's `--hash_seed`).
    pub seed: u32,
    /// `None`: one `features` column and the namespace letter of each entry. `Some(names)`: one
    /// sparse column per namespace letter, in this order, named by it (`"default"` for the
    /// default namespace), indices relative to the column's learner seed (module docs).
    pub namespaces: Option<Vec<String>>,
}

impl Default for VwOptions {
    fn default() -> Self {
        Self { bits: DEFAULT_BITS, seed: 0, namespaces: None }
    }
}

/// The column name of the default namespace in the namespace-columns layout.
pub const DEFAULT_NAMESPACE_COLUMN: &str = "default";

/// A batch of examples: header fields per row, and the features in CSR layout, in file order.
#[derive(Clone, Debug, PartialEq)]
pub struct VwBatch {
    /// `None` for an example without a label.
    pub labels: Vec<Option<f64>>,
    pub importance: Vec<f64>,
    pub base: Vec<f64>,
    pub tags: Vec<Option<String>>,
    /// Row `r` owns entries `offsets[r]..offsets[r + 1]`; starts at 0, one more than the rows.
    pub offsets: Vec<i64>,
    /// Feature hashes: masked to `bits`, or whole with `namespaces`.
    pub indices: Vec<u32>,
    pub values: Vec<f64>,
    /// The namespace letter of each entry (`b' '` for the default namespace).
    pub namespaces: Vec<u8>,
    /// The 1-based line number of the first row (0 for a batch without rows).
    pub first_line: u64,
}

impl VwBatch {
    fn new() -> Self {
        Self {
            labels: Vec::new(),
            importance: Vec::new(),
            base: Vec::new(),
            tags: Vec::new(),
            offsets: vec![0],
            indices: Vec::new(),
            values: Vec::new(),
            namespaces: Vec::new(),
            first_line: 0,
        }
    }

    /// Number of rows (examples) in the batch.
    pub fn n_rows(&self) -> usize {
        self.labels.len()
    }

    /// The pieces' rows in order, in one batch allocated at its final size (growing it piece by
    /// piece copied a 10M-row file's 1.6 GB several times over).
    fn concat(pieces: Vec<VwBatch>) -> PolyResult<Self> {
        // Rows by their offsets: the header columns may have been taken already (`table`).
        let rows: usize = pieces.iter().map(|piece| piece.offsets.len() - 1).sum();
        let headers: usize = pieces.iter().map(VwBatch::n_rows).sum();
        let entries: usize = pieces.iter().map(|piece| piece.indices.len()).sum();
        let mut all = VwBatch::new();
        all.labels.reserve_exact(headers);
        all.importance.reserve_exact(headers);
        all.base.reserve_exact(headers);
        all.tags.reserve_exact(headers);
        all.offsets.reserve_exact(rows);
        all.indices.reserve_exact(entries);
        all.values.reserve_exact(entries);
        all.namespaces.reserve_exact(entries);
        for piece in pieces {
            // Ctrl-C reaches the assembly too (a 10M-line file's is a second or more).
            crate::interrupt::check()?;
            all.append(piece);
        }
        Ok(all)
    }

    /// The header columns (`label`, `weight`, `base`, `tag`) of the pieces' rows in order.
    fn header_columns(pieces: &mut [VwBatch]) -> Vec<(String, ColumnData)> {
        let rows: usize = pieces.iter().map(VwBatch::n_rows).sum();
        let (mut labels, mut importance, mut base, mut tags) = (
            Vec::with_capacity(rows),
            Vec::with_capacity(rows),
            Vec::with_capacity(rows),
            Vec::with_capacity(rows),
        );
        for piece in pieces {
            labels.append(&mut piece.labels);
            importance.append(&mut piece.importance);
            base.append(&mut piece.base);
            tags.append(&mut piece.tags);
        }
        vec![
            ("label".to_owned(), ColumnData::NullableFloat64(labels)),
            ("weight".to_owned(), ColumnData::Float64(importance)),
            ("base".to_owned(), ColumnData::Float64(base)),
            ("tag".to_owned(), ColumnData::NullableText(tags)),
        ]
    }

    /// Appends the rows of `other` (the lines that follow this batch's).
    fn append(&mut self, other: VwBatch) {
        if self.labels.is_empty() {
            self.first_line = other.first_line;
        }
        let shift = self.indices.len() as i64;
        self.offsets.extend(other.offsets[1..].iter().map(|&offset| offset + shift));
        self.labels.extend(other.labels);
        self.importance.extend(other.importance);
        self.base.extend(other.base);
        self.tags.extend(other.tags);
        self.indices.extend(other.indices);
        self.values.extend(other.values);
        self.namespaces.extend(other.namespaces);
    }
}

/// Lines read per block, and per piece parsed by one thread.
const BLOCK_LINES: usize = 1 << 16;
const PIECE_LINES: usize = 1 << 12;

/// Reads a Vowpal Wabbit text file batch by batch, in memory bounded by the batch size.
pub struct VwReader {
    lines: LineReader,
    parser: ExampleParser,
}

impl VwReader {
    /// Opens the (plain or gzip) file at `path`. Fails on `bits` outside 1..=32.
    pub fn open(path: &Path, options: VwOptions) -> PolyResult<Self> {
        check_options(&options)?;
        Ok(Self::new(LineReader::open(path)?, options))
    }

    /// Reads from `source` (plain or gzip bytes); `name` stands for the file in error messages.
    pub fn from_reader(name: &str, source: TextSource, options: VwOptions) -> PolyResult<Self> {
        check_options(&options)?;
        Ok(Self::new(LineReader::from_reader(name, source)?, options))
    }

    fn new(lines: LineReader, options: VwOptions) -> Self {
        let mut column_of = [None; 256];
        for (k, name) in options.namespaces.iter().flatten().enumerate() {
            column_of[usize::from(namespace_letter(name))] = Some(k);
        }
        let parser = ExampleParser { path: lines.name().to_owned(), options, column_of };
        Self { lines, parser }
    }

    /// The next batch of at most `max_rows` examples, or `None` when the file is exhausted.
    pub fn next_batch(&mut self, max_rows: usize) -> PolyResult<Option<VwBatch>> {
        if max_rows == 0 {
            return crate::invalid!("max_rows must be at least 1");
        }
        let batch = self.read_rows(max_rows)?;
        Ok((batch.n_rows() > 0).then_some(batch))
    }

    /// All remaining examples as one batch.
    pub fn read_to_end(mut self) -> PolyResult<VwBatch> {
        self.read_rows(usize::MAX)
    }

    /// The next (at most) `max_rows` examples as one batch.
    fn read_rows(&mut self, max_rows: usize) -> PolyResult<VwBatch> {
        VwBatch::concat(self.read_pieces(max_rows)?)
    }

    /// Reads blocks of lines and parses each block's pieces in parallel (hashing every feature
    /// name is most of the work); the pieces of the next (at most) `max_rows` examples, in file
    /// order. The first malformed line in file order is the error.
    fn read_pieces(&mut self, max_rows: usize) -> PolyResult<Vec<VwBatch>> {
        let (mut pieces, mut rows) = (Vec::new(), 0);
        let (mut text, mut lines) = (Vec::new(), Vec::new());
        while rows < max_rows {
            crate::interrupt::check()?;
            text.clear();
            lines.clear();
            // Blank lines add no rows, so a block never holds more rows than are wanted.
            let wanted = (max_rows - rows).min(BLOCK_LINES);
            while lines.len() < wanted {
                let Some(line) = self.lines.next_line()? else { break };
                let start = text.len();
                text.extend_from_slice(line.text);
                lines.push((line.number, start..text.len()));
            }
            if lines.is_empty() {
                break;
            }
            let parser = &self.parser;
            let parsed: Vec<PolyResult<VwBatch>> = lines
                .par_chunks(PIECE_LINES)
                .map(|piece| {
                    crate::interrupt::check()?;
                    let mut parsed = VwBatch::new();
                    for (number, span) in piece {
                        parser.parse_line(*number, &text[span.clone()], &mut parsed)?;
                    }
                    Ok(parsed)
                })
                .collect();
            for piece in parsed {
                let piece = piece?;
                rows += piece.n_rows();
                pieces.push(piece);
            }
        }
        Ok(pieces)
    }
}

/// Reads the whole Vowpal Wabbit file at `path` into one batch.
pub fn read_all(path: &Path, options: VwOptions) -> PolyResult<VwBatch> {
    VwReader::open(path, options)?.read_to_end()
}

impl ExampleParser {
    /// The pieces' rows, in order, as columns `label`, `weight`, `base`, `tag`, then either
    /// `features` and `namespace` (the namespace letter of each stored feature, aligned with
    /// `features`) or one sparse column per listed namespace. Each column is allocated once at
    /// its final size; with `namespaces`, the pieces are split into their namespaces' columns on
    /// the thread pool, each piece dropped once split.
    fn table(&self, mut pieces: Vec<VwBatch>) -> PolyResult<Table> {
        let mut columns = VwBatch::header_columns(&mut pieces);
        let Some(names) = &self.options.namespaces else {
            let batch = VwBatch::concat(pieces)?;
            let namespaces =
                ColumnData::ByteList { offsets: batch.offsets.clone(), values: batch.namespaces };
            let (offsets, indices, values) = (batch.offsets, batch.indices, batch.values);
            columns.push((
                "features".to_owned(),
                ColumnData::Sparse(SparseMatrix { offsets, indices, values }),
            ));
            columns.push(("namespace".to_owned(), namespaces));
            return Ok(Table { columns });
        };
        let seeds: Vec<u32> =
            names.iter().map(|name| hash_feature_name(name.as_bytes(), 0)).collect();
        let split: Vec<Vec<SparseMatrix<u32, f64>>> = pieces
            .into_par_iter()
            .map(|piece| {
                crate::interrupt::check()?;
                Ok(self.split_namespaces(piece, &seeds))
            })
            .collect::<PolyResult<_>>()?;
        let mut by_column: Vec<Vec<SparseMatrix<u32, f64>>> =
            names.iter().map(|_| Vec::with_capacity(split.len())).collect();
        for parts in split {
            for (column, part) in by_column.iter_mut().zip(parts) {
                column.push(part);
            }
        }
        let joined: Vec<SparseMatrix<u32, f64>> = by_column
            .into_par_iter()
            .map(|parts| SparseMatrix::concat(&parts))
            .collect::<PolyResult<_>>()?;
        columns.extend(names.iter().cloned().zip(joined.into_iter().map(ColumnData::Sparse)));
        Ok(Table { columns })
    }

    /// The features of `piece` as one sparse column per listed namespace (seeds: the columns'
    /// learner seeds, see the module docs).
    fn split_namespaces(&self, piece: VwBatch, seeds: &[u32]) -> Vec<SparseMatrix<u32, f64>> {
        let rows = piece.n_rows();
        let mut split: Vec<SparseMatrix<u32, f64>> =
            seeds.iter().map(|_| SparseMatrix::with_capacity(rows, rows)).collect();
        for row in piece.offsets.windows(2) {
            for entry in row[0] as usize..row[1] as usize {
                // The parser let only listed letters through.
                if let Some(k) = self.column_of[usize::from(piece.namespaces[entry])] {
                    split[k].push(piece.indices[entry].wrapping_sub(seeds[k]), piece.values[entry]);
                }
            }
            for column in &mut split {
                column.end_row();
            }
        }
        split
    }
}

/// The namespace letter a column name stands for (checked by `check_options`).
fn namespace_letter(name: &str) -> u8 {
    if name == DEFAULT_NAMESPACE_COLUMN {
        b' '
    } else {
        name.as_bytes()[0]
    }
}

impl TableSource for VwReader {
    fn next_table(&mut self, max_rows: usize) -> PolyResult<Option<Table>> {
        if max_rows == 0 {
            return crate::invalid!("max_rows must be at least 1");
        }
        let pieces = self.read_pieces(max_rows)?;
        let any = pieces.iter().any(|piece| piece.n_rows() > 0);
        any.then(|| self.parser.table(pieces)).transpose()
    }

    fn read_rest(self: Box<Self>) -> PolyResult<Table> {
        let mut reader = *self;
        let pieces = reader.read_pieces(usize::MAX)?;
        reader.parser.table(pieces)
    }
}

impl RecordReader for VwReader {
    const NAME: &'static str = "vw";
    type Options = VwOptions;

    fn open(path: &Path, options: VwOptions) -> PolyResult<Self> {
        VwReader::open(path, options)
    }

    fn schema(options: &VwOptions) -> Vec<(String, ColumnKind)> {
        let kinds = [
            ("label", ColumnKind::NullableFloat64),
            ("weight", ColumnKind::Float64),
            ("base", ColumnKind::Float64),
            ("tag", ColumnKind::NullableText),
        ];
        let mut schema: Vec<(String, ColumnKind)> =
            kinds.into_iter().map(|(name, kind)| (name.to_owned(), kind)).collect();
        match &options.namespaces {
            None => {
                schema.push(("features".to_owned(), ColumnKind::Sparse));
                schema.push(("namespace".to_owned(), ColumnKind::ByteList));
            }
            Some(names) => {
                schema.extend(names.iter().map(|name| (name.clone(), ColumnKind::Sparse)));
            }
        }
        schema
    }
}

fn check_options(options: &VwOptions) -> PolyResult<()> {
    if !(1..=MAX_HASH_BITS).contains(&options.bits) {
        return crate::invalid!("bits must be between 1 and {MAX_HASH_BITS}, got {}", options.bits);
    }
    if let Some(names) = &options.namespaces {
        if names.is_empty() {
            return crate::invalid!("namespaces is empty: list the namespace letters to read");
        }
        let mut seen = [false; 256];
        for name in names {
            if name.len() != 1 && name != DEFAULT_NAMESPACE_COLUMN {
                return crate::invalid!(
                    "namespace {name:?} is not one letter: namespaces are named by their first \
                     letter (\"{DEFAULT_NAMESPACE_COLUMN}\" for the default namespace)"
                );
            }
            if name == " " {
                return crate::invalid!(
                    "the default namespace's column is named \"{DEFAULT_NAMESPACE_COLUMN}\", not \" \""
                );
            }
            let letter = usize::from(namespace_letter(name));
            if std::mem::replace(&mut seen[letter], true) {
                return crate::invalid!("namespace {name:?} is listed twice");
            }
        }
    }
    Ok(())
}

/// The fields before the first `|`.
struct Header<'a> {
    label: Option<f64>,
    importance: f64,
    base: f64,
    tag: Option<&'a [u8]>,
}

#[derive(Clone)]
struct ExampleParser {
    path: String,
    options: VwOptions,
    /// With `options.namespaces`: the column of each namespace letter (`None`: not listed).
    column_of: [Option<usize>; 256],
}

impl ExampleParser {
    /// Appends the example on line `number` to `batch`; blank lines add nothing.
    fn parse_line(&self, number: u64, text: &[u8], batch: &mut VwBatch) -> PolyResult<()> {
        self.parse_example(number, text, batch)
            .map_err(|reason| parse_error(&self.path, number, text, reason))
    }

    fn parse_example(&self, number: u64, text: &[u8], batch: &mut VwBatch) -> Result<(), String> {
        if text.iter().all(|&b| is_space(b)) {
            return Ok(());
        }
        let (header, namespaces) = match text.iter().position(|&b| b == b'|') {
            Some(bar) => (&text[..bar], Some(&text[bar + 1..])),
            None => (text, None),
        };
        let header = parse_header(header)?;
        let tag = header
            .tag
            .map(|tag| {
                String::from_utf8(tag.to_vec())
                    .map_err(|_| format!("tag {:?} is not valid UTF-8", show(tag)))
            })
            .transpose()?;
        if let Some(namespaces) = namespaces {
            for segment in namespaces.split(|&b| b == b'|') {
                self.parse_namespace(segment, batch)?;
            }
        }
        if batch.labels.is_empty() {
            batch.first_line = number;
        }
        batch.labels.push(header.label);
        batch.importance.push(header.importance);
        batch.base.push(header.base);
        batch.tags.push(tag);
        batch.offsets.push(batch.indices.len() as i64);
        Ok(())
    }

    /// Appends the features of one namespace (the text after its `|`) to the current row.
    fn parse_namespace(&self, segment: &[u8], batch: &mut VwBatch) -> Result<(), String> {
        let name_end = segment.iter().position(|&b| is_space(b)).unwrap_or(segment.len());
        let (declaration, features) = segment.split_at(name_end);
        let (name, scale) = match declaration.iter().position(|&b| b == b':') {
            Some(0) => {
                return Err(format!(
                    "namespace scale {:?} has no namespace name",
                    show(declaration)
                ));
            }
            Some(colon) => (&declaration[..colon], parse_scale(&declaration[colon + 1..])?),
            None => (declaration, 1.0),
        };
        let letter = name.first().copied().unwrap_or(b' ');
        let bits = match self.options.namespaces {
            None => self.options.bits,
            Some(_) if self.column_of[usize::from(letter)].is_some() => MAX_HASH_BITS,
            Some(ref names) => {
                return Err(format!(
                    "namespace {:?} is not among the namespaces read ({names:?})",
                    if letter == b' ' { DEFAULT_NAMESPACE_COLUMN.to_owned() } else { show(name) }
                ))
            }
        };
        let namespace_hash = hash_feature_name(name, self.options.seed);
        let mut anonymous: u32 = 0;
        for feature in tokens(features, is_space) {
            let (feature_name, value) = match feature.iter().position(|&b| b == b':') {
                Some(colon) => (&feature[..colon], parse_value(feature, &feature[colon + 1..])?),
                None => (feature, 1.0),
            };
            let hash = if feature_name.is_empty() {
                let hash = namespace_hash.wrapping_add(anonymous);
                anonymous = anonymous.wrapping_add(1);
                hash
            } else {
                hash_feature_name(feature_name, namespace_hash)
            };
            let value = value * scale;
            if !value.is_finite() {
                return Err(format!(
                    "feature {:?} times the namespace scale {scale} is not finite",
                    show(feature)
                ));
            }
            if value != 0.0 {
                batch.indices.push(mask(hash, bits) as u32);
                batch.values.push(value);
                batch.namespaces.push(letter);
            }
        }
        Ok(())
    }
}

/// Vowpal Wabbit's field separators.
fn is_space(byte: u8) -> bool {
    byte == b' ' || byte == b'\t'
}

fn parse_header(header: &[u8]) -> Result<Header<'_>, String> {
    let mut numbers = [0.0; 3];
    let mut count = 0;
    let mut tag = None;
    let mut fields = tokens(header, is_space).peekable();
    while let Some(field) = fields.next() {
        let is_last = fields.peek().is_none();
        if let Some(quoted) = field.strip_prefix(b"'") {
            if !is_last {
                return Err(format!(
                    "tag {:?} must be the last field before the first '|'",
                    show(field)
                ));
            }
            tag = Some(quoted);
        } else if let Some(number) = parse_f64(field) {
            if count == numbers.len() {
                return Err("more than three numbers before the first '|' \
                            (expected [label [importance [base]]] ['tag])"
                    .into());
            }
            numbers[count] = number;
            count += 1;
        } else if field.contains(&b':') {
            return Err(format!(
                "label {:?} is not a simple label: only [label [importance [base]]] is supported \
                 (quote a tag containing ':' with an apostrophe)",
                show(field)
            ));
        } else if is_last {
            tag = Some(field);
        } else {
            return Err(format!(
                "{:?} before the first '|' is not a number (only the last field may be a tag)",
                show(field)
            ));
        }
    }
    let label = (count >= 1).then_some(numbers[0]);
    let importance = if count >= 2 { numbers[1] } else { 1.0 };
    let base = if count >= 3 { numbers[2] } else { 0.0 };
    if label.is_some_and(|label| !label.is_finite()) {
        return Err(format!("non-finite label {}", numbers[0]));
    }
    if !(importance.is_finite() && importance >= 0.0) {
        return Err(format!("importance weight {importance} must be finite and >= 0"));
    }
    if !base.is_finite() {
        return Err(format!("non-finite base {base}"));
    }
    Ok(Header { label, importance, base, tag })
}

fn parse_scale(text: &[u8]) -> Result<f64, String> {
    match parse_f64(text) {
        Some(scale) if scale.is_finite() => Ok(scale),
        _ => Err(format!("namespace scale {:?} is not a finite number", show(text))),
    }
}

fn parse_value(feature: &[u8], text: &[u8]) -> Result<f64, String> {
    match parse_f64(text) {
        Some(value) if value.is_finite() => Ok(value),
        Some(value) => Err(format!("feature {:?} has a non-finite value {value}", show(feature))),
        None => Err(format!("feature value {:?} is not a number", show(text))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::PolyError;
    use crate::hashing::murmur3_32;
    use crate::readers::lines::tests::{gzip, source};

    fn reader_of(bytes: &[u8], options: VwOptions) -> VwReader {
        VwReader::from_reader("mem.vw", source(bytes.to_vec()), options).unwrap()
    }

    fn read(text: &str, options: VwOptions) -> PolyResult<VwBatch> {
        reader_of(text.as_bytes(), options).read_to_end()
    }

    fn read_default(text: &str) -> VwBatch {
        read(text, VwOptions::default()).unwrap()
    }

    /// Row `row` as (namespace letter, index, value) triples.
    fn row(batch: &VwBatch, row: usize) -> Vec<(u8, u32, f64)> {
        let (start, end) = (batch.offsets[row] as usize, batch.offsets[row + 1] as usize);
        (start..end).map(|i| (batch.namespaces[i], batch.indices[i], batch.values[i])).collect()
    }

    /// Index of `feature` in the namespace called `namespace`, computed with crate::hashing.
    /// Blocks are parsed in parallel pieces: the result is the line-by-line parse, and the
    /// error is the first malformed line of the file, whichever piece finishes first.
    #[test]
    fn parallel_parsing_equals_line_by_line() {
        let mut text = String::new();
        for k in 0..(BLOCK_LINES + 3 * PIECE_LINES + 17) {
            if k % 1000 == 999 {
                text.push_str("  \n");
            } else {
                text.push_str(&format!(
                    "{} {} |a x{} y:{k} |b z{}\n",
                    k % 2,
                    1 + k % 3,
                    k % 97,
                    k % 5
                ));
            }
        }
        let options = VwOptions::default();
        let parallel = read(&text, options.clone()).unwrap();
        let parser = reader_of(b"", options.clone()).parser;
        let mut serial = VwBatch::new();
        for (k, line) in text.lines().enumerate() {
            parser.parse_line(k as u64 + 1, line.as_bytes(), &mut serial).unwrap();
        }
        assert_eq!(parallel, serial);
        let batches: Vec<VwBatch> = {
            let mut reader = reader_of(text.as_bytes(), options.clone());
            std::iter::from_fn(|| reader.next_batch(50_000).unwrap()).collect()
        };
        assert_eq!(batches.iter().map(VwBatch::n_rows).sum::<usize>(), serial.n_rows());
        assert_eq!(batches[1].first_line, 50_051, "50,000 rows and 50 blank lines before");
        let mut lines: Vec<&str> = text.lines().collect();
        lines[PIECE_LINES + 5] = "1 |a x:bad";
        lines[3 * PIECE_LINES + 1] = "1 |a y:worse";
        let err = read(&(lines.join("\n") + "\n"), options).unwrap_err().to_string();
        assert!(err.contains(&format!("line {}", PIECE_LINES + 6)) && err.contains("bad"), "{err}");
    }

    /// With one column per namespace, the tables the reader builds from many parsed pieces
    /// (split on the thread pool, each column joined once) equal the table of the same rows
    /// parsed line by line into one batch: whole, and batch by batch.
    #[test]
    fn namespace_tables_of_many_pieces_equal_the_table_of_one_batch() {
        let mut text = String::new();
        for k in 0..(BLOCK_LINES + 2 * PIECE_LINES + 9) {
            if k % 777 == 776 {
                text.push('\n');
            } else {
                text.push_str(&format!("{} 'r{k} |a x{} y:{k} |b z{} |c\n", k % 2, k % 97, k % 5));
            }
        }
        let names = vec!["a".to_owned(), "b".to_owned(), "c".to_owned()];
        let options = VwOptions { namespaces: Some(names), ..VwOptions::default() };
        let parser = reader_of(b"", options.clone()).parser;
        let lines: Vec<&str> = text.lines().collect();
        let table_of_lines = |range: std::ops::Range<usize>| {
            let mut serial = VwBatch::new();
            for k in range {
                parser.parse_line(k as u64 + 1, lines[k].as_bytes(), &mut serial).unwrap();
            }
            parser.table(vec![serial]).unwrap()
        };
        let whole: Box<dyn TableSource> = Box::new(reader_of(text.as_bytes(), options.clone()));
        assert_eq!(whole.read_rest().unwrap(), table_of_lines(0..lines.len()));
        let mut reader = reader_of(text.as_bytes(), options);
        let first = reader.next_table(30_000).unwrap().unwrap();
        // 30,000 rows are the first 30,038 lines (38 of them blank).
        assert_eq!(first, table_of_lines(0..30_038));
        let rest = std::iter::from_fn(|| reader.next_table(30_000).unwrap());
        let counts: Vec<usize> = rest.map(|table| table.n_rows()).collect();
        let total = lines.iter().filter(|line| !line.is_empty()).count();
        assert_eq!(30_000 + counts.iter().sum::<usize>(), total);
    }

    #[test]
    fn namespace_columns_keep_the_whole_hash_relative_to_the_learners_seed() {
        let text = "1 |Animal x:2 5 |B y\n-1 |B z :3 |Apple w\n0 | d\n";
        let names = vec!["A".to_owned(), "B".to_owned(), "default".to_owned()];
        let options = VwOptions { namespaces: Some(names.clone()), ..VwOptions::default() };
        let reader = reader_of(text.as_bytes(), options.clone());
        let parser = reader.parser.clone();
        let table = parser.table(vec![reader.read_to_end().unwrap()]).unwrap();
        let schema: Vec<String> = table.columns.iter().map(|(name, _)| name.clone()).collect();
        assert_eq!(schema, ["label", "weight", "base", "tag", "A", "B", "default"]);
        assert_eq!(VwReader::schema(&options).len(), 7);
        // What a learner adds back: the seed of the column's name.
        let learner_hash =
            |column: &str, index: u32| index.wrapping_add(hash_feature_name(column.as_bytes(), 0));
        let vw_hash = |namespace: &str, feature: &str| {
            hash_feature_name(feature.as_bytes(), hash_feature_name(namespace.as_bytes(), 0))
        };
        let column = |name: &str| match &table.columns.iter().find(|(n, _)| n == name).unwrap().1 {
            ColumnData::Sparse(matrix) => matrix.clone(),
            other => panic!("{other:?}"),
        };
        let a = column("A");
        assert_eq!(a.offsets, [0, 2, 3, 3]);
        assert_eq!(learner_hash("A", a.indices[0]), vw_hash("Animal", "x"));
        assert_eq!(learner_hash("A", a.indices[1]), vw_hash("Animal", "5"));
        assert_eq!(learner_hash("A", a.indices[2]), vw_hash("Apple", "w"));
        assert_eq!(a.values, [2.0, 1.0, 1.0]);
        let b = column("B");
        assert_eq!(b.offsets, [0, 1, 3, 3]);
        // A numbered feature of a namespace named by its letter is its number; the anonymous
        // feature `:3` is the namespace hash + 0.
        assert_eq!(learner_hash("B", b.indices[2]), hash_feature_name(b"B", 0));
        assert_eq!(column("default").offsets, [0, 0, 0, 1]);
        assert_eq!(learner_hash("default", column("default").indices[0]), vw_hash("", "d"));
        let numbered = reader_of(
            b"1 |A 5\n",
            VwOptions { namespaces: Some(vec!["A".into()]), ..VwOptions::default() },
        );
        let parser = numbered.parser.clone();
        let table = parser.table(vec![numbered.read_to_end().unwrap()]).unwrap();
        assert!(matches!(&table.columns[4].1, ColumnData::Sparse(m) if m.indices == [5]));
    }

    #[test]
    fn namespace_columns_reject_unlisted_namespaces_and_bad_names() {
        let options = VwOptions { namespaces: Some(vec!["A".into()]), ..VwOptions::default() };
        let err = read("1 |A x\n1 |A y |Bee z\n", options).unwrap_err().to_string();
        assert!(err.contains("line 2") && err.contains("\"Bee\" is not among"), "{err}");
        for (names, message) in [
            (vec![], "empty"),
            (vec!["AB".to_owned()], "not one letter"),
            (vec!["A".to_owned(), "A".to_owned()], "listed twice"),
            (vec![" ".to_owned()], "named \"default\""),
        ] {
            let options = VwOptions { namespaces: Some(names), ..VwOptions::default() };
            let err = VwReader::from_reader("mem.vw", source(Vec::new()), options);
            let err = err.err().unwrap().to_string();
            assert!(err.contains(message), "{err}");
        }
    }

    fn index(namespace: &str, feature: &str, options: &VwOptions) -> u32 {
        let namespace_hash = hash_feature_name(namespace.as_bytes(), options.seed);
        mask(hash_feature_name(feature.as_bytes(), namespace_hash), options.bits) as u32
    }

    fn parse_failure(result: PolyResult<VwBatch>) -> (u64, String, String) {
        match result {
            Err(PolyError::Parse { path, line, reason, text }) => {
                assert_eq!(path, "mem.vw");
                (line, reason, text)
            }
            other => panic!("expected a parse error, got {other:?}"),
        }
    }

    #[test]
    fn header_variants() {
        let text = "1 |a x\n-1 2.5 |a x\n0 0.5 0.25 |a x\n1 'first |a x\n1 2 second|a x\n\
                    |a x\n'only_tag |a x\nlonely_tag|a x\n3\n1 0 'zero_weight\n";
        let batch = read_default(text);
        assert_eq!(
            batch.labels,
            vec![
                Some(1.0),
                Some(-1.0),
                Some(0.0),
                Some(1.0),
                Some(1.0),
                None,
                None,
                None,
                Some(3.0),
                Some(1.0)
            ]
        );
        assert_eq!(batch.importance, vec![1.0, 2.5, 0.5, 1.0, 2.0, 1.0, 1.0, 1.0, 1.0, 0.0]);
        assert_eq!(batch.base, vec![0.0, 0.0, 0.25, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
        let tags: Vec<Option<&str>> = batch.tags.iter().map(Option::as_deref).collect();
        assert_eq!(
            tags,
            vec![
                None,
                None,
                None,
                Some("first"),
                Some("second"),
                None,
                Some("only_tag"),
                Some("lonely_tag"),
                None,
                Some("zero_weight")
            ]
        );
        // Lines without '|' are examples without features.
        assert_eq!(batch.offsets[8..], [8, 8, 8]);
        // A quoted tag may look like a number or contain ':'.
        let batch = read_default("1 '2.5 |a x\n'id:7|a x\n");
        assert_eq!(batch.tags, vec![Some("2.5".to_string()), Some("id:7".to_string())]);
        assert_eq!(batch.importance, vec![1.0, 1.0]);
    }

    #[test]
    fn namespaces_scales_and_values() {
        let options = VwOptions::default();
        let batch = read_default("1 |a x:2 y |b:0.5 z:4 123 |c:2 w:0 v:-1.5e0\n");
        assert_eq!(
            row(&batch, 0),
            vec![
                (b'a', index("a", "x", &options), 2.0),
                (b'a', index("a", "y", &options), 1.0),
                (b'b', index("b", "z", &options), 2.0),
                (b'b', index("b", "123", &options), 0.5),
                (b'c', index("c", "v", &options), -3.0),
            ]
        );
        // Long namespace names: the letter is the first byte, the hash uses the whole name.
        let batch = read_default("1 |apple x |avocado x\n");
        let entries = row(&batch, 0);
        assert_eq!(entries[0], (b'a', index("apple", "x", &options), 1.0));
        assert_eq!(entries[1], (b'a', index("avocado", "x", &options), 1.0));
        assert_ne!(entries[0].1, entries[1].1);
        // A zero scale drops the whole namespace.
        assert_eq!(row(&read_default("1 |a:0 x y |b z\n"), 0).len(), 1);
    }

    #[test]
    fn default_namespace_and_bare_features() {
        let options = VwOptions::default();
        let batch = read_default("1 | a b:3\n2 |\tc\n3 |\n4|   \n");
        assert_eq!(
            row(&batch, 0),
            vec![(b' ', index("", "a", &options), 1.0), (b' ', index("", "b", &options), 3.0)]
        );
        assert_eq!(row(&batch, 1), vec![(b' ', index("", "c", &options), 1.0)]);
        assert_eq!(batch.offsets[2..], [3, 3, 3]);
    }

    #[test]
    fn hashing_matches_the_hashing_module_and_vowpal_wabbit() {
        // Digit names hash to their value plus the namespace hash; the default namespace hash
        // is 0 with seed 0, so feature "123" lands on index 123.
        let batch = read_default("1 | 123 7:2\n");
        assert_eq!(row(&batch, 0), vec![(b' ', 123, 1.0), (b' ', 7, 2.0)]);
        // Named namespace: murmur3 of the names, the namespace hash seeding the feature hash.
        let options = VwOptions { bits: 32, seed: 0, namespaces: None };
        let batch = read("1 |user alice\n", options).unwrap();
        assert_eq!(batch.indices, vec![murmur3_32(b"alice", murmur3_32(b"user", 0))]);
        // With a seed, the default namespace hash is murmur3("", seed) (Vowpal Wabbit's rule).
        let options = VwOptions { bits: 32, seed: 42, namespaces: None };
        let batch = read("1 | 5 x |n y\n", options).unwrap();
        let default_hash = murmur3_32(b"", 42);
        assert_eq!(
            batch.indices,
            vec![
                5u32.wrapping_add(default_hash),
                murmur3_32(b"x", default_hash),
                murmur3_32(b"y", hash_feature_name(b"n", 42)),
            ]
        );
        // Masking keeps the low bits.
        let narrow = VwOptions { bits: 4, seed: 0, namespaces: None };
        assert_eq!(read("1 | 123\n", narrow).unwrap().indices, vec![123 & 0xf]);
    }

    #[test]
    fn anonymous_features_are_numbered_per_namespace() {
        let options = VwOptions { bits: 32, seed: 0, namespaces: None };
        let batch = read("1 |n :2 x :0 :3 |m :1\n", options).unwrap();
        let n = hash_feature_name(b"n", 0);
        let m = hash_feature_name(b"m", 0);
        assert_eq!(batch.indices, vec![n, murmur3_32(b"x", n), n + 2, m]);
        assert_eq!(batch.values, vec![2.0, 1.0, 3.0, 1.0]);
    }

    #[test]
    fn rows_keep_file_order_duplicates_and_namespaces_apart() {
        let options = VwOptions::default();
        let batch = read_default("1 |b z y z |a z\n");
        let z_b = index("b", "z", &options);
        assert_eq!(
            row(&batch, 0),
            vec![
                (b'b', z_b, 1.0),
                (b'b', index("b", "y", &options), 1.0),
                (b'b', z_b, 1.0),
                (b'a', index("a", "z", &options), 1.0),
            ]
        );
        // With one bit everything collides; nothing is merged.
        let batch =
            read("1 |a p q r s\n", VwOptions { bits: 1, seed: 0, namespaces: None }).unwrap();
        assert_eq!(batch.indices.len(), 4);
        assert!(batch.indices.iter().all(|&i| i <= 1));
    }

    #[test]
    fn blank_lines_tabs_crlf_and_gzip() {
        let text = "\n  \t\r\n1\t|a\tx:2\r\n\n-1 'tag |b y\n";
        let plain = read_default(text);
        assert_eq!(plain.labels, vec![Some(1.0), Some(-1.0)]);
        assert_eq!(plain.first_line, 3);
        assert_eq!(row(&plain, 0), vec![(b'a', index("a", "x", &VwOptions::default()), 2.0)]);
        let packed = reader_of(&gzip(text.as_bytes()), VwOptions::default()).read_to_end().unwrap();
        assert_eq!(packed, plain);
    }

    #[test]
    fn bits_are_checked() {
        for bits in [0, 33] {
            let options = VwOptions { bits, seed: 0, namespaces: None };
            let err =
                VwReader::from_reader("mem.vw", source(Vec::new()), options.clone()).err().unwrap();
            assert!(matches!(&err, PolyError::InvalidInput(m) if m.contains("bits")), "{err}");
            assert!(read_all(Path::new("/nonexistent.vw"), options).is_err());
        }
        assert!(read("1 | a\n", VwOptions { bits: 32, seed: 0, namespaces: None }).is_ok());
        assert!(read("1 | a\n", VwOptions { bits: 1, seed: 0, namespaces: None }).is_ok());
        let err = read_all(Path::new("/nonexistent/pp/data.vw"), VwOptions::default()).unwrap_err();
        assert!(matches!(err, PolyError::Io { .. }), "{err}");
    }

    #[test]
    fn malformed_lines_name_the_line_and_the_reason() {
        let cases = [
            ("1 |a x:abc", "feature value \"abc\" is not a number"),
            ("1 |a x:", "feature value \"\" is not a number"),
            ("1 |a x:1:2", "feature value \"1:2\" is not a number"),
            ("1 |a x:nan", "non-finite value NaN"),
            ("1 |a x:inf", "non-finite value inf"),
            ("1 |a:1e300 x:1e300", "is not finite"),
            ("1 |a:z x", "namespace scale \"z\" is not a finite number"),
            ("1 |a:nan x", "namespace scale \"nan\""),
            ("1 |:2 x", "has no namespace name"),
            ("1 -2 |a x", "importance weight -2 must be finite and >= 0"),
            ("1 nan |a x", "importance weight NaN"),
            ("inf |a x", "non-finite label"),
            ("1 2 inf |a x", "non-finite base"),
            ("1 2 3 4 |a x", "more than three numbers"),
            ("1 'tag 2 |a x", "must be the last field"),
            ("word 2 |a x", "\"word\" before the first '|' is not a number"),
            ("1:0.5 |a x", "not a simple label"),
            ("1 2:3:0.5 |a x", "not a simple label"),
        ];
        for (line, expected) in cases {
            let (number, reason, text) =
                parse_failure(read(&format!("1 |a x\n{line}\n"), VwOptions::default()));
            assert_eq!((number, text.as_str()), (2, line));
            assert!(reason.contains(expected), "{line}: {reason}");
        }
        let mut bad_tag = b"1 |a x\n1 '".to_vec();
        bad_tag.extend(b"\xff |a x\n");
        let (number, reason, _) =
            parse_failure(reader_of(&bad_tag, VwOptions::default()).read_to_end());
        assert_eq!(number, 2);
        assert!(reason.contains("not valid UTF-8"), "{reason}");
    }

    #[test]
    fn batches_equal_the_whole_file() {
        let mut text = String::new();
        for i in 0..100 {
            match i % 4 {
                0 => text.push_str(&format!("{} 'r{i} |a f{i} g:{i} |b:2 h{}\n", i % 2, i % 7)),
                1 => text.push_str(&format!("{i} 0.5 |  x{i} y\n\n")),
                2 => text.push_str(&format!("|c z{i}:0.{i}\n")),
                _ => text.push_str("-1\n"),
            }
        }
        let whole = read_default(&text);
        assert_eq!(whole.n_rows(), 100);
        for size in [1, 3, 7, 100, 1000] {
            let mut reader = reader_of(text.as_bytes(), VwOptions::default());
            let mut rows = 0;
            let mut first_lines = Vec::new();
            let mut joined = VwBatch::new();
            while let Some(batch) = reader.next_batch(size).unwrap() {
                assert!(batch.n_rows() <= size);
                rows += batch.n_rows();
                first_lines.push(batch.first_line);
                let base = joined.indices.len() as i64;
                joined.labels.extend(batch.labels);
                joined.importance.extend(batch.importance);
                joined.base.extend(batch.base);
                joined.tags.extend(batch.tags);
                joined.offsets.extend(batch.offsets[1..].iter().map(|o| o + base));
                joined.indices.extend(batch.indices);
                joined.values.extend(batch.values);
                joined.namespaces.extend(batch.namespaces);
            }
            joined.first_line = first_lines[0];
            assert_eq!(rows, 100);
            assert_eq!(joined, whole, "batch size {size}");
        }
        let err = reader_of(b"1 | a\n", VwOptions::default()).next_batch(0).unwrap_err();
        assert!(matches!(err, PolyError::InvalidInput(_)), "{err}");
        assert_eq!(reader_of(b"\n \n", VwOptions::default()).next_batch(4).unwrap(), None);
        let empty = read_default("");
        assert_eq!((empty.n_rows(), empty.offsets, empty.first_line), (0, vec![0], 0));
    }
}
