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
//!   `'text` (the apostrophe is stripped), any field that is not a number, or, as in Vowpal
//!   Wabbit, any field that touches the `|` (`1 0.5|a` has the tag `0.5`). The label may be
//!   missing (`labels` holds `None`). Only Vowpal Wabbit's simple label is supported: a field
//!   with a `:` (as in multiclass, cost-sensitive or contextual-bandit labels) is read as Vowpal
//!   Wabbit reads it, as the number before the `:` (`1:1` is label 1; counted in
//!   [`PartlyRead`] for the caller's warning), and is an error when no number comes before the
//!   `:` (unless written as a `'`-quoted tag).
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
//! * A NUL byte right after a number (a feature value or a namespace scale) ends the line's
//!   features, as in Vowpal Wabbit, whose parser reads the number and, finding no separator
//!   after it, leaves out the rest of the line (with a warning).
//!
//! # Vowpal Wabbit's feature options
//!
//! `ignore` / `keep` (`--ignore`, `--keep`) remove namespaces' features from every example,
//! before the n-grams (`ngram`, `skips`: the `grams` module) are added; `hash: all` (`--hash all`) hashes
//! every name with MurmurHash3 as it is. The options are compiled once (`Compiled`) into
//! per-letter tables. `namespaces="auto"` lists a file's namespaces with [`scan_namespaces`].
//!
//! # Hashing
//!
//! With [`crate::hashing`], exactly as Vowpal Wabbit's default `--hash strings` (`hash: all`:
//! MurmurHash3 of every name, see [`HashMode`]): a namespace's
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
use serde::de::Deserializer;

use crate::error::PolyResult;
use crate::hashing::{hash_feature_name, mask, murmur3_32, MAX_HASH_BITS};
use crate::sparse::SparseMatrix;

mod grams;
mod parse;
mod scan;

use grams::Grams;
use parse::{parse_header, Compiled, ExampleParser};
pub use scan::{scan_file, scan_namespaces, VwScan, SCAN_LABELS};

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
    /// With `namespaces`: what a feature of a namespace that is not listed does.
    pub other_namespaces: OtherNamespaces,
    /// Namespaces whose features are removed (Vowpal Wabbit's `--ignore`), by column name (the
    /// letter, `"default"` for the default namespace).
    pub ignore: Vec<String>,
    /// `Some(names)`: only these namespaces' features are kept (Vowpal Wabbit's `--keep`).
    pub keep: Option<Vec<String>>,
    /// How feature and namespace names are hashed (Vowpal Wabbit's `--hash`).
    pub hash: HashMode,
    /// N-gram specifications (Vowpal Wabbit's `--ngram`): `"N"` for every namespace, `"aN"` for
    /// namespace `a` (`"defaultN"` or `" N"` for the default namespace); later ones win.
    pub ngram: Vec<String>,
    /// Skip specifications (Vowpal Wabbit's `--skips`), written as `ngram`'s.
    pub skips: Vec<String>,
}

impl Default for VwOptions {
    fn default() -> Self {
        Self {
            bits: DEFAULT_BITS,
            seed: 0,
            namespaces: None,
            other_namespaces: OtherNamespaces::Error,
            ignore: Vec::new(),
            keep: None,
            hash: HashMode::Strings,
            ngram: Vec::new(),
            skips: Vec::new(),
        }
    }
}

/// With a namespace list, what a feature of a namespace that is not listed does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OtherNamespaces {
    /// A parse error naming the line (a file that should hold only the listed namespaces).
    #[default]
    Error,
    /// The feature is left out (scoring a file with a model's namespaces: the model has no
    /// weights for the others, except by collision).
    Drop,
}

/// Vowpal Wabbit's `--hash`: how names become hashes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HashMode {
    /// All-digit names are their value plus the seed, others MurmurHash3 of the name with
    /// surrounding control bytes and spaces trimmed ([`hash_feature_name`]).
    #[default]
    Strings,
    /// Every name is MurmurHash3 of its bytes as they are (digits and spaces included).
    All,
}

impl HashMode {
    #[inline]
    fn hash(self, name: &[u8], seed: u32) -> u32 {
        match self {
            HashMode::Strings => hash_feature_name(name, seed),
            HashMode::All => murmur3_32(name, seed),
        }
    }
}

