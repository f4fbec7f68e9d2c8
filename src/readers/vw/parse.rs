//! Parsing one line of Vowpal Wabbit's text: the header (label, importance, base, tag) and
//! each namespace's features, hashed as `vw` hashes them, into the batch's columns.

use super::*;

impl ExampleParser {
    /// The pieces' rows, in order, as columns `label`, `weight`, `base`, `tag`, then either
    /// `features` and `namespace` (the namespace letter of each stored feature, aligned with
    /// `features`) or one sparse column per listed namespace. Each column is allocated once at
    /// its final size; with `namespaces`, the pieces are split into their namespaces' columns on
    /// the thread pool, each piece dropped once split.
    pub(super) fn table(&self, mut pieces: Vec<VwBatch>) -> PolyResult<Table> {
        let notes = PartlyRead::of(&pieces).warning().into_iter().collect();
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
            return Ok(Table { columns, notes });
        };
        let joined = self.namespace_columns(pieces, names)?;
        columns.extend(names.iter().cloned().zip(joined.into_iter().map(ColumnData::Sparse)));
        Ok(Table { columns, notes })
    }

    /// The pieces' features as one sparse column per listed namespace (`names`), split on the
    /// thread pool, each piece dropped once split.
    pub(super) fn namespace_columns(
        &self,
        pieces: Vec<VwBatch>,
        names: &[String],
    ) -> PolyResult<Vec<SparseMatrix<u32, f64>>> {
        let seeds = column_seeds(names);
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
        by_column.into_par_iter().map(|parts| SparseMatrix::concat(&parts)).collect()
    }

    /// The features of `piece` as one sparse column per listed namespace (seeds: the columns'
    /// learner seeds, see the module docs).
    pub(super) fn split_namespaces(
        &self,
        piece: VwBatch,
        seeds: &[u32],
    ) -> Vec<SparseMatrix<u32, f64>> {
        let rows = piece.n_rows();
        let mut split: Vec<SparseMatrix<u32, f64>> =
            seeds.iter().map(|_| SparseMatrix::with_capacity(rows, rows)).collect();
        for row in piece.offsets.windows(2) {
            for entry in row[0] as usize..row[1] as usize {
                // The parser let only listed letters through.
                if let Some(k) = self.compiled.column_of[usize::from(piece.namespaces[entry])] {
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

/// The options in the form the parser uses, checked.
#[derive(Clone)]
pub(super) struct Compiled {
    /// With `namespaces`: the column of each namespace letter (`None`: not listed).
    pub(super) column_of: [Option<usize>; 256],
    /// Letters whose features are left out (`ignore`, `keep`, `other_namespaces: drop`).
    pub(super) dropped: [bool; 256],
    /// Letters whose features are an error (not listed, `other_namespaces: error`).
    pub(super) refused: [bool; 256],
    /// `Some` when some namespace has n-grams.
    pub(super) grams: Option<Box<Grams>>,
}

impl Compiled {
    pub(super) fn new(options: &VwOptions) -> PolyResult<Self> {
        if !(1..=MAX_HASH_BITS).contains(&options.bits) {
            return crate::invalid!(
                "bits must be between 1 and {MAX_HASH_BITS}, got {}",
                options.bits
            );
        }
        let mut compiled = Compiled {
            column_of: [None; 256],
            dropped: [false; 256],
            refused: [false; 256],
            grams: Grams::new(&options.ngram, &options.skips)?.map(Box::new),
        };
        if !options.ignore.is_empty() && options.keep.is_some() {
            return crate::invalid!(
                "ignore and keep cannot be given together (Vowpal Wabbit's --keep would silently \
                 cancel --ignore): list in keep only the namespaces to read"
            );
        }
        for letter in namespace_letters("ignore", &options.ignore)? {
            compiled.dropped[usize::from(letter)] = true;
        }
        if let Some(keep) = &options.keep {
            if keep.is_empty() {
                return crate::invalid!("keep is empty: list the namespaces to keep");
            }
            compiled.dropped = [true; 256];
            for letter in namespace_letters("keep", keep)? {
                compiled.dropped[usize::from(letter)] = false;
            }
        }
        if let Some(names) = &options.namespaces {
            if names.is_empty() {
                return crate::invalid!("namespaces is empty: list the namespace letters to read");
            }
            let letters = namespace_letters("namespaces", names)?;
            for (k, (&letter, name)) in letters.iter().zip(names).enumerate() {
                if compiled.dropped[usize::from(letter)] {
                    return crate::invalid!(
                        "namespace {name:?} is listed in namespaces but removed by {}",
                        if options.keep.is_some() { "keep" } else { "ignore" }
                    );
                }
                compiled.column_of[usize::from(letter)] = Some(k);
            }
            for letter in 0..256 {
                if compiled.column_of[letter].is_none() && !compiled.dropped[letter] {
                    match options.other_namespaces {
                        OtherNamespaces::Error => compiled.refused[letter] = true,
                        OtherNamespaces::Drop => compiled.dropped[letter] = true,
                    }
                }
            }
        }
        Ok(compiled)
    }
}

/// The letters of namespace names (`"default"` for the default namespace), checked: each one
/// letter, none twice. `option` names the option in errors.
pub(super) fn namespace_letters(option: &str, names: &[String]) -> PolyResult<Vec<u8>> {
    let mut seen = [false; 256];
    let mut letters = Vec::with_capacity(names.len());
    for name in names {
        if name.len() != 1 && name != DEFAULT_NAMESPACE_COLUMN {
            return crate::invalid!(
                "{option}: namespace {name:?} is not one letter: namespaces are named by their \
                 first letter (\"{DEFAULT_NAMESPACE_COLUMN}\" for the default namespace)"
            );
        }
        if name == " " {
            return crate::invalid!(
                "{option}: the default namespace is named \"{DEFAULT_NAMESPACE_COLUMN}\", not \" \""
            );
        }
        let letter = namespace_letter(name);
        if std::mem::replace(&mut seen[usize::from(letter)], true) {
            return crate::invalid!("{option}: namespace {name:?} is listed twice");
        }
        letters.push(letter);
    }
    Ok(letters)
}

/// The fields before the first `|`.
pub(super) struct Header<'a> {
    pub(super) label: Option<f64>,
    pub(super) importance: f64,
    pub(super) base: f64,
    pub(super) tag: Option<&'a [u8]>,
    /// A header number written with more after it (`1:1`), read as its number alone.
    pub(super) partly_read: Option<&'a [u8]>,
}

#[derive(Clone)]
pub(super) struct ExampleParser {
    pub(super) path: String,
    pub(super) options: VwOptions,
    pub(super) compiled: Compiled,
    /// For a reader feeding a learner (`VwReader::for_learner`): a nonzero base (initial
    /// prediction) is an error, the learner having no such offset; and with namespaces listed
    /// and no n-grams, features go straight into their columns, whose learner seeds these are.
    pub(super) refuse_base: bool,
    pub(super) direct_seeds: Option<Vec<u32>>,
    /// Each entry's name is kept (`VwReader::with_names`).
    pub(super) names: bool,
}

/// How the features of a line ended: at the end of the line, or at a NUL byte right after a
/// number (everything after it is left out, as Vowpal Wabbit does).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Rest {
    Continue,
    Cut,
}

impl ExampleParser {
    /// An empty batch to parse about `lines` lines into.
    pub(super) fn new_piece(&self, lines: usize) -> VwBatch {
        let mut piece = VwBatch::new();
        if let Some(seeds) = &self.direct_seeds {
            piece.columns =
                Some(seeds.iter().map(|_| SparseMatrix::with_capacity(lines, lines)).collect());
        }
        if self.names && self.direct_seeds.is_some() {
            piece.column_names =
                Some(self.options.namespaces.iter().flatten().map(|_| Vec::new()).collect());
        }
        piece
    }

    /// Appends the example on line `number` to `batch`; blank lines add nothing.
    pub(super) fn parse_line(
        &self,
        number: u64,
        text: &[u8],
        batch: &mut VwBatch,
    ) -> PolyResult<()> {
        self.parse_example(number, text, batch)
            .map_err(|reason| parse_error(&self.path, number, text, reason))
    }

    pub(super) fn parse_example(
        &self,
        number: u64,
        text: &[u8],
        batch: &mut VwBatch,
    ) -> Result<(), String> {
        if text.iter().all(|&b| is_space(b)) {
            return Ok(());
        }
        let (header, namespaces) = match memchr::memchr(b'|', text) {
            Some(bar) => (&text[..bar], Some(&text[bar + 1..])),
            None => (text, None),
        };
        let header = parse_header(header)?;
        if let Some(field) = header.partly_read {
            batch.partly_read.note(number, field);
        }
        if self.refuse_base && header.base != 0.0 {
            return Err(format!(
                "base (initial prediction) {} is not supported: a model learns from base 0",
                header.base
            ));
        }
        let tag = header
            .tag
            .map(|tag| {
                String::from_utf8(tag.to_vec())
                    .map_err(|_| format!("tag {:?} is not valid UTF-8", show(tag)))
            })
            .transpose()?;
        let row_start = batch.indices.len();
        if let Some(namespaces) = namespaces {
            let mut start = 0;
            for end in memchr::memchr_iter(b'|', namespaces).chain([namespaces.len()]) {
                if self.parse_namespace(&namespaces[start..end], batch)? == Rest::Cut {
                    break;
                }
                start = end + 1;
            }
        }
        if let Some(grams) = &self.compiled.grams {
            grams.append_row(batch, row_start);
        }
        if self.options.namespaces.is_none() && self.options.bits < MAX_HASH_BITS {
            for index in &mut batch.indices[row_start..] {
                *index = mask(*index, self.options.bits) as u32;
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
        if let Some(columns) = &mut batch.columns {
            columns.iter_mut().for_each(SparseMatrix::end_row);
        }
        Ok(())
    }

    /// Appends the features of one namespace (the text after its `|`) to the current row, each
    /// with its whole 32-bit hash (masked once the row is complete).
    pub(super) fn parse_namespace(
        &self,
        segment: &[u8],
        batch: &mut VwBatch,
    ) -> Result<Rest, String> {
        let name_end = segment.iter().position(|&b| is_space(b)).unwrap_or(segment.len());
        let (declaration, features) = segment.split_at(name_end);
        let (name, scale, rest) = match declaration.iter().position(|&b| b == b':') {
            Some(0) => {
                return Err(format!(
                    "namespace scale {:?} has no namespace name",
                    show(declaration)
                ));
            }
            Some(colon) => {
                let (text, rest) = cut_at_nul(&declaration[colon + 1..]);
                (&declaration[..colon], parse_scale(text)?, rest)
            }
            None => (declaration, 1.0, Rest::Continue),
        };
        let letter = name.first().copied().unwrap_or(b' ');
        if self.compiled.refused[usize::from(letter)] {
            return Err(format!(
                "namespace {:?} is not among the namespaces read ({:?}; other_namespaces=\"drop\" \
                 leaves such features out)",
                if letter == b' ' { DEFAULT_NAMESPACE_COLUMN.to_owned() } else { show(name) },
                self.options.namespaces.as_deref().unwrap_or_default()
            ));
        }
        if rest == Rest::Cut {
            return Ok(Rest::Cut);
        }
        let kept = !self.compiled.dropped[usize::from(letter)];
        let hash = self.options.hash;
        let namespace_hash = if name.is_empty() {
            // Vowpal Wabbit's default namespace: 0 with seed 0, else MurmurHash3 of "".
            murmur3_32(b"", self.options.seed)
        } else {
            hash.hash(name, self.options.seed)
        };
        let mut anonymous: u32 = 0;
        for (feature, colon) in FeatureTokens::new(features) {
            let (feature_name, value, rest) = match colon {
                Some(colon) => {
                    let text = &feature[colon + 1..];
                    match parse_f64(text) {
                        // A NUL in the text is no number: only the other case looks for one.
                        Some(value) if value.is_finite() => {
                            (&feature[..colon], value, Rest::Continue)
                        }
                        _ => {
                            let (text, rest) = cut_at_nul(text);
                            (&feature[..colon], parse_value(feature, text)?, rest)
                        }
                    }
                }
                None => (feature, 1.0, Rest::Continue),
            };
            let value = value * scale;
            if !value.is_finite() {
                return Err(format!(
                    "feature {:?} times the namespace scale {scale} is not finite",
                    show(feature)
                ));
            }
            let feature_hash = if feature_name.is_empty() {
                let feature_hash = namespace_hash.wrapping_add(anonymous);
                anonymous = anonymous.wrapping_add(1);
                feature_hash
            } else if kept && value != 0.0 {
                hash.hash(feature_name, namespace_hash)
            } else {
                0
            };
            if kept && value != 0.0 {
                match (&mut batch.columns, &self.direct_seeds) {
                    (Some(columns), Some(seeds)) => {
                        // Kept letters are listed ones: others were dropped or refused above.
                        if let Some(k) = self.compiled.column_of[usize::from(letter)] {
                            columns[k].push(feature_hash.wrapping_sub(seeds[k]), value);
                            if let Some(names) = &mut batch.column_names {
                                names[k].push(audit_name(name, feature_name));
                            }
                        }
                    }
                    _ => {
                        batch.indices.push(feature_hash);
                        batch.values.push(value);
                        batch.namespaces.push(letter);
                        if self.names {
                            batch.names.push(audit_name(name, feature_name));
                        }
                    }
                }
            }
            if rest == Rest::Cut {
                return Ok(Rest::Cut);
            }
        }
        Ok(Rest::Continue)
    }
}

/// The features of a namespace's text: each run of bytes between spaces or tabs, with the
/// position of its first `:` (name before it, value after), found in one pass over the bytes.
pub(super) struct FeatureTokens<'a> {
    text: &'a [u8],
    at: usize,
}

impl<'a> FeatureTokens<'a> {
    pub(super) fn new(text: &'a [u8]) -> Self {
        FeatureTokens { text, at: 0 }
    }
}

impl<'a> Iterator for FeatureTokens<'a> {
    type Item = (&'a [u8], Option<usize>);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let text = self.text;
        let mut at = self.at;
        while at < text.len() && is_space(text[at]) {
            at += 1;
        }
        if at == text.len() {
            self.at = at;
            return None;
        }
        let start = at;
        let mut colon = None;
        while at < text.len() && !is_space(text[at]) {
            if text[at] == b':' && colon.is_none() {
                colon = Some(at - start);
            }
            at += 1;
        }
        self.at = at;
        Some((&text[start..at], colon))
    }
}

/// A feature's name as Vowpal Wabbit's audit and `--invert_hash` write it.
pub(super) fn audit_name(namespace: &[u8], feature: &[u8]) -> String {
    let (namespace, feature) =
        (String::from_utf8_lossy(namespace), String::from_utf8_lossy(feature));
    if namespace.is_empty() {
        feature.into_owned()
    } else {
        format!("{namespace}^{feature}")
    }
}

/// `text` up to a NUL byte, if a NUL follows some text: Vowpal Wabbit reads the number before it
/// and, finding no separator after the number, leaves out the rest of the line (with a warning).
pub(super) fn cut_at_nul(text: &[u8]) -> (&[u8], Rest) {
    match text.iter().position(|&b| b == 0) {
        Some(nul) if nul > 0 => (&text[..nul], Rest::Cut),
        _ => (text, Rest::Continue),
    }
}

/// Vowpal Wabbit's field separators.
pub(super) fn is_space(byte: u8) -> bool {
    byte == b' ' || byte == b'\t'
}

pub(super) fn parse_header(header: &[u8]) -> Result<Header<'_>, String> {
    let mut numbers = [0.0; 3];
    let mut count = 0;
    let mut tag = None;
    let mut partly_read = None;
    // Vowpal Wabbit's rule: a last field that touches the '|' is the tag, number or not
    // (`1 0.5|a x` is label 1, tag "0.5"; `1 0.5 |a x` is label 1, weight 0.5).
    let touches_bar = header.last().is_some_and(|&byte| !is_space(byte));
    let mut fields = tokens(header, is_space).peekable();
    while let Some(field) = fields.next() {
        let is_last = fields.peek().is_none();
        if is_last && touches_bar && !field.starts_with(b"'") {
            tag = Some(field);
        } else if let Some(quoted) = field.strip_prefix(b"'") {
            if !is_last {
                return Err(format!(
                    "tag {:?} must be the last field before the first '|'",
                    show(field)
                ));
            }
            tag = Some(quoted);
        } else if let Some((number, whole)) = header_number(field) {
            if count == numbers.len() {
                return Err("more than three numbers before the first '|' \
                            (expected [label [importance [base]]] ['tag])"
                    .into());
            }
            numbers[count] = number;
            count += 1;
            if !whole {
                partly_read = partly_read.or(Some(field));
            }
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
    Ok(Header { label, importance, base, tag, partly_read })
}

/// A header field's number and whether it is the whole field. Vowpal Wabbit reads a field up
/// to its first ':' (`1:1`, a cost-sensitive label's form, is label 1): such a field is read
/// the same way, and the reader counts its lines so that callers can warn.
fn header_number(field: &[u8]) -> Option<(f64, bool)> {
    if let Some(number) = parse_f64(field) {
        return Some((number, true));
    }
    let colon = memchr::memchr(b':', field)?;
    parse_f64(&field[..colon]).map(|number| (number, false))
}

pub(super) fn parse_scale(text: &[u8]) -> Result<f64, String> {
    match parse_f64(text) {
        Some(scale) if scale.is_finite() => Ok(scale),
        _ => Err(format!("namespace scale {:?} is not a finite number", show(text))),
    }
}

pub(super) fn parse_value(feature: &[u8], text: &[u8]) -> Result<f64, String> {
    match parse_f64(text) {
        Some(value) if value.is_finite() => Ok(value),
        Some(value) => Err(format!("feature {:?} has a non-finite value {value}", show(feature))),
        None => Err(format!("feature value {:?} is not a number", show(text))),
    }
}