/// The options of the caller's `options` (the same checks as opening a file).
pub fn options<'de, D: Deserializer<'de>>(options: D) -> PolyResult<VwOptions> {
    let options = super::reader_options::<VwReader, D>(options)?;
    Compiled::new(&options)?;
    Ok(options)
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
    /// Each entry's name as Vowpal Wabbit's audit writes it (`ns^feature`, `feature` in the
    /// default namespace, `ns^` for an anonymous one), from a reader
    /// [`VwReader::with_names`]; empty otherwise.
    pub names: Vec<String>,
    /// The 1-based line number of the first row (0 for a batch without rows).
    pub first_line: u64,
    /// Its header fields read in part (`1:1`).
    pub partly_read: PartlyRead,
    /// A reader feeding a learner ([`VwReader::for_learner`]) parses each feature straight into
    /// its namespace's column (as the table layout has them), leaving the entries above empty.
    columns: Option<Vec<SparseMatrix<u32, f64>>>,
    /// With names kept, each column's entries' names (parallel to `columns`).
    column_names: Option<Vec<Vec<String>>>,
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
            names: Vec::new(),
            first_line: 0,
            partly_read: PartlyRead::default(),
            columns: None,
            column_names: None,
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
        self.names.extend(other.names);
        self.partly_read.add(&other.partly_read);
    }
}

/// Header fields read up to their first ':' as Vowpal Wabbit reads them (`1:1`, a
/// cost-sensitive label's form, is label 1): how many lines had one, and the first of them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PartlyRead {
    pub lines: u64,
    /// The first such line's number (1-based) and field.
    pub first: Option<(u64, String)>,
}

impl PartlyRead {
    pub(crate) fn note(&mut self, line: u64, field: &[u8]) {
        self.lines += 1;
        if self.first.is_none() {
            self.first = Some((line, String::from_utf8_lossy(field).into_owned()));
        }
    }

    /// The fields of `pieces`, lines in order.
    pub(crate) fn of(pieces: &[VwBatch]) -> Self {
        let mut all = PartlyRead::default();
        pieces.iter().for_each(|piece| all.add(&piece.partly_read));
        all
    }

    /// Adds the fields of the lines that follow.
    pub fn add(&mut self, later: &PartlyRead) {
        self.lines += later.lines;
        if self.first.is_none() {
            self.first.clone_from(&later.first);
        }
    }

    /// The warning to give, if any field was read in part.
    pub fn warning(&self) -> Option<String> {
        let (line, field) = self.first.as_ref()?;
        let number = field.split(':').next().unwrap_or_default();
        let others = match self.lines {
            0 | 1 => String::new(),
            2 => " (and 1 other line so far)".to_owned(),
            n => format!(" (and {} other lines so far)", n - 1),
        };
        Some(format!(
            "line {line}{others}: header field {field:?} read as {number}, as Vowpal Wabbit reads \
             it (what follows the number is dropped; a label with ':' belongs to another label \
             type than this simple one)"
        ))
    }
}

/// A batch of examples with one sparse column per listed namespace (in the reader's
/// `namespaces` order, indices relative to the column's learner seed as in the table layout).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct VwColumns {
    /// `None` for an example without a label.
    pub labels: Vec<Option<f64>>,
    pub importance: Vec<f64>,
    pub tags: Vec<Option<String>>,
    pub columns: Vec<SparseMatrix<u32, f64>>,
    /// From a reader [`VwReader::with_names`]: each column's entries' names (as
    /// [`VwBatch::names`]), parallel to its entries; empty otherwise.
    pub names: Vec<Vec<String>>,
    /// Its header fields read in part (`1:1`); not kept in a cache.
    pub partly_read: PartlyRead,
}

impl VwColumns {
    pub fn n_rows(&self) -> usize {
        self.labels.len()
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
    /// Opens the (plain or gzip) file at `path`. Fails on invalid options (`bits` outside
    /// 1..=32, a namespace name that is not one letter, ...).
    pub fn open(path: &Path, options: VwOptions) -> PolyResult<Self> {
        let compiled = Compiled::new(&options)?;
        Ok(Self::new(LineReader::open(path)?, options, compiled))
    }

    /// Reads from `source` (plain or gzip bytes); `name` stands for the file in error messages.
    pub fn from_reader(name: &str, source: TextSource, options: VwOptions) -> PolyResult<Self> {
        let compiled = Compiled::new(&options)?;
        Ok(Self::new(LineReader::from_reader(name, source)?, options, compiled))
    }

    fn new(lines: LineReader, options: VwOptions, compiled: Compiled) -> Self {
        let path = lines.name().to_owned();
        let parser = ExampleParser {
            path,
            options,
            compiled,
            refuse_base: false,
            direct_seeds: None,
            names: false,
        };
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

    /// The reader as a learner reads it with [`VwReader::next_columns`]: a nonzero base
    /// (initial prediction) is the line's parse error, the learner having no such offset; and
    /// each feature is parsed straight into its namespace's column (one copy fewer than
    /// splitting the batch's entries afterwards).
    /// A reader that keeps each entry's name in its batches ([`VwBatch::names`]), for Vowpal
    /// Wabbit's `--invert_hash`; n-grams have none (refused).
    pub fn with_names(mut self) -> PolyResult<Self> {
        if self.parser.compiled.grams.is_some() {
            return crate::invalid!("feature names are not kept with n-grams or skips");
        }
        self.parser.names = true;
        Ok(self)
    }

    pub fn for_learner(mut self) -> Self {
        self.parser.refuse_base = true;
        if let (Some(names), None) = (&self.parser.options.namespaces, &self.parser.compiled.grams)
        {
            self.parser.direct_seeds = Some(column_seeds(names));
        }
        self
    }

    /// The next batch of at most `max_rows` examples in the namespace-columns layout (the
    /// reader needs `namespaces`), or `None` when the file is exhausted: what a learner fed in
    /// Rust takes ([`crate::vw_run`]).
    pub fn next_columns(&mut self, max_rows: usize) -> PolyResult<Option<VwColumns>> {
        let Some(names) = self.parser.options.namespaces.clone() else {
            return crate::invalid!("reading namespace columns needs the namespaces listed");
        };
        if max_rows == 0 {
            return crate::invalid!("max_rows must be at least 1");
        }
        let mut pieces = self.read_pieces(max_rows)?;
        let rows: usize = pieces.iter().map(VwBatch::n_rows).sum();
        if rows == 0 {
            return Ok(None);
        }
        let mut batch = VwColumns {
            labels: Vec::with_capacity(rows),
            importance: Vec::with_capacity(rows),
            tags: Vec::with_capacity(rows),
            columns: Vec::new(),
            names: Vec::new(),
            partly_read: PartlyRead::of(&pieces),
        };
        for piece in &mut pieces {
            batch.labels.append(&mut piece.labels);
            batch.importance.append(&mut piece.importance);
            batch.tags.append(&mut piece.tags);
        }
        batch.columns = if self.parser.direct_seeds.is_some() {
            let mut by_column: Vec<Vec<SparseMatrix<u32, f64>>> =
                names.iter().map(|_| Vec::with_capacity(pieces.len())).collect();
            if self.parser.names {
                batch.names = names.iter().map(|_| Vec::new()).collect();
                for piece in &mut pieces {
                    for (all, part) in
                        batch.names.iter_mut().zip(piece.column_names.iter_mut().flatten())
                    {
                        all.append(part);
                    }
                }
            }
            for piece in pieces {
                for (column, part) in by_column.iter_mut().zip(piece.columns.unwrap_or_default()) {
                    column.push(part);
                }
            }
            by_column
                .into_par_iter()
                .map(|parts| SparseMatrix::concat(&parts))
                .collect::<PolyResult<_>>()?
        } else {
            self.parser.namespace_columns(pieces, &names)?
        };
        Ok(Some(batch))
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
                    let mut parsed = parser.new_piece(piece.len());
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

/// The learner seeds of namespace columns named `names` (module docs).
fn column_seeds(names: &[String]) -> Vec<u32> {
    names.iter().map(|name| hash_feature_name(name.as_bytes(), 0)).collect()
}

/// The namespace letter a column name stands for (checked by `check_options`).
pub(crate) fn namespace_letter(name: &str) -> u8 {
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

#[cfg(test)]
mod tests;
